"""What the cluster buys: one row per cluster run and reference (the desktop baseline, and one
node of the cluster from the paired baseline) at the run's headline request, with the time per
request, the throughput ratio and its 95 % CI, that ratio per node, the break-even node count
and what limits the cluster. The report's first section and buys.csv.

Derive, then render: rows() computes every figure into plain Row values; table() and
statements() only format them. Another module may add columns to a row through Row.extra
(column header -> cell text, e.g. energy per request with its source): they are shown after
these columns on the page and written to buys.csv, and nothing here needs to change.

Break-even nodes, in order of preference (docs/comparison.md):
1. measured: the runs of one scaling series (analysis.scaling) at several node counts, the
   ratio interpolated in log nodes and log ratio where it reaches 1 for good; its CI is the
   same rule on the ends of the ratios' 95 % CIs;
2. no node count wins: from 2 nodes on, the bytes the head node's link must carry per request
   over the line rate (--link-rate as recorded, else measured by a transfer test between nodes,
   else the fastest the runs' own distribution or gather moved bytes across it) exceed the
   reference's time per request;
3. forecast: a validated model (analysis.model: fitted on all node counts but the largest,
   within 25 % there), its held-out error taken as the band;
4. otherwise it cannot be given, and the text says what to run.
"""

from __future__ import annotations

from dataclasses import dataclass, field

import numpy as np

from .. import derive
from ..read import point_detail
from ..derive import model, stats
from ..derive import scaling
from . import tables
from ..derive import Comparison, PointStats
from ..read.runs import Run
from .tables import Ci, Column, Table

RUN_MORE = ("run the same sweep at 1, 2 and 4 nodes (labels of one stem, e.g. 'pi n1', 'pi n2', "
            "'pi n4'; jobs/emulate/cluster run or jobs/slurm/scaling.sbatch) and report them "
            "together")


@dataclass
class BreakEven:
    """The node count from which the cluster beats the reference."""

    source: str  # "measured", "no node count wins", "forecast" or "not given"
    nodes: float | None = None
    lo: float | None = None  # the CI's ends; None where it lies beyond what was looked at
    hi: float | None = None
    short: str = ""  # the table cell
    text: str = ""  # the whole statement, with the figures behind it


@dataclass
class Row:
    run: str
    against: str  # the reference's name
    kind: str  # paired, cross-run or cross-machine
    point: str
    workload: str
    nodes: int
    ranks: int
    t_cluster_s: float
    t_against_s: float
    ratio: float  # reference time / cluster time: above 1 the cluster is faster
    ratio_lo: float
    ratio_hi: float
    break_even: BreakEven
    limit: str  # link (messaging on one node), compute or the root
    limit_text: str
    flag: str = ""  # IMPLAUSIBLE when only such a comparison was there, and where it is explained
    extra: dict[str, str] = field(default_factory=dict)  # more columns, shown after these

    @property
    def per_node(self) -> tuple[float, float, float]:
        n = max(1, self.nodes)
        return self.ratio / n, self.ratio_lo / n, self.ratio_hi / n


@dataclass
class LinkBound:
    """The head node's link: what it must carry per request and how fast it is."""

    out_bytes: float  # the request's samples, all of them
    in_bytes: float  # its results
    rate_Bps: float
    source: str
    head_computes: bool  # the head node keeps a share of the work

    def share(self, nodes: int) -> float:
        return (nodes - 1) / nodes if self.head_computes else 1.0

    def bound_s(self, nodes: int) -> float:
        """The full-duplex bound max(out, in) crossing the link / line rate, on `nodes` nodes."""
        return max(self.out_bytes, self.in_bytes) * self.share(nodes) / self.rate_Bps


def line_rate(point, runs: list[Run]) -> tuple[float, str] | None:
    """--link-rate as the point recorded it, else the rate a transfer test measured between
    nodes in one of `runs`."""
    given = point.attrs.get("link_rate_Bps")
    try:
        if given is not None and float(given) > 0:
            return float(given), "--link-rate"
    except (TypeError, ValueError):
        pass
    for run in runs:
        found = model.line_rate(run)
        if found is not None:
            return found[0], f"measured in {run.name}: {found[1]}"
    return None


