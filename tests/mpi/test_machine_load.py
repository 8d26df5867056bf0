"""MachineLoad, the check the timing tests make before they assert a timing: it must see other work."""
from __future__ import annotations

import os
import subprocess
import time

from conftest import MachineLoad


def test_a_spin_loop_on_every_cpu_makes_the_machine_busy():
    hogs = [subprocess.Popen(["sh", "-c", "while :; do :; done"]) for _ in range(os.cpu_count() or 1)]
    try:
        with MachineLoad(cores=1) as load:
            time.sleep(0.5)
    finally:
        # Waited for only after the block: until then their CPU time is other processes'.
        for hog in hogs:
            hog.kill()
            hog.wait()
    assert load.busy() is not None and "the machine was busy" in load.busy(), load.others_cores
