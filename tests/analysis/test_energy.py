"""Energy and cost per request (analysis.energy, analysis.meter, docs/energy.md) on
synthetic files that follow the energy datasets of docs/schema.md: power drawn at
known watts by the nodes' own sources or logged by a meter."""

from __future__ import annotations

import csv

import h5py
import numpy as np
import pytest

import fixtures
from analysis.derive import energy
from analysis.commands import frames, report
from analysis.read import meter, point_detail, reader
from analysis.commands.cliutil import UsageError
from analysis.read.runs import name_runs
from conftest import run_cli

SMALL = fixtures.Cluster(label="pi4", scenarios=("files",), transfer=False, load=False,
                         straggler_rank=None, unstable_point=None)
T = fixtures.T0_UTC


def _run(path) -> reader.Run:
    run = reader.open_run(path)
    name_runs([run])
    return run


def _rows(res: energy.Result, run: str = "pi4") -> dict[str, energy.Row]:
    return {r.point: r for r in res.rows if r.run == run}


def _median_total(run: reader.Run, pid: str) -> float:
    return float(np.median(run.point(pid).times["t_total"]))


def _unmeasured_run(tmp_path, name="m.h5", cfg=SMALL):
    """A run whose nodes had no power source, with every repetition's UTC times."""
    path = fixtures.write_run(tmp_path / name, cfg)
    windows = fixtures.add_power(path, 0.0, source="unmeasured")
    return path, windows


def _span(windows):
    return min(a for a, _ in windows.values()), max(b for _, b in windows.values())


def _analyse(runs, logs=(), prices=(), kwh=None, baselines=()):
    return energy.analyse(list(runs), list(baselines),
                          energy.parse_options(list(logs), list(prices), kwh))


@pytest.fixture(scope="module")
def meter_report(tmp_path_factory):
    """The report CLI on a run whose only power figure is one 6 W meter on the whole
    cluster, priced, with one --price for a kind the files do not have."""
    tmp = tmp_path_factory.mktemp("energy")
    path, windows = _unmeasured_run(tmp)
    a, b = _span(windows)
    log = fixtures.write_meter_log(tmp / "plug.csv", a - 5, b + 5, 6.0, step_s=0.5)
    out = tmp / "report"
    proc = run_cli(str(path), "-o", str(out), "-q", "--power-log", f"all={log}",
                   "--price", "cortex-a72=0.02", "--kwh-price", "0.25", "--price", "m5.large=0.1")
    with open(out / "energy.csv", newline="", encoding="utf-8") as fh:
        rows = {r["point"]: r for r in csv.DictReader(fh)}
    return proc, out, rows, _run(path)


def test_meter_at_6_w_gives_6_w_times_t_total(meter_report):
    proc, out, rows, run = meter_report
    assert proc.returncode == 0, proc.stderr
    assert [p.id for p in run.points] == [p for p in rows if "/" not in p]
    for pt in run.points:
        row = rows[pt.id]
        assert row["source"] == "meter"
        assert float(row["j_per_request"]) == pytest.approx(6.0 * _median_total(run, pt.id),
                                                            rel=0.05)
        assert float(row["coverage"]) == pytest.approx(1.0)
        assert float(row["period_s"]) == pytest.approx(0.5)
        # 0.2-3 s repetitions against a 0.5 s log: shorter than 10 periods
        assert int(row["too_short_reps"]) == 9


def test_report_page_and_columns(meter_report):
    proc, out, rows, run = meter_report
    first = next(iter(rows.values()))
    for col in ("run", "point", "source", "j_per_request", "j_per_request_above_idle",
                "kB_per_j", "gflops_per_w", "coverage", "usd_per_1000_requests"):
        assert col in first
    row = rows["p000"]
    assert float(row["kB_per_j"]) == pytest.approx(
        run.point("p000").input_bytes / 1000 / float(row["j_per_request"]))
    flops = float(np.nansum(run.point("p000").flops))
    assert float(row["gflops_per_w"]) == pytest.approx(flops / float(row["j_per_request"]) / 1e9)
    page = (out / "index.html").read_text(encoding="utf-8")
    md = (out / "summary.md").read_text(encoding="utf-8")
    for text in (page, md):
        assert "Energy and cost" in text
        assert "too short for power" in text
    # the bad --price is a named warning on stderr and on the page; the report is written
    assert "--price m5.large: a kind not in the files" in proc.stderr
    assert "m5.large: a kind not in the files" in page


