#!/usr/bin/env bash
# make test-cluster: wulfbench across a 3-node emulated Beowulf cluster
# (jobs/emulate/cluster) with Raspberry Pi 3 links, the study script's
# checks on bad input, and a teardown that must leave nothing behind.
set -euo pipefail

# Debian packages this test needs (installed when missing and run as root).
PACKAGES="iproute2 util-linux mount openmpi-bin python3-h5py"

usage() {
    cat <<EOF
Usage: bash tests/cluster/run.sh

Bring up 3 emulated nodes with 100 Mbit/s links (cluster up 3 --link pi3),
run 'wulfbench transfer' and a small 'wulfbench fft' across them and the
study script (jobs/mpirun/study.sh) with small settings; check the result
files with h5py (3 distinct hostnames in /hosts, pingpong bandwidth at
1 MiB between 8 and 12.5 MB/s); check the bad-input cases (a second
'up', an unreachable host, a binary missing on one node, bad arguments,
not root); interrupt a run; tear down and verify that no namespace, veth,
bridge or process is left. Prints "N passed, N failed" last; exits 1 if
anything failed.

Needs root and these Debian packages, installed with apt-get when missing:
$PACKAGES

Environment:
  WB_BIN   wulfbench binary (default: build/wulfbench, built with 'make'
           if missing)
  PYTHON   Python with h5py (default: /usr/bin/python3)
EOF
}
case ${1:-} in
    -h | --help) usage; exit 0 ;;
    "") ;;
    *) echo "tests/cluster: unknown argument '$1' (see --help)" >&2; exit 2 ;;
esac

repo=$(cd "$(dirname "${BASH_SOURCE[0]}")/../.." && pwd)
cluster=$repo/jobs/emulate/cluster
study=$repo/jobs/mpirun/study.sh
python=${PYTHON:-/usr/bin/python3}
# shellcheck source=tests/harness.sh
source "$repo/tests/harness.sh"
# abort: record the failure, clean up, print the totals last and stop.
abort() {
    fail "$*"
    trap - EXIT
    ((made_tmp)) && cleanup
    finish || exit 1
}
made_tmp=0
indent() { sed 's/^/    | /' | tail -n 12; }

[[ $(id -u) -eq 0 ]] || abort "needs root: network namespaces, veths, tc"
export OMPI_ALLOW_RUN_AS_ROOT=1 OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1

missing=()
for p in $PACKAGES; do
    dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q 'install ok installed' || missing+=("$p")
