"""Run-to-run comparison on synthetic files with a known ratio, and the CLI and
make target as a user runs them."""

from __future__ import annotations

import csv
import dataclasses
import os
import subprocess

import h5py
import numpy as np
import pytest

import fixtures
from analysis.commands import compare
from analysis import derive
from analysis.derive import stats
from analysis.read.reader import open_run
from conftest import PYTHON, ROOT

CFG = dataclasses.replace(fixtures.PI, unstable_point=None, transfer=False, load=False)


def _pair(tmp_path, factor: float, drop: str | None = None):
    """A.h5 and B.h5: B is A with every t_total times `factor` (and without point `drop`)."""
    a = fixtures.write_run(tmp_path / "A.h5", dataclasses.replace(CFG, label="monday"))
    b = tmp_path / "B.h5"
    b.write_bytes(a.read_bytes())
    with h5py.File(b, "a") as f:
        f.attrs["label"] = "tuesday"
        for pid in f["fft"]:
            f[f"fft/{pid}/t_total"][...] = f[f"fft/{pid}/t_total"][()] * factor
        if drop:
            del f[f"fft/{drop}"]
    return a, b


def test_known_ratio(tmp_path):
    a, b = _pair(tmp_path, 1.5, drop="p003")
    ra, rb = open_run(a), open_run(b)
    ra.name, rb.name = "monday", "tuesday"
    rows, notes = compare.compare_runs(ra, rb)
    npoints = len(fixtures.SIZES_S) + len(fixtures.FILES_N)
    assert len(rows) == npoints - 1 and "p003" not in {r.id_a for r in rows}
    assert notes == ["1 point(s) only in A and 0 only in B are not compared"]
    for r in rows:
        assert r.ratio == pytest.approx(1.5, rel=1e-12)
        assert r.ci_low <= 1.5 <= r.ci_high and r.ci_low > 1
        assert r.significant and r.faster == "A"
        assert r.verdict("monday", "tuesday") == "monday faster, 1.5x"


def test_same_run_is_not_significant(tmp_path):
    a, _ = _pair(tmp_path, 1.0)
    run = open_run(a)
    rows, _ = compare.compare_runs(run, open_run(a))
    assert all(r.ratio == pytest.approx(1.0) and not r.significant for r in rows)
    assert all(r.verdict("A", "B") == "no significant difference" for r in rows)


def test_ratio_interval_is_the_cross_run_rule():
    rng = np.random.default_rng(3)
    x = rng.lognormal(0, 0.05, 200)
    ratio, lo, hi = derive.ratio_ci([2 * x], x)
    assert ratio == pytest.approx(2.0) and lo < 2.0 < hi and hi - lo < 0.1
    _m, x_lo, x_hi, _c = stats.median_ci(x)
    assert (lo, hi) == (pytest.approx(2 * x_lo / x_hi), pytest.approx(2 * x_hi / x_lo))
    assert all(np.isnan(v) for v in derive.ratio_ci([np.array([])], x))
    assert np.isnan(derive.ratio_ci([x], np.zeros(3))[0])


def _cli(*args, env=None):
    env = dict(os.environ, PYTHONDONTWRITEBYTECODE="1", **(env or {}))
    return subprocess.run([PYTHON, "-m", "analysis.compare", *args], cwd=ROOT, env=env,
                          capture_output=True, text=True, timeout=120)


def test_cli_prints_writes_and_says_runs_are_separate(tmp_path):
    a, b = _pair(tmp_path, 0.5)
    out = tmp_path / "cmp"
    proc = _cli(str(a), str(b), "-o", str(out))
    assert proc.returncode == 0, proc.stderr
    assert "Separate runs" in proc.stdout and "distribution-free interval" in proc.stdout
    assert "tuesday faster, 2x" in proc.stdout
    with open(out / "compare.csv", newline="") as fh:
        rows = list(csv.DictReader(fh))
    assert len(rows) == len(fixtures.SIZES_S) + len(fixtures.FILES_N)
    assert all(float(r["ratio_b_over_a"]) == pytest.approx(0.5) and r["faster"] == "B"
               and r["significant"] == "1" for r in rows)
    page = (out / "compare.html").read_text(encoding="utf-8")
    assert "separate runs" in page and "monday" in page and page.count("<tr>") == len(rows) + 1


