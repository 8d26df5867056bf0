"""Paired and cross-run speedups and the crossover rule."""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from . import stats
from ..read.runs import Run
from .base import SCENARIO_X, PointStats


@dataclass
class Comparison:
    """A speedup at one point: paired (the baseline ran in the same job,
    alternating with the cluster) or across runs (a separate baseline file)."""

    run: Run
    cluster: PointStats
    base: PointStats | None  # the baseline run's point; None when paired
    kind: str  # "paired" or "cross-run"
    base_name: str
    speedup: float
    ci_lo: float
    ci_hi: float
    n: int  # pairs (paired) or cluster repetitions (cross-run)
    drift: float = float("nan")  # after / before - 1 of two bracketing baselines

    @property
    def p(self) -> int:
        return self.cluster.point.p

    @property
    def efficiency(self) -> float:
        return stats.efficiency(self.speedup, self.p)

    @property
    def karp_flatt(self) -> float:
        return stats.karp_flatt(self.speedup, self.p)

    @property
    def verdict(self) -> str:
        if self.ci_lo > 1:
            return "cluster faster"
        if self.ci_hi < 1:
            return "cluster slower"
        return "CI includes 1"

    @property
    def implausible(self) -> list[str]:
        """What is implausible about this speedup (empty when nothing is)."""
        out = []
        if self.p > 1 and self.efficiency > 1.0:
            out.append(f"efficiency {100 * self.efficiency:.0f} % > 100 %")
        if self.p > 1 and self.karp_flatt < 0:
            out.append(f"Karp–Flatt {self.karp_flatt:.3g} < 0")
        return out


def implausible_flag(c: Comparison, paired: list[Comparison]) -> str:
    """"IMPLAUSIBLE, see <where it is explained>" for an implausible comparison, "" otherwise. A
    cross-run speedup of a run that also has a paired one is explained beside the speedups (the
    paired figure is the one to use), every other under "Read first"."""
    if not c.implausible:
        return ""
    return "IMPLAUSIBLE, see " + ("Speedup" if secondary(c, paired) else "Read first")


def secondary(c: Comparison, paired: list[Comparison]) -> bool:
    """A cross-run comparison of a run that has a paired one, whose figure is the one to use."""
    return c.kind == "cross-run" and any(p.run is c.run for p in paired)


def compare_paired(run: Run, items: list[PointStats],
                   baselines: dict[str, np.ndarray]) -> list[Comparison]:
    """Speedup per point as the median of the paired ratios baseline t_total[r] /
    cluster t_total[r], with its 95 % CI. `baselines` maps point id to the
    baseline's t_total samples (/fft/<id>/baseline/t_total)."""
    out = []
    for s in items:
        base = baselines.get(s.point.id)
        if not s.usable or base is None:
            continue
        r = stats.paired_ratio(base, s.point.times["t_total"])
        if r.n == 0:
            continue
        out.append(Comparison(run=run, cluster=s, base=None, kind="paired",
                              base_name="rank 0 alone, same job", speedup=r.median,
                              ci_lo=r.ci_lo, ci_hi=r.ci_hi, n=r.n))
    return out


def compare(cluster: list[PointStats], bases: list[list[PointStats]],
            base_name: str = "baseline") -> tuple[list[Comparison], list[str]]:
    """Match usable points by key against one baseline run, or two that
    bracket the cluster run (before and after). The CI spans the cluster's and
    the baselines' 95 % intervals, so the drift between two baselines is inside it."""
    notes: list[str] = []
    keyed: list[dict[tuple, PointStats]] = []
    for base in bases:
        by_key: dict[tuple, PointStats] = {}
        for s in base:
            if not s.usable:
                continue
            if s.point.key in by_key:
                notes.append(f"baseline {s.run.name} has two points with the same settings "
                             f"({by_key[s.point.key].point.id}, {s.point.id}); the first is used")
                continue
            by_key[s.point.key] = s
        keyed.append(by_key)
    out: list[Comparison] = []
    seen: set[tuple] = set()
    for s in cluster:
        if not s.usable or not keyed or any(s.point.key not in k for k in keyed):
            continue
        if s.point.key in seen:
            notes.append(f"{s.run.name}: {s.point.id} repeats the settings of an earlier point; "
                         "not compared")
            continue
        seen.add(s.point.key)
        matched = [k[s.point.key] for k in keyed]
        drift = float("nan")
        if len(matched) == 2:
            drift = matched[1].median / matched[0].median - 1.0
        speedup, lo, hi = ratio_ci([b.point.times["t_total"] for b in matched], s.point.times["t_total"])
        out.append(Comparison(run=s.run, cluster=s, base=matched[0], kind="cross-run",
                              base_name=base_name, speedup=speedup, ci_lo=lo, ci_hi=hi,
                              n=s.summaries["total"].n, drift=drift))
    return out, notes


def ratio_ci(bases: list[np.ndarray], run: np.ndarray) -> tuple[float, float, float]:
    """The ratio of medians across separate runs (cross-run and cross-machine speedup, run to run,
    measured scaling): the median of the pooled `bases` samples over the median of `run`'s, and
    its 95 % CI [lowest base CI low / run CI high, highest base CI high / run CI low] from each
    median's order-statistic CI (stats.median_ci). With two bases (a baseline before and after)
    the interval spans both, so the drift between them is inside it. NaN where a side is empty."""
    t = stats.summarize(run)
    ends = [stats.summarize(b) for b in bases]
    pooled = np.concatenate([np.asarray(b, dtype=float).reshape(-1) for b in bases])
    return (stats.speedup(stats.nanmedian(pooled), t.median),
            stats.speedup(min(e.ci_lo for e in ends), t.ci_hi),
            stats.speedup(max(e.ci_hi for e in ends), t.ci_lo))


@dataclass
class Crossover:
    run: Run
    scenario: str
    config: str
    kind: str  # paired or cross-run
    x: float | None  # None: no crossover
    x_early: float | None  # the same rule on the CIs' upper ends
    x_late: float | None  # ... and on their lower ends
    x_range: tuple[float, float]
    losing: list[tuple[float, float]]  # (x, speedup) of points at or above 1 that lose
    seconds_per_file: float | None


def crossovers(comps: list[Comparison]) -> list[Crossover]:
    """Per run, scenario, configuration and kind of comparison: the smallest
    size or file count from which the cluster wins at every larger point, and
    the same rule applied to the ends of the speedups' 95 % CIs."""
    groups: dict[tuple, list[Comparison]] = {}
    for c in comps:
        sc = c.cluster.point.scenario
        if sc not in SCENARIO_X:
            continue
        groups.setdefault((c.run.name, sc, c.cluster.point.config, c.kind), []).append(c)
    out = []
    for (_, scenario, config, kind), items in groups.items():
        items.sort(key=lambda c: c.cluster.x)
        xs = [c.cluster.x for c in items]
        x = stats.crossover(xs, [c.speedup for c in items])
        secs = None
        if x is not None:
            secs = next(c for c in items if c.cluster.x == x).cluster.point.seconds_per_file
        out.append(Crossover(
            run=items[0].run, scenario=scenario, config=config, kind=kind, x=x,
            x_early=stats.crossover(xs, [c.ci_hi for c in items]),
            x_late=stats.crossover(xs, [c.ci_lo for c in items]),
            x_range=(min(xs), max(xs)),
            losing=[(c.cluster.x, c.speedup) for c in items if not c.speedup > 1],
            seconds_per_file=secs))
    return out
