# Shared by the job scripts (jobs/slurm, jobs/pbs, jobs/mpirun, jobs/emulate):
# messages, the binary, labels and file names, root, modules, node counts.
# Source it after setting wb_name (the prefix of every message).
# shellcheck shell=bash
# shellcheck disable=SC2154 # wb_name and cmd are set by the sourcing script

wb_jobs_dir=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)

wb_die() { echo "$wb_name: $*" >&2; exit 1; }
wb_bad_usage() { echo "$wb_name: $*" >&2; exit 2; }

# wb_find_bin [DIR]: the wulfbench binary. WB_BIN, else DIR/build/wulfbench,
# else the one beside these scripts (a checkout's build/, or PREFIX/bin when
# installed under PREFIX/share/wulfbench/jobs), else wulfbench on PATH.
wb_find_bin() {
    local c
    if [[ -n ${WB_BIN:-} ]]; then
        [[ -x $WB_BIN && ! -d $WB_BIN ]] || wb_die "wulfbench binary '$WB_BIN' not found or not executable (set WB_BIN)"
        echo "$WB_BIN"
        return 0
    fi
    for c in ${1:+"$1/build/wulfbench"} "$wb_jobs_dir/../build/wulfbench" "$wb_jobs_dir/../../../bin/wulfbench"; do
        if [[ -x $c && ! -d $c ]]; then
            (cd "$(dirname "$c")" && echo "$(pwd)/wulfbench")
            return 0
        fi
    done
    command -v wulfbench 2>/dev/null ||
        wb_die "no wulfbench binary: build it with 'make', install it with 'make install', or set WB_BIN"
}

# wb_safe TEXT: TEXT usable in a file name.
wb_safe() { printf '%s' "$1" | tr -c 'A-Za-z0-9._+-' '-'; }

wb_stamp() { date -u +%Y%m%dT%H%M%SZ; }
# The UTC start of this script: the same in every file name it makes.
wb_run_stamp=${wb_run_stamp:-$(wb_stamp)}

# Open MPI refuses root unless told twice; only throw-away test machines run as root.
wb_root_env() {
    if [[ $(id -u) -eq 0 ]]; then
        export OMPI_ALLOW_RUN_AS_ROOT=1 OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1
    fi
}

# wb_check_sub NAME ALLOWED...: NAME must be one of ALLOWED.
wb_check_sub() {
    local sub=$1 a
    shift
    for a in "$@"; do [[ $sub == "$a" ]] && return 0; done
    wb_bad_usage "unknown wulfbench subcommand '$sub' ($(printf '%s, ' "$@" | sed 's/, $//'))"
}

# wb_preflight RESULTS LAUNCH...: run 'LAUNCH check --results RESULTS' (LAUNCH: the launcher and the
# binary) before any result file exists; a failure stops the job with check's exit status. WB_CHECK=0
# skips it; WB_CHECK_ARGS adds options (e.g. --strict). See docs/check.md.
wb_preflight() {
    local results=$1 rc=0
    shift
    [[ ${WB_CHECK:-1} == 0 ]] && return 0
    local -a more=()
    read -ra more <<<"${WB_CHECK_ARGS:-}"
    echo "$wb_name: $(printf '%q ' "$@" check --results "$results" "${more[@]}")"
    "$@" check --results "$results" "${more[@]}" </dev/null || rc=$?
    ((rc == 0)) && return 0
    echo "$wb_name: wulfbench check failed (exit $rc): fix what it names above, or set WB_CHECK=0 to skip it" >&2
    exit "$rc"
}

# wb_scan_opts ARGS...: sets wb_has_out and wb_has_label from wulfbench options.
wb_scan_opts() {
    local a
    wb_has_out=0 wb_has_label=0
    for a in "$@"; do
        case $a in
            -o | -o?* | --output | --output=*) wb_has_out=1 ;;
            --label | --label=*) wb_has_label=1 ;;
        esac
    done
}

# wb_refuse_out_label WHAT ARGS...: a sweep names its files itself.
wb_refuse_out_label() {
    local what=$1 a
    shift
    for a in "$@"; do
        case $a in
            -o | -o?* | --output | --output=* | --label | --label=*)
                wb_bad_usage "'$a' is set per step by $what; use WB_RESULTS and WB_LABEL" ;;
        esac
    done
}

