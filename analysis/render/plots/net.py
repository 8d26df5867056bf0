"""The transfer figures: point to point, collectives, ring, link maps."""

from __future__ import annotations

from pathlib import Path

import matplotlib.pyplot as plt
import numpy as np
from matplotlib.ticker import FuncFormatter

from ...derive import LinkMap, TransferCurve
from ...find.tables.base import slug
from ...read.runs import Run
from ...find.common import PALETTE
from .base import Figure, _save, _si_seconds, _time_axis, _loglog, _band


def transfer_p2p(curves: list[TransferCurve], colour: dict[str, str], outdir: Path) -> Figure | None:
    if not curves:
        return None
    styles = {"pingpong": "-", "bw": "--", "bibw": ":"}
    fig, (ax1, ax2) = plt.subplots(1, 2, figsize=(15, 5.4), constrained_layout=True)
    for c in curves:
        label = f"{c.run.name}: {c.label}"
        st = styles.get(c.test, "-")
        _band(ax1, c.bytes, c.value, c.lo, c.hi, colour[c.run.name], st, label)
        _band(ax2, c.bytes, c.bandwidth, c.bw_lo, c.bw_hi, colour[c.run.name], st, label, 1e-6)
    for ax in (ax1, ax2):
        _loglog(ax)
        ax.legend(fontsize=8, handlelength=3.5)
    _time_axis(ax1, "time per message")
    ax1.set_title("latency (pingpong: half round trip)")
    ax2.set_yscale("log")
    ax2.yaxis.set_major_formatter(FuncFormatter(lambda v, _p: f"{v:g}"))
    ax2.set_ylabel("bandwidth (MB/s, log scale)")
    ax2.set_title("bandwidth (bibw counts both directions)")
    fig.suptitle("Point-to-point transfer")
    name = _save(fig, outdir, "transfer_p2p.png")
    return Figure(name, "Point-to-point latency and bandwidth", "Median over repetitions; "
                  "where several pairs were measured, the line is the median pair and the band "
                  "spans the fastest to the slowest pair. Zero-byte messages are not drawn on "
                  "the log axis (see the table).")


def transfer_collectives(by_run: list[tuple[Run, list[TransferCurve]]], outdir: Path) -> Figure | None:
    by_run = [(r, cs) for r, cs in by_run if cs]
    if not by_run:
        return None
    n = len(by_run)
    fig, axes = plt.subplots(1, n, figsize=(7.5 * n, 5.4), constrained_layout=True, squeeze=False,
                             sharey=True)
    for ax, (run, curves) in zip(axes[0], by_run):
        notes = []
        for k, c in enumerate(curves):
            col = PALETTE[k % len(PALETTE)]
            if np.all(np.asarray(c.bytes) <= 0):
                notes.append(f"{c.label}: {_si_seconds(float(np.nanmedian(c.value)))} "
                             f"(ranks {_si_seconds(float(np.nanmin(c.lo)))}–"
                             f"{_si_seconds(float(np.nanmax(c.hi)))})")
                continue
            _band(ax, c.bytes, c.value, c.lo, c.hi, col, "-", c.label)
        _loglog(ax)
        _time_axis(ax, "time per call")
        ax.set_title(f"{run.name} ({run.nranks} ranks)")
        ax.legend(fontsize=8, ncol=2, loc="upper left")
        if notes:
            ax.text(0.98, 0.02, "\n".join(notes), transform=ax.transAxes, ha="right", va="bottom",
                    fontsize=9, bbox={"facecolor": "white", "alpha": 0.8, "edgecolor": "0.7"})
    fig.suptitle("Collectives: median over ranks, band = fastest to slowest rank")
    name = _save(fig, outdir, "transfer_collectives.png")
    return Figure(name, "Collectives", "For each rank the median over repetitions; the line "
                  "is the median rank and the band spans the fastest to the slowest rank.")


