"""Service under load, and energy and cost."""

from __future__ import annotations

import numpy as np

from .. import derive, energy, netfaults, plots, tables
from ..document import Report, bold
from ..findings import Findings


def load_section(rep: Report, ctx: Findings) -> None:
    sec = rep.section("load", "Service under load (study rows 10–11)", "Load")
    without = [r.name for r in ctx.runs if "load" not in r.groups]
    if without:
        sec.para("No /load group in: " + ", ".join(without) + " (skipped).")
    for run in ctx.runs:
        if run.load_steps and run.invalid:
            sec.para(f"{run.name} failed verification; its load steps are left out.")
    if not ctx.loads:
        sec.para("No run has load steps.")
        return
    sec.figure(plots.load(ctx.loads, ctx.colour, rep.outdir))
    sec.table(tables.load_steps([(r, s) for r, s, _ in ctx.loads]))
    sats = [(r, s) for r, _st, s in ctx.loads if s is not None]
    if sats:
        sec.table(tables.saturation(sats))
        for run, st, s in (x for x in ctx.loads if x[2] is not None):
            rep.find(run.name, saturation_text(s) + netfaults.load_cause(run.path, st) + f" [{s.source}].")


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


def energy_section(rep: Report, ctx: Findings) -> None:
    res = ctx.energy
    sec = rep.section("energy", "Energy and cost", "Energy")
    table = energy.table(res.rows)
    if not res.any_measured and not res.options.prices and res.options.kwh_price is None:
        sec.para("No energy measured: no file holds power readings (wulfbench --power) and no "
                 "--power-log was given; energy.csv says unmeasured for every point. Nothing "
                 "is estimated (docs/energy.md).")
        table.html_rows = []
        table.title += " (every point unmeasured: the CSV lists them)"
        sec.table(table)
        return
    sec.para("Energy per request from each node's own source (rapl, hwmon, pi5) or a meter log "
             "(meter), summed over the nodes; a point with any node unmeasured is unmeasured, "
             "never estimated. Above idle subtracts the idle power measured before the first "
             "point. $ per 1000 requests = node-hours at --price over the time per request, plus "
             "the energy at --kwh-price.")
    sec.bullets([f"{bold(name)}: {text}" for name, text in res.sources.items()])
    chosen = {(r.run, r.point) for r in res.rows if r.measured or np.isfinite(r.usd_per_1000_requests)}
    table.html_rows = [r for r in table.rows if (r["run"], r["point"]) in chosen]
    if len(table.html_rows) < len(table.rows):
        table.title += " (measured or priced points; the CSV has every point)"
    sec.table(table)
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
    sec.bullets(versus + res.notes)
