"""Read wulfbench result files (schema `wulfbench/1`, docs/schema.md) into plain
dataclasses, and check that a file is one.

Problems with a whole file raise `InputError`; problems inside a readable file
(a damaged point, a missing dataset) are recorded in `Run.problems` and the
rest of the file is still used.
"""

from __future__ import annotations

import faulthandler
import os
import pickle
import re
import signal
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import numpy as np

# A run that is still being written holds the HDF5 file lock; reading a
# .partial file must not fail because of it.
os.environ.setdefault("HDF5_USE_FILE_LOCKING", "FALSE")

import h5py  # noqa: E402  (after the environment is set)

from . import SCHEMA  # noqa: E402
from .stats import nanmedian  # noqa: E402

HDF5_MAGIC = b"\x89HDF\r\n\x1a\n"
RESULT_SUFFIXES = (".h5", ".hdf5", ".h5.partial", ".hdf5.partial")
TIME_SERIES = ("t_read", "t_distribute", "t_compute", "t_fft", "t_gather", "t_total")
PER_RANK_TIMES = ("t_distribute", "t_compute", "t_fft", "t_gather")
TRANSFER_EXTRA = ("t_avg", "t_min", "t_max", "t_p95", "cv", "unstable")  # shaped like t_med
LOAD_STATUS = {0: "done", 1: "rejected", 2: "unfinished"}
# per repetition or step, not per request: read by energy.py (docs/energy.md)
ENERGY_DATASETS = ("energy_j", "power_short", "t_start_utc", "t_end_utc")


class InputError(Exception):
    """A file or folder that cannot be used; rendered as one stderr line."""

    def __init__(self, subject: str, what: str, todo: str) -> None:
        super().__init__(f"{subject}: {what}; {todo}")
        self.subject = subject
        self.what = what
        self.todo = todo


@dataclass
class FftPoint:
    """One measured point, `/fft/<id>/`."""

    id: str
    attrs: dict[str, Any]
    times: dict[str, np.ndarray]  # t_read, t_total: [reps]; per-rank: [reps, nranks]
    bytes_in: np.ndarray
    bytes_out: np.ndarray | None
    frames: np.ndarray | None
    flops: np.ndarray
    inputs: list[dict[str, Any]]
    verify: dict[str, Any]
    problems: list[str] = field(default_factory=list)

    @property
    def scenario(self) -> str:
        return str(self.attrs.get("scenario", "?"))

    @property
    def mode(self) -> str:
        return str(self.attrs.get("mode", "?"))

    @property
    def precision(self) -> str:
        return str(self.attrs.get("precision", "?"))

    @property
    def frame(self) -> int:
        return int(_num(self.attrs.get("frame"), 0))

    @property
    def nfiles(self) -> int:
        return int(_num(self.attrs.get("nfiles"), 0))

    @property
    def seconds_per_file(self) -> float:
        return float(_num(self.attrs.get("seconds_per_file"), float("nan")))

    @property
    def input_bytes(self) -> float:
        value = _num(self.attrs.get("input_bytes"), float("nan"))
        if np.isnan(value):
            value = float(np.nansum(self.bytes_in))
        return float(value)

    @property
    def nranks(self) -> int:
        return int(self.times["t_compute"].shape[1])

    @property
    def compute_ranks(self) -> np.ndarray:
        """Indices of the ranks that did transform work (frames > 0)."""
        work = self.frames if self.frames is not None else self.flops
        ranks = np.flatnonzero(np.nan_to_num(np.asarray(work, dtype=float)) > 0)
        return ranks if ranks.size else np.arange(self.nranks)

    @property
    def p(self) -> int:
        """Number of ranks doing compute."""
        return int(self.compute_ranks.size)

    @property
    def verified(self) -> int:
        """1 passed, 0 failed, -1 not checked."""
        if "passed" not in self.verify:
            return -1
        return int(_num(self.verify.get("passed"), -1))

    @property
    def key(self) -> tuple:
        """How points of two runs are matched: scenario, mode, precision,
        frame, nfiles, seconds_per_file."""
        return (self.scenario, self.mode, self.precision, self.frame, self.nfiles,
                round(self.seconds_per_file, 6))

    @property
    def config(self) -> str:
        """The point's configuration apart from its sweep position."""
        text = f"{self.mode} {self.precision}"
        if self.mode == "stft" and self.frame:
            text += f" N={self.frame}"
        return text


