"""The measured scaling table (derive.scaling's rows)."""

from __future__ import annotations

from .base import Column, Table


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


def table(rows: list[dict]) -> Table:
    return Table(name="scaling", title="Measured scaling (one row per point and count)",
                 columns=COLUMNS, rows=rows,
                 note="Speedup = the reference count's median t_total / this count's; 95 % "
                      "interval [reference CI low / CI high, reference CI high / CI low] from "
                      "each median's distribution-free interval. Efficiency = "
                      "speedup / ideal, ideal = count / reference count.")


CAPTION = ("Each line is one point (same scenario, mode, precision, frame, files and seconds) "
           "measured at several counts, from separate runs. Speedup is against the smallest "
           "count of its series, named on the axis; the dashed line is ideal (linear) scaling. "
           "Efficiency above 100 % usually means drift between the runs or cache effects, not "
           "a real gain.")
