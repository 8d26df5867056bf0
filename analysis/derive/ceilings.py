"""Every rate figure against the most the machines can give (docs/reading.md, "Ceilings"): the
machines a run used (/ceilings/machines, hosts grouped by the kernel's boot_id), which of them held
more ranks than cores, and each figure beside its ceiling. The C side computed and stored the fft
point's ceilings (`gflops_ceiling`, `kBps_ceiling` and whether even the slowest repetition passed
them); here they are read, and the figures the report derives itself (speedup, efficiency,
cpu_share, a link's MB/s) are held to theirs."""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from . import stats, storage
from ..read import records
from ..read.runs import Run
from .transfer import traffic_factor

# A cpu_share passes 1 only by the clocks' read-out: CPU time and wall time are read a few µs apart.
SHARE_NOISE = 0.02


@dataclass(frozen=True)
class Machine:
    name: str
    nodes: int
    ranks: int
    cores: int
    cores_usable: int
    cpu_quota: float
    copy_Bps: float
    link_mbps: int

    @property
    def oversubscribed(self) -> bool:
        return self.cores_usable > 0 and self.ranks > self.cores_usable


@dataclass(frozen=True)
class Check:
    """One figure against its ceiling. `ceiling` is NaN where none is known (`bound` says why)."""

    run: str
    where: str  # the point, test or rank
    figure: str  # "GFLOPS", "kB/s", "MB/s (pair 0-1)", "speedup", ...
    value: float
    ceiling: float
    bound: str  # what the ceiling is made of
    above: bool  # above the ceiling beyond the figure's own noise
    cause: str = ""  # the likely cause, when above


def _num(value, default=float("nan")) -> float:
    try:
        out = float(value)
    except (TypeError, ValueError):
        return default
    return out


def machines(run: Run) -> list[Machine]:
    """The run's machines as the program grouped them; for files before /ceilings, one per host
    name, with all its online cores usable."""
    if run.machines:
        return [Machine(str(m.get("name", "?")), int(_num(m.get("nodes"), 1)), int(_num(m.get("ranks"), 0)),
                        int(_num(m.get("cores"), -1)), int(_num(m.get("cores_usable"), -1)),
                        _num(m.get("cpu_quota")), _num(m.get("copy_Bps")), int(_num(m.get("link_mbps"), -1)))
                for m in run.machines]
    out: dict[str, list[dict]] = {}
    for h in run.hosts:
        out.setdefault(str(h.get("hostname", "?")), []).append(h)
    return [Machine(name, 1, len(hs), int(_num(hs[0].get("cores"), -1)), int(_num(hs[0].get("cores"), -1)),
                    float("nan"), float("nan"), int(_num(hs[0].get("link_mbps"), -1)))
            for name, hs in out.items()]


def machine_of(run: Run) -> dict[int, int]:
    """Rank -> index into machines(run), by boot_id (by host name in older files)."""
    ms = run.machines
    out = {}
    for h in run.hosts:
        rank = int(_num(h.get("rank"), -1))
        if ms:
            boot = str(h.get("boot_id", "") or "")
            key = [i for i, m in enumerate(ms) if (str(m.get("boot_id", "")) == boot if boot
                                                   else str(m.get("name")) == str(h.get("hostname")))]
        else:
            names = list(dict.fromkeys(str(x.get("hostname", "?")) for x in run.hosts))
            key = [names.index(str(h.get("hostname", "?")))]
        if key:
            out[rank] = key[0]
    return out


def oversubscribed(run: Run) -> list[Machine]:
    return [m for m in machines(run) if m.oversubscribed]


def oversubscription_line(run: Run) -> str:
    """The Read first line for a run whose machines held more ranks than usable cores; "" if none."""
    over = oversubscribed(run)
    if not over:
        return ""
    return _over_text(over)


def oversubscription_lines(runs: list[Run]) -> list[str]:
    """One Read first line per machine layout, naming every run that ran on it oversubscribed."""
    by_text: dict[str, list[str]] = {}
    for run in runs:
        over = oversubscribed(run)
        if over:
            by_text.setdefault(_over_text(over), []).append(f"**{run.name}** ({run.path.name})")
    return [f"{', '.join(names)}: {text}" for text, names in by_text.items()]


def _over_text(over: list[Machine]) -> str:
    worst = max(over, key=lambda m: m.ranks / max(m.cores_usable, 1))
    quota = f", a cgroup quota of {worst.cpu_quota:.2f} CPUs" if np.isfinite(worst.cpu_quota) else ""
    more = f" ({len(over)} machines so; the most crowded)" if len(over) > 1 else ""
    return (f"OVERSUBSCRIBED: {worst.name}{more} ran {worst.ranks} ranks on {worst.cores_usable} usable "
            f"core{'s' if worst.cores_usable != 1 else ''} ({worst.cores} online{quota}, "
            f"{worst.nodes} node{'s' if worst.nodes != 1 else ''}). The ranks took turns, so every "
            "per-rank phase time includes the wait for a core, and no rate can pass what the cores do: "
            "each rate is held to its ceiling in \"Figures against their ceilings\".")