@dataclass
class TransferTest:
    """One `/transfer/<test>/` group."""

    name: str
    attrs: dict[str, Any]
    bytes: np.ndarray  # [S]
    t: np.ndarray | None  # [S, R, P|nranks|O]
    t_med: np.ndarray  # [S, P|O] for p2p and ring, [S] or [S, nranks] for collectives
    bandwidth: np.ndarray | None  # like t_med, B/s
    pairs: np.ndarray | None  # [P, 2]
    orders: np.ndarray | None  # [O, nranks]
    extra: dict[str, np.ndarray] = field(default_factory=dict)  # t_avg, t_min, ... like t_med

    @property
    def kind(self) -> str:
        kind = str(self.attrs.get("kind", ""))
        if kind:
            return kind
        if self.name in ("pingpong", "bw", "bibw"):
            return "p2p"
        return "ring" if self.name == "ring" else "collective"


@dataclass
class PairsAll:
    """`/transfer/pairs_all/`: sender x receiver matrices."""

    latency_s: np.ndarray | None
    bandwidth_Bps: np.ndarray | None
    latency_bytes: float
    bandwidth_bytes: float


@dataclass
class LoadStep:
    """One `/load/<step>/` group: per-request arrays."""

    id: str
    attrs: dict[str, Any]
    data: dict[str, np.ndarray]


@dataclass
class Run:
    """One result file."""

    path: Path
    attrs: dict[str, Any]
    hosts: list[dict[str, Any]]
    points: list[FftPoint]
    transfer: dict[str, TransferTest]
    pairs_all: PairsAll | None
    load_steps: list[LoadStep]
    load_attrs: dict[str, Any]
    groups: set[str]
    partial: bool
    problems: list[str] = field(default_factory=list)
    name: str = ""
    skipped: list[str] = field(default_factory=list)  # the problems that left data out

    @property
    def label(self) -> str:
        return str(self.attrs.get("label", "") or "")

    @property
    def status(self) -> str:
        return str(self.attrs.get("status", "") or "unknown")

    @property
    def verified(self) -> int:
        return int(_num(self.attrs.get("verified"), -1))

    @property
    def invalid(self) -> bool:
        """The run failed verification: its numbers must not be used."""
        return self.verified == 0 or self.status == "invalid"

    @property
    def is_baseline(self) -> bool:
        return int(_num(self.attrs.get("baseline"), 0)) == 1

    @property
    def nranks(self) -> int:
        value = int(_num(self.attrs.get("nranks"), 0))
        return value or len(self.hosts) or 1

    def hostname(self, rank: int) -> str:
        for host in self.hosts:
            if int(host.get("rank", -1)) == rank:
                return str(host.get("hostname", "?"))
        return "?"

    def rank_label(self, rank: int) -> str:
        return f"{self.hostname(rank)}:r{rank}"

    def point(self, point_id: str) -> FftPoint | None:
        for point in self.points:
            if point.id == point_id:
                return point
        return None


def _num(value: Any, default: float) -> float:
    """A number from an attribute that may be missing, a string or an array."""
    if value is None:
        return default
    try:
        arr = np.asarray(value)
        if arr.size != 1:
            return default
        return float(arr.reshape(()))
    except (TypeError, ValueError):
        return default


def text(value: Any) -> str:
    """Decode an HDF5 string (fixed or variable length, bytes or str)."""
    if isinstance(value, (bytes, np.bytes_)):
        return bytes(value).split(b"\0", 1)[0].decode("utf-8", "replace")
    if isinstance(value, np.ndarray) and value.shape == ():
        return text(value[()])
    return str(value)


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


def find_result_files(paths: list[str]) -> list[Path]:
    """Expand folders into the result files below them (sorted). Raises
    InputError for a path that does not exist or a folder without results."""
    files: list[Path] = []
    for arg in paths:
        path = Path(arg)
        if path.is_dir():
            found = sorted(p for p in path.rglob("*")
                           if p.is_file() and p.name.endswith(RESULT_SUFFIXES))
            if not found:
                raise InputError(arg, "folder holds no result files (*.h5, *.h5.partial)",
                                 "run wulfbench first or name the result files")
            files.extend(found)
        elif path.exists():
            files.append(path)
        else:
            raise InputError(arg, "no such file or folder",
                             "check the path, or run wulfbench first (make run writes results/)")
    unique: list[Path] = []
    seen: set[str] = set()
    for path in files:
        real = os.path.realpath(path)
        if real not in seen:
            seen.add(real)
            unique.append(path)
    return unique


