"""Derive the service under load and the energy and cost sections."""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from .. import derive
from ..derive import energy, netfaults
from . import tables
from .common import Finds, bold
from .tables import Column, Table


def saturation_text(s: derive.Saturation) -> str:
    if np.isfinite(s.saturation_load):
        text = (f"saturation point {tables.fmt_load(s.saturation_load, s.load_unit)} "
                f"({s.saturation_rps:.4g} req/s served, p95 {tables.fmt_time(s.saturation_p95_s)})")
    else:
        text = "unhealthy from the lowest load measured"
    if np.isfinite(s.first_fail_load):
        text += f"; fails at {tables.fmt_load(s.first_fail_load, s.load_unit)} ({s.fail_reason})"
    else:
        text += "; no measured load failed"
    return text


@dataclass(frozen=True)
class LoadFindings:
    without: tuple[str, ...]
    invalid: tuple[str, ...]  # runs whose load steps are left out
    steps: Table | None  # None: no run has load steps
    saturation: Table | None
    finds: Finds


def load_findings(ctx) -> LoadFindings:
    without = tuple(r.name for r in ctx.runs if "load" not in r.groups)
    invalid = tuple(r.name for r in ctx.runs if r.load_steps and r.invalid)
    if not ctx.loads:
        return LoadFindings(without, invalid, None, None, ())
    sats = [(r, s) for r, _st, s in ctx.loads if s is not None]
    finds = tuple((run.name, saturation_text(s) + netfaults.load_cause(run.path, st)
                   + f" [{s.source}].") for run, st, s in ctx.loads if s is not None)
    return LoadFindings(without, invalid, tables.load_steps([(r, s) for r, s, _ in ctx.loads]),
                        tables.saturation(sats) if sats else None, finds)


@dataclass(frozen=True)
class EnergyFindings:
    measured: bool  # anything measured or priced
    table: Table
    sources: tuple[str, ...]
    versus: tuple[str, ...]  # each cluster run against its baseline, then the notes


def energy_findings(ctx) -> EnergyFindings:
    res = ctx.energy
    table = energy_table(res.rows)
    if not res.any_measured and not res.options.prices and res.options.kwh_price is None:
        table.html_rows = []
        table.title += " (every point unmeasured: the CSV lists them)"
        return EnergyFindings(False, table, (), ())
    chosen = {(r.run, r.point) for r in res.rows if r.measured or np.isfinite(r.usd_per_1000_requests)}
    table.html_rows = [r for r in table.rows if (r["run"], r["point"]) in chosen]
    if len(table.html_rows) < len(table.rows):
        table.title += " (measured or priced points; the CSV has every point)"
    base = ctx.baselines[0] if ctx.baselines else None
    versus = []
    for run in ctx.runs:
        if run in ctx.baselines:
            continue
        cols = energy.buys_columns(res, run, base)
        if any(" · " in v for v in cols.values()):
            at = energy.default_row(res, run)
            versus.append(f"{bold(run.name)} against {base.name if base else 'rank 0 alone'} at "
                          f"{at.point if at else '?'}: "
                          + "; ".join(f"{k} {v}" for k, v in cols.items()))
    sources = tuple(f"{bold(name)}: {text}" for name, text in res.sources.items())
    return EnergyFindings(True, table, sources, tuple(versus + list(res.notes)))


def energy_table(rows: list[energy.Row]) -> Table:
    """energy.csv: one row per run and point (raw SI numbers in the CSV)."""
    cols = [Column("run", "run"), Column("point", "point"), Column("source", "source"),
            Column("j_per_request", "J/request", "float"),
            Column("j_per_request_above_idle", "J above idle", "float"),
            Column("kB_per_j", "kB/J", "float"), Column("gflops_per_w", "GFLOPS/W", "float"),
            Column("coverage", "coverage", "pct"), Column("period_s", "period", "time"),
            Column("period_err_s", "± (period)", "time"),
            Column("too_short_reps", "too short", "int"),
            Column("reps_measured", "reps measured", "int"), Column("reps", "reps", "int"),
            Column("requests_per_rep", "requests/rep", "float"),
            Column("t_request_s", "time/request", "time"), Column("idle_w", "idle W", "float"),
            Column("usd_per_1000_requests", "$/1000 req", "float"),
            Column("cost_basis", "cost basis"), Column("nodes", "nodes", "int"),
            Column("mark", "mark"), Column("note", "note")]
    out = []
    for r in rows:
        d = {c.key: getattr(r, c.key) for c in cols}
        d["source"] = r.source
        out.append(d)
    return Table("energy", "Energy and cost per request", cols, out,
                 note="J/request: median over the measured repetitions of the energy summed "
                      "over the nodes, per request. Coverage: the share of the repetitions' "
                      "time the source measured. A repetition shorter than 10 sampling periods "
                      "is counted as too short for power.",
                 html_columns=["run", "point", "source", "j_per_request",
                               "j_per_request_above_idle", "kB_per_j", "gflops_per_w",
                               "coverage", "period_s", "usd_per_1000_requests", "mark", "note"])
