"""Derive the Storage section (`/io`, wulfbench io): the table, the two figures' numbers, the
fft request against each folder, the slowest node's storage, the SD cards against A1/A2, and the
"Read first" lines for figures a cache served and for failed tests."""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from ..derive import storage
from ..derive.storage import SD_CLASSES, StoragePoint
from ..read.runs import Run
from . import tables
from .common import Finds, bold
from .tables import Table

SD_SOURCE = ("the SD Association's Application Performance Class (SD 5.1: A1; SD 6.0: A2): "
             "at least 10 MB/s sustained sequential write, and 1500 random-read and 500 "
             "random-write IOPS for A1, 4000 and 2000 for A2")
SD_CAVEAT = ("measured through the file system with this run's sizes, not under the SDA's test "
             "conditions, so the marks are a guide, not a grading")


@dataclass(frozen=True)
class Series:
    test: str
    api: str
    label: str  # the test (and MPI-IO mode), marked FAILED when it failed
    median: tuple[float, ...]  # one per x position (NaN: not measured there)
    low: tuple[float, ...]
    high: tuple[float, ...]


@dataclass(frozen=True)
class Mark:
    """A reference line: an SD class's mark for one test."""

    label: str
    value: float
    test: str
    cls: str


@dataclass(frozen=True)
class Panel:
    """One run and folder in a storage figure: x = its nodes (then all nodes together)."""

    title: str
    x: tuple[str, ...]
    series: tuple[Series, ...]
    marks: tuple[Mark, ...]


@dataclass(frozen=True)
class StorageFindings:
    any_io: bool
    without: tuple[str, ...]  # runs with no /io
    table: Table | None
    bandwidth: tuple[Panel, ...]
    iops: tuple[Panel, ...]
    fft_lines: tuple[str, ...]
    slow_lines: tuple[str, ...]
    sd_lines: tuple[str, ...]
    failed_lines: tuple[str, ...]
    direct_lines: tuple[str, ...]  # why tests ran buffered, as the program said
    warnings: tuple[str, ...]
    finds: Finds
    sd_source: str = SD_SOURCE
    sd_caveat: str = SD_CAVEAT


def _mbps(value: float) -> str:
    return tables.fmt_bps(value * storage.MB)


def _figure(value: float, unit: str) -> str:
    """MB/s as the tables show it; IOPS (or a bare count) to 3 figures, whole above 1000."""
    if unit == "MB/s":
        return _mbps(value)
    return (tables.render(value, "float") + " " + unit).strip()


def _by_folder(points: list[StoragePoint]) -> dict[tuple[str, str], list[StoragePoint]]:
    out: dict[tuple[str, str], list[StoragePoint]] = {}
    for sp in points:
        out.setdefault((sp.run.name, sp.folder), []).append(sp)
    return out


def _panel(name: str, folder: str, items: list[StoragePoint], iops: bool) -> Panel | None:
    chosen = [sp for sp in items if sp.iops_test == iops]
    if not chosen:
        return None
    hosts = list(dict.fromkeys(n.host for sp in chosen for n in sp.nodes))
    several = len(hosts) > 1
    x = tuple(hosts + ([tables.storage.ALL_NODES] if several else []))
    series = []
    for sp in chosen:
        spreads = [next(((n.iops if iops else n.mbps) for n in sp.nodes if n.host == host),
                        storage.Spread()) for host in hosts]
        if several:
            spreads.append(sp.agg_iops if iops else sp.agg_mbps)
        label = f"{sp.label} (FAILED)" if sp.point.failed else sp.label
        series.append(Series(sp.test, str(sp.point.attrs.get("api", "")), label,
                             tuple(s.median for s in spreads), tuple(s.low for s in spreads),
                             tuple(s.high for s in spreads)))
    marks = []
    if any(str(n.device.get("kind", "")) == "sd" for sp in items for n in sp.nodes):
        for cls, want in SD_CLASSES.items():
            for test, value in want.items():
                if (test == "write") != iops and (cls == "A1" or test != "write"):
                    what = "sequential write" if test == "write" else test
                    unit = "MB/s" if test == "write" else "IOPS"
                    label = f"SD {'A1/A2' if test == 'write' else cls} {what} ≥ {value:g} {unit}"
                    marks.append(Mark(label, value, test, cls))
    kinds = sorted({str(n.device.get("kind", "?")) for sp in items for n in sp.nodes})
    return Panel(f"{name}: {folder} ({', '.join(kinds)})", x, tuple(series), tuple(marks))


