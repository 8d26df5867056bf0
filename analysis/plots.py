"""Report figures (matplotlib, Agg backend). Every function draws one figure,
saves it as a PNG in `outdir` and returns a `Figure` record, or None when
there is nothing to draw."""

from __future__ import annotations

import logging
from dataclasses import dataclass
from pathlib import Path

import matplotlib

# Keep stderr for our one-line messages: no "building the font cache" notes.
logging.getLogger("matplotlib").setLevel(logging.ERROR)
matplotlib.use("Agg")

import matplotlib.pyplot as plt  # noqa: E402
import numpy as np  # noqa: E402
from matplotlib.ticker import FuncFormatter, LogLocator, NullFormatter  # noqa: E402

from .derive import (Comparison, Crossover, DfftStats, LinkMap, LoadStepStats,  # noqa: E402
                     PointStats, RankStats, Saturation, TransferCurve)
from .cliutil import slug  # noqa: E402
from .runs import Run
from .model import AffineFit, HockneyFit, RunModel  # noqa: E402
from .tables import fmt_bytes  # noqa: E402

STYLE = {
    "font.size": 11, "axes.titlesize": 12, "axes.labelsize": 11, "legend.fontsize": 9,
    "xtick.labelsize": 10, "ytick.labelsize": 10, "figure.dpi": 100, "savefig.dpi": 120,
    "axes.grid": True, "grid.alpha": 0.3, "grid.linestyle": "-", "axes.spines.top": False,
    "axes.spines.right": False, "figure.titlesize": 14, "figure.titleweight": "bold",
    "lines.linewidth": 1.8, "lines.markersize": 5,
}
PALETTE = ["#1f77b4", "#d62728", "#2ca02c", "#9467bd", "#ff7f0e", "#8c564b", "#e377c2",
           "#17becf", "#bcbd22", "#7f7f7f"]
BASELINE_COLOUR = "#222222"
PHASE_COLOURS = {"distribute": "#4c72b0", "compute": "#dd8452", "gather": "#55a868",
                 "overhead": "#c44e52"}
SCENARIO_TITLES = {"sizes": "one file, swept size", "files": "5 s files, several per request"}


@dataclass
class Figure:
    file: str
    title: str
    caption: str


def colours(runs: list[Run], baseline: Run | None) -> dict[str, str]:
    out: dict[str, str] = {}
    k = 0
    for run in runs:
        if run is baseline:
            out[run.name] = BASELINE_COLOUR
        else:
            out[run.name] = PALETTE[k % len(PALETTE)]
            k += 1
    return out


def _save(fig: plt.Figure, outdir: Path, name: str) -> str:
    path = outdir / name
    # constrained layout already fits the margins; bbox_inches="tight" would draw twice
    fig.savefig(path, format="png", facecolor="white")
    plt.close(fig)
    return name


def _si_seconds(value: float, _pos: int | None = None) -> str:
    if value <= 0:
        return "0"
    for scale, unit in ((1.0, "s"), (1e-3, "ms"), (1e-6, "µs"), (1e-9, "ns")):
        if value >= scale * 0.999:
            return f"{value / scale:.3g} {unit}"
    return f"{value:.3g} s"


def _plain(value: float, _pos: int | None = None) -> str:
    return f"{value:g}"


def _nice_log(ax: plt.Axes, which: str = "y") -> None:
    """More labelled ticks on a log axis that spans few decades (call after plotting)."""
    axis = ax.yaxis if which == "y" else ax.xaxis
    if axis.get_scale() != "log" or getattr(axis.get_transform(), "base", 10) != 10:
        return  # base-2 axes (file counts, nodes) keep their own ticks
    lo, hi = ax.get_ylim() if which == "y" else ax.get_xlim()
    if not (lo > 0 and hi > lo):
        return
    decades = np.log10(hi / lo)
    if decades < 0.4:  # too narrow for a log axis to help
        formatter = axis.get_major_formatter()
        (ax.set_yscale if which == "y" else ax.set_xscale)("linear")
        axis.set_major_formatter(formatter)
        label = (ax.get_ylabel if which == "y" else ax.get_xlabel)()
        (ax.set_ylabel if which == "y" else ax.set_xlabel)(label.replace(", log scale", "")
                                                             .replace(" (log scale)", ""))
        return
    if decades < 0.8:
        subs = (1.0, 1.5, 2.0, 3.0, 5.0, 7.0)
    elif decades < 2.5:
        subs = (1.0, 2.0, 5.0)
    else:
        return
    axis.set_major_locator(LogLocator(base=10, subs=subs))
    axis.set_minor_formatter(NullFormatter())


