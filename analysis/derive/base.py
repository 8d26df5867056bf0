"""Per-point statistics: the time series of a point, their medians, per-rank medians and stragglers, and the default point of a run."""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from . import stats
from ..read.runs import FftPoint, Run


SERIES = ("total", "read", "distribute", "compute", "fft", "gather", "overhead")


SERIES_TITLES = {
    "total": "total", "read": "read", "distribute": "distribute", "compute": "compute",
    "fft": "FFT", "gather": "gather", "overhead": "overhead",
}


STRAGGLER_RATIO = 1.20


SCENARIO_X = {"sizes": "input_bytes", "files": "nfiles"}


def slowest_rank(point: FftPoint) -> np.ndarray:
    """Each repetition's slowest rank (docs/reading.md, "The slowest rank"): as the program stored
    it, else, in files older than `slowest_rank`, worked out by the program's rule: the rank with
    the largest t_distribute + t_compute + t_gather, the lowest on a tie."""
    if point.slowest_rank is not None:
        return point.slowest_rank
    t = point.times
    busy = np.nan_to_num(t["t_distribute"]) + t["t_compute"] + np.nan_to_num(t["t_gather"])
    return np.argmax(np.where(np.isnan(busy), -np.inf, busy), axis=1)


def series_samples(point: FftPoint) -> dict[str, np.ndarray]:
    """Per-repetition samples of every series of a point: t_total and t_read; the slowest rank's
    distribute, compute and gather, and the overhead, what they leave of t_total (negative only
    when they overlap), as the program stored it when it did; the longest rank's FFT."""
    t = point.times
    reps = np.arange(t["t_total"].shape[0])
    slow = slowest_rank(point)
    distribute, compute, gather = (t[name][reps, slow] for name in ("t_distribute", "t_compute", "t_gather"))
    if point.t_over is not None:
        overhead = point.t_over
    else:
        overhead = t["t_total"] - (np.nan_to_num(distribute) + compute + np.nan_to_num(gather))
    return {
        "total": t["t_total"],
        "read": t["t_read"],
        "distribute": distribute,
        "compute": compute,
        "fft": stats.nanmax(t["t_fft"][:, point.compute_ranks], axis=1),
        "gather": gather,
        "overhead": overhead,
    }


def overhead_why(s: "PointStats") -> str:
    """Why a point's median overhead is negative, or "" when it is not: the slowest rank's phases
    ran at once, which the pipelined and dynamic schedules do on purpose."""
    over = s.summaries["overhead"].median
    if not (np.isfinite(over) and over < 0):
        return ""
    schedule = str(s.point.attrs.get("schedule", "?"))
    return f"negative: the slowest rank's phases overlap ({schedule} schedule)"


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
        # The program's figure over the span of every rank's transforms (docs/reading.md, "GFLOPS");
        # files before it: flops over the longest rank's t_fft, which overstates ranks that took turns.
        stored = point.attrs.get("gflops")
        gflops = (float(stored) if stored is not None else
                  flops / fft_med / 1e9 if fft_med > 0 else float("nan"))
    usable = True
    if run.invalid:
        status, usable = "INVALID (run failed verification)", False
    elif point.verified == 0:
        status, usable = "INVALID (verify failed)", False
    elif total.n == 0:
        status, usable = "no data", False
    elif total.unstable or stats.stall(point.t_sync):
        status = f"unstable ({stats.unsteady(samples['total'], point.t_sync)})"
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
