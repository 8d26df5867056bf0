"""Command line: turn wulfbench result files into a report.

    /usr/bin/python3 -m analysis.report FILES... -o DIR [--baseline FILE] [--point ID]

Writes DIR/index.html (one self-contained page, figures embedded), the PNG
figures, summary.md and one CSV per table. Exit status: 0 done, 1 a bad or
unreadable input (or the report could not be written), 2 a usage error.
"""

from __future__ import annotations

import argparse
import base64
import datetime as dt
import html
import os
import sys
import warnings
from dataclasses import dataclass, field
from pathlib import Path

import numpy as np

from . import SCHEMA, derive, health, model, plots, tables
from .derive import PointStats
from .load import InputError, Run, find_result_files, name_runs, open_run
from .tables import Table

PROG = "report"


class UsageError(Exception):
    """A bad command line: exit 2."""


class _Parser(argparse.ArgumentParser):
    def error(self, message: str) -> None:  # one line, no usage dump
        raise UsageError(message)


def build_parser() -> argparse.ArgumentParser:
    parser = _Parser(
        prog="python3 -m analysis.report",
        formatter_class=argparse.RawDescriptionHelpFormatter,
        description="Read wulfbench result files (HDF5, schema wulfbench/1) and write a report:\n"
                    "DIR/index.html (one self-contained page), the PNG figures, summary.md and a\n"
                    "CSV file for every table. Definitions: analysis/README.md.",
        epilog="A readable FILE.h5.partial (a run that has not finished) is reported and marked\n"
               "partial. Exit status: 0 report written; 1 a file or folder could not be used, or\n"
               "the report could not be written; 2 bad command line.\n\n"
               "Example: python3 -m analysis.report results/pi.h5 results/ec2.h5 results/i5.h5 \\\n"
               "             --baseline results/i5.h5 -o report/")
    parser.add_argument("files", nargs="+", metavar="FILES",
                        help="result files (*.h5, *.h5.partial) or folders; a folder is searched "
                             "recursively for result files")
    parser.add_argument("-o", "--output", metavar="DIR", default="report",
                        help="folder to write the report into; created if missing, files of an "
                             "earlier report there are overwritten (default: report)")
    parser.add_argument("--baseline", metavar="FILE",
                        help="the reference run (e.g. the one-desktop run) that speedup, "
                             "efficiency and Karp-Flatt are computed against; it may be one of "
                             "FILES or an extra file. Default: the one file whose root attribute "
                             "baseline is 1, if exactly one is")
    parser.add_argument("--point", metavar="ID", action="append", default=[],
                        help="point for the per-rank view, e.g. p004 (every run that has it) or "
                             "RUN:p004 (one run, by label or file name); may be repeated. "
                             "Default: the largest 'files' point of each run")
    parser.add_argument("--max-nodes", metavar="N", type=int, default=64,
                        help="forecast request time and speedup for 1..N nodes (default: 64)")
    parser.add_argument("--skip-bad", action="store_true",
                        help="report on the readable files even when others cannot be read "
                             "(each bad file is still named on stderr and the exit status is 1)")
    parser.add_argument("--title", metavar="TEXT", default="wulfbench report",
                        help="title of the page and of summary.md (default: wulfbench report)")
    parser.add_argument("-q", "--quiet", action="store_true",
                        help="print nothing on success (by default the written files are listed)")
    return parser


@dataclass
class Section:
    anchor: str
    title: str
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
    baseline: Run | None
    notices: list[str] = field(default_factory=list)
    findings: dict[str, list[str]] = field(default_factory=dict)  # run name -> HTML fragments
    sections: list[Section] = field(default_factory=list)

    def find(self, run: str, text: str) -> None:
        """Record a headline finding about a run."""
        self.findings.setdefault(run, []).append(text)

    @property
    def tables(self) -> list[Table]:
        return [b[1] for s in self.sections for b in s.blocks if b[0] == "table"]  # type: ignore[misc]

    @property
    def figures(self) -> list[plots.Figure]:
        return [b[1] for s in self.sections for b in s.blocks if b[0] == "figure"]  # type: ignore[misc]


def _fail_line(err: InputError) -> str:
    return f"{PROG}: {err.subject}: {err.what}; {err.todo}"