def _read_rate(items: list[StoragePoint]) -> StoragePoint | None:
    for test in ("read", "shared-read"):
        found = [sp for sp in items if sp.test == test and not sp.point.failed and sp.nodes]
        if found:
            return found[0]
    return None


def _fft_line(run: Run, folder: str, items: list[StoragePoint], runs: list[Run]) -> str:
    where = f"{bold(run.name)}, {folder}"
    sp = _read_rate(items)
    if sp is None:
        return f"{where}: no sequential read test on this folder, so no time to read fft's request."
    found = storage.fft_request(run, runs)
    if found is None:  # the same line for every folder of the run, given once
        return (f"{bold(run.name)}: no fft result was given, so there is no request to set the "
                "folders' read rates against; add an fft or suite file of the same cluster to the report.")
    frun, point = found
    head = next((n for n in sp.nodes if 0 in n.ranks), sp.nodes[0])
    size = point.input_bytes
    secs = storage.read_seconds(size, head.mbps.median)
    warm = sp.point.cold != 1
    what = tables.workload(point.nfiles, point.seconds_per_file, size)
    text = (f"{where}: reading fft's request, {what}, "
            f"{'warm (the cold rule did not hold)' if warm else 'cold'} from this folder takes "
            f"about {tables.fmt_time(secs)} at {head.host}'s measured {_mbps(head.mbps.median)} ({sp.label}; the node "
            "of rank 0, where fft reads it)")
    slow = min(sp.nodes, key=lambda n: n.mbps.median if np.isfinite(n.mbps.median) else np.inf)
    if slow is not head and slow.mbps.median < head.mbps.median:
        text += f", {tables.fmt_time(storage.read_seconds(size, slow.mbps.median))} on the slowest node, {slow.host}"
    t_read = storage.t_read(point)
    source = "" if frun is run else f" in {bold(frun.name)}"
    text += f"; fft's t_read was {tables.fmt_time(t_read)} ({point.id}{source})"
    if str(point.attrs.get("input", "")) == "synthetic":
        text += ", but its audio was synthetic, made in memory: that t_read read no file"
    elif str(point.attrs.get("input_cache", "keep")) == "drop":
        text += ", its inputs dropped from the page cache before every read (--input-cache drop)"
    else:
        text += (", but after the first repetition its inputs could come from the page cache "
                 "(fft --input-cache drop reads them from the disk each time)")
    return text + "."


def _slow_line(slow: storage.SlowStorage) -> str:
    n, dev = slow.node, slow.node.device
    where = ", ".join(v for v in (str(dev.get("kind", "")), str(dev.get("fs_type", ""))) if v)
    device = str(dev.get("device", ""))
    text = (f"{bold(slow.run.name)}, {slow.folder}: the slowest storage is {bold(n.host)}'s "
            f"({where}{' on ' + device if device else ''}): {slow.test} {_figure(slow.value, slow.unit)}, "
            f"{100 * slow.ratio:.0f} % of the median node's {_figure(slow.median, slow.unit)}")
    if slow.slow:
        return text + "; below 80 % of the median, it sets the pace of a job that waits on every node's disk."
    return text + "; every node is within 80 % of the median."


def _sd_line(check: storage.SdCheck) -> str:
    dev = check.node.device
    card = " ".join(v for v in (str(dev.get("sd_name", "")), str(dev.get("sd_type", ""))) if v) \
        or str(dev.get("model", "")) or "SD card"
    got = ", ".join(f"{t} {_figure(v, 'MB/s' if t == 'write' else 'IOPS')}"
                    for t, v in check.measured.items())
    head = f"{bold(check.run.name)}, {check.folder}: {bold(check.node.host)}'s card ({card})"
    if not check.measured:
        return f"{head}: none of write, randread, randwrite measured; the A1/A2 marks cannot be judged."
    short = {cls: "; ".join(f"{t} {_figure(v, '')} < {m:g}" for t, v, m in lst)
             for cls, lst in check.short.items()}
    if check.short["A1"]:
        verdict = f"below A1 ({short['A1']})"
    elif check.short["A2"]:
        verdict = f"meets A1, below A2 ({short['A2']})"
    else:
        verdict = "meets A2"
    if check.missing:
        verdict += f", as far as measured ({', '.join(check.missing)} not measured)"
    return f"{head}: {got}: {verdict}."


