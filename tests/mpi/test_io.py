"""`wulfbench io` under real MPI on a real disk folder (under /var/tmp, checked not to be tmpfs): the /io
layout of docs/schema.md, the aggregate rule, the data check, every bad-input line, the tmpfs refusal,
a full disk on a loop-device ext4, a killed run's leftovers, and the O_DIRECT fallback. No figure of
speed is asserted: the machine is shared."""
from __future__ import annotations

import math
import os
import shutil
import signal
import subprocess
import time
from pathlib import Path

import h5py
import numpy as np
import pytest

from conftest import (BIN, FAULTS_BIN, error_lines, fs_type, io_need_bytes, loop_ext4, mpi_env,
                      one_node_not_two_bytes, run_faults, run_nodes, run_wb)

QUICK = ("--time", "0.3", "--size", "2M", "--reps", "2", "--warmup", "0")
ATTRS = {"test", "dir", "dir_index", "shared", "api", "access", "file_bytes", "xfer_bytes", "reps", "warmup",
         "sync", "direct", "direct_note", "cold", "cold_method", "status", "note",
         *(f"agg_{k}_{s}" for k in ("mbps", "iops") for s in ("median", "min", "max", "cv"))}
DSETS = {"t_start": "s", "t_end": "s", "bytes": "bytes", "ops": "count", "mbps": "MB/s", "iops": "1/s",
         "lat_s": "s", "agg_mbps": "MB/s", "agg_iops": "1/s", "create_per_s": "1/s", "stat_per_s": "1/s",
         "delete_per_s": "1/s"}
DEVICE_FIELDS = {"node", "dir", "fs_type", "mount_options", "device", "model", "kind", "rotational", "sd_name",
                 "sd_type", "sd_date", "nfs_server", "export_sync", "free_bytes", "mem_bytes", "shared"}
IS_ROOT = os.geteuid() == 0


@pytest.fixture
def disk(tmp_path_factory) -> Path:
    """A fresh folder on a real disk: /var/tmp, else the test's tmp folder, refused when in memory."""
    base = Path("/var/tmp")
    if not os.access(base, os.W_OK):
        base = tmp_path_factory.getbasetemp()
    d = Path(os.path.realpath(base)) / f"wb-io-test-{os.getpid()}-{time.monotonic_ns()}"
    d.mkdir()
    if fs_type(d) in ("tmpfs", "ramfs"):
        shutil.rmtree(d)
        pytest.skip(f"{base} is in memory (df -T); io needs a disk folder")
    yield d
    shutil.rmtree(d, ignore_errors=True)


def leftovers(d: Path) -> list[str]:
    return sorted(p.name for p in d.iterdir() if p.name.startswith((".wulfbench-io-", "wb-io-")))


def groups(f: h5py.File) -> list[h5py.Group]:
    return [f["io"][k] for k in sorted(f["io"]) if k.startswith("i")]


def check_point(g: h5py.Group, nranks: int) -> None:
    """Every attribute and dataset of docs/schema.md, with its shape, units and the aggregate rule."""
    assert ATTRS <= set(g.attrs), ATTRS - set(g.attrs)
    reps = int(g.attrs["reps"])
    for name, units in DSETS.items():
        assert g[name].attrs["units"] == units, name
    for name in ("t_start", "t_end", "bytes", "ops", "mbps", "iops", "create_per_s", "stat_per_s", "delete_per_s"):
        assert g[name].shape == (reps, nranks), name
    assert g["lat_s"].shape == (reps, nranks, 3)
    assert g["agg_mbps"].shape == g["agg_iops"].shape == (reps,)
    t0, t1, b, ops = g["t_start"][()], g["t_end"][()], g["bytes"][()], g["ops"][()]
    assert (t1 > t0).all()
    span = t1.max(axis=1) - t0.min(axis=1)
    assert np.allclose(g["agg_mbps"][()], b.sum(axis=1) / 1e6 / span)
    assert np.allclose(g["mbps"][()], b / 1e6 / (t1 - t0))
    iops_test = g.attrs["test"] in ("randwrite", "randread", "meta")
    if iops_test:
        assert np.allclose(g["agg_iops"][()], ops.sum(axis=1) / span)
        assert g.attrs["agg_iops_median"] == pytest.approx(np.median(g["agg_iops"][()]), nan_ok=True)
    else:
        assert np.isnan(g["agg_iops"][()]).all() and math.isnan(g.attrs["agg_iops_median"])
    assert g.attrs["agg_mbps_median"] == pytest.approx(np.median(g["agg_mbps"][()]), nan_ok=True)
    lat = g["lat_s"][()]
    if g.attrs["test"] in ("randwrite", "randread"):
        assert (lat[..., 0] <= lat[..., 1]).all() and (lat[..., 1] <= lat[..., 2]).all() and (lat > 0).all()
        assert (b == ops * 4096).all()
    else:
        assert np.isnan(lat).all()
    if g.attrs["test"] == "meta":
        assert (g["create_per_s"][()] > 0).all() and (b == 0).all()
    read = g.attrs["test"] in ("read", "randread", "shared-read")
    assert g.attrs["cold"] in ((0, 1) if read else (-1,))
    assert g.attrs["sync"] == "none" if read else g.attrs["sync"] != "none"


