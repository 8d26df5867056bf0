#!/usr/bin/env bash
# make test-cluster: the emulated cluster's storage (cluster up --disk, --share): each node's own
# throttled disk at /disk and pi1's folder shared at /share, measured from inside the nodes.
set -uo pipefail

# Debian packages this test needs (installed when missing and run as root).
PACKAGES="util-linux e2fsprogs fio sshfs openssh-server openssh-client"

usage() {
    cat <<EOF
Usage: bash tests/cluster/storage.sh

Bad --disk, --disk-size, --share and --node K:disk= values are refused with
one line and exit 2, nothing made. Then 'cluster up 3 --link pi3 --disk
sd-a1 --disk pi2=none --share' (pi1 and pi3 at the sd-a1 class, pi2 not
throttled) and, from inside the nodes:
  - each node has its own /disk: a file written in pi1 is in no other
    node's /disk, nor on this machine;
  - pi3's direct write and read (dd) keep to 20 and 40 MB/s: at most 8%
    above strictly, at least half loosely (skipped on a busy machine), and
    pi2's unthrottled disk is at least 3x faster;
  - a buffered write synced by the writer (dd conv=fdatasync) keeps to the
    class too, and so do dirty pages written back from outside the node
    (syncfs by a process in the root cgroup: the kernel's flusher);
  - fio randread and randwrite, 4k, direct=1, keep to 1500 and 500 IOPS;
  - /share is the same folder on every node and pi1's /disk/share, and a
    write into it from pi3 (with fsync) and a read from pi2 keep to the
    100 Mbit/s link (12.5 MB/s, 8% allowed above);
  - 'status' lists the disks and the share;
  - 'wulfbench io --tests write,read' on /disk and /share when the binary
    has an io subcommand (skipped with the reason otherwise): every point
    ok, /share found shared and /disk not, no aggregate above the disks'
    or the link's bound;
  - 'down', also after an 'up --disk --share' killed midway, leaves no
    loop device, mount, disk file, throttle rule, cgroup, sshd or sshfs.
Prints "N passed, N failed" last; exits 1 if anything failed.

Needs root and these Debian packages, installed with apt-get when missing:
$PACKAGES

Environment:
  WB_BIN   wulfbench binary for the io part (default: build/wulfbench)
EOF
}
repo=$(cd "$(dirname "${BASH_SOURCE[0]}")/../.." && pwd)
cluster=$repo/jobs/emulate/cluster
state=/run/wulfbench-emulate
# shellcheck source=tests/harness.sh
source "$repo/tests/harness.sh"
harness_args "$@"
indent() { sed 's/^/    | /' | tail -n 12; }
abort() { echo "FAIL: $*"; failed=$((failed + 1)); finish; exit 1; }

[[ $(id -u) -eq 0 ]] || abort "needs root: namespaces, loop devices, cgroups"
export OMPI_ALLOW_RUN_AS_ROOT=1 OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1
# shellcheck disable=SC2086 # a list of packages
harness_install $PACKAGES || abort "could not install $PACKAGES"
bin=${WB_BIN:-$repo/build/wulfbench}
cluster_suite_start wb-storage-test

# Our loop devices, the kernel's mounts of them, and v1 root-group throttle rules on them.
our_loops() { losetup -n -l -O NAME,BACK-FILE 2>/dev/null | awk -v s="$state/disk-pi" 'index($2, s) == 1 {print $1}'; }
root_rules() { cat /sys/fs/cgroup/blkio/blkio.throttle.*_device 2>/dev/null | grep -E "^($1) " || true; }

# storage_left MAJMIN_REGEX PIDS...: what of a storage cluster is still there (empty: nothing).
storage_left() {
    local mm=$1 what=() p
    shift
    [[ -z $(our_loops) ]] || what+=("loop devices $(our_loops | tr '\n' ' ')")
    grep -q "$state" /proc/mounts && what+=("mounts under $state")
    [[ -e $state ]] && what+=("state folder")
    [[ -z $mm || -z $(root_rules "$mm") ]] || what+=("root throttle rules: $(root_rules "$mm" | tr '\n' ' ')")
    for p in /sys/fs/cgroup/blkio/wulfbench-emulate /sys/fs/cgroup/wulfbench-emulate; do
        [[ -e $p ]] && what+=("cgroup $p")
    done
    for p in /disk /share; do [[ -e $p ]] && what+=("$p on this machine"); done
    for p in "$@"; do kill -0 "$p" 2>/dev/null && what+=("process $p ($(cat "/proc/$p/comm" 2>/dev/null))"); done
    echo "${what[*]}"
}

