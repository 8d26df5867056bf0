"""MachineLoad, the check a timing test makes before it asserts a timing: it must see other work on
the test's own cores during the test's own window, and must not count the test's own processes.

The machine runs other jobs while these tests run (20 runnable processes were seen here), so no claim
rests on what share of a core a loop gets: each holds the check's figures to the CPU time the loop
or the ranks themselves report for the same window. How the figures turn into a verdict is a plain
rule, checked on the figures that once misled it."""
from __future__ import annotations

import os
import subprocess
import sys
import time

import h5py
import numpy as np

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


# /proc/stat and /proc/PID/stat count in clock ticks: a few of them are what two readings of a loop's
# CPU time can differ by.
TICKS_S = 3 / os.sysconf("SC_CLK_TCK")


class Loop:
    """A busy loop pinned to cpu, ended by timeout should the test never stop it; its CPU time so far
    from its own /proc stat."""

    def __init__(self, cpu: int) -> None:
        self.proc = subprocess.Popen(["timeout", "60", "taskset", "-c", str(cpu), "sh", "-c", SPIN])
        children = f"/proc/{self.proc.pid}/task/{self.proc.pid}/children"
        while not open(children).read().split():
            time.sleep(0.001)
        self.pid = int(open(children).read().split()[0])

    def cpu_s(self) -> float:
        return proc_cpu_s(self.pid)

    def stop(self) -> float:
        """Its CPU seconds, then stop it (timeout passes the signal on and waits for it)."""
        used = self.cpu_s()
        self.proc.terminate()
        self.proc.wait()
        return used


def test_the_tests_own_loop_is_its_own_and_anothers_loop_on_its_core_is_seen():
    cpu = max(os.sched_getaffinity(0))
    with MachineLoad(cores=1, cpus={cpu}) as mine:
        loop = Loop(cpu)
        time.sleep(1.5)
        mine_s = loop.stop()
    loop = Loop(cpu)
    try:
        before = loop.cpu_s()
        with MachineLoad(cores=1, cpus={cpu}) as theirs:
            time.sleep(1.5)
        theirs_s = loop.cpu_s() - before
    finally:
        loop.stop()
    figures = {k: (round(m.own_cores * m.wall_s, 3), round(m.others_cores * m.wall_s, 3))
               for k, m in (("mine", mine), ("theirs", theirs))} | {"loop": (round(mine_s, 3), round(theirs_s, 3))}
    # Waited for in the block, the loop is the test's own, whatever share of the core it got, and the
    # other work is at most what the core had left.
    assert mine.own_cores * mine.wall_s >= mine_s - TICKS_S, figures
    assert mine.others_cores * mine.wall_s <= mine.wall_s - mine_s + TICKS_S, figures
    # Waited for after it, the loop is another's: counted as other work, and not as the test's.
    assert theirs.others_cores * theirs.wall_s >= theirs_s - TICKS_S, figures
    assert theirs.own_cores * theirs.wall_s < 0.5 * theirs_s, figures
    # Nothing of that core was the test's: the check calls it busy, with the figure.
    why = theirs.busy()
    assert why and "the machine was busy" in why and f"{theirs.others_cores:.2f} of the 1 CPUs" in why, why


def test_an_mpi_run_beside_a_hog_is_busy_and_its_ranks_are_its_own(tmp_path):
    args = ("fft", "--sweep", "files", "--files", "8", "--reps", "5", "-q")
    with MachineLoad(cores=2) as plain:
        r = run_wb(2, *args, "-o", str(tmp_path / "a.h5"))
    assert r.returncode == 0, r.stderr
    with h5py.File(tmp_path / "a.h5") as f:
        ranks_cpu_s = float(np.sum(f["fft/p000/t_cpu"][()]))
    loop = Loop(max(os.sched_getaffinity(0)))
    try:
        before = loop.cpu_s()
        with MachineLoad(cores=2) as beside:
            r = run_wb(2, *args, "-o", str(tmp_path / "b.h5"))
        loop_s = loop.cpu_s() - before
    finally:
        loop.stop()
    assert r.returncode == 0, r.stderr
    figures = {k: (round(m.own_cores * m.wall_s, 3), round(m.others_cores * m.wall_s, 3), round(m.taken, 3))
               for k, m in (("plain", plain), ("beside", beside))} | {"ranks": ranks_cpu_s, "loop": loop_s}
    # The CPU time the ranks recorded in their repetitions is within the test's own: mpirun's
    # children are counted as the test's, whatever share of the cores they got.
    assert plain.own_cores * plain.wall_s >= ranks_cpu_s, figures
    assert plain.others_cores * plain.wall_s <= 2 * plain.wall_s - ranks_cpu_s + TICKS_S, figures
    # Beside a loop on one of its cores, the check sees at least what the loop used, and calls it busy.
    assert beside.others_cores * beside.wall_s >= loop_s - TICKS_S and beside.busy(), figures
