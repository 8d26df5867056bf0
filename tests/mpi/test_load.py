"""MPI integration tests of `wulfbench load`: both loops, rejections, timeouts, the ramp, the HDF5 layout, bad input."""
from __future__ import annotations

import os
import re
import signal
import subprocess
import time
from pathlib import Path

import h5py
import numpy as np
import pytest

from conftest import (BIN, FAULTS_BIN, MPI_IMPL, MachineLoad, error_lines, faketime, launcher, mpi_env, run_faults,
                      run_wb)

# Small requests and short steps keep every run to a few seconds.
QUICK = ("--seconds", "0.5", "--plan", "estimate", "--duration", "1.5", "--warmup-s", "0.3")
ROW = re.compile(r"^\s+s(\d{3})\s+([\d.]+)\s+([\d.]+|nan)\s+([\d.]+|nan)\s+(\d+)\s+(\d+)\s+(\d+)\s+"
                 r"([\d.]+|-)\s+([\d.]+|-)\s+([\d.]+|-)\s+([\d.]+|-)\s+([a-z]+)")
STATUS = {"done": 0, "rejected": 1, "unfinished": 2}


def load(np_: int, out: Path, *args: str, timeout: float = 90) -> subprocess.CompletedProcess:
    return run_wb(np_, "load", *args, "-o", str(out), timeout=timeout)




def rows(stdout: str) -> list[tuple]:
    return [m.groups() for m in map(ROW.match, stdout.splitlines()) if m]


def saturation_line(stdout: str) -> str:
    lines = [l for l in stdout.splitlines() if l.startswith("saturation:")]
    assert len(lines) == 1, stdout
    return lines[0]


def attr(obj, name):
    v = obj.attrs[name]
    return v.decode() if isinstance(v, bytes) else v


def steps(f: h5py.File) -> list[h5py.Group]:
    return [f["load"][k] for k in sorted(f["load"].keys())]


def check_accounting(g: h5py.Group) -> None:
    """done + rejected + unfinished == submitted, from the attributes and from the status dataset."""
    status = g["status"][:]
    n = len(status)
    counts = {k: int(np.sum(status == v)) for k, v in STATUS.items()}
    assert sum(counts.values()) == n
    assert attr(g, "submitted") == n
    for k, v in counts.items():
        assert attr(g, k) == v, (k, attr(g, k), v)
    assert attr(g, "done") + attr(g, "rejected") + attr(g, "unfinished") == attr(g, "submitted")


def ok(r: subprocess.CompletedProcess) -> None:
    assert r.returncode == 0, f"exit {r.returncode}\n{r.stdout}\n{r.stderr}"


@pytest.mark.parametrize("np_", [2, 3])
def test_closed_loop(tmp_path, np_):
    out = tmp_path / "c.h5"
    r = load(np_, out, "--clients", "1,2", *QUICK)
    ok(r)
    table = rows(r.stdout)
    assert [t[0] for t in table] == ["000", "001"] and [float(t[1]) for t in table] == [1, 2]
    assert "closed loop" in r.stdout
    assert saturation_line(r.stdout).startswith("saturation: ")
    # The saturation line comes right after the table.
    lines = r.stdout.splitlines()
    assert lines[lines.index(next(l for l in lines if l.startswith("saturation:"))) - 1].startswith("  s001")
    with h5py.File(out) as f:
        gs = steps(f)
        assert [g.name for g in gs] == ["/load/s000", "/load/s001"]
        for g, clients in zip(gs, [1, 2]):
            check_accounting(g)
            assert attr(g, "loop") == "closed" and attr(g, "clients") == clients
            assert attr(g, "client_source") == ("head" if np_ == 2 else "ranks")
            assert attr(g, "done") > 10 and attr(g, "rejected") == 0 and attr(g, "unfinished") == 0
            assert set(np.unique(g["client"][:])) == set(range(clients))
            assert set(np.unique(g["worker"][:])) == {1}
            assert set(np.unique(g["client_rank"][:])) == ({0} if np_ == 2 else {2})
            t_client = g["t_client"][:]
            if np_ == 2:
                assert np.all(np.isnan(t_client))
            else:
                # The client's own round trip includes the upload the head cannot see.
                assert np.all(np.isfinite(t_client)) and np.all(t_client >= 0)
                assert np.median(t_client) >= 0.5 * np.median(g["latency"][:])


