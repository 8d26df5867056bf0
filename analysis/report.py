"""Command line: turn wulfbench result files into a report.

    /usr/bin/python3 -m analysis.report FILES... -o DIR [--baseline FILE [--baseline FILE]]

Writes DIR/index.html (one self-contained page built from analysis/page.html,
figures embedded), the PNG figures, summary.md (the same content in Markdown,
made from the same data) and one CSV per table. Exit status: 0 done, 1 a bad or
unreadable input (or the report could not be written), 2 a usage error, 3 written
with some input files left out.

Text in the report's blocks is plain text in which **x** marks bold; the HTML
and the Markdown renderers each turn that into their own markup.
"""

from __future__ import annotations

import argparse
import base64
import datetime as dt
import html
import os
import re
import string
import sys
import warnings
from dataclasses import dataclass, field
from pathlib import Path

import numpy as np

from . import SCHEMA, buys, compare, derive, energy, health, point_detail, model, netfaults, plots, readiness, scaling, stats, tables
from .derive import Comparison, PointStats
from .reader import (InputError, Run, UsageError, bad_file_lines, find_result_files,
                   guarded_main, name_runs, open_run, prog_name)
from .tables import Table

PROG = prog_name("report")  # the installed wrapper sets WB_PROG
PROG_USAGE = prog_name("python3 -m analysis.report")
FOLD_ROWS = 24  # longer tables are folded on the page (the CSV and summary.md have them whole)
TEMPLATE = Path(__file__).with_name("page.html")


class _Parser(argparse.ArgumentParser):
    def error(self, message: str) -> None:  # one line, no usage dump
        raise UsageError(message)


def build_parser() -> argparse.ArgumentParser:
    parser = _Parser(
        prog=PROG_USAGE,
        formatter_class=argparse.RawDescriptionHelpFormatter,
        description="Read wulfbench result files (HDF5, schema wulfbench/1) and write a report:\n"
                    "DIR/index.html (one self-contained page), the PNG figures, summary.md and a\n"
                    "CSV file for every table. Definitions: analysis/README.md.",
        epilog="A readable FILE.h5.partial (a run that has not finished) is reported and marked\n"
               "partial. A result file found in a folder that cannot be read is skipped and\n"
               "listed; a bad value inside a file (NaN, infinite or negative time or count, a\n"
               "wrong shape) skips that point, test or step with a warning naming the file and\n"
               "dataset.\n\n"
               "Exit status: 0 report written; 1 a file named on the command line could not be\n"
               "used (nothing written; --skip-bad reports the rest), or the report could not be\n"
               "written; 2 bad command line; 3 report written, but some files were left out\n"
               "(each named on stderr and under 'Read first').\n\n"
               "Example: python3 -m analysis.report results/pi.h5 results/ec2.h5 results/i5.h5 \\\n"
               "             --baseline results/i5.h5 -o report/")
    parser.add_argument("files", nargs="+", metavar="FILES",
                        help="result files (*.h5, *.h5.partial) or folders; a folder is searched "
                             "recursively for result files")
    parser.add_argument("-o", "--output", metavar="DIR", default="report",
                        help="folder to write the report into; created if missing, files of an "
                             "earlier report there are overwritten (default: report)")
    parser.add_argument("--baseline", metavar="FILE", action="append", default=[],
                        help="a separate reference run (e.g. one desktop) that the cross-run "
                             "speedup is computed against; it may be one of FILES or an extra "
                             "file. Give it twice for two baseline runs that bracket the cluster "
                             "run (before and after): their drift is shown and widens the CI. "
                             "Default: the one file whose root attribute baseline is 1, if "
                             "exactly one is. The paired baseline inside a file "
                             "(--paired-baseline) needs no option")
    parser.add_argument("--point", metavar="ID", action="append", default=[],
                        help="point for the per-rank view and the pipeline timeline, e.g. p004 "
                             "(every run that has it) or RUN:p004 (one run, by label or file "
                             "name); may be repeated. Default: the largest 'files' point of each "
                             "run, and for the timeline the largest point that has one")
    parser.add_argument("--max-nodes", metavar="N", type=int, default=64,
                        help="draw a validated forecast for 1..N nodes (default: 64); a forecast "
                             "is drawn only when runs at three or more node counts predict a "
                             "held-out one within 25 %%")
    parser.add_argument("--skip-bad", action="store_true",
                        help="report on the readable files even when files named on the command "
                             "line cannot be read (each bad file is still named on stderr, and "
                             "the exit status is 3). Files found in a folder are always skipped "
                             "this way")
    parser.add_argument("--title", metavar="TEXT", default="wulfbench report",
                        help="title of the page and of summary.md (default: wulfbench report)")
    parser.add_argument("--power-log", metavar="NODE=FILE.csv", action="append", default=[],
                        help="an external power meter's log for the node with hostname NODE "
                             "(repeatable), or all=FILE.csv for one meter on the whole cluster: "
                             "CSV with a time column (Unix seconds or ISO 8601 UTC) and watts "
                             "(or volts and amps), comma or semicolon separated; integrated over "
                             "every repetition's UTC start and end. See docs/energy.md")
    parser.add_argument("--price", metavar="KIND=USD_PER_HOUR", action="append", default=[],
                        help="what one node costs per hour (repeatable); KIND matches a node's "
                             "/hosts model (board or instance type), hostname or CPU model, "
                             "case-insensitively, and 'all' every node. Gives $ per 1000 requests "
                             "in energy.csv")
    parser.add_argument("--kwh-price", metavar="USD",
                        help="the price of a kWh; adds the measured energy to $ per 1000 requests")
    parser.add_argument("-q", "--quiet", action="store_true",
                        help="print nothing on success (by default the written files are listed)")
    return parser


@dataclass
class Section:
    anchor: str
    title: str
    nav: str = ""  # short name in the navigation bar
    blocks: list[tuple[str, object]] = field(default_factory=list)  # ("p"|"ul"|"table"|"figure", payload)

    def para(self, text: str) -> None:
        self.blocks.append(("p", text))

    def bullets(self, items: list[str]) -> None:
        if items:
            self.blocks.append(("ul", items))

    def table(self, t: Table) -> None:
        self.blocks.append(("table", t))

    def figure(self, f: plots.Figure | None) -> None:
        if f is not None:
            self.blocks.append(("figure", f))


@dataclass
class Report:
    title: str
    outdir: Path
    runs: list[Run]
    baselines: list[Run]
    warnings: list[str] = field(default_factory=list)  # "Read first": real warnings only
    notes: list[str] = field(default_factory=list)  # expected notices
    findings: dict[str, list[str]] = field(default_factory=dict)  # run name -> text
    study: Table | None = None
    sections: list[Section] = field(default_factory=list)
    energy: energy.Result = field(default_factory=energy.Result)
    lead: Section | None = None  # "What the cluster buys", above everything else

    def find(self, run: str, text: str) -> None:
        """Record a headline finding about a run."""
        self.findings.setdefault(run, []).append(text)

    def section(self, anchor: str, title: str, nav: str = "") -> Section:
        sec = Section(anchor, title, nav or title)
        self.sections.append(sec)
        return sec

    @property
    def tables(self) -> list[Table]:
        found = [self.study] if self.study is not None else []
        secs = ([self.lead] if self.lead else []) + self.sections
        return found + [b[1] for s in secs for b in s.blocks if b[0] == "table"]  # type: ignore[misc]

    @property
    def figures(self) -> list[plots.Figure]:
        return [b[1] for s in self.sections for b in s.blocks if b[0] == "figure"]  # type: ignore[misc]


def _b(text: object) -> str:
    """Bold in the report's text markup."""
    return f"**{text}**"


def _created(run: Run) -> str:
    return str(run.attrs.get("created_utc") or "")