def load_runs(args: argparse.Namespace) -> tuple[list[Run], Run | None, list[str], list[str]]:
    """Read every input. Returns (runs, baseline, notices, error lines)."""
    errors: list[str] = []
    paths = []
    for item in args.files:
        try:
            paths.extend(find_result_files([item]))
        except InputError as err:
            errors.append(_fail_line(err))
    runs: list[Run] = []
    for path in paths:
        try:
            runs.append(open_run(path))
        except InputError as err:
            errors.append(_fail_line(err))
    notices: list[str] = []
    baseline: Run | None = None
    if args.baseline:
        wanted = os.path.realpath(args.baseline)
        baseline = next((r for r in runs if os.path.realpath(r.path) == wanted), None)
        if baseline is None:
            try:
                if not Path(args.baseline).is_file():
                    raise InputError(args.baseline, "--baseline names no such file",
                                     "give the path of the reference run's result file")
                baseline = open_run(Path(args.baseline))
                runs.append(baseline)
            except InputError as err:
                errors.append(_fail_line(err))
    name_runs(runs)
    if baseline is not None:
        notices.append(f"Baseline: <b>{html.escape(baseline.name)}</b> ({html.escape(str(baseline.path))}), "
                       "named with --baseline.")
    elif not args.baseline:
        flagged = [r for r in runs if r.is_baseline]
        if len(flagged) == 1:
            baseline = flagged[0]
            notices.append(f"Baseline: <b>{html.escape(baseline.name)}</b>, the one file with "
                           "root attribute baseline=1.")
        elif len(flagged) > 1:
            notices.append("No baseline comparison: several files have baseline=1 ("
                           + ", ".join(html.escape(r.name) for r in flagged)
                           + "); name one with --baseline FILE.")
        elif len(runs) > 0:
            notices.append("No baseline comparison: no file has baseline=1; pass --baseline FILE "
                           "to compare against a reference run.")
    if baseline is not None and baseline.invalid:
        notices.append(f"The baseline {html.escape(baseline.name)} failed verification: no "
                       "speedup is computed against it.")
    return runs, baseline, notices, errors


def _e(text: object) -> str:
    return html.escape(str(text))


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
            notes.append(f"--point {_e(name)}:{_e(for_run[name])}: no run is called "
                         f"{_e(name)}; runs are " + ", ".join(_e(r.name) for r in runs) + ".")
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
            notes.append(f"{_e(run.name)} has no point {', '.join(_e(c) for c in candidates)}; "
                         "its default point is shown.")
        chosen[run.name] = pick or derive.default_point(run, items)
    return chosen, notes


def build(args: argparse.Namespace, runs: list[Run], baseline: Run | None,
          notices: list[str], outdir: Path) -> Report:
    rep = Report(title=args.title, outdir=outdir, runs=runs, baseline=baseline,
                 notices=list(notices))
    colour = plots.colours(runs, baseline)
    stats_by_run = {r.name: derive.run_point_stats(r) for r in runs}
    all_stats = [s for r in runs for s in stats_by_run[r.name]]

    for run in runs:
        tag = f"<b>{_e(run.name)}</b> ({_e(run.path.name)})"
        if run.partial:
            rep.notices.append(
                f"{tag} is PARTIAL: the run had not finished (status '{_e(run.status)}'). It "
                f"holds {len(run.points)} FFT points, {len(run.transfer)} transfer tests and "
                f"{len(run.load_steps)} load steps; what is missing was not measured yet.")
        if run.invalid:
            rep.notices.append(f"{tag} FAILED VERIFICATION (verified={run.verified}, status "
                               f"'{_e(run.status)}'): its numbers are listed as INVALID and "
                               "left out of figures, comparisons and the model.")
        elif run.status == "failed":
            rep.notices.append(f"{tag} ended with status 'failed'; the points it flushed are shown.")
        bad = [s.point.id for s in stats_by_run[run.name] if s.point.verified == 0]
        if bad and not run.invalid:
            rep.notices.append(f"{tag}: point(s) {', '.join(bad)} failed verification "
                               "(verify/passed=0); shown as INVALID and left out of figures, "
                               "comparisons and the model.")
        unstable = [s.point.id for s in stats_by_run[run.name] if s.status.startswith("unstable")]
        if unstable:
            rep.notices.append(f"{tag}: {len(unstable)} point(s) unstable (CV of t_total > 5 %): "
                               + ", ".join(unstable) + ".")
        for problem in run.problems:
            rep.notices.append(f"{tag}: {_e(problem)}")
        for line in health.point_warnings(run.path):
            rep.notices.append(f"{tag}: WARNING {_e(line)}")
        missing = [g for g in ("fft", "transfer", "load") if g not in run.groups]
        if missing:
            sub = run.attrs.get("subcommand")
            rep.notices.append(f"{tag} has no " + ", ".join(f"/{g}" for g in missing)
                               + (f" group (subcommand '{_e(sub)}')" if sub else " group")
                               + "; those sections skip it.")

    sec = Section("runs", "Runs and provenance")
    sec.para("Every run that went into this report: where and how it ran, and whether its "
             "results were verified.")
    sec.table(tables.provenance(runs, baseline))
    sec.table(tables.hosts(runs))
    rep.sections.append(sec)

    _fft_section(rep, runs, stats_by_run, all_stats, colour)
    comps = _comparison_section(rep, runs, baseline, stats_by_run, colour)
    _per_rank_section(rep, args, runs, stats_by_run)
    _transfer_section(rep, runs, colour)
    _model_section(rep, args, runs, baseline, stats_by_run, comps)
    _load_section(rep, runs, colour)
    _method_section(rep)
    return rep


