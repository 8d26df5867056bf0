"""The CPU a what-if's nodes have: nodes that report one boot_id (an emulated cluster's namespaces,
containers) share one machine's cores, so a change that puts more nodes, or a larger CPU share,
on that machine adds no core beyond it; and the CPU the ranks spent computing a request (cpu_share
x t_compute, summed over ranks, so other jobs' time and the ranks' own waits are not in it) bounds
the request from below at the cores they may use: work / min(the machine's cores, the ranks' shares
summed).
"""

from __future__ import annotations

from dataclasses import dataclass, field

import numpy as np

from .. import ceilings, stats
from ...read import records
from ...read.runs import Run


@dataclass(frozen=True)
class Cpu:
    """The CPU of one run's nodes: on one shared machine or each on its own."""

    shared: bool  # every node on one machine (one boot_id)
    machine: str  # its name (the first host's)
    cores: float  # that machine's online cores (shared), else one node's
    quota: float  # each node's CPU quota in CPUs (NaN: none)
    nodes: int
    rpn: int
    boot_id: str = ""
    # point id -> CPU s per repetition: the ranks' compute (the floor's work), and all they ran
    work_s: dict[str, np.ndarray] = field(default_factory=dict)
    ran_s: dict[str, np.ndarray] = field(default_factory=dict)

    def rank_share(self, nodes: int, quota: float | None = None) -> float:
        """Of one core, what each rank may run: its node's quota over its ranks, and on a shared
        machine the machine's cores over all ranks."""
        q = self.quota if quota is None else quota
        share = min(1.0, q / self.rpn) if np.isfinite(q) else 1.0
        if self.shared:
            share = min(share, self.cores / max(1, nodes * self.rpn))
        return share

    def capacity(self, nodes: int, quota: float | None = None) -> float:
        """CPUs the ranks of `nodes` nodes may use at once (on the shared machine: at most its
        cores; nodes of their own add theirs)."""
        return self.rank_share(nodes, quota) * nodes * self.rpn

    def limit(self, nodes: int, quota: float | None = None) -> str:
        """What the capacity is made of, as limited_by says it."""
        q = self.quota if quota is None else quota
        by_quota = np.isfinite(q) and (not self.shared or nodes * q <= self.cores)
        if by_quota:
            return f"the nodes' CPU quota ({q:.3g} CPU each)"
        if self.shared:
            return f"the machine's {self.cores:g} cores"
        return "the nodes' CPU"


def _boot(host: dict) -> str:
    return str(host.get("boot_id", "") or "")


def of_run(run: Run, nodes: int, rpn: int, again: list[tuple[Run, dict[str, str]]] = ()) -> Cpu | None:
    """The run's CPU from /ceilings/machines and /hosts; None in files without them. `again`: runs
    of the same configuration pooled into it, each with a map of its point ids to run's, whose
    repetitions' CPU follows run's own."""
    if not run.machines or not run.hosts:
        return None
    ms = ceilings.machines(run)
    boots = {_boot(h) for h in run.hosts}
    shared = len(ms) == 1 and nodes > 1 and "" not in boots
    quotas = [float(h.get("cpu_quota")) for h in run.hosts
              if h.get("cpu_quota") is not None and np.isfinite(float(h.get("cpu_quota")))]
    quota = min(quotas) if len(quotas) == len(run.hosts) else float("nan")
    cores = float(ms[0].cores) if shared else float(max(1, min(m.cores for m in ms)))
    if not cores > 0:
        return None
    work, ran = _work(run)
    for other, ids in again:
        for mine, theirs in zip((work, ran), _work(other)):
            for pid, w in theirs.items():
                to = ids.get(pid)
                if to in mine:
                    mine[to] = np.concatenate([mine[to], w])
    return Cpu(shared, ms[0].name, cores, quota, nodes, rpn,
               next(iter(boots)) if len(boots) == 1 else "", work, ran)


def _work(run: Run) -> tuple[dict[str, np.ndarray], dict[str, np.ndarray]]:
    """Per point and repetition, summed over the ranks: the CPU seconds of their compute (cpu_share x
    t_compute), and of all they ran (cpu_share x t_total). Only the first is work a change must still
    do: the rest holds their waits, and an MPI rank waits on a slow link by spinning (4 emulated pi3
    nodes ran 1.4 CPU-seconds in a 0.89 s request whose compute took 19 ms)."""
    try:
        shares = records.cpu_shares(run.path)
    except OSError:
        return {}, {}
    by_id = {p.id: p for p in run.points}
    work, ran = {}, {}
    for pid, share, _base in shares.points:
        pt = by_id.get(pid)
        if pt is None or share is None or share.ndim != 2:
            continue
        share = np.clip(share, 0.0, 1.0)
        total, comp = (np.asarray(pt.times[k], dtype=float) for k in ("t_total", "t_compute"))
        if share.shape[0] == total.size:
            ran[pid] = np.nansum(share, axis=1) * total
        if share.shape == comp.shape:
            work[pid] = np.nansum(share * comp, axis=1)
    return work, ran


def same_machine(cpu: Cpu | None, other: Run) -> bool:
    """Whether `other` ran on the machine that `cpu`'s nodes share (the same boot_id)."""
    return bool(cpu is not None and cpu.shared and cpu.boot_id and other.hosts
                and all(_boot(h) == cpu.boot_id for h in other.hosts))


def one_machine(run: Run) -> bool:
    """Whether every host of `run` reported one boot_id (one machine carried its links too)."""
    boots = {_boot(h) for h in run.hosts}
    return len(boots) == 1 and "" not in boots and len({str(h.get("hostname")) for h in run.hosts}) > 1


def quota_of(run: Run) -> float:
    """A run's (lowest) CPU quota per node, NaN when a node had none."""
    q = [float(h.get("cpu_quota")) if h.get("cpu_quota") is not None else float("nan") for h in run.hosts]
    return min(q) if q and all(np.isfinite(q)) else float("nan")


def work_ci(cpu: Cpu, pid: str, ran: bool = False) -> tuple[float, float, float]:
    """Median CPU seconds of the point's request (its compute, or with ran all the ranks ran) and its
    95 % CI (NaN without cpu_share)."""
    w = (cpu.ran_s if ran else cpu.work_s).get(pid)
    if w is None or not np.isfinite(w).any():
        return float("nan"), float("nan"), float("nan")
    med, lo, hi, _n = stats.median_ci(w)
    return float(med), float(lo), float(hi)
