#!/usr/bin/env bash
# Build FFTW-MPI (libfftw3_mpi, libfftw3f_mpi) for MPICH from Debian's own fftw3 source package, the
# version of the installed libfftw3, so `make MPI=mpich` has a dfft. Debian ships libfftw3-mpi for
# Open MPI only, and an MPICH program must not load Open MPI beside MPICH.
# Only FFTW's mpi/ directory is built, per precision, and linked against the system's libfftw3.so.3
# and libfftw3f.so.3: they export every internal symbol mpi/ calls (Debian's own libfftw3_mpi links
# to them the same way), so the serial FFTW stays Debian's.
# Usage: jobs/build-fftw-mpi.sh [--prefix DIR] [--force] [--check]
#   DIR: where lib/ and include/ go (default WB_FFTW_MPICH, else /usr/local/lib/wulfbench-fftw-mpich);
#   nothing is done when DIR already holds a build for the same fftw3 and MPICH versions (--force: build anyway).
#   --check: also run FFTW's own MPI tests (mpi/ smallcheck, 1 to 4 ranks under mpiexec.mpich).
# Needs: mpich libmpich-dev libfftw3-dev dpkg-dev make gcc and Debian's archive on the network; the
# system's apt configuration is left alone (the source index goes to a temporary folder).
set -euo pipefail

name=build-fftw-mpi
die() { echo "$name: $*" >&2; exit 1; }

prefix=${WB_FFTW_MPICH:-/usr/local/lib/wulfbench-fftw-mpich}
force=0
check=0
while [ $# -gt 0 ]; do
  case $1 in
    --prefix) [ $# -ge 2 ] || die "--prefix needs a folder"; prefix=$2; shift 2 ;;
    --force) force=1; shift ;;
    --check) check=1; shift ;;
    -h|--help) sed -n '2,13p' "$0" | sed 's/^# \{0,1\}//'; exit 0 ;;
    *) echo "$name: unknown argument '$1'; usage: $0 [--prefix DIR] [--force] [--check]" >&2; exit 2 ;;
  esac
done

for tool in dpkg-query dpkg-source dpkg-buildflags apt-get mpicc.mpich make gcc; do
  command -v "$tool" >/dev/null || die "$tool is missing; run: bash jobs/install-deps.sh build mpich"
done
# installed PKG FIELD: the field of an installed package, or nothing.
installed() {
  dpkg-query -W -f='${Status}\n' "$1" 2>/dev/null | grep -q "install ok installed" && dpkg-query -W -f="\${$2}" "$1"
}
src_version=$(installed libfftw3-dev source:Version) || die "libfftw3-dev is not installed; run: bash jobs/install-deps.sh build"
for p in libfftw3-double3 libfftw3-single3; do
  v=$(installed "$p" source:Version) || die "$p is not installed; run: bash jobs/install-deps.sh build"
  [ "$v" = "$src_version" ] || die "$p comes from fftw3 $v but libfftw3-dev from $src_version; run apt-get upgrade first"
done
mpich_version=$(installed libmpich-dev Version) || die "libmpich-dev is not installed; run: bash jobs/install-deps.sh mpich"
arch=$(dpkg --print-architecture)
multiarch=$(gcc -print-multiarch)
sysdir=/usr/lib/$multiarch
stamp="fftw3 $src_version mpich $mpich_version $arch"

if [ $force = 0 ] && [ -f "$prefix/BUILT" ] && [ "$(cat "$prefix/BUILT")" = "$stamp" ] &&
   [ -e "$prefix/lib/libfftw3_mpi.so.3" ] && [ -e "$prefix/lib/libfftw3f_mpi.so.3" ]; then
  exit 0
fi

sudo=""
parent=$prefix
while [ ! -d "$parent" ]; do parent=$(dirname "$parent"); done
if [ ! -w "$parent" ] || { [ -d "$prefix" ] && [ ! -w "$prefix" ]; }; then
  if [ "$(id -u)" -eq 0 ] || ! command -v sudo >/dev/null; then
    die "cannot write $prefix and no sudo to ask; run as root or give --prefix"
  fi
  sudo=sudo
