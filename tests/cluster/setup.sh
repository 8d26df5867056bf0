#!/usr/bin/env bash
# tests/cluster/setup.sh: jobs/setup on emulated bare nodes with roots and sshd of their own.
set -euo pipefail

usage() {
    cat <<EOF
Usage: bash tests/cluster/setup.sh

jobs/setup on emulated nodes that each have their own root filesystem and
a real sshd (jobs/emulate/cluster up 3 --own-root --sshd), run in pi1, the
head, over ssh with the nodes' root password (hunter2, set with chpasswd):

 1. bare nodes (no key authorised, no binary on pi2 and pi3, every
    /etc/hosts empty, a hostfile of addresses): setup exits 0, authorises
    the key with the password, copies the binary, writes /etc/hosts, and
    its 'wulfbench check' passes; then jobs/mpirun/study.sh over ssh runs
    its own check and a sizes sweep, and the result file reads (3 hosts).
 2. a second setup changes nothing and says so.
 3. pi2's link down (cluster fault) and a wrong pi1 line in pi3's
    /etc/hosts: pi2 is named within 30 s, pi3's wrong line is removed and
    its line for pi2 kept, exit 1.
 4. bad input, each one line naming the node and the fix, no hang: a
    hostfile that does not parse (exit 2), a name that does not resolve,
    a wrong password, a user without sudo, a non-Debian OS (exit 1).
 5. a second cluster: pi2 of another architecture (its sshd under setarch
    i686), pi3 with another Open MPI build (4.1.9 in its root) and pi1
    without hdf5-tools: pi2 is named with --build as the fix, pi3 with
    both versions and the command that fixes it, pi1 gets hdf5-tools from
    this machine's apt cache (the nodes have no network beyond the
    cluster: skipped, said, when the .deb is not in /var/cache/apt/archives).

The times of the first and second setup are printed. Needs root, sshd,
ansible-core and sshpass (jobs/install-deps.sh cluster). Run it alone:
  flock /tmp/wb-cluster.lock bash tests/cluster/setup.sh
Prints "N passed, N failed" last; exits 1 if anything failed.
EOF
}
repo=$(cd "$(dirname "${BASH_SOURCE[0]}")/../.." && pwd)
cluster=$repo/jobs/emulate/cluster
# shellcheck source=tests/harness.sh
source "$repo/tests/harness.sh"
harness_args "$@"

[[ $(id -u) -eq 0 ]] || { fail "needs root: network namespaces, overlays"; finish; exit 1; }
for tool in /usr/sbin/sshd ansible-playbook sshpass; do
    command -v "$tool" >/dev/null || { fail "$tool is missing; run: bash jobs/install-deps.sh cluster"; finish; exit 1; }
done
bin=$repo/build/wulfbench
[[ -x $bin ]] || make -C "$repo" build/wulfbench >/dev/null || { fail "could not build $bin"; finish; exit 1; }
# The nodes see $tmp through their roots' lower layer (/tmp of this machine).
cluster_suite_start wb-setup-test

indent() { sed 's/^/    | /' | tail -n 30; }
printf '198.18.0.1 slots=1\n198.18.0.2 slots=1\n198.18.0.3 slots=1\n' >"$tmp/hosts3"
echo hunter2 >"$tmp/pw"
echo wrong-one >"$tmp/badpw"

# up ARGS...: a cluster with own roots and sshd, and the root password of a fresh image.
up() {
    "$cluster" up 3 --own-root --sshd "$@" >"$tmp/up.out" 2>&1 || { cat "$tmp/up.out"; return 1; }
    local k
    for k in 1 2 3; do echo root:hunter2 | "$cluster" exec "pi$k" -- chpasswd; done
}
# on NODE COMMAND...: COMMAND in NODE, launching over ssh (not the agent).
on() {
    local node=$1
    shift
    "$cluster" exec "$node" -- env -u OMPI_MCA_plm_rsh_agent "$@"
}
# setup NAME ARGS...: jobs/setup ARGS on pi1 (the head), each output line in $tmp/NAME.out
# prefixed with the seconds since the start; its status in rc, its wall time in took.
rc=0 took=0
setup() {
    local name=$1 t0
    shift
    t0=$(date +%s.%N)
    { timeout 240 "$cluster" exec pi1 -- env -u OMPI_MCA_plm_rsh_agent "$repo/jobs/setup" "$@" </dev/null 2>&1 && echo 0 >"$tmp/rc" ||
        echo $? >"$tmp/rc"; } |
        while IFS= read -r l; do echo "$(since "$t0") $l"; done >"$tmp/$name.out"
    rc=$(cat "$tmp/rc")
    took=$(since "$t0")
}
# since T0: seconds from T0 (date +%s.%N) to now, one decimal.
since() { awk -v a="$1" -v b="$(date +%s.%N)" 'BEGIN { printf "%.1f", b - a }'; }
has() { grep -qE -- "$2" "$tmp/$1.out"; }
# at NAME REGEX: the seconds at which the first line matching REGEX came.
at() { { grep -E -m1 -- "$2" "$tmp/$1.out" || true; } | awk '{print $1}'; }
# one_line NAME: the output has exactly one line that is not blank.
one_line() { [[ $(grep -c . "$tmp/$1.out") == 1 ]]; }