def check_table(header: str, lines: list[str]) -> None:
    """A column that does not apply shows "-" (never nan) and every right-aligned column ends under its name:
    MB/s is meta's only "-", IOPS applies to the random tests and meta, p99_ms to the random tests."""
    ends = {name: header.index(name) + len(name) for name in ("file_MB", "reps", "MB/s", "IOPS", "p99_ms")}
    for line in lines:
        assert "nan" not in line, line
        fields = dict(zip(("test", "api", "dir", "file_MB", "reps", "MB/s", "IOPS", "p99_ms"), line.split()))
        for name, end in ends.items():
            assert line[:end].endswith(fields[name]) and line[end] == " ", (name, header, line)
        test = fields["test"]
        assert (fields["MB/s"] == "-") == (test == "meta"), line
        assert (fields["IOPS"] == "-") == (test not in ("randwrite", "randread", "meta")), line
        assert (fields["p99_ms"] == "-") == (test not in ("randwrite", "randread")), line
        for name in ("MB/s", "IOPS", "p99_ms"):
            if fields[name] != "-":
                assert float(fields[name]) >= 0, line


def test_every_test_writes_the_schema_and_the_aggregate_rule(disk):
    out = disk / "all.h5"
    r = run_wb(2, "io", "--dir", str(disk), *QUICK, "-o", str(out), timeout=180)
    assert r.returncode == 0, r.stderr
    header = next(l for l in r.stdout.splitlines() if l.startswith("# test"))
    assert "MB/s" in header.split() and "IOPS" in header.split()
    rows = [l.split() for l in r.stdout.splitlines() if l.startswith("  ")]
    assert [x[0] for x in rows] == ["write", "read", "randwrite", "randread", "meta", "shared-write", "shared-write",
                                    "shared-read", "shared-read", "hdf5"]
    check_table(header, [l for l in r.stdout.splitlines() if l.startswith("  ")])
    with h5py.File(out) as f:
        assert f.attrs["subcommand"] == "io"
        io = f["io"]
        assert io.attrs["dirs"] == str(disk) and io.attrs["budget_s"] == 0.3 and io.attrs["points"] == 10
        dev = io["devices"][()]
        assert set(dev.dtype.names) == DEVICE_FIELDS and len(dev) == 1
        assert dev["fs_type"][0].decode() == fs_type(disk).replace("ext2/ext3", "ext4")
        assert dev["shared"][0] == -1 and dev["mem_bytes"][0] > 0 and dev["free_bytes"][0] > 0
        gs = groups(f)
        assert [g.name for g in gs] == [f"/io/i{k:03d}" for k in range(10)]
        for g in gs:
            check_point(g, 2)
            assert g.attrs["status"] == "ok" and g.attrs["reps"] == 2
            assert g.attrs["file_bytes"] == (0 if g.attrs["test"] == "meta" else 2 << 20)
        apis = [(g.attrs["test"], g.attrs["api"], g.attrs["access"]) for g in gs]
        assert ("shared-write", "mpiio-coll", "shared-file") in apis and ("hdf5", "hdf5", "file-per-process") in apis
        assert "fsync" in gs[-1].attrs["note"]
        assert gs[2].attrs["direct"] == 1 and gs[2].attrs["sync"] == "o_direct+fdatasync"
        # The cold sequential reads that succeeded: the report's storage ceiling.
        cold_reads = sum(g.attrs["test"] == "read" and g.attrs["cold"] == 1 for g in gs)
        assert f["ceilings"].attrs["storage_measured"] == cold_reads
    assert leftovers(disk) == []