# The share of a core a 0.3 s busy loop gets here now: below 0.7 the lower bounds are not judged.
cpu_free() {
    /usr/bin/python3 -c '
import time
t, c = time.perf_counter(), time.process_time()
while time.process_time() - c < 0.3:
    pass
print(f"{0.3 / (time.perf_counter() - t):.2f}")'
}

# dd_mbps NODE DD-ARGS...: MB/s of a dd run inside NODE, from its byte count and seconds.
dd_mbps() {
    local node=$1 out
    shift
    out=$("$cluster" exec "$node" -- dd "$@" 2>&1 | grep copied) || { echo 0; return 1; }
    awk '{ for (i = 1; i <= NF; i++) if ($i == "s,") { printf "%.2f", $1 / $(i - 1) / 1e6; exit } }' <<<"$out"
}

# within RATE SET: "ok" when RATE <= 1.08 SET (strict) and RATE >= 0.5 SET (loose: "low" on a busy machine).
within() {
    awk -v r="$1" -v s="$2" -v busy="$busy" 'BEGIN {
        if (r > 1.08 * s) print "high"; else if (r >= 0.5 * s) print "ok"; else if (busy) print "busy"; else print "low" }'
}

# judge WHAT RATE SET UNIT: pass, skip (a busy machine under the lower bound) or fail.
judge() {
    case $(within "$2" "$3") in
        ok) pass "$1: $2 $4 against the set $3 ($(awk -v r="$2" -v s="$3" 'BEGIN { printf "%.3f", r / s }'))" ;;
        busy) echo "SKIP: $1: $2 $4 against $3, under half; this machine is busy (a busy loop got $cpu of a core)" ;;
        *) fail "$1: $2 $4 against the set $3 (allowed 0.5-1.08x)" ;;
    esac
}

# Bad input: one line, exit 2, nothing made.
for args in "up 2 --disk sd-a3" "up 2 --disk pi3=sd-a1" "up 2 --disk 0:100" "up 2 --disk 12.5:0" \
    "up 2 --disk 12.5" "up 2 --share" "up 2 --disk-size 1G" "up 2 --disk gp3 --disk-size 10M" \
    "up 2 --node 2:disk=fast" "up 2 --disk gp3 --disk nvme" "up 2 --disk pi1=gp3 --node 1:disk=nvme"; do
    rc=0
    # shellcheck disable=SC2086 # split on purpose
    err=$("$cluster" $args 2>&1) || rc=$?
    if ((rc == 2)) && [[ $(wc -l <<<"$err") == 1 && -z $(storage_left "") ]]; then
        pass "cluster $args: refused: '$err'"
    else
        fail "cluster $args: exit $rc, output: $err; left: $(storage_left "")"
    fi
done

# Killed in the middle of 'up --disk --share': 'down' removes it all.
"$cluster" up 4 --link pi3 --disk sd-a1 --share >/dev/null 2>&1 &
up_pid=$!
sleep 1.2
kill -KILL "$up_pid" 2>/dev/null
wait "$up_pid" 2>/dev/null
out=$("$cluster" down 2>&1)
sleep 0.3
left=$(storage_left "7:[0-9]+")
if [[ -z $left ]]; then
    pass "'up 4 --disk sd-a1 --share' killed at 1.2 s, then 'down' ($out): nothing left"
else
    fail "'up 4 --disk sd-a1 --share' killed, then 'down' ($out): left $left"
    "$cluster" down >/dev/null 2>&1
fi

if ! "$cluster" up 3 --link pi3 --disk sd-a1 --disk pi2=none --disk-size 512M --share >"$tmp/up.log" 2>&1; then
    indent <"$tmp/up.log"
    abort "cluster up 3 --link pi3 --disk sd-a1 --disk pi2=none --share failed"
fi
pass "cluster up 3 --link pi3 --disk sd-a1 --disk pi2=none --disk-size 512M --share"
mms=$(awk '{print $3}' "$state/disks" | paste -sd'|')
daemons=$(cat "$state/share/sshd.pid"; pgrep -x sshfs | tr '\n' ' ')

