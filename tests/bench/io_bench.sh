#!/usr/bin/env bash
# Figures of `wulfbench io` beside IOR and fio on an emulated disk whose limits are known exactly:
# ext4 on a loop device throttled by the block I/O cgroup to a class of jobs/emulate/cluster
# (jobs/emulate/disk.sh sets the limits, as 'cluster up --disk CLASS' does for a node), every
# process of the bench run inside that group. Prints, per class and test, the median of the paired
# ratios wulfbench/peer with the lowest and highest round, and each side against the class's limit.
# Timing never fails the script (it exits non-zero only when a tool is missing or a run fails).
#
# Apples to apples:
#   - NP ranks of mpirun on this machine, all in the throttled group, so the aggregate is held to
#     the class; SIZE bytes per rank, 1 MiB per call, one repetition per round and no warm-up on
#     both sides (IOR -i 1; wulfbench --reps 1 --warmup 0). SIZE=auto (the default) makes the
#     faster direction take SEQ_S seconds at the class's limit, at least 64 MiB per rank: the
#     throttle lets about a slice (100 ms) of bytes pass at the start of a transfer, which a short
#     transfer at a high rate shows (usb-ssd reads of 2 x 64 MiB ran at 1.11-1.12 of the limit);
#   - sequential, file per process: IOR -a POSIX -F -e (fsync before close, inside its timed
#     window) against wulfbench --tests write,read; one shared file: IOR -a MPIIO (independent I/O)
#     against --tests shared-write,shared-read (its mpiio-indep row). Both take total bytes over
#     first open to last close; IOR's MiB/s are turned into MB/s (x 1.048576);
#   - cold reads: all ranks share one node, where IOR's -C would hand each rank a file of the same
#     node, so IOR writes (-w -k) and reads (-r) in two runs with the page cache dropped between them;
#     wulfbench drops it itself (root);
#   - durable writes as they go: wulfbench --tests write --sync direct (O_DIRECT, 1 MiB calls, an
#     fdatasync at the end) against NP fio jobs of the same calls (direct=1, psync, end_fsync=1), the
#     row "write (direct)": with no copy into the page cache, a fast class is judged on its limit;
#   - 4 KiB random: wulfbench issues one pread/pwrite at a time per rank with O_DIRECT, so fio runs
#     NP jobs of psync at iodepth 1, direct=1, RAND_SIZE per job, RAND_S seconds; fio's usual form
#     (libaio, iodepth 32) runs once per round too, against the limit only;
#   - rounds A B A B: each round runs the peer, then wulfbench, for every test, ROUNDS times.
# The node's memory (MEM, default 'host', this machine's writeback thresholds; a size such as 4g sets
# them as a node of that memory has them, 10 % of it dirty starting writeback and 20 % holding the
# writers (jobs/emulate/disk.sh, disk_writeback_as), put back at the end). With 24 GiB nothing is
# written back before the final sync, so a buffered write's copy into the page cache and its sync add.
# MEM=4g does not cure that under cgroup v1: the flusher's writeback is held in the root group and
# the writer's final sync in its own, each at the class, so while both run the device passes up to
# twice its rate (buffered writes at 1.14-1.21 of usb-ssd's limit, docs/cluster.md). Kept as a knob
# so that the figure can be made again.
# The device under the throttle: the loop device does direct I/O into a file on this machine's own
# disk, which may not reach a fast class's limit. So each round also measures its twin, the same
# loop device and ext4 over another file in the same folder, never throttled: IOR with the tests'
# own rule (the same sizes, 1 MiB calls, fsync at the end, the read cold), and fio with 1 MiB direct
# calls at iodepth 1 (psync) and 32 (libaio). The table then sets each side against the class's
# limit and against the effective limit, min(class, the twin by the tests' rule), for the
# sequential tests.
# The shared folder (SHARE=1, the default when jobs/emulate/cluster can run here): 2 emulated nodes
# ('cluster up 2 --link pi3 --disk none --share', under flock /tmp/wb-emulator.lock, always 'down'),
# and from pi2, the node that is not the server, IOR (-a POSIX -F -e, write then read with the page
# cache dropped) against 'wulfbench io --tests write,read --dir /share', interleaved rounds; the limit
# is the link's line rate, 100 Mbit/s = 12.5 MB/s. SHARE_MIB MiB per rank (auto: SEQ_S x 2 at the line
# rate over NP ranks, at least 32).
# Without an io subcommand in the binary, IOR and fio run alone and only their limit ratios print.
# IOR is built from ../shared/ref/ior-*.tar.gz (or IOR_TARBALL) into build/ior/ with mpicc, once.
# Knobs (environment): CLASSES (default "sd-a1 gp3 usb-ssd"), ROUNDS (3), NP (2), SIZE (auto), SEQ_S (4),
# RAND_SIZE (32m), RAND_S (4), MEM (host), SHARE (auto: 1 when the emulator can run; 0 skips), SHARE_MIB (auto),
# MPIEXEC (mpirun), PYTHON (/usr/bin/python3), WB_BIN (build/wulfbench), IOR_TARBALL, KEEP (a folder that
# keeps IOR's output of every run). Needs root (loop device, cgroups, drop_caches) and cgroup v1 blkio or v2 io.
set -euo pipefail
# A failure inside $(...) stops the bench too, as one outside does.
shopt -s inherit_errexit
cd "$(dirname "$0")/../.."
repo=$PWD

