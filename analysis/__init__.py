"""wulfbench analysis: read `wulfbench/1` HDF5 result files, derive tables, figures, a
latency-bandwidth and compute-cost model, and write a report.

One folder per stage, lowest first; a stage imports only itself and the stages below it, and only
read/ opens a result file (tests/analysis/test_stage_imports.py):
    read        reader (open_run, in_child: every file read in a forked child; open_h5), runs,
                h5groups, point_detail, records, energy (/power), meter (meter logs)
    derive      stats, the per-point reductions (base, speedups with ratio_ci, transfer, load_steps),
                hardware, scaling, drift, model (fit, check), energy (options, analyse, output),
                health, readiness, netfaults, cpushare
    find        derive_findings: everything the page shows, in one frozen Findings (one module per
                section's figures), tables (the tables as rows), buys ("What the cluster buys")
    render      plots (matplotlib, Agg), document (Report, Section), sections (only formatting
                Findings), html and md (the page and summary.md)
    commands    report, compare, scaling, drift, frames (pandas DataFrames), cliutil
The command lines keep their paths: `python3 -m analysis.report FILES... -o DIR`, analysis.compare,
analysis.scaling, analysis.drift, and `from analysis import frames` hand over to commands/.
"""

SCHEMA = "wulfbench/1"
