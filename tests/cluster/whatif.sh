#!/usr/bin/env bash
# tests/cluster/whatif.sh: "What an upgrade buys" against the real thing on the emulated cluster. Each
# prediction is made from runs that never saw the configuration it predicts, then that configuration
# is run and the two compared: within 15 % and inside the prediction's own interval.
set -uo pipefail

usage() {
    cat <<'EOF'
Usage: bash tests/cluster/whatif.sh

Five predictions, each then measured (short sweeps: fft --sweep files --files 1,4,16, 5 reps):
  link:      measured at --link pi3 on 2 and 4 nodes (bridge), --link 1gbit at 4 nodes: the
             nodes share this machine, whose CPU carries their links at a rate no run measured,
             so the row must say so and show no figure (checked), then 4 nodes run at --link pi4;
  link-from: the same, with the link of a transfer run on 2 pi4 nodes (--link-from): its α, β at
             its largest message, and how far its two directions overlap, from bibw beside bw at
             that size and at the request's chunks (halfway between); the nodes share this
             machine, whose CPU carries both directions, so the interval reaches them added. The
             same commands measured 95-128 ms between runs, so a miss beyond 15 % inside that
             interval is printed as a known miss, not a failure (docs/comparison.md);
  compute:   measured at --cpu-share 0.25 on 2 nodes (no link shaping, --result peaks, requests of
             4, 16 and 64 files: work under the quota's 1 ms slot escapes it), predict
             with --compute a --baseline run made in a node at --cpu-share 0.5, then run 2 nodes
             at 0.5 (0.5 -> 1.0 would ask two nodes for a full core each of this 2-core machine);
             each side five times, in turn, its runs pooled (the same request at a quota moved
             by a tenth between runs);
  disk:      measured with pi1's disk at --disk sd-a1 (2 nodes, no CPU quota: a quota's slots run a
             decode after a slow read at full speed and after a fast one at the quota), requests of 1,
             64 and 256 WAV files of 5 s (113 MB) on it, read cold every repetition (fft --input-cache
             drop, --result peaks); predict with --disk a wulfbench io read test of 128 MiB a rank on
             usb-ssd, then run the same at usb-ssd; the figure is the request with its read, t_read +
             t_total (the emulated disk passes about 100 ms of its rate at once after an idle spell,
             35 MB at usb-ssd, so a request and a read test far larger than that hold the class);
  nodes:     measured on 2 and 4 nodes (pi3, bridge, --cpu-share 0.2), predict 6 nodes (inside
             the range the held-out 4 nodes validated: fit on 2, checked at 4), then run 6.
Prints the table (configuration, predicted [interval], measured, error) and checks each row.
Other jobs share this machine's cores: before and after each set of runs, with nothing of ours
running, 3 s of /proc/stat give the CPUs they took; while they took more than WB_WHATIF_BUSY_CPUS
(default 0.3) the set's rows are printed as SKIP with that figure and their own, neither passed
nor failed, since the runs then measured those jobs too.
Needs root; takes /tmp/wb-emulator.lock itself around its use of the emulated cluster (unless a
process it descends from holds it), waiting while another user has it. Prints uptime first and
last, and "N passed, N failed" last; exits 1 if anything failed.
Environment: WB_WHATIF_SETS (default "link compute disk nodes": the sets to run and check; make
test-cluster runs "link nodes", the two whose rows hold run after run, docs/testing.md),
WB_BIN (default build/wulfbench), PYTHON (default /usr/bin/python3),
WB_WHATIF_KEEP=DIR keeps the result files there, WB_WHATIF_FROM=DIR uses files kept that way
instead of running the emulator (the checks only; the load figures are then unknown).
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

sets=${WB_WHATIF_SETS:-link compute disk nodes}
for one in $sets; do
    [[ $one =~ ^(link|compute|disk|nodes)$ ]] ||
        { echo "whatif.sh: WB_WHATIF_SETS: unknown set '$one'; choose from link, compute, disk, nodes" >&2; exit 2; }
done
# wants SET: whether SET is among those to run and check.
wants() { [[ " $sets " == *" $1 "* ]]; }

export OMPI_ALLOW_RUN_AS_ROOT=1 OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1
bin=${WB_BIN:-$repo/build/wulfbench}
export WB_BIN=$bin
sweep=(fft --sweep files --files 1,4,16 --file-seconds 5 --reps 5 --plan estimate -q)
compute_runs=5  # runs of each side of the compute set, pooled
probe=(transfer --tests pingpong,bw --pairs first -m 8,64k,1M -i 10 --window 4 -q)
# the link a --link-from is taken from: bibw beside bw too, for how far its directions overlap
probe_both=(transfer --tests pingpong,bw,bibw --pairs first -m 8,64k,1M -i 20 --window 4 -q)

lock=/tmp/wb-emulator.lock
# held_above: whether a process this script descends from holds $lock (flock ... make ...).
held_above() {
    local inode pid holders
    inode=$(stat -c %i "$lock" 2>/dev/null) || return 1
    holders=$(awk -v i="$inode" '$2 == "FLOCK" { split($6, f, ":"); if (f[3] == i) print $5 }' /proc/locks)
    pid=$$
    while [[ -n $pid && $pid -gt 1 ]]; do
        grep -qx "$pid" <<<"$holders" && return 0
        pid=$(awk '{ print $4 }' "/proc/$pid/stat" 2>/dev/null)
    done
    return 1
}

# others_busy: CPUs busy over 3 s while nothing of ours runs (user, system, irq, steal).
others_busy() {
    local a b
    a=$(awk '/^cpu / { print $2 + $3 + $4 + $7 + $8 + $9, $5 + $6 }' /proc/stat)
    sleep 3
    b=$(awk '/^cpu / { print $2 + $3 + $4 + $7 + $8 + $9, $5 + $6 }' /proc/stat)
    awk -v a="$a" -v b="$b" -v hz="$(getconf CLK_TCK)" 'BEGIN { split(a, x); split(b, y);
        printf "%.2f", (y[1] - x[1]) / hz / 3 }'
}
declare -A busy_of
# window SET: the larger of the CPUs others took before and after SET's runs.
window() { busy_of[$1]=$(awk -v a="${busy_of[$1]:-0}" -v b="$(others_busy)" 'BEGIN { print (a > b ? a : b) }'); }

