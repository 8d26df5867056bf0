"""The report's render stage: the sections, one small module each, in page order. `build`
derives the shared figures first (analysis.findings), then each section formats them into a
Report (analysis.document)."""

from __future__ import annotations

import argparse
from pathlib import Path

from .. import tables
from ..document import Report, bold
from ..findings import Findings, derive_findings
from ..runs import Run
from .fft import fft_section, pipeline_section
from .forecast import model_section
from .method import method_section
from .notices import run_notices
from .ranks import per_rank_section
from .service import energy_section, load_section
from .speedup import baseline_section, buys_section
from .study import study_rows
from .transfer import dfft_section, scaling_section, transfer_section


def runs_section(rep: Report, ctx: Findings) -> None:
    sec = rep.section("runs", "Runs")
    sec.para("Every run that went into this report: where and how it ran, and whether its "
             "results were verified.")
    base = ctx.baselines[0] if ctx.baselines else None
    sec.table(tables.provenance(list(ctx.runs), base))
    sec.table(tables.hosts(list(ctx.runs)))


# The page's order. Each section only formats what derive_findings computed, so any order
# gives the same figures (tests/analysis/test_sections_order.py).
SECTIONS = (runs_section, fft_section, pipeline_section, baseline_section, buys_section,
            per_rank_section, transfer_section, dfft_section, scaling_section, model_section,
            load_section, energy_section, method_section)


def build(args: argparse.Namespace, runs: list[Run], baselines: list[Run],
          notes: list[str], outdir: Path, order=SECTIONS) -> Report:
    """Derive every shared figure first (analysis.findings), then render the sections."""
    ctx = derive_findings(args, runs, baselines)
    rep = Report(title=args.title, outdir=outdir, runs=runs, baselines=baselines,
                 notes=list(notes))
    rep.energy = ctx.energy
    rep.warnings.extend(ctx.energy.warnings)
    for base in baselines:
        if base.invalid:
            rep.warnings.append(f"The baseline {bold(base.name)} failed verification: no cross-run "
                                "speedup is computed against it.")
    for run in runs:
        run_notices(rep, ctx, run)
    for section in order:
        section(rep, ctx)
    rep.study = tables.study(study_rows(ctx))
    return rep
