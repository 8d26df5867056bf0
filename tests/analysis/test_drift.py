"""analysis.drift: the speed change of a machine between two baseline runs of the same points."""
from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import h5py
import numpy as np

from analysis.derive.drift import drift

ROOT = Path(__file__).resolve().parents[2]


def baseline_file(path: Path, t_by_files: dict[int, list[float]]) -> Path:
    with h5py.File(path, "w") as f:
        for i, (nfiles, t) in enumerate(sorted(t_by_files.items())):
            g = f.create_group(f"fft/p{i:03d}")
            g.attrs.update(scenario="files", nfiles=nfiles, seconds_per_file=5.0)
            g.create_dataset("t_total", data=np.asarray(t))
    return path


def test_drift_is_the_median_ratio_of_common_points(tmp_path):
    before = baseline_file(tmp_path / "b.h5", {1: [1.0, 1.0, 2.0], 2: [2.0, 2.0, 2.0], 4: [4.0] * 3})
    after = baseline_file(tmp_path / "a.h5", {1: [1.1, 1.1, 9.0], 2: [2.4, 2.4, 2.4], 8: [1.0] * 3})
    med, lo, hi, n = drift(str(before), str(after))
    assert n == 2 and np.isclose(lo, 1.1) and np.isclose(hi, 1.2) and np.isclose(med, 1.15)
    r = subprocess.run([sys.executable, "-m", "analysis.drift", str(before), str(after)], cwd=ROOT,
                       capture_output=True, text=True)
    assert r.returncode == 0 and "1.150 (min 1.100, max 1.200) over 2 points" in r.stdout
    assert "more than 5%" in r.stdout


def test_drift_without_common_points_fails_with_a_line(tmp_path):
    before = baseline_file(tmp_path / "b.h5", {1: [1.0]})
    after = baseline_file(tmp_path / "a.h5", {2: [1.0]})
    r = subprocess.run([sys.executable, "-m", "analysis.drift", str(before), str(after)], cwd=ROOT,
                       capture_output=True, text=True)
    assert r.returncode == 1 and r.stderr.strip() == "baseline drift: the two baselines share no point"
