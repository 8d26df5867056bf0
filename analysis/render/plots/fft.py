"""The FFT figures: times, rate, phases, speedup, per rank, the pipeline timeline, dfft."""

from __future__ import annotations

from pathlib import Path

import matplotlib.pyplot as plt
import numpy as np
from matplotlib.ticker import FuncFormatter

from ...derive import Comparison, Crossover, DfftStats, PointStats, RankStats
from ...find.tables.base import slug
from ...read.runs import Run
from ...find.common import PALETTE, BASELINE_COLOUR
from .base import (PHASE_COLOURS, SCENARIO_TITLES, Figure, _save, _si_seconds, _plain, _nice_log,
                   TIME_UNITS, _si_count, _time_axis, _sweep_axis, _sweep_x,
                   _series, _series_label, _errorline, _summary_cols)


def fft_times(items: list[PointStats], scenario: str, colour: dict[str, str], outdir: Path,
              rows: str) -> Figure | None:
    groups = _series(items, scenario)
    if not groups:
        return None
    fig, axes = plt.subplots(1, 3, figsize=(16, 5.2), constrained_layout=True)
    xs_all: list[float] = []
    panels = [("total request time", [("total", "-", "total")]),
              ("distribution and overhead", [("distribute", "-", "distribution"),
                                             ("overhead", "--", "overhead (the rest of t_total)")]),
              ("compute (slowest rank)", [("fft", "-", "FFTW execute"),
                                          ("compute", ":", "whole transform work")])]
    for ax, (title, lines) in zip(axes, panels):
        for (run, config), pts in groups.items():
            xs = [_sweep_x(s) for s in pts]
            xs_all += xs
            for series, style, _name in lines:
                if series == "distribute" and all(s.point.nranks == 1 for s in pts):
                    continue  # one process: nothing is distributed
                med, lo, hi = _summary_cols(pts, series)
                _errorline(ax, xs, med, lo, hi, color=colour[run], linestyle=style,
                           label=_series_label(run, config, groups) if series == lines[0][0] else None)
        ax.set_title(title)
        _sweep_axis(ax, scenario, xs_all)
        _time_axis(ax)
        _nice_log(ax, "y")
        _nice_log(ax, "x")
        if len(lines) > 1:
            from matplotlib.lines import Line2D
            handles = [Line2D([], [], color="0.3", linestyle=st, label=nm) for _s, st, nm in lines]
            ax.legend(handles=handles, loc="upper left", title="line style")
    axes[0].legend(loc="upper left", title="run")
    fig.suptitle(f"Request time, {SCENARIO_TITLES[scenario]} (study rows {rows})")
    name = _save(fig, outdir, f"fft_{scenario}_times.png")
    return Figure(name, f"Time against {'file size' if scenario == 'sizes' else 'files per request'}",
                  "Median of the repetitions with 95 % confidence intervals. Distribution, "
                  "gather and compute are the slowest rank's; overhead is what the slowest "
                  "rank's distribute, compute and gather leave of t_total (a negative overhead, "
                  "from overlapping phases, is not drawn on the log axis). Points that failed "
                  "verification are left out.")


