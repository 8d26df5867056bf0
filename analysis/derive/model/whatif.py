"""What an upgrade buys: the request's time after one change (a link, a node count, another
machine's compute rate, another disk), from the model of fit.py checked on data held out of it.

The model is fit.predict's, with one more step: on the measured points the median t_total is
fitted as a + k * core (least squares on relative errors, a, k >= 0), core being predict's time
with t0 = 0. So what the three phases do not explain splits into a fixed part a (the head node's
own work: barriers, bookkeeping) and a part k - 1 that grows with the busiest phase (the
pipeline's fill and drain, the switch's cost per frame), which a faster link shrinks with it.
Nodes that share one machine (whatif_cpu.py) add a floor: the CPU their ranks ran for the
request over the cores they may use, which more nodes or a larger share there cannot raise
beyond the machine's cores.

A prediction is a figure only when the same procedure, fitted without some measured data,
predicted that data within MAX_HELD_OUT_ERROR (check.py's 25 %): with runs at two or more node
counts the largest count is held out, with one count the largest request. Its 95 % interval
adds the measured median's CI and that held-out error in quadrature. A node count is validated
from the smallest measured count / g to the largest x g, g being how far the held-out check
reached (held-out count / largest fitted count; 1 with one count).
"""

from __future__ import annotations

from dataclasses import dataclass, field, replace

import numpy as np

from .. import stats
from .. import compute_samples, median_total
from ...read.runs import FftPoint, Run
from .check import MAX_HELD_OUT_ERROR, node_count
from .whatif_cpu import Cpu, work_ci
from .fit import (AffineFit, HockneyFit, RunModel, _err_stats, fit_affine_rel, fit_runs,
                  overlapped, predict, request_shape)

# TCP payload per Ethernet frame on the wire at MTU 1500 (1448 of 1538 bytes): what a stream
# reaches of a line rate when the run does not say what its own line rate was.
LINE_EFFICIENCY = 1448 / 1538

LIMITS = ("link", "compute", "head node", "disk", "cpu")


@dataclass
class Model:
    """fit.py's model of some runs with the residual fit a + k * core."""

    fit: RunModel
    a_s: float
    k: float

    def phases(self, point: FftPoint, ranks: int, hockney: HockneyFit | None = None,
               compute: AffineFit | None = None, overlap: float = 1.0,
               cpu_s: float = float("nan")) -> dict[str, float]:
        """link, compute, head node and CPU seconds of `point` on `ranks` ranks, and the total.
        overlap: how far the link's second direction overlaps the first in a pipelined request,
        1 on a full-duplex link, 0 where both share one carrier (a machine's CPU) and add.
        cpu_s: the ranks' CPU work over the cores they may use, a floor under the total."""
        h = self.fit.hockney if hockney is None else hockney
        c = self.fit.compute if compute is None else compute
        d, comp, g, core = (float(x[0]) for x in predict(h, c, 0.0, point, np.array([ranks])))
        link = max(d, g) + (1.0 - overlap) * min(d, g) if overlapped(point) else d + g
        if overlapped(point):
            core = max(link, comp)  # predict's max(d, comp, g) where the directions overlap fully
        total = self.a_s + self.k * core
        # what k adds grows with the busiest phase; the head node's part is the fixed a
        grown = (self.k - 1.0) * core
        parts = {"link": link, "compute": comp}
        busiest = max(parts, key=lambda key: parts[key])
        parts[busiest] += max(0.0, grown)
        parts["head node"] = self.a_s + min(0.0, grown)
        if np.isfinite(cpu_s) and cpu_s > 0:
            parts["cpu"] = cpu_s
            total = max(total, cpu_s)
        return {**parts, "total": total}


def fit_model(items: list[tuple[Run, list[FftPoint]]], comm: list[Run] | None = None) -> Model | None:
    fit = fit_runs("what-if", items, comm)
    if fit.compute is None:
        return None
    pts = [pt for _r, pts in items for pt in pts]
    core = np.array([float(predict(fit.hockney, fit.compute, 0.0, pt, np.array([pt.p]))[3][0])
                     for pt in pts])
    meas = np.array([median_total(pt) for pt in pts])
    res = fit_affine_rel(core, meas) if len(pts) >= 2 else None
    if res is None or not (res.b > 0):
        return Model(fit, max(0.0, fit.t0_s), 1.0)
    return Model(fit, res.a, res.b)