def test_dollars_per_1000_requests_by_hand(meter_report):
    _proc, _out, rows, run = meter_report
    for pid in ("p000", "p004"):
        t = float(rows[pid]["t_request_s"])
        assert t == pytest.approx(_median_total(run, pid))
        j = float(rows[pid]["j_per_request"])
        # 4 nodes at $0.02/h for t seconds, plus j joules at $0.25/kWh
        want = 1000 * (4 * 0.02 * t / 3600 + j / 3.6e6 * 0.25)
        assert float(rows[pid]["usd_per_1000_requests"]) == pytest.approx(want, rel=1e-6)
    # p000 by hand: t = 0.1850 s, j = 6 W x t = 1.110 J -> $0.004112 + $0.0000771
    assert float(rows["p000"]["usd_per_1000_requests"]) == pytest.approx(0.00419, rel=0.02)


@pytest.mark.parametrize("header,line", [
    ("time,watts", lambda t: f"{t:.3f},6"),
    ("Timestamp;Power (W)", lambda t: f"{meter.utc_text(t)[:19].replace(' ', 'T')}Z;6,0"),
    ("datetime,voltage,current", lambda t: f"{_iso(t)},5.0,1.2"),
    ("", lambda t: f"{t:.1f},6"),
    ("Date,Time,W", lambda t: _iso(t).replace("T", ",") + ",6"),
    ("unix_ms;power_mW", lambda t: f"{int(t * 1000)};6000"),
    ("# exported by a plug\ndate,power_w", lambda t: f"{_iso(t)}+00:00,6"),
])
def test_time_columns_and_header_variants(tmp_path, header, line):
    times = np.arange(T, T + 10.01, 1.0)
    body = "\n".join(line(t) for t in times)
    path = tmp_path / "log.csv"
    path.write_text((header + "\n" if header else "") + body + "\n", encoding="utf-8")
    log = meter.read(path, "all")
    assert not log.error, log.error
    assert log.t_utc.size == times.size
    np.testing.assert_allclose(log.t_utc, times, atol=1e-3)
    span = meter.integrate(log, T + 1.5, T + 4.0)
    assert span.energy_j == pytest.approx(15.0)
    assert span.coverage == pytest.approx(1.0)


def _iso(t: float) -> str:
    return meter.utc_text(t)[:19].replace(" ", "T")


def test_partial_coverage_is_reported_not_filled(tmp_path):
    path, windows = _unmeasured_run(tmp_path)
    a, b = windows["/fft/p002"]
    log = fixtures.write_meter_log(tmp_path / "half.csv", T, a + (b - a) / 2, 6.0, step_s=0.05)
    rows = _rows(_analyse([_run(path)], [f"all={log}"]))
    assert rows["p000"].source == "meter" and rows["p001"].coverage == pytest.approx(1.0)
    assert 0.3 < rows["p002"].coverage < 0.7
    assert rows["p002"].source == "meter"  # from the repetitions wholly inside the log
    assert rows["p002"].reps_measured < rows["p002"].reps
    assert rows["p003"].source == "unmeasured" and rows["p003"].coverage == 0.0


