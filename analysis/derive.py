"""Numbers derived from the raw samples of a run, shared by tables, plots and
the model; every per-point reduction lives here: per-point statistics and
phases, paired and cross-run speedups, crossovers, stragglers, transfer
statistics and link maps, dfft, load percentiles and saturation.

Definitions (also printed in the report):
- Per-rank times are reduced to the slowest rank of each repetition, then the
  median is taken over repetitions; distribution and gather over all ranks,
  compute and FFT over the ranks that compute.
- overhead = t_total - slowest t_distribute - slowest t_compute - slowest
  t_gather, per repetition.
- A point is unstable when the CV of t_total exceeds 5 %.
- A straggler is a computing rank whose median t_compute, or whose median
  t_distribute + t_compute + t_gather, exceeds the median over computing ranks
  by more than 20 %.
"""

from __future__ import annotations

from dataclasses import dataclass, field

import numpy as np

from . import stats
from .runs import LOAD_STATUS, FftPoint, LoadStep, Run, TransferTest

SERIES = ("total", "read", "distribute", "compute", "fft", "gather", "overhead")
SERIES_TITLES = {
    "total": "total", "read": "read", "distribute": "distribute", "compute": "compute",
    "fft": "FFT", "gather": "gather", "overhead": "overhead",
}
STRAGGLER_RATIO = 1.20
SCENARIO_X = {"sizes": "input_bytes", "files": "nfiles"}


def series_samples(point: FftPoint) -> dict[str, np.ndarray]:
    """Per-repetition samples of every series of a point. Overhead is what the
    slowest rank's distribute, compute and gather leave of t_total in the same
    repetition (negative when the phases overlap)."""
    t = point.times
    cr = point.compute_ranks
    compute = stats.nanmax(t["t_compute"][:, cr], axis=1)
    distribute = stats.nanmax(t["t_distribute"], axis=1)
    gather = stats.nanmax(t["t_gather"], axis=1)
    return {
        "total": t["t_total"],
        "read": t["t_read"],
        "distribute": distribute,
        "compute": compute,
        "fft": stats.nanmax(t["t_fft"][:, cr], axis=1),
        "gather": gather,
        "overhead": t["t_total"] - np.nan_to_num(distribute) - compute - np.nan_to_num(gather),
    }


def per_rank_median(point: FftPoint, series: str) -> np.ndarray:
    """Each rank's median over repetitions of a per-rank series."""
    return stats.nanmedian(point.times[series], axis=0)


def slowest_median(point: FftPoint, series: str) -> float:
    """Median over repetitions of the slowest rank's time."""
    arr = point.times[series]
    if arr.size == 0:
        return float("nan")
    return stats.nanmedian(stats.nanmax(arr, axis=1))


def compute_samples(points: list[FftPoint]) -> tuple[np.ndarray, np.ndarray]:
    """(flops, median t_compute) of every computing rank at every point."""
    xs: list[float] = []
    ys: list[float] = []
    for point in points:
        med = per_rank_median(point, "t_compute")
        for r in point.compute_ranks:
            if r < med.size and r < point.flops.size:
                xs.append(float(point.flops[r]))
                ys.append(float(med[r]))
    return np.asarray(xs), np.asarray(ys)


def median_total(point: FftPoint) -> float:
    return stats.nanmedian(point.times["t_total"])


@dataclass
class PointStats:
    run: Run
    point: FftPoint
    summaries: dict[str, stats.Summary]
    kBps: float
    gflops: float
    gflops_per_rank: float
    status: str  # "ok", "unstable", "INVALID ...", "no data"
    usable: bool  # may be used in figures, comparisons and fits

    @property
    def x(self) -> float:
        """The point's position in its sweep (input bytes or file count)."""
        if self.point.scenario == "files":
            return float(self.point.nfiles)
        return self.point.input_bytes

    @property
    def median(self) -> float:
        return self.summaries["total"].median