CLASSES=${CLASSES:-sd-a1 gp3 usb-ssd}
ROUNDS=${ROUNDS:-3}
NP=${NP:-2}
SIZE=${SIZE:-auto}
SEQ_S=${SEQ_S:-4}
RAND_SIZE=${RAND_SIZE:-32m}
RAND_S=${RAND_S:-4}
MEM=${MEM:-host}
SHARE=${SHARE:-auto}
SHARE_MIB=${SHARE_MIB:-auto}
MPIEXEC=${MPIEXEC:-mpirun}
PYTHON=${PYTHON:-/usr/bin/python3}
WB_BIN=${WB_BIN:-build/wulfbench}
IOR_TARBALL=${IOR_TARBALL:-$(ls ../shared/ref/ior-*.tar.gz 2>/dev/null | head -1)}

say() { echo "io_bench: $*" >&2; }
[ "$(id -u)" -eq 0 ] || { say "needs root (a loop device, the block I/O cgroup, drop_caches)"; exit 1; }
export OMPI_ALLOW_RUN_AS_ROOT=1 OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1
for tool in fio "$MPIEXEC" mpicc losetup mkfs.ext4 autoreconf; do
    command -v "$tool" >/dev/null || { say "$tool is missing (make deps-bench installs fio, autoconf, automake)"; exit 1; }
done
[[ $SIZE =~ ^(auto|[1-9][0-9]*[mg])$ && $RAND_SIZE =~ ^[1-9][0-9]*[mg]$ ]] ||
    { say "SIZE (auto or like 64m) and RAND_SIZE (like 32m) cannot be '$SIZE' and '$RAND_SIZE'"; exit 2; }
if [[ $MEM != host ]]; then
    mem_bytes=$(numfmt --from=iec "${MEM^^}" 2>/dev/null) || mem_bytes=0
    ((mem_bytes >= 64 * 1048576)) || { say "MEM must be 'host' or a size of at least 64m such as 4g, not '$MEM'"; exit 2; }
fi
[[ $ROUNDS =~ ^[1-9][0-9]*$ && $NP =~ ^[1-9][0-9]*$ && $RAND_S =~ ^[1-9][0-9]*$ && $SEQ_S =~ ^[1-9][0-9]*$ ]] ||
    { say "ROUNDS, NP, RAND_S and SEQ_S must be positive numbers"; exit 2; }
[[ $SHARE =~ ^(auto|0|1)$ && $SHARE_MIB =~ ^(auto|[1-9][0-9]*)$ ]] ||
    { say "SHARE (auto, 0 or 1) and SHARE_MIB (auto or MiB) cannot be '$SHARE' and '$SHARE_MIB'"; exit 2; }

