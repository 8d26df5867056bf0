"""A machine's speed change between two baseline runs of the same points (`make run` prints it):
after / before of each common point's median t_total; above 1 means the machine got slower."""

from __future__ import annotations

import numpy as np

from ..read import records


def point_medians(path: str) -> dict[tuple, float]:
    """Median t_total of every fft point, keyed by what the point measured."""
    out: dict[tuple, float] = {}
    for key, t in records.fft_totals(path):
        t = t[np.isfinite(t) & (t > 0)]
        if t.size:
            out[key] = float(np.median(t))
    return out


def drift(before: str, after: str) -> tuple[float, float, float, int]:
    """(median, min, max) of after/before over the common points, and how many there were."""
    b, a = point_medians(before), point_medians(after)
    ratios = [a[k] / b[k] for k in sorted(set(a) & set(b))]
    if not ratios:
        return float("nan"), float("nan"), float("nan"), 0
    return float(np.median(ratios)), float(min(ratios)), float(max(ratios)), len(ratios)
