"""The model and forecast section."""

from __future__ import annotations

import numpy as np

from .. import derive, model, plots, tables
from ..document import Report
from ..runs import Run
from ..findings import Findings


def _cpu_of(run: Run) -> str:
    """The CPU model a forecast groups runs by."""
    return str(run.hosts[0].get("cpu_model")) if run.hosts else "?"


def _transfer_runs(ctx: Findings, cpu: str, items: list[tuple[Run, list]]) -> list[Run]:
    """Runs with a transfer test on the hosts of a forecast group (a study's transfer file beside
    its fft files), whose pingpong between nodes gives the group's alpha and beta."""
    names = {str(h.get("hostname")) for run, _pts in items for h in run.hosts}
    out = []
    for run in ctx.runs:
        hosts = {str(h.get("hostname")) for h in run.hosts}
        if run not in ctx.baselines and run.transfer and hosts and hosts <= names and _cpu_of(run) == cpu:
            out.append(run)
    return out


def model_section(rep: Report, ctx: Findings) -> None:
    sec = rep.section("model", "Model and forecast", "Forecast")
    sec.para("Hockney model t(m) = α + m/β fitted to pingpong (relative-error least squares); "
             "per-rank compute time fitted as c0 + c1·flops; request time on p ranks modelled as "
             "t0 + (p−1)·α + M_in·(p−1)/(p·β) + c0 + c1·F/p + (p−1)·α + M_out·(p−1)/(p·β), where "
             "M_in, M_out are the request's input and output bytes, F its flops and t0 the "
             "median residual on the measured points. That sum is the phased schedule's; for the "
             "pipelined and dynamic schedules, which overlap the three, it is t0 plus the largest "
             "of distribution, compute and gather.")
    fitted: list[model.RunModel] = []
    groups: dict[str, list[tuple[Run, list]]] = {}
    for run in ctx.runs:
        usable = [s for s in ctx.stats.get(run.name, []) if s.usable]
        if not usable:
            continue
        m = model.fit_run(run, [s.point for s in usable])
        fitted.append(m)
        for note in m.notes:
            sec.para(f"{run.name}: {note}.")
        sec.figure(plots.model_fit(run, m, derive.compute_samples([s.point for s in usable]),
                                   rep.outdir))
        if run not in ctx.baselines:
            groups.setdefault(_cpu_of(run), []).append((run, [s.point for s in usable]))
    if not fitted:
        sec.para("No usable FFT points: nothing to fit.")
        return
    sec.table(tables.models(fitted))
    nodes = np.arange(1, max(1, ctx.args.max_nodes) + 1)
    texts = []
    for cpu, items in groups.items():
        val = model.validate(items, _transfer_runs(ctx, cpu, items))
        runs_text = ", ".join(f"{r.name} ({model.node_count(r)} nodes)" for r, _p in items)
        if not val.ok:
            texts.append(f"Not enough data to forecast {cpu} ({runs_text}): {val.reason}.")
            continue
        big = max((pt for _r, pts in items for pt in pts),
                  key=lambda pt: (pt.scenario == "files", pt.input_bytes))
        one = [pt for r, pts in items if model.node_count(r) == 1 for pt in pts
               if pt.key == big.key]
        rpn = max(1, items[-1][0].nranks // max(1, model.node_count(items[-1][0])))
        f = model.forecast(val.model, big, f"{big.id} ({tables.workload(big.nfiles, big.seconds_per_file, big.input_bytes)})",
                           derive.median_total(one[0]) if one else None, nodes, rpn)
        if f is None:
            continue
        f.measured = sorted((model.node_count(r), derive.median_total(pt)) for r, pts in items
                            for pt in pts if pt.key == big.key)
        val.model.forecasts.append(f)
        sec.figure(plots.forecast(val, rep.outdir))
        sec.table(tables.validation(val))
        sec.table(tables.forecasts([val.model]))
        comm = f"; alpha and beta from {val.model.hockney.source}" if val.model.hockney else ""
        texts.append(f"Forecast for {cpu}, a model and not a measurement: {val.error_text}{comm}.")
    for text in texts:
        sec.para(text)
    if not groups:
        sec.para("Not enough data to forecast: no cluster run with FFT points.")
