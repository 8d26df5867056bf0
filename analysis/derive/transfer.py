"""Transfer curves and statistics, link maps, and the distributed FFT points."""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from . import stats
from ..read.runs import Run, TransferTest
from .load_steps import _attr_float


@dataclass
class TransferCurve:
    """One line of a transfer figure: a value against message size with a band."""

    run: Run
    test: str
    label: str
    bytes: np.ndarray
    value: np.ndarray  # median
    lo: np.ndarray
    hi: np.ndarray
    bandwidth: np.ndarray  # B/s (median)
    bw_lo: np.ndarray
    bw_hi: np.ndarray


def traffic_factor(name: str, nranks: int = 1) -> float:
    """How many times its message size test `name` moves in the time it records: 2 for bibw (both
    ways at once), the ranks for ring, 1 for the others."""
    return 2.0 if name == "bibw" else float(nranks) if name == "ring" else 1.0


def _bandwidth(test: TransferTest, nranks: int) -> np.ndarray:
    if test.bandwidth is not None and test.bandwidth.shape == test.t_med.shape:
        return test.bandwidth
    with np.errstate(all="ignore"):
        return traffic_factor(test.name, nranks) * test.bytes[:, None] / test.t_med


def _spread(arr2d: np.ndarray) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    return (stats.nanmedian(arr2d, axis=1), stats.nanmin(arr2d, axis=1),
            stats.nanmax(arr2d, axis=1))


def p2p_curve(run: Run, test: TransferTest) -> TransferCurve:
    """Line: median over pairs of each pair's median over repetitions. Band:
    the 25th to 75th percentile of the repetitions over all pairs (min to max
    over pairs when the raw samples are missing), so one slow repetition
    widens the band instead of bending the line."""
    med, lo, hi = _spread(test.t_med)
    if test.t is not None and test.t.ndim == 3 and test.t.shape[0] == test.t_med.shape[0]:
        flat = np.moveaxis(test.t, 1, 2).reshape(test.t.shape[0], -1)
        with np.errstate(all="ignore"):
            lo = stats.nanpercentile(flat, 25, axis=1)
            hi = stats.nanpercentile(flat, 75, axis=1)
    bw = _bandwidth(test, run.nranks)
    bmed = stats.nanmedian(bw, axis=1)
    with np.errstate(all="ignore"):
        scale = np.where(med > 0, bmed * med, np.nan)  # bytes moved per message
        blo, bhi = scale / hi, scale / lo
    npairs = test.t_med.shape[1]
    label = test.name + (f" ({npairs} pairs)" if npairs > 1 else "")
    return TransferCurve(run, test.name, label, test.bytes, med, lo, hi, bmed, blo, bhi)


@dataclass
class TransferStats:
    """One table row per size: the statistics a test's columns name."""

    run: Run
    test: str
    kind: str
    bytes: np.ndarray
    columns: dict[str, np.ndarray]  # t_avg, t_min, t_max, t_p95, t_med, cv
    unstable: np.ndarray  # bool


