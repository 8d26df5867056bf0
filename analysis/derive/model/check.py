"""The held-out check of a model over node counts, and the forecast it allows."""

from __future__ import annotations

from dataclasses import dataclass, field
import numpy as np

from .. import stats
from .. import median_total
from ...read.runs import FftPoint, Run
from .fit import NODES, Forecast, RunModel, _err_stats, predict, fit_runs


MAX_HELD_OUT_ERROR = 0.25


MIN_NODE_COUNTS = 3


def node_count(run: Run) -> int:
    """Nodes the run used: the root attribute nnodes, else distinct host nodes."""
    try:
        n = int(run.attrs.get("nnodes") or 0)
    except (TypeError, ValueError):
        n = 0
    return n or len({int(h.get("node", -1)) for h in run.hosts}) or 1


@dataclass
class Validation:
    """A forecast checked on a node count held out of its fit."""

    node_counts: list[int]
    fit_nodes: list[int]
    held_nodes: int | None
    checks: list[tuple[str, float, float]] = field(default_factory=list)  # point, measured, predicted
    err_max: float = float("nan")
    err_median: float = float("nan")
    ok: bool = False
    reason: str = ""
    model: RunModel | None = None  # refitted on every node count, only when ok

    @property
    def error_text(self) -> str:
        if self.held_nodes is None or not np.isfinite(self.err_max):
            return ""
        return (f"error on the held-out {self.held_nodes} nodes: max {100 * self.err_max:.0f} %, "
                f"median {100 * self.err_median:.0f} % over {len(self.checks)} point(s), "
                f"fitted on {', '.join(map(str, self.fit_nodes))} nodes")


def validate(items: list[tuple[Run, list[FftPoint]]], comm: list[Run] | None = None) -> Validation:
    """Fit on every node count but the largest, predict the largest, and accept
    the model only with at least three node counts and a held-out error of at
    most 25 % at every point. comm: transfer runs of the same cluster (fit_runs)."""
    by_nodes: dict[int, list[tuple[Run, list[FftPoint]]]] = {}
    for run, pts in items:
        if pts:
            by_nodes.setdefault(node_count(run), []).append((run, pts))
    counts = sorted(by_nodes)
    val = Validation(node_counts=counts, fit_nodes=counts[:-1],
                     held_nodes=counts[-1] if len(counts) > 1 else None)
    if len(counts) < MIN_NODE_COUNTS:
        have = ", ".join(map(str, counts)) or "none"
        val.reason = (f"runs at {len(counts)} node count(s) ({have}); a forecast needs runs at "
                      f"three or more node counts, one of them held out to check it")
        return val
    fit_items = [it for n in val.fit_nodes for it in by_nodes[n]]
    fitted = fit_runs("fit", fit_items, comm)
    if fitted.compute is None:
        val.reason = "no FFT points to fit"
        return val
    preds, meas = [], []
    for _run, pts in by_nodes[counts[-1]]:
        for point in pts:
            t_meas = median_total(point)
            t_pred = float(predict(fitted.hockney, fitted.compute, fitted.t0_s, point,
                                   np.array([point.p]))[3][0])
            val.checks.append((point.id, t_meas, t_pred))
            preds.append(t_pred)
            meas.append(t_meas)
    val.err_max, val.err_median = _err_stats(np.asarray(preds), np.asarray(meas))
    if not np.isfinite(val.err_max):
        val.reason = "the held-out run has no point to check"
    elif val.err_max > MAX_HELD_OUT_ERROR:
        val.reason = (f"the model misses the held-out {counts[-1]} nodes by up to "
                      f"{100 * val.err_max:.0f} % (more than 25 %)")
    else:
        val.ok = True
        val.model = fit_runs("all node counts", items, comm)
    return val


def forecast(model: RunModel, point: FftPoint, label: str, baseline_t: float | None,
             nodes: np.ndarray = NODES, ranks_per_node: int = 1) -> Forecast | None:
    """Predict `point`'s request over `nodes` (each with `ranks_per_node`
    computing ranks); speedup against the measured baseline time when given,
    else against the model's own one-node time."""
    if model.compute is None:
        return None
    t_dist, t_comp, t_gather, t_total = predict(model.hockney, model.compute, model.t0_s,
                                                point, np.asarray(nodes) * ranks_per_node)
    if baseline_t is not None and np.isfinite(baseline_t):
        ref, ref_name = baseline_t, "measured baseline"
    else:
        ref, ref_name = float(t_total[0]), "forecast for one node"
    med, lo, hi, _ = stats.median_ci(point.times["t_total"])
    with np.errstate(all="ignore"):
        speed = ref / t_total
    return Forecast(point_id=point.id, label=label, nodes=np.asarray(nodes), t_dist=t_dist,
                    t_comp=t_comp, t_gather=t_gather, t_total=t_total, speedup=speed,
                    speedup_ref=ref_name, measured_p=point.p, measured_t=med,
                    measured_ci=(lo, hi), measured_speedup=ref / med if med > 0 else float("nan"))