def check_file(path: Path) -> None:
    """Raise InputError unless `path` is a readable file with an HDF5 signature."""
    partial = path.name.endswith(".partial")
    if path.is_dir():
        raise InputError(str(path), "is a folder", "name the files or the folder alone")
    try:
        size = path.stat().st_size
        with open(path, "rb") as fh:
            # HDF5 looks for its signature at 0, 512, 1024, 2048, ...
            offsets = [0] + [512 * 2 ** k for k in range(20) if 512 * 2 ** k < size]
            found = False
            for offset in offsets:
                fh.seek(offset)
                if fh.read(8) == HDF5_MAGIC:
                    found = True
                    break
    except OSError as exc:
        raise InputError(str(path), f"cannot be read ({exc.strerror or exc})",
                         "check the file's permissions") from None
    if size == 0:
        raise InputError(str(path), "is empty" + (" (the run stopped before writing anything)"
                                                  if partial else ""),
                         "rerun the benchmark or remove the file")
    if not found:
        raise InputError(str(path), "is not an HDF5 file",
                         "give wulfbench result files (*.h5)")


def open_h5(path: Path | str) -> h5py.File:
    """Open a result file read-only: the one place the analysis opens one with h5py.

    open_run reads a file whole, in a forked child; the modules that read a
    few names of an already-checked file (point_detail, health, readiness,
    netfaults, energy, drift) open it with this, in the process itself, and
    handle h5py's OSError as before."""
    return h5py.File(path, "r")


def open_run(path: Path) -> Run:
    """Read one result file. Raises InputError if it cannot be used at all.

    The file is read in a forked child: the HDF5 library can crash on a damaged
    file, and that must cost this file, not the whole report."""
    check_file(path)
    if not hasattr(os, "fork") or os.environ.get("WB_LOAD_NO_FORK"):
        return _open_run(path)
    rfd, wfd = os.pipe()
    pid = os.fork()
    if pid == 0:
        status = 1
        try:
            os.close(rfd)
            faulthandler.disable()  # a crash here is expected and reported by the parent
            try:
                result: tuple = ("run", _open_run(path))
            except InputError as err:
                result = ("error", (err.subject, err.what, err.todo))
            except Exception as exc:
                result = ("error", (str(path), f"cannot be read ({_short(exc)})",
                                    "the file is damaged; rerun the benchmark"))
            with os.fdopen(wfd, "wb") as fh:
                pickle.dump(result, fh, protocol=pickle.HIGHEST_PROTOCOL)
            status = 0
        finally:
            os._exit(status)
    os.close(wfd)
    with os.fdopen(rfd, "rb") as fh:
        data = fh.read()
    _, status = os.waitpid(pid, 0)
    if os.WIFSIGNALED(status) or not data:
        how = (f"signal {signal.Signals(os.WTERMSIG(status)).name}" if os.WIFSIGNALED(status)
               else f"exit {os.waitstatus_to_exitcode(status)}")
        raise InputError(str(path), f"is damaged: the HDF5 library crashed reading it ({how})",
                         "rerun the benchmark or give another copy of the file")
    kind, payload = pickle.loads(data)
    if kind == "error":
        raise InputError(*payload)
    return payload


def _open_run(path: Path) -> Run:
    partial_name = path.name.endswith(".partial")
    try:
        fh = open_h5(path)
    except Exception as exc:
        msg = str(exc)
        if "truncated" in msg or "eof" in msg.lower():
            what = "is truncated (the run stopped before the file was flushed)"
            todo = ("rerun the benchmark; points already flushed cannot be recovered from "
                    "this copy" if partial_name else "copy the file again or rerun")
            raise InputError(str(path), what, todo) from None
        if "lock" in msg.lower():
            raise InputError(str(path), "is locked by a running writer",
                             "wait for the run to end or set HDF5_USE_FILE_LOCKING=FALSE") from None
        reason = re.sub(r"\s+", " ", msg.split("(", 1)[0]).strip() or "unknown error"
        raise InputError(str(path), f"HDF5 cannot open it ({reason})",
                         "rerun the benchmark or give another file") from None
    with fh:
        try:
            attrs = read_attrs(fh)
        except (OSError, KeyError, RuntimeError) as exc:
            raise InputError(str(path), f"its root attributes cannot be read ({exc})",
                             "the file is damaged; rerun the benchmark") from None
        schema = attrs.get("schema")
        if schema is None:
            groups = set(_names(fh))
            if groups & {"fft", "hosts", "transfer", "load"}:
                raise InputError(str(path), "is damaged: it has wulfbench's groups but no "
                                 "readable 'schema' attribute", "rerun the benchmark or give "
                                 "another copy of the file")
            raise InputError(str(path), "has no 'schema' attribute, so it is not a wulfbench "
                             "result file", "give files written by wulfbench")
        if str(schema) != SCHEMA:
            raise InputError(str(path), f"has schema '{schema}', this report reads '{SCHEMA}'",
                             "use the analysis that matches the wulfbench that wrote it")
        run = Run(path=path, attrs=attrs, hosts=[], points=[], transfer={}, pairs_all=None,
                  load_steps=[], load_attrs={}, groups=set(), partial=False)
        run.partial = partial_name or run.status == "running"
        for key in attrs.get("_unreadable", []) or []:
            run.problems.append(f"root attribute {key} unreadable")
        _read_body(fh, run)
    return run


