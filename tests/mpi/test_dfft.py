"""wulfbench dfft under real MPI: the distributed transform against numpy.fft, verification, bad input, the file."""
from __future__ import annotations

import math
import shutil
import subprocess
from pathlib import Path

import h5py
import numpy as np
import pytest

from conftest import (BIN, MPI_IMPL, MPI_LIBRARY_PREFIX, build_has_fftw_mpi, error_lines, needs_fftw_mpi, run_faults,
                      run_wb)

# Shapes that split unevenly over 3 and 4 ranks (and leave rank 3 of 4 without rows in 3-D);
# 1-D needs N to be a multiple of ranks squared for every count tried: 144 = lcm(1, 4, 9, 16).
SHAPES = {1: "576", 2: "10x12", 3: "6x5x8"}
CASES = [(d, k) for d in (1, 2, 3) for k in ("c2c", "r2c") if not (d == 1 and k == "r2c")]


def read_dump(dump: Path, nranks: int):
    """The whole input and output of point 0 from every rank's dump, output in natural order."""
    metas = [list(map(int, (dump / f"p000.meta.{r}").read_text().split())) for r in range(nranks)]
    dims, n0, n1, n2, kind, transposed = metas[0][:6]
    n = (n0, n1, n2)
    last = n[dims - 1] // 2 + 1 if kind == 1 else n[dims - 1]
    c0, c1, c2 = (n0, n1, last) if dims == 3 else (n0, last, 1) if dims == 2 else (n0, 1, 1)
    x = np.full(n, np.nan, dtype=complex)
    out = np.full((c1, c0, c2) if transposed else (c0, c1, c2), np.nan, dtype=complex)
    for r, m in enumerate(metas):
        in_start, in_count, out_start, out_count = m[6:10]
        xi = np.fromfile(dump / f"p000.in.{r}", dtype=np.complex128)
        x[in_start:in_start + in_count] = xi.reshape(in_count, n1, n2)
        yo = np.fromfile(dump / f"p000.out.{r}", dtype=np.complex128)
        out[out_start:out_start + out_count] = yo.reshape(out_count, *out.shape[1:])
    if transposed:
        out = out.transpose(1, 0, 2)
    return dims, kind, x, out


@needs_fftw_mpi
@pytest.mark.parametrize("np_", [1, 2, 3, 4])
@pytest.mark.parametrize("dims,kind", CASES)
@pytest.mark.parametrize("precision", ["double", "single"])
def test_distributed_transform_matches_numpy(tmp_path, np_, dims, kind, precision):
    # Single precision runs also leave the output transposed, so both layouts meet every rank count.
    transposed = ["--transposed-out"] if precision == "single" and dims > 1 else []
    r = run_faults(np_, "dfft", "--shape", SHAPES[dims], "--kind", kind, "--precision", precision, *transposed,
                   "--reps", "1", "--warmup", "0", "--plan", "estimate", "-o", str(tmp_path / "d.h5"),
                   env={"WB_FAULT": "dfft-dump", "WB_DFFT_DUMP": str(tmp_path)})
    assert r.returncode == 0, r.stderr
    got_dims, got_kind, x, out = read_dump(tmp_path, np_)
    assert got_dims == dims and got_kind == (kind == "r2c")
    assert not np.isnan(x).any() and not np.isnan(out).any(), "some rank's part is missing"
    axes = tuple(range(dims))
    x = x.reshape(x.shape[:dims])
    # The input is pseudo-random by global index: the same for every rank count, real for r2c.
    assert np.std(x.real) > 0.3 and (kind == "c2c" or not x.imag.any())
    ref = np.fft.rfftn(x.real, axes=axes) if kind == "r2c" else np.fft.fftn(x, axes=axes)
    got = out.reshape(ref.shape)
    err = np.max(np.abs(got - ref)) / np.max(np.abs(ref))
    assert err < (1e-5 if precision == "single" else 1e-12), err


