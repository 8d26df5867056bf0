"""The derive stage: numbers derived from what the read stage returned. This package's own
modules hold every per-point reduction: per-point statistics and phases, paired and cross-run
speedups (ratio_ci, the one CI of a ratio of medians across runs), crossovers, stragglers,
transfer statistics and link maps, dfft, load percentiles and saturation; beside them stats,
model, energy, hardware, scaling, drift and the warnings (health, readiness, netfaults,
cpushare).

Definitions (also printed in the report):
- Per-rank times are reduced to the slowest rank of each repetition, then the
  median is taken over repetitions; distribution and gather over all ranks,
  compute and FFT over the ranks that compute.
- overhead = t_total - slowest t_distribute - slowest t_compute - slowest
  t_gather, per repetition.
- A point is unstable when the CV of t_total exceeds 5 %, or when a repetition
  waited over 1 s outside its window (t_sync: a stall between windows).
- A straggler is a computing rank whose median t_compute, or whose median
  t_distribute + t_compute + t_gather, exceeds the median over computing ranks
  by more than 20 %.
"""

from .base import (SERIES, SERIES_TITLES, STRAGGLER_RATIO, series_samples, slowest_median, slowest_rank,
                   overhead_why,
                   compute_samples, median_total, PointStats, point_stats, run_point_stats,
                   RankStats, rank_stats, default_point)
from .speedups import (Comparison, compare_paired, compare, Crossover, crossovers,
                       implausible_flag, ratio_ci, secondary)
from .transfer import (TransferCurve, _bandwidth, p2p_curve, TransferStats, transfer_stats,
                       LinkMap, link_map, DfftStats, dfft_stats, send_rule, transpose_over_bibw,
                       collective_curve, ring_curves)
from .load_steps import LoadStepStats, load_step_stats, Saturation, judge_step, load_analysis

__all__ = [
    "Comparison", "Crossover", "DfftStats", "LinkMap", "LoadStepStats", "PointStats", "RankStats",
    "SERIES", "SERIES_TITLES", "STRAGGLER_RATIO", "Saturation", "TransferCurve", "TransferStats",
    "_bandwidth", "collective_curve", "compare", "compare_paired", "compute_samples", "crossovers",
    "default_point", "dfft_stats", "send_rule", "transpose_over_bibw", "judge_step", "link_map", "load_analysis", "load_step_stats",
    "implausible_flag", "median_total", "p2p_curve", "point_stats", "rank_stats", "ratio_ci", "ring_curves",
    "run_point_stats", "secondary", "series_samples", "slowest_median", "slowest_rank", "overhead_why", "transfer_stats"
]
