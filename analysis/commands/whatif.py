"""What an upgrade buys, as a command: the time per request now and after a change of link, node
count, compute rate or disk (analysis/README.md, "What an upgrade buys").

    /usr/bin/python3 -m analysis.whatif RUN.h5 [RUN.h5 ...] CHANGE... [--csv FILE]
"""

from __future__ import annotations

import re
import sys
from pathlib import Path

import numpy as np

from ..derive import energy, storage
from ..derive.model import fit as model_fit
from ..derive.model import node_count
from ..derive.model import whatif as wm
from ..derive.model import whatif_cpu
from ..find import tables
from ..find import whatif as fw
from ..read.reader import InputError, UsageError, find_result_files, open_run
from ..read.runs import Run, name_runs
from .cliutil import guarded_main, new_parser, prog_name

RATE = re.compile(r"^(\d+(?:\.\d+)?)(k|m|g)bit$", re.IGNORECASE)
UNIT = {"k": 1e3, "m": 1e6, "g": 1e9}


def parse_rate(text: str) -> float:
    """'100mbit', '1gbit', '2.5gbit' in bytes per second; UsageError on anything else."""
    found = RATE.match(text.strip())
    value = float(found.group(1)) * UNIT[found.group(2).lower()] / 8 if found else 0.0
    if not value > 0:
        raise UsageError(f"--link '{text}': not a line rate; give bits per second as "
                         "100mbit, 1gbit or 2.5gbit")
    return value


def rate_words(bps: float) -> str:
    bits = bps * 8
    for unit, name in ((1e9, "Gbit/s"), (1e6, "Mbit/s"), (1e3, "kbit/s")):
        if bits >= unit:
            return f"a {bits / unit:g} {name} link"
    return f"a {bits:g} bit/s link"


def build_parser():
    parser = new_parser(
        "python3 -m analysis.whatif",
        description="What an upgrade buys: for one file, the largest file count measured and the "
                    "load's\nsaturation rate, the time per request now and after each change, "
                    "with a 95 % interval,\nthe ratio to now and what limits it after. A "
                    "prediction is shown only when the model\nheld on the runs' own held-out "
                    "data (docs/comparison.md, 'What an upgrade buys').",
        epilog="Exit status: 0 written; 1 the CSV cannot be written; 2 a bad command line, a "
               "file that\ncannot be used or a change the data cannot support (one line says "
               "what is missing).")
    parser.add_argument("files", nargs="+", metavar="RUN.h5",
                        help="result files of the cluster (fft or suite runs, one kind of node, "
                             "at one or more node counts; transfer runs of the same nodes give "
                             "the link's α–β) or folders holding them; runs of one "
                             "configuration given more than once are pooled")
    parser.add_argument("--link", metavar="RATE",
                        help="the head node's link at RATE: 100mbit, 1gbit, 2.5gbit (bits/s)")
    parser.add_argument("--link-from", metavar="FILE.h5",
                        help="the link of another run's transfer between nodes: its α, β at its "
                             "largest message, and with bibw beside bw how far its two directions "
                             "overlap")
    parser.add_argument("--nodes", metavar="N", type=int, help="N nodes of the same kind")
    parser.add_argument("--compute", metavar="FILE.h5",
                        help="nodes that compute like FILE, another machine's --baseline run")
    parser.add_argument("--disk", metavar="FILE.h5",
                        help="the request's files read at the read rate of FILE, a wulfbench io "
                             "result")
    parser.add_argument("--extrapolate", action="store_true",
                        help="allow --nodes beyond the node counts the held-out check validated "
                             "(with a warning)")
    parser.add_argument("--price", action="append", default=[], metavar="KIND=USD_PER_HOUR",
                        help="price of a node per hour, as the report takes it: $ per request "
                             "now and after")
    parser.add_argument("--kwh-price", metavar="USD", help="electricity price per kWh")
    parser.add_argument("--power-log", action="append", default=[], metavar="NODE=FILE.csv",
                        help="a meter log, as the report takes it: J per request now and after "
                             "(without one, what the run measured in /power)")
    parser.add_argument("--csv", metavar="FILE",
                        help="write the table as CSV (request, change, now_s, predicted_s, "
                             "ci_low_s, ci_high_s, ratio, limited_by, then J and $ when known)")
    parser.add_argument("--force", action="store_true", help="overwrite an existing --csv file")
    return parser


def _open(path: str, flag: str = "") -> Run:
    try:
        run = open_run(find_result_files([path])[0])
        name_runs([run])
        return run
    except InputError as err:
        raise UsageError(f"{flag + ' ' if flag else ''}{err.subject}: {err.what}; {err.todo}") from None


def inter_node(fit: model_fit.RunModel | None, nodes: int) -> bool:
    """Whether the link's α–β came from data that crossed nodes."""
    if fit is None or fit.hockney is None or nodes < 2:
        return False
    return "one node" not in fit.hockney.source


