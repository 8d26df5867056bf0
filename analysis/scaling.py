"""The measured scaling figure: the same FFT point run at several rank or node
counts, joined into t_total, speedup and efficiency against the count.

    /usr/bin/python3 -m analysis.scaling FILES... -o DIR     # DIR/scaling.png, scaling.csv

Which runs form one series: the runs whose labels share a stem once a trailing
count is taken off ("scaling n4", "pi-8nodes", "study_np2" -> "scaling", "pi",
"study"); a run whose stem no other run shares joins the runs of the same CPU
model instead, so one machine's runs at np 1, 2, 3 form a series however they
are labelled, and a Pi and an EC2 cluster never mix. Within a series, points
match on scenario, mode, precision, frame, file count and seconds per file,
and a series needs two or more different (nodes, ranks) counts.

The x axis is nodes when the node count varies, else ranks. Speedup S is the
reference's median t_total over this count's, where the reference is the
smallest count present (1 node or 1 rank when measured), with the 95 %
interval of that ratio of medians that the cross-run speedup uses (derive.ratio_ci).
Ideal = count / reference count; efficiency = S / ideal. Baseline runs
(`--baseline`, root attribute baseline=1) and invalid or unusable points are
left out: they are not a cluster of that size.
"""

from __future__ import annotations

import re
import sys
from dataclasses import dataclass
from pathlib import Path

import numpy as np

from . import derive, tables
from .cliutil import guarded_main, new_parser, prog_name
from .reader import find_result_files, open_run
from .runs import Run, name_runs
from .tables import Column, Table

_COUNT_SUFFIX = re.compile(r"[\s_.:-]*(?:n|np|N|x)?\d+\s*(?:nodes?|ranks?|procs?|n|r)?$")


def label_stem(label: str) -> str:
    """The label without a trailing node or rank count ('' when nothing is left)."""
    return _COUNT_SUFFIX.sub("", label.strip()).strip()


def nodes_of(run: Run) -> int:
    value = run.attrs.get("nnodes")
    try:
        if value is not None and int(value) > 0:
            return int(value)
    except (TypeError, ValueError):
        pass
    names = {(h.get("node"), h.get("hostname")) for h in run.hosts}
    return max(1, len({n for n, _ in names if n is not None}) or len(names))


def _cpu(run: Run) -> str:
    return str(run.hosts[0].get("cpu_model", "")) if run.hosts else ""


def series_names(runs: list[Run]) -> dict[str, str]:
    """run name -> the series it belongs to."""
    stems = {r.name: label_stem(r.label) for r in runs}
    counts: dict[str, int] = {}
    for stem in stems.values():
        counts[stem] = counts.get(stem, 0) + 1
    out = {}
    for run in runs:
        stem = stems[run.name]
        out[run.name] = stem if stem and counts[stem] > 1 else f"cpu {_cpu(run) or '?'}"
    return out


@dataclass
class Entry:
    series: str
    stats: derive.PointStats
    nodes: int
    ranks: int

    @property
    def count(self) -> tuple[int, int]:
        return (self.nodes, self.ranks)


COLUMNS = [
    Column("series", "series"), Column("point", "point"), Column("run", "run"),
    Column("point_id", "id"), Column("nodes", "nodes", "int"), Column("ranks", "ranks", "int"),
    Column("compute_ranks", "compute ranks", "int"), Column("axis", "x"),
    Column("n", "reps", "int"), Column("t_total_median_s", "t_total", "time"),
    Column("t_total_ci_low_s", "t_total CI low", "time"),
    Column("t_total_ci_high_s", "t_total CI high", "time"),
    Column("reference", "speedup against"), Column("ideal", "ideal", "ratio"),
    Column("speedup", "speedup", "ratio"), Column("speedup_ci_low", "CI low", "ratio"),
    Column("speedup_ci_high", "CI high", "ratio"), Column("efficiency", "efficiency", "pct"),
    Column("efficiency_ci_low", "eff. CI low", "pct"),
    Column("efficiency_ci_high", "eff. CI high", "pct"), Column("flag", "flag"),
]


