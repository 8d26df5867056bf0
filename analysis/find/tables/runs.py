"""The tables of runs, hosts, FFT points, phases, ranks, stragglers, pipeline, dfft and the study summary."""

from __future__ import annotations

from typing import Any

import numpy as np

from ... import derive
from ...derive import PointStats, RankStats, owntime
from ...read.runs import Run
from .base import Column, Table, _finite, workload


def architecture(machines: list[str], build_arch: Any) -> str:
    """What the hosts ran as (uname -m) and what the binary was built for; "?" in files older than both."""
    ran = ", ".join(machines)
    if build_arch:
        return f"{ran} (built for {build_arch})" if ran else f"built for {build_arch}"
    return ran or "?"


def provenance(runs: list[Run], baseline: Run | None) -> Table:
    rows = []
    for run in runs:
        a = run.attrs
        hostnames: list[str] = []
        cpus: list[str] = []
        machines: list[str] = []
        for h in run.hosts:
            if h.get("arch") and str(h.get("arch")) not in machines:
                machines.append(str(h.get("arch")))
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
            "arch": architecture(machines, a.get("build_arch")),
            "mpi": a.get("mpi_library", "?"), "fftw": a.get("fftw_version", "?"),
            "hdf5": a.get("hdf5_version", "?"), "compiler": f"{a.get('compiler', '?')} {a.get('cflags', '')}".strip(),
            "wulfbench": f"{a.get('version', '?')} ({a.get('git_rev', '?')})",
            "command_line": a.get("command_line", "?"), "seed": a.get("seed", "?"),
        })
    cols = [Column("run", "run"), Column("file", "file"), Column("label", "label"),
            Column("role", "role"), Column("created_utc", "date (UTC)"),
            Column("status", "status"), Column("verification", "verification"),
            Column("ranks_nodes", "ranks / nodes"), Column("hosts", "hosts"),
            Column("cpu", "CPU"), Column("arch", "architecture"), Column("mpi", "MPI"), Column("fftw", "FFTW"),
            Column("hdf5", "HDF5"), Column("compiler", "compiler"),
            Column("wulfbench", "wulfbench"), Column("command_line", "command line"),
            Column("seed", "seed")]
    return Table("provenance", "Runs", cols, rows, transpose=True)


def own_cost(runs: list[Run]) -> Table | None:
    """Each run's own time: its wall time split into start-up, the measured windows, planning, clock
    alignment, writing and the rest (analysis.derive.owntime), and its peak memory; None with no run
    that records any of it."""
    rows = []
    for run in runs:
        if run.own is None:
            continue
        own = owntime.own_time(run.own)
        row = {"run": run.name, "outside_s": own.outside_s, "rss_rank0_bytes": own.rss_rank0_bytes,
               "rss_max_bytes": own.rss_max_bytes,
               "rss_max_rank": int(own.rss_max_rank) if _finite(own.rss_max_rank) else None}
        row.update({"wall_s": own.wall_s, **{k: own.part(k) for k in owntime.PARTS}})
        rows.append(row)
    if not rows or all(not _finite(r["wall_s"]) and not _finite(r["rss_max_bytes"]) for r in rows):
        return None
    cols = [Column("run", "run"), Column("wall_s", "wall time", "time")]
    cols += [Column(k, owntime.PART_TITLES[k], "time") for k in owntime.PARTS[:2]]
    cols += [Column("outside_s", "outside them", "time")]
    cols += [Column(k, owntime.PART_TITLES[k], "time") for k in owntime.PARTS[2:]]
    cols += [Column("rss_rank0_bytes", "rank 0 peak memory", "bytes"),
             Column("rss_max_bytes", "largest rank's peak", "bytes"), Column("rss_max_rank", "on rank", "int")]
    return Table("own_cost", "What the run itself cost: its wall time and peak memory", cols, rows,
                 note="On rank 0's clock, from its start (before MPI starts) to the file's close; the "
                      "parts add up to the wall time. Windows: every repetition the file times (fft and "
                      "its paired baseline, dfft, load steps, io, transfer, the idle power window). "
                      "Outside them: start-up (MPI, every host's facts, the ceilings' copy test, creating "
                      "the file), FFTW planning, clock alignment and writing the file, as rank 0 timed "
                      "them, and the rest (warm-ups, verification, gathering to rank 0, printing, waits). "
                      "With more ranks than cores every part includes the wait for a core. Files before "
                      "2026-12-07 have only the windows and the memory.")


