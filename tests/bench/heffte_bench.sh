#!/usr/bin/env bash
# wulfbench dfft beside heFFTe's speed3d (FFTW backend), cell by cell, in interleaved rounds.
#
# heFFTe is built from the source archive in ../shared/ref (or HEFFTE_TARBALL) into a cache folder
# named after the archive's hash, once per machine: cmake, Release, FFTW backend.
#
# Cells: ranks 1, 2 and 4 (4 oversubscribes 2 cores) x r2c and c2c x 128^3 and 256^3, double.
# In each cell heFFTe first gets its best options: every reshape (-slabs, -pencils), every exchange
# (-a2a, -a2av, -p2p, -p2p_pl) and -reorder or -no-reorder are tried once, with 2 transforms each
# way, and the fastest is the one measured. wulfbench plans once in a run before the rounds and saves its
# wisdom, which every round plans from. The rounds then run wulfbench and speed3d in turn, the order
# swapped each round.
#
# One flop count on both sides: 5 N log2 N for c2c and half that for r2c, N the points of the cube,
# over the time of one transform. speed3d prints the mean time of a transform over its forward and
# backward runs (on the slowest rank); wulfbench runs --direction both, and its two figures are
#   forward: its forward transform's median t_total;
#   both:    the mean of its forward and backward medians, as speed3d counts.
# Both are set against speed3d's one time.
#
# The guard: every cell's median ratio (wulfbench over heFFTe) is at least 1.1, and no round is
# below 1.0. The script exits 3 when a cell misses it, after printing every cell.
#
# Knobs: HEFFTE_ROUNDS (default 5), HEFFTE_RANKS ("1 2 4"), HEFFTE_SIDES ("128 256"),
# HEFFTE_KINDS ("r2c c2c"), DFFT_REPS (default 5; speed3d runs as many transforms each way),
# HEFFTE_CACHE (default /var/cache/wulfbench, or ~/.cache/wulfbench when that is not writable),
# HEFFTE_KEEP=DIR (keep the runs' output there).
set -euo pipefail
cd "$(dirname "$0")/../.."
PYTHON=${PYTHON:-/usr/bin/python3}
ROUNDS=${HEFFTE_ROUNDS:-5}
RANKS=${HEFFTE_RANKS:-"1 2 4"}
SIDES=${HEFFTE_SIDES:-"128 256"}
KINDS=${HEFFTE_KINDS:-"r2c c2c"}
REPS=${DFFT_REPS:-5}
TARBALL=${HEFFTE_TARBALL:-../shared/ref/heffte-4d8d459.tar.gz}
BIN=build/wulfbench
if [ "$(id -u)" -eq 0 ]; then export OMPI_ALLOW_RUN_AS_ROOT=1 OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1; fi
export OMP_NUM_THREADS=1
RUN=(mpirun --oversubscribe)
# Where heFFTe cannot be had, make bench goes on without its cells: one line, exit 0.
skip() { echo "== dfft beside heFFTe: skipped, $*"; exit 0; }

for tool in cmake mpicxx mpirun; do
  command -v "$tool" >/dev/null || skip "$tool is missing (make deps-bench installs it)"
done
[ -x "$BIN" ] || { echo "heffte_bench: $BIN is missing; run make first" >&2; exit 1; }
if [ ! -r "$TARBALL" ]; then
  skip "heFFTe's source archive $TARBALL is not here; set HEFFTE_TARBALL=FILE"
fi

