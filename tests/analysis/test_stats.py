"""Statistics against hand-computed values."""

from __future__ import annotations

import math

import numpy as np
import pytest

from analysis.derive import stats


def test_binomial_cdf_matches_direct_sum():
    for n in (1, 5, 12, 40):
        for k in range(-1, n + 1):
            direct = sum(math.comb(n, i) for i in range(0, k + 1)) / 2 ** n
            assert stats.binom_cdf_half(k, n) == pytest.approx(direct, rel=1e-12, abs=1e-15)


@pytest.mark.parametrize("n, j, k, coverage", [
    (6, 1, 6, 1 - 2 / 64),            # smallest n that reaches 95 %: the range
    (9, 2, 8, 1 - 2 * 10 / 512),      # P(B <= 1) = 10/512
    (20, 6, 15, 1 - 2 * 21700 / 2 ** 20),  # textbook pair for n = 20
])
def test_median_ci_order_statistics(n, j, k, coverage):
    jj, kk, cov = stats.median_ci_ranks(n)
    assert (jj, kk) == (j, k)
    assert cov == pytest.approx(coverage, rel=1e-12)
    assert cov >= 0.95


def test_median_ci_small_n_falls_back_to_range_with_stated_coverage():
    med, lo, hi, cov = stats.median_ci(np.array([5.0, 1.0, 3.0, 2.0, 4.0]))
    assert (med, lo, hi) == (3.0, 1.0, 5.0)
    assert cov == pytest.approx(1 - 2 / 32)
    med, lo, hi, cov = stats.median_ci(np.array([7.0]))
    assert (med, lo, hi, cov) == (7.0, 7.0, 7.0, 0.0)
    med, lo, hi, cov = stats.median_ci(np.array([np.nan, np.nan]))
    assert math.isnan(med) and cov == 0.0


def test_median_ci_picks_the_order_statistics_and_ignores_nan():
    x = np.array([10.0, 2.0, np.nan, 8.0, 4.0, 6.0, 12.0, 14.0, 16.0, 18.0, 1.0])
    med, lo, hi, cov = stats.median_ci(x)  # n = 10 after dropping NaN -> j = 2
    ordered = np.sort(x[~np.isnan(x)])
    assert med == pytest.approx(np.median(ordered))
    assert (lo, hi) == (ordered[1], ordered[8])
    assert cov == pytest.approx(1 - 2 * 11 / 1024)


@pytest.mark.parametrize("n", [7, 15, 40])
def test_median_ci_coverage_on_skewed_samples(n):
    """Distribution-free: the achieved coverage holds for any continuous law."""
    rng = np.random.default_rng(n)
    trials = 4000
    true_median = math.log(2.0)  # exponential(1)
    hits = 0
    for _ in range(trials):
        _, lo, hi, _ = stats.median_ci(rng.exponential(1.0, size=n))
        hits += lo <= true_median <= hi
    nominal = stats.median_ci_ranks(n)[2]
    sigma = math.sqrt(nominal * (1 - nominal) / trials)
    assert abs(hits / trials - nominal) < 4 * sigma + 1e-3
    assert hits / trials > 0.93


def test_cv_and_unstable_flag():
    assert stats.cv(np.array([1.0, 2.0, 3.0, 4.0])) == pytest.approx(math.sqrt(5 / 3) / 2.5)
    assert math.isnan(stats.cv(np.array([3.0])))
    steady = stats.summarize(np.array([1.00, 1.01, 0.99, 1.00, 1.02]))
    noisy = stats.summarize(np.array([1.0, 1.2, 0.8, 1.1, 0.9]))
    assert not steady.unstable and noisy.unstable
    assert noisy.n == 5 and noisy.median == 1.0


def test_speedup_efficiency_karp_flatt_by_hand():
    s = stats.speedup(10.0, 4.0)
    assert s == 2.5
    assert stats.efficiency(s, 4) == 0.625
    # e = (1/2.5 - 1/4) / (1 - 1/4) = (0.4 - 0.25) / 0.75 = 0.2
    assert stats.karp_flatt(s, 4) == pytest.approx(0.2)
    # perfect speedup: no serial fraction; no speedup on 8: e = 1
    assert stats.karp_flatt(8.0, 8) == pytest.approx(0.0, abs=1e-15)
    assert stats.karp_flatt(1.0, 8) == pytest.approx(1.0)
    # slower than the baseline: e > 1
    assert stats.karp_flatt(0.5, 2) == pytest.approx((2 - 0.5) / 0.5)
    assert math.isnan(stats.karp_flatt(2.0, 1))
    assert math.isnan(stats.speedup(1.0, 0.0))


def test_crossover():
    assert stats.crossover([8, 1, 4, 2], [1.5, 0.5, 1.2, 0.9]) == 4
    assert stats.crossover([1, 2, 3], [0.1, 0.5, 1.0]) is None  # equal is not beating
    assert stats.crossover([1, 2], [float("nan"), 1.1]) == 2
    assert stats.crossover([], []) is None


def test_crossover_is_sustained_to_the_largest_point():
    assert stats.crossover([1, 2, 4, 8], [0.5, 1.2, 0.9, 1.3]) == 8
    assert stats.crossover([1, 2, 4, 8], [1.2, 0.9, 1.3, 0.8]) is None  # loses at the end
    assert stats.crossover([1, 2, 4], [1.1, 1.2, 1.3]) == 1


def test_nan_reductions_are_quiet_and_nan_where_empty():
    import warnings as w
    arr = np.array([[1.0, np.nan], [np.nan, np.nan], [3.0, 5.0]])
    with w.catch_warnings():
        w.simplefilter("error")
        assert np.allclose(stats.nanmedian(arr, axis=1), [1.0, np.nan, 4.0], equal_nan=True)
        assert np.allclose(stats.nanmax(arr, axis=1), [1.0, np.nan, 5.0], equal_nan=True)
        assert np.allclose(stats.nanmin(arr, axis=1), [1.0, np.nan, 3.0], equal_nan=True)
        assert math.isnan(stats.nanmedian(np.array([np.nan])))
        assert stats.nanmax(np.zeros((3, 0)), axis=1).shape == (3,)
        assert stats.nanpercentile(np.array([1.0, 2.0, 3.0, np.nan]), 50) == 2.0


def test_paired_ratio():
    base = np.array([2.0, 4.0, 6.0, 8.0, 10.0, 12.0])
    clus = np.array([1.0, 2.0, 2.0, 4.0, 5.0, 0.0])  # the last pair is dropped
    r = stats.paired_ratio(base, clus)
    assert r.n == 5 and r.median == 2.0
    assert (r.ci_lo, r.ci_hi) == (2.0, 3.0)
