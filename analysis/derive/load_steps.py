"""Load steps: per-step latency and throughput, their verdict and the saturation point."""

from __future__ import annotations

from dataclasses import dataclass, field

import numpy as np

from . import stats
from ..read.runs import LOAD_STATUS, LoadStep, Run, number_or


@dataclass
class LoadStepStats:
    step: LoadStep
    load: float  # the step's load: clients (closed loop) or offered requests/s (open loop)
    offered_rps: float
    clients: int
    loop: str
    n: int  # requests after warm-up
    done: int
    rejected: int
    unfinished: int
    warmup_excluded: int
    throughput_rps: float
    p50: float
    p95: float
    p99: float
    phases: dict[str, float] = field(default_factory=dict)
    max_s: float = float("nan")  # the slowest answered request
    submitted: int = -1  # every request made, warm-up included (the step's attribute; -1 without)
    healthy: bool = True
    why: str = ""

    @property
    def load_unit(self) -> str:
        return load_unit(self.loop)


def load_unit(loop: str) -> str:
    return "clients" if loop == "closed" else "req/s"


def _attr_float(attrs: dict, key: str) -> float:
    try:
        return float(attrs.get(key))
    except (TypeError, ValueError):
        return float("nan")


def load_step_stats(step: LoadStep) -> LoadStepStats:
    d = step.data
    a = step.attrs
    n_all = max((v.shape[0] for v in d.values()), default=0)
    warm = d.get("warmup", np.zeros(n_all)).astype(int) == 1
    status = d.get("status", np.zeros(n_all)).astype(int)
    keep = ~warm
    t_submit = d.get("t_submit", np.full(n_all, np.nan)).astype(float)
    t_done = d.get("t_done", np.full(n_all, np.nan)).astype(float)
    done = keep & (status == 0) & np.isfinite(t_done)
    lat = (t_done - t_submit)[done]
    # the measured window: from the file when it says, else duration - warm-up
    start, end = _attr_float(a, "window_start_s"), _attr_float(a, "window_end_s")
    if np.isfinite(end - start):
        window = end - start
    else:
        window = _attr_float(a, "duration_s") - (_attr_float(a, "warmup_s") if np.isfinite(
            _attr_float(a, "warmup_s")) else 0.0)
    if not window > 0:
        span = t_done[done]
        window = float(np.ptp(span)) if span.size > 1 else float("nan")
    phases = {}
    for name in ("t_queue", "t_distribute", "t_compute", "t_return"):
        if name in d:
            vals = d[name].astype(float)[done]
            phases[name] = float(np.median(vals)) if vals.size else float("nan")
    n_done = int(done.sum())
    with np.errstate(all="ignore"):
        thr = n_done / window if window > 0 else float("nan")
    loop = str(a.get("loop", ""))
    clients = int(a.get("clients") or 0)
    offered = _attr_float(a, "offered_rps")
    load = _attr_float(a, "load")
    if not np.isfinite(load):
        load = float(clients) if loop == "closed" else offered
    return LoadStepStats(step=step, load=load, offered_rps=offered, clients=clients, loop=loop,
                         n=int(keep.sum()), done=n_done,
                         rejected=int((keep & (status == 1)).sum()),
                         unfinished=int((keep & (status == 2)).sum()),
                         warmup_excluded=int(warm.sum()), throughput_rps=thr,
                         p50=stats.percentile(lat, 50), p95=stats.percentile(lat, 95),
                         p99=stats.percentile(lat, 99), phases=phases,
                         max_s=float(np.max(lat)) if lat.size else float("nan"),
                         submitted=int(number_or(a.get("submitted"), -1)))


@dataclass
class Saturation:
    loop: str
    saturation_load: float  # clients or req/s, see loop
    saturation_rps: float
    saturation_p95_s: float
    first_fail_load: float
    first_fail_rps: float
    fail_reason: str
    source: str  # "file" or "recomputed"

    @property
    def load_unit(self) -> str:
        return load_unit(self.loop)


