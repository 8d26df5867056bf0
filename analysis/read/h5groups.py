"""Reading one HDF5 object of a result file with its values checked: attributes,
compound tables, an FFT point, a transfer test, pairs_all, a load step. A bad value raises
`BadData`; analysis.reader turns that into a problem that costs the point, test or step."""

from __future__ import annotations

import warnings
from typing import Any

import numpy as np

import h5py

from .runs import (ENERGY_DATASETS, LOAD_STATUS, PER_RANK_TIMES, TIME_SERIES, TRANSFER_EXTRA,
                   FftPoint, LoadStep, PairsAll, TransferTest, number_or)


def text(value: Any) -> str:
    """Decode an HDF5 string (fixed or variable length, bytes or str)."""
    if isinstance(value, (bytes, np.bytes_)):
        return bytes(value).split(b"\0", 1)[0].decode("utf-8", "replace")
    if isinstance(value, np.ndarray) and value.shape == ():
        return text(value[()])
    return str(value)


def hosts_by_rank(f: h5py.File) -> dict[int, str]:
    """Rank -> host name from /hosts; {} for a file without it."""
    if "hosts" not in f:
        return {}
    return {int(h["rank"]): text(h["hostname"]) for h in f["hosts"][()]}


def plain(value: Any) -> Any:
    """An attribute or compound field as a plain Python value."""
    if isinstance(value, (bytes, np.bytes_, str)):
        return text(value)
    if isinstance(value, np.ndarray):
        if value.shape == () or value.size == 1:
            return plain(value.reshape(-1)[0]) if value.size else None
        if value.dtype.kind in "SOU":
            return [text(v) for v in value.reshape(-1)]
        return value
    if isinstance(value, np.generic):
        return value.item()
    return value


def read_attrs(obj: h5py.HLObject) -> dict[str, Any]:
    out: dict[str, Any] = {}
    for key in obj.attrs:
        try:
            out[str(key)] = plain(obj.attrs[key])
        except (OSError, TypeError, ValueError) as exc:
            out[str(key)] = None
            out.setdefault("_unreadable", []).append(f"{key} ({exc})")
    return out


def read_compound(ds: h5py.Dataset) -> list[dict[str, Any]]:
    arr = ds[()]
    if arr.dtype.names is None:
        return []
    arr = np.atleast_1d(arr)
    return [{name: plain(row[name]) for name in arr.dtype.names} for row in arr]


class BadData(ValueError):
    """A dataset whose values or shape cannot be right; the object holding it is skipped."""

    def __init__(self, dataset: str, what: str, skipped: str = "point") -> None:
        super().__init__(f"{dataset}: {what}")
        self.dataset = dataset
        self.what = what
        self.skipped = skipped


def _float_array(group: h5py.Group, name: str, skipped: str = "point") -> np.ndarray | None:
    """A numeric dataset as float64, or None when it is absent; BadData when it is
    not a numeric dataset."""
    if name not in group:
        return None
    obj = group[name]
    if not isinstance(obj, h5py.Dataset):
        raise BadData(name, "is a group, expected a dataset", skipped)
    if obj.dtype.kind not in "biuf":
        raise BadData(name, f"is not numeric (HDF5 type {obj.dtype})", skipped)
    return np.asarray(obj[()], dtype=float)


def _where(mask: np.ndarray) -> str:
    """'[i, j]', the index of the first True element of a mask."""
    first = np.argwhere(mask)[0]
    return "[" + ", ".join(str(int(i)) for i in first) + "]"


def check_values(name: str, arr: np.ndarray, *, nan_ok: bool = False,
                 skipped: str = "point") -> None:
    """BadData unless every value of a time or count is finite (or NaN where
    allowed) and not negative."""
    bad = [("NaN", np.isnan(arr) & (not nan_ok)), ("infinite", np.isinf(arr)),
           ("negative", arr < 0)]
    found = [(kind, mask) for kind, mask in bad if np.any(mask)]
    if found:
        parts = " and ".join(f"{int(np.count_nonzero(mask))} {kind}" for kind, mask in found)
        raise BadData(name, f"holds {parts} values (of {arr.size}; first at "
                      f"{_where(found[0][1])})", skipped)


