#!/usr/bin/env bash
# Figures of the fft issue, measured side by side in one run and printed as medians and ratios.
# Nothing here passes or fails on speed: a shared machine is too noisy for that.
set -euo pipefail
cd "$(dirname "$0")/../.."
PYTHON=${PYTHON:-/usr/bin/python3}
if [ "$(id -u)" -eq 0 ]; then export OMPI_ALLOW_RUN_AS_ROOT=1 OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1; fi
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
WB=build/wulfbench
REPS=${REPS:-9}

echo "== fft figures (64 files of 5 s, frame 4096, single precision, $REPS reps; medians)"
mpirun -np 1 $WB fft --baseline --sweep files --files 64 --reps "$REPS" -q -o "$tmp/base.h5"
mpirun -np 2 $WB fft --sweep files --files 64 --reps "$REPS" -q -o "$tmp/np2.h5"
mpirun -np 2 $WB fft --sweep files --files 64 --reps "$REPS" --local mpi -q -o "$tmp/np2mpi.h5"
ref=$(build/tests/fft_ref 6784 4096 "$REPS")
bytes=$("$PYTHON" -c 'import h5py,sys; print(int(h5py.File(sys.argv[1])["fft/p000/bytes_in"][1]))' "$tmp/np2mpi.h5")
sr=$(mpirun -np 2 build/tests/sendrecv_ref "$bytes" "$REPS")

"$PYTHON" - "$tmp/base.h5" "$tmp/np2.h5" "$tmp/np2mpi.h5" "$ref" "$sr" <<'PY'
import sys
import h5py
import numpy as np

base, np2, np2m = (h5py.File(a) for a in sys.argv[1:4])
ref = dict(zip(sys.argv[4].split()[::2], sys.argv[4].split()[1::2]))
sr = dict(zip(sys.argv[5].split()[::2], sys.argv[5].split()[1::2]))
b, p, pm = base["fft/p000"], np2["fft/p000"], np2m["fft/p000"]

gf = b["flops"][0] / np.median(b["t_fft"][:, 0]) / 1e9
gref = float(ref["gflops"])
print(f"1. FFT-phase GFLOPS per rank, --baseline:     {gf:8.2f}")
print(f"   bare FFTW loop, same plan, {ref['frames']} frames streamed: {gref:8.2f}")
print(f"   ratio wulfbench / bare FFTW:              {gf / gref:8.2f}   (target >= 0.95)")

kb = lambda g: g.attrs["input_bytes"] / 1000 / np.median(g["t_total"][()])
print(f"2. kB/s --baseline:                          {kb(b):10.0f}")
print(f"   kB/s mpirun -np 2:                        {kb(p):10.0f}")
print(f"   ratio np 2 / baseline:                    {kb(p) / kb(b):8.2f}   (target >= 1.7)")
print(f"   (np 2 with --local mpi, every byte as a message: {kb(pm):.0f} kB/s, ratio {kb(pm) / kb(b):.2f})")

bytes_in = pm["bytes_in"][1]
dist = np.median(pm["t_distribute"][:, 1])
mbps = bytes_in / dist / 1e6
print(f"3. distribution to rank 1 (--local mpi): {bytes_in} bytes in {dist * 1e3:.3f} ms = {mbps:8.1f} MB/s")
print(f"   plain MPI_Send/Recv of the same bytes:    {float(sr['MBps']):8.1f} MB/s"
      f"   (ratio {mbps / float(sr['MBps']):.2f})")
PY

echo "4. make run, timed (target under 2 minutes):"
start=$(date +%s.%N)
make --no-print-directory run RESULTS="$tmp/run" >"$tmp/run.log" 2>&1 || { tail -20 "$tmp/run.log"; exit 1; }
end=$(date +%s.%N)
"$PYTHON" -c "import sys; print(f'   make run took {float(sys.argv[2]) - float(sys.argv[1]):.1f} s')" "$start" "$end"
