"""Numbers derived from the raw samples of a run, shared by tables and plots:
per-point statistics, baseline comparison, stragglers, transfer reductions,
load percentiles and saturation.

Definitions (also printed in the report):
- Per-rank times are reduced to the slowest rank of each repetition, then the
  median is taken over repetitions; distribution and gather over all ranks,
  compute and FFT over the ranks that compute.
- overhead = t_total - slowest rank's t_compute, per repetition.
- A point is unstable when the CV of t_total exceeds 5 %.
- A straggler is a computing rank whose median t_compute, or whose median
  t_distribute + t_compute + t_gather, exceeds the median over computing ranks
  by more than 20 %.
"""

from __future__ import annotations

import warnings
from dataclasses import dataclass, field

import numpy as np

from . import stats
from .load import LOAD_STATUS, FftPoint, LoadStep, Run, TransferTest

SERIES = ("total", "read", "distribute", "compute", "fft", "gather", "overhead")
SERIES_TITLES = {
    "total": "total", "read": "read", "distribute": "distribute", "compute": "compute",
    "fft": "FFT", "gather": "gather", "overhead": "overhead",
}
STRAGGLER_RATIO = 1.20
SCENARIO_X = {"sizes": "input_bytes", "files": "nfiles"}


def _nanmax_rows(arr: np.ndarray) -> np.ndarray:
    """Max over axis 1, NaN for rows that are all NaN (without warnings)."""
    if arr.ndim != 2 or arr.shape[1] == 0:
        return np.full(arr.shape[0] if arr.ndim else 0, np.nan)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", RuntimeWarning)
        return np.nanmax(arr, axis=1)


def _nanmedian(arr: np.ndarray, axis: int | None = None) -> np.ndarray | float:
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", RuntimeWarning)
        return np.nanmedian(arr, axis=axis)


def series_samples(point: FftPoint) -> dict[str, np.ndarray]:
    """Per-repetition samples of every series of a point."""
    t = point.times
    cr = point.compute_ranks
    compute = _nanmax_rows(t["t_compute"][:, cr])
    return {
        "total": t["t_total"],
        "read": t["t_read"],
        "distribute": _nanmax_rows(t["t_distribute"]),
        "compute": compute,
        "fft": _nanmax_rows(t["t_fft"][:, cr]),
        "gather": _nanmax_rows(t["t_gather"]),
        "overhead": t["t_total"] - compute,
    }


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
    med = {name: _nanmedian(t[f"t_{name}"], axis=0)
           for name in ("distribute", "compute", "fft", "gather")}
    phases = _nanmedian(t["t_distribute"] + t["t_compute"] + t["t_gather"], axis=0)
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
        med = {name: float(np.nanmedian([getattr(s, name) for s in workers]))
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
    run: Run
    cluster: PointStats
    base: PointStats
    speedup: float
    efficiency: float
    p: int
    karp_flatt: float
    verdict: str  # faster / slower / CIs overlap


def compare(cluster: list[PointStats], base: list[PointStats]) -> tuple[list[Comparison], list[str]]:
    """Match usable points by key and compute speedup, efficiency and Karp-Flatt."""
    notes: list[str] = []
    by_key: dict[tuple, PointStats] = {}
    for s in base:
        if not s.usable:
            continue
        if s.point.key in by_key:
            notes.append(f"baseline has two points with the same settings ({by_key[s.point.key].point.id}, "
                         f"{s.point.id}); the first is used")
            continue
        by_key[s.point.key] = s
    out: list[Comparison] = []
    seen: set[tuple] = set()
    for s in cluster:
        if not s.usable or s.point.key not in by_key:
            continue
        if s.point.key in seen:
            notes.append(f"{s.run.name}: {s.point.id} repeats the settings of an earlier point; "
                         "not compared")
            continue
        seen.add(s.point.key)
        b = by_key[s.point.key]
        t_c, t_b = s.summaries["total"], b.summaries["total"]
        sp = stats.speedup(t_b.median, t_c.median)
        p = s.point.p
        if t_c.ci_hi < t_b.ci_lo:
            verdict = "faster"
        elif t_c.ci_lo > t_b.ci_hi:
            verdict = "slower"
        else:
            verdict = "CIs overlap"
        out.append(Comparison(run=s.run, cluster=s, base=b, speedup=sp,
                              efficiency=stats.efficiency(sp, p), p=p,
                              karp_flatt=stats.karp_flatt(sp, p), verdict=verdict))
    return out, notes


@dataclass
class Crossover:
    run: Run
    scenario: str
    config: str
    x: float | None  # None: never in the measured range
    x_range: tuple[float, float]
    seconds_per_file: float | None
    sustained: bool  # S > 1 at every larger measured point too


def crossovers(comps: list[Comparison]) -> list[Crossover]:
    groups: dict[tuple, list[Comparison]] = {}
    for c in comps:
        sc = c.cluster.point.scenario
        if sc not in SCENARIO_X:
            continue
        groups.setdefault((c.run.name, sc, c.cluster.point.config), []).append(c)
    out = []
    for (_, scenario, config), items in groups.items():
        items.sort(key=lambda c: c.cluster.x)
        xs = [c.cluster.x for c in items]
        x = stats.crossover(xs, [c.speedup for c in items])
        secs = None
        sustained = False
        if x is not None:
            at = next(c for c in items if c.cluster.x == x)
            secs = at.cluster.point.seconds_per_file
            sustained = all(c.speedup > 1 for c in items if c.cluster.x >= x)
        out.append(Crossover(run=items[0].run, scenario=scenario, config=config, x=x,
                             x_range=(min(xs), max(xs)), seconds_per_file=secs,
                             sustained=sustained))
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
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", RuntimeWarning)
        return (np.nanmedian(arr2d, axis=1), np.nanmin(arr2d, axis=1), np.nanmax(arr2d, axis=1))


def p2p_curve(run: Run, test: TransferTest) -> TransferCurve:
    """Median over pairs, band min-max over pairs."""
    med, lo, hi = _spread(test.t_med)
    bw = _bandwidth(test, run.nranks)
    bmed, blo, bhi = _spread(bw)
    npairs = test.t_med.shape[1]
    label = test.name + (f" ({npairs} pairs)" if npairs > 1 else "")
    return TransferCurve(run, test.name, label, test.bytes, med, lo, hi, bmed, blo, bhi)


def collective_curve(run: Run, test: TransferTest) -> TransferCurve:
    """Per rank the median over repetitions; line: median over ranks; band: min-max over ranks."""
    if test.t is not None and test.t.ndim == 3:
        per_rank = _nanmedian(test.t, axis=1)  # [S, nranks]
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
