"""Shared cores in the report: ranks whose thread ran under 90 % of their time (cpu_share) are named
once per run, with the points that show it; the paired baseline gets its own line."""

from __future__ import annotations

import h5py
import numpy as np

import fixtures
from analysis.derive import cpushare


def add_share(f: h5py.File, group: str, medians: list[float], reps: int = 5) -> None:
    """GROUP/cpu_share [reps, nranks] around the given per-rank medians (one repetition far off, as
    a stall gives, which the median must not follow)."""
    share = np.tile(np.asarray(medians, dtype=float), (reps, 1))
    share[0, np.isfinite(share[0])] = 0.05
    f.create_dataset(f"{group}/cpu_share", data=share).attrs["units"] = "1"


def test_ranks_under_nine_tenths_are_named_with_the_span_and_the_points(tmp_path):
    path = fixtures.write_run(tmp_path / "pi.h5", fixtures.PI)
    with h5py.File(path, "a") as f:
        add_share(f, "fft/p000", [0.99, 0.99, 0.99, 0.99])
        add_share(f, "fft/p001", [0.99, 0.62, 0.99, 0.41])
        add_share(f, "fft/p002", [0.95, 0.55, 0.99, 0.99])
    lines = cpushare.warnings(path)
    assert len(lines) == 1, lines
    assert lines[0].startswith("rank 1 (pi1), rank 3 (pi3) ran on their cores only 41–62% of the time they "
                               "worked (cpu_share, median over repetitions, in 2 of 3 points)"), lines


def test_a_baseline_on_a_shared_core_is_said_to_inflate_the_speedup(tmp_path):
    path = fixtures.write_run(tmp_path / "pi.h5", fixtures.PI)
    with h5py.File(path, "a") as f:
        add_share(f, "fft/p000", [0.99, 0.99, 0.99, 0.99])
        add_share(f, "fft/p000/baseline", [0.5])
    lines = cpushare.warnings(path)
    assert lines == ["the paired baseline ran on its core only 50% of its time (cpu_share, in 1 of 1 points): "
                     "another rank or program shared the core, a CPU quota (a cgroup or container limit) held "
                     "it back, or the hypervisor gave it to another guest (steal), so the one-process times "
                     "are slow and the speedup over them too high"], lines


def test_files_without_cpu_share_or_with_full_cores_say_nothing(tmp_path):
    path = fixtures.write_run(tmp_path / "pi.h5", fixtures.PI)
    assert cpushare.warnings(path) == []
    with h5py.File(path, "a") as f:
        add_share(f, "fft/p000", [0.9, 0.97, 1.0, np.nan])
    assert cpushare.warnings(path) == []
