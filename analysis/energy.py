"""Energy and money per request (docs/energy.md): what the nodes' own power sources
stored (`/power`, and `energy_j` per point, ENERGY datasets below) and what external
meter logs (analysis.meter) say, turned into J per request, kB/J, GFLOPS/W and
$ per 1000 requests. Nothing is estimated: a node without a source makes its point
"unmeasured", and every figure names its source (rapl, hwmon, pi5 or meter).

A file without any of these names gives rows that say "unmeasured".
"""

from __future__ import annotations

from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import h5py
import numpy as np

from . import meter, stats
from .tables import Column, Table
from .runs import ENERGY_DATASETS as ENERGY
from .cliutil import UsageError
from .h5groups import text
from .reader import open_h5
from .runs import Run

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


@dataclass
class Series:
    """The energy datasets of one point (`/fft/<id>`, its `baseline`, `/dfft/<id>`,
    `/load/<id>`)."""

    energy_j: np.ndarray | None = None  # [reps, nranks]
    power_short: np.ndarray | None = None  # [reps, nranks]
    t_start_utc: np.ndarray | None = None  # [reps]
    t_end_utc: np.ndarray | None = None


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
                out.power = Power(source=names, requested=text(g.attrs.get("requested", "")),
                                  caveat=text(g.attrs.get("caveat", "")), **arrays)
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


@dataclass
class Row:
    """One line of energy.csv."""

    run: str
    point: str
    kind: str
    source: str  # rapl, hwmon, pi5, meter (joined with + when nodes differ) or unmeasured
    j_per_request: float = float("nan")
    j_per_request_above_idle: float = float("nan")
    kB_per_j: float = float("nan")
    gflops_per_w: float = float("nan")
    coverage: float = 0.0  # share of the repetitions' time the source covered
    period_s: float = float("nan")  # sampling period (largest over the nodes)
    period_err_s: float = float("nan")
    too_short_reps: int = 0  # repetitions shorter than 10 sampling periods
    reps_measured: int = 0
    reps: int = 0
    requests_per_rep: float = 1.0
    t_request_s: float = float("nan")  # time per request: median t_total, or step / requests
    idle_w: float = float("nan")  # summed over the nodes
    usd_per_1000_requests: float = float("nan")
    cost_basis: str = ""
    nodes: int = 0
    note: str = ""
    key: tuple | None = None

    @property
    def measured(self) -> bool:
        return self.source != "unmeasured"

    @property
    def mark(self) -> str:
        if self.too_short_reps:
            return f"too short for power ({self.too_short_reps} of {self.reps_measured} reps)"
        return ""


@dataclass
class Result:
    rows: list[Row] = field(default_factory=list)
    warnings: list[str] = field(default_factory=list)  # named, for stderr and "Read first"
    notes: list[str] = field(default_factory=list)
    sources: dict[str, str] = field(default_factory=dict)  # run -> "pi0 rapl, pi1 unmeasured"
    options: Options = field(default_factory=Options)

    def row(self, run: str, point: str) -> Row | None:
        return next((r for r in self.rows if r.run == run and r.point == point), None)

    @property
    def any_measured(self) -> bool:
        return any(r.measured for r in self.rows)


@dataclass
class _NodeSeries:
    source: str
    energy: np.ndarray  # [reps], NaN unmeasured
    coverage: np.ndarray  # [reps]
    short: np.ndarray  # [reps] bool
    period_s: float = float("nan")
    period_err_s: float = float("nan")
    idle_w: float = float("nan")
    why: str = ""  # why unmeasured


def _log_for(node: Node, logs: list[meter.Log]) -> meter.Log | None:
    host = node.hostname.lower()
    for log in logs:
        want = log.node.lower()
        if want == host or want == host.split(".")[0]:
            return log
    return None