measure() {
    [[ $(id -u) -eq 0 ]] || abort "needs root: network namespaces"
    [[ -x $bin ]] || abort "no $bin; run make first"
    if ! held_above; then
        exec 9>>"$lock"
        flock -n 9 || { echo "waiting for $lock (another user of the emulated cluster)"; flock 9; }
    fi
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
    if wants link; then
        window link
        up 4 --link pi3
        for n in 2 4; do run "$n" "link-pi3-n$n.h5" "${sweep[@]}" --link-rate 12.5MB --label "pi3 n$n"; done
        run 2 link-pi3-probe.h5 "${probe[@]}" --label "pi3 probe"
        "$cluster" down >/dev/null 2>&1
        up 4 --link pi4
        run 2 link-pi4-probe.h5 "${probe_both[@]}" --label "pi4 probe"
        run 4 link-pi4-n4.h5 "${sweep[@]}" --link-rate 125MB --label "pi4 n4"
        "$cluster" down >/dev/null 2>&1
        window link
    fi

    if wants compute; then
        window compute
        # Requests of 4 to 64 files: the quota is handed out in slots of 1 ms of CPU (the kernel's
        # smallest), and a rank with less work than that runs at full speed (1,4,16 files read 1.6 ms a
        # file from 1 to 4 and 2.5 from 4 to 16 at --cpu-share 0.25).
        local csweep=("${sweep[@]}")
        csweep[4]=4,16,64
        # The same request at a quota moves by a tenth between runs (how the two nodes' quota
        # periods fall against each other while one waits on the other), so each side is run
        # three times, the two sides in turn, and the what-if and the truth pool their runs.
        for ((k = 1; k <= compute_runs; k++)); do
            up 2 --cpu-share 0.25
            run 2 "cpu-slow-n2-$k.h5" "${csweep[@]}" --result peaks --label "slow n2"
            ((k > 1)) || run 2 cpu-slow-probe.h5 "${probe[@]}" --label "slow probe"
            "$cluster" down >/dev/null 2>&1
            up 2 --cpu-share 0.5
            ((k > 1)) || run 1 cpu-fast-baseline.h5 "${csweep[@]}" --result peaks --baseline --label "fast baseline"
            run 2 "cpu-fast-n2-$k.h5" "${csweep[@]}" --result peaks --label "fast n2"
            "$cluster" down >/dev/null 2>&1
        done
        window compute
    fi

    if wants disk; then
        window disk
        # The request's files on pi1's own disk, read cold every repetition (--input-cache drop).
        wavs() {
            "$cluster" exec pi1 -- sh -c 'mkdir -p /disk/wav && for i in $(seq 1 256); do
                sox -n -r 44100 -b 16 -c 1 /disk/wav/w$i.wav synth 5 sine $((300 + 10 * i)) || exit 1; done; sync' \
                >"$tmp/wav.log" 2>&1 || { indent <"$tmp/wav.log"; abort "sox in pi1"; }
        }
        local disk_sweep=(fft --input /disk/wav --input-cache drop --sweep files --files 1,64,256 --file-seconds 5
                          --result peaks --reps 5 --plan estimate -q)
        up 2 --disk sd-a1
        wavs
        run 2 disk-sd-n2.h5 "${disk_sweep[@]}" --label "sd-a1 n2"
        run 2 disk-sd-probe.h5 "${probe[@]}" --label "sd-a1 probe"
        "$cluster" down >/dev/null 2>&1
        up 2 --disk usb-ssd
        wavs
        # After an idle spell the block throttle passes a slice of its rate at once (7 MB at usb-ssd read
        # at 700-900 MB/s), so the read test and the request are both far larger than that slice.
        run 2 disk-usb-io.h5 io --dir /disk --tests read --size 128M --reps 5 -q --label "usb-ssd io"
        run 2 disk-usb-n2.h5 "${disk_sweep[@]}" --label "usb-ssd n2"
        "$cluster" down >/dev/null 2>&1
        window disk
    fi

    if wants nodes; then
        window nodes
        up 6 --link pi3 --cpu-share 0.2
        for n in 2 4 6; do run "$n" "nodes-n$n.h5" "${sweep[@]}" --link-rate 12.5MB --label "nodes n$n"; done
        run 2 nodes-probe.h5 "${probe[@]}" --label "nodes probe"
        "$cluster" down >/dev/null 2>&1
        window nodes
    fi
    if [[ -n ${WB_WHATIF_KEEP:-} ]]; then
        mkdir -p "$WB_WHATIF_KEEP" && cp "$out"/*.h5 "$WB_WHATIF_KEEP"/
    fi
}

echo "uptime before: $(uptime)"
if [[ -n ${WB_WHATIF_FROM:-} ]]; then
    out=$WB_WHATIF_FROM
    tmp=$(mktemp -d /tmp/wb-whatif.XXXXXX)
    trap 'rm -rf "$tmp"' EXIT
else
    measure
fi
echo "uptime after:  $(uptime)"
limit=${WB_WHATIF_BUSY_CPUS:-0.3}
skipped=0

# predict KIND LABEL SET TRUTH.h5[,TRUTH.h5...] WHATIF-ARGS...: one row of the table from analysis.whatif's
# CSV (the largest request) against the truth runs' median time per request at that request, their
# repetitions pooled. KIND figure:
# within 15 % and inside the interval; known: the same, but a miss inside the interval is a known
# miss; refused: no figure, and the row says the nodes share one machine. SET names the load window.
predict() {
    local kind=$1 label=$2 set=$3 truth=$out/${4//,/,$out/} rc
    shift 4
    if ! (cd "$repo" && "$python" -m analysis.whatif "$@" --csv "$tmp/$label.csv") >"$tmp/$label.log" 2>&1; then
        indent <"$tmp/$label.log"
        fail "$label: analysis.whatif $*"
        return
    fi
    indent <"$tmp/$label.log"
    "$python" - "$tmp/$label.csv" "$truth" "$label" "$kind" >"$tmp/check.log" 2>&1 <<'EOF'
import csv, sys
from pathlib import Path
sys.path.insert(0, ".")
from analysis.read.reader import open_run
from analysis.derive import stats
rows = list(csv.DictReader(open(sys.argv[1], newline="")))
row = max(rows, key=lambda r: float(r["now_s"]))
label, kind = sys.argv[3], sys.argv[4]
samples = []
for truth in sys.argv[2].split(","):  # runs of the truth's configuration: their repetitions pooled
    run = open_run(Path(truth))
    pts = [p for p in run.points if p.scenario == "files"]
    want = max(pts, key=lambda p: p.nfiles)
    # a disk change adds the read of the request's files to it: now and measured are t_read + t_total
    samples += list(want.times["t_total"] + (want.times["t_read"] if label == "disk" else 0))
measured = stats.nanmedian(samples)
if kind == "refused":
    print(f"{label:9s} {row['request']:22s} predicted        – (not shown)  measured {measured * 1e3:8.1f} ms"
          f"  {row['limited_by'][:90]}")
    sys.exit(4 if not row["predicted_s"] and "share one machine" in row["limited_by"] else 1)
assert row["predicted_s"], "no prediction shown as a figure: " + row["limited_by"]
pred, lo, hi = (float(row[k]) for k in ("predicted_s", "ci_low_s", "ci_high_s"))
err = pred / measured - 1
inside = lo <= measured <= hi
print(f"{label:9s} {row['request']:22s} predicted {pred * 1e3:8.1f} ms [{lo * 1e3:.1f}, {hi * 1e3:.1f}]"
      f"  measured {measured * 1e3:8.1f} ms  error {100 * err:+5.1f} %  {'inside' if inside else 'OUTSIDE'}"
      f"  limited by {row['limited_by']}")
if abs(err) <= 0.15 and inside:
    sys.exit(0)
sys.exit(3 if kind == "known" and inside else 1)
EOF
    rc=$?
    local busy=${busy_of[$set]:-} row
    row=$(tail -1 "$tmp/check.log")
    if [[ $kind != refused && -n $busy ]] && awk -v b="$busy" -v l="$limit" 'BEGIN { exit !(b > l) }'; then
        # a hit proves no more than a miss when other jobs had the cores
        echo "SKIP: $label: other jobs took $busy CPUs of $(nproc) around these runs (over $limit): $row"
        skipped=$((skipped + 1))
        return
    fi
    case $rc in
        0 | 4) pass "$label: $row" ;;
        3) echo "KNOWN MISS: $label: $row (inside its interval)" ;;
        *) indent <"$tmp/check.log"; fail "$label${busy:+ (other jobs: $busy CPUs)}" ;;
    esac
}

echo "other jobs' CPUs around each set: link ${busy_of[link]:-?}, compute ${busy_of[compute]:-?}, disk ${busy_of[disk]:-?}, nodes ${busy_of[nodes]:-?}"
wants link && predict refused link link link-pi4-n4.h5 "$out/link-pi3-n2.h5" "$out/link-pi3-n4.h5" "$out/link-pi3-probe.h5" --link 1gbit
wants link && predict known link-from link link-pi4-n4.h5 "$out/link-pi3-n2.h5" "$out/link-pi3-n4.h5" "$out/link-pi3-probe.h5" \
    --link-from "$out/link-pi4-probe.h5"
if wants compute; then
    fast=$(seq -f "cpu-fast-n2-%g.h5" -s, "$compute_runs")
    mapfile -t slow < <(seq -f "$out/cpu-slow-n2-%g.h5" "$compute_runs")
    predict figure compute compute "$fast" "${slow[@]}" "$out/cpu-slow-probe.h5" --compute "$out/cpu-fast-baseline.h5"
fi
wants disk && predict figure disk disk disk-usb-n2.h5 "$out/disk-sd-n2.h5" "$out/disk-sd-probe.h5" --disk "$out/disk-usb-io.h5"
wants nodes && predict figure nodes nodes nodes-n6.h5 "$out/nodes-n2.h5" "$out/nodes-n4.h5" "$out/nodes-probe.h5" --nodes 6
((skipped)) && echo "$skipped skipped (other jobs took more than $limit CPUs)"
finish
