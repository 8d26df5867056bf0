"""Derive "Figures against their ceilings": every rate of every run beside the most its machines can
give (analysis.derive.ceilings), the Read first line for figures above theirs, and the detail table
of the warnings Read first gathered into one line."""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from .. import derive
from ..derive import ceilings, model, storage
from .common import bold
from .tables import Column, Table


@dataclass(frozen=True)
class CeilingFindings:
    table: Table | None  # None: no rate to hold to a ceiling
    warnings: tuple[str, ...]  # per run, one line when a figure passed its ceiling
    checks: tuple[ceilings.Check, ...]


def verdict(c: ceilings.Check) -> str:
    if not np.isfinite(c.ceiling):
        return "no ceiling known"
    if c.above:
        return f"ABOVE THE CEILING, beyond its noise; likely cause: {c.cause}"
    if np.isfinite(c.value) and c.value > c.ceiling:
        return "at the ceiling, within its noise"
    share = c.value / c.ceiling if c.ceiling > 0 else float("nan")
    return f"within ({100 * share:.0f} % of it)" if np.isfinite(share) else "within"


def ceiling_findings(ctx) -> CeilingFindings:
    checks: list[ceilings.Check] = []
    for run in ctx.runs:
        checks += ceilings.run_checks(run)
        checks += ceilings.storage_checks(run, storage.io_source(run, ctx.runs))
        checks += ceilings.dfft_checks(run, [(derive.dfft_stats(run, d, model.node_count(run)), d)
                                             for d in ctx.extra[run.name].dfft])
    for run, _steps, sat in ctx.loads:
        checks += ceilings.load_checks(run, sat)
    checks += ceilings.speedup_checks(list(ctx.paired) + list(ctx.cross))
    if not checks:
        return CeilingFindings(None, (), ())
    rows = [{"run": c.run, "where": c.where, "figure": c.figure, "value": c.value, "ceiling": c.ceiling,
             "bound": c.bound, "verdict": verdict(c)} for c in checks]
    cols = [Column("run", "run"), Column("where", "point, test or rank"), Column("figure", "figure"),
            Column("value", "value", "float"), Column("ceiling", "ceiling", "float"),
            Column("bound", "the ceiling is"), Column("verdict", "verdict")]
    table = Table("ceilings", "Figures against their ceilings", cols, rows,
                  note="Each rate beside the most the machines it ran on can give (docs/reading.md, "
                       "\"Ceilings\"): compute, cores used x one core's rate for the same kernel; a link, "
                       "its line rate; one machine's memory, its memcpy; a speedup, p; cpu_share, 1; the "
                       "inputs' read, wulfbench io's cold sequential read. A "
                       "figure above its ceiling beyond its own noise is never a finding.")
    warnings = []
    for run in ctx.runs:
        above = [c for c in checks if c.run == run.name and c.above]
        if above:
            worst = max(above, key=lambda c: c.value / c.ceiling if c.ceiling > 0 else 0)
            warnings.append(f"{bold(run.name)} ({run.path.name}): {len(above)} figure(s) above their "
                            f"ceiling, left out of the findings; the worst, {worst.figure} at {worst.where}: "
                            f"{worst.value:.4g} against at most {worst.ceiling:.4g} ({worst.bound}); likely "
                            f"cause: {worst.cause}. Every figure is in \"Figures against their ceilings\".")
    return CeilingFindings(table, tuple(warnings), tuple(checks))


def detail_table(rows: list[dict]) -> Table | None:
    """The warnings Read first gathered into one line per kind, one row each; None when it
    gathered none."""
    if not rows:
        return None
    cols = [Column("run", "run"), Column("kind", "kind"), Column("node", "node"), Column("point", "point"),
            Column("figure", "figure", "pct"), Column("line", "warning")]
    table = Table("read_first_detail", "Read first, in detail", cols, rows,
                  note="Every warning of a kind Read first gathered into one line.")
    if len(rows) > 20:
        worst = sorted(rows, key=lambda r: -r["figure"] if np.isfinite(r["figure"]) else 0)
        table.html_rows = worst[:20]
        table.note += f" The page shows the 20 worst of {len(rows)}; read_first_detail.csv has every one."
    return table
