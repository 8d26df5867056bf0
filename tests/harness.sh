# Shared by the shell test suites: count checks and close with "N passed, N failed".
# shellcheck shell=bash
passed=0 failed=0

pass() { echo "PASS: $*"; passed=$((passed + 1)); }
fail() { echo "FAIL: $*"; failed=$((failed + 1)); }
finish() {
    echo "$passed passed, $failed failed"
    ((failed == 0))
}