def load_runs(args: argparse.Namespace) -> tuple[list[Run], list[Run], list[str], list[str]]:
    """Read every input. Returns (runs, baselines, notes, error lines)."""
    named: list[InputError] = []  # files named on the command line: fatal without --skip-bad
    found_bad: list[InputError] = []  # files found in a folder: always skipped and listed
    paths: list[tuple[Path, bool]] = []
    for item in args.files:
        try:
            paths.extend((p, Path(item).is_dir()) for p in find_result_files([item]))
        except InputError as err:
            named.append(err)
    runs: list[Run] = []
    for path, in_folder in paths:
        try:
            runs.append(open_run(path))
        except InputError as err:
            (found_bad if in_folder else named).append(err)
    notes: list[str] = []
    baselines: list[Run] = []
    for wanted_path in args.baseline:
        wanted = os.path.realpath(wanted_path)
        found = next((r for r in runs if os.path.realpath(r.path) == wanted), None)
        if found is None:
            try:
                if not Path(wanted_path).is_file():
                    raise InputError(wanted_path, "--baseline names no such file",
                                     "give the path of the reference run's result file")
                found = open_run(Path(wanted_path))
                runs.append(found)
            except InputError as err:
                named.append(err)
                continue
        if found not in baselines:
            baselines.append(found)
    name_runs(runs)
    if len(baselines) > 2:
        raise UsageError("--baseline may be given once, or twice for a before/after bracket")
    baselines.sort(key=_created)
    if baselines:
        if len(baselines) == 2:
            notes.append(f"Baselines: {_b(baselines[0].name)} before and {_b(baselines[1].name)} "
                         "after the cluster run, named with --baseline; their drift widens every "
                         "cross-run CI.")
        else:
            notes.append(f"Baseline: {_b(baselines[0].name)} ({baselines[0].path}), named with "
                         "--baseline.")
    elif not args.baseline:
        flagged = [r for r in runs if r.is_baseline]
        if len(flagged) == 1:
            baselines = flagged
            notes.append(f"Baseline: {_b(flagged[0].name)}, the one file with root attribute "
                         "baseline=1.")
        elif len(flagged) > 1:
            notes.append("No cross-run comparison: several files have baseline=1 ("
                         + ", ".join(r.name for r in flagged)
                         + "); name one with --baseline FILE, or two (before and after).")
        elif runs:
            notes.append("No cross-run comparison: no file has baseline=1; pass --baseline FILE "
                         "to compare against a separate reference run.")
    errors = bad_file_lines(named, found_bad, runs, args.skip_bad, PROG)
    args.left_out = [f"Left out: {e.subject}: {e.what}." for e in named + found_bad]
    args.fatal = bool(named) and not args.skip_bad
    args.partly = bool(named or found_bad)
    return runs, baselines, notes, errors


def _x_text(s: PointStats) -> str:
    pt = s.point
    if pt.scenario == "files":
        return f"{pt.nfiles} × {pt.seconds_per_file:g} s files"
    return f"{pt.seconds_per_file:g} s file ({tables.fmt_bytes(pt.input_bytes)})"


def choose_points(runs: list[Run], stats_by_run: dict[str, list[PointStats]],
                  requested: list[str]) -> tuple[dict[str, PointStats], list[str]]:
    """The per-rank point of each run, from --point or the default rule."""
    chosen: dict[str, PointStats] = {}
    notes: list[str] = []
    for_all = [r for r in requested if ":" not in r]
    for_run: dict[str, str] = {}
    for item in requested:
        if ":" in item:
            run_name, pid = item.rsplit(":", 1)
            for_run[run_name] = pid
    known = {r.name for r in runs} | {r.path.name for r in runs} | {r.label for r in runs}
    for name in for_run:
        if name not in known:
            notes.append(f"--point {name}:{for_run[name]}: no run is called {name}; runs are "
                         + ", ".join(r.name for r in runs) + ".")
    for run in runs:
        items = stats_by_run.get(run.name, [])
        if not items:
            continue
        want = for_run.get(run.name) or for_run.get(run.path.name) or for_run.get(run.label)
        candidates = ([want] if want else []) + for_all
        pick = None
        for pid in candidates:
            pick = next((s for s in items if s.point.id == pid), None)
            if pick is not None:
                break
        if candidates and pick is None:
            notes.append(f"{run.name} has no point {', '.join(candidates)}; its default point "
                         "is shown.")
        chosen[run.name] = pick or derive.default_point(run, items)
    return chosen, notes


@dataclass
class Context:
    """What the sections share."""

    args: argparse.Namespace
    runs: list[Run]
    baselines: list[Run]
    stats: dict[str, list[PointStats]]
    extra: dict[str, point_detail.RunNext]
    colour: dict[str, str]
    paired: list[Comparison] = field(default_factory=list)
    cross: list[Comparison] = field(default_factory=list)
    crossings: list[derive.Crossover] = field(default_factory=list)
    loads: list[tuple[Run, list, object]] = field(default_factory=list)
    forecast_text: str = ""
    energy: energy.Result = field(default_factory=energy.Result)

    def throttled(self, run: Run) -> list[str]:
        """Hosts that recorded throttling, in /hosts or a point's health record."""
        names = [str(h.get("hostname")) for h in run.hosts if _int(h.get("throttled")) == 1]
        for pn in self.extra[run.name].points.values():
            names += [str(h.get("hostname")) for h in pn.health if _int(h.get("throttled")) == 1]
        return sorted(set(names))


def _int(value: object, default: int = -1) -> int:
    try:
        return int(value)  # type: ignore[arg-type]
    except (TypeError, ValueError):
        return default


def _float(value: object) -> float:
    try:
        return float(value)  # type: ignore[arg-type]
    except (TypeError, ValueError):
        return float("nan")


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
            rep.warnings.append(f"The baseline {_b(base.name)} failed verification: no cross-run "
                                "speedup is computed against it.")
    for run in runs:
        _run_notices(rep, ctx, run)
    sec = rep.section("runs", "Runs")
    sec.para("Every run that went into this report: where and how it ran, and whether its "
             "results were verified.")
    sec.table(tables.provenance(runs, baselines[0] if baselines else None))
    sec.table(tables.hosts(runs))
    _fft_section(rep, ctx)
    _pipeline_section(rep, ctx)
    _baseline_section(rep, ctx)
    _buys_section(rep, ctx)
    _per_rank_section(rep, ctx)
    _transfer_section(rep, ctx)
    _dfft_section(rep, ctx)
    _scaling_section(rep, ctx)
    _model_section(rep, ctx)
    _load_section(rep, ctx)
    _energy_section(rep, ctx)
    _method_section(rep)
    rep.study = tables.study(_study_rows(ctx))
    return rep


