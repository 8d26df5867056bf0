#!/usr/bin/env bash
# fft's read of WAV inputs from a disk, cold, by two wulfbench binaries alternated (A B A B ...): the
# read-ahead (each file's bytes read while the one before decodes) against a build from before it.
# Usage: tests/bench/readahead_bench.sh OTHER-BINARY
# Environment: WB_BIN (default build/wulfbench), BENCH_DIR (a folder on the disk to measure; default
#   results/bench-readahead/wav), BENCH_FILES (default 256 files of 5 s, 113 MB), ROUNDS (default 4),
#   NP (ranks, default 2; 1 runs --baseline), MPIRUN_ARGS (more mpirun options, e.g. --bind-to none:
#   Open MPI binds each of 2 ranks or fewer to one core, where the read's own CPU work and the decode
#   take turns and only the disk's wait overlaps), PYTHON.
# Root drops the page cache between repetitions (fft --input-cache drop); prints each round's median
# t_read and t_read_io of both, and the median of the paired ratios with the lowest and highest.
set -euo pipefail
cd "$(dirname "$0")/../.."
PYTHON=${PYTHON:-/usr/bin/python3}
other=${1:-}
[[ -n $other && -x $other ]] || { echo "readahead_bench: give the other wulfbench binary to compare with, e.g. a build of an older commit" >&2; exit 2; }
bin=${WB_BIN:-build/wulfbench}
[[ -x $bin ]] || { echo "readahead_bench: no $bin; run make first" >&2; exit 1; }
command -v sox >/dev/null || { echo "readahead_bench: needs sox (apt-get install sox)" >&2; exit 1; }
files=${BENCH_FILES:-256} rounds=${ROUNDS:-4} np=${NP:-2}
[[ $files =~ ^[1-9][0-9]*$ && $rounds =~ ^[1-9][0-9]*$ && $np =~ ^[1-9][0-9]*$ ]] ||
  { echo "readahead_bench: BENCH_FILES, ROUNDS and NP are counts such as 256, 4 and 2" >&2; exit 2; }
dir=${BENCH_DIR:-results/bench-readahead/wav}
out=results/bench-readahead/$(date -u +%Y%m%dT%H%M%SZ)
mkdir -p "$dir" "$out"
for i in $(seq 1 "$files"); do
  [[ -s $dir/w$i.wav ]] || sox -n -r 44100 -b 16 -c 1 "$dir/w$i.wav" synth 5 sine $((300 + 10 * i))
done
if [[ $(id -u) -eq 0 ]]; then export OMPI_ALLOW_RUN_AS_ROOT=1 OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1; fi
extra=()
((np > 1)) || extra=(--baseline)
echo "# $(uptime)"
for r in $(seq 1 "$rounds"); do
  for side in other this; do
    b=$bin
    [[ $side == this ]] || b=$other
    # shellcheck disable=SC2086 # MPIRUN_ARGS is a list of options
    mpirun -np "$np" --oversubscribe ${MPIRUN_ARGS:-} "$b" fft "${extra[@]}" --input "$dir" --input-cache drop --sweep files \
      --files "$files" --file-seconds 5 --reps 5 --result peaks --plan estimate -q -o "$out/$side-$r.h5" >/dev/null
  done
done
echo "# $(uptime)"
"$PYTHON" - "$out" "$rounds" <<'PY'
import sys

import h5py
import numpy as np

out, rounds = sys.argv[1], int(sys.argv[2])
ratios = []
print(f"{'round':>5} {'other t_read':>13} {'io':>7} {'this t_read':>12} {'io':>7} {'this/other':>10}  (ms)")
for r in range(1, rounds + 1):
    m = {}
    for side in ("other", "this"):
        with h5py.File(f"{out}/{side}-{r}.h5", "r") as f:
            g = f["fft/p000"]
            m[side] = (float(np.median(g["t_read"][()])), float(np.median(g["t_read_io"][()])))
    ratios.append(m["this"][0] / m["other"][0])
    print(f"{r:5d} {m['other'][0] * 1e3:13.1f} {m['other'][1] * 1e3:7.1f} {m['this'][0] * 1e3:12.1f}"
          f" {m['this'][1] * 1e3:7.1f} {ratios[-1]:10.3f}")
print(f"t_read this/other: median {np.median(ratios):.3f} [{min(ratios):.3f}, {max(ratios):.3f}] over {rounds} rounds")
print(f"# files: {out}")
PY
