"""wulfbench analysis: read `wulfbench/1` HDF5 result files, derive tables,
figures, a latency-bandwidth and compute-cost model, and write a report.

Modules:
    reader  opening result files (forked, damage-safe) into plain dataclasses; schema checks
    stats   median confidence intervals, CV, speedup, efficiency, Karp-Flatt, crossover
    model   Hockney alpha-beta fit, compute-cost fit, forecast for 1..64 nodes
    tables  the report's tables as plain rows (shared by HTML, Markdown and CSV)
    plots   matplotlib figures (Agg backend)
    report  the command line: `python3 -m analysis.report FILES... -o DIR`
    scaling the measured scaling figure: one point at several node or rank counts
    compare two runs side by side: `python3 -m analysis.compare A.h5 B.h5`
    frames  tidy pandas DataFrames of a result file (optional; needs pandas)
"""

SCHEMA = "wulfbench/1"
