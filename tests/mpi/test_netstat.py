"""Network counters per point (GROUP/net/): the fault build reads /proc/net and /sys/class/net under
WB_SYSFS_ROOT, and a helper thread moves a fake tree while the run goes on, by a fixed step, so the
deltas a point records must keep the step's proportions."""

from __future__ import annotations

import os
import threading
from pathlib import Path

import h5py
import numpy as np

from conftest import run_faults

# Per step of the helper: TCP retransmissions +1, segments sent +100; eth0 rx_dropped +2; wlan0 +1000.
STEP = {"retrans": 1, "out": 100, "eth0": 2, "wlan0": 1000}
NETS = ("tcp_retrans_segs", "tcp_out_segs", "rx_dropped", "tx_dropped", "rx_errors", "tx_errors", "if_summed")


def put(path: Path, text: str) -> None:
    """Replace path at once, so a reader sees the old or the new content, never half of one."""
    tmp = path.with_name(path.name + ".tmp")
    tmp.write_text(text)
    os.replace(tmp, path)


def write_tree(root: Path, k: int, route: bool) -> None:
    names = "Tcp: RtoAlgorithm RtoMin RtoMax MaxConn ActiveOpens PassiveOpens AttemptFails EstabResets " \
            "CurrEstab InSegs OutSegs RetransSegs InErrs OutRsts InCsumErrors\n"
    values = f"Tcp: 1 200 120000 -1 5 3 0 0 2 {900 + k} {1000 + STEP['out'] * k} {7 + STEP['retrans'] * k} 0 0 0\n"
    put(root / "proc/net/snmp", "Ip: Forwarding DefaultTTL\nIp: 1 64\n" + names + values)
    for iface in ("eth0", "wlan0"):
        st = root / f"sys/class/net/{iface}/statistics"
        put(st / "rx_dropped", f"{10 + STEP[iface] * k}\n")
        for c in ("tx_dropped", "rx_errors", "tx_errors"):
            put(st / c, "4\n")
    if route:
        # Rank 0 is reached through eth0 (the default route); wlan0 only carries a subnet no rank has.
        put(root / "proc/net/route",
            "Iface\tDestination\tGateway \tFlags\tRefCnt\tUse\tMetric\tMask\t\tMTU\tWindow\tIRTT\n"
            "eth0\t00000000\t0100A8C0\t0003\t0\t0\t0\t00000000\t0\t0\t0\n"
            "wlan0\t0000FEA9\t00000000\t0001\t0\t0\t0\t0000FFFF\t0\t0\t0\n")


def fake_net(root: Path, route: bool):
    """The tree, and a started thread that moves it one step every 5 ms until the returned event is set."""
    for iface in ("eth0", "wlan0"):
        (root / f"sys/class/net/{iface}/statistics").mkdir(parents=True)
    (root / "proc/net").mkdir(parents=True)
    write_tree(root, 0, route)
    stop = threading.Event()

    def move():
        k = 0
        while not stop.wait(0.005):
            k += 1
            write_tree(root, k, route)

    t = threading.Thread(target=move, daemon=True)
    t.start()
    return stop


def nets(f: h5py.File, group: str) -> dict[str, np.ndarray]:
    g = f[group + "/net"]
    assert {n: g[n].attrs["units"] for n in NETS} == {
        "tcp_retrans_segs": "segments", "tcp_out_segs": "segments", "rx_dropped": "packets",
        "tx_dropped": "packets", "rx_errors": "packets", "tx_errors": "packets", "if_summed": "1"}
    return {n: g[n][()] for n in NETS}


def test_each_point_carries_its_nodes_deltas_from_the_interface_to_rank0(tmp_path):
    root = tmp_path / "root"
    stop = fake_net(root, route=True)
    out = tmp_path / "n.h5"
    try:
        r = run_faults(3, "fft", "--sweep", "files", "--files", "1,2", "--file-seconds", "5", "--reps", "8",
                       "--plan", "estimate", "-q", "-o", str(out), env={"WB_SYSFS_ROOT": str(root)})
    finally:
        stop.set()
    assert r.returncode == 0, r.stderr
    with h5py.File(out, "r") as f:
        for p in ("/fft/p000", "/fft/p001"):
            v = nets(f, p)
            # One node: rank 0 leads it, the others read nothing.
            assert all(v[n][1:].tolist() == [-1, -1] for n in NETS), v
            retrans, sent = v["tcp_retrans_segs"][0], v["tcp_out_segs"][0]
            assert retrans > 0 and sent == STEP["out"] * retrans, v
            # eth0's drops only (wlan0 would add 1000 a step), the unmoved counters 0.
            assert 0 < v["rx_dropped"][0] < STEP["wlan0"], v
            assert v["tx_dropped"][0] == v["rx_errors"][0] == v["tx_errors"][0] == 0, v
            assert v["if_summed"][0] == 0


def test_without_a_route_the_counters_are_summed_and_said_so(tmp_path):
    root = tmp_path / "root"
    stop = fake_net(root, route=False)
    out = tmp_path / "t.h5"
    try:
        r = run_faults(2, "transfer", "--tests", "pingpong", "-m", "8,64k", "-q", "-o", str(out),
                       env={"WB_SYSFS_ROOT": str(root)})
    finally:
        stop.set()
    assert r.returncode == 0, r.stderr
    assert "net/if_summed = 1" in r.stderr, r.stderr
    with h5py.File(out, "r") as f:
        v = nets(f, "/transfer/pingpong")
        assert v["if_summed"].tolist() == [1, -1], v
        assert v["tcp_out_segs"][0] == STEP["out"] * v["tcp_retrans_segs"][0] > 0, v
        assert v["rx_dropped"][0] >= STEP["wlan0"], v
