"""Read the result-file names added in this round (paired baseline, overlap,
timeline, health, auto repetitions, transfer statistics, pairs_shift, dfft;
docs/schema.md). Every one of them is optional: a file without them gives
empty records, never an error. A damaged object is recorded in
`RunNext.problems` and skipped.

Kept beside reader.py so that its reading of the older names stays as it
is; both open the file read-only, in a forked child (reader.in_child).
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

import h5py
import numpy as np

from .h5groups import read_attrs, read_compound
from .reader import in_child, open_h5
from .runs import Run

BASELINE_SERIES = ("t_read", "t_total", "t_compute", "t_fft", "t_distribute", "t_gather")
TRANSFER_STATS = ("t_avg", "t_min", "t_max", "t_p95", "cv", "unstable")
PHASES = {0: "recv", 1: "compute", 2: "send"}


@dataclass
class PointNext:
    """What `/fft/<id>/` holds beyond the older schema."""

    baseline: dict[str, np.ndarray] | None = None  # /fft/<id>/baseline datasets
    baseline_attrs: dict[str, Any] = field(default_factory=dict)
    overlap: np.ndarray | None = None  # [reps]
    timeline: np.ndarray | None = None  # structured: rank, chunk, phase, t_start, t_end
    health: list[dict[str, Any]] = field(default_factory=list)


@dataclass
class TransferNext:
    """Per-test statistics datasets (same shape as t_med)."""

    stats: dict[str, np.ndarray] = field(default_factory=dict)


@dataclass
class PairsShift:
    latency_s: np.ndarray | None
    bandwidth_Bps: np.ndarray | None
    node_ratio: np.ndarray | None
    attrs: dict[str, Any]


@dataclass
class DfftPoint:
    id: str
    attrs: dict[str, Any]
    times: dict[str, np.ndarray]  # t_total, t_local_fft, t_transpose: [reps, nranks]
    bytes_transposed: np.ndarray | None
    local_n: np.ndarray | None
    verify: dict[str, Any]


@dataclass
class RunNext:
    points: dict[str, PointNext] = field(default_factory=dict)
    transfer: dict[str, TransferNext] = field(default_factory=dict)
    transfer_attrs: dict[str, Any] = field(default_factory=dict)
    pairs_shift: PairsShift | None = None
    dfft: list[DfftPoint] = field(default_factory=list)
    problems: list[str] = field(default_factory=list)


def _arr(group: h5py.Group, name: str) -> np.ndarray | None:
    if name not in group or not isinstance(group[name], h5py.Dataset):
        return None
    return np.asarray(group[name][()], dtype=float)


def _guard(out: RunNext, where: str, func, *args):
    try:
        return func(*args)
    except (OSError, KeyError, ValueError, TypeError, IndexError, RuntimeError) as exc:
        out.problems.append(f"{where}: unreadable ({' '.join(str(exc).split())[:120]}); skipped")
        return None


def _point(group: h5py.Group) -> PointNext:
    pn = PointNext()
    if "baseline" in group and isinstance(group["baseline"], h5py.Group):
        b = group["baseline"]
        pn.baseline_attrs = read_attrs(b)
        pn.baseline = {name: arr for name in BASELINE_SERIES
                       if (arr := _arr(b, name)) is not None}
        if "t_total" not in pn.baseline:
            pn.baseline = None
    overlap = _arr(group, "overlap")
    pn.overlap = None if overlap is None else np.atleast_1d(overlap).reshape(-1)
    if "timeline" in group:
        tl = group["timeline"][()]
        if tl.dtype.names and {"rank", "phase", "t_start", "t_end"} <= set(tl.dtype.names):
            pn.timeline = np.atleast_1d(tl)
    if "health" in group and "nodes" in group["health"]:
        pn.health = read_compound(group["health"]["nodes"])
    return pn


def _dfft(group: h5py.Group, pid: str) -> DfftPoint:
    times = {}
    for name in ("t_total", "t_local_fft", "t_transpose"):
        arr = _arr(group, name)
        if arr is not None:
            times[name] = arr.reshape(arr.shape[0], -1) if arr.ndim else arr.reshape(1, 1)
    if "t_total" not in times:
        raise KeyError("t_total missing")
    return DfftPoint(id=pid, attrs=read_attrs(group), times=times,
                     bytes_transposed=_arr(group, "bytes_transposed"),
                     local_n=_arr(group, "local_n"),
                     verify=read_attrs(group["verify"]) if "verify" in group else {})


def _read(fh: h5py.File, out: RunNext) -> None:
    if "fft" in fh:
        for pid in sorted(fh["fft"].keys()):
            pn = _guard(out, f"/fft/{pid}", _point, fh["fft"][pid])
            if pn is not None:
                out.points[pid] = pn
    if "transfer" in fh:
        tr = fh["transfer"]
        out.transfer_attrs = read_attrs(tr)
        for name in sorted(tr.keys()):
            g = tr[name]
            if not isinstance(g, h5py.Group):
                continue
            if name == "pairs_shift":
                out.pairs_shift = _guard(out, "/transfer/pairs_shift", lambda g=g: PairsShift(
                    _arr(g, "latency_s"), _arr(g, "bandwidth_Bps"), _arr(g, "node_ratio"),
                    read_attrs(g)))
                continue
            found = {k: a for k in TRANSFER_STATS if (a := _arr(g, k)) is not None}
            if found:
                out.transfer[name] = TransferNext(found)
    if "dfft" in fh:
        for pid in sorted(fh["dfft"].keys()):
            d = _guard(out, f"/dfft/{pid}", _dfft, fh["dfft"][pid], pid)
            if d is not None:
                out.dfft.append(d)


def read(run: Run) -> RunNext:
    """The newer names of one run's file (empty when the file has none), read in a forked child."""
    try:
        return in_child(_read_file, run.path)
    except OSError as exc:
        return RunNext(problems=[f"newer result names unreadable ({' '.join(str(exc).split())[:120]})"])


def _read_file(path) -> RunNext:
    out = RunNext()
    try:
        with open_h5(path) as fh:
            _read(fh, out)
    except OSError as exc:
        out.problems.append(f"newer result names unreadable ({' '.join(str(exc).split())[:120]})")
    return out