def _run_notices(rep: Report, ctx: Context, run: Run) -> None:
    tag = f"{_b(run.name)} ({run.path.name})"
    if run.partial or run.status in ("interrupted", "timeout"):
        rep.warnings.append(
            f"{tag} is PARTIAL: the run had not finished (status '{run.status}'). It holds "
            f"{len(run.points)} FFT points, {len(run.transfer)} transfer tests and "
            f"{len(run.load_steps)} load steps; what is missing was not measured.")
    if run.invalid:
        rep.warnings.append(f"{tag} FAILED VERIFICATION (verified={run.verified}, status "
                            f"'{run.status}'): its numbers are listed as INVALID and left out "
                            "of figures, comparisons and the model.")
    elif run.status == "failed":
        rep.warnings.append(f"{tag} ended with status 'failed'; the points it flushed are shown.")
    items = ctx.stats[run.name]
    bad = [s.point.id for s in items if s.point.verified == 0]
    if bad and not run.invalid:
        rep.warnings.append(f"{tag}: point(s) {', '.join(bad)} failed verification "
                            "(verify/passed=0); shown as INVALID and left out of figures, "
                            "comparisons and the model.")
    unstable = [s.point.id for s in items if s.status.startswith("unstable")]
    if unstable:
        rep.warnings.append(f"{tag}: {len(unstable)} point(s) unstable (CV of t_total > 5 %): "
                            + ", ".join(unstable) + ".")
    auto = []
    for s in items:
        a = s.point.attrs
        reason = str(a.get("reps_stop_reason") or "")
        if _int(a.get("unstable"), 0) == 1 or reason not in ("", "fixed", "target_ci"):
            half = _float(a.get("ci_halfwidth_rel"))
            target = _float(a.get("target_ci"))
            what = f"{s.point.id} stopped by {reason or '?'}"
            if np.isfinite(half):
                what += f" at a CI half-width of {100 * half:.1f} %"
            if np.isfinite(target):
                what += f" (target {100 * target:.1f} %)"
            auto.append(what)
    if auto:
        rep.warnings.append(f"{tag}: --reps auto did not reach its CI target: "
                            + "; ".join(auto) + ".")
    for line in health.point_warnings(run.path) + readiness.run_warnings(run.path) + netfaults.warnings(run.path):
        rep.warnings.append(f"{tag}: {line}")
    hot = ctx.throttled(run)
    if hot:
        rep.warnings.append(f"{tag}: throttling recorded on {', '.join(hot)} (in /hosts or the "
                            "points' health record): its times may be slow and uneven.")
    for problem in run.problems + ctx.extra[run.name].problems:
        rep.warnings.append(f"{tag}: {problem}")
    missing = [g for g in ("fft", "transfer", "load") if g not in run.groups]
    if missing:
        sub = run.attrs.get("subcommand")
        rep.notes.append(f"{tag} has no " + ", ".join(f"/{g}" for g in missing)
                         + (f" group (subcommand '{sub}')" if sub else " group")
                         + "; those sections skip it.")


def _fft_section(rep: Report, ctx: Context) -> None:
    sec = rep.section("fft", "FFT requests (study rows 1–4, 6–9)", "FFT")
    all_stats = [s for r in ctx.runs for s in ctx.stats[r.name]]
    without = [r.name for r in ctx.runs if not r.points]
    if without:
        sec.para("No /fft points in: " + ", ".join(without) + ".")
    if not all_stats:
        sec.para("No run has FFT points; this section is empty.")
        return
    base = ctx.baselines[0] if ctx.baselines else None
    sec.figure(plots.fft_times(all_stats, "sizes", ctx.colour, rep.outdir, "1–4"))
    sec.figure(plots.fft_times(all_stats, "files", ctx.colour, rep.outdir, "6–8"))
    sec.figure(plots.fft_rate(all_stats, ctx.colour, rep.outdir))
    sec.figure(plots.fft_phases(all_stats, base, rep.outdir))
    for sc in ("sizes", "files"):
        if not any(s.point.scenario == sc and s.usable for s in all_stats):
            sec.para(f"No usable '{sc}' points: the "
                     f"{'file size' if sc == 'sizes' else 'files per request'} figures are left out.")
    sec.table(tables.phase_stack(all_stats, _overlaps(ctx)))
    sec.table(tables.fft_points(all_stats))
    for run in ctx.runs:
        if (plan := readiness.planning_line(run.path)):
            sec.para(f"{run.name}: {plan}.")
        usable = [s for s in ctx.stats[run.name] if s.usable]
        if not usable:
            continue
        best = max(usable, key=lambda s: s.kBps if np.isfinite(s.kBps) else -1)
        top = max(usable, key=lambda s: s.gflops if np.isfinite(s.gflops) else -1)
        rep.find(run.name, f"best processing rate {best.kBps:,.0f} kB/s at {_x_text(best)}; "
                           f"peak {top.gflops:.3g} GFLOPS ({top.gflops_per_rank:.3g} per compute "
                           f"rank, p={top.point.p}).")


def _overlap(run: Run, pid: str, pn: point_detail.PointNext | None, attrs: dict) -> float:
    value = _float(attrs.get("overlap"))
    if not np.isfinite(value) and pn is not None and pn.overlap is not None:
        value = stats.nanmedian(pn.overlap)
    return value


def _overlaps(ctx: Context) -> dict[tuple[str, str], float]:
    out = {}
    for run in ctx.runs:
        for pt in run.points:
            value = _overlap(run, pt.id, ctx.extra[run.name].points.get(pt.id), pt.attrs)
            if np.isfinite(value):
                out[(run.name, pt.id)] = value
    return out


def link_use_text(point, rate: tuple[float, str] | None) -> str:
    """The point's link use, from --link-rate as the run recorded it or from the line rate a
    transfer run in the same file measured between nodes."""
    use, what = model.link_use(point, rate)
    if np.isfinite(use):
        if what == "--link-rate":
            return f"link use: {100 * use:.0f} % of the full-duplex bound"
        return (f"link use: {100 * use:.0f} % of the full-duplex bound at the measured "
                f"{rate[0] / 1e6:.2f} MB/s ({what})")
    if _int(point.attrs.get("link_out_bytes"), 0) > 0:
        return ("link use unknown (no line rate: give --link-rate, or run transfer between nodes "
                "into the same file)")
    return ""


def _pipeline_section(rep: Report, ctx: Context) -> None:
    rows = []
    timelines = []
    for run in ctx.runs:
        ext = ctx.extra[run.name]
        rate = model.line_rate(run)
        for pt in run.points:
            a = pt.attrs
            pn = ext.points.get(pt.id)
            ov = _overlap(run, pt.id, pn, a)
            # older files name a schedule but hold nothing of the pipeline
            if not (np.isfinite(ov) or a.get("link_out_bytes") is not None
                    or (pn and pn.timeline is not None)):
                continue
            rows.append({"run": run.name, "point": pt.id, "schedule": a.get("schedule") or "?",
                         "chunk_frames": a.get("chunk_frames"), "overlap": ov,
                         "link_out_bytes": a.get("link_out_bytes"),
                         "link_in_bytes": a.get("link_in_bytes"),
                         "link_bound": _float(a.get("link_bound_s")),
                         "link_use": link_use_text(pt, rate) or "–"})
    if not rows:
        return
    sec = rep.section("pipeline", "Schedule and pipeline", "Pipeline")
    sec.para("How the head node handed out the work: the schedule, how far its phases "
             "overlapped, and how much of the head node's link the request used.")
    sec.table(tables.pipeline(rows))
    chosen, _notes = choose_points(ctx.runs, ctx.stats, ctx.args.point)
    for run in ctx.runs:
        ext = ctx.extra[run.name]
        have = [pt for pt in run.points if ext.points.get(pt.id) is not None
                and ext.points[pt.id].timeline is not None]
        if not have:
            continue
        want = chosen.get(run.name)
        pick = next((pt for pt in have if want is not None and pt.id == want.point.id
                     and ctx.args.point), None)
        pick = pick or max(have, key=lambda pt: (pt.input_bytes, pt.id))
        timelines.append(run.name)
        sec.figure(plots.timeline(run, pick.id, ext.points[pick.id].timeline,
                                  derive.median_total(pick), rep.outdir))
    if not timelines:
        sec.para("No point has a /timeline: no Gantt chart.")


def _causes(ctx: Context, c: Comparison) -> str:
    hot = ctx.throttled(c.run)
    causes = []
    if c.kind == "cross-run":
        drift = (f"the baselines drifted {100 * c.drift:+.0f} %" if np.isfinite(c.drift)
                 else "a single baseline run cannot show it")
        causes.append(f"drift between runs (this comparison crosses runs; {drift})")
    causes.append("cache effects: each rank's smaller share may fit a cache the whole request "
                  "does not")
    causes.append("thermal throttling: " + (f"recorded in /hosts on {', '.join(hot)}" if hot
                                            else "none recorded in /hosts"))
    return "; ".join(causes)


