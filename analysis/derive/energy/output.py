"""Energy as text: the columns beside What the cluster buys, the rows for frames (energy.csv is
find.service's table)."""

from __future__ import annotations

from typing import Any

import numpy as np

from ...read.runs import Run
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


def frame_rows(result: Result) -> list[dict[str, Any]]:
    """The rows of energy.csv as plain dicts (for analysis.frames)."""
    keys = [k for k in Row.__dataclass_fields__ if k != "key"]
    return [{k: getattr(r, k) for k in keys} for r in result.rows]