def fft_rate(items: list[PointStats], colour: dict[str, str], outdir: Path) -> Figure | None:
    scenarios = [sc for sc in ("sizes", "files") if _series(items, sc)]
    if not scenarios:
        return None
    fig, axes = plt.subplots(1, len(scenarios), figsize=(7.5 * len(scenarios), 5),
                             constrained_layout=True, squeeze=False)
    for ax, scenario in zip(axes[0], scenarios):
        groups = _series(items, scenario)
        xs_all: list[float] = []
        rates: list[float] = []
        for (run, config), pts in groups.items():
            xs = [_sweep_x(s) for s in pts]
            xs_all += xs
            # the CI of the rate follows from the CI of the time
            med = [s.kBps for s in pts]
            lo = [s.point.input_bytes / 1000 / s.summaries["total"].ci_hi for s in pts]
            hi = [s.point.input_bytes / 1000 / s.summaries["total"].ci_lo for s in pts]
            rates += med
            _errorline(ax, xs, med, lo, hi, color=colour[run],
                       label=_series_label(run, config, groups))
        _sweep_axis(ax, scenario, xs_all)
        _nice_log(ax, "x")
        finite = [r for r in rates if np.isfinite(r) and r > 0]
        if finite and max(finite) / min(finite) > 20:
            ax.set_yscale("log")
            ax.yaxis.set_major_formatter(FuncFormatter(lambda v, _p: f"{v:,.0f}"))
            ax.set_ylabel("processing rate (kB/s, log scale)")
            _nice_log(ax, "y")
        else:
            ax.set_ylim(bottom=0)
            ax.yaxis.set_major_formatter(FuncFormatter(lambda v, _p: f"{v:,.0f}"))
            ax.set_ylabel("processing rate (kB/s)")
        ax.set_title(SCENARIO_TITLES[scenario])
        ax.legend(title="run")
    # Short enough for the one-panel figure a single sweep makes.
    fig.suptitle("Processing rate, kB/s (study rows 3 and 9)")
    name = _save(fig, outdir, "fft_rate.png")
    return Figure(name, "Processing rate (kB/s)", "Input bytes per request / 1000 divided by "
                  "the median request time, with the interval implied by the time's 95 % CI.")


PHASES = ("distribute", "compute", "gather", "overhead")


def fft_phases(items: list[PointStats], baseline: Run | None, outdir: Path) -> Figure | None:
    """Stacked medians of the slowest rank's phases and the remainder, with the
    median t_total marked beside each bar."""
    scenarios = [sc for sc in ("sizes", "files") if _series(items, sc)]
    runs: list[str] = []
    for s in items:
        if s.usable and s.run is not baseline and s.run.name not in runs \
                and s.point.scenario in scenarios:
            runs.append(s.run.name)
    if not scenarios or not runs:
        return None
    fig, axes = plt.subplots(len(runs), len(scenarios),
                             figsize=(7.5 * len(scenarios), 4.0 * len(runs)),
                             constrained_layout=True, squeeze=False)
    for i, run in enumerate(runs):
        for j, scenario in enumerate(scenarios):
            ax = axes[i][j]
            groups = {k: v for k, v in _series(items, scenario).items() if k[0] == run}
            if not groups:
                ax.set_axis_off()
                ax.text(0.5, 0.5, f"{run}: no {scenario} points", ha="center", va="center",
                        transform=ax.transAxes)
                continue
            (_, config), pts = next(iter(groups.items()))
            pos = np.arange(len(pts))
            bottom = np.zeros(len(pts))
            for phase in PHASES:
                vals = np.array([s.summaries[phase].median for s in pts])
                vals = np.clip(np.nan_to_num(vals), 0, None)
                ax.bar(pos, vals, bottom=bottom, color=PHASE_COLOURS[phase], width=0.7,
                       label=phase if phase != "overhead" else "overhead (the rest)",
                       hatch="//" if phase == "overhead" else None, edgecolor="white")
                bottom += vals
            total = np.array([s.summaries["total"].median for s in pts])
            ax.plot(pos, total, linestyle="none", marker="_", markersize=26, markeredgewidth=2.2,
                    color="black", label="median t_total")
            top = float(np.nanmax(np.r_[total, bottom]))
            scale, unit = next(((sc, u) for sc, u in TIME_UNITS if top >= sc * 0.999),
                               TIME_UNITS[-1])
            for k in range(len(pts)):
                ax.annotate(f"{bottom[k] / scale:.3g} | {total[k] / scale:.3g}",
                            (pos[k], max(bottom[k], total[k])), ha="center", va="bottom",
                            fontsize=8, xytext=(0, 3), textcoords="offset points")
            ax.set_xticks(pos)
            ax.set_xticklabels([f"{s.point.nfiles}" if scenario == "files"
                                else f"{s.point.input_bytes / 1000:.0f}" for s in pts])
            ax.set_xlabel("5 s files per request (count)" if scenario == "files"
                          else "input size per request (kB)")
            ax.set_ylim(0, top * 1.25 if top > 0 else 1)
            _time_axis(ax, "median time", log=False)
            extra = f" ({config})" if len(_series(items, scenario)) > len(runs) else ""
            ax.set_title(f"{run}: {SCENARIO_TITLES[scenario]}{extra}")
            ax.legend(loc="upper left", fontsize=8)
    fig.suptitle("Where the request time goes (labels: stacked sum | median t_total)")
    name = _save(fig, outdir, "fft_phases.png")
    return Figure(name, "Where the request time goes",
                  "Per repetition the slowest rank's distribute, compute and gather, and the "
                  "overhead as what they leave of t_total; each bar segment is that column's "
                  "median over repetitions. The black mark is the median t_total: the segments "
                  "are medians of different repetitions, so their sum (first label) differs a "
                  "little from it (second label). A negative overhead (overlapping phases) is "
                  "drawn as zero. Linear scale.")


