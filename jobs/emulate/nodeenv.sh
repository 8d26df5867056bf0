# The environment of one emulated node's processes, from 'cluster up --node
# K:sysfs=DIR'. Sourced by jobs/emulate/cluster (exec, run) and
# jobs/emulate/agent (what Open MPI starts on a node); needs $state.
# shellcheck shell=bash

# node_env NODE: WB_SYSFS_ROOT=DIR exported for a node given sysfs=DIR. When
# any node has one, it is unset for the others: mpirun runs in pi1, and the
# agent it starts for another node would otherwise pass pi1's tree on.
node_env() {
    local name rate mtu sysfs bin any="" mine=-
    [[ -f $state/node-opts ]] || return 0
    while IFS=$'\t' read -r name rate mtu sysfs bin; do
        [[ $sysfs == - ]] || any=1
        [[ $name != "$1" ]] || mine=$sysfs
    done <"$state/node-opts"
    [[ -n $any ]] || return 0
    if [[ $mine != - ]]; then export WB_SYSFS_ROOT=$mine; else unset WB_SYSFS_ROOT; fi
}
