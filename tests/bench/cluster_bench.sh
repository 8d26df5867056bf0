#!/usr/bin/env bash
# make bench-cluster: figures on the emulated Pi cluster (root, network namespaces, cgroups).
#  1. per link profile: pingpong bandwidth at 2 KiB and 1 MiB between two nodes (both
#     directions of every link shaped), against the line rate; pi3 also with --mtu 500 and
#     with --switch serial (the user-space store-and-forward switch);
#  2. on pi3 links, 2 and 4 nodes, --result spectra and peaks: fft t_total of the 16-file
#     point over the full-duplex bound max(link out, link in) / 12.5 MB/s, for
#     --schedule pipelined and phased side by side (and static, dynamic), medians over runs;
#  3. the forecast check: on pi3 links through the serial switch with --cpu-share, a pingpong
#     across the nodes and the 16-file point at 1, 2, 4 and 8 nodes (kept under
#     $RESULTS/bench-cluster/); the model is fitted on 1, 2, 4 and its error at 8 printed;
#  4. faults in the serial switch (loss on one node, loss on all, a link down 5 s during fft):
#     whether each run completes; --cpu-share: fft of 1 and 2 files in a node against outside.
# Usage: tests/bench/cluster_bench.sh [PROFILE...]   (default: pi3 pi3plus pi4)
# Environment: BENCH_RUNS (runs per figure, default 3), BENCH_CPU_SHARE (default 0.25),
#   BENCH_CPU_LIKE (a --baseline file of a real node: --cpu-like instead of the share),
#   BENCH_QUICK=1 (one run, pi3 only, 2 nodes, forecast at 1 and 2 nodes: a smoke test),
#   BENCH_FORECAST_SWITCH (serial, or bridge for the tbf links), BENCH_ONLY=faults (only part 4),
#   RESULTS (default results), WB_BIN, PYTHON.
set -euo pipefail
cd "$(dirname "$0")/../.."
PYTHON=${PYTHON:-/usr/bin/python3}
[ "$(id -u)" -eq 0 ] || { echo "cluster_bench: needs root (network namespaces, cgroups); run it with sudo" >&2; exit 1; }
CL=jobs/emulate/cluster
runs=${BENCH_RUNS:-3}
share=${BENCH_CPU_SHARE:-0.25}
quick=${BENCH_QUICK:-0}
profiles=("$@")
((${#profiles[@]})) || profiles=(pi3 pi3plus pi4)
fft_nodes=(2 4)
forecast_nodes=(1 2 4 8)
if ((quick)); then
  runs=1 profiles=(pi3) fft_nodes=(2) forecast_nodes=(1 2)
fi
out_dir=${RESULTS:-results}/bench-cluster
tmp=$(mktemp -d)
trap '$CL down >/dev/null 2>&1 || true; rm -rf "$tmp"' EXIT
$CL status >/dev/null 2>&1 && { echo "cluster_bench: an emulated cluster is up; take it down first ($CL down)" >&2; exit 1; }
mkdir -p "$out_dir"

line_rate() { case $1 in pi3) echo 12.5e6 ;; pi3plus) echo 37.5e6 ;; pi4) echo 125e6 ;; esac; }

