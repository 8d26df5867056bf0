# Storage of the emulated cluster ('up --disk', '--share'): each node's own
# ext4 on a loop device over a sparse file in the state folder, mounted at
# /disk in the node's mount namespace only and throttled by the block I/O
# controller to a class's rates; and a folder of pi1's disk served by sshd
# and mounted with sshfs at /share on every node. docs/cluster.md, "Storage".
# Sourced by jobs/emulate/cluster; needs $state, $net_prefix and cgroup.sh.
# shellcheck shell=bash

disk_classes="sd-a1, sd-a2, usb-ssd, nvme, gp3, none or MBPS:IOPS such as 12.5:800"
share_port=2222

# disk_class CLASS: "READ_BPS WRITE_BPS READ_IOPS WRITE_IOPS" (bytes/s and
# 4 KiB operations/s, 0 for no limit), or return 1. MB = 10^6 bytes.
# Sources and choices: docs/cluster.md, "Storage".
disk_class() {
    case $1 in
        none) echo "0 0 0 0" ;;
        sd-a1) echo "40000000 20000000 1500 500" ;;
        sd-a2) echo "40000000 20000000 4000 2000" ;;
        usb-ssd) echo "350000000 350000000 10000 10000" ;;
        nvme) echo "450000000 450000000 40000 70000" ;;
        gp3) echo "131072000 131072000 3000 3000" ;;
        *:*)
            local mb=${1%%:*} iops=${1#*:}
            [[ $mb =~ ^([0-9]+(\.[0-9]*)?|\.[0-9]+)$ && $iops =~ ^[1-9][0-9]{0,6}$ ]] || return 1
            awk -v m="$mb" 'BEGIN { exit !(m > 0 && m <= 100000) }' || return 1
            local bps
            bps=$(awk -v m="$mb" 'BEGIN { printf "%.0f", m * 1e6 }')
            echo "$bps $bps $iops $iops" ;;
        *) return 1 ;;
    esac
}

# disk_words CLASS: its rates in words.
disk_words() {
    local r w ri wi
    read -r r w ri wi < <(disk_class "$1")
    if [[ $r == 0 && $w == 0 && $ri == 0 && $wi == 0 ]]; then
        echo "not throttled"
        return 0
    fi
    awk -v r="$r" -v w="$w" -v ri="$ri" -v wi="$wi" 'BEGIN {
        printf "read %g MB/s %d IOPS, write %g MB/s %d IOPS", r / 1e6, ri, w / 1e6, wi }'
}

# disk_limit_lines MAJ:MIN CLASS: "FILE VALUE" for each cgroup v1 throttle
# file (VALUE 0 removes a rule).
disk_limit_lines() {
    local r w ri wi
    read -r r w ri wi < <(disk_class "$2")
    echo "blkio.throttle.read_bps_device $1 $r"
    echo "blkio.throttle.write_bps_device $1 $w"
    echo "blkio.throttle.read_iops_device $1 $ri"
    echo "blkio.throttle.write_iops_device $1 $wi"
}

# disk_throttle NODE MAJ:MIN CLASS: the class's limits on the device in the
# node's block I/O group. Under v1 the same limits go on the root group too:
# v1 charges writeback by the kernel's flusher threads (dirty pages no fsync
# of the node wrote out) to the root group, not to the node's, so without a
# rule there those bytes would pass at full speed. Under v2 the node's
# io.max sees writeback too (with the memory controller on).
disk_throttle() {
    local node=$1 mm=$2 class=$3 dir file mmv val r w ri wi
    dir=$(cg_node_dir "$node" blkio)
    if [[ $(cg_version) == 2 ]]; then
        read -r r w ri wi < <(disk_class "$class")
        echo "$mm rbps=${r/#0/max} wbps=${w/#0/max} riops=${ri/#0/max} wiops=${wi/#0/max}" >"$dir/io.max"
        return 0
    fi
    echo "$mm" >>"$state/root-throttles"
    while read -r file mmv val; do
        [[ $val == 0 ]] && continue
        echo "$mmv $val" >"$dir/$file" || return 1
        echo "$mmv $val" >"$(cg_ctl_dir blkio)/$file" || return 1
    done < <(disk_limit_lines "$mm" "$class")
}

# disk_unthrottle_root: remove the root group's rules that 'up' set (v1).
disk_unthrottle_root() {
    local mm file
    [[ -f $state/root-throttles && -d $(cg_ctl_dir blkio) ]] || return 0
    while read -r mm; do
        for file in read_bps write_bps read_iops write_iops; do
            echo "$mm 0" >"$(cg_ctl_dir blkio)/blkio.throttle.${file}_device" 2>/dev/null || true
        done
    done <"$state/root-throttles"
}