class _Analysis:
    def __init__(self, runs: list[Run], baselines: list[Run], opts: Options,
                 dfft: dict[str, list] | None) -> None:
        self.runs, self.baselines, self.opts = runs, baselines, opts
        self.dfft = dfft or {}
        self.out = Result(options=opts)
        self.logs = [meter.read(path, node) for node, path in opts.logs]
        self.log_bad: dict[int, list[str]] = {}  # id(log) -> points its bad spans cost
        self.price_used: set[str] = set()

    def warn(self, text_: str) -> None:
        if text_ not in self.out.warnings:
            self.out.warnings.append(text_)

    def run(self) -> Result:
        for log in self.logs:
            if log.usable:
                skipped = f"; {log.skipped_lines} line(s) that are not samples skipped" \
                    if log.skipped_lines else ""
                self.out.notes.append(f"Meter log {log.path.name} ({log.node}): columns "
                                      f"{log.columns}, {log.t_utc.size} samples every "
                                      f"{log.period_s:.3g} s (median){skipped}.")
            if log.error:
                self.warn(f"--power-log {log.node}={log.path}: meter log unreadable: it "
                          f"{log.error}; that node's energy is unmeasured")
        hosts = {n.hostname.lower() for r in self.runs for n in nodes_of(r)}
        hosts |= {h.split(".")[0] for h in hosts}
        for log in self.logs:
            if log.node.lower() != "all" and log.node.lower() not in hosts:
                self.warn(f"--power-log {log.node}={log.path}: no run has a host named "
                          f"{log.node} in /hosts (hosts: {', '.join(sorted(hosts)) or 'none'}); "
                          "the log is not used")
        spans = []
        for run in self.runs:
            fe = read_file(run.path)
            for p in fe.problems:
                self.warn(f"{run.name}: {p}")
            spans.append(self._run(run, fe))
        self._log_warnings(spans)
        kinds = {k.lower() for k, _ in self.opts.prices}
        for kind in sorted(kinds - self.price_used):
            names = sorted({v for r in self.runs for n in nodes_of(r)
                            for v in (n.model, n.hostname, n.cpu_model) if v})
            self.warn(f"--price {kind}: a kind not in the files (no node has it as its model, "
                      f"hostname or CPU model; the files have {', '.join(names) or 'none'}); "
                      "that price is not used and what it would cost is unpriced")
        return self.out

    def _log_warnings(self, spans: list[tuple[float, float]]) -> None:
        good = [(a, b) for a, b in spans if np.isfinite(a) and np.isfinite(b)]
        for log in self.logs:
            if not log.usable:
                continue
            if not any(meter.overlaps(log, a, b) for a, b in good):
                lo, hi = log.span
                runs = (f"the runs span {meter.utc_text(min(a for a, _ in good))} to "
                        f"{meter.utc_text(max(b for _, b in good))}" if good else
                        "the files record no repetition times (t_start_utc)")
                self.warn(f"--power-log {log.node}={log.path}: meter log does not overlap the run "
                          f"in time (the log spans {meter.utc_text(lo)} to {meter.utc_text(hi)}; "
                          f"{runs}); that node's energy is unmeasured")
            for problem in log.problems:
                cost = self.log_bad.get(id(log), [])
                where = (f"unmeasured where it touches them: {', '.join(cost)}" if cost
                         else "no repetition falls in the bad stretch")
                self.warn(f"--power-log {log.node}={log.path}: meter log {problem}; {where}")

    def _run(self, run: Run, fe: FileEnergy) -> tuple[float, float]:
        is_base = run.is_baseline or run in self.baselines
        nodes = nodes_of(run)
        power = fe.power
        src_text = []
        for n in nodes:
            log = _log_for(n, self.logs)
            s = power.source[n.leader] if power and n.leader < len(power.source) else "unmeasured"
            src_text.append(f"{n.hostname} {s}" + (f" (meter log {log.path.name})" if log else ""))
        if power is None:
            self.out.sources[run.name] = "no /power group (the run measured no power)"
        else:
            extra = f"; caveat: {power.caveat}" if power.caveat else ""
            req = f" (--power {power.requested})" if power.requested else ""
            self.out.sources[run.name] = ", ".join(src_text) + req + extra
        units = _units(run, self.dfft.get(run.name))
        starts = [s.t_start_utc for s in fe.series.values() if s.t_start_utc is not None]
        ends = [s.t_end_utc for s in fe.series.values() if s.t_end_utc is not None]
        span = (stats.nanmin(np.concatenate(starts)) if starts else float("nan"),
                stats.nanmax(np.concatenate(ends)) if ends else float("nan"))
        # one meter on the whole cluster: the cluster's runs it overlaps, not a desktop's
        all_log = next((g for g in self.logs if g.node.lower() == "all"
                        and meter.overlaps(g, *span)), None) if not is_base else None
        idle_s = float(np.nanmax(power.idle_s)) if power is not None and \
            np.isfinite(power.idle_s).any() else float("nan")
        idle_window = (span[0] - idle_s, span[0]) if np.isfinite(span[0]) and idle_s > 0 else None
        wants_all = not is_base and any(g.node.lower() == "all" for g in self.logs)
        if all_log is not None:
            self.out.sources[run.name] += (f"; the whole cluster measured by meter log "
                                           f"{all_log.path.name}")
        if not starts and (wants_all or any(_log_for(n, self.logs) for n in nodes)):
            self.warn(f"{run.name}: the file records no repetition times (t_start_utc, "
                      "t_end_utc): a meter log cannot be aligned with it; its energy is unmeasured")
        for unit in units:
            self.out.rows.append(self._unit(run, unit, fe, all_log, idle_window, span))
        return span

    def _unit(self, run: Run, unit: Unit, fe: FileEnergy, all_log: meter.Log | None,
              idle_window: tuple[float, float] | None, span: tuple[float, float]) -> Row:
        series = fe.series.get(unit.where) or Series()
        reps = int(unit.t_rep.size)
        row = Row(run=run.name, point=unit.point, kind=unit.kind, source="unmeasured",
                  reps=reps, requests_per_rep=unit.requests, nodes=len(unit.nodes), key=unit.key)
        t0, t1 = rep_times(series, reps)
        dur = np.where(np.isfinite(t1 - t0), t1 - t0, unit.t_rep)
        if unit.kind == "load" and np.isfinite(dur).all():
            row.t_request_s = float(dur[0] / unit.requests) if unit.requests > 0 else float("nan")
        else:
            row.t_request_s = stats.nanmedian(unit.t_rep)
        if all_log is not None and unit.kind != "baseline":
            per_node = [self._meter(all_log, run, unit, t0, t1, idle_window)]
        elif all_log is not None:
            per_node = [_NodeSeries("unmeasured", np.full(reps, np.nan), np.zeros(reps),
                                    np.zeros(reps, bool), why="one meter on the whole cluster "
                                    "cannot measure rank 0's node alone")]
        else:
            per_node = []
            for node in unit.nodes:
                log = _log_for(node, self.logs)
                # a log that overlaps the run measures its node there, else the file's source
                if log is not None and meter.overlaps(log, *span):
                    per_node.append(self._meter(log, run, unit, t0, t1, idle_window))
                else:
                    per_node.append(self._file(run, unit, node, fe, series, reps))
        self._combine(row, per_node, dur, unit)
        self._cost(row, run, unit)
        return row

    def _meter(self, log: meter.Log, run: Run, unit: Unit, t0: np.ndarray, t1: np.ndarray,
               idle_window: tuple[float, float] | None) -> _NodeSeries:
        reps = t0.size
        ns = _NodeSeries("meter", np.full(reps, np.nan), np.zeros(reps), np.zeros(reps, bool),
                         period_s=log.period_s, period_err_s=log.period_err_s)
        bad = False
        for r in range(reps):
            if not np.isfinite(t1[r] - t0[r]):
                continue
            span = meter.integrate(log, t0[r], t1[r])
            ns.energy[r], ns.coverage[r] = span.energy_j, span.coverage
            ns.short[r] = (t1[r] - t0[r]) < 10 * log.period_s
            bad = bad or bool(span.bad)
        if bad:
            self.log_bad.setdefault(id(log), []).append(f"{run.name} {unit.point}")
            ns.why = "the meter log has a bad stretch there"
            ns.energy[:] = np.nan  # a point touched by a bad stretch is unmeasured as a whole
        elif not np.isfinite(ns.energy).any():
            ns.why = "the meter log does not cover it"
        if idle_window is not None:
            ns.idle_w = meter.mean_watts(log, *idle_window)
        return ns

    def _file(self, run: Run, unit: Unit, node: Node, fe: FileEnergy, series: Series,
              reps: int) -> _NodeSeries:
        nan = np.full(reps, np.nan)
        power = fe.power
        src = power.source[node.leader] if power and node.leader < len(power.source) else ""
        ns = _NodeSeries(src if src in SOURCES else "unmeasured", nan.copy(), np.zeros(reps),
                         np.zeros(reps, bool))
        if src not in SOURCES:
            ns.why = {"": "no /power in the file", "none": "--power none"}.get(
                src, f"{node.hostname} had no readable power source")
            return ns
        energy = per_rank(series.energy_j, reps)
        if energy is None or node.leader >= energy.shape[1]:
            ns.source, ns.why = "unmeasured", f"no {unit.where}/energy_j"
            return ns
        col = energy[:, node.leader]
        if (col < 0).any():
            r = int(np.flatnonzero(col < 0)[0])
            self.warn(f"{run.name}: {unit.where}/energy_j: counter gone backwards without a wrap "
                      f"(negative energy {col[r]:.4g} J at [{r}, {node.leader}], "
                      f"{node.hostname}); that point's energy is unmeasured")
            ns.source, ns.why = "unmeasured", f"{node.hostname}'s counter went backwards"
            return ns
        ns.energy = col.copy()
        ns.coverage = np.isfinite(col).astype(float)
        short = per_rank(series.power_short, reps)
        if short is not None and node.leader < short.shape[1]:
            ns.short = np.nan_to_num(short[:, node.leader]) > 0
        ns.period_s = float(power.period_s[node.leader])
        ns.period_err_s = float(power.period_err_s[node.leader])
        ns.idle_w = float(power.idle_w[node.leader])
        if not np.isfinite(col).any():
            ns.source, ns.why = "unmeasured", f"{node.hostname} stored no energy here"
        return ns

    def _combine(self, row: Row, per_node: list[_NodeSeries], dur: np.ndarray, unit: Unit) -> None:
        energy = np.vstack([n.energy for n in per_node])
        cover = np.vstack([n.coverage for n in per_node]).min(axis=0)
        with np.errstate(invalid="ignore"):
            total_t = float(np.nansum(dur))
            row.coverage = float(np.nansum(dur * cover) / total_t) if total_t > 0 else 0.0
        ok = np.isfinite(energy).all(axis=0)
        missing = [n.why for n in per_node if n.why]
        if not ok.any() or not unit.requests > 0:
            row.note = "; ".join(dict.fromkeys(missing)) or (
                "no request finished" if not unit.requests > 0 else "not measured")
            return
        e_rep = energy[:, ok].sum(axis=0)
        row.source = "+".join(dict.fromkeys(n.source for n in per_node))
        row.reps_measured = int(ok.sum())
        row.j_per_request = float(np.median(e_rep)) / unit.requests
        idle = np.array([n.idle_w for n in per_node])
        if np.isfinite(idle).all():
            row.idle_w = float(idle.sum())
            row.j_per_request_above_idle = float(np.median(e_rep - row.idle_w * dur[ok])) \
                / unit.requests
        if row.j_per_request > 0:
            row.kB_per_j = unit.input_bytes / 1000.0 / row.j_per_request
            row.gflops_per_w = unit.flops / row.j_per_request / 1e9
        row.period_s = max((n.period_s for n in per_node if np.isfinite(n.period_s)),
                           default=float("nan"))
        row.period_err_s = max((n.period_err_s for n in per_node if np.isfinite(n.period_err_s)),
                               default=float("nan"))
        row.too_short_reps = int(np.vstack([n.short for n in per_node]).any(axis=0)[ok].sum())
        if row.reps_measured < row.reps:
            row.note = f"{row.reps_measured} of {row.reps} repetitions measured"

    def _price(self, node: Node) -> tuple[str, float] | None:
        for value in (node.hostname, node.model, node.cpu_model, "all"):
            for kind, usd in self.opts.prices:
                if value and kind.lower() == value.lower():
                    self.price_used.add(kind.lower())
                    return kind, usd
        return None

    def _cost(self, row: Row, run: Run, unit: Unit) -> None:
        if not self.opts.prices and self.opts.kwh_price is None:
            return
        priced = [(n, self._price(n)) for n in unit.nodes]
        parts, usd = [], 0.0
        unpriced = [n.hostname for n, p in priced if p is None]
        if self.opts.prices and not unpriced and np.isfinite(row.t_request_s):
            per_h = sum(p[1] for _, p in priced)  # type: ignore[index]
            usd += per_h * row.t_request_s / 3600.0
            counts: dict[str, int] = {}
            for _, p in priced:
                counts[f"{p[0]} ${p[1]:g}/h"] = counts.get(f"{p[0]} ${p[1]:g}/h", 0) + 1  # type: ignore[index]
            parts.append("node-hours of " + ", ".join(f"{k} × {v}" for k, v in counts.items()))
        elif self.opts.prices:
            parts.append("node-hours unpriced (no --price for "
                         + ", ".join(unpriced or ["?"]) + ")")
        if self.opts.kwh_price is not None and np.isfinite(row.j_per_request):
            usd += row.j_per_request / J_PER_KWH * self.opts.kwh_price
            parts.append(f"energy ({row.source}) at ${self.opts.kwh_price:g}/kWh")
        elif self.opts.kwh_price is not None:
            parts.append("energy unmeasured")
        counted = [p for p in parts if not p.startswith(("node-hours unpriced", "energy unm"))]
        if counted:
            row.usd_per_1000_requests = 1000.0 * usd
        row.cost_basis = " + ".join(parts)


