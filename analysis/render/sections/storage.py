"""The Storage section (figures from analysis.find.storage, only formatted and drawn here)."""

from __future__ import annotations

from .. import plots
from ..document import Report
from ...find import Findings


def storage_section(rep: Report, ctx: Findings) -> None:
    f = ctx.storage
    if not f.any_io:
        return  # no run has /io (older files, or no io test): no section
    sec = rep.section("storage", "Storage", "Storage")
    sec.para("What wulfbench io measured on each node's folders: sequential writes made durable "
             "inside the timed window, reads with the page cache dropped first (cold), random 4 KiB "
             "IOPS with their latency, and file create, stat and delete rates. MB = 10^6 bytes.")
    if f.without:
        sec.para("No /io group in: " + ", ".join(f.without) + " (skipped).")
    if f.failed_lines:
        sec.bullets(list(f.failed_lines))
    sec.figure(plots.storage_bandwidth(list(f.bandwidth), rep.outdir))
    sec.figure(plots.storage_iops(list(f.iops), rep.outdir))
    if f.table is not None:
        sec.table(f.table)
    if f.direct_lines:
        sec.para("Not through O_DIRECT, as the program gave the reason:")
        sec.bullets(list(f.direct_lines))
    sec.para("Against the fft workload:")
    sec.bullets(list(f.fft_lines))
    sec.bullets(list(f.slow_lines))
    if f.sd_lines:
        sec.para(f"SD cards against {f.sd_source}; {f.sd_caveat}:")
        sec.bullets(list(f.sd_lines))
