"""Same hardware or other: whether a baseline ran on the cluster run's own machines (/hosts), and
the cross-machine comparison a baseline on other hardware gives (docs/comparison.md)."""

from __future__ import annotations

from dataclasses import dataclass

from . import model
from .speedups import Comparison
from ..read.runs import Run


# Memory a kernel reports for one machine moves a little between boots (reserved pages).
MEM_TOLERANCE = 0.02


def _host_records(run: Run) -> dict[str, tuple[str, int, int]]:
    """hostname -> (CPU model, cores, memory bytes) from /hosts, names and models folded."""
    out: dict[str, tuple[str, int, int]] = {}
    for h in run.hosts:
        name = str(h.get("hostname") or "").strip().lower()
        cpu = " ".join(str(h.get("cpu_model") or "").split()).lower()
        try:
            cores, mem = int(h.get("cores", -1)), int(h.get("mem_bytes", -1))
        except (TypeError, ValueError):
            cores, mem = -1, -1
        if name:
            out.setdefault(name, (cpu, cores, mem))
    return out


def hardware_kind(run: Run, base: Run) -> tuple[str, str]:
    """'cross-run' when every host of `base` is a host of `run` with the same CPU model, core
    count and memory (within 2 %), else 'cross-machine'; and the reason in words.
    docs/comparison.md states the rule."""
    mine, theirs = _host_records(run), _host_records(base)
    if not mine or not theirs:
        return "cross-machine", "a file has no host names in /hosts, so the same hardware cannot be shown"
    for name, (cpu, cores, mem) in sorted(theirs.items()):
        if name not in mine:
            return "cross-machine", f"{base.name} ran on {name}, which is not a host of {run.name}"
        cpu2, cores2, mem2 = mine[name]
        if cpu != cpu2:
            return "cross-machine", f"{name} has CPU '{cpu}' in {base.name} and '{cpu2}' in {run.name}"
        if cores != cores2:
            return "cross-machine", f"{name} has {cores} cores in {base.name} and {cores2} in {run.name}"
        if mem > 0 and mem2 > 0 and abs(mem - mem2) > MEM_TOLERANCE * max(mem, mem2):
            return "cross-machine", f"{name} has {mem} bytes of memory in {base.name} and {mem2} in {run.name}"
    return "cross-run", f"{base.name} ran on {', '.join(sorted(theirs))}, a host of {run.name}, with the same CPU, cores and memory"


def total_cores(run: Run) -> int:
    """Cores of the run's distinct hosts (0 when /hosts does not say)."""
    return sum(max(0, c) for _cpu, c, _m in _host_records(run).values())


@dataclass
class MachineComparison(Comparison):
    """A comparison with a baseline on other hardware: the ratio is a relative throughput
    (cluster over desktop), not a parallel speedup, so it has no efficiency, no Karp-Flatt
    fraction and nothing is implausible about it exceeding p."""

    nodes: int = 1
    cores: int = 0
    base_cores: int = 0
    why: str = ""

    @property
    def efficiency(self) -> float:
        return float("nan")

    @property
    def karp_flatt(self) -> float:
        return float("nan")

    @property
    def implausible(self) -> list[str]:
        return []

    def scaled(self, factor: float) -> tuple[float, float, float]:
        return self.speedup * factor, self.ci_lo * factor, self.ci_hi * factor

    @property
    def per_node(self) -> tuple[float, float, float]:
        """The throughput ratio over the cluster's node count (the desktop is one node)."""
        return self.scaled(1.0 / max(1, self.nodes))

    @property
    def per_core(self) -> tuple[float, float, float]:
        """The throughput per core of the cluster over the desktop's (NaN when a core count is unknown)."""
        if self.cores <= 0 or self.base_cores <= 0:
            return float("nan"), float("nan"), float("nan")
        return self.scaled(self.base_cores / self.cores)


def classify(comps: list[Comparison], bases: list[Run]) -> list[Comparison]:
    """Each cross-run comparison as it is, when the baselines ran on the run's own hardware, or
    as a MachineComparison: the same ratio and interval (derive.ratio_ci), read as a relative
    throughput."""
    out: list[Comparison] = []
    for c in comps:
        kinds = [hardware_kind(c.run, b) for b in bases]
        other = [why for kind, why in kinds if kind == "cross-machine"]
        if not other:
            out.append(c)
            continue
        out.append(MachineComparison(
            run=c.run, cluster=c.cluster, base=c.base, kind="cross-machine",
            base_name=c.base_name, speedup=c.speedup, ci_lo=c.ci_lo, ci_hi=c.ci_hi, n=c.n,
            drift=c.drift, nodes=model.node_count(c.run), cores=total_cores(c.run),
            base_cores=total_cores(bases[0]) if bases else 0, why=other[0]))
    return out
