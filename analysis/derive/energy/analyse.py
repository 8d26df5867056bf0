"""Energy and cost per request: every unit of every run, from its nodes own sources or meter logs, never estimated."""

from __future__ import annotations

from dataclasses import dataclass, field

import numpy as np

from ...read import meter
from .. import stats
from ...read.runs import Run
from ...read.energy import FileEnergy, Series, read_file
from .options import SOURCES, J_PER_KWH, Node, Options, Unit, _units, nodes_of


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
        spans, base_spans = [], []
        for run in self.runs:
            fe = read_file(run.path)
            for p in fe.problems:
                self.warn(f"{run.name}: {p}")
            spans.append(self._run(run, fe))
            if run.is_baseline or run in self.baselines:
                base_spans.append((run, spans[-1]))
        self._log_warnings(spans)
        self._all_log_on_baselines([s for s in spans if all(s is not b for _, b in base_spans)], base_spans)
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

    def _all_log_on_baselines(self, cluster: list[tuple[float, float]],
                              base_spans: list[tuple[Run, tuple[float, float]]]) -> None:
        """`all` stands for the whole cluster and is never applied to a baseline run (a desktop), so a
        log that overlaps only baselines would measure nothing without a word: say so once, naming
        the HOST=FILE that applies it."""
        for log in self.logs:
            if log.node.lower() != "all" or not log.usable \
                    or any(meter.overlaps(log, *s) for s in cluster):
                continue
            hit = [run for run, s in base_spans if meter.overlaps(log, *s)]
            if hit:
                hosts = sorted({n.hostname for run in hit for n in nodes_of(run)})
                self.warn(f"--power-log all={log.path}: a log of the whole cluster, but the only runs "
                          f"it overlaps are baselines ({', '.join(r.name for r in hit)}), and all= is "
                          "never applied to a baseline, so it is not used; to measure that machine pass "
                          + " or ".join(f"--power-log {h}={log.path}" for h in hosts))

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
            self.out.sources[run.name] = ", ".join(src_text) + req + extra + _sampler_cost(power, fe)
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


def _sampler_cost(power, fe: FileEnergy) -> str:
    """"; the power sampler took at most X% of a core (...)" from the points' sampler_cpu_share,
    "" when no point holds it."""
    shares = [s.sampler_cpu_share for s in fe.series.values() if s.sampler_cpu_share is not None]
    cells = np.concatenate([np.atleast_1d(a) for a in shares]) if shares else np.array([])
    cells = cells[np.isfinite(cells)]
    if cells.size == 0:
        return ""
    ways = sorted({r for r in power.reader if r})
    how = f" reading through {' and '.join(ways)}" if ways else ""
    return (f"; measuring cost at most {100 * float(cells.max()):.2g}% of a core per node{how} "
            "(sampler_cpu_share)")
