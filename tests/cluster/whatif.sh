#!/usr/bin/env bash
# tests/cluster/whatif.sh: "What an upgrade buys" against the real thing on the emulated cluster. Each
# prediction is made from runs that never saw the configuration it predicts, then that configuration
# is run and the two compared: within 15 % and inside the prediction's own interval.
set -uo pipefail

usage() {
    cat <<'EOF'
Usage: bash tests/cluster/whatif.sh

Four predictions, each then measured (short sweeps: fft --sweep files --files 1,4,16, 5 reps):
  link:      measured at --link pi3 on 2 and 4 nodes (bridge), predict --link 1gbit at 4 nodes,
             then run 4 nodes at --link pi4;
  link-from: the same, with the α–β of a transfer run on 2 pi4 nodes (--link-from) instead of
             the nominal rate;
  compute:   measured at --cpu-share 0.25 on 2 nodes (no link shaping, --result peaks), predict
             with --compute a --baseline run made in a node at --cpu-share 0.5, then run 2 nodes
             at 0.5 (0.5 -> 1.0 would ask two nodes for a full core each of this 2-core machine);
  nodes:     measured on 2 and 4 nodes (pi3, bridge, --cpu-share 0.2), predict 6 nodes (inside
             the range the held-out 4 nodes validated: fit on 2, checked at 4), then run 6.
Prints the table (configuration, predicted [interval], measured, error) and checks each row.
The emulator shares this machine's cores with whatever else runs: when the load average (the
larger of before and after the runs) exceeds the cores, a miss is printed as SKIP with its
figures instead of failing, since the runs then measured the other jobs (docs/comparison.md).
Needs root; takes the emulated cluster, so run it under flock /tmp/wb-emulator.lock when the
machine is shared. Prints "N passed, N failed" last; exits 1 if anything failed.
Environment: WB_BIN (default build/wulfbench), PYTHON (default /usr/bin/python3),
WB_WHATIF_KEEP=DIR keeps the result files there, WB_WHATIF_FROM=DIR uses files kept that way
instead of running the emulator (the checks only).
EOF
}
repo=$(cd "$(dirname "${BASH_SOURCE[0]}")/../.." && pwd)
cluster=$repo/jobs/emulate/cluster
python=${PYTHON:-/usr/bin/python3}
# shellcheck source=tests/harness.sh
source "$repo/tests/harness.sh"
harness_args "$@"
indent() { sed 's/^/    | /' | tail -n 20; }
abort() { echo "FAIL: $*"; failed=$((failed + 1)); finish; exit 1; }

export OMPI_ALLOW_RUN_AS_ROOT=1 OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1
bin=${WB_BIN:-$repo/build/wulfbench}
export WB_BIN=$bin
sweep=(fft --sweep files --files 1,4,16 --file-seconds 5 --reps 5 --plan estimate -q)
probe=(transfer --tests pingpong,bw --pairs first -m 8,64k,1M -i 10 --window 4 -q)

