#!/usr/bin/env bash
# `make install` into a temporary PREFIX (and once with DESTDIR), then each installed command run once
# from another folder with its defaults, the man page against --help, the completion, and `make
# uninstall` leaving only what was there before. Usage: bash tests/install/run.sh (from the checkout).
set -uo pipefail
cd "$(dirname "$0")/../.."
# shellcheck source=tests/harness.sh
source tests/harness.sh
if [ "$(id -u)" -eq 0 ]; then
    export OMPI_ALLOW_RUN_AS_ROOT=1 OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1
fi
repo=$PWD
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
P=$tmp/prefix work=$tmp/elsewhere
mkdir -p "$P/bin" "$work"
touch "$P/bin/someone-elses-tool"
before=$(cd "$P" && find . | sort)

check() { # check NAME COMMAND...: pass when the command succeeds
    local name=$1
    shift
    if "$@" >"$tmp/out" 2>&1; then pass "$name"; else fail "$name"; sed 's/^/    /' "$tmp/out" | tail -8; fi
}

# DESTDIR: files land under it, but what they refer to is PREFIX alone.
D=$tmp/dest
make --no-print-directory -s install DESTDIR="$D" PREFIX=/opt/wb >"$tmp/log" 2>&1 || { cat "$tmp/log"; fail "install with DESTDIR"; }
check "DESTDIR: program, man page, completion, schema doc" test -x "$D/opt/wb/bin/wulfbench" \
    -a -f "$D/opt/wb/share/man/man1/wulfbench.1" -a -f "$D/opt/wb/share/bash-completion/completions/wulfbench" \
    -a -f "$D/opt/wb/share/doc/wulfbench/schema.md" -a -f "$D/opt/wb/share/wulfbench/analysis/report.py"
check "DESTDIR: wulfbench-report points at PREFIX, not DESTDIR" \
    bash -c "grep -q '/opt/wb/share/wulfbench' '$D/opt/wb/bin/wulfbench-report' && ! grep -q '$D' '$D/opt/wb/bin/wulfbench-report'"

make --no-print-directory -s install PREFIX="$P" >"$tmp/log" 2>&1 || { cat "$tmp/log"; fail "install"; }
installed=$(cd "$P" && find . -type f | sort)
cd "$work" || exit 1

check "wulfbench --version" bash -c "'$P/bin/wulfbench' --version | grep -q '^wulfbench '"
check "wulfbench info names the HDF5 version" bash -c "mpirun -np 1 '$P/bin/wulfbench' info | grep -qE '^HDF5 +[0-9]+\.[0-9]+\.[0-9]+'"
# Default output: results/ in the folder it is started from.
check "wulfbench fft with its default file name, from another folder" \
    mpirun -np 2 --oversubscribe "$P/bin/wulfbench" fft --sweep sizes --seconds 1 --reps 2 --warmup 0 -q
h5=$(ls "$work"/results/wulfbench-*.h5 2>/dev/null | head -1)
check "the result file is in ./results" test -f "$h5"
check "wulfbench-report writes a report from another folder" \
    bash -c "'$P/bin/wulfbench-report' '$h5' -o rep && test -s rep/index.html"
if grep -rqs WB_PROG "$P/share/wulfbench/analysis"; then
    check "wulfbench-report --help names itself" bash -c "'$P/bin/wulfbench-report' --help | head -1 | grep -q 'usage: wulfbench-report'"
else
    echo "SKIP: wulfbench-report --help naming itself (the analysis here does not read WB_PROG yet)"
fi
check "man wulfbench" bash -c "MANPATH='$P/share/man' man -P cat wulfbench 2>/dev/null | grep -q 'OPTIONS OF fft'"
check "the installed man page is the program's own" bash -c "'$P/bin/wulfbench' --man | cmp -s - '$P/share/man/man1/wulfbench.1'"

