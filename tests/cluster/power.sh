#!/usr/bin/env bash
# Energy across an emulated cluster: each node sees its own fake power source (its own
# WB_SYSFS_ROOT, through 'cluster up --node K:sysfs=DIR') at a different known power, and the
# per-node energy in the result file must add up to the sum of those powers.
set -euo pipefail

PACKAGES="iproute2 util-linux mount openmpi-bin python3-h5py python3-numpy"

usage() {
    cat <<EOF
Usage: bash tests/cluster/power.sh

Bring up 3 emulated nodes (jobs/emulate/cluster up 3), each with its own fake /sys: pi1 a hwmon
sensor at 4 W (power1_input), pi2 one at 7 W (power1_input + power2_input), pi3 a RAPL package
counter that a helper process advances at 15 W with wraps. Run 'wulfbench fft' (the fault build,
which reads /sys under WB_SYSFS_ROOT) across them, and check: /power/source is hwmon, hwmon, rapl;
each node's idle_w is within 5% of its power; the sum over nodes of energy_j, over the repetitions'
wall time, is within 5% of 26 W. Then '--power rapl', which pi1 and pi2 cannot give: exit status 2,
one error line, no file. The cluster is up only while the lock /tmp/wb-cluster.lock is held, and
is taken down at the end. Prints "N passed, N failed" last; exits 1 if anything failed.

Needs root and these Debian packages, installed with apt-get when missing:
$PACKAGES

Environment:
  WB_BIN   the fault build (default: build/wulfbench-faults, made with make if missing)
  PYTHON   Python with h5py and numpy (default: /usr/bin/python3)
  WB_CLUSTER  the cluster script (default: jobs/emulate/cluster)
EOF
}
repo=$(cd "$(dirname "${BASH_SOURCE[0]}")/../.." && pwd)
cluster=${WB_CLUSTER:-$repo/jobs/emulate/cluster}
python=${PYTHON:-/usr/bin/python3}
# shellcheck source=tests/harness.sh
source "$repo/tests/harness.sh"
harness_args "$@"
indent() { sed 's/^/    | /' | tail -n 12; }

[[ $(id -u) -eq 0 ]] || abort "needs root: network namespaces"
export OMPI_ALLOW_RUN_AS_ROOT=1 OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1

# shellcheck disable=SC2086 # a list of packages
harness_install $PACKAGES || abort "could not install $PACKAGES"

bin=${WB_BIN:-$repo/build/wulfbench-faults}
if [[ ! -x $bin ]]; then
    make -C "$repo" build/wulfbench-faults >/dev/null || abort "could not build $bin"
fi
export WB_BIN=$bin

# The emulated cluster is one resource on this machine: hold its lock from 'up' to 'down'.
exec 9>/tmp/wb-cluster.lock
flock 9

tmp=$(mktemp -d /tmp/wb-power-cluster.XXXXXX)
chmod 755 "$tmp"
helper_pid=
cleanup() {
    set +e
    [[ -n $helper_pid ]] && kill "$helper_pid" 2>/dev/null && wait "$helper_pid" 2>/dev/null
    "$cluster" down >/dev/null 2>&1
    rm -rf "$tmp"
}
made_tmp=1
trap cleanup EXIT
trap 'exit 130' INT TERM HUP

if "$cluster" status >/dev/null 2>&1; then
    abort "an emulated cluster is already up; take it down first (jobs/emulate/cluster down)"
fi

# The fake trees, laid out by the same helpers as tests/mpi/test_power.py.
"$python" - "$tmp" "$repo" <<'EOF' || abort "could not lay out the fake sources"
import sys
from pathlib import Path
sys.path.insert(0, sys.argv[2] + "/tests/mpi")
import fake_power
tmp = Path(sys.argv[1])
fake_power.hwmon_tree(tmp / "n1", [4_000_000])
fake_power.hwmon_tree(tmp / "n2", [5_000_000, 2_000_000])
fake_power.rapl_tree(tmp / "n3", 3_000_000)
EOF
"$python" "$repo/tests/mpi/fake_power.py" "$tmp/n3/sys/class/powercap/intel-rapl:0/energy_uj" 15 3000000 0.001 &
helper_pid=$!
sleep 0.3

if ! "$cluster" up 3 --node "1:sysfs=$tmp/n1" --node "2:sysfs=$tmp/n2" --node "3:sysfs=$tmp/n3" \
    >"$tmp/up.log" 2>&1; then
    indent <"$tmp/up.log"
    abort "cluster up 3 with --node K:sysfs=DIR failed"
fi

out=$tmp/power.h5
if "$cluster" run -- fft --sweep sizes --seconds 240 --reps 8 --plan estimate --power-idle 1 -q \
    -o "$out" >"$tmp/run.log" 2>&1; then
    pass "fft across 3 nodes with a fake source each"
else
    indent <"$tmp/run.log"
    fail "fft across 3 nodes with a fake source each"
fi

if [[ -f $out ]]; then
    rc=0
    "$python" - "$out" >"$tmp/check.log" 2>&1 <<'EOF' || rc=$?
import sys
import h5py
import numpy as np
f = h5py.File(sys.argv[1], "r")
src = [s.decode() for s in f["power/source"][()]]
ok = True
def check(what, good):
    global ok
    print(("PASS: " if good else "FAIL: ") + what)
    ok &= bool(good)
check(f"sources hwmon, hwmon, rapl (got {src})", src == ["hwmon", "hwmon", "rapl"])
idle = f["power/idle_w"][()]
check(f"idle power per node 4, 7, 15 W within 5% (got {np.round(idle, 2)})",
      np.allclose(idle, [4, 7, 15], rtol=0.05))
g = f["fft/p000"]
e = g["energy_j"][()]
window = g["t_end_utc"][()] - g["t_start_utc"][()]
total_w = e.sum(axis=1).sum() / window.sum()
check(f"sum over nodes of energy_j / wall time = 26 W within 5% (got {total_w:.2f} W)",
      abs(total_w / 26 - 1) <= 0.05)
per_node = e.sum(axis=0) / window.sum()
check(f"each node's own power 4, 7, 15 W within 5% (got {np.round(per_node, 2)})",
      np.allclose(per_node, [4, 7, 15], rtol=0.05))
sys.exit(0 if ok else 1)
EOF
    grep -E '^(PASS|FAIL): ' "$tmp/check.log" || true
    passed=$((passed + $(grep -c '^PASS: ' "$tmp/check.log" || true)))
    failed=$((failed + $(grep -c '^FAIL: ' "$tmp/check.log" || true)))
    ((rc == 0)) || grep -vE '^(PASS|FAIL): ' "$tmp/check.log" | indent || true
else
    fail "no result file $out"
fi

bad=$tmp/rapl.h5
set +e
"$cluster" run -- fft --sweep sizes --seconds 1 --reps 1 --plan estimate --power rapl -q -o "$bad" \
    >"$tmp/bad.log" 2>&1
rc=$?
set -e
lines=$(grep -c '^wulfbench.*--power rapl' "$tmp/bad.log" || true)
if ((rc == 2)) && ((lines == 1)) && [[ ! -e $bad && ! -e $bad.partial ]]; then
    pass "--power rapl where pi1 and pi2 have none: exit 2, one line, no file"
else
    indent <"$tmp/bad.log"
    fail "--power rapl where pi1 and pi2 have none: exit $rc, $lines lines naming it, file left: $(ls "$tmp" | grep -c rapl.h5)"
fi

"$cluster" down >/dev/null 2>&1 || fail "cluster down"
finish