# wb_load_modules: 'module load' each of WB_MODULES (spaces or commas), with
# Environment Modules or Lmod, whose init a batch shell has not always read.
wb_load_modules() {
    local mods=${WB_MODULES:-} m f
    [[ -n ${mods//[ ,]/} ]] || return 0
    if ! declare -F module >/dev/null; then
        for f in ${MODULESHOME:+"$MODULESHOME/init/bash"} ${LMOD_PKG:+"$LMOD_PKG/init/bash"} \
            /etc/profile.d/modules.sh /etc/profile.d/lmod.sh /usr/share/lmod/lmod/init/bash; do
            # shellcheck disable=SC1090 # the site's module system
            [[ -r $f ]] && { source "$f"; break; }
        done
    fi
    declare -F module >/dev/null || command -v module >/dev/null ||
        wb_die "WB_MODULES is set but there is no 'module' command (no Environment Modules or Lmod found)"
    for m in ${mods//,/ }; do
        module load "$m" >/dev/null 2>&1 || wb_die "'module load $m' failed (check the name with 'module avail')"
    done
    echo "$wb_name: loaded modules: ${mods//,/ }"
}

# wb_counts MAX [LIST]: sets the array counts, the node counts of a sweep:
# LIST (spaces or commas) if given, else the powers of two below MAX and MAX.
wb_counts() {
    local max=$1 list=${2:-} n
    counts=()
    if [[ -n ${list//[ ,]/} ]]; then
        for n in ${list//,/ }; do
            [[ $n =~ ^[1-9][0-9]*$ ]] || wb_bad_usage "node counts hold '$n', not a positive number"
            counts+=("$n")
        done
        return 0
    fi
    for ((n = 1; n < max; n *= 2)); do counts+=("$n"); done
    counts+=("$max")
}

# wb_results_name DIR STEM NODES SUB [JOB]: the file of one run,
# DIR/STEM_nNODES_SUB_STAMP[_jobJOB].h5, STAMP the same for every run of one
# script. Files with the same STEM and different node counts are one scaling
# series (see wb_label).
wb_results_name() {
    printf '%s/%s_n%s_%s_%s%s.h5' "$1" "$(wb_safe "$2")" "$3" "$4" "$wb_run_stamp" "${5:+_job$5}"
}

# wb_label STEM NODES SUB [JOB]: the default label, "STEM nNODES SUB[ jobJOB]".
wb_label() { printf '%s n%s %s%s' "$1" "$2" "$3" "${4:+ job$4}"; }

# wb_sweep MAX RESULTS STEM SUB JOB COUNT...: one run per node count, each
# with its own file and label. The caller defines wb_step_cmd N OUT LABEL,
# which sets the array cmd. A failed step is reported and the sweep goes on;
# then it ends with exit 1.
wb_sweep() {
    local max=$1 results=$2 stem=$3 sub=$4 job=$5 n rc out failed=()
    shift 5
    mkdir -p "$results"
    for n in "$@"; do
        if ((n > max)); then
            echo "$wb_name: skipping $n nodes: the job has $max" >&2
            continue
        fi
        out=$(wb_results_name "$results" "$stem" "$n" "$sub" "$job")
        wb_step_cmd "$n" "$out" "$(wb_label "$stem" "$n" "$sub" "$job")"
        echo "$wb_name: [$n nodes] $(printf '%q ' "${cmd[@]}")"
        rc=0
        wb_launch "${cmd[@]}" || rc=$?
        if ((rc != 0)); then
            echo "$wb_name: [$n nodes] failed with exit status $rc" >&2
            failed+=("$n")
        fi
    done
    ((${#failed[@]} == 0)) || wb_die "steps failed: ${failed[*]} node(s)"
    echo "$wb_name: done; results in $(wb_results_name "$results" "$stem" '*' "$sub" "$job")"
}

# wb_launch CMD...: run a launcher command line (mpirun, mpiexec, srun) so that it returns soon after
# wulfbench has ended the run itself. A launcher whose node was cut off waits for that node's
# daemon to confirm the kill, for as long as TCP retries (about 15 min): when rank 0's watchdog ends a
# run it writes "EXIT STATUS" to $WB_EXIT_NOTE (a fresh file here, exported; give Open MPI's mpirun
# -x WB_EXIT_NOTE), and a launcher still running WB_LAUNCH_GRACE seconds (default 5) later is killed
# (SIGKILL: a second SIGTERM makes mpirun print a backtrace), with one line on stderr. Returns rank 0's
# exit status then, else the launcher's own.
wb_launch() {
    local note pid rc=0 code status t_note="" grace=${WB_LAUNCH_GRACE:-5} old_int killed=0
    note=$(mktemp "${TMPDIR:-/tmp}/wb-exit.XXXXXX") || wb_die "cannot create a temporary file in ${TMPDIR:-/tmp}"
    # A Ctrl-C reaches the launcher from the terminal; like a foreground launcher, let it finish,
    # then give the caller the interrupt.
    old_int=$(trap -p INT)
    wb_launch_int=0
    trap 'wb_launch_int=1' INT
    WB_EXIT_NOTE=$note "$@" &
    pid=$!
    while kill -0 "$pid" 2>/dev/null; do
        if [[ -s $note ]]; then
            [[ -n $t_note ]] || t_note=$SECONDS
            if ((SECONDS - t_note >= grace)); then
                read -r code status <"$note" || true
                local a who=$1
                for a in "$@"; do
                    case ${a##*/} in mpirun | mpiexec* | srun | orterun | prun) who=${a##*/}; break ;; esac
                done
                echo "$wb_name: $who had not returned ${grace} s after wulfbench ended the run (status $status," \
                    "exit $code): it waits for a node it cannot reach, so it was stopped (docs/network-faults.md)" >&2
                kill -KILL "$pid" 2>/dev/null || true
                wait "$pid" 2>/dev/null || true
                rc=${code:-1} killed=1
                break
            fi
        fi
        sleep 0.5
    done
    ((killed)) || wait "$pid" || rc=$?
    rm -f "$note"
    if [[ -n $old_int ]]; then eval "$old_int"; else trap - INT; fi
    ((wb_launch_int == 0)) || kill -INT $$
    return "$rc"
}
