"""Speedup against one node and against the baseline; "What the cluster buys" (figures from
analysis.find.speedup and analysis.buys, only formatted here)."""

from __future__ import annotations

from .. import plots
from ..document import Report, Section
from ...find.common import bold
from ...find import Findings


def baseline_section(rep: Report, ctx: Findings) -> None:
    f = ctx.speedup
    sec = rep.section("baseline", "Speedup against one node and against the baseline (study row 5)",
                      "Speedup")
    for name in ctx.unmatched:
        sec.para(f"{name} has no point with the same scenario, mode, precision, "
                 "frame, file count and seconds per file as the baseline.")
    if ctx.paired:
        sec.para(f"{bold('Paired')}: rank 0 ran every request alone in the same job, alternating "
                 "with the cluster's repetitions, so drift of the machine's speed hits both "
                 "alike. This is the speedup against one node of the cluster.")
        sec.figure(plots.speedup(list(ctx.paired), list(f.paired_crossings), ctx.colour,
                                 "Paired speedup against rank 0 alone (same job)",
                                 rep.outdir, "speedup_paired.png"))
        sec.table(f.paired_table)
    else:
        sec.para("No paired baseline in any file (run with --paired-baseline for the speedup "
                 "against one node measured in the same job).")
    if ctx.cross:
        bases = ctx.baselines
        text = (f"{bold('Cross-run')}: these comparisons cross runs. The baseline "
                f"{bases[0].name} ran as a separate process")
        if len(bases) == 2:
            med, lo, hi = f.drift
            text += (f", once before ({bases[0].name}) and once after ({bases[1].name}) the "
                     f"cluster run. The two differ by a median {100 * med:+.1f} % "
                     f"(from {100 * lo:+.1f} % to {100 * hi:+.1f} %); every CI "
                     "below spans both baselines' intervals, so it includes that drift.")
        else:
            text += (", at another time, so a drift of the machine's speed between the runs is "
                     "not measured and not in the CI. Bracket the run with a baseline before and "
                     "after (--baseline BEFORE --baseline AFTER) to see it.")
        sec.para(text)
        if f.machine_runs:
            sec.para(f"{bold('Cross-machine')}: {', '.join(f.machine_runs)} "
                     f"ran on other hardware than the baseline ({f.machine_why}; the rule is in "
                     "docs/comparison.md). The ratio is the relative throughput, baseline median / "
                     "cluster median, with the cross-run CI from both runs' "
                     "repetitions, also per node and per core. It is not a parallel speedup: no "
                     "efficiency or Karp–Flatt fraction is given, and a ratio above p is no sign "
                     "of an error.")
        sec.figure(plots.speedup(list(ctx.cross), list(f.cross_crossings), ctx.colour,
                                 f.cross_title, rep.outdir, "speedup.png", f.cross_explained))
        sec.table(f.cross_table)
    if not ctx.paired and not ctx.cross:
        if not ctx.baselines:
            sec.para("No separate baseline run: pass --baseline FILE, or include exactly one "
                     "file with root attribute baseline=1.")
        return
    if f.crossing_lines:
        sec.bullets(list(f.crossing_lines))
        sec.table(f.crossings_table)
    if f.below:
        sec.para("Cross-run speedups of runs that have a paired one (use the paired one):")
        sec.bullets(list(f.below))


def buys_section(rep: Report, ctx: Findings) -> None:
    """The first section: figures from analysis.buys, only formatted here."""
    f = ctx.buys_page
    rep.lead = sec = Section("buys", "What the cluster buys", "What it buys")
    sec.para(f.lead)
    if f.table is not None:
        sec.table(f.table)
        sec.bullets(list(f.statements))