def transfer_stats(run: Run, test: TransferTest, given: dict[str, np.ndarray]) -> TransferStats:
    """p2p and ring: avg, min, max, p95 over repetitions (median over pairs);
    collectives: avg, max, min and median over ranks of the per-rank means.
    Taken from the file's datasets where present, else from the raw samples."""
    S = test.bytes.shape[0]
    cols: dict[str, np.ndarray] = {}
    raw = test.t if test.t is not None and test.t.ndim == 3 and test.t.shape[0] == S else None
    collective = test.kind == "collective"
    for key in ("t_avg", "t_min", "t_max", "t_p95", "cv"):
        if key in given and given[key].size >= S:
            arr = np.asarray(given[key], dtype=float).reshape(S, -1)
        elif raw is not None:
            per = stats.nanmean(raw, axis=1)  # [S, pairs or ranks]
            if collective:
                arr = {"t_avg": stats.nanmean(per, axis=1), "t_min": stats.nanmin(per, axis=1),
                       "t_max": stats.nanmax(per, axis=1)}.get(key)
                if key == "cv":
                    slow = np.nanargmax(np.nan_to_num(per, nan=-1.0), axis=1)
                    arr = np.array([stats.cv(raw[i, :, slow[i]]) for i in range(S)])
                if arr is None:
                    continue
            else:
                arr = {"t_avg": per, "t_min": stats.nanmin(raw, axis=1),
                       "t_max": stats.nanmax(raw, axis=1),
                       "t_p95": stats.nanpercentile(raw, 95, axis=1)}.get(key)
                if key == "cv":
                    arr = np.array([[stats.cv(raw[i, :, j]) for j in range(raw.shape[2])]
                                    for i in range(S)])
            arr = np.asarray(arr, dtype=float).reshape(S, -1)
        else:
            continue
        cols[key] = stats.nanmax(arr, axis=1) if key == "cv" else stats.nanmedian(arr, axis=1)
    cols["t_med"] = stats.nanmedian(test.t_med.reshape(S, -1), axis=1)
    if raw is not None:  # repetitions not run are NaN
        cols["reps"] = np.sum(np.isfinite(raw[:, :, 0]), axis=1).astype(float)
    if test.bandwidth is not None:
        cols["bandwidth"] = stats.nanmedian(test.bandwidth.reshape(S, -1), axis=1)
    if "unstable" in given and given["unstable"].size >= S:
        unstable = np.asarray(given["unstable"]).reshape(S, -1).max(axis=1) > 0
    else:
        cv = cols.get("cv", np.full(S, np.nan))
        unstable = np.nan_to_num(cv) > stats.UNSTABLE_CV
    return TransferStats(run, test.name, test.kind, test.bytes, cols, unstable)


@dataclass
class LinkMap:
    """A sender x receiver matrix relative to its median."""

    what: str  # "latency" or "bandwidth"
    values: np.ndarray
    ratio: np.ndarray  # speed relative to the median: bandwidth / median, median / latency
    median: float
    slow: list[tuple[int, int, float]]  # (sender, receiver, ratio) below SLOW_LINK


SLOW_LINK = 0.80


def link_map(matrix: np.ndarray | None, what: str) -> LinkMap | None:
    if matrix is None:
        return None
    values = np.asarray(matrix, dtype=float)
    med = stats.nanmedian(values[np.isfinite(values)]) if np.isfinite(values).any() else float("nan")
    with np.errstate(all="ignore"):
        ratio = values / med if what == "bandwidth" else med / values
    slow = [(int(s), int(r), float(ratio[s, r])) for s, r in zip(*np.nonzero(ratio < SLOW_LINK))]
    return LinkMap(what, values, ratio, med, slow)


@dataclass
class DfftStats:
    run: Run
    id: str
    shape: str
    n: float
    kind: str
    nodes: int
    nranks: int
    total: stats.Summary  # slowest rank per repetition
    local_fft: float  # median over repetitions of the slowest rank
    transpose: float
    gflops: float
    verified: int
    # The slowest rank's transpose rate both ways over the bibw of ranks 0-1 at the transpose's
    # message per peer, from a bibw test in the same file (NaN without one, or on one rank).
    over_bibw: float = float("nan")
    bibw_Bps: float = float("nan")
    bibw_window: int = 1  # messages that bibw kept in flight each way (a transpose keeps one per peer)
    bibw_rule: str = ""  # send_rule of that bibw
    precision: str = "?"
    transpose_Bps_min: float = float("nan")  # the slowest rank's transposed bytes over its t_transpose


def send_rule(attrs) -> str:
    """How a bw or bibw test filled what it sent, in words. The file's `send_buffers` "fresh": every
    message of a window its own send buffer, all written just before each repetition. Files from
    before that attribute resent one send buffer, written before each repetition only with --validate."""
    rule = attrs.get("send_buffers")
    rule = rule.decode() if isinstance(rule, bytes) else rule
    if rule == "fresh":
        return "fresh bytes: each message its own send buffer, written just before every repetition"
    if rule:
        return f"send buffers '{rule}'"
    if int(np.ravel(attrs.get("validated", 0))[0]):
        return ("one send buffer resent by every message, written before every repetition (--validate; "
                "a file from before the fresh rule)")
    return ("one send buffer resent by every message and never rewritten (a file from before the fresh "
            "rule: through shared memory a cache-sized message reads up to 2× faster than fresh data)")


