"""The report's tables as plain rows, with one rendering for HTML and Markdown
(human units) and one for CSV (raw SI numbers: seconds, bytes, B/s).
"""

from .base import (Column, Table, NUMERIC, fmt_time, fmt_bytes, fmt_bps, fmt_load, Ci,
                   render_parts, render, csv_cells, write_csv, workload, slug)
from .runs import (provenance, own_cost, hosts, fft_points, phase_stack, per_rank, stragglers, dfft_points,
                   pipeline, study)
from .speedups import comparison, crossover_text, crossover_short, crossovers
from .transfer import transfer_stats, pairs_matrix, link_maps
from .fit import validation, models, forecasts, load_steps, saturation
from . import storage

__all__ = [
    "Ci", "Column", "NUMERIC", "Table", "slug", "comparison", "crossover_short", "crossover_text",
    "crossovers", "csv_cells", "dfft_points", "fft_points", "fmt_bps", "fmt_bytes", "fmt_load",
    "fmt_time", "forecasts", "hosts", "own_cost", "link_maps", "load_steps", "models", "pairs_matrix",
    "per_rank", "phase_stack", "pipeline", "provenance", "render", "render_parts", "saturation",
    "storage", "stragglers", "study", "transfer_stats", "validation", "workload", "write_csv"
]
