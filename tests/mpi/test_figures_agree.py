"""Figures that exist in C and in Python agree on real files. The program is the reference: Python
reads what it stored, and works a figure out itself only for files older than it, so each fallback is
held here to the stored figure of a file the program just wrote (issue 32):
- the slowest rank of each repetition and t_over (derive.base), for every fft schedule;
- the transfer statistics t_avg, t_min, t_max, t_p95, cv and unstable (derive.transfer), p2p and
  collective;
- the median's 95 % CI (core/stats.c and derive/stats.py), on a file's samples and on crafted sets;
- each load step's verdict (bench_load_figures.c and derive.load_steps), open and closed loop.
"""
from __future__ import annotations

import subprocess
import sys
from dataclasses import replace

import numpy as np
import pytest

from conftest import ROOT, run_wb

sys.path.insert(0, str(ROOT))
from analysis import derive  # noqa: E402
from analysis.derive import stats  # noqa: E402
from analysis.read.reader import open_run  # noqa: E402


@pytest.fixture(scope="module")
def fft_runs(tmp_path_factory):
    d = tmp_path_factory.mktemp("agree")
    out = {}
    for schedule in ("phased", "pipelined", "dynamic"):
        h5 = d / f"fft_{schedule}.h5"
        r = run_wb(3, "fft", "--seconds", "1,5", "--files", "1:4", "--reps", "6", "--warmup", "0",
                   "--schedule", schedule, "--paired-baseline", "-q", "-o", str(h5))
        assert r.returncode == 0, r.stderr
        out[schedule] = open_run(h5)
    return out


@pytest.mark.parametrize("schedule", ["phased", "pipelined", "dynamic"])
def test_the_slowest_rank_worked_out_for_old_files_is_the_stored_one(fft_runs, schedule):
    run = fft_runs[schedule]
    assert run.points
    for point in run.points:
        assert point.slowest_rank is not None and point.t_over is not None, point.id
        old = replace(point, slowest_rank=None, t_over=None)  # as a file written before them reads
        np.testing.assert_array_equal(derive.slowest_rank(old), point.slowest_rank, err_msg=point.id)
        stored, derived = derive.series_samples(point), derive.series_samples(old)
        for name in derive.SERIES:
            np.testing.assert_array_equal(derived[name], stored[name], err_msg=f"{point.id} {name}")
        # The stored overlap is the same rank's phases over t_total.
        with_sum = stored["distribute"] + stored["compute"] + stored["gather"]
        np.testing.assert_allclose(point.times["t_total"] - with_sum, point.t_over, rtol=0, atol=1e-15)


def test_a_negative_overhead_comes_with_its_reason(fft_runs):
    for run in fft_runs.values():
        for s in derive.run_point_stats(run):
            why = derive.overhead_why(s)
            assert (s.summaries["overhead"].median < 0) == bool(why), (run.name, s.point.id, why)
            if s.point.attrs.get("schedule") == "phased":
                # One rank's phases follow one another: what they leave of t_total is never below 0.
                assert np.all(s.point.t_over >= 0), (s.point.id, s.point.t_over)


@pytest.fixture(scope="module")
def transfer_run(tmp_path_factory):
    h5 = tmp_path_factory.mktemp("agree_t") / "transfer.h5"
    r = run_wb(3, "transfer", "--tests", "pingpong,bw,allreduce,bcast", "-m", "8,1k,64k", "-i", "12", "-x", "2",
               "-q", "-o", str(h5))
    assert r.returncode == 0, r.stderr
    return open_run(h5)


def test_the_transfer_statistics_worked_out_for_old_files_are_the_stored_ones(transfer_run):
    from analysis.read import point_detail
    detail = point_detail.read(transfer_run)
    checked = 0
    for test in transfer_run.transfer.values():
        given = detail.transfer[test.name].stats if test.name in detail.transfer else {}
        assert given, test.name
        stored = derive.transfer_stats(transfer_run, test, given)
        fallback = derive.transfer_stats(transfer_run, test, {})
        for key, values in fallback.columns.items():
            np.testing.assert_allclose(values, stored.columns[key], rtol=1e-9, atol=0,
                                       err_msg=f"{test.name} {key}")
            checked += 1
        np.testing.assert_array_equal(fallback.unstable, stored.unstable, err_msg=test.name)
    # p2p: avg, min, max, p95, cv, med; collectives: the same but p95, which needs every rank's mean
    assert checked >= 4 * 5, checked


DRIVER = r"""
#include <stdio.h>
#include <stdlib.h>
#include "core/stats.h"
/* Reads n, then n values; prints the median, the CI's bounds and coverage, exactly. */
int main(void)
{
    size_t n;
    while (scanf("%zu", &n) == 1) {
        double *x = malloc((n ? n : 1) * sizeof *x), lo, hi;
        for (size_t i = 0; i < n; i++)
            if (scanf("%lf", &x[i]) != 1)
                return 1;
        double cov = wb_stats_median_ci(x, n, &lo, &hi);
        printf("%a %a %a %a\n", wb_stats_median(x, n), lo, hi, cov);
        free(x);
    }
    return 0;
}
"""