def speedup(comps: list[Comparison], cross: list[Crossover], colour: dict[str, str],
            title: str, outdir: Path, name: str,
            explained: tuple[str, str] = ("Read first", "under Read first")) -> Figure | None:
    """`explained`: where the implausible points are explained, for the legend and the caption."""
    scenarios = [sc for sc in ("sizes", "files") if any(c.cluster.point.scenario == sc for c in comps)]
    if not scenarios:
        return None
    # against other hardware the ratio is a relative throughput: no ideal S = p, E or e
    parallel = any(np.isfinite(c.efficiency) for c in comps)
    fig, axes = plt.subplots(len(scenarios), 3 if parallel else 1,
                             figsize=(16 if parallel else 8, 4.8 * len(scenarios)),
                             constrained_layout=True, squeeze=False)
    for i, scenario in enumerate(scenarios):
        groups: dict[tuple[str, str], list[Comparison]] = {}
        for c in comps:
            if c.cluster.point.scenario == scenario:
                groups.setdefault((c.run.name, c.cluster.point.config), []).append(c)
        xs_all: list[float] = []
        ps: set[tuple[str, int]] = set()
        for (run, config), items in groups.items():
            items.sort(key=lambda c: _sweep_x(c.cluster))
            xs = [_sweep_x(c.cluster) for c in items]
            xs_all += xs
            label = run if len({k[1] for k in groups}) == 1 else f"{run} – {config}"
            p = items[0].p
            col = colour[run]
            if parallel and (run, p) not in ps:
                ps.add((run, p))
                axes[i][0].axhline(float(p), color=col, linestyle="-.", linewidth=1.2, alpha=0.7,
                                   label=f"ideal S = p = {p} ({run})")
            sp = np.array([c.speedup for c in items])
            lo = np.array([c.ci_lo for c in items])
            hi = np.array([c.ci_hi for c in items])
            _errorline(axes[i][0], xs, sp, lo, hi, color=col, label=f"{label} (p={p})")
            for x in cross:
                if x.run.name == run and x.scenario == scenario and x.config == config and x.x is not None:
                    xv = x.x if scenario == "files" else x.x / 1000
                    axes[i][0].axvline(xv, color=col, linestyle=":", linewidth=1.2)
                    axes[i][0].annotate("crossover", (xv, 1), color=col, fontsize=9,
                                        xytext=(4, 6), textcoords="offset points")
            if not parallel:
                continue
            axes[i][1].plot(xs, [100 * c.efficiency for c in items], color=col, marker="o",
                            label=label)
            axes[i][2].plot(xs, [c.karp_flatt for c in items], color=col, marker="o", label=label)
            bad = [k for k, c in enumerate(items) if c.implausible]
            if bad:
                for ax, ys in ((axes[i][0], sp), (axes[i][1], [100 * c.efficiency for c in items]),
                               (axes[i][2], [c.karp_flatt for c in items])):
                    ax.plot([xs[k] for k in bad], [ys[k] for k in bad], "o", markersize=13,
                            markerfacecolor="none", markeredgecolor="#c00000", markeredgewidth=2,
                            label=f"implausible (see {explained[0]})" if ax is axes[i][0] else None)
        ax = axes[i][0]
        ax.axhline(1.0, color=BASELINE_COLOUR, linestyle="--", linewidth=1, label="S = 1 (break-even)")
        ax.set_yscale("log")
        ax.yaxis.set_major_formatter(FuncFormatter(_plain))
        ax.set_ylabel("speedup S (× baseline, log scale)" if parallel else
                      "throughput ratio (baseline time / cluster time, log scale)")
        if not parallel:
            _sweep_axis(ax, scenario, xs_all)
            _nice_log(ax, "x")
            ax.set_title(f"relative throughput, 95 % CI: {SCENARIO_TITLES[scenario]}")
            ax.legend(loc="best", fontsize=8)
            _nice_log(ax, "y")
            continue
        axes[i][1].axhline(100.0, color="0.45", linestyle="-.", linewidth=1.2, label="ideal 100 %")
        axes[i][1].set_ylabel("parallel efficiency S/p (%)")
        axes[i][1].set_ylim(bottom=0)
        axes[i][2].set_ylabel("Karp–Flatt serial fraction e (no unit)")
        axes[i][2].axhline(0.0, color="0.45", linestyle="-.", linewidth=1.2, label="ideal e = 0")
        kf = [c.karp_flatt for c in comps if c.cluster.point.scenario == scenario
              and np.isfinite(c.karp_flatt)]
        if kf and max(kf) > 2:
            # e > 1 means slower than the baseline; keep 0..1 linear, compress above
            axes[i][2].set_yscale("symlog", linthresh=1.0, linscale=1.5)
            axes[i][2].yaxis.set_major_formatter(FuncFormatter(_plain))
            axes[i][2].set_ylabel("Karp–Flatt serial fraction e (log scale above 1)")
            axes[i][2].axhline(1.0, color="0.5", linestyle="--", linewidth=0.8)
            axes[i][2].set_ylim(min(-0.05, 1.1 * min(kf)), 1.6 * max(kf))
        for j, sub in enumerate(("speedup, 95 % CI", "efficiency", "serial fraction")):
            _sweep_axis(axes[i][j], scenario, xs_all)
            _nice_log(axes[i][j], "x")
            axes[i][j].set_title(f"{sub}: {SCENARIO_TITLES[scenario]}")
            axes[i][j].legend(loc="best", fontsize=8)
        _nice_log(ax, "y")
    fig.suptitle(title)
    name = _save(fig, outdir, name)
    if not parallel:
        return Figure(name, title, "Relative throughput against a baseline on other hardware "
                      "(baseline median / cluster median) with its 95 % CI (log scale) "
                      "and the break-even line 1. Not a parallel speedup: no ideal line, "
                      "efficiency or Karp–Flatt fraction. The dotted line marks the crossover.")
    return Figure(name, title,
                  "Speedup S with its 95 % CI (log scale), the break-even line S = 1 and the "
                  "ideal S = p; efficiency E = S/p against the ideal 100 %; Karp–Flatt "
                  "e = (1/S − 1/p)/(1 − 1/p) against the ideal 0. p = ranks that compute. Red "
                  f"rings: implausible values (E > 100 % or e < 0), explained {explained[1]}. "
                  "The dotted line marks the crossover.")


