#!/usr/bin/env bash
# Figures of the fft issues, measured side by side and printed as medians and ratios.
# Nothing here passes or fails on speed: a shared machine is too noisy for that.
# Knobs: ROUNDS (interleaved rounds, default 7; CROUNDS for the compute section, default 11),
# REPS (repetitions per run, default 9), BENCH_CPU (the core the compute section pins to),
# FRAMES (frame sizes, default "4096 1024 16384"), PRECISIONS (default "single double"),
# MEM_FILES (file counts of the memory fit, default "16 32 64 128 256"),
# SECTIONS (any of paired compute stft whole phase memory cluster; default all); PROCS and PROUNDS
# (processes and rounds per process of the paired section, default 7 and 40); SROUNDS, SREPS, SMARGIN
# and STRIES (the stft section's rounds, repetitions per process, how closely the two references
# beside a process must agree, and tries; default 11, 120, 0.03 and 8); TMARGIN (how closely the
# process's transforms must take its references', 0.05), SLEVEL and LTRIES (how near the fastest
# reference so far both must be, for how many tries, 0.10 and 3); SRETAKES (tries at the end for
# rounds off the run's fastest level, default SROUNDS); STFT_KEEP=DIR keeps the rows.
set -euo pipefail
cd "$(dirname "$0")/../.."
PYTHON=${PYTHON:-/usr/bin/python3}
if [ "$(id -u)" -eq 0 ]; then export OMPI_ALLOW_RUN_AS_ROOT=1 OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1; fi
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
WB=build/wulfbench
REF=build/tests/fft_ref
ROUNDS=${ROUNDS:-7}
REPS=${REPS:-9}
FRAMES=${FRAMES:-4096 1024 16384}
PRECISIONS=${PRECISIONS:-single double}
MEM_FILES=${MEM_FILES:-16 32 64 128 256}
SECTIONS=${SECTIONS:-paired compute stft whole phase memory cluster}
want() { [[ " $SECTIONS " == *" $1 "* ]]; }

# h5med FILE NAME...: for each NAME, the median over repetitions of rank 0's dataset NAME of the
# first point of an HDF5 result file, on one line; NAME:min gives the fastest repetition instead.
h5med() {
  "$PYTHON" - "$@" <<'PY'
import sys
import h5py
import numpy as np
g = h5py.File(sys.argv[1])["fft/p000"]
out = []
for item in sys.argv[2:]:
    name, _, stat = item.partition(":")
    rank0 = g[name][()].reshape(g[name].shape[0], -1)[:, 0]
    out.append(float(rank0.min() if stat == "min" else np.median(rank0)))
print(*out)
PY
}
field() { tr ' ' '\n' <<<"$1" | grep -A1 -x "$2" | tail -1; }

# Prints "label  a_med  b_med  ratio [min, max]" from lines "a b" (seconds) in file $2.
summary() {
  "$PYTHON" - "$1" "$2" <<'PY'
import sys
import numpy as np
label, path = sys.argv[1], sys.argv[2]
ab = np.loadtxt(path, ndmin=2)
r = ab[:, 0] / ab[:, 1]
print(f"{label:34s} {1e3 * np.median(ab[:, 0]):10.2f} ms {1e3 * np.median(ab[:, 1]):10.2f} ms "
      f"{np.median(r):7.3f} [{r.min():.3f}, {r.max():.3f}]  ({len(r)} rounds)")
PY
}