def transfer_ring(curves: list[TransferCurve], colour: dict[str, str], outdir: Path) -> Figure | None:
    if not curves:
        return None
    fig, ax = plt.subplots(figsize=(9, 5.4), constrained_layout=True)
    styles = ["-", "--", ":", "-."]
    seen: dict[str, int] = {}
    for c in curves:
        k = seen.get(c.run.name, 0)
        seen[c.run.name] = k + 1
        _band(ax, c.bytes, c.bandwidth, c.bw_lo, c.bw_hi, colour[c.run.name],
              styles[k % len(styles)], f"{c.run.name}: {c.label}", 1e-6)
    _loglog(ax)
    ax.set_yscale("log")
    ax.yaxis.set_major_formatter(FuncFormatter(lambda v, _p: f"{v:g}"))
    ax.set_ylabel("ring bandwidth, all ranks (MB/s, log scale)")
    ax.set_title("Ring: every rank sends to its neighbour")
    ax.legend(fontsize=8, handlelength=3.5)
    name = _save(fig, outdir, "transfer_ring.png")
    return Figure(name, "Ring bandwidth", "Bytes moved by all ranks in one ring step divided by "
                  "the median step time, for the natural rank order and the other orders tried.")


def link_maps(run: Run, maps: list[tuple[str, LinkMap]], outdir: Path) -> Figure | None:
    """Every link's speed relative to the median link (bandwidth / median, or
    median latency / latency) on one fixed diverging scale, links below 80 %
    marked, so that a 0.3 % difference stays the colour of the median."""
    from matplotlib.colors import TwoSlopeNorm
    maps = [(w, m) for w, m in maps if m is not None]
    if not maps:
        return None
    n = maps[0][1].values.shape[0]
    size = max(5.5, min(12.0, 0.45 * n + 4))
    fig, axes = plt.subplots(1, len(maps), figsize=(size * len(maps), size * 0.85),
                             constrained_layout=True, squeeze=False)
    labels = [run.rank_label(r) for r in range(n)]
    norm = TwoSlopeNorm(vmin=0.5, vcenter=1.0, vmax=1.5)
    im = None
    for ax, (which, lm) in zip(axes[0], maps):
        im = ax.imshow(np.clip(lm.ratio, 0.5, 1.5), cmap="RdBu", norm=norm,
                       interpolation="nearest")
        ax.set_xticks(range(n))
        ax.set_yticks(range(n))
        fs = 9 if n <= 16 else 6
        ax.set_xticklabels(labels, rotation=90, fontsize=fs)
        ax.set_yticklabels(labels, fontsize=fs)
        ax.set_xlabel("receiver (host:rank)")
        ax.set_ylabel("sender (host:rank)")
        ax.grid(False)
        med = _si_seconds(lm.median) if lm.what == "latency" else f"{lm.median / 1e6:.4g} MB/s"
        ax.set_title(f"{which}: {lm.what}, median {med}")
        for s_, r, _ratio in lm.slow:
            ax.add_patch(plt.Rectangle((r - 0.5, s_ - 0.5), 1, 1, fill=False, edgecolor="black",
                                       linewidth=2.5))
        if n <= 8:
            for s_ in range(n):
                for r in range(n):
                    if np.isfinite(lm.ratio[s_, r]):
                        ax.text(r, s_, f"{100 * lm.ratio[s_, r]:.0f}%", ha="center", va="center",
                                fontsize=8, color="black")
    cbar = fig.colorbar(im, ax=list(axes[0]), shrink=0.85)
    cbar.set_label("speed / median link (1 = median)")
    cbar.ax.axhline(0.8, color="black", linewidth=2)
    fig.suptitle(f"Links relative to the median: {run.name} (black boxes: below 80 %)")
    name = _save(fig, outdir, f"transfer_links_{slug(run.name)}.png")
    return Figure(name, f"Link maps: {run.name}",
                  "Row = sender, column = receiver. Colour: the link's speed relative to the "
                  "median link on a fixed scale from 50 % to 150 % (bandwidth / median "
                  "bandwidth; for latency, median / latency), so links within a few per cent "
                  "of the median all look alike. Black boxes: below 80 % of the median. "
                  "pairs_all measures one pair at a time; pairs_shift runs every pair of a "
                  "round at once.")