def _fft_checks(run: Run) -> list[Check]:
    out = []
    for pt in run.points:
        a = pt.attrs
        ceiling = _num(a.get("gflops_ceiling"))
        cores = int(_num(a.get("cores_used"), 0))
        core = _num(a.get("core_gflops"))
        bound = (f"{cores} core{'s' if cores != 1 else ''} x {core:.3g} GFLOPS (the best rank's own rate)"
                 if np.isfinite(ceiling) else "none recorded (a file before ceilings)")
        cause = _cause(run)
        out.append(Check(run.name, pt.id, "GFLOPS", _num(a.get("gflops")), ceiling, bound,
                         int(_num(a.get("gflops_above_ceiling"), 0)) == 1, cause))
        kbps = _num(a.get("kBps"))
        if not np.isfinite(kbps):
            t = pt.times.get("t_total")
            kbps = pt.input_bytes / 1000.0 / stats.nanmedian(t) if t is not None and t.size else float("nan")
        kceil = _num(a.get("kBps_ceiling"))
        link = " or the link's bound, the lower" if _num(a.get("link_bound_s"), 0) > 0 else ""
        out.append(Check(run.name, pt.id, "kB/s", kbps, kceil,
                         f"the audio at the GFLOPS ceiling{link}" if np.isfinite(kceil)
                         else "none recorded (a file before ceilings)",
                         int(_num(a.get("kBps_above_ceiling"), 0)) == 1, cause))
    return out


def _cause(run: Run) -> str:
    if oversubscribed(run):
        return "oversubscription: ranks took turns on the cores, and each rank's own window was short"
    return "caches (a rank's share fits where the whole does not) or the clocks' alignment"


def _share_checks(run: Run) -> list[Check]:
    try:
        rec = records.cpu_shares(run.path)
    except OSError:
        return []
    out = []
    for pid, share, _base in rec.points:
        if share is None or share.size == 0:
            continue
        med = stats.nanmedian(share.reshape(share.shape[0], -1), axis=0)
        lo = stats.nanmin(share.reshape(share.shape[0], -1), axis=0)
        if not np.any(np.isfinite(med)):
            continue
        q = int(np.nanargmax(med))
        out.append(Check(run.name, f"{pid} rank {q}", "cpu_share (the highest rank)", float(med[q]), 1.0,
                         "one core: a rank's thread cannot run more than its wall time",
                         bool(np.isfinite(lo[q]) and lo[q] > 1.0 + SHARE_NOISE), "the clocks"))
    return out


def storage_checks(run: Run, io_run: Run | None) -> list[Check]:
    """Each fft point that read WAV files: rank 0's read of its inputs (input bytes over t_read_io, the
    files' bytes coming in, per repetition; over t_read in files without it or that read ahead)
    against the cold sequential read rate wulfbench io measured (io_run's /io: the run's own or one
    given with it).
    Above only when even its slowest repetition passes the io read's fastest: then the inputs came
    from the page cache, not the disk."""
    rate = storage.read_rate(io_run) if io_run is not None else None
    out = []
    for pt in run.points:
        # the files' bytes coming in, where the point split them from the decode; else all of t_read.
        # Read ahead, t_read_io is only the wait the decode did not hide, so the bytes came in over t_read.
        split = pt.t_read_io is not None and not pt.read_ahead
        t = pt.t_read_io if split else pt.times.get("t_read")
        what = f"read MB/s (inputs over {'t_read_io' if split else 't_read'})"
        if str(pt.attrs.get("input", "")) != "wav" or t is None or not np.any(np.isfinite(t) & (t > 0)):
            continue
        with np.errstate(all="ignore"):
            mbps = pt.input_bytes / t[np.isfinite(t) & (t > 0)] / 1e6
        if rate is None or not rate.cold:
            out.append(Check(run.name, pt.id, what, float(np.median(mbps)),
                             float("nan"), "none: no cold sequential read of wulfbench io in the run or "
                             "given with it", False))
            continue
        ceil, high = rate.Bps / 1e6, rate.high_Bps / 1e6
        out.append(Check(run.name, pt.id, what, float(np.median(mbps)), ceil,
                         f"wulfbench io's {rate.what} ({ceil:.3g} MB/s, its fastest repetition {high:.3g})",
                         bool(mbps.min() > high), "page cache: the inputs were read warm"))
    return out


def speedup_checks(comparisons) -> list[Check]:
    """Each speedup against p, and its efficiency against 100 %: above only when even the CI's
    low end passes p."""
    out = []
    for c in comparisons:
        p = c.p
        if not (p and np.isfinite(c.speedup)):
            continue
        lo = c.ci_lo if np.isfinite(c.ci_lo) else c.speedup
        above = lo > p
        cause = ("a slow one-process baseline (shared core, throttled, swapped) or caches: "
                 "a rank's share fits where the whole does not")
        where = f"{c.cluster.point.id} ({c.kind})"
        out.append(Check(c.run.name, where, "speedup", c.speedup, float(p), f"p = {p} ranks", above, cause))
        out.append(Check(c.run.name, where, "efficiency", c.efficiency, 1.0, "100 %", above, cause))
    return out