def _baseline_section(rep: Report, ctx: Context) -> None:
    sec = rep.section("baseline", "Speedup against one node and against the baseline (study row 5)",
                      "Speedup")
    for run in ctx.runs:
        if run.invalid:
            continue
        base = {pid: pn.baseline["t_total"] for pid, pn in ctx.extra[run.name].points.items()
                if pn.baseline is not None}
        ctx.paired += derive.compare_paired(run, ctx.stats[run.name], base)
    usable_bases = [b for b in ctx.baselines if not b.invalid]
    if len(usable_bases) == len(ctx.baselines) and usable_bases:
        name = " and ".join(b.name for b in usable_bases)
        for run in ctx.runs:
            if run in ctx.baselines or run.invalid:
                continue
            found, notes = derive.compare(ctx.stats[run.name],
                                          [ctx.stats[b.name] for b in usable_bases], name)
            rep.notes.extend(notes)
            if not found:
                sec.para(f"{run.name} has no point with the same scenario, mode, precision, "
                         "frame, file count and seconds per file as the baseline.")
            ctx.cross += found
        ctx.cross = compare.classify(ctx.cross, usable_bases, [ctx.stats[b.name] for b in usable_bases])
    ctx.crossings = derive.crossovers(ctx.paired + ctx.cross)
    if ctx.paired:
        sec.para(f"{_b('Paired')}: rank 0 ran every request alone in the same job, alternating "
                 "with the cluster's repetitions, so drift of the machine's speed hits both "
                 "alike. This is the speedup against one node of the cluster.")
        sec.figure(plots.speedup(ctx.paired, [c for c in ctx.crossings if c.kind == "paired"],
                                 ctx.colour, "Paired speedup against rank 0 alone (same job)",
                                 rep.outdir, "speedup_paired.png"))
        sec.table(tables.comparison(ctx.paired, "speedup_paired",
                                    "Paired speedup (same job, alternating repetitions)"))
    else:
        sec.para("No paired baseline in any file (run with --paired-baseline for the speedup "
                 "against one node measured in the same job).")
    if ctx.cross:
        bases = ctx.baselines
        text = (f"{_b('Cross-run')}: these comparisons cross runs. The baseline "
                f"{bases[0].name} ran as a separate process")
        if len(bases) == 2:
            drifts = [c.drift for c in ctx.cross if np.isfinite(c.drift)]
            text += (f", once before ({bases[0].name}) and once after ({bases[1].name}) the "
                     f"cluster run. The two differ by a median {100 * stats.nanmedian(drifts):+.1f} % "
                     f"(from {100 * min(drifts):+.1f} % to {100 * max(drifts):+.1f} %); every CI "
                     "below spans both baselines' intervals, so it includes that drift.")
        else:
            text += (", at another time, so a drift of the machine's speed between the runs is "
                     "not measured and not in the CI. Bracket the run with a baseline before and "
                     "after (--baseline BEFORE --baseline AFTER) to see it.")
        sec.para(text)
        other = [c for c in ctx.cross if isinstance(c, compare.MachineComparison)]
        if other:
            sec.para(f"{_b('Cross-machine')}: {', '.join(sorted({c.run.name for c in other}))} "
                     f"ran on other hardware than the baseline ({other[0].why}; the rule is in "
                     "docs/comparison.md). The ratio is the relative throughput, baseline median / "
                     "cluster median, with a 95 % percentile-bootstrap CI over both runs' "
                     "repetitions, also per node and per core. It is not a parallel speedup: no "
                     "efficiency or Karp–Flatt fraction is given, and a ratio above p is no sign "
                     "of an error.")
        title = f"Against {ctx.cross[0].base_name} (crosses runs{', other hardware' if other else ''})"
        sec.figure(plots.speedup(ctx.cross, [c for c in ctx.crossings if c.kind != "paired"],
                                 ctx.colour, title, rep.outdir, "speedup.png"))
        sec.table(tables.comparison(ctx.cross, "comparison", title))
    if not ctx.paired and not ctx.cross:
        if not ctx.baselines:
            sec.para("No separate baseline run: pass --baseline FILE, or include exactly one "
                     "file with root attribute baseline=1.")
        return
    if ctx.crossings:
        sec.bullets([f"{_b(c.run.name)}, {c.kind}, {c.scenario} ({c.config}): "
                     f"{tables.crossover_text(c)}." for c in ctx.crossings])
        sec.table(tables.crossovers(ctx.crossings))
    below: list[str] = []
    for c in ctx.paired + ctx.cross:
        if c.implausible:
            # a run's paired figure is the one to use: its same-machine cross-run one waits below
            to = below if c.kind == "cross-run" and any(p.run is c.run for p in ctx.paired) else rep.warnings
            to.append(f"{_b(c.run.name)} {c.cluster.point.id} ({c.kind}): IMPLAUSIBLE speedup "
                      f"{c.speedup:.3g} on p={c.p} ({'; '.join(c.implausible)}). Not a finding. "
                      f"Likely causes: {_causes(ctx, c)}.")
    if below:
        sec.para("Cross-run speedups of runs that have a paired one (use the paired one):")
        sec.bullets(below)
    for run in ctx.runs:
        mine = [c for c in ctx.paired if c.run is run] or [c for c in ctx.cross if c.run is run]
        good = [c for c in mine if not c.implausible]
        if not good:
            continue
        top = max(good, key=lambda c: (c.cluster.point.scenario == "files", c.cluster.x))
        if isinstance(top, compare.MachineComparison):
            rep.find(run.name, f"cross-machine throughput ratio {top.speedup:.3g}× [{top.ci_lo:.3g}, "
                               f"{top.ci_hi:.3g}] against {top.base_name} (other hardware, 95 % CI; "
                               f"{top.per_node[0]:.3g} per node) at {_x_text(top.cluster)}.")
            continue
        rep.find(run.name, f"{top.kind} speedup {top.speedup:.3g}× [{top.ci_lo:.3g}, "
                           f"{top.ci_hi:.3g}] (95 % CI, p={top.p}, efficiency "
                           f"{100 * top.efficiency:.0f} %) at {_x_text(top.cluster)}"
                           + (" — crosses runs" if top.kind == "cross-run" else "") + ".")
    for c in ctx.crossings:
        rep.find(c.run.name, f"{c.kind}, {c.scenario}: {tables.crossover_text(c)}.")


def _buys_section(rep: Report, ctx: Context) -> None:
    """The first section: figures from analysis.buys, only formatted here."""
    rows = buys.rows(ctx.runs, ctx.baselines, ctx.stats, ctx.paired, ctx.cross, ctx.extra,
                     ctx.args.max_nodes)
    by_name = {r.name: r for r in ctx.runs + ctx.baselines}
    for row in rows:
        # Energy and cost beside each comparison (docs/energy.md); empty where nothing was measured.
        base = None if row.kind == "paired" else by_name.get(row.against)
        row.extra.update(energy.buys_columns(ctx.energy, by_name[row.run], base, row.point))
    rep.lead = sec = Section("buys", "What the cluster buys", "What it buys")
    sec.para(buys.LEAD if rows else buys.NONE)
    if rows:
        sec.table(buys.table(rows))
        sec.bullets(buys.statements(rows))


