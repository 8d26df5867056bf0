"""The report's tables as plain rows, with one rendering for HTML and Markdown
(human units) and one for CSV (raw SI numbers: seconds, bytes, B/s)."""

from __future__ import annotations

import csv
import math
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import numpy as np

from . import derive, stats
from .derive import Comparison, Crossover, LoadStepStats, PointStats, RankStats, Saturation
from .runs import Run
from .model import RunModel


@dataclass
class Column:
    key: str
    header: str
    kind: str = "text"  # text, int, float, time, pct, ratio, bytes, rate, summary, Bps


@dataclass
class Table:
    name: str  # CSV file stem
    title: str
    columns: list[Column]
    rows: list[dict[str, Any]]
    note: str = ""
    html_rows: list[dict[str, Any]] | None = None  # a shorter selection for the page
    transpose: bool = False  # show one column per row (for a few wide rows)
    html_columns: list[str] | None = None  # keys shown on the page (the CSV has every column)

    @property
    def shown_rows(self) -> list[dict[str, Any]]:
        return self.rows if self.html_rows is None else self.html_rows

    @property
    def shown_columns(self) -> list[Column]:
        if self.html_columns is None:
            return self.columns
        return [c for c in self.columns if c.key in self.html_columns]


NUMERIC = {"int", "float", "time", "pct", "ratio", "bytes", "rate", "summary", "Bps", "ci"}


def _finite(value: Any) -> bool:
    try:
        return value is not None and math.isfinite(float(value))
    except (TypeError, ValueError):
        return False


def fmt_time(seconds: Any) -> str:
    if not _finite(seconds):
        return "–"
    s = float(seconds)
    for scale, unit in ((1.0, "s"), (1e-3, "ms"), (1e-6, "µs"), (1e-9, "ns")):
        if abs(s) >= scale or unit == "ns":
            return f"{s / scale:.3g} {unit}"
    return f"{s:.3g} s"


def fmt_bytes(n: Any) -> str:
    if not _finite(n):
        return "–"
    v = float(n)
    for scale, unit in ((1e9, "GB"), (1e6, "MB"), (1e3, "kB")):
        if abs(v) >= scale:
            return f"{v / scale:.3g} {unit}"
    return f"{v:.0f} B"


def fmt_bps(v: Any) -> str:
    if not _finite(v):
        return "–"
    v = float(v)
    for scale, unit in ((1e9, "GB/s"), (1e6, "MB/s"), (1e3, "kB/s")):
        if abs(v) >= scale:
            return f"{v / scale:.3g} {unit}"
    return f"{v:.3g} B/s"


def fmt_load(value: float, unit: str) -> str:
    """A load step's load: '1 client', '4 clients', '12 req/s'."""
    if unit == "clients" and value == 1:
        unit = "client"
    return f"{value:g} {unit}"


def fmt_ratio(v: Any) -> str:
    if not _finite(v):
        return "–"
    v = float(v)
    return f"{v:,.0f}" if abs(v) >= 1000 else f"{v:.3g}"


@dataclass
class Ci:
    """A value with its 95 % CI, for a table cell."""

    value: float
    lo: float
    hi: float
    fmt: str = "ratio"  # or "time"

    def parts(self) -> tuple[str, str]:
        f = fmt_time if self.fmt == "time" else fmt_ratio
        if not _finite(self.value):
            return "–", ""
        return f(self.value), f"[{f(self.lo)}, {f(self.hi)}]"


def _short(v: float) -> str:
    return f"{v:.3g}" if abs(v) < 1000 else f"{v:.0f}"


def render_parts(value: Any, kind: str) -> tuple[str, str]:
    """A cell as (main text, detail for a second line or a tooltip)."""
    if value is None:
        return "–", ""
    if kind == "summary":
        s: stats.Summary = value
        if s.n == 0:
            return "–", ""
        main = fmt_time(s.median)
        # the CI in the median's unit, so that the second line stays short
        unit = main.split()[-1]
        scale = {"s": 1.0, "ms": 1e-3, "µs": 1e-6, "ns": 1e-9}.get(unit, 1.0)
        cv = "" if not _finite(s.cv) else f" cv {s.cv * 100:.1f}%"
        return main, f"[{_short(s.ci_lo / scale)}, {_short(s.ci_hi / scale)}]{cv}"
    if kind == "ci":
        return value.parts()
    return render(value, kind), ""