def hosts(runs: list[Run]) -> Table:
    rows = []
    for run in runs:
        for h in run.hosts:
            flag = h.get("throttled")
            throttled = {1: "yes", 0: "no"}.get(int(flag), "unknown") if _finite(flag) else "unknown"
            rows.append({"run": run.name, "rank": h.get("rank"), "node": h.get("node"),
                         "hostname": h.get("hostname"), "cpu_model": h.get("cpu_model"), "arch": h.get("arch", "?"),
                         "cores": h.get("cores"), "mem_bytes": h.get("mem_bytes"),
                         "cpu_mhz": h.get("cpu_mhz"), "temp_c_start": h.get("temp_c_start"),
                         "temp_c_end": h.get("temp_c_end"), "throttled": throttled})
    cols = [Column("run", "run"), Column("rank", "rank", "int"), Column("node", "node", "int"),
            Column("hostname", "host"), Column("cpu_model", "CPU"), Column("arch", "arch"), Column("cores", "cores", "int"),
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
               "input_bytes": pt.input_bytes, "nranks": pt.nranks, "p": pt.p,
               "reps": s.summaries["total"].n, "ci_level": s.summaries["total"].ci_level,
               "kBps": s.kBps, "gflops": s.gflops, "gflops_per_rank": s.gflops_per_rank,
               "status": s.status, "overhead_why": derive.overhead_why(s)}
        for name in derive.SERIES:
            row[name] = s.summaries[name]
        rows.append(row)
    cols = [Column("run", "run"), Column("point", "point"), Column("scenario", "scenario"),
            Column("config", "transform"), Column("nfiles", "files", "int"),
            Column("seconds_per_file", "s/file", "float"), Column("input_bytes", "input", "bytes"),
            Column("nranks", "ranks", "int"), Column("p", "p", "int"), Column("reps", "reps", "int"),
            Column("ci_level", "CI coverage", "pct")]
    cols += [Column(name, derive.SERIES_TITLES[name], "summary") for name in derive.SERIES]
    cols += [Column("kBps", "kB/s", "rate"), Column("gflops", "GFLOPS", "float"),
             Column("gflops_per_rank", "GFLOPS/rank", "float"), Column("status", "status"),
             Column("overhead_why", "overhead < 0")]
    for row in rows:
        row["workload"] = workload(row["nfiles"], row["seconds_per_file"], row["input_bytes"])
    cols.insert(3, Column("workload", "request"))
    return Table("fft_points", "FFT points: median, with the 95 % CI (same unit) and CV below it",
                 cols, rows,
                 note="p = ranks that compute. Distribute, compute and gather are those of the "
                      "slowest rank of each repetition, the one with the largest sum of the three "
                      "(as on stdout), and overhead is what they leave of total, negative only when "
                      "they overlap (the last column says so); FFT is the longest rank's. "
                      "CI coverage is what the order-statistic interval achieves (below 95 % "
                      "only for fewer than 6 repetitions, where it falls back to [min, max]). "
                      "The page leaves out read and FFT; the CSV has every column.",
                 html_columns=["run", "point", "workload", "p", "reps", "total",
                               "distribute", "compute", "gather", "overhead", "kBps", "gflops",
                               "status", "overhead_why"])


