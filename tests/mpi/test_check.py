"""`wulfbench check`: a healthy run exits 0 with one row per node; a fake Pi sysfs tree (fault build,
WB_SYSFS_ROOT) with powersave and under-voltage gives named warnings, and --strict turns them into exit 1;
a stand-in for another build fails the version fact; a rank stopped during the exchange is named and the
job ends with exit 1 inside the timeout; bad options exit 2; /hosts carries the new columns and fft points
t_plan; study.sh stops before any result file when check fails. The emulated-cluster cases are in
tests/cluster/check.sh."""
from __future__ import annotations

import os
import re
import subprocess
import sys
import time
from pathlib import Path

import h5py
import pytest

from conftest import BIN, FAULTS_BIN, MPI_IMPL, MPI_LIBRARY_PREFIX, ROOT, error_lines, mpi_env, run_faults, run_wb

sys.path.insert(0, str(ROOT))
from analysis.derive import readiness  # noqa: E402

VERDICT = re.compile(r"^(ok|warn|fail)\s+(\S+)\s+(.*)$")


def verdicts(stdout: str) -> dict[str, list[tuple[str, str]]]:
    """fact -> [(level, text)] from check's verdict lines."""
    out: dict[str, list[tuple[str, str]]] = {}
    for line in stdout.splitlines():
        m = VERDICT.match(line)
        if m:
            out.setdefault(m.group(2), []).append((m.group(1), m.group(3)))
    return out


def node_rows(stdout: str) -> list[list[str]]:
    return [l.split() for l in stdout.splitlines() if re.match(r"^\d+\s", l)]


def fake_pi(root: Path, governor: str = "powersave", throttled: str = "50005") -> Path:
    """A Raspberry Pi 3B+ as sysfs shows it, under root."""
    files = {
        "sys/devices/system/cpu/cpu0/cpufreq/scaling_governor": governor,
        "sys/devices/system/cpu/cpu0/cpufreq/scaling_cur_freq": "600000",
        "sys/devices/system/cpu/cpu0/cpufreq/cpuinfo_min_freq": "600000",
        "sys/devices/system/cpu/cpu0/cpufreq/cpuinfo_max_freq": "1400000",
        "sys/devices/platform/soc/soc:firmware/get_throttled": throttled,
        "sys/class/thermal/thermal_zone0/temp": "62000",
    }
    for rel, text in files.items():
        (root / rel).parent.mkdir(parents=True, exist_ok=True)
        (root / rel).write_text(text + "\n")
    model = root / "sys/firmware/devicetree/base/model"
    model.parent.mkdir(parents=True, exist_ok=True)
    model.write_bytes(b"Raspberry Pi 3 Model B Plus Rev 1.3\0")
    return root


def test_healthy_run_exits_0_with_a_row_per_node_and_every_fact_judged(tmp_path):
    r = run_wb(3, "check", "--results", str(tmp_path / "res"), timeout=60)
    assert r.returncode == 0, r.stdout + r.stderr
    rows = node_rows(r.stdout)
    assert len(rows) == 1 and rows[0][2] == "3", r.stdout  # one node, three ranks
    v = verdicts(r.stdout)
    for fact in ("version", "git_rev", "mpi", "fftw", "hdf5", "governor", "throttle", "memory", "clock",
                 "network", "exchange", "results"):
        assert fact in v, (fact, r.stdout)
    assert not [f for f, items in v.items() for lvl, _ in items if lvl == "fail"], r.stdout
    assert "2 shifted rounds" in v["exchange"][0][1]
    assert not (tmp_path / "res").exists()  # check makes no result folder or file