def render(value: Any, kind: str) -> str:
    """A value as shown to a person."""
    if value is None:
        return "–"
    if kind in ("summary", "ci"):
        main, detail = render_parts(value, kind)
        return f"{main} {detail}".strip()
    if kind == "time":
        return fmt_time(value)
    if kind == "bytes":
        return fmt_bytes(value)
    if kind == "Bps":
        return fmt_bps(value)
    if kind == "pct":
        return f"{float(value) * 100:.1f} %" if _finite(value) else "–"
    if kind in ("float", "ratio", "rate"):
        return fmt_ratio(value)
    if kind == "int":
        return f"{int(value)}" if _finite(value) else "–"
    return str(value)


def csv_cells(value: Any, kind: str, key: str) -> dict[str, str]:
    """The CSV cells for one value: raw numbers; a summary becomes five columns."""
    if kind == "summary":
        s: stats.Summary | None = value
        names = ("median_s", "ci_lo_s", "ci_hi_s", "cv", "n")
        if s is None:
            return {f"{key}_{n}": "" for n in names}
        vals = (s.median, s.ci_lo, s.ci_hi, s.cv, s.n)
        return {f"{key}_{n}": _raw(v) for n, v in zip(names, vals)}
    if kind == "ci":
        c: Ci | None = value
        unit = "_s" if c is not None and c.fmt == "time" else ""
        vals = (None, None, None) if c is None else (c.value, c.lo, c.hi)
        return {f"{key}{unit}": _raw(vals[0]), f"{key}_ci_low{unit}": _raw(vals[1]),
                f"{key}_ci_high{unit}": _raw(vals[2])}
    suffix = {"time": "_s", "bytes": "_bytes", "Bps": "_Bps"}.get(kind, "")
    named = key.endswith(suffix) or key == suffix.lstrip("_")  # already says its unit
    return {key + ("" if named else suffix): _raw(value)}


def _raw(value: Any) -> str:
    if value is None:
        return ""
    if isinstance(value, (bool, np.bool_)):
        return "1" if value else "0"
    if isinstance(value, (int, np.integer)):
        return str(int(value))
    if isinstance(value, (float, np.floating)):
        return "" if not math.isfinite(float(value)) else f"{float(value):.9g}"
    return str(value)


def write_csv(table: Table, path: Path) -> None:
    with open(path, "w", newline="", encoding="utf-8") as fh:
        writer = None
        for row in table.rows:
            cells: dict[str, str] = {}
            for col in table.columns:
                cells.update(csv_cells(row.get(col.key), col.kind, col.key))
            if writer is None:
                writer = csv.DictWriter(fh, fieldnames=list(cells))
                writer.writeheader()
            writer.writerow(cells)
        if writer is None:
            header: dict[str, str] = {}
            for col in table.columns:
                header.update(csv_cells(None, col.kind, col.key))
            csv.writer(fh).writerow(list(header))


def provenance(runs: list[Run], baseline: Run | None) -> Table:
    rows = []
    for run in runs:
        a = run.attrs
        hostnames: list[str] = []
        cpus: list[str] = []
        for h in run.hosts:
            if h.get("hostname") not in hostnames:
                hostnames.append(str(h.get("hostname")))
            if h.get("cpu_model") not in cpus:
                cpus.append(str(h.get("cpu_model")))
        verified = {1: "passed", 0: "FAILED", -1: "not checked"}.get(run.verified, str(run.verified))
        if run.invalid:
            verified = "INVALID: " + verified
        state = run.status + (" (PARTIAL file)" if run.partial else "")
        role = "baseline" if run is baseline else ("baseline=1" if run.is_baseline else "")
        rows.append({
            "run": run.name, "file": str(run.path), "label": run.label or "(none)", "role": role,
            "created_utc": a.get("created_utc", "?"), "status": state, "verification": verified,
            "ranks_nodes": f"{run.nranks} / {a.get('nnodes', '?')}",
            "hosts": ", ".join(hostnames) or "?", "cpu": "; ".join(cpus) or "?",
            "mpi": a.get("mpi_library", "?"), "fftw": a.get("fftw_version", "?"),
            "hdf5": a.get("hdf5_version", "?"), "compiler": f"{a.get('compiler', '?')} {a.get('cflags', '')}".strip(),
            "wulfbench": f"{a.get('version', '?')} ({a.get('git_rev', '?')})",
            "command_line": a.get("command_line", "?"), "seed": a.get("seed", "?"),
        })
    cols = [Column("run", "run"), Column("file", "file"), Column("label", "label"),
            Column("role", "role"), Column("created_utc", "date (UTC)"),
            Column("status", "status"), Column("verification", "verification"),
            Column("ranks_nodes", "ranks / nodes"), Column("hosts", "hosts"),
            Column("cpu", "CPU"), Column("mpi", "MPI"), Column("fftw", "FFTW"),
            Column("hdf5", "HDF5"), Column("compiler", "compiler"),
            Column("wulfbench", "wulfbench"), Column("command_line", "command line"),
            Column("seed", "seed")]
    return Table("provenance", "Runs", cols, rows, transpose=True)


