"""Shared helpers for the MPI integration tests: run the real wulfbench under mpirun."""
from __future__ import annotations

import contextlib
import functools
import os
import resource
import shutil
import subprocess
import time
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]
# Which MPI the tests run under: WB_MPI=openmpi (default) or mpich, as `make test-mpi MPI=mpich` sets it.
MPI_IMPL = os.environ.get("WB_MPI", "openmpi")
if MPI_IMPL not in ("openmpi", "mpich"):
    raise pytest.UsageError(f"WB_MPI={MPI_IMPL!r}: use openmpi or mpich")
BUILD = ROOT / ("build-mpich" if MPI_IMPL == "mpich" else "build")
# How the result file's mpi_library attribute starts under each.
MPI_LIBRARY_PREFIX = "MPICH Version:" if MPI_IMPL == "mpich" else "Open MPI"
# WB_BIN: another build of the same program (make test-sanitize uses build-san/wulfbench).
BIN = Path(os.environ.get("WB_BIN", BUILD / "wulfbench")).resolve()
# The same program with test-only fault switches (WB_FAULT) compiled in.
FAULTS_BIN = BUILD / "wulfbench-faults"


def mpi_env() -> dict[str, str]:
    env = dict(os.environ)
    if MPI_IMPL == "mpich":
        # Hydra starts as root and runs more ranks than cores without being asked.
        return env
    if os.geteuid() == 0:
        env["OMPI_ALLOW_RUN_AS_ROOT"] = "1"
        env["OMPI_ALLOW_RUN_AS_ROOT_CONFIRM"] = "1"
    # Keep Open MPI quiet about missing network interfaces and pick shared memory locally.
    env.setdefault("OMPI_MCA_btl_base_warn_component_unused", "0")
    env.setdefault("OMPI_MCA_rmaps_base_oversubscribe", "1")
    return env


@functools.cache
def build_has_fftw_mpi() -> bool:
    """Whether BIN has dfft, as its `wulfbench info` says: the Open MPI build always has, the MPICH
    build once jobs/build-fftw-mpi.sh has built FFTW-MPI for MPICH before make MPI=mpich."""
    if not BIN.exists():
        return False
    r = subprocess.run([str(BIN), "info"], capture_output=True, text=True, timeout=60, env=mpi_env(),
                       stdin=subprocess.DEVNULL)
    return any(l.startswith("FFTW-MPI") and "yes" in l for l in r.stdout.splitlines())


# Under MPICH dfft needs FFTW-MPI built for MPICH; the Open MPI build must always have it.
needs_fftw_mpi = pytest.mark.skipif(
    MPI_IMPL == "mpich" and not build_has_fftw_mpi(),
    reason=f"{BIN} has no FFTW-MPI: run bash jobs/build-fftw-mpi.sh, then make MPI=mpich")


def launcher(np_: int, env: dict[str, str] | None = None) -> list[str]:
    """The one place that spells the launch command: np_ ranks, with env passed to every rank."""
    env = env or {}
    if MPI_IMPL == "mpich":
        return ["mpiexec.mpich", "-np", str(np_), *[a for k, v in env.items() for a in ("-genv", k, v)]]
    return ["mpirun", "-np", str(np_), "--oversubscribe", *[a for k in env for a in ("-x", k)]]


def run_wb(np: int, *args: str, timeout: float = 120, cwd: Path | None = None,
           extra_env: dict[str, str] | None = None) -> subprocess.CompletedProcess:
    """Run build/wulfbench ARGS on np ranks (np == 0: without mpirun, as a singleton)."""
    if not BIN.exists():
        pytest.fail(f"{BIN} is missing: run make first")
    cmd = [str(BIN), *args]
    if np > 0:
        cmd = [*launcher(np), *cmd]
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
    cmd = [*launcher(np_, env), str(FAULTS_BIN), *args]
    return subprocess.run(cmd, capture_output=True, text=True, timeout=timeout, cwd=ROOT, env=full_env,
                          stdin=subprocess.DEVNULL)


