"""The speedup comparison and crossover tables and their text."""

from __future__ import annotations

from ...derive import Comparison, Crossover
from .base import Column, Table, _finite, fmt_bytes, fmt_ratio, Ci, workload


def comparison(comps: list[Comparison], name: str, title: str) -> Table:
    machine = [c for c in comps if c.kind == "cross-machine"]
    rows = []
    for c in comps:
        pt = c.cluster.point
        rows.append({"run": c.run.name, "point": pt.id, "kind": c.kind,
                     "baseline": c.base_name,
                     "baseline_point": c.base.point.id if c.base is not None else pt.id,
                     "scenario": pt.scenario, "config": pt.config,
                     "workload": workload(pt.nfiles, pt.seconds_per_file, pt.input_bytes),
                     "nfiles": pt.nfiles, "seconds_per_file": pt.seconds_per_file,
                     "input_bytes": pt.input_bytes, "t_run": c.cluster.median,
                     "t_baseline": c.base.median if c.base is not None else None, "p": c.p,
                     "speedup": Ci(c.speedup, c.ci_lo, c.ci_hi), "n": c.n,
                     # other hardware (compare.MachineComparison): the ratio per node and core
                     "per_node": Ci(*c.per_node) if hasattr(c, "per_node") else None,
                     "per_core": Ci(*c.per_core) if hasattr(c, "per_core") else None,
                     "efficiency": c.efficiency, "karp_flatt": c.karp_flatt,
                     "drift": c.drift, "verdict": c.verdict,
                     "flags": "IMPLAUSIBLE: " + "; ".join(c.implausible) if c.implausible else ""})
    cols = [Column("run", "run"), Column("point", "point"), Column("kind", "comparison"),
            Column("baseline", "against"), Column("baseline_point", "baseline point"),
            Column("scenario", "scenario"), Column("config", "transform"),
            Column("workload", "request"), Column("nfiles", "files", "int"),
            Column("seconds_per_file", "s/file", "float"), Column("input_bytes", "input", "bytes"),
            Column("t_run", "cluster median", "time"),
            Column("t_baseline", "baseline median", "time"), Column("p", "p", "int"),
            Column("speedup", "speedup S [95 % CI]", "ci"), Column("n", "n", "int"),
            Column("per_node", "ratio per node", "ci"), Column("per_core", "ratio per core", "ci"),
            Column("efficiency", "efficiency S/p", "pct"),
            Column("karp_flatt", "Karp–Flatt e", "ratio"),
            Column("drift", "baseline drift", "pct"), Column("verdict", "verdict"),
            Column("flags", "flags")]
    return Table(name, title, cols, rows,
                 note="Paired: S is the median over repetitions of baseline t_total[r] / "
                      "cluster t_total[r], measured alternately in the same job, with the 95 % "
                      "CI of that median. Cross-run: S = baseline median / cluster median, and "
                      "the CI runs from the low end of the baseline's 95 % CI over the high end "
                      "of the cluster's to the reverse; with two bracketing baselines (before "
                      "and after) it spans both, so their drift (after / before − 1) is inside "
                      "it. E = S/p, e = (1/S − 1/p)/(1 − 1/p), p = ranks that compute."
                      + (" Cross-machine (the baseline ran on other hardware): S is the relative "
                         "throughput with the same CI, per node and per core beside it; no E "
                         "or e." if machine else ""),
                 html_columns=["run", "point", "kind", "workload", "p", "speedup"]
                 + (["per_node", "per_core"] if machine else [])
                 + (["efficiency", "karp_flatt"] if len(machine) < len(comps) else [])
                 + ["verdict", "flags"] + (["drift"] if any(_finite(c.drift) for c in comps) else []))


def _x_unit(scenario: str, x: float) -> str:
    if scenario == "files":
        return f"{x:.0f} file" + ("" if x == 1 else "s")
    return fmt_bytes(x)


def crossover_text(c: Crossover) -> str:
    lo, hi = c.x_range
    if c.x is None:
        losing = sorted(c.losing, key=lambda item: -item[0])[:3]
        where = ", ".join(f"{_x_unit(c.scenario, x)} (S {fmt_ratio(s)})" for x, s in losing)
        return f"no crossover: the cluster loses at {where}" if where else \
            "no crossover: no speedup could be computed"
    text = f"crossover at {_x_unit(c.scenario, c.x)}"
    if c.scenario == "sizes" and c.seconds_per_file is not None:
        text += f" ({c.seconds_per_file:g} s of audio)"
    early = _x_unit(c.scenario, c.x_early) if c.x_early is not None else "–"
    late = _x_unit(c.scenario, c.x_late) if c.x_late is not None else f"beyond {_x_unit(c.scenario, hi)}"
    if c.x_early == c.x == c.x_late:
        text += " (the 95 % CIs give the same point)"
    else:
        text += f" (95 % CI {early} to {late})"
    text += "; the cluster wins at every larger point measured"
    if lo < c.x:
        text += f" (measured from {_x_unit(c.scenario, lo)})"
    return text


def crossover_short(c: Crossover) -> str:
    if c.x is None:
        worst = max(c.losing, key=lambda item: item[0]) if c.losing else None
        return ("no crossover" + (f" (loses at {_x_unit(c.scenario, worst[0])}, S "
                                  f"{fmt_ratio(worst[1])})" if worst else ""))
    return f"crossover at {_x_unit(c.scenario, c.x)}"


def crossovers(items: list[Crossover]) -> Table:
    rows = [{"run": c.run.name, "kind": c.kind, "scenario": c.scenario, "config": c.config,
             "crossover_x": c.x, "crossover_ci_low": c.x_early, "crossover_ci_high": c.x_late,
             "unit": "files" if c.scenario == "files" else "input bytes",
             "range_lo": c.x_range[0], "range_hi": c.x_range[1],
             "verdict": crossover_text(c)} for c in items]
    cols = [Column("run", "run"), Column("kind", "comparison"), Column("scenario", "scenario"),
            Column("config", "transform"), Column("crossover_x", "crossover", "float"),
            Column("crossover_ci_low", "CI low", "float"),
            Column("crossover_ci_high", "CI high", "float"), Column("unit", "unit"),
            Column("range_lo", "measured from", "float"), Column("range_hi", "to", "float"),
            Column("verdict", "verdict")]
    return Table("crossover", "Crossover: the smallest size or file count from which the cluster "
                 "wins at every larger point", cols, rows,
                 note="The CI applies the same rule to the upper and the lower ends of the "
                      "speedups' 95 % intervals.",
                 html_columns=["run", "kind", "scenario", "config", "verdict"])