def _fft_section(rep: Report, runs: list[Run], stats_by_run: dict[str, list[PointStats]],
                 all_stats: list[PointStats], colour: dict[str, str]) -> None:
    sec = Section("fft", "FFT requests (study rows 1–9)")
    rep.sections.append(sec)
    without = [r.name for r in runs if not r.points]
    if without:
        sec.para("No /fft points in: " + ", ".join(_e(n) for n in without) + ".")
    if not all_stats:
        sec.para("No run has FFT points; this section is empty.")
        return
    sec.figure(plots.fft_times(all_stats, "sizes", colour, rep.outdir, "1–4"))
    sec.figure(plots.fft_times(all_stats, "files", colour, rep.outdir, "6–8"))
    sec.figure(plots.fft_rate(all_stats, colour, rep.outdir))
    sec.figure(plots.fft_overhead(all_stats, rep.baseline, rep.outdir))
    for sc in ("sizes", "files"):
        if not any(s.point.scenario == sc and s.usable for s in all_stats):
            sec.para(f"No usable '{sc}' points: the {'file size' if sc == 'sizes' else 'files per request'} "
                     "figures are left out.")
    sec.table(tables.fft_points(all_stats))
    for run in runs:
        usable = [s for s in stats_by_run[run.name] if s.usable]
        if not usable:
            continue
        best = max(usable, key=lambda s: s.kBps if np.isfinite(s.kBps) else -1)
        top = max(usable, key=lambda s: s.gflops if np.isfinite(s.gflops) else -1)
        rep.find(run.name,
            f"best processing rate {best.kBps:,.0f} kB/s at {_e(_x_text(best))}; "
            f"peak {top.gflops:.3g} GFLOPS ({top.gflops_per_rank:.3g} per compute rank, p={top.point.p}).")


def _comparison_section(rep: Report, runs: list[Run], baseline: Run | None,
                        stats_by_run: dict[str, list[PointStats]],
                        colour: dict[str, str]) -> list[derive.Comparison]:
    sec = Section("baseline", "Against the baseline (study row 5)")
    rep.sections.append(sec)
    if baseline is None:
        sec.para("No baseline run: " + ("pass --baseline FILE, or include exactly one file with "
                                         "root attribute baseline=1."))
        return []
    if baseline.invalid:
        sec.para(f"The baseline {_e(baseline.name)} failed verification; nothing is compared.")
        return []
    comps: list[derive.Comparison] = []
    for run in runs:
        if run is baseline:
            continue
        if run.invalid:
            sec.para(f"{_e(run.name)} failed verification and is not compared.")
            continue
        found, notes = derive.compare(stats_by_run[run.name], stats_by_run[baseline.name])
        for note in notes:
            rep.notices.append(_e(note))
        if not found:
            sec.para(f"{_e(run.name)} has no point with the same scenario, mode, precision, frame, "
                     f"file count and seconds per file as the baseline.")
        comps.extend(found)
    if not comps:
        return comps
    cross = derive.crossovers(comps)
    sec.figure(plots.speedup(comps, cross, colour, baseline, rep.outdir))
    sec.bullets([f"<b>{_e(c.run.name)}</b>, {_e(c.scenario)} ({_e(c.config)}): "
                 f"{_e(tables.crossover_text(c))}." for c in cross])
    sec.table(tables.crossovers(cross))
    sec.table(tables.comparison(comps, baseline))
    for c in cross:
        rep.find(c.run.name, f"against {_e(baseline.name)}, {_e(c.scenario)}: "
                             f"{_e(tables.crossover_text(c))}.")
    by_run: dict[str, list[derive.Comparison]] = {}
    for c in comps:
        by_run.setdefault(c.run.name, []).append(c)
    for name, items in by_run.items():
        best = max(items, key=lambda c: c.speedup if np.isfinite(c.speedup) else -1)
        rep.find(name, f"largest speedup {best.speedup:.3g}× "
                            f"(efficiency {100 * best.efficiency:.0f} %, p={best.p}) at "
                            f"{_e(_x_text(best.cluster))}.")
    return comps


