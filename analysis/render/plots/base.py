"""What every figure shares: the style, colours, the Figure record, saving, and the axis and series helpers."""

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

from ...derive import PointStats  # noqa: E402
from ...find.tables import fmt_bytes  # noqa: E402


STYLE = {
    "font.size": 11, "axes.titlesize": 12, "axes.labelsize": 11, "legend.fontsize": 9,
    "xtick.labelsize": 10, "ytick.labelsize": 10, "figure.dpi": 100, "savefig.dpi": 120,
    "axes.grid": True, "grid.alpha": 0.3, "grid.linestyle": "-", "axes.spines.top": False,
    "axes.spines.right": False, "figure.titlesize": 14, "figure.titleweight": "bold",
    "lines.linewidth": 1.8, "lines.markersize": 5,
}


PHASE_COLOURS = {"distribute": "#4c72b0", "compute": "#dd8452", "gather": "#55a868",
                 "overhead": "#c44e52"}


SCENARIO_TITLES = {"sizes": "one file, swept size", "files": "5 s files, several per request"}


@dataclass
class Figure:
    file: str
    title: str
    caption: str


def _no_empty_log_axes(fig: plt.Figure) -> None:
    """A log axis with nothing positive to show (a panel whose every value is NaN, e.g. no
    efficiency against other hardware) cannot be drawn: it goes back to linear."""
    for ax in fig.axes:
        for which, lim, setter in (("y", ax.get_ylim, ax.set_yscale), ("x", ax.get_xlim, ax.set_xscale)):
            axis = ax.yaxis if which == "y" else ax.xaxis
            if axis.get_scale() != "log":
                continue
            lo, hi = lim()
            if not (np.isfinite(lo) and np.isfinite(hi) and lo > 0 and hi > lo):
                setter("linear")


def _save(fig: plt.Figure, outdir: Path, name: str) -> str:
    path = outdir / name
    _no_empty_log_axes(fig)
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


def apply_style() -> None:
    plt.rcParams.update(STYLE)
