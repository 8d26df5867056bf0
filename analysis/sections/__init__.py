"""The report's sections, in page order: `build` reads every run's figures and fills a
Report (analysis.document) with them."""

from __future__ import annotations

import argparse
from pathlib import Path

from .. import derive, energy, plots, point_detail, tables
from ..document import Report, bold
from ..runs import Run
from .common import Context
from .fft import fft_section, pipeline_section
from .forecast import model_section
from .method import method_section
from .notices import run_notices
from .ranks import per_rank_section
from .service import energy_section, load_section
from .speedup import baseline_section, buys_section
from .study import study_rows
from .transfer import dfft_section, scaling_section, transfer_section


def build(args: argparse.Namespace, runs: list[Run], baselines: list[Run],
          notes: list[str], outdir: Path) -> Report:
    rep = Report(title=args.title, outdir=outdir, runs=runs, baselines=baselines,
                 notes=list(notes))
    ctx = Context(args=args, runs=runs, baselines=baselines,
                  stats={r.name: derive.run_point_stats(r) for r in runs},
                  extra={r.name: point_detail.read(r) for r in runs},
                  colour=plots.colours(runs, baselines[0] if baselines else None))
    ctx.energy = energy.analyse(runs, baselines, getattr(args, "energy", None),
                                {r.name: ctx.extra[r.name].dfft for r in runs})
    rep.energy = ctx.energy
    rep.warnings.extend(ctx.energy.warnings)
    for base in baselines:
        if base.invalid:
            rep.warnings.append(f"The baseline {bold(base.name)} failed verification: no cross-run "
                                "speedup is computed against it.")
    for run in runs:
        run_notices(rep, ctx, run)
    sec = rep.section("runs", "Runs")
    sec.para("Every run that went into this report: where and how it ran, and whether its "
             "results were verified.")
    sec.table(tables.provenance(runs, baselines[0] if baselines else None))
    sec.table(tables.hosts(runs))
    fft_section(rep, ctx)
    pipeline_section(rep, ctx)
    baseline_section(rep, ctx)
    buys_section(rep, ctx)
    per_rank_section(rep, ctx)
    transfer_section(rep, ctx)
    dfft_section(rep, ctx)
    scaling_section(rep, ctx)
    model_section(rep, ctx)
    load_section(rep, ctx)
    energy_section(rep, ctx)
    method_section(rep)
    rep.study = tables.study(study_rows(ctx))
    return rep