def _direct_lines(points: list[StoragePoint]) -> list[str]:
    """Per run and reason, the buffered tests on each folder."""
    found: dict[tuple[str, str], dict[str, list[str]]] = {}
    for sp in points:
        note = str(sp.point.attrs.get("direct_note") or "")
        if tables.storage.direct_text(sp) == "buffered" and note:
            found.setdefault((sp.run.name, note), {}).setdefault(sp.folder, []).append(sp.label)
    return [f"{bold(name)}: {note}: " + "; ".join(f"{', '.join(labels)} on {folder}"
                                                  for folder, labels in where.items()) + "."
            for (name, note), where in found.items()]


def _warnings(points: list[StoragePoint]) -> list[str]:
    memory, warm, failed = [], [], []
    for (name, folder), items in _by_folder(points).items():
        hosts = sorted({n.host for sp in items for n in sp.nodes if storage.in_memory(n.device)})
        if hosts:
            fs = sorted({str(n.device.get("fs_type", "")) or str(n.device.get("kind", ""))
                         for sp in items for n in sp.nodes if storage.in_memory(n.device)})
            memory.append(f"{bold(name)} {folder} on {', '.join(hosts)} ({', '.join(fs)})")
        warm += [f"{bold(name)} {sp.label} on {folder}" for sp in items if storage.warm_read(sp)]
        failed += [f"{bold(name)} {sp.label} on {folder} ({sp.point.status[len('failed'):].lstrip(': ')})"
                   for sp in items if sp.point.failed]
    out = []
    if memory:
        out.append("Storage figures from RAM, not from a disk: " + "; ".join(memory)
                   + " is a memory file system, so every figure there is the RAM's.")
    if warm:
        out.append("Storage reads measured warm (the cold rule did not hold, so the page cache may "
                   "have served them and their MB/s can be the RAM's): " + "; ".join(warm) + ".")
    if failed:
        out.append("Storage tests FAILED: " + "; ".join(failed)
                   + "; their figures hold only the repetitions that completed.")
    return out


def storage_findings(ctx) -> StorageFindings:
    runs = [r for r in ctx.runs if r.io is not None]
    without = tuple(r.name for r in ctx.runs if r.io is None)
    if not runs:
        return StorageFindings(False, without, None, (), (), (), (), (), (), (), (), ())
    points = [sp for r in runs if not r.invalid for sp in storage.storage_points(r)]
    groups = _by_folder(points)
    by_name = {r.name: r for r in runs}
    bandwidth = tuple(p for (name, folder), items in groups.items()
                      if (p := _panel(name, folder, items, False)) is not None)
    iops = tuple(p for (name, folder), items in groups.items()
                 if (p := _panel(name, folder, items, True)) is not None)
    every = list(ctx.runs) + [b for b in ctx.baselines if b not in ctx.runs]
    fft_lines = tuple(dict.fromkeys(_fft_line(by_name[name], folder, items, every)
                                    for (name, folder), items in groups.items()))
    slow = [s for items in groups.values() if (s := storage.slowest_node(items)) is not None]
    finds = tuple((s.run.name, f"{s.node.host}'s storage on {s.folder} is below 80 % of the "
                               f"median node ({s.test}: {100 * s.ratio:.0f} %).")
                  for s in slow if s.slow)
    sd = [c for r in runs if not r.invalid
          for c in storage.sd_checks([sp for sp in points if sp.run is r])]
    failed = tuple(f"{bold(sp.run.name)}: {sp.label} on {sp.folder} FAILED: "
                   f"{sp.point.status[len('failed'):].lstrip(': ')} ({sp.point.reps} repetitions "
                   "completed)." for sp in points if sp.point.failed)
    return StorageFindings(True, without, tables.storage.table(points) if points else None,
                           bandwidth, iops, fft_lines, tuple(_slow_line(s) for s in slow),
                           tuple(_sd_line(c) for c in sd), failed, tuple(_direct_lines(points)),
                           tuple(_warnings(points)), finds)
