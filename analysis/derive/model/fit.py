"""The fits: Hockney alpha-beta from pingpong or pairs_all, the compute cost, the request time on p nodes."""

from __future__ import annotations

from dataclasses import dataclass, field, replace
import numpy as np

from .. import stats
from .. import compute_samples, median_total, slowest_median
from ...read.runs import FftPoint, Run
from ..transfer import traffic_factor


NODES = np.arange(1, 65)


@dataclass
class AffineFit:
    """y = a + b * x fitted with relative-error weighting."""

    a: float
    b: float
    n: int
    rel_err_max: float
    rel_err_median: float

    def __call__(self, x: np.ndarray | float) -> np.ndarray | float:
        return self.a + self.b * np.asarray(x, dtype=float)


@dataclass
class HockneyFit:
    alpha_s: float
    beta_Bps: float
    n: int
    rel_err_max: float
    rel_err_median: float
    source: str  # where the data came from

    def time(self, m: np.ndarray | float) -> np.ndarray | float:
        inv_beta = 0.0 if not np.isfinite(self.beta_Bps) else 1.0 / self.beta_Bps
        return self.alpha_s + np.asarray(m, dtype=float) * inv_beta


@dataclass
class Forecast:
    """A forecast for one request shape (one measured point) over NODES."""

    point_id: str
    label: str
    nodes: np.ndarray
    t_dist: np.ndarray
    t_comp: np.ndarray
    t_gather: np.ndarray
    t_total: np.ndarray
    speedup: np.ndarray
    speedup_ref: str  # what the speedup is relative to
    measured_p: int
    measured_t: float
    measured_ci: tuple[float, float]
    measured_speedup: float
    measured: list[tuple[int, float]] = field(default_factory=list)  # (nodes, median t_total)


@dataclass
class RunModel:
    """Everything fitted for one run."""

    run: str
    hockney: HockneyFit | None
    compute: AffineFit | None
    t0_s: float = 0.0
    total_rel_err_max: float = float("nan")
    total_rel_err_median: float = float("nan")
    total_n: int = 0
    forecasts: list[Forecast] = field(default_factory=list)
    # (bytes, seconds, description) the alpha-beta fit was made to, and the
    # fitted curve in the same coordinates
    comm_data: tuple[np.ndarray, np.ndarray, str] | None = None
    notes: list[str] = field(default_factory=list)
    # (point id, p, measured, predicted) for every point used to judge the fit
    checks: list[tuple[str, int, float, float]] = field(default_factory=list)


def rel_errors(pred: np.ndarray, meas: np.ndarray) -> np.ndarray:
    pred = np.asarray(pred, dtype=float)
    meas = np.asarray(meas, dtype=float)
    with np.errstate(all="ignore"):
        err = np.abs(pred - meas) / np.abs(meas)
    return err[np.isfinite(err)]


def _err_stats(pred: np.ndarray, meas: np.ndarray) -> tuple[float, float]:
    err = rel_errors(pred, meas)
    if err.size == 0:
        return float("nan"), float("nan")
    return float(np.max(err)), float(np.median(err))


def fit_affine_rel(x: np.ndarray, y: np.ndarray) -> AffineFit | None:
    """Least squares for y = a + b x minimising the relative residuals
    (a + b x - y) / y, with a >= 0 and b >= 0 enforced by refitting the other
    coefficient alone. Returns None with no usable data."""
    x = np.asarray(x, dtype=float).reshape(-1)
    y = np.asarray(y, dtype=float).reshape(-1)
    keep = np.isfinite(x) & np.isfinite(y) & (y > 0)
    x, y = x[keep], y[keep]
    if x.size == 0:
        return None
    w = 1.0 / y
    a = b = float("nan")
    if x.size >= 2 and np.ptp(x) > 0:
        design = np.column_stack([w, x * w])
        (a, b), *_ = np.linalg.lstsq(design, np.ones_like(y), rcond=None)
    if not (a >= 0 and b >= 0):
        if np.any(x > 0) and x.size >= 2 and np.ptp(x) > 0:
            # a = 0: minimise sum (b x / y - 1)^2
            u = x * w
            b_only = float(np.sum(u) / np.sum(u * u))
        else:
            b_only = -1.0
        a_only = float(np.sum(w) / np.sum(w * w))  # b = 0
        err_b = np.sum((b_only * x * w - 1) ** 2) if b_only > 0 else np.inf
        err_a = np.sum((a_only * w - 1) ** 2)
        a, b = (0.0, b_only) if err_b < err_a else (a_only, 0.0)
    pred = a + b * x
    mx, md = _err_stats(pred, y)
    return AffineFit(a=float(a), b=float(b), n=int(x.size), rel_err_max=mx, rel_err_median=md)


