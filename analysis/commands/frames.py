"""Result files as tidy pandas DataFrames: one observation per row, strings
decoded, the unit at the end of every column name that has one (`_s` seconds,
`_bytes`, `_kB` = 1000 bytes, `_Bps` bytes/s, `_Hz`).

    from analysis import frames
    df = frames.points("results/pi.h5")
    df.groupby("nfiles").t_total_s.median()

Every function takes a result file (path) or a `runs.Run` and returns a
DataFrame whose first columns are `file` and `label`, so frames of several
files concatenate with `pandas.concat`. The file is read by `analysis.load`,
so a point, test or step with bad values is left out, as in the report; its
reason is in `frames.problems(file)`. pandas is needed here only: the report
itself does not import this module.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

import numpy as np

try:
    import pandas as pd
except ImportError as exc:  # pragma: no cover - depends on the machine
    raise ImportError("analysis.frames needs pandas: install python3-pandas "
                      "(bash jobs/install-deps.sh pandas) or pip install pandas") from exc

from .. import derive
from ..derive import energy as _energy
from ..derive.storage import rank_nodes
from ..read.reader import open_run
from ..read.runs import LOAD_STATUS, Run

# point attribute -> column, with its unit where it has one
POINT_ATTRS = (
    ("scenario", "scenario"), ("mode", "mode"), ("precision", "precision"),
    ("window", "window"), ("plan", "plan"), ("schedule", "schedule"),
    ("frame", "frame_samples"), ("hop", "hop_samples"), ("sample_rate", "sample_rate_Hz"),
    ("nfiles", "nfiles"), ("seconds_per_file", "seconds_per_file_s"),
    ("root_computes", "root_computes"), ("batch", "batch_frames"),
    ("chunk_frames", "chunk_frames"),
)
# derive.series_samples name -> column
SERIES_COLUMNS = (
    ("total", "t_total_s"), ("read", "t_read_s"), ("distribute", "t_distribute_max_s"),
    ("compute", "t_compute_max_s"), ("fft", "t_fft_max_s"), ("gather", "t_gather_max_s"),
    ("overhead", "overhead_s"),
)
RANK_TIMES = ("t_distribute", "t_compute", "t_fft", "t_gather")


def _run(source: str | Path | Run) -> Run:
    return source if isinstance(source, Run) else open_run(Path(source))


def _head(run: Run) -> dict[str, Any]:
    return {"file": str(run.path), "label": run.label}


def _frame(rows: list[dict[str, Any]], columns: list[str]) -> pd.DataFrame:
    """A DataFrame with these columns first (present even with no rows)."""
    df = pd.DataFrame(rows)
    for name in columns:
        if name not in df.columns:
            df[name] = pd.Series(dtype=float)
    rest = [c for c in df.columns if c not in columns]
    return df[columns + rest]


ENERGY_COLUMNS = ["energy_J", "energy_source", "power_short", "t_start_utc_s", "t_end_utc_s"]
POINT_COLUMNS = (["file", "label", "point"] + [c for _, c in POINT_ATTRS]
                 + ["input_bytes", "input_kB", "nranks", "compute_ranks", "verified", "rep"]
                 + [c for _, c in SERIES_COLUMNS] + ENERGY_COLUMNS)


def _rep_energy(run: Run, fe: _energy.FileEnergy, where: str, reps: int) -> dict[str, Any]:
    """Per repetition: the energy the nodes' own sources stored, summed over the nodes
    (NaN unless every node measured it), their sources, whether any node marked the
    repetition too short for power, and its UTC start and end."""
    s = fe.series.get(where) or _energy.Series()
    nodes = _energy.nodes_of(run)
    src = fe.power.source if fe.power else []
    names = [src[n.leader] if n.leader < len(src) else "unmeasured" for n in nodes]
    e = _energy.per_rank(s.energy_j, reps)
    short = _energy.per_rank(s.power_short, reps)
    leaders = [n.leader for n in nodes]
    total = np.full(reps, np.nan)
    if e is not None and max(leaders) < e.shape[1] and all(n in _energy.SOURCES for n in names):
        total = e[:, leaders].sum(axis=1)
        total[(e[:, leaders] < 0).any(axis=1)] = np.nan
    t0, t1 = _energy.rep_times(s, reps)
    return {"energy_J": total, "energy_source": "+".join(dict.fromkeys(names)) or "unmeasured",
            "power_short": (np.nan_to_num(short[:, leaders]) > 0).any(axis=1)
            if short is not None and max(leaders) < short.shape[1] else np.zeros(reps, bool),
            "t_start_utc_s": t0, "t_end_utc_s": t1}


def points(source: str | Path | Run) -> pd.DataFrame:
    """One row per FFT point and recorded repetition: the point's settings and
    that repetition's t_total, t_read and slowest-rank phase times (distribute
    and gather over all ranks, compute and FFT over the ranks that compute), and its
    energy from the nodes' own sources (`energy_J`, summed over the nodes; see energy())."""
    run = _run(source)
    fe = _energy.read_file(run.path)
    rows = []
    for pt in run.points:
        base = _head(run) | {"point": pt.id}
        for attr, column in POINT_ATTRS:
            value = pt.attrs.get(attr)
            base[column] = value if value is not None else np.nan
        base.update(input_bytes=pt.input_bytes, input_kB=pt.input_bytes / 1000.0,
                    nranks=pt.nranks, compute_ranks=pt.p, verified=pt.verified)
        samples = derive.series_samples(pt)
        reps = pt.times["t_total"].shape[0]
        power = _rep_energy(run, fe, f"/fft/{pt.id}", reps)
        for rep in range(reps):
            row = dict(base, rep=rep)
            for name, column in SERIES_COLUMNS:
                row[column] = float(samples[name][rep])
            for column, value in power.items():
                row[column] = value if isinstance(value, str) else value[rep]
            rows.append(row)
    return _frame(rows, POINT_COLUMNS)