def _per_rank_section(rep: Report, args: argparse.Namespace, runs: list[Run],
                      stats_by_run: dict[str, list[PointStats]]) -> None:
    sec = Section("ranks", "Per rank")
    rep.sections.append(sec)
    chosen, notes = choose_points(runs, stats_by_run, args.point)
    for note in notes:
        rep.notices.append(note)
    shown: list[tuple[Run, str, list[derive.RankStats]]] = []
    everywhere: list[tuple[Run, str, list[derive.RankStats]]] = []
    lagging: list[tuple[Run, str, derive.RankStats]] = []
    for run in runs:
        for s in stats_by_run.get(run.name, []):
            if s.usable and s.point.nranks > 1:
                ranks = derive.rank_stats(run, s.point)
                everywhere.append((run, s.point.id, ranks))
                lagging += [(run, s.point.id, r) for r in ranks if r.straggler]
    for run in runs:
        pick = chosen.get(run.name)
        if pick is None:
            continue
        if pick.point.nranks < 2:
            sec.para(f"{_e(run.name)} ran on one rank: no per-rank view.")
            continue
        ranks = derive.rank_stats(run, pick.point)
        shown.append((run, pick.point.id, ranks))
        desc = f"{pick.point.id}, {_x_text(pick)}"
        sec.figure(plots.per_rank(run, desc, ranks, pick.summaries["total"].median, rep.outdir))
        names = [f"{r.host} (rank {r.rank}): {r.reason}" for r in ranks if r.straggler]
        status = "" if pick.usable else f" — this point is {pick.status}"
        if names:
            sec.para(f"<b>{_e(run.name)}</b> at {_e(desc)}{_e(status)}: stragglers "
                     + "; ".join(_e(n) for n in names) + ".")
            rep.find(run.name, f"straggler(s) at {_e(pick.point.id)}: "
                     + "; ".join(_e(n) for n in names) + ".")
        else:
            sec.para(f"<b>{_e(run.name)}</b> at {_e(desc)}{_e(status)}: no straggler.")
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
        total = {run.name: sum(1 for rr, _p, _r in everywhere if rr is run) for run in runs}
        sec.bullets([f"{_e(run)}: {_e(who)} straggles at {n} of {total[run]} points"
                     for (run, who), n in sorted(counts.items())])
    else:
        sec.para("No straggler at any point.")
    sec.table(st)


def _transfer_section(rep: Report, runs: list[Run], colour: dict[str, str]) -> None:
    sec = Section("transfer", "Data transfer")
    rep.sections.append(sec)
    without = [r.name for r in runs if "transfer" not in r.groups]
    if without:
        sec.para("No /transfer group in: " + ", ".join(_e(n) for n in without) + " (skipped).")
    usable = [r for r in runs if r.transfer or r.pairs_all is not None]
    if not usable:
        sec.para("No run has transfer tests.")
        return
    invalid = [r for r in usable if r.invalid]
    if invalid:
        sec.para("Runs that failed verification are left out: " + ", ".join(_e(r.name) for r in invalid) + ".")
    usable = [r for r in usable if not r.invalid]
    # validated=0 only means the payload was not checked (no --validate);
    # a check that ran and failed says verified=0
    failed = [f"{r.name}/{t.name}" for r in usable for t in r.transfer.values()
              if t.attrs.get("verified") is not None and int(t.attrs["verified"]) == 0]
    if failed:
        rep.notices.append("Transfer tests whose payload check failed (verified=0), shown but "
                           "not to be trusted: " + ", ".join(_e(u) for u in failed) + ".")
    cut = [f"{r.name}/{t.name}" for r in usable for t in r.transfer.values()
           if int(t.attrs.get("timed_out") or 0) == 1]
    if cut:
        rep.notices.append("Transfer tests cut short by --timeout (sizes missing): "
                           + ", ".join(_e(u) for u in cut) + ".")
    p2p = [derive.p2p_curve(r, r.transfer[t]) for r in usable for t in ("pingpong", "bw", "bibw")
           if t in r.transfer]
    coll = [(r, [derive.collective_curve(r, t) for n, t in sorted(r.transfer.items())
                 if t.kind == "collective"]) for r in usable]
    ring = [c for r in usable if "ring" in r.transfer for c in derive.ring_curves(r, r.transfer["ring"])]
    sec.figure(plots.transfer_p2p(p2p, colour, rep.outdir))
    sec.figure(plots.transfer_collectives(coll, rep.outdir))
    sec.figure(plots.transfer_ring(ring, colour, rep.outdir))
    for run in usable:
        sec.figure(plots.transfer_pairs(run, rep.outdir))
    if p2p:
        sec.table(tables.transfer_curves(p2p, "transfer_p2p", "Point to point", "pairs"))
    flat = [c for _r, cs in coll for c in cs]
    if flat:
        sec.table(tables.transfer_curves(flat, "transfer_collectives", "Collectives", "ranks"))
    if ring:
        sec.table(tables.transfer_curves(ring, "transfer_ring", "Ring", "orders"))
    for run in usable:
        if run.pairs_all is not None:
            t = tables.pairs_matrix(run)
            t.html_rows = t.rows[:64] if len(t.rows) > 64 else None
            if t.html_rows is not None:
                t.title += " (first 64 pairs; the CSV has all)"
            sec.table(t)
    missing = [r.name for r in usable if r.pairs_all is None]
    if missing and any(r.pairs_all is not None for r in usable):
        sec.para("No all-pairs matrix (run with --pairs all) in: " + ", ".join(_e(n) for n in missing) + ".")


