"""MPI integration tests of `wulfbench transfer`: tables, the HDF5 layout, validation, bad input."""
from __future__ import annotations

import re
import subprocess
from pathlib import Path

import h5py
import numpy as np
import pytest

from conftest import FAULTS_BIN, error_lines, run_faults, run_wb

TESTS = ["pingpong", "bw", "bibw", "ring", "barrier", "bcast", "scatter", "gather", "allgather",
         "alltoall", "reduce", "allreduce"]
P2P = ["pingpong", "bw", "bibw"]
COLL = TESTS[4:]
# Small and quick: 1 B to 64 KiB is 17 sizes.
SIZES = [2 ** k for k in range(17)]
SMALL = ("-m", "1:64k", "-i", "3", "-x", "1")
ROW = re.compile(r"^\s+(\d+)\s+(\d+)\s+([\d.]+)\s+([\d.]+)\s+([\d.]+)\s+([\d.]+|-)\s*$")


def transfer(np_: int, out: Path, *args: str, timeout: float = 90) -> subprocess.CompletedProcess:
    return run_wb(np_, "transfer", *args, "-o", str(out), timeout=timeout)




def tables(stdout: str) -> dict[str, list[tuple]]:
    """The rows under each test's first `# <test>:` title line, keyed by test name."""
    out: dict[str, list[tuple]] = {}
    current = None
    for line in stdout.splitlines():
        m = re.match(r"^# (\w+): ", line)
        if m and m.group(1) in TESTS:
            current = m.group(1) if m.group(1) not in out else None
            if current:
                out[current] = []
            continue
        row = ROW.match(line)
        if row and current:
            out[current].append(tuple(row.groups()))
        elif not line.startswith("#"):
            current = None
    return out


@pytest.fixture(scope="module")
def run2(tmp_path_factory):
    """One validated run of every test on 2 ranks, shared by the checks below."""
    out = tmp_path_factory.mktemp("transfer2") / "t.h5"
    r = transfer(2, out, *SMALL, "--validate", "--root", "rotate")
    assert r.returncode == 0, r.stdout + r.stderr
    return r, out


def test_np2_prints_every_table(run2):
    r, _ = run2
    got = tables(r.stdout)
    assert list(got) == TESTS
    for name, rows in got.items():
        sizes = [int(row[0]) for row in rows]
        assert sizes == ([0] if name == "barrier" else SIZES), name
        assert all(int(row[1]) == 3 for row in rows), name
        for row in rows:
            tmin, tmed, tmax = map(float, row[2:5])
            assert 0 <= tmin <= tmed <= tmax, (name, row)
    assert re.search(r"^#\s+bytes\s+reps\s+t_min\[us\]\s+t_med\[us\]\s+t_max\[us\]\s+MB/s$", r.stdout, re.M)
    assert "MB/s = 1e6 bytes/s" in r.stdout
    assert "# pingpong: validated, every received buffer matched what was sent" in r.stdout