def fit_hockney(m: np.ndarray, t: np.ndarray, source: str = "pingpong") -> HockneyFit | None:
    """Fit t(m) = alpha + m / beta (seconds, bytes) with relative weighting."""
    fit = fit_affine_rel(m, t)
    if fit is None:
        return None
    beta = 1.0 / fit.b if fit.b > 0 else float("inf")
    return HockneyFit(alpha_s=fit.a, beta_Bps=beta, n=fit.n, rel_err_max=fit.rel_err_max,
                      rel_err_median=fit.rel_err_median, source=source)


def _node_of(run: Run) -> dict[int, int]:
    return {int(h.get("rank", -1)): int(h.get("node", -1)) for h in run.hosts}


def _inter_node_pairs(run: Run, pairs: np.ndarray) -> list[int]:
    """Indices of the (sender, receiver) pairs whose ranks sit on different nodes."""
    node = _node_of(run)
    return [i for i, (s, r) in enumerate(pairs) if node.get(int(s), -1) != node.get(int(r), -2)]


def pingpong_data(run: Run) -> tuple[np.ndarray, np.ndarray, str, bool] | None:
    """Message sizes, half-round-trip times (median over the chosen pairs), a
    description, and whether the pairs cross nodes. Pairs whose ranks sit on
    different nodes are preferred."""
    test = run.transfer.get("pingpong")
    if test is None:
        return None
    t_med = test.t_med
    cols = np.arange(t_med.shape[1])
    what, inter_node = "pingpong", True
    if test.pairs is not None and run.hosts and test.pairs.shape[0] == t_med.shape[1]:
        inter = _inter_node_pairs(run, test.pairs)
        if inter:
            cols = np.asarray(inter)
            what = "pingpong, inter-node pairs"
        else:
            what, inter_node = "pingpong, pairs on one node", False
    t = stats.nanmedian(t_med[:, cols], axis=1)
    return test.bytes.astype(float), t, what, inter_node


def pairs_all_data(run: Run) -> tuple[np.ndarray, np.ndarray, str] | None:
    """Two points (latency_bytes, median latency) and (bandwidth_bytes, time at
    the median bandwidth) over the inter-node cells of /transfer/pairs_all."""
    pa = run.pairs_all
    if pa is None or pa.latency_s is None or pa.bandwidth_Bps is None:
        return None
    if not (np.isfinite(pa.latency_bytes) and np.isfinite(pa.bandwidth_bytes)):
        return None
    n = pa.latency_s.shape[0]
    node = _node_of(run)
    mask = np.array([[node.get(s, -1) != node.get(r, -2) for r in range(n)] for s in range(n)])
    if not mask.any():
        return None
    lat = stats.nanmedian(pa.latency_s[mask])
    bw = stats.nanmedian(pa.bandwidth_Bps[mask])
    if not (lat > 0 and bw > 0):
        return None
    return (np.array([pa.latency_bytes, pa.bandwidth_bytes]),
            np.array([lat, pa.bandwidth_bytes / bw]), "pairs_all, inter-node medians")


def line_rate(run: Run) -> tuple[float, str] | None:
    """The head node's measured line rate (B/s) from a transfer run in the same file, and where it
    came from: the median over pairs that cross nodes at the largest size of bw (a stream, closest
    to the line rate), else of pingpong, else the inter-node cells of the all-pairs map. None when
    no transferred pair crossed nodes, since shared memory says nothing of the link."""
    for name in ("bw", "pingpong"):
        test = run.transfer.get(name)
        if test is None or test.bandwidth is None or test.pairs is None or not run.hosts:
            continue
        bw = np.asarray(test.bandwidth, dtype=float)
        if bw.ndim != 2 or test.pairs.shape[0] != bw.shape[1] or not len(test.bytes):
            continue
        inter = _inter_node_pairs(run, test.pairs)
        if not inter:
            continue
        last = int(np.argmax(test.bytes))
        rate = stats.nanmedian(bw[last, inter])
        if rate > 0:
            size = int(test.bytes[last])
            return float(rate), f"transfer {name} at {size} B, median over {len(inter)} inter-node pair(s)"
    pa = pairs_all_data(run)
    if pa is not None and pa[1][1] > 0:
        return float(pa[0][1] / pa[1][1]), f"transfer pairs_all at {int(pa[0][1])} B, inter-node median"
    return None


