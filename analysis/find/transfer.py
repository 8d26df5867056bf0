"""Derive the data transfer, distributed FFT and measured scaling sections."""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from .. import derive
from ..derive import model, netfaults, scaling
from ..read.runs import Run
from . import tables
from .common import Finds, as_int, bold
from .tables import Table
from .tables import scaling as scaling_table


@dataclass(frozen=True)
class LinkView:
    """One run's link maps and what they show."""

    run: Run
    maps: tuple[tuple[str, derive.LinkMap], ...]
    retrans: Table | None
    slow: Table | None  # links below 80 % of the median; None: every link within
    within_text: str
    node_ratio_text: str
    pairs: Table | None


@dataclass(frozen=True)
class TransferFindings:
    without: tuple[str, ...]
    any_tests: bool
    invalid: tuple[str, ...]
    p2p: tuple[derive.TransferCurve, ...]
    collectives: tuple[tuple[Run, list[derive.TransferCurve]], ...]
    ring: tuple[derive.TransferCurve, ...]
    p2p_table: Table | None
    coll_table: Table | None
    links: tuple[LinkView, ...]
    warnings: tuple[str, ...]
    notes: tuple[str, ...]
    finds: Finds


def _links(ctx, run: Run) -> LinkView | None:
    pa, ps = run.pairs_all, ctx.extra[run.name].pairs_shift
    maps = []
    if pa is not None:
        maps += [("pairs_all", derive.link_map(pa.bandwidth_Bps, "bandwidth")),
                 ("pairs_all", derive.link_map(pa.latency_s, "latency"))]
    if ps is not None:
        maps += [("pairs_shift", derive.link_map(ps.bandwidth_Bps, "bandwidth"))]
    maps = [(w, m) for w, m in maps if m is not None]
    if not maps:
        return None
    lr = netfaults.link_retrans(run.path)
    slow = tables.link_maps(run, maps)
    within = (f"{bold(run.name)}: every link is within 80 % of the median "
              + ("in both maps." if len({w for w, _m in maps}) > 1 else "."))
    ratio = ""
    if ps is not None and ps.node_ratio is not None and np.isfinite(ps.node_ratio).any():
        ratio = (f"{bold(run.name)}: concurrent over sequential bandwidth per node: "
                 + ", ".join(f"node {k} {100 * v:.0f} %" for k, v in enumerate(ps.node_ratio)
                             if np.isfinite(v)) + ".")
    pairs = None
    if pa is not None:
        pairs = tables.pairs_matrix(run)
        pairs.html_rows = pairs.rows[:24] if len(pairs.rows) > 24 else None
        if pairs.html_rows is not None:
            pairs.title += " (first 24 pairs; the CSV has all)"
    return LinkView(run, tuple(maps), link_table(run, *lr) if lr is not None else None,
                    slow if slow.rows else None, within, ratio, pairs)


