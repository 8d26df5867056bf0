"""The FFT requests section and the schedule and pipeline section."""

from __future__ import annotations

import numpy as np

from .. import derive, model, plots, point_detail, readiness, stats, tables
from ..document import Report
from ..runs import Run
from ..findings import Findings, as_float, as_int
from .common import choose_points, x_text


def fft_section(rep: Report, ctx: Findings) -> None:
    sec = rep.section("fft", "FFT requests (study rows 1–4, 6–9)", "FFT")
    all_stats = [s for r in ctx.runs for s in ctx.stats[r.name]]
    without = [r.name for r in ctx.runs if not r.points]
    if without:
        sec.para("No /fft points in: " + ", ".join(without) + ".")
    if not all_stats:
        sec.para("No run has FFT points; this section is empty.")
        return
    base = ctx.baselines[0] if ctx.baselines else None
    sec.figure(plots.fft_times(all_stats, "sizes", ctx.colour, rep.outdir, "1–4"))
    sec.figure(plots.fft_times(all_stats, "files", ctx.colour, rep.outdir, "6–8"))
    sec.figure(plots.fft_rate(all_stats, ctx.colour, rep.outdir))
    sec.figure(plots.fft_phases(all_stats, base, rep.outdir))
    for sc in ("sizes", "files"):
        if not any(s.point.scenario == sc and s.usable for s in all_stats):
            sec.para(f"No usable '{sc}' points: the "
                     f"{'file size' if sc == 'sizes' else 'files per request'} figures are left out.")
    sec.table(tables.phase_stack(all_stats, overlaps(ctx)))
    sec.table(tables.fft_points(all_stats))
    for run in ctx.runs:
        if (plan := readiness.planning_line(run.path)):
            sec.para(f"{run.name}: {plan}.")
        usable = [s for s in ctx.stats[run.name] if s.usable]
        if not usable:
            continue
        best = max(usable, key=lambda s: s.kBps if np.isfinite(s.kBps) else -1)
        top = max(usable, key=lambda s: s.gflops if np.isfinite(s.gflops) else -1)
        rep.find(run.name, f"best processing rate {best.kBps:,.0f} kB/s at {x_text(best)}; "
                           f"peak {top.gflops:.3g} GFLOPS ({top.gflops_per_rank:.3g} per compute "
                           f"rank, p={top.point.p}).")


def overlap(run: Run, pid: str, pn: point_detail.PointNext | None, attrs: dict) -> float:
    value = as_float(attrs.get("overlap"))
    if not np.isfinite(value) and pn is not None and pn.overlap is not None:
        value = stats.nanmedian(pn.overlap)
    return value


def overlaps(ctx: Findings) -> dict[tuple[str, str], float]:
    out = {}
    for run in ctx.runs:
        for pt in run.points:
            value = overlap(run, pt.id, ctx.extra[run.name].points.get(pt.id), pt.attrs)
            if np.isfinite(value):
                out[(run.name, pt.id)] = value
    return out


def link_use_text(point, rate: tuple[float, str] | None) -> str:
    """The point's link use, from --link-rate as the run recorded it or from the line rate a
    transfer run in the same file measured between nodes."""
    use, what = model.link_use(point, rate)
    if np.isfinite(use):
        if what == "--link-rate":
            return f"link use: {100 * use:.0f} % of the full-duplex bound"
        return (f"link use: {100 * use:.0f} % of the full-duplex bound at the measured "
                f"{rate[0] / 1e6:.2f} MB/s ({what})")
    if as_int(point.attrs.get("link_out_bytes"), 0) > 0:
        return ("link use unknown (no line rate: give --link-rate, or run transfer between nodes "
                "into the same file)")
    return ""


def pipeline_section(rep: Report, ctx: Findings) -> None:
    rows = []
    timelines = []
    for run in ctx.runs:
        ext = ctx.extra[run.name]
        rate = model.line_rate(run)
        for pt in run.points:
            a = pt.attrs
            pn = ext.points.get(pt.id)
            ov = overlap(run, pt.id, pn, a)
            # older files name a schedule but hold nothing of the pipeline
            if not (np.isfinite(ov) or a.get("link_out_bytes") is not None
                    or (pn and pn.timeline is not None)):
                continue
            rows.append({"run": run.name, "point": pt.id, "schedule": a.get("schedule") or "?",
                         "chunk_frames": a.get("chunk_frames"), "overlap": ov,
                         "link_out_bytes": a.get("link_out_bytes"),
                         "link_in_bytes": a.get("link_in_bytes"),
                         "link_bound": as_float(a.get("link_bound_s")),
                         "link_use": link_use_text(pt, rate) or "–"})
    if not rows:
        return
    sec = rep.section("pipeline", "Schedule and pipeline", "Pipeline")
    sec.para("How the head node handed out the work: the schedule, how far its phases "
             "overlapped, and how much of the head node's link the request used.")
    sec.table(tables.pipeline(rows))
    chosen, _notes = choose_points(ctx.runs, ctx.stats, ctx.args.point)
    for run in ctx.runs:
        ext = ctx.extra[run.name]
        have = [pt for pt in run.points if ext.points.get(pt.id) is not None
                and ext.points[pt.id].timeline is not None]
        if not have:
            continue
        want = chosen.get(run.name)
        pick = next((pt for pt in have if want is not None and pt.id == want.point.id
                     and ctx.args.point), None)
        pick = pick or max(have, key=lambda pt: (pt.input_bytes, pt.id))
        timelines.append(run.name)
        sec.figure(plots.timeline(run, pick.id, ext.points[pick.id].timeline,
                                  derive.median_total(pick), rep.outdir))
    if not timelines:
        sec.para("No point has a /timeline: no Gantt chart.")
