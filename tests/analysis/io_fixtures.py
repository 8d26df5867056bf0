"""Write `/io` (wulfbench io) exactly as the io layout has it (docs/schema.md's /io group), from
known figures, onto a file that fixtures.write_run made, so the report's Storage section can be
checked against them.

Each rank's repetition r lasts bytes / (rate x 10^6) x (1 + SPREAD x (r - reps // 2)): with an odd
number of repetitions the median repetition is the given rate exactly, the others spread about it.
The aggregate is computed as the program does (all bytes over last end - first start) and its
median, min, max and CV stored as attributes, as the program stores them.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from pathlib import Path

import h5py
import numpy as np

import fixtures

SPREAD = 0.02
READS = ("read", "randread", "shared-read")
RANDOM = ("randread", "randwrite")


@dataclass
class Device:
    """One node's device under one folder: a row of /io/devices."""

    fs_type: str = "ext4"
    kind: str = "sd"
    device: str = "/dev/mmcblk0p2"
    model: str = "SC64G"
    sd_name: str = "SC64G"
    sd_type: str = "SD"
    sd_date: str = "05/2023"
    mount_options: str = "rw,relatime"
    mem_bytes: int = 4 * 2 ** 30
    free_bytes: int = 20 * 10 ** 9


@dataclass
class IoTest:
    """One /io/<id>: a test on one folder, with each rank's rate at its median repetition."""

    test: str
    dir: str
    mbps: list[float] | None = None  # per rank, MB/s (random and meta: from the IOPS)
    iops: list[float] | None = None  # per rank; random and meta tests
    p99_s: list[float] | None = None  # per rank; random tests
    cold: int | None = None  # default: 1 on a read test, -1 on a write
    status: str = "ok"
    reps: int = 5
    direct: int = 1
    direct_note: str = ""
    sync: str | None = None
    file_bytes: int = 64 * 10 ** 6
    extra_attrs: dict = field(default_factory=dict)


def _devices(io: h5py.Group, dirs: list[str], nnodes: int, devices: dict[tuple[int, str], Device],
             shared: dict[str, int]) -> None:
    sdt = h5py.string_dtype()
    dt = np.dtype([("node", "<i4"), ("dir", sdt), ("fs_type", sdt), ("mount_options", sdt),
                   ("device", sdt), ("model", sdt), ("kind", sdt), ("rotational", "<i4"),
                   ("sd_name", sdt), ("sd_type", sdt), ("sd_date", sdt), ("nfs_server", sdt),
                   ("export_sync", sdt), ("free_bytes", "<i8"), ("mem_bytes", "<i8"), ("shared", "<i4")])
    rows = []
    for d in dirs:
        for node in range(nnodes):
            dev = devices.get((node, d), Device())
            sd = dev.kind == "sd"
            rows.append((node, d, dev.fs_type, dev.mount_options, dev.device, dev.model, dev.kind,
                         0, dev.sd_name if sd else "", dev.sd_type if sd else "",
                         dev.sd_date if sd else "", "", "", dev.free_bytes, dev.mem_bytes,
                         shared.get(d, 0)))
    io.create_dataset("devices", data=np.array(rows, dtype=dt))


