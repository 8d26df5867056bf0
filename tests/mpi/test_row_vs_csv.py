"""stdout and the report say the same thing (issue 32): for every fft, transfer, load and dfft point
of a short `wulfbench suite`, each column of its printed row equals the report's CSV value for the
same point, to the digits the row prints. A column the CSV has no counterpart for is named in
UNCOMPARED, so a new column cannot slip by."""
from __future__ import annotations

import csv
import subprocess
import sys
from pathlib import Path

import pytest

from conftest import ROOT, run_wb

# stdout column -> (CSV column, scale to the printed unit, printed decimals); None: text compared as said
FFT = {"scenario": ("scenario", None, None), "files": ("nfiles", 1, 0), "seconds": ("seconds_per_file", 1, 2),
       "ranks": ("nranks", 1, 0), "audio_bytes": ("input_bytes", 1, 0),
       "t_read": ("read_median_s", 1e3, 3), "t_dist": ("distribute_median_s", 1e3, 3),
       "t_comp": ("compute_median_s", 1e3, 3), "t_fft": ("fft_median_s", 1e3, 3),
       "t_gather": ("gather_median_s", 1e3, 3), "t_over": ("overhead_median_s", 1e3, 3),
       "t_total": ("total_median_s", 1e3, 3), "kB/s": ("kBps", 1, 1), "GFLOPS": ("gflops", 1, 2),
       "verify": ("status", None, None)}
TRANSFER = {"reps": ("reps", 1, 0), "t_avg[us]": ("t_avg_s", 1e6, 2), "t_min[us]": ("t_min_s", 1e6, 2),
            "t_max[us]": ("t_max_s", 1e6, 2), "t_med[us]": ("t_med_s", 1e6, 2), "t_p95[us]": ("t_p95_s", 1e6, 2),
            "MB/s": ("bandwidth_Bps", 1e-6, 2), "cv[%]": ("cv", 100, 2), "flag": ("unstable", None, None)}
LOAD = {"clients": ("clients", 1, 0), "offered/s": ("offered", 1, 2), "completed/s": ("throughput", 1, 2),
        "submitted": ("submitted", 1, 0), "rejected": ("rejected", 1, 0), "unfinished": ("unfinished", 1, 0),
        "p50_ms": ("p50_s", 1e3, 1), "p95_ms": ("p95_s", 1e3, 1), "p99_ms": ("p99_s", 1e3, 1),
        "max_ms": ("max_s", 1e3, 1), "verdict": ("healthy", None, None)}
DFFT = {"shape": ("shape", None, None), "kind": ("kind", None, None), "prec": ("precision", None, None),
        "ranks": ("nranks", 1, 0), "t_total": ("total_median_s", 1e3, 3), "t_local": ("local_fft_s", 1e3, 3),
        "t_transp": ("transpose_s", 1e3, 3), "transp%": ("transpose_share", 100, 1), "GFLOPS": ("gflops", 1, 3),
        "MB/s/rank": ("transpose_min_Bps", 1e-6, 1), "verify": ("verified", None, None)}
# Columns that name the point (the key of the match), and the direction, which the CSV does not split.
UNCOMPARED = {"point", "bytes", "step", "dir"}


def sections(stdout: str) -> list[tuple[str, list[str], list[str]]]:
    """(kind, header columns, rows) of every table stdout prints; kind is fft, dfft, load or a transfer
    test's name."""
    out: list[tuple[str, list[str], list[str]]] = []
    lines = stdout.splitlines()
    test = ""
    for i, line in enumerate(lines):
        if line.startswith("# ") and ":" in line and not line.startswith("# wulfbench"):
            test = line[2:].split(":", 1)[0]
        if line.startswith("#point scenario"):
            kind = "fft"
        elif line.startswith("#point shape"):
            kind = "dfft"
        elif line.startswith("# step"):
            kind = "load"
        elif line.startswith("#") and line[1:].split()[:2] == ["bytes", "reps"]:
            kind = test
        else:
            continue
        header = line[1:].split()
        rows = []
        for row in lines[i + 1:]:
            if not row.strip() or (row.startswith("#") and not row.startswith("#      ")) or row.startswith("saturation"):
                break
            if not row.startswith("#"):
                rows.append(row)
        out.append((kind, header, rows))
    return out