def hosts(runs: list[Run]) -> Table:
    rows = []
    for run in runs:
        for h in run.hosts:
            flag = h.get("throttled")
            throttled = {1: "yes", 0: "no"}.get(int(flag), "unknown") if _finite(flag) else "unknown"
            rows.append({"run": run.name, "rank": h.get("rank"), "node": h.get("node"),
                         "hostname": h.get("hostname"), "cpu_model": h.get("cpu_model"),
                         "cores": h.get("cores"), "mem_bytes": h.get("mem_bytes"),
                         "cpu_mhz": h.get("cpu_mhz"), "temp_c_start": h.get("temp_c_start"),
                         "temp_c_end": h.get("temp_c_end"), "throttled": throttled})
    cols = [Column("run", "run"), Column("rank", "rank", "int"), Column("node", "node", "int"),
            Column("hostname", "host"), Column("cpu_model", "CPU"), Column("cores", "cores", "int"),
            Column("mem_bytes", "memory", "bytes"), Column("cpu_mhz", "MHz", "float"),
            Column("temp_c_start", "temp start (°C)", "float"),
            Column("temp_c_end", "temp end (°C)", "float"), Column("throttled", "throttled")]
    return Table("hosts", "Hosts (one row per rank)", cols, rows)


def fft_points(point_stats: list[PointStats]) -> Table:
    rows = []
    for s in point_stats:
        pt = s.point
        row = {"run": s.run.name, "point": pt.id, "scenario": pt.scenario, "config": pt.config,
               "nfiles": pt.nfiles, "seconds_per_file": pt.seconds_per_file,
               "input_bytes": pt.input_bytes, "p": pt.p,
               "reps": s.summaries["total"].n, "ci_level": s.summaries["total"].ci_level,
               "kBps": s.kBps, "gflops": s.gflops, "gflops_per_rank": s.gflops_per_rank,
               "status": s.status}
        for name in derive.SERIES:
            row[name] = s.summaries[name]
        rows.append(row)
    cols = [Column("run", "run"), Column("point", "point"), Column("scenario", "scenario"),
            Column("config", "transform"), Column("nfiles", "files", "int"),
            Column("seconds_per_file", "s/file", "float"), Column("input_bytes", "input", "bytes"),
            Column("p", "p", "int"), Column("reps", "reps", "int"),
            Column("ci_level", "CI coverage", "pct")]
    cols += [Column(name, derive.SERIES_TITLES[name], "summary") for name in derive.SERIES]
    cols += [Column("kBps", "kB/s", "rate"), Column("gflops", "GFLOPS", "float"),
             Column("gflops_per_rank", "GFLOPS/rank", "float"), Column("status", "status")]
    for row in rows:
        row["workload"] = workload(row["nfiles"], row["seconds_per_file"], row["input_bytes"])
    cols.insert(3, Column("workload", "request"))
    return Table("fft_points", "FFT points: median, with the 95 % CI (same unit) and CV below it",
                 cols, rows,
                 note="p = ranks that compute. Per-rank times are the slowest rank of each "
                      "repetition; overhead = total "
                      "− slowest distribute − slowest compute − slowest gather, per repetition. "
                      "CI coverage is what the order-statistic interval achieves (below 95 % "
                      "only for fewer than 6 repetitions, where it falls back to [min, max]). "
                      "The page leaves out read and FFT; the CSV has every column.",
                 html_columns=["run", "point", "workload", "p", "reps", "total",
                               "distribute", "compute", "gather", "overhead", "kBps", "gflops",
                               "status"])


def workload(nfiles: Any, seconds: Any, input_bytes: Any) -> str:
    """'4 × 5 s files (1.76 MB)' or '1 s file (88.2 kB)'."""
    n = int(nfiles) if _finite(nfiles) else 0
    secs = f"{float(seconds):g} s" if _finite(seconds) else "?"
    what = f"{n} × {secs} files" if n > 1 else f"{secs} file"
    return f"{what} ({fmt_bytes(input_bytes)})"