def rep_times(series: Series, reps: int) -> tuple[np.ndarray, np.ndarray]:
    nan = np.full(reps, np.nan)
    a, b = series.t_start_utc, series.t_end_utc
    if a is None or b is None or a.size != reps or b.size != reps:
        return nan, nan.copy()
    return a.reshape(-1).astype(float), b.reshape(-1).astype(float)


def per_rank(arr: np.ndarray | None, reps: int) -> np.ndarray | None:
    """A [reps, nranks] dataset (also [nranks] with one repetition, [reps] on one rank)."""
    if arr is None:
        return None
    if arr.ndim == 2 and arr.shape[0] == reps:
        return arr.astype(float)
    if arr.ndim == 1:
        return arr.reshape(1, -1).astype(float) if reps == 1 else (
            arr.reshape(-1, 1).astype(float) if arr.size == reps else None)
    return None


def analyse(runs: list[Run], baselines: list[Run], opts: Options | None = None,
            dfft: dict[str, list] | None = None) -> Result:
    """Energy rows for every run and point; `dfft` maps run names to their
    point_detail DfftPoints. Warnings name every bad input; nothing is estimated."""
    return _Analysis(runs, baselines, opts or Options(), dfft).run()


# How a figure is shown: the number with its unit and source.

def fmt(value: float, unit: str, source: str) -> str:
    if not np.isfinite(value):
        return "unmeasured" if unit != "$" else "unpriced"
    if unit == "$":
        return f"${value:.3g}"
    return f"{value:.3g} {unit} ({source})"


