"""The typed runs the reader returns: `Run` and what it holds (`FftPoint`, `TransferTest`,
`PairsAll`, `LoadStep`, `IoGroup` of `IoPoint`s), and `name_runs`, which gives every run a short
unique name."""

from __future__ import annotations

from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import numpy as np



TIME_SERIES = ("t_read", "t_distribute", "t_compute", "t_fft", "t_gather", "t_total")


PER_RANK_TIMES = ("t_distribute", "t_compute", "t_fft", "t_gather")


TRANSFER_EXTRA = ("t_avg", "t_min", "t_max", "t_p95", "cv", "unstable")  # shaped like t_med


LOAD_STATUS = {0: "done", 1: "rejected", 2: "unfinished"}


# per repetition or step, not per request: read by analysis.energy (docs/energy.md)
ENERGY_DATASETS = ("energy_j", "power_short", "t_start_utc", "t_end_utc", "sampler_cpu_share")


def number_or(value: Any, default: float) -> float:
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
    # As the program stored them (None in older files): each repetition's slowest rank, and what
    # its distribute, compute and gather leave of t_total.
    slowest_rank: np.ndarray | None = None
    t_over: np.ndarray | None = None
    # Rank 0's time in each repetition outside t_read and t_total (agreements, start barrier); None
    # in files before it and in baselines.
    t_sync: np.ndarray | None = None
    # Of each repetition's t_read, the time spent getting the input files' bytes (the rest decodes);
    # None in files before it.
    t_read_io: np.ndarray | None = None
    # Where the what-if pooled runs of one configuration into this point (analysis.find.whatif.pool):
    # each run's median t_total; empty for a point of one run.
    run_medians: tuple[float, ...] = ()

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
        return int(number_or(self.attrs.get("frame"), 0))

    @property
    def nfiles(self) -> int:
        return int(number_or(self.attrs.get("nfiles"), 0))

    @property
    def seconds_per_file(self) -> float:
        return float(number_or(self.attrs.get("seconds_per_file"), float("nan")))

    @property
    def input_bytes(self) -> float:
        value = number_or(self.attrs.get("input_bytes"), float("nan"))
        if np.isnan(value):
            value = float(np.nansum(self.bytes_in))
        return float(value)

    @property
    def read_ahead(self) -> bool:
        """Whether rank 0 read each input file's bytes while it decoded the one before (then t_read
        is about the larger of the two, and t_read_io the wait the decode did not hide); False in
        files before it."""
        return int(number_or(self.attrs.get("input_read_ahead"), 0)) == 1

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
        return int(number_or(self.verify.get("passed"), -1))

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


# /io/<id>/ datasets, each [reps, nranks] (lat_s [reps, nranks, 3], agg_* [reps]);
# the meta rates only in meta tests.
IO_SERIES = ("t_start", "t_end", "bytes", "ops", "mbps", "iops", "lat_s", "agg_mbps", "agg_iops",
             "create_per_s", "stat_per_s", "delete_per_s")


READ_TESTS = ("read", "randread", "shared-read")  # where the cold rule applies


@dataclass
class IoPoint:
    """One `/io/<id>/` group: a test on one folder (docs/schema.md, `/io`)."""

    id: str
    attrs: dict[str, Any]
    data: dict[str, np.ndarray]  # IO_SERIES as stored; absent names are absent

    @property
    def test(self) -> str:
        return str(self.attrs.get("test", "?"))

    @property
    def dir(self) -> str:
        return str(self.attrs.get("dir", "?"))

    @property
    def status(self) -> str:
        return str(self.attrs.get("status", "") or "ok")

    @property
    def failed(self) -> bool:
        return self.status.startswith("failed")

    @property
    def cold(self) -> int:
        """1 the cold rule held, 0 warm (read tests); -1 a write or not recorded."""
        return int(number_or(self.attrs.get("cold"), -1))

    @property
    def reps(self) -> int:
        mbps = self.data.get("mbps")
        return int(mbps.shape[0]) if mbps is not None and mbps.ndim >= 1 else 0


@dataclass
class IoGroup:
    """`/io`: the run's folders, every node's device under each, and the tests."""

    attrs: dict[str, Any]
    devices: list[dict[str, Any]]  # one row per node and folder
    points: list[IoPoint]

    def device(self, node: int, folder: str) -> dict[str, Any]:
        for row in self.devices:
            if int(number_or(row.get("node"), -1)) == node and str(row.get("dir")) == folder:
                return row
        return {}


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
    io: IoGroup | None = None  # /io (wulfbench io); None in files without it
    # /ceilings/machines: the hosts grouped by the kernel's boot_id ([] in files before it)
    machines: list[dict[str, Any]] = field(default_factory=list)
    # the run's own timeline and its windows' stored times (analysis.read.owntime.OwnRecord); None
    # when they could not be read
    own: Any = None

    @property
    def label(self) -> str:
        return str(self.attrs.get("label", "") or "")

    @property
    def status(self) -> str:
        return str(self.attrs.get("status", "") or "unknown")

    @property
    def verified(self) -> int:
        return int(number_or(self.attrs.get("verified"), -1))

    @property
    def invalid(self) -> bool:
        """The run failed verification: its numbers must not be used."""
        return self.verified == 0 or self.status == "invalid"

    @property
    def is_baseline(self) -> bool:
        return int(number_or(self.attrs.get("baseline"), 0)) == 1

    @property
    def nranks(self) -> int:
        value = int(number_or(self.attrs.get("nranks"), 0))
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
