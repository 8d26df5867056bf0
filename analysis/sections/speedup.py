"""Speedup against one node and against the baseline; "What the cluster buys"."""

from __future__ import annotations

import numpy as np

from .. import buys, compare, plots, stats, tables
from ..derive import Comparison
from ..document import Report, Section, bold
from ..findings import Findings
from .common import x_text


def _causes(ctx: Findings, c: Comparison) -> str:
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


def baseline_section(rep: Report, ctx: Findings) -> None:
    sec = rep.section("baseline", "Speedup against one node and against the baseline (study row 5)",
                      "Speedup")
    rep.notes.extend(ctx.cross_notes)
    for name in ctx.unmatched:
        sec.para(f"{name} has no point with the same scenario, mode, precision, "
                 "frame, file count and seconds per file as the baseline.")
    if ctx.paired:
        sec.para(f"{bold('Paired')}: rank 0 ran every request alone in the same job, alternating "
                 "with the cluster's repetitions, so drift of the machine's speed hits both "
                 "alike. This is the speedup against one node of the cluster.")
        sec.figure(plots.speedup(ctx.paired, [c for c in ctx.crossings if c.kind == "paired"],
                                 ctx.colour, "Paired speedup against rank 0 alone (same job)",
                                 rep.outdir, "speedup_paired.png"))
        sec.table(tables.comparison(ctx.paired, "speedup_paired",
                                    "Paired speedup (same job, alternating repetitions)"))
    else:
        sec.para("No paired baseline in any file (run with --paired-baseline for the speedup "
                 "against one node measured in the same job).")
    if ctx.cross:
        bases = ctx.baselines
        text = (f"{bold('Cross-run')}: these comparisons cross runs. The baseline "
                f"{bases[0].name} ran as a separate process")
        if len(bases) == 2:
            drifts = [c.drift for c in ctx.cross if np.isfinite(c.drift)]
            text += (f", once before ({bases[0].name}) and once after ({bases[1].name}) the "
                     f"cluster run. The two differ by a median {100 * stats.nanmedian(drifts):+.1f} % "
                     f"(from {100 * min(drifts):+.1f} % to {100 * max(drifts):+.1f} %); every CI "
                     "below spans both baselines' intervals, so it includes that drift.")
        else:
            text += (", at another time, so a drift of the machine's speed between the runs is "
                     "not measured and not in the CI. Bracket the run with a baseline before and "
                     "after (--baseline BEFORE --baseline AFTER) to see it.")
        sec.para(text)
        other = [c for c in ctx.cross if isinstance(c, compare.MachineComparison)]
        if other:
            sec.para(f"{bold('Cross-machine')}: {', '.join(sorted({c.run.name for c in other}))} "
                     f"ran on other hardware than the baseline ({other[0].why}; the rule is in "
                     "docs/comparison.md). The ratio is the relative throughput, baseline median / "
                     "cluster median, with a 95 % percentile-bootstrap CI over both runs' "
                     "repetitions, also per node and per core. It is not a parallel speedup: no "
                     "efficiency or Karp–Flatt fraction is given, and a ratio above p is no sign "
                     "of an error.")
        title = f"Against {ctx.cross[0].base_name} (crosses runs{', other hardware' if other else ''})"
        sec.figure(plots.speedup(ctx.cross, [c for c in ctx.crossings if c.kind != "paired"],
                                 ctx.colour, title, rep.outdir, "speedup.png"))
        sec.table(tables.comparison(ctx.cross, "comparison", title))
    if not ctx.paired and not ctx.cross:
        if not ctx.baselines:
            sec.para("No separate baseline run: pass --baseline FILE, or include exactly one "
                     "file with root attribute baseline=1.")
        return
    if ctx.crossings:
        sec.bullets([f"{bold(c.run.name)}, {c.kind}, {c.scenario} ({c.config}): "
                     f"{tables.crossover_text(c)}." for c in ctx.crossings])
        sec.table(tables.crossovers(ctx.crossings))
    below: list[str] = []
    for c in ctx.paired + ctx.cross:
        if c.implausible:
            # a run's paired figure is the one to use: its same-machine cross-run one waits below
            to = below if c.kind == "cross-run" and any(p.run is c.run for p in ctx.paired) else rep.warnings
            to.append(f"{bold(c.run.name)} {c.cluster.point.id} ({c.kind}): IMPLAUSIBLE speedup "
                      f"{c.speedup:.3g} on p={c.p} ({'; '.join(c.implausible)}). Not a finding. "
                      f"Likely causes: {_causes(ctx, c)}.")
    if below:
        sec.para("Cross-run speedups of runs that have a paired one (use the paired one):")
        sec.bullets(below)
    for run in ctx.runs:
        mine = [c for c in ctx.paired if c.run is run] or [c for c in ctx.cross if c.run is run]
        good = [c for c in mine if not c.implausible]
        if not good:
            continue
        top = max(good, key=lambda c: (c.cluster.point.scenario == "files", c.cluster.x))
        if isinstance(top, compare.MachineComparison):
            rep.find(run.name, f"cross-machine throughput ratio {top.speedup:.3g}× [{top.ci_lo:.3g}, "
                               f"{top.ci_hi:.3g}] against {top.base_name} (other hardware, 95 % CI; "
                               f"{top.per_node[0]:.3g} per node) at {x_text(top.cluster)}.")
            continue
        rep.find(run.name, f"{top.kind} speedup {top.speedup:.3g}× [{top.ci_lo:.3g}, "
                           f"{top.ci_hi:.3g}] (95 % CI, p={top.p}, efficiency "
                           f"{100 * top.efficiency:.0f} %) at {x_text(top.cluster)}"
                           + (" — crosses runs" if top.kind == "cross-run" else "") + ".")
    for c in ctx.crossings:
        rep.find(c.run.name, f"{c.kind}, {c.scenario}: {tables.crossover_text(c)}.")


def buys_section(rep: Report, ctx: Findings) -> None:
    """The first section: figures from analysis.buys, only formatted here."""
    rows = ctx.buys
    rep.lead = sec = Section("buys", "What the cluster buys", "What it buys")
    sec.para(buys.LEAD if rows else buys.NONE)
    if rows:
        sec.table(buys.table(rows))
        sec.bullets(buys.statements(rows))
