# The environment of one emulated node's processes, from 'cluster up --node
# K:sysfs=DIR' and 'K:clock=SECONDS'. Sourced by jobs/emulate/cluster (exec, run) and
# jobs/emulate/agent (what Open MPI starts on a node); needs $state.
# shellcheck shell=bash

# node_env NODE: WB_SYSFS_ROOT=DIR exported for a node given sysfs=DIR, and
# libfaketime preloaded with FAKETIME=OFFSET for a node given clock=OFFSET.
# When any node has one, it is unset for the others: mpirun runs in pi1, and
# the agent it starts for another node would otherwise pass pi1's on.
faketime_lib=/usr/lib/x86_64-linux-gnu/faketime/libfaketime.so.1
[[ -f $faketime_lib ]] || faketime_lib=$(ls /usr/lib/*/faketime/libfaketime.so.1 2>/dev/null | head -n 1)
node_env() {
    local name rate mtu sysfs bin clock any="" anyclk="" mine=- myclk=-
    [[ -f $state/node-opts ]] || return 0
    while IFS=$'\t' read -r name rate mtu sysfs bin clock; do
        [[ $sysfs == - ]] || any=1
        [[ ${clock:--} == - ]] || anyclk=1
        [[ $name != "$1" ]] || { mine=$sysfs; myclk=${clock:--}; }
    done <"$state/node-opts"
    if [[ -n $any ]]; then
        if [[ $mine != - ]]; then export WB_SYSFS_ROOT=$mine; else unset WB_SYSFS_ROOT; fi
    fi
    [[ -n $anyclk ]] || return 0
    # Only the wall clock is off; other preloads the caller had are kept.
    local keep=" ${LD_PRELOAD:-} "
    keep=${keep// $faketime_lib / }
    keep=$(echo $keep)
    if [[ $myclk != - ]]; then
        export FAKETIME=$myclk FAKETIME_DONT_FAKE_MONOTONIC=1 LD_PRELOAD="$faketime_lib${keep:+ $keep}"
    else
        unset FAKETIME FAKETIME_DONT_FAKE_MONOTONIC
        if [[ -n $keep ]]; then export LD_PRELOAD=$keep; else unset LD_PRELOAD; fi
    fi
}
