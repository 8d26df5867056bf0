"""The storage table: one row per run, test, folder and node, and the aggregate of all nodes."""

from __future__ import annotations

import numpy as np

from ...derive.storage import MB, StoragePoint
from ...read.runs import READ_TESTS, number_or
from .base import Column, Table

ALL_NODES = "all nodes"

COLUMNS = [
    Column("run", "run"), Column("folder", "folder"), Column("test", "test"), Column("node", "node"),
    Column("bandwidth", "MB/s", "Bps"), Column("iops", "IOPS", "float"),
    Column("p99_latency", "p99 latency", "time"), Column("cache", "cold / warm"),
    Column("direct", "direct"), Column("sync", "sync call"), Column("fs_type", "fs type"),
    Column("kind", "device kind"), Column("status", "status"),
    # the CSV's alone
    Column("bandwidth_min", "MB/s min over reps", "Bps"),
    Column("bandwidth_max", "MB/s max over reps", "Bps"),
    Column("iops_min", "IOPS min over reps", "float"), Column("iops_max", "IOPS max over reps", "float"),
    Column("cv", "CV of the aggregate over reps", "pct"), Column("reps", "reps", "int"),
    Column("api", "api"), Column("access", "access"), Column("file_bytes", "file size", "bytes"),
    Column("xfer_bytes", "bytes per call", "bytes"), Column("cold_method", "cold rule"),
    Column("direct_note", "why not direct"), Column("device", "device"), Column("model", "model"),
    Column("mount_options", "mount options"), Column("shared", "shared"),
    Column("mem_bytes", "node RAM", "bytes"), Column("note", "note"), Column("id", "point"),
]
PAGE = ["run", "folder", "test", "node", "bandwidth", "iops", "p99_latency", "cache", "direct",
        "sync", "fs_type", "kind", "status"]


def _bps(mbps: float) -> float:
    return mbps * MB if np.isfinite(mbps) else float("nan")


def cache_text(sp: StoragePoint) -> str:
    if sp.test not in READ_TESTS:
        return "–"
    if sp.point.cold == 1:
        method = str(sp.point.attrs.get("cold_method") or "")
        return f"cold ({method})" if method else "cold"
    return "warm" if sp.point.cold == 0 else "?"


def direct_text(sp: StoragePoint) -> str:
    """O_DIRECT or buffered; why not direct is in the CSV and in a line below the table."""
    return "O_DIRECT" if int(number_or(sp.point.attrs.get("direct"), -1)) == 1 else "buffered"


def status_text(sp: StoragePoint) -> str:
    status = sp.point.status
    return "ok" if status == "ok" else "FAILED" + status[len("failed"):]


def _one(values: list[str]) -> str:
    return values[0] if len(set(values)) == 1 else "mixed"


def _common(sp: StoragePoint) -> dict:
    a = sp.point.attrs
    return {"run": sp.run.name, "folder": sp.folder, "test": sp.label, "id": sp.point.id,
            "cache": cache_text(sp), "direct": direct_text(sp), "sync": str(a.get("sync", "")),
            "status": status_text(sp), "reps": sp.point.reps, "api": str(a.get("api", "")),
            "access": str(a.get("access", "")), "file_bytes": number_or(a.get("file_bytes"), np.nan),
            "xfer_bytes": number_or(a.get("xfer_bytes"), np.nan),
            "cold_method": str(a.get("cold_method", "")), "direct_note": str(a.get("direct_note", "")),
            "shared": int(number_or(a.get("shared"), -1)), "note": str(a.get("note", ""))}


def _figures(mbps, iops) -> dict:
    return {"bandwidth": _bps(mbps.median), "bandwidth_min": _bps(mbps.low),
            "bandwidth_max": _bps(mbps.high), "iops": iops.median, "iops_min": iops.low,
            "iops_max": iops.high}


def rows(points: list[StoragePoint]) -> list[dict]:
    out = []
    for sp in points:
        common = _common(sp)
        for n in sp.nodes:
            dev = n.device
            out.append(dict(common, **_figures(n.mbps, n.iops), node=n.host, p99_latency=n.p99_s,
                            cv=float("nan"), fs_type=str(dev.get("fs_type", "?")),
                            kind=str(dev.get("kind", "?")), device=str(dev.get("device", "")),
                            model=str(dev.get("model", "")),
                            mount_options=str(dev.get("mount_options", "")),
                            mem_bytes=number_or(dev.get("mem_bytes"), np.nan)))
        if len(sp.nodes) > 1:
            devs = [n.device for n in sp.nodes]
            out.append(dict(common, **_figures(sp.agg_mbps, sp.agg_iops), node=ALL_NODES,
                            p99_latency=sp.p99_s, cv=sp.agg_cv,
                            fs_type=_one([str(d.get("fs_type", "?")) for d in devs]),
                            kind=_one([str(d.get("kind", "?")) for d in devs]),
                            device="", model="", mount_options="", mem_bytes=float("nan")))
    return out


def table(points: list[StoragePoint]) -> Table:
    return Table("storage", "Storage: each node and folder", COLUMNS, rows(points),
                 html_columns=PAGE,
                 note="Median over repetitions. A node's figure is its rank's (with several ranks, "
                      "their bytes or operations over their first start to last end); "
                      f"'{ALL_NODES}' is the program's aggregate over every rank (all bytes over "
                      "the last end − the first start, as IOR). IOPS: random 4 KiB tests, and files "
                      "per second in meta. p99: the slowest rank's 99th percentile of one "
                      "operation's latency. cold / warm: whether the read bypassed the page cache "
                      "(the rule used in brackets). The CSV has min, max, CV, sizes and devices.")
