"""The per-rank section: each run's chosen point and the stragglers."""

from __future__ import annotations

from .. import derive, plots, tables
from ..document import Report, bold
from ..runs import Run
from ..findings import Findings
from .common import choose_points, x_text


def per_rank_section(rep: Report, ctx: Findings) -> None:
    sec = rep.section("ranks", "Per rank", "Ranks")
    chosen, notes = choose_points(ctx.runs, ctx.stats, ctx.args.point)
    rep.notes.extend(notes)
    shown: list[tuple[Run, str, list[derive.RankStats]]] = []
    everywhere: list[tuple[Run, str, list[derive.RankStats]]] = []
    lagging: list[tuple[Run, str, derive.RankStats]] = []
    for run in ctx.runs:
        for s in ctx.stats.get(run.name, []):
            if s.usable and s.point.nranks > 1:
                ranks = derive.rank_stats(run, s.point)
                everywhere.append((run, s.point.id, ranks))
                lagging += [(run, s.point.id, r) for r in ranks if r.straggler]
    for run in ctx.runs:
        pick = chosen.get(run.name)
        if pick is None:
            continue
        if pick.point.nranks < 2:
            sec.para(f"{run.name} ran on one rank: no per-rank view.")
            continue
        ranks = derive.rank_stats(run, pick.point)
        shown.append((run, pick.point.id, ranks))
        desc = f"{pick.point.id}, {x_text(pick)}"
        sec.figure(plots.per_rank(run, desc, ranks, pick.summaries["total"].median, rep.outdir))
        names = [f"{r.host} (rank {r.rank}): {r.reason}" for r in ranks if r.straggler]
        status = "" if pick.usable else f" — this point is {pick.status}"
        if names:
            sec.para(f"{bold(run.name)} at {desc}{status}: stragglers " + "; ".join(names) + ".")
            rep.find(run.name, f"straggler(s) at {pick.point.id}: " + "; ".join(names) + ".")
        else:
            sec.para(f"{bold(run.name)} at {desc}{status}: no straggler.")
    if not shown:
        sec.para("No multi-rank run: nothing to show per rank.")
        return
    table = tables.per_rank(everywhere)
    chosen_keys = {(run.name, pid) for run, pid, _ in shown}
    table.html_rows = [r for r in table.rows if (r["run"], r["point"]) in chosen_keys]
    table.title = "Per-rank medians at the points shown (the CSV has every point)"
    sec.table(table)
    st = tables.stragglers(lagging)
    if st.rows:
        counts: dict[tuple[str, str], int] = {}
        for run, _pid, r in lagging:
            key = (run.name, f"{r.host} (rank {r.rank})")
            counts[key] = counts.get(key, 0) + 1
        total = {run.name: sum(1 for rr, _p, _r in everywhere if rr is run) for run in ctx.runs}
        sec.bullets([f"{run}: {who} straggles at {n} of {total[run]} points"
                     for (run, who), n in sorted(counts.items())])
        st.html_rows = st.rows[:20] if len(st.rows) > 20 else None
    else:
        sec.para("No straggler at any point.")
    sec.table(st)
