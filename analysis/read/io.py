"""Reading a `wulfbench io` result: `/io` and its tests (docs/schema.md, "/io"), in a forked child
(reader.in_child). What a request's files need of a disk is the sequential read rate of one
reader, so only the read tests are kept in full."""

from __future__ import annotations

from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import numpy as np

from .h5groups import read_attrs, read_compound
from .reader import InputError, ReaderCrash, check_file, in_child, open_h5


@dataclass
class IoTest:
    id: str
    attrs: dict[str, Any]
    mbps: np.ndarray | None  # [reps, nranks] MB/s of each rank
    agg_mbps: np.ndarray | None  # [reps]

    @property
    def ok(self) -> bool:
        return str(self.attrs.get("status", "")) == "ok"


@dataclass
class IoResult:
    path: Path
    attrs: dict[str, Any]
    devices: list[dict[str, Any]] = field(default_factory=list)
    tests: list[IoTest] = field(default_factory=list)


def _arr(group, name: str) -> np.ndarray | None:
    if name not in group:
        return None
    data = np.asarray(group[name][()], dtype=float)
    return data if data.size else None


def _read_file(path: Path) -> IoResult | None:
    with open_h5(path) as fh:
        if "io" not in fh:
            return None
        io = fh["io"]
        out = IoResult(path, read_attrs(io))
        if "devices" in io:
            out.devices = read_compound(io["devices"])
        for name in sorted(io):
            obj = io[name]
            if name == "devices" or not hasattr(obj, "keys"):
                continue
            out.tests.append(IoTest(name, read_attrs(obj), _arr(obj, "mbps"), _arr(obj, "agg_mbps")))
        return out


def read_io(path: Path) -> IoResult | None:
    """The file's /io, or None when it has none. InputError when the file cannot be read."""
    check_file(path)
    try:
        return in_child(_read_file, path)
    except ReaderCrash as crash:
        raise InputError(str(path), f"is damaged: {crash}", "give another copy of the file") from None
    except OSError as exc:
        raise InputError(str(path), f"cannot be read ({exc})", "give a wulfbench io result") from None