@pytest.mark.parametrize("np_", [1, 3, 4])
def test_rank_counts(disk, np_):
    out = disk / "n.h5"
    r = run_wb(np_, "io", "--dir", str(disk), "--tests", "write,read,shared-read", *QUICK, "-o", str(out), timeout=180)
    assert r.returncode == 0, r.stderr
    with h5py.File(out) as f:
        for g in groups(f):
            check_point(g, np_)
            assert g.attrs["status"] == "ok"
    assert leftovers(disk) == []


def test_default_folder_is_the_results_folder(disk):
    out = disk / "sub" / "d.h5"
    out.parent.mkdir()
    r = run_wb(1, "io", "--tests", "write", *QUICK, "-o", str(out))
    assert r.returncode == 0, r.stderr
    with h5py.File(out) as f:
        assert f["io"].attrs["dirs"] == str(out.parent)


def faulty(disk: Path, out: Path, tests: str, switch: str, value: str, *more: str) -> subprocess.CompletedProcess:
    """io on 2 ranks of the fault build with one WB_FAULT_IO_* switch set."""
    if not FAULTS_BIN.exists():
        pytest.skip(f"{FAULTS_BIN} is missing (make build/wulfbench-faults)")
    return run_faults(2, "io", "--dir", str(disk), "--tests", tests, *QUICK, *more, "-o", str(out),
                      env={switch: value})


def test_a_read_of_other_bytes_names_rank_file_and_offset(disk):
    out = disk / "v.h5"
    r = faulty(disk, out, "read,write", "WB_FAULT_IO_CORRUPT", "1")
    assert r.returncode == 3, r.stderr
    line = next(l for l in error_lines(r.stderr) if "error" in l)
    assert "rank 1 read other bytes" in line and "wb-io-seq-r1.dat" in line and "at offset" in line
    with h5py.File(out) as f:
        write, read = groups(f)
        assert read.attrs["status"].startswith("failed: rank 1 read other bytes")
        assert write.attrs["status"] == "ok"
    assert leftovers(disk) == []


def bad(disk: Path, *args: str, np_: int = 2) -> str:
    out = disk / "bad.h5"
    r = run_wb(np_, "io", *args, *QUICK[:2], "-o", str(out))
    lines = error_lines(r.stderr)
    assert r.returncode == 2, (r.stdout, r.stderr)
    assert len(lines) == 1, lines
    assert not out.exists() and not Path(str(out) + ".partial").exists()
    assert leftovers(disk) == []
    return lines[0]


def test_bad_input_lines(disk):
    assert "no such folder" in bad(disk, "--dir", str(disk / "nope"))
    (disk / "plain").write_text("x")
    assert "not a folder" in bad(disk, "--dir", str(disk / "plain"))
    assert "a size of 0" in bad(disk, "--dir", str(disk), "--size", "0")
    assert "negative" in bad(disk, "--dir", str(disk), "--size", "-5M")
    assert "above the most this build takes" in bad(disk, "--dir", str(disk), "--size", "2000G")
    free = shutil.disk_usage(disk).free
    line = bad(disk, "--dir", str(disk), "--size", f"{free // (1 << 30) // 2 + 2}G")
    assert "MB free" in line and "free some space" in line
    assert "given twice" in bad(disk, "--dir", str(disk), "--dir", str(disk))
    assert "unknown test" in bad(disk, "--dir", str(disk), "--tests", "write,bogus")
    assert "choose end, block or direct" in bad(disk, "--dir", str(disk), "--sync", "sometimes")