def _per_rank_section(rep: Report, ctx: Context) -> None:
    sec = rep.section("ranks", "Per rank", "Ranks")
    chosen, notes = choose_points(ctx.runs, ctx.stats, ctx.args.point)
    rep.notes.extend(notes)
    shown: list[tuple[Run, str, list[derive.RankStats]]] = []
    everywhere: list[tuple[Run, str, list[derive.RankStats]]] = []
    lagging: list[tuple[Run, str, derive.RankStats]] = []
    for run in ctx.runs:
        for s in ctx.stats.get(run.name, []):
            if s.usable and s.point.nranks > 1:
                ranks = derive.rank_stats(run, s.point)
                everywhere.append((run, s.point.id, ranks))
                lagging += [(run, s.point.id, r) for r in ranks if r.straggler]
    for run in ctx.runs:
        pick = chosen.get(run.name)
        if pick is None:
            continue
        if pick.point.nranks < 2:
            sec.para(f"{run.name} ran on one rank: no per-rank view.")
            continue
        ranks = derive.rank_stats(run, pick.point)
        shown.append((run, pick.point.id, ranks))
        desc = f"{pick.point.id}, {_x_text(pick)}"
        sec.figure(plots.per_rank(run, desc, ranks, pick.summaries["total"].median, rep.outdir))
        names = [f"{r.host} (rank {r.rank}): {r.reason}" for r in ranks if r.straggler]
        status = "" if pick.usable else f" — this point is {pick.status}"
        if names:
            sec.para(f"{_b(run.name)} at {desc}{status}: stragglers " + "; ".join(names) + ".")
            rep.find(run.name, f"straggler(s) at {pick.point.id}: " + "; ".join(names) + ".")
        else:
            sec.para(f"{_b(run.name)} at {desc}{status}: no straggler.")
    if not shown:
        sec.para("No multi-rank run: nothing to show per rank.")
        return
    table = tables.per_rank(everywhere)
    chosen_keys = {(run.name, pid) for run, pid, _ in shown}
    table.html_rows = [r for r in table.rows if (r["run"], r["point"]) in chosen_keys]
    table.title = "Per-rank medians at the points shown (the CSV has every point)"
    sec.table(table)
    st = tables.stragglers(lagging)
    if st.rows:
        counts: dict[tuple[str, str], int] = {}
        for run, _pid, r in lagging:
            key = (run.name, f"{r.host} (rank {r.rank})")
            counts[key] = counts.get(key, 0) + 1
        total = {run.name: sum(1 for rr, _p, _r in everywhere if rr is run) for run in ctx.runs}
        sec.bullets([f"{run}: {who} straggles at {n} of {total[run]} points"
                     for (run, who), n in sorted(counts.items())])
        st.html_rows = st.rows[:20] if len(st.rows) > 20 else None
    else:
        sec.para("No straggler at any point.")
    sec.table(st)