def point_stats(run: Run, point: FftPoint) -> PointStats:
    samples = series_samples(point)
    summaries = {name: stats.summarize(samples[name]) for name in SERIES}
    total = summaries["total"]
    fft_med = summaries["fft"].median
    with np.errstate(all="ignore"):
        kbps = point.input_bytes / 1000.0 / total.median if total.median > 0 else float("nan")
        flops = float(np.nansum(point.flops)) if not np.all(np.isnan(point.flops)) else float("nan")
        gflops = flops / fft_med / 1e9 if fft_med > 0 else float("nan")
    usable = True
    if run.invalid:
        status, usable = "INVALID (run failed verification)", False
    elif point.verified == 0:
        status, usable = "INVALID (verify failed)", False
    elif total.n == 0:
        status, usable = "no data", False
    elif total.unstable:
        status = f"unstable (CV {total.cv * 100:.1f} %)"
    elif point.verified == -1:
        status = "ok (not verified)"
    else:
        status = "ok"
    return PointStats(run=run, point=point, summaries=summaries, kBps=kbps, gflops=gflops,
                      gflops_per_rank=gflops / point.p if point.p else float("nan"),
                      status=status, usable=usable)


def run_point_stats(run: Run) -> list[PointStats]:
    return [point_stats(run, point) for point in run.points]


@dataclass
class RankStats:
    rank: int
    host: str
    computes: bool
    distribute: float
    compute: float
    fft: float
    gather: float
    phases: float  # median over reps of distribute + compute + gather
    gflops: float
    compute_ratio: float = float("nan")
    phases_ratio: float = float("nan")
    straggler: bool = False
    reason: str = ""


def rank_stats(run: Run, point: FftPoint) -> list[RankStats]:
    """Per-rank medians at one point, with the straggler rule applied."""
    t = point.times
    med = {name: per_rank_median(point, f"t_{name}")
           for name in ("distribute", "compute", "fft", "gather")}
    phases = stats.nanmedian(t["t_distribute"] + t["t_compute"] + t["t_gather"], axis=0)
    computing = set(int(r) for r in point.compute_ranks)
    out: list[RankStats] = []
    for r in range(point.nranks):
        fft = float(med["fft"][r])
        flops = float(point.flops[r]) if r < point.flops.size else float("nan")
        out.append(RankStats(rank=r, host=run.hostname(r), computes=r in computing,
                             distribute=float(med["distribute"][r]),
                             compute=float(med["compute"][r]), fft=fft,
                             gather=float(med["gather"][r]), phases=float(phases[r]),
                             gflops=flops / fft / 1e9 if fft > 0 and flops > 0 else float("nan")))
    workers = [s for s in out if s.computes]
    if len(workers) >= 2:
        med = {name: stats.nanmedian([getattr(s, name) for s in workers])
               for name in ("distribute", "compute", "gather", "phases")}
        for s in workers:
            s.compute_ratio = s.compute / med["compute"] if med["compute"] > 0 else float("nan")
            s.phases_ratio = s.phases / med["phases"] if med["phases"] > 0 else float("nan")
            reasons = []
            if s.compute_ratio > STRAGGLER_RATIO:
                reasons.append(f"compute {100 * (s.compute_ratio - 1):.0f} % above median")
            if s.phases_ratio > STRAGGLER_RATIO:
                # name the phase that adds most: a late place in a linear scatter
                # shows as distribute, a slow CPU as compute
                excess = {name: getattr(s, name) - med[name]
                          for name in ("distribute", "compute", "gather")}
                worst = max(excess, key=lambda k: excess[k] if np.isfinite(excess[k]) else -np.inf)
                reasons.append(f"phases {100 * (s.phases_ratio - 1):.0f} % above median, "
                               f"mostly {worst}")
            s.straggler = bool(reasons)
            s.reason = "; ".join(reasons)
    return out


