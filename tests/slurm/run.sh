#!/usr/bin/env bash
# make test-slurm: a throw-away one-node Slurm cluster (munged, slurmctld,
# slurmd, all configured in a temporary folder) runs the jobs/slurm scripts
# for real; the PBS scripts run under a faked PBS environment. Every daemon
# is stopped by PID and the folder removed, whatever happens.
set -euo pipefail

# Debian packages this test needs (installed when missing and run as root).
PACKAGES="slurm-wlm munge openmpi-bin python3-h5py"

usage() {
    cat <<EOF
Usage: bash tests/slurm/run.sh [--keep]

Start munged, slurmctld and slurmd on this machine with a one-node
configuration in a temporary folder, submit jobs/slurm/wulfbench.sbatch and
jobs/slurm/scaling.sbatch with sbatch, wait for them (bounded) and check the
result files with h5py (schema wulfbench/1, /hosts, the label "STEM nN SUB
jobID" and the file name STEM_nN_SUB_STAMP_jobID.h5), that the jobs were
exclusive with the scripts' time limit, and the WB_MODULES hook with a fake
module system (loads logged; a module that fails to load fails the job
with one line). If analysis/report.py
exists, 'python3 -m analysis.report FILE' must succeed on a result. The PBS
scripts run under a faked PBS environment (no PBS server here). Prints
"N passed, N failed" last; exits 1 if anything failed.

Needs root (daemons, apt-get) and these Debian packages, installed with
apt-get when missing: $PACKAGES

  --keep     keep the temporary folder (logs, results) for a look afterwards;
             the daemons are stopped all the same

Environment:
  WB_BIN            wulfbench binary (default: build/wulfbench, built with
                    'make' if missing)
  PYTHON            Python with h5py (default: /usr/bin/python3)
  WB_SLURM_TIMEOUT  seconds one job may take (default: 180)
EOF
}

keep=0
case ${1:-} in
    -h | --help) usage; exit 0 ;;
    --keep) keep=1 ;;
    "") ;;
    *) echo "tests/slurm: unknown argument '$1' (see --help)" >&2; exit 2 ;;
esac

repo=$(cd "$(dirname "${BASH_SOURCE[0]}")/../.." && pwd)
python=${PYTHON:-/usr/bin/python3}
job_timeout=${WB_SLURM_TIMEOUT:-180}
# shellcheck source=tests/harness.sh
source "$repo/tests/harness.sh"
# abort: record the failure, stop the daemons, print the totals last and stop.
abort() {
    fail "$*"
    trap - EXIT
    [[ -n ${tmp:-} ]] && cleanup
    finish || exit 1
}

[[ $(id -u) -eq 0 ]] || abort "needs root: it starts munged, slurmctld and slurmd"
export OMPI_ALLOW_RUN_AS_ROOT=1 OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1

