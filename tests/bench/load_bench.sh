#!/usr/bin/env bash
# Figures for `wulfbench load` on this machine: the saturation point in requests/s for one 5 s file per
# request (open loop, Poisson arrivals, ramp bracketed within 10%) on 2, 3 and 4 ranks, with the p95
# latency at that point. Prints figures only; nothing here asserts a timing.
# Knobs: NPS="2 3 4", START (first rate, req/s), DURATION (s per step), SLO_MS, MPIEXEC, PYTHON.
set -euo pipefail
cd "$(dirname "$0")/../.."
PYTHON=${PYTHON:-/usr/bin/python3}
MPIEXEC=${MPIEXEC:-mpirun}
NPS=${NPS:-"2 3 4"}
START=${START:-32}
DURATION=${DURATION:-3}
SLO_MS=${SLO_MS:-1000}
if [ "$(id -u)" -eq 0 ]; then
  export OMPI_ALLOW_RUN_AS_ROOT=1 OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1
fi
[ -x build/wulfbench ] || { echo "load_bench: build/wulfbench is missing; run make first" >&2; exit 1; }
out=$(mktemp -d)
trap 'rm -rf "$out"' EXIT

for np in $NPS; do
  start=$(date +%s.%N)
  # Default roles: 2 ranks = head + 1 worker (the head makes the requests); 3+ ranks add 1 client rank.
  "$MPIEXEC" -np "$np" --oversubscribe build/wulfbench load --rates "$START" --ramp \
    --duration "$DURATION" --warmup-s 0.5 --slo-ms "$SLO_MS" --files-per-request 1 --seconds 5 \
    --quiet -o "$out/load-np$np.h5" >/dev/null
  end=$(date +%s.%N)
  echo "$np $start $end" >>"$out/times"
done

"$PYTHON" - "$out" "$SLO_MS" <<'PY'
import socket, sys
from pathlib import Path
import h5py

out, slo = Path(sys.argv[1]), sys.argv[2]
times = {int(l.split()[0]): float(l.split()[2]) - float(l.split()[1]) for l in (out / "times").read_text().splitlines()}

def s(v):
    return v.decode() if isinstance(v, bytes) else v

print(f"# load_bench on {socket.gethostname()}: saturation of an open-loop ramp, 1 x 5 s file (44.1 kHz) per "
      f"request, SLO p95 {slo} ms")
print(f"# {'np':>3} {'workers':>7} {'clients':>7} {'saturation_rps':>14} {'p95_ms':>8} {'first_fail_rps':>14} "
      f"{'why':>10} {'steps':>5} {'run_s':>6}")
for np_ in sorted(times):
    with h5py.File(out / f"load-np{np_}.h5") as f:
        a = f["load"].attrs
        first = f["load"][sorted(k for k in f["load"].keys())[0]].attrs
        source = "ranks" if s(first["client_source"]) == "ranks" else "head"
        print(f"  {np_:>3} {int(first['workers']):>7} {source:>7} {a['saturation_rps']:>14.1f} "
              f"{a['saturation_p95_s'] * 1e3:>8.1f} {a['first_fail_rps']:>14.1f} {s(a['fail_reason']):>10} "
              f"{int(a['steps']):>5} {times[np_]:>6.1f}")
PY
