"""Write synthetic wulfbench result files that follow docs/schema.md exactly.

Timings come from a known model (linear scatter at alpha/beta, compute at a
fixed cost per flop, log-normal noise), so tests can check that the analysis
recovers it. Used by the tests and by browser_check.sh:

    /usr/bin/python3 tests/analysis/fixtures.py OUTDIR     # writes pi.h5, ec2.h5, i5.h5
"""

from __future__ import annotations

import argparse
import sys
from dataclasses import dataclass, field
from pathlib import Path

import h5py
import numpy as np

SCHEMA = "wulfbench/1"
FRAME = 1024
HOP = 512
RATE = 44100
FLOPS_PER_FRAME = 2.5 * FRAME * np.log2(FRAME)
SIZES_S = (0.5, 1.0, 2.0, 5.0, 10.0, 30.0)
FILES_N = (1, 2, 4, 8, 16)
MSG_BYTES = tuple(4 ** k for k in range(11))  # 1 B .. 1 MiB
LOAD_RPS = (1.0, 2.0, 4.0, 6.0, 8.0, 12.0)


@dataclass
class Cluster:
    """What the synthetic run looks like."""

    label: str = "pi4x4"
    hosts: tuple[str, ...] = ("pi0", "pi1", "pi2", "pi3")
    ranks_per_node: int = 1
    cpu_model: str = "Cortex-A72"
    s_per_flop: float = 2.0e-9
    c0_s: float = 2.0e-4
    alpha_s: float = 1.0e-4
    beta_Bps: float = 11.0e6
    noise: float = 0.01
    straggler_rank: int | None = 2
    straggler_factor: float = 1.5
    unstable_point: str | None = "p000"  # point id given 15 % noise
    baseline: bool = False
    reps: int = 9
    scenarios: tuple[str, ...] = ("sizes", "files")
    transfer: bool = True
    pairs_all: bool = False
    load: bool = True
    load_saturation_attrs: bool = False
    verified: int = 1
    status: str = "complete"
    failed_point: str | None = None  # point id whose verify/passed is 0
    fixed_strings: bool = False
    seed: int = 1
    schema: str = SCHEMA
    extra_attrs: dict = field(default_factory=dict)
    result: str = "spectra"  # peaks: 8 bytes per frame come back
    out_scale: float = 1.0  # spectra bytes per frame over 513 float32 bins
    link_rate_Bps: float | None = None  # as --link-rate records it on every point
    schedule: str = "static"  # fft's --schedule, on every point
    bibw_both: float | None = 2.0  # bibw's rate over bw's (2: full duplex); None: no bibw test

    @property
    def nranks(self) -> int:
        return len(self.hosts) * self.ranks_per_node


PI = Cluster()
EC2 = Cluster(label="ec2-c5x2", hosts=("ip-10-0-0-11", "ip-10-0-0-12"), ranks_per_node=4,
              cpu_model="Intel Xeon Platinum 8275CL", s_per_flop=0.25e-9, c0_s=2e-5,
              alpha_s=8e-5, beta_Bps=1.1e9, straggler_rank=None, unstable_point=None,
              load=False, pairs_all=True, seed=2)
I5 = Cluster(label="i5-baseline", hosts=("desktop",), cpu_model="Intel Core i5-8400",
             s_per_flop=0.4e-9, c0_s=1e-5, straggler_rank=None, unstable_point=None,
             baseline=True, transfer=False, load=False, seed=3)


def _str_attr(cfg: Cluster, value: str):
    return np.bytes_(value.encode()) if cfg.fixed_strings else value


def _str_dtype(cfg: Cluster):
    return "S64" if cfg.fixed_strings else h5py.string_dtype()


def _dataset(group: h5py.Group, name: str, data, units: str) -> h5py.Dataset:
    ds = group.create_dataset(name, data=data)
    ds.attrs["units"] = units
    return ds


def _root_attrs(f: h5py.File, cfg: Cluster, command: str, subcommand: str) -> None:
    nnodes = len(cfg.hosts)
    attrs = {
        "schema": cfg.schema, "version": "0.1.0", "git_rev": "abc1234",
        "created_utc": "2024-05-01T12:00:00Z", "command_line": command,
        "label": cfg.label, "subcommand": subcommand,
        "mpi_library": "Open MPI v4.1.4, package: Debian OpenMPI",
        "fftw_version": "fftw-3.3.10-sse2-avx", "hdf5_version": "1.10.8",
        "compiler": "gcc 12.2.0", "cflags": "-O2 -march=native",
        "status": cfg.status,
    }
    for key, value in attrs.items():
        f.attrs[key] = _str_attr(cfg, value)
    f.attrs["nranks"] = np.int32(cfg.nranks)
    f.attrs["nnodes"] = np.int32(nnodes)
    f.attrs["wtick_s"] = 1e-9
    f.attrs["baseline"] = np.int32(1 if cfg.baseline else 0)
    f.attrs["seed"] = np.int64(cfg.seed)
    f.attrs["verified"] = np.int32(cfg.verified)
    for key, value in cfg.extra_attrs.items():
        f.attrs[key] = value


