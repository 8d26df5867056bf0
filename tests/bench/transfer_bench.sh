#!/usr/bin/env bash
# Figures of `wulfbench transfer` beside NetPIPE (NPopenmpi) and HPCC (hpcc), measured in one run
# on this machine with 2 ranks, at the same message sizes, and its concurrent link map (--pairs
# shift) beside the sequential one at 4 ranks. Prints the figures and their ratios; timing never
# fails the script (it exits non-zero only when a tool is missing or a run fails).
#
# Apples to apples:
#   - every tool runs MPI_Send/MPI_Recv ping-pong between ranks 0 and 1 of `mpirun -np 2`, cache-hot,
#     and reports the one-way time = half a round trip;
#   - against NetPIPE, wulfbench runs with --pingpong-method netpipe: both send on the buffer they
#     have just received; against HPCC, wulfbench runs its default osu method: like HPCC (and OSU,
#     IMB) it sends from a separate buffer and receives into another;
#   - bandwidth is bytes / one-way time in MB/s = 1e6 bytes/s; NetPIPE's "Mbps" is 2^20 bits/s
#     (its one-way time = 8 * bytes / (Mbps * 2^20), finer than its 10-ns time column); HPCC prints
#     GB/s = 1e9 bytes/s;
#   - sizes: 8 B (latency) and 1 MiB, 4 MiB (NetPIPE run with -l = -u = the size and -p 0, so it
#     measures exactly that size), 2,000,000 B (HPCC's fixed bandwidth size; HPCC's latency is 8 B);
#   - the link map: `--pairs shift --tests bw -m 8,1M` at 4 ranks measures every ordered pair in
#     turn, then all pairs of each shifted round at once; the figure is node_ratio (median concurrent
#     over median sequential bandwidth at 1 MiB), below 1 where the pairs share something;
#   - against HPCC and for the link map the tools run interleaved for ROUNDS rounds; each figure is the
#     median over the rounds of each tool's figure (wulfbench's own figure is the median over its
#     repetitions), and the aim is judged on the median of the per-round ratios;
#   - against NetPIPE the pairs are tighter: per size, NP_ROUNDS rounds of one wulfbench run and one
#     NetPIPE run of that size alone, about a second apart, in alternating order (A B, B A, ...).
#     On this VM, a transfer of data that the other core has just written (NetPIPE's method, and any
#     8 B ping-pong) runs at one of two speeds, about 3.5 or 8 GB/s at 1-4 MiB and 0.45 or 0.2 us at
#     8 B, switching every second or few whatever program runs (NetPIPE, wulfbench and a bare MPI loop
#     alike; wulfbench's default osu method, which sends from a buffer it does not write, stayed fast
#     in 24 of 24 runs at 1 MiB). A round whose two runs fell on different levels has a ratio near
#     0.5 or 2; such rounds split both ways, and the median over many rounds lands on the rounds that
#     shared a level (a second table keeps only those). The 8 B rounds also run wulfbench with
#     WB_MPI_THREADS=funneled, to show what that thread level costs;
# Knobs (environment): ROUNDS (default 5), NP_ROUNDS (default 21), MPIEXEC (default mpirun), PYTHON
# (default /usr/bin/python3), WULFBENCH (default build/wulfbench), MAP_NP (default 4).
set -euo pipefail
cd "$(dirname "$0")/../.."

MPIEXEC=${MPIEXEC:-mpirun}
PYTHON=${PYTHON:-/usr/bin/python3}
ROUNDS=${ROUNDS:-5}
NP_ROUNDS=${NP_ROUNDS:-21}
BIN=${WULFBENCH:-build/wulfbench}
MAP_NP=${MAP_NP:-4}
SIZES=(8 1048576 4194304)

if [ "$(id -u)" -eq 0 ]; then
  export OMPI_ALLOW_RUN_AS_ROOT=1 OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1
