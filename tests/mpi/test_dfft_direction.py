"""wulfbench dfft --direction: the backward transform timed beside the forward, each reported apart
and their mean as heFFTe reports it, on stdout and in the file; with and without --transposed-out."""
from __future__ import annotations

from pathlib import Path

import h5py
import numpy as np
import pytest

from conftest import needs_fftw_mpi, run_wb

pytestmark = needs_fftw_mpi


def rows(stdout: str) -> dict[str, list[str]]:
    """The table rows of point 0 by their dir column."""
    out = {}
    for line in stdout.splitlines():
        f = line.split()
        if len(f) > 5 and f[0] == "0":
            out[f[4]] = f
    return out


@pytest.mark.parametrize("transposed", [False, True])
def test_both_directions_are_timed_apart_and_averaged(tmp_path: Path, transposed):
    out = tmp_path / "d.h5"
    extra = ["--transposed-out"] if transposed else []
    r = run_wb(2, "dfft", "--dims", "3", "--n", "32", "--reps", "3", "--warmup", "1", "--direction", "both",
               "--progress", "never", *extra, "-o", str(out))
    assert r.returncode == 0, r.stderr
    got = rows(r.stdout)
    assert set(got) == {"fwd", "bwd", "mean"} and all(v[-1] == "ok" for v in got.values()), r.stdout
    with h5py.File(out) as f:
        g = f["dfft/p000"]
        a = g.attrs
        assert a["direction"] == "both" and g["verify"].attrs["passed"] == 1
        for name in ("t_total", "t_local_fft", "t_transpose"):
            assert g[name].shape == g[name + "_backward"].shape == (3, 2)
        slow_b = np.median(g["t_total_backward"][()].max(axis=1))
        assert a["t_total_median_backward"] == pytest.approx(slow_b)
        assert a["gflops_backward"] == pytest.approx(a["flops"] / slow_b / 1e9)
        assert a["gflops_mean"] == pytest.approx(a["flops"] / (0.5 * (a["t_total_median"] + slow_b)) / 1e9)
        # Phases add up to no more than the barrier-to-barrier time of each repetition.
        parts = g["t_local_fft_backward"][()] + g["t_transpose_backward"][()]
        assert np.all(parts <= g["t_total_backward"][()] * 1.0001)
        fb, bb = g["bytes_transposed"][()], g["bytes_transposed_backward"][()]
        assert fb.sum() == bb.sum() > 0
        assert np.all(g["transpose_Bps_backward"][()] > 0)
    assert float(got["mean"][6]) == pytest.approx(0.5 * (float(got["fwd"][6]) + float(got["bwd"][6])), rel=2e-3, abs=2e-3)


def test_forward_alone_records_no_backward(tmp_path: Path):
    out = tmp_path / "f.h5"
    r = run_wb(2, "dfft", "--dims", "3", "--n", "32", "--reps", "2", "--progress", "never", "-o", str(out))
    assert r.returncode == 0, r.stderr
    assert set(rows(r.stdout)) == {"fwd"}
    with h5py.File(out) as f:
        g = f["dfft/p000"]
        assert g.attrs["direction"] == "forward"
        assert "t_total_backward" not in g and "gflops_mean" not in g.attrs


def test_backward_in_1d_and_a_bad_direction(tmp_path: Path):
    out = tmp_path / "b.h5"
    r = run_wb(2, "dfft", "--n", "4096", "--reps", "2", "--direction", "backward", "--progress", "never",
               "-o", str(out))
    assert r.returncode == 0, r.stderr
    assert set(rows(r.stdout)) == {"bwd"}
    with h5py.File(out) as f:
        assert f["dfft/p000"].attrs["gflops_backward"] > 0
    r = run_wb(1, "dfft", "--direction", "sideways", "-o", str(tmp_path / "x.h5"))
    assert r.returncode == 2 and "--direction" in r.stderr, r.stderr