# Each node its own /disk.
"$cluster" exec pi1 -- sh -c 'echo pi1 >/disk/token-pi1'
seen=$(for n in pi2 pi3; do "$cluster" exec "$n" -- sh -c "ls /disk; findmnt -n -o SOURCE /disk"; done | tr '\n' ' ')
srcs=$(for n in pi1 pi2 pi3; do "$cluster" exec "$n" -- findmnt -n -o SOURCE,FSTYPE /disk; done | sort -u | wc -l)
if [[ $seen != *token-pi1* && $srcs == 3 && ! -e /disk/token-pi1 ]] &&
    [[ $("$cluster" exec pi1 -- cat /disk/token-pi1) == pi1 ]]; then
    pass "each node has its own ext4 at /disk: pi1's file is not in pi2's or pi3's ($seen) nor on this machine"
else
    fail "/disk not separate: pi2 and pi3 list '$seen', $srcs distinct sources"
fi

status=$("$cluster" status 2>&1)
if grep -q 'pi3 .*sd-a1 .*write 20 MB/s 500 IOPS' <<<"$status" && grep -q 'pi2 .*none .*not throttled' <<<"$status" &&
    grep -q '^share: pi1:/disk/share over sshfs' <<<"$status"; then
    pass "status lists the disks and the share"
else
    fail "status:"
    indent <<<"$status"
fi

cpu=$(cpu_free)
busy=$(awk -v c="$cpu" 'BEGIN { print (c < 0.7) ? 1 : 0 }')
head -c 48000000 /dev/urandom >"$tmp/rand"
chmod 644 "$tmp/rand"

# Direct I/O against the class, and pi2's unthrottled disk as the reference.
w3=$(dd_mbps pi3 if="$tmp/rand" of=/disk/d bs=1M oflag=direct)
r3=$(dd_mbps pi3 if=/disk/d of=/dev/null bs=1M iflag=direct)
w2=$(dd_mbps pi2 if="$tmp/rand" of=/disk/d bs=1M oflag=direct)
judge "pi3 direct write (sd-a1)" "$w3" 20 MB/s
judge "pi3 direct read (sd-a1)" "$r3" 40 MB/s
if awk -v a="$w2" -v b="$w3" 'BEGIN { exit !(a >= 3 * b) }'; then
    pass "pi2's unthrottled disk writes at $w2 MB/s, at least 3x pi3's $w3"
elif ((busy)); then
    echo "SKIP: pi2 unthrottled $w2 MB/s against pi3 $w3: this machine is busy ($cpu of a core)"
else
    fail "pi2's unthrottled disk writes at $w2 MB/s, not clearly above pi3's $w3"
fi

# Buffered writes: synced by the writer, and written back from outside the node.
judge "pi3 buffered write with fdatasync (sd-a1)" "$(dd_mbps pi3 if="$tmp/rand" of=/disk/b bs=1M conv=fdatasync)" 20 MB/s
pid3=$(awk '$1 == "pi3" {print $4}' "$state/nodes")
"$cluster" exec pi3 -- dd if="$tmp/rand" of=/disk/c bs=1M status=none
t0=$(date +%s.%N)
nsenter --target "$pid3" --mount sync -f /disk/c
wb=$(awk -v t0="$t0" -v t1="$(date +%s.%N)" 'BEGIN { printf "%.2f", 48 / (t1 - t0) }')
judge "pi3 dirty pages written back by a root-cgroup syncfs (sd-a1)" "$wb" 20 MB/s

# 4 KiB random IOPS with fio, direct=1.
for rw in randread:1500 randwrite:500; do
    iops=$("$cluster" exec pi3 -- fio --name=t --filename=/disk/fio.dat --size=16m --rw="${rw%:*}" --bs=4k \
        --direct=1 --ioengine=libaio --iodepth=32 --runtime=3 --time_based --output-format=json 2>/dev/null |
        /usr/bin/python3 -c 'import json, sys; j = json.load(sys.stdin)["jobs"][0]; print(round(j["read"]["iops"] + j["write"]["iops"]))') ||
        iops=0
    judge "pi3 fio ${rw%:*} 4k direct=1 (sd-a1)" "$iops" "${rw#*:}" IOPS
done