@pytest.fixture(scope="module")
def c_median_ci(tmp_path_factory):
    """The C median and CI (src/core/stats.c, pure and local), through a driver built for the test."""
    d = tmp_path_factory.mktemp("ci")
    (d / "ci.c").write_text(DRIVER)
    exe = d / "ci"
    cc = subprocess.run(["cc", "-std=c11", "-O2", "-I", str(ROOT / "src"), str(d / "ci.c"),
                         str(ROOT / "src/core/stats.c"), "-lm", "-o", str(exe)], capture_output=True, text=True)
    assert cc.returncode == 0, cc.stderr

    def call(sets: list[np.ndarray]) -> list[tuple[float, float, float, float]]:
        text = "".join(f"{len(x)} " + " ".join(repr(float(v)) for v in x) + "\n" for x in sets)
        r = subprocess.run([str(exe)], input=text, capture_output=True, text=True, check=True)
        return [tuple(float.fromhex(v) for v in line.split()) for line in r.stdout.splitlines()]
    return call


def crafted_sets() -> list[np.ndarray]:
    rng = np.random.default_rng(32)
    sets = [np.array([3.0, 1.0, 2.0, 5.0, 4.0]), np.array([1.0, 1.0, 1.0, 2.0, 2.0, 2.0]),
            np.array([0.1, 0.7, 0.3, 0.9, 0.5, 0.2, 0.8, 0.4, 0.6, 1.0]),
            np.array([2.0] * 11), np.array([1e-6, 5e-3, 2e-6, 3.0, 7e-5, 1e-6, 4e-4, 9e-1, 2e-2, 8e-6, 1.5])]
    for n in (5, 6, 10, 11):
        sets += [rng.lognormal(-7, 1.0, n), rng.integers(0, 4, n).astype(float)]
    sets += [rng.lognormal(-5, 0.5, n) for n in (1, 2, 3, 7, 8, 9, 12, 20, 31, 64)]
    return sets


def file_sets(runs) -> list[np.ndarray]:
    """Every point's t_total samples, and each rank's per-repetition compute times."""
    sets = []
    for run in runs.values():
        for point in run.points:
            sets.append(point.times["t_total"])
            sets += [point.times["t_compute"][:, q] for q in range(point.nranks)]
    return sets


def test_the_c_and_python_medians_and_cis_agree(fft_runs, c_median_ci):
    sets = crafted_sets() + file_sets(fft_runs)
    got = c_median_ci(sets)
    assert len(got) == len(sets)
    for x, (med, lo, hi, cov) in zip(sets, got):
        p_med, p_lo, p_hi, p_cov = stats.median_ci(x)
        assert (lo, hi) == (p_lo, p_hi), (list(x), (lo, hi), (p_lo, p_hi))
        assert med == pytest.approx(p_med, rel=1e-15, abs=0), list(x)
        assert cov == pytest.approx(p_cov, rel=1e-9, abs=1e-12), (len(x), cov, p_cov)


@pytest.fixture(scope="module")
def load_runs(tmp_path_factory):
    """An open and a closed ramp over one 50 ms worker: each brackets its saturation, so it ends on a
    failing step after passing ones."""
    d = tmp_path_factory.mktemp("load")
    out = {}
    for loop, np_, args in (("open", 2, ("--rates", "8", "--slo-ms", "500")),
                            ("closed", 3, ("--clients", "1", "--think-ms", "100"))):
        h5 = d / f"load_{loop}.h5"
        r = run_wb(np_, "load", *args, "--ramp", "--service-delay-ms", "50", "--seconds", "0.5", "--plan",
                   "estimate", "--duration", "2", "--warmup-s", "0.3", "-o", str(h5), timeout=150)
        assert r.returncode == 0, r.stderr
        out[loop] = open_run(h5)
    return out


@pytest.mark.parametrize("loop", ["open", "closed"])
def test_the_load_verdict_worked_out_for_old_files_is_the_stored_one(load_runs, loop):
    run = load_runs[loop]
    stored = {st.id: (int(st.attrs["pass"]) == 1, str(st.attrs["fail_reason"])) for st in run.load_steps}
    assert any(ok for ok, _ in stored.values()) and not all(ok for ok, _ in stored.values()), stored
    dropped = ("pass", "fail_reason", "fail_detail", "completed_rps")
    old = [replace(st, attrs={k: v for k, v in st.attrs.items() if k not in dropped}) for st in run.load_steps]
    steps, _ = derive.load_analysis(replace(run, load_steps=old))
    assert {st.step.id: (st.healthy, st.why or "none") for st in steps} == stored