def test_read_only_folder(disk):
    ro = disk / "ro"
    ro.mkdir()
    if IS_ROOT:
        if subprocess.run(["mount", "--bind", str(ro), str(ro)]).returncode != 0:
            pytest.skip("cannot bind-mount as root here")
        try:
            subprocess.run(["mount", "-o", "remount,ro,bind", str(ro)], check=True)
            assert "read-only" in bad(disk, "--dir", str(ro))
        finally:
            subprocess.run(["umount", str(ro)])
    else:
        ro.chmod(0o555)
        assert "read-only" in bad(disk, "--dir", str(ro))


@pytest.fixture
def memory(disk):
    """A 64 MiB tmpfs mounted under disk (root only)."""
    if not IS_ROOT:
        pytest.skip("mounting a tmpfs needs root")
    mem = disk / "mem"
    mem.mkdir()
    subprocess.run(["mount", "-t", "tmpfs", "-o", "size=64m", "tmpfs", str(mem)], check=True)
    yield mem
    subprocess.run(["umount", str(mem)])


def test_memory_folder_refused_unless_allowed(disk, memory):
    line = bad(disk, "--dir", str(memory))
    assert "tmpfs" in line and "--allow-memory" in line
    out = disk / "m.h5"
    r = run_wb(1, "io", "--dir", str(memory), "--allow-memory", "--tests", "write", *QUICK, "-o", str(out))
    assert r.returncode == 0, r.stderr
    with h5py.File(out) as f:
        assert f["io/devices"][0]["kind"].decode() == "memory"
    assert leftovers(memory) == []


@pytest.fixture
def small_ext4(disk):
    """A loop-device ext4 of 24 MiB with few inodes, mounted under disk (root only)."""
    with loop_ext4(disk, 24, "-N", "32") as mnt:
        yield mnt


def test_full_disk_fails_the_point_and_the_run_goes_on(small_ext4, disk):
    out = disk / "full.h5"
    r = run_wb(2, "io", "--dir", str(small_ext4), "--tests", "write,meta,hdf5", *QUICK, "-o", str(out))
    assert r.returncode == 0, r.stderr
    assert any("point i001" in l and "No space left on device" in l for l in error_lines(r.stderr)), r.stderr
    assert "FAILED" in r.stdout
    with h5py.File(out) as f:
        assert f.attrs["status"] == "complete"
        # Every point counts, the failed one too; the device table is not a point.
        assert f.attrs["points_completed"] == 3 == f["io"].attrs["points"]
        write, meta, hdf5 = groups(f)
        assert write.attrs["status"] == "ok" and hdf5.attrs["status"] == "ok"
        assert meta.attrs["status"].startswith("failed: No space left on device")
        check_point(meta, 2)
    assert leftovers(small_ext4) == []
    assert sorted(p.name for p in small_ext4.iterdir()) == ["lost+found"]


def test_a_shared_folder_must_hold_every_node_s_files(disk, namespaces):
    """Two nodes (the second in its own UTS namespace) on one loop-device ext4: a size each node's files fit
    alone but not both nodes' together is refused before the run, with the free space and the sum."""
    with loop_ext4(disk, 32) as mnt:
        size = one_node_not_two_bytes(mnt)
        free_mb = shutil.disk_usage(mnt).free / 1e6
        out = disk / "s.h5"
        args = ["io", "--dir", str(mnt), "--tests", "write", "--reps", "1", "--warmup", "0", "-o", str(out)]
        r = run_nodes(mnt, (*args, "--size", f"{size >> 20}M"), ("wbnode2", None))
        lines = error_lines(r.stderr)
        assert r.returncode == 2 and len(lines) == 1, (r.returncode, r.stdout, r.stderr)
        need_mb = round(2 * io_need_bytes(1, 1, size) / 1e6)
        assert f"--dir {mnt}: one folder shared by 2 nodes" in lines[0] and f"need about {need_mb} MB" in lines[0]
        assert abs(float(lines[0].split(" MB free")[0].rsplit(" ", 1)[1]) - free_mb) <= 2, (lines[0], free_mb)
        assert not out.exists() and not Path(str(out) + ".partial").exists()
        assert leftovers(mnt) == []
        # A size both nodes' files fit: the run goes, on the folder it found shared.
        r = run_nodes(mnt, (*args, "--size", "1M"), ("wbnode2", None))
        assert r.returncode == 0, r.stderr
        with h5py.File(out) as f:
            assert list(f["io/devices"]["shared"]) == [1, 1]
            assert groups(f)[0].attrs["status"] == "ok"
        assert leftovers(mnt) == []