def test_per_node_sums_with_different_powers(tmp_path):
    watts = {"pi0": 5.0, "pi1": 7.0, "pi2": 9.0, "pi3": 11.0}
    path = fixtures.write_run(tmp_path / "r.h5", SMALL)
    fixtures.add_paired_baseline(path, {"p004": 3.0})
    fixtures.add_dfft(path, 4, shapes=((32, 32, 32),))
    fixtures.add_power(path, watts, idle_w=2.0)
    run = _run(path)
    dfft = {"pi4": point_detail.read(run).dfft}
    rows = _rows(energy.analyse([run], [], energy.Options(), dfft))
    with h5py.File(path) as f:
        slowest = f["dfft/d000/t_total"][()].max(axis=1)
        flops = 2.5 * 32 ** 3 * np.log2(32 ** 3)
    assert rows["dfft/d000"].j_per_request == pytest.approx(32.0 * np.median(slowest))
    assert rows["dfft/d000"].gflops_per_w == pytest.approx(flops / (32.0 * np.median(slowest)) / 1e9)
    df = frames.energy(run)
    assert list(df.point[:5]) == [p.id for p in run.points]
    np.testing.assert_allclose(df.j_per_request[:5], [rows[p.id].j_per_request for p in run.points])
    for pt in run.points:
        t = pt.times["t_total"]
        assert rows[pt.id].source == "rapl"
        assert rows[pt.id].j_per_request == pytest.approx(32.0 * np.median(t), rel=1e-9)
        assert rows[pt.id].j_per_request_above_idle == pytest.approx(24.0 * np.median(t), rel=1e-6)
        assert rows[pt.id].idle_w == pytest.approx(8.0)
    # the paired baseline is rank 0 alone: its node's 5 W only
    base = rows["p004/baseline"]
    with h5py.File(path) as f:
        bt = f["fft/p004/baseline/t_total"][()]
    assert base.j_per_request == pytest.approx(5.0 * np.median(bt), rel=1e-9)
    # the same powers from one meter log per node
    mpath, windows = _unmeasured_run(tmp_path)
    a, b = _span(windows)
    logs = [f"{h}={fixtures.write_meter_log(tmp_path / f'{h}.csv', a - 1, b + 1, w, 0.02)}"
            for h, w in watts.items()]
    mrun = _run(mpath)
    for pid, row in _rows(_analyse([mrun], logs)).items():
        assert row.source == "meter"
        assert row.j_per_request == pytest.approx(32.0 * _median_total(mrun, pid), rel=1e-6)
    # three logs of four: never a partial sum
    rows = _rows(_analyse([mrun], logs[:3]))
    assert all(r.source == "unmeasured" and np.isnan(r.j_per_request) for r in rows.values())
    assert "pi3" in rows["p000"].note


def test_file_without_power_is_unmeasured(tmp_path):
    run = _run(fixtures.write_run(tmp_path / "old.h5", SMALL))
    res = _analyse([run])
    assert res.rows and all(r.source == "unmeasured" for r in res.rows)
    assert all(np.isnan(r.j_per_request) and np.isnan(r.kB_per_j) for r in res.rows)
    assert not res.warnings
    df = frames.points(run)
    assert df.energy_j_sum.isna().all() and (df.energy_source == "unmeasured").all()


def test_log_outside_the_run_warns_and_costs_only_that_run(tmp_path):
    path, _ = _unmeasured_run(tmp_path)
    other = fixtures.write_run(tmp_path / "r.h5", fixtures.Cluster(**{**SMALL.__dict__,
                                                                      "label": "rapl4"}))
    fixtures.add_power(other, 4.0)
    log = fixtures.write_meter_log(tmp_path / "old.csv", T - 86400, T - 86000, 6.0, 1.0)
    res = _analyse([_run(path), _run(other)], [f"all={log}"])
    assert any("meter log does not overlap the run in time" in w for w in res.warnings)
    assert all(r.source == "unmeasured" for r in _rows(res).values())
    assert all(r.source == "rapl" for r in _rows(res, "rapl4").values())


@pytest.mark.parametrize("kind,warning", [("backwards", "times not increasing"),
                                          ("negative", "negative watts")])
def test_bad_meter_samples_cost_only_their_point(tmp_path, kind, warning):
    path, windows = _unmeasured_run(tmp_path)
    a, b = _span(windows)
    times = np.arange(a - 1, b + 1, 0.05)
    watts = np.full(times.size, 6.0)
    mid = float(np.mean(windows["/fft/p001"]))
    k = int(np.searchsorted(times, mid))
    if kind == "backwards":
        times[k] = times[k - 2]
    else:
        watts[k] = -3.0
    log = tmp_path / "bad.csv"
    log.write_text("time,watts\n" + "".join(f"{t:.3f},{w:g}\n" for t, w in zip(times, watts)))
    res = _analyse([_run(path)], [f"all={log}"])
    named = [w for w in res.warnings if warning in w]
    assert len(named) == 1 and "pi4 p001" in named[0]
    rows = _rows(res)
    assert rows["p001"].source == "unmeasured" and np.isnan(rows["p001"].j_per_request)
    assert [p for p, r in rows.items() if r.source == "meter"] == ["p000", "p002", "p003", "p004"]


def test_counter_gone_backwards_costs_only_its_point(tmp_path):
    path = fixtures.write_run(tmp_path / "r.h5", SMALL)
    fixtures.add_power(path, 6.0)
    with h5py.File(path, "a") as f:
        e = f["fft/p001/energy_j"][()]
        e[3, 2] = -12.0
        f["fft/p001/energy_j"][...] = e
    res = _analyse([_run(path)])
    named = [w for w in res.warnings if "counter gone backwards without a wrap" in w]
    assert len(named) == 1 and "/fft/p001/energy_j" in named[0] and "pi2" in named[0]
    rows = _rows(res)
    assert rows["p001"].source == "unmeasured"
    assert all(rows[p].source == "rapl" for p in ("p000", "p002", "p003", "p004"))


