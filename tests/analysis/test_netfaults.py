"""Network faults in the report: a node that retransmitted more than 0.1 % of its segments during a
point is named with its pingpong tail, and transfer runs with all-pairs maps get a per-link figure."""

from __future__ import annotations

import math

import h5py
import numpy as np

import fixtures
from analysis import derive
from analysis.derive import netfaults, stats
from analysis.read.reader import open_run
from conftest import run_cli

NETS = ("tcp_retrans_segs", "tcp_out_segs", "rx_dropped", "tx_dropped", "rx_errors", "tx_errors", "if_summed")


def add_net(f: h5py.File, group: str, rows: dict[int, tuple[int, int, int]], nranks: int) -> None:
    """GROUP/net as wulfbench writes it: rows[rank] = (retransmitted, sent, rx_dropped) for each
    node's leader, -1 elsewhere."""
    for k, name in enumerate(NETS):
        v = np.full(nranks, -1, dtype=np.int64)
        for rank, (retrans, sent, drops) in rows.items():
            v[rank] = (retrans, sent, drops, 0, 0, 0, 0)[k]
        d = f.create_dataset(f"{group}/net/{name}", data=v)
        d.attrs["units"] = "1" if name == "if_summed" else "segments" if name.startswith("tcp") else "packets"


def pi_file(tmp_path):
    """The 4-node Pi fixture (one rank per node, pi0..pi3): pi2 retransmits 2.1 % during p001 and
    exactly 0.1 % during p002; its pingpong pair (0, 2) has a p95 40x its median."""
    path = fixtures.write_run(tmp_path / "pi.h5", fixtures.PI)
    with h5py.File(path, "a") as f:
        quiet = {r: (0, 1000, 0) for r in range(4)}
        add_net(f, "fft/p000", quiet, 4)
        add_net(f, "fft/p001", {**quiet, 2: (21, 1000, 3)}, 4)
        add_net(f, "fft/p002", {**quiet, 2: (1, 1000, 0)}, 4)
        g = f["transfer/pingpong"]
        med = g["t_med"][()]
        p95 = med * 1.2
        p95[:, list(g["pairs"][()][:, 1]).index(2)] *= 40 / 1.2
        g.create_dataset("t_p95", data=p95).attrs["units"] = "s"
    return path


def test_a_node_above_a_tenth_of_a_percent_is_named_with_its_pingpong_tail(tmp_path):
    lines = netfaults.warnings(pi_file(tmp_path))
    assert lines == ["pi2: 2.1% of segments retransmitted during p001 (21 of 1000); its pingpong p95 is 40x "
                     "its median; 3 packets dropped or in error on its link"], lines


def ec2_file(tmp_path):
    """The EC2 fixture (2 nodes of 4 ranks, all-pairs maps): node 1 retransmits 5 % in pingpong."""
    path = fixtures.write_run(tmp_path / "ec2.h5", fixtures.EC2)
    with h5py.File(path, "a") as f:
        add_net(f, "transfer/pingpong", {0: (0, 5000, 0), 4: (250, 5000, 0)}, fixtures.EC2.nranks)
    return path


def test_transfer_runs_get_a_per_link_retransmission_figure(tmp_path):
    test, m = netfaults.link_retrans(ec2_file(tmp_path))
    assert test == "pingpong" and m.shape == (8, 8)
    assert m[0, 1] == 0 and m[5, 6] == 0.05 and m[0, 4] == 0.05 and m[4, 0] == 0.05
    assert all(math.isnan(m[k, k]) for k in range(8))


def load_steps(path, rates: dict[str, float]):
    """The Pi fixture's load steps, with node pi3 retransmitting rates[step] (0 elsewhere)."""
    with h5py.File(path, "a") as f:
        for sid in f["load"]:
            if isinstance(f["load"][sid], h5py.Group):
                add_net(f, f"load/{sid}", {0: (0, 10000, 0), 3: (int(10000 * rates.get(sid, 0)), 10000, 0)}, 4)
    return derive.load_analysis(open_run(path))[0]


