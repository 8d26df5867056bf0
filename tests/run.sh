#!/usr/bin/env bash
# Run test suites and add up their counts into one closing line "N passed, N failed".
# Usage: tests/run.sh SUITE...   suites: unit mpi analysis
set -uo pipefail
cd "$(dirname "$0")/.."
PYTHON=${PYTHON:-/usr/bin/python3}
# WB_MPI=mpich (make ... MPI=mpich) tests the MPICH build in build-mpich/ under mpiexec.mpich.
export WB_MPI=${WB_MPI:-openmpi}
case $WB_MPI in
  openmpi) BUILD=build ;;
  mpich) BUILD=build-mpich ;;
  *) echo "tests/run.sh: WB_MPI=$WB_MPI; use openmpi or mpich" >&2; exit 2 ;;
esac
# make NATIVE=1 names its own folder (build-native/); the unit suite runs that build's tests.
BUILD=${WB_BUILD:-$BUILD}
if [ "$WB_MPI" = openmpi ] && [ "$(id -u)" -eq 0 ]; then
  export OMPI_ALLOW_RUN_AS_ROOT=1 OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1
fi
# shellcheck source=tests/harness.sh
source tests/harness.sh
passed=0 failed=0 skipped=0
log=$(mktemp)
trap 'rm -f "$log"' EXIT

for suite in "$@"; do
  case $suite in
    unit)
      wavs=$(mktemp -d)
      bash tests/unit/make_wavs.sh "$wavs" >/dev/null
      for t in "$BUILD"/tests/test_*; do
        case $t in *.d) continue ;; esac
        echo "== $t"
        "$t" "$wavs" >"$log" 2>&1; rc=$?
        grep -E '^(not ok|skip -)' "$log" || true
        tail -1 "$log"
        tally "$log" $rc
      done
      rm -rf "$wavs"
      # The source checks (the include rule) need no build.
      echo "== tests/unit/*.py"
      "$PYTHON" -m pytest -q -p no:cacheprovider tests/unit/test_*.py 2>&1 | tee "$log"; rc=${PIPESTATUS[0]}
      tally "$log" $rc ;;
    mpi|analysis)
      echo "== tests/$suite${WB_MPI:+ ($WB_MPI)}"
      "$PYTHON" -m pytest -q -p no:cacheprovider "tests/$suite" 2>&1 | tee "$log"; rc=${PIPESTATUS[0]}
      # pytest exits 5 when it collected nothing: that is a failure here, not a pass.
      [ "$rc" -eq 5 ] && rc=1
      tally "$log" $rc ;;
    *) echo "tests/run.sh: unknown suite '$suite'; use unit, mpi or analysis" >&2; exit 2 ;;
  esac
done
echo
if [ "$skipped" -gt 0 ]; then
  echo "$passed passed, $failed failed, $skipped skipped"
else
  echo "$passed passed, $failed failed"
fi
[ "$failed" -eq 0 ]