def _describe(s: derive.PointStats) -> str:
    pt = s.point
    where = (f"{pt.nfiles} x {pt.seconds_per_file:g} s files" if pt.scenario == "files"
             else f"one {pt.seconds_per_file:g} s file")
    return f"{pt.scenario}: {where}, {pt.config}"


def scaling_rows(runs: list[Run]) -> tuple[list[dict], list[str]]:
    """One row per series, point and count (see the module doc), and notes on
    what was left out."""
    notes: list[str] = []
    series = series_names(runs)
    groups: dict[tuple, dict[tuple[int, int], Entry]] = {}
    for run in runs:
        if run.is_baseline or run.invalid:
            continue
        nodes = nodes_of(run)
        for s in derive.run_point_stats(run):
            if not s.usable or str(s.point.attrs.get("baseline", 0)) == "1":
                continue
            entry = Entry(series[run.name], s, nodes, s.point.nranks)
            slot = groups.setdefault((entry.series, s.point.key), {})
            if entry.count in slot:
                notes.append(f"{run.name} {s.point.id} repeats {entry.nodes} node(s) x "
                             f"{entry.ranks} rank(s) of {slot[entry.count].stats.run.name} in "
                             f"series {entry.series}; the first is used")
                continue
            slot[entry.count] = entry
    rows = []
    for (name, _key), slot in sorted(groups.items(), key=lambda kv: (kv[0][0], str(kv[0][1]))):
        if len(slot) < 2:
            continue
        entries = sorted(slot.values(), key=lambda e: e.count)
        by_nodes = len({e.nodes for e in entries}) > 1
        axis = "nodes" if by_nodes else "ranks"
        ref = entries[0]
        ref_count = ref.nodes if by_nodes else ref.ranks
        ref_text = (f"{ref_count} node{'s' if ref_count != 1 else ''}" if by_nodes
                    else f"{ref_count} rank{'s' if ref_count != 1 else ''}")
        ref_samples = derive.series_samples(ref.stats.point)["total"]
        for e in entries:
            total = e.stats.summaries["total"]
            count = e.nodes if by_nodes else e.ranks
            ideal = count / ref_count
            samples = derive.series_samples(e.stats.point)["total"]
            sp, lo, hi = derive.ratio_ci([ref_samples], samples)
            eff = sp / ideal
            flag = ""
            if e is not ref and np.isfinite(eff) and eff > 1.0:
                flag = ("efficiency above 100 %: check drift between the runs, cache effects "
                        "of a smaller share, or throttling in /hosts")
            rows.append({
                "series": name, "point": _describe(e.stats), "run": e.stats.run.name,
                "point_id": e.stats.point.id, "nodes": e.nodes, "ranks": e.ranks,
                "compute_ranks": e.stats.point.p, "axis": axis, "n": total.n,
                "t_total_median_s": total.median, "t_total_ci_low_s": total.ci_lo,
                "t_total_ci_high_s": total.ci_hi, "reference": ref_text, "ideal": ideal,
                "speedup": sp, "speedup_ci_low": lo, "speedup_ci_high": hi,
                "efficiency": eff, "efficiency_ci_low": lo / ideal,
                "efficiency_ci_high": hi / ideal, "flag": flag,
            })
    return rows, notes


def table(rows: list[dict]) -> Table:
    return Table(name="scaling", title="Measured scaling (one row per point and count)",
                 columns=COLUMNS, rows=rows,
                 note="Speedup = the reference count's median t_total / this count's; 95 % "
                      "interval [reference CI low / CI high, reference CI high / CI low] from "
                      "each median's distribution-free interval. Efficiency = "
                      "speedup / ideal, ideal = count / reference count.")


