"""The find stage: every figure, table, plotted number and line of text the page shows, chosen
from what the derive stage computed before any section renders, into one immutable `Findings`.

First the figures several sections share (point statistics, detail, energy, speedups,
crossovers, load analysis), then each section's own (the modules beside this one, named after
the sections), then the "Read first" warnings, the notes and the headline findings, in one
fixed order. The sections (analysis.render.sections) only format it, so the order they render in
cannot change anything on the page (tests/analysis/test_sections_order.py).

Immutable: frozen dataclasses, tuples and MappingProxyType. The tables (find.tables.Table)
are built whole here, folded rows and titles included; they are plain objects a section could
still change, so the order test renders one Findings three times and compares each rendering.
"""

from __future__ import annotations

import argparse
from collections.abc import Mapping
from dataclasses import dataclass, field, replace
from types import MappingProxyType

from . import buys, tables, whatif
from ..derive import ceilings as derive_ceilings, hardware, scaling
from .. import derive
from ..derive import energy
from ..read import point_detail
from ..derive import Comparison, PointStats
from ..read.runs import Run
from .tables import Table
from .common import as_float, as_int, bold, colours
from .ceilings import CeilingFindings, ceiling_findings, detail_table
from .fft import FftFindings, PipelineFindings, fft_findings, pipeline_findings
from .forecast import ForecastFindings, forecast_findings
from .notices import run_notices
from .ranks import RanksFindings, ranks_findings
from .service import EnergyFindings, LoadFindings, energy_findings, load_findings
from .speedup import SpeedupFindings, speedup_findings
from .storage import StorageFindings, storage_findings
from .study import study_rows
from .transfer import (DfftFindings, ScalingFindings, TransferFindings, dfft_findings,
                       scaling_findings, transfer_findings)

__all__ = ["BuysPage", "Findings", "as_float", "as_int", "derive_findings"]


@dataclass(frozen=True)
class BuysPage:
    lead: str
    table: Table | None  # None: no row
    statements: tuple[str, ...]


@dataclass(frozen=True)
class Findings:
    """Everything the page shows: the command line, the runs, the figures several sections
    share, each section's own, and the lines above the sections."""

    args: argparse.Namespace
    runs: tuple[Run, ...]
    baselines: tuple[Run, ...]
    stats: Mapping[str, list[PointStats]]  # run name -> its points' statistics
    extra: Mapping[str, point_detail.RunNext]  # run name -> its optional per-point detail
    colour: Mapping[str, str]
    energy: energy.Result
    paired: tuple[Comparison, ...]  # speedups against rank 0 alone, in the same job
    cross: tuple[Comparison, ...]  # against the baseline run(s), classified by hardware
    cross_notes: tuple[str, ...]  # what matching points against the baseline noticed
    unmatched: tuple[str, ...]  # runs with no point that matches the baseline's
    crossings: tuple[derive.Crossover, ...]
    loads: tuple[tuple[Run, list, object], ...]  # (run, load step stats, saturation)
    buys: tuple[buys.Row, ...]  # "What the cluster buys", with energy and cost beside each row
    # each section's own figures (None only while derive_findings builds them)
    runs_tables: tuple[Table, ...] = ()  # provenance, own cost, hosts
    buys_page: BuysPage | None = None
    upgrade: tuple[whatif.UpgradePage, ...] = ()  # "What an upgrade buys", one per series
    fft: FftFindings | None = None
    pipeline: PipelineFindings | None = None
    speedup: SpeedupFindings | None = None
    ranks: RanksFindings | None = None
    transfer: TransferFindings | None = None
    dfft: DfftFindings | None = None
    scaling: ScalingFindings | None = None
    storage: StorageFindings | None = None
    forecast: ForecastFindings | None = None
    load: LoadFindings | None = None
    energy_page: EnergyFindings | None = None
    study: Table | None = None
    ceilings: CeilingFindings | None = None
    read_first_detail: Table | None = None  # the warnings Read first gathered into one line each
    # the lines above the sections, in one fixed order whatever the sections' order
    warnings: tuple[str, ...] = ()  # "Read first"
    notes: tuple[str, ...] = ()
    headlines: Mapping[str, tuple[str, ...]] = field(  # run name -> its headline findings
        default_factory=lambda: MappingProxyType({}))

    def throttled(self, run: Run) -> list[str]:
        """Hosts that recorded throttling, in /hosts or a point's health record."""
        names = [str(h.get("hostname")) for h in run.hosts if as_int(h.get("throttled")) == 1]
        for pn in self.extra[run.name].points.values():
            names += [str(h.get("hostname")) for h in pn.health if as_int(h.get("throttled")) == 1]
        return sorted(set(names))


def _comparisons(runs: list[Run], baselines: list[Run], stats: Mapping[str, list[PointStats]],
                 extra: Mapping[str, point_detail.RunNext]):
    """(paired, cross, the notes of matching, runs without a matching point)."""
    paired: list[Comparison] = []
    for run in runs:
        if run.invalid:
            continue
        base = {pid: pn.baseline["t_total"] for pid, pn in extra[run.name].points.items()
                if pn.baseline is not None}
        paired += derive.compare_paired(run, stats[run.name], base)
    cross: list[Comparison] = []
    notes: list[str] = []
    unmatched: list[str] = []
    usable_bases = [b for b in baselines if not b.invalid]
    if len(usable_bases) == len(baselines) and usable_bases:
        name = " and ".join(b.name for b in usable_bases)
        for run in runs:
            if run in baselines or run.invalid:
                continue
            found, more = derive.compare(stats[run.name], [stats[b.name] for b in usable_bases], name)
            notes += more
            if not found:
                unmatched.append(run.name)
            cross += found
        cross = hardware.classify(cross, usable_bases)
    return paired, cross, notes, unmatched