# IOR, built once from the reference tarball (its source never enters the repository).
ior=$repo/build/ior/ior/src/ior
if [ ! -x "$ior" ]; then
    [ -f "$IOR_TARBALL" ] || { say "no IOR tarball (../shared/ref/ior-*.tar.gz); set IOR_TARBALL"; exit 1; }
    say "building IOR from $IOR_TARBALL into build/ior/"
    rm -rf build/ior && mkdir -p build/ior && tar -xzf "$IOR_TARBALL" -C build/ior
    (cd build/ior/ior && ./bootstrap && ./configure CC=mpicc && make -j2) >build/ior/build.log 2>&1 ||
        { say "IOR did not build; see build/ior/build.log"; exit 1; }
fi
wb_io=""
if [ -x "$WB_BIN" ] && "$WB_BIN" io --help >/dev/null 2>&1; then
    wb_io=$(realpath "$WB_BIN")
else
    say "$WB_BIN has no io subcommand: IOR and fio run alone"
fi

# The throttled disk: the emulator's own functions, under a cgroup name of this bench.
# shellcheck source=jobs/emulate/cgroup.sh
source jobs/emulate/cgroup.sh
# shellcheck source=jobs/emulate/disk.sh
source jobs/emulate/disk.sh
cg_group=wulfbench-iobench
own_root=""
tmp=$(mktemp -d /tmp/wb-io-bench.XXXXXX)
state=$tmp/state
mnt=$tmp/mnt
raw=$tmp/raw
mkdir -p "$state" "$mnt" "$raw"
cluster=$repo/jobs/emulate/cluster
shared_up=""
cleanup() {
    set +e
    [ -z "$shared_up" ] || "$cluster" down >/dev/null 2>&1
    umount "$mnt" "$raw" 2>/dev/null
    disk_teardown
    cg_remove_all
    rm -rf "$tmp"
}
trap cleanup EXIT
trap 'exit 130' INT TERM HUP
[[ -z $(cg_left) ]] || { say "the cgroup $cg_group exists: another io_bench runs, or remove it"; exit 1; }
err=$(cg_prepare blkio 2>&1) || { say "$err"; exit 1; }
cg_make bench blkio
# seq_mib CLASS: MiB per rank of the sequential tests.
seq_mib() {
    local r w
    if [ "$SIZE" != auto ]; then
        echo $(($(numfmt --from=iec "${SIZE^^}") / 1048576))
        return 0
    fi
    read -r r w _ < <(disk_class "$1")
    awk -v r="$r" -v w="$w" -v s="$SEQ_S" -v np="$NP" \
        'BEGIN { m = int((r > w ? r : w) * s / np / 1048576 + 0.999); print (m < 64 ? 64 : m) }'
}
# Room for twice NP files of the largest class's size (a shared file and those per process are
# never there at once) and the random tests' files; the file is sparse.
max_mib=64
for class in $CLASSES; do
    disk_class "$class" >/dev/null || { say "unknown class '$class' ($disk_classes)"; exit 2; }
    m=$(seq_mib "$class")
    ((m <= max_mib)) || max_mib=$m
done
disk_bytes=$(((4 * NP * max_mib + 512) * 1048576 + 4 * NP * $(numfmt --from=iec "${RAND_SIZE^^}")))
# make_disk NAME FOLDER: an ext4 on a loop device (direct I/O into a sparse file in the state folder,
# as the emulator's) mounted at FOLDER; prints its MAJ:MIN.
make_disk() {
    local dev
    truncate -s "$disk_bytes" "$state/disk-$1.img"
    dev=$(losetup -f --show --direct-io=on "$state/disk-$1.img")
    mkfs.ext4 -q -F -E lazy_itable_init=0,lazy_journal_init=0 "$dev"
    mount -o noatime "$dev" "$2"
    chmod 1777 "$2"
    lsblk -dn -o MAJ:MIN "$dev" | tr -d ' '
}
if [[ $MEM != host ]]; then
    disk_writeback_as "$mem_bytes" || { say "cannot set vm.dirty_background_bytes and vm.dirty_bytes"; exit 1; }
    say "writeback as a node of $MEM: background from $(cat /proc/sys/vm/dirty_background_bytes) dirty bytes, writers held at $(cat /proc/sys/vm/dirty_bytes)"
