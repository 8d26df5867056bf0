"""Run-to-run comparison: two result files, side by side, point by point.

    /usr/bin/python3 -m analysis.compare A.h5 B.h5 [-o DIR]

For every FFT point the two files have in common (same scenario, mode,
precision, frame, file count and seconds per file) it prints the median
t_total of each, the ratio B/A with its 95 % confidence interval,
which run is faster, and whether the difference is significant (the interval
excludes 1). It writes the same table as DIR/compare.csv and DIR/compare.html.
A and B are separate runs: machine drift between them is part of the
difference, which is why the page says so.
"""

from __future__ import annotations

import csv
import html
import sys
import textwrap
from dataclasses import dataclass
from pathlib import Path

import numpy as np

from .. import derive
from .cliutil import guarded_main, new_parser, prog_name
from ..read.reader import InputError, open_run
from ..read.runs import Run, name_runs

PROG = prog_name("compare")


@dataclass
class Row:
    point: str  # the point's settings in words
    id_a: str
    id_b: str
    n_a: int
    n_b: int
    median_a_s: float
    median_b_s: float
    ratio: float  # B / A
    ci_low: float
    ci_high: float

    @property
    def significant(self) -> bool:
        return bool(self.ci_low > 1 or self.ci_high < 1)

    @property
    def faster(self) -> str:
        if not np.isfinite(self.ratio) or self.ratio == 1:
            return "same"
        return "A" if self.ratio > 1 else "B"

    def verdict(self, name_a: str, name_b: str) -> str:
        if not np.isfinite(self.ci_low):
            return "not enough repetitions"
        if not self.significant:
            return "no significant difference"
        who, factor = (name_a, self.ratio) if self.ratio > 1 else (name_b, 1 / self.ratio)
        return f"{who} faster, {factor:.3g}x"


def describe(stats: derive.PointStats) -> str:
    pt = stats.point
    where = (f"{pt.nfiles} x {pt.seconds_per_file:g} s" if pt.scenario == "files"
             else f"{pt.seconds_per_file:g} s")
    return f"{pt.scenario} {where}, {pt.config}"


def plan_notes(a: Run, b: Run, rows: list[Row]) -> list[str]:
    """A note for each compared point whose FFTW plans differ between the runs (the fftw_plan
    attribute, stored since files of this version): FFTW_MEASURE and FFTW_PATIENT pick a plan by
    timing candidates, so two processes may run different algorithms, and the difference between
    them is then the planner's, not the machine's. Sharing one wisdom file (--wisdom) fixes the plan."""
    pa = {p.id: p.attrs.get("fftw_plan") for p in a.points}
    pb = {p.id: p.attrs.get("fftw_plan") for p in b.points}
    differ = [r.point for r in rows if pa.get(r.id_a) and pb.get(r.id_b) and pa[r.id_a] != pb[r.id_b]]
    if not differ:
        return []
    return [f"{len(differ)} compared point(s) ran different FFTW plans in A and B (first: {differ[0]}): "
            "the planner timed its candidates anew in each run; run both with one --wisdom FILE to compare "
            "the machines, not the plans"]


def compare_runs(a: Run, b: Run) -> tuple[list[Row], list[str]]:
    """Rows for every usable point the runs share, in A's order, and notes on
    the points left out."""
    notes: list[str] = []
    sa = [s for s in derive.run_point_stats(a) if s.usable]
    sb = {s.point.key: s for s in derive.run_point_stats(b) if s.usable}
    rows = []
    seen = set()
    for s in sa:
        other = sb.get(s.point.key)
        if other is None or s.point.key in seen:
            continue
        seen.add(s.point.key)
        ta = derive.series_samples(s.point)["total"]
        tb = derive.series_samples(other.point)["total"]
        ratio, lo, hi = derive.ratio_ci([tb], ta)
        rows.append(Row(point=describe(s), id_a=s.point.id, id_b=other.point.id,
                        n_a=int(np.isfinite(ta).sum()), n_b=int(np.isfinite(tb).sum()),
                        median_a_s=s.median, median_b_s=other.median, ratio=ratio,
                        ci_low=lo, ci_high=hi))
    notes += plan_notes(a, b, rows)
    only_a = len(sa) - len(seen)
    only_b = len(sb) - len(seen)
    if only_a or only_b:
        notes.append(f"{only_a} point(s) only in A and {only_b} only in B are not compared")
    for run, tag in ((a, "A"), (b, "B")):
        if run.invalid:
            notes.append(f"{tag} failed verification: its points are not used")
        for problem in run.skipped:
            notes.append(f"{tag}: {problem}")
    return rows, notes