def _buys(runs: list[Run], baselines: list[Run], stats, paired, cross, extra, max_nodes: int,
          result: energy.Result) -> tuple[buys.Row, ...]:
    rows = buys.rows(runs, baselines, stats, paired, cross, extra, max_nodes)
    by_name = {r.name: r for r in runs + baselines}
    for row in rows:
        # Energy and cost beside each comparison (docs/energy.md); empty where nothing was measured.
        base = None if row.kind == "paired" else by_name.get(row.against)
        row.extra.update(energy.buys_columns(result, by_name[row.run], base, row.point))
    return tuple(rows)


def derive_findings(args: argparse.Namespace, runs: list[Run], baselines: list[Run]) -> Findings:
    """Everything the page shows, computed before any section renders."""
    return _sections(_shared(args, runs, baselines))


def _sections(ctx: Findings) -> Findings:
    """Each section's own figures, then the lines above the sections in one fixed order."""
    base = ctx.baselines[0] if ctx.baselines else None
    rows = ctx.buys
    parts = dict(
        runs_tables=tuple(t for t in (tables.provenance(list(ctx.runs), base), tables.own_cost(list(ctx.runs)),
                                      tables.hosts(list(ctx.runs))) if t is not None),
        buys_page=BuysPage(buys.LEAD if rows else buys.NONE,
                           buys.table(list(rows)) if rows else None,
                           tuple(buys.statements(list(rows))) if rows else ()),
        upgrade=whatif.pages(list(ctx.runs), list(ctx.baselines),
                             scaling.series_names([r for r in ctx.runs if r not in ctx.baselines])),
        fft=fft_findings(ctx), pipeline=pipeline_findings(ctx), speedup=speedup_findings(ctx),
        ranks=ranks_findings(ctx), transfer=transfer_findings(ctx), dfft=dfft_findings(ctx),
        scaling=scaling_findings(ctx), storage=storage_findings(ctx), forecast=forecast_findings(ctx), load=load_findings(ctx),
        energy_page=energy_findings(ctx), study=tables.study(study_rows(ctx)),
        ceilings=ceiling_findings(ctx))
    # A run on more ranks than cores says so before any other line: every figure below depends on it.
    warnings = derive_ceilings.oversubscription_lines(list(ctx.runs))
    warnings += list(ctx.energy.warnings)
    warnings += [f"The baseline {bold(b.name)} failed verification: no cross-run speedup is "
                 "computed against it." for b in ctx.baselines if b.invalid]
    notes: list[str] = []
    detail: list[dict] = []
    for run in ctx.runs:
        more_warnings, more_notes, more_detail = run_notices(ctx, run)
        warnings += more_warnings
        notes += more_notes
        detail += more_detail
    parts["read_first_detail"] = detail_table(detail)
    warnings += parts["ceilings"].warnings
    warnings += parts["speedup"].warnings + parts["transfer"].warnings + parts["dfft"].warnings
    warnings += parts["storage"].warnings
    notes += list(ctx.cross_notes) + list(parts["ranks"].notes) + list(parts["transfer"].notes)
    headlines: dict[str, list[str]] = {}
    for part in ("fft", "speedup", "ranks", "transfer", "storage", "load"):
        for name, text in parts[part].finds:
            headlines.setdefault(name, []).append(text)
    return replace(ctx, **parts, warnings=tuple(warnings), notes=tuple(notes),
                   headlines=MappingProxyType({k: tuple(v) for k, v in headlines.items()}))


def _shared(args: argparse.Namespace, runs: list[Run], baselines: list[Run]) -> Findings:
    """The figures several sections share."""
    stats = {r.name: derive.run_point_stats(r) for r in runs}
    extra = {r.name: point_detail.read(r) for r in runs}
    result = energy.analyse(runs, baselines, getattr(args, "energy", None),
                            {r.name: extra[r.name].dfft for r in runs})
    paired, cross, notes, unmatched = _comparisons(runs, baselines, stats, extra)
    loads = tuple((run, *derive.load_analysis(run)) for run in runs
                  if run.load_steps and not run.invalid)
    stats = MappingProxyType(stats)
    extra = MappingProxyType(extra)
    return Findings(args=args, runs=tuple(runs), baselines=tuple(baselines),
                    stats=stats, extra=extra,
                    colour=MappingProxyType(colours(runs, baselines[0] if baselines else None)),
                    energy=result, paired=tuple(paired), cross=tuple(cross),
                    cross_notes=tuple(notes), unmatched=tuple(unmatched),
                    crossings=tuple(derive.crossovers(paired + cross)), loads=loads,
                    buys=_buys(runs, baselines, stats, tuple(paired), tuple(cross), extra,
                               args.max_nodes, result))