def _names(group: h5py.Group) -> list[str]:
    try:
        return [str(k) for k in group.keys()]
    except Exception:
        return []


def _guard(run: Run, where: str, func, *args) -> Any:
    """Call func; on bad values or a damaged object record a problem and return None."""
    try:
        return func(*args)
    except BadData as exc:
        problem = f"{where}/{exc.dataset}: {exc.what}; {exc.skipped} skipped"
    except Exception as exc:  # a damaged file can make h5py raise almost anything
        problem = f"{where}: unreadable ({_short(exc)}); skipped"
    run.problems.append(problem)
    run.skipped.append(problem)
    return None


def _short(exc: BaseException) -> str:
    msg = re.sub(r"\s+", " ", str(exc)).strip()
    return msg[:160] or type(exc).__name__


def _read_body(fh: h5py.File, run: Run) -> None:
    run.groups = {str(k) for k in _guard(run, "root", lambda: list(fh.keys())) or []}
    if "hosts" in fh:
        run.hosts = _guard(run, "/hosts", read_compound, fh["hosts"]) or []
    else:
        run.problems.append("/hosts missing: host names unknown")
    if "fft" in fh:
        ids = _guard(run, "/fft", lambda: sorted(fh["fft"].keys())) or []
        for pid in ids:
            point = _guard(run, f"/fft/{pid}", _read_point, fh["fft"], pid)
            if point is not None:
                run.points.append(point)
                for problem in point.problems:
                    run.problems.append(f"/fft/{pid}: {problem}")
    if "transfer" in fh:
        names = _guard(run, "/transfer", lambda: sorted(fh["transfer"].keys())) or []
        for name in names:
            if name == "pairs_all":
                run.pairs_all = _guard(run, "/transfer/pairs_all", _read_pairs_all,
                                       fh["transfer"][name])
            elif name == "pairs_shift":
                continue  # a map like pairs_all, read by point_detail
            else:
                test = _guard(run, f"/transfer/{name}", _read_transfer, fh["transfer"], name)
                if test is not None:
                    run.transfer[name] = test
    if "load" in fh:
        run.load_attrs = _guard(run, "/load", read_attrs, fh["load"]) or {}
        steps = _guard(run, "/load", lambda: sorted(fh["load"].keys())) or []
        for sid in steps:
            step = _guard(run, f"/load/{sid}", _read_load_step, fh["load"], sid)
            if step is not None:
                run.load_steps.append(step)


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


def _read_point(fft: h5py.Group, pid: str) -> FftPoint | None:
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
            number = _num(value, float("nan"))
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
    return FftPoint(id=pid, attrs=attrs, times=times, bytes_in=bytes_in,
                    bytes_out=counts["bytes_out"], frames=counts["frames"],
                    flops=flops, inputs=inputs, verify=verify, problems=problems)


def _read_transfer(transfer: h5py.Group, name: str) -> TransferTest | None:
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
            t_med = nanmedian(t, axis=1)
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


def _read_pairs_all(group: h5py.Group) -> PairsAll:
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
                    latency_bytes=_num(attrs.get("latency_bytes"), float("nan")),
                    bandwidth_bytes=_num(attrs.get("bandwidth_bytes"), float("nan")))


LOAD_SIGNED = ("worker", "client", "status", "node")  # -1 is a legal "none" there


def _read_load_step(load: h5py.Group, sid: str) -> LoadStep | None:
    group = load[sid]
    if not isinstance(group, h5py.Group):
        return None
    data: dict[str, np.ndarray] = {}
    length = None
    for key in group.keys():
        obj = group[key]
        if not isinstance(obj, h5py.Dataset) or obj.dtype.names is not None:
            continue
        if obj.dtype.kind not in "biuf" or key in ENERGY_DATASETS:
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