def run_faults_each(np_: int, *args: str, env: dict[str, str], timeout: float = 60) -> tuple[list[int], str]:
    """Like run_faults, but each rank's own exit status, in rank order, and stderr without the lines
    that report them. A hang (a rank waiting for one that left) fails the calling test."""
    if not FAULTS_BIN.exists():
        pytest.skip(f"{FAULTS_BIN} is built by make test")
    full_env = mpi_env()
    full_env.update(env)
    # The shell reports the status and itself exits 0, so the launcher does not cut the other ranks short.
    wrap = '"$0" "$@"; echo "rank-exit ${OMPI_COMM_WORLD_RANK:-$PMI_RANK} $?" >&2'
    cmd = [*launcher(np_, env), "sh", "-c", wrap, str(FAULTS_BIN), *args]
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


def _cpu_ticks() -> tuple[float, int]:
    """Busy seconds of every CPU so far (steal included: a guest waits through it) and the CPU
    count, from /proc/stat."""
    with open("/proc/stat") as fh:
        lines = fh.read().splitlines()
    user, nice, system, _idle, _iowait, irq, softirq, steal = (int(v) for v in lines[0].split()[1:9])
    ncpu = sum(1 for l in lines if l.startswith("cpu") and l[3:4].isdigit())
    return (user + nice + system + irq + softirq + steal) / os.sysconf("SC_CLK_TCK"), ncpu


def _own_cpu_s() -> float:
    """CPU seconds of this process and the children it has waited for (mpirun and its ranks)."""
    me, kids = resource.getrusage(resource.RUSAGE_SELF), resource.getrusage(resource.RUSAGE_CHILDREN)
    return me.ru_utime + me.ru_stime + kids.ru_utime + kids.ru_stime


class MachineLoad:
    """Whether the machine was free while a timing test ran: the CPU that other processes (and the
    hypervisor's steal) used over the block, as /proc/stat's busy time less this process's and its
    children's. A test that measures the machine asserts its timing only when `busy()` is None."""

    # Other work of up to a tenth of a core beside the cores a test uses leaves its figures as on an
    # idle machine (daemons, the shell); a compile or another test run takes a whole core.
    SPARE_CORES = 0.1

    def __init__(self, cores: int) -> None:
        self.cores = cores
        self.others_cores = 0.0
        self.ncpu = 1

    def __enter__(self) -> "MachineLoad":
        self._start = (time.monotonic(), *_cpu_ticks(), _own_cpu_s())
        return self

    def __exit__(self, *exc: object) -> None:
        t0, busy0, ncpu, own0 = self._start
        busy1, self.ncpu = _cpu_ticks()
        wall = max(time.monotonic() - t0, 1e-3)
        self.others_cores = max(0.0, (busy1 - busy0) - (_own_cpu_s() - own0)) / wall

    def busy(self) -> str | None:
        """None when the machine was free for the test's cores; else why its timing is not asserted."""
        if self.others_cores <= max(0, self.ncpu - self.cores) + self.SPARE_CORES:
            return None
        return (f"the machine was busy: other processes used {self.others_cores:.2f} of its {self.ncpu} "
                f"CPUs while this test needed {self.cores} (/proc/stat), so its timing is not asserted")


@pytest.fixture
def wb():
    return run_wb


def error_lines(stderr: str) -> list[str]:
    """The lines wulfbench itself printed on stderr (not the MPI launcher's own chatter)."""
    return [l for l in stderr.splitlines() if l.startswith("wulfbench")]


@contextlib.contextmanager
def loop_ext4(under: Path, mib: int, *mkfs_args: str):
    """A real ext4 of mib MiB on a loop device, mounted at under/small for the block (root only)."""
    if os.geteuid() != 0 or not shutil.which("mkfs.ext4"):
        pytest.skip("a loop-device ext4 needs root and mkfs.ext4")
    img, mnt = under / "small.img", under / "small"
    mnt.mkdir()
    with open(img, "wb") as fh:
        fh.truncate(mib << 20)
    subprocess.run(["mkfs.ext4", "-q", "-F", "-b", "4096", *mkfs_args, str(img)], check=True)
    subprocess.run(["mount", "-o", "loop", str(img), str(mnt)], check=True)
    try:
        yield mnt
    finally:
        subprocess.run(["umount", str(mnt)])
