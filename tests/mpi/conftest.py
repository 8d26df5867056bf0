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

FAKETIME_LIB = Path("/usr/lib/x86_64-linux-gnu/faketime/libfaketime.so.1")


def faketime(spec: str) -> list[str]:
    """The words that start a rank with its wall clock (CLOCK_REALTIME) faked by libfaketime's spec
    ("+0.25": 250 ms ahead; "+0 x0.5": at half speed), CLOCK_MONOTONIC, wulfbench's clock, left true."""
    assert FAKETIME_LIB.exists(), f"{FAKETIME_LIB} is missing: apt-get install faketime (make test installs it)"
    return ["env", f"FAKETIME={spec}", "FAKETIME_DONT_FAKE_MONOTONIC=1", f"LD_PRELOAD={FAKETIME_LIB}"]


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


def run_faults(np_: int, *args: str, env: dict[str, str], timeout: float = 60,
               wrap: tuple[str, ...] = ()) -> subprocess.CompletedProcess:
    """Like run_wb, but the fault-switch build, with env (e.g. WB_FAULT) passed to every rank, each
    rank started through the words wrap (e.g. faketime's) where given."""
    if not FAULTS_BIN.exists():
        pytest.skip(f"{FAULTS_BIN} is built by make test")
    full_env = mpi_env()
    full_env.update(env)
    cmd = [*launcher(np_, env), *wrap, str(FAULTS_BIN), *args]
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


def _busy_s(cpus: frozenset[int]) -> float:
    """Busy seconds so far of the CPUs cpus (steal included: a guest waits through it), from
    /proc/stat's per-CPU lines."""
    busy = 0
    with open("/proc/stat") as fh:
        for line in fh:
            name, *v = line.split()
            if name[:3] == "cpu" and name[3:].isdigit() and int(name[3:]) in cpus:
                user, nice, system, _idle, _iowait, irq, softirq, steal = (int(x) for x in v[:8])
                busy += user + nice + system + irq + softirq + steal
    return busy / os.sysconf("SC_CLK_TCK")


def _own_cpu_s() -> float:
    """CPU seconds of this process and the children it has waited for (mpirun and its ranks)."""
    me, kids = resource.getrusage(resource.RUSAGE_SELF), resource.getrusage(resource.RUSAGE_CHILDREN)
    return me.ru_utime + me.ru_stime + kids.ru_utime + kids.ru_stime


def taken_share(others_cores: float, ncpu: int, cores: int) -> float:
    """The share of a test's cores that other work took: what other processes used on the test's
    ncpu CPUs beyond the ones its `cores` busy processes leave spare, over the cores they can use."""
    used = max(1, min(cores, ncpu))
    return max(0.0, others_cores - (ncpu - used)) / used


class MachineLoad:
    """Whether other work took the CPUs a timing test ran on during the test's own window: the busy
    time /proc/stat counts on those CPUs, less the CPU time of this process and the children it
    waited for in the block (mpirun and its ranks). A test that measures the machine asserts its
    timing only when `busy()` is None, and otherwise skips with the figures."""

    # A rank whose core others took this share of still runs 1 - OTHERS_MAX of its wall time, above the
    # report's SHARE_WARN (0.9), which test_cpushare holds the shares to. A tenth of a core of daemons
    # beside 2 busy ranks on 2 cores is 5 %; a CPU-bound job beside them, a third.
    OTHERS_MAX = 0.075

    def __init__(self, cores: int, cpus: set[int] | None = None) -> None:
        """cores: how many busy processes the test runs; cpus: the CPUs they may run on (taskset),
        by default this process's."""
        self.cores = cores
        self.cpus = frozenset(cpus if cpus is not None else os.sched_getaffinity(0))
        self.others_cores = self.own_cores = self.wall_s = 0.0

    def __enter__(self) -> "MachineLoad":
        self._start = (time.monotonic(), _busy_s(self.cpus), _own_cpu_s())
        return self

    def __exit__(self, *exc: object) -> None:
        t0, busy0, own0 = self._start
        busy1, own1 = _busy_s(self.cpus), _own_cpu_s()
        self.wall_s = max(time.monotonic() - t0, 1e-3)
        self.own_cores = (own1 - own0) / self.wall_s
        self.others_cores = max(0.0, busy1 - busy0 - (own1 - own0)) / self.wall_s

    @property
    def taken(self) -> float:
        return taken_share(self.others_cores, len(self.cpus), self.cores)

    def busy(self) -> str | None:
        """None when other work took at most OTHERS_MAX of the test's cores; else why its timing is
        not asserted, with the figures."""
        if self.taken <= self.OTHERS_MAX:
            return None
        return (f"the machine was busy: other processes used {self.others_cores:.2f} of the {len(self.cpus)} CPUs "
                f"this test ran on for {self.wall_s:.1f} s (its own {self.own_cores:.2f}), {100 * self.taken:.0f}% "
                f"of its cores, over {100 * self.OTHERS_MAX:.1f}% (/proc/stat), so its timing is not asserted")