RANK_COLUMNS = ["file", "label", "point", "rep", "rank", "hostname", "node", "computes",
                "t_distribute_s", "t_compute_s", "t_fft_s", "t_gather_s", "frames", "flops",
                "bytes_in_bytes", "bytes_out_bytes"]


def ranks(source: str | Path | Run) -> pd.DataFrame:
    """One row per FFT point, repetition and rank: that rank's own phase times
    and the work it was given."""
    run = _run(source)
    nodes = {int(h.get("rank", -1)): h.get("node") for h in run.hosts}
    rows = []
    for pt in run.points:
        computing = set(int(r) for r in pt.compute_ranks)
        for rank in range(pt.nranks):
            per_rank = {
                "rank": rank, "hostname": run.hostname(rank), "node": nodes.get(rank, np.nan),
                "computes": rank in computing,
                "frames": _at(pt.frames, rank), "flops": _at(pt.flops, rank),
                "bytes_in_bytes": _at(pt.bytes_in, rank),
                "bytes_out_bytes": _at(pt.bytes_out, rank),
            }
            for rep in range(pt.times["t_total"].shape[0]):
                row = _head(run) | {"point": pt.id, "rep": rep} | per_rank
                for name in RANK_TIMES:
                    row[f"{name}_s"] = float(pt.times[name][rep, rank])
                rows.append(row)
    return _frame(rows, RANK_COLUMNS)


def _at(arr: np.ndarray | None, i: int) -> float:
    return float(arr[i]) if arr is not None and i < arr.size else np.nan


TRANSFER_COLUMNS = ["file", "label", "test", "kind", "bytes", "column", "column_is",
                    "sender", "receiver", "t_med_s", "bandwidth_Bps"]


