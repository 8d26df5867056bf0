"""Derived numbers: per-point statistics, comparison, stragglers, load."""

from __future__ import annotations

import dataclasses

import numpy as np
import pytest

import fixtures
from analysis import derive
from analysis.derive import stats
from analysis.read.reader import open_run


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
    # The slowest rank (docs/reading.md): the largest distribute + compute + gather of each repetition.
    busy = t["t_distribute"] + t["t_compute"] + t["t_gather"]
    slowest = busy.argmax(axis=1)
    reps = np.arange(busy.shape[0])
    assert point.slowest_rank is None  # fixtures are older files: derived by the program's rule
    assert s.summaries["total"].median == pytest.approx(np.median(t["t_total"]))
    for name in ("distribute", "compute", "gather"):
        assert s.summaries[name].median == pytest.approx(np.median(t[f"t_{name}"][reps, slowest]))
    assert s.summaries["overhead"].median == pytest.approx(np.median(t["t_total"] - busy[reps, slowest]))
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
    comps, notes = derive.compare(cluster, [base], "i5")
    assert notes == []
    assert len(comps) == len(cluster)
    for c in comps:
        assert c.kind == "cross-run" and c.cluster.point.key == c.base.point.key
        b, r = c.base.point.times["t_total"], c.cluster.point.times["t_total"]
        s = np.median(b) / np.median(r)
        assert c.speedup == pytest.approx(s)
        assert c.p == 8
        assert c.efficiency == pytest.approx(s / 8)
        assert c.karp_flatt == pytest.approx((1 / s - 1 / 8) / (1 - 1 / 8))
        # the CI spans the two intervals: baseline low over cluster high, and back
        assert c.ci_lo == pytest.approx(c.base.summaries["total"].ci_lo
                                        / c.cluster.summaries["total"].ci_hi)
        assert c.ci_hi == pytest.approx(c.base.summaries["total"].ci_hi
                                        / c.cluster.summaries["total"].ci_lo)
        assert c.ci_lo <= c.speedup <= c.ci_hi
    cross = {x.scenario: x for x in derive.crossovers(comps)}
    sizes = sorted((c.cluster.x, c.speedup) for c in comps if c.cluster.point.scenario == "sizes")
    assert sizes[0][1] < 1 < sizes[-1][1]  # the fixture crosses inside the range
    assert cross["sizes"].x == stats.crossover([x for x, _ in sizes], [s for _, s in sizes])
    pi = derive.compare(derive.run_point_stats(runs["pi"]), [base])[0]
    assert all(x.x is None and x.losing for x in derive.crossovers(pi))


def test_two_bracketing_baselines_widen_the_ci(runs):
    cluster = derive.run_point_stats(runs["ec2"])
    before = derive.run_point_stats(runs["i5"])
    after = [dataclasses.replace(s, summaries=dict(s.summaries)) for s in before]
    for s in after:  # the machine got 20 % slower between the two baseline runs
        pt = dataclasses.replace(s.point, times=dict(s.point.times))
        pt.times["t_total"] = 1.2 * s.point.times["t_total"]
        s.point = pt
        s.summaries["total"] = stats.summarize(pt.times["t_total"])
    one, _ = derive.compare(cluster, [before])
    two, _ = derive.compare(cluster, [before, after])
    for a, b in zip(one, two):
        assert b.drift == pytest.approx(0.2)
        assert b.ci_lo == pytest.approx(a.ci_lo)
        assert b.ci_hi == pytest.approx(1.2 * a.ci_hi)
        assert b.ci_hi - b.ci_lo > a.ci_hi - a.ci_lo


def test_paired_speedup_is_the_median_of_ratios(runs):
    run = runs["pi"]
    items = derive.run_point_stats(run)
    rng = np.random.default_rng(3)
    base = {s.point.id: 2.0 * s.point.times["t_total"] * rng.lognormal(0, 0.01, s.point.times["t_total"].size)
            for s in items}
    comps = derive.compare_paired(run, items, base)
    assert len(comps) == len(items)
    for c in comps:
        ratios = base[c.cluster.point.id] / c.cluster.point.times["t_total"]
        assert c.kind == "paired" and c.speedup == pytest.approx(np.median(ratios))
        med, lo, hi, _ = stats.median_ci(ratios)
        assert (c.ci_lo, c.ci_hi) == (pytest.approx(lo), pytest.approx(hi))
        assert c.speedup == pytest.approx(2.0, rel=0.03)
        assert c.implausible == []  # 2 on 4 ranks: 50 %


def test_implausible_flags():
    def comp(s, p):
        point = type("P", (), {"p": p})()
        cluster = type("S", (), {"point": point})()
        return derive.Comparison(run=None, cluster=cluster, base=None, kind="paired",
                                 base_name="x", speedup=s, ci_lo=s, ci_hi=s, n=5)
    assert comp(1.9, 2).implausible == []
    flags = comp(2.9, 2).implausible
    assert any("efficiency 145 %" in f for f in flags) and any("Karp–Flatt" in f for f in flags)
    assert comp(0.5, 2).implausible == []
    assert comp(3.0, 1).implausible == []  # one rank: no parallel measure


