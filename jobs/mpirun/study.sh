#!/usr/bin/env bash
# The standard study on a cluster reached by ssh (a Raspberry Pi Beowulf, EC2
# instances, or the emulated cluster): both FFT sweeps, transfer between all
# pairs of ranks, and a --baseline run on this machine for comparison.
# Hosts and binary are checked before anything long starts.
set -euo pipefail

here=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
repo=$(cd "$here/../.." && pwd)
wb_name=study
# shellcheck source=jobs/lib.sh
source "$here/../lib.sh"
all_steps="sizes files transfer baseline load"

usage() {
    cat <<EOF
Usage: jobs/mpirun/study.sh [OPTIONS] [-- WULFBENCH-OPTIONS...]

Run the standard wulfbench study across the hosts of an Open MPI hostfile:

  sizes     mpirun ... wulfbench fft --sweep sizes      (one file, growing)
  files     mpirun ... wulfbench fft --sweep files      (many 5 s files)
  transfer  mpirun ... wulfbench transfer --pairs all   (every pair of ranks)
  baseline  mpirun -np 1 wulfbench fft --baseline       (this machine alone)
  load      mpirun ... wulfbench load                   (not in the default)

Every result file is labelled and dated:
  RESULTS/LABEL_nN_STEP_STAMP.h5 with --label "LABEL nN STEP"
with N the number of hosts the step ran on and STAMP the UTC start (the
same for every file of one study); the commands and their output go to
RESULTS/LABEL_STAMP.log. With --nodes 1,2,4,8 the cluster steps run once
per count, on the first N hosts of the hostfile (each with its slots):
the files share LABEL and differ in N, which is what the report joins into
its scaling figure. The baseline step runs once (one process, n1).

Before starting, it checks that the hostfile exists, that every host answers
through the launch agent (ssh -o BatchMode=yes -o ConnectTimeout=S
-o StrictHostKeyChecking=accept-new, or the agent given) and that the
binary exists at the same path on every node. Hosts that are this machine
(localhost, its names and addresses) are not contacted: mpirun does not
ssh to them either. Then 'wulfbench check' runs across the hostfile
(versions, CPU governor, throttling, memory, clock, links; docs/check.md):
a failure stops the study before any result file is made.
A bad argument or a failed check prints one line, exits non-zero and leaves
nothing behind. If a step fails, the others still run; the exit status is
then 1.

Options:
  -H, --hostfile FILE   Open MPI hostfile (default: \$WB_HOSTFILE, else
                        hostfiles/pi4-4node)
  -b, --bin PATH        wulfbench binary; the same absolute path on every
                        node (default: \$WB_BIN, else the build/ of this
                        checkout, else PREFIX/bin/wulfbench when installed
                        under PREFIX/share/wulfbench, else wulfbench on PATH)
  -r, --results DIR     where result files go (default: \$WB_RESULTS, else
                        results); created only once the checks pass
  -l, --label TEXT      label of this study (default: the hostfile's name)
  -s, --steps LIST      comma-separated steps, from: ${all_steps// /,}
                        (default: sizes,files,transfer,baseline)
  -n, --np N            ranks for the cluster steps (default: the slots of
                        the hostfile); not with --nodes
  -N, --nodes LIST      comma-separated node counts, e.g. 1,2,4,8: run the
                        cluster steps on the first N hosts for each
                        (default: all hosts, once)
      --agent CMD       launch agent, used for the checks and handed to
                        mpirun as plm_rsh_agent (default:
                        \$OMPI_MCA_plm_rsh_agent, else ssh)
      --connect-timeout S
                        seconds a host may take to answer (default: 10)
      --fft-opts STR    extra options for the fft steps (incl. baseline),
                        split on spaces, e.g. "--seconds 1,5 --reps 3"
      --transfer-opts STR
                        extra options for the transfer step, e.g. "-m 1:1M"
      --load-opts STR   extra options for the load step
      --mpirun-arg ARG  one extra argument for mpirun; repeatable
      --check           run the checks (ssh, binary, then 'wulfbench check'), then stop
      --no-check        skip the host checks (not the argument checks)
      --dry-run         print the commands instead of running them
  -h, --help            this text
  -- WULFBENCH-OPTIONS  given to every wulfbench run (e.g. --reps 3 --seed 7)

Environment:
  WB_HOSTFILE, WB_BIN, WB_RESULTS   defaults of the options above
  WB_MPIRUN_ARGS        extra mpirun arguments, split on spaces
  OMPI_MCA_plm_rsh_agent
                        launch agent when --agent is not given
  MPIRUN                mpirun command (default: mpirun)

Examples:
  jobs/mpirun/study.sh --hostfile hostfiles/pi4-4node --label pi4-cluster
  jobs/mpirun/study.sh -H hostfiles/ec2-example --check
  jobs/mpirun/study.sh -H hostfiles/pi3-8node --nodes 1,2,4,8 -s files,baseline
  jobs/mpirun/study.sh -H myhosts -s transfer --transfer-opts "-m 1:1M" -- --reps 3
EOF
}

die() { echo "study: $*" >&2; exit 1; }
bad_usage() { echo "study: $* (see --help)" >&2; exit 2; }

hostfile=${WB_HOSTFILE:-$repo/hostfiles/pi4-4node}
bin=""
nodes_list=""
results=${WB_RESULTS:-results}
label=""
steps="sizes,files,transfer,baseline"
np=""
agent=${OMPI_MCA_plm_rsh_agent:-ssh}
connect_timeout=10
fft_opts="" transfer_opts="" load_opts=""
check=1 check_only=0 dry_run=0
mpirun_cmd=${MPIRUN:-mpirun}
read -ra mpirun_args <<<"${WB_MPIRUN_ARGS:-}"
wb_opts=()

need_arg() { (($# >= 2)) || bad_usage "$1 needs a value"; }
while (($#)); do
    case $1 in
        -h | --help) usage; exit 0 ;;
        -H | --hostfile) need_arg "$@"; hostfile=$2; shift 2 ;;
        --hostfile=*) hostfile=${1#*=}; shift ;;
        -b | --bin) need_arg "$@"; bin=$2; shift 2 ;;
        -N | --nodes) need_arg "$@"; nodes_list=$2; shift 2 ;;
        --nodes=*) nodes_list=${1#*=}; shift ;;
        --bin=*) bin=${1#*=}; shift ;;
        -r | --results) need_arg "$@"; results=$2; shift 2 ;;
        --results=*) results=${1#*=}; shift ;;
        -l | --label) need_arg "$@"; label=$2; shift 2 ;;
        --label=*) label=${1#*=}; shift ;;
        -s | --steps) need_arg "$@"; steps=$2; shift 2 ;;
        --steps=*) steps=${1#*=}; shift ;;
        -n | --np) need_arg "$@"; np=$2; shift 2 ;;
        --np=*) np=${1#*=}; shift ;;
        --agent) need_arg "$@"; agent=$2; shift 2 ;;
        --agent=*) agent=${1#*=}; shift ;;
        --connect-timeout) need_arg "$@"; connect_timeout=$2; shift 2 ;;
        --connect-timeout=*) connect_timeout=${1#*=}; shift ;;
        --fft-opts) need_arg "$@"; fft_opts=$2; shift 2 ;;
        --fft-opts=*) fft_opts=${1#*=}; shift ;;
        --transfer-opts) need_arg "$@"; transfer_opts=$2; shift 2 ;;
        --transfer-opts=*) transfer_opts=${1#*=}; shift ;;
        --load-opts) need_arg "$@"; load_opts=$2; shift 2 ;;
        --load-opts=*) load_opts=${1#*=}; shift ;;
        --mpirun-arg) need_arg "$@"; mpirun_args+=("$2"); shift 2 ;;
        --mpirun-arg=*) mpirun_args+=("${1#*=}"); shift ;;
        --check) check_only=1; shift ;;
        --no-check) check=0; shift ;;
        --dry-run) dry_run=1; shift ;;
        --) shift; wb_opts=("$@"); break ;;
        *) bad_usage "unknown argument '$1'" ;;
    esac
