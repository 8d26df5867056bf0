"""Ceilings: every run records the machines it ran on (/hosts' boot_id, cgroup quota, usable cores
and memcpy; /ceilings/machines), fft's GFLOPS is the flops over the span of every rank's
transforms, held to cores used x one core's rate, and 16 ranks on this machine's cores go through
fft, transfer, load and dfft without one rate above its ceiling becoming a finding."""
from __future__ import annotations

import csv
import os
import re
import subprocess
import sys
from pathlib import Path

import h5py
import numpy as np
import pytest

from conftest import FAULTS_BIN, ROOT, launcher, mpi_env, needs_fftw_mpi, run_wb

PYTHON = "/usr/bin/python3"


def text(v) -> str:
    return v.decode() if isinstance(v, bytes) else str(v)


def test_the_ceilings_and_the_aggregate_rate_are_recorded(tmp_path):
    out = tmp_path / "c.h5"
    r = run_wb(2, "fft", "--sweep", "files", "--files", "8", "--reps", "3", "--root-computes", "yes", "-o", str(out))
    assert r.returncode == 0, r.stderr
    boot = Path("/proc/sys/kernel/random/boot_id").read_text().strip()
    with h5py.File(out) as f:
        hosts = f["hosts"][()]
        assert [text(b) for b in hosts["boot_id"]] == [boot, boot]
        usable = hosts["cores_usable"]
        assert np.all(usable >= 1) and np.all(usable <= hosts["cores"]) and np.all(usable <= os.cpu_count())
        # One memcpy per node, by its first rank.
        assert np.isfinite(hosts["copy_Bps"][0]) and hosts["copy_Bps"][0] > 1e8 and np.isnan(hosts["copy_Bps"][1])
        m = f["ceilings/machines"][()]
        assert len(m) == 1 and m["ranks"][0] == 2 and m["nodes"][0] == 1 and text(m["boot_id"][0]) == boot
        assert m["cores_usable"][0] == usable[0]
        assert f["ceilings"].attrs["oversubscribed_machines"] == int(m["ranks"][0] > m["cores_usable"][0])
        g = f["fft/p000"]
        a = dict(g.attrs)
        flops = g["flops"][()]
        span, t_fft = g["t_fft_span"][()], g["t_fft"][()]
        # Every rank's transforms lie within the span: it is at least the longest rank's t_fft.
        assert np.all(span >= t_fft.max(axis=1)), (span, t_fft)
        assert a["gflops"] == pytest.approx(flops.sum() / np.median(span) / 1e9, rel=1e-9)
        assert a["cores_used"] == min(2, int(m["cores_usable"][0]))
        assert a["gflops_ceiling"] == pytest.approx(a["cores_used"] * a["core_gflops"], rel=1e-9)
        # One core's rate is the best rank's own, so no rank's own rate passes it.
        own = flops / np.median(t_fft, axis=0) / 1e9
        assert a["core_gflops"] == pytest.approx(own.max(), rel=1e-9)
    row = next(l for l in r.stdout.splitlines() if re.match(r"^0\s+files", l))
    assert float(row.split()[-2]) == pytest.approx(a["gflops"], abs=0.006)
    assert f"ceiling: {a['gflops_ceiling']:.1f} GFLOPS" in r.stdout


def fake_quota(root: Path) -> Path:
    """A cgroup v2 tree that allows half a CPU."""
    (root / "proc/self").mkdir(parents=True)
    (root / "proc/self/cgroup").write_text("0::/wb.slice\n")
    (root / "sys/fs/cgroup/wb.slice").mkdir(parents=True)
    (root / "sys/fs/cgroup/cpu.max").write_text("max 100000\n")
    (root / "sys/fs/cgroup/wb.slice/cpu.max").write_text("50000 100000\n")
    return root


def test_a_cgroup_quota_makes_two_ranks_oversubscribed(tmp_path):
    if not FAULTS_BIN.exists():
        pytest.fail(f"{FAULTS_BIN} is missing: run make {FAULTS_BIN.relative_to(ROOT)}")
    out = tmp_path / "q.h5"
    env = {"WB_SYSFS_ROOT": str(fake_quota(tmp_path / "root"))}
    full = mpi_env() | env
    r = subprocess.run([*launcher(2, env), str(FAULTS_BIN), "fft", "--files", "2", "--reps", "2", "-o", str(out)],
                       capture_output=True, text=True, timeout=120, env=full, cwd=ROOT, stdin=subprocess.DEVNULL)
    assert r.returncode == 0, r.stderr
    first = r.stdout.splitlines()[0]
    assert first.startswith("# OVERSUBSCRIBED:") and "runs 2 ranks on 1 usable core" in first, r.stdout
    assert "a cgroup quota of 0.50 CPUs" in first
    with h5py.File(out) as f:
        assert np.all(f["hosts"]["cpu_quota"] == 0.5) and np.all(f["hosts"]["cores_usable"] == 1)
        assert f["ceilings"].attrs["oversubscribed_machines"] == 1