def per_rank(run: Run, point_desc: str, ranks: list[RankStats], t_total: float,
             outdir: Path) -> Figure | None:
    if not ranks:
        return None
    n = len(ranks)
    fig, ax = plt.subplots(figsize=(max(7.0, min(18.0, 0.55 * n + 4)), 5.2), constrained_layout=True)
    pos = np.arange(n)
    bottom = np.zeros(n)
    for phase in ("distribute", "compute", "gather"):
        vals = np.nan_to_num(np.array([getattr(r, phase) for r in ranks]), nan=0.0)
        ax.bar(pos, vals, bottom=bottom, color=PHASE_COLOURS[phase], label=phase, width=0.7)
        bottom += vals
    for k, r in enumerate(ranks):
        if r.straggler:
            ax.bar(pos[k], bottom[k], width=0.7, fill=False, edgecolor="#c00000", linewidth=2.2)
            ax.annotate("straggler", (pos[k], bottom[k]), ha="center", va="bottom", color="#c00000",
                        fontsize=9, fontweight="bold", xytext=(0, 3), textcoords="offset points",
                        bbox={"facecolor": "white", "edgecolor": "none", "pad": 1, "alpha": 0.9})
    if np.isfinite(t_total):
        ax.axhline(t_total, color="0.2", linestyle="--", linewidth=1.2,
                   label=f"median request time {_si_seconds(t_total)}")
    longest = max(len(r.host) for r in ranks)
    if n * max(longest, 4) <= 60:
        labels = [f"{r.host}\nr{r.rank}" for r in ranks]
        ax.set_xticks(pos)
        ax.set_xticklabels(labels)
    else:
        labels = [f"{r.host}:r{r.rank}" for r in ranks]
        ax.set_xticks(pos)
        ax.set_xticklabels(labels, rotation=45 if n <= 16 else 90, ha="right",
                           rotation_mode="anchor", fontsize=9 if n > 16 else 10)
    ax.set_xlabel("rank (host)")
    ax.set_ylim(0, max(np.nanmax(bottom), t_total if np.isfinite(t_total) else 0) * 1.22)
    _time_axis(ax, "median time per phase", log=False)
    ax.legend(loc="upper left", ncol=2)
    ax.set_title(f"{run.name}: per-rank phases at {point_desc}")
    name = _save(fig, outdir, f"per_rank_{slug(run.name)}.png")
    return Figure(name, f"Per-rank phases: {run.name}", "Median over repetitions of each "
                  "rank's distribution, compute and gather time. Red outline: straggler "
                  "(median compute or phase total > 20 % above the median over computing ranks).")