def transfer_findings(ctx) -> TransferFindings:
    without = tuple(r.name for r in ctx.runs if "transfer" not in r.groups)
    usable = [r for r in ctx.runs
              if r.transfer or r.pairs_all is not None or ctx.extra[r.name].pairs_shift is not None]
    if not usable:
        return TransferFindings(without, False, (), (), (), (), None, None, (), (), (), ())
    invalid = tuple(r.name for r in usable if r.invalid)
    usable = [r for r in usable if not r.invalid]
    warnings, notes, finds = [], [], []
    # validated=0 only means the payload was not checked (no --validate);
    # a check that ran and failed says verified=0
    failed = [f"{r.name}/{t.name}" for r in usable for t in r.transfer.values()
              if t.attrs.get("verified") is not None and as_int(t.attrs["verified"]) == 0]
    if failed:
        warnings.append("Transfer tests whose payload check failed (verified=0), shown but "
                        "not to be trusted: " + ", ".join(failed) + ".")
    cut = [f"{r.name}/{t.name}" for r in usable for t in r.transfer.values()
           if as_int(t.attrs.get("timed_out"), 0) == 1]
    if cut:
        warnings.append("Transfer tests cut short by --timeout (sizes missing) are PARTIAL: "
                        + ", ".join(cut) + ".")
    for r in usable:
        cuts = str(ctx.extra[r.name].transfer_attrs.get("cuts") or "")
        if cuts:
            notes.append(f"{r.name}: the transfer time budget cut {cuts}.")
    p2p = tuple(derive.p2p_curve(r, r.transfer[t]) for r in usable
                for t in ("pingpong", "bw", "bibw") if t in r.transfer)
    coll = tuple((r, [derive.collective_curve(r, t) for _n, t in sorted(r.transfer.items())
                      if t.kind == "collective"]) for r in usable)
    ring = tuple(c for r in usable if "ring" in r.transfer
                 for c in derive.ring_curves(r, r.transfer["ring"]))
    p2p_stats, coll_stats = [], []
    for r in usable:
        for name, t in sorted(r.transfer.items()):
            given = ctx.extra[r.name].transfer.get(name)
            ts = derive.transfer_stats(r, t, given.stats if given else {})
            (coll_stats if t.kind == "collective" else p2p_stats).append(ts)
    for r in usable:
        mine = [t for t in p2p_stats + coll_stats if t.run is r]
        flagged = [f"{t.test} at {tables.fmt_bytes(b)}" for t in mine for b in t.bytes[t.unstable]]
        if flagged:
            total = sum(t.bytes.size for t in mine)
            more = f" and {len(flagged) - 6} more" if len(flagged) > 6 else ""
            warnings.append(f"{bold(r.name)}: {len(flagged)} of {total} transfer points "
                            "unstable (CV over repetitions > 5 %), flagged in the tables: "
                            + ", ".join(flagged[:6]) + more + ".")
    links = tuple(v for v in (_links(ctx, r) for r in usable) if v is not None)
    for v in links:
        if v.slow is not None:
            finds.append((v.run.name, f"{len(v.slow.rows)} link measurement(s) below 80 % of the "
                                      "median (see the link maps)."))
    return TransferFindings(
        without, True, invalid, p2p, coll, ring,
        (tables.transfer_stats(p2p_stats, "transfer_p2p", "Point to point and ring")
         if p2p_stats else None),
        (tables.transfer_stats(coll_stats, "transfer_collectives", "Collectives")
         if coll_stats else None),
        links, tuple(warnings), tuple(notes), tuple(finds))


@dataclass(frozen=True)
class DfftFindings:
    items: tuple[derive.DfftStats, ...]
    table: Table | None
    warnings: tuple[str, ...]


def dfft_findings(ctx) -> DfftFindings:
    items, warnings = [], []
    for run in ctx.runs:
        for d in ctx.extra[run.name].dfft:
            ds = derive.dfft_stats(run, d, model.node_count(run))
            if ds.verified == 0 or run.invalid:
                warnings.append(f"{bold(run.name)} dfft {d.id} FAILED VERIFICATION: left out "
                                "of the figure.")
                continue
            items.append(ds)
    return DfftFindings(tuple(items), tables.dfft_points(items) if items else None, tuple(warnings))


@dataclass(frozen=True)
class ScalingFindings:
    rows: tuple[dict, ...]  # empty: no series
    table: Table | None
    notes: tuple[str, ...]
    caption: str = scaling_table.CAPTION


def scaling_findings(ctx) -> ScalingFindings:
    rows, notes = scaling.scaling_rows([r for r in ctx.runs if r not in ctx.baselines])
    return ScalingFindings(tuple(rows), scaling_table.table(rows) if rows else None,
                           tuple(str(n) for n in notes))


def link_table(run, test: str, m: np.ndarray):
    """The per-link retransmission figure beside the all-pairs maps, one row per ordered pair."""
    rows = [{"run": run.name, "sender": run.rank_label(s), "receiver": run.rank_label(r),
             "retrans": float(m[s, r])}
            for s in range(m.shape[0]) for r in range(m.shape[1]) if s != r]
    cols = [tables.Column("run", "run"), tables.Column("sender", "sender"),
            tables.Column("receiver", "receiver"), tables.Column("retrans", f"retransmitted ({test})", "pct")]
    return tables.Table(f"transfer_link_retrans_{tables.slug(run.name)}",
                        f"Retransmissions per link: {run.name}", cols, rows,
                        note="Share of TCP segments retransmitted during the map test, the larger of the "
                             "link's two nodes (a node's counters cover all its links). Above "
                             f"{netfaults.pct(netfaults.RETRANS_WARN)} the link or a switch port loses "
                             "frames (counted by the sending node: a node's bad link also shows on the "
                             "nodes that send to it).")