def _model_section(rep: Report, args: argparse.Namespace, runs: list[Run], baseline: Run | None,
                   stats_by_run: dict[str, list[PointStats]],
                   comps: list[derive.Comparison]) -> None:
    sec = Section("model", "Model and forecast")
    rep.sections.append(sec)
    sec.para("Hockney model t(m) = α + m/β fitted to pingpong (relative-error least squares); "
             "per-rank compute time fitted as c0 + c1·flops; request time on p nodes predicted as "
             "t0 + (p−1)·α + M_in·(p−1)/(p·β) + c0 + c1·F/p + (p−1)·α + M_out·(p−1)/(p·β), where "
             "M_in, M_out are the request's input and output bytes, F its flops and t0 the "
             "median residual on the measured points. Every rank is taken to be its own node.")
    nodes = np.arange(1, max(1, args.max_nodes) + 1)
    base_stats = {s.point.key: s for s in stats_by_run.get(baseline.name, [])
                  if s.usable} if baseline is not None and not baseline.invalid else {}
    fitted: list[model.RunModel] = []
    for run in runs:
        usable = [s for s in stats_by_run.get(run.name, []) if s.usable]
        if not usable:
            continue
        m = model.fit_run(run, [s.point for s in usable])
        fitted.append(m)
        for note in m.notes:
            sec.para(f"{_e(run.name)}: {_e(note)}.")
        if m.compute is None or max(s.point.p for s in usable) < 2:
            continue
        picks = []
        for sc in ("files", "sizes"):
            cands = [s for s in usable if s.point.scenario == sc]
            if cands:
                picks.append(max(cands, key=lambda s: (s.point.input_bytes, s.point.id)))
        if not picks:
            picks.append(max(usable, key=lambda s: s.point.input_bytes))
        for s in picks:
            b = base_stats.get(s.point.key)
            f = model.forecast(m, s.point, f"{s.point.id} ({_x_text(s)})",
                               b.median if b is not None else None, nodes)
            if f is not None:
                m.forecasts.append(f)
        sec.figure(plots.model_fit(run, m, _compute_data(usable), rep.outdir))
        sec.figure(plots.forecast(run, m, rep.outdir))
        trust = ("good" if m.total_rel_err_max < 0.10 else
                 "fair" if m.total_rel_err_max < 0.30 else "poor")
        rep.find(run.name, f"model error on {m.total_n} measured points "
                            f"median {100 * m.total_rel_err_median:.1f} %, max "
                            f"{100 * m.total_rel_err_max:.1f} % ({trust} fit)"
                            + _forecast_headline(m) + ".")
    if not fitted:
        sec.para("No usable FFT points: nothing to fit.")
        return
    sec.table(tables.models(fitted))
    if any(m.forecasts for m in fitted):
        sec.table(tables.forecasts(fitted))
    else:
        sec.para("No multi-rank run: no forecast (one-rank runs only give a compute cost).")


def _forecast_headline(m: model.RunModel) -> str:
    f = m.forecasts[0] if m.forecasts else None
    if f is None:
        return ""
    k = int(np.nanargmax(f.speedup)) if np.any(np.isfinite(f.speedup)) else 0
    return (f"; forecast best speedup for {_e(f.label)}: {f.speedup[k]:.3g}× at {int(f.nodes[k])} "
            f"node{'s' if int(f.nodes[k]) != 1 else ''} (against {_e(f.speedup_ref)})")


def _compute_data(usable: list[PointStats]) -> tuple[np.ndarray, np.ndarray]:
    xs, ys = [], []
    for s in usable:
        med = model.per_rank_median(s.point, "t_compute")
        for r in s.point.compute_ranks:
            if r < med.size and r < s.point.flops.size:
                xs.append(float(s.point.flops[r]))
                ys.append(float(med[r]))
    return np.asarray(xs), np.asarray(ys)


