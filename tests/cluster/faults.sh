#!/usr/bin/env bash
# tests/cluster/faults.sh: the fault table of issue 25 at a small size, each row a real run on the
# emulated cluster with the fault set in the serial switch, and what the file and the report say.
set -uo pipefail

usage() {
    cat <<'EOF'
Usage: bash tests/cluster/faults.sh

Bring up 4 emulated nodes with Pi 3 links through the serial switch (cluster up 4 --link pi3
--switch serial) and run one job per fault, each through 'cluster run':
  1. loss 1% on pi3, fft --sweep files --files 1:8: completes (exit 0, every point verified) and
     the report names pi3 with its retransmission rate;
  2. loss 5% on every link, transfer --pairs all (pingpong, bw): completes, and every ordered
     pair of nodes carries a retransmission figure in the per-link map;
  3. pi3's link down 5 s during a point of fft --files 16 (the fault set once a repetition has
     started): completes, the report marks that point unstable (its t_total spreads, or, when the
     outage fell between two windows, a repetition's t_sync stalled), and the
     retransmissions during it are named (on pi3 or on the peers that sent to it);
  4. pi3 flapping (1 s down every 5 s) during a load ramp: completes, every request of every
     step is accounted for (done + rejected + unfinished = submitted), and the saturation
     verdict is printed (it names loss when retransmissions rose at the failing step).
After each row no wulfbench process is left in any node. The partition row (60 s down) is
tests/cluster/netfault.sh. Needs root; run it under the cluster lock:

  flock /tmp/wb-cluster.lock bash tests/cluster/faults.sh

Prints "N passed, N failed" last; exits 1 if anything failed.

Environment:
  WB_BIN   wulfbench binary (default: build/wulfbench)
  PYTHON   Python with h5py and the analysis package's needs (default: /usr/bin/python3)
EOF
}
repo=$(cd "$(dirname "${BASH_SOURCE[0]}")/../.." && pwd)
cluster=$repo/jobs/emulate/cluster
bin=${WB_BIN:-$repo/build/wulfbench}
python=${PYTHON:-/usr/bin/python3}
# shellcheck source=tests/harness.sh
source "$repo/tests/harness.sh"
harness_args "$@"

[[ $(id -u) -eq 0 ]] || { fail "needs root: network namespaces, tc"; finish; exit 1; }
[[ -x $bin ]] || make -C "$repo" "$bin" >/dev/null || { fail "could not build $bin"; finish; exit 1; }
if "$cluster" status >/dev/null 2>&1; then
    fail "an emulated cluster is already up; take it down first (jobs/emulate/cluster down)"
    finish
    exit 1
fi
tmp=$(mktemp -d /tmp/wb-faults-test.XXXXXX)
chmod 755 "$tmp"
cleanup() {
    "$cluster" down >/dev/null 2>&1
    rm -rf "$tmp"
}
trap cleanup EXIT

# left: wulfbench processes still in any node.
left() {
    local k p n=0
    for k in 1 2 3 4; do
        for p in $(ip netns pids "pi$k" 2>/dev/null); do
            [[ $(cat "/proc/$p/comm" 2>/dev/null) == wulfbench* ]] && n=$((n + 1))
        done
    done
    echo "$n"
}

indent() { sed "s/^/    | /" | tail -n 25; }

# no_left ROW: pass when no wulfbench process is left in any node after the row.
no_left() {
    local n
    n=$(left)
    if ((n == 0)); then pass "$1 row: no wulfbench process left"; else fail "$1 row: $n wulfbench processes left"; fi
}

# py FILE ARGS...: the analysis package on a result file, from the repository root.
py() { (cd "$repo" && "$python" - "$@"); }

if ! WB_BIN=$bin "$cluster" up 4 --link pi3 --switch serial >"$tmp/up.log" 2>&1; then
    fail "cluster up 4 --link pi3 --switch serial: $(tail -1 "$tmp/up.log")"
    finish
    exit 1
fi