fi

work=$(mktemp -d "${TMPDIR:-/tmp}/wb-fftw-mpi.XXXXXX")
trap 'rm -rf "$work"' EXIT
log=$work/log
# run WHAT CMD...: CMD's output goes to the log, shown (its end) only when it fails.
run() {
  local what=$1; shift
  "$@" >>"$log" 2>&1 || { tail -n 25 "$log" >&2; die "$what failed (full log above ends there)"; }
}

started=$SECONDS
echo "$name: building FFTW-MPI for MPICH $mpich_version from Debian's fftw3 $src_version into $prefix"

# Debian's source index and the package, through a private apt state: no change to /etc/apt.
# WB_DEB_SRC_URI, WB_DEB_SRC_SUITE and WB_DEB_SRC_KEYRING name another archive (a mirror, a derivative).
# shellcheck disable=SC1091
codename=$(. /etc/os-release && echo "${VERSION_CODENAME:-}")
src_uri=${WB_DEB_SRC_URI:-http://deb.debian.org/debian}
src_suite=${WB_DEB_SRC_SUITE:-$codename}
src_keyring=${WB_DEB_SRC_KEYRING:-/usr/share/keyrings/debian-archive-keyring.gpg}
[ -n "$src_suite" ] || die "/etc/os-release names no VERSION_CODENAME; set WB_DEB_SRC_SUITE (e.g. bookworm)"
[ -r "$src_keyring" ] || die "no archive keyring $src_keyring; install debian-archive-keyring or set WB_DEB_SRC_KEYRING"
apt_dir=$work/apt
mkdir -p "$apt_dir/lists/partial" "$apt_dir/cache/archives/partial"
printf 'Types: deb-src\nURIs: %s\nSuites: %s\nComponents: main\nSigned-By: %s\n' \
  "$src_uri" "$src_suite" "$src_keyring" >"$apt_dir/src.sources"
apt=(apt-get -q -o Dir::Etc::SourceList=/dev/null -o Dir::Etc::SourceParts="$apt_dir"
     -o Dir::State::Lists="$apt_dir/lists" -o Dir::Cache="$apt_dir/cache" -o APT::Sandbox::User="$(id -un)")
run "fetching the source index of $src_uri $src_suite (apt-get update)" "${apt[@]}" update
# apt checks the files against the index's hashes, and the index against the archive's signed Release.
(cd "$work" && run "fetching the source package fftw3=$src_version" "${apt[@]}" source --download-only "fftw3=$src_version")
dsc=$work/fftw3_${src_version#*:}.dsc
[ -f "$dsc" ] || die "apt-get source left no $(basename "$dsc") in $work"
# dpkg-source checks every file against the .dsc's checksums and applies debian/patches.
run "unpacking $(basename "$dsc") (dpkg-source -x)" dpkg-source -x "$dsc" "$work/src"
echo "$name: source fetched and patched ($((SECONDS - started)) s)"

# Debian's rules: its build flags (hardening=+all), --enable-shared --enable-threads --enable-openmp
# --enable-mpi, and per precision the same SIMD options, which set config.h the way libfftw3 was built.
eval "$(cd "$work/src" && DEB_BUILD_MAINT_OPTIONS=hardening=+all dpkg-buildflags --export=sh)"
simd_single="" simd_double=""
case $arch in
  i386|amd64|x32) simd_single="--enable-sse --enable-avx"; simd_double="--enable-sse2 --enable-avx" ;;
  powerpc) simd_single="--enable-altivec" ;;
  armhf|arm64) simd_single="--enable-neon --with-slow-timer" ;;
