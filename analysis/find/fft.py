"""Derive the FFT requests and the schedule and pipeline sections."""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from .. import derive
from ..derive import ceilings, model, readiness, stats
from ..read import point_detail
from . import tables
from ..derive import PointStats
from ..read.runs import Run
from .tables import Table
from .common import Finds, as_float, as_int, choose_points, x_text


@dataclass(frozen=True)
class FftFindings:
    without: tuple[str, ...]  # runs with no /fft points
    items: tuple[PointStats, ...]  # every run's points, for the figures
    no_usable: tuple[str, ...]  # scenarios without a usable point
    phase_table: Table | None
    point_table: Table | None
    planning: tuple[tuple[str, str], ...]  # (run name, its FFTW planning line)
    finds: Finds


@dataclass(frozen=True)
class Timeline:
    run: Run
    point: str
    events: np.ndarray
    t_total: float


@dataclass(frozen=True)
class PipelineFindings:
    table: Table | None  # None: no point holds anything of the pipeline
    timelines: tuple[Timeline, ...]


def overlap(pn: point_detail.PointNext | None, attrs: dict) -> float:
    value = as_float(attrs.get("overlap"))
    if not np.isfinite(value) and pn is not None and pn.overlap is not None:
        value = stats.nanmedian(pn.overlap)
    return value


def _overlaps(ctx) -> dict[tuple[str, str], float]:
    out = {}
    for run in ctx.runs:
        for pt in run.points:
            value = overlap(ctx.extra[run.name].points.get(pt.id), pt.attrs)
            if np.isfinite(value):
                out[(run.name, pt.id)] = value
    return out


def fft_findings(ctx) -> FftFindings:
    items = tuple(s for r in ctx.runs for s in ctx.stats[r.name])
    without = tuple(r.name for r in ctx.runs if not r.points)
    if not items:
        return FftFindings(without, items, (), None, None, (), ())
    no_usable = tuple(sc for sc in ("sizes", "files")
                      if not any(s.point.scenario == sc and s.usable for s in items))
    planning, finds = [], []
    for run in ctx.runs:
        if (plan := readiness.planning_line(run.path)):
            planning.append((run.name, plan))
        # A figure above its ceiling is never a finding (docs/reading.md, "Ceilings").
        above = ceilings.above_ids(run)
        usable = [s for s in ctx.stats[run.name] if s.usable and s.point.id not in above]
        if not usable:
            continue
        best = max(usable, key=lambda s: s.kBps if np.isfinite(s.kBps) else -1)
        top = max(usable, key=lambda s: s.gflops if np.isfinite(s.gflops) else -1)
        ceiling = as_float(top.point.attrs.get("gflops_ceiling"))
        of = f", {100 * top.gflops / ceiling:.0f} % of its ceiling {ceiling:.3g}" if np.isfinite(ceiling) else ""
        left = f" ({len(above)} point(s) above the ceiling left out)" if above else ""
        finds.append((run.name, f"best processing rate {best.kBps:,.0f} kB/s at {x_text(best)}; "
                                f"peak {top.gflops:.3g} GFLOPS ({top.gflops_per_rank:.3g} per compute "
                                f"rank, p={top.point.p}{of}){left}."))
    return FftFindings(without, items, no_usable, tables.phase_stack(list(items), _overlaps(ctx)),
                       tables.fft_points(list(items)), tuple(planning), tuple(finds))


def wire_use_text(point) -> str:
    """The same use against the wire's bound (the payload's bound times Ethernet's framing at the head
    node's MTU), as the run recorded it; empty for files before it did."""
    a = point.attrs
    use, framing = as_float(a.get("link_wire_use")), as_float(a.get("link_framing"))
    if not (np.isfinite(use) and np.isfinite(framing)):
        return ""
    return (f", {100 * use:.0f} % of the wire's (Ethernet framing x{framing:.3f} at MTU "
            f"{as_int(a.get('link_mtu'), 0)})")


def link_use_text(point, rate: tuple[float, str] | None) -> str:
    """The point's link use, from --link-rate as the run recorded it or from the line rate a
    transfer run in the same file measured between nodes."""
    use, what = model.link_use(point, rate)
    if np.isfinite(use):
        if what == "--link-rate":
            return f"link use: {100 * use:.0f} % of the full-duplex bound" + wire_use_text(point)
        return (f"link use: {100 * use:.0f} % of the full-duplex bound at the measured "
                f"{rate[0] / 1e6:.2f} MB/s ({what})")
    if as_int(point.attrs.get("link_out_bytes"), 0) > 0:
        return ("link use unknown (no line rate: give --link-rate, or run transfer between nodes "
                "into the same file)")
    return ""


def pipeline_findings(ctx) -> PipelineFindings:
    rows = []
    for run in ctx.runs:
        ext = ctx.extra[run.name]
        rate = model.line_rate(run)
        for pt in run.points:
            a = pt.attrs
            pn = ext.points.get(pt.id)
            ov = overlap(pn, a)
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
        return PipelineFindings(None, ())
    chosen, _notes = choose_points(ctx.runs, ctx.stats, ctx.args.point)
    timelines = []
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
        timelines.append(Timeline(run, pick.id, ext.points[pick.id].timeline,
                                  derive.median_total(pick)))
    return PipelineFindings(tables.pipeline(rows), tuple(timelines))
