"""The storage figures (`/io`, wulfbench io): each node's figures of each test, what came from a
cache, the slowest node's storage, the SD cards against the SD Association's classes, and the time
the fft request would take to read from each folder.

The program stores the rates: per rank and repetition (`mbps`, `iops`, `lat_s`) and the
aggregate over all ranks (`agg_mbps_*`, `agg_iops_*`, IOR's rule: all bytes over last end − first
start). Here they are only reduced to one figure per node: a node with one rank keeps that rank's
stored rate; a node with several is reduced by the same rule as the aggregate, over its own ranks
(its bytes over its last end − first start). Then the median over repetitions.
"""

from __future__ import annotations

from dataclasses import dataclass, field

import numpy as np

from ..read.runs import READ_TESTS, FftPoint, IoPoint, Run, number_or
from . import stats
from .transfer import SLOW_LINK

MB = 1e6
IOPS_TESTS = ("randread", "randwrite", "meta")  # their figure is IOPS, the others' MB/s
MEMORY_FS = ("tmpfs", "ramfs")

# The SD Association's Application Performance Class (SD 5.1 for A1, SD 6.0 for A2): the least
# random 4 KiB read and write IOPS and sustained sequential write a card of the class must reach
# under the SDA's test conditions (www.sdcard.org, "Application Performance Class").
SD_CLASSES = {"A1": {"write": 10.0, "randread": 1500.0, "randwrite": 500.0},
              "A2": {"write": 10.0, "randread": 4000.0, "randwrite": 2000.0}}


@dataclass(frozen=True)
class Spread:
    """A figure over repetitions: median, slowest and fastest (NaN where not measured)."""

    median: float = float("nan")
    low: float = float("nan")
    high: float = float("nan")


@dataclass(frozen=True)
class NodeFigure:
    """One node's figures in one test."""

    node: int
    host: str
    ranks: tuple[int, ...]
    mbps: Spread
    iops: Spread
    p99_s: float  # the median over repetitions of the node's largest rank p99
    device: dict = field(default_factory=dict)


@dataclass(frozen=True)
class StoragePoint:
    """One test on one folder, with its nodes' figures and the aggregate the program stored."""

    run: Run
    point: IoPoint
    nodes: tuple[NodeFigure, ...]
    agg_mbps: Spread
    agg_iops: Spread
    agg_cv: float  # of the aggregate's figure (IOPS in random and meta tests, else MB/s)
    p99_s: float  # over every rank: the median over repetitions of the largest p99

    @property
    def test(self) -> str:
        return self.point.test

    @property
    def label(self) -> str:
        """The test, with its MPI-IO mode where it has one: 'shared-write (mpiio-coll)'."""
        api = str(self.point.attrs.get("api", "") or "")
        return f"{self.test} ({api})" if api.startswith("mpiio") else self.test

    @property
    def folder(self) -> str:
        return self.point.dir

    @property
    def iops_test(self) -> bool:
        return self.test in IOPS_TESTS

    def node(self, node: int) -> NodeFigure | None:
        return next((n for n in self.nodes if n.node == node), None)


def rank_nodes(run: Run, nranks: int) -> dict[int, tuple[int, str]]:
    """rank -> (node, host name) from /hosts; each rank its own node when /hosts says nothing."""
    out: dict[int, tuple[int, str]] = {}
    for h in run.hosts:
        rank = int(number_or(h.get("rank"), -1))
        node = int(number_or(h.get("node"), rank))
        out[rank] = (node, str(h.get("hostname", f"node {node}")))
    return {r: out.get(r, (r, f"node {r}")) for r in range(nranks)}


def _stored(point: IoPoint, what: str) -> Spread:
    """The aggregate's median, min and max as the program stored them (from the per-repetition
    dataset in a file without the attributes)."""
    series = point.data.get(f"agg_{what}", np.zeros(0))
    fallback = _spread(series)
    return Spread(*(number_or(point.attrs.get(f"agg_{what}_{s}"), getattr(fallback, f))
                    for s, f in (("median", "median"), ("min", "low"), ("max", "high"))))


def _node_series(point: IoPoint, ranks: list[int], rate: str, amount: str) -> np.ndarray:
    """The node's rate per repetition: its one rank's stored rate, or its ranks' amount over their
    span (the sum of their rates in a file without the times)."""
    d = point.data
    if len(ranks) == 1:
        return d[rate][:, ranks[0]]
    if not np.isfinite(d[rate][:, ranks]).any():
        return np.full(d[rate].shape[0], np.nan)  # not measured in this test (iops of a write)
    if not all(k in d for k in ("t_start", "t_end", amount)):
        return np.nansum(d[rate][:, ranks], axis=1)
    with np.errstate(all="ignore"):
        span = d["t_end"][:, ranks].max(axis=1) - d["t_start"][:, ranks].min(axis=1)
        return d[amount][:, ranks].sum(axis=1) / (MB if amount == "bytes" else 1.0) / span


