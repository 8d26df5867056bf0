#!/usr/bin/env bash
# How wulfbench's own cost grows with the ranks: a short `wulfbench suite` at 4, 16 and 64 ranks
# (oversubscribed where the machine has fewer cores), and for each the result file's size, rank 0's
# and the largest rank's peak memory (VmHWM, which the file records at close), the wall time outside
# the measured windows (mpirun's, less the windows by the report's rule) and rank 0's split of it, and
# the time and memory the report takes to build. Prints the figures, their
# growth per step and the exponent b of cost ~ ranks^b. Wall times on a shared machine are noisy and
# only printed; the run fails (exit 1) only when the file or rank 0's memory grows faster than
# ranks^1.2, which no other job beside it can cause.
# Knobs: RANKS="4 16 64", KEEP=DIR (keep the files there), REUSE=1 (with KEEP: use its files), MPIEXEC, PYTHON.
set -euo pipefail
cd "$(dirname "$0")/../.."
PYTHON=${PYTHON:-/usr/bin/python3}
MPIEXEC=${MPIEXEC:-mpirun}
RANKS=${RANKS:-"4 16 64"}
if [ "$(id -u)" -eq 0 ]; then
  export OMPI_ALLOW_RUN_AS_ROOT=1 OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1
fi
[ -x build/wulfbench ] || { echo "scale_bench: build/wulfbench is missing; run make first" >&2; exit 1; }
[ -x /usr/bin/time ] || { echo "scale_bench: /usr/bin/time is missing; apt-get install time" >&2; exit 1; }
if [ -n "${KEEP:-}" ]; then
  out=$KEEP
  mkdir -p "$out"
else
  # Not /tmp: the suite's io part refuses a folder in memory, and /tmp may be a tmpfs.
  out=$(mktemp -d build/scale-bench.XXXXXX)
  trap 'rm -rf "$out"' EXIT
fi
echo "# scale_bench: load average $(cut -d' ' -f1-3 /proc/loadavg) on $(nproc) cores before the runs"

for np in $RANKS; do
  # REUSE=1 with KEEP: tabulate the files a run before left there, without running again.
  if [ "${REUSE:-0}" = 1 ] && [ -f "$out/suite-np$np.h5" ] && [ -f "$out/report-time-np$np.txt" ]; then
    continue
  fi
  rm -f "$out/suite-np$np.h5" "$out/suite-np$np.h5.partial"
  # One recorded repetition, no warm-up and no idle-power wait: the suite's shape at a small cost.
  /usr/bin/time -v -o "$out/time-np$np.txt" "$MPIEXEC" --oversubscribe -np "$np" build/wulfbench suite \
    --reps 1 -x 0 --power none --power-idle 0 --quiet -o "$out/suite-np$np.h5" >"$out/stdout-np$np.txt"
  /usr/bin/time -v -o "$out/report-time-np$np.txt" "$PYTHON" -m analysis.report "$out/suite-np$np.h5" \
    -o "$out/report-np$np" >"$out/report-np$np.txt" 2>&1
done

"$PYTHON" - "$out" $RANKS <<'PY'
import math, os, re, sys
from pathlib import Path
sys.path.insert(0, os.getcwd())
from analysis.derive.owntime import own_time
from analysis.read.reader import open_run

out, ranks = Path(sys.argv[1]), [int(v) for v in sys.argv[2:]]

def gnu_time(path):
    """Elapsed seconds and maximum RSS (bytes) from /usr/bin/time -v."""
    text = path.read_text()
    clock = re.search(r"Elapsed \(wall clock\) time \(h:mm:ss or m:ss\): (\S+)", text).group(1)
    secs = 0.0
    for part in clock.split(":"):
        secs = secs * 60 + float(part)
    rss = int(re.search(r"Maximum resident set size \(kbytes\): (\d+)", text).group(1)) * 1024
    return secs, rss

rows = []
for np_ in ranks:
    h5 = out / f"suite-np{np_}.h5"
    wall, _ = gnu_time(out / f"time-np{np_}.txt")
    rep_s, rep_rss = gnu_time(out / f"report-time-np{np_}.txt")
    run = open_run(h5)
    # The windows' rule and the file's own split of its wall time are the report's (analysis/derive/owntime.py).
    own = own_time(run.own)
    rows.append(dict(ranks=np_, points=int(run.attrs["points_completed"]), file=os.path.getsize(h5),
                     rss0=own.rss_rank0_bytes, rssmax=own.rss_max_bytes, wall=wall, windows=own.windows_s,
                     own=wall - own.windows_s, report=rep_s, report_rss=rep_rss, split=own))

