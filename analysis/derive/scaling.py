"""The measured scaling figure: the same FFT point run at several rank or node
counts, joined into t_total, speedup and efficiency against the count.

Which runs form one series: the runs whose labels share a stem once a trailing
count is taken off ("scaling n4", "pi-8nodes", "study_np2" -> "scaling", "pi",
"study"); a run whose stem no other run shares joins the runs of the same CPU
model instead, so one machine's runs at np 1, 2, 3 form a series however they
are labelled, and a Pi and an EC2 cluster never mix. Within a series, points
match on scenario, mode, precision, frame, file count and seconds per file,
and a series needs two or more different (nodes, ranks) counts.

The x axis is nodes when the node count varies, else ranks. Speedup S is the
reference's median t_total over this count's, where the reference is the
smallest count present (1 node or 1 rank when measured), with the 95 %
interval of that ratio of medians that the cross-run speedup uses (ratio_ci).
Ideal = count / reference count; efficiency = S / ideal. Baseline runs
(`--baseline`, root attribute baseline=1) and invalid or unusable points are
left out: they are not a cluster of that size.
"""

from __future__ import annotations

import re
from dataclasses import dataclass

import numpy as np

from .base import PointStats, run_point_stats, series_samples
from .speedups import ratio_ci
from ..read.runs import Run

_COUNT_SUFFIX = re.compile(r"[\s_.:-]*(?:n|np|N|x)?\d+\s*(?:nodes?|ranks?|procs?|n|r)?$")


def label_stem(label: str) -> str:
    """The label without a trailing node or rank count ('' when nothing is left)."""
    return _COUNT_SUFFIX.sub("", label.strip()).strip()


def nodes_of(run: Run) -> int:
    value = run.attrs.get("nnodes")
    try:
        if value is not None and int(value) > 0:
            return int(value)
    except (TypeError, ValueError):
        pass
    names = {(h.get("node"), h.get("hostname")) for h in run.hosts}
    return max(1, len({n for n, _ in names if n is not None}) or len(names))


def _cpu(run: Run) -> str:
    return str(run.hosts[0].get("cpu_model", "")) if run.hosts else ""


def series_names(runs: list[Run]) -> dict[str, str]:
    """run name -> the series it belongs to."""
    stems = {r.name: label_stem(r.label) for r in runs}
    counts: dict[str, int] = {}
    for stem in stems.values():
        counts[stem] = counts.get(stem, 0) + 1
    out = {}
    for run in runs:
        stem = stems[run.name]
        out[run.name] = stem if stem and counts[stem] > 1 else f"cpu {_cpu(run) or '?'}"
    return out


@dataclass
class Entry:
    series: str
    stats: PointStats
    nodes: int
    ranks: int

    @property
    def count(self) -> tuple[int, int]:
        return (self.nodes, self.ranks)


def _describe(s: PointStats) -> str:
    pt = s.point
    where = (f"{pt.nfiles} x {pt.seconds_per_file:g} s files" if pt.scenario == "files"
             else f"one {pt.seconds_per_file:g} s file")
    return f"{pt.scenario}: {where}, {pt.config}"


def scaling_rows(runs: list[Run]) -> tuple[list[dict], list[str]]:
    """One row per series, point and count (see the module doc), and notes on
    what was left out."""
    notes: list[str] = []
    series = series_names(runs)
    groups: dict[tuple, dict[tuple[int, int], Entry]] = {}
    for run in runs:
        if run.is_baseline or run.invalid:
            continue
        nodes = nodes_of(run)
        for s in run_point_stats(run):
            if not s.usable or str(s.point.attrs.get("baseline", 0)) == "1":
                continue
            entry = Entry(series[run.name], s, nodes, s.point.nranks)
            slot = groups.setdefault((entry.series, s.point.key), {})
            if entry.count in slot:
                notes.append(f"{run.name} {s.point.id} repeats {entry.nodes} node(s) x "
                             f"{entry.ranks} rank(s) of {slot[entry.count].stats.run.name} in "
                             f"series {entry.series}; the first is used")
                continue
            slot[entry.count] = entry
    rows = []
    for (name, _key), slot in sorted(groups.items(), key=lambda kv: (kv[0][0], str(kv[0][1]))):
        if len(slot) < 2:
            continue
        entries = sorted(slot.values(), key=lambda e: e.count)
        by_nodes = len({e.nodes for e in entries}) > 1
        axis = "nodes" if by_nodes else "ranks"
        ref = entries[0]
        ref_count = ref.nodes if by_nodes else ref.ranks
        ref_text = (f"{ref_count} node{'s' if ref_count != 1 else ''}" if by_nodes
                    else f"{ref_count} rank{'s' if ref_count != 1 else ''}")
        ref_samples = series_samples(ref.stats.point)["total"]
        for e in entries:
            total = e.stats.summaries["total"]
            count = e.nodes if by_nodes else e.ranks
            ideal = count / ref_count
            samples = series_samples(e.stats.point)["total"]
            sp, lo, hi = ratio_ci([ref_samples], samples)
            eff = sp / ideal
            flag = ""
            if e is not ref and np.isfinite(eff) and eff > 1.0:
                flag = ("efficiency above 100 %: check drift between the runs, cache effects "
                        "of a smaller share, or throttling in /hosts")
            rows.append({
                "series": name, "point": _describe(e.stats), "run": e.stats.run.name,
                "point_id": e.stats.point.id, "nodes": e.nodes, "ranks": e.ranks,
                "compute_ranks": e.stats.point.p, "axis": axis, "n": total.n,
                "t_total_median_s": total.median, "t_total_ci_low_s": total.ci_lo,
                "t_total_ci_high_s": total.ci_hi, "reference": ref_text, "ideal": ideal,
                "speedup": sp, "speedup_ci_low": lo, "speedup_ci_high": hi,
                "efficiency": eff, "efficiency_ci_low": lo / ideal,
                "efficiency_ci_high": hi / ideal, "flag": flag,
            })
    return rows, notes