@dataclass
class HeldOut:
    """The procedure's check on measured data it was not fitted to."""

    ok: bool
    reason: str  # why not, when not ok
    text: str  # what was held out and how far it missed
    err_max: float = float("nan")
    node_range: tuple[float, float] = (1.0, 1.0)
    checks: list[tuple[str, float, float]] = field(default_factory=list)  # point, measured, predicted


def held_out(items: list[tuple[Run, list[FftPoint]]], comm: list[Run] | None = None) -> HeldOut:
    by_nodes: dict[int, list[tuple[Run, list[FftPoint]]]] = {}
    for run, pts in items:
        if pts:
            by_nodes.setdefault(node_count(run), []).append((run, pts))
    counts = sorted(by_nodes)
    if not counts:
        return HeldOut(False, "no usable FFT point", "")
    if len(counts) >= 2:
        fit_items = [it for n in counts[:-1] for it in by_nodes[n]]
        held = [(r, pt) for r, pts in by_nodes[counts[-1]] for pt in pts]
        what = (f"fitted on {', '.join(map(str, counts[:-1]))} node(s), the held-out "
                f"{counts[-1]} nodes")
        reach = counts[-1] / counts[-2]
    else:
        pts = sorted({pt.input_bytes for _r, pts in items for pt in pts})
        if len(pts) < 3:
            return HeldOut(False, f"one node count ({counts[0]}) and {len(pts)} request size(s): "
                           "a check needs runs at two node counts, or three request sizes in a "
                           "run (one held out)", "")
        largest = pts[-1]
        fit_items = [(r, [pt for pt in ps if pt.input_bytes < largest]) for r, ps in items]
        held = [(r, pt) for r, ps in items for pt in ps if pt.input_bytes == largest]
        what = f"fitted on the smaller requests, the held-out largest at {counts[0]} node(s)"
        reach = 1.0
    model = fit_model(fit_items, comm)
    if model is None:
        return HeldOut(False, "no FFT points to fit", "")
    checks = [(pt.id, median_total(pt), model.phases(pt, pt.p)["total"]) for _r, pt in held]
    err_max, err_med = _err_stats(np.array([c[2] for c in checks]), np.array([c[1] for c in checks]))
    text = (f"{what}: max {100 * err_max:.0f} %, median {100 * err_med:.0f} % over "
            f"{len(checks)} point(s)") if np.isfinite(err_max) else what
    out = HeldOut(False, "", text, err_max, (max(1.0, counts[0] / reach), counts[-1] * reach), checks)
    if not np.isfinite(err_max):
        out.reason = "the held-out data has no point to check"
    elif err_max > MAX_HELD_OUT_ERROR:
        out.reason = (f"the model missed its own held-out data by up to {100 * err_max:.0f} % "
                      f"(more than {100 * MAX_HELD_OUT_ERROR:.0f} %; {what})")
    else:
        out.ok = True
    return out


@dataclass
class Change:
    """One change: kind is link, nodes, compute or disk; text says it in words."""

    kind: str
    text: str
    rate_Bps: float = float("nan")  # link: line rate, or β; disk: read rate
    rate_lo_Bps: float = float("nan")  # link: β's 95 % CI; disk: the slowest and fastest read
    rate_hi_Bps: float = float("nan")
    hockney: HockneyFit | None = None  # link: another run's alpha-beta
    nodes: int = 0
    compute: AffineFit | None = None
    source: str = ""  # where the figure came from
    quota: float = float("nan")  # compute on the same machine: each node's CPU quota after
    same_machine: bool = False  # compute: the baseline ran on the cluster's own machine
    overlap: float = 1.0  # link: how far its second direction overlaps the first (1 full duplex)
    overlap_measured: bool = False  # link: overlap came from a bibw beside a bw
    overlap_lo: float = float("nan")  # link: its low and high ends, from the rates' CIs
    overlap_hi: float = float("nan")
    shared: bool = False  # link: its nodes shared one machine, whose CPU carried it
    why_not: str = ""  # set when the data cannot say what the change buys


