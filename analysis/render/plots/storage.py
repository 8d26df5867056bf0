"""The storage figures: bandwidth per node and IOPS per node, one panel per run and folder, with
the SD Association's A1/A2 marks as reference lines where a folder is on an SD card."""

from __future__ import annotations

from pathlib import Path

import matplotlib.pyplot as plt
import numpy as np
from matplotlib.ticker import FuncFormatter

from ...find.common import PALETTE
from ...find.storage import Panel
from .base import Figure, _nice_log, _save

TESTS = ("write", "read", "randwrite", "randread", "meta", "shared-write", "shared-read", "hdf5")
MARK_STYLE = {"A1": "--", "A2": ":"}
API_MARKER = {"mpiio-indep": "s", "mpiio-coll": "D"}  # posix and hdf5: a dot


def _colour(test: str) -> str:
    return PALETTE[TESTS.index(test) % len(PALETTE)] if test in TESTS else PALETTE[-1]


def _draw(ax: plt.Axes, panel: Panel, unit: str) -> None:
    n = len(panel.series)
    width = 0.8 / max(n, 1)
    for k, s in enumerate(panel.series):
        x = np.arange(len(panel.x)) + (k - (n - 1) / 2) * width
        med, lo, hi = (np.asarray(v, dtype=float) for v in (s.median, s.low, s.high))
        ok = np.isfinite(med) & (med > 0)
        if not ok.any():
            continue
        err = [np.clip(med[ok] - np.nan_to_num(lo[ok], nan=med[ok]), 0, None),
               np.clip(np.nan_to_num(hi[ok], nan=med[ok]) - med[ok], 0, None)]
        ax.errorbar(x[ok], med[ok], yerr=err, fmt=API_MARKER.get(s.api, "o"), capsize=3, color=_colour(s.test),
                    label=s.label)
    for m in panel.marks:
        ax.axhline(m.value, color=_colour(m.test), linestyle=MARK_STYLE.get(m.cls, "-"),
                   linewidth=1.2, label=m.label)
    ax.set_xticks(range(len(panel.x)))
    ax.set_xticklabels(panel.x, rotation=30 if len(panel.x) > 4 else 0, ha="right" if len(panel.x) > 4 else "center")
    ax.set_xlim(-0.6, len(panel.x) - 0.4)
    ax.set_yscale("log")
    ax.yaxis.set_major_formatter(FuncFormatter(lambda v, _p: f"{v:g}"))
    ax.set_ylabel(f"{unit} (log scale)")
    ax.set_title(panel.title)
    ax.legend(fontsize=8, loc="best")
    _nice_log(ax)


def _figure(panels: list[Panel], unit: str, name: str, title: str, caption: str,
            outdir: Path) -> Figure | None:
    if not panels:
        return None
    cols = min(2, len(panels))
    rows = -(-len(panels) // cols)
    fig, axes = plt.subplots(rows, cols, figsize=(7.5 * cols, 4.8 * rows), constrained_layout=True,
                             squeeze=False)
    for ax, panel in zip(axes.flat, panels):
        _draw(ax, panel, unit)
    for ax in list(axes.flat)[len(panels):]:
        ax.set_visible(False)
    fig.suptitle(title)
    return Figure(_save(fig, outdir, name), title, caption)


def storage_bandwidth(panels: list[Panel], outdir: Path) -> Figure | None:
    return _figure(panels, "MB/s (10^6 bytes/s)", "storage_bandwidth.png", "Storage bandwidth per node",
                   "Median over repetitions, whiskers from the slowest to the fastest repetition; "
                   "'all nodes' is the aggregate over every rank (all bytes over last end − first "
                   "start). On a folder on an SD card the line is the A1/A2 sequential write mark "
                   "of the SD Association's Application Performance Class.", outdir)


def storage_iops(panels: list[Panel], outdir: Path) -> Figure | None:
    return _figure(panels, "IOPS (operations/s; meta: files/s)", "storage_iops.png", "Storage IOPS per node",
                   "Random 4 KiB reads and writes (and files per second in meta): median over "
                   "repetitions, whiskers from the slowest to the fastest repetition. On a folder on "
                   "an SD card the lines are the SD Association's marks, dashed A1 (1500 random-read, "
                   "500 random-write IOPS), dotted A2 (4000 and 2000).", outdir)