def phase_stack(point_stats: list[PointStats], overlaps: dict[tuple[str, str], float]) -> Table:
    """The stdout-style rows that add up: medians of the slowest rank's phases and
    of the remainder, beside the median t_total."""
    rows = []
    for s in point_stats:
        if not s.usable:
            continue
        med = {k: s.summaries[k].median for k in ("distribute", "compute", "gather", "overhead")}
        stacked = sum(np.nan_to_num(v) for v in med.values())
        rows.append({"run": s.run.name, "point": s.point.id,
                     "workload": workload(s.point.nfiles, s.point.seconds_per_file,
                                          s.point.input_bytes),
                     **med, "stacked": stacked, "total": s.summaries["total"].median,
                     "overlap": overlaps.get((s.run.name, s.point.id))})
    cols = [Column("run", "run"), Column("point", "point"), Column("workload", "request"),
            Column("distribute", "distribute", "time"), Column("compute", "compute", "time"),
            Column("gather", "gather", "time"), Column("overhead", "overhead (rest)", "time"),
            Column("stacked", "sum of the four", "time"), Column("total", "t_total median", "time"),
            Column("overlap", "overlap", "ratio")]
    return Table("fft_phases", "Where the request time goes (these add up)", cols, rows,
                 note="Per repetition: the slowest rank's distribute, compute and gather, and "
                      "the overhead as what they leave of t_total. Each column is the median "
                      "over repetitions of that column, so the columns are medians of different "
                      "repetitions and their sum differs a little from the t_total median "
                      "printed beside it. Overlap (pipelined schedule) is the phases' sum over "
                      "t_total: above 1 the phases overlap and the overhead is negative.")


def per_rank(rows_in: list[tuple[Run, str, list[RankStats]]]) -> Table:
    rows = []
    for run, pid, ranks in rows_in:
        for r in ranks:
            rows.append({"run": run.name, "point": pid, "rank": r.rank, "host": r.host,
                         "computes": "yes" if r.computes else "no", "distribute": r.distribute,
                         "compute": r.compute, "fft": r.fft, "gather": r.gather,
                         "phases": r.phases, "gflops": r.gflops, "compute_ratio": r.compute_ratio,
                         "phases_ratio": r.phases_ratio,
                         "straggler": ("STRAGGLER: " + r.reason) if r.straggler else ""})
    cols = [Column("run", "run"), Column("point", "point"), Column("rank", "rank", "int"),
            Column("host", "host"), Column("computes", "computes"),
            Column("distribute", "distribute", "time"), Column("compute", "compute", "time"),
            Column("fft", "FFT", "time"), Column("gather", "gather", "time"),
            Column("phases", "dist+comp+gather", "time"), Column("gflops", "GFLOPS", "float"),
            Column("compute_ratio", "compute / median", "ratio"),
            Column("phases_ratio", "phases / median", "ratio"), Column("straggler", "straggler")]
    return Table("per_rank", "Per-rank medians", cols, rows,
                 note="A straggler is a computing rank whose median compute time, or median "
                      "distribute + compute + gather, is more than 20 % above the median over "
                      "the computing ranks.")


def stragglers(items: list[tuple[Run, str, RankStats]]) -> Table:
    rows = [{"run": run.name, "point": pid, "rank": r.rank, "host": r.host,
             "compute": r.compute, "compute_ratio": r.compute_ratio, "phases_ratio": r.phases_ratio,
             "reason": r.reason} for run, pid, r in items]
    cols = [Column("run", "run"), Column("point", "point"), Column("rank", "rank", "int"),
            Column("host", "host"), Column("compute", "compute", "time"),
            Column("compute_ratio", "compute / median", "ratio"),
            Column("phases_ratio", "phases / median", "ratio"), Column("reason", "why")]
    return Table("stragglers", "Stragglers at every point", cols, rows)


