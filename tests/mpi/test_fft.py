"""wulfbench fft under real mpirun: results, the file it writes, verification, bad input."""
from __future__ import annotations

import math
import os
import shutil
import signal
import subprocess
import time
from pathlib import Path

import h5py
import numpy as np
import pytest

from conftest import BIN, MachineLoad, error_lines, fs_type, launcher, mpi_env, run_faults, run_faults_each, run_wb

SMALL = ("--sweep", "files", "--files", "1,3", "--file-seconds", "1", "--reps", "2", "--warmup", "1")


def read_points(path: Path) -> dict[str, h5py.Group]:
    f = h5py.File(path, "r")
    return f, {k: f["fft"][k] for k in sorted(f["fft"])}


@pytest.mark.parametrize("np_", [1, 2, 3, 4])
def test_ranks_write_a_complete_verified_file(tmp_path, np_):
    out = tmp_path / "r.h5"
    r = run_wb(np_, "fft", *SMALL, "-o", str(out))
    assert r.returncode == 0, r.stderr
    assert out.exists() and not Path(str(out) + ".partial").exists()
    f, pts = read_points(out)
    assert f.attrs["schema"] == "wulfbench/1"
    assert f.attrs["status"] == "complete" and f.attrs["verified"] == 1
    assert f.attrs["nranks"] == np_ and f["hosts"].shape == (np_,)
    assert list(f["hosts"]["rank"]) == list(range(np_))
    assert len(pts) == 2
    g = pts["p001"]
    assert g.attrs["scenario"] == "files" and g.attrs["nfiles"] == 3
    for name in ("t_distribute", "t_compute", "t_fft", "t_gather"):
        assert g[name].shape == (2, np_), name
        assert g[name].attrs["units"] == "s"
        assert np.all(np.isfinite(g[name][()])) and np.all(g[name][()] >= 0)
    assert g["t_total"].shape == (2,) and g["t_read"].shape == (2,)
    assert np.all(g["t_fft"][()] <= g["t_compute"][()] + 1e-9)
    # Every transform is computed exactly once, across the ranks.
    assert int(g["frames"][()].sum()) == g.attrs["transforms"]
    frames = 1 + (44100 - 4096) // 2048
    assert g.attrs["transforms"] == 3 * frames
    assert np.isclose(g["flops"][()].sum(), 3 * frames * 2.5 * 4096 * 12)
    assert g.attrs["input_bytes"] == 3 * 44100 * 2
    assert g["rate_kBps"].shape == (np_,)
    # Synthetic audio stands for 16-bit PCM and travels as 16-bit samples: half the bytes of float.
    assert g.attrs["wire"] == "s16"
    assert g.attrs["sent_bytes"] <= 2 * 3 * 44100 + 2 * 4096 * np_
    assert g["rate_kBps"].attrs["units"] == "kB/s" and np.all(g["rate_kBps"][()] > 0)
    inputs = g["inputs"][()]
    assert len(inputs) == 3 and all(abs(p - 440) < 44100 / 4096 for p in inputs["peak_hz"])
    v = g["verify"].attrs
    assert v["passed"] == 1 and v["tones_found"] == v["tones_expected"] == 12
    assert "verify" in r.stdout and r.stdout.count(" ok") >= 2
    f.close()


def test_table_has_header_and_one_row_per_point(tmp_path):
    r = run_wb(2, "fft", *SMALL, "-o", str(tmp_path / "t.h5"))
    assert r.returncode == 0, r.stderr
    rows = [l for l in r.stdout.splitlines() if l and not l.startswith("#")]
    assert len(rows) == 2
    header = [l for l in r.stdout.splitlines() if l.startswith("#point")][0]
    for col in ("t_dist", "t_comp", "t_fft", "t_gather", "t_total", "kB/s", "GFLOPS"):
        assert col in header