def transfer(source: str | Path | Run) -> pd.DataFrame:
    """One row per transfer test, message size and column of its t_med: a pair
    (point to point: `sender`, `receiver`), a random order (ring) or a rank
    (collectives stored per rank), with the median time per operation and the
    bandwidth; the extra statistics the file has (t_avg, t_min, t_max, t_p95,
    cv, unstable) follow as columns `<name>_s` (cv and unstable: no unit)."""
    run = _run(source)
    rows = []
    for name, test in sorted(run.transfer.items()):
        ncol = test.t_med.shape[1]
        bandwidth = derive._bandwidth(test, run.nranks)
        kind = test.kind
        column_is = {"p2p": "pair", "ring": "order"}.get(kind, "rank" if ncol > 1 else "all")
        extra = {(k if k in ("cv", "unstable") else f"{k}_s"): v for k, v in test.extra.items()}
        for s, size in enumerate(test.bytes):
            for c in range(ncol):
                row = _head(run) | {"test": name, "kind": kind, "bytes": int(size),
                                    "column": c, "column_is": column_is,
                                    "sender": np.nan, "receiver": np.nan,
                                    "t_med_s": float(test.t_med[s, c]),
                                    "bandwidth_Bps": float(bandwidth[s, c])}
                if kind == "p2p" and test.pairs is not None and c < len(test.pairs):
                    row["sender"], row["receiver"] = (int(v) for v in test.pairs[c])
                for key, arr in extra.items():
                    row[key] = float(arr[s, c])
                rows.append(row)
    if run.pairs_all is not None:
        rows += _pairs_rows(run)
    return _frame(rows, TRANSFER_COLUMNS)


def _pairs_rows(run: Run) -> list[dict[str, Any]]:
    pa = run.pairs_all
    rows = []
    lat, bw = pa.latency_s, pa.bandwidth_Bps
    n = (lat if lat is not None else bw).shape[0]
    for s in range(n):
        for r in range(n):
            if s == r:
                continue
            rows.append(_head(run) | {
                "test": "pairs_all", "kind": "pairs", "bytes": np.nan, "column": s * n + r,
                "column_is": "pair", "sender": s, "receiver": r,
                "t_med_s": float(lat[s, r]) if lat is not None else np.nan,
                "bandwidth_Bps": float(bw[s, r]) if bw is not None else np.nan,
                "latency_bytes": pa.latency_bytes, "bandwidth_bytes": pa.bandwidth_bytes})
    return rows


LOAD_COLUMNS = ["file", "label", "step", "loop", "clients", "offered_rps", "request",
                "status", "warmup", "t_submit_s", "t_start_s", "t_done_s", "latency_s"]


def load(source: str | Path | Run) -> pd.DataFrame:
    """One row per request of every load step: its step's settings, its status
    (done, rejected, unfinished), whether it fell in the warm-up, and its times
    (s from the step's start; NaN where a request did not get); `latency_s` =
    t_done - t_submit unless the file stores it. Every other per-request dataset
    of the file follows, times with `_s`."""
    run = _run(source)
    parts = []
    for step in run.load_steps:
        n = max((v.shape[0] for v in step.data.values()), default=0)
        cols: dict[str, Any] = {"request": np.arange(n)}
        for key, arr in step.data.items():
            if key == "status":
                cols["status"] = [LOAD_STATUS.get(int(v), str(v)) for v in arr]
            elif key == "warmup":
                cols["warmup"] = arr.astype(bool)
            elif key.startswith("t_") or key == "latency":
                cols[f"{key}_s"] = arr.astype(float)
            else:
                cols[key] = arr
        if "latency_s" not in cols and {"t_done_s", "t_submit_s"} <= set(cols):
            cols["latency_s"] = cols["t_done_s"] - cols["t_submit_s"]
        df = pd.DataFrame(cols)
        a = step.attrs
        for key, value in (("step", step.id), ("loop", a.get("loop")),
                           ("clients", a.get("clients")), ("offered_rps", a.get("offered_rps"))):
            df[key] = value
        df["file"], df["label"] = str(run.path), run.label
        parts.append(df)
    df = pd.concat(parts, ignore_index=True) if parts else pd.DataFrame()
    columns = list(df.columns)
    for name in LOAD_COLUMNS:
        if name not in columns:
            df[name] = pd.Series(dtype=float)
    return df[LOAD_COLUMNS + [c for c in columns if c not in LOAD_COLUMNS]]


