"""Check a result file left by a failed, killed or full-disk run: it opens, every dataset reads, the
points_completed first points are there, and so are the points named on the command line (those the run
printed). Usage: check_file.py [--allow-last] FILE [POINT_ID ...]; exit 0 or 1.
--allow-last: the last printed point may be missing. bench_fft prints a point's row just before it
flushes the point, so a kill or a full disk in between loses a printed point; drop the flag once the row
is printed after the flush."""
from __future__ import annotations

import sys

import h5py


def main(argv: list[str]) -> int:
    allow_last = "--allow-last" in argv
    args = [a for a in argv[1:] if a != "--allow-last"]
    path, want = args[0], [int(a) for a in args[1:]]
    try:
        f = h5py.File(path, "r")
    except OSError as e:
        print(f"{path}: does not open: {e}")
        return 1
    with f:
        bad: list[str] = []

        def visit(name: str, obj: object) -> None:
            if isinstance(obj, h5py.Dataset):
                try:
                    obj[()]
                except (OSError, KeyError, RuntimeError) as e:
                    bad.append(f"{name}: {e}")

        try:
            f.visititems(visit)
        except (OSError, KeyError, RuntimeError) as e:
            bad.append(f"walk: {e}")
        have = set(f["fft"].keys()) if "fft" in f else set()
        n_done = int(f.attrs.get("points_completed", 0))
        if f.attrs.get("subcommand") != "fft":
            # Only fft names its points p000, p001, ... and prints their ids first on a row.
            want, n_done = [], 0
        if allow_last and want:
            want = want[:-1]
        missing = [p for p in sorted(set(want) | set(range(n_done))) if f"p{p:03d}" not in have]
        if missing:
            bad.append(f"printed points missing: {missing}")
        # /hosts is flushed before the first point; a kill in the first moments may come before it.
        if "hosts" not in f and (want or n_done):
            bad.append("no /hosts")
        if bad:
            print(f"{path}: " + "; ".join(bad))
            return 1
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv))