def link_use(point: FftPoint, rate: tuple[float, str] | None) -> tuple[float, str]:
    """The point's use of the full-duplex bound max(out, in) / line rate over its median t_total,
    and where the rate came from: --link-rate as recorded, else the measured rate given."""
    a = point.attrs
    recorded, use = (float(a.get(k, float("nan"))) for k in ("link_rate_Bps", "link_use"))
    if np.isfinite(recorded) and recorded > 0 and np.isfinite(use):
        return use, "--link-rate"
    out, inn = float(a.get("link_out_bytes", 0) or 0), float(a.get("link_in_bytes", 0) or 0)
    med = median_total(point) if np.size(point.times.get("t_total", [])) else float("nan")
    if np.isfinite(recorded) and recorded > 0:
        bps, what = recorded, "--link-rate"
    elif rate is not None:
        bps, what = rate
    else:
        return float("nan"), ""
    if not (out > 0 or inn > 0) or not (med > 0):
        return float("nan"), what
    return max(out, inn) / bps / med, what


def comm_fit(run: Run) -> tuple[HockneyFit | None, tuple[np.ndarray, np.ndarray, str] | None, str]:
    """The alpha-beta fit for separate nodes, the data it was fitted to, and a
    note. Order of preference: pingpong between nodes, the all-pairs matrices
    between nodes, pingpong on one node (optimistic for separate nodes)."""
    pp = pingpong_data(run)
    if pp is not None and pp[3]:
        return fit_hockney(pp[0], pp[1], pp[2]), (pp[0], pp[1], pp[2]), ""
    pa = pairs_all_data(run)
    if pa is not None:
        note = "pingpong measured only pairs on one node; alpha and beta come from the " \
               "inter-node cells of the all-pairs matrices" if pp is not None else ""
        return fit_hockney(pa[0], pa[1], pa[2]), pa, note
    if pp is not None:
        return (fit_hockney(pp[0], pp[1], pp[2]), (pp[0], pp[1], pp[2]),
                "pingpong measured only pairs on one node, so alpha and beta are optimistic "
                "for ranks on separate nodes")
    return None, None, ""


def bulk_hockney(h: HockneyFit, data: tuple | None) -> HockneyFit:
    """The fit's alpha with beta from the largest message it was fitted to, the rate a request's
    megabytes reach. A token bucket lets a message that fits its burst beat the line (an emulated
    link's tbf, a switch's buffer), and a fit over all sizes averages that in: 2 pi4 nodes of one
    machine measured 160 MB/s at 64 KiB and 121 MB/s at 1 MiB, fitted as 145 on a 125 MB/s line."""
    if data is None:
        return h
    sizes, times = (np.asarray(x, dtype=float) for x in data[:2])
    ok = np.isfinite(sizes) & np.isfinite(times) & (sizes > 0) & (times > h.alpha_s)
    if not ok.any():
        return h
    k = int(np.argmax(np.where(ok, sizes, -1.0)))
    beta = float(sizes[k] / (times[k] - h.alpha_s))
    fitted = h.beta_Bps if np.isfinite(h.beta_Bps) and h.beta_Bps > 0 else float("inf")
    if abs(beta / fitted - 1) < 0.05:
        return h
    big = f"{sizes[k] / 2**20:g} MiB" if sizes[k] >= 2**20 else f"{sizes[k] / 2**10:g} KiB"
    return replace(h, beta_Bps=beta, source=(
        f"{h.source}; β from its largest message ({big}), as a request's bulk moves: "
        f"{beta / 1e6:.3g} MB/s, where the fit over all sizes gave {fitted / 1e6:.3g}"))


def rate_ci(run: Run, name: str, size: float | None = None) -> tuple[float, float, float, float] | None:
    """(size, median, low, high) in B/s of transfer test `name` (pingpong, bw, bibw) at `size`, its
    largest by default: the median over the repetitions of its pairs across nodes and that median's
    95 % CI. None without the test, such a pair or a finite rate there."""
    test = run.transfer.get(name)
    if test is None or test.pairs is None or test.t is None or test.t.ndim != 3 or not run.hosts:
        return None
    cols = _inter_node_pairs(run, np.asarray(test.pairs).reshape(-1, 2))
    sizes = np.asarray(test.bytes, dtype=float)
    rows = np.flatnonzero(sizes == (sizes.max() if size is None else size))
    if not cols or rows.size == 0:
        return None
    m = float(sizes[rows[0]])
    with np.errstate(all="ignore"):
        rates = traffic_factor(name) * m / np.asarray(test.t, dtype=float)[rows[0]][:, cols]
    med, lo, hi, _cov = stats.median_ci(rates[np.isfinite(rates) & (rates > 0)])
    return (m, med, lo, hi) if med > 0 else None