@pytest.mark.parametrize("np_", [2, 3])
def test_open_loop(tmp_path, np_):
    out = tmp_path / "o.h5"
    r = load(np_, out, "--rates", "20,40", *QUICK)
    ok(r)
    table = rows(r.stdout)
    assert [float(t[1]) for t in table] == [20, 40]
    assert "open loop" in r.stdout
    with h5py.File(out) as f:
        for g, rate in zip(steps(f), [20, 40]):
            check_accounting(g)
            assert attr(g, "loop") == "open" and attr(g, "rate_rps") == rate and attr(g, "offered_rps") == rate
            n = attr(g, "submitted")
            # Poisson arrivals over 1.5 s: well within 5 standard deviations of rate * duration.
            assert abs(n - 1.5 * rate) < 5 * np.sqrt(1.5 * rate) + 1
            t = g["t_submit"][:]
            assert np.all(np.diff(t) >= -0.05) and t.max() < 1.5
            assert np.all(g["status"][:] == 0)


def test_same_seed_same_arrivals(tmp_path):
    """Open-loop arrivals come from --seed: the head's schedule is the same twice, and differs for another seed."""
    subs = []
    for i, seed in enumerate(["7", "7", "8"]):
        out = tmp_path / f"s{i}.h5"
        ok(load(2, out, "--rates", "30", "--seed", seed, *QUICK))
        with h5py.File(out) as f:
            subs.append(f["load/s000/t_submit"][:])
    assert np.array_equal(subs[0], subs[1])
    assert not (len(subs[0]) == len(subs[2]) and np.array_equal(subs[0], subs[2]))


@pytest.mark.parametrize("np_,loop", [(2, ("--rates", "100")), (3, ("--clients", "6"))])
def test_tiny_queue_rejects_and_accounts(tmp_path, np_, loop):
    out = tmp_path / "q.h5"
    r = load(np_, out, *loop, "--queue-limit", "1", "--service-delay-ms", "50", *QUICK)
    ok(r)
    assert "rejections" in r.stdout
    with h5py.File(out) as f:
        g = f["load/s000"]
        check_accounting(g)
        assert attr(g, "rejected") > 5 and attr(g, "done") > 5
        assert attr(g, "pass") == 0 and attr(g, "fail_reason") == "rejections"
        status = g["status"][:]
        rej = status == 1
        # Rejected requests never reached a worker.
        assert np.all(g["worker"][:][rej] == -1) and np.all(np.isnan(g["t_start"][:][rej]))
        assert np.all(np.isnan(g["t_done"][:][rej]))
        assert attr(f["load"], "fail_reason") == "rejections"
        assert np.isnan(attr(f["load"], "saturation_rps"))


@pytest.mark.parametrize("np_", [2, 3])
def test_step_timeout_marks_unfinished_and_goes_on(tmp_path, np_):
    out = tmp_path / "t.h5"
    t0 = time.monotonic()
    r = load(np_, out, "--clients", "4,8", "--service-delay-ms", "400", "--step-timeout", "2", *QUICK)
    elapsed = time.monotonic() - t0
    ok(r)
    assert elapsed < 30
    table = rows(r.stdout)
    # The timed-out step ends the run; the next load is not tried.
    assert len(table) == 1 and table[0][-1] == "latency"
    assert "timed out" in r.stdout and "saturation: none" in r.stdout
    with h5py.File(out) as f:
        g = f["load/s000"]
        check_accounting(g)
        assert attr(g, "timed_out") == 1 and attr(g, "unfinished") >= 1
        assert attr(f["load"], "stop_reason") == "step_timeout"
        assert attr(f["load"], "fail_reason") == "latency"
        unf = g["status"][:] == 2
        assert np.all(np.isnan(g["t_done"][:][unf]))


def test_requests_mode_submits_exactly_n(tmp_path):
    out = tmp_path / "n.h5"
    r = load(3, out, "--clients", "3", "--requests", "25", "--seconds", "0.5", "--plan", "estimate",
             "--warmup-s", "0")
    ok(r)
    with h5py.File(out) as f:
        g = f["load/s000"]
        check_accounting(g)
        assert attr(g, "submitted") == 25 and attr(g, "done") == 25 and attr(g, "duration_s") == 0
        assert sorted(np.bincount(g["client"][:]).tolist()) == [8, 8, 9]


