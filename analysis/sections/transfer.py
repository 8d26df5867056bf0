"""Data transfer, the distributed FFT and the measured scaling sections."""

from __future__ import annotations

import numpy as np

from .. import derive, model, netfaults, plots, scaling, tables
from ..document import Report, bold
from ..findings import Findings, as_int


def transfer_section(rep: Report, ctx: Findings) -> None:
    sec = rep.section("transfer", "Data transfer", "Transfer")
    without = [r.name for r in ctx.runs if "transfer" not in r.groups]
    if without:
        sec.para("No /transfer group in: " + ", ".join(without) + " (skipped).")
    usable = [r for r in ctx.runs
              if r.transfer or r.pairs_all is not None or ctx.extra[r.name].pairs_shift is not None]
    if not usable:
        sec.para("No run has transfer tests.")
        return
    invalid = [r for r in usable if r.invalid]
    if invalid:
        sec.para("Runs that failed verification are left out: "
                 + ", ".join(r.name for r in invalid) + ".")
    usable = [r for r in usable if not r.invalid]
    # validated=0 only means the payload was not checked (no --validate);
    # a check that ran and failed says verified=0
    failed = [f"{r.name}/{t.name}" for r in usable for t in r.transfer.values()
              if t.attrs.get("verified") is not None and as_int(t.attrs["verified"]) == 0]
    if failed:
        rep.warnings.append("Transfer tests whose payload check failed (verified=0), shown but "
                            "not to be trusted: " + ", ".join(failed) + ".")
    cut = [f"{r.name}/{t.name}" for r in usable for t in r.transfer.values()
           if as_int(t.attrs.get("timed_out"), 0) == 1]
    if cut:
        rep.warnings.append("Transfer tests cut short by --timeout (sizes missing) are PARTIAL: "
                            + ", ".join(cut) + ".")
    for r in usable:
        cuts = str(ctx.extra[r.name].transfer_attrs.get("cuts") or "")
        if cuts:
            rep.notes.append(f"{r.name}: the transfer time budget cut {cuts}.")
    p2p = [derive.p2p_curve(r, r.transfer[t]) for r in usable for t in ("pingpong", "bw", "bibw")
           if t in r.transfer]
    coll = [(r, [derive.collective_curve(r, t) for _n, t in sorted(r.transfer.items())
                 if t.kind == "collective"]) for r in usable]
    ring = [c for r in usable if "ring" in r.transfer for c in derive.ring_curves(r, r.transfer["ring"])]
    sec.figure(plots.transfer_p2p(p2p, ctx.colour, rep.outdir))
    sec.figure(plots.transfer_collectives(coll, rep.outdir))
    sec.figure(plots.transfer_ring(ring, ctx.colour, rep.outdir))
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
            rep.warnings.append(f"{bold(r.name)}: {len(flagged)} of {total} transfer points "
                                "unstable (CV over repetitions > 5 %), flagged in the tables: "
                                + ", ".join(flagged[:6]) + more + ".")
    if p2p_stats:
        sec.table(tables.transfer_stats(p2p_stats, "transfer_p2p", "Point to point and ring"))
    if coll_stats:
        sec.table(tables.transfer_stats(coll_stats, "transfer_collectives", "Collectives"))
    for run in usable:
        pa, ps = run.pairs_all, ctx.extra[run.name].pairs_shift
        maps = []
        if pa is not None:
            maps += [("pairs_all", derive.link_map(pa.bandwidth_Bps, "bandwidth")),
                     ("pairs_all", derive.link_map(pa.latency_s, "latency"))]
        if ps is not None:
            maps += [("pairs_shift", derive.link_map(ps.bandwidth_Bps, "bandwidth"))]
        maps = [(w, m) for w, m in maps if m is not None]
        if not maps:
            continue
        sec.figure(plots.link_maps(run, maps, rep.outdir))
        if (lr := netfaults.link_retrans(run.path)) is not None:
            sec.table(netfaults.link_table(run, *lr))
        slow = tables.link_maps(run, maps)
        if slow.rows:
            sec.table(slow)
            rep.find(run.name, f"{len(slow.rows)} link measurement(s) below 80 % of the median "
                               "(see the link maps).")
        else:
            sec.para(f"{bold(run.name)}: every link is within 80 % of the median "
                     + ("in both maps." if len({w for w, _m in maps}) > 1 else "."))
        if ps is not None and ps.node_ratio is not None and np.isfinite(ps.node_ratio).any():
            sec.para(f"{bold(run.name)}: concurrent over sequential bandwidth per node: "
                     + ", ".join(f"node {k} {100 * v:.0f} %" for k, v in enumerate(ps.node_ratio)
                                 if np.isfinite(v)) + ".")
        if pa is not None:
            t = tables.pairs_matrix(run)
            t.html_rows = t.rows[:24] if len(t.rows) > 24 else None
            if t.html_rows is not None:
                t.title += " (first 24 pairs; the CSV has all)"
            sec.table(t)


def dfft_section(rep: Report, ctx: Findings) -> None:
    items = []
    for run in ctx.runs:
        for d in ctx.extra[run.name].dfft:
            ds = derive.dfft_stats(run, d, model.node_count(run))
            if ds.verified == 0 or run.invalid:
                rep.warnings.append(f"{bold(run.name)} dfft {d.id} FAILED VERIFICATION: left out "
                                    "of the figure.")
                continue
            items.append(ds)
    if not items:
        return
    sec = rep.section("dfft", "Distributed FFT", "dfft")
    sec.para("One transform spread over the ranks with FFTW-MPI (the HPC view of an FFT on a "
             "cluster), as HPCC's MPIFFT measures it.")
    sec.figure(plots.dfft(items, rep.outdir))
    sec.table(tables.dfft_points(items))


def scaling_section(rep: Report, ctx: Findings) -> None:
    """The measured scaling figure and table: runs of one series at several node or rank counts."""
    sc = scaling.build([r for r in ctx.runs if r not in ctx.baselines], rep.outdir)
    if not sc.rows:
        return
    sec = rep.section("scaling", "Scaling with nodes", "Scaling")
    sec.para(scaling.CAPTION)
    if sc.figure:
        sec.figure(plots.Figure(sc.figure, "Measured scaling", scaling.CAPTION))
    sec.table(sc.table)
    if sc.notes:
        sec.bullets([str(n) for n in sc.notes])
