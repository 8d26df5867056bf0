"""The per-rank section: each run's chosen point and the stragglers (figures from
analysis.find.ranks, only formatted and drawn here)."""

from __future__ import annotations

from .. import plots
from ..document import Report
from ...find import Findings


def per_rank_section(rep: Report, ctx: Findings) -> None:
    f = ctx.ranks
    sec = rep.section("ranks", "Per rank", "Ranks")
    if ctx.read_first_detail is not None:
        sec.table(ctx.read_first_detail)
    for v in f.views:
        if v.ranks:
            sec.figure(plots.per_rank(v.run, v.desc, list(v.ranks), v.t_total, rep.outdir))
        sec.para(v.text)
    if f.table is None:
        sec.para("No multi-rank run: nothing to show per rank.")
        return
    sec.table(f.table)
    if f.bullets:
        sec.bullets(list(f.bullets))
    else:
        sec.para("No straggler at any point.")
    sec.table(f.stragglers)