def test_round_robin_takes_workers_in_turn(tmp_path):
    out = tmp_path / "rr.h5"
    r = load(3, out, "--client-ranks", "0", "--clients", "3", "--dispatch", "round-robin", *QUICK)
    ok(r)
    with h5py.File(out) as f:
        g = f["load/s000"]
        check_accounting(g)
        assert attr(g, "dispatch") == "round-robin" and attr(g, "workers") == 2
        order = np.argsort(g["t_start"][:])
        workers = g["worker"][:][order]
        assert np.all(workers[::2] == workers[0]) and np.all(workers[1::2] == 3 - workers[0])


def test_spectra_double_several_files(tmp_path):
    out = tmp_path / "sp.h5"
    r = load(3, out, "--clients", "2", "--result", "spectra", "--precision", "double", "--files-per-request", "2",
             *QUICK)
    ok(r)
    with h5py.File(out) as f:
        g = f["load/s000"]
        check_accounting(g)
        frames = 1 + (22050 - 4096) // 2048
        assert attr(g, "bytes_per_request") == 2 * 22050 * 8 and np.all(g["bytes"][:] == 2 * 22050 * 8)
        assert attr(g, "result_bytes") == 2 * frames * 2049 * 8
        assert attr(g, "result") == "spectra" and attr(g, "precision") == "double"
        assert attr(g, "verify_mismatches") == 0 and attr(g, "done") > 10


def test_run_timeout_keeps_the_steps_done(tmp_path):
    out = tmp_path / "to.h5"
    r = load(2, out, "--clients", "1,2,4,8", *QUICK, "--timeout", "3")
    assert r.returncode == 4, r.stderr
    assert len(rows(r.stdout)) == 1
    with h5py.File(out) as f:
        assert attr(f["load"], "stop_reason") == "timeout" and attr(f["load"], "steps") == 1
        check_accounting(f["load/s000"])


def test_closed_ramp_brackets_known_capacity(tmp_path):
    """1 worker x 50 ms = 20 req/s. With 100 ms think time each client offers ~6.7 req/s, so throughput stops
    rising between 3 and 5 clients; the ramp must bracket that within one client."""
    out = tmp_path / "rc.h5"
    with MachineLoad(cores=3) as machine:
        r = load(3, out, "--clients", "1", "--think-ms", "100", "--ramp", "--service-delay-ms", "50",
                 "--seconds", "0.5", "--plan", "estimate", "--duration", "2", "--warmup-s", "0.5", timeout=120)
    ok(r)
    with h5py.File(out) as f:
        a = f["load"].attrs
        assert attr(f["load"], "stop_reason") == "bracketed" and a["ramp"] == 1
        assert a["first_fail_load"] - a["saturation_load"] == 1
        # Other work can only stretch the worker's 50 ms, never shorten it.
        sat_load, sat_rps = int(a["saturation_load"]), float(a["saturation_rps"])
        assert 0 < sat_rps <= 21, sat_rps
        assert attr(f["load"], "fail_reason") == "throughput"
        loads = [attr(g, "load") for g in steps(f)]
        assert loads[:3] == [1, 2, 4]
    assert "saturation: " in saturation_line(r.stdout) and "throughput" in saturation_line(r.stdout)
    # Where the ramp saturates is the worker's and the clients' timing: as planned only on idle cores.
    if (why := machine.busy()):
        pytest.skip(f"{why}; saturated at {sat_load} clients, {sat_rps:.1f} req/s")
    assert 3 <= sat_load <= 5 and 15 <= sat_rps, (sat_load, sat_rps)