def own_rate(items: list[tuple[Run, list]]) -> tuple[float, str] | None:
    """The fastest the runs' own requests moved bytes across the head node's link: the bytes a
    distribution (or gather) carried across it over the slowest rank's median time for it, at
    every point of every run on two or more nodes. A rate the link reached, so at most its line
    rate: the bound it gives is what this link needed, not what a faster one would."""
    best: tuple[float, str] | None = None
    for run, pts in items:
        nodes = model.node_count(run)
        if nodes < 2:
            continue
        for pt in pts:
            _f, m_in, m_out = model.request_shape(pt)
            share = model.remote_ranks(pt, pt.p) / max(1, pt.p)
            for what, m, series in (("samples", m_in, "t_distribute"), ("results", m_out, "t_gather")):
                t = derive.slowest_median(pt, series)
                if not (m > 0 and t > 0):
                    continue
                rate = m * share / t
                if best is None or rate > best[0]:
                    best = (rate, f"reached by {run.name} itself ({tables.fmt_bytes(m * share)} "
                                  f"of {what} in {tables.fmt_time(t)}, {pt.id}; no line rate "
                                  f"recorded or measured by a transfer test)")
    return best


def link_bound(s: PointStats, nodes: int, rate: tuple[float, str] | None) -> LinkBound | None:
    if rate is None:
        return None
    _flops, m_in, m_out = model.request_shape(s.point)
    head_computes = model.remote_ranks(s.point, s.point.p) < s.point.p or s.point.nranks > nodes
    return LinkBound(m_in, m_out, rate[0], rate[1], head_computes)


# How the limit's parts read in a sentence; "the root" stays the CSV's limit value.
LIMIT_WORDS = {"link": "the link", "messaging": "messaging", "compute": "compute",
               "the root": "the head node's work outside the three phases"}


def limit(s: PointStats, nodes: int, bound: LinkBound | None) -> tuple[str, str]:
    """What the cluster's time per request goes to: the link (messaging on one node), compute,
    or the root (what the head node does outside the three phases)."""
    med = {k: s.summaries[k].median for k in ("distribute", "compute", "gather", "overhead", "total")}
    d, g = (np.nan_to_num(med[k]) for k in ("distribute", "gather"))
    comm = max(d, g) if model.overlapped(s.point) else d + g
    parts = {"link" if nodes > 1 else "messaging": float(comm),
             "compute": float(np.nan_to_num(med["compute"])),
             "the root": max(0.0, float(np.nan_to_num(med["overhead"])))}
    what = max(parts, key=lambda k: parts[k])
    took = [f"{LIMIT_WORDS[k]}{' took' if not n else ''} {tables.fmt_time(v) if v > 0 else 'none'}"
            for n, (k, v) in enumerate(parts.items())]
    text = f"{what} (of {tables.fmt_time(med['total'])} per request, {', '.join(took[:-1])} and {took[-1]}"
    if bound is not None and nodes > 1:
        text += f"; the line rate alone needs {tables.fmt_time(bound.bound_s(nodes))}"
    return what, text + ")"


def _nodes_text(x: float | None) -> str:
    return "–" if x is None else f"{x:.3g}"


def measured(pts: list[tuple[int, Comparison]]) -> BreakEven | None:
    """Break-even from one comparison per node count of a series; None when the largest count
    does not win."""
    xs = [float(n) for n, _c in pts]
    x = stats.break_even(xs, [c.speedup for _n, c in pts])
    if x is None:
        return None
    early = stats.break_even(xs, [c.ci_hi for _n, c in pts])
    late = stats.break_even(xs, [c.ci_lo for _n, c in pts])
    counts = ", ".join(str(n) for n, _c in pts)
    counts += " node" if counts == "1" else " nodes"
    if x == xs[0]:  # the true break-even is at or below the smallest count: no lower end
        early = None
        short = f"≤ {xs[0]:g}"
        text = (f"at most {xs[0]:g} node(s): the cluster already wins at the smallest count "
                f"measured (at {counts})")
    else:
        short = f"{x:.3g}"
        hi = _nodes_text(late) if late is not None else f"beyond {xs[-1]:g}"
        text = (f"{x:.3g} nodes (95 % CI {_nodes_text(early)} to {hi}), interpolated in the "
                f"measured series at {counts}")
    return BreakEven("measured", x, early, late, short, text)