def _pair_check(run: Run, ms: list[Machine], name: str, same: int | None, mbps: int) -> tuple[float, str, str]:
    """(ceiling B/s, what it is, the likely cause when passed) of a pair on one machine (same) or
    across machines at the slower end's line rate mbps."""
    if same is not None:
        return (ms[same].copy_Bps, f"memcpy on {ms[same].name} (one machine: the bytes go through its memory)",
                "caches: the message fits in a cache, which is faster than memory")
    ceil = traffic_factor(name) * mbps * 1e6 / 8 if mbps > 0 else float("nan")
    bound = (f"the line rate, {mbps} Mbit/s" + (" each way" if name == "bibw" else "")
             if mbps > 0 else "unknown (the link reports no speed)")
    return ceil, bound, "the clocks, or a link faster than it reports"


def _transfer_checks(run: Run) -> list[Check]:
    """Per p2p test, the pair closest to its ceiling among pairs on one machine, and among pairs
    across machines: two rows at most, whatever the rank count."""
    ms, where = machines(run), machine_of(run)
    out = []
    for name, test in run.transfer.items():
        if test.kind != "p2p" or test.pairs is None:
            continue
        bw = test.bandwidth if test.bandwidth is not None else (
            traffic_factor(name) * test.bytes[:, None] / test.t_med)
        if bw.ndim != 2 or bw.shape[1] != test.pairs.shape[0]:
            continue
        low = bw
        if test.t is not None and test.t.ndim == 3 and test.t.shape[2] == bw.shape[1]:
            with np.errstate(all="ignore"):
                low = bw * test.t_med / stats.nanmax(test.t, axis=1)
        best: dict[bool, tuple[float, Check]] = {}
        for k, (a, b) in enumerate(test.pairs):
            ma, mb = where.get(int(a)), where.get(int(b))
            col = bw[:, k]
            if ma is None or mb is None or not np.any(np.isfinite(col)):
                continue
            ceil, bound, cause = _pair_check(run, ms, name, ma if ma == mb else None,
                                             min(ms[ma].link_mbps, ms[mb].link_mbps))
            i = int(np.nanargmax(col))
            ratio = col[i] / ceil if np.isfinite(ceil) and ceil > 0 else -np.inf
            above = bool(np.isfinite(ceil) and np.isfinite(low[i, k]) and low[i, k] > ceil)
            check = Check(run.name, f"{name} {int(test.bytes[i])} B", f"MB/s (ranks {int(a)}-{int(b)})",
                          float(col[i]) / 1e6, ceil / 1e6, bound, above, cause)
            key = ma == mb
            if key not in best or ratio > best[key][0]:
                best[key] = (ratio, check)
        out += [c for _r, c in best.values()]
    return out


def dfft_checks(run: Run, items: list[tuple]) -> list[Check]:
    """Each distributed FFT (items: its DfftStats and its point)'s GFLOPS (no one-core rate of its kernel is recorded, so no ceiling)
    and its slowest rank's transpose MB/s against the `transpose_Bps_ceiling` the program stored
    (one machine's memcpy, else twice the slowest line rate)."""
    out = []
    one = len(machines(run)) == 1
    cause = "caches: a rank's blocks fit in a cache" if one else "the clocks, or a link faster than it reports"
    for d, point in items:
        out.append(Check(run.name, f"dfft {d.id}", "GFLOPS", d.gflops, float("nan"),
                         "none: no one-core rate of this kernel is recorded", False))
        v = d.transpose_Bps_min
        ceil = _num(point.attrs.get("transpose_Bps_ceiling"))
        if np.isfinite(v):
            out.append(Check(run.name, f"dfft {d.id}", "transpose MB/s (slowest rank)", v / 1e6, ceil / 1e6,
                             ("memcpy on one machine" if one else "twice the slowest line rate")
                             if np.isfinite(ceil) else "none recorded", bool(np.isfinite(ceil) and v > ceil), cause))
    return out


def load_checks(run: Run, sat) -> list[Check]:
    """The load run's served rate at saturation: a request's work is the fft kernel's, whose
    one-core rate load does not record, so the ceiling is named as unknown."""
    rps = float(getattr(sat, "saturation_rps", float("nan")))
    if not np.isfinite(rps):
        return []
    return [Check(run.name, "load, saturation", "requests/s served", rps, float("nan"),
                  "none: load records no one-core rate of its kernel", False)]


def run_checks(run: Run) -> list[Check]:
    """Every rate of one run against its ceiling (speedups come from speedup_checks, dfft and load
    from dfft_checks and load_checks)."""
    return _fft_checks(run) + _share_checks(run) + _transfer_checks(run)


def above_ids(run: Run) -> set[str]:
    """The fft points whose GFLOPS or kB/s passed the ceiling."""
    return {pt.id for pt in run.points
            if int(_num(pt.attrs.get("gflops_above_ceiling"), 0)) == 1
            or int(_num(pt.attrs.get("kBps_above_ceiling"), 0)) == 1}