HOST_COLUMNS = ["file", "label", "rank", "node", "hostname"]


def hosts(source: str | Path | Run) -> pd.DataFrame:
    """One row per rank of `/hosts`, strings decoded (hostname, cpu_model, ...)."""
    run = _run(source)
    return _frame([_head(run) | dict(h) for h in run.hosts], HOST_COLUMNS)


STORAGE_COLUMNS = ["file", "label", "point", "test", "dir", "rep", "rank", "node", "hostname",
                   "fs_type", "kind", "status", "bandwidth_Bps", "iops", "lat_p50_s", "lat_p95_s",
                   "lat_p99_s", "bytes", "ops", "t_start_s", "t_end_s"]
IO_ATTRS = ("api", "access", "sync", "direct", "cold", "cold_method", "file_bytes", "xfer_bytes")


def storage(source: str | Path | Run) -> pd.DataFrame:
    """One row per `/io` test (wulfbench io), repetition and rank: the rank's stored rates
    (`mbps` as `bandwidth_Bps`, `iops`, the p50/p95/p99 of `lat_s`), bytes, operations and times,
    with its node's file system and device kind, and the test's settings (`api`, `sync`, `cold`,
    ...). Empty for a file without `/io`."""
    run = _run(source)
    rows = []
    for p in run.io.points if run.io else []:
        settings = {k: p.attrs.get(k) for k in IO_ATTRS}
        d = p.data
        nodes = rank_nodes(run, d["mbps"].shape[1])
        for rep in range(p.reps):
            for rank in range(d["mbps"].shape[1]):
                node, host = nodes[rank]
                dev = run.io.device(node, p.dir)
                row = _head(run) | {"point": p.id, "test": p.test, "dir": p.dir, "rep": rep,
                                    "rank": rank, "node": node, "hostname": host,
                                    "fs_type": dev.get("fs_type", ""), "kind": dev.get("kind", ""),
                                    "status": p.status, "bandwidth_Bps": d["mbps"][rep, rank] * 1e6,
                                    "iops": _cell(d, "iops", rep, rank)}
                for k, q in enumerate(("p50", "p95", "p99")):
                    row[f"lat_{q}_s"] = float(d["lat_s"][rep, rank, k]) if "lat_s" in d else np.nan
                for key, col in (("bytes", "bytes"), ("ops", "ops"), ("t_start", "t_start_s"),
                                 ("t_end", "t_end_s")):
                    row[col] = _cell(d, key, rep, rank)
                rows.append(row | settings)
    return _frame(rows, STORAGE_COLUMNS)


def _cell(data: dict[str, np.ndarray], key: str, rep: int, rank: int) -> float:
    return float(data[key][rep, rank]) if key in data else np.nan


def energy(source: str | Path | Run, power_logs: tuple[str, ...] = (),
           prices: tuple[str, ...] = (), kwh_price: str | None = None) -> pd.DataFrame:
    """energy.csv of one run as a DataFrame: one row per point (fft, its paired
    baseline, dfft, load step) with `source`, `j_per_request`, ... (docs/energy.md);
    power_logs, prices and kwh_price as the report's --power-log, --price, --kwh-price."""
    run = _run(source)
    if not run.name:
        run.name = run.label or run.path.name
    from ..read import point_detail
    opts = _energy.parse_options(list(power_logs), list(prices), kwh_price)
    res = _energy.analyse([run], [], opts, {run.name: point_detail.read(run).dfft})
    return _frame([_head(run) | r for r in _energy.frame_rows(res)], ["file", "label", "run"])


def problems(source: str | Path | Run) -> list[str]:
    """What the reader left out of a file, and why (also shown by the report)."""
    return list(_run(source).problems)
