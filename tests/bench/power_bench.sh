#!/usr/bin/env bash
# The cost of power sampling: fft t_total with the Pi 5 sampler running (a fake vcgencmd on PATH,
# 10 Hz, as on a Pi 5) against --power none, in interleaved runs A B A B; the ratio is the median of
# the paired ratios of each run's median t_total, with its min and max. Target: <= 1.01.
# Nothing here passes or fails on speed: a shared machine is too noisy for that.
# Knobs: ROUNDS (pairs, default 7), REPS (repetitions per run, default 40), NP (ranks, default 2),
# SECONDS_LIST (the point's audio seconds, default 30).
set -euo pipefail
cd "$(dirname "$0")/../.."
PYTHON=${PYTHON:-/usr/bin/python3}
if [ "$(id -u)" -eq 0 ]; then export OMPI_ALLOW_RUN_AS_ROOT=1 OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1; fi
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
WB=build/wulfbench
ROUNDS=${ROUNDS:-7}
REPS=${REPS:-40}
NP=${NP:-2}
SECONDS_LIST=${SECONDS_LIST:-30}

"$PYTHON" - "$tmp/bin" <<'PY'
import sys
from pathlib import Path
sys.path.insert(0, "tests/mpi")
import fake_power
fake_power.fake_vcgencmd(Path(sys.argv[1]))
PY

# Median t_total of a run, and the source its rank 0 used (to prove the sampler ran).
med() {
  "$PYTHON" -c 'import sys, h5py, numpy as np
f = h5py.File(sys.argv[1])
print(float(np.median(f["fft/p000/t_total"][()])), f["power/source"][0].decode())' "$1"
}

run() {
  PATH="$tmp/bin:$PATH" mpirun -np "$NP" --oversubscribe -x PATH "$WB" fft --sweep sizes --seconds "$SECONDS_LIST" \
    --reps "$REPS" --plan measure --power "$1" --power-idle 0 -q --force -o "$tmp/$1.h5" >/dev/null
  med "$tmp/$1.h5"
}

echo "== power sampling cost: fft --sweep sizes --seconds $SECONDS_LIST on $NP ranks, t_total median over $REPS reps"
echo "   per run; A = --power pi5 (fake vcgencmd at 10 Hz), B = --power none; $ROUNDS interleaved pairs A B"
: >"$tmp/pairs"
for ((r = 0; r < ROUNDS; r++)); do
  read -r a src_a < <(run pi5)
  read -r b src_b < <(run none)
  [ "$src_a" = pi5 ] && [ "$src_b" = none ] || { echo "power_bench: sources were $src_a and $src_b" >&2; exit 1; }
  echo "$a $b" >>"$tmp/pairs"
done
"$PYTHON" - "$tmp/pairs" <<'PY'
import sys
import numpy as np
ab = np.loadtxt(sys.argv[1], ndmin=2)
r = ab[:, 0] / ab[:, 1]
print(f"{'t_total, sampling / none':34s} {1e3 * np.median(ab[:, 0]):10.3f} ms {1e3 * np.median(ab[:, 1]):10.3f} ms "
      f"{np.median(r):7.3f} [{r.min():.3f}, {r.max():.3f}]  ({len(r)} pairs; target <= 1.01)")
PY