def plot(rows: list[dict], outdir: Path, name: str = "scaling.png") -> str | None:
    """scaling.png: t_total, speedup (with the ideal line) and efficiency
    against the count, one line per series and point. None without rows."""
    if not rows:
        return None
    import matplotlib
    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    lines: dict[tuple[str, str], list[dict]] = {}
    for r in rows:
        lines.setdefault((r["series"], r["point"]), []).append(r)
    axis = "nodes" if any(r["axis"] == "nodes" for r in rows) else "ranks"
    refs = sorted({r["reference"] for r in rows})
    fig, (ax_t, ax_s, ax_e) = plt.subplots(1, 3, figsize=(15, 4.8), layout="constrained")
    xs_all: set[int] = set()
    for k, ((series, point), items) in enumerate(sorted(lines.items())):
        colour = f"C{k % 10}"
        label = point if len({s for s, _ in lines}) == 1 else f"{series}: {point}"
        x = np.array([r[axis] for r in items], dtype=float)
        xs_all.update(int(v) for v in x)

        def band(ax, key, scale=1.0):
            y = np.array([r[key] for r in items], dtype=float) * scale
            lo = np.array([r[f"{key}_ci_low" if key != "t_total_median_s" else "t_total_ci_low_s"]
                           for r in items], dtype=float) * scale
            hi = np.array([r[f"{key}_ci_high" if key != "t_total_median_s" else "t_total_ci_high_s"]
                           for r in items], dtype=float) * scale
            err = np.vstack([np.clip(y - lo, 0, None), np.clip(hi - y, 0, None)])
            ax.errorbar(x, y, yerr=np.nan_to_num(err), color=colour, marker="o", ms=4,
                        capsize=3, lw=1.5, label=label)

        band(ax_t, "t_total_median_s", 1e3)
        band(ax_s, "speedup")
        band(ax_e, "efficiency", 100.0)
    ticks = sorted(xs_all)
    ideal_x = np.array([min(ticks), max(ticks)], dtype=float)
    ax_s.plot(ideal_x, ideal_x / min(ticks), color="0.4", ls="--", lw=1, label="ideal")
    ax_e.axhline(100.0, color="0.4", ls="--", lw=1, label="ideal (100 %)")
    unit = "nodes" if axis == "nodes" else "ranks (processes)"
    tick_text = [str(t) for t in ticks]
    if axis == "nodes":  # nodes on the axis, and the ranks they held under each
        held = {t: sorted({r["ranks"] for r in rows if r["nodes"] == t}) for t in ticks}
        tick_text = [f"{t}\n({'/'.join(map(str, held[t]))} ranks)" for t in ticks]
    for ax in (ax_t, ax_s, ax_e):
        ax.set_xticks(ticks, tick_text)
        ax.set_xlabel(f"{unit}, linear scale")
        ax.grid(True, alpha=0.3)
    ax_t.set_yscale("log")
    ax_t.set_ylabel("median t_total [ms], log scale")
    ax_t.set_title("request time (95 % CI of the median)")
    against = refs[0] if len(refs) == 1 else "the smallest count of each series"
    ax_s.set_ylabel(f"speedup against {against}, linear")
    ax_s.set_title("speedup (95 % CI)")
    ax_e.set_ylabel("parallel efficiency [%], linear")
    ax_e.set_title("efficiency = speedup / ideal")
    ax_s.legend(fontsize=7, loc="upper left")
    fig.suptitle("Measured scaling: the same points at several "
                 + ("node" if axis == "nodes" else "rank") + " counts")
    fig.savefig(outdir / name, format="png", facecolor="white", dpi=110)
    plt.close(fig)
    return name


CAPTION = ("Each line is one point (same scenario, mode, precision, frame, files and seconds) "
           "measured at several counts, from separate runs. Speedup is against the smallest "
           "count of its series, named on the axis; the dashed line is ideal (linear) scaling. "
           "Efficiency above 100 % usually means drift between the runs or cache effects, not "
           "a real gain.")


@dataclass
class Result:
    rows: list[dict]
    notes: list[str]
    figure: str | None  # file name in the output folder

    @property
    def table(self) -> Table:
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


if __name__ == "__main__":
    sys.exit(guarded_main(run, sys.argv[1:], prog_name("scaling")))