def _shape_text(shape: tuple) -> str:
    return "[" + ", ".join(str(n) for n in shape) + "]"


def _per_rank_1d(name: str, arr: np.ndarray | None, nranks: int,
                 source: str) -> np.ndarray | None:
    if arr is None:
        return None
    flat = np.atleast_1d(arr)
    if flat.ndim != 1 or flat.shape[0] != nranks:
        raise BadData(name, f"has shape {_shape_text(arr.shape)}, expected [{nranks}] "
                      f"(one value per rank, as {source} has)")
    check_values(name, flat)
    return flat


def read_point(fft: h5py.Group, pid: str) -> FftPoint | None:
    group = fft[pid]
    if not isinstance(group, h5py.Group):
        return None
    attrs = read_attrs(group)
    problems: list[str] = []
    raw = {name: _float_array(group, name) for name in TIME_SERIES}
    per_rank_counts = {name: _float_array(group, name)
                       for name in ("flops", "bytes_in", "bytes_out", "frames")}
    if raw["t_total"] is None:
        raise KeyError("t_total missing")
    t_total = raw["t_total"]
    if t_total.ndim == 2 and t_total.shape[1] == 1:
        t_total = t_total[:, 0]
    if t_total.ndim != 1 or t_total.size == 0:
        raise BadData("t_total", f"has shape {_shape_text(t_total.shape)}, expected [reps]")
    reps = t_total.shape[0]
    # the rank count: from the per-rank counts, else from the per-rank times
    sizes = {n: np.atleast_1d(v).shape[0] for n, v in per_rank_counts.items() if v is not None}
    if sizes:
        source = next(iter(sizes))
        nranks = sizes[source]
    else:
        source = next((n for n in PER_RANK_TIMES if raw[n] is not None and raw[n].ndim == 2), "")
        nranks = raw[source].shape[1] if source else 1
    counts = {n: _per_rank_1d(n, v, nranks, source) for n, v in per_rank_counts.items()}
    times: dict[str, np.ndarray] = {}
    for name in TIME_SERIES:
        arr = raw[name]
        if arr is None:
            problems.append(f"{name} missing")
            shape = (reps, nranks) if name in PER_RANK_TIMES else (reps,)
            times[name] = np.full(shape, np.nan)
            continue
        if name in PER_RANK_TIMES:
            if arr.ndim == 1 and arr.size == reps * nranks:
                arr = arr.reshape(reps, nranks)
            expected = (reps, nranks)
        else:
            if arr.ndim == 2 and arr.shape[1] == 1:
                arr = arr[:, 0]
            expected = (reps,)
        if arr.shape != expected:
            why = " (reps from t_total" + (f", ranks from {source})" if source else ")")
            raise BadData(name, f"has shape {_shape_text(arr.shape)}, expected "
                          f"{_shape_text(expected)}{why}")
        check_values(name, arr)
        if name == "t_total" and (arr == 0).any():
            # barrier to last result takes time; a zero is a timer or writer fault
            raise BadData(name, f"holds {int((arr == 0).sum())} zero values (of {arr.size}; "
                          f"first at {_where(arr == 0)})")
        times[name] = arr
    for key in ("nfiles", "frame", "input_bytes", "seconds_per_file", "reps"):
        value = attrs.get(key)
        if value is not None and not isinstance(value, str):
            number = number_or(value, float("nan"))
            if not (np.isfinite(number) and number >= 0):
                raise BadData(f"@{key}", f"attribute is {value!r}, expected a number >= 0")
    for name in ("frames", "flops"):
        if counts[name] is not None and not (counts[name] > 0).any():
            raise BadData(name, "is 0 on every rank: no rank did any work")
    flops = counts["flops"]
    if flops is None:
        problems.append("flops missing: GFLOPS not available")
        flops = np.full(nranks, np.nan)
    bytes_in = counts["bytes_in"] if counts["bytes_in"] is not None else np.full(nranks, np.nan)
    inputs = read_compound(group["inputs"]) if "inputs" in group else []
    verify = read_attrs(group["verify"]) if "verify" in group else {}
    slowest, t_over = _slowest(group, reps, nranks, problems)
    sync, read_io = (_per_rep(group, name, reps) for name in ("t_sync", "t_read_io"))
    return FftPoint(id=pid, attrs=attrs, times=times, bytes_in=bytes_in,
                    bytes_out=counts["bytes_out"], frames=counts["frames"],
                    flops=flops, inputs=inputs, verify=verify, problems=problems,
                    slowest_rank=slowest, t_over=t_over, t_sync=sync, t_read_io=read_io)


