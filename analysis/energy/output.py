"""Energy as text: energy.csv, the columns beside What the cluster buys, the rows for frames."""

from __future__ import annotations

from typing import Any

import numpy as np

from ..tables import Column, Table
from ..runs import Run
from .analyse import Row, Result


def fmt(value: float, unit: str, source: str) -> str:
    if not np.isfinite(value):
        return "unmeasured" if unit != "$" else "unpriced"
    if unit == "$":
        return f"${value:.3g}"
    return f"{value:.3g} {unit} ({source})"


def default_row(result: Result, run: Run, point: str | None = None) -> Row | None:
    """The run's fft row for `point`, by default its largest 'files' point."""
    rows = [r for r in result.rows if r.run == run.name and r.kind == "fft"]
    if point is not None:
        return next((r for r in rows if r.point == point), None)
    files = [r for r in rows if r.key and r.key[0] == "files"]
    return max(files or rows, key=lambda r: (r.key[4] if r.key else 0, r.point), default=None)


def buys_columns(result: Result, run: Run, baseline: Run | None = None,
                 point: str | None = None) -> dict[str, str]:
    """The energy and cost columns of one "What the cluster buys" row: "J/request",
    "kB/J", "GFLOPS/W", "$/1000 requests", each "cluster X (source) · desktop Y
    (source)". `point` is the run's point id (default: its largest 'files' point);
    the desktop is `baseline`'s point with the same settings, or without a baseline
    the run's own paired baseline (rank 0 alone)."""
    mine = default_row(result, run, point)
    if mine is None:
        return {}
    other = None
    if baseline is not None:
        other = next((r for r in result.rows if r.run == baseline.name and r.kind == "fft"
                      and r.key == mine.key), None)
        who = "desktop"
    else:
        other = result.row(run.name, f"{mine.point}/baseline")
        who = "one node"
    attrs = ("j_per_request", "kB_per_j", "gflops_per_w", "usd_per_1000_requests")
    if not any(np.isfinite(float(getattr(r, a))) for r in (mine, other) if r is not None for a in attrs):
        return {}  # nothing measured and nothing priced: no columns of "unmeasured" in the table
    out = {}
    for col, attr, unit in (("J/request", "j_per_request", "J"), ("kB/J", "kB_per_j", "kB/J"),
                            ("GFLOPS/W", "gflops_per_w", "GFLOPS/W"),
                            ("$/1000 requests", "usd_per_1000_requests", "$")):
        cell = "cluster " + _cell(mine, attr, unit)
        if other is not None:
            cell += f" · {who} " + _cell(other, attr, unit)
        out[col] = cell
    return out


def _cell(row: Row, attr: str, unit: str) -> str:
    value = float(getattr(row, attr))
    if unit == "$":
        return fmt(value, unit, "") + (f" ({row.cost_basis})" if row.cost_basis and
                                       np.isfinite(value) else "")
    return fmt(value, unit, row.source)


def table(rows: list[Row]) -> Table:
    """energy.csv: one row per run and point (raw SI numbers in the CSV)."""
    cols = [Column("run", "run"), Column("point", "point"), Column("source", "source"),
            Column("j_per_request", "J/request", "float"),
            Column("j_per_request_above_idle", "J above idle", "float"),
            Column("kB_per_j", "kB/J", "float"), Column("gflops_per_w", "GFLOPS/W", "float"),
            Column("coverage", "coverage", "pct"), Column("period_s", "period", "time"),
            Column("period_err_s", "± (period)", "time"),
            Column("too_short_reps", "too short", "int"),
            Column("reps_measured", "reps measured", "int"), Column("reps", "reps", "int"),
            Column("requests_per_rep", "requests/rep", "float"),
            Column("t_request_s", "time/request", "time"), Column("idle_w", "idle W", "float"),
            Column("usd_per_1000_requests", "$/1000 req", "float"),
            Column("cost_basis", "cost basis"), Column("nodes", "nodes", "int"),
            Column("mark", "mark"), Column("note", "note")]
    out = []
    for r in rows:
        d = {c.key: getattr(r, c.key) for c in cols}
        d["source"] = r.source
        out.append(d)
    return Table("energy", "Energy and cost per request", cols, out,
                 note="J/request: median over the measured repetitions of the energy summed "
                      "over the nodes, per request. Coverage: the share of the repetitions' "
                      "time the source measured. A repetition shorter than 10 sampling periods "
                      "is counted as too short for power.",
                 html_columns=["run", "point", "source", "j_per_request",
                               "j_per_request_above_idle", "kB_per_j", "gflops_per_w",
                               "coverage", "period_s", "usd_per_1000_requests", "mark", "note"])


def frame_rows(result: Result) -> list[dict[str, Any]]:
    """The rows of energy.csv as plain dicts (for analysis.frames)."""
    keys = [k for k in Row.__dataclass_fields__ if k != "key"]
    return [{k: getattr(r, k) for k in keys} for r in result.rows]
