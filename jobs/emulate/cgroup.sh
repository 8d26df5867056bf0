# CPU, memory and block I/O cgroups of the emulated cluster: one group per
# node, named wulfbench-emulate/piK under each controller, so a node computes
# at a chosen fraction of one of this machine's cores (CFS quota), has a
# memory limit, and its disk (jobs/emulate/disk.sh) is throttled.
# Sourced by jobs/emulate/cluster and jobs/emulate/agent; needs $state.
# shellcheck shell=bash

cg_root=${WB_EMULATE_CGROUP:-/sys/fs/cgroup}
cg_group=wulfbench-emulate
# cg_version: 2 when cg_root is a unified (v2) hierarchy, else 1.
cg_version() { if [[ -f $cg_root/cgroup.controllers ]]; then echo 2; else echo 1; fi; }

# The controllers this file knows: v1 names; v2 calls blkio 'io'.
cg_all_ctls="cpu memory blkio"

# cg_ctl_dir CONTROLLER: the hierarchy holding CONTROLLER (cpu, memory or blkio).
cg_ctl_dir() { if [[ $(cg_version) == 2 ]]; then echo "$cg_root"; else echo "$cg_root/$1"; fi; }

# cg_knob CONTROLLER: the file that proves CONTROLLER works in a group.
cg_knob() {
    case $(cg_version)$1 in
        1cpu) echo cpu.cfs_quota_us ;;
        1memory) echo memory.limit_in_bytes ;;
        1blkio) echo blkio.throttle.read_bps_device ;;
        2cpu) echo cpu.max ;;
        2memory) echo memory.max ;;
        2blkio) echo io.max ;;
    esac
}

# cg_v2_name CONTROLLER: its name in a v2 hierarchy.
cg_v2_name() { if [[ $1 == blkio ]]; then echo io; else echo "$1"; fi; }

# cg_prepare CONTROLLER...: make the parent group under each controller, or
# print one line on stderr and return 1 with nothing left made.
cg_prepare() {
    local ctl dir made=() err v2
    for ctl in "$@"; do
        dir=$(cg_ctl_dir "$ctl")
        v2=$(cg_v2_name "$ctl")
        if [[ $(cg_version) == 2 ]]; then
            grep -qw "$v2" "$dir/cgroup.controllers" 2>/dev/null ||
                { cg_undo "${made[@]}"; echo "no '$v2' controller in the cgroup v2 hierarchy $dir" >&2; return 1; }
        elif [[ ! -f $dir/$(cg_knob "$ctl") ]]; then
            cg_undo "${made[@]}"
            echo "no cgroup v1 '$ctl' hierarchy at $dir (set WB_EMULATE_CGROUP to the cgroup mount)" >&2
            return 1
        fi
        [[ -d $dir/$cg_group ]] && continue
        if ! err=$(mkdir "$dir/$cg_group" 2>&1); then
            cg_undo "${made[@]}"
            echo "cannot write the cgroup hierarchy $dir: ${err##*: }" >&2
            return 1
        fi
        made+=("$dir/$cg_group")
        if [[ $(cg_version) == 2 ]] && ! { echo "+$v2" >"$dir/cgroup.subtree_control" &&
            echo "+$v2" >"$dir/$cg_group/cgroup.subtree_control"; } 2>/dev/null; then
            cg_undo "${made[@]}"
            echo "cannot enable the '$v2' controller below $dir" >&2
            return 1
        fi
    done
}

cg_undo() { local d; for d in "$@"; do rmdir "$d" 2>/dev/null || true; done; }

# cg_make NODE CONTROLLER...: NODE's groups, listed in $state/cgroups.
cg_make() {
    local node=$1 ctl dir
    shift
    for ctl in "$@"; do
        dir=$(cg_ctl_dir "$ctl")/$cg_group/$node
        [[ -d $dir ]] || mkdir "$dir"
        grep -qx "$node $dir" "$state/cgroups" 2>/dev/null || echo "$node $dir" >>"$state/cgroups"
        [[ -f $dir/$(cg_knob "$ctl") ]] || { echo "cgroup $dir has no $(cg_knob "$ctl")" >&2; return 1; }
    done
}

# cg_node_dir NODE CONTROLLER: the group of NODE under CONTROLLER.
cg_node_dir() { echo "$(cg_ctl_dir "$2")/$cg_group/$1"; }

# cg_set_cpu NODE SHARE SLOTS: SHARE of one core per slot (CFS quota). The
# quota is the kernel's smallest, 1 ms per slot, and the period 1 ms/SHARE,
# so that even a millisecond of work runs at the share: with a 100 ms period
# a short repetition fits in one period's quota and runs at full speed. No
# burst (cpu.cfs_burst_us, cpu.max.burst): unused quota must not pile up.
cg_set_cpu() {
    local dir quota period
    dir=$(cg_node_dir "$1" cpu)
    quota=$((1000 * $3))
    period=$(awk -v s="$2" 'BEGIN { p = int(1000 / s + 0.5); if (p > 1000000) p = 1000000; print p }')
    if [[ $(cg_version) == 2 ]]; then
        echo "$quota $period" >"$dir/cpu.max"
        [[ ! -f $dir/cpu.max.burst ]] || echo 0 >"$dir/cpu.max.burst"
    else
        [[ ! -f $dir/cpu.cfs_burst_us ]] || echo 0 >"$dir/cpu.cfs_burst_us"
        # The period may only shrink below the quota once the quota is off.
        echo -1 >"$dir/cpu.cfs_quota_us"
        echo "$period" >"$dir/cpu.cfs_period_us"
        echo "$quota" >"$dir/cpu.cfs_quota_us"
    fi
}

# cg_set_mem NODE BYTES
cg_set_mem() {
    local dir
    dir=$(cg_node_dir "$1" memory)
    if [[ $(cg_version) == 2 ]]; then
        echo "$2" >"$dir/memory.max"
    else
        echo "$2" >"$dir/memory.limit_in_bytes"
    fi
}

# cg_join NODE PID: move PID into NODE's groups (its children follow).
cg_join() {
    local n d
    [[ -f $state/cgroups ]] || return 0
    while read -r n d; do
        [[ $n == "$1" ]] || continue
        echo "$2" >"$d/cgroup.procs" || return 1
    done <"$state/cgroups"
}

# cg_remove_all: end every process in our groups, then remove the groups,
# found by name under each controller even if the state folder is gone.
cg_remove_all() {
    local dirs=() d p i ctl
    for ctl in $cg_all_ctls; do
        d=$(cg_ctl_dir "$ctl")/$cg_group
        [[ -d $d ]] && [[ " ${dirs[*]} " != *" $d "* ]] && dirs+=("$d")
    done
    ((${#dirs[@]})) || return 0
    for i in $(seq 1 30); do
        p=$(cat "${dirs[@]/%//*/cgroup.procs}" 2>/dev/null || true)
        [[ -z $p ]] && break
        # shellcheck disable=SC2086 # a list of PIDs
        kill -s "$( ((i < 20)) && echo TERM || echo KILL)" $p 2>/dev/null || true
        sleep 0.1
    done
    for d in "${dirs[@]}"; do
        for p in "$d"/*/; do [[ -d $p ]] && { rmdir "$p" 2>/dev/null || true; }; done
        rmdir "$d" 2>/dev/null || true
    done
}

# cg_left: the groups still there (empty when all are gone).
cg_left() {
    local ctl d
    for ctl in $cg_all_ctls; do
        d=$(cg_ctl_dir "$ctl")/$cg_group
        [[ -d $d ]] && echo "$d"
    done | sort -u
    return 0
}