CSV_COLUMNS = ["point", "point_a", "point_b", "n_a", "n_b", "t_total_median_a_s",
               "t_total_median_b_s", "ratio_b_over_a", "ratio_ci_low", "ratio_ci_high",
               "faster", "significant"]


def csv_rows(rows: list[Row]) -> list[dict[str, object]]:
    return [{"point": r.point, "point_a": r.id_a, "point_b": r.id_b, "n_a": r.n_a, "n_b": r.n_b,
             "t_total_median_a_s": r.median_a_s, "t_total_median_b_s": r.median_b_s,
             "ratio_b_over_a": r.ratio, "ratio_ci_low": r.ci_low, "ratio_ci_high": r.ci_high,
             "faster": r.faster, "significant": int(r.significant)} for r in rows]


def _ms(seconds: float) -> str:
    return f"{seconds * 1e3:.4g}" if np.isfinite(seconds) else "-"


def _ratio(value: float) -> str:
    return f"{value:.3f}" if np.isfinite(value) else "-"


CAVEAT = ("A and B are separate runs: anything that changed between them (other load on "
          "the machine, clock speed, temperature) is part of the ratio. The interval covers "
          "the repetition-to-repetition noise of each run, not drift between runs.")
METHOD = ("ratio = median t_total of B / median t_total of A; 95 % interval [B's CI low / A's CI "
          "high, B's CI high / A's CI low] from each median's distribution-free interval (the "
          "cross-run speedup's rule, analysis/README.md); significant when it excludes 1.")


def text_table(rows: list[Row], name_a: str, name_b: str) -> list[str]:
    head = ["point", "A ms", "B ms", "B/A", "95% CI", "verdict"]
    body = [[r.point, _ms(r.median_a_s), _ms(r.median_b_s), _ratio(r.ratio),
             f"[{_ratio(r.ci_low)}, {_ratio(r.ci_high)}]", r.verdict(name_a, name_b)]
            for r in rows]
    widths = [max(len(x) for x in col) for col in zip(head, *body)]
    numeric = {1, 2, 3, 4}
    out = []
    for cells in [head] + body:
        out.append("  ".join(c.rjust(w) if i in numeric else c.ljust(w)
                             for i, (c, w) in enumerate(zip(cells, widths))).rstrip())
    return out


def html_page(rows: list[Row], a: Run, b: Run, notes: list[str]) -> str:
    e = html.escape
    cells = "".join(
        f"<tr><td>{e(r.point)}</td><td class=n>{_ms(r.median_a_s)}</td>"
        f"<td class=n>{_ms(r.median_b_s)}</td><td class=n>{_ratio(r.ratio)}</td>"
        f"<td class=n>[{_ratio(r.ci_low)}, {_ratio(r.ci_high)}]</td>"
        f"<td{' class=sig' if r.significant else ''}>{e(r.verdict(a.name, b.name))}</td></tr>"
        for r in rows)
    note_html = "".join(f"<li>{e(n)}</li>" for n in notes)
    return f"""<!DOCTYPE html>
<html lang="en"><head><meta charset="utf-8"><title>wulfbench: {e(a.name)} vs {e(b.name)}</title>
<style>body{{font-family:system-ui,sans-serif;margin:1em 2em;color:#1a1a1a}}
table{{border-collapse:collapse}}th,td{{border:1px solid #ccc;padding:.25em .6em}}
th{{background:#f0f0f0}}td.n{{text-align:right;font-variant-numeric:tabular-nums}}
td.sig{{font-weight:bold}}.caveat{{background:#fff8e1;border-left:4px solid #f0ad4e;padding:.5em 1em}}
</style></head><body>
<h1>{e(a.name)} (A) vs {e(b.name)} (B)</h1>
<p>A: {e(str(a.path))}<br>B: {e(str(b.path))}</p>
<p class="caveat">{e(CAVEAT)}</p>
<p>{e(METHOD)} Times are medians of t_total in ms. Table as CSV: <a href="compare.csv">compare.csv</a>.</p>
<table><thead><tr><th>point</th><th>A ms</th><th>B ms</th><th>B/A</th><th>95% CI</th><th>verdict</th></tr></thead>
<tbody>{cells}</tbody></table>
{f"<ul>{note_html}</ul>" if notes else ""}
</body></html>
"""