def link_change(fit: RunModel, rate_Bps: float, line_now_Bps: float | None, text: str,
                cpu: Cpu | None = None) -> Change:
    """A line rate: alpha stays, beta becomes the rate times the share of the line this run's
    alpha-beta reached of its own line rate (when known, else a TCP stream's). Nodes on one
    machine: not shown, since that machine's CPU carries their links at a rate no run measured."""
    eff, how = LINE_EFFICIENCY, "a TCP stream's 94 % of the line"
    if fit.hockney is not None and line_now_Bps and np.isfinite(fit.hockney.beta_Bps):
        eff = float(np.clip(fit.hockney.beta_Bps / line_now_Bps, 0.05, 1.0))
        how = f"{100 * eff:.0f} % of the line, as this run's β reached of its own line rate"
    alpha = fit.hockney.alpha_s if fit.hockney is not None else 0.0
    h = HockneyFit(alpha, rate_Bps * eff, 0, float("nan"), float("nan"), how)
    why = ""
    if cpu is not None and cpu.shared:
        why = (f"not shown: the {cpu.nodes} nodes share one machine ({cpu.machine}, "
               f"{cpu.cores:g} cores) whose CPU also carries their links, measured only up to their "
               "own line rate, so how fast it carries this one is unknown; give --link-from a "
               "transfer run made at that rate on the same machine")
    return Change("link", text, rate_Bps=rate_Bps, hockney=h, source=how, why_not=why)


def compute_fit(points: list[FftPoint]) -> AffineFit | None:
    return fit_affine_rel(*compute_samples(points))


@dataclass
class Prediction:
    now_s: float
    now_lo: float
    now_hi: float
    after_s: float
    lo: float
    hi: float
    limited_by: str
    parts_after: dict[str, float]
    parts_now: dict[str, float]

    @property
    def ratio(self) -> float:
        return self.now_s / self.after_s if self.after_s > 0 else float("nan")

    @property
    def ratio_ci(self) -> tuple[float, float]:
        return (self.now_lo / self.hi if self.hi > 0 else float("nan"),
                self.now_hi / self.lo if self.lo > 0 else float("nan"))


def read_s(point: FftPoint) -> float:
    return float(stats.nanmedian(point.times.get("t_read", np.array([np.nan]))))


def decode_s(point: FftPoint) -> tuple[float, float, float]:
    """Of the point's t_read, what no disk shortens: the decode (t_read less t_read_io, the files'
    bytes coming in), its median and 95 % CI; 0 in files that do not split it."""
    if point.t_read_io is None:
        return 0.0, 0.0, 0.0
    rest = np.asarray(point.times.get("t_read"), dtype=float) - np.asarray(point.t_read_io, dtype=float)
    med, lo, hi, _n = stats.median_ci(np.clip(rest, 0.0, None))
    return float(med), float(lo), float(hi)


def read_time(decode: float, io: float, nfiles: int, ahead: bool) -> float:
    """A request's read: its files' bytes (io s in all) and their decode (s in all), the files alike.
    Read in turn, the sum. Read ahead (fft's `input_read_ahead`: each file's bytes come in while the
    one before decodes): the first file's bytes, then per file the larger of the two, then the last
    file's decode."""
    if not ahead or nfiles < 2:
        return decode + io
    return (decode + io) / nfiles + max(decode, io) * (nfiles - 1) / nfiles


def disk_why_not(point: FftPoint) -> str:
    """Why the point's t_read cannot stand for a read of its files from the disk it was on ("" when
    it can): synthetic audio reads no file, and without fft's --input-cache drop every read after
    the first may come from the page cache."""
    a = point.attrs
    if str(a.get("input", "")) == "synthetic":
        return ("not shown: the request's audio was synthetic, made in memory, so its t_read read no "
                "disk; run fft with --input on that disk and --input-cache drop")
    if str(a.get("input_cache", "keep")) != "drop":
        return ("not shown: fft read its inputs with --input-cache keep (the default), so its t_read "
                "may have come from the page cache, not the disk; rerun fft with --input-cache drop")
    stayed = float(a.get("input_resident_max", 0.0))
    if stayed > 0.01:
        return (f"not shown: {100 * stayed:.0f} % of an input file's pages stayed in the page cache "
                "after fft's drop, so its t_read read memory in part")
    return ""


def file_bytes(point: FftPoint) -> float:
    """Bytes of the request's input files, as /fft/<id>/inputs lists them."""
    total = sum(float(row.get("bytes", 0) or 0) for row in point.inputs)
    return total if total > 0 else point.input_bytes