# disk_writeback_as BYTES: this machine's writeback thresholds set as the kernel's defaults give them
# to a node of BYTES of memory: background writeback from 10 % of it dirty, writers held at 20 %
# (vm.dirty_background_ratio, vm.dirty_ratio). The values before are kept in $state/writeback for
# disk_writeback_restore. Used by tests/bench/io_bench.sh (MEM), not by 'up': under cgroup v1 the
# flusher's writeback and a writer's own sync are held in two groups, each at the class, so with
# writeback running during a write the device passed up to twice its rate (docs/cluster.md).
disk_writeback_as() {
    local vm=/proc/sys/vm
    [[ -f $state/writeback ]] || cat $vm/dirty_background_bytes $vm/dirty_background_ratio $vm/dirty_bytes \
        $vm/dirty_ratio | paste -sd' ' >"$state/writeback" || return 1
    echo $(($1 / 10)) >$vm/dirty_background_bytes && echo $(($1 / 5)) >$vm/dirty_bytes
}

# disk_writeback_restore: the thresholds disk_writeback_as found. Writing either form of a threshold
# (bytes or ratio) turns the other off, so the one that was set is written back.
disk_writeback_restore() {
    local vm=/proc/sys/vm bb br db dr
    [[ -f $state/writeback ]] || return 0
    read -r bb br db dr <"$state/writeback"
    if [[ $bb != 0 ]]; then echo "$bb" >$vm/dirty_background_bytes; else echo "$br" >$vm/dirty_background_ratio; fi
    if [[ $db != 0 ]]; then echo "$db" >$vm/dirty_bytes; else echo "$dr" >$vm/dirty_ratio; fi
    rm -f "$state/writeback"
}

# node_mkdir PID DIR: DIR made in the node of holder PID if missing. Without
# an own root the node sees this machine's /, so a folder made there is
# listed in $state/made-dirs for 'down' to remove.
node_mkdir() {
    nsenter --target "$1" --mount test -d "$2" && return 0
    nsenter --target "$1" --mount mkdir "$2" || return 1
    [[ -n $own_root ]] || echo "$2" >>"$state/made-dirs"
}

# start_disk K PID CLASS: node K's disk, mounted at /disk in its namespace.
start_disk() {
    local k=$1 pid=$2 class=$3 ns=pi$1 file=$state/disk-pi$1.img dev mm
    truncate -s "$disk_bytes" "$file"
    # Direct I/O to the backing file: what the node syncs reaches this
    # machine's disk inside the throttled window, not later from its page cache.
    dev=$(losetup -f --show --direct-io=on "$file" 2>/dev/null) || dev=$(losetup -f --show "$file") ||
        { echo "cluster: no free loop device for $ns's disk" >&2; return 1; }
    mm=$(lsblk -dn -o MAJ:MIN "$dev" | tr -d ' ')
    # Inode tables and journal written now, so no background init competes with the node's I/O.
    mkfs.ext4 -q -F -L "$ns-disk" -E lazy_itable_init=0,lazy_journal_init=0 "$dev" >>"$state/holder-$ns.log" 2>&1 ||
        { echo "cluster: mkfs.ext4 failed on $dev for $ns (see $state/holder-$ns.log)" >&2; return 1; }
    node_mkdir "$pid" /disk || { echo "cluster: cannot make /disk in $ns" >&2; return 1; }
    nsenter --target "$pid" --mount mount -o noatime "$dev" /disk ||
        { echo "cluster: cannot mount $dev at /disk in $ns" >&2; return 1; }
    disk_throttle "$ns" "$mm" "$class" || { echo "cluster: cannot throttle $dev ($mm) for $ns" >&2; return 1; }
    echo "$ns $dev $mm $class" >>"$state/disks"
}

# disk_teardown: detach every loop device over a file of the state folder
# (the nodes' mounts went with their namespaces), after the root group's
# rules on them are gone; then the folders 'up' made on this machine.
disk_teardown() {
    local devs dev i d
    disk_unthrottle_root
    disk_writeback_restore
    for i in $(seq 1 50); do
        devs=$(losetup -n -l -O NAME,BACK-FILE 2>/dev/null | awk -v s="$state/disk-pi" 'index($2, s) == 1 {print $1}')
        [[ -z $devs ]] && break
        # A device still open (a dying namespace's mount) is detached on its last close.
        for dev in $devs; do losetup -d "$dev" 2>/dev/null || true; done
        sleep 0.1
    done
    if [[ -f $state/made-dirs ]]; then
        while read -r d; do
            mountpoint -q "$d" || rmdir "$d" 2>/dev/null || true
        done < <(sort -u "$state/made-dirs")
    fi
}

