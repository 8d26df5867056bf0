"""The alpha-beta fit, the compute fit and the forecast against known models."""

from __future__ import annotations

import dataclasses

import numpy as np
import pytest

import fixtures
from analysis.derive import model
from analysis.read.reader import open_run
from analysis.read.runs import FftPoint


def test_hockney_recovers_alpha_beta_exactly_without_noise():
    m = np.array([0, 1, 8, 64, 512, 4096, 32768, 262144, 2 ** 21], dtype=float)
    alpha, beta = 42e-6, 117e6
    fit = model.fit_hockney(m, alpha + m / beta)
    assert fit.alpha_s == pytest.approx(alpha, rel=1e-9)
    assert fit.beta_Bps == pytest.approx(beta, rel=1e-9)
    assert fit.rel_err_max < 1e-9


def test_hockney_recovers_alpha_beta_with_noise():
    rng = np.random.default_rng(7)
    m = np.repeat(4.0 ** np.arange(11), 5)
    alpha, beta = 100e-6, 11e6
    t = (alpha + m / beta) * rng.lognormal(0, 0.03, size=m.size)
    fit = model.fit_hockney(m, t)
    assert fit.alpha_s == pytest.approx(alpha, rel=0.05)
    assert fit.beta_Bps == pytest.approx(beta, rel=0.05)
    assert fit.rel_err_median < 0.05


def test_relative_weighting_keeps_small_messages_accurate():
    """Unweighted least squares would let the 1 MiB points swamp the latency."""
    m = np.array([1, 16, 256, 4096, 65536, 2 ** 20], dtype=float)
    t = 5e-6 + m / 1e9
    t[-1] *= 1.3  # one large outlier
    fit = model.fit_hockney(m, t)
    assert fit.alpha_s == pytest.approx(5e-6, rel=0.1)


def test_affine_fit_never_goes_negative():
    x = np.array([1.0, 2.0, 3.0, 4.0])
    fit = model.fit_affine_rel(x, 2.0 * x - 0.5)  # true intercept < 0
    assert fit.a == 0.0 and fit.b > 0
    fit = model.fit_affine_rel(x, np.array([3.0, 2.9, 2.8, 2.7]))  # falling: slope < 0
    assert fit.b == 0.0 and fit.a == pytest.approx(2.85, rel=0.05)
    assert model.fit_affine_rel(np.array([]), np.array([])) is None


def _point(flops_per_rank: list[float], in_bytes: float, out_bytes: list[float],
           root_computes: int = 1) -> FftPoint:
    n = len(flops_per_rank)
    reps = 3
    times = {name: np.full((reps, n), 1e-3) for name in ("t_distribute", "t_compute", "t_fft", "t_gather")}
    times["t_read"] = np.full(reps, 1e-3)
    times["t_total"] = np.full(reps, 1e-2)
    return FftPoint(id="p000", attrs={"input_bytes": in_bytes, "root_computes": root_computes},
                    times=times, bytes_in=np.full(n, in_bytes / n), bytes_out=np.asarray(out_bytes),
                    frames=np.ones(n), flops=np.asarray(flops_per_rank), inputs=[], verify={})


def test_predict_by_hand():
    hockney = model.HockneyFit(alpha_s=1e-4, beta_Bps=1e7, n=2, rel_err_max=0, rel_err_median=0,
                               source="test")
    compute = model.AffineFit(a=2e-3, b=1e-9, n=2, rel_err_max=0, rel_err_median=0)
    point = _point([1e6] * 4, 1e6, [2.5e5] * 4)
    d, c, g, total = model.predict(hockney, compute, 5e-3, point, np.array([1, 4]))
    # p = 4: 3 remote ranks, each sent 1/4 of 1 MB over 10 MB/s
    assert d[1] == pytest.approx(3 * 1e-4 + 1e6 * 3 / 4 / 1e7)
    assert g[1] == pytest.approx(3 * 1e-4 + 1e6 * 3 / 4 / 1e7)
    assert c[1] == pytest.approx(2e-3 + 1e-9 * 4e6 / 4)
    assert total[1] == pytest.approx(5e-3 + d[1] + c[1] + g[1])
    # one node: nothing moves
    assert d[0] == 0 and g[0] == 0 and c[0] == pytest.approx(2e-3 + 4e-3)
    # root does not compute: all p compute ranks are remote
    d2, *_ = model.predict(hockney, compute, 0.0, _point([1e6] * 4, 1e6, [0] * 4, 0), np.array([4]))
    assert d2[0] == pytest.approx(4 * 1e-4 + 1e6 / 1e7)