def test_np2_hdf5_layout(run2):
    _, out = run2
    with h5py.File(out, "r") as f:
        assert f.attrs["status"] in ("complete", b"complete")
        assert int(f.attrs["verified"]) == 1
        g = f["transfer"]
        assert sorted(g) == sorted(TESTS)
        for name in TESTS:
            grp = g[name]
            for dset in grp.values():
                assert "units" in dset.attrs, (name, dset.name)
            S = 1 if name == "barrier" else len(SIZES)
            assert grp["bytes"].dtype == np.int64 and grp["bytes"].attrs["units"] == "bytes"
            assert list(grp["bytes"][:]) == ([0] if name == "barrier" else SIZES)
            assert list(grp["reps"][:]) == [3] * S
            t = grp["t"][:]
            assert t.dtype == np.float64 and grp["t"].attrs["units"] == "s"
            assert grp.attrs["validated"] == 1 and grp.attrs["iters"] == "3"
            assert grp.attrs["verified"] == (-1 if name == "barrier" else 1)
            assert grp.attrs["root"] == "rotate"
            if name in P2P:
                assert grp.attrs["kind"] == "p2p" and grp.attrs["pairs_mode"] == "first"
                assert t.shape == (S, 3, 1)
                assert grp["pairs"][:].tolist() == [[0, 1]]
                assert grp["t_med"].shape == (S, 1)
                batch, window = grp["batch"][:], grp["window"][:]
                assert batch.shape == window.shape == (S,)
                if name == "pingpong":
                    assert np.all(window == 1) and np.all((batch >= 1) & (batch <= 100))
                    # a batch never needs more than 64 KiB of receive slots
                    assert np.all((batch == 1) | (batch * grp["bytes"][:] <= 65536))
                else:
                    assert np.all(batch == 1) and np.all((window >= 1) & (window <= 64))
            elif name == "ring":
                assert grp.attrs["kind"] == "ring"
                assert t.shape == (S, 3, 3)  # natural order + 2 random orders
                orders = grp["orders"][:]
                assert orders.shape == (3, 2) and orders[0].tolist() == [0, 1]
                assert all(sorted(row) == [0, 1] for row in orders.tolist())
            else:
                assert grp.attrs["kind"] == "collective"
                assert t.shape == (S, 3, 2)
                assert grp["t_med"].shape == (S,)
            assert np.all(np.isfinite(t)) and np.all(t > 0), name
            bw = grp["bandwidth_Bps"][:]
            assert grp["bandwidth_Bps"].attrs["units"] == "B/s"
            t_med = grp["t_med"][:]
            if name in COLL:
                # median over ranks of each rank's median over repetitions
                assert np.allclose(t_med, np.median(np.median(t, axis=1), axis=1))
            else:
                assert np.allclose(t_med, np.median(t, axis=1))
            factor = {"bibw": 2, "ring": 2}.get(name, 1)
            expect = factor * grp["bytes"][:].reshape(S, *([1] * (t_med.ndim - 1))) / t_med
            assert np.allclose(bw, expect), name


def test_np2_table_matches_file(run2):
    r, out = run2
    rows = tables(r.stdout)["pingpong"]
    with h5py.File(out, "r") as f:
        t_med = f["transfer/pingpong/t_med"][:, 0]
    for row, tm in zip(rows, t_med):
        assert float(row[3]) == pytest.approx(tm * 1e6, abs=0.006)
        assert float(row[5]) == pytest.approx(int(row[0]) / tm / 1e6, rel=0.01, abs=0.006)


@pytest.mark.parametrize("np_", [3, 4])
def test_odd_and_even_rank_counts(tmp_path, np_):
    out = tmp_path / "t.h5"
    r = transfer(np_, out, "-m", "1:4k", "-i", "3", "--validate")
    assert r.returncode == 0, r.stdout + r.stderr
    assert list(tables(r.stdout)) == TESTS
    with h5py.File(out, "r") as f:
        assert f["transfer/alltoall/t"].shape == (13, 3, np_)
        assert f["transfer/ring/orders"].shape == (3, np_)
        assert f["transfer/pingpong/pairs"][:].tolist() == [[0, 1]]
        # Idle ranks record nothing, so the pair's samples are all there is.
        assert np.all(np.isfinite(f["transfer/pingpong/t"][:]))


def test_pairs_all_matrices(tmp_path):
    out = tmp_path / "t.h5"
    r = transfer(3, out, "--tests", "pingpong,bw", "--pairs", "all", "-m", "1,1k", "-i", "3")
    assert r.returncode == 0, r.stdout + r.stderr
    assert "every ordered pair of 3 ranks in turn (6 pairs)" in r.stdout
    assert re.search(r"^# slowest pair: \d->\d ", r.stdout, re.M)
    for q in range(3):
        assert re.search(rf"^\s+{q}\s+0\s+\S+\s+[\d.]+ .\s+[\d.]+ .?$", r.stdout, re.M), q
    with h5py.File(out, "r") as f:
        pairs = f["transfer/pingpong/pairs"][:].tolist()
        assert sorted(map(tuple, pairs)) == [(a, b) for a in range(3) for b in range(3) if a != b]
        assert f["transfer/pingpong/t"].shape == (2, 3, 6)
        assert f["transfer/bw/t"].shape == (2, 3, 6)
        m = f["transfer/pairs_all"]
        assert m.attrs["test"] == "pingpong"
        assert m.attrs["latency_bytes"] == 1 and m.attrs["bandwidth_bytes"] == 1024
        lat, bw = m["latency_s"][:], m["bandwidth_Bps"][:]
        assert lat.shape == (3, 3) and bw.shape == (3, 3)
        assert np.all(np.isnan(np.diag(lat))) and np.all(np.isnan(np.diag(bw)))
        off = ~np.eye(3, dtype=bool)
        assert np.all(lat[off] > 0) and np.all(bw[off] > 0)
        t_med = f["transfer/pingpong/t_med"][:]
        for p, (a, b) in enumerate(pairs):
            assert lat[a, b] == t_med[0, p]
            assert bw[a, b] == pytest.approx(1024 / t_med[1, p])