# bench_faults: issue 25's fault and --cpu-share rows, run last (or alone with BENCH_ONLY=faults).
bench_faults() {
# Issue 25's fault rows that need only the emulator: each one run, on 4 nodes with pi3 links
# through the serial switch; "completes" means exit 0, every point in the file verified and no
# rank left in a node. (Retransmission counts and the partition rows need wulfbench's own part.)
# fault_points FILE: "POINTS VERIFIED" of a result file (fft points, or transfer tests).
fault_points() {
  "$PYTHON" - "$1" <<'PY' 2>/dev/null || echo "0 0"
import sys
import h5py

with h5py.File(sys.argv[1], "r") as f:
    if "fft" in f:
        pts = list(f["fft"].values())
        ok = sum(int(g["verify"].attrs.get("passed", 0)) == 1 for g in pts)
    else:
        pts = [g for g in f["transfer"].values() if isinstance(g, h5py.Group)]
        ok = len(pts)
print(len(pts), ok)
PY
}
# fault_drops: frames the switch's faults dropped so far, all ports.
fault_drops() { awk '!/^#/ && NF >= 14 { n += $13 + $14 } END { print n + 0 }' /run/wulfbench-emulate/switch.stats 2>/dev/null || echo 0; }
# left_ranks: processes in the nodes besides their holders.
left_ranks() {
  local k n=0 holders
  holders=$(awk '{print $4}' /run/wulfbench-emulate/nodes)
  for k in 1 2 3 4; do
    n=$((n + $(ip netns pids "pi$k" 2>/dev/null | grep -cvxF "$holders" || true)))
  done
  echo "$n"
}
# fault_row NAME FAULT_AT_S FAULT_ARGS -- RUN_ARGS...: the run with the fault set FAULT_AT_S
# seconds in (0: before it starts), then cleared; one table row.
fault_row() {
  local name=$1 at=$2 fault=$3 rc=0 t0 t1 d0 out=$tmp/fault-row.h5 pid
  shift 4
  rm -f "$out"
  d0=$(fault_drops)
  t0=$(date +%s.%N)
  # shellcheck disable=SC2086 # NODE SPEC
  ((at > 0)) || $CL fault $fault >/dev/null
  $CL run -- "$@" -q -o "$out" >"$tmp/fault-row.log" 2>&1 &
  pid=$!
  if ((at > 0)); then
    sleep "$at"
    # shellcheck disable=SC2086
    $CL fault $fault >/dev/null
  fi
  wait "$pid" || rc=$?
  t1=$(date +%s.%N)
  sleep 1.1
  $CL fault all clear >/dev/null
  read -r pts ok < <(fault_points "$out")
  local verdict=completes
  ((rc == 0 && pts > 0 && pts == ok)) || verdict=FAILED
  local left
  left=$(left_ranks)
  ((left == 0)) || verdict="$verdict, $left left"
  printf '%-40s %-10s %5s %8.1f %7s %9s %s\n' "$name" "$verdict" "$rc" "$(awk -v a="$t0" -v b="$t1" 'BEGIN { print b - a }')" \
    "$ok/$pts" "$(($(fault_drops) - d0))" "$([[ $rc == 0 ]] || grep -m1 -i 'wulfbench' "$tmp/fault-row.log" || true)"
}

echo
echo "# faults: 4 nodes, pi3 links through the serial switch (--switch serial), one run per row"
printf '%-40s %-10s %5s %8s %7s %9s %s\n' "# fault, run" result exit wall_s ok/pts dropped note
$CL up 4 --link pi3 --switch serial >/dev/null
fault_row "loss 1% on pi3, fft files 1:16" 0 "pi3 loss=0.01" -- fft --sweep files --files 1:16
fault_row "loss 5% on all, transfer pingpong,bw" 0 "all loss=0.05" -- transfer --tests pingpong,bw -m 1,1k,64k,1M
fault_row "pi3 down 5 s (3 s in), fft files 1:16" 3 "pi3 down=5" -- fft --sweep files --files 1:16
$CL down >/dev/null

# --cpu-share: fft of 1 and 2 files inside one node against 1/share x the same outside at
# SCHED_FIFO priority 2 (a full-speed time that other work here cannot slow), alternating.
echo
echo "# --cpu-share $share: fft --sweep files --files 1:2 --reps 20 inside pi1 over 1/$share x outside at SCHED_FIFO (goal 0.8-1.2), $runs pairs"
$CL up 4 --link pi3 --switch serial --cpu-share "$share" >/dev/null
# The share of a core a 0.3 s busy loop gets beside the runs: under about 0.8 the machine is
# busy, and the nodes get less than their share (the ratio rises).
cpu_free() {
  "$PYTHON" -c 'import time
t, c = time.perf_counter(), time.process_time()
while time.process_time() - c < 0.3:
    pass
print(f"{0.3 / (time.perf_counter() - t):.2f}")'
}
free_cpu=()
for r in $(seq 1 "$runs"); do
  free_cpu+=("$(cpu_free)")
  chrt -f 2 "${WB_BIN:-build/wulfbench}" fft --sweep files --files 1:2 --reps 20 --plan estimate -q --force -o "$tmp/share-free-$r.h5" >/dev/null
  $CL exec pi1 -- "$(readlink -f "${WB_BIN:-build/wulfbench}")" fft --sweep files --files 1:2 --reps 20 --plan estimate -q --force \
    -o "$tmp/share-node-$r.h5" >/dev/null
done
free_cpu+=("$(cpu_free)")
$CL down >/dev/null
echo "# a busy loop beside the runs got ${free_cpu[*]} of a core"
"$PYTHON" - "$tmp" "$runs" "$share" <<'PY'
import sys
import h5py
import numpy as np

tmp, runs, share = sys.argv[1], int(sys.argv[2]), float(sys.argv[3])
print(f"{'# files':<8} {'free_ms':>9} {'node_ms':>9} {'ratio':>7} {'mean_ratio':>11}  (ms and ratio: medians over repetitions)")
for point, files in (("p000", 1), ("p001", 2)):
    t = {}
    for kind in ("free", "node"):
        v = []
        for r in range(1, runs + 1):
            with h5py.File(f"{tmp}/share-{kind}-{r}.h5", "r") as f:
                v.extend(np.asarray(f["fft"][point]["t_total"][()]).ravel())
        t[kind] = np.asarray(v)
    free, node = t["free"], t["node"]
    print(f"{files:<8} {np.median(free) * 1e3:9.3f} {np.median(node) * 1e3:9.3f} {np.median(node) * share / np.median(free):7.2f} "
          f"{node.mean() * share / free.mean():11.2f}")
PY
}
if [[ ${BENCH_ONLY:-} == faults ]]; then
  bench_faults
  exit 0
