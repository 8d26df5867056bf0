"""Reading `/io` (wulfbench io; docs/schema.md and the io layout), the one reader of it for the report
and `analysis.whatif --disk` alike (both through reader.open_run): the devices table and one `IoPoint`
per test and folder, every dataset's shape and values checked. A bad dataset raises `BadData`, which
costs that test only (the reader's guard records it); a file without `/io` gives none."""

from __future__ import annotations

import h5py
import numpy as np

from typing import Any, Callable

from .h5groups import BadData, _float_array, _shape_text, check_values, read_attrs, read_compound
from .runs import IO_SERIES, IoGroup, IoPoint

# Rates and latencies are NaN where a test does not measure them (iops of a sequential test).
NAN_OK = {"mbps", "iops", "lat_s", "agg_mbps", "agg_iops", "create_per_s", "stat_per_s",
          "delete_per_s"}


def read_io_point(io: h5py.Group, pid: str) -> IoPoint | None:
    group = io[pid]
    if not isinstance(group, h5py.Group):
        return None
    attrs = read_attrs(group)
    data: dict[str, np.ndarray] = {}
    for name in IO_SERIES:
        arr = _float_array(group, name, "test")
        if arr is not None:
            data[name] = arr
    if "mbps" not in data:
        raise KeyError("mbps missing")
    mbps = data["mbps"]
    if mbps.ndim == 1 and mbps.size == 0:  # a failed test with no repetition: [0, nranks] may read as [0]
        mbps = mbps.reshape(0, 0)
    if mbps.ndim != 2:
        raise BadData("mbps", f"has shape {_shape_text(mbps.shape)}, expected [reps, nranks]", "test")
    reps, nranks = mbps.shape
    for name, arr in data.items():
        if name.startswith("agg_"):
            expected: tuple = (reps,)
            arr = arr.reshape(-1) if arr.size == reps else arr
        elif name == "lat_s":
            expected = (reps, nranks, 3)
        else:
            expected = (reps, nranks)
        if arr.size == 0 and reps == 0:
            arr = np.zeros(expected)
        if arr.shape != expected:
            raise BadData(name, f"has shape {_shape_text(arr.shape)}, expected "
                          f"{_shape_text(expected)} (reps and ranks from mbps)", "test")
        check_values(name, arr, nan_ok=name in NAN_OK, skipped="test")
        data[name] = arr
    return IoPoint(id=pid, attrs=attrs, data=data)


def read_devices(io: h5py.Group) -> list[dict]:
    if "devices" not in io or not isinstance(io["devices"], h5py.Dataset):
        return []
    return read_compound(io["devices"])


def read_io_group(io: h5py.Group, guard: Callable[..., Any]) -> IoGroup:
    """/io: its attributes, the devices table and every test. guard(where, func, *args) calls func and
    gives None for a damaged part, which then costs that part alone."""
    attrs = guard("/io", read_attrs, io) or {}
    devices = guard("/io/devices", read_devices, io) or []
    points = []
    for pid in guard("/io", lambda: sorted(k for k in io.keys() if k != "devices")) or []:
        point = guard(f"/io/{pid}", read_io_point, io, pid)
        if point is not None:
            points.append(point)
    return IoGroup(attrs=attrs, devices=devices, points=points)