def _hosts(f: h5py.File, cfg: Cluster) -> None:
    sdt = _str_dtype(cfg)
    dt = np.dtype([("rank", "<i4"), ("node", "<i4"), ("hostname", sdt), ("cpu_model", sdt),
                   ("cores", "<i4"), ("mem_bytes", "<i8"), ("cpu_mhz", "<f8"),
                   ("temp_c_start", "<f8"), ("temp_c_end", "<f8"), ("throttled", "<i4")])
    rows = []
    for r in range(cfg.nranks):
        node = r // cfg.ranks_per_node
        name = cfg.hosts[node]
        throttled = 1 if r == cfg.straggler_rank else 0
        rows.append((r, node, name.encode() if cfg.fixed_strings else name,
                     cfg.cpu_model.encode() if cfg.fixed_strings else cfg.cpu_model,
                     4, 4 * 2 ** 30, 1500.0, 45.0 + node, 61.0 + node, throttled))
    f.create_dataset("hosts", data=np.array(rows, dtype=dt))


def _points(cfg: Cluster) -> list[dict]:
    pts = []
    if "sizes" in cfg.scenarios:
        pts += [{"scenario": "sizes", "nfiles": 1, "seconds": s} for s in SIZES_S]
    if "files" in cfg.scenarios:
        pts += [{"scenario": "files", "nfiles": n, "seconds": 5.0} for n in FILES_N]
    return pts