fi
mm=$(make_disk pi1 "$mnt")
# Its twin, never throttled (v1 puts the class on the root group too, so the bench's own device
# cannot be measured unthrottled from outside its group): what this machine's disk gives a loop device.
make_disk pi0 "$raw" >/dev/null

# in_group COMMAND...: COMMAND inside the throttled group.
in_group() { (cg_join bench "$BASHPID" && exec "$@"); }
drop() { sync; echo 3 >/proc/sys/vm/drop_caches; }
mpi() { in_group "$MPIEXEC" -np "$NP" --oversubscribe --bind-to none "$@"; }
# mpi_raw: the same launch outside the throttled group (the bench itself is not in it), for the twin.
mpi_raw() { "$MPIEXEC" -np "$NP" --oversubscribe --bind-to none "$@"; }
# row CLASS TEST ROUND WHO VALUE LIMIT: one line of the figures.
row() { printf '%s\t%s\t%s\t%s\t%s\t%s\n' "$@" >>"$rows"; }

# ior_mbps OUT: the bandwidth of IOR's one 'write' or 'read' line in MB/s.
ior_mbps() { awk '$1 == "write" || $1 == "read" { if ($2 ~ /^[0-9.]+$/) { printf "%.3f\n", $2 * 1.048576; exit } }' "$1"; }

# wb_rows FILE: "test api MBps IOPS status" per group of a wulfbench io result.
wb_rows() {
    "$PYTHON" - "$1" <<'EOF'
import sys
import h5py


def text(v):
    return v.decode() if isinstance(v, bytes) else str(v)


with h5py.File(sys.argv[1], "r") as f:
    for name, g in sorted(f["io"].items()):
        if not isinstance(g, h5py.Group):
            continue
        a = g.attrs
        print(text(a["test"]), text(a["api"]), float(a["agg_mbps_median"]), float(a["agg_iops_median"]),
              text(a["status"]).replace(" ", "_"))
EOF
}

# ior_pair API LAUNCH FOLDER [KEEP-NAME]: IOR's write (-e: fsync inside the window, -k: kept) then,
# with the page cache dropped, its read, of NP files (POSIX, -F) or one shared file (MPIIO), $mib MiB
# per rank, in FOLDER, launched by LAUNCH. Prints "WRITE READ" in MB/s.
ior_pair() {
    local f=()
    [ "$1" = POSIX ] && f=(-F)
    rm -f "$3"/ior.dat*
    "$2" "$ior" -a "$1" "${f[@]}" -e -w -k -t 1m -b "${mib}m" -i 1 -o "$3/ior.dat" >"$tmp/ior-w.out"
    drop
    "$2" "$ior" -a "$1" "${f[@]}" -r -t 1m -b "${mib}m" -i 1 -o "$3/ior.dat" >"$tmp/ior-r.out"
    rm -f "$3"/ior.dat*
    [ -z "${KEEP:-}" ] || [ -z "${4:-}" ] || cp "$tmp/ior-w.out" "$KEEP/$4-w.txt"
    [ -z "${KEEP:-}" ] || [ -z "${4:-}" ] || cp "$tmp/ior-r.out" "$KEEP/$4-r.txt"
    echo "$(ior_mbps "$tmp/ior-w.out") $(ior_mbps "$tmp/ior-r.out")"
}

# fio_raw RW DEPTH: MB/s of NP fio jobs of 1 MiB direct calls, $mib MiB each, on the unthrottled twin:
# psync at depth 1 (each call on the device before the next), libaio above.
fio_raw() {
    local engine=psync
    [ "$2" -gt 1 ] && engine=libaio
    drop
    fio --name=u --directory="$raw" --size="${mib}m" --numjobs="$NP" --group_reporting --rw="$1" --bs=1m \
        --direct=1 --ioengine="$engine" --iodepth="$2" --output-format=json |
        "$PYTHON" -c 'import json, sys; j = json.load(sys.stdin)["jobs"][0]; print(round((j["read"]["bw_bytes"] + j["write"]["bw_bytes"]) / 1e6, 3))'
}

