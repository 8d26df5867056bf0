"""The measured scaling figure: runs of the same points at several counts,
real (build/wulfbench at np 1, 2, 3) and synthetic (known speedups)."""

from __future__ import annotations

import csv
import dataclasses

import h5py
import numpy as np
import pytest

import fixtures
from analysis.commands import scaling as scaling_command
from analysis.derive import scaling
from analysis.read.reader import open_run
from analysis.read.runs import name_runs
from conftest import png_size, run_cli

CSV_MUST = ("ranks", "nodes", "point", "speedup", "speedup_ci_low", "speedup_ci_high",
            "efficiency")


def read_csv(path):
    with open(path, newline="", encoding="utf-8") as fh:
        return list(csv.DictReader(fh))


@pytest.mark.skipif(not fixtures.WULFBENCH.is_file(), reason="build/wulfbench is not built yet")
def test_real_runs_at_np_1_2_3_give_three_rank_counts(tmp_path):
    res = tmp_path / "results"
    res.mkdir()
    for n in (1, 2, 3):
        fixtures.run_wulfbench(n, *fixtures.SMALL_FFT, "--label", f"scale n{n}",
                               "-o", res / f"scale_np{n}.h5")
    out = tmp_path / "r"
    proc = run_cli(str(res), "-o", str(out), "-q")
    assert proc.returncode == 0, proc.stderr
    rows = read_csv(out / "scaling.csv")
    for col in CSV_MUST:
        assert col in rows[0], col
    assert {int(r["ranks"]) for r in rows} == {1, 2, 3}
    assert {r["nodes"] for r in rows} == {"1"} and {r["axis"] for r in rows} == {"ranks"}
    by_point: dict[str, list[dict]] = {}
    for r in rows:
        by_point.setdefault(r["point"], []).append(r)
    assert len(by_point) == 2  # 1 and 4 files
    for items in by_point.values():
        assert sorted(int(r["ranks"]) for r in items) == [1, 2, 3]
        ref = next(r for r in items if r["ranks"] == "1")
        assert float(ref["speedup"]) == pytest.approx(1.0)
        for r in items:
            s = float(r["speedup"])
            assert float(r["speedup_ci_low"]) <= s <= float(r["speedup_ci_high"])
            assert float(r["efficiency"]) == pytest.approx(s / int(r["ranks"]))
            assert r["reference"] == "1 rank"
    width, height = png_size(out / "scaling.png")
    assert width > 600 and height > 300
    page = (out / "index.html").read_text(encoding="utf-8")
    assert "Measured scaling" in page and "scaling.csv" in page


def _series(tmp_path, nodes=(1, 2, 4), fast_at=None):
    """Runs labelled 'pi-scaling nN' on N nodes; at fast_at, every t_total is cut
    to a tenth of the one-node run's, so efficiency there is far above 100 %."""
    paths = []
    for n in nodes:
        cfg = dataclasses.replace(
            fixtures.PI, label=f"pi-scaling n{n}", hosts=tuple(f"pi{k}" for k in range(n)),
            straggler_rank=None, unstable_point=None, transfer=False, load=False,
            scenarios=("files",), seed=10 + n)
        paths.append(fixtures.write_run(tmp_path / f"n{n}.h5", cfg))
        if n == fast_at:
            with h5py.File(paths[0], "r") as one, h5py.File(paths[-1], "a") as f:
                for pid in f["fft"]:
                    f[f"fft/{pid}/t_total"][...] = one[f"fft/{pid}/t_total"][()] / 10
    runs = [open_run(p) for p in paths]
    name_runs(runs)
    return runs


def test_known_speedups_on_synthetic_runs(tmp_path):
    runs = _series(tmp_path)
    rows, notes = scaling.scaling_rows(runs)
    assert notes == []
    assert {r["axis"] for r in rows} == {"nodes"} and {r["series"] for r in rows} == {"pi-scaling"}
    assert len(rows) == 3 * len(fixtures.FILES_N)
    one = {p.key: np.median(p.times["t_total"]) for p in runs[0].points}
    for run, n in zip(runs, (1, 2, 4)):
        for p in run.points:
            row = next(r for r in rows if r["nodes"] == n and r["point_id"] == p.id)
            expect = one[p.key] / np.median(p.times["t_total"])
            assert row["speedup"] == pytest.approx(expect, rel=1e-12)
            assert row["ideal"] == n and row["efficiency"] == pytest.approx(expect / n)
            assert row["speedup_ci_low"] <= row["speedup"] <= row["speedup_ci_high"]
            assert row["reference"] == "1 node"
            assert row["flag"] == ""


def test_superlinear_efficiency_is_flagged(tmp_path):
    rows, _ = scaling.scaling_rows(_series(tmp_path, fast_at=2))
    fast = [r for r in rows if r["nodes"] == 2 and r["point_id"] == "p004"]
    assert fast and fast[0]["efficiency"] > 1 and "above 100 %" in fast[0]["flag"]


def test_smallest_count_is_the_reference_when_one_node_is_missing(tmp_path):
    rows, _ = scaling.scaling_rows(_series(tmp_path, nodes=(2, 4)))
    assert {r["reference"] for r in rows} == {"2 nodes"}
    assert {r["ideal"] for r in rows} == {1.0, 2.0}


def test_different_machines_and_baselines_do_not_join(tmp_path):
    pi = open_run(fixtures.write_run(tmp_path / "pi.h5", fixtures.PI))
    ec2 = open_run(fixtures.write_run(tmp_path / "ec2.h5", fixtures.EC2))
    i5 = open_run(fixtures.write_run(tmp_path / "i5.h5", fixtures.I5))
    runs = [pi, ec2, i5]
    name_runs(runs)
    assert scaling.scaling_rows(runs)[0] == []
    one = _series(tmp_path / "s", nodes=(2,))
    base = open_run(fixtures.write_run(tmp_path / "b.h5", dataclasses.replace(
        fixtures.I5, label="pi-scaling n1", cpu_model=fixtures.PI.cpu_model)))
    runs = one + [base]
    name_runs(runs)
    assert scaling.scaling_rows(runs)[0] == []


@pytest.mark.parametrize("label, stem", [
    ("scaling n4", "scaling"), ("pi-8nodes", "pi"), ("study_np2", "study"), ("ec2 x16", "ec2"),
    ("pi4x4", "pi4"), ("desktop", "desktop"), ("", ""), ("run 3 ranks", "run")])
def test_label_stem(label, stem):
    assert scaling.label_stem(label) == stem


def test_scaling_cli(tmp_path):
    runs = _series(tmp_path)
    out = tmp_path / "out"
    assert scaling_command.run([str(r.path) for r in runs] + ["-o", str(out)]) == 0
    rows = read_csv(out / "scaling.csv")
    assert {int(r["nodes"]) for r in rows} == {1, 2, 4}
    png_size(out / "scaling.png")
    assert scaling_command.run([str(runs[0].path), "-o", str(tmp_path / "none")]) == 3