def default_point(run: Run, stats_list: list[PointStats]) -> PointStats | None:
    """The largest `files` point (most files, then most bytes), else the
    largest point of any scenario; usable points first."""
    for pool in ([s for s in stats_list if s.usable], stats_list):
        files = [s for s in pool if s.point.scenario == "files"]
        cands = files or pool
        if cands:
            return max(cands, key=lambda s: (s.point.nfiles, s.point.input_bytes, s.point.id))
    return None


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
        t_c = s.summaries["total"]
        pooled = np.concatenate([b.point.times["t_total"] for b in matched])
        lo = min(b.summaries["total"].ci_lo for b in matched)
        hi = max(b.summaries["total"].ci_hi for b in matched)
        drift = float("nan")
        if len(matched) == 2:
            drift = matched[1].median / matched[0].median - 1.0
        out.append(Comparison(run=s.run, cluster=s, base=matched[0], kind="cross-run",
                              base_name=base_name,
                              speedup=stats.speedup(stats.nanmedian(pooled), t_c.median),
                              ci_lo=stats.speedup(lo, t_c.ci_hi),
                              ci_hi=stats.speedup(hi, t_c.ci_lo), n=t_c.n, drift=drift))
    return out, notes


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


@dataclass
class TransferCurve:
    """One line of a transfer figure: a value against message size with a band."""

    run: Run
    test: str
    label: str
    bytes: np.ndarray
    value: np.ndarray  # median
    lo: np.ndarray
    hi: np.ndarray
    bandwidth: np.ndarray  # B/s (median)
    bw_lo: np.ndarray
    bw_hi: np.ndarray


def _bandwidth(test: TransferTest, nranks: int) -> np.ndarray:
    if test.bandwidth is not None and test.bandwidth.shape == test.t_med.shape:
        return test.bandwidth
    factor = 2.0 if test.name == "bibw" else float(nranks) if test.name == "ring" else 1.0
    with np.errstate(all="ignore"):
        return factor * test.bytes[:, None] / test.t_med


def _spread(arr2d: np.ndarray) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    return (stats.nanmedian(arr2d, axis=1), stats.nanmin(arr2d, axis=1),
            stats.nanmax(arr2d, axis=1))


def p2p_curve(run: Run, test: TransferTest) -> TransferCurve:
    """Line: median over pairs of each pair's median over repetitions. Band:
    the 25th to 75th percentile of the repetitions over all pairs (min to max
    over pairs when the raw samples are missing), so one slow repetition
    widens the band instead of bending the line."""
    med, lo, hi = _spread(test.t_med)
    if test.t is not None and test.t.ndim == 3 and test.t.shape[0] == test.t_med.shape[0]:
        flat = np.moveaxis(test.t, 1, 2).reshape(test.t.shape[0], -1)
        with np.errstate(all="ignore"):
            lo = stats.nanpercentile(flat, 25, axis=1)
            hi = stats.nanpercentile(flat, 75, axis=1)
    bw = _bandwidth(test, run.nranks)
    bmed = stats.nanmedian(bw, axis=1)
    with np.errstate(all="ignore"):
        scale = np.where(med > 0, bmed * med, np.nan)  # bytes moved per message
        blo, bhi = scale / hi, scale / lo
    npairs = test.t_med.shape[1]
    label = test.name + (f" ({npairs} pairs)" if npairs > 1 else "")
    return TransferCurve(run, test.name, label, test.bytes, med, lo, hi, bmed, blo, bhi)


@dataclass
class TransferStats:
    """One table row per size: the statistics a test's columns name."""

    run: Run
    test: str
    kind: str
    bytes: np.ndarray
    columns: dict[str, np.ndarray]  # t_avg, t_min, t_max, t_p95, t_med, cv
    unstable: np.ndarray  # bool


