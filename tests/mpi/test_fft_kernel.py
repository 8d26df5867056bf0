"""wulfbench fft's compute kernel end to end: the batch it chooses, the naive-DFT check, root memory."""
from __future__ import annotations

import re
import subprocess
import sys
from pathlib import Path

import h5py
import numpy as np
import pytest

from conftest import BIN, ROOT, mpi_env, run_faults, run_wb

SMALL = ("--sweep", "files", "--files", "3", "--file-seconds", "1", "--reps", "1", "--warmup", "0")


def point(path: Path) -> h5py.Group:
    return h5py.File(path, "r")["fft/p000"]


def test_the_fft_phase_timed_with_the_cpu_counter_agrees_with_the_clock(tmp_path):
    # t_fft is the FFT's share of the counter's ticks over a call times the call's wall time; the
    # clock, read around every block instead, must give the same phase (a slower read adds to it).
    wisdom = tmp_path / "w.wisdom"
    args = ("fft", "--baseline", "--sweep", "files", "--files", "16", "--reps", "9", "--wisdom", str(wisdom))
    med = {}
    for timer in ("counter", "clock", "counter", "clock"):
        out = tmp_path / f"{timer}.h5"
        env = {"WB_FFT_TIMER": timer} if timer == "clock" else {"WB_FAULT": "none"}
        r = run_faults(1, *args, "--force", "-o", str(out), env=env, timeout=120)
        assert r.returncode == 0, r.stderr
        g = point(out)
        fft, comp = g["t_fft"][()][:, 0], g["t_compute"][()][:, 0]
        assert (fft > 0).all() and (fft <= comp).all(), (fft, comp)
        med.setdefault(timer, []).append(float(np.median(fft / comp)))
    # Both see FFTW take most of the compute, the same share to within noise and the clock's reads.
    counter, clock = min(med["counter"]), min(med["clock"])
    assert 0.3 < counter < 1 and 0.3 < clock < 1, med
    assert abs(counter - clock) < 0.1, med


@pytest.mark.parametrize("result", ["spectra", "peaks"])
def test_results_are_the_same_bits_whatever_the_batch(tmp_path, result):
    # FFTW_MEASURE may pick another algorithm in another process; shared wisdom makes every run and
    # rank use the same plan, so only the batch differs between the runs compared.
    wisdom = tmp_path / "w.wisdom"
    args = ("fft", *SMALL, "--result", result, "--wisdom", str(wisdom))
    r = run_faults(1, *args, "-o", str(tmp_path / "plan.h5"), env={"WB_FAULT": "none"}, timeout=120)
    assert r.returncode == 0 and wisdom.exists(), r.stderr
    digests = {}
    for batch in ("1", "3", "32", ""):
        out = tmp_path / f"b{batch or 'auto'}.h5"
        env = {"WB_FFT_BATCH": batch} if batch else {"WB_FAULT": "none"}
        r = run_faults(2, *args, "-o", str(out), env=env, timeout=120)
        assert r.returncode == 0, r.stderr
        g = point(out)
        if batch:
            assert g.attrs["batch"] == int(batch)
        else:
            assert g.attrs["batch"] in (1, 2, 4, 8, 16, 32)  # from the caches, as the test above checks
        assert g["verify"].attrs["passed"] == 1
        digests[batch or "chosen"] = int(g["verify"].attrs["test_results_digest"])
    assert len(set(digests.values())) == 1, digests


def cache_tree(root: Path, caches: list[tuple[int, str, str]]) -> Path:
    """CPU 0's cacheinfo under root, as Linux lays it out: index0.. with level, type and size."""
    (root / "sys/devices/system/cpu/cpu0").mkdir(parents=True)
    for i, (level, kind, size) in enumerate(caches):
        d = root / f"sys/devices/system/cpu/cpu0/cache/index{i}"
        d.mkdir(parents=True)
        (d / "level").write_text(f"{level}\n")
        (d / "type").write_text(f"{kind}\n")
        (d / "size").write_text(f"{size}\n")
    return root


THIS_KIND = [(1, "Data", "48K"), (1, "Instruction", "32K"), (2, "Unified", "2048K")]