install_missing() {
    local p missing=()
    for p in $PACKAGES; do
        dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q 'install ok installed' || missing+=("$p")
    done
    ((${#missing[@]} == 0)) && return 0
    echo "tests/slurm: installing ${missing[*]}"
    # Package scripts must not start system daemons we did not ask for.
    export DEBIAN_FRONTEND=noninteractive
    apt-get install -y --no-install-recommends "${missing[@]}" >/dev/null ||
        { apt-get update >/dev/null && apt-get install -y --no-install-recommends "${missing[@]}" >/dev/null; }
}
install_missing || abort "could not install: $PACKAGES"

bin=${WB_BIN:-$repo/build/wulfbench}
if [[ ! -x $bin ]]; then
    echo "tests/slurm: $bin missing; building it with make"
    make -C "$repo" >/dev/null || abort "could not build wulfbench ('make' failed)"
fi
[[ -x $bin ]] || abort "no wulfbench binary at $bin"

pids=()
jobs_submitted=()
tmp=$(mktemp -d /tmp/wb-slurm-test.XXXXXX)
# munged refuses a socket in a folder others cannot traverse.
chmod 711 "$tmp"

stop_pid() {
    local pid=$1 i
    kill -TERM "$pid" 2>/dev/null || return 0
    for i in $(seq 1 50); do
        kill -0 "$pid" 2>/dev/null || return 0
        sleep 0.1
    done
    kill -KILL "$pid" 2>/dev/null || true
}

cleanup() {
    local p i
    set +e
    if ((${#jobs_submitted[@]})); then
        scancel "${jobs_submitted[@]}" 2>/dev/null
        # Job steps outlive slurmd (slurmstepd re-parents): wait for them to end,
        # then stop what is still listed by PID.
        for i in $(seq 1 50); do
            [[ -z $(scontrol listpids 2>/dev/null | awk 'NR > 1 && $1 ~ /^[0-9]+$/ {print $1}') ]] && break
            sleep 0.2
        done
        for p in $(scontrol listpids 2>/dev/null | awk 'NR > 1 && $1 ~ /^[0-9]+$/ {print $1}'); do
            kill -KILL "$p" 2>/dev/null
        done
    fi
    # Reverse order: slurmd, slurmctld, munged.
    for ((i = ${#pids[@]} - 1; i >= 0; i--)); do
        stop_pid "${pids[i]}"
        wait "${pids[i]}" 2>/dev/null
    done
    if ((keep)); then
        echo "tests/slurm: kept $tmp"
    else
        rm -rf "$tmp"
    fi
}
trap cleanup EXIT
trap 'exit 130' INT TERM HUP

# munge: our own key and socket, so a system munged (if any) is untouched.
mkdir -m 755 "$tmp/munge"
dd if=/dev/urandom of="$tmp/munge/munge.key" bs=1024 count=1 status=none
chmod 400 "$tmp/munge/munge.key"
munge_socket=$tmp/munge/munge.socket
munged -F --key-file="$tmp/munge/munge.key" --socket="$munge_socket" \
    --pid-file="$tmp/munge/munged.pid" --log-file="$tmp/munge/munged.log" \
    --seed-file="$tmp/munge/munged.seed" >"$tmp/munge/munged.out" 2>&1 &
pids+=($!)
for _ in $(seq 1 50); do [[ -S $munge_socket ]] && break; sleep 0.1; done
if munge -S "$munge_socket" -n | unmunge -S "$munge_socket" >/dev/null 2>&1; then
    pass "munged answers on its own socket"
else
    abort "munged did not start: $(tail -3 "$tmp/munge/munged.out" 2>/dev/null | tr '\n' ' ')"
fi

# slurm.conf: one node, declared as 'slurmd -C' sees it, everything in $tmp.
node=$(hostname -s)
node_line=$(slurmd -C | head -1)
[[ $node_line == NodeName=* ]] || abort "slurmd -C printed no NodeName line"
# Slurm's own ports are 6817/6818; others avoid a clash with a real Slurm.
ctld_port=16817 slurmd_port=16818
mkdir -p "$tmp/state" "$tmp/spool" "$tmp/results"
cat >"$tmp/slurm.conf" <<EOF
ClusterName=wbtest
SlurmctldHost=$node(127.0.0.1)
SlurmctldPort=$ctld_port
SlurmdPort=$slurmd_port
SlurmUser=root
SlurmdUser=root
AuthType=auth/munge
CredType=cred/munge
AuthInfo=socket=$munge_socket
StateSaveLocation=$tmp/state
SlurmdSpoolDir=$tmp/spool
SlurmctldPidFile=$tmp/slurmctld.pid
SlurmdPidFile=$tmp/slurmd.pid
SlurmctldLogFile=$tmp/slurmctld.log
SlurmdLogFile=$tmp/slurmd.log
ProctrackType=proctrack/linuxproc
TaskPlugin=task/none
SelectType=select/cons_tres
SelectTypeParameters=CR_Core
SchedulerType=sched/backfill
MpiDefault=none
ReturnToService=2
AccountingStorageType=accounting_storage/none
JobAcctGatherType=jobacct_gather/none
JobCompType=jobcomp/none
SlurmctldTimeout=30
SlurmdTimeout=30
MinJobAge=600
$node_line NodeAddr=127.0.0.1 State=UNKNOWN
PartitionName=wbtest Nodes=$node Default=YES MaxTime=INFINITE State=UP
EOF
export SLURM_CONF=$tmp/slurm.conf
slurmctld -D -f "$SLURM_CONF" >"$tmp/slurmctld.out" 2>&1 &
pids+=($!)
slurmd -D -f "$SLURM_CONF" >"$tmp/slurmd.out" 2>&1 &
pids+=($!)

state=""
for _ in $(seq 1 60); do
    state=$(sinfo -h -n "$node" -o %t 2>/dev/null || true)
    [[ $state == idle ]] && break
    sleep 0.5
done
if [[ $state == idle ]]; then
    pass "slurmctld and slurmd up; node $node idle"
else
    echo "--- slurmctld log"; tail -5 "$tmp/slurmctld.log" "$tmp/slurmctld.out" 2>/dev/null
    echo "--- slurmd log"; tail -5 "$tmp/slurmd.log" "$tmp/slurmd.out" 2>/dev/null
    abort "node $node not idle after 30 s (state '$state')"
fi
echo "tests/slurm: srun --mpi=list: $(srun --mpi=list 2>&1 | tr -s '\n ' ' ')"

# Submit from the repository, as a user would: the scripts find build/ there.
cd "$repo"
results=$tmp/results
export WB_RESULTS=$results WB_BIN=$bin

# submit NAME SBATCH-ARGS... : prints the job id.
submit() {
    local name=$1 out id
    shift
    out=$(sbatch --parsable --output="$tmp/$name-%j.out" "$@" 2>&1) || {
        echo "tests/slurm: sbatch failed: $out" >&2
        return 1
    }
    id=${out%%;*}
    jobs_submitted+=("$id")
    echo "$id"
}

# wait_job ID: waits (bounded), prints "STATE EXITCODE".
wait_job() {
    local id=$1 info st ec i
    for ((i = 0; i < job_timeout * 2; i++)); do
        info=$(scontrol -o show job "$id" 2>/dev/null || true)
        st=$(sed -n 's/.*JobState=\([A-Z_]*\).*/\1/p' <<<"$info")
        case $st in
            COMPLETED | FAILED | CANCELLED | TIMEOUT | NODE_FAIL | OUT_OF_MEMORY | BOOT_FAIL | DEADLINE | PREEMPTED)
                ec=$(sed -n 's/.* ExitCode=\([0-9:]*\).*/\1/p' <<<"$info")
                echo "$st $ec"
                return 0 ;;
        esac
        sleep 0.5
    done
    scancel "$id" 2>/dev/null || true
    echo "TIMEOUT-TEST -"
}

first_file() { compgen -G "$1" | head -1 || true; }

show_log() { sed 's/^/    | /' "$tmp/$1-$2.out" 2>/dev/null | tail -n "${3:-15}"; }

# check_h5 FILE NRANKS: the file is a finished wulfbench/1 result with /hosts.
check_h5() {
    "$python" - "$1" "$2" <<'EOF'
import sys
import h5py

path, nranks = sys.argv[1], int(sys.argv[2])


def text(v):
    return v.decode() if isinstance(v, bytes) else str(v)


with h5py.File(path, "r") as f:
    schema = text(f.attrs.get("schema", ""))
    assert schema == "wulfbench/1", f"schema {schema!r}"
    assert "hosts" in f, "no /hosts"
    hosts = f["hosts"]
    assert hosts.shape == (nranks,), f"/hosts has shape {hosts.shape}, want ({nranks},)"
    names = {text(h) for h in hosts["hostname"]}
    assert all(names), "empty hostname in /hosts"
    status = text(f.attrs.get("status", "complete"))
    assert status == "complete", f"status {status!r}"
print("ok")
EOF
}

# run_job NAME EXPECTED-FILES-GLOB NRANKS SBATCH-ARGS...
run_job() {
    local name=$1 glob=$2 nranks=$3 id res files f bad=0
    shift 3
    if ! id=$(submit "$name" "$@"); then
        fail "$name: sbatch refused the job"
        return 0
    fi
    res=$(wait_job "$id")
    if [[ $res != "COMPLETED 0:0" ]]; then
        fail "$name: job $id ended $res"
        show_log "$name" "$id"
        return 0
    fi
    files=$(compgen -G "$glob" || true)
    if [[ -z $files ]]; then
        fail "$name: job $id wrote no $glob"
        show_log "$name" "$id"
        return 0
    fi
    for f in $files; do
        if ! msg=$(check_h5 "$f" "$nranks" 2>&1); then
            fail "$name: $f is not a valid result: $(tail -1 <<<"$msg")"
            bad=1
        fi
    done
    ((bad)) || pass "$name: job $id completed; $(wc -w <<<"$files") valid result file(s)"
}

small_fft=(--sweep sizes --seconds 1 --reps 2 --warmup 0)
small_transfer=(--tests 'pingpong,allreduce' -m 1:64k -i 5)

# check_label FILE WANT: the file's label attribute is WANT.
check_label() {
    "$python" - "$1" "$2" <<'EOF'
import sys
import h5py

with h5py.File(sys.argv[1], "r") as f:
    label = f.attrs.get("label", b"")
    label = label.decode() if isinstance(label, bytes) else str(label)
assert label == sys.argv[2], f"label {label!r}, want {sys.argv[2]!r}"
EOF
}

# job_of FILE: the job id in a result file's name (..._jobID.h5).
job_of() { local b=${1##*_job}; echo "${b%.h5}"; }

# 'info' writes no file: judge it by its exit and its log.
if id=$(submit info -n 2 jobs/slurm/wulfbench.sbatch info); then
    res=$(wait_job "$id")
    if [[ $res == "COMPLETED 0:0" ]] && grep -q "$(hostname)" "$tmp/info-$id.out"; then
        pass "info: job $id completed and names this host"
    else
        fail "info: job $id ended $res"
        show_log info "$id"
    fi
else
    fail "info: sbatch refused the job"
fi
run_job transfer "$results/slurm_n1_transfer_*_job*.h5" 2 -n 2 \
    jobs/slurm/wulfbench.sbatch transfer "${small_transfer[@]}"
run_job fft "$results/slurm_n1_fft_*_job*.h5" 2 -n 2 \
    jobs/slurm/wulfbench.sbatch fft "${small_fft[@]}"
WB_LABEL=lab run_job labelled "$results/lab_n1_fft_*_job*.h5" 1 -n 1 \
    jobs/slurm/wulfbench.sbatch fft "${small_fft[@]}"
# The scaling sweep, limited to the one node there is (two ranks on it).
run_job scaling "$results/scaling_n1_fft_*_job*.h5" 2 -N 1 --ntasks-per-node=2 \
    jobs/slurm/scaling.sbatch fft "${small_fft[@]}"
WB_NODES="1 2" run_job scaling-skip "$results/scaling_n1_transfer_*_job*.h5" 2 -N 1 --ntasks-per-node=2 \
    jobs/slurm/scaling.sbatch transfer "${small_transfer[@]}"

# Default labels and names carry the node count and the job id.
for spec in "slurm_n1_fft:slurm n1 fft" "lab_n1_fft:lab n1 fft" "scaling_n1_fft:scaling n1 fft" \
    "scaling_n1_transfer:scaling n1 transfer"; do
    f=$(first_file "$results/${spec%%:*}_*_job*.h5")
    if [[ -n $f ]] && msg=$(check_label "$f" "${spec#*:} job$(job_of "$f")" 2>&1); then
        pass "label of $(basename "$f"): '${spec#*:} job$(job_of "$f")'"
    else
        fail "label of ${spec%%:*}: ${f:-no file}: $(tail -1 <<<"${msg:-}")"
    fi
done

# The jobs asked for their nodes exclusively and for the scripts' time limit.
f=$(first_file "$results/slurm_n1_fft_*_job*.h5")
sf=$(first_file "$results/scaling_n1_fft_*_job*.h5")
if [[ -n $f && -n $sf ]]; then
    info=$(scontrol -o show job "$(job_of "$f")" 2>/dev/null || true)
    sinfo_=$(scontrol -o show job "$(job_of "$sf")" 2>/dev/null || true)
    if [[ $info == *"OverSubscribe=NO"* && $info == *"TimeLimit=02:00:00"* &&
        $sinfo_ == *"OverSubscribe=NO"* && $sinfo_ == *"TimeLimit=04:00:00"* ]]; then
        pass "wulfbench.sbatch and scaling.sbatch jobs: exclusive (OverSubscribe=NO), time limits 02:00:00 and 04:00:00"
    else
        fail "exclusive/time: $(grep -o 'OverSubscribe=[A-Z:]*\|TimeLimit=[0-9:-]*' <<<"$info $sinfo_" | tr '\n' ' ')"
    fi
else
    fail "exclusive/time: no result files to find the jobs by"
fi

# WB_MODULES: a fake module system records the loads.
mkdir -p "$tmp/modules/init"
cat >"$tmp/modules/init/bash" <<EOF
module() {
    echo "module \$*" >>"$tmp/modules.log"
    [[ \$2 != bad* ]]
}
EOF
if id=$(MODULESHOME=$tmp/modules WB_MODULES="openmpi,hdf5-openmpi" WB_LABEL=mod submit modules -n 1 \
    jobs/slurm/wulfbench.sbatch fft "${small_fft[@]}"); then
    res=$(wait_job "$id")
    if [[ $res == "COMPLETED 0:0" ]] && grep -q "loaded modules: openmpi hdf5-openmpi" "$tmp/modules-$id.out" &&
        [[ $(cat "$tmp/modules.log" 2>/dev/null) == $'module load openmpi\nmodule load hdf5-openmpi' ]]; then
        pass "WB_MODULES: job $id loaded openmpi and hdf5-openmpi before running"
    else
        fail "WB_MODULES: job $id ended $res; loads: $(tr '\n' ' ' <"$tmp/modules.log" 2>/dev/null)"
        show_log modules "$id"
    fi
else
    fail "WB_MODULES: sbatch refused the job"
fi
if id=$(MODULESHOME=$tmp/modules WB_MODULES="badmod" submit badmod -n 1 jobs/slurm/scaling.sbatch fft "${small_fft[@]}"); then
    res=$(wait_job "$id")
    lines=$(wc -l <"$tmp/badmod-$id.out" 2>/dev/null || echo 0)
    if [[ $res == "FAILED 1:0" && $lines == 1 ]] && grep -q "'module load badmod' failed" "$tmp/badmod-$id.out"; then
        pass "WB_MODULES with a module that does not load: job $id failed with one line"
    else
        fail "WB_MODULES=badmod: job $id ended '$res' with $lines line(s)"
        show_log badmod "$id"
    fi
fi

# Installed with 'make install PREFIX=P' and submitted from elsewhere, with
# no WB_BIN: the spool copy finds P/share/wulfbench/jobs/lib.sh and
# P/bin/wulfbench through PATH.
prefix=$tmp/prefix
if make -C "$repo" --no-print-directory install PREFIX="$prefix" >"$tmp/install.log" 2>&1; then
    mkdir -p "$tmp/elsewhere"
    if id=$(cd "$tmp/elsewhere" && env -u WB_BIN -u WB_RESULTS PATH="$prefix/bin:$PATH" WB_LABEL=inst \
        sbatch --parsable --output="$tmp/installed-%j.out" -n 1 "$prefix/share/wulfbench/jobs/slurm/wulfbench.sbatch" \
        fft "${small_fft[@]}" 2>&1); then
        id=${id%%;*}
        jobs_submitted+=("$id")
        res=$(wait_job "$id")
        f=$(first_file "$tmp/elsewhere/results/inst_n1_fft_*_job$id.h5")
        if [[ $res == "COMPLETED 0:0" && -n $f ]] && grep -q "$prefix/bin/wulfbench" "$tmp/installed-$id.out" &&
            check_h5 "$f" 1 >/dev/null; then
            pass "installed under a PREFIX, submitted from another folder: job $id ran $prefix/bin/wulfbench"
        else
            fail "installed wulfbench.sbatch: job $id ended $res, file '${f:-none}'"
            show_log installed "$id"
        fi
    else
        fail "installed wulfbench.sbatch: sbatch refused: $id"
    fi
else
    fail "make install PREFIX=$prefix: $(tail -2 "$tmp/install.log" | tr '\n' ' ')"
fi

if srun --mpi=list 2>&1 | grep -qw pmix; then
    WB_LAUNCHER=srun WB_LABEL=srun run_job srun-pmix "$results/srun_n1_transfer_*_job*.h5" 2 -n 2 \
        jobs/slurm/wulfbench.sbatch transfer "${small_transfer[@]}"
else
    echo "SKIP: srun --mpi=pmix: this Slurm has no pmix plugin"
fi

# Bad input: an unknown subcommand fails the job with one clear line.
if id=$(submit badarg jobs/slurm/wulfbench.sbatch frobnicate); then
    res=$(wait_job "$id")
    lines=$(wc -l <"$tmp/badarg-$id.out" 2>/dev/null || echo 0)
    if [[ $res == "FAILED 2:0" && $lines == 1 ]] && grep -q "unknown wulfbench subcommand 'frobnicate'" "$tmp/badarg-$id.out"; then
        pass "bad argument: job $id failed with exit 2 and one line"
    else
        fail "bad argument: job $id ended '$res' with $lines line(s) of output"
        show_log badarg "$id"
    fi
fi
if out=$(env -u SLURM_JOB_ID bash jobs/slurm/wulfbench.sbatch fft 2>&1); then
    fail "outside a job: wulfbench.sbatch ran instead of refusing"
elif [[ $(wc -l <<<"$out") == 1 ]]; then
    pass "outside a job: wulfbench.sbatch refuses with one line"
else
    fail "outside a job: wulfbench.sbatch printed $(wc -l <<<"$out") lines"
fi
for s in jobs/slurm/wulfbench.sbatch jobs/slurm/scaling.sbatch jobs/pbs/wulfbench.pbs jobs/pbs/scaling.pbs; do
    if bash "$s" --help | grep -q 'WB_RESULTS'; then
        pass "$s --help documents its knobs"
    else
        fail "$s --help"
    fi
done

# The analysis report, when the analysis package is there.
report_input=$(first_file "$results/slurm_n1_fft_*.h5")
if [[ -f $repo/analysis/report.py || -f $repo/analysis/report/__init__.py ]]; then
    if [[ -z $report_input ]]; then
        fail "analysis.report: no result file to report on"
    elif (cd "$repo" && "$python" -m analysis.report "$report_input" -o "$tmp/report") >"$tmp/report.log" 2>&1; then
        pass "analysis.report on $(basename "$report_input") exits 0"
    else
        fail "analysis.report on $(basename "$report_input"): $(tail -3 "$tmp/report.log" | tr '\n' ' ')"
    fi
else
    echo "SKIP: analysis.report: no analysis/report.py in this tree"
fi

# PBS: no server here, so the scripts run as PBS would start them: with
# PBS_NODEFILE, PBS_O_WORKDIR and PBS_JOBID set, on this machine.
printf '%s\n%s\n' "$(hostname)" "$(hostname)" >"$tmp/pbs_nodefile"
pbs_env=(PBS_NODEFILE="$tmp/pbs_nodefile" PBS_O_WORKDIR="$repo" PBS_JOBID=4242.fakepbs
    PBS_ENVIRONMENT=PBS_BATCH WB_RESULTS="$results/pbs")
if env "${pbs_env[@]}" WB_ARGS="fft ${small_fft[*]}" bash jobs/pbs/wulfbench.pbs >"$tmp/pbs1.out" 2>&1 &&
    f=$(first_file "$results/pbs/pbs_n1_fft_*_job4242.h5") && [[ -n $f ]] && check_h5 "$f" 2 >/dev/null &&
    check_label "$f" "pbs n1 fft job4242"; then
    pass "pbs: wulfbench.pbs under a faked PBS environment wrote a valid file"
else
    fail "pbs: wulfbench.pbs under a faked PBS environment"
    sed 's/^/    | /' "$tmp/pbs1.out" | tail -10
fi
if env "${pbs_env[@]}" WB_PPN=2 bash jobs/pbs/scaling.pbs transfer "${small_transfer[@]}" >"$tmp/pbs2.out" 2>&1 &&
    f=$(first_file "$results/pbs/scaling_n1_transfer_*_job4242.h5") && [[ -n $f ]] && check_h5 "$f" 2 >/dev/null &&
    check_label "$f" "scaling n1 transfer job4242"; then
    pass "pbs: scaling.pbs under a faked PBS environment wrote a valid file"
else
    fail "pbs: scaling.pbs under a faked PBS environment"
    sed 's/^/    | /' "$tmp/pbs2.out" | tail -10
fi

cd /
cleanup_check() {
    local left=() p
    for p in "${pids[@]}"; do kill -0 "$p" 2>/dev/null && left+=("$p"); done
    ((${#left[@]} == 0))
}
trap - EXIT
cleanup
if cleanup_check && [[ ! -e $tmp || $keep == 1 ]]; then
    pass "teardown: every daemon stopped, temporary folder removed"
else
    fail "teardown: something was left behind"
fi
finish