def test_fit_run_recovers_the_fixture_model(tmp_path):
    run = open_run(fixtures.write_run(tmp_path / "ec2.h5", fixtures.EC2))
    m = model.fit_run(run, run.points)
    cfg = fixtures.EC2
    assert m.compute.b == pytest.approx(cfg.s_per_flop, rel=0.05)
    assert m.compute.a == pytest.approx(cfg.c0_s, rel=0.3)
    # pingpong only measured pairs on one node, so the inter-node cells of
    # the all-pairs matrices are used
    assert "pairs_all" in m.hockney.source
    assert m.hockney.alpha_s == pytest.approx(cfg.alpha_s, rel=0.15)
    assert m.hockney.beta_Bps == pytest.approx(cfg.beta_Bps, rel=0.15)
    assert m.total_rel_err_median < 0.05
    assert m.total_n == len(run.points)


def test_fit_run_uses_inter_node_pingpong(tmp_path):
    run = open_run(fixtures.write_run(tmp_path / "pi.h5", fixtures.PI))
    m = model.fit_run(run, run.points)
    assert m.hockney.source == "pingpong, inter-node pairs"
    assert m.hockney.alpha_s == pytest.approx(fixtures.PI.alpha_s, rel=0.05)
    assert m.hockney.beta_Bps == pytest.approx(fixtures.PI.beta_Bps, rel=0.05)


def test_fit_run_without_transfer_uses_distribution_times(tmp_path):
    cfg = dataclasses.replace(fixtures.PI, transfer=False, straggler_rank=None, unstable_point=None)
    run = open_run(fixtures.write_run(tmp_path / "pi.h5", cfg))
    m = model.fit_run(run, run.points)
    assert m.hockney.source == "FFT distribution times"
    assert m.hockney.beta_Bps == pytest.approx(cfg.beta_Bps, rel=0.15)
    assert any("no pingpong" in note for note in m.notes)


def test_forecast_passes_through_the_measured_point(tmp_path):
    run = open_run(fixtures.write_run(tmp_path / "ec2.h5", fixtures.EC2))
    m = model.fit_run(run, run.points)
    point = run.points[-1]
    f = model.forecast(m, point, "largest", None)
    assert f.nodes[0] == 1 and f.nodes[-1] == 64
    assert f.speedup[0] == pytest.approx(1.0)  # against its own one-node forecast
    at_p = f.t_total[point.p - 1]
    assert at_p == pytest.approx(f.measured_t, rel=0.05)
    f2 = model.forecast(m, point, "largest", baseline_t=2 * f.measured_t)
    assert f2.measured_speedup == pytest.approx(2.0)
    assert f2.speedup_ref == "measured baseline"


def _items(paths):
    runs = [open_run(p) for p in paths]
    return [(r, r.points) for r in runs]


def test_validated_forecast_predicts_the_held_out_node_count(tmp_path):
    items = _items(fixtures.node_scaling_set(tmp_path, nodes=(1, 2, 4, 8)))
    val = model.validate(items)
    assert val.node_counts == [1, 2, 4, 8] and val.fit_nodes == [1, 2, 4] and val.held_nodes == 8
    assert val.ok, val.reason
    assert val.err_max <= model.MAX_HELD_OUT_ERROR
    assert len(val.checks) == len(items[-1][1])
    for _pid, meas, pred in val.checks:  # the printed error is the real one
        assert abs(pred - meas) / meas <= val.err_max + 1e-12
    assert "held-out 8 nodes" in val.error_text and "1, 2, 4" in val.error_text
    assert val.model is not None and val.model.compute is not None


def test_forecast_is_refused_with_a_high_held_out_error(tmp_path):
    val = model.validate(_items(fixtures.node_scaling_set(tmp_path, nodes=(1, 2, 4, 8),
                                                          model_break=True)))
    assert not val.ok and val.model is None
    assert val.err_max > 0.25 and "more than 25 %" in val.reason


