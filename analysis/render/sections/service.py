"""Service under load, and energy and cost (figures from analysis.find.service, only
formatted and drawn here)."""

from __future__ import annotations

from .. import plots
from ..document import Report
from ...find import Findings


def load_section(rep: Report, ctx: Findings) -> None:
    f = ctx.load
    sec = rep.section("load", "Service under load (study rows 10–11)", "Load")
    if f.without:
        sec.para("No /load group in: " + ", ".join(f.without) + " (skipped).")
    for name in f.invalid:
        sec.para(f"{name} failed verification; its load steps are left out.")
    if f.steps is None:
        sec.para("No run has load steps.")
        return
    sec.figure(plots.load(list(ctx.loads), ctx.colour, rep.outdir))
    sec.table(f.steps)
    if f.saturation is not None:
        sec.table(f.saturation)


def energy_section(rep: Report, ctx: Findings) -> None:
    f = ctx.energy_page
    sec = rep.section("energy", "Energy and cost", "Energy")
    if not f.measured:
        sec.para("No energy measured: no file holds power readings (wulfbench --power) and no "
                 "--power-log was given; energy.csv says unmeasured for every point. Nothing "
                 "is estimated (docs/energy.md).")
        sec.table(f.table)
        return
    sec.para("Energy per request from each node's own source (rapl, hwmon, pi5) or a meter log "
             "(meter), summed over the nodes; a point with any node unmeasured is unmeasured, "
             "never estimated. Above idle subtracts the idle power measured before the first "
             "point. $ per 1000 requests = node-hours at --price over the time per request, plus "
             "the energy at --kwh-price.")
    sec.bullets(list(f.sources))
    sec.table(f.table)
    sec.bullets(list(f.versus))
