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
from pathlib import Path
from typing import Any, Callable, TypeVar


# A run that is still being written holds the HDF5 file lock; reading a
# .partial file must not fail because of it.
os.environ.setdefault("HDF5_USE_FILE_LOCKING", "FALSE")

import h5py  # noqa: E402  (after the environment is set)

from .. import SCHEMA  # noqa: E402
from .h5groups import (BadData, read_attrs, read_compound, read_load_step, read_pairs_all,  # noqa: E402
                       read_point, read_transfer)
from .owntime import read_own  # noqa: E402
from .runs import Run  # noqa: E402
from .storage import read_io_group  # noqa: E402

HDF5_MAGIC = b"\x89HDF\r\n\x1a\n"
T = TypeVar("T")


RESULT_SUFFIXES = (".h5", ".hdf5", ".h5.partial", ".hdf5.partial")


class InputError(Exception):
    """A file or folder that cannot be used; rendered as one stderr line."""

    def __init__(self, subject: str, what: str, todo: str) -> None:
        super().__init__(f"{subject}: {what}; {todo}")
        self.subject = subject
        self.what = what
        self.todo = todo

    def __reduce__(self):  # pickled back from the child that read the file
        return InputError, (self.subject, self.what, self.todo)


class UsageError(Exception):
    """A bad command line: exit 2."""


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
    """Open a result file read-only: the one place the analysis opens one with h5py. Called
    only inside in_child (open_run, point_detail, records, energy)."""
    return h5py.File(path, "r")


def dataset_units(path: Path | str, under: str = "/") -> dict[str, str]:
    """Each dataset's `units` attribute under a group of the file (or of the one dataset there), by
    the dataset's name; the first one seen where several datasets share a name. Read in_child."""

    def read(p: Path) -> dict[str, str]:
        out: dict[str, str] = {}

        def visit(name: str, obj: Any) -> None:
            u = obj.attrs.get("units") if isinstance(obj, h5py.Dataset) else None
            if u is not None:
                out.setdefault(name.rsplit("/", 1)[-1], u.decode() if isinstance(u, bytes) else str(u))

        with open_h5(p) as f:
            if under in f:
                if isinstance(f[under], h5py.Dataset):
                    visit(under, f[under])
                else:
                    f[under].visititems(visit)
        return out

    return in_child(read, Path(path))


class ReaderCrash(OSError):
    """The HDF5 library crashed the child that read a file; `how` names the signal or exit."""

    def __init__(self, how: str) -> None:
        super().__init__(f"the HDF5 library crashed reading it ({how})")
        self.how = how


def in_child(read: Callable[[Path], T], path: Path) -> T:
    """read(path) in a forked child, its result pickled back: the HDF5 library can crash on a
    damaged file, and that must cost this file, not the whole report. An exception in `read`
    is raised here again; a crash raises ReaderCrash (an OSError, as an unreadable file)."""
    if not hasattr(os, "fork") or os.environ.get("WB_LOAD_NO_FORK"):
        return read(path)
    rfd, wfd = os.pipe()
    pid = os.fork()
    if pid == 0:
        status = 1
        try:
            os.close(rfd)
            faulthandler.disable()  # a crash here is expected and reported by the parent
            try:
                result: tuple = ("ok", read(path))
            except Exception as exc:
                result = ("error", exc)
            with os.fdopen(wfd, "wb") as fh:
                try:
                    data = pickle.dumps(result, protocol=pickle.HIGHEST_PROTOCOL)
                except Exception:  # an exception h5py cannot pickle: its words are enough
                    data = pickle.dumps(("error", RuntimeError(_short(result[1]))))
                fh.write(data)
            status = 0
        finally:
            os._exit(status)
    os.close(wfd)
    with os.fdopen(rfd, "rb") as fh:
        data = fh.read()
    _, status = os.waitpid(pid, 0)
    if os.WIFSIGNALED(status) or not data:
        raise ReaderCrash(f"signal {signal.Signals(os.WTERMSIG(status)).name}" if os.WIFSIGNALED(status)
                          else f"exit {os.waitstatus_to_exitcode(status)}")
    kind, payload = pickle.loads(data)
    if kind == "error":
        raise payload
    return payload


def open_run(path: Path) -> Run:
    """Read one result file, in a forked child (in_child). Raises InputError if it cannot be
    used at all."""
    check_file(path)
    try:
        return in_child(_open_run_or_say, path)
    except ReaderCrash as crash:
        raise InputError(str(path), f"is damaged: {crash}",
                         "rerun the benchmark or give another copy of the file") from None


def _open_run_or_say(path: Path) -> Run:
    try:
        return _open_run(path)
    except InputError:
        raise
    except Exception as exc:
        raise InputError(str(path), f"cannot be read ({_short(exc)})",
                         "the file is damaged; rerun the benchmark") from None


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
            if groups & {"fft", "hosts", "transfer", "load", "io"}:
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
    if "ceilings" in fh and "machines" in fh["ceilings"]:
        run.machines = _guard(run, "/ceilings/machines", read_compound, fh["ceilings"]["machines"]) or []
    if "fft" in fh:
        ids = _guard(run, "/fft", lambda: sorted(fh["fft"].keys())) or []
        for pid in ids:
            point = _guard(run, f"/fft/{pid}", read_point, fh["fft"], pid)
            if point is not None:
                run.points.append(point)
                for problem in point.problems:
                    run.problems.append(f"/fft/{pid}: {problem}")
    if "transfer" in fh:
        names = _guard(run, "/transfer", lambda: sorted(fh["transfer"].keys())) or []
        for name in names:
            if name == "pairs_all":
                run.pairs_all = _guard(run, "/transfer/pairs_all", read_pairs_all,
                                       fh["transfer"][name])
            elif name == "pairs_shift":
                continue  # a map like pairs_all, read by point_detail
            else:
                test = _guard(run, f"/transfer/{name}", read_transfer, fh["transfer"], name)
                if test is not None:
                    run.transfer[name] = test
    if "load" in fh:
        run.load_attrs = _guard(run, "/load", read_attrs, fh["load"]) or {}
        steps = _guard(run, "/load", lambda: sorted(fh["load"].keys())) or []
        for sid in steps:
            step = _guard(run, f"/load/{sid}", read_load_step, fh["load"], sid)
            if step is not None:
                run.load_steps.append(step)
    if "io" in fh:
        run.io = read_io_group(fh["io"], lambda where, func, *args: _guard(run, where, func, *args))
    run.own = _guard(run, "the run's own time", read_own, fh)
