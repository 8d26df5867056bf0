"""Reading energy: `/power` and every point's energy datasets (docs/energy.md), in a forked child
(reader.in_child). A file without them gives an empty FileEnergy."""

from __future__ import annotations

from dataclasses import dataclass, field
from pathlib import Path

import h5py
import numpy as np

from .h5groups import text
from .reader import in_child, open_h5
from .runs import ENERGY_DATASETS as ENERGY


POWER = ("idle_w", "idle_s", "period_s", "period_err_s")


@dataclass
class Power:
    """`/power`: per rank (index = rank)."""

    source: list[str]
    idle_w: np.ndarray
    idle_s: np.ndarray
    period_s: np.ndarray
    period_err_s: np.ndarray
    requested: str = ""
    caveat: str = ""
    reader: list[str] = field(default_factory=list)  # sysfs, mailbox, vcgencmd or "" per rank


@dataclass
class Series:
    """The energy datasets of one point (`/fft/<id>`, its `baseline`, `/dfft/<id>`,
    `/load/<id>`)."""

    energy_j: np.ndarray | None = None  # [reps, nranks]
    power_short: np.ndarray | None = None  # [reps, nranks]
    t_start_utc: np.ndarray | None = None  # [reps]
    t_end_utc: np.ndarray | None = None
    sampler_cpu_share: np.ndarray | None = None  # [nranks]: of one core, the power sampler's own cost


@dataclass
class FileEnergy:
    power: Power | None
    series: dict[str, Series]  # by group path, e.g. "/fft/p000/baseline"
    problems: list[str] = field(default_factory=list)


def _float(group: h5py.Group, name: str) -> np.ndarray | None:
    obj = group.get(name)
    if not isinstance(obj, h5py.Dataset) or obj.dtype.kind not in "biuf":
        return None
    return np.asarray(obj[()], dtype=float)


def _series(group: h5py.Group) -> Series | None:
    found = {name: _float(group, name) for name in ENERGY}
    if all(v is None for v in found.values()):
        return None
    return Series(**{k: (None if v is None else np.atleast_1d(v)) for k, v in found.items()})


def read_file(path: Path) -> FileEnergy:
    """/power and every point's energy datasets; empty when the file has none."""
    try:
        return in_child(_read_file, path)
    except OSError as exc:
        return FileEnergy(power=None, series={}, problems=[
            f"energy datasets unreadable ({' '.join(str(exc).split())[:120]}); energy unmeasured"])


def _read_file(path: Path) -> FileEnergy:
    out = FileEnergy(power=None, series={})
    try:
        with open_h5(path) as fh:
            if isinstance(fh.get("power"), h5py.Group):
                g = fh["power"]
                src = g.get("source")
                names = [text(s) for s in np.atleast_1d(src[()])] if src is not None else []
                n = len(names)
                arrays = {}
                for key in POWER:
                    arr = _float(g, key)
                    arr = np.full(n, np.nan) if arr is None else np.atleast_1d(arr)
                    arrays[key] = np.resize(arr, n) if arr.size != n else arr
                rd = g.get("reader")
                readers = [text(s) for s in np.atleast_1d(rd[()])] if isinstance(rd, h5py.Dataset) else []
                out.power = Power(source=names, requested=text(g.attrs.get("requested", "")),
                                  caveat=text(g.attrs.get("caveat", "")), reader=readers, **arrays)
            for top in ("fft", "dfft", "load"):
                if not isinstance(fh.get(top), h5py.Group):
                    continue
                for pid in sorted(fh[top].keys()):
                    g = fh[top][pid]
                    if not isinstance(g, h5py.Group):
                        continue
                    s = _series(g)
                    if s is not None:
                        out.series[f"/{top}/{pid}"] = s
                    if top == "fft" and isinstance(g.get("baseline"), h5py.Group):
                        s = _series(g["baseline"])
                        if s is not None:
                            out.series[f"/fft/{pid}/baseline"] = s
    except (OSError, KeyError, ValueError, TypeError) as exc:
        out.problems.append(f"energy datasets unreadable ({' '.join(str(exc).split())[:120]}); "
                            "energy unmeasured")
    return out


def baseline_totals(path: Path) -> dict[str, np.ndarray]:
    try:
        return in_child(_read_baseline_totals, path)
    except OSError:
        return {}


def _read_baseline_totals(path: Path) -> dict[str, np.ndarray]:
    out = {}
    try:
        with open_h5(path) as fh:
            for pid, g in (fh["fft"].items() if isinstance(fh.get("fft"), h5py.Group) else []):
                arr = _float(g, "baseline/t_total") if isinstance(g, h5py.Group) else None
                if arr is not None:
                    out[pid] = np.atleast_1d(arr).reshape(-1)
    except (OSError, KeyError, ValueError):
        pass
    return out
