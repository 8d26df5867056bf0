#!/usr/bin/env bash
# A partitioned node on the emulated cluster: the whole job, launcher included, ends with exit 4
# within 30 s of the fault, names the node, keeps the points it finished, and leaves no process.
set -uo pipefail

usage() {
    cat <<'EOF'
Usage: bash tests/cluster/netfault.sh

Bring up 4 emulated nodes on the serial switch with Pi 3 links (cluster up 4 --link pi3
--switch serial), start 'wulfbench fft --sweep files --files 1:64 --stall-timeout 20' on them,
and once the first point is in the file take pi3's link down for 60 s
(ip netns exec pi3 ip link set eth0 down, then up). Checks: the launcher returns 4 within 30 s
of the fault, with no backtrace; the error line names pi3 with its rank; the result file is
closed as 'timeout' and every point in it reads; no wulfbench rank is left 35 s after the fault,
and no process at all (daemon or rank) in any node within 150 s of the link coming back. Then takes the
cluster down. Run it under the cluster lock:

  flock /tmp/wb-cluster.lock bash tests/cluster/netfault.sh

Runs 'cluster run' when jobs/emulate/cluster launches through wb_launch (jobs/lib.sh), else
the same mpirun line through wb_launch and 'cluster exec pi1'. Needs root. Prints
"N passed, N failed" last; exits 1 if anything failed.

Environment:
  WB_BIN      wulfbench binary (default: build/wulfbench)
  WB_CLUSTER  the cluster script (default: jobs/emulate/cluster)
  PYTHON      Python with h5py (default: /usr/bin/python3)
EOF
}
repo=$(cd "$(dirname "${BASH_SOURCE[0]}")/../.." && pwd)
cluster=${WB_CLUSTER:-$repo/jobs/emulate/cluster}
bin=${WB_BIN:-$repo/build/wulfbench}
python=${PYTHON:-/usr/bin/python3}
# shellcheck source=tests/harness.sh
source "$repo/tests/harness.sh"
harness_args "$@"
wb_name=netfault
# shellcheck source=jobs/lib.sh
source "$repo/jobs/lib.sh"

[[ $(id -u) -eq 0 ]] || { echo "tests/cluster/netfault: needs root (network namespaces)" >&2; exit 1; }
[[ -x $bin ]] || { echo "tests/cluster/netfault: no $bin: run make first" >&2; exit 1; }

tmp=$(mktemp -d "${TMPDIR:-/tmp}/wb-netfault.XXXXXX")
run_pid="" up_pid=""
cleanup() {
    [[ -n $up_pid ]] && kill "$up_pid" 2>/dev/null
    [[ -n $run_pid ]] && kill -KILL "$run_pid" 2>/dev/null
    "$cluster" down >/dev/null 2>&1
    rm -rf "$tmp"
}
trap cleanup EXIT

# h5 PATH: "STATUS POINTS READABLE" of a result file (READABLE: groups under /fft whose t_total reads).
h5() {
    "$python" - "$1" <<'EOF'
import sys, h5py
with h5py.File(sys.argv[1], "r", locking=False) as f:
    pts = f.get("fft", {})
    # A point cut off part-way may have left a group without its datasets; count the complete ones.
    ok = sum(1 for k in pts if "t_total" in pts[k] and pts[k]["t_total"][()].size > 0)
    print(f.attrs.get("status", "?"), int(f.attrs.get("points_completed", 0)), ok)
EOF
}

# The processes in node NS other than its holder (the namespace's 'sleep infinity').
node_procs() {
    local p
    for p in $(ip netns pids "$1" 2>/dev/null); do
        [[ $(cat "/proc/$p/comm" 2>/dev/null) == sleep ]] || printf '%s(%s) ' "$p" "$(cat "/proc/$p/comm" 2>/dev/null)"
    done
}

if ! "$cluster" up 4 --link pi3 --switch serial >"$tmp/up.log" 2>&1; then
    fail "cluster up 4 --link pi3 --switch serial: $(tail -1 "$tmp/up.log")"
    finish
    exit 1
fi
out=$tmp/p.h5
wb=(fft --sweep files --files 1:64 --stall-timeout 20 -o "$out")
if grep -q WB_EXIT_NOTE "$cluster"; then
    launch=("$cluster" run --np 4 -- "${wb[@]}")
