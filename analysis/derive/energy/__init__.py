"""Energy and money per request (docs/energy.md): what the nodes' own power sources
stored (`/power`, and `energy_j` per point, ENERGY datasets below) and what external
meter logs (read.meter) say, turned into J per request, kB/J, GFLOPS/W and
$ per 1000 requests. Nothing is estimated: a node without a source makes its point
"unmeasured", and every figure names its source (rapl, hwmon, pi5 or meter).

A file without any of these names gives rows that say "unmeasured".
"""

from ...read.energy import FileEnergy, Series, read_file
from .options import SOURCES, Options, nodes_of, parse_options
from .analyse import Result, Row, analyse, per_rank, rep_times
from .output import default_row, buys_columns, frame_rows

__all__ = [
    "SOURCES", "FileEnergy", "Options", "Result", "Row", "Series", "analyse", "buys_columns",
    "default_row", "frame_rows", "nodes_of", "parse_options", "per_rank", "read_file",
    "rep_times",
]