def _load_section(rep: Report, runs: list[Run], colour: dict[str, str]) -> None:
    sec = Section("load", "Service under load (study rows 10–11)")
    rep.sections.append(sec)
    without = [r.name for r in runs if "load" not in r.groups]
    if without:
        sec.para("No /load group in: " + ", ".join(_e(n) for n in without) + " (skipped).")
    items = []
    for run in runs:
        if not run.load_steps:
            continue
        if run.invalid:
            sec.para(f"{_e(run.name)} failed verification; its load steps are left out.")
            continue
        steps, sat = derive.load_analysis(run)
        items.append((run, steps, sat))
    if not items:
        sec.para("No run has load steps.")
        return
    sec.figure(plots.load(items, colour, rep.outdir))
    sec.table(tables.load_steps([(r, s) for r, s, _ in items]))
    sats = [(r, s) for r, _st, s in items if s is not None]
    if sats:
        sec.table(tables.saturation(sats))
        for run, s in sats:
            if np.isfinite(s.saturation_load):
                text = (f"saturation point {tables.fmt_load(s.saturation_load, s.load_unit)} "
                        f"({s.saturation_rps:.4g} req/s served, p95 "
                        f"{tables.fmt_time(s.saturation_p95_s)})")
            else:
                text = "unhealthy from the lowest load measured"
            if np.isfinite(s.first_fail_load):
                text += (f"; fails at {tables.fmt_load(s.first_fail_load, s.load_unit)} "
                         f"({_e(s.fail_reason)})")
            else:
                text += "; no measured load failed"
            rep.find(run.name, text + f" [{_e(s.source)}].")


def _method_section(rep: Report) -> None:
    sec = Section("method", "How the numbers are made")
    sec.bullets([
        "Every time is the median over the recorded repetitions (warm-up repetitions are never "
        "recorded). Per-rank times are first reduced to the slowest rank of each repetition: "
        "distribution and gather over all ranks, compute and FFT over the ranks that compute.",
        "95 % confidence interval of the median: distribution-free, from order statistics. "
        "With n repetitions the count below the true median is Binomial(n, ½); the interval "
        "[x<sub>(j)</sub>, x<sub>(n+1−j)</sub>] with the largest j whose coverage "
        "1 − 2·P(B ≤ j−1) is at least 95 %. For n &lt; 6 no pair reaches 95 %; the report then "
        "gives [min, max] and states its coverage 1 − 2<sup>1−n</sup>.",
        "CV = sample standard deviation / mean of t_total; a point with CV &gt; 5 % is flagged "
        "unstable (it is still used).",
        "Overhead = t_total − the slowest rank's t_compute, per repetition.",
        "Processing rate = input_bytes / 1000 / median t_total (kB/s). GFLOPS = Σ flops / "
        "median of the slowest rank's t_fft / 10⁹; per rank: that rank's flops over its median t_fft.",
        "Speedup S = baseline median t_total / run median t_total, for points that match on "
        "scenario, mode, precision, frame, file count and seconds per file. Efficiency E = S/p "
        "and Karp–Flatt e = (1/S − 1/p)/(1 − 1/p) with p the ranks that compute (frames &gt; 0). "
        "Crossover: the smallest measured size or file count with S &gt; 1.",
        "Straggler: a computing rank whose median t_compute, or median t_distribute + "
        "t_compute + t_gather, is more than 20 % above the median of that quantity over the "
        "computing ranks (needs two or more computing ranks).",
        "Invalid data (root verified=0 or status 'invalid', or a point's verify/passed=0) "
        "is listed as INVALID and never enters figures, comparisons, fits or findings.",
        "Load: warm-up requests (warmup=1) are excluded; latency is t_done − t_submit of finished "
        "requests; the saturation point is taken from the /load attributes when present, "
        "otherwise recomputed as the highest offered load before the first unhealthy step.",
    ])
    rep.sections.append(sec)


