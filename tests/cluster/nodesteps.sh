#!/usr/bin/env bash
# tests/cluster/nodesteps.sh: jobs/setup's steps that are shell on the node (jobs/setup.d/node.sh),
# run in emulated nodes with roots of their own, against real firewalls and a record that cannot be
# put back:
#  1. iptables-legacy with an INPUT policy of DROP: named with the rule to add, exit 1; once a
#     subnet rule accepts the nodes, nothing to open.
#  2. ufw active with a port rule only (from a node's address to one port): that node is allowed to
#     every port, not taken as allowed; a second run changes nothing.
#  3. ufw active with the nodes' subnet allowed: nothing added.
#  4. --undo whose put-back fails: named, exit 1, the record kept; once it can be written, a second
#     --undo puts it back and removes the record.
# Needs root, iptables and ufw (jobs/install-deps.sh firewalls). Prints "N passed, N failed" last.
set -euo pipefail
usage() { sed -n '2,12s/^# \{0,1\}//p' "${BASH_SOURCE[0]}"; }
repo=$(cd "$(dirname "${BASH_SOURCE[0]}")/../.." && pwd)
cluster=$repo/jobs/emulate/cluster
# shellcheck source=tests/harness.sh
source "$repo/tests/harness.sh"
harness_args "$@"
[[ $(id -u) -eq 0 ]] || { fail "needs root: network namespaces, overlays"; finish; exit 1; }
for tool in iptables-legacy ufw; do
    command -v "$tool" >/dev/null || { fail "$tool is missing; run: bash jobs/install-deps.sh firewalls"; finish; exit 1; }
done
cluster_suite_start wb-nodesteps-test
"$cluster" up 3 --own-root >"$tmp/up.out" 2>&1 || { cat "$tmp/up.out"; fail "cluster up 3 --own-root"; finish; exit 1; }
node_sh=$repo/jobs/setup.d/node.sh
nodes="198.18.0.1 198.18.0.2 198.18.0.3"

# step NODE STEP ARGS...: node.sh's line in $out and its exit status in $rc.
step() {
    local n=$1
    shift
    rc=0
    out=$("$cluster" exec "$n" -- sh "$node_sh" "$@" 2>&1) || rc=$?
}
expect() { # expect NAME RC PATTERN: the last step's status and line
    if [[ $rc == "$2" ]] && grep -qE -- "$3" <<<"$out"; then pass "$1"; else fail "$1 (exit $rc: $out)"; fi
}

# 1. iptables-legacy, policy DROP, in pi2's own network namespace.
"$cluster" exec pi2 -- iptables-legacy -P INPUT DROP
step pi2 firewall $nodes
expect "iptables-legacy DROP policy: named with the rule to add" 1 'iptables-legacy: the INPUT chain drops by default.*-I INPUT -s 198\.18\.0\.1 -j ACCEPT'
"$cluster" exec pi2 -- iptables-legacy -I INPUT -s 198.18.0.0/24 -j ACCEPT
step pi2 firewall $nodes
expect "iptables-legacy DROP policy with the subnet accepted: nothing to open" 0 'accepts every node already'

# 2. ufw on pi3 with one port rule from pi1's address only.
"$cluster" exec pi3 -- sh -c 'ufw --force enable && ufw allow from 198.18.0.1 to any port 22 proto tcp' >/dev/null
step pi3 firewall $nodes
expect "ufw with a port rule only: every node allowed" 0 'changed: ufw: allowed 3 node address'
n=$("$cluster" exec pi3 -- ufw status | grep -cE '^Anywhere +ALLOW +198\.18\.0\.[123] *$' || true)
check_n() { if [[ $n == "$2" ]]; then pass "$1"; else fail "$1 (found $n)"; fi; }
check_n "ufw: one rule to every port for each node" 3
step pi3 firewall $nodes
expect "ufw: a second run changes nothing" 0 '^ufw active: every node already allowed'

# 3. ufw on pi1 with the nodes' subnet allowed.
"$cluster" exec pi1 -- sh -c 'ufw --force enable && ufw allow from 198.18.0.0/24' >/dev/null
step pi1 firewall $nodes
expect "ufw with the subnet allowed: nothing added" 0 '^ufw active: every node already allowed'
n=$("$cluster" exec pi1 -- ufw status | grep -cE '^Anywhere +ALLOW +198\.18\.0\.[0-9]+ *$' || true)
check_n "ufw with the subnet allowed: no rule per node" 0

# 4. --undo: a recorded governor whose file cannot be written yet, and one that can.
gov=$tmp/cpufreq
"$cluster" exec pi2 -- sh -c "mkdir -p /var/lib/wulfbench && mkdir -p '$gov/ok' && echo performance >'$gov/ok/scaling_governor' &&
    printf 'governor %s ondemand\ngovernor %s schedutil\n' '$gov/ok/scaling_governor' '$gov/later/scaling_governor' >/var/lib/wulfbench/setup.undo"
step pi2 undo
expect "undo: a put-back that fails is named, exit 1" 1 "could not put back:.*later/scaling_governor=schedutil.*put back:.*ok/scaling_governor=ondemand"
kept=$("$cluster" exec pi2 -- cat /var/lib/wulfbench/setup.undo 2>/dev/null || true)
if [[ $kept == "governor $gov/later/scaling_governor schedutil" ]]; then pass "undo: the record keeps only what failed"; else fail "undo: record now '$kept'"; fi
"$cluster" exec pi2 -- mkdir -p "$gov/later"
step pi2 undo
expect "undo again: put back once it can be written" 0 "^changed: put back: .*later/scaling_governor=schedutil$"
got=$("$cluster" exec pi2 -- sh -c "cat '$gov/later/scaling_governor'; test -e /var/lib/wulfbench/setup.undo && echo record-left || true")
if [[ $got == schedutil ]]; then pass "undo again: the value written and the record gone"; else fail "undo again: '$got'"; fi
finish