def comparison(comps: list[Comparison], name: str, title: str) -> Table:
    machine = [c for c in comps if c.kind == "cross-machine"]
    rows = []
    for c in comps:
        pt = c.cluster.point
        rows.append({"run": c.run.name, "point": pt.id, "kind": c.kind,
                     "baseline": c.base_name,
                     "baseline_point": c.base.point.id if c.base is not None else pt.id,
                     "scenario": pt.scenario, "config": pt.config,
                     "workload": workload(pt.nfiles, pt.seconds_per_file, pt.input_bytes),
                     "nfiles": pt.nfiles, "seconds_per_file": pt.seconds_per_file,
                     "input_bytes": pt.input_bytes, "t_run": c.cluster.median,
                     "t_baseline": c.base.median if c.base is not None else None, "p": c.p,
                     "speedup": Ci(c.speedup, c.ci_lo, c.ci_hi), "n": c.n,
                     # other hardware (compare.MachineComparison): the ratio per node and core
                     "per_node": Ci(*c.per_node) if hasattr(c, "per_node") else None,
                     "per_core": Ci(*c.per_core) if hasattr(c, "per_core") else None,
                     "efficiency": c.efficiency, "karp_flatt": c.karp_flatt,
                     "drift": c.drift, "verdict": c.verdict,
                     "flags": "IMPLAUSIBLE: " + "; ".join(c.implausible) if c.implausible else ""})
    cols = [Column("run", "run"), Column("point", "point"), Column("kind", "comparison"),
            Column("baseline", "against"), Column("baseline_point", "baseline point"),
            Column("scenario", "scenario"), Column("config", "transform"),
            Column("workload", "request"), Column("nfiles", "files", "int"),
            Column("seconds_per_file", "s/file", "float"), Column("input_bytes", "input", "bytes"),
            Column("t_run", "cluster median", "time"),
            Column("t_baseline", "baseline median", "time"), Column("p", "p", "int"),
            Column("speedup", "speedup S [95 % CI]", "ci"), Column("n", "n", "int"),
            Column("per_node", "ratio per node", "ci"), Column("per_core", "ratio per core", "ci"),
            Column("efficiency", "efficiency S/p", "pct"),
            Column("karp_flatt", "Karp–Flatt e", "ratio"),
            Column("drift", "baseline drift", "pct"), Column("verdict", "verdict"),
            Column("flags", "flags")]
    return Table(name, title, cols, rows,
                 note="Paired: S is the median over repetitions of baseline t_total[r] / "
                      "cluster t_total[r], measured alternately in the same job, with the 95 % "
                      "CI of that median. Cross-run: S = baseline median / cluster median, and "
                      "the CI runs from the low end of the baseline's 95 % CI over the high end "
                      "of the cluster's to the reverse; with two bracketing baselines (before "
                      "and after) it spans both, so their drift (after / before − 1) is inside "
                      "it. E = S/p, e = (1/S − 1/p)/(1 − 1/p), p = ranks that compute."
                      + (" Cross-machine (the baseline ran on other hardware): S is the relative "
                         "throughput with a 95 % bootstrap CI over both runs, per node and per "
                         "core beside it; no E or e." if machine else ""),
                 html_columns=["run", "point", "kind", "workload", "p", "speedup"]
                 + (["per_node", "per_core"] if machine else [])
                 + (["efficiency", "karp_flatt"] if len(machine) < len(comps) else [])
                 + ["verdict", "flags"] + (["drift"] if any(_finite(c.drift) for c in comps) else []))


def _x_unit(scenario: str, x: float) -> str:
    if scenario == "files":
        return f"{x:.0f} file" + ("" if x == 1 else "s")
    return fmt_bytes(x)


def crossover_text(c: Crossover) -> str:
    lo, hi = c.x_range
    if c.x is None:
        losing = sorted(c.losing, key=lambda item: -item[0])[:3]
        where = ", ".join(f"{_x_unit(c.scenario, x)} (S {fmt_ratio(s)})" for x, s in losing)
        return f"no crossover: the cluster loses at {where}" if where else \
            "no crossover: no speedup could be computed"
    text = f"crossover at {_x_unit(c.scenario, c.x)}"
    if c.scenario == "sizes" and c.seconds_per_file is not None:
        text += f" ({c.seconds_per_file:g} s of audio)"
    early = _x_unit(c.scenario, c.x_early) if c.x_early is not None else "–"
    late = _x_unit(c.scenario, c.x_late) if c.x_late is not None else f"beyond {_x_unit(c.scenario, hi)}"
    if c.x_early == c.x == c.x_late:
        text += " (the 95 % CIs give the same point)"
    else:
        text += f" (95 % CI {early} to {late})"
    text += "; the cluster wins at every larger point measured"
    if lo < c.x:
        text += f" (measured from {_x_unit(c.scenario, lo)})"
    return text


def crossover_short(c: Crossover) -> str:
    if c.x is None:
        worst = max(c.losing, key=lambda item: item[0]) if c.losing else None
        return ("no crossover" + (f" (loses at {_x_unit(c.scenario, worst[0])}, S "
                                  f"{fmt_ratio(worst[1])})" if worst else ""))
    return f"crossover at {_x_unit(c.scenario, c.x)}"


