"""Read wulfbench result files (schema `wulfbench/1`, docs/schema.md) into plain
dataclasses, and check that a file is one.

Problems with a whole file raise `InputError`; problems inside a readable file
(a damaged point, a missing dataset) are recorded in `Run.problems` and the
rest of the file is still used.
"""

from __future__ import annotations

import os
import re
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import numpy as np

# A run that is still being written holds the HDF5 file lock; reading a
# .partial file must not fail because of it.
os.environ.setdefault("HDF5_USE_FILE_LOCKING", "FALSE")

import h5py  # noqa: E402  (after the environment is set)

from . import SCHEMA  # noqa: E402

HDF5_MAGIC = b"\x89HDF\r\n\x1a\n"
RESULT_SUFFIXES = (".h5", ".hdf5", ".h5.partial", ".hdf5.partial")
TIME_SERIES = ("t_read", "t_distribute", "t_compute", "t_fft", "t_gather", "t_total")
PER_RANK_TIMES = ("t_distribute", "t_compute", "t_fft", "t_gather")
LOAD_STATUS = {0: "done", 1: "rejected", 2: "unfinished"}


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


def open_run(path: Path) -> Run:
    """Read one result file. Raises InputError if it cannot be used at all."""
    check_file(path)
    partial_name = path.name.endswith(".partial")
    try:
        fh = h5py.File(path, "r")
    except OSError as exc:
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


def _guard(run: Run, where: str, func, *args) -> Any:
    """Call func; on a damaged object record a problem and return None."""
    try:
        return func(*args)
    except (OSError, KeyError, ValueError, TypeError, IndexError, RuntimeError) as exc:
        run.problems.append(f"{where}: unreadable ({_short(exc)}); skipped")
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


def _float_array(group: h5py.Group, name: str) -> np.ndarray | None:
    if name not in group:
        return None
    return np.asarray(group[name][()], dtype=float)


def _read_point(fft: h5py.Group, pid: str) -> FftPoint | None:
    group = fft[pid]
    if not isinstance(group, h5py.Group):
        return None
    attrs = read_attrs(group)
    problems: list[str] = []
    raw = {name: _float_array(group, name) for name in TIME_SERIES}
    flops = _float_array(group, "flops")
    bytes_in = _float_array(group, "bytes_in")
    frames = _float_array(group, "frames")
    nranks = next((np.atleast_1d(v).shape[0] for v in (flops, bytes_in, frames)
                   if v is not None), None)
    if nranks is None:
        per_rank = next((v for n, v in raw.items() if n in PER_RANK_TIMES and v is not None), None)
        nranks = per_rank.shape[1] if per_rank is not None and per_rank.ndim == 2 else 1
    if raw["t_total"] is None:
        raise KeyError("t_total missing")
    reps = np.atleast_1d(raw["t_total"]).shape[0]
    times: dict[str, np.ndarray] = {}
    for name in TIME_SERIES:
        arr = raw[name]
        if name in PER_RANK_TIMES:
            if arr is None:
                problems.append(f"{name} missing")
                arr = np.full((reps, nranks), np.nan)
            arr = np.asarray(arr, dtype=float)
            if arr.ndim == 1:
                arr = arr.reshape(reps, -1) if arr.size == reps * nranks else arr.reshape(-1, 1)
            times[name] = arr
        else:
            if arr is None:
                problems.append(f"{name} missing")
                arr = np.full(reps, np.nan)
            times[name] = np.atleast_1d(arr).reshape(-1)
    nr = times["t_compute"].shape[1]
    if flops is None:
        problems.append("flops missing: GFLOPS not available")
        flops = np.full(nr, np.nan)
    if bytes_in is None:
        bytes_in = np.full(nr, np.nan)
    bytes_out = _float_array(group, "bytes_out")
    inputs = read_compound(group["inputs"]) if "inputs" in group else []
    verify = read_attrs(group["verify"]) if "verify" in group else {}
    if np.all(np.isnan(times["t_total"])):
        problems.append("no recorded repetitions")
    return FftPoint(id=pid, attrs=attrs, times=times, bytes_in=np.atleast_1d(bytes_in),
                    bytes_out=None if bytes_out is None else np.atleast_1d(bytes_out),
                    frames=None if frames is None else np.atleast_1d(frames),
                    flops=np.atleast_1d(flops), inputs=inputs, verify=verify,
                    problems=problems)


def _read_transfer(transfer: h5py.Group, name: str) -> TransferTest | None:
    group = transfer[name]
    if not isinstance(group, h5py.Group):
        return None
    attrs = read_attrs(group)
    sizes = _float_array(group, "bytes")
    if sizes is None:
        raise KeyError("bytes missing")
    sizes = np.atleast_1d(sizes)
    t = _float_array(group, "t")
    t_med = _float_array(group, "t_med")
    if t_med is None:
        if t is None:
            raise KeyError("neither t nor t_med present")
        with np.errstate(all="ignore"):
            t_med = _nanmedian(t, axis=1)
    t_med = np.asarray(t_med, dtype=float).reshape(sizes.shape[0], -1)
    bandwidth = _float_array(group, "bandwidth_Bps")
    if bandwidth is not None:
        bandwidth = np.asarray(bandwidth, dtype=float).reshape(sizes.shape[0], -1)
    pairs = np.asarray(group["pairs"][()], dtype=int).reshape(-1, 2) if "pairs" in group else None
    orders = np.asarray(group["orders"][()], dtype=int) if "orders" in group else None
    return TransferTest(name=name, attrs=attrs, bytes=sizes, t=t, t_med=t_med,
                        bandwidth=bandwidth, pairs=pairs, orders=orders)


def _read_pairs_all(group: h5py.Group) -> PairsAll:
    attrs = read_attrs(group)
    return PairsAll(latency_s=_float_array(group, "latency_s"),
                    bandwidth_Bps=_float_array(group, "bandwidth_Bps"),
                    latency_bytes=_num(attrs.get("latency_bytes"), float("nan")),
                    bandwidth_bytes=_num(attrs.get("bandwidth_bytes"), float("nan")))


def _read_load_step(load: h5py.Group, sid: str) -> LoadStep | None:
    group = load[sid]
    if not isinstance(group, h5py.Group):
        return None
    data: dict[str, np.ndarray] = {}
    for key in group.keys():
        obj = group[key]
        if isinstance(obj, h5py.Dataset) and obj.dtype.names is None:
            data[str(key)] = np.atleast_1d(np.asarray(obj[()]))
    return LoadStep(id=sid, attrs=read_attrs(group), data=data)


def _nanmedian(arr: np.ndarray, axis: int) -> np.ndarray:
    import warnings
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", RuntimeWarning)
        return np.nanmedian(arr, axis=axis)


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


def slug(name: str) -> str:
    """A file-name-safe form of a run name."""
    out = re.sub(r"[^A-Za-z0-9._-]+", "_", name).strip("_.")
    return out[:60] or "run"