def transpose_over_bibw(run: Run, point, nranks: int) -> tuple[float, float]:
    """(the transpose's rate both ways over the bibw of the pair 0-1, that bibw in B/s) for a dfft
    point, as tests/bench/dfft_bench.sh measures it: 2 x transpose_Bps_min against bibw at the
    message of one transpose to each peer (bytes_transposed / 2 / (ranks - 1)), the bibw size
    nearest it within a factor of 2. NaN where the file has no such bibw."""
    test = run.transfer.get("bibw")
    rate = _attr_float(point.attrs, "transpose_Bps_min")
    sent = getattr(point, "bytes_transposed", None)
    if test is None or nranks < 2 or not np.isfinite(rate) or sent is None or np.size(sent) == 0:
        return float("nan"), float("nan")
    msg = max(1.0, float(np.nanmax(sent)) / 2 / (nranks - 1))
    sizes = np.asarray(test.bytes, dtype=float)
    if sizes.size == 0 or not np.all(sizes > 0):
        return float("nan"), float("nan")
    k = int(np.argmin(np.abs(np.log2(sizes / msg))))
    if abs(np.log2(sizes[k] / msg)) > 1:
        return float("nan"), float("nan")
    bw = np.asarray(_bandwidth(test, run.nranks), dtype=float).reshape(sizes.size, -1)
    col = 0
    if test.pairs is not None:
        hit = [i for i, (a, b) in enumerate(np.asarray(test.pairs).reshape(-1, 2)) if {int(a), int(b)} == {0, 1}]
        col = hit[0] if hit else 0
    bibw = float(bw[k, col]) if col < bw.shape[1] else float("nan")
    if not bibw > 0:
        return float("nan"), float("nan")
    return 2 * rate / bibw, bibw


def dfft_stats(run: Run, point, nodes: int) -> DfftStats:
    t = point.times
    total = stats.summarize(stats.nanmax(t["t_total"], axis=1))
    local = stats.nanmedian(stats.nanmax(t["t_local_fft"], axis=1)) if "t_local_fft" in t \
        else float("nan")
    trans = stats.nanmedian(stats.nanmax(t["t_transpose"], axis=1)) if "t_transpose" in t \
        else float("nan")
    a = point.attrs
    n = _attr_float(a, "n")
    kind = str(a.get("kind") or "c2c")
    gflops = _attr_float(a, "gflops")
    if not np.isfinite(gflops) and n > 1 and total.median > 0:
        # HPCC's count: 5 N log2 N for c2c, half that for r2c
        gflops = (5 if kind == "c2c" else 2.5) * n * np.log2(n) / total.median / 1e9
    passed = point.verify.get("passed")
    nranks = int(t["t_total"].shape[1])
    over, bibw_Bps = transpose_over_bibw(run, point, nranks)
    bibw = run.transfer["bibw"] if np.isfinite(over) else None
    window = int(bibw.attrs.get("window", 1)) if bibw is not None else 1
    rule = send_rule(bibw.attrs) if bibw is not None else ""
    return DfftStats(run=run, id=point.id, shape=str(a.get("shape") or f"{n:.0f}"), n=n,
                     kind=kind, nodes=nodes, nranks=nranks, total=total,
                     local_fft=local, transpose=trans, gflops=gflops,
                     verified=-1 if passed is None else int(passed), over_bibw=over, bibw_Bps=bibw_Bps,
                     bibw_window=window, bibw_rule=rule,
                     precision=str(a.get("precision") or "?"), transpose_Bps_min=_attr_float(a, "transpose_Bps_min"))


def collective_curve(run: Run, test: TransferTest) -> TransferCurve:
    """Per rank the median over repetitions; line: median over ranks; band: min-max over ranks."""
    if test.t is not None and test.t.ndim == 3:
        per_rank = stats.nanmedian(test.t, axis=1)  # [S, nranks]
    else:
        per_rank = test.t_med
    med, lo, hi = _spread(per_rank)
    with np.errstate(all="ignore"):
        bw = test.bytes / med
    return TransferCurve(run, test.name, test.name, test.bytes, med, lo, hi, bw, bw, bw)


def ring_curves(run: Run, test: TransferTest) -> list[TransferCurve]:
    bw = _bandwidth(test, run.nranks)
    out = []
    for o in range(test.t_med.shape[1]):
        label = "natural order" if o == 0 else f"order {o}"
        t = test.t_med[:, o]
        out.append(TransferCurve(run, "ring", label, test.bytes, t, t, t, bw[:, o], bw[:, o],
                                 bw[:, o]))
    return out