done

# Argument checks: nothing touched yet.
IFS=, read -ra step_list <<<"$steps"
((${#step_list[@]} > 0)) || bad_usage "--steps is empty"
for s in "${step_list[@]}"; do
    [[ " $all_steps " == *" $s "* ]] || bad_usage "unknown step '$s' (steps: ${all_steps// /,})"
done
[[ -z $np || $np =~ ^[1-9][0-9]*$ ]] || bad_usage "--np must be a positive number, not '$np'"
if [[ -n $nodes_list ]]; then
    [[ -z $np ]] || bad_usage "--np and --nodes together: give each host its slots in the hostfile instead"
    [[ $nodes_list =~ ^[1-9][0-9]*(,[1-9][0-9]*)*$ ]] || bad_usage "--nodes must be node counts like 1,2,4,8, not '$nodes_list'"
fi
[[ $connect_timeout =~ ^[1-9][0-9]*$ ]] || bad_usage "--connect-timeout must be a positive number of seconds"
[[ -n $results ]] || bad_usage "--results is empty"
for o in "${wb_opts[@]}"; do
    case $o in
        -o | --output | --output=* | -o?* | --label | --label=*)
            bad_usage "'$o' is set by the study itself; use --results and --label" ;;
    esac
done
read -ra fft_extra <<<"$fft_opts"
read -ra transfer_extra <<<"$transfer_opts"
read -ra load_extra <<<"$load_opts"

[[ -e $hostfile ]] || die "hostfile '$hostfile' not found"
[[ -f $hostfile && -r $hostfile ]] || die "hostfile '$hostfile' is not a readable file"
mapfile -t hosts < <(sed 's/#.*//' "$hostfile" | awk 'NF {print $1}' | awk '!seen[$0]++')
((${#hosts[@]} > 0)) || die "hostfile '$hostfile' lists no hosts"
[[ -z $label ]] && label=$(basename "$hostfile")
safe_label=$(wb_safe "$label")
wb_counts "${#hosts[@]}" "${nodes_list:-${#hosts[@]}}"
for n in "${counts[@]}"; do
    ((n <= ${#hosts[@]})) || bad_usage "--nodes $n: hostfile '$hostfile' lists only ${#hosts[@]} host(s)"
done

[[ -n $bin ]] || bin=$(wb_find_bin)
# The same path must work on every node, so it has to be absolute.
if [[ $bin != /* ]]; then
    bin_dir=$(cd "$(dirname "$bin")" 2>/dev/null && pwd) || die "wulfbench binary '$bin' not found"
    bin=$bin_dir/$(basename "$bin")
fi
[[ -x $bin ]] || die "wulfbench binary '$bin' not found or not executable here (build it with 'make', or give --bin)"
command -v "$mpirun_cmd" >/dev/null || die "'$mpirun_cmd' not found (install openmpi-bin)"
read -ra agent_cmd <<<"$agent"
((${#agent_cmd[@]} > 0)) || bad_usage "--agent is empty"

# Names and addresses of this machine: Open MPI starts those ranks without ssh.
local_names=" $(hostname) $(hostname -s 2>/dev/null || true) $(hostname -f 2>/dev/null || true) "
local_names+=$(ip -o addr show 2>/dev/null | awk '{sub(/\/.*/, "", $4); printf "%s ", $4}' || true)
is_local() {
    case $1 in localhost | localhost.* | 127.* | ::1) return 0 ;; esac
    [[ $local_names == *" $1 "* ]]
}

# Check every remote host in one call each: the marker line proves the host
# answered, the exit status then tells whether the binary is there.
check_hosts() {
    command -v "${agent_cmd[0]}" >/dev/null || die "launch agent '${agent_cmd[0]}' not found"
    local -a opts=()
    [[ $(basename "${agent_cmd[0]}") == ssh ]] &&
        opts=(-o BatchMode=yes -o ConnectTimeout="$connect_timeout" -o StrictHostKeyChecking=accept-new)
    local h out rc unreachable=() missing=()
    for h in "${hosts[@]}"; do
        is_local "$h" && continue
        rc=0
        out=$(timeout $((connect_timeout + 5)) "${agent_cmd[@]}" "${opts[@]}" "$h" \
            "echo wulfbench-host-ok; test -x '$bin'" </dev/null 2>/dev/null) || rc=$?
        if [[ $out != *wulfbench-host-ok* ]]; then
            unreachable+=("$h")
        elif ((rc != 0)); then
            missing+=("$h")
        fi
    done
    ((${#unreachable[@]} == 0)) ||
        die "cannot reach ${unreachable[*]} through '$agent' within ${connect_timeout}s (check ssh keys, names and firewall; see docs/cluster.md)"
    ((${#missing[@]} == 0)) ||
        die "$bin is missing or not executable on ${missing[*]} (copy it to the same path on every node, or use NFS)"
}

if ((check)); then
    check_hosts
    ((dry_run)) || echo "study: ${#hosts[@]} host(s) answer and have $bin"
fi

mpi_base=("$mpirun_cmd")
[[ $(basename "${agent_cmd[0]}") != ssh ]] && mpi_base+=(--mca plm_rsh_agent "$agent")
wb_root_env
if [[ $(id -u) -eq 0 ]]; then
    mpi_base+=(-x OMPI_ALLOW_RUN_AS_ROOT -x OMPI_ALLOW_RUN_AS_ROOT_CONFIRM)
fi
# The watchdog's note to wb_launch, which ends an mpirun left waiting for a cut-off node.
mpi_base+=(-x WB_EXIT_NOTE "${mpirun_args[@]}")

# Every node's readiness (versions, governor, link, clock) before any result file exists.
check_cmd=("${mpi_base[@]}" --hostfile "$hostfile")
[[ -n $np ]] && check_cmd+=(-np "$np")
check_cmd+=("$bin")
if ((check && dry_run)); then
    printf '%q ' "${check_cmd[@]}" check --results "$results"
    echo
elif ((check)); then
    wb_name=study wb_preflight "$results" "${check_cmd[@]}"
fi
((check_only)) && exit 0

stamp=$wb_run_stamp
log=$results/${safe_label}_${stamp}.log
# Hostfiles of the first N hosts, for counts below all of them; removed at exit.
declare -A subset=()
subsets=""
remove_subsets() { [[ -z $subsets ]] || rm -rf "$subsets"; }
for n in "${counts[@]}"; do
    if ((n == ${#hosts[@]})); then
        subset[$n]=$hostfile
        continue
    fi
    [[ -n $subsets ]] || { subsets=$(mktemp -d "${TMPDIR:-/tmp}/wulfbench-study.XXXXXX"); trap remove_subsets EXIT; }
    subset[$n]=$subsets/first-$n
    sed 's/#.*//' "$hostfile" | awk -v n="$n" 'NF && !seen[$1]++ {print; if (++k == n) exit}' >"${subset[$n]}"
done

cmd=()
# step_cmd STEP N: the command of STEP on the first N hosts.
step_cmd() {
    local step=$1 n=$2
    [[ $step == baseline ]] && n=1
    local out
    out=$(wb_results_name "$results" "$label" "$n" "$step")
    local -a common=(-o "$out" --label "$(wb_label "$label" "$n" "$step")" "${wb_opts[@]}")
    local -a cluster=("${mpi_base[@]}" --hostfile "${subset[$n]:-$hostfile}")
    [[ -n $np ]] && cluster+=(-np "$np")
    case $step in
        sizes) cmd=("${cluster[@]}" "$bin" fft --sweep sizes "${common[@]}" "${fft_extra[@]}") ;;
        files) cmd=("${cluster[@]}" "$bin" fft --sweep files "${common[@]}" "${fft_extra[@]}") ;;
        transfer) cmd=("${cluster[@]}" "$bin" transfer --pairs all "${common[@]}" "${transfer_extra[@]}") ;;
        baseline) cmd=("${mpi_base[@]}" -np 1 "$bin" fft --baseline "${common[@]}" "${fft_extra[@]}") ;;
        load) cmd=("${cluster[@]}" "$bin" load "${common[@]}" "${load_extra[@]}") ;;
    esac
}

# runs: "STEP N" for each step and count; the baseline once.
runs=()
for s in "${step_list[@]}"; do
    if [[ $s == baseline ]]; then
        runs+=("$s 1")
    else
        for n in "${counts[@]}"; do runs+=("$s $n"); done
    fi
done

if ((dry_run)); then
    for r in "${runs[@]}"; do
        # shellcheck disable=SC2086 # "STEP N"
        step_cmd $r
        printf '%q ' "${cmd[@]}"
        echo
    done
    exit 0
fi

made_dir=0
if [[ ! -d $results ]]; then
    mkdir -p "$results" || die "cannot create '$results'"
    made_dir=1
fi
# An interrupted study keeps what finished; an empty results folder it made goes.
cleanup() {
    remove_subsets
    ((made_dir)) && rmdir "$results" 2>/dev/null
    return 0
}
trap cleanup EXIT
trap 'echo "study: interrupted" >&2; exit 130' INT TERM HUP

failed=()
{
    echo "# wulfbench study '$label' started $stamp on $(hostname)"
    echo "# hostfile $hostfile: ${hosts[*]}; node counts ${counts[*]}"
} >>"$log"
for r in "${runs[@]}"; do
    # shellcheck disable=SC2086 # "STEP N"
    step_cmd $r
    s="${r% *} n${r#* }"
    line=$(printf '%q ' "${cmd[@]}")
    echo "study: [$s] $line"
    printf '\n$ %s\n' "$line" >>"$log"
    rc=0
    wb_launch "${cmd[@]}" </dev/null 2>&1 | tee -a "$log" || rc=$?
    if ((rc != 0)); then
        echo "study: [$s] failed with exit status $rc" | tee -a "$log" >&2
        failed+=("$s")
    fi
done
made_dir=0
echo "study: results in $results (${safe_label}_n*_*_${stamp}.h5), log $log"
((${#failed[@]} == 0)) || die "steps failed: ${failed[*]}"