@dataclass
class DuplexShare:
    """How far the second direction of a link overlaps the first: bibw / bw - 1 in [0, 1] (1: full
    duplex; 0: both directions share one carrier, a CPU carrying both, and add), with the low and
    high ends from the two medians' CIs, and the rates (B/s) at the size compared."""

    share: float
    low: float
    high: float
    bibw_Bps: float
    bw_Bps: float
    size: float


def duplex_share(run: Run, near: float | None = None) -> DuplexShare | None:
    """The DuplexShare of `run`'s link at the size its bw and bibw tests both measured between
    nodes that lies nearest `near` bytes (on a log scale), the largest by default; None without
    both."""
    bw, bibw = run.transfer.get("bw"), run.transfer.get("bibw")
    if bw is None or bibw is None:
        return None
    common = set(np.asarray(bw.bytes, dtype=float)) & set(np.asarray(bibw.bytes, dtype=float))
    common = {m for m in common if m > 0}
    if not common:
        return None
    size = max(common) if near is None or not near > 0 else \
        min(common, key=lambda m: abs(np.log2(m / near)))
    one, both = rate_ci(run, "bw", size), rate_ci(run, "bibw", size)
    if one is None or both is None:
        return None
    share = lambda b, o: float(np.clip(b / o - 1.0, 0.0, 1.0))  # noqa: E731
    return DuplexShare(share(both[1], one[1]), share(both[2], one[3]), share(both[3], one[2]),
                       both[1], one[1], one[0])


def chunk_bytes(point: FftPoint) -> float:
    """Bytes of samples in one chunk a pipelined or dynamic schedule sends (chunk_frames hops of
    float32 samples); NaN where the point does not say."""
    frames, hop = point.attrs.get("chunk_frames"), point.attrs.get("hop")
    try:
        value = float(frames) * float(hop) * 4.0
    except (TypeError, ValueError):
        return float("nan")
    return value if value > 0 else float("nan")


def remote_ranks(point: FftPoint, p: int) -> int:
    """Ranks that receive input from the root (and return output to it)."""
    root_computes = point.attrs.get("root_computes")
    return p if root_computes is not None and int(root_computes) == 0 else p - 1


def request_shape(point: FftPoint) -> tuple[float, float, float]:
    """(flops, bytes handed to the ranks, bytes returned) of one request.
    The bytes the ranks received (sum of bytes_in) are what crosses the
    network; input_bytes stands in when bytes_in is missing."""
    flops = float(np.nansum(point.flops))
    m_in = distributed_bytes(point)
    m_out = float(np.nansum(point.bytes_out)) if point.bytes_out is not None else 0.0
    return flops, m_in, m_out


def distributed_bytes(point: FftPoint) -> float:
    total = float(np.nansum(point.bytes_in)) if point.bytes_in.size else 0.0
    return total if total > 0 else point.input_bytes


def fit_compute(points: list[FftPoint]) -> AffineFit | None:
    """Per-rank compute cost: median t_compute of each computing rank against its
    flops, over all points: t = c0 + c1 * flops."""
    return fit_affine_rel(*compute_samples(points))


def predict(hockney: HockneyFit | None, compute: AffineFit, t0: float, point: FftPoint,
            nodes: np.ndarray) -> tuple[np.ndarray, np.ndarray, np.ndarray, np.ndarray]:
    """(t_dist, t_comp, t_gather, t_total) of `point`'s request on `nodes` ranks."""
    flops, m_in, m_out = request_shape(point)
    p = np.asarray(nodes, dtype=float)
    remote = np.array([remote_ranks(point, int(k)) for k in np.atleast_1d(nodes)], dtype=float)
    if hockney is None:
        t_dist = np.zeros_like(p)
        t_gather = np.zeros_like(p)
    else:
        inv_beta = 0.0 if not np.isfinite(hockney.beta_Bps) else 1.0 / hockney.beta_Bps
        t_dist = remote * hockney.alpha_s + m_in * remote / p * inv_beta
        t_gather = remote * hockney.alpha_s + m_out * remote / p * inv_beta
    t_comp = compute.a + compute.b * flops / p
    if overlapped(point):
        # The phases run at once: input leaves the head, results come back on the other direction
        # of its full-duplex link and every rank computes meanwhile, so the busiest of the three
        # sets the pace (t0 takes up the pipeline's fill and drain).
        return t_dist, t_comp, t_gather, t0 + np.maximum(np.maximum(t_dist, t_comp), t_gather)
    return t_dist, t_comp, t_gather, t0 + t_dist + t_comp + t_gather