def test_powersave_and_under_voltage_warn_by_name_and_strict_fails(tmp_path):
    env = {"WB_SYSFS_ROOT": str(fake_pi(tmp_path / "pi"))}
    r = run_faults(2, "check", env=env)
    assert r.returncode == 0, r.stdout + r.stderr
    v = verdicts(r.stdout)
    assert v["governor"][0][0] == "warn" and "powersave" in v["governor"][0][1], r.stdout
    assert "scaling_governor" in r.stdout  # the fix names the command
    assert v["throttle"][0][0] == "warn" and "under-voltage now" in v["throttle"][0][1], r.stdout
    assert "under-voltage since boot" in v["throttle"][0][1]
    assert "Raspberry Pi 3 Model" in r.stdout and "600/1400" in r.stdout
    s = run_faults(2, "check", "--strict", env=env)
    assert s.returncode == 1, s.stdout + s.stderr
    assert any("--strict" in l for l in error_lines(s.stderr)), s.stderr


def test_a_fake_meminfo_reaches_the_memory_and_swap_facts(tmp_path):
    """/proc/meminfo is read under WB_SYSFS_ROOT like /sys: a node short of memory and swapping."""
    root = fake_pi(tmp_path / "pi", governor="performance", throttled="0")
    (root / "proc").mkdir()
    (root / "proc/meminfo").write_text("MemTotal:        1000000 kB\nMemAvailable:       2048 kB\n"
                                       "SwapCached:           0 kB\nSwapTotal:       1048576 kB\n"
                                       "SwapFree:         524288 kB\n")
    r = run_faults(2, "check", env={"WB_SYSFS_ROOT": str(root)})
    assert r.returncode == 1, r.stdout + r.stderr
    v = verdicts(r.stdout)
    assert v["memory"][0][0] == "fail" and "has 2 MiB free" in v["memory"][0][1], r.stdout
    assert v["swap"][0][0] == "warn", r.stdout
    row = node_rows(r.stdout)[0]
    assert "512" in row, r.stdout  # MiB of swap in use, in the node's row


def test_another_build_on_one_rank_fails_the_version_fact():
    r = run_faults(2, "check", env={"WB_FAULT_GIT_REV": "1:0ldb01d"})
    assert r.returncode == 1, r.stdout + r.stderr
    level, text = verdicts(r.stdout)["git_rev"][0]
    assert level == "fail" and "'0ldb01d' on rank 1" in text, r.stdout


def test_too_little_memory_and_an_unwritable_folder_fail(tmp_path):
    r = run_wb(2, "check", "--memory", "100000G", "-o", str(tmp_path / "missing" / "x.h5"), timeout=60)
    assert r.returncode == 1, r.stdout + r.stderr
    v = verdicts(r.stdout)
    assert v["memory"][0][0] == "fail" and "needs" in v["memory"][0][1], r.stdout
    assert v["results"][0][0] == "fail" and "not writable" in v["results"][0][1], r.stdout


def test_a_rank_stopped_during_the_exchange_is_named_and_the_job_ends_within_the_timeout():
    t0 = time.monotonic()
    r = run_faults(3, "check", "--timeout", "5", env={"WB_FAULT_CHECK_STOP_RANK": "2"}, timeout=40)
    took = time.monotonic() - t0
    if MPI_IMPL == "openmpi":
        assert r.returncode == 1, r.stdout + r.stderr
    else:
        assert r.returncode != 0, r.stdout + r.stderr
    v = verdicts(r.stdout)
    assert "answer" in v, r.stdout + r.stderr
    level, text = v["answer"][0]
    assert level == "fail" and "rank 2" in text and "during the exchange" in text, r.stdout
    assert any("no answer during the exchange within 5 s from rank 2" in l for l in error_lines(r.stderr)), r.stderr
    # 5 s of check, the launch and the abort; the watchdog's own limit would be later still.
    assert took < 15, took


def test_a_rank_that_never_sends_its_facts_is_named_after_the_timeout():
    t0 = time.monotonic()
    r = run_faults(3, "check", "--timeout", "4", env={"WB_FAULT_CHECK_STOP_RANK": "1:facts"}, timeout=40)
    took = time.monotonic() - t0
    assert r.returncode != 0 and (MPI_IMPL != "openmpi" or r.returncode == 1), r.stdout + r.stderr
    v = verdicts(r.stdout)
    assert "answer" in v, r.stdout + r.stderr
    level, text = v["answer"][0]
    assert level == "fail" and "with its facts within 4 s from rank 1" in text, r.stdout
    assert "2 ranks on 1 node answered (of 3)" in r.stdout
    assert took < 15, took


