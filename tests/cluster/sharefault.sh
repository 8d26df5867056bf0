#!/usr/bin/env bash
# tests/cluster/sharefault.sh: the shared folder's server goes away in the middle of 'wulfbench io'.
set -uo pipefail

usage() {
    cat <<'EOF2'
Usage: bash tests/cluster/sharefault.sh

Bring up 3 emulated nodes with Pi 3 links, an SD card each and the shared folder that pi1 serves
(cluster up 3 --link pi3 --disk sd-a1 --share), start 'wulfbench io --dir /share' on them, and
once its first point is in the file take pi1's link down (the server is gone) for 40 s. Checks:
the launcher returns 4 within 40 s of the fault; the error line names a rank on another node and
the folder (/share); the file is closed as 'timeout', and the points written before the fault are
there and read. Then takes the cluster down, which leaves no mount. Needs root and the packages
of jobs/install-deps.sh cluster. Prints "N passed, N failed" last; exits 1 if anything failed.

Environment:
  WB_BIN      wulfbench binary (default: build/wulfbench)
EOF2
}
repo=$(cd "$(dirname "${BASH_SOURCE[0]}")/../.." && pwd)
cluster=$repo/jobs/emulate/cluster
bin=${WB_BIN:-$repo/build/wulfbench}
# shellcheck source=tests/harness.sh
source "$repo/tests/harness.sh"
harness_args "$@"
[[ $(id -u) -eq 0 ]] || { fail "needs root (network namespaces, loop devices)"; finish; exit 1; }
[[ -x $bin ]] || { fail "no $bin: run make first"; finish; exit 1; }
cluster_suite_start wb-sharefault-test
up_pid="" run_pid=""
trap 'set +e; [[ -n $up_pid ]] && kill "$up_pid"; [[ -n $run_pid ]] && kill -KILL "$run_pid"; ip netns exec pi1 ip link set eth0 up 2>/dev/null; "$cluster" down >/dev/null 2>&1; rm -rf "$tmp"' EXIT

points() { # points FILE: the file's status, points_completed and the io points whose status is ok
    /usr/bin/python3 - "$1" <<'PY'
import sys, h5py
with h5py.File(sys.argv[1], "r", locking=False) as f:
    io = f.get("io", {})
    ok = sum(1 for k in io if isinstance(io[k], h5py.Group) and io[k].attrs.get("status", b"") in (b"ok", "ok"))
    s = f.attrs.get("status", "?")
    print(s.decode() if isinstance(s, bytes) else s, int(f.attrs.get("points_completed", 0)), ok)
PY
}

if ! "$cluster" up 3 --link pi3 --disk sd-a1 --share >"$tmp/up.log" 2>&1; then
    fail "cluster up 3 --link pi3 --disk sd-a1 --share: $(tail -1 "$tmp/up.log")"
    finish
    exit 1
fi
out=$tmp/io.h5
WB_BIN=$bin "$cluster" run -- io --dir /share --tests write,read,randwrite,randread,meta --size 4M --reps 3 \
    --warmup 0 --stall-timeout 15 -o "$out" >"$tmp/out" 2>"$tmp/err" </dev/null &
run_pid=$!
before=0
for _ in $(seq 1 900); do
    [[ -f $out.partial ]] && read -r _ _ before < <(points "$out.partial" 2>/dev/null) && ((before >= 1)) && break
    kill -0 "$run_pid" 2>/dev/null || break
    sleep 0.2
done
if ((before < 1)); then
    fail "no io point was flushed before the fault: $(tail -3 "$tmp/err")"
    finish
    exit 1
fi
t0=$SECONDS
ip netns exec pi1 ip link set eth0 down
(sleep 40 && ip netns exec pi1 ip link set eth0 up) &
up_pid=$!
while kill -0 "$run_pid" 2>/dev/null && ((SECONDS - t0 < 60)); do sleep 0.2; done
took=$((SECONDS - t0))
if kill -0 "$run_pid" 2>/dev/null; then
    fail "the launcher had not returned 60 s after the fault"
    kill -KILL "$run_pid" 2>/dev/null
fi
wait "$run_pid"
rc=$?
run_pid=""
echo "# server gone to launcher exit: $took s (exit $rc)"
if [[ $rc == 4 ]]; then pass "the job exits 4"; else fail "the job exited $rc, not 4: $(tail -3 "$tmp/err")"; fi
if ((took <= 40)); then pass "it ended $took s after the fault (<= 40)"; else fail "it ended $took s after the fault"; fi
if grep -qE "ranks? [0-9]+ \(pi[23]\).* (during|was in) io [a-z]+ on /share" "$tmp/err"; then
    pass "the error names the node and the folder: $(grep -m1 -oE "ranks? [0-9]+ \(pi[23]\).*/share" "$tmp/err")"
else
    fail "no error line naming a node and /share: $(grep -m1 -iE "error|stall|progress" "$tmp/err")"
fi
if [[ -f $out ]] && read -r status npoints ok < <(points "$out"); then
    if [[ $status == timeout ]] && ((npoints >= before && ok >= before)); then
        pass "the file is closed as timeout with $ok points ok ($before before the fault)"
    else
        fail "file: status $status, $npoints points, $ok ok ($before before the fault)"
    fi
else
    fail "no readable $out"
fi
wait "$up_pid" 2>/dev/null
up_pid=""
"$cluster" down >/dev/null 2>&1
left=$(grep -cE ' /share | /disk |fuse\.sshfs' /proc/mounts || true)
if [[ $left == 0 ]]; then pass "down leaves no share or disk mounted"; else fail "$left mounts left after down"; fi
finish