def _transfer_section(rep: Report, ctx: Context) -> None:
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
              if t.attrs.get("verified") is not None and _int(t.attrs["verified"]) == 0]
    if failed:
        rep.warnings.append("Transfer tests whose payload check failed (verified=0), shown but "
                            "not to be trusted: " + ", ".join(failed) + ".")
    cut = [f"{r.name}/{t.name}" for r in usable for t in r.transfer.values()
           if _int(t.attrs.get("timed_out"), 0) == 1]
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
            rep.warnings.append(f"{_b(r.name)}: {len(flagged)} of {total} transfer points "
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
            sec.para(f"{_b(run.name)}: every link is within 80 % of the median "
                     + ("in both maps." if len({w for w, _m in maps}) > 1 else "."))
        if ps is not None and ps.node_ratio is not None and np.isfinite(ps.node_ratio).any():
            sec.para(f"{_b(run.name)}: concurrent over sequential bandwidth per node: "
                     + ", ".join(f"node {k} {100 * v:.0f} %" for k, v in enumerate(ps.node_ratio)
                                 if np.isfinite(v)) + ".")
        if pa is not None:
            t = tables.pairs_matrix(run)
            t.html_rows = t.rows[:24] if len(t.rows) > 24 else None
            if t.html_rows is not None:
                t.title += " (first 24 pairs; the CSV has all)"
            sec.table(t)


def _dfft_section(rep: Report, ctx: Context) -> None:
    items = []
    for run in ctx.runs:
        for d in ctx.extra[run.name].dfft:
            ds = derive.dfft_stats(run, d, model.node_count(run))
            if ds.verified == 0 or run.invalid:
                rep.warnings.append(f"{_b(run.name)} dfft {d.id} FAILED VERIFICATION: left out "
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


def _scaling_section(rep: Report, ctx: Context) -> None:
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


def _cpu_of(run: Run) -> str:
    """The CPU model a forecast groups runs by."""
    return str(run.hosts[0].get("cpu_model")) if run.hosts else "?"


def _transfer_runs(ctx: Context, cpu: str, items: list[tuple[Run, list]]) -> list[Run]:
    """Runs with a transfer test on the hosts of a forecast group (a study's transfer file beside
    its fft files), whose pingpong between nodes gives the group's alpha and beta."""
    names = {str(h.get("hostname")) for run, _pts in items for h in run.hosts}
    out = []
    for run in ctx.runs:
        hosts = {str(h.get("hostname")) for h in run.hosts}
        if run not in ctx.baselines and run.transfer and hosts and hosts <= names and _cpu_of(run) == cpu:
            out.append(run)
    return out


def _model_section(rep: Report, ctx: Context) -> None:
    sec = rep.section("model", "Model and forecast", "Forecast")
    sec.para("Hockney model t(m) = α + m/β fitted to pingpong (relative-error least squares); "
             "per-rank compute time fitted as c0 + c1·flops; request time on p ranks modelled as "
             "t0 + (p−1)·α + M_in·(p−1)/(p·β) + c0 + c1·F/p + (p−1)·α + M_out·(p−1)/(p·β), where "
             "M_in, M_out are the request's input and output bytes, F its flops and t0 the "
             "median residual on the measured points. That sum is the phased schedule's; for the "
             "pipelined and dynamic schedules, which overlap the three, it is t0 plus the largest "
             "of distribution, compute and gather.")
    fitted: list[model.RunModel] = []
    groups: dict[str, list[tuple[Run, list]]] = {}
    for run in ctx.runs:
        usable = [s for s in ctx.stats.get(run.name, []) if s.usable]
        if not usable:
            continue
        m = model.fit_run(run, [s.point for s in usable])
        fitted.append(m)
        for note in m.notes:
            sec.para(f"{run.name}: {note}.")
        sec.figure(plots.model_fit(run, m, derive.compute_samples([s.point for s in usable]),
                                   rep.outdir))
        if run not in ctx.baselines:
            groups.setdefault(_cpu_of(run), []).append((run, [s.point for s in usable]))
    if not fitted:
        sec.para("No usable FFT points: nothing to fit.")
        return
    sec.table(tables.models(fitted))
    nodes = np.arange(1, max(1, ctx.args.max_nodes) + 1)
    texts = []
    for cpu, items in groups.items():
        val = model.validate(items, _transfer_runs(ctx, cpu, items))
        runs_text = ", ".join(f"{r.name} ({model.node_count(r)} nodes)" for r, _p in items)
        if not val.ok:
            texts.append(f"Not enough data to forecast {cpu} ({runs_text}): {val.reason}.")
            continue
        big = max((pt for _r, pts in items for pt in pts),
                  key=lambda pt: (pt.scenario == "files", pt.input_bytes))
        one = [pt for r, pts in items if model.node_count(r) == 1 for pt in pts
               if pt.key == big.key]
        rpn = max(1, items[-1][0].nranks // max(1, model.node_count(items[-1][0])))
        f = model.forecast(val.model, big, f"{big.id} ({tables.workload(big.nfiles, big.seconds_per_file, big.input_bytes)})",
                           derive.median_total(one[0]) if one else None, nodes, rpn)
        if f is None:
            continue
        f.measured = sorted((model.node_count(r), derive.median_total(pt)) for r, pts in items
                            for pt in pts if pt.key == big.key)
        val.model.forecasts.append(f)
        sec.figure(plots.forecast(val, rep.outdir))
        sec.table(tables.validation(val))
        sec.table(tables.forecasts([val.model]))
        comm = f"; alpha and beta from {val.model.hockney.source}" if val.model.hockney else ""
        texts.append(f"Forecast for {cpu}, a model and not a measurement: {val.error_text}{comm}.")
    for text in texts:
        sec.para(text)
    if not groups:
        sec.para("Not enough data to forecast: no cluster run with FFT points.")
    ctx.forecast_text = " ".join(texts)


def _load_section(rep: Report, ctx: Context) -> None:
    sec = rep.section("load", "Service under load (study rows 10–11)", "Load")
    without = [r.name for r in ctx.runs if "load" not in r.groups]
    if without:
        sec.para("No /load group in: " + ", ".join(without) + " (skipped).")
    for run in ctx.runs:
        if not run.load_steps:
            continue
        if run.invalid:
            sec.para(f"{run.name} failed verification; its load steps are left out.")
            continue
        steps, sat = derive.load_analysis(run)
        ctx.loads.append((run, steps, sat))
    if not ctx.loads:
        sec.para("No run has load steps.")
        return
    sec.figure(plots.load(ctx.loads, ctx.colour, rep.outdir))
    sec.table(tables.load_steps([(r, s) for r, s, _ in ctx.loads]))
    sats = [(r, s) for r, _st, s in ctx.loads if s is not None]
    if sats:
        sec.table(tables.saturation(sats))
        for run, st, s in (x for x in ctx.loads if x[2] is not None):
            rep.find(run.name, _saturation_text(s) + netfaults.load_cause(run.path, st) + f" [{s.source}].")


def _saturation_text(s: derive.Saturation) -> str:
    if np.isfinite(s.saturation_load):
        text = (f"saturation point {tables.fmt_load(s.saturation_load, s.load_unit)} "
                f"({s.saturation_rps:.4g} req/s served, p95 {tables.fmt_time(s.saturation_p95_s)})")
    else:
        text = "unhealthy from the lowest load measured"
    if np.isfinite(s.first_fail_load):
        text += f"; fails at {tables.fmt_load(s.first_fail_load, s.load_unit)} ({s.fail_reason})"
    else:
        text += "; no measured load failed"
    return text


def _energy_section(rep: Report, ctx: Context) -> None:
    res = ctx.energy
    sec = rep.section("energy", "Energy and cost", "Energy")
    table = energy.table(res.rows)
    if not res.any_measured and not res.options.prices and res.options.kwh_price is None:
        sec.para("No energy measured: no file holds power readings (wulfbench --power) and no "
                 "--power-log was given; energy.csv says unmeasured for every point. Nothing "
                 "is estimated (docs/energy.md).")
        table.html_rows = []
        table.title += " (every point unmeasured: the CSV lists them)"
        sec.table(table)
        return
    sec.para("Energy per request from each node's own source (rapl, hwmon, pi5) or a meter log "
             "(meter), summed over the nodes; a point with any node unmeasured is unmeasured, "
             "never estimated. Above idle subtracts the idle power measured before the first "
             "point. $ per 1000 requests = node-hours at --price over the time per request, plus "
             "the energy at --kwh-price.")
    sec.bullets([f"{_b(name)}: {text}" for name, text in res.sources.items()])
    chosen = {(r.run, r.point) for r in res.rows if r.measured or np.isfinite(r.usd_per_1000_requests)}
    table.html_rows = [r for r in table.rows if (r["run"], r["point"]) in chosen]
    if len(table.html_rows) < len(table.rows):
        table.title += " (measured or priced points; the CSV has every point)"
    sec.table(table)
    base = ctx.baselines[0] if ctx.baselines else None
    versus = []
    for run in ctx.runs:
        if run in ctx.baselines:
            continue
        cols = energy.buys_columns(res, run, base)
        if any(" · " in v for v in cols.values()):
            at = energy.default_row(res, run)
            versus.append(f"{_b(run.name)} against {base.name if base else 'rank 0 alone'} at "
                          f"{at.point if at else '?'}: "
                          + "; ".join(f"{k} {v}" for k, v in cols.items()))
    sec.bullets(versus + res.notes)


def _method_section(rep: Report) -> None:
    sec = rep.section("method", "How the numbers are made", "Method")
    sec.bullets([
        "Every time is the median over the recorded repetitions (warm-up repetitions are never "
        "recorded). Per-rank times are first reduced to the slowest rank of each repetition: "
        "distribution and gather over all ranks, compute and FFT over the ranks that compute.",
        "95 % confidence interval of the median: distribution-free, from order statistics. "
        "With n repetitions the count below the true median is Binomial(n, ½); the interval "
        "[x₍ⱼ₎, x₍ₙ₊₁₋ⱼ₎] with the largest j whose coverage 1 − 2·P(B ≤ j−1) is at least 95 %. "
        "For n < 6 no pair reaches 95 %; the report then gives [min, max] and states its "
        "coverage 1 − 2¹⁻ⁿ.",
        "CV = sample standard deviation / mean of t_total; a point with CV > 5 % is flagged "
        "unstable (it is still used). With --reps auto a point that stopped before its CI "
        "target is flagged too.",
        "Overhead = t_total − the slowest rank's distribute − compute − gather, per repetition; "
        "each phase column is then a median over repetitions, so the columns are medians of "
        "different repetitions and add up only nearly to the median t_total.",
        "Processing rate = input_bytes / 1000 / median t_total (kB/s; kB = 1000 bytes "
        "everywhere in this report). GFLOPS = Σ flops / median of the slowest rank's t_fft / "
        "10⁹.",
        "Paired speedup: the median over repetitions of baseline t_total[r] / cluster "
        "t_total[r], both measured in the same job, alternating; 95 % CI of that median. "
        "Cross-run speedup: baseline median / cluster median, for points that match on "
        "scenario, mode, precision, frame, file count and seconds per file; its CI combines "
        "both 95 % intervals (and both baselines' when two bracket the run). E = S/p and "
        "Karp–Flatt e = (1/S − 1/p)/(1 − 1/p) with p the ranks that compute. E > 100 % or "
        "e < 0 is flagged implausible, never a finding.",
        "Crossover: the smallest measured size or file count from which the cluster wins "
        "(S > 1) at every larger point; its CI is the same rule on the CI ends.",
        "Forecast: the model is fitted on every node count but the largest and must predict "
        "the largest within 25 % at every point; only then is a forecast drawn, with that "
        "error beside it. It is never a finding.",
        "Straggler: a computing rank whose median t_compute, or median t_distribute + "
        "t_compute + t_gather, is more than 20 % above the median of that quantity over the "
        "computing ranks (needs two or more computing ranks).",
        "Invalid data (root verified=0 or status 'invalid', or a point's verify/passed=0) "
        "is listed as INVALID and never enters figures, comparisons, fits or findings.",
        "Load: warm-up requests (warmup=1) are excluded; latency is t_done − t_submit of finished "
        "requests; the saturation point is taken from the /load attributes when present, "
        "otherwise recomputed as the highest offered load before the first unhealthy step.",
    ])


def _sweep_text(ctx: Context, scenario: str, describe) -> str:
    parts = []
    for run in ctx.runs:
        if run in ctx.baselines or run.invalid:
            continue
        pts = sorted((s for s in ctx.stats[run.name] if s.usable and s.point.scenario == scenario),
                     key=lambda s: s.x)
        if pts:
            parts.append(f"{run.name}: {describe(pts)}")
    return "; ".join(parts) or "not measured"


def _at(s: PointStats) -> str:
    if s.point.scenario == "files":
        return f"{s.point.nfiles} file" + ("" if s.point.nfiles == 1 else "s")
    return tables.fmt_bytes(s.point.input_bytes)


def _range(pts: list[PointStats], series: str) -> str:
    a, b = pts[0], pts[-1]
    text = f"{tables.fmt_time(a.summaries[series].median)} at {_at(a)}"
    if len(pts) > 1:
        text += f" to {tables.fmt_time(b.summaries[series].median)} at {_at(b)}"
    return text


def _split(pts: list[PointStats]) -> str:
    s = pts[-1]
    med = {k: s.summaries[k].median for k in ("distribute", "gather", "overhead", "total")}
    return (f"at {_at(s)}: distribute {tables.fmt_time(med['distribute'])} + gather "
            f"{tables.fmt_time(med['gather'])}, overhead {tables.fmt_time(med['overhead'])}, "
            f"of {tables.fmt_time(med['total'])} in total")


def _rate(pts: list[PointStats]) -> str:
    best = max(pts, key=lambda s: s.kBps if np.isfinite(s.kBps) else -1)
    return f"{pts[0].kBps:,.0f} to {pts[-1].kBps:,.0f} kB/s (best {best.kBps:,.0f} at {_at(best)})"


def _speedup_text(ctx: Context) -> str:
    parts = []
    for run in ctx.runs:
        for kind, pool in (("paired", ctx.paired), ("cross-run", ctx.cross), ("cross-machine", ctx.cross)):
            mine = [c for c in pool if c.run is run and c.kind == kind]
            if not mine:
                continue
            top = max(mine, key=lambda c: (c.cluster.point.scenario == "files", c.cluster.x))
            text = (f"{run.name} ({kind}): S {top.speedup:.3g} [{top.ci_lo:.3g}, {top.ci_hi:.3g}] "
                    f"at {_at(top.cluster)}")
            if top.implausible:
                text += " IMPLAUSIBLE, see Read first"
            cross = [c for c in ctx.crossings if c.run is run and c.kind == kind]
            if cross:
                text += "; " + "; ".join(f"{c.scenario}: {tables.crossover_short(c)}"
                                         for c in cross)
            parts.append(text)
    return "; ".join(parts) or "no baseline measured (use --paired-baseline, or give --baseline)"


def _load_text(ctx: Context) -> str:
    parts = []
    for run, steps, _sat in ctx.loads:
        if steps:
            a, b = steps[0], steps[-1]
            parts.append(f"{run.name}: p50 {tables.fmt_time(a.p50)} at "
                         f"{tables.fmt_load(a.load, a.load_unit)} to {tables.fmt_time(b.p50)} at "
                         f"{tables.fmt_load(b.load, b.load_unit)}")
    return "; ".join(parts) or "not measured"


def _study_rows(ctx: Context) -> list[tuple[str, str, str]]:
    sats = [f"{r.name}: {_saturation_text(s)}" for r, _st, s in ctx.loads if s is not None]
    return [
        ("1", "total request time, one file of several sizes",
         _sweep_text(ctx, "sizes", lambda p: _range(p, "total"))),
        ("2", "transfer time and overhead, one file", _sweep_text(ctx, "sizes", _split)),
        ("3", "processing rate (kB/s), one file", _sweep_text(ctx, "sizes", _rate)),
        ("4", "FFT compute time, one file", _sweep_text(ctx, "sizes", lambda p: _range(p, "fft"))),
        ("5", "the same against one machine", _speedup_text(ctx)),
        ("6", "total request time, several 5 s files",
         _sweep_text(ctx, "files", lambda p: _range(p, "total"))),
        ("7", "time to distribute the data, several files",
         _sweep_text(ctx, "files", lambda p: _range(p, "distribute"))),
        ("8", "FFT compute time, several files",
         _sweep_text(ctx, "files", lambda p: _range(p, "fft"))),
        ("9", "processing rate (kB/s), several files", _sweep_text(ctx, "files", _rate)),
        ("10", "service time with several clients", _load_text(ctx)),
        ("11", "highest load before the cluster collapses", "; ".join(sats) or "not measured"),
    ]


def _inline(text: str) -> str:
    """Report text markup to HTML: escape, then **x** to <b>x</b>."""
    return re.sub(r"\*\*(.+?)\*\*", r"<b>\1</b>", html.escape(str(text)))


def _cell_class(text: str, kind: str) -> str:
    classes = []
    if kind in tables.NUMERIC:
        classes.append("num")
    if len(text) < 80 and any(w in text for w in ("INVALID", "STRAGGLER", "FAILED", "PARTIAL",
                                                  "IMPLAUSIBLE")):
        classes.append("bad")
    elif text.startswith("unstable") or text.startswith("no ("):
        classes.append("warncell")
    return f' class="{" ".join(classes)}"' if classes else ""


def _html_cell(value: object, kind: str) -> str:
    main, detail = tables.render_parts(value, kind)
    cls = _cell_class(main + detail, kind)
    if detail:
        return (f'<td{cls} title="{html.escape(detail)}">{html.escape(main)}'
                f'<span class="ci">{html.escape(detail)}</span></td>')
    return f"<td{cls}>{html.escape(main)}</td>"


def html_table(t: Table) -> str:
    out = [f"<h3>{html.escape(t.title)} <span class='meta'>(<a href='{html.escape(t.name)}.csv'>"
           f"{html.escape(t.name)}.csv</a>, {len(t.rows)} rows)</span></h3>"]
    if t.note:
        out.append(f"<p class='meta'>{_inline(t.note)}</p>")
    rows = t.shown_rows
    if not rows:
        out.append("<p class='meta'>(no rows)</p>")
        return "\n".join(out)
    cols = t.shown_columns
    folded = len(rows) > FOLD_ROWS
    if folded:  # long tables stay one click away, so the page stays short
        out.append(f"<details><summary>show the {len(rows)} rows</summary>")
    out.append("<div class='tablewrap'><table>")
    if t.transpose:
        out.append("<tbody>")
        for c in cols:
            out.append(f"<tr><th>{html.escape(c.header)}</th>"
                       + "".join(_html_cell(row.get(c.key), c.kind) for row in rows) + "</tr>")
    else:
        out.append("<thead><tr>" + "".join(f"<th>{html.escape(c.header)}</th>" for c in cols)
                   + "</tr></thead><tbody>")
        for row in rows:
            out.append("<tr>" + "".join(_html_cell(row.get(c.key), c.kind) for c in cols) + "</tr>")
    out.append("</tbody></table></div>")
    if folded:
        out.append("</details>")
    return "\n".join(out)


def html_figure(f: plots.Figure, outdir: Path) -> str:
    data = base64.b64encode((outdir / f.file).read_bytes()).decode("ascii")
    marker = "this.setAttribute('data-missing','1');document.body.setAttribute('data-images-missing','1')"
    return (f"<figure><img src=\"data:image/png;base64,{data}\" alt=\"{html.escape(f.title)}\" "
            f"data-file=\"{html.escape(f.file)}\" onerror=\"{marker}\">"
            f"<figcaption><b>{html.escape(f.title)}</b> ({html.escape(f.file)}). "
            f"{_inline(f.caption)}</figcaption></figure>")


def _html_list(cls: str, title: str, items: list[str], anchor: str = "") -> str:
    if not items:
        return ""
    ident = f" id='{anchor}'" if anchor else ""
    return (f"<div class='{cls}'{ident}><b>{html.escape(title)}</b><ul>"
            + "".join(f"<li>{_inline(i)}</li>" for i in items) + "</ul></div>")


def _generated(rep: Report) -> str:
    now = dt.datetime.now(dt.timezone.utc).strftime("%Y-%m-%d %H:%M UTC")
    return (f"Generated {now} from {len(rep.runs)} result file(s) (schema {SCHEMA}). Tables "
            "are also in CSV beside this page; summary.md has the same content in Markdown. "
            "kB = 1000 bytes throughout.")


def _nav(rep: Report) -> list[tuple[str, str]]:
    items = [("buys", rep.lead.nav)] if rep.lead else []
    items += [("readfirst", "Read first")] if rep.warnings else []
    items.append(("summary", "Summary"))
    return items + [(s.anchor, s.nav) for s in rep.sections]


def html_section(sec: Section, outdir: Path) -> list[str]:
    body = [f"<h2 id='{sec.anchor}'>{html.escape(sec.title)}</h2>"]
    for kind, payload in sec.blocks:
        if kind == "p":
            body.append(f"<p>{_inline(payload)}</p>")
        elif kind == "ul":
            body.append("<ul>" + "".join(f"<li>{_inline(i)}</li>" for i in payload) + "</ul>")  # type: ignore[union-attr]
        elif kind == "table":
            body.append(html_table(payload))  # type: ignore[arg-type]
        elif kind == "figure":
            body.append(html_figure(payload, outdir))  # type: ignore[arg-type]
    return body


def render_html(rep: Report) -> str:
    body = [line for sec in rep.sections for line in html_section(sec, rep.outdir)]
    lead = "\n".join(html_section(rep.lead, rep.outdir)) if rep.lead else ""
    findings = ""
    if rep.findings:
        findings = ("<div class='findings'><b>Findings</b><ul>"
                    + "".join(f"<li><b>{html.escape(run)}</b><ul>"
                              + "".join(f"<li>{_inline(f)}</li>" for f in items) + "</ul></li>"
                              for run, items in rep.findings.items()) + "</ul></div>")
    summary = "<h2 id='summary'>Summary</h2>" + (html_table(rep.study) if rep.study else "")
    page = string.Template(TEMPLATE.read_text(encoding="utf-8"))
    return page.substitute(
        title=html.escape(rep.title), generated=html.escape(_generated(rep)),
        nav="".join(f"<a href='#{a}'>{html.escape(t)}</a>" for a, t in _nav(rep)),
        warnings=lead + _html_list("warn", "Read first", rep.warnings, "readfirst"),
        summary=summary, findings=findings, notes=_html_list("notes", "Notes", rep.notes),
        body="\n".join(body))


def md_table(t: Table) -> str:
    rows = t.shown_rows
    lines = [f"### {t.title}", "", f"CSV: [{t.name}.csv]({t.name}.csv), {len(t.rows)} rows.", ""]
    if t.note:
        lines += [f"_{t.note}_", ""]
    if not rows:
        return "\n".join(lines + ["(no rows)", ""])
    esc = lambda s: str(s).replace("|", "\\|").replace("\n", " ")  # noqa: E731
    cols = t.shown_columns
    if t.transpose:
        lines.append("| | " + " | ".join(esc(r.get(cols[0].key, "")) for r in rows) + " |")
        lines.append("|---|" + "---|" * len(rows))
        for c in cols[1:]:
            lines.append(f"| {esc(c.header)} | "
                         + " | ".join(esc(tables.render(r.get(c.key), c.kind)) for r in rows) + " |")
        return "\n".join(lines + [""])
    lines.append("| " + " | ".join(esc(c.header) for c in cols) + " |")
    lines.append("|" + "".join("---:|" if c.kind in tables.NUMERIC else "---|" for c in cols))
    for row in rows:
        lines.append("| " + " | ".join(esc(tables.render(row.get(c.key), c.kind))
                                       for c in cols) + " |")
    return "\n".join(lines + [""])


def md_section(sec: Section) -> list[str]:
    out = [f"## {sec.title}", ""]
    for kind, payload in sec.blocks:
        if kind == "p":
            out += [str(payload), ""]
        elif kind == "ul":
            out += [f"- {i}" for i in payload] + [""]  # type: ignore[union-attr]
        elif kind == "table":
            out.append(md_table(payload))  # type: ignore[arg-type]
        elif kind == "figure":
            f: plots.Figure = payload  # type: ignore[assignment]
            out += [f"![{f.title}]({f.file})", "", f"_{f.caption}_" if f.caption else "", ""]
    return out


def render_md(rep: Report) -> str:
    out = [f"# {rep.title}", "", _generated(rep) + " The page with the figures is index.html.", ""]
    out += md_section(rep.lead) if rep.lead else []
    if rep.warnings:
        out += ["## Read first", ""] + [f"- {w}" for w in rep.warnings] + [""]
    out += ["## Summary", ""]
    if rep.study is not None:
        out.append(md_table(rep.study))
    if rep.findings:
        out += ["## Findings", ""]
        for run, items in rep.findings.items():
            out += [f"- **{run}**"] + [f"  - {f}" for f in items]
        out.append("")
    if rep.notes:
        out += ["## Notes", ""] + [f"- {n}" for n in rep.notes] + [""]
    for sec in rep.sections:
        out += md_section(sec)
    return "\n".join(out)


def write_report(rep: Report) -> list[Path]:
    written = [rep.outdir / f.file for f in rep.figures]
    seen: set[str] = set()
    for t in rep.tables:
        name = t.name
        k = 2
        while name in seen:  # two tables never share a CSV
            name = f"{t.name}_{k}"
            k += 1
        seen.add(name)
        t.name = name
        tables.write_csv(t, rep.outdir / f"{name}.csv")
        written.append(rep.outdir / f"{name}.csv")
    (rep.outdir / "index.html").write_text(render_html(rep), encoding="utf-8")
    (rep.outdir / "summary.md").write_text(render_md(rep), encoding="utf-8")
    return [rep.outdir / "index.html", rep.outdir / "summary.md"] + written


def _prepare_outdir(path: Path) -> None:
    if path.exists() and not path.is_dir():
        raise UsageError(f"-o {path}: exists and is not a folder; name a folder")
    try:
        path.mkdir(parents=True, exist_ok=True)
    except OSError as exc:
        raise InputError(str(path), f"cannot create the output folder ({exc.strerror})",
                         "choose another -o or fix its permissions") from None
    if not os.access(path, os.W_OK):
        raise InputError(str(path), "output folder is not writable",
                         "choose another -o or fix its permissions")


def run(argv: list[str]) -> int:
    args = build_parser().parse_args(argv)
    if args.max_nodes < 1:
        raise UsageError("--max-nodes must be at least 1")
    args.energy = energy.parse_options(args.power_log, args.price, args.kwh_price)
    runs, baselines, notes, errors = load_runs(args)
    for line in errors:
        print(line, file=sys.stderr)
    if errors and (args.fatal or not runs):
        return 1
    for r in runs:
        for problem in r.skipped:
            print(f"{PROG}: {r.path}: warning: {problem}", file=sys.stderr)
    if not runs:
        print(f"{PROG}: no result files given; name .h5 files or a folder that holds them",
              file=sys.stderr)
        return 1
    outdir = Path(args.output)
    _prepare_outdir(outdir)
    plots.apply_style()
    rep = build(args, runs, baselines, notes, outdir)
    for line in rep.energy.warnings:
        print(f"{PROG}: warning: {line}", file=sys.stderr)
    rep.warnings.extend(args.left_out)
    try:
        written = write_report(rep)
    except OSError as exc:
        raise InputError(str(outdir), f"cannot write the report ({exc.strerror or exc})",
                         "check free space and permissions") from None
    if not args.quiet:
        print(f"{PROG}: wrote {outdir / 'index.html'} ({len(rep.figures)} figures, "
              f"{len(rep.tables)} tables, {len(runs)} runs)")
        for path in written[1:]:
            print(f"  {path}")
    return 3 if args.partly else 0  # 3: written, but some files were left out


def main(argv: list[str] | None = None) -> int:
    # The one-line error handling shared with compare and scaling.
    return guarded_main(run, sys.argv[1:] if argv is None else argv, PROG,
                        "interrupted; the report may be incomplete")


if __name__ == "__main__":
    sys.exit(main())