def _spread(series: np.ndarray) -> Spread:
    if series.size == 0 or not np.isfinite(series).any():
        return Spread()
    return Spread(float(stats.nanmedian(series)), float(stats.nanmin(series)),
                  float(stats.nanmax(series)))


def _p99(point: IoPoint, ranks: list[int]) -> float:
    lat = point.data.get("lat_s")
    if lat is None or lat.shape[0] == 0:
        return float("nan")
    worst = stats.nanmax(lat[:, ranks, 2], axis=1)
    return float(stats.nanmedian(worst)) if np.isfinite(worst).any() else float("nan")


def storage_point(run: Run, point: IoPoint) -> StoragePoint:
    nranks = point.data["mbps"].shape[1] or run.nranks  # a failed test with no repetition may be [0]
    by_node: dict[int, list[int]] = {}
    names: dict[int, str] = {}
    for rank, (node, host) in rank_nodes(run, nranks).items():
        by_node.setdefault(node, []).append(rank)
        names.setdefault(node, host)
    nodes = []
    for node, ranks in sorted(by_node.items()):
        # meta moves no data (its files are empty): its figure is files per second alone
        mbps = _spread(_node_series(point, ranks, "mbps", "bytes")) \
            if point.reps and point.test != "meta" else Spread()
        iops = _spread(_node_series(point, ranks, "iops", "ops")) if point.reps else Spread()
        nodes.append(NodeFigure(node, names[node], tuple(ranks), mbps, iops, _p99(point, ranks),
                                dict(run.io.device(node, point.dir)) if run.io else {}))
    what = "iops" if point.test in IOPS_TESTS else "mbps"
    cv = number_or(point.attrs.get(f"agg_{what}_cv"), stats.cv(point.data.get(f"agg_{what}", np.zeros(0))))
    agg_mbps = _stored(point, "mbps") if point.test != "meta" else Spread()
    return StoragePoint(run, point, tuple(nodes), agg_mbps, _stored(point, "iops"), cv,
                        _p99(point, list(range(nranks))))


def storage_points(run: Run) -> list[StoragePoint]:
    """Every test of a run's /io, in the order the program ran them; [] without /io."""
    if run.io is None:
        return []
    return [storage_point(run, p) for p in run.io.points]


def in_memory(device: dict) -> bool:
    """The folder lives in RAM on that node (tmpfs, ramfs): every figure there is the RAM's."""
    return str(device.get("fs_type", "")) in MEMORY_FS or str(device.get("kind", "")) == "memory"


def warm_read(sp: StoragePoint) -> bool:
    """A read test whose cold rule did not hold: the page cache may have served it."""
    return sp.test in READ_TESTS and sp.point.cold == 0


@dataclass(frozen=True)
class SlowStorage:
    """The slowest node of one run and folder: its figure against the nodes' median."""

    run: Run
    folder: str
    node: NodeFigure
    test: str
    value: float
    median: float
    ratio: float
    unit: str  # "MB/s" or "IOPS"

    @property
    def slow(self) -> bool:
        return self.ratio < SLOW_LINK


def slowest_node(points: list[StoragePoint]) -> SlowStorage | None:
    """Over the tests of one run and folder measured on two or more nodes, the node whose figure
    (IOPS in random and meta tests, else MB/s) is lowest against the median node's."""
    best: SlowStorage | None = None
    for sp in points:
        values = [(n, (n.iops if sp.iops_test else n.mbps).median) for n in sp.nodes]
        values = [(n, v) for n, v in values if np.isfinite(v)]
        if len(values) < 2 or sp.point.failed:
            continue
        med = float(stats.nanmedian(np.array([v for _n, v in values])))
        if not med > 0:
            continue
        node, value = min(values, key=lambda nv: nv[1])
        ratio = value / med
        if best is None or ratio < best.ratio:
            best = SlowStorage(sp.run, sp.folder, node, sp.label, value, med, ratio,
                               "IOPS" if sp.iops_test else "MB/s")
    return best


@dataclass(frozen=True)
class SdCheck:
    """One SD card (a node's folder on kind 'sd') against the A1 and A2 marks."""

    run: Run
    folder: str
    node: NodeFigure
    measured: dict  # test -> figure (write MB/s, randread and randwrite IOPS); missing: absent
    short: dict  # class -> [(test, measured, mark)] below the mark
    missing: tuple[str, ...]  # the tests the marks need that were not measured


