"""The report's derive stage: every figure more than one section shows, computed once from
the runs before any section renders, into one immutable `Findings`.

The sections (analysis.sections) only read it, so the order they render in cannot change a
figure (tests/analysis/test_sections_order.py renders them in another order).
"""

from __future__ import annotations

import argparse
from collections.abc import Mapping
from dataclasses import dataclass
from types import MappingProxyType

from . import buys, compare, derive, energy, plots, point_detail
from .derive import Comparison, PointStats
from .runs import Run


def as_int(value: object, default: int = -1) -> int:
    try:
        return int(value)  # type: ignore[arg-type]
    except (TypeError, ValueError):
        return default


def as_float(value: object) -> float:
    try:
        return float(value)  # type: ignore[arg-type]
    except (TypeError, ValueError):
        return float("nan")


@dataclass(frozen=True)
class Findings:
    """What the sections share: the command line, the runs and what was derived from them."""

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
        cross = compare.classify(cross, usable_bases, [stats[b.name] for b in usable_bases])
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
    """Everything the sections share, computed before any of them renders."""
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
                    colour=MappingProxyType(plots.colours(runs, baselines[0] if baselines else None)),
                    energy=result, paired=tuple(paired), cross=tuple(cross),
                    cross_notes=tuple(notes), unmatched=tuple(unmatched),
                    crossings=tuple(derive.crossovers(paired + cross)), loads=loads,
                    buys=_buys(runs, baselines, stats, tuple(paired), tuple(cross), extra,
                               args.max_nodes, result))