CSS = """
body{font-family:system-ui,-apple-system,"Segoe UI",Roboto,Helvetica,Arial,sans-serif;
 margin:0 auto;max-width:1500px;padding:1em 2em;color:#1a1a1a;line-height:1.45}
h1{font-size:1.8em;margin-bottom:.2em} h2{border-bottom:2px solid #ddd;padding-bottom:.2em;margin-top:2em}
nav{background:#f5f5f5;padding:.5em 1em;border-radius:6px} nav a{margin-right:1.2em}
.notice{background:#fff8e1;border-left:4px solid #f0ad4e;padding:.6em 1em;margin:1em 0}
.notice li{margin:.2em 0} .findings{background:#eef6ee;border-left:4px solid #4caf50;padding:.6em 1em}
figure{margin:1.5em 0} figure img{max-width:100%;height:auto;border:1px solid #ddd}
figcaption{font-size:.92em;color:#444;margin-top:.3em}
.tablewrap{overflow-x:auto;margin:.5em 0 1.5em 0}
table{border-collapse:collapse;font-size:.85em} th,td{border:1px solid #ccc;padding:.25em .5em;
 text-align:left;vertical-align:top} th{background:#f0f0f0;position:sticky;top:0}
tr:nth-child(even) td{background:#fafafa} td.bad{color:#b00000;font-weight:bold}
td.warn{color:#a36200} .meta{color:#555;font-size:.9em} code{background:#f3f3f3;padding:0 .2em}
"""

SCRIPT = """
(function(){var imgs=document.images,ok=0,bad=0;
for(var i=0;i<imgs.length;i++){if(imgs[i].complete&&imgs[i].naturalWidth>0)ok++;else bad++;}
document.body.setAttribute('data-images-total',String(imgs.length));
document.body.setAttribute('data-images-loaded',String(ok));
if(bad)document.body.setAttribute('data-images-missing',String(bad));})();
"""


def _cell_class(text: str) -> str:
    if "INVALID" in text or "STRAGGLER" in text or "FAILED" in text or "PARTIAL" in text:
        return ' class="bad"'
    if text.startswith("unstable") or text.startswith("no ("):
        return ' class="warn"'
    return ""


def html_table(t: Table) -> str:
    out = [f"<h3>{_e(t.title)} <span class='meta'>(<a href='{_e(t.name)}.csv'>{_e(t.name)}.csv</a>"
           f", {len(t.rows)} rows)</span></h3>"]
    if t.note:
        out.append(f"<p class='meta'>{_e(t.note)}</p>")
    rows = t.shown_rows
    if not rows:
        out.append("<p class='meta'>(no rows)</p>")
        return "\n".join(out)
    if t.transpose:
        out.append("<div class='tablewrap'><table><tbody>")
        for c in t.columns:
            cells = [tables.render(row.get(c.key), c.kind) for row in rows]
            out.append(f"<tr><th>{_e(c.header)}</th>"
                       + "".join(f"<td{_cell_class(x)}>{_e(x)}</td>" for x in cells) + "</tr>")
        out.append("</tbody></table></div>")
        return "\n".join(out)
    out.append("<div class='tablewrap'><table><thead><tr>")
    out += [f"<th>{_e(c.header)}</th>" for c in t.columns]
    out.append("</tr></thead><tbody>")
    for row in rows:
        out.append("<tr>")
        for c in t.columns:
            text = tables.render(row.get(c.key), c.kind)
            out.append(f"<td{_cell_class(text)}>{_e(text)}</td>")
        out.append("</tr>")
    out.append("</tbody></table></div>")
    return "\n".join(out)


def html_figure(f: plots.Figure, outdir: Path) -> str:
    data = base64.b64encode((outdir / f.file).read_bytes()).decode("ascii")
    marker = "this.setAttribute('data-missing','1');document.body.setAttribute('data-images-missing','1')"
    return (f"<figure><img src=\"data:image/png;base64,{data}\" alt=\"{_e(f.title)}\" "
            f"data-file=\"{_e(f.file)}\" onerror=\"{marker}\">"
            f"<figcaption><b>{_e(f.title)}</b> ({_e(f.file)}). {_e(f.caption)}</figcaption></figure>")


def render_html(rep: Report) -> str:
    now = dt.datetime.now(dt.timezone.utc).strftime("%Y-%m-%d %H:%M UTC")
    parts = ["<!DOCTYPE html>", "<html lang='en'><head><meta charset='utf-8'>",
             f"<title>{_e(rep.title)}</title><style>{CSS}</style></head><body>",
             f"<h1>{_e(rep.title)}</h1>",
             f"<p class='meta'>Generated {now} from {len(rep.runs)} result file(s) "
             f"(schema {SCHEMA}). Tables are also in CSV beside this page; summary.md has the "
             "same findings in Markdown.</p>",
             "<nav>" + "".join(f"<a href='#{s.anchor}'>{_e(s.title)}</a>" for s in rep.sections)
             + "</nav>"]
    if rep.notices:
        parts.append("<div class='notice'><b>Read first</b><ul>"
                     + "".join(f"<li>{n}</li>" for n in rep.notices) + "</ul></div>")
    if rep.findings:
        parts.append("<div class='findings'><b>Findings</b><ul>"
                     + "".join(f"<li><b>{_e(run)}</b><ul>" + "".join(f"<li>{f}</li>" for f in items)
                               + "</ul></li>" for run, items in rep.findings.items())
                     + "</ul></div>")
    for sec in rep.sections:
        parts.append(f"<h2 id='{sec.anchor}'>{_e(sec.title)}</h2>")
        for kind, payload in sec.blocks:
            if kind == "p":
                parts.append(f"<p>{payload}</p>")
            elif kind == "ul":
                parts.append("<ul>" + "".join(f"<li>{i}</li>" for i in payload) + "</ul>")  # type: ignore[union-attr]
            elif kind == "table":
                parts.append(html_table(payload))  # type: ignore[arg-type]
            elif kind == "figure":
                parts.append(html_figure(payload, rep.outdir))  # type: ignore[arg-type]
    parts.append(f"<script>{SCRIPT}</script></body></html>")
    return "\n".join(parts)