fi

echo "# pingpong between pi1 and pi2, both directions of every link shaped (MB/s = 1e6 B/s)"
printf '%-20s %12s %10s %12s %10s\n' "# link" "2KiB[MB/s]" "x_line" "1MiB[MB/s]" "x_line"
for spec in "${profiles[@]}" "pi3 --mtu 500" "pi3 --switch serial"; do
  # shellcheck disable=SC2086 # "PROFILE [--mtu N | --switch serial]"
  set -- $spec
  [[ " ${profiles[*]} " == *" $1 "* ]] || continue
  $CL up 2 --link "$@" >/dev/null
  rm -f "$tmp"/pp-*.h5
  for r in $(seq 1 "$runs"); do
    $CL run -- transfer --tests pingpong -m 2k,1M -q -o "$tmp/pp-$r.h5" >/dev/null
  done
  $CL down >/dev/null
  "$PYTHON" - "$spec" "$(line_rate "$1")" "$tmp" "$runs" <<'PY'
import sys
import h5py
import numpy as np

spec, rate, tmp, runs = sys.argv[1], float(sys.argv[2]), sys.argv[3], int(sys.argv[4])
bw = {2048: [], 1 << 20: []}
for r in range(1, runs + 1):
    g = h5py.File(f"{tmp}/pp-{r}.h5", "r")["transfer/pingpong"]
    sizes = list(g["bytes"][()])
    b = np.asarray(g["bandwidth_Bps"][()]).reshape(len(sizes), -1)[:, 0]
    for s in bw:
        bw[s].append(b[sizes.index(s)])
small, big = (float(np.median(bw[s])) for s in (2048, 1 << 20))
print(f"{spec:<20} {small / 1e6:12.2f} {small / rate:10.2f} {big / 1e6:12.2f} {big / rate:10.2f}")
PY
done