def bad_file_lines(named: list[InputError], found: list[InputError], runs: list[Run],
                   skip_bad: bool, prog: str) -> list[str]:
    """One stderr line per file that could not be used. A file named on the command
    line stops the report unless --skip-bad; one found in a folder is skipped."""
    lines = []
    for err in named:
        line = f"{prog}: {err.subject}: {err.what}; {err.todo}"
        if skip_bad:
            line += "; skipped"
        elif runs:
            line += (f" (or pass --skip-bad to report the {len(runs)} readable "
                     f"file{'s' if len(runs) != 1 else ''})")
        lines.append(line)
    lines += [f"{prog}: {err.subject}: {err.what}; skipped (found in a folder; {err.todo})"
              for err in found]
    return lines


class UsageError(Exception):
    """A bad command line: exit 2."""


def new_parser(default_prog: str, description: str, epilog: str):
    """An argparse parser that calls itself prog_name(default_prog), keeps the
    text's line breaks and raises UsageError (one line, no usage dump)."""
    import argparse

    class Parser(argparse.ArgumentParser):
        def error(self, message: str) -> None:
            raise UsageError(message)
    return Parser(prog=prog_name(default_prog), description=description, epilog=epilog,
                  formatter_class=argparse.RawDescriptionHelpFormatter)


def guarded_main(run: Any, argv: list[str], prog: str,
                 interrupted: str = "interrupted") -> int:
    """Run a command line tool's `run(argv)` so that the user sees one line, never
    a traceback: UsageError exits 2, InputError 1, Ctrl-C 130, anything else 1
    as an "internal error" (WB_REPORT_DEBUG=1 shows the traceback)."""
    import sys
    import warnings
    warnings.simplefilter("ignore")
    try:
        return run(argv)
    except UsageError as err:
        print(f"{prog}: {err}; see --help", file=sys.stderr)
        return 2
    except InputError as err:
        print(f"{prog}: {err.subject}: {err.what}; {err.todo}", file=sys.stderr)
        return 1
    except KeyboardInterrupt:
        print(f"{prog}: {interrupted}", file=sys.stderr)
        return 130
    except Exception as exc:  # never show a traceback to the user
        if os.environ.get("WB_REPORT_DEBUG"):
            raise
        detail = " ".join(str(exc).split())[:200]
        print(f"{prog}: internal error ({type(exc).__name__}: {detail}); please report it with "
              "the input files", file=sys.stderr)
        return 1


def prog_name(default: str) -> str:
    """The name a command line tool calls itself: $WB_PROG (set by an installed
    wrapper such as wulfbench-report), else `default`."""
    return os.environ.get("WB_PROG", "").strip() or default


def name_runs(runs: list[Run]) -> None:
    """Give every run a short unique display name: its label, else its file name."""
    used: dict[str, int] = {}
    for run in runs:
        stem = run.path.name
        for suffix in (".partial", ".h5", ".hdf5"):
            if stem.endswith(suffix):
                stem = stem[: -len(suffix)]
        base = run.label.strip() or stem
        if base in used:
            base = f"{base} ({stem})" if run.label.strip() else f"{base} ({run.path.parent.name})"
        while base in used:
            used[base] += 1
            base = f"{base} #{used[base]}"
        used[base] = 1
        run.name = base


_MD_INLINE = re.compile(r"([\\`*_\[\]|~#!])")
_MD_LIST = re.compile(r"^([-+=])")
_MD_NUMBERED = re.compile(r"^(\d+)([.)])")


def md_escape(value: Any) -> str:
    """User text (a label, a file or host name) made safe for one Markdown line or
    table cell: no line breaks, no HTML, and no character that would start
    emphasis, code, a link, a table cell, a heading or a list."""
    out = " ".join(str(value).split())
    out = out.replace("&", "&amp;").replace("<", "&lt;").replace(">", "&gt;")
    out = _MD_INLINE.sub(r"\\\1", out)
    out = _MD_LIST.sub(r"\\\1", out)
    return _MD_NUMBERED.sub(r"\1\\\2", out)


def slug(name: str) -> str:
    """A file-name-safe form of a run name."""
    out = re.sub(r"[^A-Za-z0-9._-]+", "_", name).strip("_.")
    return out[:60] or "run"