# start_share PID1: pi1 serves /disk/share with its own sshd (port
# $share_port, keys of its own in $state/share, sftp only), and every node
# mounts it with sshfs at /share through its address on the emulated
# network. Both ends run in their node's cgroups, so pi1's disk throttle
# and CPU share apply to the server and each node's to its client.
start_share() {
    local pid1=$1 dir=$state/share pid ns addr=$net_prefix.1 i
    mkdir -m 700 "$dir"
    ssh-keygen -q -t ed25519 -N "" -C "wulfbench-emulate share server" -f "$dir/host_key" &&
        ssh-keygen -q -t ed25519 -N "" -C "wulfbench-emulate share client" -f "$dir/client_key" ||
        { echo "cluster: --share: ssh-keygen failed" >&2; return 1; }
    cp "$dir/client_key.pub" "$dir/authorized_keys"
    echo "[$addr]:$share_port $(cut -d' ' -f1,2 "$dir/host_key.pub")" >"$dir/known_hosts"
    cat >"$dir/sshd_config" <<EOF
# jobs/emulate/cluster up --share: pi1 serves /disk/share over sftp only
ListenAddress $addr:$share_port
HostKey $dir/host_key
AuthorizedKeysFile $dir/authorized_keys
PidFile $dir/sshd.pid
PermitRootLogin prohibit-password
PasswordAuthentication no
KbdInteractiveAuthentication no
UsePAM no
AllowTcpForwarding no
X11Forwarding no
PermitTunnel no
Subsystem sftp internal-sftp
ForceCommand internal-sftp
EOF
    node_mkdir "$pid1" /run/sshd && node_mkdir "$pid1" /disk/share ||
        { echo "cluster: --share: cannot make /disk/share in pi1" >&2; return 1; }
    (cg_join pi1 "$BASHPID" && exec nsenter --target "$pid1" --uts --net --mount -- \
        /usr/sbin/sshd -f "$dir/sshd_config" -E "$dir/sshd.log" 9<&-) ||
        { echo "cluster: --share: sshd did not start in pi1 (see $dir/sshd.log)" >&2; return 1; }
    for i in $(seq 1 50); do
        [[ -s $dir/sshd.pid ]] && break
        sleep 0.05
    done
    [[ -s $dir/sshd.pid ]] || { echo "cluster: --share: sshd in pi1 wrote no pid file (see $dir/sshd.log)" >&2; return 1; }
    while read -r ns addr _ pid; do
        node_mkdir "$pid" /share || { echo "cluster: --share: cannot make /share in $ns" >&2; return 1; }
        # ServerAlive: a cut link gives an error after about 15 s instead of a hang.
        (cg_join "$ns" "$BASHPID" && exec nsenter --target "$pid" --uts --net --mount -- \
            sshfs "root@$net_prefix.1:/disk/share" /share -o "port=$share_port,IdentityFile=$dir/client_key" \
            -o "UserKnownHostsFile=$dir/known_hosts,StrictHostKeyChecking=yes,BatchMode=yes" \
            -o "ServerAliveInterval=5,ServerAliveCountMax=3,allow_other" 9<&- </dev/null >>"$dir/sshfs-$ns.log" 2>&1) ||
            { echo "cluster: --share: sshfs could not mount /share in $ns: $(tail -1 "$dir/sshfs-$ns.log")" >&2; return 1; }
        [[ $(nsenter --target "$pid" --mount findmnt -n -o FSTYPE /share) == fuse.sshfs ]] ||
            { echo "cluster: --share: /share in $ns is not the sshfs mount" >&2; return 1; }
    done <"$state/nodes.tmp"
}

# print_storage: 'status' lines of the disks and the share.
print_storage() {
    local ns dev mm class pid
    [[ -f $state/disks ]] || return 0
    echo "disks (ext4 on a loop device at /disk in each node; cgroup v$(cg_version) block I/O throttle):"
    while read -r ns dev mm class; do
        printf '  %-6s %-11s %-6s %-8s %s\n' "$ns" "$dev" "$mm" "$class" "$(disk_words "$class")"
    done <"$state/disks"
    [[ -f $state/share/sshd.pid ]] || return 0
    pid=$(cat "$state/share/sshd.pid")
    kill -0 "$pid" 2>/dev/null || pid="$pid (dead; see $state/share/sshd.log)"
    echo "share: pi1:/disk/share over sshfs at /share on every node (sshd pid $pid, port $share_port)"
}