def test_price_matching(tmp_path):
    path = fixtures.write_run(tmp_path / "r.h5", SMALL)
    fixtures.add_host_model(path, "Raspberry Pi 4 Model B Rev 1.4")
    run = _run(path)
    t = _median_total(run, "p000")

    def usd(*prices):
        return _rows(_analyse([run], prices=prices))["p000"].usd_per_1000_requests

    per_h = 1000 * t / 3600
    assert usd("raspberry pi 4 model b rev 1.4=0.01") == pytest.approx(4 * 0.01 * per_h)
    assert usd("CORTEX-A72=0.02") == pytest.approx(4 * 0.02 * per_h)
    assert usd("all=0.03") == pytest.approx(4 * 0.03 * per_h)
    # a hostname is more specific than the model, the model than all
    assert usd("all=0.03", "PI0=1.0", "Raspberry Pi 4 Model B Rev 1.4=0.01") == \
        pytest.approx((1.0 + 3 * 0.01) * per_h)
    # a node without a price leaves the node-hours unpriced, never zero
    res = _analyse([run], prices=["pi0=1.0", "c5.xlarge=0.17"])
    assert np.isnan(_rows(res)["p000"].usd_per_1000_requests)
    assert "pi1" in _rows(res)["p000"].cost_basis
    assert [w for w in res.warnings if "--price c5.xlarge: a kind not in the files" in w]
    assert not [w for w in res.warnings if "--price pi0" in w]
    # energy alone when only --kwh-price is given and the energy is measured
    fixtures.add_power(path, 6.0)
    run = _run(path)
    row = _rows(_analyse([run], kwh="0.30"))["p000"]
    assert row.usd_per_1000_requests == pytest.approx(1000 * row.j_per_request / 3.6e6 * 0.30)


def test_load_steps_per_request(tmp_path):
    cfg = fixtures.Cluster(**{**SMALL.__dict__, "load": True, "scenarios": ()})
    path = fixtures.write_run(tmp_path / "l.h5", cfg)
    windows = fixtures.add_power(path, 2.5)
    run = _run(path)
    assert run.load_steps and not run.problems  # the per-step energy datasets are no requests
    rows = _rows(_analyse([run]))
    for step in run.load_steps:
        done = int(np.count_nonzero(step.data["status"] == 0))
        a, b = windows[f"/load/{step.id}"]
        row = rows[f"load/{step.id}"]
        assert row.requests_per_rep == done
        assert row.j_per_request == pytest.approx(10.0 * (b - a) / done)
        assert row.t_request_s == pytest.approx((b - a) / done)


def test_buys_columns_name_their_sources(tmp_path):
    pi = fixtures.write_run(tmp_path / "pi.h5", SMALL)
    fixtures.add_paired_baseline(pi, {"p004": 2.0})
    fixtures.add_power(pi, 6.0)
    desk = fixtures.write_run(tmp_path / "i5.h5", fixtures.Cluster(
        **{**fixtures.I5.__dict__, "scenarios": ("files",)}))
    fixtures.add_power(desk, 40.0, source="hwmon")
    runs = [_run(pi), _run(desk)]
    name_runs(runs)
    res = _analyse(runs, prices=["all=0.1"], baselines=[runs[1]])
    cols = energy.buys_columns(res, runs[0], runs[1])
    assert set(cols) == {"J/request", "kB/J", "GFLOPS/W", "$/1000 requests"}
    j_cluster = 24.0 * _median_total(runs[0], "p004")
    j_desk = 40.0 * _median_total(runs[1], "p004")
    assert cols["J/request"] == (f"cluster {j_cluster:.3g} J (rapl) · "
                                 f"desktop {j_desk:.3g} J (hwmon)")
    assert "(rapl)" in cols["kB/J"] and "(hwmon)" in cols["GFLOPS/W"]
    assert cols["$/1000 requests"].startswith("cluster $")
    # without a desktop: rank 0 alone, from the paired baseline
    alone = energy.buys_columns(res, runs[0], None, "p004")
    with h5py.File(pi) as f:
        j_one = 6.0 * np.median(f["fft/p004/baseline/t_total"][()])
    assert alone["J/request"] == f"cluster {j_cluster:.3g} J (rapl) · one node {j_one:.3g} J (rapl)"
    assert energy.buys_columns(res, runs[0], None, "p003")["J/request"] == \
        f"cluster {24.0 * _median_total(runs[0], 'p003'):.3g} J (rapl)"  # no paired baseline