def overlapped(point: FftPoint) -> bool:
    """Whether the point's schedule overlaps distribution, compute and gather (pipelined and
    dynamic do); phased, and files older than the schedules, run them one after another."""
    return str(point.attrs.get("schedule", "")) in ("pipelined", "dynamic")


def _fit_distribution(points: list[FftPoint]) -> tuple[HockneyFit, tuple] | None:
    """alpha and beta from the slowest rank's distribution time,
    t = remote * alpha + M * remote / p / beta, by relative least squares."""
    v, u, y = [], [], []
    for point in points:
        remote = remote_ranks(point, point.p)
        t = slowest_median(point, "t_distribute")
        if remote <= 0 or not t > 0:
            continue
        v.append(float(remote))
        u.append(distributed_bytes(point) * remote / point.p)
        y.append(t)
    if not y:
        return None
    v, u, y = (np.asarray(a, dtype=float) for a in (v, u, y))
    w = 1.0 / y
    design = np.column_stack([v * w, u * w])
    coef = np.linalg.lstsq(design, np.ones_like(y), rcond=None)[0] if y.size >= 2 else [-1, -1]
    alpha, inv_beta = float(coef[0]), float(coef[1])
    if not (alpha >= 0 and inv_beta >= 0):
        only_b = float(np.sum(u * w) / np.sum((u * w) ** 2)) if np.any(u > 0) else -1.0
        only_a = float(np.sum(v * w) / np.sum((v * w) ** 2))
        err_b = np.sum((only_b * u * w - 1) ** 2) if only_b > 0 else np.inf
        err_a = np.sum((only_a * v * w - 1) ** 2)
        alpha, inv_beta = (0.0, only_b) if err_b < err_a else (only_a, 0.0)
    pred = alpha * v + inv_beta * u
    mx, md = _err_stats(pred, y)
    fit = HockneyFit(alpha_s=alpha, beta_Bps=1.0 / inv_beta if inv_beta > 0 else float("inf"),
                     n=int(y.size), rel_err_max=mx, rel_err_median=md,
                     source="FFT distribution times")
    return fit, (u, y, "distribution times")


def fit_run(run: Run, points: list[FftPoint]) -> RunModel:
    """Fit alpha-beta and compute cost for one run's valid points."""
    return fit_runs(run.name, [(run, points)])


def fit_runs(name: str, items: list[tuple[Run, list[FftPoint]]],
             comm: list[Run] | None = None) -> RunModel:
    """Fit alpha-beta and compute cost to the valid points of one or more runs
    of the same cluster (for example at several node counts). comm: more runs of
    that cluster, such as a study's transfer file, that may hold the pingpong."""
    model = RunModel(run=name, hockney=None, compute=None)
    points = [pt for _run, pts in items for pt in pts]
    model.compute = fit_compute(points)
    if model.compute is None:
        model.notes.append("no FFT points to fit a compute model to")
        return model
    p_run = max((pt.p for pt in points), default=1)
    own = {id(run) for run, _pts in items}
    sources = [run for run, _pts in items] + [run for run in comm or [] if id(run) not in own]
    for run in sorted(sources, key=lambda r: -r.nranks):
        model.hockney, model.comm_data, note = comm_fit(run)
        if model.hockney is not None:
            if note:
                model.notes.append(note)
            if id(run) not in own:
                model.notes.append(f"alpha and beta come from the transfer run "
                                   f"{run.name or run.label or run.path.name}")
            break
    if model.hockney is None and p_run > 1:
        found = _fit_distribution(points)
        if found is not None:
            model.hockney, data = found
            u, y, what = data
            model.comm_data = (u, y, what)
            model.notes.append("alpha and beta come from the FFT distribution times because "
                               "the file has no pingpong test")
    if model.hockney is None and p_run > 1:
        model.notes.append("no data for alpha and beta: communication is left out of the forecast")
    residual = []
    for point in points:
        _, _, _, t_pred = predict(model.hockney, model.compute, 0.0, point, np.array([point.p]))
        residual.append(median_total(point) - float(t_pred[0]))
    finite = [r for r in residual if np.isfinite(r)]
    model.t0_s = max(0.0, float(np.median(finite))) if finite else 0.0
    preds, meas = [], []
    for point in points:
        t_meas = median_total(point)
        t_pred = float(predict(model.hockney, model.compute, model.t0_s, point,
                               np.array([point.p]))[3][0])
        model.checks.append((point.id, point.p, t_meas, t_pred))
        preds.append(t_pred)
        meas.append(t_meas)
    model.total_rel_err_max, model.total_rel_err_median = _err_stats(np.asarray(preds),
                                                                     np.asarray(meas))
    model.total_n = len(rel_errors(np.asarray(preds), np.asarray(meas)))
    return model