def _test(g: h5py.Group, t: IoTest, dir_index: int, shared: int, nranks: int) -> None:
    read = t.test in READS
    xfer = 4096 if t.test in RANDOM else 2 ** 20
    reps = t.reps
    factor = 1.0 + SPREAD * (np.arange(reps) - reps // 2)
    if t.iops is not None:  # random and meta: the ops at their rate, xfer bytes each
        rate = np.asarray(t.iops, dtype=float)
        ops = np.full((reps, rate.size), float(t.file_bytes // xfer))
        dur = np.outer(factor, ops[0] / rate) if reps else np.zeros((0, rate.size))
        nbytes = ops * xfer
    else:
        rate = np.asarray(t.mbps, dtype=float)
        nbytes = np.full((reps, rate.size), float(t.file_bytes))
        dur = np.outer(factor, t.file_bytes / (rate * 1e6)) if reps else np.zeros((0, rate.size))
        ops = nbytes / xfer
    assert rate.size == nranks, (t.test, rate.size, nranks)
    start = 100.0 + np.arange(reps)[:, None] * 50.0 + np.zeros((1, nranks))
    end = start + dur
    with np.errstate(all="ignore"):
        mbps = nbytes / 1e6 / dur
        iops = ops / dur if t.iops is not None else np.full((reps, nranks), np.nan)
        span = end.max(axis=1) - start.min(axis=1) if reps else np.zeros(0)
        agg_mbps = nbytes.sum(axis=1) / 1e6 / span
        agg_iops = ops.sum(axis=1) / span if t.iops is not None else np.full(reps, np.nan)
    lat = np.full((reps, nranks, 3), np.nan)
    if t.p99_s is not None:
        p99 = np.asarray(t.p99_s, dtype=float)[None, :] * factor[:, None]
        lat[:, :, 0], lat[:, :, 1], lat[:, :, 2] = p99 / 4, p99 / 2, p99
    cold = t.cold if t.cold is not None else (1 if read else -1)
    attrs = {"test": t.test, "dir": t.dir, "dir_index": dir_index, "shared": shared,
             "api": "posix", "access": "shared-file" if t.test.startswith("shared") else "file-per-process",
             "file_bytes": np.int64(t.file_bytes), "xfer_bytes": np.int64(xfer),
             "reps": np.int32(reps), "warmup": np.int32(1),
             "sync": t.sync if t.sync is not None else ("none" if read else "fdatasync"),
             "direct": np.int32(t.direct), "direct_note": t.direct_note, "cold": np.int32(cold),
             "cold_method": "drop_caches" if cold == 1 else "", "status": t.status, "note": ""}
    attrs.update(t.extra_attrs)
    for key, value in attrs.items():
        g.attrs[key] = value
    for name, arr in (("agg_mbps", agg_mbps), ("agg_iops", agg_iops)):
        for stat, fn in (("median", np.median), ("min", np.min), ("max", np.max),
                         ("cv", lambda a: np.std(a, ddof=1) / np.mean(a))):
            g.attrs[f"{name}_{stat}"] = float(fn(arr)) if reps > 1 and np.isfinite(arr).all() else np.nan
    for name, data, units in (("t_start", start, "s"), ("t_end", end, "s"),
                              ("bytes", nbytes.astype(np.int64), "bytes"),
                              ("ops", ops.astype(np.int64), "count"), ("mbps", mbps, "MB/s"),
                              ("iops", iops, "1/s"), ("lat_s", lat, "s"), ("agg_mbps", agg_mbps, "MB/s"),
                              ("agg_iops", agg_iops, "1/s")):
        fixtures._dataset(g, name, data, units)
    if t.test == "meta":
        for name in ("create_per_s", "stat_per_s", "delete_per_s"):
            fixtures._dataset(g, name, iops, "1/s")


def add_io(path: Path | str, tests: list[IoTest], devices: dict[tuple[int, str], Device] | None = None,
           shared: dict[str, int] | None = None, subcommand: str | None = None) -> Path:
    """/io on the file at `path` (its /hosts gives the ranks and nodes): the folders in the order
    the tests name them, a devices row per node and folder (Device() unless `devices` names it)."""
    with h5py.File(path, "a") as f:
        hosts = f["hosts"][()]
        nranks = len(hosts)
        nnodes = int(hosts["node"].max()) + 1
        dirs = list(dict.fromkeys(t.dir for t in tests))
        io = f.create_group("io")
        io.attrs["dirs"] = "\n".join(dirs)
        io.attrs["budget_s"] = 30.0
        io.attrs["seed"] = np.int64(7)
        io.attrs["points"] = np.int32(len(tests))
        _devices(io, dirs, nnodes, devices or {}, shared or {})
        for k, t in enumerate(tests):
            _test(io.create_group(f"i{k:03d}"), t, dirs.index(t.dir), (shared or {}).get(t.dir, 0),
                  nranks)
        if subcommand:
            f.attrs["subcommand"] = subcommand
    return Path(path)


def io_cluster(hosts=("pi0", "pi1", "pi2", "pi3"), ranks_per_node: int = 1, fft: bool = False,
               label: str = "pi-io") -> fixtures.Cluster:
    """A cluster whose run holds /hosts (and fft points when asked), to add /io to."""
    return fixtures.Cluster(label=label, hosts=tuple(hosts), ranks_per_node=ranks_per_node,
                            straggler_rank=None, unstable_point=None, transfer=False, load=False,
                            scenarios=("files",) if fft else ())
