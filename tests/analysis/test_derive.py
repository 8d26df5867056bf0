"""Derived numbers: per-point statistics, comparison, stragglers, load."""

from __future__ import annotations

import dataclasses

import numpy as np
import pytest

import fixtures
from analysis import derive, stats
from analysis.load import open_run


@pytest.fixture(scope="module")
def runs(tmp_path_factory):
    folder = tmp_path_factory.mktemp("derive")
    return {name: open_run(path) for name, path in
            zip(("pi", "ec2", "i5"), fixtures.write_set(folder))}


def test_point_stats_by_hand(runs):
    run = runs["pi"]
    point = run.points[3]
    s = derive.point_stats(run, point)
    t = point.times
    slow = t["t_compute"].max(axis=1)
    assert s.summaries["total"].median == pytest.approx(np.median(t["t_total"]))
    assert s.summaries["compute"].median == pytest.approx(np.median(slow))
    assert s.summaries["overhead"].median == pytest.approx(np.median(t["t_total"] - slow))
    assert s.summaries["distribute"].median == pytest.approx(np.median(t["t_distribute"].max(axis=1)))
    assert s.kBps == pytest.approx(point.input_bytes / 1000 / np.median(t["t_total"]))
    gflops = point.flops.sum() / np.median(t["t_fft"].max(axis=1)) / 1e9
    assert s.gflops == pytest.approx(gflops)
    assert s.gflops_per_rank == pytest.approx(gflops / 4)
    assert s.status == "ok" and s.usable


def test_unstable_point_is_flagged_but_used(runs):
    s = derive.point_stats(runs["pi"], runs["pi"].point("p000"))
    assert s.summaries["total"].cv > stats.UNSTABLE_CV
    assert s.status.startswith("unstable") and s.usable


def test_invalid_data_is_not_usable(tmp_path):
    cfg = dataclasses.replace(fixtures.I5, failed_point="p002")
    run = open_run(fixtures.write_run(tmp_path / "a.h5", cfg))
    items = derive.run_point_stats(run)
    assert [s.usable for s in items].count(False) == 1
    assert items[2].status.startswith("INVALID")
    bad = open_run(fixtures.write_run(tmp_path / "b.h5", dataclasses.replace(fixtures.I5, verified=0)))
    assert not any(s.usable for s in derive.run_point_stats(bad))


def test_comparison_matches_points_and_computes_by_hand(runs):
    cluster = derive.run_point_stats(runs["ec2"])
    base = derive.run_point_stats(runs["i5"])
    comps, notes = derive.compare(cluster, base)
    assert notes == []
    assert len(comps) == len(cluster)
    for c in comps:
        assert c.cluster.point.key == c.base.point.key
        s = np.median(c.base.point.times["t_total"]) / np.median(c.cluster.point.times["t_total"])
        assert c.speedup == pytest.approx(s)
        assert c.p == 8
        assert c.efficiency == pytest.approx(s / 8)
        assert c.karp_flatt == pytest.approx((1 / s - 1 / 8) / (1 - 1 / 8))
    cross = {x.scenario: x for x in derive.crossovers(comps)}
    sizes = sorted((c.cluster.x, c.speedup) for c in comps if c.cluster.point.scenario == "sizes")
    first = next(x for x, s in sizes if s > 1)
    assert cross["sizes"].x == first
    assert sizes[0][1] < 1 < sizes[-1][1]  # the fixture crosses inside the range
    pi = derive.compare(derive.run_point_stats(runs["pi"]), base)[0]
    assert all(x.x is None for x in derive.crossovers(pi))


def test_stragglers(runs):
    pi = runs["pi"]
    ranks = derive.rank_stats(pi, pi.points[-1])
    slow = [r for r in ranks if r.straggler and "compute" in r.reason.split(";")[0]]
    assert [(r.host, r.rank) for r in slow] == [("pi2", 2)]
    assert slow[0].compute_ratio == pytest.approx(1.5, rel=0.1)
    ec2 = runs["ec2"]
    assert not any(r.compute_ratio > derive.STRAGGLER_RATIO
                   for r in derive.rank_stats(ec2, ec2.points[-1]) if r.computes)


def test_default_point_is_largest_files_point(runs):
    items = derive.run_point_stats(runs["pi"])
    pick = derive.default_point(runs["pi"], items)
    assert pick.point.scenario == "files" and pick.point.nfiles == max(fixtures.FILES_N)


def test_load_excludes_warmup_and_finds_saturation(runs, tmp_path):
    steps, sat = derive.load_analysis(runs["pi"])
    for s in steps:
        warm = s.step.data["warmup"].astype(bool)
        assert s.warmup_excluded == warm.sum()
        assert s.n == (~warm).sum()
        done = (~warm) & (s.step.data["status"] == 0)
        lat = (s.step.data["t_done"] - s.step.data["t_submit"])[done]
        assert s.p95 == pytest.approx(np.percentile(lat, 95))
    assert sat.source == "recomputed"
    first_bad = next(i for i, s in enumerate(steps) if not s.healthy)
    assert first_bad > 0 and not steps[-1].healthy
    assert sat.loop == "open" and sat.load_unit == "req/s"
    assert sat.saturation_load == steps[first_bad - 1].offered_rps
    assert sat.first_fail_load == steps[first_bad].offered_rps
    assert sat.saturation_rps == pytest.approx(steps[first_bad - 1].throughput_rps)
    assert sat.first_fail_rps > sat.saturation_rps
    cfg = dataclasses.replace(fixtures.PI, load_saturation_attrs=True)
    run = open_run(fixtures.write_run(tmp_path / "s.h5", cfg))
    _, sat2 = derive.load_analysis(run)
    assert (sat2.source, sat2.saturation_rps, sat2.fail_reason) == ("file", 6.0, "latency")
    assert (sat2.saturation_load, sat2.first_fail_load) == (6.0, 8.0)


def test_load_step_verdict_from_the_file(runs, tmp_path):
    step = dataclasses.replace(runs["pi"].load_steps[0], attrs=dict(runs["pi"].load_steps[0].attrs))
    s = derive.load_step_stats(step)
    s.step.attrs["pass"] = 0
    s.step.attrs["fail_reason"] = "latency"
    derive.judge_step(s)
    assert not s.healthy and s.why == "latency"
    del s.step.attrs["pass"]
    derive.judge_step(s)
    assert s.healthy


def test_transfer_reductions(runs):
    ec2 = runs["ec2"]
    curve = derive.p2p_curve(ec2, ec2.transfer["pingpong"])
    assert np.all(curve.lo <= curve.value) and np.all(curve.value <= curve.hi)
    bw = ec2.transfer["bibw"]
    assert np.allclose(derive.p2p_curve(ec2, bw).bandwidth, np.median(bw.bandwidth, axis=1))
    coll = derive.collective_curve(ec2, ec2.transfer["allreduce"])
    per_rank = np.nanmedian(ec2.transfer["allreduce"].t, axis=1)
    assert np.allclose(coll.lo, per_rank.min(axis=1)) and np.allclose(coll.hi, per_rank.max(axis=1))
    rings = derive.ring_curves(ec2, ec2.transfer["ring"])
    assert [r.label for r in rings] == ["natural order", "order 1"]