def _per_rep(group: h5py.Group, name: str, reps: int) -> np.ndarray | None:
    """A [reps] series of rank 0 that older files lack (None then)."""
    arr = _float_array(group, name)
    if arr is not None:
        arr = np.atleast_1d(arr).reshape(-1)
        if arr.size != reps:
            raise BadData(name, f"has shape {_shape_text(arr.shape)}, expected [{reps}] (reps from t_total)")
        check_values(name, arr, nan_ok=True)
    return arr


def _slowest(group: h5py.Group, reps: int, nranks: int,
             problems: list[str]) -> tuple[np.ndarray | None, np.ndarray | None]:
    """The slowest rank of each repetition and t_over, as the program stored them; (None, None) in
    files older than both, or when either cannot be right (then derive.base works them out)."""
    rank, over = _float_array(group, "slowest_rank"), _float_array(group, "t_over")
    if rank is None or over is None:
        return None, None
    rank, over = np.atleast_1d(rank).reshape(-1), np.atleast_1d(over).reshape(-1)
    if rank.size != reps or over.size != reps or not np.all(np.isfinite(over)) \
            or not np.all((rank >= 0) & (rank < nranks) & (rank == np.floor(rank))):
        problems.append("slowest_rank or t_over unusable: worked out from the per-rank times")
        return None, None
    return rank.astype(int), over


def read_transfer(transfer: h5py.Group, name: str) -> TransferTest | None:
    group = transfer[name]
    if not isinstance(group, h5py.Group):
        return None
    attrs = read_attrs(group)

    def series(key: str) -> np.ndarray | None:
        arr = _float_array(group, key, "test")
        if arr is not None:
            check_values(key, arr, nan_ok=True, skipped="test")  # NaN: repetitions not run
        return arr

    sizes = series("bytes")
    if sizes is None:
        raise KeyError("bytes missing")
    sizes = np.atleast_1d(sizes)
    if sizes.ndim != 1 or sizes.size == 0 or np.isnan(sizes).any():
        raise BadData("bytes", f"has shape {_shape_text(sizes.shape)} or NaN values, expected "
                      "[sizes] message sizes", "test")
    t = series("t")
    t_med = series("t_med")
    if t_med is None:
        if t is None:
            raise KeyError("neither t nor t_med present")
        if t.ndim < 2 or t.shape[0] != sizes.size:
            raise BadData("t", f"has shape {_shape_text(t.shape)}, expected "
                          f"[{sizes.size}, reps, ...]", "test")
        with np.errstate(all="ignore"):
            with warnings.catch_warnings():  # a row of NaN is a NaN median, said elsewhere
                warnings.simplefilter("ignore", RuntimeWarning)
                t_med = np.nanmedian(t, axis=1)
    if t is not None and (t.ndim < 1 or t.shape[0] != sizes.size):
        raise BadData("t", f"has shape {_shape_text(t.shape)}, expected [{sizes.size}, ...] "
                      "(one row per message size)", "test")

    def per_size(key: str, arr: np.ndarray) -> np.ndarray:
        arr = np.asarray(arr, dtype=float)
        if arr.ndim == 0 or arr.shape[0] != sizes.size:
            raise BadData(key, f"has shape {_shape_text(arr.shape)}, expected "
                          f"[{sizes.size}, ...] (one row per message size)", "test")
        return arr.reshape(sizes.size, -1)

    t_med = per_size("t_med", t_med)
    bandwidth = series("bandwidth_Bps")
    if bandwidth is not None:
        bandwidth = per_size("bandwidth_Bps", bandwidth)
    pairs = orders = None
    if "pairs" in group:
        raw = _float_array(group, "pairs", "test")
        if raw is None or raw.size % 2 or not np.isfinite(raw).all() or (raw < 0).any():
            raise BadData("pairs", "is not a list of (sender, receiver) ranks >= 0", "test")
        pairs = raw.astype(int).reshape(-1, 2)
    if "orders" in group:
        raw = _float_array(group, "orders", "test")
        if raw is None or not np.isfinite(raw).all() or (raw < 0).any():
            raise BadData("orders", "holds values that are not ranks", "test")
        orders = raw.astype(int)
    extra = {}
    for key in TRANSFER_EXTRA:
        arr = series(key)
        if arr is not None and arr.size == t_med.size:
            extra[key] = arr.reshape(t_med.shape)
    return TransferTest(name=name, attrs=attrs, bytes=sizes, t=t, t_med=t_med,
                        bandwidth=bandwidth, pairs=pairs, orders=orders, extra=extra)