def link_changes(args, b: fw.Basis) -> list[wm.Change]:
    if args.link and args.link_from:
        raise UsageError("--link and --link-from both name the link; give one")
    if args.link is None and args.link_from is None:
        return []
    rate = parse_rate(args.link) if args.link is not None else float("nan")
    if b.model is None or not inter_node(b.model.fit, b.nodes):
        raise UsageError("--link: the runs have no transfer between nodes (no inter-node pairs, "
                         "and no FFT distribution across nodes), so the link's α–β is unknown; "
                         "add a run on 2 or more nodes, e.g. wulfbench transfer --pairs first")
    if args.link is not None:
        recorded = float(b.now.points[0].attrs.get("link_rate_Bps") or 0) if b.now.points else 0.0
        return [wm.link_change(b.model.fit, rate, recorded or None, rate_words(rate), b.cpu)]
    other = _open(args.link_from, "--link-from")
    h, data, _note = model_fit.comm_fit(other)
    if h is None or not inter_node(model_fit.RunModel(other.name, h, None), node_count(other)):
        raise UsageError(f"--link-from {args.link_from}: holds no transfer between nodes "
                         "(pingpong or pairs_all across two nodes); give a wulfbench transfer "
                         "result made on 2 or more nodes")
    h = model_fit.bulk_hockney(h, data)
    shared = whatif_cpu.one_machine(other)
    duplex = model_fit.duplex_share(other)
    lo = hi = float("nan")
    ci = model_fit.rate_ci(other, "pingpong")  # None where β came from pairs_all
    if ci is not None and ci[1] > 0:
        lo, hi = h.beta_Bps * ci[2] / ci[1], h.beta_Bps * ci[3] / ci[1]
    change = wm.Change("link", f"the link of {other.name} (α {tables.fmt_time(h.alpha_s)}, "
                       f"β {tables.fmt_bps(h.beta_Bps)})", rate_Bps=h.beta_Bps, rate_lo_Bps=lo,
                       rate_hi_Bps=hi, hockney=h, shared=shared)
    if duplex is not None:
        change.overlap, change.overlap_lo, change.overlap_hi = duplex.share, duplex.low, duplex.high
        change.overlap_measured = True
        how = (f"both directions at once carried {duplex.bibw_Bps / duplex.bw_Bps:.2f}× one at "
               f"{tables.fmt_bytes(duplex.size)} (bibw {tables.fmt_bps(duplex.bibw_Bps)} against bw "
               f"{tables.fmt_bps(duplex.bw_Bps)}), so the second overlaps the first by "
               f"{100 * duplex.share:.0f} % [{100 * duplex.low:.0f}, {100 * duplex.high:.0f}]")
        # The request sends its bytes as chunks, back to back: messages of the chunk's size, and a
        # stream like the largest. Where bibw overlapped its directions differently at the two, the
        # request lies between: halfway, with the interval reaching both ends.
        chunks = [model_fit.chunk_bytes(pt) for pt in b.now.points]
        msg = float(np.nanmedian(chunks)) if any(np.isfinite(chunks)) else float("nan")
        small = model_fit.duplex_share(other, msg) if np.isfinite(msg) else None
        if small is not None and small.size != duplex.size:
            change.overlap = (duplex.share + small.share) / 2
            change.overlap_lo = min(change.overlap_lo, small.low)
            change.overlap_hi = max(change.overlap_hi, small.high)
            how += (f"; at {tables.fmt_bytes(small.size)}, nearest the request's chunks of "
                    f"{tables.fmt_bytes(msg)}, {100 * small.share:.0f} % [{100 * small.low:.0f}, "
                    f"{100 * small.high:.0f}]: taken halfway, {100 * change.overlap:.0f} %")
    elif shared:
        change.overlap = 0.0
        how = ("its nodes shared one machine, whose CPU carries both directions, so they add (the "
               "interval reaches full overlap; a bibw test beside bw would say how far they overlap)")
    else:
        how = "full duplex (no bibw beside bw to say otherwise)"
    change.source = f"{h.source}; {how}"
    return [change]


def node_change(args, b: fw.Basis, prog: str) -> list[wm.Change]:
    if args.nodes is None:
        return []
    if args.nodes < 1:
        raise UsageError(f"--nodes {args.nodes}: give 1 or more nodes")
    lo, hi = b.check.node_range
    if not lo <= args.nodes <= hi:
        where = (f"the held-out check validated {lo:g} to {hi:g} nodes" if b.check.ok else
                 f"the model is not validated ({b.check.reason})")
        if not args.extrapolate:
            raise UsageError(f"--nodes {args.nodes}: beyond the validated range ({where}); "
                             "measure that node count, or pass --extrapolate to predict anyway")
        print(f"{prog}: warning: --nodes {args.nodes} extrapolates beyond the validated range "
              f"({where}); treat the figures as a guess", file=sys.stderr)
    return [wm.Change("nodes", f"{args.nodes} nodes", nodes=args.nodes)]