def _after_cpu(model: Model, cpu: Cpu | None, nodes: int, after_nodes: int,
               compute: Change | None) -> tuple[AffineFit | None, float, float, str, bool]:
    """Each rank's compute fit after, the factor on the CPU work, the CPUs the ranks may use,
    what those are (limited_by) and whether they hold each rank under a core of its own, for
    nodes on `cpu`'s machine(s)."""
    c = model.fit.compute
    if cpu is None:
        return (compute.compute if compute else None), 1.0, float("nan"), "", False
    if compute is not None and not compute.same_machine:
        # other machines' nodes: each rank on a core of its own, as fast as their baseline
        ratio = compute.compute.b / c.b if c is not None and c.b > 0 else 1.0
        return compute.compute, ratio, float(after_nodes * cpu.rpn), "the nodes' CPU", False
    quota = compute.quota if compute is not None else cpu.quota
    now, after = cpu.rank_share(nodes), cpu.rank_share(after_nodes, quota)
    slower = now / after if after > 0 else 1.0
    fit = AffineFit(c.a * slower, c.b * slower, c.n, c.rel_err_max, c.rel_err_median) if c else None
    return fit, 1.0, cpu.capacity(after_nodes, quota), cpu.limit(after_nodes, quota), after < 1.0


def _quota_link(model: Model, cpu: Cpu | None, point: FftPoint, comp: Change | None) -> HockneyFit | None:
    """Nodes of one machine whose links no line rate holds (no link_rate_Bps): the kernel's copies
    that carry them are charged to the sending ranks, so the nodes' CPU quota sets the links' rate
    too, and a quota change scales it (2 nodes at 0.25 CPU: 401 MB/s). None where that is not so."""
    h = model.fit.hockney
    rate = point.attrs.get("link_rate_Bps")
    if (h is None or cpu is None or comp is None or not comp.same_machine or not cpu.shared
            or (rate is not None and np.isfinite(float(rate)) and float(rate) > 0)):
        return None
    if not (np.isfinite(comp.quota) and np.isfinite(cpu.quota) and cpu.quota > 0):
        return None
    r = comp.quota / cpu.quota
    return HockneyFit(h.alpha_s / r, h.beta_Bps * r, h.n, h.rel_err_max, h.rel_err_median,
                      f"{h.source}, scaled by the CPU quota ({cpu.quota:.3g} to {comp.quota:.3g})")