def test_crossover_needs_every_larger_point():
    """The study's case: a 'crossover' at 88.2 kB while the cluster loses at 2.65 MB."""
    def cx(xs, ss, lo=None, hi=None):
        comps = []
        for x, s, l, h in zip(xs, ss, lo or ss, hi or ss):
            point = type("P", (), {"scenario": "sizes", "config": "c", "p": 2,
                                   "seconds_per_file": x / 88200})()
            cluster = type("S", (), {"point": point, "x": x})()
            comps.append(derive.Comparison(run=type("R", (), {"name": "r"})(), cluster=cluster,
                                           base=None, kind="paired", base_name="x", speedup=s,
                                           ci_lo=l, ci_hi=h, n=9))
        return derive.crossovers(comps)[0]
    c = cx([44e3, 88.2e3, 441e3, 2.65e6], [0.8, 1.3, 1.1, 0.342])
    assert c.x is None and (2.65e6, 0.342) in c.losing
    c = cx([44e3, 88.2e3, 441e3, 2.65e6], [0.8, 1.3, 1.1, 1.6],
           lo=[0.7, 0.9, 1.05, 1.4], hi=[0.9, 1.5, 1.2, 1.8])
    assert (c.x, c.x_early, c.x_late) == (88.2e3, 88.2e3, 441e3)


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



def open_step(n: int, late: int = 0, rejected: int = 0) -> derive.LoadStepStats:
    """An open-loop step without a verdict of its own: n requests over 10 s at 10 req/s, each answered
    in 10 ms but the last `late` after the window (within the 5 s SLO), and `rejected` turned away."""
    from analysis.read.runs import LoadStep
    t_submit = np.linspace(0, 9.99, n)
    t_done = t_submit + 0.01
    t_done[n - late:] = 10.5
    status = np.zeros(n, dtype=np.int8)
    status[:rejected] = 1
    t_done[:rejected] = np.nan
    attrs = {"loop": "open", "offered_rps": n / 10, "duration_s": 10.0, "warmup_s": 0.0, "slo_ms": 5000.0}
    return derive.load_step_stats(LoadStep(id="s000", attrs=attrs, data={
        "t_submit": t_submit, "t_done": t_done, "status": status, "warmup": np.zeros(n, dtype=np.uint8)}))


def test_load_step_verdict_without_one_in_the_file_is_wulfbenchs_rule():
    """bench_load_figures.c: a shortfall fails an open-loop step above max(10 %, 2 sqrt(n)) of its
    n requests, and a single rejection fails it."""
    for n, late, healthy in ((100, 20, True), (100, 21, False), (400, 40, True), (400, 41, False)):
        s = open_step(n, late)
        derive.judge_step(s)
        assert (s.healthy, s.why) == (healthy, "" if healthy else "throughput"), (n, late, s.done_in_window)
    s = open_step(200, rejected=1)
    derive.judge_step(s)
    assert not s.healthy and s.why == "rejections"


def test_transfer_reductions(runs):
    ec2 = runs["ec2"]
    curve = derive.p2p_curve(ec2, ec2.transfer["pingpong"])
    assert np.all(curve.lo <= curve.value) and np.all(curve.value <= curve.hi)
    bw = ec2.transfer["bibw"]
    assert np.allclose(derive.p2p_curve(ec2, bw).bandwidth, np.median(bw.bandwidth, axis=1))
    coll = derive.collective_curve(ec2, ec2.transfer["allreduce"])
    per_rank = np.nanmedian(ec2.transfer["allreduce"].t, axis=1)
    assert np.allclose(coll.lo, per_rank.min(axis=1)) and np.allclose(coll.hi, per_rank.max(axis=1))
    raw = ec2.transfer["pingpong"].t.transpose(0, 2, 1).reshape(len(curve.bytes), -1)
    assert np.allclose(curve.lo, np.nanpercentile(raw, 25, axis=1))
    assert np.allclose(curve.hi, np.nanpercentile(raw, 75, axis=1))
    rings = derive.ring_curves(ec2, ec2.transfer["ring"])
    assert [r.label for r in rings] == ["natural order", "order 1"]


def test_transfer_stats_from_raw_samples_and_from_the_file(runs, tmp_path):
    ec2 = runs["ec2"]
    pp = ec2.transfer["pingpong"]
    ts = derive.transfer_stats(ec2, pp, {})
    per_pair_avg = np.nanmean(pp.t, axis=1)
    assert np.allclose(ts.columns["t_avg"], np.median(per_pair_avg, axis=1))
    assert np.allclose(ts.columns["t_min"], np.median(np.nanmin(pp.t, axis=1), axis=1))
    coll = derive.transfer_stats(ec2, ec2.transfer["bcast"], {})
    per_rank = np.nanmean(ec2.transfer["bcast"].t, axis=1)
    assert np.allclose(coll.columns["t_avg"], per_rank.mean(axis=1))
    assert np.allclose(coll.columns["t_max"], per_rank.max(axis=1))
    given = {"t_avg": np.full(pp.t_med.shape, 7.0), "cv": np.full(pp.t_med.shape, 0.01),
             "unstable": np.zeros(pp.t_med.shape)}
    given["unstable"][3, 0] = 1
    ts = derive.transfer_stats(ec2, pp, given)
    assert np.all(ts.columns["t_avg"] == 7.0)
    assert ts.unstable.tolist() == [i == 3 for i in range(len(pp.bytes))]


def test_link_map_is_relative_to_the_median():
    bw = np.full((4, 4), 11.95e6)
    bw[0, 1] = 11.925e6  # 0.2 % slower: not a bad link
    bw[2, 3] = 0.7 * 11.95e6
    np.fill_diagonal(bw, np.nan)
    lm = derive.link_map(bw, "bandwidth")
    assert lm.median == pytest.approx(11.95e6)
    assert lm.ratio[0, 1] == pytest.approx(0.998, abs=1e-3)
    assert [(s, r) for s, r, _ in lm.slow] == [(2, 3)]
    lat = np.full((3, 3), 1e-4)
    lat[1, 2] = 2e-4
    assert [(s, r) for s, r, _ in derive.link_map(lat, "latency").slow] == [(1, 2)]
