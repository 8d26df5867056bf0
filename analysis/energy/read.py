"""Reading energy: /power and the points energy datasets, the --power-log, --price and --kwh-price options, the nodes and the units (points, dfft) a run measured."""

from __future__ import annotations

from dataclasses import dataclass, field
from pathlib import Path

import h5py
import numpy as np

from .. import stats
from ..runs import ENERGY_DATASETS as ENERGY
from ..h5groups import text
from ..reader import UsageError, in_child, open_h5
from ..runs import Run


SOURCES = ("rapl", "hwmon", "pi5")  # measured in the run; "meter" comes from a log


POWER = ("idle_w", "idle_s", "period_s", "period_err_s")


J_PER_KWH = 3.6e6


@dataclass
class Power:
    """`/power`: per rank (index = rank)."""

    source: list[str]
    idle_w: np.ndarray
    idle_s: np.ndarray
    period_s: np.ndarray
    period_err_s: np.ndarray
    requested: str = ""
    caveat: str = ""
    reader: list[str] = field(default_factory=list)  # sysfs, mailbox, vcgencmd or "" per rank


@dataclass
class Series:
    """The energy datasets of one point (`/fft/<id>`, its `baseline`, `/dfft/<id>`,
    `/load/<id>`)."""

    energy_j: np.ndarray | None = None  # [reps, nranks]
    power_short: np.ndarray | None = None  # [reps, nranks]
    t_start_utc: np.ndarray | None = None  # [reps]
    t_end_utc: np.ndarray | None = None
    sampler_cpu_share: np.ndarray | None = None  # [nranks]: of one core, the power sampler's own cost


@dataclass
class FileEnergy:
    power: Power | None
    series: dict[str, Series]  # by group path, e.g. "/fft/p000/baseline"
    problems: list[str] = field(default_factory=list)


def _float(group: h5py.Group, name: str) -> np.ndarray | None:
    obj = group.get(name)
    if not isinstance(obj, h5py.Dataset) or obj.dtype.kind not in "biuf":
        return None
    return np.asarray(obj[()], dtype=float)


def _series(group: h5py.Group) -> Series | None:
    found = {name: _float(group, name) for name in ENERGY}
    if all(v is None for v in found.values()):
        return None
    return Series(**{k: (None if v is None else np.atleast_1d(v)) for k, v in found.items()})


def read_file(path: Path) -> FileEnergy:
    """/power and every point's energy datasets; empty when the file has none."""
    try:
        return in_child(_read_file, path)
    except OSError as exc:
        return FileEnergy(power=None, series={}, problems=[
            f"energy datasets unreadable ({' '.join(str(exc).split())[:120]}); energy unmeasured"])


def _read_file(path: Path) -> FileEnergy:
    out = FileEnergy(power=None, series={})
    try:
        with open_h5(path) as fh:
            if isinstance(fh.get("power"), h5py.Group):
                g = fh["power"]
                src = g.get("source")
                names = [text(s) for s in np.atleast_1d(src[()])] if src is not None else []
                n = len(names)
                arrays = {}
                for key in POWER:
                    arr = _float(g, key)
                    arr = np.full(n, np.nan) if arr is None else np.atleast_1d(arr)
                    arrays[key] = np.resize(arr, n) if arr.size != n else arr
                rd = g.get("reader")
                readers = [text(s) for s in np.atleast_1d(rd[()])] if isinstance(rd, h5py.Dataset) else []
                out.power = Power(source=names, requested=text(g.attrs.get("requested", "")),
                                  caveat=text(g.attrs.get("caveat", "")), reader=readers, **arrays)
            for top in ("fft", "dfft", "load"):
                if not isinstance(fh.get(top), h5py.Group):
                    continue
                for pid in sorted(fh[top].keys()):
                    g = fh[top][pid]
                    if not isinstance(g, h5py.Group):
                        continue
                    s = _series(g)
                    if s is not None:
                        out.series[f"/{top}/{pid}"] = s
                    if top == "fft" and isinstance(g.get("baseline"), h5py.Group):
                        s = _series(g["baseline"])
                        if s is not None:
                            out.series[f"/fft/{pid}/baseline"] = s
    except (OSError, KeyError, ValueError, TypeError) as exc:
        out.problems.append(f"energy datasets unreadable ({' '.join(str(exc).split())[:120]}); "
                            "energy unmeasured")
    return out


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
    base = _baseline_totals(run.path)
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


def _baseline_totals(path: Path) -> dict[str, np.ndarray]:
    try:
        return in_child(_read_baseline_totals, path)
    except OSError:
        return {}


def _read_baseline_totals(path: Path) -> dict[str, np.ndarray]:
    out = {}
    try:
        with open_h5(path) as fh:
            for pid, g in (fh["fft"].items() if isinstance(fh.get("fft"), h5py.Group) else []):
                arr = _float(g, "baseline/t_total") if isinstance(g, h5py.Group) else None
                if arr is not None:
                    out[pid] = np.atleast_1d(arr).reshape(-1)
    except (OSError, KeyError, ValueError):
        pass
    return out