@pytest.mark.parametrize("argv,message", [
    (["--power-log", "pi0"], "expected NODE=FILE.csv"),
    (["--power-log", "pi0=/no/such/log.csv"], "no such file"),
    (["--price", "pi=cheap"], "is not a number"),
    (["--kwh-price", "-1"], "must be a number >= 0"),
])
def test_bad_command_line_values_exit_2(tmp_path, capsys, argv, message):
    path = fixtures.write_run(tmp_path / "r.h5", SMALL)
    assert report.main([str(path), "-o", str(tmp_path / "out"), *argv]) == 2
    err = capsys.readouterr().err.strip().splitlines()
    assert len(err) == 1 and message in err[0]
    assert not (tmp_path / "out").exists()


def test_unknown_node_and_unreadable_log_are_named(tmp_path):
    path, windows = _unmeasured_run(tmp_path)
    a, b = _span(windows)
    good = fixtures.write_meter_log(tmp_path / "pi9.csv", a, b, 6.0)
    junk = tmp_path / "junk.csv"
    junk.write_text("when,what\nyesterday,lots\n")
    res = _analyse([_run(path)], [f"pi9={good}", f"pi0={junk}"])
    assert [w for w in res.warnings if "no run has a host named pi9 in /hosts" in w]
    assert [w for w in res.warnings if "junk.csv: meter log unreadable" in w]
    assert all(r.source == "unmeasured" for r in res.rows)




def test_only_node_leaders_count(tmp_path):
    cfg = fixtures.Cluster(**{**SMALL.__dict__, "hosts": ("a", "b"), "ranks_per_node": 2})
    path = fixtures.write_run(tmp_path / "r.h5", cfg)
    fixtures.add_power(path, {"a": 10.0, "b": 20.0})
    with h5py.File(path, "a") as f:  # a reader that summed every rank would see these
        e = f["fft/p000/energy_j"][()]
        e[:, [1, 3]] = 999.0
        f["fft/p000/energy_j"][...] = e
    run = _run(path)
    rows = _rows(_analyse([run]))
    assert rows["p000"].nodes == 2
    assert rows["p000"].j_per_request == pytest.approx(30.0 * _median_total(run, "p000"))
    df = frames.points(run)
    p0 = df[df.point == "p000"]
    np.testing.assert_allclose(p0.energy_j_sum, 30.0 * p0.t_total)
    assert (p0.energy_source == "rapl").all() and not p0.power_short_any.any()


@pytest.mark.skipif(not fixtures.WULFBENCH.exists(), reason="build/wulfbench not built")
def test_meter_on_a_file_the_real_binary_wrote(tmp_path):
    path = tmp_path / "real.h5"
    fixtures.run_wulfbench(2, *fixtures.SMALL_FFT, "-o", str(path))
    with h5py.File(path) as f:
        # The writer records each repetition's UTC span; the meter's samples are matched against it.
        assert "t_start_utc" in f["fft/p000"] and "t_end_utc" in f["fft/p000"], list(f["fft/p000"])
        a = min(f["fft"][p]["t_start_utc"][0] for p in f["fft"])
        b = max(f["fft"][p]["t_end_utc"][-1] for p in f["fft"])
    log = fixtures.write_meter_log(tmp_path / "plug.csv", a - 2, b + 2, 6.0, step_s=0.01)
    run = _run(path)
    rows = _rows(_analyse([run], [f"all={log}"]), run.name)
    for pt in run.points:
        assert rows[pt.id].source == "meter"
        assert rows[pt.id].j_per_request == pytest.approx(6.0 * _median_total(run, pt.id), rel=0.05)