def crossovers(items: list[Crossover]) -> Table:
    rows = [{"run": c.run.name, "kind": c.kind, "scenario": c.scenario, "config": c.config,
             "crossover_x": c.x, "crossover_ci_low": c.x_early, "crossover_ci_high": c.x_late,
             "unit": "files" if c.scenario == "files" else "input bytes",
             "range_lo": c.x_range[0], "range_hi": c.x_range[1],
             "verdict": crossover_text(c)} for c in items]
    cols = [Column("run", "run"), Column("kind", "comparison"), Column("scenario", "scenario"),
            Column("config", "transform"), Column("crossover_x", "crossover", "float"),
            Column("crossover_ci_low", "CI low", "float"),
            Column("crossover_ci_high", "CI high", "float"), Column("unit", "unit"),
            Column("range_lo", "measured from", "float"), Column("range_hi", "to", "float"),
            Column("verdict", "verdict")]
    return Table("crossover", "Crossover: the smallest size or file count from which the cluster "
                 "wins at every larger point", cols, rows,
                 note="The CI applies the same rule to the upper and the lower ends of the "
                      "speedups' 95 % intervals.",
                 html_columns=["run", "kind", "scenario", "config", "verdict"])


def transfer_stats(items: list[derive.TransferStats], name: str, title: str) -> Table:
    """Point to point and ring: statistics over repetitions; collectives: over ranks."""
    rows = []
    collective = any(t.kind == "collective" for t in items)
    for t in items:
        for i, m in enumerate(t.bytes):
            row = {"run": t.run.name, "test": t.test, "bytes": float(m),
                   "unstable": "unstable (CV > 5 %)" if t.unstable[i] else ""}
            for key, arr in t.columns.items():
                row[key] = arr[i]
            rows.append(row)
    if collective:
        cols = [Column("t_avg", "t avg over ranks", "time"),
                Column("t_max", "t max over ranks", "time"),
                Column("t_min", "t min over ranks", "time"),
                Column("t_med", "t median over ranks", "time"),
                Column("cv", "CV over reps (slowest rank)", "pct")]
        note = ("Each rank's mean over repetitions, then reduced over ranks: avg (as OSU), max "
                "(IMB's t_max), min and median. CV: standard deviation / mean over the "
                "repetitions of the slowest rank.")
    else:
        cols = [Column("t_avg", "t avg over reps", "time"),
                Column("t_min", "t min over reps", "time"),
                Column("t_max", "t max over reps", "time"),
                Column("t_med", "t median over reps", "time"),
                Column("t_p95", "t p95 over reps", "time"),
                Column("cv", "CV over reps", "pct")]
        note = ("Statistics over repetitions, as OSU prints them (avg, min, max) plus median and "
                "p95; with several pairs the median pair's value (CV: the largest over pairs).")
    cols = [Column("run", "run"), Column("test", "test"), Column("bytes", "size", "bytes")] \
        + cols + [Column("unstable", "flag")]
    return Table(name, title, cols, rows, note=note + " A size with CV > 5 % is flagged unstable.")


def pairs_matrix(run: Run) -> Table:
    pa = run.pairs_all
    rows = []
    if pa is not None:
        n = max((m.shape[0] for m in (pa.latency_s, pa.bandwidth_Bps) if m is not None), default=0)
        for s in range(n):
            for r in range(n):
                if s == r:
                    continue
                rows.append({"run": run.name, "sender": run.rank_label(s),
                             "receiver": run.rank_label(r),
                             "latency": pa.latency_s[s, r] if pa.latency_s is not None else None,
                             "bandwidth": pa.bandwidth_Bps[s, r] if pa.bandwidth_Bps is not None else None})
    cols = [Column("run", "run"), Column("sender", "sender"), Column("receiver", "receiver"),
            Column("latency", "latency", "time"), Column("bandwidth", "bandwidth", "Bps")]
    return Table(f"transfer_pairs_{_slug(run.name)}", f"All pairs: {run.name}", cols, rows)


def link_maps(run: Run, maps: list[tuple[str, derive.LinkMap]]) -> Table:
    """Links slower than 80 % of the median, from every map."""
    rows = []
    for which, lm in maps:
        for s_, r, ratio in lm.slow:
            rows.append({"run": run.name, "map": which, "what": lm.what,
                         "sender": run.rank_label(s_), "receiver": run.rank_label(r),
                         "value": lm.values[s_, r], "median": lm.median, "ratio": ratio})
    kind = "time" if all(lm.what == "latency" for _w, lm in maps) else "float"
    cols = [Column("run", "run"), Column("map", "map"), Column("what", "measure"),
            Column("sender", "sender"), Column("receiver", "receiver"),
            Column("value", "value (s or B/s)", kind), Column("median", "median", kind),
            Column("ratio", "speed / median", "pct")]
    return Table(f"slow_links_{_slug(run.name)}", f"Links below 80 % of the median: {run.name}",
                 cols, rows, note="Speed relative to the median: bandwidth / median bandwidth, "
                 "or median latency / latency.")