# 1. loss 1% on pi3 during fft.
"$cluster" fault pi3 loss=0.01 >/dev/null
rc=0
rm -f "$tmp/msg"
WB_BIN=$bin timeout 300 "$cluster" run -- fft --sweep files --files 1:8 --reps 5 -q -o "$tmp/loss.h5" \
    >"$tmp/loss.out" 2>&1 || rc=$?
"$cluster" fault all clear >/dev/null
if ((rc == 0)) && py "$tmp/loss.h5" >"$tmp/msg" 2>&1 <<'PY'; then
import sys
from pathlib import Path
import h5py
from analysis.derive import netfaults
with h5py.File(sys.argv[1], "r") as f:
    assert all(f["fft"][p]["verify"].attrs["passed"] == 1 for p in f["fft"]), "a point failed verification"
    npts = len(f["fft"])
lines = netfaults.warnings(Path(sys.argv[1]))
mine = [l for l in lines if l.startswith("pi3: ")]
assert mine, lines
print(f"{npts} points verified; {mine[0][:110]}")
PY
    msg=$(cat "$tmp/msg")
    pass "loss 1% on pi3, fft files 1:8: exit 0, $msg"
else
    fail "loss 1% on pi3, fft files 1:8: exit $rc; $(tail -3 "$tmp/msg" 2>/dev/null)"
    indent <"$tmp/loss.out"
fi
no_left loss

# 2. loss 5% on every link during transfer --pairs all.
"$cluster" fault all loss=0.05 >/dev/null
rc=0
WB_BIN=$bin timeout 300 "$cluster" run -- transfer --pairs all --tests pingpong,bw -m 1k,64k -q -o "$tmp/lossall.h5" \
    >"$tmp/lossall.out" 2>&1 || rc=$?
"$cluster" fault all clear >/dev/null
if ((rc == 0)) && py "$tmp/lossall.h5" >"$tmp/msg" 2>&1 <<'PY'; then
import sys
from pathlib import Path
import numpy as np
from analysis.derive import netfaults
got = netfaults.link_retrans(Path(sys.argv[1]))
assert got is not None, "no per-link figure"
test, m = got
off = ~np.eye(m.shape[0], dtype=bool)
assert m.shape == (4, 4) and np.all(np.isfinite(m[off])), m
assert np.all(np.isnan(m[~off])), m
print(f"{test}: all 12 links carry a figure, {100 * np.min(m[off]):.2f}-{100 * np.max(m[off]):.2f}% retransmitted")
PY
    msg=$(cat "$tmp/msg")
    pass "loss 5% on all, transfer --pairs all: exit 0, $msg"
else
    fail "loss 5% on all, transfer --pairs all: exit $rc; $(tail -3 "$tmp/msg" 2>/dev/null)"
    indent <"$tmp/lossall.out"
fi

# 3. pi3 down 5 s while a repetition of the one point runs.
rc=0
WB_BIN=$bin timeout 300 "$cluster" run -- fft --sweep files --files 16 --reps 10 --warmup 1 --progress always \
    -o "$tmp/down.h5" >"$tmp/down.out" 2>&1 &
pid=$!
# Rank 0 prints a progress line after each repetition, the warm-up's first. Once two are out, the
# warm-up and the first timed repetition are done, so the outage falls inside a timed one however
# long the set-up took (a fixed 3 s after the file appeared once fell before the first).
for _ in $(seq 1 1200); do
    (($(grep -cE '^fft: +[0-9]+%' "$tmp/down.out" 2>/dev/null || true) >= 2)) && break
    kill -0 "$pid" 2>/dev/null || break
    sleep 0.1
