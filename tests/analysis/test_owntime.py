"""The run's own time: the windows' one rule (analysis.derive.owntime.windows_s) on a file whose every
window has a known length, the split of the wall time, and the report's table of it."""
from __future__ import annotations

import csv
import math

import h5py
import numpy as np
import pytest

import fixtures
from analysis.derive import owntime
from analysis.read.owntime import read_own
from conftest import run_cli

T0 = 1.7e9
TIMELINE = {"t_main_utc": T0, "t_run_start_utc": T0 + 4.0, "t_run_end_utc": T0 + 100.0,
            "t_close_utc": T0 + 100.5, "own_plan_s": 7.0, "own_clock_align_s": 0.5, "own_write_s": 1.25,
            "peak_rss_rank0_bytes": 120e6, "peak_rss_max_bytes": 150e6, "peak_rss_max_rank": np.int64(3)}


def windowed(path, timeline=True) -> dict[str, float]:
    """A file holding one window of each kind, of known length; returns the seconds by kind."""
    with h5py.File(path, "w") as f:
        for k, v in (TIMELINE.items() if timeline else ()):
            f.attrs[k] = v
        p = f.create_group("fft/p000")
        p["t_start_utc"], p["t_end_utc"] = [T0 + 10, T0 + 20], [T0 + 11, T0 + 22]  # 1 + 2
        p["baseline/t_start_utc"], p["baseline/t_end_utc"] = [T0 + 12], [T0 + 12.5]  # 0.5
        p["verify/passed"] = 1
        d = f.create_group("dfft/p000")
        d["t_start_utc"], d["t_end_utc"] = [T0 + 30], [T0 + 30.25]  # 0.25
        for sid, end in (("s000", 4.0), ("s001", 2.0)):
            s = f.create_group(f"load/{sid}")
            s.attrs["t_end_s"] = end
            # The step's power window also holds its setup and clock probes: not the rule's.
            s["t_start_utc"], s["t_end_utc"] = [T0 + 40], [T0 + 50]
        io = f.create_group("io/p000")
        io["t_start"] = [[0.0, 0.1], [5.0, 5.2]]
        io["t_end"] = [[1.0, 1.5], [6.0, 7.0]]  # 1.5 + 2.0
        pp = f.create_group("transfer/pingpong")
        pp["t"] = [[[1e-3], [2e-3], [np.nan]], [[1e-3], [1e-3], [1e-3]]]
        pp["reps"], pp["batch"] = [2, 3], [10, 5]  # 3e-3 * 20 + 3e-3 * 10
        bw = f.create_group("transfer/bw")
        bw["t"] = [[[1e-3, 3e-3], [2e-3, 1e-3]]]
        bw["reps"], bw["window"] = [2], [64]  # (3e-3 + 2e-3) * 64
        ar = f.create_group("transfer/allreduce")
        ar["t"] = [[[1e-3, 4e-3, 2e-3], [5e-3, 1e-3, 1e-3], [9.0, 9.0, 9.0]]]
        ar["reps"] = [2]  # 4e-3 + 5e-3; the third row is past reps
        f["power/idle_s"] = [3.0, np.nan]
    return {"fft": 3.5, "dfft": 0.25, "load": 6.0, "io": 3.5, "transfer": 0.09 + 0.32 + 0.009, "idle": 3.0}


def test_every_kind_of_window_has_its_length(tmp_path):
    want = windowed(tmp_path / "w.h5")
    with h5py.File(tmp_path / "w.h5") as f:
        got = owntime.windows_s(read_own(f))
    assert got.keys() == want.keys()
    for kind in want:
        assert got[kind] == pytest.approx(want[kind], rel=1e-12), kind


def test_the_wall_time_splits_into_parts_that_add_up(tmp_path):
    want = windowed(tmp_path / "w.h5")
    with h5py.File(tmp_path / "w.h5") as f:
        own = owntime.own_time(read_own(f))
    inside = sum(want.values())
    assert own.wall_s == pytest.approx(100.5)
    assert own.windows_s == pytest.approx(inside)
    # The idle power window is before the subcommand's start: measured, so not start-up.
    assert own.startup_s == pytest.approx(4.0 - 3.0)
    assert (own.plan_s, own.clock_align_s, own.write_s) == (7.0, 0.5, 1.25)
    assert own.other_s == pytest.approx(100.5 - 1.0 - inside - 7.0 - 0.5 - 1.25)
    assert own.outside_s == pytest.approx(100.5 - inside)
    assert sum(own.part(k) for k in owntime.PARTS) == pytest.approx(own.wall_s)
    assert (own.rss_rank0_bytes, own.rss_max_bytes, own.rss_max_rank) == (120e6, 150e6, 3)


def test_a_file_before_the_timeline_has_windows_and_no_wall_time(tmp_path):
    want = windowed(tmp_path / "old.h5", timeline=False)
    with h5py.File(tmp_path / "old.h5") as f:
        own = owntime.own_time(read_own(f))
    assert own.windows_s == pytest.approx(sum(want.values()))
    assert math.isnan(own.wall_s) and math.isnan(own.other_s) and math.isnan(own.rss_max_bytes)


def own_rows(report) -> dict[str, dict[str, str]]:
    with open(report / "own_cost.csv", newline="") as fh:
        return {row["run"]: row for row in csv.DictReader(fh)}


def test_the_report_shows_each_runs_own_time(tmp_path):
    cfg = fixtures.Cluster(transfer=False, load=False)
    new, old = tmp_path / "new.h5", tmp_path / "old.h5"
    for path in (new, old):
        fixtures.write_run(path, cfg)
    inside = 0.0
    with h5py.File(new, "a") as f:
        for k, v in TIMELINE.items():
            f.attrs[k] = v
        f.attrs["label"] = "new"
        for i, pid in enumerate(sorted(f["fft"])):
            length = 0.1 * (i + 1)
            reps = f["fft"][pid]["t_total"].shape[0]
            starts = T0 + 10 + i + np.arange(reps) * 1e-3
            f["fft"][pid]["t_start_utc"], f["fft"][pid]["t_end_utc"] = starts, starts + length
            inside += length * reps
    with h5py.File(old, "a") as f:
        f.attrs["label"] = "old"
    out = tmp_path / "report"
    r = run_cli(str(new), str(old), "-o", str(out), "-q")
    assert r.returncode == 0, r.stderr
    rows = own_rows(out)
    got = {k: float(v) for k, v in rows["new"].items() if k != "run"}
    assert got["wall_s"] == pytest.approx(100.5)
    assert got["windows_s"] == pytest.approx(inside, rel=1e-6)
    assert got["outside_s"] == pytest.approx(100.5 - inside, rel=1e-6)
    assert got["startup_s"] == pytest.approx(4.0) and got["plan_s"] == 7.0 and got["write_s"] == 1.25
    assert got["other_s"] == pytest.approx(100.5 - 4.0 - inside - 7.0 - 0.5 - 1.25, rel=1e-6)
    assert (got["rss_rank0_bytes"], got["rss_max_bytes"], got["rss_max_rank"]) == (120e6, 150e6, 3)
    # A file from before the timeline: no wall time, nothing made up.
    assert rows["old"]["wall_s"] == "" and rows["old"]["other_s"] == ""
    page = (out / "summary.md").read_text()
    assert "What the run itself cost" in page and "| new | 100 s |" in page, page