def _md(text: str) -> str:
    """HTML fragment of a finding or notice as Markdown."""
    import re
    text = re.sub(r"</?b>", "**", text)
    text = re.sub(r"<sub>(.*?)</sub>", r"\1", text)
    text = re.sub(r"<sup>(.*?)</sup>", r"^\1", text)
    text = re.sub(r"<[^>]+>", "", text)
    return html.unescape(text)


def md_table(t: Table) -> str:
    rows = t.shown_rows
    lines = [f"### {t.title}", "", f"CSV: [{t.name}.csv]({t.name}.csv), {len(t.rows)} rows.", ""]
    if t.note:
        lines += [f"_{t.note}_", ""]
    if not rows:
        return "\n".join(lines + ["(no rows)", ""])
    esc = lambda s: str(s).replace("|", "\\|").replace("\n", " ")  # noqa: E731
    lines.append("| " + " | ".join(esc(c.header) for c in t.columns) + " |")
    lines.append("|" + "---|" * len(t.columns))
    for row in rows:
        lines.append("| " + " | ".join(esc(tables.render(row.get(c.key), c.kind))
                                       for c in t.columns) + " |")
    return "\n".join(lines + [""])


def render_md(rep: Report) -> str:
    now = dt.datetime.now(dt.timezone.utc).strftime("%Y-%m-%d %H:%M UTC")
    out = [f"# {rep.title}", "", f"Generated {now} from {len(rep.runs)} result file(s). "
           "The full page with figures is index.html.", ""]
    if rep.notices:
        out += ["## Read first", ""] + [f"- {_md(n)}" for n in rep.notices] + [""]
    if rep.findings:
        out += ["## Findings", ""]
        for run, items in rep.findings.items():
            out += [f"- **{run}**"] + [f"  - {_md(f)}" for f in items]
        out.append("")
    for sec in rep.sections:
        out += [f"## {sec.title}", ""]
        for kind, payload in sec.blocks:
            if kind == "p":
                out += [_md(str(payload)), ""]
            elif kind == "ul":
                out += [f"- {_md(i)}" for i in payload] + [""]  # type: ignore[union-attr]
            elif kind == "table":
                out.append(md_table(payload))  # type: ignore[arg-type]
            elif kind == "figure":
                f: plots.Figure = payload  # type: ignore[assignment]
                out += [f"![{f.title}]({f.file})", "", f"_{f.caption}_", ""]
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
    runs, baseline, notices, errors = load_runs(args)
    for line in errors:
        print(line, file=sys.stderr)
    if errors and (not args.skip_bad or not runs):
        return 1
    if not runs:
        print(f"{PROG}: no result files given; name .h5 files or a folder that holds them",
              file=sys.stderr)
        return 1
    outdir = Path(args.output)
    _prepare_outdir(outdir)
    plots.apply_style()
    rep = build(args, runs, baseline, notices, outdir)
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
    return 1 if errors else 0


def main(argv: list[str] | None = None) -> int:
    warnings.simplefilter("ignore")
    try:
        return run(sys.argv[1:] if argv is None else argv)
    except UsageError as err:
        print(f"{PROG}: {err}; see --help", file=sys.stderr)
        return 2
    except InputError as err:
        print(_fail_line(err), file=sys.stderr)
        return 1
    except KeyboardInterrupt:
        print(f"{PROG}: interrupted; the report may be incomplete", file=sys.stderr)
        return 130
    except Exception as exc:  # never show a traceback to the user
        if os.environ.get("WB_REPORT_DEBUG"):
            raise
        detail = " ".join(str(exc).split())[:200]
        print(f"{PROG}: internal error ({type(exc).__name__}: {detail}); please report it with "
              "the input files", file=sys.stderr)
        return 1


if __name__ == "__main__":
    sys.exit(main())
