"""What a result file records about the run's own time, as stored: the root attributes of its timeline
and peak memory (docs/schema.md, `/` attributes), and the stored times of every window it measured.
analysis.derive.owntime holds the rule that turns them into seconds."""

from __future__ import annotations

from dataclasses import dataclass, field

import h5py
import numpy as np

from .runs import number_or

# The root attributes read here; NaN where a file has none (files before them).
OWN_ATTRS = ("t_main_utc", "t_run_start_utc", "t_run_end_utc", "t_close_utc", "own_plan_s",
             "own_clock_align_s", "own_write_s", "peak_rss_rank0_bytes", "peak_rss_max_bytes",
             "peak_rss_max_rank")


@dataclass
class OwnRecord:
    """The timeline attributes and every window's stored times, by the group that holds them."""

    attrs: dict[str, float]
    # fft points, their paired baselines, dfft points: (t_start_utc, t_end_utc) [reps]
    utc: dict[str, tuple[np.ndarray, np.ndarray]] = field(default_factory=dict)
    load_s: dict[str, float] = field(default_factory=dict)  # load step: t_end_s, its start to its end
    io: dict[str, tuple[np.ndarray, np.ndarray]] = field(default_factory=dict)  # t_start, t_end [reps, nranks]
    # transfer test: (t [S, R, ...], reps [S], batch [S] or None, window [S] or None)
    transfer: dict[str, tuple[np.ndarray, np.ndarray, np.ndarray | None, np.ndarray | None]] = \
        field(default_factory=dict)
    idle_s: float = 0.0  # the idle power window before the first point (/power/idle_s), 0 when skipped


def _floats(group: h5py.Group, name: str) -> np.ndarray | None:
    if name not in group or not isinstance(group[name], h5py.Dataset):
        return None
    return np.asarray(group[name][()], dtype=float)


def read_own(fh: h5py.File) -> OwnRecord:
    rec = OwnRecord(attrs={k: number_or(fh.attrs.get(k), float("nan")) for k in OWN_ATTRS})

    def visit(name: str, obj) -> None:
        if name.startswith("load/") or not isinstance(obj, h5py.Group):
            return
        start, end = _floats(obj, "t_start_utc"), _floats(obj, "t_end_utc")
        if start is not None and end is not None and start.shape == end.shape:
            rec.utc["/" + name] = (start.reshape(-1), end.reshape(-1))

    for top in ("fft", "dfft"):
        if top in fh:
            fh[top].visititems(lambda name, obj, top=top: visit(f"{top}/{name}", obj))
    for sid, step in (fh["load"].items() if "load" in fh else ()):
        if isinstance(step, h5py.Group) and "t_end_s" in step.attrs:
            rec.load_s[f"/load/{sid}"] = number_or(step.attrs["t_end_s"], float("nan"))
    for pid, point in (fh["io"].items() if "io" in fh else ()):
        start, end = (_floats(point, "t_start"), _floats(point, "t_end")) if isinstance(point, h5py.Group) \
            else (None, None)
        # A test that failed before its first repetition stored no times, and has no window.
        if start is not None and end is not None and start.shape == end.shape and start.size:
            rec.io[f"/io/{pid}"] = (start.reshape(start.shape[0] if start.ndim else 1, -1),
                                    end.reshape(end.shape[0] if end.ndim else 1, -1))
    for name, test in (fh["transfer"].items() if "transfer" in fh else ()):
        if not isinstance(test, h5py.Group):
            continue
        t, reps = _floats(test, "t"), _floats(test, "reps")
        if t is not None and reps is not None and t.ndim >= 2 and reps.shape == (t.shape[0],):
            rec.transfer[name] = (t, reps, _floats(test, "batch"), _floats(test, "window"))
    idle = _floats(fh["power"], "idle_s") if "power" in fh and isinstance(fh["power"], h5py.Group) else None
    if idle is not None and idle.size and np.isfinite(idle).any():
        rec.idle_s = float(np.nanmax(idle))
    return rec
