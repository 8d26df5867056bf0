"""The model fit, the forecast and the service-under-load figures."""

from __future__ import annotations

from pathlib import Path

import matplotlib.pyplot as plt
import numpy as np
from matplotlib.ticker import FuncFormatter, NullFormatter

from ...find.tables import scaling as scaling_table
from . import scaling
from ...derive import LoadStepStats, Saturation
from ...find.tables.base import slug
from ...read.runs import Run
from ...derive.model import AffineFit, HockneyFit, RunModel
from ...find.common import PALETTE, BASELINE_COLOUR
from .base import Figure, _save, _si_seconds, _plain, _nice_log, _si_count, _time_axis, _loglog


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


def measured_scaling(rows: list[dict], outdir: Path) -> Figure | None:
    """scaling.png: the measured scaling figure (render.plots.scaling) as the report shows it."""
    name = scaling.plot(rows, outdir)
    return Figure(name, "Measured scaling", scaling_table.CAPTION) if name else None
