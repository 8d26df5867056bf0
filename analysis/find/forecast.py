"""Derive the model and forecast section: each run's fit and the validated forecasts."""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from .. import derive
from ..derive import model
from . import tables
from ..read.runs import Run
from .tables import Table


@dataclass(frozen=True)
class RunFit:
    run: Run
    model: model.RunModel
    compute: tuple  # the compute samples the fit figure draws
    notes: tuple[str, ...]


@dataclass(frozen=True)
class ForecastFindings:
    fits: tuple[RunFit, ...]
    models: Table | None  # None: nothing to fit
    validated: tuple[tuple[object, Table, Table], ...]  # (validation, its table, the forecast's)
    texts: tuple[str, ...]
    any_group: bool


def _cpu_of(run: Run) -> str:
    """The CPU model a forecast groups runs by."""
    return str(run.hosts[0].get("cpu_model")) if run.hosts else "?"


def _transfer_runs(ctx, cpu: str, items: list[tuple[Run, list]]) -> list[Run]:
    """Runs with a transfer test on the hosts of a forecast group (a study's transfer file beside
    its fft files), whose pingpong between nodes gives the group's alpha and beta."""
    names = {str(h.get("hostname")) for run, _pts in items for h in run.hosts}
    out = []
    for run in ctx.runs:
        hosts = {str(h.get("hostname")) for h in run.hosts}
        if run not in ctx.baselines and run.transfer and hosts and hosts <= names and _cpu_of(run) == cpu:
            out.append(run)
    return out


def forecast_findings(ctx) -> ForecastFindings:
    fits: list[RunFit] = []
    groups: dict[str, list[tuple[Run, list]]] = {}
    for run in ctx.runs:
        usable = [s for s in ctx.stats.get(run.name, []) if s.usable]
        if not usable:
            continue
        m = model.fit_run(run, [s.point for s in usable])
        fits.append(RunFit(run, m, derive.compute_samples([s.point for s in usable]),
                           tuple(f"{run.name}: {note}." for note in m.notes)))
        if run not in ctx.baselines:
            groups.setdefault(_cpu_of(run), []).append((run, [s.point for s in usable]))
    if not fits:
        return ForecastFindings((), None, (), (), bool(groups))
    models = tables.models([f.model for f in fits])
    nodes = np.arange(1, max(1, ctx.args.max_nodes) + 1)
    texts, validated = [], []
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
        label = f"{big.id} ({tables.workload(big.nfiles, big.seconds_per_file, big.input_bytes)})"
        f = model.forecast(val.model, big, label,
                           derive.median_total(one[0]) if one else None, nodes, rpn)
        if f is None:
            continue
        f.measured = sorted((model.node_count(r), derive.median_total(pt)) for r, pts in items
                            for pt in pts if pt.key == big.key)
        val.model.forecasts.append(f)
        validated.append((val, tables.validation(val), tables.forecasts([val.model])))
        comm = f"; alpha and beta from {val.model.hockney.source}" if val.model.hockney else ""
        texts.append(f"Forecast for {cpu}, a model and not a measurement: {val.error_text}{comm}.")
    return ForecastFindings(tuple(fits), models, tuple(validated), tuple(texts), bool(groups))
