"""wulfbench analysis: read `wulfbench/1` HDF5 result files, derive tables,
figures, a latency-bandwidth and compute-cost model, and write a report.

Read:
    reader        finding, checking and opening result files (forked, damage-safe open_run; open_h5)
    runs          the typed runs the reader returns (Run, FftPoint, TransferTest, PairsAll, LoadStep)
    h5groups      value-checked reading of one HDF5 object
    point_detail  a run's optional per-point and per-test detail
    health, readiness, netfaults   warnings from the health record, /hosts, network counters
Derive:
    stats         median confidence intervals, CV, speedup, efficiency, Karp-Flatt, crossover
    derive        per-point reductions (package: base, speedups, transfer, load_steps)
    model         Hockney alpha-beta and compute-cost fits, held-out check, forecast (fit, check)
    energy        energy and cost per request (read, analyse, output); meter: meter logs
    buys          "What the cluster buys"
    findings      the report's derive stage: everything the page shows, in one frozen Findings
                  (package: one module per section's figures, tables and lines)
Render:
    tables        the report's tables as plain rows (built by findings), human and CSV (base, runs,
                  speedups, transfer, fit)
    plots         matplotlib figures, Agg backend (base, fft, net, fit)
    document      the document model: Report, Section
    sections      one module per section, only formatting Findings into a Report (figures drawn
                  from its numbers)
    render_html, render_md   the page and summary.md
Commands:
    report        `python3 -m analysis.report FILES... -o DIR` (cliutil: what the commands share)
    compare       two runs side by side: `python3 -m analysis.compare A.h5 B.h5`
    scaling       the measured scaling figure: one point at several node or rank counts
    drift         a machine's speed change between two baseline runs
    frames        tidy pandas DataFrames of a result file (optional; needs pandas)
"""

SCHEMA = "wulfbench/1"