def build_parser():
    parser = new_parser(
        "python3 -m analysis.compare",
        description="Compare two wulfbench result files point by point: for every FFT point "
                    "both hold\n(same scenario, mode, precision, frame, file count and seconds "
                    "per file), the\nmedian t_total of each, the ratio B/A with its 95 % "
                    "confidence interval, which\nis faster and whether the difference is "
                    "significant.\n\n" + textwrap.fill("Statistics: " + METHOD, 80) + "\n\n"
                    + textwrap.fill(CAVEAT, 80),
        epilog="Exit status: 0 compared; 1 a file cannot be used or the output cannot be "
               "written;\n2 bad command line; 3 the files have no point in common.\n\n"
               "Example: python3 -m analysis.compare results/monday.h5 results/tuesday.h5 "
               "-o cmp/\n         make compare A=results/monday.h5 B=results/tuesday.h5")
    parser.add_argument("a", metavar="A.h5", help="the first result file (the reference: "
                        "ratios are B/A)")
    parser.add_argument("b", metavar="B.h5", help="the second result file")
    parser.add_argument("-o", "--output", metavar="DIR", default="compare",
                        help="folder for compare.csv and compare.html; created if missing, "
                             "earlier files there are overwritten (default: compare)")
    parser.add_argument("-q", "--quiet", action="store_true",
                        help="print only errors, not the table")
    return parser


def run(argv: list[str]) -> int:
    args = build_parser().parse_args(argv)
    runs = []
    for name in (args.a, args.b):
        if not Path(name).is_file():
            raise InputError(name, "no such file", "give two result files (*.h5)")
        runs.append(open_run(Path(name)))
    a, b = runs
    name_runs(runs)
    if a.name == b.name:
        a.name, b.name = f"A: {a.name}", f"B: {b.name}"
    rows, notes = compare_runs(a, b)
    if not rows:
        print(f"{PROG}: {args.a} and {args.b} have no usable FFT point in common (same "
              "scenario, mode, precision, frame, files and seconds); compare runs of the "
              "same sweep", file=sys.stderr)
        return 3
    out = Path(args.output)
    try:
        out.mkdir(parents=True, exist_ok=True)
        with open(out / "compare.csv", "w", newline="", encoding="utf-8") as fh:
            writer = csv.DictWriter(fh, fieldnames=CSV_COLUMNS)
            writer.writeheader()
            writer.writerows(csv_rows(rows))
        (out / "compare.html").write_text(html_page(rows, a, b, notes), encoding="utf-8")
    except OSError as exc:
        raise InputError(str(out), f"cannot write the comparison ({exc.strerror or exc})",
                         "choose another -o or fix its permissions") from None
    if not args.quiet:
        print(f"A = {a.name} ({a.path})\nB = {b.name} ({b.path})")
        print(textwrap.fill("Separate runs: drift between them counts in the ratio. " + METHOD,
                            100))
        print("\n".join(text_table(rows, a.name, b.name)))
        for note in notes:
            print(f"note: {note}")
        print(f"{PROG}: wrote {out / 'compare.csv'} and {out / 'compare.html'}")
    return 0


def main(argv: list[str] | None = None) -> int:
    return guarded_main(run, sys.argv[1:] if argv is None else argv, PROG)


if __name__ == "__main__":
    sys.exit(main())