def transfer_stats(run: Run, test: TransferTest, given: dict[str, np.ndarray]) -> TransferStats:
    """p2p and ring: avg, min, max, p95 over repetitions (median over pairs);
    collectives: avg, max, min and median over ranks of the per-rank means.
    Taken from the file's datasets where present, else from the raw samples."""
    S = test.bytes.shape[0]
    cols: dict[str, np.ndarray] = {}
    raw = test.t if test.t is not None and test.t.ndim == 3 and test.t.shape[0] == S else None
    collective = test.kind == "collective"
    for key in ("t_avg", "t_min", "t_max", "t_p95", "cv"):
        if key in given and given[key].size >= S:
            arr = np.asarray(given[key], dtype=float).reshape(S, -1)
        elif raw is not None:
            per = stats.nanmean(raw, axis=1)  # [S, pairs or ranks]
            if collective:
                arr = {"t_avg": stats.nanmean(per, axis=1), "t_min": stats.nanmin(per, axis=1),
                       "t_max": stats.nanmax(per, axis=1)}.get(key)
                if key == "cv":
                    slow = np.nanargmax(np.nan_to_num(per, nan=-1.0), axis=1)
                    arr = np.array([stats.cv(raw[i, :, slow[i]]) for i in range(S)])
                if arr is None:
                    continue
            else:
                arr = {"t_avg": per, "t_min": stats.nanmin(raw, axis=1),
                       "t_max": stats.nanmax(raw, axis=1),
                       "t_p95": stats.nanpercentile(raw, 95, axis=1)}.get(key)
                if key == "cv":
                    arr = np.array([[stats.cv(raw[i, :, j]) for j in range(raw.shape[2])]
                                    for i in range(S)])
            arr = np.asarray(arr, dtype=float).reshape(S, -1)
        else:
            continue
        cols[key] = stats.nanmax(arr, axis=1) if key == "cv" else stats.nanmedian(arr, axis=1)
    cols["t_med"] = stats.nanmedian(test.t_med.reshape(S, -1), axis=1)
    if "unstable" in given and given["unstable"].size >= S:
        unstable = np.asarray(given["unstable"]).reshape(S, -1).max(axis=1) > 0
    else:
        cv = cols.get("cv", np.full(S, np.nan))
        unstable = np.nan_to_num(cv) > stats.UNSTABLE_CV
    return TransferStats(run, test.name, test.kind, test.bytes, cols, unstable)


@dataclass
class LinkMap:
    """A sender x receiver matrix relative to its median."""

    what: str  # "latency" or "bandwidth"
    values: np.ndarray
    ratio: np.ndarray  # speed relative to the median: bandwidth / median, median / latency
    median: float
    slow: list[tuple[int, int, float]]  # (sender, receiver, ratio) below SLOW_LINK


SLOW_LINK = 0.80


def link_map(matrix: np.ndarray | None, what: str) -> LinkMap | None:
    if matrix is None:
        return None
    values = np.asarray(matrix, dtype=float)
    med = stats.nanmedian(values[np.isfinite(values)]) if np.isfinite(values).any() else float("nan")
    with np.errstate(all="ignore"):
        ratio = values / med if what == "bandwidth" else med / values
    slow = [(int(s), int(r), float(ratio[s, r])) for s, r in zip(*np.nonzero(ratio < SLOW_LINK))]
    return LinkMap(what, values, ratio, med, slow)


@dataclass
class DfftStats:
    run: Run
    id: str
    shape: str
    n: float
    kind: str
    nodes: int
    nranks: int
    total: stats.Summary  # slowest rank per repetition
    local_fft: float  # median over repetitions of the slowest rank
    transpose: float
    gflops: float
    verified: int


def dfft_stats(run: Run, point, nodes: int) -> DfftStats:
    t = point.times
    total = stats.summarize(stats.nanmax(t["t_total"], axis=1))
    local = stats.nanmedian(stats.nanmax(t["t_local_fft"], axis=1)) if "t_local_fft" in t \
        else float("nan")
    trans = stats.nanmedian(stats.nanmax(t["t_transpose"], axis=1)) if "t_transpose" in t \
        else float("nan")
    a = point.attrs
    n = _attr_float(a, "n")
    kind = str(a.get("kind") or "c2c")
    gflops = _attr_float(a, "gflops")
    if not np.isfinite(gflops) and n > 1 and total.median > 0:
        # HPCC's count: 5 N log2 N for c2c, half that for r2c
        gflops = (5 if kind == "c2c" else 2.5) * n * np.log2(n) / total.median / 1e9
    passed = point.verify.get("passed")
    return DfftStats(run=run, id=point.id, shape=str(a.get("shape") or f"{n:.0f}"), n=n,
                     kind=kind, nodes=nodes, nranks=int(t["t_total"].shape[1]), total=total,
                     local_fft=local, transpose=trans, gflops=gflops,
                     verified=-1 if passed is None else int(passed))