# Paired-ratio statistics of the columns of file $2 (one line a round, seconds), for the pairs in $3:
# "label a/b" items. Per pair: the median of paired ratios, a 20%-trimmed mean and the ratio of the
# minima, the spread of the paired ratios (p10..p90) and a bootstrap 95% interval of the median,
# and whether that interval is narrow enough (half-width < 2.5%) to decide a 5% difference.
ratios() {
  "$PYTHON" - "$1" "$2" "$3" <<'PY'
import sys
import numpy as np
label, path, pairs = sys.argv[1], sys.argv[2], sys.argv[3].split()
t = np.loadtxt(path, ndmin=2)
# Wall times, then the same runs' CPU times (a name ending in "c").
cols = {"wb": 0, "wbn": 1, "wbm": 2, "ref": 3, "refn": 4, "wbc": 5, "wbnc": 6, "wbmc": 7, "refc": 8, "refnc": 9}
rng = np.random.default_rng(1)
for name, a, b in zip(pairs[::3], pairs[1::3], pairs[2::3]):
    r = t[:, cols[a]] / t[:, cols[b]]
    k = len(r) // 5
    trimmed = np.sort(r)[k:len(r) - k].mean()
    boot = np.median(rng.choice(r, (2000, len(r))), axis=1)
    lo, hi = np.percentile(boot, [2.5, 97.5])
    p10, p90 = np.percentile(r, [10, 90])
    verdict = ("decides 2%" if (hi - lo) / 2 < 0.01 else "decides 5%" if (hi - lo) / 2 < 0.025
               else "too noisy for 5%")
    print(f"{label:14s} {name:26s} {np.median(r):6.3f} {trimmed:7.3f} {t[:, cols[a]].min() / t[:, cols[b]].min():6.3f}"
          f"   [{p10:.3f}, {p90:.3f}]  CI [{lo:.3f}, {hi:.3f}] {verdict}")
PY
}

if want paired; then
  BENCH_CPU=${BENCH_CPU:-$(($(nproc) - 1))}
  PIN=(taskset -c "$BENCH_CPU")
  command -v taskset >/dev/null || PIN=()
  PROCS=${PROCS:-7}
  PROUNDS=${PROUNDS:-40}
  echo "== paired passes in one process (build/tests/fft_pair): wulfbench's compute, portable and NATIVE=1,"
  echo "   against the reference pipeline -O3 and -march=native, one pass of each a round, the order turning;"
  echo "   64 files of 5 s; $PROCS processes of $PROUNDS rounds, pinned to CPU $BENCH_CPU (${PIN[*]:-no taskset})."
  echo "   Alternate passes see the same state of the machine, so the ratios within a process are tight;"
  echo "   the processes differ (each gets its pages anew; the reference picks its batch), so the interval is a"
  echo "   bootstrap over processes. Columns: median of all paired ratios, 20%-trimmed mean, its 95%"
  echo "   interval, the lowest and highest median of one process, and the verdict against the target."
  for prec in $PRECISIONS; do
    for frame in $FRAMES; do
      wis="$tmp/pair-$prec-$frame.wisdom"
      for ((p = 0; p < PROCS; p++)); do
        "${PIN[@]}" build/tests/fft_pair "$prec" "$frame" 64 "$PROUNDS" "$wis" >"$tmp/pair-$prec-$frame-$p.txt" \
          2>"$tmp/pair-$prec-$frame-$p.err"
      done
      "$PYTHON" - "$prec $frame" "$tmp/pair-$prec-$frame" "$PROCS" <<'PY'
import sys
import numpy as np
label, stem, procs = sys.argv[1], sys.argv[2], int(sys.argv[3])
runs = [np.loadtxt(f"{stem}-{p}.txt", ndmin=2) for p in range(procs)]
col = {n: i for i, n in enumerate("wb wbn ref refn".split())}
rng = np.random.default_rng(1)
# name, a, b, target test: (low, high) the ratio must stay within
pairs = [("wulfbench/ref", "wb", "ref", (0, 1.05)), ("wulfbench/ref_native", "wb", "refn", (0, 1.05)),
         ("NATIVE=1/portable", "wbn", "wb", (0.98, 1.02))]
for name, a, b, (lo_t, hi_t) in pairs:
    per = [r[:, col[a]] / r[:, col[b]] for r in runs]
    pooled = np.concatenate(per)
    k = len(pooled) // 5
    trimmed = np.sort(pooled)[k:len(pooled) - k].mean()
    boot = [np.median(np.concatenate([per[i] for i in rng.integers(0, procs, procs)])) for _ in range(2000)]
    lo, hi = np.percentile(boot, [2.5, 97.5])
    meds = [np.median(x) for x in per]
    verdict = ("meets" if lo >= lo_t and hi <= hi_t else "misses" if hi < lo_t or lo > hi_t else "undecided")
    target = f"<= {hi_t}" if lo_t == 0 else f"{lo_t}..{hi_t}"
    print(f"{label:14s} {name:22s} {np.median(pooled):6.3f} {trimmed:7.3f}  CI [{lo:.3f}, {hi:.3f}]"
          f"  processes {min(meds):.3f}..{max(meds):.3f}  target {target}: {verdict}")
PY
      sed -n 's/^batches: /               batches: /p' "$tmp/pair-$prec-$frame-0.err"
    done
  done