def _si_bytes(value: float, _pos: int | None = None) -> str:
    return fmt_bytes(value) if value > 0 else "0"


TIME_UNITS = ((1.0, "s"), (1e-3, "ms"), (1e-6, "µs"), (1e-9, "ns"))


def _time_unit(ax: plt.Axes) -> tuple[float, str]:
    """The unit that suits the axis' upper limit."""
    top = ax.get_ylim()[1]
    for scale, unit in TIME_UNITS:
        if top >= scale * 0.999:
            return scale, unit
    return TIME_UNITS[-1]


def _si_count(value: float, _pos: int | None = None) -> str:
    for scale, unit in ((1e12, "T"), (1e9, "G"), (1e6, "M"), (1e3, "k")):
        if value >= scale:
            return f"{value / scale:.3g}{unit}"
    return f"{value:.3g}"


def _time_axis(ax: plt.Axes, label: str = "time", log: bool = True) -> None:
    """A time axis in one unit chosen from its range, named in the label."""
    if log:
        ax.set_yscale("log")
    scale, unit = _time_unit(ax)
    ax.yaxis.set_major_formatter(FuncFormatter(lambda v, _p: f"{v / scale:g}"))
    ax.yaxis.set_minor_formatter(NullFormatter())
    ax.set_ylabel(f"{label} ({unit}, log scale)" if log else f"{label} ({unit})")


def _sweep_axis(ax: plt.Axes, scenario: str, xs: list[float]) -> None:
    if scenario == "files":
        ax.set_xscale("log", base=2)
        ticks = sorted(set(int(x) for x in xs if x > 0))
        ax.set_xticks(ticks)
        ax.xaxis.set_major_formatter(FuncFormatter(lambda v, _p: f"{v:g}"))
        ax.xaxis.set_minor_formatter(NullFormatter())
        ax.set_xlabel("5 s files per request (count, log scale)")
    else:
        ax.set_xscale("log")
        ax.xaxis.set_major_formatter(FuncFormatter(_plain))
        ax.set_xlabel("input size per request (kB, log scale)")


def _sweep_x(s: PointStats) -> float:
    return float(s.point.nfiles) if s.point.scenario == "files" else s.point.input_bytes / 1000.0


def _series(items: list[PointStats], scenario: str) -> dict[tuple[str, str], list[PointStats]]:
    """Usable points of one scenario grouped by (run, transform config), sorted by x."""
    groups: dict[tuple[str, str], list[PointStats]] = {}
    for s in items:
        if s.usable and s.point.scenario == scenario:
            groups.setdefault((s.run.name, s.point.config), []).append(s)
    for pts in groups.values():
        pts.sort(key=_sweep_x)
    return groups


def _series_label(run: str, config: str, groups: dict) -> str:
    configs = {c for (_r, c) in groups}
    return run if len(configs) == 1 else f"{run} – {config}"


def _errorline(ax: plt.Axes, xs, meds, los, his, **kw) -> None:
    xs, meds, los, his = (np.asarray(v, dtype=float) for v in (xs, meds, los, his))
    ok = np.isfinite(meds) & (meds > 0)
    if not ok.any():
        return
    lo_err = np.clip(meds[ok] - los[ok], 0, None)
    hi_err = np.clip(his[ok] - meds[ok], 0, None)
    ax.errorbar(xs[ok], meds[ok], yerr=[lo_err, hi_err], capsize=3, marker="o", **kw)