@needs_fftw_mpi
def test_verification_failure_exits_3_and_marks_the_file(tmp_path):
    out = tmp_path / "bad.h5"
    r = run_faults(2, "dfft", "--dims", "3", "--n", "8", "--reps", "1", "-o", str(out),
                   env={"WB_FAULT": "dfft-corrupt"})
    assert r.returncode == 3, r.stderr
    assert any("failed verification" in l for l in error_lines(r.stderr))
    with h5py.File(out, "r") as f:
        assert f.attrs["status"] == "invalid" and f.attrs["verified"] == 0
        v = f["dfft/p000/verify"].attrs
        assert v["passed"] == 0 and v["spectrum_max_rel"] > v["tolerance"]


@needs_fftw_mpi
def test_the_release_build_has_no_fault_switches():
    assert b"dfft-corrupt" not in BIN.read_bytes()


@needs_fftw_mpi
@pytest.mark.parametrize("np_,args,total", [
    (1, ("--n", "1024"), 1024),
    (3, ("--n", "1026"), 1026),
    (1, ("--dims", "2", "--n", "24"), 24 ** 2),
    (3, ("--dims", "2", "--n", "24", "--kind", "c2c", "--transposed-out"), 24 ** 2),
    (3, ("--dims", "3", "--n", "12", "--transposed-out"), 12 ** 3),
    (4, ("--dims", "3", "--n", "12", "--precision", "single"), 12 ** 3),
])
def test_the_known_input_verifies(tmp_path, np_, args, total):
    out = tmp_path / "ok.h5"
    r = run_wb(np_, "dfft", *args, "--reps", "2", "-o", str(out))
    assert r.returncode == 0, r.stderr
    with h5py.File(out, "r") as f:
        g = f["dfft/p000"]
        v = g["verify"].attrs
        assert v["passed"] == 1 and v["spectrum_max_rel"] < v["tolerance"] and v["roundtrip_max_rel"] < v["tolerance"]
        assert g.attrs["n"] == total and sum(g["local_n"][()]) == total


@needs_fftw_mpi
def test_hdf5_contents(tmp_path):
    out = tmp_path / "h.h5"
    r = run_wb(2, "dfft", "--dims", "3", "--n", "16,32", "--reps", "3", "--warmup", "1", "-o", str(out))
    assert r.returncode == 0, r.stderr
    with h5py.File(out, "r") as f:
        assert f.attrs["status"] == "complete" and f.attrs["subcommand"] == "dfft"
        assert f.attrs["mpi_library"].startswith(MPI_LIBRARY_PREFIX)
        assert sorted(f["dfft"]) == ["p000", "p001"]
        g = f["dfft/p001"]
        a = g.attrs
        assert (a["dims"], a["shape"], a["n"], a["kind"], a["precision"]) == (3, "32x32x32", 32 ** 3, "r2c", "double")
        # The default plan measures, unless the machine holds more ranks than usable cores (test_ceilings).
        crowded = f["ceilings"].attrs["oversubscribed_machines"] > 0
        assert (a["transposed_out"], a["reps"], a["warmup"]) == (0, 3, 1)
        assert (a["plan"], a["plan_why"] != "") == (("estimate", True) if crowded else ("measure", False))
        for name in ("t_total", "t_local_fft", "t_transpose"):
            assert g[name].shape == (3, 2) and g[name].attrs["units"] == "s", name
            assert np.all(np.isfinite(g[name][()])) and np.all(g[name][()] > 0), name
        t = g["t_total"][()]
        assert np.all(g["t_local_fft"][()] + g["t_transpose"][()] <= t + 1e-6)
        flops = 2.5 * 32 ** 3 * math.log2(32 ** 3)
        assert math.isclose(a["gflops"], flops / np.median(t.max(axis=1)) / 1e9, rel_tol=1e-9)
        assert list(g["local_n"][()]) == [16 * 32 * 32, 16 * 32 * 32]
        assert g["local_n"].attrs["units"] == "points"
        # Two transposes, each sending half of a rank's 16 x 32 x 17 complex doubles to the other rank.
        assert list(g["bytes_transposed"][()]) == [2 * 16 * 16 * 17 * 16] * 2
        assert g["bytes_transposed"].attrs["units"] == "bytes"
        assert 0 < a["transpose_share"] < 1
        assert g["verify"].attrs["check"].startswith("roundtrip and spectrum")
    assert r.stdout.count(" ok") == 2 and "GFLOPS" in r.stdout