def _split(total: int, parts: int) -> np.ndarray:
    base = np.full(parts, total // parts)
    base[: total % parts] += 1
    return base


def _fft(f: h5py.File, cfg: Cluster, rng: np.random.Generator) -> None:
    fft = f.create_group("fft")
    n = cfg.nranks
    for i, spec in enumerate(_points(cfg)):
        pid = f"p{i:03d}"
        g = fft.create_group(pid)
        samples = int(round(spec["seconds"] * RATE))
        frames_per_file = 1 + (samples - FRAME) // HOP
        frames = _split(spec["nfiles"] * frames_per_file, n)
        flops = frames * FLOPS_PER_FRAME
        bytes_in = frames * FRAME * 4
        bytes_out = frames * 8 if cfg.result == "peaks" else \
            np.round(frames * (FRAME // 2 + 1) * 4 * cfg.out_scale).astype(np.int64)
        input_bytes = int(bytes_in.sum())
        attrs = {"scenario": spec["scenario"], "mode": "stft", "precision": "single",
                 "window": "hann", "plan": "measure", "schedule": cfg.schedule, "result": cfg.result}
        for key, value in attrs.items():
            g.attrs[key] = _str_attr(cfg, value)
        for key, value in {"frame": FRAME, "hop": HOP, "sample_rate": RATE,
                           "nfiles": spec["nfiles"], "input_bytes": input_bytes,
                           "reps": cfg.reps, "warmup": 1, "root_computes": 1,
                           "baseline": int(cfg.baseline)}.items():
            g.attrs[key] = np.int64(value)
        g.attrs["seconds_per_file"] = float(spec["seconds"])
        if cfg.link_rate_Bps is not None:
            g.attrs["link_rate_Bps"] = float(cfg.link_rate_Bps)
        noise = 0.15 if pid == cfg.unstable_point else cfg.noise
        reps = cfg.reps
        factor = np.ones(n)
        if cfg.straggler_rank is not None and cfg.straggler_rank < n:
            factor[cfg.straggler_rank] = cfg.straggler_factor

        def jitter(shape):
            return rng.lognormal(0.0, noise, size=shape)

        t_compute = (cfg.c0_s + cfg.s_per_flop * flops * factor)[None, :] * jitter((reps, n))
        t_fft = 0.6 * t_compute
        if n > 1:
            send = cfg.alpha_s + bytes_in / cfg.beta_Bps
            send[0] = 0.0
            t_dist = np.cumsum(send)[None, :] * jitter((reps, n)) + 1e-6
            # the root receives the outputs one rank after another
            back = cfg.alpha_s + bytes_out / cfg.beta_Bps
            back[0] = 0.0
            t_gather = np.cumsum(back)[None, :] * jitter((reps, n)) + 1e-6
        else:
            t_dist = np.full((reps, n), 1e-6)
            t_gather = np.full((reps, n), 1e-6)
        t_total = (t_dist + t_compute).max(axis=1) + t_gather.max(axis=1) + 5e-4 * jitter(reps)
        t_read = 1e-3 + input_bytes / 200e6 * jitter(reps)
        _dataset(g, "t_read", t_read, "s")
        _dataset(g, "t_distribute", t_dist, "s")
        _dataset(g, "t_compute", t_compute, "s")
        _dataset(g, "t_fft", t_fft, "s")
        _dataset(g, "t_gather", t_gather, "s")
        _dataset(g, "t_total", t_total, "s")
        _dataset(g, "bytes_in", bytes_in.astype(np.int64), "bytes")
        _dataset(g, "bytes_out", bytes_out.astype(np.int64), "bytes")
        _dataset(g, "frames", frames.astype(np.int64), "count")
        _dataset(g, "flops", flops.astype(float), "flop")
        sdt = _str_dtype(cfg)
        idt = np.dtype([("name", sdt), ("sample_rate", "<i4"), ("channels", "<i4"),
                        ("bits", "<i4"), ("samples", "<i8"), ("bytes", "<i8"), ("peak_hz", "<f8")])
        rows = []
        for k in range(spec["nfiles"]):
            name = f"synthetic-{k}.wav"
            rows.append((name.encode() if cfg.fixed_strings else name, RATE, 1, 16, samples,
                         samples * 2 + 44, 440.0 * (k + 1)))
        g.create_dataset("inputs", data=np.array(rows, dtype=idt))
        v = g.create_group("verify")
        passed = 0 if pid == cfg.failed_point else 1
        v.attrs["passed"] = np.int32(passed)
        v.attrs["max_error"] = 1e-6 if passed else 0.2
        v.attrs["check"] = _str_attr(cfg, "tones+parseval+roundtrip")
        v.attrs["parseval_max_rel"] = 1e-7
        v.attrs["roundtrip_max_rel"] = 1e-6
        v.attrs["tones_expected"] = np.int32(spec["nfiles"])
        v.attrs["tones_found"] = np.int32(spec["nfiles"] - (0 if passed else 1))


def _transfer(f: h5py.File, cfg: Cluster, rng: np.random.Generator) -> None:
    tr = f.create_group("transfer")
    n = cfg.nranks
    sizes = np.asarray(MSG_BYTES, dtype=np.int64)
    reps = 5
    S = sizes.size
    node = np.arange(n) // cfg.ranks_per_node

    def link(s, r):
        # ranks on one node talk through shared memory: 10x better
        same = node[s] == node[r]
        return (cfg.alpha_s / 10, cfg.beta_Bps * 10) if same else (cfg.alpha_s, cfg.beta_Bps)

    def common(g, kind, pairs_mode="first"):
        g.attrs["kind"] = _str_attr(cfg, kind)
        g.attrs["pairs_mode"] = _str_attr(cfg, pairs_mode)
        g.attrs["window"] = np.int32(64)
        g.attrs["iters"] = _str_attr(cfg, "auto")
        g.attrs["time_per_size_s"] = 0.1
        g.attrs["root"] = _str_attr(cfg, "rotate")
        g.attrs["validated"] = np.int32(1)
        _dataset(g, "bytes", sizes, "bytes")
        _dataset(g, "reps", np.full(S, reps, dtype=np.int64), "count")

    pairs = np.array([(0, r) for r in range(1, min(n, 3))], dtype=np.int32)
    for test in ("pingpong", "bw", "bibw"):
        if test == "bibw" and cfg.bibw_both is None:
            continue
        g = tr.create_group(test)
        common(g, "p2p")
        t = np.empty((S, reps, len(pairs)))
        for j, (s, r) in enumerate(pairs):
            a, b = link(s, r)
            base = a + sizes / b if test == "pingpong" else a / 64 + sizes / b
            if test == "bibw":
                base = a / 64 + sizes / b * 2.0 / cfg.bibw_both
            t[:, :, j] = base[:, None] * rng.lognormal(0, 0.02, size=(S, reps))
        t[0, -1, :] = np.nan  # fewer reps recorded at the first size
        _dataset(g, "t", t, "s")
        _dataset(g, "pairs", pairs, "1")
        t_med = np.nanmedian(t, axis=1)
        _dataset(g, "t_med", t_med, "s")
        factor = 2.0 if test == "bibw" else 1.0
        _dataset(g, "bandwidth_Bps", factor * sizes[:, None] / t_med, "B/s")
    g = tr.create_group("ring")
    common(g, "ring")
    orders = np.array([np.arange(n), np.roll(np.arange(n)[::-1], 1)], dtype=np.int32)
    t = np.empty((S, reps, 2))
    for o in range(2):
        t[:, :, o] = ((cfg.alpha_s + sizes / cfg.beta_Bps) * (1 + 0.3 * o))[:, None] \
            * rng.lognormal(0, 0.02, size=(S, reps))
    _dataset(g, "t", t, "s")
    _dataset(g, "orders", orders, "1")
    t_med = np.nanmedian(t, axis=1)
    _dataset(g, "t_med", t_med, "s")
    _dataset(g, "bandwidth_Bps", n * sizes[:, None] / t_med, "B/s")
    steps = max(1.0, np.log2(n))
    for test, mult in (("barrier", 0), ("bcast", 1), ("scatter", 1), ("gather", 1),
                       ("allgather", 2), ("alltoall", n), ("reduce", 1), ("allreduce", 2)):
        g = tr.create_group(test)
        common(g, "collective")
        if test == "barrier":
            g["bytes"][...] = 0
            base = np.full(S, steps * cfg.alpha_s)
        else:
            base = steps * cfg.alpha_s + mult * sizes / cfg.beta_Bps
        spread = 1 + 0.2 * np.arange(n) / max(1, n - 1)
        t = base[:, None, None] * spread[None, None, :] * rng.lognormal(0, 0.03, size=(S, reps, n))
        _dataset(g, "t", t, "s")
        per_rank = np.nanmedian(t, axis=1)
        _dataset(g, "t_med", np.median(per_rank, axis=1), "s")
        with np.errstate(all="ignore"):
            _dataset(g, "bandwidth_Bps", sizes / np.median(per_rank, axis=1), "B/s")
    if cfg.pairs_all:
        g = tr.create_group("pairs_all")
        lat = np.full((n, n), np.nan)
        bw = np.full((n, n), np.nan)
        for s in range(n):
            for r in range(n):
                if s != r:
                    a, b = link(s, r)
                    lat[s, r] = (a + 8 / b) * rng.lognormal(0, 0.05)
                    bw[s, r] = 2 ** 20 / (a + 2 ** 20 / b) * rng.lognormal(0, 0.05)
        _dataset(g, "latency_s", lat, "s")
        _dataset(g, "bandwidth_Bps", bw, "B/s")
        g.attrs["latency_bytes"] = np.int64(8)
        g.attrs["bandwidth_bytes"] = np.int64(2 ** 20)


def _load(f: h5py.File, cfg: Cluster, rng: np.random.Generator) -> None:
    load = f.create_group("load")
    service = 0.15
    duration, warm_s, queue_limit = 10.0, 2.0, 8
    enum = h5py.enum_dtype({"done": 0, "rejected": 1, "unfinished": 2}, basetype="i1")
    for i, rps in enumerate(LOAD_RPS):
        g = load.create_group(f"s{i:03d}")
        arrivals = np.cumsum(rng.exponential(1 / rps, size=int(rps * duration * 2) + 5))
        arrivals = arrivals[arrivals < duration]
        R = arrivals.size
        t_start = np.full(R, np.nan)
        t_done = np.full(R, np.nan)
        status = np.zeros(R, dtype=np.int8)
        worker = np.full(R, -1, dtype=np.int32)
        free = 0.0
        ends: list[float] = []
        for k, t in enumerate(arrivals):
            waiting = sum(1 for e in ends if e > t)
            if waiting > queue_limit:
                status[k] = 1
                continue
            start = max(t, free)
            end = start + service * rng.lognormal(0, 0.05)
            free = end
            ends.append(end)
            t_start[k] = start
            if end > duration:
                status[k] = 2
            else:
                t_done[k] = end
                worker[k] = 1 + k % max(1, cfg.nranks - 1)
        for key, value in {"loop": "open", "dispatch": "least-loaded",
                           "client_source": "head"}.items():
            g.attrs[key] = _str_attr(cfg, value)
        g.attrs["clients"] = np.int32(4)
        g.attrs["offered_rps"] = rps
        g.attrs["duration_s"] = duration
        g.attrs["warmup_s"] = warm_s
        g.attrs["files_per_request"] = np.int32(1)
        g.attrs["seconds_per_file"] = 5.0
        g.attrs["queue_limit"] = np.int32(queue_limit)
        g.attrs["slo_ms"] = 1000.0
        g.attrs["think_ms"] = 0.0
        g.attrs["timed_out"] = np.int32(0)
        g.attrs["submitted"] = np.int64(R)
        g.attrs["done"] = np.int64((status == 0).sum())
        g.attrs["rejected"] = np.int64((status == 1).sum())
        g.attrs["unfinished"] = np.int64((status == 2).sum())
        _dataset(g, "client", (np.arange(R) % 4).astype(np.int32), "1")
        _dataset(g, "t_submit", arrivals, "s")
        _dataset(g, "t_start", t_start, "s")
        _dataset(g, "t_done", t_done, "s")
        _dataset(g, "worker", worker, "1")
        _dataset(g, "bytes", np.full(R, 441000 * 2, dtype=np.int64), "bytes")
        ds = g.create_dataset("status", data=status, dtype=enum)
        ds.attrs["units"] = "1"
        _dataset(g, "warmup", (arrivals < warm_s).astype(np.uint8), "1")
        _dataset(g, "t_queue", t_start - arrivals, "s")
        _dataset(g, "t_distribute", np.where(np.isnan(t_start), np.nan, 0.01), "s")
        _dataset(g, "t_compute", np.where(np.isnan(t_start), np.nan, service - 0.02), "s")
        _dataset(g, "t_return", np.where(np.isnan(t_start), np.nan, 0.01), "s")
    if cfg.load_saturation_attrs:
        load.attrs["saturation_rps"] = 6.0
        load.attrs["saturation_p95_s"] = 0.4
        load.attrs["first_fail_rps"] = 8.0
        load.attrs["fail_reason"] = _str_attr(cfg, "latency")


def write_run(path: Path | str, cfg: Cluster = PI) -> Path:
    """Write one result file for `cfg` at `path` and return the path."""
    path = Path(path)
    path.parent.mkdir(parents=True, exist_ok=True)
    rng = np.random.default_rng(cfg.seed)
    if cfg.baseline:
        command = "wulfbench fft --baseline --sweep sizes,files -o i5.h5"
    else:
        command = f"mpirun -np {cfg.nranks} wulfbench suite -o {path.name}"
    sub = "fft" if cfg.baseline or not (cfg.transfer or cfg.load) else "suite"
    with h5py.File(path, "w") as f:
        _root_attrs(f, cfg, command, sub)
        _hosts(f, cfg)
        if cfg.scenarios:
            _fft(f, cfg, rng)
        if cfg.transfer:
            _transfer(f, cfg, rng)
        if cfg.load:
            _load(f, cfg, rng)
    return path


def write_set(folder: Path | str) -> list[Path]:
    """A Pi cluster, an EC2 cluster and an i5 baseline."""
    folder = Path(folder)
    return [write_run(folder / "pi.h5", PI), write_run(folder / "ec2.h5", EC2),
            write_run(folder / "i5.h5", I5)]



def _replace(f: h5py.File, name: str, data) -> None:
    del f[name]
    f.create_dataset(name, data=data)


def _scaled(f: h5py.File, name: str, index, value) -> None:
    arr = f[name][()]
    arr[index] = value
    f[name][...] = arr


# Damage done to one point (fft/p001) or one transfer or load group of a good
# file; the analysis must name the dataset and skip that object.
ODD_VALUES = {
    "nan_total": ("fft/p001/t_total", lambda f: _scaled(f, "fft/p001/t_total", 1, np.nan)),
    "inf_compute": ("fft/p001/t_compute", lambda f: _scaled(f, "fft/p001/t_compute", (1, 2), np.inf)),
    "negative_total": ("fft/p001/t_total", lambda f: _replace(f, "fft/p001/t_total",
                                                               -f["fft/p001/t_total"][()])),
    "negative_gather": ("fft/p001/t_gather", lambda f: _scaled(f, "fft/p001/t_gather", (0, 1), -1e-3)),
    "wrong_shape": ("fft/p001/t_compute", lambda f: _replace(f, "fft/p001/t_compute",
                                                              np.ones((3, 7, 2)))),
    "short_reps": ("fft/p001/t_distribute", lambda f: _replace(f, "fft/p001/t_distribute",
                                                                np.ones((4, 4)))),
    "short_ranks": ("fft/p001/bytes_in", lambda f: _replace(f, "fft/p001/bytes_in",
                                                             np.ones(2, dtype=np.int64))),
    "negative_frames": ("fft/p001/frames", lambda f: _scaled(f, "fft/p001/frames", 0, -5)),
    "zero_total": ("fft/p001/t_total", lambda f: _scaled(f, "fft/p001/t_total", 2, 0.0)),
    "idle_frames": ("fft/p001/frames", lambda f: _scaled(f, "fft/p001/frames", slice(None), 0)),
    "scalar_total": ("fft/p001/t_total", lambda f: _replace(f, "fft/p001/t_total", 3.0)),
    "text_total": ("fft/p001/t_total", lambda f: _replace(f, "fft/p001/t_total",
                                                           np.array([b"a", b"b"]))),
    "inf_nfiles": ("fft/p001/@nfiles", lambda f: f["fft/p001"].attrs.__setitem__("nfiles", np.inf)),
    "missing_total": ("fft/p001", lambda f: f.__delitem__("fft/p001/t_total")),
    "negative_pingpong": ("transfer/pingpong/t_med",
                          lambda f: _scaled(f, "transfer/pingpong/t_med", (2, 0), -1.0)),
    "short_bw": ("transfer/bw/t_med", lambda f: _replace(f, "transfer/bw/t_med", np.ones((3, 2)))),
    "load_lengths": ("load/s001/t_done", lambda f: _replace(f, "load/s001/t_done", np.ones(3))),
    "load_before_submit": ("load/s002/t_done",
                           lambda f: _scaled(f, "load/s002/t_done", 0, -50.0)),
}


def write_odd(path: Path | str, kind: str, cfg: Cluster = PI) -> tuple[Path, str]:
    """A good run with one kind of bad value from ODD_VALUES; returns the path
    and the dataset that holds it."""
    where, damage = ODD_VALUES[kind]
    path = write_run(path, cfg)
    with h5py.File(path, "a") as f:
        damage(f)
    return path, where


def write_corrupt(path: Path | str, cfg: Cluster = PI, start: int = 2048,
                  step: int = 997) -> Path:
    """A good run with every step-th byte from `start` on inverted."""
    path = write_run(path, cfg)
    data = bytearray(Path(path).read_bytes())
    for offset in range(start, len(data), step):
        data[offset] ^= 0xFF
    Path(path).write_bytes(bytes(data))
    return path



WULFBENCH = Path(__file__).resolve().parents[2] / "build" / "wulfbench"


def run_wulfbench(nranks: int, *args: str, timeout: float = 240) -> None:
    """Run build/wulfbench under mpirun on nranks ranks (np > 2 oversubscribed);
    raises AssertionError with its output if it fails."""
    import os
    import shutil
    import subprocess
    env = dict(os.environ)
    if os.geteuid() == 0:
        env.update(OMPI_ALLOW_RUN_AS_ROOT="1", OMPI_ALLOW_RUN_AS_ROOT_CONFIRM="1")
    cmd = [shutil.which("mpirun") or "mpirun", "-np", str(nranks), "--oversubscribe",
           str(WULFBENCH), *map(str, args)]
    proc = subprocess.run(cmd, env=env, capture_output=True, text=True, timeout=timeout,
                          stdin=subprocess.DEVNULL)
    assert proc.returncode == 0, f"{' '.join(cmd)}\n{proc.stdout}\n{proc.stderr}"


SMALL_FFT = ("fft", "--sweep", "files", "--files", "1,4", "--file-seconds", "1", "--reps", "5",
             "--plan", "estimate", "-q")


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(
        description="Write synthetic wulfbench/1 result files (pi.h5, ec2.h5, i5.h5) for tests.")
    parser.add_argument("outdir", help="folder to write the files into (created if missing)")
    args = parser.parse_args(argv)
    for path in write_set(args.outdir):
        print(path)
    return 0


if __name__ == "__main__":
    sys.exit(main())


# Names added in this round (docs/schema.md): written onto a file that
# write_run made, so the older tests keep their files unchanged.

def add_paired_baseline(path: Path | str, speedups: dict[str, float], noise: float = 0.01,
                        seed: int = 11) -> None:
    """/fft/<id>/baseline/ with t_total[r] = speedup x cluster t_total[r] (x noise)."""
    rng = np.random.default_rng(seed)
    with h5py.File(path, "a") as f:
        for pid, s in speedups.items():
            g = f["fft"][pid]
            total = g["t_total"][()]
            reps = total.shape[0]
            b = g.create_group("baseline")
            base = s * total * rng.lognormal(0, noise, size=reps)
            _dataset(b, "t_total", base, "s")
            _dataset(b, "t_read", g["t_read"][()], "s")
            _dataset(b, "t_compute", 0.9 * base[:, None], "s")
            _dataset(b, "t_fft", 0.6 * base[:, None], "s")
            _dataset(b, "t_distribute", np.zeros((reps, 1)), "s")
            _dataset(b, "t_gather", np.zeros((reps, 1)), "s")
            b.attrs["paired"] = np.int32(1)
            b.attrs["order"] = "cluster-first"


def add_pipeline(path: Path | str, pid: str, chunks: int = 4, link_use: float | None = 0.8,
                 mtu: int | None = None) -> None:
    """schedule, overlap, link attributes (with mtu, the wire's too) and a timeline at one point."""
    with h5py.File(path, "a") as f:
        g = f["fft"][pid]
        total = g["t_total"][()]
        nranks = g["t_compute"].shape[1]
        g.attrs["schedule"] = "pipelined"
        g.attrs["chunk_frames"] = np.int64(64)
        _dataset(g, "overlap", np.full(total.shape[0], 1.35), "1")
        g.attrs["overlap"] = 1.35
        g.attrs["link_out_bytes"] = np.int64(3_530_000)
        g.attrs["link_in_bytes"] = np.int64(6_950_000)
        g.attrs["link_rate_Bps"] = 12.5e6 if link_use is not None else float("nan")
        g.attrs["link_bound_s"] = 6.95e6 / 12.5e6 if link_use is not None else float("nan")
        g.attrs["link_use"] = link_use if link_use is not None else float("nan")
        if mtu is not None:
            g.attrs["link_mtu"] = np.int64(mtu)
            g.attrs["link_framing"] = (mtu + 38) / (mtu - 52)
            g.attrs["link_wire_bound_s"] = g.attrs["link_bound_s"] * g.attrs["link_framing"]
            g.attrs["link_wire_use"] = g.attrs["link_use"] * g.attrs["link_framing"]
        phase = h5py.enum_dtype({"recv": 0, "compute": 1, "send": 2}, basetype="u1")
        dt = np.dtype([("rank", "<i4"), ("chunk", "<i4"), ("phase", phase),
                       ("t_start", "<f8"), ("t_end", "<f8")])
        rows = []
        step = float(np.median(total)) / (chunks + 2)
        for r in range(nranks):
            for k in range(chunks):
                t0 = (k + 0.1 * r) * step
                rows.append((r, k, 0, t0, t0 + 0.8 * step))
                rows.append((r, k, 1, t0 + step, t0 + 1.9 * step))
                rows.append((r, k, 2, t0 + 2 * step, t0 + 2.4 * step))
        g.create_dataset("timeline", data=np.array(rows, dtype=dt))


def add_reps_auto(path: Path | str, pid: str, reason: str = "max_reps") -> None:
    with h5py.File(path, "a") as f:
        g = f["fft"][pid]
        g.attrs["reps_mode"] = "auto"
        g.attrs["reps_stop_reason"] = reason
        g.attrs["target_ci"] = 0.03
        g.attrs["ci_halfwidth_rel"] = 0.071
        g.attrs["unstable"] = np.int32(1 if reason != "target_ci" else 0)


def add_transfer_next(path: Path | str, slow_link: tuple[int, int] | None = (1, 0),
                      seed: int = 12) -> None:
    """Statistics datasets on every test, and /transfer/pairs_shift and a
    near-uniform pairs_all (0.3 % spread) with one slow link."""
    rng = np.random.default_rng(seed)
    with h5py.File(path, "a") as f:
        tr = f["transfer"]
        tr.attrs["time_budget_s"] = 300.0
        tr.attrs["estimated_s"] = 120.0
        tr.attrs["elapsed_s"] = 131.0
        tr.attrs["cuts"] = ""
        for name in list(tr.keys()):
            g = tr[name]
            if "t" not in g:
                continue
            t = g["t"][()]
            med = g["t_med"][()]
            if g.attrs.get("kind") == "collective":
                per = np.nanmean(t, axis=1)
                stats_ = {"t_avg": per.mean(axis=1), "t_max": per.max(axis=1),
                          "t_min": per.min(axis=1)}
                cv = np.nanstd(t, axis=1, ddof=1).max(axis=1) / per.max(axis=1)
            else:
                stats_ = {"t_avg": np.nanmean(t, axis=1), "t_min": np.nanmin(t, axis=1),
                          "t_max": np.nanmax(t, axis=1),
                          "t_p95": np.nanpercentile(t, 95, axis=1)}
                cv = np.nanstd(t, axis=1, ddof=1) / np.nanmean(t, axis=1)
            if name == "pingpong":
                cv = cv.copy()
                cv[2] = 0.12  # one unstable size
            for key, arr in stats_.items():
                _dataset(g, key, np.asarray(arr).reshape(med.shape), "s")
            _dataset(g, "cv", np.asarray(cv).reshape(med.shape), "1")
            _dataset(g, "unstable", (np.asarray(cv) > 0.05).astype(np.int8).reshape(med.shape), "1")
        n = int(f.attrs["nranks"])
        for group in ("pairs_all", "pairs_shift"):
            if group in tr:
                del tr[group]
            g = tr.create_group(group)
            bw = 11.94e6 * (1 + 0.003 * rng.standard_normal((n, n)))
            lat = 1.2e-4 * (1 + 0.003 * rng.standard_normal((n, n)))
            if slow_link is not None and group == "pairs_shift":
                bw[slow_link] *= 0.6
            np.fill_diagonal(bw, np.nan)
            np.fill_diagonal(lat, np.nan)
            _dataset(g, "latency_s", lat, "s")
            _dataset(g, "bandwidth_Bps", bw, "B/s")
            g.attrs["latency_bytes"] = np.int64(8)
            g.attrs["bandwidth_bytes"] = np.int64(2 ** 20)
            if group == "pairs_shift":
                g.attrs["test"] = "bw"
                g.attrs["rounds"] = np.int32(n - 1)
                _dataset(g, "node_ratio", np.linspace(0.97, 0.85, int(f.attrs["nnodes"])), "1")


def add_dfft(path: Path | str, nranks: int, shapes=((64, 64, 64), (128, 128, 128)),
             gflops_at_1: float = 2.0, seed: int = 13) -> None:
    """/dfft/<id>/ points: 3-D r2c transforms whose local FFT scales with the
    ranks and whose transpose costs a fixed share."""
    rng = np.random.default_rng(seed)
    with h5py.File(path, "a") as f:
        d = f.require_group("dfft")
        for i, shape in enumerate(shapes):
            g = d.create_group(f"d{i:03d}")
            n = int(np.prod(shape))
            flops = 2.5 * n * np.log2(n)
            local = flops / (gflops_at_1 * 1e9) / nranks
            trans = 0.0 if nranks == 1 else 0.4 * local
            reps = 5
            t_local = local * rng.lognormal(0, 0.02, size=(reps, nranks))
            t_trans = np.full((reps, nranks), trans) * rng.lognormal(0, 0.02, size=(reps, nranks))
            t_total = t_local + t_trans + 1e-5
            g.attrs["dims"] = np.int32(3)
            g.attrs["shape"] = "x".join(map(str, shape))
            g.attrs["n"] = np.int64(n)
            g.attrs["kind"] = "r2c"
            g.attrs["precision"] = "double"
            g.attrs["transposed_out"] = np.int32(0)
            g.attrs["reps"] = np.int32(reps)
            g.attrs["warmup"] = np.int32(1)
            g.attrs["plan"] = "measure"
            g.attrs["gflops"] = flops / np.median(t_total.max(axis=1)) / 1e9
            _dataset(g, "t_total", t_total, "s")
            _dataset(g, "t_local_fft", t_local, "s")
            _dataset(g, "t_transpose", t_trans, "s")
            _dataset(g, "bytes_transposed", np.full(nranks, 16 * n // max(1, nranks), dtype=np.int64),
                     "bytes")
            _dataset(g, "local_n", np.full(nranks, n // nranks, dtype=np.int64), "count")
            v = g.create_group("verify")
            v.attrs["passed"] = np.int32(1)
            v.attrs["roundtrip_max_rel"] = 1e-15
            v.attrs["spectrum_max_rel"] = 1e-13
            v.attrs["check"] = "roundtrip+spectrum"


def node_scaling_set(folder: Path | str, nodes=(1, 2, 4, 8), model_break: bool = False) -> list[Path]:
    """Runs of one cluster at several node counts (one rank each), from the
    same model, so a fit on the smaller ones predicts the largest. With
    model_break the largest run has a 3x slower network and CPU."""
    folder = Path(folder)
    out = []
    for n in nodes:
        cfg = Cluster(label=f"pi-{n}n", hosts=tuple(f"pi{k}" for k in range(n)),
                      straggler_rank=None, unstable_point=None, load=False, transfer=False,
                      seed=40 + n, scenarios=("files",))
        if model_break and n == max(nodes):
            cfg = Cluster(**{**cfg.__dict__, "beta_Bps": cfg.beta_Bps / 3, "s_per_flop": cfg.s_per_flop * 3})
        path = write_run(folder / f"pi-{n}n.h5", cfg)
        with h5py.File(path, "a") as f:
            f.attrs["nnodes"] = np.int32(n)
        out.append(path)
    return out


T0_UTC = 1.7e9  # 2023-11-14 22:13:20 UTC: when add_power's synthetic runs start


def add_power(path: Path | str, watts, source: str = "rapl", idle_w=None,
              period_s: float = 1e-3, t0_utc: float = T0_UTC, gap_s: float = 1.0,
              rep_gap_s: float = 0.05) -> dict[str, tuple[float, float]]:
    """/power and every point's energy datasets (docs/schema.md): each node's leader
    (lowest rank) draws `watts[hostname]` (or `watts` on every node) during every
    repetition; the other ranks store NaN and "shared". Repetitions follow one another
    from t0_utc (rep_gap_s apart, a paired baseline repetition after each cluster one,
    gap_s between points, then the dfft points and the load steps). source "unmeasured" stores NaN energy.
    Returns each group's (first start, last end) in UTC seconds."""
    with h5py.File(path, "a") as f:
        hosts = f["hosts"][()]
        nranks = hosts.shape[0]
        names = [h.decode() if isinstance(h, bytes) else str(h) for h in hosts["hostname"]]
        leader = {}
        for r in range(nranks):
            leader.setdefault(int(hosts["node"][r]), r)
        lead = set(leader.values())
        w = np.array([(watts.get(names[r], np.nan) if isinstance(watts, dict) else watts)
                      if r in lead else np.nan for r in range(nranks)], dtype=float)
        idle = np.where(np.isfinite(w), w / 2 if idle_w is None else idle_w, np.nan)
        measured = source in ("rapl", "hwmon", "pi5")
        g = f.create_group("power")
        src = [(source if r in lead else "shared").encode() for r in range(nranks)]
        g.create_dataset("source", data=np.array(src, dtype="S16"))
        for name, value, units in (("idle_w", idle, "W"), ("period_s", period_s, "s"),
                                   ("period_err_s", period_s / 2, "s")):
            _dataset(g, name, np.where(np.isfinite(w) & measured, value, np.nan), units)
        _dataset(g, "idle_s", np.full(nranks, 3.0), "s")
        g.attrs["requested"] = "auto"
        g.attrs["caveat"] = ""
        windows = {}
        cursor = t0_utc + 3.0  # after the idle window

        def write(group, durations):
            nonlocal cursor
            reps = durations.size
            starts = np.empty(reps)
            for r in range(reps):
                starts[r] = cursor
                cursor += durations[r] + rep_gap_s
            energy = np.outer(durations, w) if measured else np.full((reps, nranks), np.nan)
            _dataset(group, "energy_j", energy, "J")
            group.create_dataset("power_short", data=(np.outer(durations < 10 * period_s,
                                                               np.isfinite(w))).astype(np.uint8))
            _dataset(group, "t_start_utc", starts, "s since 1970-01-01 UTC")
            _dataset(group, "t_end_utc", starts + durations, "s since 1970-01-01 UTC")
            return starts[0], starts[-1] + durations[-1]

        for pid in sorted(f["fft"].keys()) if "fft" in f else []:
            pg = f["fft"][pid]
            windows[f"/fft/{pid}"] = write(pg, pg["t_total"][()])
            if "baseline" in pg:
                windows[f"/fft/{pid}/baseline"] = write(pg["baseline"], pg["baseline/t_total"][()])
            cursor += gap_s
        for pid in sorted(f["dfft"].keys()) if "dfft" in f else []:
            windows[f"/dfft/{pid}"] = write(f["dfft"][pid], f["dfft"][pid]["t_total"][()].max(axis=1))
            cursor += gap_s
        for sid in sorted(f["load"].keys()) if "load" in f else []:
            sg = f["load"][sid]
            length = float(sg.attrs.get("t_end_s", sg.attrs.get("duration_s", 10.0)))
            windows[f"/load/{sid}"] = write(sg, np.array([length]))
            cursor += gap_s
        return windows


def write_meter_log(path: Path | str, t_from: float, t_to: float, watts: float,
                    step_s: float = 0.1, header: str = "time,watts", iso: bool = False,
                    delimiter: str = ",") -> Path:
    """A meter log at a constant `watts` from t_from to t_to (UTC seconds)."""
    import datetime as dt
    lines = [header] if header else []
    for t in np.arange(t_from, t_to + step_s / 2, step_s):
        stamp = (dt.datetime.fromtimestamp(t, dt.timezone.utc).isoformat(timespec="milliseconds")
                 .replace("+00:00", "Z") if iso else f"{t:.3f}")
        value = f"{watts:g}"
        lines.append(f"{stamp}{delimiter}{value.replace('.', ',') if delimiter == ';' else value}")
    Path(path).write_text("\n".join(lines) + "\n", encoding="utf-8")
    return Path(path)


def add_host_model(path: Path | str, model: str) -> None:
    """/hosts gains the `model` field (board or instance type) on every rank."""
    with h5py.File(path, "a") as f:
        old = f["hosts"][()]
        names = list(old.dtype.names) + ["model"]
        dt = np.dtype([(n, old.dtype[n]) for n in old.dtype.names] + [("model", h5py.string_dtype())])
        new = np.empty(old.shape, dtype=dt)
        for n in names[:-1]:
            new[n] = old[n]
        new["model"] = model
        del f["hosts"]
        f.create_dataset("hosts", data=new)
def node_series(folder: Path | str, nodes=(1, 2, 4), **changes) -> list[Path]:
    """One slow cluster (Cortex-A53 nodes pi1..piN, one rank each, labels 'pi-Nn' of one
    stem) at several node counts, files scenario only; `changes` go into its Cluster."""
    folder = Path(folder)
    out = []
    for n in nodes:
        cfg = Cluster(**{**Cluster(label=f"pi-{n}n", hosts=tuple(f"pi{k + 1}" for k in range(n)),
                                   cpu_model="Cortex-A53", straggler_rank=None, unstable_point=None,
                                   load=False, transfer=False, scenarios=("files",),
                                   seed=60 + n).__dict__, **changes})
        path = write_run(folder / f"pi-{n}n.h5", cfg)
        with h5py.File(path, "a") as f:
            f.attrs["nnodes"] = np.int32(n)
        out.append(path)
    return out
