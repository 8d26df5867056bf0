"""What `transfer --pairs all` must leave in its file: every ordered pair of the ranks measured, with
finite times, and the pair map filled off its diagonal. Shared by the MPI tests and tests/arm."""
from __future__ import annotations

import h5py
import numpy as np

# The run both check at np 3 (with -o FILE): each ordered pair in turn, two sizes.
EVERY_PAIR = ("transfer", "--pairs", "all", "--tests", "pingpong", "-m", "8,1k", "-i", "5", "-x", "1", "-q")

def pair_problems(f: h5py.File, nranks: int, test: str = "pingpong") -> list[str]:
    """One line per problem with test's pairs in the open result file f; [] when every pair is there."""
    g = f.get(f"transfer/{test}")
    m = f.get("transfer/pairs_all")
    if g is None or "pairs" not in g or m is None:
        return [f"no /transfer/{test}/pairs or /transfer/pairs_all"]
    want = {(a, b) for a in range(nranks) for b in range(nranks) if a != b}
    pairs = [tuple(int(r) for r in p) for p in g["pairs"][()]]
    problems = []
    if sorted(pairs) != sorted(want):
        problems.append(f"pairs {sorted(set(want) - set(pairs))} missing, "
                        f"{sorted(p for p in set(pairs) if p not in want or pairs.count(p) > 1)} unexpected")
    t_med = np.atleast_2d(g["t_med"][()])
    for p, (a, b) in enumerate(pairs):
        col = t_med[:, p] if p < t_med.shape[1] else np.array([np.nan])
        if not np.all(np.isfinite(col) & (col > 0)):
            problems.append(f"pair {a}->{b}: t_med {col.tolist()}")
    for name in ("latency_s", "bandwidth_Bps"):
        v = m[name][()]
        if v.shape != (nranks, nranks):
            problems.append(f"pairs_all/{name} is {v.shape}, not ({nranks}, {nranks})")
            continue
        off = ~np.eye(nranks, dtype=bool)
        bad = [(int(a), int(b)) for a, b in zip(*np.nonzero(off & ~(np.isfinite(v) & (v > 0))))]
        if bad:
            problems.append(f"pairs_all/{name} not measured for {bad}")
    return problems