# 1. Bare nodes to a suite run.
if ! up --switch serial --node 1:hosts=empty --node 2:bin=none,hosts=empty --node 3:bin=none,hosts=empty; then
    fail "cluster up 3 --own-root --sshd failed"
    finish
    exit 1
fi
if on pi2 test -e "$bin" || on pi1 ssh -o BatchMode=yes -o StrictHostKeyChecking=no -o UserKnownHostsFile=/dev/null -o ConnectTimeout=5 198.18.0.2 true 2>/dev/null ||
    on pi3 getent hosts pi1 >/dev/null; then
    fail "the nodes are not bare: a binary on pi2, a key already authorised, or pi1 in pi3's /etc/hosts"
fi
setup first --password-file "$tmp/pw" "$tmp/hosts3"
first_s=$took
if ((rc == 0)) && has first '198.18.0.2 +login +the head.s key authorised for root \(with the password\)' &&
    has first '198.18.0.3 +binary +changed: copied' && has first '198.18.0.1 +hosts +changed: wrote the nodes \(pi1, pi2, pi3\)' &&
    has first 'setup: wulfbench check: passed on 3 host' && [[ $(on pi3 getent hosts pi2) == 198.18.0.2* ]] &&
    on pi2 test -x "$bin"; then
    pass "bare nodes set up in $first_s s: key by password, binary copied, /etc/hosts written, check passed on 3 hosts"
else
    fail "first setup: exit $rc"
    indent <"$tmp/first.out"
fi

src=0
on pi1 jobs/mpirun/study.sh -H "$tmp/hosts3" -s sizes -r "$tmp/study" -l setuptest \
    --fft-opts "--seconds 0.2 --reps 1" >"$tmp/study.out" 2>&1 || src=$?
if ((src == 0)) && ! grep -qE '^fail ' "$tmp/study.out" &&
    on pi1 /usr/bin/python3 - "$tmp/study" >"$tmp/study.read" 2>&1 <<'PY'; then
import glob, sys
import h5py
files = glob.glob(sys.argv[1] + "/setuptest_n3_sizes_*.h5")
assert len(files) == 1, files
with h5py.File(files[0], "r") as f:
    names = sorted(r["hostname"].decode() for r in f["hosts"][()])
    assert names == ["pi1", "pi2", "pi3"], names
print(files[0])
PY
    pass "study.sh over ssh: its check passed, the sizes sweep ran on pi1..pi3, $(basename "$(tail -1 "$tmp/study.read")") reads"
else
    fail "study.sh over ssh: exit $src; $(tail -2 "$tmp/study.read" 2>/dev/null)"
    indent <"$tmp/study.out"
fi

# 2. Idempotent.
setup second --password-file "$tmp/pw" "$tmp/hosts3"
second_s=$took
if ((rc == 0)) && has second 'setup: nothing changed: 3 host' && ! { grep -v 'nothing changed' "$tmp/second.out" | grep -q 'changed:'; } && has second 'check: passed'; then
    pass "second setup in $second_s s: nothing changed, and it says so"
else
    fail "second setup: exit $rc"
    indent <"$tmp/second.out"
fi
echo "setup times: first $first_s s, second $second_s s (3 emulated nodes)"

# 3. pi2 cut off, a wrong line for pi1 in pi3's /etc/hosts.
on pi3 sed -i '1i 198.18.0.99 pi1' /etc/hosts
"$cluster" fault pi2 down=200 >/dev/null
setup cutoff --no-check --password-file "$tmp/pw" "$tmp/hosts3"
"$cluster" fault pi2 clear >/dev/null
t2=$(at cutoff '^[0-9.]+ 198.18.0.2 +reach +FAILED')
if ((rc == 1)) && [[ -n $t2 ]] && awk -v t="$t2" 'BEGIN { exit !(t <= 30) }' && has cutoff '198.18.0.3 +hosts +changed: .*removed 1 line' &&
    has cutoff 'not set up: 198.18.0.2 \(' && [[ $(on pi3 getent hosts pi1) == 198.18.0.1* ]] &&
    [[ $(on pi3 getent hosts pi2) == 198.18.0.2* ]]; then
    pass "pi2 unreachable: named at $t2 s ($(grep -m1 '198.18.0.2 .*FAILED' "$tmp/cutoff.out" | cut -d' ' -f2- | cut -c1-90)...); pi1 and pi3 set up, pi3's wrong line for pi1 removed and its line for pi2 kept, exit 1"
else
    fail "pi2 unreachable: exit $rc, named at ${t2:-never} s"
    indent <"$tmp/cutoff.out"
fi