else
    # What 'cluster run' runs, through the launch guard of the job scripts.
    export OMPI_ALLOW_RUN_AS_ROOT=1 OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1
    launch=(wb_launch "$cluster" exec pi1 -- mpirun --hostfile "$("$cluster" hostfile)" --map-by node -np 4
        -x WB_EXIT_NOTE -x OMPI_ALLOW_RUN_AS_ROOT -x OMPI_ALLOW_RUN_AS_ROOT_CONFIRM "$bin" "${wb[@]}")
fi
"${launch[@]}" >"$tmp/out" 2>"$tmp/err" </dev/null &
run_pid=$!

for _ in $(seq 1 600); do
    [[ -f $out.partial ]] && read -r _ points _ < <(h5 "$out.partial" 2>/dev/null) && ((points >= 1)) && break
    kill -0 "$run_pid" 2>/dev/null || break
    sleep 0.1
done
read -r _ before _ < <(h5 "$out.partial" 2>/dev/null || echo "? 0 0")
if ((before < 1)); then
    fail "no point was flushed before the fault: $(tail -3 "$tmp/err")"
    finish
    exit 1
fi
t_fault=$(date +%s.%N)
ip netns exec pi3 ip link set eth0 down
(sleep 60 && ip netns exec pi3 ip link set eth0 up) &
up_pid=$!

rc=""
while kill -0 "$run_pid" 2>/dev/null; do
    if (($(echo "$(date +%s.%N) - $t_fault > 45" | bc))); then
        rc=hang
        break
    fi
    sleep 0.2
done
took=$(echo "$(date +%s.%N) - $t_fault" | bc)
if [[ $rc == hang ]]; then
    fail "the launcher had not returned 45 s after the fault"
    kill -KILL "$run_pid" 2>/dev/null
fi
wait "$run_pid"
code=$?
run_pid=""
[[ -z $rc ]] && rc=$code
echo "# fault to launcher exit: $took s (exit $rc)"
if [[ $rc == 4 ]]; then pass "the job exits 4"; else fail "the job exited $rc, not 4: $(tail -3 "$tmp/err")"; fi
if (($(echo "$took < 30" | bc))); then pass "it ended $took s after the fault (< 30)"; else fail "it ended $took s after the fault"; fi
if grep -q "no progress for .*--stall-timeout 20.*rank 2 (pi3)" "$tmp/err"; then
    pass "the error names rank 2 (pi3)"
else
    fail "no error line naming rank 2 (pi3): $(grep -m1 "error" "$tmp/err")"
fi
if grep -qiE "backtrace|PMIx_Finalize|\[ *[0-9]+\] .*\(\+0x" "$tmp/err"; then
    fail "a backtrace on stderr: $(grep -m1 -iE "backtrace|PMIx_Finalize|\(\+0x" "$tmp/err")"
else
    pass "no backtrace"
fi
if [[ -f $out ]] && read -r status points readable < <(h5 "$out"); then
    if [[ $status == timeout ]] && ((points >= before && readable >= points)); then
        pass "the file is closed as timeout with $points points, all readable ($before before the fault)"
    else
        fail "file: status $status, $points points, $readable readable ($before before the fault)"
    fi
else
    fail "no readable $out"
fi

# The cut-off rank ends by its own watchdog (the stall timeout and 7 s).
while (($(echo "$(date +%s.%N) - $t_fault < 35" | bc))); do sleep 0.5; done
left=$(pgrep -af "$out" | grep -v -e pgrep -e netfault || true)
if [[ -z $left ]]; then pass "no wulfbench rank left 35 s after the fault"; else fail "left 35 s after the fault: $left"; fi

wait "$up_pid" 2>/dev/null
up_pid=""
# The cut-off node's daemon learns that mpirun is gone from pi1's next TCP retransmission, which
# backs off while the link is down (about 50 s apart after a minute): allow 150 s.
t_up=$SECONDS
while :; do
    left=""
    for n in pi1 pi2 pi3 pi4; do
        p=$(node_procs "$n")
        [[ -z $p ]] || left+="$n: $p "
    done
    [[ -z $left ]] || ((SECONDS - t_up >= 150)) || { sleep 1; continue; }
    break
done
if [[ -z $left ]]; then
    pass "no process left in any node $((SECONDS - t_up)) s after the link came back"
else
    fail "left 150 s after the link came back: $left"
fi

"$cluster" down >/dev/null 2>&1 || fail "cluster down"
finish