def default_row(result: Result, run: Run, point: str | None = None) -> Row | None:
    """The run's fft row for `point`, by default its largest 'files' point."""
    rows = [r for r in result.rows if r.run == run.name and r.kind == "fft"]
    if point is not None:
        return next((r for r in rows if r.point == point), None)
    files = [r for r in rows if r.key and r.key[0] == "files"]
    return max(files or rows, key=lambda r: (r.key[4] if r.key else 0, r.point), default=None)


def buys_columns(result: Result, run: Run, baseline: Run | None = None,
                 point: str | None = None) -> dict[str, str]:
    """The energy and cost columns of one "What the cluster buys" row: "J/request",
    "kB/J", "GFLOPS/W", "$/1000 requests", each "cluster X (source) · desktop Y
    (source)". `point` is the run's point id (default: its largest 'files' point);
    the desktop is `baseline`'s point with the same settings, or without a baseline
    the run's own paired baseline (rank 0 alone)."""
    mine = default_row(result, run, point)
    if mine is None:
        return {}
    other = None
    if baseline is not None:
        other = next((r for r in result.rows if r.run == baseline.name and r.kind == "fft"
                      and r.key == mine.key), None)
        who = "desktop"
    else:
        other = result.row(run.name, f"{mine.point}/baseline")
        who = "one node"
    out = {}
    for col, attr, unit in (("J/request", "j_per_request", "J"), ("kB/J", "kB_per_j", "kB/J"),
                            ("GFLOPS/W", "gflops_per_w", "GFLOPS/W"),
                            ("$/1000 requests", "usd_per_1000_requests", "$")):
        cell = "cluster " + _cell(mine, attr, unit)
        if other is not None:
            cell += f" · {who} " + _cell(other, attr, unit)
        out[col] = cell
    return out


