"""Data transfer, the distributed FFT and the measured scaling sections (figures from
analysis.find.transfer, only formatted and drawn here)."""

from __future__ import annotations

from .. import plots
from ..document import Report
from ...find import Findings


def transfer_section(rep: Report, ctx: Findings) -> None:
    f = ctx.transfer
    sec = rep.section("transfer", "Data transfer", "Transfer")
    if f.without:
        sec.para("No /transfer group in: " + ", ".join(f.without) + " (skipped).")
    if not f.any_tests:
        sec.para("No run has transfer tests.")
        return
    if f.invalid:
        sec.para("Runs that failed verification are left out: " + ", ".join(f.invalid) + ".")
    sec.figure(plots.transfer_p2p(list(f.p2p), ctx.colour, rep.outdir))
    sec.figure(plots.transfer_collectives(list(f.collectives), rep.outdir))
    sec.figure(plots.transfer_ring(list(f.ring), ctx.colour, rep.outdir))
    if f.p2p_table is not None:
        sec.table(f.p2p_table)
    if f.coll_table is not None:
        sec.table(f.coll_table)
    for v in f.links:
        sec.figure(plots.link_maps(v.run, list(v.maps), rep.outdir))
        if v.retrans is not None:
            sec.table(v.retrans)
        if v.slow is not None:
            sec.table(v.slow)
        else:
            sec.para(v.within_text)
        if v.node_ratio_text:
            sec.para(v.node_ratio_text)
        if v.pairs is not None:
            sec.table(v.pairs)


def dfft_section(rep: Report, ctx: Findings) -> None:
    f = ctx.dfft
    if not f.items:
        return
    sec = rep.section("dfft", "Distributed FFT", "dfft")
    sec.para("One transform spread over the ranks with FFTW-MPI (the HPC view of an FFT on a "
             "cluster), as HPCC's MPIFFT measures it.")
    sec.figure(plots.dfft(list(f.items), rep.outdir))
    sec.table(f.table)


def scaling_section(rep: Report, ctx: Findings) -> None:
    """The measured scaling figure and table: runs of one series at several node or rank counts."""
    f = ctx.scaling
    if not f.rows:
        return
    sec = rep.section("scaling", "Scaling with nodes", "Scaling")
    sec.para(f.caption)
    sec.figure(plots.measured_scaling(list(f.rows), rep.outdir))
    sec.table(f.table)
    if f.notes:
        sec.bullets(list(f.notes))
