"""Command line: turn wulfbench result files into a report.

    /usr/bin/python3 -m analysis.report FILES... -o DIR [--baseline FILE [--baseline FILE]]

Writes DIR/index.html (one self-contained page built from analysis/page.html,
figures embedded), the PNG figures, summary.md (the same content in Markdown,
made from the same data) and one CSV per table. Exit status: 0 done, 1 a bad or
unreadable input (or the report could not be written), 2 a usage error, 3 written
with some input files left out.

This module reads the command line and the inputs and writes the files;
analysis.sections builds the report's blocks (analysis.document), and
render_html and render_md turn them into the page and summary.md.
"""

from __future__ import annotations

import argparse
import os
import sys
from pathlib import Path

from ..derive import energy
from ..render import plots
from ..find import tables
from ..render.document import Report
from ..find.common import bold
from ..read.reader import UsageError
from .cliutil import bad_file_lines, guarded_main, prog_name
from ..read.reader import InputError, find_result_files, open_run
from ..read.runs import Run, name_runs
from ..render.html import render_html
from ..render.md import render_md
from ..render.sections import build

PROG = prog_name("report")  # the installed wrapper sets WB_PROG
PROG_USAGE = prog_name("python3 -m analysis.report")


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
            notes.append(f"Baselines: {bold(baselines[0].name)} before and {bold(baselines[1].name)} "
                         "after the cluster run, named with --baseline; their drift widens every "
                         "cross-run CI.")
        else:
            notes.append(f"Baseline: {bold(baselines[0].name)} ({baselines[0].path}), named with "
                         "--baseline.")
    elif not args.baseline:
        flagged = [r for r in runs if r.is_baseline]
        if len(flagged) == 1:
            baselines = flagged
            notes.append(f"Baseline: {bold(flagged[0].name)}, the one file with root attribute "
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
