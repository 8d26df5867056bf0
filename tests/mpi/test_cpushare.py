"""cpu_share: each rank's CPU time over its wall time per repetition, checked against a core that
is really shared (a busy loop pinned beside the run) and a run that has its cores to itself."""
from __future__ import annotations

import os
import shutil
import sys
import subprocess
from pathlib import Path

import h5py
import numpy as np
import pytest

from conftest import BIN, ROOT, MachineLoad, mpi_env, run_wb

sys.path.insert(0, str(ROOT))
from analysis.derive import cpushare  # noqa: E402

PYTHON = "/usr/bin/python3"


def report_warnings(h5: Path, tmp_path: Path) -> str:
    out = tmp_path / "report"
    r = subprocess.run([PYTHON, "-m", "analysis.report", str(h5), "-o", str(out), "-q"], cwd=ROOT,
                       capture_output=True, text=True, timeout=120)
    assert r.returncode == 0, r.stderr
    return (out / "summary.md").read_text()


def test_every_rank_records_its_cpu_time_and_share_and_the_baseline_too(tmp_path):
    out = tmp_path / "c.h5"
    with MachineLoad(cores=2) as load:
        r = run_wb(2, "fft", "--paired-baseline", "--sweep", "files", "--files", "32", "--reps", "7", "-q",
                   "-o", str(out), timeout=300)
    assert r.returncode == 0, r.stderr
    with h5py.File(out) as f:
        g = f["fft/p000"]
        cpu, share, total = g["t_cpu"][()], g["cpu_share"][()], g["t_total"][()]
        assert cpu.shape == share.shape == (7, 2)
        assert g["t_cpu"].attrs["units"] == "s" and g["cpu_share"].attrs["units"] == "1"
        # A thread cannot run longer than the wall clock it ran in (1 % for the clocks' rounding).
        assert np.all(share > 0) and np.all(share <= 1.01)
        assert np.all(cpu[:, 0] <= 1.01 * total)
        b = g["baseline"]
        assert b["t_cpu"].shape == b["cpu_share"].shape == (7, 1)
        assert np.all(b["t_cpu"][()][:, 0] <= 1.01 * b["t_total"][()])
        shares, base_shares = np.median(share, axis=0), np.median(b["cpu_share"][()])
    # Another job's share of the cores is what cpu_share measures: the shares say "alone" only when
    # the machine was free.
    if (why := load.busy()):
        pytest.skip(f"{why}; medians of cpu_share {shares}, baseline {base_shares:.2f}")
    # Two ranks on two cores, each polling while it waits: each ran nearly all of its time, so the
    # report, which warns below SHARE_WARN, has nothing to say.
    assert np.all(shares >= cpushare.SHARE_WARN), share
    assert base_shares >= cpushare.SHARE_WARN
    assert "ran on its core only" not in report_warnings(out, tmp_path)


def pinned_fft(out: Path, cpu: str) -> dict[str, float]:
    """One process (no launcher) pinned to CPU cpu: 64 files, about 25 ms a repetition, many of the
    scheduler's slices, so that two busy threads on one core split each repetition instead of one
    repetition running whole and the next waiting. Medians of t_total, t_cpu and cpu_share."""
    r = subprocess.run(["taskset", "-c", cpu, str(BIN), "fft", "--baseline", "--sweep", "files", "--files", "64",
                        "--reps", "9", "-q", "-o", str(out)], capture_output=True, text=True, timeout=300,
                       env=mpi_env(), stdin=subprocess.DEVNULL)
    assert r.returncode == 0, r.stderr
    with h5py.File(out) as f:
        g = f["fft/p000"]
        return {k: float(np.median(g[k][()])) for k in ("t_total", "t_cpu", "cpu_share")}


@pytest.mark.skipif(not shutil.which("taskset"), reason="needs taskset")
def test_a_core_shared_with_a_busy_loop_reads_about_half_and_the_report_says_why(tmp_path):
    cpu = str(max(os.sched_getaffinity(0)))
    # The load on that core alone counts; the loop is waited for inside the block, so it is this test's own.
    with MachineLoad(cores=1, cpus={int(cpu)}) as load:
        alone = pinned_fft(tmp_path / "a.h5", cpu)
        hog = subprocess.Popen(["taskset", "-c", cpu, "sh", "-c", "while :; do :; done"])
        try:
            shared = pinned_fft(tmp_path / "s.h5", cpu)
        finally:
            hog.kill()
            hog.wait()
    text = report_warnings(tmp_path / "s.h5", tmp_path)
    assert "rank 0" in text and "ran on its core only" in text and "steal" in text, text
    # Alone and beside the loop are told apart only when nothing else took a share of that core.
    if (why := load.busy()):
        pytest.skip(f"{why}; alone {alone}, beside the loop {shared}")
    assert alone["cpu_share"] >= cpushare.SHARE_WARN, alone
    assert 0.3 <= shared["cpu_share"] <= 0.7, shared
    # The wall time grew by about the share the loop took; the CPU time is still what the code costs.
    assert shared["t_total"] >= 1.4 * alone["t_total"], (alone, shared)
    assert 0.7 <= shared["t_cpu"] / alone["t_cpu"] <= 1.4, (alone, shared)
    # The report warns below SHARE_WARN, which the run alone reached.
    assert "ran on its core only" not in report_warnings(tmp_path / "a.h5", tmp_path / "alone")
