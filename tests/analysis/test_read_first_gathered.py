"""Read first stays short at any node count: 16 nodes' retransmission warnings become one line (how
many nodes and points, the worst with its figure), and "Read first, in detail" holds every one; a
file on more ranks than usable cores says so first, before any other line."""

from __future__ import annotations

import csv

import h5py
import numpy as np

import fixtures
from analysis.derive import ceilings
from analysis.read.reader import open_run
from conftest import run_cli
from test_netfaults import add_net

SIXTEEN = fixtures.Cluster(label="pi16", hosts=tuple(f"pi{k}" for k in range(1, 17)), transfer=False,
                           load=False, straggler_rank=None, unstable_point=None, seed=5)


def lossy_file(tmp_path):
    """16 nodes, each retransmitting in every fft point; pi12 the worst (1.9 %) at the second."""
    path = fixtures.write_run(tmp_path / "pi16.h5", SIXTEEN)
    with h5py.File(path, "a") as f:
        pids = sorted(f["fft"])
        for k, pid in enumerate(pids):
            rows = {r: (3 + r % 4, 2000, 0) for r in range(16)}
            if k == 1:
                rows[11] = (34, 1803, 0)
            add_net(f, f"fft/{pid}", rows, 16)
    return path, len(pids)


def read_first(summary: str) -> list[str]:
    part = summary.split("## Read first", 1)[1].split("\n## ", 1)[0]
    return [line for line in part.splitlines() if line.startswith("- ")]


def test_sixteen_nodes_of_retransmissions_are_one_line_and_a_table(tmp_path):
    path, npoints = lossy_file(tmp_path)
    out = tmp_path / "report"
    proc = run_cli(str(path), "-o", str(out), "-q")
    assert proc.returncode == 0, proc.stderr
    lines = read_first((out / "summary.md").read_text())
    net = [line for line in lines if "retransmitted" in line]
    assert len(net) == 1, lines
    assert f"16 node(s) retransmitted TCP segments in {npoints} point(s)" in net[0], net[0]
    assert "pi12: 1.9% of segments retransmitted" in net[0] and "(34 of 1803)" in net[0], net[0]
    assert len(lines) <= 10, lines
    with open(out / "read_first_detail.csv") as fh:
        rows = [r for r in csv.DictReader(fh) if r["kind"] == "retransmitted segments"]
    assert len(rows) == 16 * npoints
    assert {r["node"] for r in rows} == {f"pi{k}" for k in range(1, 17)}


def test_two_warnings_of_a_kind_stay_two_lines(tmp_path):
    path = fixtures.write_run(tmp_path / "pi.h5", fixtures.PI)
    with h5py.File(path, "a") as f:
        pid = sorted(f["fft"])[0]
        add_net(f, f"fft/{pid}", {0: (0, 1000, 0), 1: (30, 1000, 0), 2: (40, 1000, 0), 3: (0, 1000, 0)}, 4)
    out = tmp_path / "report"
    proc = run_cli(str(path), "-o", str(out), "-q")
    assert proc.returncode == 0, proc.stderr
    net = [line for line in read_first((out / "summary.md").read_text()) if "retransmitted" in line]
    assert len(net) == 2 and "pi1: 3.0%" in net[0] and "pi2: 4.0%" in net[1], net


def crowded_file(tmp_path):
    """The Pi fixture as if its 4 ranks ran on one 2-core machine: /ceilings/machines says so."""
    path = fixtures.write_run(tmp_path / "crowded.h5", fixtures.PI)
    dt = np.dtype([("name", "S64"), ("boot_id", "S40"), ("nodes", "<i4"), ("ranks", "<i4"), ("cores", "<i4"),
                   ("cores_usable", "<i4"), ("cpu_quota", "<f8"), ("copy_Bps", "<f8"), ("link_mbps", "<i4")])
    with h5py.File(path, "a") as f:
        f.create_dataset("ceilings/machines", data=np.array([(b"pi0", b"b00t", 4, 4, 4, 2, 2.0, 3e9, 1000)], dt))
    return path


def test_an_oversubscribed_run_says_so_first(tmp_path):
    path = crowded_file(tmp_path)
    run = open_run(path)
    assert [m.name for m in ceilings.oversubscribed(run)] == ["pi0"]
    out = tmp_path / "report"
    proc = run_cli(str(path), "-o", str(out), "-q")
    assert proc.returncode == 0, proc.stderr
    lines = read_first((out / "summary.md").read_text())
    assert "OVERSUBSCRIBED: pi0 ran 4 ranks on 2 usable cores" in lines[0], lines
    assert "a cgroup quota of 2.00 CPUs" in lines[0]


def test_a_machine_with_a_core_per_rank_is_not_named(tmp_path):
    path = fixtures.write_run(tmp_path / "pi.h5", fixtures.PI)
    assert ceilings.oversubscribed(open_run(path)) == []
    assert ceilings.oversubscription_line(open_run(path)) == ""
