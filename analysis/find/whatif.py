"""What an upgrade buys: for the study's requests (one file, and the largest file count the runs
measured, 64 x 5 s in the study) and the load's saturation rate, the time per request now and
after each change, its 95 % interval, the ratio to now and what limits it after; one sentence per
change. The command (commands/whatif.py) and the report's section after "What the cluster buys"
both take their rows, table and sentences from here; derive/model/whatif.py is the model.

A prediction is a figure only when the model held on the runs' own held-out data; otherwise the
row says why not (predicted_s and the interval are empty in the CSV).
"""

from __future__ import annotations

import dataclasses
from dataclasses import dataclass, field

import numpy as np

from .. import derive
from ..derive import energy, model, stats
from ..derive.model import whatif as wm
from ..derive.model import whatif_cpu
from ..read.reader import UsageError
from ..read.runs import FftPoint, Run
from . import tables
from .tables import Column, Table

ADVICE = {
    "link": "the link then limits, so a faster link helps and more nodes do not",
    "compute": "compute then limits, so more or faster nodes help and a faster link does not",
    "head node": "the head node's own work then limits, so neither more nodes nor a faster link "
                 "helps much",
    "disk": "the disk then limits, so a faster disk helps",
}


@dataclass
class Basis:
    """What the predictions start from: the cluster runs of one kind, their model and its check."""

    items: list[tuple[Run, list[FftPoint]]]
    comm: list[Run]
    model: wm.Model | None
    check: wm.HeldOut
    now: Run  # the run at the largest node count: "now"
    nodes: int
    rpn: int
    saturation: tuple[float, FftPoint] | None = None  # (req/s, the point of its request shape)
    cpu: whatif_cpu.Cpu | None = None  # the nodes' machine(s) and the CPU the ranks ran
    runs_of: list[int] = field(default_factory=list)  # per item, how many runs are pooled in it

    @property
    def shown(self) -> bool:
        return self.model is not None and self.check.ok


def usable_points(run: Run) -> list[FftPoint]:
    return [s.point for s in derive.run_point_stats(run) if s.usable]