@pytest.mark.parametrize("nodes", [(4,), (1,), (1, 2)])
def test_forecast_needs_three_node_counts(tmp_path, nodes):
    val = model.validate(_items(fixtures.node_scaling_set(tmp_path, nodes=nodes)))
    assert not val.ok and val.model is None and not val.checks
    assert "three or more node counts" in val.reason


def test_line_rate_and_link_use_come_from_inter_node_transfer(tmp_path):
    run = open_run(fixtures.write_run(tmp_path / "pi.h5", fixtures.PI))
    bw = run.transfer["bw"]
    node = {int(h["rank"]): int(h["node"]) for h in run.hosts}
    inter = [i for i, (a, b) in enumerate(bw.pairs) if node[int(a)] != node[int(b)]]
    last = int(np.argmax(bw.bytes))
    rate, what = model.line_rate(run)
    assert rate == pytest.approx(float(np.median(np.asarray(bw.bandwidth)[last, inter])))
    assert what.startswith(f"transfer bw at {int(bw.bytes[last])} B") and f"{len(inter)} inter-node" in what
    point = dataclasses.replace(run.points[-1], attrs={**run.points[-1].attrs, "link_out_bytes": 3e6,
                                                       "link_in_bytes": 7e6, "link_rate_Bps": float("nan")})
    use, src = model.link_use(point, (rate, what))
    assert use == pytest.approx(7e6 / rate / float(np.median(point.times["t_total"])))
    assert src == what
    # --link-rate, as wulfbench recorded it, wins over the measured rate.
    given = dataclasses.replace(point, attrs={**point.attrs, "link_rate_Bps": 12.5e6, "link_use": 0.8})
    assert model.link_use(given, (rate, what)) == (0.8, "--link-rate")
    # Nothing crossed the link, or no rate at all: no figure.
    assert np.isnan(model.link_use(dataclasses.replace(point, attrs={}), (rate, what))[0])
    assert np.isnan(model.link_use(point, None)[0])


def test_line_rate_ignores_pairs_on_one_node(tmp_path):
    cfg = dataclasses.replace(fixtures.PI, hosts=("pi0",), pairs_all=False)
    run = open_run(fixtures.write_run(tmp_path / "one.h5", cfg))
    assert run.transfer and model.line_rate(run) is None


@pytest.mark.parametrize("schedule", ["pipelined", "dynamic"])
def test_overlapped_schedules_are_paced_by_their_busiest_phase(schedule):
    hockney = model.HockneyFit(alpha_s=1e-4, beta_Bps=1e7, n=2, rel_err_max=0, rel_err_median=0,
                               source="test")
    compute = model.AffineFit(a=2e-3, b=1e-9, n=2, rel_err_max=0, rel_err_median=0)
    point = _point([1e6] * 4, 1e6, [2.5e5 * 2] * 4)
    phased = dataclasses.replace(point, attrs={**point.attrs, "schedule": "phased"})
    piped = dataclasses.replace(point, attrs={**point.attrs, "schedule": schedule})
    d, c, g, t_phased = model.predict(hockney, compute, 5e-3, phased, np.array([4]))
    _, _, _, t_piped = model.predict(hockney, compute, 5e-3, piped, np.array([4]))
    assert t_phased[0] == pytest.approx(5e-3 + d[0] + c[0] + g[0])
    # Results (2 MB back) outweigh samples (1 MB out) and compute: the gather sets the pace.
    assert g[0] > d[0] and g[0] > c[0]
    assert t_piped[0] == pytest.approx(5e-3 + g[0])


def test_validate_takes_alpha_beta_from_the_clusters_transfer_run(tmp_path):
    items = _items(fixtures.node_scaling_set(tmp_path, nodes=(1, 2, 4, 8)))
    alone = model.validate(items)
    assert alone.model.hockney.source == "FFT distribution times"
    cfg = dataclasses.replace(fixtures.PI, label="pi-transfer", hosts=tuple(f"pi{k}" for k in range(8)),
                              scenarios=(), straggler_rank=None, unstable_point=None, load=False)
    transfer = open_run(fixtures.write_run(tmp_path / "transfer.h5", cfg))
    val = model.validate(items, [transfer])
    assert val.ok, val.reason
    assert val.model.hockney.source == "pingpong, inter-node pairs"
    assert val.model.hockney.beta_Bps == pytest.approx(cfg.beta_Bps, rel=0.05)
    assert any("from the transfer run" in note for note in val.model.notes)
