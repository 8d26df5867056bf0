"""Derive the per-rank section: each run's chosen point, its ranks and the stragglers."""

from __future__ import annotations

from dataclasses import dataclass

from .. import derive
from . import tables
from .common import bold
from ..read.runs import Run
from .tables import Table
from .common import Finds, choose_points, x_text


@dataclass(frozen=True)
class RankView:
    """One run's paragraph, and its figure when `ranks` is not empty."""

    run: Run
    text: str
    desc: str = ""
    ranks: tuple[derive.RankStats, ...] = ()
    t_total: float = float("nan")


@dataclass(frozen=True)
class RanksFindings:
    views: tuple[RankView, ...]
    table: Table | None  # None: no multi-rank run
    bullets: tuple[str, ...]  # who straggles how often
    stragglers: Table | None
    notes: tuple[str, ...]
    finds: Finds


def ranks_findings(ctx) -> RanksFindings:
    chosen, notes = choose_points(ctx.runs, ctx.stats, ctx.args.point)
    shown: list[tuple[Run, str, list[derive.RankStats]]] = []
    everywhere: list[tuple[Run, str, list[derive.RankStats]]] = []
    lagging: list[tuple[Run, str, derive.RankStats]] = []
    for run in ctx.runs:
        for s in ctx.stats.get(run.name, []):
            if s.usable and s.point.nranks > 1:
                ranks = derive.rank_stats(run, s.point)
                everywhere.append((run, s.point.id, ranks))
                lagging += [(run, s.point.id, r) for r in ranks if r.straggler]
    views, finds = [], []
    for run in ctx.runs:
        pick = chosen.get(run.name)
        if pick is None:
            continue
        if pick.point.nranks < 2:
            views.append(RankView(run, f"{run.name} ran on one rank: no per-rank view."))
            continue
        ranks = derive.rank_stats(run, pick.point)
        shown.append((run, pick.point.id, ranks))
        desc = f"{pick.point.id}, {x_text(pick)}"
        names = [f"{r.host} (rank {r.rank}): {r.reason}" for r in ranks if r.straggler]
        status = "" if pick.usable else f" — this point is {pick.status}"
        if names:
            text = f"{bold(run.name)} at {desc}{status}: stragglers " + "; ".join(names) + "."
            finds.append((run.name, f"straggler(s) at {pick.point.id}: " + "; ".join(names) + "."))
        else:
            text = f"{bold(run.name)} at {desc}{status}: no straggler."
        views.append(RankView(run, text, desc, tuple(ranks), pick.summaries["total"].median))
    if not shown:
        return RanksFindings(tuple(views), None, (), None, tuple(notes), tuple(finds))
    table = tables.per_rank(everywhere)
    chosen_keys = {(run.name, pid) for run, pid, _ in shown}
    table.html_rows = [r for r in table.rows if (r["run"], r["point"]) in chosen_keys]
    table.title = "Per-rank medians at the points shown (the CSV has every point)"
    st = tables.stragglers(lagging)
    bullets: list[str] = []
    if st.rows:
        counts: dict[tuple[str, str], int] = {}
        for run, _pid, r in lagging:
            key = (run.name, f"{r.host} (rank {r.rank})")
            counts[key] = counts.get(key, 0) + 1
        total = {run.name: sum(1 for rr, _p, _r in everywhere if rr is run) for run in ctx.runs}
        bullets = [f"{run}: {who} straggles at {n} of {total[run]} points"
                   for (run, who), n in sorted(counts.items())]
        st.html_rows = st.rows[:20] if len(st.rows) > 20 else None
    return RanksFindings(tuple(views), table, tuple(bullets), st, tuple(notes), tuple(finds))