def phase_stack(point_stats: list[PointStats], overlaps: dict[tuple[str, str], float]) -> Table:
    """The rows stdout prints, which add up: medians of the slowest rank's phases and of the
    remainder, beside the median t_total; one rule, the program's (docs/reading.md)."""
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
                     "overlap": overlaps.get((s.run.name, s.point.id)), "overhead_why": derive.overhead_why(s)})
    cols = [Column("run", "run"), Column("point", "point"), Column("workload", "request"),
            Column("distribute", "distribute", "time"), Column("compute", "compute", "time"),
            Column("gather", "gather", "time"), Column("overhead", "overhead (rest)", "time"),
            Column("stacked", "sum of the four", "time"), Column("total", "t_total median", "time"),
            Column("overlap", "overlap", "ratio"), Column("overhead_why", "overhead < 0")]
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


def dfft_points(items: list[derive.DfftStats]) -> Table:
    rows = [{"run": d.run.name, "point": d.id, "shape": d.shape, "n": d.n, "kind": d.kind,
             "precision": d.precision, "transpose_min_Bps": d.transpose_Bps_min,
             "nodes": d.nodes, "nranks": d.nranks, "total": d.total, "local_fft": d.local_fft,
             "transpose": d.transpose, "gflops": d.gflops,
             "verified": {1: "passed", 0: "INVALID", -1: "not checked"}.get(d.verified, "?")}
            for d in items]
    cols = [Column("run", "run"), Column("point", "point"), Column("shape", "shape"),
            Column("n", "N (points)", "float"), Column("kind", "kind"), Column("precision", "precision"),
            Column("nodes", "nodes", "int"), Column("nranks", "ranks", "int"),
            Column("total", "t_total (slowest rank)", "summary"),
            Column("local_fft", "local FFT (slowest)", "time"),
            Column("transpose", "transpose (slowest)", "time"),
            Column("gflops", "GFLOPS", "float"),
            Column("transpose_min_Bps", "transpose rate (slowest rank)", "Bps"),
            Column("verified", "verification")]
    note = ("GFLOPS by HPCC's count: 5·N·log2 N flops for c2c, half that for r2c, over "
            "the median t_total. Local FFT and transpose: median over repetitions of "
            "the slowest rank; a 1-D transform does not split them.")
    # Only where the file also holds a bibw test (wulfbench suite, or transfer into the same file).
    if any(np.isfinite(d.over_bibw) for d in items):
        for row, d in zip(rows, items):
            row["bibw"], row["over_bibw"] = d.bibw_Bps, d.over_bibw
        cols[-1:-1] = [Column("bibw", "bibw of ranks 0-1", "Bps"),
                       Column("over_bibw", "transpose / bibw", "ratio")]
        note += (" Transpose / bibw: the slowest rank's transpose rate both ways (2 × its bytes "
                 "sent over its transpose time) over the bibw of ranks 0 and 1 in the same file at "
                 "the transpose's message to each peer; near 1 the exchange runs at what the "
                 "network gives a pair, well below 1 it leaves bandwidth unused.")
        rules = sorted({d.bibw_rule for d in items if d.bibw_rule})
        note += " That bibw sent " + "; or ".join(rules) + "."
        deep = sorted({d.bibw_window for d in items if d.bibw_window > 1})
        if deep:
            note += (f" This bibw kept {'/'.join(map(str, deep))} messages in flight each way; a "
                     "transpose keeps one per peer, and at megabytes a deep window reads slower "
                     "(its buffers leave the caches): `wulfbench transfer --tests bibw --window 1` "
                     "is the transpose's match.")
    return Table("dfft", "Distributed FFT (dfft)", cols, rows, note=note)


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


def study(rows_in: list[tuple[str, str, str]]) -> Table:
    rows = [{"row": r, "measurement": m, "answer": a} for r, m, a in rows_in]
    cols = [Column("row", "study row"), Column("measurement", "measurement"),
            Column("answer", "answer")]
    return Table("study_summary", "The study's rows 1–11", cols, rows,
                 note="One line per row of the study; the sections below hold the details.")
