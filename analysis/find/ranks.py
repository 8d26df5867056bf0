"""Derive the per-rank section: each run's chosen point, its ranks and the stragglers."""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from .. import derive
from ..derive import ceilings
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


# Above this many ranks a point's page rows are the quantiles over ranks and the K_SLOWEST slowest.
ALL_RANKS_UP_TO = 12
K_SLOWEST = 5
QUANTILES = ((0.0, "min"), (0.25, "p25"), (0.5, "median"), (0.75, "p75"), (1.0, "max"))


def summarised(rows: list[dict]) -> list[dict]:
    """One point's rank rows for the page: every rank when few, else the quantiles over ranks of
    each time column and the K_SLOWEST ranks by distribute + compute + gather."""
    if len(rows) <= ALL_RANKS_UP_TO:
        return rows
    keys = ("distribute", "compute", "fft", "gather", "phases", "gflops")
    out = []
    for q, name in QUANTILES:
        row = {"run": rows[0]["run"], "point": rows[0]["point"], "rank": None,
               "host": f"{name} over {len(rows)} ranks", "computes": "", "straggler": ""}
        for k in keys:
            vals = np.array([r[k] for r in rows], float)
            row[k] = float(np.nanquantile(vals, q)) if np.any(np.isfinite(vals)) else float("nan")
        row["compute_ratio"] = row["phases_ratio"] = float("nan")
        out.append(row)
    slow = sorted(rows, key=lambda r: -r["phases"] if np.isfinite(r["phases"]) else 0)[:K_SLOWEST]
    return out + [dict(r, host=f"{r['host']} (slowest {i + 1})") for i, r in enumerate(slow)]


def straggler_find(run: Run, pid: str, names: list[str]) -> str:
    """The headline about a point's stragglers: each one when few, else how many and the worst
    (the table "Stragglers at every point" has them all)."""
    crowded = (" (the machine held more ranks than cores: they waited for a core, so these times "
               "measure turns, not the ranks)" if ceilings.oversubscribed(run) else "")
    if len(names) <= 3:
        return f"straggler(s) at {pid}: " + "; ".join(names) + crowded + "."
    return (f"{len(names)} stragglers at {pid}; the first, {names[0]}{crowded}. Every one is in "
            "\"Stragglers at every point\".")


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
            shown_names = names if len(names) <= 3 else names[:3] + [f"and {len(names) - 3} more (the table below)"]
            text = f"{bold(run.name)} at {desc}{status}: stragglers " + "; ".join(shown_names) + "."
            finds.append((run.name, straggler_find(run, pick.point.id, names)))
        else:
            text = f"{bold(run.name)} at {desc}{status}: no straggler."
        views.append(RankView(run, text, desc, tuple(ranks), pick.summaries["total"].median))
    if not shown:
        return RanksFindings(tuple(views), None, (), None, tuple(notes), tuple(finds))
    table = tables.per_rank(everywhere)
    chosen_keys = {(run.name, pid) for run, pid, _ in shown}
    table.html_rows = []
    for key in sorted(chosen_keys):
        table.html_rows += summarised([r for r in table.rows if (r["run"], r["point"]) == key])
    table.title = "Per-rank medians at the points shown (the CSV has every point and rank)"
    if any(ceilings.oversubscribed(run) for run, _p, _r in shown):
        table.note += (" A machine held more ranks than cores: each rank's phases include its wait "
                       "for a core.")
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