esac
# No dependency tracking: a one-off build, and config.status would write a .deps file for each of
# FFTW's ~3000 sources (20 minutes of shells under qemu-user in make test-arm's armhf root).
common=(--prefix="$prefix" --enable-shared --disable-static --enable-threads --enable-openmp --enable-mpi
        --disable-dependency-tracking MPICC=mpicc.mpich MPILIBS=-lmpich MPIRUN=mpiexec.mpich)
mkdir -p "$work/double" "$work/single"
# The two configures are mostly one shell each, so they share the two cores.
# shellcheck disable=SC2086 # the SIMD options are word lists
(cd "$work/double" && run "configure (double)" ../src/configure "${common[@]}" $simd_double) &
pid_double=$!
# shellcheck disable=SC2086
(cd "$work/single" && run "configure (single)" ../src/configure --enable-single "${common[@]}" $simd_single) &
pid_single=$!
wait $pid_double || exit 1
wait $pid_single || exit 1
echo "$name: configured ($((SECONDS - started)) s)"

jobs=$(nproc 2>/dev/null || echo 2)
stage=$work/stage
mkdir -p "$stage/lib" "$stage/include"
for prec in double single; do
  case $prec in single) suffix=f ;; *) suffix="" ;; esac
  lib=libfftw3${suffix}_mpi
  # The system's libfftw3 instead of the tree's own; --no-undefined fails the link if it lacks a symbol.
  system_fftw=("${lib}_la_LIBADD=-L$sysdir -lfftw3$suffix -lmpich" "${lib}_la_DEPENDENCIES="
               LDFLAGS="$LDFLAGS -Wl,--no-undefined")
  run "building $lib" make -C "$work/$prec/mpi" -j"$jobs" "$lib.la" "${system_fftw[@]}"
  so=$(readlink "$work/$prec/mpi/.libs/$lib.so.3") || die "$lib: no shared library was built"
  ldd "$work/$prec/mpi/.libs/$so" | grep -q "libmpi\.so" && die "$lib links Open MPI's libmpi; check mpicc.mpich"
  # Debian's Open MPI build, where installed, exports the same API.
  if [ -e "$sysdir/$lib.so.3" ]; then
    diff <(nm -D --defined-only "$sysdir/$lib.so.3" | awk '{print $3}' | sort) \
         <(nm -D --defined-only "$work/$prec/mpi/.libs/$so" | awk '{print $3}' | sort) >/dev/null ||
      die "$lib exports other symbols than Debian's $sysdir/$lib.so.3"
  fi
  if [ $check = 1 ]; then
    run "building FFTW's test bench (libbench2)" make -C "$work/$prec/libbench2" -j"$jobs" libbench2.a
    bench_libs="$lib.la -L$sysdir -lfftw3${suffix}_threads -lfftw3$suffix ../libbench2/libbench2.a -lmpich -lpthread -lm"
    run "FFTW's MPI tests ($prec)" make -C "$work/$prec/mpi" smallcheck "${system_fftw[@]}" \
      "mpi_bench_DEPENDENCIES=$lib.la" "mpi_bench_LDADD=$bench_libs"
    echo "$name: FFTW's MPI tests passed ($prec, $((SECONDS - started)) s)"
  fi
  install -m 644 "$work/$prec/mpi/.libs/$so" "$stage/lib/$so"
  ln -s "$so" "$stage/lib/$lib.so.3"
  ln -s "$so" "$stage/lib/$lib.so"
  echo "$name: built $lib ($((SECONDS - started)) s)"
done
install -m 644 "$work/src/mpi/fftw3-mpi.h" "$stage/include/fftw3-mpi.h"
echo "$stamp" >"$stage/BUILT"
chmod -R u=rwX,go=rX "$stage"

# Copied beside the prefix, then moved in its place, so an old build stays whole until the new one is.
$sudo mkdir -p "$(dirname "$prefix")"
$sudo rm -rf "$prefix.new"
$sudo cp -R "$stage" "$prefix.new"
$sudo rm -rf "$prefix"
$sudo mv "$prefix.new" "$prefix"
echo "$name: installed in $prefix ($((SECONDS - started)) s)"