def collective_curve(run: Run, test: TransferTest) -> TransferCurve:
    """Per rank the median over repetitions; line: median over ranks; band: min-max over ranks."""
    if test.t is not None and test.t.ndim == 3:
        per_rank = stats.nanmedian(test.t, axis=1)  # [S, nranks]
    else:
        per_rank = test.t_med
    med, lo, hi = _spread(per_rank)
    with np.errstate(all="ignore"):
        bw = test.bytes / med
    return TransferCurve(run, test.name, test.name, test.bytes, med, lo, hi, bw, bw, bw)


def ring_curves(run: Run, test: TransferTest) -> list[TransferCurve]:
    bw = _bandwidth(test, run.nranks)
    out = []
    for o in range(test.t_med.shape[1]):
        label = "natural order" if o == 0 else f"order {o}"
        t = test.t_med[:, o]
        out.append(TransferCurve(run, "ring", label, test.bytes, t, t, t, bw[:, o], bw[:, o],
                                 bw[:, o]))
    return out


@dataclass
class LoadStepStats:
    step: LoadStep
    load: float  # the step's load: clients (closed loop) or offered requests/s (open loop)
    offered_rps: float
    clients: int
    loop: str
    n: int  # requests after warm-up
    done: int
    rejected: int
    unfinished: int
    warmup_excluded: int
    throughput_rps: float
    p50: float
    p95: float
    p99: float
    phases: dict[str, float] = field(default_factory=dict)
    healthy: bool = True
    why: str = ""

    @property
    def load_unit(self) -> str:
        return load_unit(self.loop)


def load_unit(loop: str) -> str:
    return "clients" if loop == "closed" else "req/s"


def _attr_float(attrs: dict, key: str) -> float:
    try:
        return float(attrs.get(key))
    except (TypeError, ValueError):
        return float("nan")


def load_step_stats(step: LoadStep) -> LoadStepStats:
    d = step.data
    a = step.attrs
    n_all = max((v.shape[0] for v in d.values()), default=0)
    warm = d.get("warmup", np.zeros(n_all)).astype(int) == 1
    status = d.get("status", np.zeros(n_all)).astype(int)
    keep = ~warm
    t_submit = d.get("t_submit", np.full(n_all, np.nan)).astype(float)
    t_done = d.get("t_done", np.full(n_all, np.nan)).astype(float)
    done = keep & (status == 0) & np.isfinite(t_done)
    lat = (t_done - t_submit)[done]
    # the measured window: from the file when it says, else duration - warm-up
    start, end = _attr_float(a, "window_start_s"), _attr_float(a, "window_end_s")
    if np.isfinite(end - start):
        window = end - start
    else:
        window = _attr_float(a, "duration_s") - (_attr_float(a, "warmup_s") if np.isfinite(
            _attr_float(a, "warmup_s")) else 0.0)
    if not window > 0:
        span = t_done[done]
        window = float(np.ptp(span)) if span.size > 1 else float("nan")
    phases = {}
    for name in ("t_queue", "t_distribute", "t_compute", "t_return"):
        if name in d:
            vals = d[name].astype(float)[done]
            phases[name] = float(np.median(vals)) if vals.size else float("nan")
    n_done = int(done.sum())
    with np.errstate(all="ignore"):
        thr = n_done / window if window > 0 else float("nan")
    loop = str(a.get("loop", ""))
    clients = int(a.get("clients") or 0)
    offered = _attr_float(a, "offered_rps")
    load = _attr_float(a, "load")
    if not np.isfinite(load):
        load = float(clients) if loop == "closed" else offered
    return LoadStepStats(step=step, load=load, offered_rps=offered, clients=clients, loop=loop,
                         n=int(keep.sum()), done=n_done,
                         rejected=int((keep & (status == 1)).sum()),
                         unfinished=int((keep & (status == 2)).sum()),
                         warmup_excluded=int(warm.sum()), throughput_rps=thr,
                         p50=stats.percentile(lat, 50), p95=stats.percentile(lat, 95),
                         p99=stats.percentile(lat, 99), phases=phases)


@dataclass
class Saturation:
    loop: str
    saturation_load: float  # clients or req/s, see loop
    saturation_rps: float
    saturation_p95_s: float
    first_fail_load: float
    first_fail_rps: float
    fail_reason: str
    source: str  # "file" or "recomputed"

    @property
    def load_unit(self) -> str:
        return load_unit(self.loop)


