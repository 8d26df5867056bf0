"""The model, forecast check, forecast, load step and saturation tables."""

from __future__ import annotations

from ...derive import LoadStepStats, Saturation
from ...read.runs import Run
from ...derive.model import RunModel
from .base import Column, Table, fmt_load


def validation(val) -> Table:
    rows = [{"point": pid, "nodes": val.held_nodes, "measured": meas, "predicted": pred,
             "error": abs(pred - meas) / meas if meas > 0 else None}
            for pid, meas, pred in val.checks]
    cols = [Column("point", "point"), Column("nodes", "held-out nodes", "int"),
            Column("measured", "measured median", "time"),
            Column("predicted", "predicted", "time"), Column("error", "error", "pct")]
    return Table("forecast_check", "Forecast check on the held-out node count", cols, rows,
                 note="Fitted on " + ", ".join(map(str, val.fit_nodes)) + " nodes; the forecast "
                      "is shown only when every error here is at most 25 %.")


def models(items: list[RunModel]) -> Table:
    rows = []
    for m in items:
        h, c = m.hockney, m.compute
        rows.append({
            "run": m.run,
            "alpha": h.alpha_s if h else None, "beta": h.beta_Bps if h else None,
            "ab_source": h.source if h else "–",
            "ab_err_med": h.rel_err_median if h else None, "ab_err_max": h.rel_err_max if h else None,
            "c0": c.a if c else None, "ns_per_flop": c.b * 1e9 if c else None,
            "comp_err_med": c.rel_err_median if c else None,
            "comp_err_max": c.rel_err_max if c else None,
            "t0": m.t0_s, "total_err_med": m.total_rel_err_median,
            "total_err_max": m.total_rel_err_max, "n": m.total_n,
        })
    cols = [Column("run", "run"), Column("alpha", "α (latency)", "time"),
            Column("beta", "β (bandwidth)", "Bps"), Column("ab_source", "α–β from"),
            Column("ab_err_med", "α–β err median", "pct"), Column("ab_err_max", "α–β err max", "pct"),
            Column("c0", "compute c0 per request", "time"),
            Column("ns_per_flop", "compute ns/flop", "float"),
            Column("comp_err_med", "compute err median", "pct"),
            Column("comp_err_max", "compute err max", "pct"), Column("t0", "fixed t0", "time"),
            Column("total_err_med", "total err median", "pct"),
            Column("total_err_max", "total err max", "pct"), Column("n", "points", "int")]
    return Table("model", "Fitted model and its error on the measured points", cols, rows,
                 note="Errors are relative: |model − measured| / measured. The total error is "
                      "what the forecast makes on the points that were measured; trust the "
                      "forecast no further than that, and less the further it extrapolates.")


FORECAST_SHOWN = (1, 2, 4, 8, 16, 32, 64)


def forecasts(items: list[RunModel]) -> Table:
    rows = []
    for m in items:
        for f in m.forecasts:
            for i, p in enumerate(f.nodes):
                rows.append({"run": m.run, "point": f.point_id, "request": f.label,
                             "nodes": int(p), "t_dist": f.t_dist[i], "t_comp": f.t_comp[i],
                             "t_gather": f.t_gather[i], "t_total": f.t_total[i],
                             "speedup": f.speedup[i], "speedup_ref": f.speedup_ref})
    cols = [Column("run", "run"), Column("point", "point"), Column("request", "request"),
            Column("nodes", "nodes", "int"), Column("t_dist", "distribute", "time"),
            Column("t_comp", "compute", "time"), Column("t_gather", "gather", "time"),
            Column("t_total", "total", "time"), Column("speedup", "speedup", "ratio"),
            Column("speedup_ref", "speedup against")]
    shown = [r for r in rows if r["nodes"] in FORECAST_SHOWN]
    return Table("forecast", "Forecast for 1…64 nodes (page shows powers of two; the CSV has all)",
                 cols, rows, html_rows=shown)


def load_steps(items: list[tuple[Run, list[LoadStepStats]]]) -> Table:
    rows = []
    for run, steps in items:
        for s in steps:
            rows.append({"run": run.name, "step": s.step.id, "loop": s.loop, "clients": s.clients,
                         "load": fmt_load(s.load, s.load_unit),
                         "offered": s.offered_rps, "throughput": s.throughput_rps,
                         "requests": s.n, "done": s.done, "rejected": s.rejected,
                         "unfinished": s.unfinished, "warmup_excluded": s.warmup_excluded,
                         "p50": s.p50, "p95": s.p95, "p99": s.p99, "max": s.max_s,
                         "submitted": s.submitted if s.submitted >= 0 else None,
                         "queue": s.phases.get("t_queue"), "healthy": "yes" if s.healthy else f"no ({s.why})"})
    cols = [Column("run", "run"), Column("step", "step"), Column("loop", "loop"),
            Column("clients", "clients", "int"), Column("load", "load"),
            Column("offered", "offered (req/s)", "float"),
            Column("throughput", "done (req/s)", "float"), Column("requests", "requests", "int"),
            Column("done", "done", "int"), Column("rejected", "rejected", "int"),
            Column("unfinished", "unfinished", "int"),
            Column("warmup_excluded", "warm-up excluded", "int"),
            Column("submitted", "submitted (warm-up included)", "int"),
            Column("p50", "p50", "time"), Column("p95", "p95", "time"), Column("p99", "p99", "time"),
            Column("max", "max", "time"),
            Column("queue", "median queue wait", "time"), Column("healthy", "healthy")]
    return Table("load_steps", "Load steps (warm-up requests excluded)", cols, rows,
                 note="Latency is t_done − t_submit of finished requests. The load is the number "
                      "of clients in a closed loop and the offered rate in an open loop. A step's "
                      "verdict is its own 'pass' attribute when the file has one; otherwise wulfbench's "
                      "own rule: no request rejected or unfinished, no timeout, p95 within the SLO, "
                      "and no throughput shortfall (open loop: at most max(10 %, 2√n) of the n "
                      "requests unanswered in the window; closed loop: throughput rising by at "
                      "least a quarter of the clients' rise).")


def saturation(items: list[tuple[Run, Saturation]]) -> Table:
    rows = [{"run": run.name, "loop": s.loop, "unit": s.load_unit,
             "saturation_load": s.saturation_load, "saturation_rps": s.saturation_rps,
             "p95": s.saturation_p95_s, "first_fail_load": s.first_fail_load,
             "first_fail_rps": s.first_fail_rps, "reason": s.fail_reason, "source": s.source}
            for run, s in items]
    cols = [Column("run", "run"), Column("loop", "loop"), Column("unit", "load unit"),
            Column("saturation_load", "saturation load", "float"),
            Column("saturation_rps", "served there (req/s)", "float"),
            Column("p95", "p95 there", "time"),
            Column("first_fail_load", "first failing load", "float"),
            Column("first_fail_rps", "served there (req/s)", "float"),
            Column("reason", "why it failed"), Column("source", "from")]
    return Table("load_saturation", "Saturation point", cols, rows)