def no_winner(bound: LinkBound | None, t_ref: float, against: str, result: str) -> BreakEven | None:
    """'No node count wins' when from 2 nodes on the link alone needs longer than the reference."""
    if bound is None or not np.isfinite(t_ref) or not bound.bound_s(2) > t_ref:
        return None
    big = max(bound.out_bytes, bound.in_bytes)
    which = "results" if bound.in_bytes >= bound.out_bytes else "samples"
    many = bound.bound_s(10 ** 6)
    text = (f"no node count wins: the link alone needs {tables.fmt_time(bound.bound_s(2))} per "
            f"request, {against} {tables.fmt_time(t_ref)}. From 2 nodes on, the head node's link "
            f"carries {tables.fmt_bytes(big)} of "
            f"{which} in all, {tables.fmt_bytes(big * bound.share(2))} of them across the link at "
            f"2 nodes ({tables.fmt_time(many)} with many nodes; line rate "
            f"{tables.fmt_bps(bound.rate_Bps)}, {bound.source}). What would change it: ")
    changes = []
    if which == "results" and result != "peaks":
        left = bound.out_bytes * bound.share(2) / bound.rate_Bps
        changes.append(f"--result peaks (a few bytes per frame back instead of "
                       f"{tables.fmt_bytes(bound.in_bytes)} of spectra; the samples alone then "
                       f"need {tables.fmt_time(left)})")
    need = big * bound.share(2) / t_ref
    changes.append(f"a link faster than {tables.fmt_bps(need)} (then the link bound falls below "
                   f"{tables.fmt_time(t_ref)}; compute has to fit in that time too)")
    return BreakEven("no node count wins", None, None, None,
                     f"none: link-bound ({tables.fmt_time(bound.bound_s(2))} vs "
                     f"{tables.fmt_time(t_ref)})", text + ", or ".join(changes))


