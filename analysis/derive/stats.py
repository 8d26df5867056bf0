"""Statistics on raw repetition samples: a distribution-free confidence interval
for the median, the coefficient of variation, and the parallel-performance
measures (speedup, efficiency, Karp-Flatt serial fraction, crossover).
"""

from __future__ import annotations

import math
import warnings
from dataclasses import dataclass

import numpy as np

UNSTABLE_CV = 0.05
# A repetition whose agreements and start barrier (t_sync) took longer than this stalled between its
# windows: a link down for seconds, a node swapping. Healthy clusters take milliseconds there; TCP's
# first retransmission timeout is 0.2 s, so one lost segment stays under it.
STALL_S = 1.0


def _quiet(func, arr, axis):
    # all-NaN slices are expected (a rank that did not compute, a missing
    # repetition): they give NaN, and numpy's warning about it is noise
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", RuntimeWarning)
        return func(np.asarray(arr, dtype=float), axis=axis)


def nanmedian(arr, axis: int | None = None):
    """Median ignoring NaN; NaN (without a warning) where everything is NaN."""
    out = _quiet(np.nanmedian, arr, axis)
    return float(out) if axis is None else out


def nanmean(arr, axis: int | None = None):
    """Mean ignoring NaN; NaN (without a warning) where everything is NaN."""
    out = _quiet(np.nanmean, arr, axis)
    return float(out) if axis is None else out


def nanpercentile(arr, q: float, axis: int | None = None):
    """Percentile q ignoring NaN; NaN (without a warning) where everything is NaN."""
    out = _quiet(lambda a, axis: np.nanpercentile(a, q, axis=axis), arr, axis)
    return float(out) if axis is None else out


def _extreme(fn, arr, axis):
    """fn (np.nanmax or np.nanmin) of arr; NaN, without a warning, where it is empty or all NaN."""
    a = np.asarray(arr, dtype=float)
    if a.size == 0 or (axis is not None and a.shape[axis] == 0):
        return float("nan") if axis is None else np.full(np.delete(a.shape, axis), np.nan)
    out = _quiet(fn, a, axis)
    return float(out) if axis is None else out


def nanmax(arr, axis: int | None = None):
    """Maximum ignoring NaN; NaN (without a warning) where everything is NaN."""
    return _extreme(np.nanmax, arr, axis)


def nanmin(arr, axis: int | None = None):
    """Minimum ignoring NaN; NaN (without a warning) where everything is NaN."""
    return _extreme(np.nanmin, arr, axis)


@dataclass
class Summary:
    """Statistics of one series of repetitions (NaNs dropped)."""

    n: int
    median: float
    ci_lo: float
    ci_hi: float
    ci_level: float  # coverage actually achieved by [ci_lo, ci_hi]
    cv: float
    mean: float
    minimum: float
    maximum: float

    @property
    def unstable(self) -> bool:
        return bool(self.cv > UNSTABLE_CV)


def binom_cdf_half(k: int, n: int) -> float:
    """P(B <= k) for B ~ Binomial(n, 1/2)."""
    if k < 0:
        return 0.0
    if k >= n:
        return 1.0
    log_terms = [math.lgamma(n + 1) - math.lgamma(i + 1) - math.lgamma(n - i + 1)
                 for i in range(k + 1)]
    top = max(log_terms)
    return min(1.0, math.exp(top - n * math.log(2.0)) * sum(math.exp(t - top) for t in log_terms))


def median_ci_ranks(n: int, level: float = 0.95) -> tuple[int, int, float]:
    """1-based order statistics (j, k) with P(X_(j) <= median <= X_(k)) >= level,
    the narrowest symmetric pair, and the coverage it achieves.

    The number of samples below the true median is Binomial(n, 1/2), so
    coverage of [X_(j), X_(n+1-j)] is 1 - 2 P(B <= j-1). When even the sample
    range (j = 1) cannot reach `level` (n < 6 at 95 %), the range is returned
    with its smaller coverage 1 - 2^(1-n) as the small-n fallback.
    """
    if n < 1:
        return 0, 0, 0.0
    if n == 1:
        return 1, 1, 0.0
    alpha = 1.0 - level
    j = 1
    while j + 1 <= n // 2 and binom_cdf_half(j, n) <= alpha / 2:
        j += 1
    coverage = 1.0 - 2.0 * binom_cdf_half(j - 1, n)
    return j, n + 1 - j, coverage


def median_ci(samples: np.ndarray, level: float = 0.95) -> tuple[float, float, float, float]:
    """Median and its distribution-free confidence interval.

    Returns (median, lo, hi, achieved coverage); NaN where there are no samples.
    """
    x = np.sort(np.asarray(samples, dtype=float).reshape(-1))
    x = x[~np.isnan(x)]
    n = x.size
    if n == 0:
        nan = float("nan")
        return nan, nan, nan, 0.0
    j, k, coverage = median_ci_ranks(n, level)
    return float(np.median(x)), float(x[j - 1]), float(x[k - 1]), coverage


