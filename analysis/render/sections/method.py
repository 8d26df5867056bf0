"""How the numbers are made (fixed text)."""

from __future__ import annotations

from ..document import Report


def method_section(rep: Report, _ctx: object = None) -> None:
    """Fixed text: it reads no figure."""
    sec = rep.section("method", "How the numbers are made", "Method")
    sec.bullets([
        "Every time is the median over the recorded repetitions (warm-up repetitions are never "
        "recorded). Per-rank times are first reduced to the slowest rank of each repetition: "
        "distribution and gather over all ranks, compute and FFT over the ranks that compute.",
        "95 % confidence interval of the median: distribution-free, from order statistics. "
        "With n repetitions the count below the true median is Binomial(n, ½); the interval "
        "[x₍ⱼ₎, x₍ₙ₊₁₋ⱼ₎] with the largest j whose coverage 1 − 2·P(B ≤ j−1) is at least 95 %. "
        "For n < 6 no pair reaches 95 %; the report then gives [min, max] and states its "
        "coverage 1 − 2¹⁻ⁿ.",
        "CV = sample standard deviation / mean of t_total; a point with CV > 5 % is flagged "
        "unstable (it is still used). With --reps auto a point that stopped before its CI "
        "target is flagged too.",
        "Overhead = t_total − the slowest rank's distribute − compute − gather, per repetition; "
        "each phase column is then a median over repetitions, so the columns are medians of "
        "different repetitions and add up only nearly to the median t_total.",
        "Processing rate = input_bytes / 1000 / median t_total (kB/s; kB = 1000 bytes "
        "everywhere in this report). GFLOPS = Σ flops / median span from the first rank's first "
        "transform to the last rank's last, on the aligned clocks / 10⁹ (files before "
        "2026-12-07: over the slowest rank's t_fft); every rate is held to its ceiling "
        "(docs/reading.md, \"Ceilings\").",
        "Paired speedup: the median over repetitions of baseline t_total[r] / cluster "
        "t_total[r], both measured in the same job, alternating; 95 % CI of that median. "
        "Cross-run speedup: baseline median / cluster median, for points that match on "
        "scenario, mode, precision, frame, file count and seconds per file; its CI combines "
        "both 95 % intervals (and both baselines' when two bracket the run). E = S/p and "
        "Karp–Flatt e = (1/S − 1/p)/(1 − 1/p) with p the ranks that compute. E > 100 % or "
        "e < 0 is flagged implausible, never a finding.",
        "Crossover: the smallest measured size or file count from which the cluster wins "
        "(S > 1) at every larger point; its CI is the same rule on the CI ends.",
        "Forecast: the model is fitted on every node count but the largest and must predict "
        "the largest within 25 % at every point; only then is a forecast drawn, with that "
        "error beside it. It is never a finding.",
        "Straggler: a computing rank whose median t_compute, or median t_distribute + "
        "t_compute + t_gather, is more than 20 % above the median of that quantity over the "
        "computing ranks (needs two or more computing ranks).",
        "Invalid data (root verified=0 or status 'invalid', or a point's verify/passed=0) "
        "is listed as INVALID and never enters figures, comparisons, fits or findings.",
        "Load: warm-up requests (warmup=1) are excluded; latency is t_done − t_submit of finished "
        "requests; the saturation point is taken from the /load attributes when present, "
        "otherwise recomputed as the highest offered load before the first unhealthy step.",
    ])