measure() {
    [[ $(id -u) -eq 0 ]] || abort "needs root: network namespaces"
    [[ -x $bin ]] || abort "no $bin; run make first"
    cluster_suite_start wb-whatif
    out=$tmp
    local n
    up() { "$cluster" up "$@" >"$tmp/up.log" 2>&1 || { indent <"$tmp/up.log"; abort "cluster up $*"; }; }
    run() {
        local np=$1 file=$2
        shift 2
        "$cluster" run --np "$np" -- "$@" -o "$out/$file" >"$tmp/run.log" 2>&1 ||
            { indent <"$tmp/run.log"; fail "$file: wulfbench $*"; }
    }
    up 4 --link pi3
    for n in 2 4; do run "$n" "link-pi3-n$n.h5" "${sweep[@]}" --link-rate 12.5MB --label "pi3 n$n"; done
    run 2 link-pi3-probe.h5 "${probe[@]}" --label "pi3 probe"
    "$cluster" down >/dev/null 2>&1
    up 4 --link pi4
    run 2 link-pi4-probe.h5 "${probe[@]}" --label "pi4 probe"
    run 4 link-pi4-n4.h5 "${sweep[@]}" --link-rate 125MB --label "pi4 n4"
    "$cluster" down >/dev/null 2>&1

    up 2 --cpu-share 0.25
    run 2 cpu-slow-n2.h5 "${sweep[@]}" --result peaks --label "slow n2"
    run 2 cpu-slow-probe.h5 "${probe[@]}" --label "slow probe"
    "$cluster" down >/dev/null 2>&1
    up 2 --cpu-share 0.5
    run 1 cpu-fast-baseline.h5 "${sweep[@]}" --result peaks --baseline --label "fast baseline"
    run 2 cpu-fast-n2.h5 "${sweep[@]}" --result peaks --label "fast n2"
    "$cluster" down >/dev/null 2>&1

    up 6 --link pi3 --cpu-share 0.2
    for n in 2 4 6; do run "$n" "nodes-n$n.h5" "${sweep[@]}" --link-rate 12.5MB --label "nodes n$n"; done
    run 2 nodes-probe.h5 "${probe[@]}" --label "nodes probe"
    "$cluster" down >/dev/null 2>&1
    if [[ -n ${WB_WHATIF_KEEP:-} ]]; then
        mkdir -p "$WB_WHATIF_KEEP" && cp "$out"/*.h5 "$WB_WHATIF_KEEP"/
    fi
}

load_now() { cut -d' ' -f1 /proc/loadavg; }
load_before=$(load_now)
if [[ -n ${WB_WHATIF_FROM:-} ]]; then
    out=$WB_WHATIF_FROM
    tmp=$(mktemp -d /tmp/wb-whatif.XXXXXX)
    trap 'rm -rf "$tmp"' EXIT
else
    measure
fi

load_after=$(load_now)
cores=$(nproc)
busy=$(awk -v a="$load_before" -v b="$load_after" -v c="$cores" 'BEGIN { m = a > b ? a : b; if (m > c) print m }')
skipped=0

# predict LABEL TRUTH.h5 WHATIF-ARGS...: one row of the table from analysis.whatif's CSV (the
# largest request), checked against TRUTH's median time per request at that request.
predict() {
    local label=$1 truth=$2
    shift 2
    if ! (cd "$repo" && "$python" -m analysis.whatif "$@" --csv "$tmp/$label.csv") >"$tmp/$label.log" 2>&1; then
        indent <"$tmp/$label.log"
        fail "$label: analysis.whatif $*"
        return
    fi
    indent <"$tmp/$label.log"
    if "$python" - "$tmp/$label.csv" "$out/$truth" "$label" >"$tmp/check.log" 2>&1 <<'EOF'; then
import csv, sys
from pathlib import Path
sys.path.insert(0, ".")
from analysis.read.reader import open_run
from analysis.derive import stats
rows = [r for r in csv.DictReader(open(sys.argv[1], newline="")) if r["predicted_s"]]
assert rows, "no prediction shown as a figure"
row = max(rows, key=lambda r: float(r["now_s"]))
run = open_run(Path(sys.argv[2]))
pts = [p for p in run.points if p.scenario == "files"]
want = max(pts, key=lambda p: p.nfiles)
measured = stats.nanmedian(want.times["t_total"])
pred, lo, hi = (float(row[k]) for k in ("predicted_s", "ci_low_s", "ci_high_s"))
err = pred / measured - 1
inside = lo <= measured <= hi
print(f"{sys.argv[3]:8s} {row['request']:22s} predicted {pred * 1e3:8.1f} ms [{lo * 1e3:.1f}, {hi * 1e3:.1f}]"
      f"  measured {measured * 1e3:8.1f} ms  error {100 * err:+5.1f} %  {'inside' if inside else 'OUTSIDE'}"
      f"  limited by {row['limited_by']}")
assert abs(err) <= 0.15, f"error {100 * err:+.1f} % beyond 15 %"
assert inside, "the measurement lies outside the prediction's interval"
EOF
        pass "$label: $(tail -1 "$tmp/check.log")"
    elif [[ -n $busy ]]; then
        indent <"$tmp/check.log"
        echo "SKIP: $label: load average $busy on $cores cores, the runs measured other jobs too"
        skipped=$((skipped + 1))
    else
        indent <"$tmp/check.log"
        fail "$label"
    fi
}

predict link link-pi4-n4.h5 "$out/link-pi3-n2.h5" "$out/link-pi3-n4.h5" "$out/link-pi3-probe.h5" --link 1gbit
predict link-from link-pi4-n4.h5 "$out/link-pi3-n2.h5" "$out/link-pi3-n4.h5" "$out/link-pi3-probe.h5" \
    --link-from "$out/link-pi4-probe.h5"
predict compute cpu-fast-n2.h5 "$out/cpu-slow-n2.h5" "$out/cpu-slow-probe.h5" --compute "$out/cpu-fast-baseline.h5"
predict nodes nodes-n6.h5 "$out/nodes-n2.h5" "$out/nodes-n4.h5" "$out/nodes-probe.h5" --nodes 6
((skipped)) && echo "$skipped skipped (load average $busy on $cores cores)"
finish