def test_pairs_list_at_once(tmp_path):
    out = tmp_path / "t.h5"
    r = transfer(4, out, "--tests", "pingpong,bibw", "--pairs", "0:1,3:2", "-m", "1,4k", "-i", "3",
                 "--validate")
    assert r.returncode == 0, r.stdout + r.stderr
    assert "pairs 0:1,3:2 at once" in r.stdout
    with h5py.File(out, "r") as f:
        assert f["transfer/pingpong/pairs"][:].tolist() == [[0, 1], [3, 2]]
        assert f["transfer/pingpong"].attrs["pairs_mode"] == "list"
        assert f["transfer/bibw/t"].shape == (2, 3, 2)
        assert np.all(np.isfinite(f["transfer/bibw/t"][:]))


def test_iters_auto_stays_in_bounds(tmp_path):
    out = tmp_path / "t.h5"
    r = transfer(2, out, "--tests", "pingpong,bw,allreduce", "-m", "1,1M", "--time-per-size", "0.02",
                 "--iters-min", "4", "--iters-max", "300")
    assert r.returncode == 0, r.stdout + r.stderr
    with h5py.File(out, "r") as f:
        for name in ("pingpong", "bw", "allreduce"):
            g = f["transfer/" + name]
            reps = g["reps"][:]
            assert g.attrs["iters"] == "auto"
            assert np.all((reps >= 4) & (reps <= 300)), (name, reps)
            t = g["t"][:]
            for s, n in enumerate(reps):
                assert np.all(np.isfinite(t[s, :n])) and np.all(np.isnan(t[s, n:])), name


def test_validation_catches_a_corrupted_buffer(tmp_path):
    if not FAULTS_BIN.exists():
        pytest.skip(f"{FAULTS_BIN} is missing (make build/wulfbench-faults)")
    out = tmp_path / "f.h5"
    r = run_faults(2, "transfer", "--tests", "pingpong,allreduce", "-m", "1:1k", "-i", "3", "--validate",
                   "-o", str(out), env={"WB_FAULT": "corrupt-transfer"})
    assert r.returncode == 3, r.stdout + r.stderr
    lines = error_lines(r.stderr)
    errors = [l for l in lines if "error" in l]
    assert len(errors) == 1, r.stderr
    assert "pingpong" in errors[0] and "pair 0:1" in errors[0] and "1 bytes" in errors[0]
    assert "# FAILED: transfer pingpong" in r.stdout
    with h5py.File(out, "r") as f:
        assert f.attrs["status"] == "invalid" and int(f.attrs["verified"]) == 0
        assert f["transfer/pingpong"].attrs["verified"] == 0
        # The run goes on after a mismatch; the other test's buffers were fine.
        assert f["transfer/allreduce"].attrs["verified"] == 1


def test_fault_needs_validate_and_the_test_build(tmp_path):
    if not FAULTS_BIN.exists():
        pytest.skip(f"{FAULTS_BIN} is missing (make build/wulfbench-faults)")
    env = {"WB_FAULT": "corrupt-transfer"}
    r = run_faults(2, "transfer", "--tests", "pingpong", "-m", "1:64", "-i", "3", "-o", str(tmp_path / "a.h5"),
                   env=env)
    assert r.returncode == 0, r.stdout + r.stderr
    r = run_wb(2, "transfer", "--tests", "pingpong", "-m", "1:64", "-i", "3", "--validate", "-o",
               str(tmp_path / "b.h5"), extra_env=env, timeout=60)
    assert r.returncode == 0, r.stdout + r.stderr