def test_orphans_of_a_killed_run_are_removed_and_nothing_else(disk):
    env = mpi_env()
    p = subprocess.Popen([str(BIN), "io", "--dir", str(disk), "--tests", "write", "--size", "256M", "--reps", "50",
                          "-o", str(disk / "k.h5")], env=env, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    try:
        deadline = time.monotonic() + 60
        while not list(disk.glob(".wulfbench-io-*/wb-io-*")) and time.monotonic() < deadline:
            time.sleep(0.05)
    finally:
        os.kill(p.pid, signal.SIGKILL)
        p.wait()
    orphan = next(disk.glob(".wulfbench-io-*"))
    assert list(orphan.glob("wb-io-*")) and (orphan / "marker").exists()
    # What is not a run folder of wulfbench io, or not its file, stays.
    foreign = disk / ".wulfbench-io-notours"
    foreign.mkdir()
    (foreign / "wb-io-x.dat").write_text("keep")
    (disk / "wb-io-top.dat").write_text("keep")
    mixed = disk / ".wulfbench-io-0123456789abcdef"
    mixed.mkdir()
    (mixed / "marker").write_text("wulfbench io run 0123456789abcdef host x pid 1\n")
    (mixed / "wb-io-seq-r0.dat").write_text("old")
    (mixed / "notes.txt").write_text("keep")
    r = run_wb(1, "io", "--dir", str(disk), "--tests", "write", *QUICK, "-o", str(disk / "k2.h5"))
    assert r.returncode == 0, r.stderr
    assert any("removed" in l and orphan.name in l for l in error_lines(r.stderr)), r.stderr
    assert not orphan.exists()
    assert (foreign / "wb-io-x.dat").read_text() == "keep" and (disk / "wb-io-top.dat").exists()
    assert sorted(p.name for p in mixed.iterdir()) == ["marker", "notes.txt"]


def test_o_direct_refused_falls_back_and_says_so(disk):
    out = disk / "nd.h5"
    r = faulty(disk, out, "randwrite,randread", "WB_FAULT_IO_NODIRECT", "1")
    assert r.returncode == 0, r.stderr
    assert "O_DIRECT refused" in r.stdout
    with h5py.File(out) as f:
        rw, rr = groups(f)
        for g in (rw, rr):
            check_point(g, 2)
            assert g.attrs["direct"] == 0 and "O_DIRECT refused" in g.attrs["direct_note"]
        assert rw.attrs["sync"] == "fdatasync-per-write"


@pytest.mark.parametrize("mode, sync, direct", [("end", "fdatasync", 0), ("block", "fdatasync-per-block", 0),
                                                ("direct", "o_direct+fdatasync", 1)])
def test_write_sync_modes(disk, mode, sync, direct):
    """--sync picks how the write test makes its data durable; the row and the point say which, and the
    other tests keep their own rule."""
    out = disk / f"s-{mode}.h5"
    r = run_wb(2, "io", "--dir", str(disk), "--tests", "write,read,shared-write", "--sync", mode, *QUICK,
               "-o", str(out), timeout=180)
    assert r.returncode == 0, r.stderr
    row = next(l.split() for l in r.stdout.splitlines() if l.startswith("  write"))
    assert row[-2:] == [sync, "ok"], row
    with h5py.File(out) as f:
        gs = {(g.attrs["test"], g.attrs["api"]): g for g in groups(f)}
        w = gs["write", "posix"]
        check_point(w, 2)
        assert w.attrs["sync"] == sync and w.attrs["direct"] == direct and w.attrs["status"] == "ok"
        assert (w.attrs["direct_note"] == "") == bool(direct)
        assert gs["read", "posix"].attrs["status"] == "ok"
        assert gs["shared-write", "mpiio-indep"].attrs["sync"] == "fsync"
    assert leftovers(disk) == []


def test_direct_writes_fall_back_and_say_why(disk):
    """A folder that refuses O_DIRECT, and calls that are not a multiple of its alignment: buffered, with
    one fdatasync at the end, and the row's note says why."""
    out = disk / "nd-w.h5"
    r = faulty(disk, out, "write", "WB_FAULT_IO_NODIRECT", "1", "--sync", "direct")
    assert r.returncode == 0, r.stderr
    assert "# write: O_DIRECT refused" in r.stdout and "one fdatasync at the end" in r.stdout
    with h5py.File(out) as f:
        (w,) = groups(f)
        assert w.attrs["direct"] == 0 and w.attrs["sync"] == "fdatasync" and w.attrs["status"] == "ok"
        assert "O_DIRECT refused" in w.attrs["direct_note"]
    out = disk / "odd.h5"
    r = run_wb(2, "io", "--dir", str(disk), "--tests", "write", "--sync", "direct", "--size", "1000000",
               "--reps", "1", "--warmup", "0", "-o", str(out), timeout=120)
    assert r.returncode == 0, r.stderr
    with h5py.File(out) as f:
        (w,) = groups(f)
        assert w.attrs["direct"] == 0 and w.attrs["status"] == "ok" and w.attrs["file_bytes"] == 1000000
        assert "needs calls of a multiple of" in w.attrs["direct_note"], w.attrs["direct_note"]
    assert leftovers(disk) == []


def test_timeout_keeps_the_points_before_it(disk):
    out = disk / "t.h5"
    # Sized by time, not by --size: each of the 10 points aims at 0.8 s on any machine, so the run
    # takes about 8 s, past the 4 s deadline, with the first points done before it.
    r = run_wb(2, "io", "--dir", str(disk), "--tests", "all", "--time", "0.8", "--reps", "2", "--warmup", "0",
               "--timeout", "4", "-o", str(out))
    assert r.returncode == 4, r.stderr
    assert any("--timeout" in l for l in error_lines(r.stderr)), r.stderr
    with h5py.File(out) as f:
        assert f.attrs["status"] == "timeout"
        gs = groups(f)
        assert 0 < len(gs) < 10 and f["io"].attrs["points"] == len(gs)
        for g in gs:
            check_point(g, 2)
    assert leftovers(disk) == []


def test_a_read_that_never_returns_ends_at_the_watchdog(disk):
    """A rank blocked in a read (a folder's server gone) ends the run after --stall-timeout with exit 4,
    the points before it kept; the next run removes the files it left."""
    out = disk / "h.h5"
    t0 = time.monotonic()
    r = faulty(disk, out, "write,read", "WB_FAULT_IO_HANG", "1", "--stall-timeout", "3")
    assert r.returncode == 4, r.stderr
    assert time.monotonic() - t0 < 40
    line = next(l for l in error_lines(r.stderr) if "no progress" in l)
    # The line names the rank and node that stopped, and what it was doing on which folder.
    assert f"rank 1 ({os.uname().nodename})" in line and f"during io read on {disk}" in line, line
    with h5py.File(out) as f:
        assert f.attrs["status"] == "timeout"
        (write,) = groups(f)
        assert write.attrs["test"] == "write" and write.attrs["status"] == "ok"
    assert leftovers(disk)
    r = run_wb(1, "io", "--dir", str(disk), "--tests", "meta", *QUICK, "-o", str(disk / "h2.h5"))
    assert r.returncode == 0 and leftovers(disk) == [], r.stderr


def test_suite_skips_io_on_a_memory_results_folder(memory):
    out = memory / "s.h5"
    r = run_wb(1, "suite", "--reps", "1", "--warmup", "0", "-o", str(out), timeout=300)
    assert r.returncode == 0, r.stderr
    assert "# io: skipped: --dir" in r.stdout and "tmpfs" in r.stdout
    with h5py.File(out) as f:
        assert "io" not in f
    assert leftovers(memory) == []
