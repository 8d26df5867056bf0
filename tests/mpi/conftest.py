"""Shared helpers for the MPI integration tests: run the real wulfbench under mpirun."""
from __future__ import annotations

import os
import subprocess
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]
BIN = ROOT / "build" / "wulfbench"
# The same program with test-only fault switches (WB_FAULT) compiled in.
FAULTS_BIN = ROOT / "build" / "wulfbench-faults"


def mpi_env() -> dict[str, str]:
    env = dict(os.environ)
    if os.geteuid() == 0:
        env["OMPI_ALLOW_RUN_AS_ROOT"] = "1"
        env["OMPI_ALLOW_RUN_AS_ROOT_CONFIRM"] = "1"
    # Keep Open MPI quiet about missing network interfaces and pick shared memory locally.
    env.setdefault("OMPI_MCA_btl_base_warn_component_unused", "0")
    env.setdefault("OMPI_MCA_rmaps_base_oversubscribe", "1")
    return env


def run_wb(np: int, *args: str, timeout: float = 120, cwd: Path | None = None,
           extra_env: dict[str, str] | None = None) -> subprocess.CompletedProcess:
    """Run build/wulfbench ARGS on np ranks (np == 0: without mpirun, as a singleton)."""
    if not BIN.exists():
        pytest.fail(f"{BIN} is missing: run make first")
    cmd = [str(BIN), *args]
    if np > 0:
        cmd = ["mpirun", "-np", str(np), "--oversubscribe", *cmd]
    env = mpi_env()
    if extra_env:
        env.update(extra_env)
    return subprocess.run(cmd, capture_output=True, text=True, timeout=timeout,
                          cwd=cwd or ROOT, env=env, stdin=subprocess.DEVNULL)


def run_faults(np_: int, *args: str, env: dict[str, str], timeout: float = 60) -> subprocess.CompletedProcess:
    """Like run_wb, but the fault-switch build, with env (e.g. WB_FAULT) passed to every rank."""
    if not FAULTS_BIN.exists():
        pytest.skip(f"{FAULTS_BIN} is built by make test")
    full_env = mpi_env()
    full_env.update(env)
    exports = [a for k in env for a in ("-x", k)]
    cmd = ["mpirun", "-np", str(np_), "--oversubscribe", *exports, str(FAULTS_BIN), *args]
    return subprocess.run(cmd, capture_output=True, text=True, timeout=timeout, cwd=ROOT, env=full_env,
                          stdin=subprocess.DEVNULL)


def run_faults_each(np_: int, *args: str, env: dict[str, str], timeout: float = 60) -> tuple[list[int], str]:
    """Like run_faults, but each rank's own exit status, in rank order, and stderr without the lines
    that report them. A hang (a rank waiting for one that left) fails the calling test."""
    if not FAULTS_BIN.exists():
        pytest.skip(f"{FAULTS_BIN} is built by make test")
    full_env = mpi_env()
    full_env.update(env)
    exports = [a for k in env for a in ("-x", k)]
    # The shell reports the status and itself exits 0, so mpirun does not cut the other ranks short.
    wrap = '"$0" "$@"; echo "rank-exit ${OMPI_COMM_WORLD_RANK:-$PMI_RANK} $?" >&2'
    cmd = ["mpirun", "-np", str(np_), "--oversubscribe", *exports, "sh", "-c", wrap, str(FAULTS_BIN), *args]
    try:
        r = subprocess.run(cmd, capture_output=True, text=True, timeout=timeout, cwd=ROOT, env=full_env,
                           stdin=subprocess.DEVNULL)
    except subprocess.TimeoutExpired:
        pytest.fail(f"ranks still running after {timeout} s: one waits for another that left")
    status: dict[int, int] = {}
    rest = []
    for line in r.stderr.splitlines():
        if line.startswith("rank-exit "):
            _, rank, code = line.split()
            status[int(rank)] = int(code)
        else:
            rest.append(line)
    return [status.get(q, -1) for q in range(np_)], "\n".join(rest)


@pytest.fixture
def wb():
    return run_wb


def error_lines(stderr: str) -> list[str]:
    """The lines wulfbench itself printed on stderr (not Open MPI's own chatter)."""
    return [l for l in stderr.splitlines() if l.startswith("wulfbench")]