def dfft_points(items: list[derive.DfftStats]) -> Table:
    rows = [{"run": d.run.name, "point": d.id, "shape": d.shape, "n": d.n, "kind": d.kind,
             "nodes": d.nodes, "nranks": d.nranks, "total": d.total, "local_fft": d.local_fft,
             "transpose": d.transpose, "gflops": d.gflops,
             "verified": {1: "passed", 0: "INVALID", -1: "not checked"}.get(d.verified, "?")}
            for d in items]
    cols = [Column("run", "run"), Column("point", "point"), Column("shape", "shape"),
            Column("n", "N (points)", "float"), Column("kind", "kind"),
            Column("nodes", "nodes", "int"), Column("nranks", "ranks", "int"),
            Column("total", "t_total (slowest rank)", "summary"),
            Column("local_fft", "local FFT (slowest)", "time"),
            Column("transpose", "transpose (slowest)", "time"),
            Column("gflops", "GFLOPS", "float"), Column("verified", "verification")]
    return Table("dfft", "Distributed FFT (dfft)", cols, rows,
                 note="GFLOPS by HPCC's count: 5·N·log2 N flops for c2c, half that for r2c, over "
                      "the median t_total. Local FFT and transpose: median over repetitions of "
                      "the slowest rank; a 1-D transform does not split them.")


def pipeline(rows_in: list[dict[str, Any]]) -> Table:
    cols = [Column("run", "run"), Column("point", "point"), Column("schedule", "schedule"),
            Column("chunk_frames", "chunk (frames)", "int"), Column("overlap", "overlap", "ratio"),
            Column("link_out_bytes", "head link out", "bytes"),
            Column("link_in_bytes", "head link in", "bytes"),
            Column("link_bound", "full-duplex bound", "time"),
            Column("link_use", "link use", "text")]
    return Table("pipeline", "Schedule, overlap and the head node's link", cols, rows_in,
                 note="Overlap: median over repetitions of (slowest distribute + slowest compute "
                      "+ slowest gather) / t_total; about 1 when phased, above 1 when the phases "
                      "overlap. Link use: the full-duplex bound max(bytes out, bytes in) / line "
                      "rate over the median t_total; 100 % would mean the head's link is the "
                      "only limit.")


def validation(val) -> Table:
    rows = [{"point": pid, "nodes": val.held_nodes, "measured": meas, "predicted": pred,
             "error": abs(pred - meas) / meas if meas > 0 else None}
            for pid, meas, pred in val.checks]
    cols = [Column("point", "point"), Column("nodes", "held-out nodes", "int"),
            Column("measured", "measured median", "time"),
            Column("predicted", "predicted", "time"), Column("error", "error", "pct")]
    return Table("forecast_check", "Forecast check on the held-out node count", cols, rows,
                 note="Fitted on " + ", ".join(map(str, val.fit_nodes)) + " nodes; the forecast "
                      "is shown only when every error here is at most 25 %.")


def study(rows_in: list[tuple[str, str, str]]) -> Table:
    rows = [{"row": r, "measurement": m, "answer": a} for r, m, a in rows_in]
    cols = [Column("row", "study row"), Column("measurement", "measurement"),
            Column("answer", "answer")]
    return Table("study_summary", "The study's rows 1–11", cols, rows,
                 note="One line per row of the study; the sections below hold the details.")


def _slug(name: str) -> str:
    from .cliutil import slug
    return slug(name)


def models(items: list[RunModel]) -> Table:
    rows = []
    for m in items:
        h, c = m.hockney, m.compute
        rows.append({
            "run": m.run,
            "alpha": h.alpha_s if h else None, "beta": h.beta_Bps if h else None,
            "ab_source": h.source if h else "–",
            "ab_err_med": h.rel_err_median if h else None, "ab_err_max": h.rel_err_max if h else None,
            "c0": c.a if c else None, "ns_per_flop": c.b * 1e9 if c else None,
            "comp_err_med": c.rel_err_median if c else None,
            "comp_err_max": c.rel_err_max if c else None,
            "t0": m.t0_s, "total_err_med": m.total_rel_err_median,
            "total_err_max": m.total_rel_err_max, "n": m.total_n,
        })
    cols = [Column("run", "run"), Column("alpha", "α (latency)", "time"),
            Column("beta", "β (bandwidth)", "Bps"), Column("ab_source", "α–β from"),
            Column("ab_err_med", "α–β err median", "pct"), Column("ab_err_max", "α–β err max", "pct"),
            Column("c0", "compute c0 per request", "time"),
            Column("ns_per_flop", "compute ns/flop", "float"),
            Column("comp_err_med", "compute err median", "pct"),
            Column("comp_err_max", "compute err max", "pct"), Column("t0", "fixed t0", "time"),
            Column("total_err_med", "total err median", "pct"),
            Column("total_err_max", "total err max", "pct"), Column("n", "points", "int")]
    return Table("model", "Fitted model and its error on the measured points", cols, rows,
                 note="Errors are relative: |model − measured| / measured. The total error is "
                      "what the forecast makes on the points that were measured; trust the "
                      "forecast no further than that, and less the further it extrapolates.")