fi

if want compute; then
  # Every process runs alone, pinned to one core (BENCH_CPU, default the last), so both sides of a
  # pair see the same core and caches and no process migrates mid-run.
  BENCH_CPU=${BENCH_CPU:-$(($(nproc) - 1))}
  PIN=(taskset -c "$BENCH_CPU")
  command -v taskset >/dev/null || PIN=()
  CROUNDS=${CROUNDS:-11}
  WBN=${WBN:-build-native/wulfbench}
  REFN=${REFN:-build/tests/fft_ref_native}
  echo "== whole compute (window, convert, r2c, magnitudes): wulfbench t_compute against the reference pipeline"
  echo "   --baseline --sweep files --files 64 (5 s files, 44.1 kHz, 16-bit, hop frame/2); medians over $REPS reps"
  echo "   per run; $CROUNDS interleaved rounds, the order rotating each round, every process pinned to CPU"
  echo "   $BENCH_CPU (${PIN[*]:-no taskset})."
  echo "   The reference plans FFTW_PATIENT with its own best batch; 'ref' is built like wulfbench (-O3),"
  echo "   'ref native' with -O3 -march=native, as a user would build it for the machine. wulfbench runs"
  echo "   --plan patient on the reference's wisdom (the same plan), 'measure' is its default planning;"
  echo "   'NATIVE=1' is wulfbench built with make NATIVE=1 ($WBN), against the portable build."
  echo "   Columns: median of paired ratios, 20%-trimmed mean, ratio of minima, p10..p90 of the ratios,"
  echo "   bootstrap 95% interval of the median. Each pair is given twice: by wall time (wulfbench's"
  echo "   t_compute), then by the CPU time the thread ran ('cpu': wulfbench's t_cpu of the whole"
  echo "   repetition, the reference's over its pass), which leaves out what the hypervisor gave to"
  echo "   other guests (steal) and so decides a few per cent on a shared host where wall times cannot."
  printf '%-14s %-26s %6s %7s %6s\n' "" "" "median" "trimmed" "min"
  for prec in $PRECISIONS; do
    for frame in $FRAMES; do
      wis="$tmp/ref-$prec-$frame.wisdom"
      pairs="$tmp/pairs-$prec-$frame"
      : >"$pairs"
      # The first reference run plans PATIENT and leaves the wisdom every later run shares.
      "${PIN[@]}" $REF pipeline "$prec" "$frame" 64 1 "$wis" >/dev/null
      for ((r = 0; r < CROUNDS; r++)); do
        declare -A got=()
        steps=(ref refn wb wbn wbm)
        for ((i = 0; i < ${#steps[@]}; i++)); do
          step=${steps[$(((i + r) % ${#steps[@]}))]}
          case $step in
            ref | refn)
              bin=$REF; [ "$step" = refn ] && bin=$REFN
              out=$("${PIN[@]}" "$bin" pipeline "$prec" "$frame" 64 "$REPS" "$wis")
              got[$step]="$(field "$out" median_s) $(field "$out" cpu_median_s)" ;;
            *)
              bin=$WB plan=(--plan patient --wisdom "$wis")
              [ "$step" = wbn ] && bin=$WBN
              [ "$step" = wbm ] && plan=(--plan measure)
              "${PIN[@]}" "$bin" fft --baseline --sweep files --files 64 --frame "$frame" --precision "$prec" \
                "${plan[@]}" --reps "$REPS" -q --force -o "$tmp/c.h5" >/dev/null
              got[$step]=$(h5med "$tmp/c.h5" t_compute t_cpu) ;;
          esac
        done
        wall="" cpu=""
        for s in wb wbn wbm ref refn; do
          read -r w c <<<"${got[$s]}"
          wall+="$w " cpu+="$c "
        done
        echo "$wall$cpu" >>"$pairs"
        unset got
      done
      ratios "$prec $frame" "$pairs" "wulfbench/ref wb ref wulfbench/ref_native wb refn measure/ref_native wbm refn NATIVE=1/portable wbn wb cpu:wulfbench/ref wbc refc cpu:wulfbench/ref_native wbc refnc cpu:NATIVE=1/portable wbnc wbc"
    done
  done
  kv=$("$PYTHON" -c 'import sys, h5py; print(h5py.File(sys.argv[1]).attrs["kernel_variant"])' "$tmp/c.h5")
  echo "   (kernel variant of the portable build here: $kv)"
fi

if want stft; then
  # The STFT compute against ../shared/ref/ref_stft.c (or STFT_REF), a bare FFTW pipeline built for
  # this machine (-O3 -march=native): s16 times a prescaled window, r2c, sqrt magnitudes into one
  # array. Built here from that file each run; nothing of it is copied into the project.
  STFT_REF=${STFT_REF:-../shared/ref/ref_stft.c}
  if [ ! -r "$STFT_REF" ]; then
    echo "== STFT compute against the reference pipeline: skipped, $STFT_REF is not here (set STFT_REF=FILE)"
  else
    BENCH_CPU=${BENCH_CPU:-$(($(nproc) - 1))}
    PIN=(taskset -c "$BENCH_CPU")
    command -v taskset >/dev/null || PIN=()
    SROUNDS=${SROUNDS:-11}
    # 120 passes (5-7 s a process): the host changes level within a second, and a process of 15
    # passes saw one or two levels where its references saw others; 120 spans the host's mix.
    SREPS=${SREPS:-120}
    WBN=${WBN:-build-native/wulfbench}
    gcc -O3 -march=native -fno-math-errno "$STFT_REF" -o "$tmp/stft_single" -lfftw3f -lfftw3 -lm
    gcc -O3 -march=native -fno-math-errno -DDOUBLE "$STFT_REF" -o "$tmp/stft_double" -lfftw3f -lfftw3 -lm
    echo "== STFT compute: wulfbench fft --baseline --sweep files --files 64 (t_compute) against $STFT_REF"
    echo "   (-O3 -march=native, batch 1, FFTW_PATIENT), wulfbench on the reference's wisdom (--plan patient),"
    echo "   portable and NATIVE=1 ($WBN), and 'measure': the portable build with its default planning, each"
    echo "   process planning afresh; medians over $SREPS reps per process, $SROUNDS rounds, the order of the"
    echo "   builds turning each round, every process pinned to CPU $BENCH_CPU (${PIN[*]:-no taskset})."
    # What moved the rounds was the host: on this VM the same process reads 1.3-1.8x slower for
    # seconds to minutes at a time, the in-cache transform most, and the guest sees no steal time and
    # has no cycle counter. A figure that holds still must not depend on when it was taken. So every
    # wulfbench process runs between two reference processes, and its ratio is taken to the geometric
    # mean of the two: the reference is the probe, with the same work. A pair counts when the two
    # references agree within SMARGIN; otherwise the host moved during it, and it is taken again (the
    # later reference starts the next try), up to STRIES tries.
    STRIES=${STRIES:-8}
    SMARGIN=${SMARGIN:-0.03}
    # The references agreeing does not show that the process between them saw their host: the host
    # can be fast for one process's 6 s and slow for the 6 s on either side. Both run the same FFTW
    # plan (the reference's wisdom) on the same frames, so the process's transforms must also take
    # what the references' took, within TMARGIN; otherwise it ran on another level of the host.
    TMARGIN=${TMARGIN:-0.05}
    # Nor do the host's levels slow both programs alike, so rounds on two levels differ in ratio.
    # For its first LTRIES tries a process also counts only when its references ran within SLEVEL of
    # the fastest reference so far: on the level the host keeps coming back to. A host that stays
    # on another level is waited for LTRIES tries at most, then taken as it is.
    SLEVEL=${SLEVEL:-0.10}
    LTRIES=${LTRIES:-3}
    SRETAKES=${SRETAKES:-$SROUNDS}
    echo "   Each wulfbench process runs between two reference processes and counts when the two agree"
    echo "   within $(awk -v m="$SMARGIN" 'BEGIN {print 100 * m}')% and its transforms (portable, NATIVE=1: the same plan) take theirs within $(awk -v m="$TMARGIN" 'BEGIN {print 100 * m}')%, and for its first"
    echo "   $LTRIES tries when both ran within $(awk -v m="$SLEVEL" 'BEGIN {print 100 * m}')% of the fastest reference so far (else taken again, up to"
    echo "   $STRIES tries). ratio: wulfbench over the geometric mean"
    echo "   of its two references, median over rounds [min, max] (target <= 1.05); spread: the rounds'"
    echo "   lowest and highest ratio against their median (target within +-5%). transform: FFTW's execute"
    echo "   calls alone (t_fft; the reference's tfft); rest: convert and window before, magnitudes after."
    echo "   Rounds whose references ran off the run's fastest level are taken again at the end ($LTRIES tries"
    echo "   each in turn, until $SRETAKES in all). A second line gives the rounds whose references both ran within $(awk -v m="$SLEVEL" 'BEGIN {print 100 * m}')% of the fastest reference run: one level."
    # stft_step STEP PREC: one timed process; prints "T_COMPUTE T_FFT T_MIN": the medians over
    # SREPS passes of the whole compute and of its transforms, and the fastest pass.
    stft_step() {
      local step=$1 prec=$2 out bin plan
      if [ "$step" = ref ]; then
        out=$(WISDOM=$wis "${PIN[@]}" "$tmp/stft_$prec" pipeline 64 5 1 patient "$SREPS" 0)
        for k in t_med tfft_med t_min; do sed -n "s/.* $k=\([0-9.e-]*\) .*/\1/p" <<<"$out"; done | tr '\n' ' '
        echo
      else
        bin=$WB plan=(--plan patient --wisdom "$tmp/stft-run.wisdom")
        [ "$step" = wbn ] && bin=$WBN
        # The default: every process plans afresh (FFTW_MEASURE), as a user's two runs do.
        [ "$step" = wbm ] && plan=()
        cp "$wis" "$tmp/stft-run.wisdom"
        "${PIN[@]}" "$bin" fft --baseline --sweep files --files 64 --precision "$prec" "${plan[@]}" \
          --reps "$SREPS" -q --force -o "$tmp/s.h5" >/dev/null
        h5med "$tmp/s.h5" t_compute t_fft t_compute:min
      fi
    }
    # agree STEP BEFORE TOOK AFTER TRY: the two references' t_compute within SMARGIN of each other,
    # the process's transforms within TMARGIN of theirs (geometric mean), and up to LTRIES, both
    # references on the fastest level so far. Sets why: ref, fft or level. The transforms are a
    # probe of the host only where they run the references' plan: not for measure (step wbm),
    # which plans afresh; on a slow level its plans ran 0.85 of the reference's wisdom's.
    agree() {
      why=$(awk -v b="$2" -v w="$3" -v a="$4" -v m="$SMARGIN" -v tm="$TMARGIN" -v own="$([ "$1" = wbm ] && echo 1 || echo 0)" 'BEGIN {
        split(b, B, " "); split(w, W, " "); split(a, A, " "); g = sqrt(B[2] * A[2])
        if (!(B[1] <= (1 + m) * A[1] && A[1] <= (1 + m) * B[1])) print "ref"
        else if (!own && !(W[2] <= (1 + tm) * g && g <= (1 + tm) * W[2])) print "fft" }')
      if [ -z "$why" ] && [ "$5" -le "$LTRIES" ] && off_level "$2" "$4"; then why=level; fi
      [ -z "$why" ]
    }
    # off_level BEFORE AFTER: either reference's t_compute more than SLEVEL over the fastest so far.
    off_level() {
      awk -v b="${1%% *}" -v a="${2%% *}" -v f="$fastest" -v lv="$SLEVEL" 'BEGIN { exit !(b > (1 + lv) * f || a > (1 + lv) * f) }'
    }
    # fastest T: the fastest reference t_compute so far, given the reference T just run.
    lower() { fastest=$(awk -v f="$fastest" -v t="${1%% *}" 'BEGIN { print (f == "" || t < f) ? t : f }'); }
    # bracket STEP TRY: one process of STEP after the reference in before, and the reference after
    # it (sets took and after); true when the process counts (agree).
    bracket() {
      took=$(stft_step "$1" "$prec")
      after=$(stft_step ref "$prec")
      lower "$after"
      agree "$1" "$before" "$took" "$after" "$2"
    }
    for prec in $PRECISIONS; do
      wis="$tmp/stft-$prec.wisdom"
      WISDOM=$wis "${PIN[@]}" "$tmp/stft_$prec" pipeline 64 5 1 patient 1 0 >/dev/null
      rows="$tmp/stft-$prec.rows"
      : >"$rows"
      retaken=0 retaken_fft=0 retaken_level=0 kept=0 fastest=
      before=$(stft_step ref "$prec")
      lower "$before"
      for ((r = 0; r < SROUNDS; r++)); do
        steps=(wb wbn wbm)
        for ((i = 0; i < ${#steps[@]}; i++)); do
          step=${steps[$(((i + r) % ${#steps[@]}))]}
          for ((try = 1; ; try++)); do
            ok=0
            bracket "$step" "$try" && { ok=1; break; }
            if [ "$try" -ge "$STRIES" ]; then kept=$((kept + 1)); break; fi
            retaken=$((retaken + 1))
            [ "$why" = fft ] && retaken_fft=$((retaken_fft + 1))
            [ "$why" = level ] && retaken_level=$((retaken_level + 1))
            before=$after
          done
          echo "$step $ok $before $took $after" >>"$rows"
          before=$after
        done
      done
      # The first rounds cannot know the level the run will find fastest. Rounds whose references
      # ran off it, and rounds kept after STRIES tries, are taken again at the end, up to LTRIES
      # tries each in turn, and replace their rows when they count; while SRETAKES tries in all are
      # not spent, the rounds still off go round again.
      releveled=0 spent=0 todo=()
      mapfile -t lines <"$rows"
      for ((n = 1; n <= ${#lines[@]}; n++)); do
        read -r step counted b1 _ _ _ _ _ a1 _ _ <<<"${lines[n - 1]}"
        [ "$counted" = 0 ] || off_level "$b1" "$a1" || continue
        todo+=("$n $step")
      done
      off=${#todo[@]}
      while [ ${#todo[@]} -gt 0 ] && [ "$spent" -lt "$SRETAKES" ]; do
        left=()
        for item in "${todo[@]}"; do
          read -r n step <<<"$item"
          for ((try = 1; try <= LTRIES; try++)); do
            [ "$spent" -lt "$SRETAKES" ] || break
            spent=$((spent + 1))
            if bracket "$step" 1; then
              sed -i "${n}s/.*/$step 1 $before $took $after/" "$rows"
              releveled=$((releveled + 1)) before=$after
              continue 2
            fi
            before=$after
          done
          left+=("$item")
        done
        todo=("${left[@]}")
      done
      [ -n "${STFT_KEEP:-}" ] && cp "$rows" "$STFT_KEEP/stft-$prec.rows"
      still=$(awk '$2 == 0' "$rows" | wc -l)
      echo "   $prec: $retaken process(es) taken again: $retaken_fft because their transforms were not their references', $retaken_level because"
      echo "   the host was off its fastest level; $kept kept after $STRIES tries. At the end, $off round(s) off the run's fastest level"
      echo "   or kept: $releveled taken again and counted ($spent tries), $still still kept$([ "$still" -gt 0 ] && echo ' (marked * below)')"
      "$PYTHON" - "$prec" "$rows" "$SLEVEL" "$fastest" <<'PY'
import sys
import numpy as np
prec, path, LEVEL, FASTEST = sys.argv[1], sys.argv[2], float(sys.argv[3]), float(sys.argv[4])
rows = [line.split() for line in open(path)]
names = {"wb": "wulfbench", "wbn": "NATIVE=1", "wbm": "measure"}
# A row: step, counted (1) or kept after the last try (0), then median, transform median and
# fastest pass of the reference before, the process, and the reference after.
v = np.array([[float(x) for x in r[2:11]] for r in rows])
gm = lambda a, b: np.sqrt(a * b)


def spread(a):
    """The median of a, and its lowest and highest value against that median."""
    m = np.median(a)
    return m, a.min() / m - 1, a.max() / m - 1


t_ref, f_ref, m_ref = gm(v[:, 0], v[:, 6]), gm(v[:, 1], v[:, 7]), gm(v[:, 2], v[:, 8])
_, lo, hi = spread(t_ref)
print(f"   {prec:6s} {'ref':10s} t_compute {1e3 * np.median(t_ref):8.3f} ms  transform {1e3 * np.median(f_ref):7.3f} ms"
      f"  rest {1e3 * np.median(t_ref - f_ref):7.3f} ms  (the host moved it {100 * lo:+.1f}% {100 * hi:+.1f}%)")
for step, name in names.items():
    sel = np.array([r[0] == step for r in rows])
    if not sel.any():
        continue
    w = v[sel, 3:6]
    r = w[:, 0] / t_ref[sel]
    rf = w[:, 1] / f_ref[sel]
    rr = (w[:, 0] - w[:, 1]) / (t_ref[sel] - f_ref[sel])
    rm = w[:, 2] / m_ref[sel]
    med, slo, shi = spread(r)
    held = "within" if max(-slo, shi) <= 0.05 else "OUTSIDE"
    meets = "meets" if med <= 1.05 else "misses"
    kept = sum(rows[i][1] == "0" for i in np.flatnonzero(sel))
    print(f"   {prec:6s} {name + '/ref':14s} {med:6.3f} [{r.min():.3f}, {r.max():.3f}] (target <= 1.05: {meets})"
          f"  spread {100 * slo:+5.1f}% {100 * shi:+5.1f}% ({held} +-5%)"
          f"  transform {np.median(rf):6.3f}  rest {np.median(rr):6.3f}"
          f"  fastest passes {np.median(rm):6.3f} [{rm.min():.3f}, {rm.max():.3f}]"
          f"  t_compute {1e3 * np.median(w[:, 0]):7.3f} ms{f'  *{kept} kept' if kept else ''}")
    # The host's levels do not slow both programs alike (on its slow level both sides' transforms
    # took 1.65x as long, wulfbench's convert, window and magnitudes 1.45x, the reference's 1.13x),
    # so rounds on different levels differ in ratio. The rounds whose references both ran within
    # LEVEL of the run's fastest reference (off_level's rule, discarded tries included) are on one level.
    level = (v[sel, 0] <= (1 + LEVEL) * FASTEST) & (v[sel, 6] <= (1 + LEVEL) * FASTEST)
    q = r[level]
    if 0 < level.sum() < sel.sum():
        qm, qlo, qhi = spread(q)
        print(f"   {'':6s} {'':14s} {qm:6.3f} [{q.min():.3f}, {q.max():.3f}] over the {level.sum()} rounds on the run's fastest"
              f" level  spread {100 * qlo:+5.1f}% {100 * qhi:+5.1f}%")
PY
    done
  fi
fi

if want whole; then
  echo "== --mode whole, one file of 220501 samples (23 x 9587): wulfbench t_compute against a bare r2c of"
  echo "   that length planned with FFTW_MEASURE, wulfbench running the same plan (the r2c's wisdom);"
  echo "   $ROUNDS interleaved rounds of $REPS reps"
  sox -n -r 44100 -b 16 -c 1 "$tmp/long.wav" synth 220501s sine 1000 vol 0.5
  printf '%-34s %13s %13s %s\n' "" "wulfbench" "bare r2c" "ratio [min, max]"
  for prec in $PRECISIONS; do
    pairs="$tmp/whole-$prec"
    wis="$tmp/whole-$prec.wisdom"
    : >"$pairs"
    for ((r = 0; r < ROUNDS; r++)); do
      out=$($REF r2c "$prec" 220501 "$REPS" measure "$wis")
      $WB fft --baseline --mode whole --input "$tmp/long.wav" --precision "$prec" --wisdom "$wis" --reps "$REPS" \
        -q --force -o "$tmp/w.h5" >/dev/null
      echo "$(h5med "$tmp/w.h5" t_compute) $(field "$out" median_s)" >>"$pairs"
    done
    summary "$prec, 220501 points" "$pairs"
  done
fi

if want phase; then
  echo "== FFT phase only: wulfbench t_fft (time inside FFTW execute) against a bare batch-16 FFTW loop"
  echo "   over the same 6784 frames of 4096, single precision. This compares a part with a part; the"
  echo "   whole-compute figures above are the honest ones."
  $WB fft --baseline --sweep files --files 64 --reps "$REPS" -q --force -o "$tmp/p.h5" >/dev/null
  out=$($REF phase 6784 4096 "$REPS")
  "$PYTHON" - "$tmp/p.h5" "$(field "$out" gflops)" <<'PY'
import sys
import h5py
import numpy as np
g = h5py.File(sys.argv[1])["fft/p000"]
gf = g["flops"][0] / np.median(g["t_fft"][:, 0]) / 1e9
ref = float(sys.argv[2])
print(f"   GFLOPS inside FFTW, wulfbench {gf:.2f}, bare loop {ref:.2f}, ratio {gf / ref:.2f} (was the >= 0.95 target)")
PY
fi

if want memory; then
  echo "== root memory: peak resident memory of --baseline --sweep files --files N (reps 1, no warm-up)"
  echo "   against audio bytes, least-squares fit RSS = slope * audio_bytes + constant"
  for result in spectra peaks; do
    fit="$tmp/mem-$result"
    : >"$fit"
    for n in $MEM_FILES; do
      /usr/bin/time -v $WB fft --baseline --sweep files --files "$n" --result "$result" --reps 1 --warmup 0 -q \
        --force -o "$tmp/m.h5" >/dev/null 2>"$tmp/time.txt"
      kb=$(grep 'Maximum resident set size' "$tmp/time.txt" | grep -oE '[0-9]+$')
      audio=$("$PYTHON" -c 'import sys, h5py; a = h5py.File(sys.argv[1])["fft/p000"].attrs
print(int(a["input_bytes"]), int(a["root_bytes_estimate"]))' "$tmp/m.h5")
      echo "$audio $((kb * 1024))" >>"$fit"
    done
    "$PYTHON" - "$result" "$fit" <<'PY'
import sys
import numpy as np
result, path = sys.argv[1], sys.argv[2]
a = np.loadtxt(path, ndmin=2)
audio, est, rss = a[:, 0], a[:, 1], a[:, 2]
slope, const = np.polyfit(audio, rss, 1)
target = {"spectra": 3.1, "peaks": 1.1}[result]
rows = ", ".join(f"{x / 1e6:.0f} MB -> {y / 1e6:.0f} MB" for x, y in zip(audio, rss))
worst = np.max(np.abs(est - rss) / rss)
print(f"   {result:8s} {slope:5.2f} bytes per audio byte + {const / 1e6:6.1f} MB   (target <= {target})   [{rows}]")
print(f"            the --max-memory estimate is within {100 * worst:.0f}% of the measured peak (target 20%)")
PY
  done
fi

if want cluster; then
  echo "== the first issue's figures (64 files of 5 s, frame 4096, single precision, $REPS reps; medians)"
  $WB fft --baseline --sweep files --files 64 --reps "$REPS" -q --force -o "$tmp/base.h5" >/dev/null
  mpirun -np 2 $WB fft --sweep files --files 64 --reps "$REPS" -q -o "$tmp/np2.h5" >/dev/null
  mpirun -np 2 $WB fft --sweep files --files 64 --reps "$REPS" --local mpi -q -o "$tmp/np2mpi.h5" >/dev/null
  bytes=$("$PYTHON" -c 'import h5py,sys; print(int(h5py.File(sys.argv[1])["fft/p000/bytes_in"][1]))' "$tmp/np2mpi.h5")
  sr=$(mpirun -np 2 build/tests/sendrecv_ref "$bytes" "$REPS")
  "$PYTHON" - "$tmp/base.h5" "$tmp/np2.h5" "$tmp/np2mpi.h5" "$sr" <<'PY'
import sys
import h5py
import numpy as np

b, p, pm = (h5py.File(a)["fft/p000"] for a in sys.argv[1:4])
sr = dict(zip(sys.argv[4].split()[::2], sys.argv[4].split()[1::2]))
kb = lambda g: g.attrs["input_bytes"] / 1000 / np.median(g["t_total"][()])
print(f"   kB/s --baseline {kb(b):.0f}, mpirun -np 2 {kb(p):.0f}: ratio {kb(p) / kb(b):.2f} (target >= 1.7)")
print(f"   (np 2 with --local mpi, every byte as a message: {kb(pm):.0f} kB/s, ratio {kb(pm) / kb(b):.2f})")
bytes_in = pm["bytes_in"][1]
dist = np.median(pm["t_distribute"][:, 1])
mbps = bytes_in / dist / 1e6
print(f"   distribution to rank 1 (--local mpi): {bytes_in} bytes in {dist * 1e3:.3f} ms = {mbps:.1f} MB/s;"
      f" plain MPI_Send/Recv {float(sr['MBps']):.1f} MB/s (ratio {mbps / float(sr['MBps']):.2f})")
PY
  echo "   make run, timed (target under 2 minutes):"
  start=$(date +%s.%N)
  make --no-print-directory run RESULTS="$tmp/run" >"$tmp/run.log" 2>&1 || { tail -20 "$tmp/run.log"; exit 1; }
  end=$(date +%s.%N)
  "$PYTHON" -c "import sys; print(f'   make run took {float(sys.argv[2]) - float(sys.argv[1]):.1f} s')" "$start" "$end"
fi
