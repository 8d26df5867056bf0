"""What wulfbench records about its own cost, and the node map it builds at start-up."""
import os
import re
import shutil
import subprocess

import h5py
import pytest

from conftest import BIN, ROOT, launcher, mpi_env, run_wb


def test_the_file_records_rank_0s_and_the_largest_ranks_peak_memory(tmp_path):
    out = tmp_path / "d.h5"
    r = run_wb(3, "dfft", "--dims", "3", "--n", "32", "--reps", "1", "-x", "0", "--power", "none", "-q",
               "-o", str(out))
    assert r.returncode == 0, r.stdout + r.stderr
    with h5py.File(out, "r") as f:
        a = f.attrs
        rss0, rssmax, at = a["peak_rss_rank0_bytes"], a["peak_rss_max_bytes"], int(a["peak_rss_max_rank"])
    # A process that ran MPI, FFTW and HDF5 holds megabytes, far below this machine's memory.
    assert 1e6 < rss0 <= rssmax < os.sysconf("SC_PAGE_SIZE") * os.sysconf("SC_PHYS_PAGES")
    assert 0 <= at < 3


@pytest.mark.skipif(os.geteuid() != 0 or not shutil.which("unshare"),
                    reason="a host name of its own per rank needs root and unshare (util-linux)")
def test_nodes_are_numbered_by_first_appearance_whatever_the_names_sort_as(tmp_path):
    # Each rank in its own UTS namespace: ranks 0..4 on hosts z, a, m, z, a (sorted: a, m, z).
    script = 'set -- z a m; shift $((OMPI_COMM_WORLD_RANK % 3)); hostname node-$1; exec "$0" info'
    if "mpich" in " ".join(launcher(1)):
        pytest.skip("the host names come from Open MPI's OMPI_COMM_WORLD_RANK")
    r = subprocess.run([*launcher(5), "unshare", "--uts", "sh", "-c", script, str(BIN)], capture_output=True,
                       text=True, timeout=120, cwd=ROOT, env=mpi_env(), stdin=subprocess.DEVNULL)
    assert r.returncode == 0, r.stdout + r.stderr
    assert re.search(r"^ranks\s+5 on 3 nodes", r.stdout, re.M), r.stdout
    rows = re.findall(r"^(\d+)\s+(\d+)\s+(node-\w)\s", r.stdout, re.M)
    assert [(int(q), int(n), h) for q, n, h in rows] == [
        (0, 0, "node-z"), (1, 1, "node-a"), (2, 2, "node-m"), (3, 0, "node-z"), (4, 1, "node-a")]
