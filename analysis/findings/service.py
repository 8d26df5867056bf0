"""Derive the service under load and the energy and cost sections."""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from .. import derive, energy, netfaults, tables
from ..document import bold
from ..tables import Table
from .common import Finds


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
    table = energy.table(res.rows)
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