# The cache: one folder per archive, used only once its build finished.
cache=${HEFFTE_CACHE:-/var/cache/wulfbench}
mkdir -p "$cache" 2>/dev/null && [ -w "$cache" ] || cache=$HOME/.cache/wulfbench
hash=$(sha256sum "$TARBALL" | cut -c1-12)
dir=$cache/heffte-$hash
H=$dir/build/benchmarks
if [ ! -e "$dir/built" ]; then
  echo "# building heFFTe's speed3d into $dir (once per machine; about a minute on 2 cores)" >&2
  rm -rf "$dir" && mkdir -p "$dir"
  tar -xzf "$TARBALL" -C "$dir"
  src=$(find "$dir" -maxdepth 2 -name CMakeLists.txt -printf '%h\n' | head -1)
  if ! { cmake -S "$src" -B "$dir/build" -DHeffte_ENABLE_FFTW=ON -DCMAKE_BUILD_TYPE=Release \
           -DHeffte_ENABLE_TESTING=ON -DCMAKE_CXX_COMPILER=mpicxx -DCMAKE_C_COMPILER=mpicc &&
         make -C "$dir/build" -j"$(nproc)" speed3d_r2c speed3d_c2c; } >"$dir/build.log" 2>&1; then
    skip "heFFTe did not build here: $(grep -m1 -iE 'error' "$dir/build.log" || tail -1 "$dir/build.log") (log: $dir/build.log)"
  fi
  touch "$dir/built"
fi

work=$(mktemp -d)
# HEFFTE_KEEP=DIR keeps every run's output (speed3d's times, wulfbench's result files) there.
trap '[ -n "${HEFFTE_KEEP:-}" ] && cp -r "$work/." "$HEFFTE_KEEP/"; rm -rf "$work"' EXIT

run() {
  if ! "$@" >"$work/last.log" 2>&1; then
    echo "heffte_bench: failed: $*" >&2
    tail -20 "$work/last.log" >&2
    exit 1
  fi
}

# speed3d's time per transform, from its output.
speed3d() { # KIND NP SIDE RUNS OPTIONS...
  local kind=$1 np=$2 side=$3 runs=$4
  shift 4
  run "${RUN[@]}" -np "$np" "$H/speed3d_$kind" fftw double "$side" "$side" "$side" "$@" -nruns"$runs"
  awk '/^Time per run:/ {print $4}' "$work/last.log"
}

# wulfbench's dfft on the cell's wisdom file: the first run in a cell plans (FFTW_MEASURE) and saves
# it, every round after plans from it, so all rounds time the same plans. Planning afresh in each
# process could choose another plan in each round, and one chosen during a slow second stayed for
# that whole round.
wb_dfft() { # NP SIDE KIND CELL OUT
  run "${RUN[@]}" -np "$1" "$BIN" dfft --dims 3 --n "$2" --kind "$3" --direction both \
    --reps "$REPS" --wisdom "$work/wisdom-$4" -q --force -o "$5"
}

OPTIONS=()
for shape in -slabs -pencils; do
  for comm in -a2a -a2av -p2p -p2p_pl; do
    for order in -reorder -no-reorder; do OPTIONS+=("$shape $comm $order"); done
  done
done

echo "# heffte_bench on $(hostname): $ROUNDS interleaved rounds, $REPS transforms each way per run" >&2
for side in $SIDES; do
  for np in $RANKS; do
    for kind in $KINDS; do
      cell=$kind-$side-$np
      best="" best_t=""
      : >"$work/search-$cell"
      for opts in "${OPTIONS[@]}"; do
        # shellcheck disable=SC2086
        t=$(speed3d "$kind" "$np" "$side" 2 $opts)
        echo "$opts $t" >>"$work/search-$cell"
        if [ -z "$best" ] || "$PYTHON" -c 'import sys; sys.exit(not float(sys.argv[1]) < float(sys.argv[2]))' "$t" "$best_t"; then
          best=$opts best_t=$t
        fi
      done
      echo "$best" >"$work/best-$cell"
      echo "# $cell: heFFTe's fastest options $best ($best_t s per transform)" >&2
      # wulfbench plans in a run of its own before the rounds (see wb_dfft).
      wb_dfft "$np" "$side" "$kind" "$cell" "$work/plan-$cell.h5"
      for round in $(seq 1 "$ROUNDS"); do
        steps=(wb he)
        [ $((round % 2)) -eq 0 ] && steps=(he wb)
        for step in "${steps[@]}"; do
          if [ "$step" = wb ]; then
            wb_dfft "$np" "$side" "$kind" "$cell" "$work/wb-$cell-$round.h5"
          else
            # shellcheck disable=SC2086
            speed3d "$kind" "$np" "$side" "$REPS" $best >"$work/he-$cell-$round"
          fi
        done
      done
    done
  done
