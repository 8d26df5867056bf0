"""Derive the summary table: one line per study row, 1-11."""

from __future__ import annotations

import numpy as np

from .. import derive
from . import tables
from ..derive import PointStats
from .service import saturation_text


def _sweep_text(ctx, scenario: str, describe) -> str:
    parts = []
    for run in ctx.runs:
        if run in ctx.baselines or run.invalid:
            continue
        pts = sorted((s for s in ctx.stats[run.name] if s.usable and s.point.scenario == scenario),
                     key=lambda s: s.x)
        if pts:
            parts.append(f"{run.name}: {describe(pts)}")
    return "; ".join(parts) or "not measured"


def _at(s: PointStats) -> str:
    if s.point.scenario == "files":
        return f"{s.point.nfiles} file" + ("" if s.point.nfiles == 1 else "s")
    return tables.fmt_bytes(s.point.input_bytes)


def _range(pts: list[PointStats], series: str) -> str:
    a, b = pts[0], pts[-1]
    text = f"{tables.fmt_time(a.summaries[series].median)} at {_at(a)}"
    if len(pts) > 1:
        text += f" to {tables.fmt_time(b.summaries[series].median)} at {_at(b)}"
    return text


def _split(pts: list[PointStats]) -> str:
    s = pts[-1]
    med = {k: s.summaries[k].median for k in ("distribute", "gather", "overhead", "total")}
    why = derive.overhead_why(s)
    return (f"at {_at(s)}: distribute {tables.fmt_time(med['distribute'])} + gather "
            f"{tables.fmt_time(med['gather'])}, overhead {tables.fmt_time(med['overhead'])}"
            f"{f' ({why})' if why else ''}, of {tables.fmt_time(med['total'])} in total")


def _rate(pts: list[PointStats]) -> str:
    best = max(pts, key=lambda s: s.kBps if np.isfinite(s.kBps) else -1)
    return f"{pts[0].kBps:,.0f} to {pts[-1].kBps:,.0f} kB/s (best {best.kBps:,.0f} at {_at(best)})"


def _speedup_text(ctx) -> str:
    parts = []
    for run in ctx.runs:
        for kind, pool in (("paired", ctx.paired), ("cross-run", ctx.cross), ("cross-machine", ctx.cross)):
            mine = [c for c in pool if c.run is run and c.kind == kind]
            if not mine:
                continue
            top = max(mine, key=lambda c: (c.cluster.point.scenario == "files", c.cluster.x))
            text = (f"{run.name} ({kind}): S {top.speedup:.3g} [{top.ci_lo:.3g}, {top.ci_hi:.3g}] "
                    f"at {_at(top.cluster)}")
            if top.implausible:
                text += " " + derive.implausible_flag(top, list(ctx.paired))
            cross = [c for c in ctx.crossings if c.run is run and c.kind == kind]
            if cross:
                text += "; " + "; ".join(f"{c.scenario}: {tables.crossover_short(c)}"
                                         for c in cross)
            parts.append(text)
    return "; ".join(parts) or "no baseline measured (use --paired-baseline, or give --baseline)"


def _load_text(ctx) -> str:
    parts = []
    for run, steps, _sat in ctx.loads:
        if steps:
            a, b = steps[0], steps[-1]
            parts.append(f"{run.name}: p50 {tables.fmt_time(a.p50)} at "
                         f"{tables.fmt_load(a.load, a.load_unit)} to {tables.fmt_time(b.p50)} at "
                         f"{tables.fmt_load(b.load, b.load_unit)}")
    return "; ".join(parts) or "not measured"


def study_rows(ctx) -> list[tuple[str, str, str]]:
    """Needs the shared figures (paired, cross, crossings, loads) only."""
    sats = [f"{r.name}: {saturation_text(s)}" for r, _st, s in ctx.loads if s is not None]
    return [
        ("1", "total request time, one file of several sizes",
         _sweep_text(ctx, "sizes", lambda p: _range(p, "total"))),
        ("2", "transfer time and overhead, one file", _sweep_text(ctx, "sizes", _split)),
        ("3", "processing rate (kB/s), one file", _sweep_text(ctx, "sizes", _rate)),
        ("4", "FFT compute time, one file", _sweep_text(ctx, "sizes", lambda p: _range(p, "fft"))),
        ("5", "the same against one machine", _speedup_text(ctx)),
        ("6", "total request time, several 5 s files",
         _sweep_text(ctx, "files", lambda p: _range(p, "total"))),
        ("7", "time to distribute the data, several files",
         _sweep_text(ctx, "files", lambda p: _range(p, "distribute"))),
        ("8", "FFT compute time, several files",
         _sweep_text(ctx, "files", lambda p: _range(p, "fft"))),
        ("9", "processing rate (kB/s), several files", _sweep_text(ctx, "files", _rate)),
        ("10", "service time with several clients", _load_text(ctx)),
        ("11", "highest load before the cluster collapses", "; ".join(sats) or "not measured"),
    ]