def test_open_ramp_brackets_known_capacity(tmp_path):
    """1 worker x 50 ms: capacity 20 req/s. Poisson arrivals queue before that, so the saturation point lies
    below 20 and, once bracketed, the first failing rate is within 10% above it."""
    out = tmp_path / "ro.h5"
    r = load(2, out, "--rates", "8", "--ramp", "--service-delay-ms", "50", "--slo-ms", "500",
             "--seconds", "0.5", "--plan", "estimate", "--duration", "2", "--warmup-s", "0.3", timeout=150)
    ok(r)
    with h5py.File(out) as f:
        a = f["load"].attrs
        assert attr(f["load"], "stop_reason") == "bracketed"
        sat, ff = a["saturation_rps"], a["first_fail_rps"]
        assert 8 <= sat <= 21 and sat < ff <= 1.1 * sat + 1e-9
        loads = [attr(g, "load") for g in steps(f)]
        assert loads[:3] == [8, 16, 32]
        assert a["saturation_p95_s"] <= 0.5
        for g in steps(f):
            check_accounting(g)


def test_hdf5_layout_and_phases(tmp_path):
    out = tmp_path / "h.h5"
    r = load(3, out, "--clients", "2", "--think-ms", "20", "--service-delay-ms", "5", *QUICK)
    ok(r)
    with h5py.File(out) as f:
        assert attr(f, "subcommand") == "load" and attr(f, "status") == "complete"
        g = f["load/s000"]
        n = attr(g, "submitted")
        expect = {"client": np.int32, "client_rank": np.int32, "worker": np.int32, "bytes": np.int64,
                  "status": np.uint8, "warmup": np.uint8}
        for name in ["t_submit", "t_start", "t_done", "t_queue", "t_distribute", "t_compute", "t_fft",
                     "t_return", "t_client", "latency"]:
            expect[name] = np.float64
        for name, dt in expect.items():
            assert g[name].shape == (n,) and g[name].dtype == dt, name
            assert "units" in g[name].attrs
        assert attr(g["t_submit"], "units") == "s" and attr(g["bytes"], "units") == "bytes"
        assert h5py.check_enum_dtype(g["status"].dtype) == STATUS
        assert h5py.check_enum_dtype(g["warmup"].dtype) == {"measured": 0, "warmup": 1}
        for name in ["loop", "clients", "offered_rps", "duration_s", "warmup_s", "files_per_request",
                     "seconds_per_file", "dispatch", "queue_limit", "slo_ms", "client_source", "think_ms",
                     "timed_out", "submitted", "done", "rejected", "unfinished", "p50_s", "p95_s", "p99_s", "max_s",
                     "completed_rps", "pass", "fail_reason"]:
            assert name in g.attrs, name
        assert attr(g, "seconds_per_file") == 0.5 and attr(g, "files_per_request") == 1
        assert np.all(g["bytes"][:] == 22050 * 4) and attr(g, "bytes_per_request") == 22050 * 4
        check_accounting(g)
        done = g["status"][:] == 0
        t_submit, t_start, t_done = g["t_submit"][:], g["t_start"][:], g["t_done"][:]
        assert np.all(t_submit[done] <= t_start[done]) and np.all(t_start[done] <= t_done[done])
        phases = g["t_queue"][:] + g["t_distribute"][:] + g["t_compute"][:] + g["t_return"][:]
        assert np.allclose(phases[done], (t_done - t_submit)[done], atol=1e-9)
        assert np.allclose(g["latency"][:][done], (t_done - t_submit)[done])
        for name in ["t_queue", "t_distribute", "t_compute", "t_return"]:
            assert np.all(g[name][:][done] >= 0), name
        # The service delay is part of compute; the FFT is part of it too.
        assert np.all(g["t_compute"][:][done] >= 0.005)
        assert np.all(g["t_fft"][:][done] <= g["t_compute"][:][done])
        assert np.array_equal(g["warmup"][:], (t_submit < 0.3).astype(np.uint8))
        assert 0 < attr(g, "measured") <= n
        lat = np.sort((t_done - t_submit)[done & (t_submit >= 0.3)])
        assert np.isclose(attr(g, "p50_s"), np.percentile(lat, 50))
        assert np.isclose(attr(g, "p95_s"), np.percentile(lat, 95))
        assert np.isclose(attr(g, "max_s"), lat[-1])
        la = f["load"]
        for name in ["saturation_rps", "saturation_p95_s", "first_fail_rps", "fail_reason"]:
            assert name in la.attrs
        assert attr(la, "fail_reason") == "none" and np.isnan(attr(la, "first_fail_rps"))
        assert np.isclose(attr(la, "saturation_rps"), attr(g, "offered_rps"))


