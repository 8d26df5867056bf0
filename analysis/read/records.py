"""The few names of a result file that the warnings and the drift line read beside open_run's
Run: node health, cpu_share, /hosts, t_plan, network counters and t_total. Each function reads
one file in a forked child (reader.in_child) and returns plain arrays; what they mean is worked
out by health, cpushare, readiness, netfaults and drift. An unreadable file raises OSError.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from pathlib import Path

import h5py
import numpy as np

from .h5groups import hosts_by_rank
from .reader import in_child, open_h5

NET_GROUPS = ("fft", "dfft", "transfer", "load")
NET_DROPS = ("rx_dropped", "tx_dropped", "rx_errors", "tx_errors")


def _groups(fh: h5py.File, top: str) -> list[tuple[str, h5py.Group]]:
    """The groups below /top, sorted by name; [] without /top."""
    if top not in fh:
        return []
    return [(pid, fh[top][pid]) for pid in sorted(fh[top].keys())
            if isinstance(fh[top][pid], h5py.Group)]


def _hosts(fh: h5py.File) -> np.ndarray | None:
    return fh["hosts"][()] if "hosts" in fh else None


@dataclass
class Health:
    points: list[tuple[str, np.ndarray]]  # (point id, its health/nodes rows)
    hosts: np.ndarray | None  # /hosts


def health(path: Path) -> Health:
    return in_child(_health, path)


def _health(path: Path) -> Health:
    with open_h5(path) as fh:
        return Health([(pid, g["health/nodes"][()]) for pid, g in _groups(fh, "fft")
                       if "health/nodes" in g], _hosts(fh))


@dataclass
class CpuShares:
    hosts: dict[int, str]  # rank -> host name
    points: list[tuple[str, np.ndarray, np.ndarray | None]]  # (point id, cpu_share, its baseline's)


def cpu_shares(path: Path) -> CpuShares:
    return in_child(_cpu_shares, path)


def _share(group: h5py.Group) -> np.ndarray | None:
    return np.asarray(group["cpu_share"][()], dtype=float) if "cpu_share" in group else None


def _cpu_shares(path: Path) -> CpuShares:
    with open_h5(path) as fh:
        points = []
        for pid, g in _groups(fh, "fft"):
            share = _share(g)
            if share is not None:
                points.append((pid, share, _share(g["baseline"]) if "baseline" in g else None))
        return CpuShares(hosts_by_rank(fh), points)


def hosts(path: Path) -> np.ndarray | None:
    """/hosts, None without it."""
    return in_child(_hosts_of, path)


def _hosts_of(path: Path) -> np.ndarray | None:
    with open_h5(path) as fh:
        return _hosts(fh)


def plan_times(path: Path) -> tuple[str, np.ndarray] | None:
    """The first fft point that records t_plan, with it; None without one."""
    return in_child(_plan_times, path)


def _plan_times(path: Path) -> tuple[str, np.ndarray] | None:
    with open_h5(path) as fh:
        for pid, g in _groups(fh, "fft"):
            if "t_plan" in g:
                t = np.asarray(g["t_plan"][()], dtype=float)
                if t.size and np.isfinite(t).any():
                    return pid, t
    return None


@dataclass
class NetRow:
    """One node's counters over one point (a leader rank's row of GROUP/net)."""

    point: str  # "p004", "transfer/pingpong", "load/s002"
    rank: int
    host: str
    retrans: int
    sent: int
    drops: int  # the interface's dropped and error packets, -1 unknown
    summed: bool  # the drops are the sum over every interface but lo

    @property
    def rate(self) -> float:
        """Retransmitted over sent segments; NaN when nothing was sent or a counter is unknown."""
        return self.retrans / self.sent if self.retrans >= 0 and self.sent > 0 else float("nan")


@dataclass
class Net:
    rows: list[NetRow]  # every leader's row of every point's net group, in file order
    node_of: dict[int, int]  # rank -> node, from /hosts
    pingpong: tuple[np.ndarray, np.ndarray, np.ndarray] | None  # t_p95, t_med, pairs
    totals: dict[str, np.ndarray] = field(default_factory=dict)  # fft and dfft t_total by point name
    map_test: object = None  # the test /transfer/pairs_all measured with, as stored
    nranks: int = 0
    syncs: dict[str, np.ndarray] = field(default_factory=dict)  # fft t_sync by point name, where stored


def point_name(kind: str, pid: str) -> str:
    return pid if kind == "fft" else f"{kind}/{pid}"


def net(path: Path) -> Net:
    return in_child(_net, path)


def _net(path: Path) -> Net:
    with open_h5(path) as fh:
        pp = fh.get("transfer/pingpong")
        pa = fh.get("transfer/pairs_all")
        node_of = {int(h["rank"]): int(h["node"]) for h in fh["hosts"][()]} if "hosts" in fh else {}
        return Net(_net_rows(fh), node_of,
                   tuple(np.asarray(pp[k][()]) for k in ("t_p95", "t_med", "pairs"))
                   if pp is not None and {"t_p95", "t_med", "pairs"} <= set(pp.keys()) else None,
                   {point_name(kind, pid): np.asarray(g["t_total"][()], dtype=float)
                    for kind in ("fft", "dfft") for pid, g in _groups(fh, kind) if "t_total" in g},
                   pa.attrs.get("test", "pingpong") if pa is not None else None,
                   int(fh.attrs.get("nranks", 0)),
                   {point_name("fft", pid): np.asarray(g["t_sync"][()], dtype=float)
                    for pid, g in _groups(fh, "fft") if "t_sync" in g})


def _net_rows(fh: h5py.File) -> list[NetRow]:
    names = hosts_by_rank(fh)
    out: list[NetRow] = []
    for kind in NET_GROUPS:
        for pid, g in _groups(fh, kind):
            if "net" not in g or "tcp_out_segs" not in g["net"]:
                continue
            counters = {k: np.asarray(g["net"][k][()], dtype=np.int64) for k in g["net"].keys()}
            for rank, sent in enumerate(counters["tcp_out_segs"]):
                if sent < 0 and counters["tcp_retrans_segs"][rank] < 0:
                    continue  # not a node's leader
                d = [int(counters[k][rank]) for k in NET_DROPS if k in counters]
                out.append(NetRow(point_name(kind, pid), rank, names.get(rank, f"rank {rank}"),
                                  int(counters["tcp_retrans_segs"][rank]), int(sent),
                                  sum(d) if d and min(d) >= 0 else -1,
                                  bool(counters.get("if_summed", np.zeros(rank + 1))[rank] == 1)))
    return out


def fft_totals(path: str | Path) -> list[tuple[tuple, np.ndarray]]:
    """Every fft point's (scenario, nfiles, seconds_per_file rounded to ms) and its t_total."""
    return in_child(_fft_totals, Path(path))


def _fft_totals(path: Path) -> list[tuple[tuple, np.ndarray]]:
    out = []
    with open_h5(path) as f:
        for g in f.get("fft", {}).values():
            a = g.attrs
            key = (str(a.get("scenario", "")), int(a.get("nfiles", 0)),
                   round(float(a.get("seconds_per_file", 0)), 3))
            out.append((key, np.asarray(g["t_total"][()], dtype=float) if "t_total" in g
                        else np.array([])))
    return out