def judge_step(s: LoadStepStats) -> None:
    """Set s.healthy and s.why: the step's own verdict (`pass`, `fail_reason`)
    when the file has one, else the rule of load_analysis."""
    a = s.step.attrs
    if a.get("pass") is not None and np.isfinite(_attr_float(a, "pass")):
        s.healthy = int(_attr_float(a, "pass")) == 1
        reason = str(a.get("fail_reason") or "")
        s.why = "" if s.healthy else (reason if reason not in ("", "none") else "failed")
        return
    slo = _attr_float(a, "slo_ms") / 1000.0
    reasons = []
    if slo > 0 and not s.p95 <= slo:
        reasons.append("latency")
    # Requests still in service when the step ends are not failures: allow
    # as many as Little's law expects in the system (throughput x p50) + 1.
    in_flight = (s.throughput_rps * s.p50 if np.isfinite(s.throughput_rps * s.p50) else 0.0) + 1
    stuck = max(0.0, s.unfinished - in_flight)
    if s.n and (s.rejected + stuck) / s.n > 0.01:
        reasons.append("rejections" if s.rejected >= stuck else "unfinished")
    if s.loop == "open" and s.offered_rps > 0 and not s.throughput_rps >= 0.9 * s.offered_rps:
        reasons.append("throughput")
    if int(_attr_float(a, "timed_out") == 1):
        reasons.append("timed out")
    s.healthy = not reasons
    s.why = ", ".join(reasons)


def load_analysis(run: Run) -> tuple[list[LoadStepStats], Saturation | None]:
    """Per-step statistics (warm-up excluded) and the saturation point.

    A step's verdict is its own `pass` attribute when the file has one.
    Otherwise a step is healthy when its p95 latency meets the SLO (if one is
    set), at most 1 % of its requests were rejected or left unfinished (beyond
    the throughput x median latency + 1 that may still be in service when the
    step ends), it did not time out and (open loop) it completed at least 90 %
    of the offered rate. The saturation point comes from the /load attributes
    when present; otherwise it is the highest load before the first unhealthy
    step.
    """
    steps = sorted((load_step_stats(s) for s in run.load_steps), key=lambda s: s.load)
    for s in steps:
        judge_step(s)
    if not steps:
        return steps, None
    loop = steps[0].loop
    la = run.load_attrs
    sat_rps = _attr_float(la, "saturation_rps")
    if np.isfinite(sat_rps) or str(la.get("saturation_step") or ""):
        def load_of(key_load: str, step_key: str, rps: float) -> float:
            value = _attr_float(la, key_load)
            if np.isfinite(value):
                return value
            step = next((s for s in steps if s.step.id == str(la.get(step_key) or "")), None)
            if step is None and np.isfinite(rps):
                step = next((s for s in steps if np.isclose(s.offered_rps, rps)), None)
            return step.load if step is not None else float("nan")
        fail_rps = _attr_float(la, "first_fail_rps")
        return steps, Saturation(
            loop=loop, saturation_load=load_of("saturation_load", "saturation_step", sat_rps),
            saturation_rps=sat_rps, saturation_p95_s=_attr_float(la, "saturation_p95_s"),
            first_fail_load=load_of("first_fail_load", "first_fail_step", fail_rps),
            first_fail_rps=fail_rps, fail_reason=str(la.get("fail_reason") or ""), source="file")
    good = None
    fail = None
    for s in steps:
        if s.healthy:
            good = s
        else:
            fail = s
            break
    nan = float("nan")
    return steps, Saturation(
        loop=loop, saturation_load=good.load if good else nan,
        saturation_rps=good.throughput_rps if good else nan,
        saturation_p95_s=good.p95 if good else nan,
        first_fail_load=fail.load if fail else nan,
        first_fail_rps=fail.throughput_rps if fail else nan,
        fail_reason=(fail.why.split(",")[0] if fail else "none"), source="recomputed")


def load_status_name(code: int) -> str:
    return LOAD_STATUS.get(int(code), str(code))