@needs_fftw_mpi
def test_an_oversubscribed_dfft_left_to_its_default_plans_with_estimate_and_says_why(tmp_path):
    if not FAULTS_BIN.exists():
        pytest.fail(f"{FAULTS_BIN} is missing: run make {FAULTS_BIN.relative_to(ROOT)}")
    quota = {"WB_SYSFS_ROOT": str(fake_quota(tmp_path / "root"))}

    def dfft(name: str, env: dict, *extra: str) -> tuple[str, str, str]:
        out = tmp_path / f"{name}.h5"
        r = subprocess.run([*launcher(2, env), str(FAULTS_BIN), "dfft", "--dims", "3", "--n", "32", "--reps", "1",
                            "-x", "0", "--power", "none", *extra, "-o", str(out)], capture_output=True, text=True,
                           timeout=120, env=mpi_env() | env, cwd=ROOT, stdin=subprocess.DEVNULL)
        assert r.returncode == 0, r.stderr
        with h5py.File(out) as f:
            return r.stdout, text(f["dfft/p000"].attrs["plan"]), text(f["dfft/p000"].attrs["plan_why"])

    # Two ranks on the half CPU the quota allows: measuring would time transposes taking turns.
    stdout, plan, why = dfft("auto", quota)
    assert plan == "estimate", stdout
    assert "not the default measure" in why and "runs 2 ranks on 1 usable core" in why and "--plan measure" in why
    assert ", plan estimate," in stdout and f"# plan: {why}" in stdout
    # Asked for, measure is kept.
    stdout, plan, why = dfft("asked", quota, "--plan", "measure")
    assert (plan, why) == ("measure", "") and "# plan:" not in stdout
    if (os.cpu_count() or 1) >= 2:
        # A core for each rank: the default stands.
        stdout, plan, why = dfft("roomy", {})
        assert (plan, why) == ("measure", ""), stdout


def ceilings_rows(report: Path) -> list[dict]:
    with open(report / "ceilings.csv", newline="") as fh:
        return list(csv.DictReader(fh))


def read_first(summary: str) -> list[str]:
    part = summary.split("## Read first", 1)[1].split("\n## ", 1)[0]
    return [line for line in part.splitlines() if line.startswith("- ")]


@needs_fftw_mpi
def test_sixteen_ranks_on_this_machine_hold_every_rate_to_its_ceiling(tmp_path):
    runs = tmp_path / "runs"
    runs.mkdir()
    cmds = {
        "fft": ("fft", "--sweep", "files", "--files", "4", "--reps", "3", "--power", "none"),
        "transfer": ("transfer", "--tests", "pingpong,bibw", "--sizes", "8,64k", "-i", "5"),
        "load": ("load", "--clients", "2", "--requests", "20", "--seconds", "0.5", "--power", "none"),
        "dfft": ("dfft", "--n", "1024", "--reps", "2", "--plan", "estimate", "--direction", "forward",
                 "--power", "none"),
    }
    crowded = (os.cpu_count() or 1) < 16
    # stdout holds each rate to its ceiling too: the line under each fft and dfft row, each p2p table.
    said = {"fft": "#      ceiling: ", "transfer": "#   ceiling: ", "dfft": "#      ceiling: MB/s/rank"}
    for name, args in cmds.items():
        r = run_wb(16, *args, "-o", str(runs / f"{name}.h5"), timeout=180)
        assert r.returncode == 0, (name, r.stderr)
        # Named before any figure: the first line of stdout.
        assert r.stdout.startswith("# OVERSUBSCRIBED:") == crowded, (name, r.stdout[:300])
        if name in said:
            lines = [l for l in r.stdout.splitlines() if l.startswith(said[name]) or "ABOVE THE CEILING" in l]
            assert lines, (name, r.stdout)
    report = tmp_path / "report"
    p = subprocess.run([PYTHON, "-m", "analysis.report", str(runs), "-o", str(report), "-q"], cwd=ROOT,
                       capture_output=True, text=True, timeout=300)
    assert p.returncode == 0, p.stderr
    rows = ceilings_rows(report)
    figures = {(r["run"], r["figure"]) for r in rows}
    assert {("fft", "GFLOPS"), ("fft", "kB/s"), ("dfft", "GFLOPS")} <= figures, figures
    assert any(run == "transfer" and fig.startswith("MB/s") for run, fig in figures), figures
    assert any(run == "fft" and fig.startswith("cpu_share") for run, fig in figures), figures
    for r in rows:
        value, ceiling = float(r["value"]), float(r["ceiling"]) if r["ceiling"] else float("nan")
        if not np.isfinite(ceiling):
            assert r["verdict"] == "no ceiling known" and r["bound"], r
        elif value > ceiling:
            assert r["verdict"].startswith(("ABOVE THE CEILING", "at the ceiling")), r
        else:
            assert r["verdict"].startswith("within"), r
    summary = (report / "summary.md").read_text()
    lines = read_first(summary)
    assert len(lines) <= 10, lines
    if crowded:
        assert "OVERSUBSCRIBED" in lines[0] and all(f"**{n}**" in lines[0] for n in cmds), lines[0]
    # The headline's GFLOPS is the file's, and within its ceiling: a figure above it is never a finding.
    with h5py.File(runs / "fft.h5") as f:
        a = f["fft/p000"].attrs
        gflops, ceiling, above = a["gflops"], a["gflops_ceiling"], a["gflops_above_ceiling"]
    findings = summary.split("## Findings", 1)[1].split("\n## ", 1)[0]
    if above:
        assert "GFLOPS" not in findings and "above the ceiling" in summary
    else:
        m = re.search(r"peak ([\d.]+) GFLOPS", findings)
        assert m and float(m.group(1)) == pytest.approx(gflops, rel=0.01), findings
        assert float(m.group(1)) <= ceiling * 1.01