@pytest.mark.parametrize("extra", [
    ("--schedule", "dynamic", "--chunk", "4"),
    ("--schedule", "dynamic", "--chunk", "4", "--root-computes", "no"),
    ("--root-computes", "no",),
    ("--result", "peaks",),
    ("--precision", "double", "--plan", "estimate"),
    ("--mode", "whole",),
    ("--mode", "whole", "--schedule", "dynamic", "--chunk", "1"),
    ("--window", "none", "--frame", "1000", "--hop", "1000"),
    ("--local", "mpi"),
    ("--wire", "native"),
])
def test_variants_verify_on_three_ranks(tmp_path, extra):
    out = tmp_path / "v.h5"
    r = run_wb(3, "fft", *SMALL, *extra, "-o", str(out))
    assert r.returncode == 0, r.stderr
    f, pts = read_points(out)
    for g in pts.values():
        assert g["verify"].attrs["passed"] == 1
        assert int(g["frames"][()].sum()) == g.attrs["transforms"]
        # Work and result bytes add up to the whole request whatever the schedule.
        n = g.attrs["frame"] if g.attrs["mode"] == "stft" else 44100
        assert np.isclose(g["flops"][()].sum(), g.attrs["transforms"] * 2.5 * n * np.log2(n))
        per = 8 if g.attrs["result"] == "peaks" else (n // 2 + 1) * (8 if g.attrs["precision"] == "double" else 4)
        assert int(g["bytes_out"][()].sum()) == g.attrs["transforms"] * per
    if "--root-computes" in extra:
        assert pts["p001"]["frames"][0] == 0
    if "--mode" in extra:
        assert pts["p001"].attrs["transforms"] == 3
    # Ranks on the head node map its buffers unless told to use messages.
    want = "mpi" if "--local" in extra or "dynamic" in extra else "shm"
    assert pts["p001"].attrs["local"] == want
    native = "--wire" in extra
    assert pts["p001"].attrs["wire"] == ("float64" if "double" in extra and native else "float32" if native else "s16")
    f.close()


def test_sizes_sweep_and_baseline(tmp_path):
    out = tmp_path / "b.h5"
    r = run_wb(1, "fft", "--baseline", "--sweep", "sizes", "--seconds", "0.5,2", "--reps", "2", "-o", str(out))
    assert r.returncode == 0, r.stderr
    f, pts = read_points(out)
    assert f.attrs["baseline"] == 1
    assert [pts[k].attrs["scenario"] for k in pts] == ["sizes", "sizes"]
    assert pts["p001"].attrs["input_bytes"] == 2 * 44100 * 2
    assert np.all(pts["p000"]["t_gather"][()] < 1e-5)  # no messaging: only the clock reads
    f.close()


def test_baseline_refuses_several_ranks(tmp_path):
    r = run_wb(2, "fft", "--baseline", "-o", str(tmp_path / "x.h5"), timeout=60)
    assert r.returncode == 2
    assert any("--baseline runs in one process" in l for l in error_lines(r.stderr))
    assert not (tmp_path / "x.h5").exists()


def make_wav(path: Path, *sox_args: str, seconds: float = 0.5, freq: int = 1000) -> Path:
    subprocess.run(["sox", "-n", *sox_args, str(path), "synth", str(seconds), "sine", str(freq)],
                   check=True, capture_output=True)
    return path


def test_wav_inputs_folder_peak_and_table(tmp_path):
    d = tmp_path / "wavs"
    d.mkdir()
    make_wav(d / "a.wav", "-r", "48000", "-b", "16", "-c", "2", freq=1000)
    make_wav(d / "b.wav", "-r", "22050", "-b", "24", freq=2000)
    make_wav(d / "c.wav", "-r", "44100", "-e", "floating-point", "-b", "32", freq=3000)
    out = tmp_path / "w.h5"
    r = run_wb(2, "fft", "--input", str(d), "--reps", "2", "-o", str(out))
    assert r.returncode == 0, r.stderr
    f, pts = read_points(out)
    assert list(pts) == ["p000"]
    g = pts["p000"]
    assert g.attrs["scenario"] == "inputs" and g.attrs["input"] == "wav"
    rows = g["inputs"][()]
    assert [n.decode() for n in rows["name"]] == ["a.wav", "b.wav", "c.wav"]
    assert list(rows["sample_rate"]) == [48000, 22050, 44100]
    assert list(rows["channels"]) == [2, 1, 1] and list(rows["bits"]) == [16, 24, 32]
    # 24-bit and float files cannot travel as 16-bit without loss.
    assert g.attrs["wire"] == "float32"
    for want, got, rate in zip([1000, 2000, 3000], rows["peak_hz"], rows["sample_rate"]):
        assert abs(got - want) <= rate / 4096, (want, got)
    f.close()


def test_16_bit_wavs_travel_as_16_bit(tmp_path):
    d = tmp_path / "wavs"
    d.mkdir()
    make_wav(d / "a.wav", "-r", "44100", "-b", "16", seconds=1)
    make_wav(d / "b.wav", "-r", "8000", "-b", "8", "-e", "unsigned-integer", seconds=1)
    out = tmp_path / "s.h5"
    r = run_wb(2, "fft", "--input", str(d), "--reps", "2", "--local", "mpi", "-o", str(out))
    assert r.returncode == 0, r.stderr
    f, pts = read_points(out)
    g = pts["p000"]
    assert g.attrs["wire"] == "s16" and g["verify"].attrs["passed"] == 1
    assert g.attrs["sent_bytes"] <= 2 * (44100 + 8000) + 2 * 4096
    f.close()


def test_input_cache_drop_reads_the_inputs_from_the_disk(tmp_path):
    """--input-cache drop: before every timed read rank 0 drops the inputs' pages, and what stayed (mincore)
    is recorded; keep leaves them, so a repeated read comes from memory."""
    d = tmp_path / "wavs"
    d.mkdir()
    fs = fs_type(d)
    if fs in ("tmpfs", "ramfs"):
        pytest.skip(f"{d} is in memory ({fs}): its pages cannot be dropped")
    for k in range(3):
        make_wav(d / f"w{k}.wav", "-r", "44100", "-b", "16", seconds=1, freq=500 + 300 * k)
    got = {}
    for mode in ("keep", "drop"):
        out = tmp_path / f"{mode}.h5"
        r = run_wb(2, "fft", "--input", str(d), "--input-cache", mode, "--reps", "3", "-o", str(out))
        assert r.returncode == 0, r.stderr
        f, pts = read_points(out)
        g = pts["p000"]
        got[mode] = (g.attrs["input_cache"], float(g.attrs["input_resident_max"]), g["verify"].attrs["passed"])
        # of each read, the wait for the files' bytes (each read while the file before decodes): part
        # of t_read, the rest decoding
        io, t_read = g["t_read_io"][()], g["t_read"][()]
        assert g["t_read_io"].attrs["units"] == "s" and ((io > 0) & (io <= t_read)).all(), (io, t_read)
        assert g.attrs["input_read_ahead"] == 1
        f.close()
    assert got["keep"][0] == "keep" and math.isnan(got["keep"][1]) and got["keep"][2] == 1
    # Each repetition read the files just before, so without the drop every page would still be cached.
    assert got["drop"][0] == "drop" and got["drop"][1] <= 0.01 and got["drop"][2] == 1, got


def test_bad_wav_fails_by_default_and_is_skipped_on_request(tmp_path):
    d = tmp_path / "wavs"
    d.mkdir()
    make_wav(d / "good.wav")
    (d / "bad.wav").write_bytes(b"RIFF\x10\x00\x00\x00WAVEjunk")
    r = run_wb(2, "fft", "--input", str(d), "-o", str(tmp_path / "f.h5"), timeout=60)
    assert r.returncode == 1
    lines = error_lines(r.stderr)
    assert len(lines) == 1 and "bad.wav" in lines[0] and "--on-bad-input skip" in lines[0]
    assert not (tmp_path / "f.h5").exists()
    r = run_wb(2, "fft", "--input", str(d), "--on-bad-input", "skip", "--reps", "1", "-o", str(tmp_path / "s.h5"))
    assert r.returncode == 0, r.stderr
    assert any("skipping" in l and "bad.wav" in l for l in error_lines(r.stderr))
    f, pts = read_points(tmp_path / "s.h5")
    assert [n.decode() for n in pts["p000"]["inputs"]["name"]] == ["good.wav"]
    f.close()


def test_missing_input_and_short_file(tmp_path):
    r = run_wb(2, "fft", "--input", str(tmp_path / "nope.wav"), "-o", str(tmp_path / "m.h5"), timeout=60)
    assert r.returncode == 1 and "nope.wav" in " ".join(error_lines(r.stderr))
    short = make_wav(tmp_path / "short.wav", seconds=0.01)
    r = run_wb(2, "fft", "--input", str(short), "-o", str(tmp_path / "m.h5"), timeout=60)
    assert r.returncode == 1 and "shorter than one frame" in " ".join(error_lines(r.stderr))


@pytest.mark.parametrize("args,needle", [
    (("--bogus",), "unknown option"),
    (("--hop", "0"), "--hop"),
    (("--frame", "8192", "--sweep", "sizes", "--seconds", "0.1"), "--frame"),
    (("--files", "100000"), "--files"),
    (("--reps", "-3"), "--reps"),
    (("--files", "4096", "--file-seconds", "3600"), "GB"),
    (("--input-cache", "drop"), "reads no file"),
    (("--input-cache", "sometimes"), "--input-cache"),
])
def test_bad_options_exit_2_with_one_line_on_every_rank_count(tmp_path, args, needle):
    for np_ in (1, 3):
        t0 = time.monotonic()
        r = run_wb(np_, "fft", *args, "-o", str(tmp_path / "x.h5"), timeout=60)
        assert r.returncode == 2, (args, r.stderr)
        lines = error_lines(r.stderr)
        assert len(lines) == 1 and needle in lines[0], lines
        assert "MPI_ABORT" not in r.stderr and "Traceback" not in r.stderr
        assert time.monotonic() - t0 < 30
    assert not list(tmp_path.iterdir())


@pytest.mark.parametrize("sub", ["fft", "suite"])
def test_one_rank_short_of_memory_stops_every_rank(tmp_path, sub):
    # Rank 1 sees 1 MiB free, the others their real memory: the check differs between ranks.
    args = ("--sweep", "sizes", "--seconds", "30") if sub == "fft" else ()
    codes, stderr = run_faults_each(3, sub, *args, "-o", str(tmp_path / "x.h5"),
                                    env={"WB_FAULT_MEM_RANK": "1"}, timeout=60)
    assert codes == [2, 2, 2], (codes, stderr)
    lines = error_lines(stderr)
    assert len(lines) == 1 and "rank 1:" in lines[0] and "GB" in lines[0], lines
    assert not list(tmp_path.iterdir())


def test_existing_file_is_kept_without_force(tmp_path):
    out = tmp_path / "keep.h5"
    out.write_bytes(b"precious")
    r = run_wb(2, "fft", *SMALL, "-o", str(out), timeout=60)
    assert r.returncode == 1
    assert "--force" in error_lines(r.stderr)[0]
    assert out.read_bytes() == b"precious"
    r = run_wb(2, "fft", *SMALL, "-o", str(out), "--force")
    assert r.returncode == 0 and h5py.is_hdf5(out)


def test_missing_output_folder_is_one_line(tmp_path):
    r = run_wb(2, "fft", *SMALL, "-o", str(tmp_path / "no" / "such" / "x.h5"), timeout=60)
    assert r.returncode == 1
    lines = error_lines(r.stderr)
    assert len(lines) == 1 and "cannot create" in lines[0]


def test_corrupted_result_fails_verification_and_marks_the_file(tmp_path):
    out = tmp_path / "bad.h5"
    r = run_faults(2, "fft", *SMALL, "-o", str(out), env={"WB_FAULT": "corrupt-fft"}, timeout=120)
    assert r.returncode == 3, r.stderr
    assert "failed verification" in r.stderr
    assert "INVALID" in r.stdout
    f = h5py.File(out, "r")
    assert f.attrs["status"] == "invalid" and f.attrs["verified"] == 0
    assert f["fft/p000/verify"].attrs["passed"] == 0
    f.close()


def test_normal_build_has_no_fault_switch(tmp_path):
    out = tmp_path / "ok.h5"
    r = run_wb(2, "fft", *SMALL, "-o", str(out), extra_env={"WB_FAULT": "corrupt-fft"})
    assert r.returncode == 0
    assert b"WB_FAULT" not in BIN.read_bytes()


def test_wisdom_is_saved_and_reused(tmp_path):
    w = tmp_path / "wisdom"
    r = run_wb(2, "fft", *SMALL, "--wisdom", str(w), "-o", str(tmp_path / "a.h5"))
    assert r.returncode == 0, r.stderr
    assert w.exists() and "fftwf_wisdom" in w.read_text()
    r = run_wb(2, "fft", *SMALL, "--wisdom", str(w), "-o", str(tmp_path / "b.h5"))
    assert r.returncode == 0, r.stderr
    # What a program that plans only one precision saves (fftwf-wisdom, a bare FFTW pipeline): the
    # single-precision block alone. It is read as single-precision wisdom, not refused as double.
    text = w.read_text()
    single = text[text.index("(fftw-3", text.index("fftwf_wisdom") - 40):]
    single = single[:single.index("# wulfbench wisdom")]
    assert single.split()[1] == "fftwf_wisdom"
    w.write_text(single)
    r = run_wb(2, "fft", *SMALL, "--precision", "single", "--wisdom", str(w), "-o", str(tmp_path / "s.h5"))
    assert r.returncode == 0, r.stderr
    w.write_text("garbage")
    r = run_wb(2, "fft", *SMALL, "--wisdom", str(w), "-o", str(tmp_path / "c.h5"), timeout=60)
    assert r.returncode == 2 and "wisdom" in " ".join(error_lines(r.stderr))
    w.write_text(single.replace("fftwf_wisdom", "fftwq_wisdom"))
    r = run_wb(2, "fft", *SMALL, "--wisdom", str(w), "-o", str(tmp_path / "q.h5"), timeout=60)
    assert r.returncode == 2 and "wisdom" in " ".join(error_lines(r.stderr))


@pytest.mark.skipif(not shutil.which("fftwf-wisdom"), reason="fftwf-wisdom (libfftw3-bin) is not installed")
def test_wisdom_from_fftws_own_tool_is_used(tmp_path):
    # Wisdom made by FFTW's tool for the frame's r2c (real, out of place, forward) must spare the
    # planning: the kernel plans the problem the tool plans, not one of its own.
    w = tmp_path / "tool.wisdom"
    subprocess.run(["fftwf-wisdom", "-n", "-o", str(w), "rof4096"], check=True, timeout=300)
    args = ("--sweep", "files", "--files", "1", "--file-seconds", "1", "--reps", "1", "--warmup", "0",
            "--frame", "4096", "--precision", "single", "--plan", "patient")
    plan_s = {}
    with MachineLoad(cores=1) as load:
        for name, extra in (("none", ()), ("tool", ("--wisdom", str(w)))):
            out = tmp_path / f"{name}.h5"
            r = run_wb(1, "fft", *args, *extra, "-o", str(out), timeout=600)
            assert r.returncode == 0, r.stderr
            with h5py.File(out) as f:
                assert f["fft/p000/verify"].attrs["passed"] == 1
                plan_s[name] = float(np.max(f["fft/p000/t_plan"][()]))
    # Only the planning time tells a wisdom hit (a millisecond or so) from PATIENT planning of 4096
    # points (about a second); a rank that waits for its core stretches the first.
    if (why := load.busy()):
        pytest.skip(f"{why}; planning took {plan_s}")
    assert plan_s["tool"] < 0.05 * plan_s["none"], plan_s


def test_timeout_keeps_what_was_measured(tmp_path):
    out = tmp_path / "t.h5"
    r = run_wb(2, "fft", "--sweep", "files", "--files", "1:64", "--reps", "50", "--plan", "estimate",
               "--timeout", "2", "-o", str(out))
    assert r.returncode == 4, r.stderr
    f, pts = read_points(out)
    assert f.attrs["status"] == "timeout" and len(pts) >= 1
    f.close()


def test_crash_leaves_a_readable_partial_file(tmp_path):
    out = tmp_path / "crash.h5"
    cmd = [*launcher(2), str(BIN), "fft", "--sweep", "files", "--files", "1:64", "--reps", "20", "-o", str(out)]
    p = subprocess.Popen(cmd, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True, env=mpi_env(),
                         start_new_session=True)
    partial = Path(str(out) + ".partial")
    deadline = time.monotonic() + 60
    # Wait until at least two points are on disk, then kill the whole job without warning.
    while time.monotonic() < deadline:
        line = p.stdout.readline()
        if line.startswith("1 "):
            break
    # Kill the ranks themselves (a crash), then mpirun.
    subprocess.run(["pkill", "-KILL", "-f", str(out)], check=False)
    os.killpg(p.pid, signal.SIGKILL)
    p.wait(timeout=30)
    time.sleep(0.5)
    assert partial.exists() and not out.exists()
    f = h5py.File(partial, "r")
    assert f.attrs["status"] == "running"
    assert "p000" in f["fft"] and f["fft/p000/t_total"].shape == (20,)
    f.close()
    r = run_wb(2, "fft", *SMALL, "-o", str(out), timeout=60)
    assert r.returncode == 1 and "interrupted" in error_lines(r.stderr)[0]


def test_info_lists_every_rank():
    r = run_wb(3, "info")
    assert r.returncode == 0, r.stderr
    rows = [l for l in r.stdout.splitlines() if l[:1].isdigit()]
    assert len(rows) == 3 and "MPI" in r.stdout and "fftw-3" in r.stdout and "timer" in r.stdout


def test_help_and_version():
    r = run_wb(0, "fft", "--help")
    assert r.returncode == 0 and "--schedule" in r.stdout and "--reps" in r.stdout
    r = run_wb(0, "--version")
    assert r.returncode == 0 and r.stdout.startswith("wulfbench ")
