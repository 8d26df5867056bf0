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
    rejected_all: int = 0  # rejected and unfinished over every request, warm-up included, as C counts them
    unfinished_all: int = 0
    done_in_window: int = 0  # answered inside the measured window, whenever submitted
    completed_rps: float = float("nan")  # done_in_window over the window
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
    w0 = start if np.isfinite(start) else _attr_float(a, "warmup_s")
    w0 = w0 if np.isfinite(w0) else 0.0
    answered = (status == 0) & np.isfinite(t_done)
    in_window = int((answered & (t_done >= w0) & (t_done <= w0 + window)).sum()) if window > 0 else 0
    with np.errstate(all="ignore"):
        thr = n_done / window if window > 0 else float("nan")
        completed = _attr_float(a, "completed_rps")
        completed = completed if np.isfinite(completed) else (in_window / window if window > 0 else float("nan"))
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
                         submitted=int(number_or(a.get("submitted"), -1)),
                         rejected_all=int((status == 1).sum()), unfinished_all=int((status == 2).sum()),
                         done_in_window=in_window, completed_rps=completed)


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


def judge_step(s: LoadStepStats, lower: list[LoadStepStats] | tuple = ()) -> None:
    """Set s.healthy and s.why: the step's own verdict (`pass`, `fail_reason`) when the file has one,
    else wulfbench's own rule (bench_load_figures.c), first reason first: any request rejected
    ("rejections"); the step timed out, a request left unfinished, or p95 over the SLO (1000 ms
    unless the file says) ("latency"); open loop, fewer answered in the window than submitted by
    more than max(10 %, two standard deviations of the arrival count) ("throughput"); closed loop,
    throughput grew by less than a quarter of the clients' growth over the nearest lower load in
    `lower` ("throughput")."""
    a = s.step.attrs
    if a.get("pass") is not None and np.isfinite(_attr_float(a, "pass")):
        s.healthy = int(_attr_float(a, "pass")) == 1
        reason = str(a.get("fail_reason") or "")
        s.why = "" if s.healthy else (reason if reason not in ("", "none") else "failed")
        return
    slo_ms = _attr_float(a, "slo_ms")
    slo_s = (slo_ms if slo_ms > 0 else 1000.0) / 1000.0
    why = ""
    if s.rejected_all > 0:
        why = "rejections"
    elif _attr_float(a, "timed_out") == 1 or s.unfinished_all > 0:
        why = "latency"
    elif s.done > 0 and s.p95 > slo_s:
        why = "latency"
    elif s.loop != "closed":
        shortfall = s.n - s.done_in_window
        if s.n > 0 and shortfall > max(0.1 * s.n, 2 * np.sqrt(s.n)):
            why = "throughput"
    else:
        below = [q for q in lower if q.load < s.load]
        ref = max(below, key=lambda q: q.load) if below else None
        if ref is not None and ref.completed_rps > 0:
            load_gain, tput_gain = s.load / ref.load - 1, s.completed_rps / ref.completed_rps - 1
            # Less than a quarter of the proportional gain: the clients are only queueing.
            if tput_gain < 0.25 * load_gain:
                why = "throughput"
    s.healthy = not why
    s.why = why


def load_analysis(run: Run) -> tuple[list[LoadStepStats], Saturation | None]:
    """Per-step statistics (warm-up excluded) and the saturation point.

    A step's verdict is its own `pass` attribute when the file has one, else the
    rule wulfbench applies when it writes one (judge_step). The saturation point
    comes from the /load attributes when present; otherwise it is the highest
    load before the first unhealthy step.
    """
    steps = sorted((load_step_stats(s) for s in run.load_steps), key=lambda s: s.load)
    for i, s in enumerate(steps):
        judge_step(s, steps[:i])
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
