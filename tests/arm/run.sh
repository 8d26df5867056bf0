#!/usr/bin/env bash
# make test-arm: wulfbench built and tested in ARM Debian roots under qemu-user, as a Raspberry Pi
# OS user would build it (the root's own gcc and make), its tests run from this machine's pytest
# (tests/arm/test_arm.py), which starts the ARM programs in the root and reads what they write.
# The roots and builds of all architectures are prepared at once; the tests then run one
# architecture after the other.
# Usage: tests/arm/run.sh [arm64|armhf|all]...   (default all). Needs root (chroot, mounts).
# Closes with "N passed, N failed, N skipped" over every architecture; exit 1 if anything failed,
# including a root that could not be built or a binfmt_misc that cannot run ARM programs.
set -uo pipefail
repo=$(cd "$(dirname "$0")/../.." && pwd)
cd "$repo" || exit 1
name=tests/arm/run.sh
PYTHON=${PYTHON:-/usr/bin/python3}
NP=${NP:-$(nproc 2>/dev/null || echo 2)}

usage() { echo "usage: $name [arm64|armhf|all]..." >&2; exit 2; }
arches=()
for a in "${@:-all}"; do
    case $a in
        all) arches+=(arm64 armhf) ;;
        arm64 | armhf) arches+=("$a") ;;
        -h | --help) sed -n '2,8p' "$0" | sed 's/^# \{0,1\}//'; exit 0 ;;
        *) usage ;;
    esac
done
[ "$(id -u)" -eq 0 ] || { echo "$name: needs root (chroot and mounts); run: sudo make test-arm" >&2; exit 1; }

# Open MPI for arm64 (as Raspberry Pi OS 64-bit users run it). armhf's Open MPI 4.1.4 stops in
# opal_init under qemu-user (its shmem framework finds no component that opens), so armhf runs
# under MPICH, with FFTW-MPI built for it by jobs/build-fftw-mpi.sh inside the root.
mpi_of() { case $1 in arm64) echo openmpi ;; armhf) echo mpich ;; esac; }

# shellcheck source=tests/harness.sh
source tests/harness.sh
passed=0 failed=0 skipped=0
work=$(mktemp -d)
# Mounts go to a file, so that the preparing jobs (subshells) and this shell unmount the same list.
cleanup() {
    [ -f "$work/mounts" ] && tac "$work/mounts" | while IFS= read -r m; do umount -l "$m" 2>/dev/null; done
    rm -rf "$work"
}
trap cleanup EXIT
# bind SRC DST [tmpfs]; /etc/hosts too, so this machine's name resolves there as on a board (MPICH needs it).
bind() {
    if [ -f "$1" ]; then [ -f "$2" ] || : >"$2"; else mkdir -p "$2"; fi
    if [ "${3:-}" = tmpfs ]; then mount -t tmpfs -o mode=1777 tmpfs "$2"; else mount --bind "$1" "$2"; fi &&
        echo "$2" >>"$work/mounts"
}

# in_root ROOT CMD...: CMD in the root, in /wb, with a clean environment (Open MPI as root allowed).
in_root() {
    local root=$1
    shift
    chroot "$root" /usr/bin/env -i PATH=/usr/local/bin:/usr/bin:/bin HOME=/root LANG=C.UTF-8 \
        OMPI_ALLOW_RUN_AS_ROOT=1 OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1 /bin/sh -c 'cd /wb && exec "$@"' sh "$@"
}

# The tracked files (and new ones not ignored) into ROOT/wb, each copied only where its content
# changed, so the root's make rebuilds what changed and nothing else.
sync_tree() {
    local dst=$1/wb list
    mkdir -p "$dst"
    list=$(mktemp)
    if git -C "$repo" rev-parse --git-dir >/dev/null 2>&1; then
        git -C "$repo" ls-files -co --exclude-standard -z >"$list"
    else
        find Makefile src tests jobs analysis hostfiles docs README.md -type f -print0 >"$list"
    fi
    while IFS= read -r -d '' f; do
        [ -f "$f" ] || continue
        # A changed file gets the time of the copy, not its own: an object the root built from its last
        # content can be newer than that, and make would keep the stale object.
        if ! cmp -s "$f" "$dst/$f"; then mkdir -p "$dst/$(dirname "$f")" && cp --preserve=mode "$f" "$dst/$f"; fi
    done <"$list"
    # Files the tree no longer has (moved or deleted), outside the build folders, go too.
    (cd "$dst" && find . -type f ! -path './build*' ! -name '*.pyc' -printf '%P\0') | sort -z >"$list.old"
    tr '\0' '\n' <"$list" | sort | tr '\n' '\0' >"$list.new"
    comm -z -23 "$list.old" "$list.new" | (cd "$dst" && xargs -0 -r rm -f)
    rm -f "$list" "$list.old" "$list.new"
}

