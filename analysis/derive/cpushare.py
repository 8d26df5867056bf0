"""Shared cores: how much of its part of each repetition a rank's thread actually ran, from
`/fft/<id>/cpu_share` (and the paired baseline's), its CPU time over its wall time.

A rank that shares its core with another rank or program, is held to a CPU quota, or whose
virtual CPU the hypervisor gives to another guest (steal, as on EC2's burstable instances), runs
less than the wall clock says. Its times then measure the sharing, not the code or the link, and nothing else in the file
tells the two apart; the report says so, naming the ranks.
"""

from __future__ import annotations

from pathlib import Path

import numpy as np

from ..read import records

SHARE_WARN = 0.9  # a rank alone on its core runs 99.9 % of its wall time here


def _medians(share: np.ndarray | None) -> np.ndarray | None:
    """Median over repetitions of each rank's cpu_share; None where the point has none."""
    if share is None:
        return None
    share = share.reshape(share.shape[0], -1) if share.ndim else share.reshape(1, 1)
    with np.errstate(all="ignore"):
        return np.array([np.nanmedian(c) if np.isfinite(c).any() else np.nan for c in share.T])


def _span(values: list[float]) -> str:
    lo, hi = min(values), max(values)
    return f"{100 * lo:.0f}%" if round(100 * lo) == round(100 * hi) else f"{100 * lo:.0f}–{100 * hi:.0f}%"


def warnings(path: Path) -> list[str]:
    """At most two lines: the ranks of the cluster's repetitions, and the paired baseline, that ran
    under SHARE_WARN of their time (median over a point's repetitions). [] when no point records
    cpu_share, or none is short of it."""
    try:
        rec = records.cpu_shares(path)
    except OSError:
        return []  # the loader has said why the file cannot be read
    hosts = rec.hosts
    low: dict[int, list[float]] = {}
    base: list[float] = []
    points = flagged = 0
    for _pid, share, baseline in rec.points:
        med = _medians(share)
        points += 1
        short = [(q, m) for q, m in enumerate(med) if np.isfinite(m) and m < SHARE_WARN]
        flagged += bool(short)
        for q, m in short:
            low.setdefault(q, []).append(float(m))
        alone = _medians(baseline)
        if alone is not None and np.isfinite(alone[0]) and alone[0] < SHARE_WARN:
            base.append(float(alone[0]))
    out = []
    why = ("another rank or program shared the core, a CPU quota (a cgroup or container limit) "
           "held it back, or the hypervisor gave it to another guest (steal)")
    if low:
        names = ", ".join(f"rank {q}" + (f" ({hosts[q]})" if q in hosts else "") for q in sorted(low))
        if len(low) > 4:
            on = sorted({hosts.get(q, "?") for q in low})
            names = (f"{len(low)} ranks on {len(on)} node{'s' if len(on) > 1 else ''} ("
                     + ", ".join(on[:3]) + (", ..." if len(on) > 3 else "") + ")")
        every = [m for ms in low.values() for m in ms]
        who = "they" if len(low) > 1 else "it"
        out.append(f"{names} ran on {'their cores' if len(low) > 1 else 'its core'} only {_span(every)} "
                   f"of the time {who} worked (cpu_share, median over "
                   f"repetitions, in {flagged} of {points} points): {why}. Those times measure the "
                   "sharing, not the code or the link: give each rank a core of its own "
                   "(fewer ranks per node, or a dedicated instance)")
    if base:
        out.append(f"the paired baseline ran on its core only {_span(base)} of its time (cpu_share, in {len(base)} "
                   f"of {points} points): {why}, so the one-process times are slow and the speedup "
                   "over them too high")
    return out