done
"$cluster" fault pi3 down=5 >/dev/null
wait "$pid" || rc=$?
"$cluster" fault all clear >/dev/null
if ((rc == 0)) && py "$tmp/down.h5" >"$tmp/msg" 2>&1 <<'PY'; then
import sys
from pathlib import Path
import numpy as np
from analysis import derive
from analysis.derive import netfaults
from analysis.read.reader import open_run
run = open_run(Path(sys.argv[1]))
st = derive.run_point_stats(run)
assert len(st) == 1, st
t = np.asarray(run.points[0].times["t_total"])
sync = run.points[0].t_sync
# The outage lands in a window (t_total spreads) or between two (the agreements and the start
# barrier wait it out: t_sync); the report calls the point unstable either way.
assert st[0].status.startswith("unstable"), (st[0].status, t, sync)
# The retransmissions are counted where the segments were sent: on pi3 for what it sent, and on
# its peers (rank 0 above all, which hands out the audio) for what they sent to it.
lines = [l for l in netfaults.warnings(Path(sys.argv[1])) if "during p000" in l]
assert lines, netfaults.warnings(Path(sys.argv[1]))
print(f"p000 {st[0].status} (t_total {np.min(t):.2f}-{np.max(t):.2f} s, t_sync up to {np.max(sync):.2f} s); "
      f"{lines[0][:90]}")
PY
    msg=$(cat "$tmp/msg")
    pass "pi3 down 5 s during fft files 16: exit 0, $msg"
else
    fail "pi3 down 5 s during fft files 16: exit $rc; $(tail -3 "$tmp/msg" 2>/dev/null)"
    indent <"$tmp/down.out"
fi
no_left down

# 4. pi3 flapping during a load ramp.
"$cluster" fault pi3 flap=1/5 >/dev/null
rc=0
WB_BIN=$bin timeout 300 "$cluster" run -- load --ramp --clients 1 --seconds 0.5 --plan estimate --duration 3 \
    --warmup-s 0.5 --max-load 4 -o "$tmp/flap.h5" >"$tmp/flap.out" 2>&1 || rc=$?
"$cluster" fault all clear >/dev/null
if ((rc == 0)) && py "$tmp/flap.h5" >"$tmp/msg" 2>&1 <<'PY'; then
import sys
import h5py
import numpy as np
with h5py.File(sys.argv[1], "r") as f:
    steps = [g for k, g in f["load"].items() if k.startswith("s")]
    assert steps, "no load step"
    counts = []
    for g in steps:
        status = g["status"][()]
        a = g.attrs
        total = int(a["submitted"])
        by = [int(np.sum(status == k)) for k in range(3)]
        # Every request the head saw is in the file once, with one status.
        assert len(status) == total and sum(by) == total, (g.name, total, by)
        assert by[1] == int(a["rejected"]) and by[2] == int(a["unfinished"]), (g.name, by, dict(a))
        counts.append(f"{total}={by[0]}+{by[1]}+{by[2]}")
    # pi3's leader (rank 2, one rank per node) has its counters in every step.
    rates = [g["net/tcp_retrans_segs"][2] / max(1, g["net/tcp_out_segs"][2]) for g in steps]
    assert all(g["net/tcp_out_segs"][2] > 0 for g in steps), "pi3 has no counters in a step"
from pathlib import Path
from analysis import derive
from analysis.derive import netfaults
from analysis.read.reader import open_run
cause = netfaults.load_cause(Path(sys.argv[1]), derive.load_analysis(open_run(Path(sys.argv[1])))[0])
print("requests per step (submitted = done + rejected + unfinished): " + ", ".join(counts)
      + "; pi3 retransmitted " + ", ".join(f"{100 * r:.2f}%" for r in rates)
      + ("; the report's verdict names loss" + cause[:90] if cause else "; the report's verdict does not name loss"))
PY
    msg=$(cat "$tmp/msg")
    verdict=$(grep -m1 "saturation" "$tmp/flap.out" | cut -c1-160)
    pass "pi3 flap 1 s of 5 during a load ramp: exit 0, $msg; ${verdict:-no saturation line}"
else
    fail "pi3 flap during a load ramp: exit $rc; $(tail -3 "$tmp/msg" 2>/dev/null)"
    indent <"$tmp/flap.out"
fi
no_left flap

"$cluster" down >/dev/null 2>&1
if ip netns list 2>/dev/null | grep -Eq '^pi[0-9]+( |$)'; then fail "namespaces left after down"; fi
finish