def _cell(row: Row, attr: str, unit: str) -> str:
    value = float(getattr(row, attr))
    if unit == "$":
        return fmt(value, unit, "") + (f" ({row.cost_basis})" if row.cost_basis and
                                       np.isfinite(value) else "")
    return fmt(value, unit, row.source)


def table(rows: list[Row]) -> Table:
    """energy.csv: one row per run and point (raw SI numbers in the CSV)."""
    cols = [Column("run", "run"), Column("point", "point"), Column("source", "source"),
            Column("j_per_request", "J/request", "float"),
            Column("j_per_request_above_idle", "J above idle", "float"),
            Column("kB_per_j", "kB/J", "float"), Column("gflops_per_w", "GFLOPS/W", "float"),
            Column("coverage", "coverage", "pct"), Column("period_s", "period", "time"),
            Column("period_err_s", "± (period)", "time"),
            Column("too_short_reps", "too short", "int"),
            Column("reps_measured", "reps measured", "int"), Column("reps", "reps", "int"),
            Column("requests_per_rep", "requests/rep", "float"),
            Column("t_request_s", "time/request", "time"), Column("idle_w", "idle W", "float"),
            Column("usd_per_1000_requests", "$/1000 req", "float"),
            Column("cost_basis", "cost basis"), Column("nodes", "nodes", "int"),
            Column("mark", "mark"), Column("note", "note")]
    out = []
    for r in rows:
        d = {c.key: getattr(r, c.key) for c in cols}
        d["source"] = r.source
        out.append(d)
    return Table("energy", "Energy and cost per request", cols, out,
                 note="J/request: median over the measured repetitions of the energy summed "
                      "over the nodes, per request. Coverage: the share of the repetitions' "
                      "time the source measured. A repetition shorter than 10 sampling periods "
                      "is counted as too short for power.",
                 html_columns=["run", "point", "source", "j_per_request",
                               "j_per_request_above_idle", "kB_per_j", "gflops_per_w",
                               "coverage", "period_s", "usd_per_1000_requests", "mark", "note"])


def frame_rows(result: Result) -> list[dict[str, Any]]:
    """The rows of energy.csv as plain dicts (for analysis.frames)."""
    keys = [k for k in Row.__dataclass_fields__ if k != "key"]
    return [{k: getattr(r, k) for k in keys} for r in result.rows]
