#!/usr/bin/env bash
# Install the Debian packages wulfbench needs, only those missing, and say which.
# Usage: jobs/install-deps.sh GROUP...   groups: build mpich analysis pandas test bench browser cluster firewalls slurm fuzz arm
# cluster: the emulated cluster (namespaces, tc, a C compiler, sshd for --sshd, mkfs.ext4, sshfs and fio for
#   --disk and --share) and what jobs/setup runs on the head
#   (ansible-core, ssh, sshpass); installing openssh-server may start an sshd where services start.
# firewalls: iptables and ufw, installed only for tests/cluster/nodesteps.sh, which enables them inside emulated
#   nodes (ufw stays inactive on this machine).
# arm: qemu-user and mmdebstrap, for make test-arm's Debian arm64 and armhf roots (tests/arm/root.sh).
# fuzz: clang with its libFuzzer and sanitizer runtimes, for make fuzz.
# mpich: MPICH and its parallel HDF5 beside Open MPI, for make MPI=mpich; Open MPI stays the system mpicc.
#   Then FFTW-MPI for MPICH, which Debian does not package, built by jobs/build-fftw-mpi.sh from Debian's
#   fftw3 source (about a minute; skipped once built for the installed versions).
# pandas is optional: only analysis.frames, the DataFrame reader, needs it; the tests use it.
# Run it on every node of a cluster (Raspberry Pi OS, Debian, Ubuntu); it uses sudo when not root.
set -euo pipefail

declare -A GROUP=(
  [build]="make gcc pkg-config openmpi-bin libopenmpi-dev libfftw3-dev libfftw3-mpi-dev libhdf5-openmpi-dev hdf5-tools"
  [mpich]="mpich libmpich-dev libhdf5-mpich-dev libfftw3-dev dpkg-dev xz-utils"
  [analysis]="python3 python3-h5py python3-numpy python3-matplotlib"
  [pandas]="python3-pandas"
  [test]="python3-pytest python3-pandas sox alsa-utils man-db faketime"
  [bench]="netpipe-openmpi hpcc cmake fio autoconf automake time"
  [browser]="chromium fonts-dejavu-core"
  [cluster]="iproute2 util-linux e2fsprogs procps time gcc libc6-dev iputils-ping faketime ansible-core openssh-client openssh-server sshpass sudo sshfs fio"
  [slurm]="slurm-wlm munge"
  [firewalls]="iptables ufw"
  [fuzz]="clang libclang-rt-14-dev"
  [arm]="qemu-user-static binfmt-support mmdebstrap arch-test sox faketime procps"
)

if [ $# -eq 0 ] || [ "${1:-}" = "--help" ] || [ "${1:-}" = "-h" ]; then
  echo "usage: $0 GROUP...   (groups: ${!GROUP[*]})"
  exit $([ $# -eq 0 ] && echo 2 || echo 0)
fi

want=()
for g in "$@"; do
  [ -n "${GROUP[$g]+x}" ] || { echo "install-deps: unknown group '$g'; use: ${!GROUP[*]}" >&2; exit 2; }
  for p in ${GROUP[$g]}; do want+=("$p"); done
done

if ! command -v dpkg-query >/dev/null 2>&1; then
  cat >&2 <<'MSG'
install-deps: this is not a Debian-family system, so nothing was installed. Install by hand:
  Fedora / Rocky / Alma:  sudo dnf install make gcc pkgconf openmpi openmpi-devel fftw-devel hdf5-openmpi-devel \
                            python3-h5py python3-numpy python3-matplotlib python3-pytest sox
                          (Rocky/Alma need EPEL: sudo dnf install epel-release; then
                           'module load mpi/openmpi-x86_64' before make)
  Amazon Linux 2023:      sudo dnf install make gcc pkgconf openmpi openmpi-devel fftw-devel hdf5-devel python3-numpy
                          (no parallel HDF5 or h5py packages: build HDF5 with --enable-parallel, or use the
                           AWS ParallelCluster AMI, which ships Open MPI; pip install h5py matplotlib for analysis)
  then: make PKGS="fftw3f fftw3 hdf5"   if pkg-config names HDF5 differently.
MSG
  exit 1
fi

missing=()
for p in "${want[@]}"; do
  dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q "install ok installed" || missing+=("$p")
done
if [ ${#missing[@]} -gt 0 ]; then
  echo "install-deps: installing ${missing[*]}"
  # Which MPI the system's mpicc and mpirun are before; installing MPICH must not change them.
  mpi_before="$(readlink -f "$(command -v mpicc 2>/dev/null || echo none)") $(readlink -f "$(command -v mpirun 2>/dev/null || echo none)")"
  sudo=""
  if [ "$(id -u)" -ne 0 ]; then
    command -v sudo >/dev/null || { echo "install-deps: not root and no sudo; as root run: apt-get install ${missing[*]}" >&2; exit 1; }
    sudo="sudo"
  fi
  export DEBIAN_FRONTEND=noninteractive
  # A fresh machine has no package lists yet; refresh them once per day at most.
  if [ -z "$(find /var/lib/apt/lists -maxdepth 1 -name '*Packages*' -mmin -1440 2>/dev/null | head -1)" ]; then
    $sudo apt-get update -q || true
  fi
  $sudo apt-get install -y -q --no-install-recommends "${missing[@]}" || {
    echo "install-deps: apt-get could not install ${missing[*]}; check the network or the package names above" >&2; exit 1; }
  mpi_after="$(readlink -f "$(command -v mpicc 2>/dev/null || echo none)") $(readlink -f "$(command -v mpirun 2>/dev/null || echo none)")"
  if [ "$mpi_before" != "$mpi_after" ] && [[ $mpi_before == *openmpi* ]]; then
    echo "install-deps: the system mpicc/mpirun changed from Open MPI to '$mpi_after'; to restore them:" >&2
    echo "  $sudo update-alternatives --set mpi /usr/bin/mpicc.openmpi; $sudo update-alternatives --set mpirun /usr/bin/mpirun.openmpi" >&2
  fi
fi

if [[ " $* " == *" mpich "* ]]; then
  # Optional: without it the MPICH build only lacks dfft (make and the tests say so), so a failed
  # fetch or build warns and goes on.
  if ! bash "$(dirname "$0")/build-fftw-mpi.sh"; then
    echo "install-deps: FFTW-MPI for MPICH was not built (see above); make MPI=mpich builds without dfft" >&2
  fi
fi
