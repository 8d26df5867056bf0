#!/usr/bin/env bash
# tests/cluster/check.sh: 'wulfbench check' on the emulated cluster, one bad node at a time.
set -euo pipefail

usage() {
    cat <<EOF
Usage: bash tests/cluster/check.sh

'wulfbench check' across emulated Raspberry Pi 3 nodes (jobs/emulate/cluster,
100 Mbit/s links), each case its own cluster: a healthy 4-node cluster exits 0
with 4 rows and no warning; /hosts of a 3-node fft run names eth0, MTU 1500
and one build; a node at 10 Mbit/s (--node 3:link=10mbit) is named in every
slow link of the exchange; a node with MTU 1400 is named by the mtu fact; a
node whose fake sysfs says powersave and under-voltage (--node 2:sysfs=DIR,
fault build) is named by the governor and throttle facts and the others are
not, and --strict exits 1; a node given another binary (--node 3:bin=FILE, a
copy whose build rev differs) fails the git_rev fact (exit 1); a node whose
wall clock is 250 ms ahead (--node 3:clock=+0.25, libfaketime) is named by the
clock fact, and load on the same cluster stores the same per-node offset
(clock_offset_s) within 1 ms. Figures: check
on 8 pi3 nodes in under 10 s, and under 30 s with one node stopped (SIGSTOP
as the exchange begins, the fault build's WB_FAULT_CHECK_STOP_RANK; default
--timeout 30), named, exit 1. After each case 'down' must leave no namespace.

Needs root. Run it alone, under the cluster lock when others share the machine:
  flock /tmp/wb-cluster.lock bash tests/cluster/check.sh
Prints "N passed, N failed" last; exits 1 if anything failed.

Environment:
  WB_BIN   wulfbench binary (default: build/wulfbench); the fault build beside
           it (wulfbench-faults) serves the sysfs and stop cases
  PYTHON   Python with h5py (default: /usr/bin/python3)
EOF
}
repo=$(cd "$(dirname "${BASH_SOURCE[0]}")/../.." && pwd)
cluster=$repo/jobs/emulate/cluster
python=${PYTHON:-/usr/bin/python3}
# shellcheck source=tests/harness.sh
source "$repo/tests/harness.sh"
harness_args "$@"

[[ $(id -u) -eq 0 ]] || { fail "needs root: network namespaces, tc"; finish; exit 1; }
export OMPI_ALLOW_RUN_AS_ROOT=1 OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1
bin=${WB_BIN:-$repo/build/wulfbench}
faults=$(dirname "$bin")/wulfbench-faults
if [[ ! -x $bin || ! -x $faults ]]; then
    make -C "$repo" "$bin" "$faults" >/dev/null || { fail "could not build $bin and $faults"; finish; exit 1; }
fi
if "$cluster" status >/dev/null 2>&1; then
    fail "an emulated cluster is already up; take it down first (jobs/emulate/cluster down)"
    finish
    exit 1
fi

tmp=$(mktemp -d /tmp/wb-check-test.XXXXXX)
chmod 755 "$tmp"
cleanup() {
    set +e
    "$cluster" down >/dev/null 2>&1
    rm -rf "$tmp"
}
trap cleanup EXIT
trap 'exit 130' INT TERM HUP

indent() { sed 's/^/    | /' | tail -n 25; }
now() { date +%s.%N; }
# less A B: A < B for decimals.
less() { "$python" -c "import sys; sys.exit(not float('$1') < float('$2'))"; }

# A Raspberry Pi 3B+ on powersave with a weak supply, as sysfs shows it.
pi=$tmp/pi-sysfs
mkdir -p "$pi/sys/devices/system/cpu/cpu0/cpufreq" "$pi/sys/devices/platform/soc/soc:firmware" \
    "$pi/sys/class/thermal/thermal_zone0" "$pi/sys/firmware/devicetree/base"