# prepare ARCH: the root (built or reused), its mounts, the tree, FFTW-MPI for MPICH, the build.
# Its report goes to stdout; the root's folder to $work/ARCH.root; exit 1 (with a FAIL line) on failure.
prepare() {
    local arch=$1 mpi root log=$work/$1.log t0 b=build
    mpi=$(mpi_of "$arch")
    [ "$mpi" = mpich ] && b=build-mpich
    t0=$SECONDS
    root=$(bash tests/arm/root.sh "$arch") || { echo "FAIL: $arch: no root to test in (above)"; return 1; }
    echo "root: $root (ready in $((SECONDS - t0)) s)"
    bind /proc "$root/proc" && bind /sys "$root/sys" && bind /dev "$root/dev" && bind /dev/pts "$root/dev/pts" &&
        bind - "$root/dev/shm" tmpfs && bind - "$root/tmp" tmpfs && bind /etc/hosts "$root/etc/hosts" ||
        { echo "FAIL: $arch: could not mount /proc, /sys, /dev into $root"; return 1; }
    sync_tree "$root"
    if [ "$mpi" = mpich ]; then
        # Debian packages FFTW-MPI for Open MPI only: build it for the root's MPICH once (kept in the root).
        t0=$SECONDS
        in_root "$root" bash jobs/build-fftw-mpi.sh >"$log" 2>&1 ||
            { echo "FAIL: $arch: FFTW-MPI for MPICH did not build: $(tail -1 "$log")"; return 1; }
        echo "FFTW-MPI for MPICH ready in $((SECONDS - t0)) s"
    fi
    echo "building in the root: make -j$NP MPI=$mpi (the root's $(in_root "$root" gcc -dumpfullversion) for $arch)"
    t0=$SECONDS
    if ! in_root "$root" make -j"$NP" MPI="$mpi" all units "$b/tests/wbspectra" >"$log" 2>&1; then
        grep -E 'error|Error' "$log" | head -5
        echo "FAIL: $arch: the build failed in the root (make MPI=$mpi)"; return 1
    fi
    echo "built in $((SECONDS - t0)) s"
    echo "$root" >"$work/$arch.root"
}

# binfmt_misc once, before the jobs (two would race to mount and register it).
bash tests/arm/root.sh --binfmt || { echo; echo "0 passed, 1 failed, 0 skipped"; exit 1; }
# Every architecture's root and build at once (on a new machine most of it is dpkg under qemu, one
# core each); then the tests, one architecture after the other, each as soon as its build is ready.
declare -A job
started=$SECONDS
for arch in "${arches[@]}"; do
    prepare "$arch" >"$work/$arch.out" 2>&1 &
    job[$arch]=$!
done
log=$work/pytest.log
for arch in "${arches[@]}"; do
    mpi=$(mpi_of "$arch")
    b=build; [ "$mpi" = mpich ] && b=build-mpich
    echo "== $arch ($mpi)"
    wait "${job[$arch]}"
    rc=$?
    cat "$work/$arch.out"
    if [ $rc -ne 0 ] || [ ! -s "$work/$arch.root" ]; then failed=$((failed + 1)); continue; fi
    root=$(cat "$work/$arch.root")
    WB_ARM_ROOT=$root WB_ARM_ARCH=$arch WB_ARM_MPI=$mpi WB_ARM_BUILD=$b \
        "$PYTHON" -m pytest -q -rs -p no:cacheprovider tests/arm 2>&1 | tee "$log"
    tally "$log" "${PIPESTATUS[0]}"
    [ -f "$root/tmp/wbarm/figures.txt" ] && sed 's/^/figure: /' "$root/tmp/wbarm/figures.txt"
    echo "== $arch done, $((SECONDS - started)) s since the start"
done
echo
echo "$passed passed, $failed failed, $skipped skipped"
[ "$failed" -eq 0 ]
