"""The report's render stage: the sections, one small module each, in page order. `build`
derives everything the page shows first (analysis.find), then each section formats its
part of it into a Report (analysis.document) and draws its figures from derived numbers."""

from __future__ import annotations

import argparse
from pathlib import Path

from ..document import Report
from ...find import Findings, derive_findings
from ...read.runs import Run
from .fft import fft_section, pipeline_section
from .forecast import model_section
from .method import method_section
from .ranks import per_rank_section
from .service import energy_section, load_section
from .speedup import baseline_section, buys_section
from .storage import storage_section
from .transfer import dfft_section, scaling_section, transfer_section
from .whatif import upgrade_section


def runs_section(rep: Report, ctx: Findings) -> None:
    sec = rep.section("runs", "Runs")
    sec.para("Every run that went into this report: where and how it ran, whether its results "
             "were verified, and what the run itself cost outside what it measured.")
    for table in ctx.runs_tables:
        sec.table(table)


# The page's order. Each section only formats what derive_findings computed, so any order
# gives the same sections, figures and lines (tests/analysis/test_sections_order.py).
SECTIONS = (runs_section, fft_section, pipeline_section, baseline_section, buys_section, upgrade_section,
            per_rank_section, transfer_section, storage_section, dfft_section, scaling_section, model_section,
            load_section, energy_section, method_section)


def build(args: argparse.Namespace, runs: list[Run], baselines: list[Run],
          notes: list[str], outdir: Path, order=SECTIONS) -> Report:
    """Derive everything first (analysis.find), then render the sections in `order`."""
    return render(derive_findings(args, runs, baselines), notes, outdir, order)


def render(ctx: Findings, notes: list[str], outdir: Path, order=SECTIONS) -> Report:
    """The Report of already derived findings: the lines above the sections as derived, then
    each section in `order`. Rendering reads `ctx` only, so one Findings renders any number of
    times, in any order, to the same page."""
    rep = Report(title=ctx.args.title, outdir=outdir, runs=list(ctx.runs),
                 baselines=list(ctx.baselines), notes=list(notes) + list(ctx.notes),
                 warnings=list(ctx.warnings), energy=ctx.energy, study=ctx.study,
                 findings={name: list(items) for name, items in ctx.headlines.items()})
    for section in order:
        section(rep, ctx)
    return rep