done

"$PYTHON" - "$work" "$ROUNDS" "$SIDES" "$RANKS" "$KINDS" <<'PY'
"""Medians of paired ratios per cell, the lowest and highest round, and the guard."""
import math
import statistics as st
import sys

import h5py

work, rounds = sys.argv[1], int(sys.argv[2])
sides, ranks, kinds = (a.split() for a in sys.argv[3:6])
print("wulfbench dfft against heFFTe speed3d (FFTW backend, double): GFLOPS = 5 N log2 N (r2c half) over")
print("the time of one transform; ratio = wulfbench / heFFTe, median of paired rounds [lowest, highest round];")
print("'forward' is wulfbench's forward median, 'both' the mean of its forward and backward medians;")
print("heFFTe's is speed3d's mean over its forward and backward runs in both columns.")
print(f"{'cell':>14} {'heFFTe options':>26} {'heFFTe':>7} {'fwd':>7} {'both':>7} {'ratio fwd':>22} {'ratio both':>22}  guard")
missed = []
for side in sides:
    for np_ in ranks:
        for kind in kinds:
            cell = f"{kind}-{side}-{np_}"
            n = int(side) ** 3
            flops = 5 * n * math.log2(n) / (2 if kind == "r2c" else 1)
            he, fwd, both = [], [], []
            for r in range(1, rounds + 1):
                he.append(flops / float(open(f"{work}/he-{cell}-{r}").read()) / 1e9)
                a = h5py.File(f"{work}/wb-{cell}-{r}.h5")["dfft/p000"].attrs
                assert abs(a["flops"] - flops) <= 1e-6 * flops, (a["flops"], flops)
                fwd.append(flops / a["t_total_median"] / 1e9)
                both.append(flops / ((a["t_total_median"] + a["t_total_median_backward"]) / 2) / 1e9)
            rf = [w / h for w, h in zip(fwd, he)]
            rb = [w / h for w, h in zip(both, he)]
            ok = all(st.median(r) >= 1.1 and min(r) >= 1.0 for r in (rf, rb))
            if not ok:
                missed.append(cell)
            opts = open(f"{work}/best-{cell}").read().strip()
            print(f"{kind} {side}^3 np{np_:>2} {opts:>26} {st.median(he):7.2f} {st.median(fwd):7.2f} {st.median(both):7.2f}"
                  f" {st.median(rf):8.2f} [{min(rf):4.2f}, {max(rf):4.2f}] {st.median(rb):8.2f} [{min(rb):4.2f}, {max(rb):4.2f}]"
                  f"  {'ok' if ok else 'MISSED'}")
print("heFFTe's option search, seconds per transform (one run of 2 transforms each way, before the rounds):")
for side in sides:
    for np_ in ranks:
        for kind in kinds:
            cell = f"{kind}-{side}-{np_}"
            rows = sorted((float(l.rsplit(" ", 1)[1]), l.rsplit(" ", 1)[0]) for l in open(f"{work}/search-{cell}"))
            print(f"   {cell:>12}: " + ", ".join(f"{o} {t:.4f}" for t, o in rows[:3]) + f"; slowest {rows[-1][1]} {rows[-1][0]:.4f}")
if missed:
    print(f"guard MISSED (median >= 1.1 and no round under 1.0) in: {' '.join(missed)}")
    sys.exit(3)
print("guard held in every cell: median >= 1.1, no round under 1.0")
PY
