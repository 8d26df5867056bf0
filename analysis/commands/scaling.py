"""The measured scaling figure as a command: the same FFT points run at several node or rank
counts (analysis/README.md, "Measured scaling").

    /usr/bin/python3 -m analysis.scaling FILES... -o DIR     # DIR/scaling.png, scaling.csv
"""

from __future__ import annotations

import sys
from dataclasses import dataclass
from pathlib import Path

from ..derive.scaling import scaling_rows
from ..find import tables
from ..find.tables.scaling import table
from ..read.reader import find_result_files, open_run
from ..read.runs import Run, name_runs
from ..render.plots.scaling import plot
from .cliutil import guarded_main, new_parser, prog_name


@dataclass
class Result:
    rows: list[dict]
    notes: list[str]
    figure: str | None  # file name in the output folder

    @property
    def table(self) -> tables.Table:
        return table(self.rows)


def build(runs: list[Run], outdir: Path) -> Result:
    """Rows, notes and DIR/scaling.png (when there is a series) for the report."""
    rows, notes = scaling_rows(runs)
    return Result(rows, notes, plot(rows, outdir))


def run(argv: list[str]) -> int:
    parser = new_parser(
        "python3 -m analysis.scaling",
        description="Join runs of the same FFT points at several node or rank counts into "
                    "DIR/scaling.png\n(t_total, speedup with the ideal line, efficiency, 95 % "
                    "CIs) and DIR/scaling.csv.\nHow runs are grouped and what speedup is "
                    "against: analysis/README.md, 'Measured scaling'.",
        epilog="Exit status: 0 written; 1 a file cannot be used or the output cannot be "
               "written;\n2 bad command line; 3 no point was measured at two or more counts.")
    parser.add_argument("files", nargs="+", metavar="FILES",
                        help="result files (*.h5) or folders searched recursively for them")
    parser.add_argument("-o", "--output", metavar="DIR", default="scaling",
                        help="folder for scaling.png and scaling.csv (default: scaling)")
    args = parser.parse_args(argv)
    runs = [open_run(p) for p in find_result_files(args.files)]
    name_runs(runs)
    out = Path(args.output)
    out.mkdir(parents=True, exist_ok=True)
    result = build(runs, out)
    for note in result.notes:
        print(f"scaling: note: {note}", file=sys.stderr)
    if not result.rows:
        print("scaling: no point was measured at two or more node or rank counts; run the "
              "same sweep at several counts (jobs/slurm/scaling.sbatch)", file=sys.stderr)
        return 3
    tables.write_csv(result.table, out / "scaling.csv")
    print(f"scaling: wrote {out / 'scaling.png'} and {out / 'scaling.csv'} "
          f"({len(result.rows)} rows)")
    return 0


def main(argv: list[str] | None = None) -> int:
    return guarded_main(run, sys.argv[1:] if argv is None else argv, prog_name("scaling"))


if __name__ == "__main__":
    sys.exit(main())