def read_pairs_all(group: h5py.Group) -> PairsAll:
    attrs = read_attrs(group)
    mats = {}
    for key in ("latency_s", "bandwidth_Bps"):
        arr = _float_array(group, key, "matrix")
        if arr is not None:
            if arr.ndim != 2 or arr.shape[0] != arr.shape[1]:
                raise BadData(key, f"has shape {_shape_text(arr.shape)}, expected [N, N]",
                              "matrix")
            check_values(key, arr, nan_ok=True, skipped="matrix")
        mats[key] = arr
    return PairsAll(latency_s=mats["latency_s"], bandwidth_Bps=mats["bandwidth_Bps"],
                    latency_bytes=number_or(attrs.get("latency_bytes"), float("nan")),
                    bandwidth_bytes=number_or(attrs.get("bandwidth_bytes"), float("nan")))


LOAD_SIGNED = ("worker", "client", "status", "node")  # -1 is a legal "none" there
# A step's datasets with one value per worker rank, not per request.
LOAD_PER_WORKER = ("clock_offset_s",)


def read_load_step(load: h5py.Group, sid: str) -> LoadStep | None:
    group = load[sid]
    if not isinstance(group, h5py.Group):
        return None
    data: dict[str, np.ndarray] = {}
    length = None
    for key in group.keys():
        obj = group[key]
        if not isinstance(obj, h5py.Dataset) or obj.dtype.names is not None:
            continue
        if obj.dtype.kind not in "biuf" or key in ENERGY_DATASETS or key in LOAD_PER_WORKER:
            continue
        arr = np.atleast_1d(np.asarray(obj[()]))
        if arr.ndim != 1:
            raise BadData(str(key), f"has shape {_shape_text(arr.shape)}, expected [requests]",
                          "step")
        if length is not None and arr.shape[0] != length[1]:
            raise BadData(str(key), f"holds {arr.shape[0]} requests, {length[0]} holds "
                          f"{length[1]}", "step")
        length = length or (str(key), arr.shape[0])
        if key.startswith("t_"):
            check_values(str(key), arr.astype(float), nan_ok=True, skipped="step")
        elif key not in LOAD_SIGNED and arr.dtype.kind in "if":
            check_values(str(key), arr.astype(float), skipped="step")
        data[str(key)] = arr
    if "status" in data and not np.isin(data["status"], list(LOAD_STATUS)).all():
        raise BadData("status", "holds codes other than 0 done, 1 rejected, 2 unfinished", "step")
    if "t_submit" in data and "t_done" in data:
        with np.errstate(invalid="ignore"):
            early = (data["t_done"] - data["t_submit"]) < 0
        if early.any():
            raise BadData("t_done", f"is before t_submit for {int(early.sum())} request(s) "
                          f"(first at {_where(early)})", "step")
    return LoadStep(id=sid, attrs=read_attrs(group), data=data)
