"""Derive the speedup section: its tables, the implausible speedups ("Read first") and the
headline speedups and crossovers of each run."""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from ..derive import hardware
from .. import derive
from ..derive import stats
from . import tables
from ..derive import Comparison, Crossover
from .common import bold
from .tables import Table
from .common import Finds, x_text


@dataclass(frozen=True)
class SpeedupFindings:
    paired_crossings: tuple[Crossover, ...]
    cross_crossings: tuple[Crossover, ...]
    paired_table: Table | None
    cross_title: str
    cross_table: Table | None
    drift: tuple[float, float, float]  # median, lowest, highest drift between two baselines
    machine_runs: tuple[str, ...]  # runs compared across hardware
    machine_why: str
    crossing_lines: tuple[str, ...]
    crossings_table: Table | None
    below: tuple[str, ...]  # implausible cross-run speedups of runs that have a paired one
    cross_explained: tuple[str, str]  # where the cross figure's implausible points are explained
    warnings: tuple[str, ...]
    finds: Finds


def _causes(ctx, c: Comparison) -> str:
    hot = ctx.throttled(c.run)
    causes = []
    if c.kind == "cross-run":
        drift = (f"the baselines drifted {100 * c.drift:+.0f} %" if np.isfinite(c.drift)
                 else "a single baseline run cannot show it")
        causes.append(f"drift between runs (this comparison crosses runs; {drift})")
    causes.append("cache effects: each rank's smaller share may fit a cache the whole request "
                  "does not")
    causes.append("thermal throttling: " + (f"recorded in /hosts on {', '.join(hot)}" if hot
                                            else "none recorded in /hosts"))
    return "; ".join(causes)


def _explained(ctx) -> tuple[str, str]:
    """(legend, caption) words for where the cross-run figure's implausible points are explained."""
    places = {derive.secondary(c, list(ctx.paired)) for c in ctx.cross if c.implausible}
    if places == {True}:
        return "below", "in the list below the table"
    if places == {True, False}:
        return ("Read first or below", "under Read first, or in the list below the table for a run "
                "that has a paired speedup")
    return "Read first", "under Read first"


def _finds(ctx) -> list[tuple[str, str]]:
    finds = []
    for run in ctx.runs:
        mine = [c for c in ctx.paired if c.run is run] or [c for c in ctx.cross if c.run is run]
        good = [c for c in mine if not c.implausible]
        if not good:
            continue
        top = max(good, key=lambda c: (c.cluster.point.scenario == "files", c.cluster.x))
        if isinstance(top, hardware.MachineComparison):
            finds.append((run.name, f"cross-machine throughput ratio {top.speedup:.3g}× "
                          f"[{top.ci_lo:.3g}, {top.ci_hi:.3g}] against {top.base_name} (other "
                          f"hardware, 95 % CI; {top.per_node[0]:.3g} per node) at "
                          f"{x_text(top.cluster)}."))
            continue
        finds.append((run.name, f"{top.kind} speedup {top.speedup:.3g}× [{top.ci_lo:.3g}, "
                                f"{top.ci_hi:.3g}] (95 % CI, p={top.p}, efficiency "
                                f"{100 * top.efficiency:.0f} %) at {x_text(top.cluster)}"
                                + (" — crosses runs" if top.kind == "cross-run" else "") + "."))
    for c in ctx.crossings:
        finds.append((c.run.name, f"{c.kind}, {c.scenario}: {tables.crossover_text(c)}."))
    return finds


def speedup_findings(ctx) -> SpeedupFindings:
    nan = float("nan")
    drift = (nan, nan, nan)
    if ctx.cross and len(ctx.baselines) == 2:
        drifts = [c.drift for c in ctx.cross if np.isfinite(c.drift)]
        drift = (stats.nanmedian(drifts), min(drifts), max(drifts))
    other = [c for c in ctx.cross if isinstance(c, hardware.MachineComparison)]
    title = (f"Against {ctx.cross[0].base_name} (crosses runs{', other hardware' if other else ''})"
             if ctx.cross else "")
    below: list[str] = []
    warnings: list[str] = []
    if ctx.paired or ctx.cross:
        for c in ctx.paired + ctx.cross:
            if c.implausible:
                # a run's paired figure is the one to use: its same-machine cross-run one waits below
                to = below if derive.secondary(c, list(ctx.paired)) else warnings
                to.append(f"{bold(c.run.name)} {c.cluster.point.id} ({c.kind}): IMPLAUSIBLE speedup "
                          f"{c.speedup:.3g} on p={c.p} ({'; '.join(c.implausible)}). Not a finding. "
                          f"Likely causes: {_causes(ctx, c)}.")
    return SpeedupFindings(
        paired_crossings=tuple(c for c in ctx.crossings if c.kind == "paired"),
        cross_crossings=tuple(c for c in ctx.crossings if c.kind != "paired"),
        paired_table=(tables.comparison(list(ctx.paired), "speedup_paired",
                                        "Paired speedup (same job, alternating repetitions)")
                      if ctx.paired else None),
        cross_title=title,
        cross_table=tables.comparison(list(ctx.cross), "comparison", title) if ctx.cross else None,
        drift=drift, machine_runs=tuple(sorted({c.run.name for c in other})),
        machine_why=other[0].why if other else "",
        crossing_lines=tuple(f"{bold(c.run.name)}, {c.kind}, {c.scenario} ({c.config}): "
                             f"{tables.crossover_text(c)}." for c in ctx.crossings),
        crossings_table=tables.crossovers(list(ctx.crossings)) if ctx.crossings else None,
        below=tuple(below), cross_explained=_explained(ctx), warnings=tuple(warnings),
        finds=tuple(_finds(ctx)) if (ctx.paired or ctx.cross) else ())
