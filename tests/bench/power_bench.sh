#!/usr/bin/env bash
# The cost of power sampling: fft t_total with the Pi 5 sampler running at 10 Hz against --power none,
# in interleaved runs (M V N, V N M, N M V, ...): M reads the PMIC through the firmware mailbox (the tests'
# fake_vcio.so answers the ioctl of a fake /dev/vcio), V by starting vcgencmd (the tests' fake, a shell
# script) each sample, N measures nothing. Each ratio is the median over rounds of the round's M / N
# (or V / N) of each run's median t_total, with its min and max. Target: <= 1.01. The fault build runs
# every arm (it alone reads a fake /dev) with the same flags as the release build.
# Nothing here passes or fails on speed: a shared machine is too noisy for that.
# Knobs: ROUNDS (rounds, default 7), REPS (repetitions per run, default 40), NP (ranks, default 2),
# SECONDS_LIST (the point's audio seconds, default 30).
set -euo pipefail
cd "$(dirname "$0")/../.."
PYTHON=${PYTHON:-/usr/bin/python3}
if [ "$(id -u)" -eq 0 ]; then export OMPI_ALLOW_RUN_AS_ROOT=1 OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1; fi
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
WB=build/wulfbench-faults
SHIM=build/tests/fake_vcio.so
ROUNDS=${ROUNDS:-7}
REPS=${REPS:-40}
NP=${NP:-2}
SECONDS_LIST=${SECONDS_LIST:-30}
[ -x "$WB" ] && [ -f "$SHIM" ] || make --no-print-directory "$WB" "$SHIM" >/dev/null

"$PYTHON" - "$tmp" <<'PY'
import sys
from pathlib import Path
sys.path.insert(0, "tests/mpi")
import fake_power
tmp = Path(sys.argv[1])
fake_power.fake_vcgencmd(tmp / "bin")
(tmp / "mbox/dev").mkdir(parents=True)
(tmp / "mbox/dev/vcio").write_text("")
(tmp / "pmic.txt").write_text(fake_power.pmic_text())
(tmp / "bare").mkdir()
PY

# Median t_total of a run, the share of a core rank 0's sampler took (nan without one), and its source
# and reader (to prove which way it read).
med() {
  "$PYTHON" -c 'import sys, h5py, numpy as np
f = h5py.File(sys.argv[1])
g = f["fft/p000"]
share = g["sampler_cpu_share"][0] if "sampler_cpu_share" in g else float("nan")
print(float(np.median(g["t_total"][()])), share, f["power/source"][0].decode(), f["power/reader"][0].decode() or "-")' "$1"
}

# run ARM: mailbox (the fake /dev/vcio, no vcgencmd), vcgencmd (on PATH, no /dev/vcio) or none.
run() {
  local root=$tmp/bare path=$PATH power=pi5
  case $1 in
    mailbox) root=$tmp/mbox ;;
    vcgencmd) path=$tmp/bin:$PATH ;;
    none) power=none ;;
  esac
  PATH=$path WB_SYSFS_ROOT=$root LD_PRELOAD=$PWD/$SHIM WB_FAKE_VCIO_TEXT=$tmp/pmic.txt \
    mpirun -np "$NP" --oversubscribe -x PATH -x WB_SYSFS_ROOT -x LD_PRELOAD -x WB_FAKE_VCIO_TEXT \
    "$WB" fft --sweep sizes --seconds "$SECONDS_LIST" --reps "$REPS" --plan measure --power "$power" \
    --power-idle 0 -q --force -o "$tmp/$1.h5" >/dev/null 2>"$tmp/$1.err" || { cat "$tmp/$1.err" >&2; exit 1; }
  med "$tmp/$1.h5"
}

echo "== power sampling cost: fft --sweep sizes --seconds $SECONDS_LIST on $NP ranks, t_total median over $REPS reps"
echo "   per run; M = pi5 through the firmware mailbox, V = pi5 by starting vcgencmd, N = --power none (10 Hz);"
echo "   $ROUNDS interleaved rounds, the order turning each round"
: >"$tmp/rounds"
# The order turns each round (M V N, V N M, N M V, ...), so no arm always runs first.
arms=(mailbox vcgencmd none)
for ((r = 0; r < ROUNDS; r++)); do
  for ((k = 0; k < 3; k++)); do
    arm=${arms[(r + k) % 3]}
    read -r "t_$arm" "c_$arm" "src_$arm" "how_$arm" < <(run "$arm")
  done
  m=$t_mailbox cm=$c_mailbox src_m=$src_mailbox how_m=$how_mailbox
  v=$t_vcgencmd cv=$c_vcgencmd src_v=$src_vcgencmd how_v=$how_vcgencmd
  src_n=$src_none n=$t_none
  [ "$src_m/$how_m $src_v/$how_v $src_n" = "pi5/mailbox pi5/vcgencmd none" ] ||
    { echo "power_bench: read $src_m/$how_m, $src_v/$how_v and $src_n" >&2; exit 1; }
  echo "$m $v $n $cm $cv" >>"$tmp/rounds"
done
"$PYTHON" - "$tmp/rounds" <<'PY'
import sys
import numpy as np
mvn = np.loadtxt(sys.argv[1], ndmin=2)
for name, col in (("mailbox / none", 0), ("vcgencmd / none", 1)):
    r = mvn[:, col] / mvn[:, 2]
    print(f"{'t_total, ' + name:34s} {1e3 * np.median(mvn[:, col]):10.3f} ms {1e3 * np.median(mvn[:, 2]):10.3f} ms "
          f"{np.median(r):7.3f} [{r.min():.3f}, {r.max():.3f}]  ({len(r)} rounds; target <= 1.01)")
# What the sampler itself took (sampler_cpu_share: its thread and the programs it started, over the
# point's wall time): the cost the t_total ratios above are too noisy to resolve.
for name, col in (("mailbox", 3), ("vcgencmd", 4)):
    c = mvn[:, col]
    print(f"{'sampler CPU, ' + name:34s} {100 * np.median(c):8.3f} % of a core [{100 * c.min():.3f}, {100 * c.max():.3f}]")
PY
