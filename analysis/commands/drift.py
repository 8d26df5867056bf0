"""How far this machine's speed moved between two baseline runs of the same points.

    /usr/bin/python3 -m analysis.drift BEFORE.h5 AFTER.h5

`make run` brackets the cluster run with two --baseline runs and prints this line, so a reader can see
whether a comparison across runs is worth its salt. The ratio is after / before of each common point's
median t_total; above 1 means the machine got slower.
"""
from __future__ import annotations

import argparse
import sys

from ..derive.drift import drift


def main(argv: list[str] | None = None) -> int:
    p = argparse.ArgumentParser(prog="python3 -m analysis.drift", description=__doc__.split("\n\n")[0])
    p.add_argument("before", help="the baseline result file measured before the cluster run")
    p.add_argument("after", help="the same baseline measured after it")
    args = p.parse_args(argv)
    try:
        med, lo, hi, n = drift(args.before, args.after)
    except (OSError, KeyError) as e:
        print(f"drift: cannot read the baselines: {e}", file=sys.stderr)
        return 1
    if n == 0:
        print("baseline drift: the two baselines share no point", file=sys.stderr)
        return 1
    print(f"baseline drift: after/before median t_total {med:.3f} (min {lo:.3f}, max {hi:.3f}) over {n} points"
          f"{'; the machine changed speed by more than 5%: cross-run figures are doubtful' if abs(med - 1) > 0.05 else ''}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