# fio_direct_write: MB/s of NP fio jobs writing $mib MiB each in 1 MiB direct calls one at a time,
# with an fsync at the end (fio's direct=1, as wulfbench's --sync direct), in the throttled group.
fio_direct_write() {
    mkdir -p "$mnt/fio-d"
    in_group fio --name=d --directory="$mnt/fio-d" --size="${mib}m" --numjobs="$NP" --group_reporting --rw=write \
        --bs=1m --direct=1 --ioengine=psync --iodepth=1 --end_fsync=1 --output-format=json |
        "$PYTHON" -c 'import json, sys; j = json.load(sys.stdin)["jobs"][0]; print(round(j["write"]["bw_bytes"] / 1e6, 3))'
    rm -rf "$mnt/fio-d"
}

# fio_iops RW DEPTH: aggregate IOPS of NP jobs on $mnt/fio.
fio_iops() {
    local engine=psync
    [ "$2" -gt 1 ] && engine=libaio
    in_group fio --name=r --directory="$mnt/fio" --size="$RAND_SIZE" --numjobs="$NP" --group_reporting \
        --rw="$1" --bs=4k --direct=1 --ioengine="$engine" --iodepth="$2" --runtime="$RAND_S" --time_based \
        --randrepeat=0 --output-format=json |
        "$PYTHON" -c 'import json, sys; j = json.load(sys.stdin)["jobs"][0]; print(round(j["read"]["iops"] + j["write"]["iops"], 1))'
}

rows=$tmp/rows.tsv
: >"$rows"
for class in $CLASSES; do
    disk_throttle bench "$mm" "$class"
    read -r lr lw lri lwi < <(disk_class "$class")
    mib=$(seq_mib "$class")
    say "class $class: $(disk_words "$class"); $NP ranks, $mib MiB per rank"
    mkdir -p "$mnt/fio"
    in_group fio --name=r --directory="$mnt/fio" --size="$RAND_SIZE" --numjobs="$NP" --rw=write --bs=1m \
        --direct=1 --output-format=terse >/dev/null
    for ((round = 1; round <= ROUNDS; round++)); do
        # The device itself, outside the throttle: IOR by the tests' rule, fio direct at depth 1 and 32.
        for api in POSIX MPIIO; do
            t=$([ $api = POSIX ] && echo "" || echo shared-)
            wr=$(ior_pair $api mpi_raw "$raw")
            read -r w r <<<"$wr"
            row "$class" "${t}write" "$round" raw "$w" "$lw"
            row "$class" "${t}read" "$round" raw "$r" "$lr"
        done
        for depth in 1 32; do
            row "$class" write "$round" "fio$depth" "$(fio_raw write "$depth")" "$lw"
            row "$class" read "$round" "fio$depth" "$(fio_raw read "$depth")" "$lr"
        done
        rm -f "$raw"/u.*
        # A: IOR, file per process, then one shared file.
        for api in POSIX MPIIO; do
            t=$([ $api = POSIX ] && echo "" || echo shared-)
            wr=$(ior_pair $api mpi "$mnt" "$class-$round-$api")
            read -r w r <<<"$wr"
            row "$class" "${t}write" "$round" peer "$w" "$lw"
            row "$class" "${t}read" "$round" peer "$r" "$lr"
        done
        row "$class" "write (direct)" "$round" peer "$(fio_direct_write)" "$lw"
        for rw in randwrite:"$lwi" randread:"$lri"; do
            row "$class" "${rw%:*}" "$round" peer "$(fio_iops "${rw%:*}" 1)" "${rw#*:}"
            row "$class" "${rw%:*} (fio qd32)" "$round" alone "$(fio_iops "${rw%:*}" 32)" "${rw#*:}"
        done
        # B: wulfbench io, the same tests and sizes.
        [ -n "$wb_io" ] || continue
        for tests in write,read shared-write,shared-read; do
            rm -f "$tmp/wb.h5"
            mpi "$wb_io" io --dir "$mnt" --tests "$tests" --size "${mib}M" --block 1M --reps 1 --warmup 0 -q \
                -o "$tmp/wb.h5" >"$tmp/wb.out" 2>&1 || { cat "$tmp/wb.out" >&2; say "wulfbench io --tests $tests failed"; exit 1; }
            wb_rows "$tmp/wb.h5" | while read -r test api mbps iops status; do
                [[ $api == posix || $api == mpiio-indep ]] || continue
                [[ $status == ok ]] || say "wulfbench $test: $status"
                lim=$lw
                [[ $test == *read ]] && lim=$lr
                row "$class" "$test" "$round" wb "$mbps" "$lim"
            done
        done
        rm -f "$tmp/wb.h5"
        mpi "$wb_io" io --dir "$mnt" --tests write --sync direct --size "${mib}M" --block 1M --reps 1 --warmup 0 -q \
            -o "$tmp/wb.h5" >"$tmp/wb.out" 2>&1 || { cat "$tmp/wb.out" >&2; say "wulfbench io --sync direct failed"; exit 1; }
        wb_rows "$tmp/wb.h5" | while read -r test api mbps iops status; do
            [[ $status == ok ]] || say "wulfbench write --sync direct: $status"
            row "$class" "write (direct)" "$round" wb "$mbps" "$lw"
        done
        rm -f "$tmp/wb.h5"
        mpi "$wb_io" io --dir "$mnt" --tests randwrite,randread --size "${RAND_SIZE^^}" --time "$RAND_S" \
            --reps 1 --warmup 0 -q -o "$tmp/wb.h5" >"$tmp/wb.out" 2>&1 ||
            { cat "$tmp/wb.out" >&2; say "wulfbench io --tests randwrite,randread failed"; exit 1; }
        wb_rows "$tmp/wb.h5" | while read -r test api mbps iops status; do
            lim=$lwi
            [[ $test == randread ]] && lim=$lri
            row "$class" "$test" "$round" wb "$iops" "$lim"
        done
    done
    rm -rf "$mnt/fio"