def split_row(kind: str, header: list[str], row: str) -> dict[str, str]:
    words = row.split()
    if kind == "load":  # the verdict is text with spaces
        words = row.split(None, len(header) - 1)
    elif kind not in ("fft", "dfft"):  # transfer: "unstable" after the columns, or nothing
        header = header + ["flag"]
        words = words + [""] * (len(header) - len(words))
    assert len(words) == len(header), (kind, header, row)
    return dict(zip(header, words))


def same(printed: str, value: str, scale: float, digits: int) -> bool:
    """The CSV's raw value, scaled, is what the row prints to its digits (half a unit of the last one)."""
    if value == "":
        return printed.lower() in ("nan", "-", "–")
    want = float(value) * scale
    return abs(float(printed) - want) <= 0.5 * 10.0 ** -digits * (1 + 1e-6) + 1e-12 * abs(want)


def text_same(column: str, printed: str, value: str) -> bool:
    if column == "verify":  # fft: status (ok, unstable, INVALID ...); dfft: passed / INVALID
        return (printed == "ok") == (not value.startswith("INVALID") and value != "not checked")
    if column == "flag":
        return (printed == "unstable") == value.startswith("unstable")
    if column == "verdict":
        return (printed == "ok") == (value == "yes") and (value == "yes" or value[4:].rstrip(")") in printed)
    return printed == value


@pytest.fixture(scope="module")
def suite(tmp_path_factory):
    d = tmp_path_factory.mktemp("rowcsv")
    h5 = d / "suite.h5"
    r = run_wb(2, "suite", "--reps", "3", "--warmup", "0", "-o", str(h5), timeout=300)
    assert r.returncode == 0, r.stderr
    rep = d / "report"
    p = subprocess.run([sys.executable, "-m", "analysis.report", str(h5), "-o", str(rep), "-q"], cwd=ROOT,
                       capture_output=True, text=True, timeout=300)
    assert p.returncode == 0, p.stderr
    return r.stdout, rep


def read_csv(path: Path) -> list[dict[str, str]]:
    with open(path, newline="", encoding="utf-8") as fh:
        return list(csv.DictReader(fh))


def test_every_printed_column_equals_the_reports_csv(suite):
    stdout, rep = suite
    fft = {r["point"]: r for r in read_csv(rep / "fft_points.csv")}
    dfft = {r["point"]: r for r in read_csv(rep / "dfft.csv")}
    for r in dfft.values():
        r["transpose_share"] = str(float(r["transpose_s"]) / float(r["total_median_s"])) if r["transpose_s"] else ""
    load = {r["step"]: r for r in read_csv(rep / "load_steps.csv")}
    transfer = {(r["test"], int(float(r["bytes"]))): r
                for name in ("transfer_p2p.csv", "transfer_collectives.csv") for r in read_csv(rep / name)}
    points = columns = 0
    wrong: list[str] = []
    kinds: set[str] = set()
    for kind, header, rows in sections(stdout):
        spec = FFT if kind == "fft" else DFFT if kind == "dfft" else LOAD if kind == "load" else TRANSFER
        for row in rows:
            cells = split_row(kind, header, row)
            if kind in ("fft", "dfft"):
                key, table = f"p{int(cells['point']):03d}", fft if kind == "fft" else dfft
            elif kind == "load":
                key, table = cells["step"], load
            else:
                key, table = (kind, int(cells["bytes"])), transfer
            assert key in table, f"{kind} {key}: printed, but not in the report's CSV"
            csv_row = table[key]
            points += 1
            kinds.add(kind if kind in ("fft", "dfft", "load") else "transfer")
            for column, printed in cells.items():
                if column in UNCOMPARED:
                    continue
                assert column in spec, f"{kind}: column {column} has no CSV counterpart named"
                name, scale, digits = spec[column]
                ok = text_same(column, printed, csv_row[name]) if scale is None else \
                    same(printed, csv_row[name], scale, digits)
                columns += 1
                if not ok:
                    wrong.append(f"{kind} {key} {column}: printed {printed!r}, CSV {name} = {csv_row[name]!r}")
    print(f"\nrow vs CSV: {points} points, {columns} columns compared")
    assert kinds == {"fft", "transfer", "load", "dfft"}, kinds
    assert not wrong, "\n".join(wrong)