print("\n# wulfbench suite --reps 1 -x 0 --power none on %d cores; where the ranks outnumber them, every time"
      " includes the wait for a core, and an all-to-all's p^2 messages run one after another" % os.cpu_count())
print("%6s %6s %12s %12s %12s %9s %10s %9s %10s %13s" % ("ranks", "points", "file_kB", "rss0_MB", "rss_max_MB",
      "wall_s", "windows_s", "own_s", "report_s", "report_rss_MB"))
for r in rows:
    print("%6d %6d %12.1f %12.1f %12.1f %9.1f %10.1f %9.1f %10.1f %13.1f" % (
        r["ranks"], r["points"], r["file"] / 1e3, r["rss0"] / 1e6, r["rssmax"] / 1e6, r["wall"], r["windows"],
        r["own"], r["report"], r["report_rss"] / 1e6))

print("\n# the time outside the windows as rank 0 split it (s): its wall time, from main's entry to the file's"
      " close (mpirun's own start and end are outside it), start-up before the subcommand, FFTW planning, clock"
      " alignment, writing the file, the rest between the windows")
print("%6s %9s %9s %9s %9s %9s %9s" % ("ranks", "wall_s", "startup", "plan", "align", "write", "rest"))
for r in rows:
    o = r["split"]
    print("%6d %9.1f %9.1f %9.1f %9.2f %9.2f %9.1f" % (r["ranks"], o.wall_s, o.startup_s, o.plan_s, o.clock_align_s,
                                                     o.write_s, o.other_s))

keys = [("file", "file size"), ("rss0", "rank 0 peak memory"), ("own", "wall time outside the windows"),
        ("report", "report build time"), ("report_rss", "report peak memory")]
print("\n# growth from one rank count to the next: x = ratio of the figure (ranks ratio beside it);")
print("# per rank and per point = the figure over ranks or points; b = exponent of figure ~ ranks^b")
print("%-30s %-9s %8s %10s %10s %12s %6s  %s" % ("figure", "step", "ranks_x", "x", "per_rank", "per_point",
      "b", "at most linear"))
bad = []
for k, label in keys:
    for lo, hi in zip(rows, rows[1:]):
        rx = hi["ranks"] / lo["ranks"]
        x = hi[k] / lo[k] if lo[k] > 0 else math.nan
        b = math.log(x) / math.log(rx) if x > 0 else math.nan
        pr = (hi[k] / hi["ranks"]) / (lo[k] / lo["ranks"]) if lo[k] > 0 else math.nan
        pp = (hi[k] / hi["points"]) / (lo[k] / lo["points"]) if lo[k] > 0 else math.nan
        linear = "yes" if b <= 1.0 else ("about (noise)" if b <= 1.2 else "NO")
        print("%-30s %-9s %8.1f %10.2f %10.2f %12.2f %6.2f  %s" % (label, "%d->%d" % (lo["ranks"], hi["ranks"]),
              rx, x, pr, pp, b, linear))
        if k in ("file", "rss0") and b > 1.2:
            bad.append("%s grows as ranks^%.2f from %d to %d ranks" % (label, b, lo["ranks"], hi["ranks"]))
if len(rows) >= 2:
    lo, hi = rows[-2], rows[-1]
    print("\n# projected from %d ranks, an extrapolation, not a measurement: linear (the per-rank cost at %d ranks"
          " times the ranks), and with the exponent b of the last step (%d->%d)" % (hi["ranks"], hi["ranks"],
                                                                                 lo["ranks"], hi["ranks"]))
    scale = {"file": (1e3, "kB"), "rss0": (1e6, "MB"), "own": (1, "s"), "report": (1, "s"), "report_rss": (1e6, "MB")}
    for k, label in keys:
        b = max(math.log(hi[k] / lo[k]) / math.log(hi["ranks"] / lo["ranks"]), 0.0)
        div, unit = scale[k]
        for n in (256, 1024):
            print("%-30s at %5d ranks: linear %10.1f %s, ranks^%.2f %10.1f %s" % (
                label, n, hi[k] * n / hi["ranks"] / div, unit, b, hi[k] * (n / hi["ranks"]) ** b / div, unit))
print("\n# load average after the runs: %s" % " ".join(open("/proc/loadavg").read().split()[:3]))
for line in bad:
    print("scale_bench: " + line, file=sys.stderr)
sys.exit(1 if bad else 0)
PY