@pytest.mark.parametrize("args, want", [
    (("--bogus",), "unknown option '--bogus'"),
    (("--timeout", "0"), "--timeout"),
    (("--memory", "lots"), "--memory"),
    (("--wisdom", ""), "--wisdom"),
    (("extra",), "unexpected argument 'extra'"),
])
def test_bad_options_exit_2_with_one_line(args, want):
    r = run_wb(2, "check", *args, timeout=60)
    assert r.returncode == 2, r.stdout + r.stderr
    lines = error_lines(r.stderr)
    assert len(lines) == 1 and want in lines[0], r.stderr
    assert r.stdout == ""


def test_hosts_records_the_facts_and_fft_points_their_planning_time(tmp_path):
    out = tmp_path / "ps.h5"
    env = {"WB_SYSFS_ROOT": str(fake_pi(tmp_path / "pi"))}
    r = run_faults(2, "fft", "--sweep", "sizes", "--seconds", "0.2", "--reps", "1", "-q", "-o", str(out), env=env)
    assert r.returncode == 0, r.stdout + r.stderr
    with h5py.File(out, "r") as f:
        hosts = f["hosts"][()]
        for col in ("governor", "freq_min_mhz", "freq_max_mhz", "iface", "iface_kind", "link_mbps", "mtu",
                    "git_rev", "mpi_library", "fftw_version", "hdf5_version", "model"):
            assert col in hosts.dtype.names, col
        h = hosts[1]
        assert h["governor"] == b"powersave" and h["freq_min_mhz"] == 600 and h["freq_max_mhz"] == 1400
        assert h["model"] == b"Raspberry Pi 3 Model B Plus Rev 1.3"
        assert h["iface"] == b"lo" and h["iface_kind"] == b"loopback"  # rank 0 is on this host
        assert h["mpi_library"].decode().startswith(MPI_LIBRARY_PREFIX)
        assert h["git_rev"] and h["fftw_version"].startswith(b"fftw-") and h["hdf5_version"] == f.attrs["hdf5_version"].encode()
        t_plan = f["fft/p000/t_plan"]
        assert t_plan.shape == (2,) and t_plan.attrs["units"] in ("s", b"s") and (t_plan[()] >= 0).all()
    warnings = readiness.run_warnings(out)
    assert any("governor not 'performance'" in w and "powersave" in w for w in warnings), warnings
    assert readiness.planning_line(out).startswith("p000: FFTW planning took")


@pytest.mark.skipif(MPI_IMPL != "openmpi", reason="study.sh launches with Open MPI's mpirun")
def test_study_stops_before_any_result_file_when_check_fails(tmp_path):
    if not FAULTS_BIN.exists():
        pytest.skip(f"{FAULTS_BIN} is built by make test")
    env = mpi_env()
    env.update({"WB_SYSFS_ROOT": str(fake_pi(tmp_path / "pi")), "WB_CHECK_ARGS": "--strict",
                "WB_MPIRUN_ARGS": "--oversubscribe -x WB_SYSFS_ROOT"})
    results = tmp_path / "results"
    r = subprocess.run([str(ROOT / "jobs/mpirun/study.sh"), "-H", str(ROOT / "hostfiles/localhost"), "-n", "2",
                        "-b", str(FAULTS_BIN), "--results", str(results), "--steps", "sizes"],
                       capture_output=True, text=True, timeout=120, env=env, stdin=subprocess.DEVNULL)
    assert r.returncode == 1, r.stdout + r.stderr
    assert "warn  governor" in r.stdout and "wulfbench check failed" in r.stderr, r.stdout + r.stderr
    assert not results.exists()
