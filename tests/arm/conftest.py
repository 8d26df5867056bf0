"""make test-arm: run wulfbench's ARM build inside its Debian root under qemu-user.

tests/arm/run.sh builds the root, mounts /proc, /sys, /dev and a /tmp into it, builds wulfbench there
with the root's own compiler, and then runs these tests on this machine with WB_ARM_ROOT, WB_ARM_ARCH,
WB_ARM_MPI and WB_ARM_BUILD set. Each test starts ARM programs with chroot (binfmt_misc hands them to
qemu) and reads their files from this side, so every file also crosses architectures.
No test judges a time: under emulation timing figures mean nothing.
"""
from __future__ import annotations

import os
import subprocess
from pathlib import Path

import pytest

REPO = Path(__file__).resolve().parents[2]
ARM_ROOT = Path(os.environ.get("WB_ARM_ROOT", "/nonexistent"))
ARCH = os.environ.get("WB_ARM_ARCH", "")
ARM_MPI = os.environ.get("WB_ARM_MPI", "openmpi")
ARM_BUILD = os.environ.get("WB_ARM_BUILD", "build")
# What uname -m says in each root, and what the build says it was compiled for.
MACHINE = {"arm64": "aarch64", "armhf": "armv7l"}.get(ARCH, "")
BUILD_ARCH = {"arm64": "aarch64", "armhf": "armv7hf"}.get(ARCH, "")
# Where the tests work: /tmp/wbarm inside the root, the same folder seen from here.
WORK_IN = "/tmp/wbarm"
WORK = ARM_ROOT / WORK_IN.lstrip("/")
X86_BUILD = REPO / "build"


def pytest_collection_modifyitems(config, items):
    if not os.environ.get("WB_ARM_ROOT"):
        skip = pytest.mark.skip(reason="the ARM suite runs through make test-arm (tests/arm/run.sh)")
        for item in items:
            item.add_marker(skip)


def arm_env(extra: dict[str, str] | None = None) -> list[str]:
    env = {"PATH": "/usr/local/bin:/usr/bin:/bin", "HOME": "/root", "LANG": "C.UTF-8"}
    if ARM_MPI == "openmpi":
        env.update({"OMPI_ALLOW_RUN_AS_ROOT": "1", "OMPI_ALLOW_RUN_AS_ROOT_CONFIRM": "1",
                    "OMPI_MCA_rmaps_base_oversubscribe": "1",
                    "OMPI_MCA_btl_base_warn_component_unused": "0",
                    # qemu-user has no process_vm_readv (errno 38): no single-copy (CMA) between ranks.
                    "OMPI_MCA_btl_vader_single_copy_mechanism": "none"})
    env.update(extra or {})
    return [f"{k}={v}" for k, v in env.items()]


def launcher(np_: int) -> list[str]:
    if np_ <= 0:
        return []
    if ARM_MPI == "mpich":
        return ["mpiexec.mpich", "-np", str(np_)]
    return ["mpirun", "-np", str(np_), "--oversubscribe"]


def arm_cmd(args: list[str], np_: int = 0, env: dict[str, str] | None = None) -> list[str]:
    """The command line that runs args (in /wb of the root) on np_ ranks (0: no launcher)."""
    return ["chroot", str(ARM_ROOT), "/usr/bin/env", "-i", *arm_env(env), "/bin/sh", "-c",
            'cd /wb && exec "$@"', "sh", *launcher(np_), *args]


def arm_run(args: list[str], np_: int = 0, env: dict[str, str] | None = None,
            timeout: float = 900) -> subprocess.CompletedProcess:
    return subprocess.run(arm_cmd(args, np_, env), capture_output=True, text=True, timeout=timeout,
                          stdin=subprocess.DEVNULL)


def wb(np_: int, *args: str, env: dict[str, str] | None = None, timeout: float = 900) -> subprocess.CompletedProcess:
    """The ARM wulfbench on np_ ranks."""
    return arm_run([f"{ARM_BUILD}/wulfbench", *args], np_, env, timeout)


def x86_env() -> dict[str, str]:
    env = dict(os.environ)
    if os.geteuid() == 0:
        env.update(OMPI_ALLOW_RUN_AS_ROOT="1", OMPI_ALLOW_RUN_AS_ROOT_CONFIRM="1")
    return env


@pytest.fixture(scope="session")
def work() -> Path:
    WORK.mkdir(parents=True, exist_ok=True)
    return WORK


@pytest.fixture
def out(work, request) -> tuple[Path, str]:
    """A fresh result path for this test: (path seen from here, path inside the root)."""
    name = request.node.name.replace("[", "-").replace("]", "").replace("/", "_") + ".h5"
    here = work / name
    for p in (here, Path(str(here) + ".partial")):
        p.unlink(missing_ok=True)
    return here, f"{WORK_IN}/{name}"


@pytest.fixture(scope="session")
def wavs(work) -> Path:
    """The unit tests' WAV set (tests/unit/make_wavs.sh), made once, in the root's /tmp."""
    d = work / "wavs"
    if not (d / "manifest.tsv").exists():
        subprocess.run(["bash", str(REPO / "tests/unit/make_wavs.sh"), str(d)], check=True,
                       capture_output=True, timeout=300)
    return d