done
if ((${#missing[@]})); then
    echo "tests/cluster: installing ${missing[*]}"
    export DEBIAN_FRONTEND=noninteractive
    apt-get install -y --no-install-recommends "${missing[@]}" >/dev/null ||
        { apt-get update >/dev/null && apt-get install -y --no-install-recommends "${missing[@]}" >/dev/null; } ||
        abort "could not install ${missing[*]}"
fi

bin=${WB_BIN:-$repo/build/wulfbench}
if [[ ! -x $bin ]]; then
    echo "tests/cluster: $bin missing; building it with make"
    make -C "$repo" >/dev/null || abort "could not build wulfbench ('make' failed)"
fi
[[ -x $bin ]] || abort "no wulfbench binary at $bin"
export WB_BIN=$bin

# A cluster someone is using is left alone; leftovers of a dead one are removed.
if "$cluster" status >/dev/null 2>&1; then
    abort "an emulated cluster is already up; take it down first (jobs/emulate/cluster down)"
fi
"$cluster" down >/dev/null 2>&1 || true

tmp=$(mktemp -d /tmp/wb-cluster-test.XXXXXX)
chmod 755 "$tmp"
cleanup() {
    set +e
    "$cluster" down >/dev/null 2>&1
    rm -rf "$tmp"
}
made_tmp=1
trap cleanup EXIT
trap 'exit 130' INT TERM HUP

# nothing_left: no namespace, veth, bridge, state or process of the cluster.
nothing_left() {
    local what=()
    ip netns list 2>/dev/null | grep -Eq '^pi[0-9]+( |$)' && what+=("namespaces: $(ip netns list | grep -E '^pi[0-9]+' | awk '{print $1}' | tr '\n' ' ')")
    ip -o link show 2>/dev/null | grep -Eq ': wbv[0-9]+[@:]' && what+=("veths")
    ip link show wbbr0 >/dev/null 2>&1 && what+=("bridge wbbr0")
    [[ -e /run/wulfbench-emulate ]] && what+=("state folder")
    local p
    for p in "$@"; do kill -0 "$p" 2>/dev/null && what+=("process $p"); done
    if ((${#what[@]})); then
        echo "${what[*]}"
        return 1
    fi
}

holder_pids() { awk '{print $4}' /run/wulfbench-emulate/nodes 2>/dev/null | tr '\n' ' '; }

# count_lines TEXT: lines in TEXT (0 for empty).
count_lines() {
    if [[ -z $1 ]]; then echo 0; else wc -l <<<"$1"; fi
}

# Arguments are checked before root and before anything is made.
for args in "up 0" "up 3 --link pi5" "up" "frobnicate"; do
    rc=0
    # shellcheck disable=SC2086 # split on purpose
    err=$("$cluster" $args 2>&1) || rc=$?
    if ((rc == 2)) && [[ $(count_lines "$err") == 1 ]] && nothing_left >/dev/null; then
        pass "cluster $args: refused with one line, nothing made"
    else
        fail "cluster $args: exit $rc, output: $err"
    fi
done

# Without root: one line, non-zero. Run as nobody when nobody can read the tree.
if command -v setpriv >/dev/null && setpriv --reuid=65534 --regid=65534 --clear-groups test -r "$cluster" 2>/dev/null; then
    rc=0
    err=$(setpriv --reuid=65534 --regid=65534 --clear-groups bash "$cluster" up 2 2>&1) || rc=$?
    if ((rc != 0)) && [[ $(count_lines "$err") == 1 && $err == *root* ]] && nothing_left >/dev/null; then
        pass "cluster up as a non-root user: '$err'"
    else
        fail "cluster up as a non-root user: exit $rc, output: $err"
    fi
else
    echo "SKIP: non-root check: user nobody cannot read $cluster"
fi

# An interrupted 'up' removes what it made.
# (8 nodes take over a second to make; the interrupt comes after 0.4 s.)
rc=0
timeout -s INT 0.4 "$cluster" up 8 --link pi3 >/dev/null 2>&1 || rc=$?
sleep 0.2
if ((rc == 0)); then
    echo "SKIP: interrupted 'up': it finished before the interrupt"
    "$cluster" down >/dev/null 2>&1 || true
elif left=$(nothing_left); then
    pass "interrupted 'cluster up 8' left nothing behind"
else
    fail "interrupted 'cluster up 8' left: $left"
    "$cluster" down >/dev/null 2>&1 || true
fi

if ! out=$("$cluster" up 3 --link pi3 2>&1); then
    echo "$out" | indent
    abort "cluster up 3 --link pi3 failed"
fi
pass "cluster up 3 --link pi3"
holders=$(holder_pids)

status=$("$cluster" status 2>&1 || true)
names=$(for n in pi1 pi2 pi3; do "$cluster" exec "$n" -- hostname; done | tr '\n' ' ')
if [[ $names == "pi1 pi2 pi3 " && $(grep -c 'tbf 100Mbit' <<<"$status") == 3 ]]; then
    pass "each node has its own hostname and a 100 Mbit/s shaper"
else
    fail "node hostnames '$names' or shapers:"
    echo "$status" | indent
fi
addrs=$("$cluster" exec pi2 -- ip -o -4 addr show dev eth0 | awk '{print $4}')
if [[ $addrs == 198.18.0.2/24 ]]; then
    pass "pi2 has 198.18.0.2/24 on its own eth0"
else
    fail "pi2 addresses: '$addrs'"
fi

rc=0
err=$("$cluster" up 2 2>&1 >/dev/null) || rc=$?
if ((rc != 0)) && [[ $(count_lines "$err") == 1 && $(holder_pids) == "$holders" ]] &&
    [[ $("$cluster" status 2>&1 || true) == "$status" ]]; then
    pass "second 'up' refused with one line, cluster unchanged: '$err'"
else
    fail "second 'up': exit $rc, '$err'"
fi

# transfer across the 3 nodes: hosts and the shaped bandwidth.
t_h5=$tmp/transfer.h5
if "$cluster" run -- transfer --tests 'pingpong,bw,allreduce' -m 1:1M --label emu-transfer -o "$t_h5" \
    >"$tmp/transfer.out" 2>&1; then
    pass "cluster run -- transfer"
else
    fail "cluster run -- transfer"
    indent <"$tmp/transfer.out"
fi
if [[ -f $t_h5 ]]; then
    if msg=$("$python" - "$t_h5" 2>&1 <<'EOF'
import sys
import h5py
import numpy as np


def text(v):
    return v.decode() if isinstance(v, bytes) else str(v)


with h5py.File(sys.argv[1], "r") as f:
    names = sorted({text(h) for h in f["hosts"]["hostname"]})
    assert names == ["pi1", "pi2", "pi3"], f"/hosts names {names}"
    assert int(f.attrs["nnodes"]) == 3, f"nnodes {f.attrs['nnodes']}"
    g = f["transfer/pingpong"]
    i = int(np.flatnonzero(g["bytes"][:] == 1 << 20)[0])
    bw = float(np.asarray(g["bandwidth_Bps"][i]).ravel()[0])
    lat = float(np.asarray(g["t_med"][0]).ravel()[0])
    print(f"hosts {' '.join(names)}; pingpong 1 MiB {bw / 1e6:.2f} MB/s, 1 B {lat * 1e6:.1f} us")
    assert 8e6 <= bw <= 12.5e6, f"pingpong bandwidth at 1 MiB {bw / 1e6:.2f} MB/s, not within 8-12.5"
EOF
    ); then
        pass "transfer.h5: $msg"
    else
        fail "transfer.h5: $(tail -1 <<<"$msg")"
    fi
fi

# A small fft across the nodes.
f_h5=$tmp/fft.h5
if "$cluster" run -- fft --sweep sizes --seconds 1,2 --reps 2 -o "$f_h5" >"$tmp/fft.out" 2>&1 &&
    msg=$("$python" - "$f_h5" 2>&1 <<'EOF'
import sys
import h5py

with h5py.File(sys.argv[1], "r") as f:
    assert f.attrs["schema"] in ("wulfbench/1", b"wulfbench/1")
    assert int(f.attrs["nranks"]) == 3 and int(f.attrs["nnodes"]) == 3
    points = list(f["fft"])
    assert len(points) == 2, f"points {points}"
    for p in points:
        assert int(f["fft"][p]["verify"].attrs["passed"]) == 1, f"{p} failed verification"
print(f"{len(points)} points on 3 nodes, verified")
EOF
    ); then
    pass "cluster run -- fft: $msg"
else
    fail "cluster run -- fft: ${msg:-}"
    indent <"$tmp/fft.out"
fi

# The study script, head node pi1, small settings.
hostfile=$("$cluster" hostfile)
res=$tmp/study
if "$cluster" exec pi1 -- "$study" --hostfile "$hostfile" --results "$res" --label emu3 \
    --steps transfer,sizes,baseline --fft-opts "--seconds 1 --reps 2" \
    --transfer-opts "--tests pingpong -m 1k,64k -i 5" >"$tmp/study.out" 2>&1; then
    files=$(compgen -G "$res/emu3_*_*.h5" | wc -l)
    logs=$(compgen -G "$res/emu3_*.log" | wc -l)
    if [[ $files == 3 && $logs == 1 ]] && "$python" - "$res" >"$tmp/study.check" 2>&1 <<'EOF'; then
import glob
import sys
import h5py

for path in sorted(glob.glob(sys.argv[1] + "/emu3_*.h5")):
    step = path.rsplit("_", 1)[1][:-3]
    with h5py.File(path, "r") as f:
        label = f.attrs["label"]
        label = label.decode() if isinstance(label, bytes) else label
        assert label == f"emu3 {step}", f"{path}: label {label!r}"
        base = int(f.attrs["baseline"])
        nodes = int(f.attrs["nnodes"])
        if step == "baseline":
            assert base == 1 and int(f.attrs["nranks"]) == 1, f"{path}: not a baseline run"
        else:
            assert nodes == 3, f"{path}: {nodes} nodes"
        if step == "transfer":
            assert "pairs_all" in f["transfer"], f"{path}: no /transfer/pairs_all"
EOF
        pass "study.sh on the emulated cluster: 3 labelled, dated result files and a log"
    else
        fail "study.sh results: $files files, $logs logs; $(tail -1 "$tmp/study.check" 2>/dev/null)"
    fi
else
    fail "study.sh on the emulated cluster"
    indent <"$tmp/study.out"
fi

# study.sh bad input: one line, non-zero, no results folder.
cp "$bin" "$tmp/wulfbench-copy"
bad_results=$tmp/bad-results
printf 'pi1 slots=1\npi2 slots=1\npi9 slots=1\n' >"$tmp/hostfile-pi9"
mkdir "$tmp/bin"
cp "$bin" "$tmp/bin/wulfbench"
pi2_pid=$(awk '$1 == "pi2" {print $4}' /run/wulfbench-emulate/nodes)
# pi2 gets an empty folder over $tmp/bin in its own mount namespace only.
nsenter --target "$pi2_pid" --mount mount -t tmpfs wbtest-hide "$tmp/bin"
study_bad() {
    local name=$1 want_rc=$2 want=$3 rc=0 err
    shift 3
    err=$("$cluster" exec pi1 -- "$study" --results "$bad_results" --connect-timeout 5 "$@" 2>&1 >/dev/null) || rc=$?
    if [[ $rc == "$want_rc" && $(count_lines "$err") == 1 && $err == *"$want"* && ! -e $bad_results ]]; then
        pass "study.sh $name: '$err'"
    else
        fail "study.sh $name: exit $rc (want $want_rc), output: $err"
    fi
}
study_bad "missing hostfile" 1 "not found" --hostfile "$tmp/no-such-hostfile" -b "$bin"
study_bad "unreachable host" 1 "cannot reach pi9" --hostfile "$tmp/hostfile-pi9" -b "$bin"
study_bad "binary missing on a node" 1 "missing or not executable on pi2" --hostfile "$hostfile" -b "$tmp/bin/wulfbench"
study_bad "binary missing here" 1 "not found" --hostfile "$hostfile" -b "$tmp/nowhere/wulfbench"
study_bad "bad step" 2 "unknown step" --hostfile "$hostfile" -b "$bin" --steps sizes,bogus
study_bad "unknown option" 2 "unknown argument" --hostfile "$hostfile" -b "$bin" --frobnicate
study_bad "bad --np" 2 "--np" --hostfile "$hostfile" -b "$bin" --np -3
nsenter --target "$pi2_pid" --mount umount "$tmp/bin" || true

# A run killed hard leaves ranks behind in the nodes; 'down' must end them.
"$cluster" run -- transfer --tests pingpong -m 1M -i 1000 -o "$tmp/killed.h5" >/dev/null 2>&1 &
run_pid=$!
ranks=""
for _ in $(seq 1 50); do
    ranks=$(for n in pi1 pi2 pi3; do ip netns pids "$n" 2>/dev/null; done | grep -vxFf <(tr ' ' '\n' <<<"$holders" | grep .) | tr '\n' ' ' || true)
    [[ $(wc -w <<<"$ranks") -ge 3 ]] && break
    sleep 0.2
done
kill -KILL "$run_pid" 2>/dev/null || true
wait "$run_pid" 2>/dev/null || true

if out=$("$cluster" down 2>&1); then
    pass "cluster down: $out"
else
    fail "cluster down: $out"
fi
sleep 0.2
# shellcheck disable=SC2086 # lists of PIDs
if left=$(nothing_left $holders $ranks); then
    pass "nothing left: no pi* namespace, wbv* veth, wbbr0, state, holder or rank (${ranks:-no} ranks were running)"
else
    fail "left behind after down: $left"
fi
if out=$("$cluster" down 2>&1) && [[ $out == *"already down"* ]]; then
    pass "second 'down' is a no-op: $out"
else
    fail "second 'down': $out"
fi
rc=0
"$cluster" status >/dev/null 2>&1 || rc=$?
if ((rc == 1)); then pass "status of a down cluster exits 1"; else fail "status of a down cluster exits $rc"; fi

trap - EXIT
cleanup
finish
