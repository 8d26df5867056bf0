#!/usr/bin/env bash
# tests/cluster/buys.sh: "What the cluster buys" on the emulated cluster, against a desktop baseline
# made on this machine at full speed: slow nodes (--cpu-share 0.25) on pi3 links through the serial
# switch, runs at 1, 2 and 4 nodes, spectra and peaks.
set -uo pipefail

usage() {
    cat <<'EOF'
Usage: bash tests/cluster/buys.sh

A desktop baseline outside the cluster (full speed), then `fft --sweep files` at 1, 2 and 4 emulated
pi3 nodes (--cpu-share 0.25, --switch serial), then the report with --baseline. Checks that:
  - the desktop comparison is `cross-machine`, with no efficiency or Karp-Flatt in any CSV;
  - buys.csv gives a break-even from the measured 1, 2, 4-node series;
  - spectra over pi3 links: "no node count wins" with both figures;
  - --result peaks: a break-even, or a statement of what limits the cluster.
Needs root. Prints "N passed, N failed" last; exits 1 if anything failed.
Environment: WB_BIN (default build/wulfbench), PYTHON (default /usr/bin/python3).
EOF
}
repo=$(cd "$(dirname "${BASH_SOURCE[0]}")/../.." && pwd)
cluster=$repo/jobs/emulate/cluster
python=${PYTHON:-/usr/bin/python3}
# shellcheck source=tests/harness.sh
source "$repo/tests/harness.sh"
harness_args "$@"
indent() { sed 's/^/    | /' | tail -n 12; }
abort() { echo "FAIL: $*"; failed=$((failed + 1)); finish; exit 1; }

[[ $(id -u) -eq 0 ]] || abort "needs root: network namespaces"
export OMPI_ALLOW_RUN_AS_ROOT=1 OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1
bin=${WB_BIN:-$repo/build/wulfbench}
[[ -x $bin ]] || abort "no $bin; run make first"
export WB_BIN=$bin

tmp=$(mktemp -d /tmp/wb-buys-cluster.XXXXXX)
chmod 755 "$tmp"
cleanup() {
    set +e
    "$cluster" down >/dev/null 2>&1
    rm -rf "$tmp"
}
trap cleanup EXIT
trap 'exit 130' INT TERM HUP
"$cluster" status >/dev/null 2>&1 && abort "an emulated cluster is already up; take it down first"

sweep=(fft --sweep files --files 1:8 --reps 5 --plan estimate -q)
# What a pi3 builder knows of the link: 100 Mbit/s, given as the line rate the report's link bound uses.
link=(--link-rate 12.5MB)
# The desktop: this machine at full speed, one process, before the cluster exists.
mpirun -np 1 "$bin" "${sweep[@]}" --baseline -o "$tmp/desk.h5" >"$tmp/desk.log" 2>&1 ||
    { indent <"$tmp/desk.log"; abort "the desktop baseline run failed"; }

if ! "$cluster" up 4 --link pi3 --switch serial --cpu-share 0.25 >"$tmp/up.log" 2>&1; then
    indent <"$tmp/up.log"
    abort "cluster up 4 --link pi3 --switch serial --cpu-share 0.25 failed"
fi
mkdir -p "$tmp/spectra" "$tmp/peaks"
for n in 1 2 4; do
    paired=()
    ((n > 1)) && paired=(--paired-baseline)
    "$cluster" run --np "$n" -- "${sweep[@]}" "${link[@]}" "${paired[@]}" --label "pi n$n" \
        -o "$tmp/spectra/n$n.h5" >"$tmp/run.log" 2>&1 || { indent <"$tmp/run.log"; fail "fft on $n nodes (spectra)"; }
    "$cluster" run --np "$n" -- "${sweep[@]}" "${paired[@]}" --result peaks --label "pi n$n peaks" \
        -o "$tmp/peaks/n$n.h5" >"$tmp/run.log" 2>&1 || { indent <"$tmp/run.log"; fail "fft on $n nodes (peaks)"; }
done
"$cluster" down >/dev/null 2>&1

for kind in spectra peaks; do
    if (cd "$repo" && "$python" -m analysis.report "$tmp/$kind" --baseline "$tmp/desk.h5" -q \
        -o "$tmp/report-$kind") >"$tmp/report.log" 2>&1; then
        pass "the report on the $kind series against the desktop"
    else
        indent <"$tmp/report.log"
        fail "the report on the $kind series against the desktop"
    fi
done

check() {
    local what=$1
    shift
    if "$python" - "$@" >"$tmp/check.log" 2>&1; then
        pass "$what"
        indent <"$tmp/check.log"
    else
        indent <"$tmp/check.log"
        fail "$what"
    fi
}

check "spectra: cross-machine rows, no efficiency or Karp-Flatt in any CSV, no node count wins" \
    "$tmp/report-spectra" <<'EOF'
import csv, sys
from pathlib import Path
out = Path(sys.argv[1])
rows = list(csv.DictReader(open(out / "buys.csv", newline="")))
desk = [r for r in rows if r["kind"] == "cross-machine"]
assert desk, f"no cross-machine row in buys.csv: {[r['kind'] for r in rows]}"
assert {int(r["nodes"]) for r in desk} >= {1, 2, 4}, [r["nodes"] for r in desk]
for path in out.glob("*.csv"):
    for r in csv.DictReader(open(path, newline="")):
        if r.get("kind") == "cross-machine":
            for col in ("efficiency", "karp_flatt"):
                assert not r.get(col), f"{path.name}: {col} = {r[col]!r} in a cross-machine row"
            assert "IMPLAUSIBLE" not in r.get("flags", "") + r.get("flag", ""), path.name
page = (out / "summary.md").read_text()
assert "What the cluster buys" in page
assert "no node count wins" in page, "no 'no node count wins' statement on the page"
print("; ".join(f"n{r['nodes']} {r['ratio']} {r['break_even_short']} ({r['limit']})" for r in desk))
EOF

check "a break-even from the measured series, or what limits the cluster, with --result peaks" \
    "$tmp/report-peaks" <<'EOF'
import csv, sys
from pathlib import Path
out = Path(sys.argv[1])
rows = [r for r in csv.DictReader(open(out / "buys.csv", newline="")) if r["kind"] == "cross-machine"]
assert rows, "no cross-machine row"
for r in rows:
    assert r["break_even_source"], f"row without a break-even source: {r}"
    assert r["limit"] in ("link", "messaging", "compute", "the root"), r["limit"]
print("; ".join(f"n{r['nodes']}: {r['break_even_short']} from {r['break_even_source']}, {r['limit']}" for r in rows))
EOF

finish
