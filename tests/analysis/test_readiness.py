"""analysis/readiness.py: the report's warnings from /hosts (governor, Wi-Fi, mixed link speed,
mismatched versions) on synthetic tables, and none for a uniform cluster or an old file."""
from __future__ import annotations

import numpy as np

from analysis.derive import readiness

HOST = np.dtype([("rank", "<i4"), ("hostname", "S64"), ("governor", "S24"), ("iface", "S24"),
                 ("iface_kind", "S12"), ("link_mbps", "<i4"), ("git_rev", "S24"), ("mpi_library", "S96"),
                 ("fftw_version", "S32"), ("hdf5_version", "S16")])


def table(*changes: dict) -> np.ndarray:
    rows = []
    for rank, name in enumerate(("pi1", "pi2", "pi3", "pi4")):
        row = {"rank": rank, "hostname": name, "governor": "performance", "iface": "lo" if rank == 0 else "eth0",
               "iface_kind": "loopback" if rank == 0 else "ethernet", "link_mbps": -1 if rank == 0 else 1000,
               "git_rev": "abc1234", "mpi_library": "Open MPI v4.1.4", "fftw_version": "fftw-3.3.10",
               "hdf5_version": "1.10.8"}
        row.update(changes[rank] if rank < len(changes) else {})
        rows.append(tuple(row[k] for k in HOST.names))
    return np.array(rows, dtype=HOST)


def test_a_uniform_cluster_gives_no_warning():
    assert readiness.host_warnings(table()) == []


def test_each_problem_is_named_on_its_node():
    w = readiness.host_warnings(table({}, {"governor": "ondemand"}, {"iface": "wlan0", "iface_kind": "wifi"},
                                      {"link_mbps": 100, "git_rev": "0ldb01d"}))
    text = "\n".join(w)
    assert "governor not 'performance' on pi2 (ondemand)" in text
    assert "Wi-Fi link to rank 0 on pi3 (wlan0)" in text
    assert "mixed link speeds: pi4 (100 Mbit/s) below the others' 1000 Mbit/s" in text
    assert "mismatched git_rev across ranks: 'abc1234' on ranks 0,1,2; '0ldb01d' on rank 3" in text
    assert len(w) == 4


def test_a_file_without_the_columns_gives_no_warning():
    old = np.array([(0, b"pi1")], dtype=[("rank", "<i4"), ("hostname", "S64")])
    assert readiness.host_warnings(old) == []
