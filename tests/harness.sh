# Shared by the shell test suites: count checks and close with "N passed, N failed".
# shellcheck shell=bash
passed=0 failed=0

pass() { echo "PASS: $*"; passed=$((passed + 1)); }
fail() { echo "FAIL: $*"; failed=$((failed + 1)); }
finish() {
    echo "$passed passed, $failed failed"
    ((failed == 0))
}

# harness_args ARGS...: a suite's command line, which takes no argument but --help: --help prints
# the suite's usage (its own usage function) and exits 0, anything else is a usage error (exit 2).
harness_args() {
    case ${1:-} in
        -h | --help) usage; exit 0 ;;
        "") ;;
        *) echo "${BASH_SOURCE[1]#"${repo:-}/"}: unknown argument '$1' (see --help)" >&2; exit 2 ;;
    esac
}

# cluster_suite_start PREFIX: for a suite of the emulated cluster ($cluster set): stop if a cluster
# is up already; make $tmp (mode 755: the nodes read it) and, on exit, take the cluster down and
# remove $tmp.
cluster_suite_start() {
    if "$cluster" status >/dev/null 2>&1; then
        fail "an emulated cluster is already up; take it down first (jobs/emulate/cluster down)"
        finish
        exit 1
    fi
    tmp=$(mktemp -d "/tmp/$1.XXXXXX")
    chmod 755 "$tmp"
    trap 'set +e; "$cluster" down >/dev/null 2>&1; rm -rf "$tmp"' EXIT
    trap 'exit 130' INT TERM HUP
}

# tally LOG RC: add the counts of LOG's last summary line (ours, "N passed, N failed", or pytest's) to
# passed, failed and skipped; a suite that ended non-zero (RC) without a failure count counts as one
# failure, since it crashed before printing its summary.
tally() {
    local line p f e s
    line=$(grep -E '[0-9]+ (passed|failed|error|errors|skipped)' "$1" | tail -1)
    p=$(grep -oE '[0-9]+ passed' <<<"$line" | grep -oE '[0-9]+' || true)
    f=$(grep -oE '[0-9]+ failed' <<<"$line" | grep -oE '[0-9]+' || true)
    e=$(grep -oE '[0-9]+ errors?' <<<"$line" | grep -oE '[0-9]+' || true)
    s=$(grep -oE '[0-9]+ skipped' <<<"$line" | grep -oE '[0-9]+' || true)
    passed=$((passed + ${p:-0})); failed=$((failed + ${f:-0} + ${e:-0})); skipped=$((${skipped:-0} + ${s:-0}))
    if [ "$2" -ne 0 ] && [ -z "$f$e" ]; then failed=$((failed + 1)); fi
}

# harness_install PACKAGE...: those of the Debian packages that are missing, installed with apt-get
# (the suite runs as root); returns apt-get's failure.
harness_install() {
    local p missing=()
    for p in "$@"; do
        dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q 'install ok installed' || missing+=("$p")
    done
    ((${#missing[@]})) || return 0
    echo "${BASH_SOURCE[1]#"${repo:-}/"}: installing ${missing[*]}"
    DEBIAN_FRONTEND=noninteractive apt-get install -y --no-install-recommends "${missing[@]}" >/dev/null
}