def predict_change(model: Model, check: HeldOut, point: FftPoint, nodes: int, rpn: int,
                   changes: list[Change], cpu: Cpu | None = None) -> Prediction:
    """`point`'s request measured on `nodes` nodes, after every change in `changes`. With `cpu`,
    the ranks' CPU work (what they ran) over the cores they may use is a floor, now and after."""
    med, lo, hi, _n = stats.median_ci(point.times["t_total"])
    if point.run_medians:
        # runs pooled: the repetitions of one run agree more than the runs do, so now reaches
        # every run's own median
        lo, hi = min(lo, *point.run_medians), max(hi, *point.run_medians)
    hockney, after_nodes, disk, comp_change, link = None, nodes, None, None, None
    for ch in changes:
        if ch.kind == "link":
            hockney, link = ch.hockney, ch
        comp_change = ch if ch.kind == "compute" else comp_change
        after_nodes = ch.nodes if ch.kind == "nodes" else after_nodes
        disk = ch if ch.kind == "disk" else disk
    hockney = _quota_link(model, cpu, point, comp_change) if hockney is None else hockney
    overlap = link.overlap if link is not None else 1.0
    measured = link is None or link.overlap_measured
    shared = link is not None and link.shared
    work, w_lo, w_hi = work_ci(cpu, point.id) if cpu is not None else (float("nan"),) * 3
    compute, factor, cap, cpu_text, cut = _after_cpu(model, cpu, nodes, after_nodes, comp_change)
    cap_now = cpu.capacity(nodes) if cpu is not None else float("nan")
    now = model.phases(point, point.p, cpu_s=work / cap_now)
    ranks = max(1, after_nodes * rpn - (point.nranks - point.p))
    after = model.phases(point, ranks, hockney, compute, overlap, work * factor / cap)
    # the model's own error at the measured configuration carries over to the change
    scale = med / now["total"] if now["total"] > 0 else 1.0
    t_after = after["total"] * scale
    if disk is not None:
        t_read = read_s(point)
        med, lo, hi = med + t_read, lo + t_read, hi + t_read
        now["disk"] = t_read
        (dec, d_lo, d_hi), nbytes = decode_s(point), file_bytes(point)
        ahead = point.read_ahead
        after["disk"] = read_time(dec, nbytes / disk.rate_Bps, point.nfiles, ahead)
        t_after += after["disk"]
    e = check.err_max if np.isfinite(check.err_max) else MAX_HELD_OUT_ERROR
    up = np.hypot(hi / med - 1 if med > 0 else 0.0, e)
    down = np.hypot(1 - lo / med if med > 0 else 0.0, e)
    parts = {k: v for k, v in after.items() if k in LIMITS}
    limited = max(parts, key=lambda k: parts[k])
    high = t_after * (1 + up)
    if limited == "compute" and cpu_text and cut:
        limited = cpu_text  # the ranks compute slower after because the cores are cut
    if limited == "cpu":
        # the CPU floor carries the spread of the work it is made of
        up, down = np.hypot(up, w_hi / work - 1), np.hypot(down, 1 - w_lo / work)
        limited = cpu_text
        high = t_after * (1 + up)
    low = t_after * max(0.0, 1 - down)
    if link is not None and hockney is not None:
        # the other run's link carries its own spread: β's and the overlap's CIs, slow with slow
        def total(beta: float, share: float) -> float:
            h = replace(hockney, beta_Bps=beta) if np.isfinite(beta) else hockney
            f = share if np.isfinite(share) else overlap
            return (model.phases(point, ranks, h, compute, f, work * factor / cap)["total"] * scale
                    + after.get("disk", 0.0))
        high = max(high, total(link.rate_lo_Bps, link.overlap_lo) * (1 + up))
        low = min(low, total(link.rate_hi_Bps, link.overlap_hi) * max(0.0, 1 - down))
        if shared:
            # the bibw measured one pair; more nodes, and the ranks' work, on the same CPU may
            # leave the directions less overlap, down to none: the high end reaches them added
            high = max(high, total(link.rate_lo_Bps, 0.0) * (1 + up))
    if shared and "cpu" in after:
        # the machine's CPU carries the link as well as the ranks' work, and the files hold only
        # the ranks' CPU time: the two may not overlap at all
        high = max(high, (after["link"] + after["cpu"]) * scale * (1 + up))
    if disk is not None:
        # the read after carries its own spread: the decode's CI and the disk's slowest and fastest
        # repetition, beside the model's on the rest
        fast = disk.rate_hi_Bps if np.isfinite(disk.rate_hi_Bps) else disk.rate_Bps
        slow = disk.rate_lo_Bps if np.isfinite(disk.rate_lo_Bps) else disk.rate_Bps
        rest = t_after - after["disk"]
        low = min(low, rest * max(0.0, 1 - down) + read_time(d_lo, nbytes / fast, point.nfiles, ahead))
        high = max(high, rest * (1 + up) + read_time(d_hi, nbytes / slow, point.nfiles, ahead))
    if overlap < 1.0 and not measured:
        # the two directions add when one CPU carries both, and overlap as on two wires where it
        # has a core for each: with no bibw to say how far, the low end is the overlapped one
        both = model.phases(point, ranks, hockney, compute, 1.0, work * factor / cap)
        low = min(low, (both["total"] * scale + (after.get("disk", 0.0))) * max(0.0, 1 - down))
    return Prediction(med, lo, hi, t_after, low, high, limited, after, now)


def scaled(pred: Prediction, factor: float) -> Prediction:
    """The same prediction for work `factor` times as long per unit (a rate's inverse)."""
    return replace(pred, now_s=pred.now_s * factor, now_lo=pred.now_lo * factor,
                   now_hi=pred.now_hi * factor, after_s=pred.after_s * factor,
                   lo=pred.lo * factor, hi=pred.hi * factor)


def request_bytes(point: FftPoint) -> tuple[float, float]:
    """(bytes out of the head node, bytes back) of one request."""
    _f, m_in, m_out = request_shape(point)
    return m_in, m_out