# The share: one folder everywhere, at the link's rate.
"$cluster" exec pi2 -- sh -c 'echo from-pi2 >/share/token'
seen=$(for n in pi1 pi3; do "$cluster" exec "$n" -- cat /share/token; done | tr '\n' ' ')
if [[ $seen == "from-pi2 from-pi2 " && $("$cluster" exec pi1 -- cat /disk/share/token) == from-pi2 ]]; then
    pass "/share is one folder on every node and pi1's /disk/share"
else
    fail "/share not shared: pi1 and pi3 read '$seen'"
fi
# A write with a final fsync pays the link, then pi1's disk for what its page cache held:
# 1 / (1/12.5 + 1/20) = 7.69 MB/s when none was written back before the fsync. Upper bound: the link.
sw=$(dd_mbps pi3 if="$tmp/rand" of=/share/s bs=1M conv=fsync)
if awk -v r="$sw" 'BEGIN { exit !(r <= 1.08 * 12.5) }' && [[ $(within "$sw" 7.69) != low ]]; then
    pass "pi3 write into /share with fsync: $sw MB/s, under the 12.5 MB/s link (link then pi1's disk in turn: 7.69)"
else
    fail "pi3 write into /share with fsync: $sw MB/s (link 12.5, link then pi1's disk in turn 7.69)"
fi
sr=$(dd_mbps pi2 if=/share/s of=/dev/null bs=1M)
judge "pi2 read of /share over its pi3 link" "$sr" 12.5 MB/s

# wulfbench io on /disk and /share, when this build has it: every point ok, each folder's sharing
# found, and no aggregate above what the emulation allows (8% over): the aggregate's span is at least
# pi1's and pi3's time at sd-a1 (pi2's disk is not throttled), so at most 3 x 20 MB/s write and 3 x 40
# read; through /share, pi2's and pi3's bytes cross pi1's 12.5 MB/s link while pi1's own go through
# its loopback, so the 3 ranks' aggregate stays under 12.5 x 3/2.
if [[ -x $bin ]] && "$bin" io --help >/dev/null 2>&1; then
    if WB_BIN=$bin timeout 600 "$cluster" run -- io --dir /disk --dir /share --tests write,read --time 1 \
        --reps 1 --warmup 0 -o "$tmp/io.h5" >"$tmp/io.out" 2>&1 && msg=$(/usr/bin/python3 - "$tmp/io.h5" 2>&1 <<'EOF'
import sys
import h5py


def text(v):
    return v.decode() if isinstance(v, bytes) else str(v)


bound = {("/disk", "write"): 60, ("/disk", "read"): 120, ("/share", "write"): 18.75, ("/share", "read"): 18.75}
share = {"/disk": 0, "/share": 1}
out, ok = [], True
with h5py.File(sys.argv[1], "r") as f:
    for name, g in sorted(f["io"].items()):
        if not isinstance(g, h5py.Group):
            continue
        a = g.attrs
        d, t, mbps = text(a["dir"]), text(a["test"]), float(a["agg_mbps_median"])
        good = text(a["status"]) == "ok" and int(a["shared"]) == share[d] and mbps <= 1.08 * bound[(d, t)]
        ok &= good
        out.append(f"{t} {d} {mbps:.1f} MB/s (at most {bound[(d, t)]}){'' if good else ' ' + text(a['status'])}")
print("; ".join(out))
sys.exit(0 if ok and len(out) == 4 else 1)
EOF
    ); then
        pass "cluster run -- io --dir /disk --dir /share: $msg"
        if grep -q 'could not remove' "$tmp/io.out"; then
            fail "io left its run folder: $(grep -m1 'could not remove' "$tmp/io.out")"
        else
            pass "io removed its run folders on /disk and /share"
        fi
    else
        fail "cluster run -- io --dir /disk --dir /share: ${msg:-no result}"
        indent <"$tmp/io.out"
    fi
else
    echo "SKIP: wulfbench io: $bin has no io subcommand"
fi

"$cluster" down >/dev/null 2>&1
sleep 0.3
# shellcheck disable=SC2086 # a list of PIDs
left=$(storage_left "$mms" $daemons)
if [[ -z $left ]]; then
    pass "after 'down': no loop device, mount, disk file, throttle rule, cgroup, sshd or sshfs left"
else
    fail "after 'down': left $left"
fi
finish