def test_cli_errors_and_help(tmp_path):
    a, _ = _pair(tmp_path, 1.0)
    assert _cli(str(a)).returncode == 2
    missing = _cli(str(a), str(tmp_path / "nope.h5"))
    assert missing.returncode == 1 and missing.stderr.startswith("compare: ")
    other = fixtures.write_run(tmp_path / "x.h5", dataclasses.replace(CFG, scenarios=()))
    assert _cli(str(a), str(other), "-o", str(tmp_path / "o")).returncode == 3
    helptext = _cli("--help").stdout
    for word in ("A.h5", "B.h5", "-o", "--output", "--quiet", "distribution-free", "separate runs",
                 "Exit status", "make compare"):
        assert word in helptext, word


def test_make_compare(tmp_path):
    a, b = _pair(tmp_path, 2.0)
    env = dict(os.environ, PYTHONDONTWRITEBYTECODE="1")
    proc = subprocess.run(["make", "-s", "compare", f"A={a}", f"B={b}", f"OUT={tmp_path / 'm'}"],
                          cwd=ROOT, env=env, capture_output=True, text=True, timeout=120)
    assert proc.returncode == 0, proc.stderr
    assert (tmp_path / "m" / "compare.csv").is_file() and "monday faster, 2x" in proc.stdout
    bad = subprocess.run(["make", "-s", "compare"], cwd=ROOT, env=env, capture_output=True,
                         text=True, timeout=60)
    assert bad.returncode != 0 and "make compare A=" in bad.stderr


def test_prog_name_from_wb_prog():
    for module, name in (("analysis.report", "wulfbench-report"),
                         ("analysis.compare", "wulfbench-compare")):
        env = dict(os.environ, WB_PROG=name, PYTHONDONTWRITEBYTECODE="1")
        proc = subprocess.run([PYTHON, "-m", module, "--help"], cwd=ROOT, env=env,
                              capture_output=True, text=True, timeout=120)
        assert proc.returncode == 0 and proc.stdout.startswith(f"usage: {name} ")
        bad = subprocess.run([PYTHON, "-m", module, "--frobnicate"], cwd=ROOT, env=env,
                             capture_output=True, text=True, timeout=120)
        assert bad.returncode == 2 and bad.stderr.startswith(f"{name}: ")


def test_a_different_fftw_plan_is_named(tmp_path):
    """Two runs of the real program: the same file against itself names no plan; B with another plan
    in one point (as a second process's FFTW_MEASURE may pick) gets one note naming the cause."""
    a = tmp_path / "A.h5"
    r = subprocess.run([str(ROOT / "build" / "wulfbench"), "fft", "--baseline", "--sweep", "files", "--files", "1:2",
                        "--reps", "2", "--plan", "estimate", "-q", "-o", str(a)], capture_output=True, text=True,
                       timeout=300)
    assert r.returncode == 0, r.stderr
    with h5py.File(a) as f:
        plans = [f[f"fft/{p}"].attrs["fftw_plan"] for p in f["fft"]]
    assert all(p.startswith("n=4096: (") for p in plans), plans
    b = tmp_path / "B.h5"
    b.write_bytes(a.read_bytes())
    _, notes = compare.compare_runs(open_run(a), open_run(b))
    assert not any("FFTW plans" in n for n in notes), notes
    with h5py.File(b, "a") as f:
        f["fft/p001"].attrs["fftw_plan"] = "n=4096: (rdft2-rank0-tiled)"
    _, notes = compare.compare_runs(open_run(a), open_run(b))
    assert [n for n in notes if "FFTW plans" in n] == [
        "1 compared point(s) ran different FFTW plans in A and B (first: files 2 x 5 s, stft single N=4096): the "
        "planner timed its candidates anew in each run; run both with one --wisdom FILE to compare the machines, "
        "not the plans"]