def basis(runs: list[Run]) -> Basis:
    """The cluster runs (not baselines, valid) with FFT points, and the transfer-only runs. Runs
    of one configuration given more than once are pooled (see pool)."""
    cluster = [r for r in runs if not r.is_baseline and not r.invalid]
    items = [(r, pts) for r in cluster if (pts := usable_points(r))]
    if not items:
        raise UsageError("no valid cluster run with FFT points among the files; give the "
                         "result files of a cluster run (wulfbench fft or suite)")
    comm = [r for r in cluster if r.transfer and all(r is not x for x, _p in items)]
    comm += [r for r, _p in items if r.transfer]
    items, again = pool(items)
    k = max(range(len(items)), key=lambda i: (model.node_count(items[i][0]), items[i][0].nranks))
    now, _pts = items[k]
    nodes = model.node_count(now)
    rpn = max(1, now.nranks // max(1, nodes))
    out = Basis(items, comm, wm.fit_model(items, comm), wm.held_out(items, comm), now, nodes, rpn,
                cpu=whatif_cpu.of_run(now, nodes, rpn, again[k]),
                runs_of=[1 + len(a) for a in again])
    out.saturation = _saturation(now, _pts)
    return out


# What two points must share to be one request measured again.
SAME_REQUEST = ("scenario", "mode", "precision", "frame", "hop", "window", "nfiles", "seconds_per_file",
                "sample_rate", "input_bytes", "input", "input_cache", "wire", "result", "schedule",
                "chunk_frames", "batch", "local", "root_computes", "link_rate_Bps")


def _plain(v):
    v = v.decode() if isinstance(v, bytes) else v.item() if isinstance(v, np.generic) else v
    return None if isinstance(v, float) and not np.isfinite(v) else v


def _request_key(p: FftPoint) -> tuple:
    return tuple(_plain(p.attrs.get(k)) for k in SAME_REQUEST)


def _config_key(run: Run, keys: list[tuple]) -> tuple:
    hosts = tuple(sorted((str(h.get("hostname")), _plain(h.get("cpu_quota"))) for h in run.hosts))
    return model.node_count(run), run.nranks, hosts, frozenset(keys)


def _joined(a: FftPoint, b: FftPoint) -> FftPoint:
    """a with b's repetitions after its own, where their shapes agree, and each run's median."""
    def cat(x, y):
        if x is None or y is None or np.ndim(x) < 1 or np.shape(x)[1:] != np.shape(y)[1:]:
            return x
        return np.concatenate([x, y])
    medians = a.run_medians or (stats.nanmedian(a.times["t_total"]),)
    return dataclasses.replace(
        a, run_medians=(*medians, stats.nanmedian(b.times["t_total"])),
        times={k: cat(v, b.times.get(k)) for k, v in a.times.items()},
        slowest_rank=cat(a.slowest_rank, b.slowest_rank), t_over=cat(a.t_over, b.t_over),
        t_sync=cat(a.t_sync, b.t_sync), t_read_io=cat(a.t_read_io, b.t_read_io))


def pool(items: list[tuple[Run, list[FftPoint]]]
         ) -> tuple[list[tuple[Run, list[FftPoint]]], list[list[tuple[Run, dict[str, str]]]]]:
    """Runs of one configuration (the same nodes, ranks, CPU quotas and requests) measured again:
    one item, the first run's, whose points hold every run's repetitions, so that what is "now"
    carries the spread between runs and not only within one (two nodes at a CPU quota moved by
    a tenth between runs of the same commands, while each run's own repetitions agreed). Also, per
    item, the other runs pooled into it, each with a map of its point ids to the item's."""
    groups: dict[tuple, list[tuple[Run, list[FftPoint]]]] = {}
    for i, (run, pts) in enumerate(items):
        keys = [_request_key(p) for p in pts]
        key = _config_key(run, keys) if len(set(keys)) == len(keys) else ("alone", i)
        groups.setdefault(key, []).append((run, pts))
    out, again = [], []
    for (run, pts), *rest in groups.values():
        maps = []
        for other, theirs in rest:
            by_key = {_request_key(p): p for p in theirs}
            pts = [_joined(p, by_key[_request_key(p)]) for p in pts]
            maps.append((other, {by_key[_request_key(p)].id: p.id for p in pts}))
        out.append((run, pts))
        again.append(maps)
    return out, again


def _saturation(run: Run, pts: list[FftPoint]) -> tuple[float, FftPoint] | None:
    if not run.load_steps:
        return None
    _steps, sat = derive.load_analysis(run)
    if sat is None or not np.isfinite(sat.saturation_rps) or sat.saturation_rps <= 0:
        return None
    step = run.load_steps[0].attrs
    files = int(step.get("files_per_request") or 1)
    secs = float(step.get("seconds_per_file") or 0)
    same = [p for p in pts if p.nfiles == files and np.isclose(p.seconds_per_file, secs)]
    return (sat.saturation_rps, same[0]) if same else None


def requests(b: Basis) -> list[FftPoint]:
    """One file, and the largest file count, of the run at the largest node count."""
    pts = next((ps for r, ps in b.items if r is b.now), [])
    files = [p for p in pts if p.scenario == "files"] or pts
    if not files:
        return []
    small = min(files, key=lambda p: (p.nfiles, p.input_bytes))
    big = max(files, key=lambda p: (p.nfiles, p.input_bytes))
    return [small] if small is big else [small, big]


@dataclass
class Row:
    request: str
    change: str
    now_s: float
    predicted_s: float = float("nan")
    ci_low_s: float = float("nan")
    ci_high_s: float = float("nan")
    ratio: float = float("nan")
    ratio_lo: float = float("nan")
    ratio_hi: float = float("nan")
    limited_by: str = ""
    why_not: str = ""  # why no figure is shown
    extra: dict[str, float] = field(default_factory=dict)


def _label(p: FftPoint) -> str:
    return tables.workload(p.nfiles, p.seconds_per_file, p.input_bytes)


def energy_scale(b: Basis, result: energy.Result | None, point: FftPoint,
                 pred: wm.Prediction, nodes_after: int) -> dict[str, float]:
    """J and $ per request now (measured or priced) and after (the same power and price per
    node, for the nodes and the time after)."""
    row = result.row(b.now.name, point.id) if result is not None else None
    if row is None:
        return {}
    factor = nodes_after * pred.after_s / (b.nodes * pred.now_s) if pred.now_s > 0 else float("nan")
    out = {}
    for name, attr in (("j_per_request", "j_per_request"),
                       ("usd_per_1000_requests", "usd_per_1000_requests")):
        value = float(getattr(row, attr))
        if np.isfinite(value):
            out[f"{name}_now"] = value
            out[f"{name}_after"] = value * factor
    return out


def rows(b: Basis, changes: list[wm.Change], result: energy.Result | None = None,
         extrapolated: bool = False, together: bool = True) -> list[Row]:
    """Each request (and the saturation rate) after each change, and (together) after all of
    them at once when there are several."""
    sets = [[c] for c in changes] + ([changes] if len(changes) > 1 and together else [])
    shapes = [(_label(p), p, 1.0) for p in requests(b)]
    if b.saturation is not None:
        rps, pt = b.saturation
        shapes.append((f"load saturation ({rps:.3g} req/s)", pt, None))
    out = []
    for chs in sets:
        text = " and ".join(c.text for c in chs)
        nodes_after = next((c.nodes for c in chs if c.kind == "nodes"), b.nodes)
        for label, pt, unit in shapes:
            med = stats.nanmedian(pt.times["t_total"])
            factor = 1.0 if unit is not None else 1.0 / (b.saturation[0] * med)
            refused = next((c.why_not for c in chs if c.why_not), "")
            if not refused and any(c.kind == "disk" for c in chs):
                refused = wm.disk_why_not(pt)
            if not b.shown or refused:
                out.append(Row(label, text, med * factor, why_not=refused or _why_not(b)))
                continue
            pred = wm.predict_change(b.model, b.check, pt, b.nodes, b.rpn, chs, b.cpu)
            if factor != 1.0:
                pred = wm.scaled(pred, factor)
            lo, hi = pred.ratio_ci
            out.append(Row(label, text, pred.now_s, pred.after_s, pred.lo, pred.hi, pred.ratio,
                           lo, hi, pred.limited_by,
                           extra=energy_scale(b, result, pt, pred, nodes_after)))
    if extrapolated:
        for r in out:
            r.limited_by += " (extrapolated)" if r.limited_by else ""
    return out


def advice(limited_by: str) -> str:
    key = limited_by.split(" (")[0]
    if key in ADVICE:
        return ADVICE[key]
    if key.startswith("the machine's"):
        return (f"{limited_by} then limit, since the nodes share them, so neither more nodes on "
                "that machine nor a faster link helps; more machines or faster cores do")
    if key.startswith("the nodes' CPU quota"):
        return (f"{limited_by} then limits, so a larger CPU share or faster nodes help and a "
                "faster link does not")
    return f"{limited_by} then limits"


def _why_not(b: Basis) -> str:
    if b.model is None:
        return "not shown: no FFT points to fit a model to"
    return f"not shown: {b.check.reason}"


def sentences(b: Basis, items: list[Row]) -> list[str]:
    """One sentence per change, at the largest request."""
    out = []
    for change in dict.fromkeys(r.change for r in items):
        mine = [r for r in items if r.change == change and not r.request.startswith("load")]
        if not mine:
            continue
        big = mine[-1]
        if big.why_not:
            out.append(f"{change}: {big.why_not}.")
            continue
        line = (f"{change}: {big.ratio:.2g}× [{big.ratio_lo:.2g}, {big.ratio_hi:.2g}] for "
                f"{big.request} ({tables.fmt_time(big.now_s)} now, "
                f"{tables.fmt_time(big.predicted_s)} after); "
                f"{advice(big.limited_by)}")
        e = big.extra
        if "j_per_request_now" in e:
            line += f"; {e['j_per_request_now']:.3g} J per request now, {e['j_per_request_after']:.3g} after"
        if "usd_per_1000_requests_now" in e:
            line += (f"; ${e['usd_per_1000_requests_now']:.3g} per 1000 requests now, "
                     f"${e['usd_per_1000_requests_after']:.3g} after")
        sat = next((r for r in items if r.change == change and r.request.startswith("load")), None)
        if sat is not None and sat.predicted_s > 0:
            line += f"; the load saturates at {1 / sat.predicted_s:.3g} req/s instead of {1 / sat.now_s:.3g}"
        out.append(line + ".")
    return out


def sources(changes: list[wm.Change]) -> list[str]:
    """Where each change's figures come from."""
    return [f"{c.text}: {c.source}." for c in changes if c.source]


COLUMNS = [Column("request", "request"), Column("change", "change"),
           Column("now_s", "now", "time"), Column("predicted_s", "after the change", "time"),
           Column("ci_low_s", "95 % low", "time"), Column("ci_high_s", "95 % high", "time"),
           Column("ratio", "ratio to now", "float"), Column("limited_by", "limited by after")]

NOTE = ("ratio = time now / time after (above 1 the change is faster). For the load's saturation "
        "rate the times are seconds per request at that rate (1 / rate). The interval adds the "
        "measured median's 95 % CI and the model's error on its held-out data; an empty "
        "prediction says why in the text below. The model: docs/comparison.md, 'What an upgrade "
        "buys'.")


def table(items: list[Row], name: str = "whatif") -> Table:
    extras: list[str] = []
    for r in items:
        extras += [k for k in r.extra if k not in extras]
    cells = []
    for r in items:
        row = {"request": r.request, "change": r.change, "now_s": r.now_s,
               "predicted_s": r.predicted_s, "ci_low_s": r.ci_low_s, "ci_high_s": r.ci_high_s,
               "ratio": r.ratio, "limited_by": r.limited_by or r.why_not}
        row.update({k: r.extra.get(k, float("nan")) for k in extras})
        cells.append(row)
    return Table(name, "What an upgrade buys", COLUMNS + [Column(k, k, "float") for k in extras],
                 cells, note=NOTE)


def lead(b: Basis) -> str:
    def pooled(i: int) -> str:
        return f", {b.runs_of[i]} runs of it pooled" if b.runs_of[i] > 1 else ""
    runs = ", ".join(f"{r.name} ({model.node_count(r)} node{'s' if model.node_count(r) != 1 else ''}"
                     f"{pooled(i)})" for i, (r, _p) in enumerate(b.items))
    held = (f"The model held on its held-out data ({b.check.text})." if b.shown
            else f"No prediction is shown as a figure: {_why_not(b)[len('not shown: '):]}.")
    link = ""
    if b.model is not None and b.model.fit.hockney is not None:
        h = b.model.fit.hockney
        link = f" α–β from {h.source}: α {tables.fmt_time(h.alpha_s)}, β {tables.fmt_bps(h.beta_Bps)}."
    return f"From {runs}; now = {b.now.name}.{link} {held}{_machine(b)}"


def _machine(b: Basis) -> str:
    """What the nodes' shared machine gave the ranks at the largest request: the CPU they ran
    against the share they may use (less: they waited on something, or other jobs had the cores)."""
    cpu, reqs = b.cpu, requests(b)
    if cpu is None or not cpu.shared or not reqs:
        return ""
    big = reqs[-1]
    work, _lo, _hi = whatif_cpu.work_ci(cpu, big.id, ran=True)
    med = stats.nanmedian(big.times["t_total"])
    if not (np.isfinite(work) and med > 0):
        return ""
    ran = work / med / max(1, b.now.nranks)
    share = cpu.rank_share(b.nodes)
    return (f" The {b.nodes} nodes share one machine ({cpu.machine}, {cpu.cores:g} cores): at "
            f"{_label(big)} each rank ran {ran:.2f} of a core, against the {share:.2g} it may use"
            + ("; they waited on something else, or other jobs had the cores." if ran < 0.8 * share
               else "; what it may use limits it."))


def report_changes(b: Basis, baselines: list[Run]) -> list[wm.Change]:
    """The changes the report's section shows unasked: the next link rate up, twice the nodes
    where the check validated that far, and the desktop's compute rate per node."""
    out = []
    if b.model is not None and b.model.fit.hockney is not None and b.nodes > 1:
        now = float(b.now.points[0].attrs.get("link_rate_Bps") or 0) if b.now.points else 0.0
        rate = next((r for r in (125e6, 312.5e6) if r > 1.5 * (now or b.model.fit.hockney.beta_Bps)),
                    None)
        if rate is not None:
            name = "a 1 Gbit/s link" if rate == 125e6 else "a 2.5 Gbit/s link"
            out.append(wm.link_change(b.model.fit, rate, now or None, name, b.cpu))
    twice = 2 * b.nodes
    if b.nodes > 1 and twice <= b.check.node_range[1]:
        out.append(wm.Change("nodes", f"{twice} nodes", nodes=twice))
    for base in baselines:
        fit = wm.compute_fit(usable_points(base))
        if fit is not None:
            out.append(compute_change(base, fit, b.cpu))
            break
    return out


def compute_change(base: Run, fit, cpu: whatif_cpu.Cpu | None = None) -> wm.Change:
    """Nodes whose ranks compute as `base`'s --baseline run did (its fit c0 + c1·flops). A
    baseline made on the cluster's own machine (one boot_id) is that machine's cores at the
    baseline's CPU quota: the nodes get that quota, and no more cores than the machine has."""
    if whatif_cpu.same_machine(cpu, base):
        quota = whatif_cpu.quota_of(base)
        share = f"{quota:.3g} CPU" if np.isfinite(quota) else "no CPU quota"
        return wm.Change("compute", f"nodes at {share} each, as {base.name}", compute=fit,
                         quota=quota, same_machine=True,
                         source=f"{base.name}'s --baseline run on the cluster's own machine "
                                f"({cpu.machine}, {cpu.cores:g} cores): each node's CPU quota "
                                f"becomes its {share}, the machine's cores still shared")
    return wm.Change("compute", f"nodes that compute like {base.name}", compute=fit,
                     source=f"each rank's compute from {base.name}'s --baseline run, "
                            f"{tables.fmt_time(fit.a)} + {tables.fmt_time(fit.b * 1e9)} per GFLOP")


@dataclass(frozen=True)
class UpgradePage:
    """The report's "What an upgrade buys" for one series of cluster runs."""

    series: str
    lead: str
    table: Table | None
    sentences: tuple[str, ...]
    intro: str = ""  # the section's first paragraph, on the first page part


UPGRADE_LEAD = ("What a change would buy, from a model of the runs below: the next link rate, "
                "twice the nodes where the model's held-out check reaches that far, and nodes that "
                "compute like the baseline. For other changes (another run's link, a disk) use "
                "`python3 -m analysis.whatif`.")


def pages(runs: list[Run], baselines: list[Run], series: dict[str, str]) -> tuple[UpgradePage, ...]:
    """One page part per series of cluster runs with FFT points (series: run name -> series)."""
    out = []
    cluster = [r for r in runs if r not in baselines and not r.is_baseline and not r.invalid]
    names = list(dict.fromkeys(series[r.name] for r in cluster if r.points))
    for name in names:
        mates = [r for r in cluster if series[r.name] == name]
        hosts = {str(h.get("hostname")) for r in mates for h in r.hosts}
        more = [r for r in cluster if r.transfer and not r.points and r not in mates
                and {str(h.get("hostname")) for h in r.hosts} <= hosts]
        try:
            b = basis(mates + more)
        except UsageError:
            continue
        changes = report_changes(b, [x for x in baselines if not x.invalid])
        if not changes:
            out.append(UpgradePage(name, lead(b) + " No change to show: one node, no baseline "
                                   "and no node count validated beyond this one.", None, ()))
            continue
        items = rows(b, changes, together=False)
        csv_name = "whatif" if len(names) == 1 else f"whatif_{tables.slug(b.now.name)}"
        out.append(UpgradePage(name, lead(b), table(items, csv_name),
                               tuple(sentences(b, items) + sources(changes))))
    if out:
        out[0] = dataclasses.replace(out[0], intro=UPGRADE_LEAD)
    return tuple(out)