def test_buys_table_carries_energy_and_cost(tmp_path):
    """The first table of the page gains the energy and cost of each comparison, with its source:
    4 nodes at 8 W (rapl) against rank 0 alone, whose node draws 8 W too."""
    path = fixtures.write_run(tmp_path / "r.h5", SMALL)
    fixtures.add_paired_baseline(path, {"p004": 3.0})
    fixtures.add_power(path, 8.0)
    out = tmp_path / "report"
    proc = run_cli(str(path), "-o", str(out), "-q", "--price", "all=0.02")
    assert proc.returncode == 0, proc.stderr
    with open(out / "buys.csv", newline="", encoding="utf-8") as fh:
        buys = [b for b in csv.DictReader(fh) if b["point"] == "p004"]
    assert buys, "no p004 row in buys.csv"
    run = _run(path)
    with h5py.File(path) as f:
        alone = float(np.median(f["fft/p004/baseline/t_total"][()]))
    for b in buys:
        for col in ("J/request", "kB/J", "GFLOPS/W", "$/1000 requests"):
            assert col in b
        cluster, _, other = b["J/request"].partition(" · ")
        assert cluster.startswith("cluster ") and cluster.endswith("J (rapl)")
        assert float(cluster.split()[1]) == pytest.approx(32.0 * _median_total(run, "p004"), rel=0.01)
        assert other.startswith("one node ")
        assert float(other.split()[2]) == pytest.approx(8.0 * alone, rel=0.01)


def test_sources_state_what_measuring_cost(tmp_path):
    # Each point's sampler_cpu_share (of one core, per rank) and /power/reader: the sources line gives
    # the largest share and the ways read; a file without them (older runs) gives neither.
    path = fixtures.write_run(tmp_path / "r.h5", SMALL)
    fixtures.add_power(path, {"pi0": 5.0, "pi1": 7.0, "pi2": 9.0, "pi3": 11.0}, idle_w=2.0)
    run = _run(path)
    before = energy.analyse([run], [], energy.Options(), {}).sources[run.name]
    assert "of a core" not in before
    with h5py.File(path, "a") as f:
        n = f["power/source"].shape[0]
        f["power"].create_dataset("reader", data=np.array([b"mailbox"] + [b""] * (n - 1), dtype="S16"))
        for k, pid in enumerate(sorted(p for p in f["fft"] if p.startswith("p"))):
            share = np.full(n, np.nan)
            share[0] = 0.001 * (k + 1)
            f["fft"][pid].create_dataset("sampler_cpu_share", data=share)
    run = _run(path)
    line = energy.analyse([run], [], energy.Options(), {}).sources[run.name]
    pids = [p.id for p in run.points]
    assert f"at most {0.1 * len(pids):.2g}% of a core" in line and "through mailbox" in line, line


def test_a_line_past_the_csv_field_limit_costs_only_that_log(tmp_path):
    path, windows = _unmeasured_run(tmp_path)
    a, b = _span(windows)
    huge = tmp_path / "huge.csv"
    huge.write_text(fixtures.write_meter_log(tmp_path / "ok.csv", a, b, 6.0).read_text()
                    + "1," + "9" * 2_000_000 + "\n")
    out = tmp_path / "report"
    proc = run_cli(str(path), "-o", str(out), "-q", "--power-log", f"all={huge}")
    assert proc.returncode == 0, proc.stderr
    named = [l for l in proc.stderr.splitlines() if "huge.csv: meter log unreadable" in l]
    assert len(named) == 1 and "field larger than field limit" in named[0], proc.stderr
    assert "internal error" not in proc.stderr
    assert "huge.csv: meter log unreadable" in (out / "summary.md").read_text()


def test_a_whole_cluster_log_beside_only_a_baseline_says_why_and_what_to_pass(tmp_path):
    cfg = fixtures.Cluster(**{**fixtures.I5.__dict__, "scenarios": ("files",)})
    path, windows = _unmeasured_run(tmp_path, "desk.h5", cfg)
    a, b = _span(windows)
    log = fixtures.write_meter_log(tmp_path / "plug.csv", a - 5, b + 5, 30.0, step_s=0.5)
    out = tmp_path / "report"
    proc = run_cli(str(path), "-o", str(out), "-q", "--power-log", f"all={log}")
    assert proc.returncode == 0, proc.stderr
    named = [l for l in proc.stderr.splitlines() if f"--power-log all={log}" in l]
    assert len(named) == 1, proc.stderr
    assert "baseline" in named[0] and f"--power-log desktop={log}" in named[0], named[0]
    # What it says to pass measures that machine.
    proc = run_cli(str(path), "-o", str(tmp_path / "fixed"), "-q",
                   "--power-log", f"desktop={log}")
    assert proc.returncode == 0 and "--power-log" not in proc.stderr, proc.stderr
    with open(tmp_path / "fixed" / "energy.csv", newline="", encoding="utf-8") as fh:
        assert {r["source"] for r in csv.DictReader(fh)} == {"meter"}
