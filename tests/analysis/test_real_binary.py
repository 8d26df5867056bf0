"""Result files written by the real build/wulfbench during the test run, with
small settings, read back and reported. Skipped only when the binary has not
been built."""

from __future__ import annotations

import csv
import os
import shutil
import subprocess
import time
from pathlib import Path

import pytest

from analysis.read.reader import open_run
from conftest import ROOT, png_size, run_cli

WB = ROOT / "build" / "wulfbench"
MPIRUN = shutil.which("mpirun") or "mpirun"

pytestmark = pytest.mark.skipif(not WB.is_file(), reason=f"{WB} is not built yet (make); "
                                "tests on real result files skipped")


def _env() -> dict[str, str]:
    env = dict(os.environ)
    if os.geteuid() == 0:
        env.update(OMPI_ALLOW_RUN_AS_ROOT="1", OMPI_ALLOW_RUN_AS_ROOT_CONFIRM="1")
    return env


def _run(cmd: list[str]) -> None:
    proc = subprocess.run([str(c) for c in cmd], env=_env(), capture_output=True, text=True,
                          timeout=240, stdin=subprocess.DEVNULL)
    assert proc.returncode == 0, f"{' '.join(map(str, cmd))}\n{proc.stdout}\n{proc.stderr}"


def _mpi(n: int) -> list[str]:
    return [MPIRUN, "-np", str(n), "--oversubscribe", str(WB)]


@pytest.fixture(scope="module")
def real(tmp_path_factory) -> Path:
    d = tmp_path_factory.mktemp("real")
    small = ["--reps", "3", "--warmup", "1", "--plan", "estimate", "-q"]
    _run(_mpi(2) + ["fft", "--sweep", "files", "--files", "1,2", "--label", "np2",
                    "-o", d / "cluster.h5", *small])
    _run([WB, "fft", "--baseline", "--sweep", "files", "--files", "1,2", "--label", "one-process",
          "-o", d / "baseline.h5", *small])
    _run(_mpi(2) + ["transfer", "-m", "1:64k", "--time-per-size", "0.01", "--label", "xfer",
                    "-o", d / "transfer.h5", "-q"])
    _run(_mpi(3) + ["load", "--clients", "1,2", "--duration", "1", "--warmup-s", "0.2",
                    "--seconds", "0.5", "--plan", "estimate", "--label", "load",
                    "-o", d / "load.h5", "-q"])
    return d


def test_real_files_follow_the_schema(real):
    cluster = open_run(real / "cluster.h5")
    base = open_run(real / "baseline.h5")
    xfer = open_run(real / "transfer.h5")
    load = open_run(real / "load.h5")
    for run in (cluster, base, xfer, load):
        assert run.problems == [], run.problems
        assert run.attrs["schema"] == "wulfbench/1"
        assert run.status == "complete" and run.verified == 1 and not run.partial
        assert len(run.hosts) == run.nranks
        for key in ("created_utc", "command_line", "mpi_library", "fftw_version", "hdf5_version"):
            assert run.attrs.get(key), key
    assert base.is_baseline and not cluster.is_baseline
    assert sorted(p.nfiles for p in cluster.points) == [1, 2]
    assert all(p.scenario == "files" and p.p == 2 and p.verified == 1 for p in cluster.points)
    assert all(p.p == 1 for p in base.points)
    assert {p.key for p in cluster.points} == {p.key for p in base.points}
    for p in cluster.points:
        assert p.times["t_compute"].shape == (3, 2) and p.times["t_total"].shape == (3,)
        assert p.input_bytes > 0 and (p.flops > 0).all()
    assert {"pingpong", "bw", "bibw", "ring", "allreduce"} <= set(xfer.transfer)
    assert xfer.transfer["pingpong"].bytes[-1] == 64 * 1024
    assert len(load.load_steps) == 2
    assert all("warmup" in s.data and "t_done" in s.data for s in load.load_steps)


def test_report_on_real_files(real, tmp_path):
    out = tmp_path / "r"
    proc = run_cli(str(real), "--baseline", str(real / "baseline.h5"), "-o", str(out), "-q")
    assert proc.returncode == 0, proc.stderr
    assert "Traceback" not in proc.stderr
    for name in ("fft_files_times.png", "fft_rate.png", "fft_phases.png", "speedup.png",
                 "per_rank_np2.png", "transfer_p2p.png", "transfer_collectives.png",
                 "transfer_ring.png", "model_np2.png", "load.png"):
        width, height = png_size(out / name)
        assert width > 300 and height > 200
    with open(out / "comparison.csv", newline="") as fh:
        rows = list(csv.DictReader(fh))
    assert len(rows) == 2 and all(float(r["speedup"]) > 0 for r in rows)
    page = (out / "index.html").read_text(encoding="utf-8")
    assert "np2" in page and "one-process" in page and "named with --baseline" in page


def test_partial_file_of_a_killed_run(tmp_path):
    """Kill a run once it has flushed a point: the .partial file is reported, marked partial."""
    out = tmp_path / "killed.h5"
    partial = tmp_path / "killed.h5.partial"
    proc = subprocess.Popen([str(WB), "fft", "--sweep", "files", "--files", "1:64", "--reps", "20",
                             "--plan", "estimate", "--label", "killed", "-o", str(out), "-q"],
                            env=_env(), stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL,
                            stdin=subprocess.DEVNULL)
    deadline = time.monotonic() + 60
    try:
        while time.monotonic() < deadline and proc.poll() is None:
            time.sleep(0.2)
            try:
                if partial.exists() and len(open_run(partial).points) >= 2:
                    break
            except Exception:  # the writer may be mid-flush; look again
                continue
    finally:
        proc.kill()
        proc.wait(timeout=30)
    if out.exists() and not partial.exists():
        pytest.skip("the run finished before it could be stopped")
    assert partial.exists()
    r = tmp_path / "r"
    res = run_cli(str(partial), "-o", str(r), "-q")
    assert res.returncode == 0, res.stderr
    page = (r / "index.html").read_text(encoding="utf-8")
    assert "is PARTIAL" in page and "killed" in page
    assert (r / "fft_files_times.png").exists()