echo
echo "# fft, 16 files of 5 s, pi3 links: t_total over the full-duplex bound max(out, in) / 12.5 MB/s"
printf '%-6s %-8s %-10s %10s %10s %10s %12s\n' "# nodes" result schedule out_MB in_MB t_total_s "t/bound"
$CL up 4 --link pi3 >/dev/null
for n in "${fft_nodes[@]}"; do
  for result in spectra peaks; do
    # static: the one static schedule of a wulfbench older than pipelined/phased.
    for sched in pipelined phased static dynamic; do
      files=()
      for r in $(seq 1 "$runs"); do
        f=$tmp/fft-$n-$result-$sched-$r.h5
        if $CL run --np "$n" -- fft --sweep files --files 16 --reps 3 --result "$result" \
          --schedule "$sched" -q -o "$f" >"$tmp/fft.log" 2>&1; then
          files+=("$f")
        fi
      done
      if ((${#files[@]} == 0)); then
        printf '%-6s %-8s %-10s %s\n' "$n" "$result" "$sched" "n/a: $(grep -m1 'wulfbench' "$tmp/fft.log" || tail -1 "$tmp/fft.log")"
        continue
      fi
      "$PYTHON" - "$n" "$result" "$sched" "${files[@]}" <<'PY'
import sys
import h5py
import numpy as np

n, result, sched, paths = sys.argv[1], sys.argv[2], sys.argv[3], sys.argv[4:]
rate = 12.5e6
ratios, outs, ins, totals = [], [], [], []
for path in paths:
    with h5py.File(path, "r") as f:
        g = f["fft/p000"]
        if "link_out_bytes" in g.attrs and "link_in_bytes" in g.attrs:
            out, inn = float(g.attrs["link_out_bytes"]), float(g.attrs["link_in_bytes"])
        else:
            # One rank per node, rank 0 on the head: what ranks 1.. got and sent back.
            nranks = int(f.attrs["nranks"])
            bi = np.asarray(g["bytes_in"][()], dtype=float).ravel()
            bo = np.asarray(g["bytes_out"][()], dtype=float).ravel()
            out, inn = float(bi[1:].sum()), float(bo[1:].sum())
            if bi.size != nranks:
                out = float(g.attrs["sent_bytes"]) * (nranks - 1) / nranks
        t = float(np.median(g["t_total"][()]))
        outs.append(out); ins.append(inn); totals.append(t)
        ratios.append(t / (max(out, inn) / rate))
print(f"{n:<6} {result:<8} {sched:<10} {np.median(outs) / 1e6:10.2f} {np.median(ins) / 1e6:10.2f} "
      f"{np.median(totals):10.3f} {np.median(ratios):12.2f}")
PY
    done
  done
done
$CL down >/dev/null

echo
how=(--cpu-share "$share")
[[ -n ${BENCH_CPU_LIKE:-} ]] && how=(--cpu-like "$BENCH_CPU_LIKE")
max_n=${forecast_nodes[-1]}
stamp=$(date -u +%Y%m%dT%H%M%SZ)
# The forecast's links: the serial switch by default, since a token bucket's burst bends the
# pingpong curve that alpha and beta are fitted to (BENCH_FORECAST_SWITCH=bridge for tbf).
fswitch=${BENCH_FORECAST_SWITCH:-serial}
echo "# forecast: pi3 links (--switch $fswitch), ${how[*]}, 16 files at nodes ${forecast_nodes[*]}," \
  "and a pingpong across them -> $out_dir/forecast-pi3_*_$stamp.h5"
$CL up "$max_n" --link pi3 --switch "$fswitch" "${how[@]}" | grep -i 'cpu' || true
fc=("$out_dir/forecast-pi3_transfer_$stamp.h5")
$CL run --np "$max_n" -- transfer --tests pingpong -m 1:1M --label "forecast-pi3 transfer" -q -o "${fc[0]}" >/dev/null
for n in "${forecast_nodes[@]}"; do
  f=$out_dir/forecast-pi3_n${n}_files_$stamp.h5
  $CL run --np "$n" -- fft --sweep files --files 16 --reps 3 --label "forecast-pi3 n$n files" -q -o "$f" >/dev/null
  fc+=("$f")
done
# Fit on every node count but the largest, with alpha and beta from the pingpong; predict the largest.
"$PYTHON" - "${fc[@]}" <<'PY'
import sys
from pathlib import Path

from analysis import derive
from analysis.derive import model
from analysis.read.reader import open_run

transfer, *runs = (open_run(Path(p)) for p in sys.argv[1:])
for run in runs:
    print(f"{model.node_count(run)} node(s): t_total {derive.median_total(run.points[-1]):.3f} s ({run.path})")
val = model.validate([(run, run.points) for run in runs], [transfer])
for pid, meas, pred in val.checks:
    print(f"forecast at {val.held_nodes} nodes ({pid}), fitted on {val.fit_nodes}: predicted {pred:.3f} s, "
          f"measured {meas:.3f} s, error {100 * (pred - meas) / meas:+.1f} % (goal within 15 %)")
if not val.checks:
    print(f"forecast: {val.reason}")
PY
$CL down >/dev/null
bench_faults