@needs_fftw_mpi
@pytest.mark.parametrize("np_,args", [
    (2, ["--dims", "3", "--n", "32", "--kind", "r2c"]),
    (3, ["--dims", "2", "--n", "48", "--kind", "c2c", "--transposed-out"]),
    (2, ["--dims", "1", "--n", "65536"]),
])
def test_the_exchange_inside_the_transposes(tmp_path, np_, args):
    """The bytes MPI was asked to move inside FFTW-MPI's transposes, counted where the calls are made,
    equal the bytes the slab layout says each rank sends (and, in 1-D, the model of three transposes);
    the exchange is part of the transpose, and its rate is that of the rank that waited least."""
    out = tmp_path / "x.h5"
    r = run_wb(np_, "dfft", *args, "--direction", "both", "--reps", "3", "-o", str(out))
    assert r.returncode == 0, r.stderr
    with h5py.File(out) as f:
        g = f["dfft/p000"]
        for sfx in ("", "_backward"):
            assert list(g["bytes_exchanged" + sfx][()]) == list(g["bytes_transposed" + sfx][()]), sfx
            assert g["bytes_exchanged" + sfx].attrs["units"] == "bytes"
            tx = g["t_exchange" + sfx][()]
            assert tx.shape == (3, np_) and np.all(tx > 0), sfx
            if g.attrs["dims"] > 1:
                assert np.all(tx <= g["t_transpose" + sfx][()]), sfx
            expect = g["bytes_exchanged" + sfx][()].max() / np.median(tx.min(axis=1))
            assert math.isclose(g.attrs["exchange_Bps" + sfx], expect, rel_tol=1e-9), sfx


@needs_fftw_mpi
def test_one_d_has_no_split_and_wisdom_is_saved(tmp_path):
    out, wisdom = tmp_path / "w.h5", tmp_path / "wisdom"
    for _ in range(2):
        r = run_wb(2, "dfft", "--n", "4096", "--reps", "1", "--wisdom", str(wisdom), "-o", str(out), "--force")
        assert r.returncode == 0, r.stderr
    assert wisdom.read_text().startswith("(fftw-3")
    with h5py.File(out, "r") as f:
        g = f["dfft/p000"]
        assert g.attrs["kind"] == "c2c" and g["t_total"].shape == (2,)
        assert np.all(np.isnan(g["t_transpose"][()])) and np.all(np.isnan(g["t_local_fft"][()]))


@needs_fftw_mpi
def test_memory_refusal_before_allocating(tmp_path):
    out = tmp_path / "m.h5"
    r = run_wb(2, "dfft", "--dims", "3", "--n", "128", "--max-memory", "16M", "-o", str(out), timeout=60)
    assert r.returncode == 2, r.stderr
    lines = error_lines(r.stderr)
    assert len(lines) == 1 and "needs" in lines[0] and "--max-memory" in lines[0], lines
    assert not out.exists()