def timeline(run: Run, point_id: str, events: np.ndarray, t_total: float,
             outdir: Path) -> Figure | None:
    """Gantt chart of one repetition's chunks per rank: receive, compute, send."""
    if events is None or events.size == 0:
        return None
    ranks = sorted({int(r) for r in events["rank"]})
    fig, ax = plt.subplots(figsize=(14, max(3.0, 0.55 * len(ranks) + 2)), constrained_layout=True)
    top = float(np.nanmax(events["t_end"]))
    if np.isfinite(t_total):
        top = max(top, t_total)
    scale, unit = next(((sc, u) for sc, u in TIME_UNITS if top >= sc * 0.999), TIME_UNITS[-1])
    colours = {0: PHASE_COLOURS["distribute"], 1: PHASE_COLOURS["compute"],
               2: PHASE_COLOURS["gather"]}
    offsets = {0: -0.27, 1: 0.0, 2: 0.27}
    for code, name in ((0, "receive"), (1, "compute"), (2, "send")):
        sel = events[events["phase"] == code]
        if sel.size == 0:
            continue
        ys = np.array([ranks.index(int(r)) for r in sel["rank"]]) + offsets[code]
        ax.barh(ys, (sel["t_end"] - sel["t_start"]) / scale, left=sel["t_start"] / scale,
                height=0.25, color=colours[code], label=name, edgecolor="white", linewidth=0.3)
    if np.isfinite(t_total):
        ax.axvline(t_total / scale, color="black", linestyle="--", linewidth=1.2,
                   label=f"median t_total {t_total / scale:.3g} {unit}")
    ax.set_yticks(range(len(ranks)))
    ax.set_yticklabels([run.rank_label(r) for r in ranks])
    ax.invert_yaxis()
    ax.set_xlabel(f"time from the repetition's start barrier ({unit}, linear)")
    ax.set_ylabel("rank (host:rank)")
    ax.legend(loc="lower left", bbox_to_anchor=(0.0, 1.0), fontsize=9, ncol=4, frameon=False)
    fig.suptitle(f"{run.name}: chunks of the last recorded repetition at {point_id}")
    name = _save(fig, outdir, f"timeline_{slug(run.name)}.png")
    return Figure(name, f"Pipeline timeline: {run.name} {point_id}",
                  "Each bar is one chunk on one rank: receiving its samples (top), transforming "
                  "them (middle) and sending the results (bottom). Where bars of one rank "
                  "overlap in time, the schedule overlaps its phases.")


