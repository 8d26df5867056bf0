"""MachineLoad, the check a timing test makes before it asserts a timing: it must see other work on
the test's own cores during the test's own window, and must not count the test's own processes.

The machine runs other jobs while these tests run, so each real case compares windows of its own: the
same work with and without a busy loop this test starts, or with its processes counted as its own or
not. How the figures turn into a verdict is a plain rule, checked on the figures that once misled it."""
from __future__ import annotations

import os
import subprocess
import sys
import time

from conftest import ROOT, MachineLoad, run_wb, taken_share

sys.path.insert(0, str(ROOT))
from analysis.derive import cpushare  # noqa: E402

SPIN = "while :; do :; done"


def test_the_rule_lets_daemons_pass_and_stops_a_share_of_0_87():
    ok = MachineLoad.OTHERS_MAX
    # A tenth of a core of daemon work beside 2 busy ranks, or 3 ranks, on 2 CPUs.
    assert taken_share(0.1, ncpu=2, cores=2) <= ok and taken_share(0.1, ncpu=2, cores=3) <= ok
    # One process pinned to a core that others took 13 % of, as when test_cpushare read 0.87 alone;
    # and 2 ranks on 2 CPUs each at 0.87.
    assert taken_share(0.13, ncpu=1, cores=1) > ok and taken_share(0.26, ncpu=2, cores=2) > ok
    # A whole other core is spare for one busy process on 2 CPUs.
    assert taken_share(0.9, ncpu=2, cores=1) == 0
    # A quiet verdict leaves a rank above the share the report warns below, as test_cpushare asserts.
    assert 1 - ok >= cpushare.SHARE_WARN


def proc_cpu_s(pid: int) -> float:
    """CPU seconds the process pid has used so far (/proc/PID/stat's utime and stime)."""
    with open(f"/proc/{pid}/stat") as fh:
        fields = fh.read().rsplit(")", 1)[1].split()
    return (int(fields[11]) + int(fields[12])) / os.sysconf("SC_CLK_TCK")


def start_hog(cpu: int) -> tuple[subprocess.Popen, int, float]:
    """A busy loop pinned to cpu, ended by timeout should this test never stop it: the launcher, the
    loop's pid and the monotonic time it started at."""
    hog = subprocess.Popen(["timeout", "60", "taskset", "-c", str(cpu), "sh", "-c", SPIN])
    children = f"/proc/{hog.pid}/task/{hog.pid}/children"
    while not open(children).read().split():
        time.sleep(0.001)
    return hog, int(open(children).read().split()[0]), time.monotonic()


def stop_hog(hog: subprocess.Popen, pid: int, t0: float) -> float:
    """The cores the loop used since t0, then stop it (timeout passes the signal on)."""
    cores = proc_cpu_s(pid) / (time.monotonic() - t0)
    hog.terminate()
    hog.wait()
    return cores


def own_spin(cpu: int, seconds: float) -> list[str]:
    """A busy loop pinned to cpu for seconds, a grandchild of this process as mpirun's ranks are."""
    return ["sh", "-c", f'taskset -c {cpu} timeout {seconds} sh -c "{SPIN}"; true']


def test_a_hog_on_the_tests_core_is_seen_and_the_tests_own_loop_is_not():
    cpu = max(os.sched_getaffinity(0))
    with MachineLoad(cores=1, cpus={cpu}) as alone:
        subprocess.run(own_spin(cpu, 1.5), check=True)
    # The same loop, waited for only after the block: other work to this window.
    theirs = subprocess.Popen(own_spin(cpu, 1.5))
    try:
        with MachineLoad(cores=1, cpus={cpu}) as not_own:
            time.sleep(1.5)
    finally:
        theirs.wait()
    hog, pid, t0 = start_hog(cpu)
    try:
        with MachineLoad(cores=1, cpus={cpu}) as beside:
            subprocess.run(own_spin(cpu, 1.5), check=True)
    finally:
        hog_cores = stop_hog(hog, pid, t0)
    figures = {k: (round(m.own_cores, 2), round(m.others_cores, 2))
               for k, m in (("alone", alone), ("not own", not_own), ("beside", beside))}
    # The loop is counted as the test's own when it is waited for in the block, as another's when not.
    assert alone.own_cores >= 0.3, figures
    assert not_own.others_cores - alone.others_cores >= 0.5 * alone.own_cores, figures
    # A hog on the same core takes about half of it, and the check sees at least what it took.
    assert hog_cores >= 0.2 and beside.others_cores >= hog_cores - 0.1, (hog_cores, figures)
    why = beside.busy()
    assert why and "the machine was busy" in why and f"{beside.others_cores:.2f} of the 1 CPUs" in why, why


def test_an_mpi_run_beside_a_hog_is_busy_and_its_ranks_are_its_own(tmp_path):
    args = ("fft", "--sweep", "files", "--files", "8", "--reps", "5", "-q")
    with MachineLoad(cores=2) as plain:
        r = run_wb(2, *args, "-o", str(tmp_path / "a.h5"))
    assert r.returncode == 0, r.stderr
    hog, pid, t0 = start_hog(max(os.sched_getaffinity(0)))
    try:
        with MachineLoad(cores=2) as beside:
            r = run_wb(2, *args, "-o", str(tmp_path / "b.h5"))
    finally:
        hog_cores = stop_hog(hog, pid, t0)
    assert r.returncode == 0, r.stderr
    figures = {k: (round(m.own_cores, 2), round(m.others_cores, 2), round(m.taken, 3))
               for k, m in (("plain", plain), ("beside", beside))}
    # The ranks poll while they wait: mpirun's children are counted as the test's own.
    assert plain.own_cores >= 0.5, figures
    assert beside.others_cores >= hog_cores - 0.1 and beside.busy(), (hog_cores, figures)
