"""What energy is worked out from: the --power-log, --price and --kwh-price options, the nodes and
the units (points, their paired baselines, dfft points, load steps) a run measured; /power and the
points' energy datasets are read by read.energy."""

from __future__ import annotations

from dataclasses import dataclass, field
from pathlib import Path

import numpy as np

from .. import stats
from ...read.energy import baseline_totals
from ...read.reader import UsageError
from ...read.runs import Run


SOURCES = ("rapl", "hwmon", "pi5")  # measured in the run; "meter" comes from a log


J_PER_KWH = 3.6e6


@dataclass
class Options:
    logs: list[tuple[str, Path]] = field(default_factory=list)  # (hostname or "all", file)
    prices: list[tuple[str, float]] = field(default_factory=list)  # (kind, USD per hour)
    kwh_price: float | None = None  # USD per kWh


def _money(flag: str, value: str) -> float:
    try:
        number = float(value)
    except ValueError:
        raise UsageError(f"{flag}: '{value}' is not a number (US dollars, e.g. 0.17)") from None
    if not (np.isfinite(number) and number >= 0):
        raise UsageError(f"{flag}: '{value}' must be a number >= 0")
    return number


def parse_options(power_logs: list[str], prices: list[str], kwh: str | None) -> Options:
    """--power-log NODE=FILE, --price KIND=USD_PER_HOUR, --kwh-price USD; UsageError
    (one line, exit 2) on a malformed value or a log file that does not exist."""
    opts = Options()
    for item in power_logs:
        node, sep, file = item.partition("=")
        if not sep or not node.strip() or not file.strip():
            raise UsageError(f"--power-log '{item}': expected NODE=FILE.csv (a hostname of "
                             "/hosts, or all=FILE.csv for one meter on the whole cluster)")
        node = node.strip()
        if not Path(file).is_file():
            raise UsageError(f"--power-log {node}={file}: no such file")
        if any(n.lower() == node.lower() for n, _ in opts.logs):
            raise UsageError(f"--power-log {node}=: given twice; one log per node")
        opts.logs.append((node, Path(file)))
    names = {n.lower() for n, _ in opts.logs}
    if "all" in names and len(names) > 1:
        raise UsageError("--power-log all=FILE measures the whole cluster; it cannot be "
                         "combined with per-node logs")
    for item in prices:
        kind, sep, value = item.partition("=")
        if not sep or not kind.strip():
            raise UsageError(f"--price '{item}': expected KIND=USD_PER_HOUR (a board or "
                             "instance type, hostname or CPU model, or all)")
        opts.prices.append((kind.strip(), _money(f"--price {kind.strip()}", value.strip())))
    if kwh is not None:
        opts.kwh_price = _money("--kwh-price", kwh)
    return opts


@dataclass
class Node:
    index: int
    leader: int  # lowest rank on the node
    hostname: str
    model: str
    cpu_model: str


def nodes_of(run: Run) -> list[Node]:
    """The run's nodes from /hosts (one per rank when it is missing)."""
    found: dict[int, Node] = {}
    for h in sorted(run.hosts, key=lambda h: int(h.get("rank", 0))):
        idx = int(h.get("node", h.get("rank", 0)))
        if idx not in found:
            found[idx] = Node(idx, int(h.get("rank", 0)), str(h.get("hostname", "?")),
                              str(h.get("model") or ""), str(h.get("cpu_model") or ""))
    if not found:
        return [Node(r, r, f"rank {r}", "", "") for r in range(run.nranks)]
    return [found[k] for k in sorted(found)]


@dataclass
class Unit:
    """One thing that serves requests: a point, its paired baseline, a dfft point
    or a load step."""

    point: str  # the name in energy.csv: p000, p000/baseline, dfft/p000, load/s000
    where: str  # the group path
    kind: str  # fft, baseline, dfft, load
    t_rep: np.ndarray  # duration of each repetition (s), from the timers
    requests: float  # requests per repetition
    input_bytes: float  # per request
    flops: float  # per request
    nodes: list[Node]
    key: tuple | None = None  # FftPoint.key, to match points across runs


def _units(run: Run, detail_dfft: list | None = None) -> list[Unit]:
    nodes = nodes_of(run)
    out = []
    for pt in run.points:
        flops = float(np.nansum(pt.flops)) if np.isfinite(pt.flops).any() else float("nan")
        out.append(Unit(pt.id, f"/fft/{pt.id}", "fft", pt.times["t_total"], 1.0,
                        pt.input_bytes, flops, nodes, pt.key))
    base = baseline_totals(run.path)
    for pt in run.points:
        if pt.id in base:
            flops = float(np.nansum(pt.flops)) if np.isfinite(pt.flops).any() else float("nan")
            out.append(Unit(f"{pt.id}/baseline", f"/fft/{pt.id}/baseline", "baseline",
                            base[pt.id], 1.0, pt.input_bytes, flops,
                            [n for n in nodes if n.leader == 0] or nodes[:1], pt.key))
    for d in detail_dfft or []:
        t = d.times["t_total"]
        n = float(d.attrs.get("n") or np.nan)
        flops = float(d.attrs.get("flops") or np.nan)
        if not np.isfinite(flops) and n > 1:
            flops = (5 if str(d.attrs.get("kind") or "c2c") == "c2c" else 2.5) * n * np.log2(n)
        out.append(Unit(f"dfft/{d.id}", f"/dfft/{d.id}", "dfft", stats.nanmax(t, axis=1),
                        1.0, float("nan"), flops, nodes))
    for step in run.load_steps:
        status = step.data.get("status")
        if status is not None:
            done = float(np.count_nonzero(np.asarray(status) == 0))
        else:
            done = float(np.isfinite(step.data.get("t_done", np.zeros(0))).sum())
        a = step.attrs
        length = _attr(a, "t_end_s")
        if not np.isfinite(length):
            length = _attr(a, "duration_s")
        out.append(Unit(f"load/{step.id}", f"/load/{step.id}", "load", np.array([length]),
                        done, _attr(a, "bytes_per_request"), float("nan"), nodes))
    return out


def _attr(attrs: dict, key: str) -> float:
    try:
        return float(attrs.get(key))
    except (TypeError, ValueError):
        return float("nan")