def dfft(items: list[DfftStats], outdir: Path) -> Figure | None:
    if not items:
        return None
    fig, axes = plt.subplots(1, 3, figsize=(17, 5.2), constrained_layout=True)
    ax1, ax2, ax3 = axes
    by_nodes: dict[tuple[str, int], list[DfftStats]] = {}
    by_shape: dict[str, list[DfftStats]] = {}
    for d in items:
        by_nodes.setdefault((d.run.name, d.nranks), []).append(d)
        by_shape.setdefault(f"{d.shape} {d.kind}", []).append(d)
    for k, ((run, nranks), ds) in enumerate(sorted(by_nodes.items())):
        ds.sort(key=lambda d: d.n)
        ax1.plot([d.n for d in ds], [d.gflops for d in ds], marker="o",
                 color=PALETTE[k % len(PALETTE)],
                 label=f"{run}, {nranks} rank" + ("s" if nranks != 1 else ""))
    ax1.set_xscale("log", base=2)
    ax1.xaxis.set_major_formatter(FuncFormatter(_si_count))
    ax1.set_xlabel("transform size N (points, log scale)")
    ax1.set_ylabel("GFLOPS (HPCC count, linear)")
    ax1.set_ylim(bottom=0)
    ax1.set_title("against the transform size")
    ax1.legend(fontsize=8)
    for k, (shape, ds) in enumerate(sorted(by_shape.items())):
        ds.sort(key=lambda d: d.nodes)
        ax2.plot([d.nodes for d in ds], [d.gflops for d in ds], marker="o",
                 color=PALETTE[k % len(PALETTE)], label=shape)
    ax2.set_xlabel("nodes (count, linear)")
    ax2.set_ylabel("GFLOPS (HPCC count, linear)")
    ax2.set_ylim(bottom=0)
    ax2.xaxis.get_major_locator().set_params(integer=True)
    ax2.set_title("against the number of nodes")
    ax2.legend(fontsize=8)
    ordered = sorted(items, key=lambda d: (d.run.name, d.n, d.nranks))
    pos = np.arange(len(ordered))
    local = np.array([d.local_fft for d in ordered])
    trans = np.array([d.transpose for d in ordered])
    total = np.array([d.total.median for d in ordered])
    top = float(np.nanmax(np.r_[total, np.nan_to_num(local) + np.nan_to_num(trans)]))
    scale, unit = next(((sc, u) for sc, u in TIME_UNITS if top >= sc * 0.999), TIME_UNITS[-1])
    split = np.isfinite(local) & np.isfinite(trans)
    ax3.bar(pos[split], local[split] / scale, color=PHASE_COLOURS["compute"], label="local FFT")
    ax3.bar(pos[split], trans[split] / scale, bottom=local[split] / scale,
            color=PHASE_COLOURS["distribute"], label="transpose")
    if (~split).any():
        ax3.bar(pos[~split], total[~split] / scale, color="0.7", label="t_total (1-D: not split)")
    ax3.plot(pos, total / scale, linestyle="none", marker="_", markersize=20, markeredgewidth=2,
             color="black", label="median t_total")
    ax3.set_xticks(pos)
    ax3.set_xticklabels([f"{d.shape}\n{d.nranks} r" for d in ordered], fontsize=8,
                        rotation=45 if len(ordered) > 6 else 0)
    ax3.set_xlabel("shape and ranks")
    ax3.set_ylabel(f"median time of the slowest rank ({unit}, linear)")
    ax3.set_title("local FFT against transpose")
    ax3.legend(fontsize=8)
    fig.suptitle("Distributed FFT (dfft)")
    name = _save(fig, outdir, "dfft.png")
    return Figure(name, "Distributed FFT", "GFLOPS by HPCC's count (5·N·log2 N for c2c, half "
                  "for r2c) over the median t_total, against N and against the number of "
                  "nodes; right: the slowest rank's median local FFT and transpose time, with "
                  "the median t_total marked.")