def judge_step(s: LoadStepStats) -> None:
    """Set s.healthy and s.why: the step's own verdict (`pass`, `fail_reason`)
    when the file has one, else the rule of load_analysis."""
    a = s.step.attrs
    if a.get("pass") is not None and np.isfinite(_attr_float(a, "pass")):
        s.healthy = int(_attr_float(a, "pass")) == 1
        reason = str(a.get("fail_reason") or "")
        s.why = "" if s.healthy else (reason if reason not in ("", "none") else "failed")
        return
    slo = _attr_float(a, "slo_ms") / 1000.0
    reasons = []
    if slo > 0 and not s.p95 <= slo:
        reasons.append("latency")
    # Requests still in service when the step ends are not failures: allow
    # as many as Little's law expects in the system (throughput x p50) + 1.
    in_flight = (s.throughput_rps * s.p50 if np.isfinite(s.throughput_rps * s.p50) else 0.0) + 1
    stuck = max(0.0, s.unfinished - in_flight)
    if s.n and (s.rejected + stuck) / s.n > 0.01:
        reasons.append("rejections" if s.rejected >= stuck else "unfinished")
    if s.loop == "open" and s.offered_rps > 0 and not s.throughput_rps >= 0.9 * s.offered_rps:
        reasons.append("throughput")
    if int(_attr_float(a, "timed_out") == 1):
        reasons.append("timed out")
    s.healthy = not reasons
    s.why = ", ".join(reasons)


def load_analysis(run: Run) -> tuple[list[LoadStepStats], Saturation | None]:
    """Per-step statistics (warm-up excluded) and the saturation point.

    A step's verdict is its own `pass` attribute when the file has one.
    Otherwise a step is healthy when its p95 latency meets the SLO (if one is
    set), at most 1 % of its requests were rejected or left unfinished (beyond
    the throughput x median latency + 1 that may still be in service when the
    step ends), it did not time out and (open loop) it completed at least 90 %
    of the offered rate. The saturation point comes from the /load attributes
    when present; otherwise it is the highest load before the first unhealthy
    step.
    """
    steps = sorted((load_step_stats(s) for s in run.load_steps), key=lambda s: s.load)
    for s in steps:
        judge_step(s)
    if not steps:
        return steps, None
    loop = steps[0].loop
    la = run.load_attrs
    sat_rps = _attr_float(la, "saturation_rps")
    if np.isfinite(sat_rps) or str(la.get("saturation_step") or ""):
        def load_of(key_load: str, step_key: str, rps: float) -> float:
            value = _attr_float(la, key_load)
            if np.isfinite(value):
                return value
            step = next((s for s in steps if s.step.id == str(la.get(step_key) or "")), None)
            if step is None and np.isfinite(rps):
                step = next((s for s in steps if np.isclose(s.offered_rps, rps)), None)
            return step.load if step is not None else float("nan")
        fail_rps = _attr_float(la, "first_fail_rps")
        return steps, Saturation(
            loop=loop, saturation_load=load_of("saturation_load", "saturation_step", sat_rps),
            saturation_rps=sat_rps, saturation_p95_s=_attr_float(la, "saturation_p95_s"),
            first_fail_load=load_of("first_fail_load", "first_fail_step", fail_rps),
            first_fail_rps=fail_rps, fail_reason=str(la.get("fail_reason") or ""), source="file")
    good = None
    fail = None
    for s in steps:
        if s.healthy:
            good = s
        else:
            fail = s
            break
    nan = float("nan")
    return steps, Saturation(
        loop=loop, saturation_load=good.load if good else nan,
        saturation_rps=good.throughput_rps if good else nan,
        saturation_p95_s=good.p95 if good else nan,
        first_fail_load=fail.load if fail else nan,
        first_fail_rps=fail.throughput_rps if fail else nan,
        fail_reason=(fail.why.split(",")[0] if fail else "none"), source="recomputed")


def load_status_name(code: int) -> str:
    return LOAD_STATUS.get(int(code), str(code))