FORECAST_SHOWN = (1, 2, 4, 8, 16, 32, 64)


def forecasts(items: list[RunModel]) -> Table:
    rows = []
    for m in items:
        for f in m.forecasts:
            for i, p in enumerate(f.nodes):
                rows.append({"run": m.run, "point": f.point_id, "request": f.label,
                             "nodes": int(p), "t_dist": f.t_dist[i], "t_comp": f.t_comp[i],
                             "t_gather": f.t_gather[i], "t_total": f.t_total[i],
                             "speedup": f.speedup[i], "speedup_ref": f.speedup_ref})
    cols = [Column("run", "run"), Column("point", "point"), Column("request", "request"),
            Column("nodes", "nodes", "int"), Column("t_dist", "distribute", "time"),
            Column("t_comp", "compute", "time"), Column("t_gather", "gather", "time"),
            Column("t_total", "total", "time"), Column("speedup", "speedup", "ratio"),
            Column("speedup_ref", "speedup against")]
    shown = [r for r in rows if r["nodes"] in FORECAST_SHOWN]
    return Table("forecast", "Forecast for 1…64 nodes (page shows powers of two; the CSV has all)",
                 cols, rows, html_rows=shown)


def load_steps(items: list[tuple[Run, list[LoadStepStats]]]) -> Table:
    rows = []
    for run, steps in items:
        for s in steps:
            rows.append({"run": run.name, "step": s.step.id, "loop": s.loop, "clients": s.clients,
                         "load": fmt_load(s.load, s.load_unit),
                         "offered": s.offered_rps, "throughput": s.throughput_rps,
                         "requests": s.n, "done": s.done, "rejected": s.rejected,
                         "unfinished": s.unfinished, "warmup_excluded": s.warmup_excluded,
                         "p50": s.p50, "p95": s.p95, "p99": s.p99,
                         "queue": s.phases.get("t_queue"), "healthy": "yes" if s.healthy else f"no ({s.why})"})
    cols = [Column("run", "run"), Column("step", "step"), Column("loop", "loop"),
            Column("clients", "clients", "int"), Column("load", "load"),
            Column("offered", "offered (req/s)", "float"),
            Column("throughput", "done (req/s)", "float"), Column("requests", "requests", "int"),
            Column("done", "done", "int"), Column("rejected", "rejected", "int"),
            Column("unfinished", "unfinished", "int"),
            Column("warmup_excluded", "warm-up excluded", "int"),
            Column("p50", "p50", "time"), Column("p95", "p95", "time"), Column("p99", "p99", "time"),
            Column("queue", "median queue wait", "time"), Column("healthy", "healthy")]
    return Table("load_steps", "Load steps (warm-up requests excluded)", cols, rows,
                 note="Latency is t_done − t_submit of finished requests. The load is the number "
                      "of clients in a closed loop and the offered rate in an open loop. A step's "
                      "verdict is its own 'pass' attribute when the file has one; otherwise it is "
                      "healthy when p95 meets the SLO, at most 1 % of requests were rejected or "
                      "unfinished, it did not time out, and (open loop) it finished ≥ 90 % of the "
                      "offered rate.")


def saturation(items: list[tuple[Run, Saturation]]) -> Table:
    rows = [{"run": run.name, "loop": s.loop, "unit": s.load_unit,
             "saturation_load": s.saturation_load, "saturation_rps": s.saturation_rps,
             "p95": s.saturation_p95_s, "first_fail_load": s.first_fail_load,
             "first_fail_rps": s.first_fail_rps, "reason": s.fail_reason, "source": s.source}
            for run, s in items]
    cols = [Column("run", "run"), Column("loop", "loop"), Column("unit", "load unit"),
            Column("saturation_load", "saturation load", "float"),
            Column("saturation_rps", "served there (req/s)", "float"),
            Column("p95", "p95 there", "time"),
            Column("first_fail_load", "first failing load", "float"),
            Column("first_fail_rps", "served there (req/s)", "float"),
            Column("reason", "why it failed"), Column("source", "from")]
    return Table("load_saturation", "Saturation point", cols, rows)