def test_the_saturation_verdict_names_loss_when_retransmissions_rose(tmp_path):
    path = fixtures.write_run(tmp_path / "pi.h5", fixtures.PI)
    steps = load_steps(path, {})
    fail = next(s for s in sorted(steps, key=lambda s: s.load) if not s.healthy)
    steps = load_steps(fixtures.write_run(tmp_path / "lossy.h5", fixtures.PI), {fail.step.id: 0.03})
    cause = netfaults.load_cause(tmp_path / "lossy.h5", steps)
    assert cause.startswith(f"; with loss: pi3 retransmitted 3.0% of its TCP segments during {fail.step.id}"), cause
    # The same loss at every step did not rise: not named as the cause.
    flat = {s.step.id: 0.03 for s in steps}
    steps = load_steps(fixtures.write_run(tmp_path / "flat.h5", fixtures.PI), flat)
    assert netfaults.load_cause(tmp_path / "flat.h5", steps) == ""


def test_the_report_names_the_node_and_draws_the_link_figure(tmp_path):
    folder = tmp_path / "runs"
    folder.mkdir()
    pi_file(folder)
    ec2_file(folder)
    out = tmp_path / "report"
    proc = run_cli(str(folder), "-o", str(out), "-q")
    assert proc.returncode == 0, proc.stderr
    summary = (out / "summary.md").read_text()
    assert "pi2: 2.1% of segments retransmitted during p001" in summary
    assert "during p002" not in summary and "during p000" not in summary
    assert "ip-10-0-0-12: 5.0% of segments retransmitted during transfer/pingpong" in summary
    rows = (out / "transfer_link_retrans_ec2-c5x2.csv").read_text().splitlines()
    assert len(rows) == 1 + 8 * 7, rows[:3]


def test_a_few_retransmissions_are_named_where_the_point_spread(tmp_path):
    """Below 0.1 % a node is named only in a point whose repetitions spread (a link down for seconds
    costs a handful of retransmissions, each after a doubling timeout): p002's 1 of 1000 is named
    once one of its repetitions took 5x the others, and not before."""
    path = pi_file(tmp_path)
    assert not any("during p002" in l for l in netfaults.warnings(path))
    with h5py.File(path, "a") as f:
        t = f["fft/p002/t_total"]
        v = t[()]
        v[0] *= 5
        t[...] = v
    lines = [l for l in netfaults.warnings(path) if "during p002" in l]
    assert len(lines) == 1 and lines[0].startswith("pi2: 0.10% of segments retransmitted during p002 (1 of 1000), "
                                                   "a point the report calls unstable (CV "), lines


def test_a_stall_between_windows_makes_the_point_unstable_and_names_the_node(tmp_path):
    """A link down for seconds while no window was open stalls the agreements and the start barrier,
    not t_total: t_sync carries it. Over stats.STALL_S the point is unstable in the report's status
    and in the network warnings, by the same rule; a healthy t_sync of milliseconds changes
    nothing, and a file without t_sync reads as before."""
    path = pi_file(tmp_path)
    with h5py.File(path, "a") as f:
        reps = f["fft/p002/t_total"].shape[0]
        sync = np.full(reps, 0.002)
        f.create_dataset("fft/p002/t_sync", data=sync)
    assert not any("during p002" in l for l in netfaults.warnings(path))
    st = {s.point.id: s for s in derive.run_point_stats(open_run(path))}
    assert not st["p002"].status.startswith("unstable"), st["p002"].status
    with h5py.File(path, "a") as f:
        sync[1] = stats.STALL_S + 4.3
        f["fft/p002/t_sync"][...] = sync
    st = {s.point.id: s for s in derive.run_point_stats(open_run(path))}
    assert st["p002"].status == f"unstable (stalled {stats.STALL_S + 4.3:.1f} s before repetition 2)", st["p002"].status
    lines = [l for l in netfaults.warnings(path) if "during p002" in l]
    assert len(lines) == 1 and "a point the report calls unstable (stalled 5.3 s before repetition 2)" in lines[0], lines