def sd_checks(points: list[StoragePoint]) -> list[SdCheck]:
    """The SD cards among one run's folders and nodes, each against A1 and A2."""
    cards: dict[tuple[str, int], dict] = {}
    figures: dict[tuple[str, int], NodeFigure] = {}
    for sp in points:
        for n in sp.nodes:
            if str(n.device.get("kind", "")) != "sd":
                continue
            key = (sp.folder, n.node)
            figures.setdefault(key, n)
            cards.setdefault(key, {})
            if sp.test in SD_CLASSES["A1"] and not sp.point.failed:
                value = (n.mbps if sp.test == "write" else n.iops).median
                if np.isfinite(value):
                    cards[key][sp.test] = value
    out = []
    for (folder, _node), measured in cards.items():
        short = {cls: [(t, measured[t], mark) for t, mark in marks.items()
                       if t in measured and measured[t] < mark]
                 for cls, marks in SD_CLASSES.items()}
        missing = tuple(t for t in SD_CLASSES["A1"] if t not in measured)
        out.append(SdCheck(points[0].run, folder, figures[(folder, _node)], measured, short, missing))
    return out


def _nearest(run: Run, runs: list[Run]) -> list[Run]:
    """runs, run itself first, then those on the same hosts, then the others (baselines last)."""
    hosts = {h.get("hostname") for h in run.hosts}

    def rank(r: Run) -> int:
        if r is run:
            return 0
        return 1 if hosts & {h.get("hostname") for h in r.hosts} else 2 + r.is_baseline

    return sorted(runs, key=rank)


def fft_request(run: Run, runs: list[Run]) -> tuple[Run, FftPoint] | None:
    """The fft request to set the storage against: the largest verified point (the study's 64 × 5 s
    files request, with fft's defaults) of this run, else of a run on the same hosts, else of any
    other run given (baselines last)."""
    for r in _nearest(run, runs):
        usable = [p for p in r.points if p.verified != 0 and not r.invalid
                  and np.isfinite(p.input_bytes) and p.input_bytes > 0]
        if usable:
            return r, max(usable, key=lambda p: (p.scenario == "files", p.input_bytes))
    return None


@dataclass(frozen=True)
class ReadRate:
    """One reader's sequential read rate from a run's /io (B/s): median, slowest and fastest repetition."""

    Bps: float
    low_Bps: float
    high_Bps: float
    cold: bool  # from cold reads; False: only warm ones were in the file
    what: str  # "cold sequential read, FILE" (or warm, with why)


def read_rate(run: Run, folder: str | None = None) -> ReadRate | None:
    """What a request's files get from the disk: rank 0's MB/s in the sequential read tests that
    succeeded (on `folder` when given), cold ones preferred, since the files come from the disk and
    not the page cache; the median over repetitions, and over tests where there are several. None
    without such a test."""
    if run.io is None:
        return None
    reads = [p for p in run.io.points if p.test == "read" and p.status == "ok" and p.reps
             and p.data["mbps"].shape[1] and (folder is None or p.dir == folder)]
    cold = [p for p in reads if p.cold == 1]
    series = [p.data["mbps"][:, 0] for p in cold or reads]
    series = [x[np.isfinite(x) & (x > 0)] for x in series]
    series = [x for x in series if x.size]
    if not series:
        return None
    what = "cold" if cold else "warm (no cold read in the file)"
    return ReadRate(float(np.median([np.median(x) for x in series])) * MB, float(min(x.min() for x in series)) * MB,
                    float(max(x.max() for x in series)) * MB, bool(cold), f"{what} sequential read, {run.path.name}")


def io_source(run: Run, runs: list[Run]) -> Run | None:
    """The /io an fft run's reads are held to: its own (suite), else that of a run given with it on
    the same hosts, else of any run given with it; None when no run has /io."""
    return next((r for r in _nearest(run, runs) if r.io is not None), None)


def read_seconds(request_bytes: float, mbps: float) -> float:
    """Seconds to read `request_bytes` at `mbps` (MB = 10^6 bytes)."""
    return request_bytes / (mbps * MB) if mbps > 0 else float("nan")


def t_read(point: FftPoint) -> float:
    """fft's median t_read of the point (rank 0 reading and decoding the request)."""
    t = point.times.get("t_read")
    return float(stats.nanmedian(t)) if t is not None and np.isfinite(t).any() else float("nan")