fi
for tool in NPopenmpi hpcc "$MPIEXEC"; do
  if ! command -v "$tool" >/dev/null; then
    echo "transfer_bench: $tool is missing; install netpipe-openmpi and hpcc (make deps-bench)" >&2
    exit 1
  fi
done
if [ ! -x "$BIN" ]; then
  echo "transfer_bench: $BIN is missing; run make first" >&2
  exit 1
fi

work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
mkdir "$work/hpcc"
# HPCC runs its whole suite; a small HPL problem on a 1x2 grid keeps that to a few seconds.
# (Debian's /usr/share/doc/hpcc/examples/_hpccinf.txt with N 500 and P 1.)
source "$(dirname "$0")/hpccinf.sh"
hpcc_input 500 >"$work/hpcc/hpccinf.txt"

# Runs a command quietly; on failure shows its output and stops.
run() {
  if ! "$@" >"$work/last.log" 2>&1; then
    echo "transfer_bench: failed: $*" >&2
    cat "$work/last.log" >&2
    exit 1
  fi
}

echo "# transfer_bench: wulfbench transfer vs NetPIPE and HPCC on $(hostname), 2 ranks, and its link map at" \
  "$MAP_NP ranks, $ROUNDS interleaved rounds" >&2
wb_common=(-m 8,1M,2000000,4M --time-per-size 0.5 --iters-max 2000 --time-budget none -q)
# Against NetPIPE: one size per run, the two tools back to back, the order alternating per round.
wb_one() { # size output [VAR=value, for every rank: mpirun's local ranks inherit its environment]
  local pre=()
  if [ $# -gt 2 ]; then pre=(env "$3"); fi
  run "${pre[@]}" "$MPIEXEC" -np 2 "$BIN" transfer --tests pingpong --pingpong-method netpipe -m "$1:$1" \
    --time-per-size 0.25 --iters-max 2000 --time-budget none -q -o "$2"
}
np_one() { run "$MPIEXEC" -np 2 NPopenmpi -l "$1" -u "$1" -p 0 -o "$2"; }
for size in "${SIZES[@]}"; do
  echo "# NetPIPE pairs at $size B: $NP_ROUNDS rounds" >&2
  for round in $(seq 1 "$NP_ROUNDS"); do
    if [ $((round % 2)) -eq 1 ]; then
      wb_one "$size" "$work/pwb$round-$size.h5"
      np_one "$size" "$work/pnp$round-$size.out"
      if [ "$size" -eq 8 ]; then wb_one 8 "$work/pfun$round.h5" WB_MPI_THREADS=funneled; fi
    else
      if [ "$size" -eq 8 ]; then wb_one 8 "$work/pfun$round.h5" WB_MPI_THREADS=funneled; fi
      np_one "$size" "$work/pnp$round-$size.out"
      wb_one "$size" "$work/pwb$round-$size.h5"
    fi
  done
done

for round in $(seq 1 "$ROUNDS"); do
  echo "# round $round/$ROUNDS: wulfbench (netpipe: bw beside pingpong), wulfbench (osu), HPCC, link map" >&2
  run "$MPIEXEC" -np 2 "$BIN" transfer --tests pingpong,bw --pingpong-method netpipe "${wb_common[@]}" \
    -o "$work/wb$round.h5"
  run "$MPIEXEC" -np 2 "$BIN" transfer --tests pingpong "${wb_common[@]}" -o "$work/osu$round.h5"
  (cd "$work/hpcc" && rm -f hpccoutf.txt && run "$MPIEXEC" -np 2 hpcc && cp hpccoutf.txt "$work/hpcc$round.txt")
  run "$MPIEXEC" -np "$MAP_NP" --oversubscribe "$BIN" transfer --pairs shift --tests bw -m 8,1M -i 5 \
    --time-budget none -q -o "$work/map$round.h5"
done

"$PYTHON" - "$work" "$ROUNDS" "$NP_ROUNDS" <<'EOF'
"""Reads every tool's output, takes medians over the rounds, prints figures and ratios."""
import re
import statistics
import sys

import h5py
import numpy as np

work, rounds, np_rounds = sys.argv[1], int(sys.argv[2]), int(sys.argv[3])
MiB = 1 << 20


def wulfbench(r: int, name: str = "wb") -> dict:
    """One-way time (s) per size of pingpong, and bw's time per message, from the result file:
    t_med, the median over repetitions."""
    out = {}
    with h5py.File(f"{work}/{name}{r}.h5", "r") as f:
        for test in ("pingpong", "bw"):
            if test not in f["transfer"]:
                continue
            g = f["transfer/" + test]
            for b, t in zip(g["bytes"][:], g["t_med"][:, 0]):
                out[(test, int(b))] = float(t)
    return out


def link_map(r: int) -> tuple[float, float, float]:
    """Median sequential and concurrent bandwidth (B/s) over the links, and the node ratio."""
    with h5py.File(f"{work}/map{r}.h5", "r") as f:
        seq = f["transfer/pairs_all/bandwidth_Bps"][:]
        con = f["transfer/pairs_shift/bandwidth_Bps"][:]
        ratio = float(f["transfer/pairs_shift/node_ratio"][0])
    off = ~np.eye(seq.shape[0], dtype=bool)
    return float(np.median(seq[off])), float(np.median(con[off])), ratio


def netpipe(r: int, size: int, name: str = "pnp") -> float:
    """NetPIPE's one-way time (s). np.out columns are bytes, "Mbps" and seconds (half the round
    trip, the lowest of 3 trials of a ping-pong loop) printed to 1e-8 s, so the time comes from the
    Mbps column's finer digits. NetPIPE's Mbps is 2^20 bits/s (netpipe.c: bits / (t * 1024 * 1024))."""
    with open(f"{work}/{name}{r}-{size}.out") as fh:
        for line in fh:
            cols = line.split()
            if len(cols) >= 3 and int(cols[0]) == size:
                mbps, t_col = float(cols[1]), float(cols[2])
                t = 8 * size / (mbps * 1024 * 1024)
                # Both columns say the same thing, up to the time column's rounding.
                assert abs(t - t_col) <= 0.5e-8 + 1e-3 * t, (size, mbps, t_col)
                return t
    raise SystemExit(f"transfer_bench: no {size}-byte line in NetPIPE output {work}/{name}{r}-{size}.out")


def hpcc(r: int) -> dict:
    text = open(f"{work}/hpcc{r}.txt").read()

    def value(name: str) -> float:
        m = re.search(rf"^{name}=([0-9.eE+-]+)", text, re.M)
        if not m:
            raise SystemExit(f"transfer_bench: {name} missing from HPCC output")
        return float(m.group(1))

    lat_b = re.search(r"latency\s+measurements were done with\s+(\d+) bytes", text)
    bw_b = re.search(r"bandwidth measurements were done with\s+(\d+) bytes", text)
    return {"lat_s": value("AvgPingPongLatency_usec") * 1e-6,
            "bw_Bps": value("AvgPingPongBandwidth_GBytes") * 1e9,
            "lat_bytes": int(lat_b.group(1)) if lat_b else 8,
            "bw_bytes": int(bw_b.group(1)) if bw_b else 2000000}


wb = [wulfbench(r) for r in range(1, rounds + 1)]
osu = [wulfbench(r, "osu") for r in range(1, rounds + 1)]
maps = [link_map(r) for r in range(1, rounds + 1)]
# The NetPIPE pairs: per size and round, wulfbench's median and lowest repetition and NetPIPE's figure.
def netpipe_pair(r: int, size: int) -> tuple[float, float, float, float]:
    """One NetPIPE round at one size: wulfbench's median and lowest repetition, NetPIPE's figure,
    and NetPIPE's own statistic computed from wulfbench's raw samples (the lowest of the means of
    three equal consecutive thirds of its repetitions; NetPIPE: the lowest of 3 trial means)."""
    with h5py.File(f"{work}/pwb{r}-{size}.h5", "r") as f:
        g = f["transfer/pingpong"]
        t_med, t_min = float(g["t_med"][0, 0]), float(g["t_min"][0, 0])
        t = g["t"][0, :int(g["reps"][0]), 0]
    return t_med, t_min, netpipe(r, size), float(min(part.mean() for part in np.array_split(t, 3)))


# The NetPIPE pairs, per size and round.
np_pairs = {s: [netpipe_pair(r, s) for r in range(1, np_rounds + 1)] for s in (8, MiB, 4 * MiB)}
funneled = [wulfbench(r, "pfun")[("pingpong", 8)] for r in range(1, np_rounds + 1)]
hp = [hpcc(r) for r in range(1, rounds + 1)]
med = statistics.median


hp_bw_bytes = hp[0]["bw_bytes"]
if any(("pingpong", hp_bw_bytes) not in run for run in osu):
    raise SystemExit(f"transfer_bench: HPCC measured bandwidth at {hp_bw_bytes} bytes, which wulfbench did not run")

print("# NetPIPE pairs, per round: one-way time [us] at 8 B (wulfbench median, lowest rep, at funneled;")
print("# NetPIPE) and MB/s = 1e6 bytes/s at 1 MiB and 4 MiB (wulfbench median; NetPIPE)")
print(f"# {'round':>5} {'wb 8B':>7} {'lowest':>7} {'funnel':>7} {'NP 8B':>7} {'wb 1MiB':>8} {'NP 1MiB':>8} "
      f"{'wb 4MiB':>8} {'NP 4MiB':>8}")
for r in range(np_rounds):
    a, b, c = np_pairs[8][r], np_pairs[MiB][r], np_pairs[4 * MiB][r]
    print(f"  {r + 1:>5} {a[0] * 1e6:7.3f} {a[1] * 1e6:7.3f} {funneled[r] * 1e6:7.3f} {a[2] * 1e6:7.3f} "
          f"{MiB / b[0] / 1e6:8.0f} {MiB / b[2] / 1e6:8.0f} {4 * MiB / c[0] / 1e6:8.0f} {4 * MiB / c[2] / 1e6:8.0f}")
print()
print("# HPCC and bw rounds: one-way time [us] and MB/s")
print(f"# {'round':>5} {'osu 8B':>8} {'HPCC 8B':>8} {'wb 2MB':>9} {'HPCC 2MB':>9} {'wb bw 1MiB':>10}")
for r in range(rounds):
    w = wb[r]
    print(f"  {r + 1:>5} {osu[r][('pingpong', 8)] * 1e6:8.3f} {hp[r]['lat_s'] * 1e6:8.3f} "
          f"{hp_bw_bytes / osu[r][('pingpong', hp_bw_bytes)] / 1e6:9.0f} {hp[r]['bw_Bps'] / 1e6:9.0f} "
          f"{MiB / w[('bw', MiB)] / 1e6:10.0f}")

# Each figure per round, as (wulfbench, reference) pairs measured minutes apart at most.
rows = [
    ("pingpong latency 8 B [us]", "NetPIPE", "0.90..1.10", [(p[0] * 1e6, p[2] * 1e6) for p in np_pairs[8]]),
    # NetPIPE's own statistic (lowest of 3 trial means) from wulfbench's samples, and its lowest rep.
    ("  same, NetPIPE's statistic [us]", "NetPIPE", "0.90..1.10", [(p[3] * 1e6, p[2] * 1e6) for p in np_pairs[8]]),
    ("  same, lowest rep [us]", "NetPIPE", "-", [(p[1] * 1e6, p[2] * 1e6) for p in np_pairs[8]]),
    ("  same, WB_MPI_THREADS=funneled [us]", "single", "-",
     [(f * 1e6, p[0] * 1e6) for f, p in zip(funneled, np_pairs[8])]),
    ("pingpong latency 8 B [us] (osu)", "HPCC", "0.85..1.15",
     [(w[("pingpong", 8)] * 1e6, hp[r]["lat_s"] * 1e6) for r, w in enumerate(osu)]),
    ("pingpong bandwidth 1 MiB [MB/s]", "NetPIPE", "0.90..1.10", [(MiB / p[0] / 1e6, MiB / p[2] / 1e6) for p in np_pairs[MiB]]),
    ("pingpong bandwidth 4 MiB [MB/s]", "NetPIPE", "0.90..1.10",
     [(4 * MiB / p[0] / 1e6, 4 * MiB / p[2] / 1e6) for p in np_pairs[4 * MiB]]),
    ("  same 1 MiB, NetPIPE's statistic [MB/s]", "NetPIPE", "0.90..1.10",
     [(MiB / p[3] / 1e6, MiB / p[2] / 1e6) for p in np_pairs[MiB]]),
    ("  same 4 MiB, NetPIPE's statistic [MB/s]", "NetPIPE", "0.90..1.10",
     [(4 * MiB / p[3] / 1e6, 4 * MiB / p[2] / 1e6) for p in np_pairs[4 * MiB]]),
    ("  same 1 MiB, lowest rep [MB/s]", "NetPIPE", "-", [(MiB / p[1] / 1e6, MiB / p[2] / 1e6) for p in np_pairs[MiB]]),
    ("  same 4 MiB, lowest rep [MB/s]", "NetPIPE", "-",
     [(4 * MiB / p[1] / 1e6, 4 * MiB / p[2] / 1e6) for p in np_pairs[4 * MiB]]),
    (f"pingpong bw {hp_bw_bytes} B [MB/s] (osu)", "HPCC", "0.85..1.15",
     [(hp_bw_bytes / w[("pingpong", hp_bw_bytes)] / 1e6, hp[r]["bw_Bps"] / 1e6) for r, w in enumerate(osu)]),
    # Informational: on shared memory bw's window of 64 x 1 MiB leaves the caches that pingpong's one
    # buffer stays in, so bw reads above pingpong only while pingpong is at the machine's slow level.
    ("bw bandwidth 1 MiB [MB/s]", "wb pingpong", "-",
     [(MiB / w[("bw", MiB)] / 1e6, MiB / w[("pingpong", MiB)] / 1e6) for w in wb]),
    ("bw 1 MiB concurrent [MB/s]", "sequential", "-", [(m[1] / 1e6, m[0] / 1e6) for m in maps]),
]
print()
print("# wulfbench, reference: medians over the rounds; ratio = wulfbench / reference of those medians;")
print("# paired = median over the rounds of each round's ratio, with its min and max (the tools ran seconds")
print("# apart, so a machine that changes pace between rounds moves both); the aim is judged on the paired")
print("# ratio. NetPIPE rows: one size per run, about a second apart, NP_ROUNDS rounds")
print(f"# {'figure':<42} {'reference':<12} {'wulfbench':>10} {'reference':>10} {'ratio':>7} {'paired':>7} "
      f"{'[min':>6} {'max]':>6}  {'aim':<10} {'in aim':<6}")
for name, ref, aim, per_round in rows:
    mine, theirs = med(p[0] for p in per_round), med(p[1] for p in per_round)
    ratios = [p[0] / p[1] for p in per_round]
    paired = med(ratios)
    lo, hi = (1.0, np.inf) if aim == ">= 1" else (0, 0) if aim == "-" else map(float, aim.split(".."))
    ok = "-" if aim == "-" else "yes" if lo <= paired <= hi else "no"
    print(f"  {name:<42} {ref:<12} {mine:10.3f} {theirs:10.3f} {mine / theirs:7.3f} {paired:7.3f} "
          f"{min(ratios):6.2f} {max(ratios):6.2f}  {aim:<10} {ok:<6}")
print("# link map (--pairs shift): node_ratio per round "
      + " ".join(f"{m[2]:.2f}" for m in maps) + f" (median {med(m[2] for m in maps):.2f}); on one machine the")
print("# pairs of a round share its cores and memory, so the concurrent figure is lower by design here.")
print("# pingpong: wulfbench's netpipe method sends on the buffer just received, like NetPIPE; its default")
print("# osu method sends from a separate buffer, like HPCC, OSU and IMB.")
print("# statistics: wulfbench = median of its per-repetition samples (a repetition is the mean of a 1 ms")
print("# batch of round trips); on the 'NetPIPE's statistic' rows the lowest mean of three consecutive")
print("# thirds of its repetitions, and on the 'lowest rep' rows its lowest repetition (informational: a")
print("# 1 ms window catches short bursts that NetPIPE's longer trials average out); NetPIPE = lowest of 3")
print("# trial means of a back-to-back loop; HPCC = lowest of its loop means, averaged over both directions. Loop means count")
print("# every stall of a busy machine, medians do not, so the ratios move with the load; timing is")
print("# informational and fails nothing.")

def level_split(values: list[float]) -> float | None:
    """The threshold between the machine's two levels: the middle of the widest gap (over 1.4x)
    between neighbouring sorted values; None for one level."""
    v = sorted(values)
    best = None
    for i in range(len(v) - 1):
        gap = v[i + 1] / v[i]
        if gap > 1.4 and (best is None or gap > best[0]):
            best = (gap, (v[i] * v[i + 1]) ** 0.5)
    return best[1] if best else None


print()
print("# NetPIPE, same-level rounds: the rounds whose two runs fell on the same level of this machine's")
print("# shared-memory speed (the levels found as the widest gap over 1.4x in both tools' figures pooled),")
print("# with each tool's share of runs at the faster level: equal shares say the tools see the levels")
print("# alike; a tool that is really slower would show at the slower level only, so unequal shares")
print("# (over 0.4 apart) mark the row '?' instead of judging it; nan: no gap over 1.4x, every round kept")
print(f"# {'figure':<42} {'rounds':>7} {'paired':>7} {'[min':>6} {'max]':>6} {'fast wb':>8} {'fast NP':>8}  "
      f"{'aim':<10} {'in aim':<6}")
for name, size, col, scale in (("pingpong latency 8 B [us]", 8, 0, 1), ("pingpong bandwidth 1 MiB [MB/s]", MiB, 0, -1),
                               ("pingpong bandwidth 4 MiB [MB/s]", 4 * MiB, 0, -1),
                               ("  8 B, NetPIPE's statistic", 8, 3, 1),
                               ("  1 MiB, NetPIPE's statistic", MiB, 3, -1),
                               ("  4 MiB, NetPIPE's statistic", 4 * MiB, 3, -1)):
    rows_ = np_pairs[size]
    mine, theirs = [p[col] for p in rows_], [p[2] for p in rows_]
    thr = level_split(mine + theirs)
    if thr is None:  # no gap over 1.4x: one level, or runs that changed level midway; every round
        same = list(range(len(rows_)))
        fast_w = fast_n = float("nan")
    else:
        same = [i for i in range(len(rows_)) if (mine[i] < thr) == (theirs[i] < thr)]
        fast_w = sum(t < thr for t in mine) / len(mine)
        fast_n = sum(t < thr for t in theirs) / len(theirs)
    # time ratios, shown as wulfbench / NetPIPE in the row's own unit (latency: time; bandwidth: 1 / time)
    ratios = [(mine[i] / theirs[i]) ** scale for i in same]
    if not ratios:
        print(f"  {name:<42} {0:>3}/{len(rows_):<3} no round had both runs on one level")
        continue
    paired = med(ratios)
    ok = "?" if abs(fast_w - fast_n) > 0.4 else "yes" if 0.90 <= paired <= 1.10 else "no"  # nan: not '?'
    print(f"  {name:<42} {len(same):>3}/{len(rows_):<3} {paired:7.3f} {min(ratios):6.2f} {max(ratios):6.2f} "
          f"{fast_w:8.2f} {fast_n:8.2f}  {'0.90..1.10':<10} {ok:<6}")
EOF
