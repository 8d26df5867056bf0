#!/usr/bin/env bash
# Root-only reliability checks: a full disk at several moments (a small tmpfs), and a loop of SIGKILLs at
# random moments on rank 0 and on rank 1. Ends with "N passed, N failed". Usage: tests/reliability/run.sh
# Knobs: KILLS (kills per rank, default 30), NP (default 2).
set -uo pipefail
cd "$(dirname "$0")/../.."
PYTHON=${PYTHON:-/usr/bin/python3}
KILLS=${KILLS:-30}
NP=${NP:-2}
BIN=build/wulfbench
# See check_file.py: set ALLOW_LAST= (empty) once bench_fft prints a row after flushing the point.
ALLOW_LAST=${ALLOW_LAST---allow-last}
if [ "$(id -u)" -ne 0 ]; then
  echo "tests/reliability/run.sh: needs root (it mounts a tmpfs); skipped"
  echo "0 passed, 0 failed, 1 skipped"
  exit 0
fi
[ -x "$BIN" ] || { echo "$BIN is missing: run make first"; exit 1; }
export OMPI_ALLOW_RUN_AS_ROOT=1 OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1 OMPI_MCA_btl_base_warn_component_unused=0
passed=0 failed=0
work=$(mktemp -d)
full=$work/full
mkdir -p "$full"
cleanup() { mountpoint -q "$full" && umount "$full"; rm -rf "$work"; }
trap cleanup EXIT
ok() { passed=$((passed + 1)); echo "ok - $*"; }
bad() { failed=$((failed + 1)); echo "not ok - $*"; }

mount -t tmpfs -o size=2m tmpfs "$full" || { echo "cannot mount a tmpfs"; exit 1; }

# One full-disk case: leave FREE_KB free, run, and check the ending.
disk_full() {
  local free_kb=$1 name=$2; shift 2
  rm -rf "${full:?}"/*
  local size_kb
  size_kb=$(df -k --output=avail "$full" | tail -1)
  [ "$size_kb" -gt "$free_kb" ] && fallocate -l $(((size_kb - free_kb) * 1024)) "$full/filler"
  local out=$full/$name.h5
  timeout 300 mpirun -np 3 --oversubscribe "$BIN" "$@" -o "$out" >"$work/out" 2>"$work/err"
  local rc=$? what="disk full with ${free_kb} kB free: $*"
  local lines
  lines=$(grep -c '^wulfbench: error' "$work/err")
  if [ $rc -ne 1 ]; then bad "$what: exit $rc, not 1 ($(grep -m1 -i 'segm\|signal\|wulfbench' "$work/err"))"; return; fi
  if [ "$lines" -ne 1 ] || ! grep -q "^wulfbench: error: .*$out.*No space left on device" "$work/err"; then
    bad "$what: not one line naming the file and ENOSPC: $(grep '^wulfbench: error' "$work/err" | head -3)"; return
  fi
  local f problem=""
  for f in "$out" "$out.partial"; do
    [ -e "$f" ] || continue
    [ -s "$f" ] || problem="$problem; $f is empty"
    grep -q "readable in $f" "$work/err" || problem="$problem; no line names $f"
    local pts
    pts=$(grep -oE '^[0-9]+ ' "$work/out" | tr -d ' ' | tr '\n' ' ')
    "$PYTHON" tests/reliability/check_file.py $ALLOW_LAST "$f" $pts >"$work/check" || problem="$problem; $(cat "$work/check")"
  done
  if [ -n "$problem" ]; then bad "$what$problem"; else ok "$what"; fi
}

FFT=(fft --sweep files --files 1:64 --reps 3)
for free_kb in 0 12 30 50 70; do disk_full "$free_kb" fft "${FFT[@]}"; done
# Every test, not the two that --pairs all runs by default, so the file outgrows 60 kB.
for free_kb in 0 20 60; do disk_full "$free_kb" pairs transfer --pairs all --tests all -m 1:64k -i 3; done
umount "$full"

# The kill loop: SIGKILL rank R at a random moment in the first seconds; the file must open with every
# point printed before the kill.
kill_once() {
  local rank=$1 i=$2
  local out=$work/k$rank-$i.h5 delay_ms=$((RANDOM % 5000 + 100))
  mpirun -np "$NP" --oversubscribe "$BIN" fft --sweep files --files 1:16 --reps 3 -o "$out" \
    >"$work/kout" 2>"$work/kerr" &
  local mp=$! pid="" t
  for t in $(seq 300); do
    for k in $(pgrep -P $mp); do
      tr '\0' '\n' <"/proc/$k/environ" 2>/dev/null | grep -qx "OMPI_COMM_WORLD_RANK=$rank" && pid=$k
    done
    [ -n "$pid" ] && break
    sleep 0.05
  done
  if [ -z "$pid" ]; then bad "kill rank $rank #$i: rank not found"; wait $mp; return; fi
  sleep "$(printf '0.%03d' $((delay_ms % 1000)))"
  [ $delay_ms -ge 1000 ] && sleep $((delay_ms / 1000))
  kill -KILL "$pid" 2>/dev/null
  wait $mp
  local f=$out
  [ -e "$f" ] || f=$out.partial
  if [ ! -e "$f" ]; then
    # Killed before the file was created: nothing was printed, nothing to read.
    if grep -qE '^[0-9]+ ' "$work/kout"; then bad "kill rank $rank at ${delay_ms} ms: points printed, no file"
    else ok "kill rank $rank at ${delay_ms} ms: before the file existed"; fi
    return
  fi
  local pts
  pts=$(grep -oE '^[0-9]+ ' "$work/kout" | tr -d ' ' | tr '\n' ' ')
  if "$PYTHON" tests/reliability/check_file.py $ALLOW_LAST "$f" $pts >"$work/check"; then
    ok "kill rank $rank at ${delay_ms} ms: $(basename "$f") opens with points [${pts% }]"
  else
    bad "kill rank $rank at ${delay_ms} ms: $(cat "$work/check")"
  fi
  rm -f "$out" "$out.partial"
}
for rank in 0 1; do
  for i in $(seq "$KILLS"); do kill_once "$rank" "$i"; done
done

echo
echo "$passed passed, $failed failed"
[ "$failed" -eq 0 ]
