#!/usr/bin/env bash
# The request against the link's bound on the emulated cluster (issue 44, part 3): fft's pipelined
# 16-file request, spectra back, at each node count, over the payload bound max(out, in) / line rate
# and the wire's (that times Ethernet's framing at the MTU), and where the time above the bound went.
# Usage: tests/bench/linkbound_bench.sh [PROFILE [NODES [SWITCH]]] [-- FFT-OPTION...]
#   PROFILE pi3 (default) or pi4; NODES a list, default 2,4; SWITCH bridge (default) or serial.
#        tests/bench/linkbound_bench.sh --table DIR SWITCH: the table again from a run's folder.
# Environment: BENCH_RUNS (runs per node count, default 3), RESULTS (default results), WB_BIN, PYTHON,
#   BENCH_CAPTURE=1: tcpdump the frames into pi1 as its link lets them go (the host side of its veth),
#   for the wire's own view: bytes that crossed, ACKs among them, and how long the link stood idle;
#   BENCH_MTU: the links' MTU (cluster up --mtu, default 1500; 9000 for jumbo frames);
#   BENCH_COMPARE=BIN: before each run, the same run by wulfbench binary BIN (into compare/), so two
#   builds alternate in one hold and share its load; both tables are printed.
# Root; the emulator must be down, and is taken down at the end.
set -euo pipefail
cd "$(dirname "$0")/../.."
PYTHON=${PYTHON:-/usr/bin/python3}
table() {
"$PYTHON" - "$1" "$2" <<'PY'
import glob
import os
import struct
import sys

import h5py
import numpy as np

switch, out = sys.argv[1], sys.argv[2]


def chunk_frames(frames: int, chunk: int, events: int) -> list[int]:
    """Frames per chunk as bench_fft_pipe.c sends a block: 1, 2, 4, ... below the chunk, then
    chunks; a binary from before the ramp sent equal chunks (told apart by the event count)."""
    if events == -(-frames // chunk):
        return [min(chunk, frames - k * chunk) for k in range(events)]
    sizes, size = [], 1
    while frames > 0:
        sizes.append(min(size if size < chunk else chunk, frames))
        frames -= sizes[-1]
        size *= 2
    return sizes


def wire_view(pcap: str, start: float, end: float, rate: float, serial: bool) -> tuple[float, float, int]:
    """From a tcpdump file (pcap, microseconds): the frames into the head inside [start, end] of
    realtime, their bytes as the link counts them over the line rate (busy s), the window's idle s,
    and how many were bare ACKs of the samples going out. tbf counts a frame's length; the serial
    switch at least 60 B, plus 24 of preamble, FCS and gap."""
    with open(pcap, "rb") as f:
        raw = f.read()
    at, size, off = [], [], 24
    while off + 16 <= len(raw):
        sec, usec, incl, orig = struct.unpack("<IIII", raw[off:off + 16])
        at.append(sec + usec * 1e-6)
        size.append(orig)
        off += 16 + incl
    at, size = np.asarray(at), np.asarray(size)
    inside = size[(at >= start) & (at <= end)]
    if serial:
        inside = np.maximum(inside, 60) + 24
    busy = float(inside.sum()) / rate
    return busy, (end - start) - busy, int((inside <= 124).sum())


def fluid(times: list[float], sizes: list[float], rate: float) -> tuple[float, float]:
    """A link fed with (time, bytes) and never idle while it holds some: when it ends, and its idle time."""
    t = idle = 0.0
    for at, b in sorted(zip(times, sizes)):
        idle += max(0.0, at - t)
        t = max(t, at) + b / rate
    return t, idle


with h5py.File(f"{out}/pingpong.h5", "r") as f:
    g = f["transfer/pingpong"]
    sizes = list(g["bytes"][()])
    alpha = float(np.asarray(g["t_med"][()]).reshape(len(sizes), -1)[sizes.index(1), 0])
rows = {}
for path in sorted(glob.glob(f"{out}/fft-n*.h5")):
    with h5py.File(path, "r") as f:
        g, n = f["fft/p000"], int(f.attrs["nranks"])
        a, tl = g.attrs, g["timeline"][()]
        # A file from before link_mtu: the smallest MTU other nodes reach rank 0 through, as wulfbench takes it.
        hosts = f["hosts"][()]
        away = hosts["mtu"][hosts["node"] != hosts["node"][0]]
        mtu, rate = int(a.get("link_mtu", away.min())), float(a["link_rate_Bps"])
        wire = float(a.get("link_wire_bound_s", a["link_bound_s"] * (mtu + 38) / (mtu - 52)))
        # What the emulated link charges a frame: tc tbf counts the Ethernet header (14 B), the
        # serial switch the whole wire (38 B: header, FCS, preamble, gap), as a real port does.
        charged = (mtu + (38 if switch == "serial" else 14)) / (mtu - 52)
        frames, res = g["frames"][()], g["bytes_out"][()]
        times, sizes, msgs = [], [], 0
        for q in range(1, n):
            comp = tl[(tl["rank"] == q) & (tl["phase"] == 1)]
            per = chunk_frames(int(frames[q]), int(a["chunk_frames"]), len(comp))
            times += list(comp["t_end"])
            sizes += [k * res[q] / frames[q] for k in per]
            msgs += 2 * len(comp)
        tt = float(g["t_total"][-1])
        end, idle = fluid(times, sizes, rate / charged)
        head = tl[(tl["rank"] == 0) & (tl["phase"] == 1)]
        bound = float(a["link_bound_s"])
        pcap = path.replace("/fft-", "/in-").replace(".h5", ".pcap")
        busy = idle_w = float("nan")
        acks = -1
        if os.path.exists(pcap):
            busy, idle_w, acks = wire_view(pcap, float(g["t_start_utc"][-1]), float(g["t_end_utc"][-1]), rate,
                                      switch == "serial")
        rows.setdefault(n, []).append({
            "t": float(np.median(g["t_total"][()])), "bound": bound, "wire": wire,
            "framing": (charged - 1) * bound, "fill": min(times), "starved": idle - min(times),
            "rest": tt - end, "msgs": msgs, "head": float((head["t_end"] - head["t_start"]).sum()),
            "head_done": float(head["t_end"].max()), "chunk": int(a["chunk_frames"]), "mtu": mtu,
            "busy": busy, "idle": idle_w, "acks": acks})
print(f"# alpha (half a 1 B round trip) {alpha * 1e6:.1f} us; times in ms; medians over runs; fill, "
      f"starved, rest from each run's last repetition; framing as the {switch} charges it; w_: the "
      f"frames into pi1 in that repetition (BENCH_CAPTURE=1): link busy, idle, bare ACKs")
cols = ("nodes", "request", "bound", "x_bound", "x_wire", "framing", "fill", "starved", "rest",
        "messages", "n*alpha", "head", "head_done", "chunk", "mtu", "w_busy", "w_idle", "w_acks", "run_lo", "run_hi")
print(" ".join(f"{c:>9}" for c in cols))
for n, rs in sorted(rows.items()):
    m = {k: float(np.median([r[k] for r in rs])) for k in rs[0]}
    vals = (n, m["t"] * 1e3, m["bound"] * 1e3, m["t"] / m["bound"], m["t"] / m["wire"], m["framing"] * 1e3,
            m["fill"] * 1e3, m["starved"] * 1e3, m["rest"] * 1e3, m["msgs"], m["msgs"] * alpha * 1e3,
            m["head"] * 1e3, m["head_done"] * 1e3, m["chunk"], m["mtu"], m["busy"] * 1e3, m["idle"] * 1e3,
            m["acks"], min(r["t"] for r in rs) * 1e3, max(r["t"] for r in rs) * 1e3)
    fmt = ("{:>9d}", "{:9.1f}", "{:9.1f}", "{:9.3f}", "{:9.3f}", "{:9.1f}", "{:9.1f}", "{:9.1f}", "{:9.1f}",
           "{:9.0f}", "{:9.1f}", "{:9.1f}", "{:9.1f}", "{:9.0f}", "{:9.0f}", "{:9.1f}", "{:9.1f}", "{:9.0f}",
           "{:9.1f}", "{:9.1f}")
    print(" ".join(f.format(int(v) if f.endswith("d}") else v) for f, v in zip(fmt, vals)))
PY
}
if [[ ${1:-} == --table ]]; then
  (($# == 3)) || { echo "linkbound_bench: --table DIR SWITCH" >&2; exit 2; }
  table "$3" "$2"
  exit 0
fi
[ "$(id -u)" -eq 0 ] || { echo "linkbound_bench: needs root (network namespaces); run it with sudo" >&2; exit 1; }
CL=jobs/emulate/cluster
profile=pi3 nodes=2,4 switch=bridge
for v in profile nodes switch; do
  (($#)) && [[ $1 != -- ]] && { printf -v "$v" '%s' "$1"; shift; }
done
[[ ${1:-} == -- ]] && shift
case $profile in pi3) rate=12.5MB ;; pi4) rate=125MB ;; *) echo "linkbound_bench: profile pi3 or pi4, not '$profile'" >&2; exit 2 ;; esac
[[ $nodes =~ ^[0-9]+(,[0-9]+)*$ ]] || { echo "linkbound_bench: nodes as a list such as 2,4, not '$nodes'" >&2; exit 2; }
[[ $switch == bridge || $switch == serial ]] || { echo "linkbound_bench: switch bridge or serial, not '$switch'" >&2; exit 2; }
runs=${BENCH_RUNS:-3}
bench_mtu=${BENCH_MTU:-1500}
[[ $bench_mtu =~ ^[0-9]+$ ]] || { echo "linkbound_bench: BENCH_MTU in bytes such as 9000, not '$bench_mtu'" >&2; exit 2; }
compare=${BENCH_COMPARE:-}
[[ -z $compare || -x $compare ]] || { echo "linkbound_bench: BENCH_COMPARE '$compare' is not an executable" >&2; exit 2; }
[[ ${BENCH_CAPTURE:-0} != 1 ]] || command -v tcpdump >/dev/null ||
  { echo "linkbound_bench: BENCH_CAPTURE=1 needs tcpdump (apt-get install tcpdump)" >&2; exit 1; }
$CL status >/dev/null 2>&1 && { echo "linkbound_bench: an emulated cluster is up; take it down first ($CL down)" >&2; exit 1; }
out=${RESULTS:-results}/bench-linkbound/$profile-$switch-mtu$bench_mtu-$(date -u +%Y%m%dT%H%M%SZ)
mkdir -p "$out"
trap '$CL down >/dev/null 2>&1 || true' EXIT
max=0
for n in ${nodes//,/ }; do ((n > max)) && max=$n; done
echo "# $(uptime)"
$CL up "$max" --link "$profile" --switch "$switch" --mtu "$bench_mtu" >/dev/null
# The per-message cost alpha: half a round trip of 1 B between two nodes.
$CL run --np 2 -- transfer --tests pingpong -m 1,64k,1M -q -o "$out/pingpong.h5" >/dev/null
# fft_run DIR N R [BIN]: one run, its frames captured with BENCH_CAPTURE=1.
fft_run() {
  local cap=""
  if [[ ${BENCH_CAPTURE:-0} == 1 ]]; then
    # wbv1: the bridge's (or switch's) port toward pi1; its frames leave there when the link lets them.
    tcpdump -i wbv1 -s 96 -w "$1/in-n$2-$3.pcap" "tcp and dst host 198.18.0.1" 2>/dev/null & cap=$!
    sleep 1
  fi
  WB_BIN=${4:-${WB_BIN:-}} $CL run --np "$2" -- fft --sweep files --files 16 --reps 5 --result spectra \
    --schedule pipelined --link-rate "$rate" "${fft_args[@]}" -q -o "$1/fft-n$2-$3.h5" >/dev/null
  [[ -z $cap ]] || { sleep 0.5; kill "$cap"; wait "$cap" || true; }
}
fft_args=("$@")
[[ -z $compare ]] || { mkdir -p "$out/compare"; cp "$out/pingpong.h5" "$out/compare/"; }
for r in $(seq 1 "$runs"); do
  for n in ${nodes//,/ }; do
    [[ -z $compare ]] || fft_run "$out/compare" "$n" "$r" "$compare"
    fft_run "$out" "$n" "$r"
  done
done
$CL down >/dev/null
echo "# $(uptime)"
echo "# files: $out"
if [[ -n $compare ]]; then
  echo "# $compare (run just before each run of the next table)"
  table "$switch" "$out/compare"
  echo "# ${WB_BIN:-build/wulfbench}"
fi
table "$switch" "$out"