@needs_fftw_mpi
@pytest.mark.parametrize("np_,args,phrase", [
    (2, ("--n", "0"), "positive"),
    (2, ("--n", "-64"), "positive"),
    (2, ("--shape", "0x8"), "positive"),
    (3, ("--n", "1000"), "multiple of ranks squared (9); use e.g. --n 999 or 1008"),
    (4, ("--shape", "3x16"), "more ranks (4) than the first dimension (3)"),
    (4, ("--shape", "16x4"), "the transpose splits the last dimension (3 complex columns"),
    (2, ("--dims", "1", "--kind", "r2c"), "no distributed 1-D r2c"),
    (2, ("--n", "64", "--transposed-out"), "--transposed-out applies to --dims 2 and 3"),
    (2, ("--dims", "2", "--shape", "8x8x8"), "has 3 dimensions but --dims is 2"),
    (2, ("--n", "8", "--shape", "8x8"), "not both"),
    (2, ("--dims", "3", "--n", "100000"), "needs"),
])
def test_bad_input_one_line_exit_2(tmp_path, np_, args, phrase):
    r = run_wb(np_, "dfft", *args, "-o", str(tmp_path / "x.h5"), timeout=60)
    assert r.returncode == 2, r.stderr
    lines = error_lines(r.stderr)
    assert len(lines) == 1 and phrase in lines[0], lines


@pytest.mark.skipif(MPI_IMPL != "mpich" or build_has_fftw_mpi(), reason="an MPICH build without FFTW-MPI")
def test_mpich_build_without_fftw_mpi_says_dfft_is_missing(tmp_path):
    r = run_wb(2, "dfft", "--n", "1024", "-o", str(tmp_path / "x.h5"))
    assert r.returncode == 2
    assert any("no FFTW-MPI" in l for l in error_lines(r.stderr))


@pytest.mark.skipif(MPI_IMPL != "mpich" or not build_has_fftw_mpi(), reason="an MPICH build with FFTW-MPI")
def test_mpich_dfft_loads_fftw_mpi_for_mpich_and_no_open_mpi(tmp_path):
    libs = subprocess.run(["ldd", str(BIN)], capture_output=True, text=True, check=True).stdout
    fftw_mpi = [l.split()[2] for l in libs.splitlines() if "_mpi.so" in l and "=>" in l]
    assert len(fftw_mpi) == 2 and not any(p.startswith(("/usr/lib", "/lib")) for p in fftw_mpi), libs
    assert "libmpich.so" in libs
    assert not any(m in libs for m in ("libmpi.so", "libopen-pal", "libopen-rte", "openmpi")), libs
    out = tmp_path / "d.h5"
    r = run_wb(2, "dfft", "--n", "1024", "--precision", "single", "--reps", "1", "-o", str(out))
    assert r.returncode == 0, r.stderr
    with h5py.File(out, "r") as f:
        assert f.attrs["mpi_library"].startswith(MPI_LIBRARY_PREFIX)
        assert f["dfft/p000/verify"].attrs["passed"] == 1


@pytest.mark.skipif(MPI_IMPL != "mpich", reason="the MPICH build's own behaviour")
def test_mpich_build_records_mpich(tmp_path):
    out = tmp_path / "i.h5"
    r = run_wb(2, "transfer", "--tests", "pingpong", "--sizes", "8", "-i", "10", "-o", str(out))
    assert r.returncode == 0, r.stderr
    with h5py.File(out, "r") as f:
        assert f.attrs["mpi_library"].startswith(MPI_LIBRARY_PREFIX)


def alternative(name: str) -> str:
    q = subprocess.run(["update-alternatives", "--query", name], capture_output=True, text=True)
    return next((l.split(":", 1)[1].strip() for l in q.stdout.splitlines() if l.startswith("Value:")), "")


@pytest.mark.skipif(shutil.which("update-alternatives") is None or not Path("/usr/bin/mpicc.mpich").exists(),
                    reason="needs Debian alternatives and MPICH installed")
def test_installing_mpich_left_the_system_mpicc_alone():
    if not Path("/usr/bin/mpicc.openmpi").exists():
        pytest.skip("Open MPI is not installed, so MPICH may own mpicc")
    assert alternative("mpi") == "/usr/bin/mpicc.openmpi"
    assert alternative("mpirun") == "/usr/bin/mpirun.openmpi"