def _summary_cols(pts: list[PointStats], series: str):
    return ([s.summaries[series].median for s in pts], [s.summaries[series].ci_lo for s in pts],
            [s.summaries[series].ci_hi for s in pts])


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
            title: str, outdir: Path, name: str) -> Figure | None:
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
                            label="implausible (see Read first)" if ax is axes[i][0] else None)
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
                      "(baseline median / cluster median) with its 95 % bootstrap CI (log scale) "
                      "and the break-even line 1. Not a parallel speedup: no ideal line, "
                      "efficiency or Karp–Flatt fraction. The dotted line marks the crossover.")
    return Figure(name, title,
                  "Speedup S with its 95 % CI (log scale), the break-even line S = 1 and the "
                  "ideal S = p; efficiency E = S/p against the ideal 100 %; Karp–Flatt "
                  "e = (1/S − 1/p)/(1 − 1/p) against the ideal 0. p = ranks that compute. Red "
                  "rings: implausible values (E > 100 % or e < 0), explained under Read first. "
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


def _loglog(ax: plt.Axes) -> None:
    ax.set_xscale("log", base=2)
    ax.xaxis.set_major_locator(LogLocator(base=4))
    ax.xaxis.set_major_formatter(FuncFormatter(_si_bytes))
    ax.xaxis.set_minor_formatter(NullFormatter())
    ax.set_xlabel("message size (bytes, kB = 1000 B; log scale)")


def _band(ax: plt.Axes, x, med, lo, hi, colour: str, style: str, label: str, scale: float = 1.0) -> None:
    x = np.asarray(x, dtype=float)
    ok = (x > 0) & np.isfinite(med) & (np.asarray(med) > 0)
    if not ok.any():
        return
    ax.plot(x[ok], np.asarray(med)[ok] * scale, color=colour, linestyle=style, marker=".",
            label=label)
    if not np.allclose(np.asarray(lo)[ok], np.asarray(hi)[ok], equal_nan=True):
        ax.fill_between(x[ok], np.asarray(lo)[ok] * scale, np.asarray(hi)[ok] * scale,
                        color=colour, alpha=0.18, linewidth=0)


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


def model_fit(run: Run, model: RunModel, comp_data: tuple[np.ndarray, np.ndarray],
              outdir: Path) -> Figure | None:
    if model.compute is None:
        return None
    ab_data = model.comm_data
    panels = 2 if (model.hockney is not None and ab_data is not None) else 1
    fig, axes = plt.subplots(1, panels, figsize=(7.5 * panels, 5.2), constrained_layout=True,
                             squeeze=False)
    k = 0
    if panels == 2:
        ax = axes[0][0]
        h: HockneyFit = model.hockney
        m, t, what = ab_data
        ok = (m > 0) & np.isfinite(t)
        ax.plot(m[ok], t[ok], "o", color=PALETTE[0], label=f"measured ({what})")
        grid = np.geomspace(max(1.0, float(np.min(m[ok]))), float(np.max(m[ok])), 100)
        curve = h.time(grid)
        ax.plot(grid, curve, "-", color=PALETTE[1],
                label=f"α = {_si_seconds(h.alpha_s)}, β = {h.beta_Bps / 1e6:.3g} MB/s")
        _loglog(ax)
        if what.startswith("distribution"):
            ax.set_xlabel("bytes the root sends, M·remote/p (bytes, log scale)")
            ax.set_title("slowest rank's distribution time = (p−1)·α + M·(p−1)/(p·β)\n"
                         f"rel. error median {100 * h.rel_err_median:.1f} %, "
                         f"max {100 * h.rel_err_max:.1f} %", fontsize=11)
        else:
            ax.set_title(f"t(m) = α + m/β; rel. error median {100 * h.rel_err_median:.1f} %, "
                         f"max {100 * h.rel_err_max:.1f} %", fontsize=11)
        _time_axis(ax, "time")
        _nice_log(ax, "x")
        _nice_log(ax, "y")
        ax.legend()
        k = 1
    ax = axes[0][k]
    c: AffineFit = model.compute
    x, y = comp_data
    ok = (x > 0) & np.isfinite(y)
    ax.plot(x[ok], y[ok], "o", color=PALETTE[2], alpha=0.7, label="measured (rank, point)")
    if ok.any():
        grid = np.geomspace(float(np.min(x[ok])), float(np.max(x[ok])), 100)
        ax.plot(grid, c(grid), "-", color=PALETTE[1],
                label=f"c0 = {_si_seconds(c.a)}, {c.b * 1e9:.3g} ns/flop")
    ax.set_xscale("log")
    ax.xaxis.set_major_formatter(FuncFormatter(_si_count))
    ax.set_xlabel("flops computed by the rank per request (log scale)")
    _time_axis(ax, "median compute time")
    _nice_log(ax, "x")
    _nice_log(ax, "y")
    ax.set_title(f"per-rank compute; rel. error median {100 * c.rel_err_median:.1f} %, "
                 f"max {100 * c.rel_err_max:.1f} %", fontsize=11)
    ax.legend()
    fig.suptitle(f"Model fits: {run.name}")
    name = _save(fig, outdir, f"model_{slug(run.name)}.png")
    return Figure(name, f"Model fits: {run.name}", "Left: Hockney latency–bandwidth model "
                  "fitted with relative-error weighting. Right: per-rank compute time against "
                  "the rank's flops, fitted as c0 + c1·flops.")


def forecast(val, outdir: Path) -> Figure | None:
    """The validated forecast: request time and speedup against nodes, with the
    measured points and the held-out check."""
    model = val.model
    if model is None or not model.forecasts:
        return None
    fig, (ax1, ax2) = plt.subplots(1, 2, figsize=(16, 5.6), constrained_layout=True)
    for k, f in enumerate(model.forecasts):
        col = PALETTE[k % len(PALETTE)]
        ax1.plot(f.nodes, f.t_total, "-", color=col, label=f"{f.label}: forecast")
        ax2.plot(f.nodes, f.speedup, "-", color=col, label=f"{f.label}: forecast")
        meas = getattr(f, "measured", [])
        if meas:
            ax1.plot([m[0] for m in meas], [m[1] for m in meas], "o", color=col,
                     markeredgecolor="black", markersize=8, label=f"{f.label}: measured")
    ax2.plot(model.forecasts[0].nodes, model.forecasts[0].nodes, ":", color="0.45",
             label="ideal S = nodes")
    ax2.axhline(1.0, color=BASELINE_COLOUR, linestyle="--", linewidth=1, label="S = 1")
    for ax in (ax1, ax2):
        ax.set_xscale("log", base=2)
        top = int(model.forecasts[0].nodes[-1])
        ax.set_xticks([2 ** k for k in range(int(np.log2(max(1, top))) + 1)])
        ax.xaxis.set_major_formatter(FuncFormatter(lambda v, _p: f"{v:g}"))
        ax.xaxis.set_minor_formatter(NullFormatter())
        ax.set_xlabel("nodes (count, log scale)")
        ax.legend(fontsize=8, loc="best")
    _time_axis(ax1, "request time")
    _nice_log(ax1, "y")
    ax2.set_yscale("log")
    ax2.yaxis.set_major_formatter(FuncFormatter(_plain))
    ax2.set_ylabel(f"speedup against {model.forecasts[0].speedup_ref} (log scale)")
    ax1.set_title("predicted request time\n" + val.error_text, fontsize=10)
    ax2.set_title("predicted speedup")
    fig.suptitle("Forecast (a model, not a measurement)")
    name = _save(fig, outdir, "forecast.png")
    return Figure(name, "Forecast", "Lines: the model fitted on every node count measured; "
                  "markers: measured medians. Checked before it was drawn: " + val.error_text
                  + ". A forecast, not a finding.")


def load(items: list[tuple[Run, list[LoadStepStats], Saturation | None]], colour: dict[str, str],
         outdir: Path) -> Figure | None:
    items = [it for it in items if it[1]]
    if not items:
        return None
    loops = sorted({steps[0].loop for _r, steps, _s in items}, key=lambda l: l != "closed")
    fig, axes = plt.subplots(len(loops), 2, figsize=(15, 5.2 * len(loops)), constrained_layout=True,
                             squeeze=False)
    for row, loop in enumerate(loops):
        ax1, ax2 = axes[row]
        top = 0.0
        for run, steps, sat in items:
            if steps[0].loop != loop:
                continue
            col = colour[run.name]
            x = np.array([s.load for s in steps])
            top = max(top, float(np.nanmax(x)) if x.size else 0.0)
            for q, style in (("p50", "-"), ("p95", "--"), ("p99", ":")):
                y = np.array([getattr(s, q) for s in steps])
                ok = np.isfinite(y) & (y > 0)
                ax1.plot(x[ok], y[ok], style, color=col, marker="o", label=f"{run.name} {q}")
            thr = np.array([s.throughput_rps for s in steps])
            ax2.plot(x, thr, "-", color=col, marker="o", label=f"{run.name}: completed")
            bad = np.array([not s.healthy for s in steps])
            if bad.any():
                ax2.plot(x[bad], thr[bad], "x", color="#c00000", markersize=10, markeredgewidth=2,
                         label=f"{run.name}: failing step")
            if sat is not None and np.isfinite(sat.saturation_load):
                for ax in (ax1, ax2):
                    ax.axvline(sat.saturation_load, color=col, linestyle="-.", linewidth=1.2)
                ax2.annotate(f"saturation: {sat.saturation_load:g} {sat.load_unit}".replace(
                             " 1 clients", " 1 client"),
                             (sat.saturation_load, 0), xycoords=("data", "axes fraction"),
                             xytext=(4, 8), textcoords="offset points", color=col, fontsize=9,
                             rotation=90)
            slo = _slo(steps)
            if slo > 0:
                ax1.axhline(slo, color="0.5", linestyle="--", linewidth=1)
                ax1.annotate(f"SLO {_si_seconds(slo)}", (0, slo), xycoords=("axes fraction", "data"),
                             xytext=(4, 3), textcoords="offset points", fontsize=9, color="0.4")
        if loop == "open" and top > 0:
            ax2.plot([0, top], [0, top], color="0.6", linestyle="--", linewidth=1,
                     label="ideal (= offered)")
        xlabel = ("concurrent clients (closed loop)" if loop == "closed"
                  else "offered load (requests/s, open loop)")
        _time_axis(ax1, "request latency")
        _nice_log(ax1, "y")
        ax1.set_xlabel(xlabel)
        ax1.set_title("latency percentiles (warm-up excluded)")
        ax1.legend(fontsize=8, ncol=2, handlelength=3.5)
        ax2.set_xlabel(xlabel)
        ax2.set_ylabel("throughput (completed requests/s, linear)")
        ax2.set_ylim(bottom=0)
        ax2.set_xlim(left=0)
        ax2.set_title("throughput")
        ax2.legend(fontsize=8)
        if loop == "closed":
            for ax in (ax1, ax2):
                ax.xaxis.get_major_locator().set_params(integer=True)
    fig.suptitle("Service under load (study rows 10–11)")
    name = _save(fig, outdir, "load.png")
    return Figure(name, "Load: latency and throughput against the load",
                  "p50/p95/p99 of t_done − t_submit for finished requests after the warm-up; "
                  "throughput is finished requests per second of the measured window. The load "
                  "is the number of clients (closed loop) or the offered rate (open loop). The "
                  "dash-dot line marks the saturation point; crosses mark failing steps.")


def _slo(steps: list[LoadStepStats]) -> float:
    try:
        return float(steps[0].step.attrs.get("slo_ms") or 0.0) / 1000.0
    except (TypeError, ValueError):
        return 0.0


def apply_style() -> None:
    plt.rcParams.update(STYLE)