echo powersave >"$pi/sys/devices/system/cpu/cpu0/cpufreq/scaling_governor"
echo 600000 >"$pi/sys/devices/system/cpu/cpu0/cpufreq/scaling_cur_freq"
echo 600000 >"$pi/sys/devices/system/cpu/cpu0/cpufreq/cpuinfo_min_freq"
echo 1400000 >"$pi/sys/devices/system/cpu/cpu0/cpufreq/cpuinfo_max_freq"
echo 50005 >"$pi/sys/devices/platform/soc/soc:firmware/get_throttled"
echo 55000 >"$pi/sys/class/thermal/thermal_zone0/temp"
printf 'Raspberry Pi 3 Model B Plus Rev 1.3\0' >"$pi/sys/firmware/devicetree/base/model"

# case_run NAME BINARY UP_ARGS... -- RUN_ARGS...: bring a cluster up with WB_BIN=BINARY, run
# 'cluster run RUN_ARGS' in it (output in $tmp/NAME.out, status in rc, wall time in took_s),
# then take it down and see that nothing is left.
rc=0 took_s=0
case_run() {
    local name=$1 binary=$2
    shift 2
    local -a up=()
    while (($#)) && [[ $1 != -- ]]; do up+=("$1"); shift; done
    [[ ${1:-} == -- ]] && shift
    rc=0
    if ! WB_BIN=$binary "$cluster" up "${up[@]}" >"$tmp/$name.up" 2>&1; then
        # The case's own check reports it (exit -1), with this output.
        { echo "cluster up ${up[*]} failed:"; cat "$tmp/$name.up"; } >"$tmp/$name.out"
        rc=-1
        "$cluster" down >/dev/null 2>&1 || true
        return 0
    fi
    local t0
    t0=$(now)
    WB_BIN=$binary timeout 120 "$cluster" run "$@" >"$tmp/$name.out" 2>&1 || rc=$?
    took_s=$("$python" -c "print($(now) - $t0)")
    "$cluster" down >/dev/null 2>&1 || true
    if ip netns list 2>/dev/null | grep -Eq '^pi[0-9]+( |$)'; then
        fail "$name: namespaces left after down"
    fi
}

# verdict NAME LEVEL FACT TEXT: $tmp/NAME.out has a LEVEL verdict on FACT whose text holds TEXT.
verdict() { grep -E "^$2 +$3 " "$tmp/$1.out" | grep -qF -- "$4"; }
# no_verdict NAME LEVEL FACT TEXT: it has none that holds TEXT.
no_verdict() { ! verdict "$@"; }
rows() { grep -cE '^[0-9]+ +pi[0-9]+ ' "$tmp/$1.out" || true; }
line() { grep -E "^$2 +$3 " "$tmp/$1.out" | head -1 | cut -c1-200; }

# 1. Healthy: 4 pi3 nodes, exit 0, a row each, no warning or failure.
case_run healthy "$bin" 4 --link pi3 -- -- check
if ((rc == 0)) && [[ $(rows healthy) == 4 ]] && ! grep -qE '^(warn|fail) ' "$tmp/healthy.out" &&
    verdict healthy ok exchange "median"; then
    pass "healthy 4-node pi3 cluster: exit 0, 4 rows, every fact ok ($(line healthy ok exchange))"
else
    fail "healthy 4-node cluster: exit $rc, $(rows healthy) rows"
    indent <"$tmp/healthy.out"
fi

# 2. /hosts across the cluster: eth0 on the nodes that are not rank 0's, the MTU, one build.
case_run hosts "$bin" 3 --link pi3 -- -- fft --sweep sizes --seconds 0.2 --reps 1 -q -o "$tmp/hosts.h5"
if ((rc == 0)) && "$python" - "$tmp/hosts.h5" >"$tmp/hosts.check" 2>&1 <<'PY'; then
import sys
import h5py
with h5py.File(sys.argv[1], "r") as f:
    h = f["hosts"][()]
    assert [r["hostname"] for r in h] == [b"pi1", b"pi2", b"pi3"], h["hostname"]
    assert h[0]["iface"] == b"lo", h[0]["iface"]
    for r in h[1:]:
        assert r["iface"] == b"eth0" and r["mtu"] == 1500 and r["iface_kind"] in (b"virtual", b"ethernet"), r
    assert len({r["git_rev"] for r in h}) == 1 and h[0]["mpi_library"].startswith(b"Open MPI")
    assert f["fft/p000/t_plan"].shape == (3,)
PY
    pass "/hosts on 3 nodes: iface eth0 (lo on rank 0's host), MTU 1500, one git_rev; t_plan [3]"
else
    fail "/hosts on 3 nodes: exit $rc; $(tail -3 "$tmp/hosts.check" 2>/dev/null)"
    indent <"$tmp/hosts.out"
fi

# 3. One node at 10 Mbit/s among pi3 nodes: it is in every slow link.
case_run slow "$bin" 4 --link pi3 --node 3:link=10mbit -- -- check
if ((rc == 0)) && verdict slow warn exchange "node 2 (pi3) is in every slow link" &&
    no_verdict slow warn exchange "(pi2) is in every"; then
    pass "a node at 10 Mbit/s: $(line slow warn exchange)"
else
    fail "a node at 10 Mbit/s: exit $rc"
    indent <"$tmp/slow.out"
fi

# 4. One node with MTU 1400.
case_run mtu "$bin" 4 --link pi3 --node 2:mtu=1400 -- -- check
if ((rc == 0)) && verdict mtu warn mtu "node 1 (pi2)" && no_verdict mtu warn mtu "(pi3)" &&
    verdict mtu warn mtu "common MTU 1500"; then
    pass "a node with MTU 1400: $(line mtu warn mtu)"
else
    fail "a node with MTU 1400: exit $rc"
    indent <"$tmp/mtu.out"
fi

# 5. One node on powersave with under-voltage (fake sysfs, fault build); --strict fails on it.
case_run sysfs "$faults" 4 --link pi3 --node 2:sysfs="$pi" -- -- check
if ((rc == 0)) && verdict sysfs warn governor "node 1 (pi2): powersave" && no_verdict sysfs warn governor "(pi3)" &&
    verdict sysfs warn throttle "node 1 (pi2) 0x50005: under-voltage now" && no_verdict sysfs warn throttle "(pi4)"; then
    pass "powersave + under-voltage on pi2: named by governor and throttle, the others not"
else
    fail "powersave + under-voltage on pi2: exit $rc"
    indent <"$tmp/sysfs.out"
fi
case_run strict "$faults" 4 --link pi3 --node 2:sysfs="$pi" -- -- check --strict
if ((rc == 1)) && verdict strict warn governor "(pi2)"; then
    pass "the same with --strict: exit 1"
else
    fail "the same with --strict: exit $rc (want 1)"
    indent <"$tmp/strict.out"
fi

# 6. One node given another binary: this one with the build rev it records in /hosts (read from the
# file of case 2) replaced by zeros of the same length.
other=$tmp/wulfbench-other
rev=$("$python" -c "import h5py, sys; print(h5py.File(sys.argv[1])['hosts'][0]['git_rev'].decode())" "$tmp/hosts.h5" 2>/dev/null || true)
zeros=$(printf '%*s' "${#rev}" '' | tr ' ' 0)
if [[ -n $rev ]] && "$python" - "$bin" "$other" "$rev" "$zeros" <<'PY'; then
import sys
src, dst, rev, new = sys.argv[1], sys.argv[2], sys.argv[3].encode() + b"\0", sys.argv[4].encode() + b"\0"
data = open(src, "rb").read()
if rev not in data:
    sys.exit(1)
open(dst, "wb").write(data.replace(rev, new))
PY
    chmod 755 "$other"
    case_run other "$bin" 4 --link pi3 --node 3:bin="$other" -- -- check
    if ((rc == 1)) && verdict other fail git_rev "'$zeros' on rank 2" && verdict other ok mpi "every rank"; then
        pass "another binary on pi3: $(line other fail git_rev)"
    else
        fail "another binary on pi3: exit $rc (want 1)"
        indent <"$tmp/other.out"
    fi
else
    fail "another binary: could not find the build rev '${rev:-?}' of /hosts in $bin"
fi

# 7. A node whose wall clock is 250 ms ahead (--node 3:clock=+0.25, libfaketime): check names it,
#    and load, on the same cluster, measures the same offset for each node within 1 ms.
rc=0
if WB_BIN=$bin "$cluster" up 4 --link pi3 --node 3:clock=+0.25 >"$tmp/clock.up" 2>&1; then
    WB_BIN=$bin timeout 120 "$cluster" run -- check >"$tmp/clock.out" 2>&1 || rc=$?
    WB_BIN=$bin timeout 120 "$cluster" run -- load --client-ranks 0 --clients 3 --duration 2 --warmup-s 0.5 -q \
        -o "$tmp/clock.h5" >"$tmp/clock-load.out" 2>&1 || rc=$((rc ? rc : 100 + $?))
else
    rc=-1
    cat "$tmp/clock.up" >"$tmp/clock.out"
fi
"$cluster" down >/dev/null 2>&1 || true
# The verdict names pi3 with an offset of +2xx ms (a loaded machine read +249.562: 250 within the 2 ms
# the figures below allow); each node's clock_ms from check's rows (the fifth column from the right) against load's
# clock_offset_s for the worker on that node (rank K-1 on piK, rank 0 on pi1).
if ((rc == 0)) && verdict clock warn clock "(pi3) +2" && no_verdict clock warn clock "(pi2)" &&
    "$python" - "$tmp/clock.out" "$tmp/clock.h5" >"$tmp/clock.check" 2>&1 <<'PY'; then
import re, sys
import h5py, numpy as np
rows = {}
for l in open(sys.argv[1]):
    m = re.match(r"^(\d+) +pi(\d+) ", l)
    if m:
        rows[int(m.group(2))] = float(l.split()[-5]) * 1e-3
assert sorted(rows) == [1, 2, 3, 4], rows
with h5py.File(sys.argv[2], "r") as f:
    steps = [g for k, g in f["load"].items() if k.startswith("s")]
    load = np.median(np.array([g["clock_offset_s"][()] for g in steps]), axis=0)
assert load.shape == (3,), load
assert abs(rows[3] - 0.25) < 2e-3 and abs(load[1] - 0.25) < 2e-3, (rows, load)
worst = max(abs(rows[k] - load[k - 2]) for k in (2, 3, 4))
assert worst < 1e-3, (rows, load)
print(f"pi3 +{rows[3] * 1e3:.3f} ms by check, +{load[1] * 1e3:.3f} ms by load; they differ by at most "
      f"{worst * 1e3:.3f} ms over the 3 nodes")
PY
    pass "a node 250 ms ahead: $(line clock warn clock); $(cat "$tmp/clock.check")"
else
    fail "a node 250 ms ahead: exit $rc; $(tail -3 "$tmp/clock.check" 2>/dev/null)"
    indent <"$tmp/clock.out"
    indent <"$tmp/clock-load.out" 2>/dev/null || true
fi

# 8. The figures: 8 pi3 nodes, then one of them stopped as the exchange begins.
case_run eight "$bin" 8 --link pi3 -- -- check
if ((rc == 0)) && [[ $(rows eight) == 8 ]] && less "$took_s" 10; then
    pass "check on 8 pi3 nodes: exit 0 in $(printf '%.1f' "$took_s") s (under 10 s)"
else
    fail "check on 8 pi3 nodes: exit $rc, $(rows eight) rows, $(printf '%.1f' "$took_s") s"
    indent <"$tmp/eight.out"
fi
export WB_FAULT_CHECK_STOP_RANK=5
case_run stopped "$faults" 8 --link pi3 -- --mpirun -x --mpirun WB_FAULT_CHECK_STOP_RANK -- check
unset WB_FAULT_CHECK_STOP_RANK
if ((rc == 1)) && verdict stopped fail answer "rank 5 (node 5, pi6)" &&
    grep -q "no answer during the exchange within 30 s from rank 5" "$tmp/stopped.out" && less "$took_s" 30; then
    pass "check on 8 pi3 nodes with pi6 stopped: named, exit 1 in $(printf '%.1f' "$took_s") s (under 30 s)"
else
    fail "check on 8 nodes with pi6 stopped: exit $rc (want 1) in $(printf '%.1f' "$took_s") s"
    indent <"$tmp/stopped.out"
fi

finish