done

# The shared folder: pi1 serves /share to both nodes over the pi3 link; IOR and wulfbench io run on pi2.
line_Bps=12500000
if [ "$SHARE" = auto ]; then
    SHARE=1
    for tool in ip tc sshfs /usr/sbin/sshd unshare nsenter flock; do
        command -v "$tool" >/dev/null || { SHARE=0; say "the shared folder: skipped, $tool is missing (SHARE=1 insists)"; break; }
    done
fi
# node_mpi COMMAND...: NP ranks of COMMAND inside pi2.
node_mpi() { "$cluster" exec pi2 -- "$MPIEXEC" -np "$NP" --oversubscribe --bind-to none "$@"; }
share_rounds() {
    local round w r smib=$SHARE_MIB
    [ "$smib" != auto ] ||
        smib=$(awk -v s="$SEQ_S" -v np="$NP" -v l="$line_Bps" 'BEGIN { m = int(l * 2 * s / np / 1048576 + 0.999); print (m < 32 ? 32 : m) }')
    say "the shared folder: cluster up 2 --link pi3 --disk none --share; $NP ranks on pi2, $smib MiB per rank"
    shared_up=1
    "$cluster" up 2 --link pi3 --disk none --share >"$tmp/up.log" 2>&1 || { cat "$tmp/up.log" >&2; say "cluster up failed"; return 1; }
    for ((round = 1; round <= ROUNDS; round++)); do
        "$cluster" exec pi2 -- sh -c 'rm -f /share/ior.dat*'
        node_mpi "$ior" -a POSIX -F -e -w -k -t 1m -b "${smib}m" -i 1 -o /share/ior.dat >"$tmp/ior-w.out"
        drop
        node_mpi "$ior" -a POSIX -F -r -t 1m -b "${smib}m" -i 1 -o /share/ior.dat >"$tmp/ior-r.out"
        "$cluster" exec pi2 -- sh -c 'rm -f /share/ior.dat*'
        row share write "$round" peer "$(ior_mbps "$tmp/ior-w.out")" "$line_Bps"
        row share read "$round" peer "$(ior_mbps "$tmp/ior-r.out")" "$line_Bps"
        [ -n "$wb_io" ] || continue
        rm -f "$tmp/wb.h5"
        node_mpi "$wb_io" io --dir /share --tests write,read --size "${smib}M" --block 1M --reps 1 --warmup 0 -q \
            -o "$tmp/wb.h5" >"$tmp/wb.out" 2>&1 || { cat "$tmp/wb.out" >&2; say "wulfbench io on /share failed"; return 1; }
        wb_rows "$tmp/wb.h5" | while read -r test api mbps iops status; do
            [[ $status == ok ]] || say "wulfbench $test on /share: $status"
            row share "$test" "$round" wb "$mbps" "$line_Bps"
        done
    done
}
if [ "$SHARE" = 1 ]; then
    exec 9>/tmp/wb-emulator.lock
    flock -w 1800 9 || { say "the emulated cluster stayed in use (/tmp/wb-emulator.lock) for 30 min"; exit 1; }
    rc=0
    share_rounds || rc=$?
    "$cluster" down >/dev/null 2>&1 || say "cluster down failed; run jobs/emulate/cluster down"
    shared_up=""
    flock -u 9
    ((rc == 0)) || exit 1
