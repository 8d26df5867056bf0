"""Node health: the points during which a node was throttled or hot, from `/fft/<id>/health/nodes`
(sampled about once a second while the point ran) and `/hosts` (start and end of the run).

A throttled or hot node runs slower than its rated speed, so the figures of those points understate
what the cluster can do; the report lists them as warnings, naming the node.
"""

from __future__ import annotations

import math
from pathlib import Path

from ..read import records

HOT_C = 80.0  # a Raspberry Pi's firmware starts capping the clock from about 80 degC


def _text(value: object) -> str:
    return value.decode(errors="replace") if isinstance(value, bytes) else str(value)


def _hot(temp: float) -> bool:
    return not math.isnan(temp) and temp >= HOT_C


def point_warnings(path: Path) -> list[str]:
    """One line per node and point that was throttled or at HOT_C or more; then /hosts nodes that
    were throttled (now or since boot) at the start of the run. [] for files without health data."""
    try:
        rec = records.health(path)
    except OSError:
        return []  # the loader has said why the file cannot be read
    out: list[str] = []
    for pid, rows in rec.points:
        for row in rows:
            host, temp, throttled = _text(row["hostname"]), float(row["temp_c_max"]), int(row["throttled"])
            what = []
            if throttled == 1:
                what.append("throttled")
            if _hot(temp):
                what.append(f"hot ({temp:.1f} °C)")
            if what:
                out.append(f"point {pid}: node {int(row['node'])} ({host}) was {' and '.join(what)}; "
                           "its times may be slower than the same node when cool")
    hosts = rec.hosts if rec.hosts is not None else []
    flagged = sorted({_text(h["hostname"]) for h in hosts if int(h["throttled"]) == 1})
    if flagged:
        out.append("/hosts: " + ", ".join(flagged) + " reported firmware throttling (now or since boot) "
                   "at the start of the run: check its power supply and cooling")
    return out