# 4. Bad input: one line each, no hang.
# bad NAME WANT_RC REGEX DESCRIPTION ARGS...: setup ARGS exits WANT_RC with one line matching REGEX.
bad() {
    local name=$1 want=$2 re=$3 what=$4
    shift 4
    setup "$name" --no-check "$@"
    local line
    line=$({ grep -E -- "$re" "$tmp/$name.out" || true; } | head -1 | cut -d' ' -f2-)
    if ((rc == want)) && [[ -n $line ]]; then
        pass "$what: exit $rc in $took s: $line"
    else
        fail "$what: exit $rc (want $want)"
        indent <"$tmp/$name.out"
    fi
}
printf 'pi1 slots=2\npi2 slots=x\n' >"$tmp/unparsable"
bad parse 2 'unparsable:2: .pi2 slots=x. is not .HOST \[slots=N\].; fix that line' "hostfile that does not parse" "$tmp/unparsable"
one_line parse || fail "hostfile that does not parse: more than one line"
printf 'pi1\nnosuchnode\n' >"$tmp/unresolved"
bad unresolved 1 "nosuchnode: name: 'nosuchnode' does not resolve on this head node; add" "name that does not resolve" "$tmp/unresolved"
one_line unresolved || fail "name that does not resolve: more than one line"
echo 198.18.0.3 >"$tmp/pi3only"
# The connections the runs above left open for a minute would let the next ones in without a login.
# shellcheck disable=SC2016 # expanded in pi1
on pi1 sh -c 'for s in /tmp/.wb-setup-cp/*; do ssh -O exit -o ControlPath="$s" x 2>/dev/null; done; true'
on pi3 rm -f /root/.ssh/authorized_keys
bad badpw 1 '198.18.0.3 +login +FAILED: root@198.18.0.3 refused the password; run setup again' "wrong password" \
    --password-file "$tmp/badpw" "$tmp/pi3only"
on pi3 sh -c 'useradd -m -s /bin/sh bob && echo bob:bobpw | chpasswd'
echo bobpw >"$tmp/bobpw"
bad nosudo 1 '198.18.0.3 +sudo +FAILED: bob may not use sudo there; as root on 198.18.0.3 run .usermod -aG sudo bob.' \
    "user without sudo" --user bob --password-file "$tmp/bobpw" "$tmp/pi3only"
on pi3 sh -c 'rm -f /etc/os-release && printf "NAME=\"Fedora Linux\"\nID=fedora\nPRETTY_NAME=\"Fedora Linux 39\"\n" >/etc/os-release'
bad fedora 1 '198.18.0.3 +os +FAILED: Fedora Linux 39 is not Debian, Ubuntu or Raspberry Pi OS; set it up by hand' \
    "non-Debian OS" --password-file "$tmp/pw" "$tmp/pi3only"
"$cluster" down >/dev/null 2>&1

# 5. Another architecture, another Open MPI build, a missing package.
purge=(--node 1:purge=hdf5-tools)
ls /var/cache/apt/archives/hdf5-tools_*.deb >/dev/null 2>&1 || purge=()
if up --node 2:arch=i686 "${purge[@]}" --node 3:mpi=4.1.9; then
    setup differ --no-check --password-file "$tmp/pw" "$tmp/hosts3"
    if ((rc == 1)) && has differ '198.18.0.2 +arch +FAILED: it is i686 and this head x86_64, so the head.s binary cannot run there; run setup with --build'; then
        pass "other architecture: $(grep -m1 '198.18.0.2 .*FAILED' "$tmp/differ.out" | cut -d' ' -f2- | cut -c1-110)..."
    else
        fail "other architecture: exit $rc"
        indent <"$tmp/differ.out"
    fi
    if has differ "198.18.0.3 +mpi +FAILED: 198.18.0.3 has Open MPI 4.1.9, the head \(pi1\) 4.1.4: on 198.18.0.3 run 'sudo apt-get install --reinstall --allow-downgrades openmpi-bin="; then
        pass "other Open MPI build: $(grep -m1 '198.18.0.3 .*FAILED' "$tmp/differ.out" | cut -d' ' -f2- | cut -c1-160)..."
    else
        fail "other Open MPI build: pi3 not named with 4.1.9 and 4.1.4 and the fix"
        indent <"$tmp/differ.out"
    fi
    if ((${#purge[@]} == 0)); then
        echo "SKIP: missing package: no hdf5-tools .deb in /var/cache/apt/archives for the nodes to install from"
    elif has differ '198.18.0.1 +deps +changed: install-deps: installing hdf5-tools' && on pi1 dpkg-query -W hdf5-tools >/dev/null; then
        pass "missing package: pi1 got hdf5-tools back (from this machine's apt cache)"
    else
        fail "missing package: hdf5-tools not installed on pi1"
        indent <"$tmp/differ.out"
    fi
else
    fail "cluster up with --node 2:arch=i686 and 3:mpi=4.1.9 failed"
fi
"$cluster" down >/dev/null 2>&1
if ip netns list 2>/dev/null | grep -Eq '^pi[0-9]+( |$)'; then fail "namespaces left after down"; fi
finish