fi

echo
echo "== io_bench: wulfbench io beside IOR and fio on a throttled loop device (MB = 1e6 bytes)"
echo "   load average at the end: $(cut -d' ' -f1-3 /proc/loadavg); $NP ranks; $ROUNDS rounds; SIZE $SIZE; ratios: median [lowest, highest]"
echo "   device: the loop device outside the throttle, IOR by the tests' rule (fio: 1 MiB direct at depth 1, 32);"
echo "   eff: the effective limit, min(class, device); share: from pi2 to pi1's folder over a 100 Mbit/s link"
"$PYTHON" - "$rows" <<'EOF'
import statistics as st
import sys
from collections import defaultdict

vals = defaultdict(dict)
limits = {}
for line in open(sys.argv[1]):
    cls, test, rnd, who, v, lim = line.rstrip("\n").split("\t")
    vals[(cls, test)].setdefault(who, {})[int(rnd)] = float(v) if v else float("nan")
    limits[(cls, test)] = float(lim)


def span(xs):
    xs = [x for x in xs if x == x]
    if not xs:
        return "-"
    return f"{st.median(xs):.2f} [{min(xs):.2f}, {max(xs):.2f}]"


def med(xs):
    xs = [x for x in xs if x == x]
    return f"{st.median(xs):.1f}" if xs else "-"


print(f"{'class':8} {'test':22} {'limit':>10} {'device':>7} {'fio qd1':>7} {'qd32':>7} {'eff':>7} {'peer':>8} "
      f"{'wb':>8}  {'wb/peer':20} {'peer/limit':20} {'wb/limit':20} {'peer/eff':20} {'wb/eff':20}")
for (cls, test), d in vals.items():
    unit = "IOPS" if "rand" in test else "MB/s"
    lim = limits[(cls, test)] / (1.0 if unit == "IOPS" else 1e6)
    peer = d.get("peer", d.get("alone", {}))
    wb = d.get("wb", {})
    raw = [x for x in d.get("raw", {}).values() if x == x]
    eff = min(lim, st.median(raw)) if raw else float("nan")
    pairs = [wb[r] / peer[r] for r in wb if r in peer and peer[r] > 0]
    by_eff = (lambda xs: span([x / eff for x in xs])) if eff == eff else (lambda xs: "-")
    print(f"{cls:8} {test:22} {lim:>8.1f} {unit[:2]} {med(raw):>7} {med(d.get('fio1', {}).values()):>7} "
          f"{med(d.get('fio32', {}).values()):>7} {(f'{eff:.1f}' if eff == eff else '-'):>7} "
          f"{med(peer.values()):>8} {med(wb.values()):>8}  {span(pairs):20} {span([p / lim for p in peer.values()]):20} "
          f"{span([w / lim for w in wb.values()]):20} {by_eff(peer.values()):20} {by_eff(wb.values()):20}")
EOF
