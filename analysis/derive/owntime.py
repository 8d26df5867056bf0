"""The run's own time: its wall time, the time inside the windows it measured, and what it spent
outside them, split into the parts the file tells apart (docs/schema.md, `/` attributes; docs/design.md,
"Scale"). The one rule for "the measured windows" is `windows_s`; tests/bench/scale_bench.sh uses it too."""

from __future__ import annotations

import math
from dataclasses import dataclass

import numpy as np

# The parts of the wall time, in the order the report shows them; they add up to wall_s.
PARTS = ("startup_s", "windows_s", "plan_s", "clock_align_s", "write_s", "other_s")
PART_TITLES = {
    "startup_s": "start-up",
    "windows_s": "windows",
    "plan_s": "planning",
    "clock_align_s": "clock alignment",
    "write_s": "writing",
    "other_s": "the rest",
}


def windows_s(own) -> dict[str, float]:
    """Seconds inside the windows a file measured, by kind (fft, dfft, load, io, transfer, idle):
    - fft points, their paired baselines and dfft points: each recorded repetition's t_end_utc − t_start_utc;
    - load steps: each step's t_end_s, from its start to its last answer (its setup and clock probes are
      before it);
    - io: each repetition's last close − first open over the ranks;
    - transfer: each recorded repetition's slowest pair or rank, times the operations one repetition timed
      (pingpong: 2 × batch half round trips; bw, bibw: a window of messages; the rest: one);
    - the idle power window before the first point."""
    out = {"fft": 0.0, "dfft": 0.0, "load": 0.0, "io": 0.0, "transfer": 0.0, "idle": float(own.idle_s)}
    for group, (start, end) in own.utc.items():
        kind = "dfft" if group.startswith("/dfft/") else "fft"
        out[kind] += float(np.nansum(end - start))
    out["load"] = float(np.nansum(list(own.load_s.values()))) if own.load_s else 0.0
    for start, end in own.io.values():
        with np.errstate(all="ignore"):
            span = np.nanmax(end, axis=1) - np.nanmin(start, axis=1) if np.isfinite(start).any() else np.zeros(1)
        out["io"] += float(np.nansum(span))
    for name, (t, reps, batch, window) in own.transfer.items():
        for s in range(t.shape[0]):
            rows = t[s, : int(reps[s]) if math.isfinite(reps[s]) else 0]
            rows = rows.reshape(rows.shape[0], -1)
            if not rows.size or not np.isfinite(rows).any():
                continue
            per_rep = np.nanmax(np.where(np.isfinite(rows), rows, -np.inf), axis=1)
            mult = 1.0
            if name == "pingpong" and batch is not None:
                mult = 2.0 * float(batch[s])
            elif name in ("bw", "bibw") and window is not None:
                mult = float(window[s])
            out["transfer"] += float(np.sum(per_rep[np.isfinite(per_rep)])) * mult
    return out


@dataclass
class OwnTime:
    """One run's own time (s) and peak memory (bytes). NaN where the file does not say: a file before
    the timeline attributes has only windows_s (and maybe the memory)."""

    wall_s: float
    startup_s: float
    windows_s: float
    plan_s: float
    clock_align_s: float
    write_s: float
    other_s: float
    windows_by_kind: dict[str, float]
    rss_rank0_bytes: float
    rss_max_bytes: float
    rss_max_rank: float

    @property
    def outside_s(self) -> float:
        return self.wall_s - self.windows_s

    def part(self, key: str) -> float:
        return float(getattr(self, key))


def own_time(own) -> OwnTime:
    """The split of one file's wall time (rank 0's clock, from main's entry to the close): start-up,
    the measured windows (windows_s), rank 0's planning, clock alignment and writing after the start,
    and the rest. The parts add up to the wall time by construction; the rest is what is left."""
    a = own.attrs
    by_kind = windows_s(own)
    inside = float(sum(by_kind.values()))
    wall = a["t_close_utc"] - a["t_main_utc"]
    # The idle power window is measured, and comes before the subcommand's start.
    startup = a["t_run_start_utc"] - a["t_main_utc"] - by_kind["idle"]
    known = startup + inside + a["own_plan_s"] + a["own_clock_align_s"] + a["own_write_s"]
    return OwnTime(wall_s=wall, startup_s=startup, windows_s=inside, plan_s=a["own_plan_s"],
                   clock_align_s=a["own_clock_align_s"], write_s=a["own_write_s"], other_s=wall - known,
                   windows_by_kind=by_kind, rss_rank0_bytes=a["peak_rss_rank0_bytes"],
                   rss_max_bytes=a["peak_rss_max_bytes"], rss_max_rank=a["peak_rss_max_rank"])