BAD = [
    (2, ("--rates", "0"), "--rates"),
    (2, ("--rates", "5,-1"), "--rates"),
    (3, ("--client-ranks", "3"), "more client ranks"),
    (3, ("--client-ranks", "2"), "no worker rank"),
    (2, ("--queue-limit", "0"), "--queue-limit"),
    (0, (), "at least 2 ranks"),
    (2, ("--clients", "2", "--rates", "3"), "exclude"),
    (2, ("--warmup-s", "5", "--duration", "2"), "--warmup-s"),
]


@pytest.mark.parametrize("np_,args,needle", BAD)
def test_bad_input_exits_2_with_one_line(tmp_path, np_, args, needle):
    t0 = time.monotonic()
    r = load(np_, tmp_path / "bad.h5", *args, timeout=60)
    assert time.monotonic() - t0 < 30
    assert r.returncode == 2, f"{r.returncode}\n{r.stdout}\n{r.stderr}"
    lines = error_lines(r.stderr)
    assert len(lines) == 1 and needle in lines[0], r.stderr


@pytest.mark.skipif(not FAULTS_BIN.exists(), reason="build/wulfbench-faults is built by make test-load")
def test_failing_worker_stops_every_rank_with_one_line(tmp_path):
    t0 = time.monotonic()
    r = run_faults(3, "load", "--clients", "2", *QUICK, "-o", str(tmp_path / "w.h5"),
                   env={"WB_FAULT": "load-worker-fail"})
    assert time.monotonic() - t0 < 40
    assert r.returncode == 1, r.stderr
    lines = error_lines(r.stderr)
    assert len(lines) == 1 and "injected fault" in lines[0], r.stderr


@pytest.mark.skipif(not FAULTS_BIN.exists(), reason="build/wulfbench-faults is built by make test-load")
def test_damaged_result_fails_verification(tmp_path):
    out = tmp_path / "v.h5"
    r = run_faults(2, "load", "--clients", "1", *QUICK, "-o", str(out), env={"WB_FAULT": "load-corrupt"})
    assert r.returncode == 3, r.stderr
    assert "verify: FAILED" in r.stdout
    with h5py.File(out) as f:
        assert attr(f, "status") == "invalid"
        assert attr(f["load/s000"], "verify_mismatches") >= 1


@pytest.mark.skipif(not FAULTS_BIN.exists(), reason="build/wulfbench-faults is built by make test-load")
@pytest.mark.skipif(MPI_IMPL == "mpich", reason="known gap: under MPICH's hydra the client rank aborts when the head ends the run for a stopped worker, so the clean one-line ending is Open MPI only for now")
def test_hung_worker_does_not_hang_the_job(tmp_path):
    """A worker that stops answering: the step is cut off, the head waits its grace (10 s), then every rank stops."""
    t0 = time.monotonic()
    r = run_faults(3, "load", "--clients", "2", *QUICK, "--step-timeout", "2", "-o", str(tmp_path / "hang.h5"),
                   env={"WB_FAULT": "load-worker-hang"}, timeout=60)
    assert time.monotonic() - t0 < 40
    assert r.returncode != 0
    assert "stopped responding" in r.stderr, r.stderr