def compute_change(args, b: fw.Basis) -> list[wm.Change]:
    if not args.compute:
        return []
    other = _open(args.compute, "--compute")
    if not other.is_baseline:
        raise UsageError(f"--compute {args.compute}: holds no --baseline run (root baseline=1); "
                         "give a file made by wulfbench fft --baseline on the other machine")
    fit = wm.compute_fit(fw.usable_points(other))
    if fit is None:
        raise UsageError(f"--compute {args.compute}: its baseline has no valid FFT point to "
                         "take a compute rate from; rerun wulfbench fft --baseline there")
    return [fw.compute_change(other, fit, b.cpu)]


def disk_change(args) -> list[wm.Change]:
    if not args.disk:
        return []
    if not Path(args.disk).is_file():
        raise UsageError(f"--disk {args.disk}: no such file; give a wulfbench io result")
    try:
        run = open_run(Path(args.disk))
    except InputError as err:
        raise UsageError(f"--disk {err.subject}: {err.what}; {err.todo}") from None
    if run.io is None:
        raise UsageError(f"--disk {args.disk}: has no /io group, so it is no wulfbench io result; "
                         "give the file of wulfbench io --dir on the disk in question")
    rate = storage.read_rate(run)
    if rate is None:
        raise UsageError(f"--disk {args.disk}: holds no successful sequential read test; rerun "
                         "wulfbench io with the read test")
    return [wm.Change("disk", f"a disk that reads at {tables.fmt_bps(rate.Bps)} ({rate.what})",
                      rate_Bps=rate.Bps, rate_lo_Bps=rate.low_Bps, rate_hi_Bps=rate.high_Bps,
                      source=rate.what)]


def print_table(items: list[fw.Row]) -> None:
    head = ("request", "change", "now", "after [95 %]", "ratio", "limited by")
    lines = []
    for r in items:
        after = (f"{tables.fmt_time(r.predicted_s)} [{tables.fmt_time(r.ci_low_s)}, "
                 f"{tables.fmt_time(r.ci_high_s)}]" if np.isfinite(r.predicted_s) else "–")
        ratio = (f"{r.ratio:.3g}× [{r.ratio_lo:.3g}, {r.ratio_hi:.3g}]"
                 if np.isfinite(r.ratio) else "–")
        lines.append((r.request, r.change, tables.fmt_time(r.now_s), after, ratio,
                      r.limited_by or r.why_not))
    widths = [max(len(h), *(len(x[i]) for x in lines)) for i, h in enumerate(head)]
    for line in [head] + lines:
        print("  ".join(c.ljust(w) for c, w in zip(line, widths)).rstrip())


def write_csv(items: list[fw.Row], path: str, force: bool) -> None:
    out = Path(path)
    if out.is_symlink():
        raise UsageError(f"--csv {path}: is a symbolic link; give a plain file name")
    if out.exists() and not force:
        raise UsageError(f"--csv {path}: exists; remove it or pass --force to overwrite it")
    tables.write_csv(fw.table(items), out)


def run(argv: list[str]) -> int:
    prog = prog_name("whatif")
    args = build_parser().parse_args(argv)
    opts = energy.parse_options(args.power_log, args.price, args.kwh_price)
    paths = []
    for item in args.files:
        try:
            paths += find_result_files([item])
        except InputError as err:
            raise UsageError(f"{err.subject}: {err.what}; {err.todo}") from None
    runs = [_open(str(p)) for p in paths]
    name_runs(runs)
    b = fw.basis(runs)
    changes = (link_changes(args, b) + node_change(args, b, prog) + compute_change(args, b)
               + disk_change(args))
    if not changes:
        raise UsageError("no change given: add --link, --link-from, --nodes, --compute or --disk")
    result = energy.analyse(runs, [], opts) if (opts.prices or opts.logs or opts.kwh_price
                                                 is not None or any("power" in r.groups for r in runs)) else None
    extrapolated = args.nodes is not None and not (b.check.node_range[0] <= args.nodes <= b.check.node_range[1])
    items = fw.rows(b, changes, result, extrapolated)
    if args.csv:
        try:
            write_csv(items, args.csv, args.force)
        except OSError as exc:
            print(f"{prog}: --csv {args.csv}: cannot be written ({exc.strerror or exc}); check "
                  "the folder", file=sys.stderr)
            return 1
    print(fw.lead(b))
    print()
    print_table(items)
    print()
    for line in fw.sentences(b, items) + fw.sources(changes):
        print(line)
    return 0


def main(argv: list[str] | None = None) -> int:
    return guarded_main(run, sys.argv[1:] if argv is None else argv, prog_name("whatif"))


if __name__ == "__main__":
    sys.exit(main())
