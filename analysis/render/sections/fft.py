"""The FFT requests section and the schedule and pipeline section (figures from
analysis.find.fft, only formatted and drawn here)."""

from __future__ import annotations

from .. import plots
from ..document import Report
from ...find import Findings


def fft_section(rep: Report, ctx: Findings) -> None:
    f = ctx.fft
    sec = rep.section("fft", "FFT requests (study rows 1–4, 6–9)", "FFT")
    if f.without:
        sec.para("No /fft points in: " + ", ".join(f.without) + ".")
    if ctx.ceilings is not None and ctx.ceilings.table is not None:
        sec.table(ctx.ceilings.table)
    if not f.items:
        sec.para("No run has FFT points; this section is empty.")
        return
    items = list(f.items)
    sec.figure(plots.fft_times(items, "sizes", ctx.colour, rep.outdir, "1–4"))
    sec.figure(plots.fft_times(items, "files", ctx.colour, rep.outdir, "6–8"))
    sec.figure(plots.fft_rate(items, ctx.colour, rep.outdir))
    sec.figure(plots.fft_phases(items, ctx.baselines[0] if ctx.baselines else None, rep.outdir))
    for sc in f.no_usable:
        sec.para(f"No usable '{sc}' points: the "
                 f"{'file size' if sc == 'sizes' else 'files per request'} figures are left out.")
    sec.table(f.phase_table)
    sec.table(f.point_table)
    for name, plan in f.planning:
        sec.para(f"{name}: {plan}.")


def pipeline_section(rep: Report, ctx: Findings) -> None:
    f = ctx.pipeline
    if f.table is None:
        return
    sec = rep.section("pipeline", "Schedule and pipeline", "Pipeline")
    sec.para("How the head node handed out the work: the schedule, how far its phases "
             "overlapped, and how much of the head node's link the request used.")
    sec.table(f.table)
    for t in f.timelines:
        sec.figure(plots.timeline(t.run, t.point, t.events, t.t_total, rep.outdir))
    if not f.timelines:
        sec.para("No point has a /timeline: no Gantt chart.")