@pytest.mark.skipif(MPI_IMPL == "mpich", reason="known gap: under MPICH's hydra the client rank aborts when the head ends the run for a stopped worker, so the clean one-line ending is Open MPI only for now")
def test_stopped_worker_keeps_the_step_and_names_it(tmp_path):
    """SIGSTOP a worker part-way through step s001. The step is written like any other, with the requests
    that worker held marked unfinished; one line names the worker and the file, there is no MPI_Abort,
    and the exit status is 1 (an error: the run could not finish, the file holds the steps so far,
    status failed, in NAME.h5.partial like any failed run)."""
    from test_reliability import finish, rank_pid

    out = tmp_path / "stop.h5"
    log = tmp_path / "stdout.txt"
    cmd = [*launcher(3), str(BIN), "load", "--client-ranks", "0", "--clients", "1,2", *QUICK,
           "--service-delay-ms", "20", "--step-timeout", "3", "-o", str(out)]
    with open(log, "w") as so:
        p = subprocess.Popen(cmd, stdout=so, stderr=subprocess.PIPE, text=True, env=mpi_env(),
                             stdin=subprocess.DEVNULL, start_new_session=True)
        deadline = time.monotonic() + 60
        while not rows(log.read_text()) and p.poll() is None and time.monotonic() < deadline:
            time.sleep(0.05)
        assert rows(log.read_text()), log.read_text()
        time.sleep(0.5)
        os.kill(rank_pid(p, 2), signal.SIGSTOP)
        t_stop = time.monotonic()
        _, stderr = finish(p, 60)
    elapsed = time.monotonic() - t_stop
    stdout = log.read_text()
    # Step timeout 3 s, the head's grace 10 s, at most another 10 s for sends to the stopped rank.
    assert elapsed < 40, (elapsed, stderr)
    assert p.returncode == 1, f"exit {p.returncode}\n{stdout}\n{stderr}"
    assert "MPI_ABORT was invoked" not in stderr and "ORTE_ERROR_LOG" not in stderr, stderr
    lines = error_lines(stderr)
    assert len(lines) == 1, stderr
    assert "worker rank 2 stopped responding during step s001" in lines[0], lines[0]
    assert "marked unfinished" in lines[0] and f"{out}.partial" in lines[0], lines[0]
    assert [r[0] for r in rows(stdout)] == ["000", "001"], stdout
    with h5py.File(f"{out}.partial") as f:
        assert attr(f, "status") == "failed" and attr(f, "points_completed") == 2
        assert sorted(f["load"].keys()) == ["s000", "s001"]
        s0, s1 = f["load/s000"], f["load/s001"]
        check_accounting(s0)
        check_accounting(s1)
        assert attr(s0, "unfinished") == 0
        held = (s1["worker"][:] == 2) & (s1["status"][:] == STATUS["unfinished"])
        assert held.sum() >= 1 and attr(s1, "unfinished") >= held.sum()
        assert np.all(np.isnan(s1["t_done"][:][held]))


def test_clock_offset_of_a_worker_whose_wall_clock_is_ahead_matches_check(tmp_path):
    """Rank 1's wall clock 250 ms ahead (libfaketime, CLOCK_MONOTONIC, wulfbench's clock, left alone):
    load stores that worker's wall-clock offset per step, and check, started the same way, reports
    the same offset within 1 ms."""
    ahead = faketime("+0.25")

    def mpmd(*args: str) -> subprocess.CompletedProcess:
        # rank 0 and rank 2 as they are, rank 1 ahead; one launch, three program contexts.
        cmd = [*launcher(1), str(BIN), *args, ":", "-np", "1", *ahead, str(BIN), *args,
               ":", "-np", "1", str(BIN), *args]
        return subprocess.run(cmd, capture_output=True, text=True, env=mpi_env(), timeout=120,
                              stdin=subprocess.DEVNULL)

    out = tmp_path / "clk.h5"
    # An offset is good to half the shortest probe's round trip; with other work on the cores a rank
    # waits for one between ping and pong (beside a busy loop, 1.4 ms apart once), so the 1 ms and
    # 2 ms margins hold on a quiet machine, and 5 ms, still far inside the 250 ms, on a busy one.
    with MachineLoad(cores=3) as load:
        r = mpmd("load", "--client-ranks", "0", "--clients", "2", *QUICK, "-q", "-o", str(out))
        c = mpmd("check")
    quiet = load.busy() is None
    assert r.returncode == 0, r.stderr
    with h5py.File(out, "r") as f:
        steps = [g for k, g in f["load"].items() if k.startswith("s")]
        offs = np.array([g["clock_offset_s"][()] for g in steps])
        assert all(g["clock_offset_s"].attrs["units"] == "s" for g in steps)
    assert offs.shape[1] == 2
    load_off = np.median(offs, axis=0)
    near, agree = (2e-3, 1e-3) if quiet else (5e-3, 5e-3)
    assert abs(load_off[0] - 0.25) < near and abs(load_off[1]) < near, (offs, load.busy())
    m = re.search(r"rank 1 \([^)]*\) \+([\d.]+) ms", c.stdout)
    assert c.returncode == 0 and m, c.stdout + c.stderr
    assert abs(float(m.group(1)) * 1e-3 - load_off[0]) < agree, (m.group(1), load_off, load.busy())
