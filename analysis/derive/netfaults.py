"""Network faults: each node's TCP retransmissions and interface drops per point, from `GROUP/net/`
(read by each node's lowest rank over the point; -1 on the other ranks and where unreadable).

TCP hides a lossy cable or switch port as retransmissions, so a run on one only looks slow: the
report names every node that retransmitted more than RETRANS_WARN of the segments it sent during a
point, with its pingpong tail where the file has one, and gives transfer runs a per-link figure.
"""

from __future__ import annotations

from pathlib import Path

import numpy as np

from ..read import records
from . import stats

RETRANS_WARN = 0.001  # 0.1 %: a healthy switched Ethernet retransmits far less


NodeNet = records.NetRow  # one node's counters over one point


def pct(share: float) -> str:
    """A share as a percentage with two significant places near the threshold: 2.1%, 0.23%,
    0.0031%."""
    if 0 < share < 1e-4:
        return f"{100 * share:.2g}%"  # 0.0031%, not 0.00%
    return f"{100 * share:.2f}%" if share < 0.01 else f"{100 * share:.1f}%"


def _text(value: object) -> str:
    return value.decode(errors="replace") if isinstance(value, bytes) else str(value)


def pingpong_tail(net: records.Net) -> dict[int, float]:
    """Per rank: the largest p95 over median of /transfer/pingpong over sizes and the pairs the rank
    is in. {} without a pingpong test."""
    if net.pingpong is None:
        return {}
    p95, med = (np.asarray(a, float) for a in net.pingpong[:2])
    pairs = np.asarray(net.pingpong[2], int)
    with np.errstate(all="ignore"):
        ratio = p95 / med
    out: dict[int, float] = {}
    for p, (s, r) in enumerate(pairs):
        col = ratio[:, p] if ratio.ndim == 2 else ratio
        col = col[np.isfinite(col)]
        if col.size:
            for rank in (int(s), int(r)):
                out[rank] = max(out.get(rank, 0.0), float(col.max()))
    return out


def unstable_points(net: records.Net) -> dict[str, str]:
    """The fft and dfft points the report calls unstable (stats.unsteady: t_total spreads, or a
    repetition stalled between its windows), named as in NodeNet.point, with the reason."""
    out = {}
    for name, t in net.totals.items():
        t = t.max(axis=1) if t.ndim == 2 else t.ravel()
        why = stats.unsteady(t, net.syncs.get(name))
        if why:
            out[name] = why
    return out


def warnings(path: Path) -> list[str]:
    """One line per node and point above RETRANS_WARN: "pi3: 2.1% of segments retransmitted during
    p004; its pingpong p95 is 40x its median". [] for files without net data."""
    return [line for line, _row in warning_rows(path)]


def warning_rows(path: Path) -> list[tuple[str, NodeNet]]:
    """warnings(path), each line with the node's counters it was made from."""
    try:
        net = records.net(path)
    except OSError:
        return []  # the loader has said why the file cannot be read
    rows, tail, node, spread = net.rows, pingpong_tail(net), net.node_of, unstable_points(net)
    out = []
    for n in rows:
        if not np.isfinite(n.rate) or n.retrans <= 0:
            continue
        # Below the threshold a node is named only where its point's repetitions spread: a link that
        # went down for seconds costs a few retransmissions, each after a timeout that doubles.
        if n.rate <= RETRANS_WARN and n.point not in spread:
            continue
        line = f"{n.host}: {pct(n.rate)} of segments retransmitted during {n.point}"
        line += f" ({n.retrans} of {n.sent})"
        if n.rate <= RETRANS_WARN:
            line += (f", a point the report calls unstable ({spread[n.point]}): a few "
                     "retransmissions after timeouts can stall a repetition for seconds")
        # The pingpong ranks of this node (the leader speaks for all ranks of its node).
        mine = [t for r, t in tail.items() if node.get(r, r) == node.get(n.rank, n.rank)]
        if mine:
            line += f"; its pingpong p95 is {max(mine):.0f}x its median"
        if n.drops > 0:
            line += f"; {n.drops} packets dropped or in error on " + ("its interfaces" if n.summed
                                                                          else "its link")
        out.append((line, n))
    return out


def link_retrans(path: Path) -> tuple[str, np.ndarray] | None:
    """For a run with /transfer/pairs_all: the map test's name and an [N, N] matrix of each link's
    retransmission share over that test, the larger of its two ends' (a node's counters cover all
    its links, so this is an upper bound per link); NaN on the diagonal and where unknown."""
    try:
        net = records.net(path)
    except OSError:
        return None
    if net.map_test is None:
        return None
    test = _text(net.map_test)
    name = f"transfer/{test}"
    rates = {n.rank: n.rate for n in net.rows if n.point == name}
    node = net.node_of
    nranks = net.nranks or (max(node) + 1 if node else 0)
    if not rates or nranks < 2:
        return None
    leader = {node.get(r, r): rate for r, rate in rates.items()}
    per_rank = np.array([leader.get(node.get(r, r), np.nan) for r in range(nranks)], float)
    m = np.maximum.outer(per_rank, per_rank)  # NaN where either end is unknown
    np.fill_diagonal(m, np.nan)
    return test, m


def load_cause(path: Path, steps) -> str:
    """"; with loss: ..." when the first unhealthy load step (steps: derive.LoadStepStats in load
    order) had a node retransmitting more than RETRANS_WARN of its segments, more than at every
    healthy step before it; "" otherwise (no net data, no failing step, or no rise)."""
    try:
        rows = records.net(path).rows
    except OSError:
        return ""
    worst: dict[str, NodeNet] = {}
    for n in rows:
        if n.point.startswith("load/") and np.isfinite(n.rate):
            sid = n.point[len("load/"):]
            if sid not in worst or n.rate > worst[sid].rate:
                worst[sid] = n
    ordered = sorted(steps, key=lambda s: s.load)
    fail = next((s for s in ordered if not s.healthy), None)
    if fail is None or fail.step.id not in worst:
        return ""
    bad = worst[fail.step.id]
    before = [worst[s.step.id].rate for s in ordered if s.healthy and s.load < fail.load and s.step.id in worst]
    if bad.rate <= RETRANS_WARN or (before and bad.rate <= max(before)):
        return ""
    was = f" ({pct(max(before))} at most at the healthy steps before)" if before else ""
    return (f"; with loss: {bad.host} retransmitted {pct(bad.rate)} of its TCP segments during "
            f"{fail.step.id}{was}, so the network, not the nodes' compute, is the likely cause")