complete_words() { # complete_words WORD...: what the installed completion offers for the last word
    bash -c 'source "$1"; shift; COMP_WORDS=("$@"); COMP_CWORD=$((${#COMP_WORDS[@]} - 1)); _wulfbench; echo "${COMPREPLY[*]}"' \
        _ "$P/share/bash-completion/completions/wulfbench" "$@"
}
check "completion: subcommands" bash -c "[[ '$(complete_words wulfbench tr)' == transfer ]]"
check "completion: options of a subcommand" bash -c "[[ '$(complete_words wulfbench fft --swe)' == --sweep ]]"
check "completion: common options" bash -c "[[ '$(complete_words wulfbench load --for)' == --force ]]"
check "completion: allowed values" bash -c "[[ '$(complete_words wulfbench fft --plan '')' == 'estimate measure patient' ]]"

check "study.sh --help" "$P/share/wulfbench/jobs/mpirun/study.sh" --help
printf 'localhost slots=2\n' >"$work/hosts"
check "study.sh --check finds the installed binary" "$P/share/wulfbench/jobs/mpirun/study.sh" -H "$work/hosts" --check
check "the emulator's --help" "$P/share/wulfbench/jobs/emulate/cluster" --help
for s in "$P"/share/wulfbench/jobs/slurm/*.sbatch "$P"/share/wulfbench/jobs/pbs/*.pbs; do
    check "$(basename "$s") parses" bash -n "$s"
done

# Every option --help shows is in the man page.
missing=
checked=0
for sub in fft transfer load dfft suite info; do
    for opt in $("$P/bin/wulfbench" "$sub" --help | grep -oE '^ +(-[a-zA-Z], )?--[a-z0-9-]+' | grep -oE -- '--[a-z0-9-]+'); do
        # roff writes every hyphen as \-: --mem-limit is \-\-mem\-limit in the page.
        roff=$(printf '%s' "$opt" | sed 's/-/\\-/g')
        grep -qF -- "${roff}\\fR" "$P/share/man/man1/wulfbench.1" || missing+=" $sub:$opt"
        checked=$((checked + 1))
    done
done
check "--help lists options of every subcommand ($checked)" test "$checked" -gt 80
check "the man page lists every option --help does${missing:+ (missing:$missing)}" test -z "$missing"

cd "$repo" || exit 1
make --no-print-directory -s uninstall PREFIX="$P" >"$tmp/log" 2>&1 || { cat "$tmp/log"; fail "uninstall"; }
left=$(cd "$P" && find . -type f | sort | grep -vxF ./bin/someone-elses-tool)
check "uninstall removes every file install put there" test -z "$left"
check "uninstall leaves what was there before" test -f "$P/bin/someone-elses-tool"
after=$(cd "$P" && find . | sort)
extra=$(comm -13 <(echo "$before") <(echo "$after") | tr '\n' ' ')
echo "    (folders left behind, standard ones: ${extra:-none})"
# The sources that record the version, commit or flags are rebuilt when one of these changes, and
# only they are; `make compare B=file` (B is also the build folder) does not touch the stamp.
B=${WB_BUILD:-build}
flags=$(cut -d' ' -f3- "$B/version.stamp" 2>/dev/null)
make -n --no-print-directory CFLAGS="$flags -DWB_STAMP_PROBE" "$B/wulfbench" >"$tmp/dry" 2>&1
check "a changed flag rebuilds the object that prints the version" grep -q -- "-o $B/obj/cli/main.o" "$tmp/dry"
check "a changed flag leaves the transforms' objects alone" bash -c "! grep -q -- '-o $B/obj/fftw/fft.o' '$tmp/dry'"
check "a changed flag rewrites the stamp" grep -q -- "version.stamp" "$tmp/dry"
check "the same flags rebuild nothing" make -q --no-print-directory CFLAGS="$flags" "$B/wulfbench"
printf x >"$tmp/B.h5"
make --no-print-directory -s compare A="$tmp/B.h5" B="$tmp/B.h5" OUT="$tmp/cmp" >"$tmp/log" 2>&1
check "make compare B=FILE leaves the file a file" bash -c "test -f '$tmp/B.h5' && grep -q 'B.h5' '$tmp/log' && ! grep -q version.stamp '$tmp/log'"

# A fresh clone built as the README and docs/cluster.md §0 say: `make` with no target, then jobs/setup.
clone=$tmp/clone
if git clone -q "$repo" "$clone" 2>"$tmp/log"; then
    (cd "$clone" && make --no-print-directory >"$tmp/mk" 2>&1)
    check "fresh clone: make with no target leaves an executable build/wulfbench" test -x "$clone/build/wulfbench"
    check "fresh clone: a second make rebuilds nothing" make -C "$clone" -q --no-print-directory
    for v in NATIVE=1 UNSIGNED_CHAR=1 "MPI=mpich NATIVE=1"; do
        d=$(make -C "$clone" -s --no-print-directory $v -f Makefile -f - <<<'print-b: ; @echo $(B)' print-b)
        check "fresh clone: make $v alone would link $d/wulfbench" bash -c "make -C '$clone' -n --no-print-directory $v | grep -q -- '-o $d/wulfbench '"
    done
    if command -v mpicc.mpich >/dev/null; then
        (cd "$clone" && make --no-print-directory MPI=mpich >"$tmp/mk" 2>&1)
        check "fresh clone: make MPI=mpich leaves an executable build-mpich/wulfbench" test -x "$clone/build-mpich/wulfbench"
    else
        echo "SKIP: make MPI=mpich (no MPICH here: bash jobs/install-deps.sh mpich)"
    fi
    # docs/cluster.md §0, command by command, up to jobs/setup's first line: a name that does not
    # resolve stops it there, after the checks of the head (the binary among them), touching nothing.
    printf 'wb-no-such-node.invalid slots=1\n' >"$tmp/nodes"
    sed -n '/^## 0\./,/^## 1\./p' "$clone/docs/cluster.md" | sed -n '/^```$/,/^```$/p' | grep -v '^```' |
        sed 's/ *#.*//' | grep . >"$tmp/steps"
    check "docs/cluster.md §0 has make and jobs/setup" bash -c "grep -qx make '$tmp/steps' && grep -q '^jobs/setup ' '$tmp/steps'"
    if command -v ansible-playbook >/dev/null && command -v ssh-keyscan >/dev/null; then
        while read -r cmd; do
            case $cmd in
            jobs/setup*) (cd "$clone" && timeout 60 jobs/setup --connect-timeout 1 "$tmp/nodes" 2>&1 | head -1 >"$tmp/first") ;;
            *) (cd "$clone" && timeout 600 bash -c "$cmd" >"$tmp/step" 2>&1) || { fail "§0: $cmd"; tail -5 "$tmp/step"; } ;;
            esac
        done <"$tmp/steps"
        check "§0: jobs/setup gets past the head's checks to the nodes ($(cat "$tmp/first"))" \
            bash -c "grep -q 'wb-no-such-node.invalid' '$tmp/first' && ! grep -q 'build it here' '$tmp/first'"
        rm -rf "$clone/build"
        (cd "$clone" && timeout 60 jobs/setup --connect-timeout 1 "$tmp/nodes" 2>&1 | head -1 >"$tmp/first")
        check "§0: without a build, jobs/setup says so first ($(cat "$tmp/first"))" grep -qE "build it (here )?with '?make" "$tmp/first"
    else
        echo "SKIP: docs/cluster.md §0's jobs/setup (no ansible-core or ssh here: bash jobs/install-deps.sh cluster)"
    fi
else
    fail "git clone of the checkout"; cat "$tmp/log"
fi

# make help comes from the targets' own lines: every phony target is listed, with its text.
make --no-print-directory -s help >"$tmp/help" 2>&1
unlisted=
for t in $(sed -n '/^\.PHONY:/,/[^\\]$/p' Makefile | tr -d '\\' | sed 's/^\.PHONY://'); do
    grep -qE "^make $t +[^ ]" "$tmp/help" || unlisted+=" $t"
done
check "make help lists every target${unlisted:+ (not:$unlisted)}" test -z "$unlisted"
check "make help: clean names every folder it removes" bash -c "grep -E '^make clean ' '$tmp/help' | grep -q 'build-mpich-uchar'"

check "install put files in every place it should" test "$(echo "$installed" | grep -c .)" -gt 20
finish