def test_one_rank_skips_point_to_point(tmp_path):
    out = tmp_path / "t.h5"
    r = transfer(1, out, "--tests", "pingpong,bw,ring,allreduce", "-m", "1:16", "-i", "3", timeout=60)
    assert r.returncode == 0, r.stdout + r.stderr
    skip = [l for l in error_lines(r.stderr) if "need" in l]
    assert len(skip) == 1 and "pingpong, bw, ring need at least 2 ranks" in skip[0], r.stderr
    assert list(tables(r.stdout)) == ["allreduce"]
    with h5py.File(out, "r") as f:
        assert sorted(f["transfer"]) == ["allreduce"]


def test_one_rank_with_only_pingpong(tmp_path):
    r = transfer(1, tmp_path / "t.h5", "--tests", "pingpong", "-m", "8", "-i", "3", timeout=60)
    assert r.returncode == 0, r.stdout + r.stderr
    assert len([l for l in error_lines(r.stderr) if "needs at least 2 ranks" in l]) == 1


def test_test_groups(tmp_path):
    r = transfer(2, tmp_path / "t.h5", "--tests", "collectives,barrier", "-m", "8", "-i", "2")
    assert r.returncode == 0, r.stdout + r.stderr
    assert list(tables(r.stdout)) == COLL


def test_quiet_prints_no_tables(tmp_path):
    r = transfer(2, tmp_path / "t.h5", "--tests", "pingpong", "-m", "1:8", "-i", "3", "-q")
    assert r.returncode == 0, r.stdout + r.stderr
    assert not tables(r.stdout)


def test_timeout_keeps_what_was_measured(tmp_path):
    out = tmp_path / "t.h5"
    r = transfer(2, out, "--tests", "pingpong,bw", "-m", "1:4M", "--time-per-size", "0.1", "--timeout", "0.5")
    assert r.returncode == 4, r.stdout + r.stderr
    assert any("--timeout" in l for l in error_lines(r.stderr)), r.stderr
    path = out if out.exists() else Path(str(out) + ".partial")
    with h5py.File(path, "r") as f:
        g = f["transfer/pingpong"]
        assert 0 < g["bytes"].shape[0] < 23
        assert g.attrs["timed_out"] == 1


def _mem_available() -> int:
    for line in Path("/proc/meminfo").read_text().splitlines():
        if line.startswith("MemAvailable:"):
            return int(line.split()[1]) * 1024
    return 0


BAD = [
    (2, ["--pairs", "0:2"], "--pairs: rank 2 does not exist"),
    (3, ["--pairs", "0:1,1:2"], "--pairs: rank 1 is used twice"),
    (2, ["--pairs", "1:1"], "used twice"),
    (2, ["-m", "0"], "--sizes"),
    (2, ["-m", "2G"], "--sizes"),
    (2, ["-m", "1,0"], "--sizes"),
    (2, ["--tests", "pingpong,nope"], "unknown test 'nope'"),
    (2, ["--iters", "0"], "--iters"),
    (2, ["-i", "-5"], "--iters"),
    (2, ["--root", "2"], "--root: rank 2 does not exist"),
    (3, ["--window", "0"], "--window"),
    (2, ["--iters-min", "10", "--iters-max", "5"], "--iters-min 10 is above --iters-max 5"),
]


@pytest.mark.parametrize("np_,args,msg", BAD, ids=[" ".join(b[1]) for b in BAD])
def test_bad_input_exits_2_with_one_line(tmp_path, np_, args, msg):
    r = transfer(np_, tmp_path / "bad.h5", *args, timeout=60)
    assert r.returncode == 2, r.stdout + r.stderr
    lines = error_lines(r.stderr)
    assert len(lines) == 1 and msg in lines[0], r.stderr


def test_sizes_beyond_memory_are_refused(tmp_path):
    # alltoall at 1 GiB on 4 ranks needs 4 x 2 x 4 GiB on this host.
    if _mem_available() > 30 * 2 ** 30:
        pytest.skip("this host has enough memory for alltoall at 1 GiB on 4 ranks")
    r = transfer(4, tmp_path / "bad.h5", "--tests", "alltoall", "-m", "1G", timeout=60)
    assert r.returncode == 2, r.stdout + r.stderr
    lines = error_lines(r.stderr)
    assert len(lines) == 1 and "--sizes: alltoall needs about" in lines[0], r.stderr