@pytest.mark.parametrize("caches,frame,precision,batch", [
    # This machine's kind (48K L1d, 2048K L2): 4096 single frames in blocks of 16 (525 KiB, near 512).
    (THIS_KIND, 4096, "single", 16),
    (THIS_KIND, 4096, "double", 8),
    (THIS_KIND, 1024, "single", 1),
    # The instruction cache is not the data cache: with a 1M L1i listed first, 4096 still streams.
    ([(1, "Instruction", "1M"), (1, "Data", "48K"), (2, "Unified", "2048K")], 4096, "single", 16),
    # A huge L1d keeps every 4096 frame alone; a Pi 5's 64K L1d and 512K L2 give blocks of 4.
    ([(1, "Data", "1M"), (2, "Unified", "2M")], 4096, "single", 1),
    ([(1, "Data", "64K"), (2, "Unified", "512K")], 4096, "single", 4),
    # No cacheinfo at all (an aarch64 board without it): the guesses, 32K and 512K.
    ([], 4096, "double", 2),
])
def test_the_batch_follows_the_cpus_caches(tmp_path, caches, frame, precision, batch):
    root = cache_tree(tmp_path / "root", caches)
    out = tmp_path / "c.h5"
    r = run_faults(1, "fft", *SMALL, "--frame", str(frame), "--precision", precision, "--plan", "estimate",
                   "-q", "-o", str(out), env={"WB_SYSFS_ROOT": str(root)}, timeout=60)
    assert r.returncode == 0, r.stderr
    g = point(out)
    assert g.attrs["batch"] == batch, dict(g.attrs)
    assert g["verify"].attrs["passed"] == 1


@pytest.mark.parametrize("precision", ["single", "double"])
@pytest.mark.parametrize("extra", [(), ("--result", "peaks"), ("--mode", "whole")])
def test_magnitudes_match_a_naive_dft(tmp_path, precision, extra):
    out = tmp_path / "d.h5"
    r = run_wb(2, "fft", *SMALL, "--precision", precision, *extra, "-o", str(out))
    assert r.returncode == 0, r.stderr
    v = point(out)["verify"].attrs
    tol = 1e-4 if precision == "single" else 1e-12
    assert 0 <= v["dft_max_rel"] < tol
    assert "dft<=" in v["check"]


def test_a_consistently_wrong_transform_fails_only_the_dft_check(tmp_path):
    # A conversion with the wrong scale: Parseval, the round trip, the rerun and the tones all agree.
    out = tmp_path / "scale.h5"
    r = run_faults(2, "fft", *SMALL, "-o", str(out), env={"WB_FAULT": "fft-scale"}, timeout=120)
    assert r.returncode == 3, r.stderr
    assert "failed verification" in r.stderr
    v = point(out)["verify"].attrs
    assert v["passed"] == 0 and v["dft_max_rel"] > 0.4
    tol = float(re.search(r"parseval<=([0-9.e+-]+)", v["check"]).group(1))
    assert v["parseval_max_rel"] <= tol and v["roundtrip_max_rel"] <= tol and v["crosscheck_max_rel"] <= tol
    assert v["tones_found"] == v["tones_expected"]


# 128 files of 5 s (56 MB of audio) and one file of 60 s (whole mode: one 2.6 M-point transform),
# so the terms that grow with the audio outweigh the program's own 30 MB.
SIZES = {"files": ("--sweep", "files", "--files", "128"),
         "whole": ("--sweep", "sizes", "--seconds", "60", "--mode", "whole", "--plan", "estimate")}


@pytest.mark.parametrize("result", ["spectra", "peaks"])
@pytest.mark.parametrize("size", sorted(SIZES))
def test_memory_estimate_matches_peak_rss(tmp_path, result, size):
    out = tmp_path / "m.h5"
    args = ("fft", "--baseline", *SIZES[size], "--result", result, "--reps", "1", "--warmup", "0", "-q",
            "-o", str(out))
    # A fresh interpreter runs it, so the peak of its children is this run's own.
    probe = subprocess.run(
        [sys.executable, "-c", "import resource, subprocess, sys; subprocess.run(sys.argv[1:], check=True, "
         "stdout=subprocess.DEVNULL); print(resource.getrusage(resource.RUSAGE_CHILDREN).ru_maxrss)",
         str(BIN), *args], capture_output=True, text=True, timeout=300, cwd=ROOT, env=mpi_env())
    assert probe.returncode == 0, probe.stderr
    rss = int(probe.stdout.split()[-1]) * 1024
    g = point(out)
    est = int(g.attrs["root_bytes_estimate"])
    assert abs(est - rss) <= 0.2 * rss, f"estimate {est / 1e6:.0f} MB, measured peak {rss / 1e6:.0f} MB"
    # The guard refuses a run that needs more than --max-memory allows, with the estimate in the message.
    r = run_wb(0, *args[:-2], "--max-memory", str(est // 2), "-o", str(tmp_path / "no.h5"))
    assert r.returncode == 2 and "needs about" in r.stderr
