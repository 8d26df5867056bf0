"""What the find modules share: lenient attribute reading, a point's workload in words, the
per-rank point of each run, each run's colour and the text markup's bold."""

from __future__ import annotations

from .. import derive
from . import tables
from ..derive import PointStats
from ..read.runs import Run


PALETTE = ["#1f77b4", "#d62728", "#2ca02c", "#9467bd", "#ff7f0e", "#8c564b", "#e377c2",
           "#17becf", "#bcbd22", "#7f7f7f"]


BASELINE_COLOUR = "#222222"


def colours(runs: list[Run], baseline: Run | None) -> dict[str, str]:
    """The colour each run keeps in every figure: the baseline dark, the others the palette's."""
    out: dict[str, str] = {}
    k = 0
    for run in runs:
        if run is baseline:
            out[run.name] = BASELINE_COLOUR
        else:
            out[run.name] = PALETTE[k % len(PALETTE)]
            k += 1
    return out


def bold(text: object) -> str:
    """Bold in the report's text markup."""
    return f"**{text}**"


def as_int(value: object, default: int = -1) -> int:
    try:
        return int(value)  # type: ignore[arg-type]
    except (TypeError, ValueError):
        return default


def as_float(value: object) -> float:
    try:
        return float(value)  # type: ignore[arg-type]
    except (TypeError, ValueError):
        return float("nan")


def x_text(s: PointStats) -> str:
    pt = s.point
    if pt.scenario == "files":
        return f"{pt.nfiles} × {pt.seconds_per_file:g} s files"
    return f"{pt.seconds_per_file:g} s file ({tables.fmt_bytes(pt.input_bytes)})"


def choose_points(runs, stats_by_run,
                  requested: list[str]) -> tuple[dict[str, PointStats], list[str]]:
    """The per-rank point of each run, from --point or the default rule."""
    chosen: dict[str, PointStats] = {}
    notes: list[str] = []
    for_all = [r for r in requested if ":" not in r]
    for_run: dict[str, str] = {}
    for item in requested:
        if ":" in item:
            run_name, pid = item.rsplit(":", 1)
            for_run[run_name] = pid
    known = {r.name for r in runs} | {r.path.name for r in runs} | {r.label for r in runs}
    for name in for_run:
        if name not in known:
            notes.append(f"--point {name}:{for_run[name]}: no run is called {name}; runs are "
                         + ", ".join(r.name for r in runs) + ".")
    for run in runs:
        items = stats_by_run.get(run.name, [])
        if not items:
            continue
        want = for_run.get(run.name) or for_run.get(run.path.name) or for_run.get(run.label)
        candidates = ([want] if want else []) + for_all
        pick = None
        for pid in candidates:
            pick = next((s for s in items if s.point.id == pid), None)
            if pick is not None:
                break
        if candidates and pick is None:
            notes.append(f"{run.name} has no point {', '.join(candidates)}; its default point "
                         "is shown.")
        chosen[run.name] = pick or derive.default_point(run, items)
    return chosen, notes


Finds = tuple[tuple[str, str], ...]  # (run name, headline finding), in page order
