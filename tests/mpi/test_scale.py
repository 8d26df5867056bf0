"""What wulfbench records about its own cost, and the node map it builds at start-up."""
import os
import re
import shlex
import shutil
import subprocess
import sys
import time

import h5py
import numpy as np
import pytest

from conftest import BIN, ROOT, launcher, mpi_env, run_wb

sys.path.insert(0, str(ROOT))
from analysis.derive import owntime  # noqa: E402
from analysis.read.owntime import read_own  # noqa: E402


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


def test_a_real_runs_own_time_adds_up_to_its_wall_time(tmp_path):
    out = tmp_path / "s.h5"
    t0 = time.time()
    r = run_wb(3, "suite", "--reps", "1", "-x", "0", "--power", "none", "--power-idle", "0", "-q", "-o", str(out),
               timeout=300)
    t1 = time.time()
    assert r.returncode == 0, r.stdout + r.stderr
    with h5py.File(out, "r") as f:
        a = dict(f.attrs)
        rec = read_own(f)
    own = owntime.own_time(rec)
    # Rank 0's timeline, on the clock this test reads, lies inside the launcher's run and in order.
    assert t0 <= a["t_main_utc"] <= a["t_run_start_utc"] <= a["t_run_end_utc"] <= a["t_close_utc"] <= t1, a
    # Every window the file times on that clock lies inside the subcommand.
    assert rec.utc and rec.load_s and rec.io and rec.transfer
    for group, (start, end) in rec.utc.items():
        assert np.all(start >= a["t_run_start_utc"]) and np.all(end <= a["t_run_end_utc"]), group
        assert np.all(end >= start), group
    # fft and dfft planned, io and load aligned clocks, every point was written: each part was timed.
    assert own.plan_s > 0 and own.clock_align_s > 0 and own.write_s > 0 and own.startup_s > 0
    # The timed parts overlap neither each other nor the windows: together they stay within the wall time
    # (a hundredth of it for the transfer windows, which are counted from per-operation times).
    timed = own.startup_s + own.windows_s + own.plan_s + own.clock_align_s + own.write_s
    assert timed <= own.wall_s * 1.01 + 0.01, own
    assert sum(own.part(k) for k in owntime.PARTS) == pytest.approx(own.wall_s)


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


@pytest.mark.skipif(os.geteuid() != 0 or not shutil.which("unshare"),
                    reason="a host name of its own per rank needs root and unshare (util-linux)")
def test_the_pair_maps_rank_and_node_medians_are_those_of_the_files_map(tmp_path):
    if "mpich" in " ".join(launcher(1)):
        pytest.skip("the host names come from Open MPI's OMPI_COMM_WORLD_RANK")
    out = tmp_path / "p.h5"
    script = ('set -- z a m; shift $((OMPI_COMM_WORLD_RANK % 3)); hostname node-$1; '
              f'exec "$0" transfer --pairs all --tests pingpong -m 8,1k -i 3 -o {shlex.quote(str(out))}')
    r = subprocess.run([*launcher(5), "unshare", "--uts", "sh", "-c", script, str(BIN)], capture_output=True,
                       text=True, timeout=180, cwd=ROOT, env=mpi_env(), stdin=subprocess.DEVNULL)
    assert r.returncode == 0, r.stdout + r.stderr
    with h5py.File(out, "r") as f:
        lat, bw = f["transfer/pairs_all/latency_s"][:], f["transfer/pairs_all/bandwidth_Bps"][:]
    node, n = [0, 1, 2, 0, 1], 5

    def med(inside):
        cells = [(a, b) for a in range(n) for b in range(n) if a != b and inside(a) != inside(b)]
        return np.median([lat[c] for c in cells]) * 1e6, np.median([bw[c] for c in cells]) / 1e6

    ranks = re.findall(r"^\s+(\d)\s+\d\s+node-\w\s+([\d.]+)\s+!?\s*([\d.]+)", r.stdout, re.M)
    nodes = re.findall(r"^\s+(\d)\s+node-\w\s+([\d.]+)\s+!?\s*([\d.]+)", r.stdout, re.M)
    assert len(ranks) == 5 and len(nodes) == 3, r.stdout
    for q, l, b in ranks:
        want = med(lambda a, q=int(q): a == q)
        assert (float(l), float(b)) == pytest.approx(want, abs=0.006), (q, r.stdout)
    for k, l, b in nodes:
        want = med(lambda a, k=int(k): node[a] == k)
        assert (float(l), float(b)) == pytest.approx(want, abs=0.006), (k, r.stdout)
