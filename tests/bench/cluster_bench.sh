#!/usr/bin/env bash
# Figures on the emulated Pi cluster (root): for each link profile, pingpong latency and
# bandwidth between two nodes, and fft kB/s for 16 files of 5 s on 2, 4 and 8 nodes.
# Usage: tests/bench/cluster_bench.sh [PROFILE...]   (default: pi3 pi3plus pi4)
set -euo pipefail
cd "$(dirname "$0")/../.."
PYTHON=${PYTHON:-/usr/bin/python3}
[ "$(id -u)" -eq 0 ] || { echo "cluster_bench: needs root (network namespaces); run it with sudo" >&2; exit 1; }
profiles=("${@:-pi3 pi3plus pi4}")
# shellcheck disable=SC2206
profiles=(${profiles[*]})
CL=jobs/emulate/cluster
tmp=$(mktemp -d)
trap '$CL down >/dev/null 2>&1 || true; rm -rf "$tmp"' EXIT
$CL status >/dev/null 2>&1 && { echo "cluster_bench: an emulated cluster is up; take it down first ($CL down)" >&2; exit 1; }

printf '%-8s %14s %16s %14s %14s %14s\n' "# link" "lat_8B[us]" "bw_1MiB[MB/s]" "fft_2n[kB/s]" "fft_4n[kB/s]" "fft_8n[kB/s]"
for link in "${profiles[@]}"; do
  $CL up 8 --link "$link" >/dev/null
  $CL run --np 2 -- transfer --tests pingpong -m 8,1M -q -o "$tmp/tr-$link.h5" >/dev/null
  for n in 2 4 8; do
    $CL run --np "$n" -- fft --sweep files --files 16 --reps 3 -q -o "$tmp/fft-$link-$n.h5" >/dev/null
  done
  $CL down >/dev/null
  "$PYTHON" - "$link" "$tmp" <<'PY'
import sys
import h5py
import numpy as np

link, tmp = sys.argv[1], sys.argv[2]
t = h5py.File(f"{tmp}/tr-{link}.h5")["transfer/pingpong"]
sizes = list(t["bytes"][()])
med = t["t_med"][()].reshape(len(sizes), -1)[:, 0]
lat_us = med[sizes.index(8)] * 1e6
bw = t["bandwidth_Bps"][()].reshape(len(sizes), -1)[sizes.index(1 << 20), 0] / 1e6
kbps = []
for n in (2, 4, 8):
    g = h5py.File(f"{tmp}/fft-{link}-{n}.h5")["fft/p000"]
    kbps.append(g.attrs["input_bytes"] / 1000 / np.median(g["t_total"][()]))
print(f"{link:<8} {lat_us:14.1f} {bw:16.2f} {kbps[0]:14.0f} {kbps[1]:14.0f} {kbps[2]:14.0f}")
PY
done