def forecast(items: list[tuple[Run, list]], s: PointStats, nodes: int, t_ref: float,
             max_nodes: int) -> tuple[BreakEven | None, str]:
    """Break-even from a validated forecast of the series, or (None, why there is none)."""
    if not np.isfinite(t_ref):
        return None, "no reference time"
    val = model.validate(items)
    if not val.ok or val.model is None:
        return None, val.reason
    rpn = max(1, s.point.nranks // max(1, nodes))
    grid = np.arange(1, max(1, max_nodes) + 1)
    f = model.forecast(val.model, s.point, s.point.id, None, grid, rpn)
    if f is None:
        return None, "the model has no compute fit"
    err = min(0.99, val.err_max)
    with np.errstate(all="ignore"):
        x = stats.break_even(grid, t_ref / f.t_total)
        early = stats.break_even(grid, t_ref / (f.t_total * (1 - err)))
        late = stats.break_even(grid, t_ref / (f.t_total * (1 + err)))
    what = f"validated forecast, a model and not a measurement ({val.error_text})"
    if x is None:
        return BreakEven("forecast", None, early, None, f"> {max_nodes} (forecast)",
                         f"not within {max_nodes} nodes by the {what}"), ""
    hi = _nodes_text(late) if late is not None else f"beyond {max_nodes}"
    return BreakEven("forecast", x, early, late, f"{x:.3g} (forecast)",
                     f"{x:.3g} nodes (band {_nodes_text(early)} to {hi} from the held-out error), "
                     f"by the {what}"), ""


def break_even(head: Comparison, series: list[tuple[int, Comparison]], items: list[tuple[Run, list]],
               bound: LinkBound | None, t_ref: float, against: str, max_nodes: int) -> BreakEven:
    found = measured(series)
    if found is not None:
        return found
    result = str(head.cluster.point.attrs.get("result") or "spectra")
    found = no_winner(bound, t_ref, against, result)
    one = next((c for n, c in series if n == 1), None)
    if found is not None and one is not None and one.speedup > 1:
        # one node has no link to carry: it may win where no larger count can
        return BreakEven("only one node wins", 1.0, None, None, "1 only (link-bound from 2)",
                         f"only 1 node wins (measured ratio {one.speedup:.3g} "
                         f"[{one.ci_lo:.3g}, {one.ci_hi:.3g}]); from 2 nodes on " + found.text)
    if found is not None:
        return found
    nodes = model.node_count(head.run)
    found, why = forecast(items, head.cluster, nodes, t_ref, max_nodes)
    if found is not None:
        return found
    counts = ", ".join(str(n) for n, _c in series)
    loses = (f"the cluster loses at every measured count ({counts} nodes)" if len(series) > 1
             else f"measured at {counts} node(s) only")
    return BreakEven("not given", short="not given",
                     text=f"cannot be given: {loses}, and no validated forecast ({why})"
                          f"{advice([n for n, _c in series], bound, items)}")


def advice(counts: list[int], bound: LinkBound | None, items: list[tuple[Run, list]]) -> str:
    """What to run next, never what the runs already hold."""
    more = []
    if len(set(counts)) < 3:
        more.append(RUN_MORE)
    elif len(set(counts)) < 4:
        more.append(f"a run at {2 * max(counts)} nodes, as the others, gives the forecast another "
                    "node count to check against")
    if bound is None and any(model.node_count(r) > 1 for r, _p in items):
        more.append("a transfer test between two nodes (wulfbench transfer --pairs first) or "
                    "--link-rate gives the line rate the link bound needs")
    if not more:
        more.append("more repetitions (--reps auto) narrow the spread the forecast is checked "
                    "against")
    return "; " + "; ".join(more)


def _headline(comps: list[Comparison]) -> Comparison:
    """The largest files request (else the largest size) of a run's comparisons."""
    return max(comps, key=lambda c: (c.cluster.point.scenario == "files", c.cluster.x, c.cluster.point.id))


def _paired_times(extra: dict[str, point_detail.RunNext]) -> dict[tuple[str, str], float]:
    return {(name, pid): stats.nanmedian(pn.baseline["t_total"]) for name, ext in extra.items()
            for pid, pn in ext.points.items() if pn.baseline is not None}


def rows(runs: list[Run], baselines: list[Run], stats_by_run: dict[str, list[PointStats]],
         paired: list[Comparison], cross: list[Comparison], extra: dict[str, point_detail.RunNext],
         max_nodes: int = 64) -> list[Row]:
    """One row per cluster run against the baseline (cross) and against one node (paired)."""
    cluster_runs = [r for r in runs if r not in baselines and not r.invalid]
    series = scaling.series_names(cluster_runs)
    paired_t = _paired_times(extra)
    out = []
    for run in cluster_runs:
        mates = [r for r in cluster_runs if series[r.name] == series[run.name]]
        mate_ids = {id(r) for r in mates}
        items = [(r, [s.point for s in stats_by_run.get(r.name, []) if s.usable]) for r in mates]
        rate = None
        for pool in (cross, paired):
            mine = [c for c in pool if c.run is run]
            if not mine:
                continue
            head = _headline([c for c in mine if not c.implausible] or mine)
            nodes = model.node_count(run)
            by_nodes: dict[int, Comparison] = {}
            for c in pool:
                if id(c.run) in mate_ids and c.cluster.point.key == head.cluster.point.key:
                    by_nodes.setdefault(model.node_count(c.run), c)
            rate = rate or line_rate(head.cluster.point, mates) or own_rate(items)
            bound = link_bound(head.cluster, nodes, rate)
            if head.kind == "paired":
                against = "one node (paired)"
                t_ref = paired_t.get((run.name, head.cluster.point.id),
                                     head.speedup * head.cluster.median)
            else:
                against = head.base_name
                t_ref = head.speedup * head.cluster.median  # the (pooled) baseline median
            what, why = limit(head.cluster, nodes, bound)
            pt = head.cluster.point
            out.append(Row(
                run=run.name, against=against, kind=head.kind, point=pt.id,
                workload=tables.workload(pt.nfiles, pt.seconds_per_file, pt.input_bytes),
                nodes=nodes, ranks=pt.nranks, t_cluster_s=head.cluster.median, t_against_s=t_ref,
                ratio=head.speedup, ratio_lo=head.ci_lo, ratio_hi=head.ci_hi,
                break_even=break_even(head, sorted(by_nodes.items()), items, bound, t_ref,
                                      against, max_nodes),
                limit=what, limit_text=why,
                flag=derive.implausible_flag(head, paired)))
    return out


COLUMNS = [
    Column("run", "cluster run"), Column("against", "against"), Column("kind", "comparison"),
    Column("point", "point"), Column("workload", "request"), Column("nodes", "nodes", "int"),
    Column("ranks", "ranks", "int"), Column("t_cluster", "cluster time per request", "time"),
    Column("t_against", "reference time per request", "time"),
    Column("ratio", "throughput ratio [95 % CI]", "ci"),
    Column("per_node", "ratio per node", "ci"),
    Column("break_even", "break-even nodes", "ci"),
    Column("break_even_short", "break-even nodes"),
    Column("break_even_source", "break-even from"),
    Column("limit", "limited by"), Column("limit_text", "where the time goes"),
    Column("flag", "flag"),
]
SHOWN = ["run", "against", "kind", "workload", "nodes", "t_cluster", "t_against", "ratio",
         "per_node", "break_even_short", "limit"]

NOTE = ("Throughput ratio = the reference's median time per request / the cluster's (above 1 the "
        "cluster is faster); 95 % CI: cross-run and cross-machine from the two medians' "
        "intervals, paired the CI of the median of per-repetition ratios. Ratio per node = ratio / nodes. Break-even nodes: measured series, else the "
        "link bound, else a validated forecast (the statements below give the figures). "
        "Kinds of comparison: docs/comparison.md.")


def table(items: list[Row]) -> Table:
    """buys.csv and the first table of the page: these columns, then every Row.extra column in
    the order first seen."""
    extras: list[str] = []
    for r in items:
        extras += [k for k in r.extra if k not in extras]
    out = []
    for r in items:
        be = r.break_even
        row = {"run": r.run, "against": r.against, "kind": r.kind, "point": r.point,
               "workload": r.workload, "nodes": r.nodes, "ranks": r.ranks,
               "t_cluster": r.t_cluster_s, "t_against": r.t_against_s,
               "ratio": Ci(r.ratio, r.ratio_lo, r.ratio_hi), "per_node": Ci(*r.per_node),
               "break_even": Ci(float("nan") if be.nodes is None else be.nodes,
                                float("nan") if be.lo is None else be.lo,
                                float("nan") if be.hi is None else be.hi),
               "break_even_short": be.short, "break_even_source": be.source,
               "limit": r.limit, "limit_text": r.limit_text, "flag": r.flag}
        row.update({k: r.extra.get(k, "") for k in extras})
        out.append(row)
    cols = COLUMNS + [Column(k, k) for k in extras]
    return Table("buys", "What the cluster buys, against the desktop and against one node", cols,
                 out, note=NOTE,
                 html_columns=SHOWN + (["flag"] if any(r.flag for r in items) else []) + extras)


def statements(items: list[Row]) -> list[str]:
    """One line per row: the break-even statement and where the time goes (duplicates once)."""
    out: list[str] = []
    for r in items:
        line = (f"**{r.run}** ({r.nodes} node{'s' if r.nodes != 1 else ''}) against {r.against}"
                f"{' (' + r.flag + ')' if r.flag else ''}: "
                f"break-even: {r.break_even.text}. Limited by {r.limit_text}.")
        if line not in out:
            out.append(line)
    return out


LEAD = ("The answer first: each cluster run at its largest request, against the desktop "
        "baseline and against one node of the cluster (the paired baseline, same job). "
        "cross-machine means the baseline ran on other hardware, so the ratio is a relative "
        "throughput, not a parallel speedup.")
NONE = ("Nothing to compare: no baseline. Measure the desktop with `wulfbench fft --baseline` "
        "and pass it with --baseline FILE, or run the cluster with --paired-baseline.")
