""""What an upgrade buys", right after "What the cluster buys" (figures from analysis.find.whatif,
only formatted here)."""

from __future__ import annotations

from ..document import Report, Section
from ...find import Findings


def upgrade_section(rep: Report, ctx: Findings) -> None:
    if not ctx.upgrade:
        return
    rep.upgrade = sec = Section("upgrade", "What an upgrade buys", "Upgrade")
    sec.para(ctx.upgrade[0].intro)
    for page in ctx.upgrade:
        sec.para(f"**{page.series}**: {page.lead}" if len(ctx.upgrade) > 1 else page.lead)
        if page.table is not None:
            sec.table(page.table)
        sec.bullets(list(page.sentences))
