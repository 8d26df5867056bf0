"""Result files as tidy pandas DataFrames: one observation per row, strings
decoded. A column read from an HDF5 dataset, attribute or compound field has
exactly its name in the file (docs/schema.md): `t_total`, `energy_j`,
`sample_rate`, `frame`. A column reduced from a per-rank dataset adds the
reduction, never a unit: `t_distribute_slowest` (the slowest rank's, as the
file's `slowest_rank` names it), `t_fft_max`, `energy_j_sum`. Units are not in
the names: every frame carries them in `df.attrs["units"]` (column -> unit),
taken from the file's own `units` attributes where it has them, else from
docs/schema.md.

    from analysis import frames
    df = frames.points("results/pi.h5")
    df.groupby("nfiles").t_total.median()
    df.attrs["units"]["t_total"]   # "s"

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
from ..read.reader import dataset_units, open_run
from ..read.runs import LOAD_STATUS, Run

# point attributes, each a column of its own name
POINT_ATTRS = ("scenario", "mode", "precision", "window", "plan", "schedule", "frame", "hop", "sample_rate",
               "nfiles", "seconds_per_file", "root_computes", "batch", "chunk_frames")
# derive.series_samples name -> column: the file's name, with the reduction over ranks where there is one
SERIES_COLUMNS = (
    ("total", "t_total"), ("read", "t_read"), ("distribute", "t_distribute_slowest"),
    ("compute", "t_compute_slowest"), ("fft", "t_fft_max"), ("gather", "t_gather_slowest"),
    ("overhead", "t_over"),
)
RANK_TIMES = ("t_distribute", "t_compute", "t_fft", "t_gather")
# Units of the columns whose file attribute carries none (docs/schema.md), and of columns the frames
# derive; a dataset's own `units` attribute wins where the file has one.
UNITS = {
    "sample_rate": "Hz", "seconds_per_file": "s", "frame": "samples", "hop": "samples", "batch": "frames",
    "chunk_frames": "frames", "input_bytes": "bytes", "offered_rps": "1/s", "latency_bytes": "bytes",
    "bandwidth_bytes": "bytes", "file_bytes": "bytes", "xfer_bytes": "bytes", "bytes": "bytes",
    "t_start_utc": "s since 1970-01-01 UTC", "t_end_utc": "s since 1970-01-01 UTC", "latency": "s",
    # /hosts fields
    "mem_bytes": "bytes", "cpu_mhz": "MHz", "temp_c_start": "degC", "temp_c_end": "degC", "freq_min_mhz": "MHz",
    "freq_max_mhz": "MHz", "link_mbps": "Mbit/s", "mtu": "bytes", "copy_Bps": "B/s", "cpu_quota": "CPUs",
    # energy.csv's columns (docs/energy.md)
    "j_per_request": "J", "j_per_request_above_idle": "J", "kB_per_j": "kB/J", "gflops_per_w": "GFLOPS/W",
    "coverage": "1", "period_s": "s", "period_err_s": "s", "t_request_s": "s", "idle_w": "W",
    "usd_per_1000_requests": "$",
}
# The reductions a column name may end with (besides the file's name before it).
REDUCTIONS = ("slowest", "max", "sum", "any", "p50", "p95", "p99")


def _run(source: str | Path | Run) -> Run:
    return source if isinstance(source, Run) else open_run(Path(source))


def _head(run: Run) -> dict[str, Any]:
    return {"file": str(run.path), "label": run.label}


def _unit_of(column: str, units: dict[str, str]) -> str | None:
    if column in units:
        return units[column]
    if column in UNITS:
        return UNITS[column]
    base, _, red = column.rpartition("_")
    if red in REDUCTIONS and base:
        if red == "any":
            return "1"
        return _unit_of(base, units)
    # A file written before its datasets carried units: every t_ time is in seconds.
    return "s" if column.startswith("t_") else None


def _frame(rows: list[dict[str, Any]] | pd.DataFrame, columns: list[str], run: Run | None = None,
           under: str = "/") -> pd.DataFrame:
    """A DataFrame with these columns first (present even with no rows), its units in attrs."""
    df = rows if isinstance(rows, pd.DataFrame) else pd.DataFrame(rows)
    for name in columns:
        if name not in df.columns:
            df[name] = pd.Series(dtype=float)
    rest = [c for c in df.columns if c not in columns]
    df = df[columns + rest].copy()
    units = dataset_units(run.path, under) if run is not None and Path(run.path).is_file() else {}
    # Decoded strings (status, names) have no unit, whatever the codes they came from had.
    df.attrs["units"] = {c: u for c in df.columns
                         if df[c].dtype != object and (u := _unit_of(str(c), units)) is not None}
    return df


ENERGY_COLUMNS = ["energy_j_sum", "energy_source", "power_short_any", "t_start_utc", "t_end_utc"]
POINT_COLUMNS = (["file", "label", "point"] + list(POINT_ATTRS)
                 + ["input_bytes", "nranks", "compute_ranks", "passed", "rep"]
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
    return {"energy_j_sum": total, "energy_source": "+".join(dict.fromkeys(names)) or "unmeasured",
            "power_short_any": (np.nan_to_num(short[:, leaders]) > 0).any(axis=1)
            if short is not None and max(leaders) < short.shape[1] else np.zeros(reps, bool),
            "t_start_utc": t0, "t_end_utc": t1}


def points(source: str | Path | Run) -> pd.DataFrame:
    """One row per FFT point and recorded repetition: the point's attributes,
    `compute_ranks` (how many ranks compute), the verify group's `passed` (-1 not
    checked), that repetition's `t_total`, `t_read`, the slowest rank's phases
    (`t_distribute_slowest`, `t_compute_slowest`, `t_gather_slowest`), the longest
    compute rank's `t_fft_max`, `t_over` (what the slowest rank's phases leave of
    t_total), and its energy from the nodes' own sources (`energy_j_sum`, summed
    over the nodes; `power_short_any`: a node marked it too short; see energy())."""
    run = _run(source)
    fe = _energy.read_file(run.path)
    rows = []
    for pt in run.points:
        base = _head(run) | {"point": pt.id}
        for attr in POINT_ATTRS:
            value = pt.attrs.get(attr)
            base[attr] = value if value is not None else np.nan
        base.update(input_bytes=pt.input_bytes, nranks=pt.nranks, compute_ranks=pt.p, passed=pt.verified)
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
    return _frame(rows, POINT_COLUMNS, run, "/fft")


RANK_COLUMNS = ["file", "label", "point", "rep", "rank", "hostname", "node", "computes",
                *RANK_TIMES, "frames", "flops", "bytes_in", "bytes_out"]


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
                "bytes_in": _at(pt.bytes_in, rank),
                "bytes_out": _at(pt.bytes_out, rank),
            }
            for rep in range(pt.times["t_total"].shape[0]):
                row = _head(run) | {"point": pt.id, "rep": rep} | per_rank
                for name in RANK_TIMES:
                    row[name] = float(pt.times[name][rep, rank])
                rows.append(row)
    return _frame(rows, RANK_COLUMNS, run, "/fft")


def _at(arr: np.ndarray | None, i: int) -> float:
    return float(arr[i]) if arr is not None and i < arr.size else np.nan


TRANSFER_COLUMNS = ["file", "label", "test", "kind", "bytes", "column", "column_is",
                    "sender", "receiver", "t_med", "bandwidth_Bps"]


def transfer(source: str | Path | Run) -> pd.DataFrame:
    """One row per transfer test, message size and column of its t_med: a pair
    (point to point: `sender`, `receiver`), a random order (ring) or a rank
    (collectives stored per rank), with the median time per operation and the
    bandwidth; the extra statistics the file has (t_avg, t_min, t_max, t_p95,
    cv, unstable) follow under their names. `/transfer/pairs_all` cells are
    test `pairs_all`, its latency_s (t_med at latency_bytes) in `t_med`."""
    run = _run(source)
    rows = []
    for name, test in sorted(run.transfer.items()):
        ncol = test.t_med.shape[1]
        bandwidth = derive._bandwidth(test, run.nranks)
        kind = test.kind
        column_is = {"p2p": "pair", "ring": "order"}.get(kind, "rank" if ncol > 1 else "all")
        extra = dict(test.extra)
        for s, size in enumerate(test.bytes):
            for c in range(ncol):
                row = _head(run) | {"test": name, "kind": kind, "bytes": int(size),
                                    "column": c, "column_is": column_is,
                                    "sender": np.nan, "receiver": np.nan,
                                    "t_med": float(test.t_med[s, c]),
                                    "bandwidth_Bps": float(bandwidth[s, c])}
                if kind == "p2p" and test.pairs is not None and c < len(test.pairs):
                    row["sender"], row["receiver"] = (int(v) for v in test.pairs[c])
                for key, arr in extra.items():
                    row[key] = float(arr[s, c])
                rows.append(row)
    if run.pairs_all is not None:
        rows += _pairs_rows(run)
    return _frame(rows, TRANSFER_COLUMNS, run, "/transfer")


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
                "t_med": float(lat[s, r]) if lat is not None else np.nan,
                "bandwidth_Bps": float(bw[s, r]) if bw is not None else np.nan,
                "latency_bytes": pa.latency_bytes, "bandwidth_bytes": pa.bandwidth_bytes})
    return rows


LOAD_COLUMNS = ["file", "label", "step", "loop", "clients", "offered_rps", "request",
                "status", "warmup", "t_submit", "t_start", "t_done", "latency"]


def load(source: str | Path | Run) -> pd.DataFrame:
    """One row per request of every load step: its step's settings, its status
    (done, rejected, unfinished), whether it fell in the warm-up, and its times
    (s from the step's start; NaN where a request did not get); `latency` =
    t_done - t_submit unless the file stores it. Every other per-request dataset
    of the file follows under its name."""
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
                cols[key] = arr.astype(float)
            else:
                cols[key] = arr
        if "latency" not in cols and {"t_done", "t_submit"} <= set(cols):
            cols["latency"] = cols["t_done"] - cols["t_submit"]
        df = pd.DataFrame(cols)
        a = step.attrs
        for key, value in (("step", step.id), ("loop", a.get("loop")),
                           ("clients", a.get("clients")), ("offered_rps", a.get("offered_rps"))):
            df[key] = value
        df["file"], df["label"] = str(run.path), run.label
        parts.append(df)
    df = pd.concat(parts, ignore_index=True) if parts else pd.DataFrame()
    return _frame(df, LOAD_COLUMNS, run, "/load")


HOST_COLUMNS = ["file", "label", "rank", "node", "hostname"]


def hosts(source: str | Path | Run) -> pd.DataFrame:
    """One row per rank of `/hosts`, strings decoded (hostname, cpu_model, ...)."""
    run = _run(source)
    return _frame([_head(run) | dict(h) for h in run.hosts], HOST_COLUMNS, run, "/hosts")


STORAGE_COLUMNS = ["file", "label", "point", "test", "dir", "rep", "rank", "node", "hostname",
                   "fs_type", "kind", "status", "mbps", "iops", "lat_s_p50", "lat_s_p95",
                   "lat_s_p99", "bytes", "ops", "t_start", "t_end"]
IO_ATTRS = ("api", "access", "sync", "direct", "cold", "cold_method", "file_bytes", "xfer_bytes")


def storage(source: str | Path | Run) -> pd.DataFrame:
    """One row per `/io` test (wulfbench io), repetition and rank: the rank's stored rates
    (`mbps`, `iops`, the p50/p95/p99 of `lat_s` as `lat_s_p50`, ...), bytes, operations and times,
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
                                    "status": p.status, "mbps": float(d["mbps"][rep, rank]),
                                    "iops": _cell(d, "iops", rep, rank)}
                for k, q in enumerate(("p50", "p95", "p99")):
                    row[f"lat_s_{q}"] = float(d["lat_s"][rep, rank, k]) if "lat_s" in d else np.nan
                for key in ("bytes", "ops", "t_start", "t_end"):
                    row[key] = _cell(d, key, rep, rank)
                rows.append(row | settings)
    return _frame(rows, STORAGE_COLUMNS, run, "/io")


def _cell(data: dict[str, np.ndarray], key: str, rep: int, rank: int) -> float:
    return float(data[key][rep, rank]) if key in data else np.nan


def energy(source: str | Path | Run, power_logs: tuple[str, ...] = (),
           prices: tuple[str, ...] = (), kwh_price: str | None = None) -> pd.DataFrame:
    """energy.csv of one run as a DataFrame: one row per point (fft, its paired
    baseline, dfft, load step) with `source`, `j_per_request`, ... (docs/energy.md:
    the report's figures, named as in that CSV, not an HDF5 group);
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