def cv(samples: np.ndarray) -> float:
    """Coefficient of variation: sample standard deviation over mean (NaN if n < 2
    or the mean is not positive)."""
    x = np.asarray(samples, dtype=float).reshape(-1)
    x = x[~np.isnan(x)]
    if x.size < 2 or not np.mean(x) > 0:  # meaningless for a mean at or below 0
        return float("nan")
    return float(np.std(x, ddof=1) / np.mean(x))


def stall(t_sync: np.ndarray | None) -> tuple[int, float] | None:
    """The repetition (0-based) that waited longest outside its window and that wait in s, when it
    is over STALL_S; None otherwise and for files without t_sync. The one rule for a stalled point:
    the report's status and the network warnings both use it."""
    if t_sync is None:
        return None
    x = np.asarray(t_sync, dtype=float).reshape(-1)
    if not np.any(np.isfinite(x)):
        return None
    i = int(np.nanargmax(x))
    return (i, float(x[i])) if x[i] > STALL_S else None


def unsteady(t_total: np.ndarray, t_sync: np.ndarray | None = None) -> str:
    """Why a point's repetitions cannot be trusted as one figure: "CV 7.1 %" when t_total spreads
    past UNSTABLE_CV, "stalled 5.3 s before repetition 3" when a repetition stalled between windows
    (stall); "" when neither."""
    c = cv(t_total)
    if np.isfinite(c) and c > UNSTABLE_CV:
        return f"CV {c * 100:.1f} %"
    s = stall(t_sync)
    return f"stalled {s[1]:.1f} s before repetition {s[0] + 1}" if s else ""


def summarize(samples: np.ndarray, level: float = 0.95) -> Summary:
    x = np.asarray(samples, dtype=float).reshape(-1)
    x = x[~np.isnan(x)]
    med, lo, hi, coverage = median_ci(x, level)
    if x.size == 0:
        nan = float("nan")
        return Summary(0, nan, nan, nan, 0.0, nan, nan, nan, nan)
    return Summary(n=int(x.size), median=med, ci_lo=lo, ci_hi=hi, ci_level=coverage,
                   cv=cv(x), mean=float(np.mean(x)), minimum=float(np.min(x)),
                   maximum=float(np.max(x)))


def percentile(samples: np.ndarray, q: float) -> float:
    x = np.asarray(samples, dtype=float).reshape(-1)
    x = x[~np.isnan(x)]
    return float(np.percentile(x, q)) if x.size else float("nan")


def speedup(t_baseline: float, t_parallel: float) -> float:
    """S = T_baseline / T_parallel."""
    if not (t_parallel > 0) or not np.isfinite(t_baseline):
        return float("nan")
    return float(t_baseline / t_parallel)


def efficiency(s: float, p: int) -> float:
    """Parallel efficiency E = S / p."""
    return float(s / p) if p > 0 else float("nan")


def karp_flatt(s: float, p: int) -> float:
    """Experimentally determined serial fraction e = (1/S - 1/p) / (1 - 1/p);
    undefined for p = 1."""
    if p <= 1 or not (s > 0):
        return float("nan")
    return float((1.0 / s - 1.0 / p) / (1.0 - 1.0 / p))


def paired_ratio(num: np.ndarray, den: np.ndarray, level: float = 0.95) -> Summary:
    """Statistics of the per-repetition ratios num[r] / den[r] (pairs with a
    NaN or a non-positive denominator are dropped)."""
    a = np.asarray(num, dtype=float).reshape(-1)
    b = np.asarray(den, dtype=float).reshape(-1)
    n = min(a.size, b.size)
    a, b = a[:n], b[:n]
    with np.errstate(all="ignore"):
        r = np.where(b > 0, a / b, np.nan)
    return summarize(r, level)


def crossover(xs: list[float], speedups: list[float]) -> float | None:
    """The smallest x from which the speedup exceeds 1 at every larger x too;
    None when the largest point does not beat 1 (no crossover)."""
    pairs = sorted((x, s) for x, s in zip(xs, speedups) if np.isfinite(s))
    found = None
    for x, s in reversed(pairs):
        if not s > 1.0:
            break
        found = x
    return found


def break_even(xs: list[float], ratios: list[float]) -> float | None:
    """Where a ratio (cluster over reference throughput) reaches 1 for good: between the last x
    at which it is at most 1 and the first x from which it exceeds 1 at every larger x (the
    crossover rule), interpolated linearly in log x and log ratio. The smallest x when every x
    wins (the true break-even is at or below it); None when the largest x does not win."""
    pairs = sorted((float(x), float(r)) for x, r in zip(xs, ratios)
                   if np.isfinite(r) and r > 0 and x > 0)
    first = crossover([x for x, _ in pairs], [r for _, r in pairs])
    if first is None:
        return None
    k = [x for x, _ in pairs].index(first)
    if k == 0:
        return first
    (x0, r0), (x1, r1) = pairs[k - 1], pairs[k]
    frac = -math.log(r0) / (math.log(r1) - math.log(r0))
    return float(math.exp(math.log(x0) + frac * (math.log(x1) - math.log(x0))))