@pytest.fixture
def wb():
    return run_wb


def fs_type(path: Path) -> str:
    """The filesystem type of path's folder as `stat -f` names it (tmpfs, ext2/ext3 for ext4, ...)."""
    return subprocess.run(["stat", "-f", "-c", "%T", str(path)], capture_output=True, text=True).stdout.strip()


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


IO_FLOOR_NODE_BYTES = 64 << 20  # io's WB_IO_FLOOR_NODE_BYTES


def io_need_bytes(ranks_here: int, ppn_max: int, size: int = 0) -> float:
    """io's need per node as docs/usage.md states it: twice each rank's file, and a tenth of one to spare."""
    per_rank = size or IO_FLOOR_NODE_BYTES / ppn_max
    return ranks_here * per_rank * 2 + per_rank / 5


def one_node_not_two_bytes(folder: Path) -> int:
    """A whole-MiB io size per rank whose need (one rank a node) fits folder's free space for one node, not for two."""
    s = os.statvfs(folder)
    free = s.f_bavail * s.f_frsize
    size = int(free / 3.3) >> 20 << 20
    assert io_need_bytes(1, 1, size) <= free < 2 * io_need_bytes(1, 1, size), (free, size)
    return size


def other_node(host: str, private: Path | None, folder: Path, *args: str) -> list[str]:
    """One rank of an MPMD launch on another "node": its own host name and, when private is given, its own
    folder bind-mounted over folder, both only in the namespace unshare makes for it."""
    bind = f"mount --bind {private} {folder} && " if private else ""
    script = f"hostname {host} && {bind}exec {BIN} {' '.join(args)}"
    return ["-np", "1", "unshare", "-mu", "--propagation", "private", "sh", "-c", script]


def run_nodes(folder: Path, args: tuple[str, ...], *others: tuple[str, Path | None],
              timeout: float = 180) -> subprocess.CompletedProcess:
    """wulfbench ARGS on rank 0 here and one rank on each other "node" (host name, private folder or None)."""
    cmd = [*launcher(1), str(BIN), *args]
    for host, private in others:
        cmd += [":", *other_node(host, private, folder, *args)]
    return subprocess.run(cmd, capture_output=True, text=True, timeout=timeout, cwd=ROOT, env=mpi_env(),
                          stdin=subprocess.DEVNULL)


@pytest.fixture
def namespaces():
    """Skips unless another "node" can be made on this machine (root, unshare -mu)."""
    if os.geteuid() != 0 or not shutil.which("unshare"):
        pytest.skip("another node on this machine needs root and unshare (UTS and mount namespaces)")
    if subprocess.run(["unshare", "-mu", "true"]).returncode != 0:
        pytest.skip("unshare -mu is refused here (a container without CAP_SYS_ADMIN)")


def descendants(pid: int) -> list[str]:
    kids = subprocess.run(["pgrep", "-P", str(pid)], capture_output=True, text=True).stdout.split()
    return kids + [g for k in kids for g in descendants(int(k))]


def rank_pid(p: subprocess.Popen, rank: int, wait_s: float = 10) -> int:
    """The pid of world rank `rank` under the launcher p (found by its rank in its environment:
    OMPI_COMM_WORLD_RANK under Open MPI's mpirun, PMI_RANK under MPICH's hydra, one level deeper)."""
    deadline = time.time() + wait_s
    tags = (f"OMPI_COMM_WORLD_RANK={rank}".encode(), f"PMI_RANK={rank}".encode())
    while time.time() < deadline:
        for k in descendants(p.pid):
            try:
                env = Path(f"/proc/{k}/environ").read_bytes().split(b"\0")
            except OSError:
                continue
            # The rank itself, not a shell wrapped around it (start(exits=...)).
            try:
                exe = Path(Path(f"/proc/{k}/cmdline").read_bytes().split(b"\0")[0].decode()).name
            except (OSError, UnicodeDecodeError):
                continue
            if any(t in env for t in tags) and exe.startswith("wulfbench"):
                return int(k)
        time.sleep(0.1)
    pytest.fail(f"rank {rank} of mpirun {p.pid} not found")
