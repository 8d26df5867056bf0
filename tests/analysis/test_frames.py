"""analysis.frames: result files written by the real build/wulfbench, read into
tidy pandas DataFrames; and the report still runs where pandas is missing."""

from __future__ import annotations

import os
import re
import subprocess

import numpy as np
import pytest

import fixtures
from conftest import PYTHON, ROOT

pd = pytest.importorskip("pandas", reason="python3-pandas is not installed "
                         "(bash jobs/install-deps.sh pandas)")
from analysis import frames  # noqa: E402

needs_binary = pytest.mark.skipif(not fixtures.WULFBENCH.is_file(),
                                  reason="build/wulfbench is not built yet (make)")


@pytest.fixture(scope="module")
def real(tmp_path_factory):
    d = tmp_path_factory.mktemp("frames")
    fixtures.run_wulfbench(2, *fixtures.SMALL_FFT, "--label", "frames np2", "-o", d / "fft.h5")
    fixtures.run_wulfbench(2, "transfer", "-m", "1:1k", "--time-per-size", "0.01",
                           "--label", "frames xfer", "-q", "-o", d / "xfer.h5")
    fixtures.run_wulfbench(3, "load", "--clients", "1,2", "--duration", "0.5", "--warmup-s",
                           "0.1", "--seconds", "0.5", "--plan", "estimate", "--label",
                           "frames load", "-q", "-o", d / "load.h5")
    return d


def _columns(df, *names):
    missing = [n for n in names if n not in df.columns]
    assert not missing, f"missing columns {missing}; has {list(df.columns)}"


def _strings_decoded(df):
    for col in df.columns:
        if df[col].dtype == object:
            assert not any(isinstance(v, bytes) for v in df[col]), col


@needs_binary
def test_points_frame_of_a_real_file(real):
    df = frames.points(real / "fft.h5")
    assert list(df.columns[:3]) == ["file", "label", "point"]
    _columns(df, "scenario", "nfiles", "seconds_per_file", "frame", "sample_rate", "input_bytes",
                "nranks", "passed", "rep", "t_total", "t_read", "t_distribute_slowest",
                "t_compute_slowest", "t_fft_max", "t_gather_slowest", "t_over")
    assert len(df) == 2 * 5  # two points, five repetitions each
    assert set(df.nfiles) == {1, 4} and set(df.nranks) == {2} and set(df.label) == {"frames np2"}
    assert (df.t_total > 0).all() and (df.t_total >= df.t_compute_slowest).all()
    assert (df.input_bytes > 0).all() and df.attrs["units"]["sample_rate"] == "Hz"
    assert df.scenario.iloc[0] == "files"
    _strings_decoded(df)


@needs_binary
def test_ranks_frame_of_a_real_file(real):
    df = frames.ranks(real / "fft.h5")
    _columns(df, "point", "rep", "rank", "hostname", "node", "computes", "t_distribute",
                "t_compute", "t_fft", "t_gather", "frames", "flops", "bytes_in", "bytes_out")
    assert len(df) == 2 * 5 * 2 and set(df["rank"]) == {0, 1}
    assert isinstance(df.hostname.iloc[0], str) and df.hostname.iloc[0]
    assert (df.flops > 0).all() and (df.t_compute > 0).all()
    _strings_decoded(df)


@needs_binary
def test_transfer_frame_of_a_real_file(real):
    df = frames.transfer(real / "xfer.h5")
    _columns(df, "test", "kind", "bytes", "column", "column_is", "sender", "receiver",
                "t_med", "bandwidth_Bps")
    assert {"pingpong", "bw", "allreduce"} <= set(df.test)
    ping = df[df.test == "pingpong"]
    assert sorted(ping.bytes.unique())[-1] == 1024
    assert (ping.sender == 0).all() and (ping.receiver == 1).all()
    assert (ping.t_med > 0).all()
    _strings_decoded(df)


@needs_binary
def test_load_frame_of_a_real_file(real):
    df = frames.load(real / "load.h5")
    _columns(df, "step", "loop", "clients", "request", "status", "warmup", "t_submit",
                "t_done", "latency")
    assert df.step.nunique() == 2 and set(df.clients) == {1, 2}
    assert set(df.status) <= {"done", "rejected", "unfinished"} and "done" in set(df.status)
    assert df.warmup.dtype == bool
    done = df[df.status == "done"]
    assert (done.latency > 0).all()
    _strings_decoded(df)


@needs_binary
def test_hosts_frame_decodes_strings(real):
    df = frames.hosts(real / "fft.h5")
    assert list(df["rank"]) == [0, 1]
    assert all(isinstance(v, str) for v in df.hostname) and all(isinstance(v, str)
                                                              for v in df.cpu_model)


def test_frames_of_synthetic_files_concatenate(tmp_path):
    pi = fixtures.write_run(tmp_path / "pi.h5", fixtures.PI)
    ec2 = fixtures.write_run(tmp_path / "ec2.h5", fixtures.EC2)
    both = pd.concat([frames.points(pi), frames.points(ec2)], ignore_index=True)
    assert set(both.label) == {"pi4x4", "ec2-c5x2"}
    med = both.groupby(["label", "point"]).t_total.median()
    assert len(med) == 2 * (len(fixtures.SIZES_S) + len(fixtures.FILES_N))
    pairs = frames.transfer(ec2)
    cells = pairs[pairs.test == "pairs_all"]
    assert len(cells) == 8 * 7 and (cells.sender != cells.receiver).all()
    assert frames.load(ec2).empty and list(frames.load(ec2).columns)[:3] == ["file", "label", "step"]


def test_bad_point_is_left_out_of_the_frame(tmp_path):
    path, _ = fixtures.write_odd(tmp_path / "odd.h5", "negative_total")
    df = frames.points(path)
    assert "p001" not in set(df.point) and (df.t_total > 0).all()
    assert any("p001/t_total" in p for p in frames.problems(path))


def test_report_runs_without_pandas(tmp_path):
    path = fixtures.write_run(tmp_path / "i5.h5", fixtures.I5)
    blocker = tmp_path / "block"
    blocker.mkdir()
    # a module that fails to import shadows the real pandas
    (blocker / "pandas.py").write_text("raise ImportError('pandas blocked by the test')\n")
    env = dict(os.environ, PYTHONPATH=f"{blocker}", PYTHONDONTWRITEBYTECODE="1")
    proc = subprocess.run([PYTHON, "-m", "analysis.report", str(path), "-o", str(tmp_path / "r"),
                           "-q"], cwd=ROOT, env=env, capture_output=True, text=True, timeout=300)
    assert proc.returncode == 0, proc.stderr
    assert (tmp_path / "r" / "index.html").is_file()
    proc = subprocess.run([PYTHON, "-c", "import analysis.frames"], cwd=ROOT, env=env,
                          capture_output=True, text=True, timeout=60)
    assert proc.returncode != 0 and "python3-pandas" in proc.stderr


def _hdf5_names(path) -> set[str]:
    """Every name the file holds: groups, datasets, attributes and compound fields."""
    import h5py
    names: set[str] = set()

    def visit(name, obj):
        names.add(name.rsplit("/", 1)[-1])
        names.update(obj.attrs)
        if isinstance(obj, h5py.Dataset) and obj.dtype.names:
            names.update(obj.dtype.names)

    with h5py.File(path, "r") as f:
        names.update(f.attrs)
        f.visititems(visit)
    return names


# Columns that no HDF5 name stands for: the row's place (file, point, repetition, ...) and what the
# frames work out. energy() is energy.csv's rows (docs/energy.md), whose figures the report derives.
DERIVED = {"file", "label", "point", "rep", "step", "request", "test", "column", "column_is", "sender",
           "receiver", "computes", "compute_ranks", "energy_source"}
UNIT_SUFFIX = re.compile(r"_(s|ms|us|J|j|Hz|kB|KB|MB|bytes|Bps|W|w)$")
GROUP = {"points": "/fft", "ranks": "/fft", "transfer": "/transfer", "load": "/load", "storage": "/io"}


@pytest.fixture(scope="module")
def every_kind(tmp_path_factory):
    """A suite file (fft, transfer, load, dfft, io, power) and a link map (pairs_all)."""
    d = tmp_path_factory.mktemp("names")
    fixtures.run_wulfbench(2, "suite", "--reps", "2", "--warmup", "0", "-q", "-o", d / "suite.h5", timeout=400)
    fixtures.run_wulfbench(2, "transfer", "--pairs", "all", "-m", "8", "-i", "3", "-q", "-o", d / "pairs.h5")
    return [d / "suite.h5", d / "pairs.h5"]


@needs_binary
def test_every_column_is_spelled_as_in_the_file_and_carries_its_unit(every_kind):
    functions = (frames.points, frames.ranks, frames.transfer, frames.load, frames.hosts, frames.storage,
                 frames.energy)
    seen = 0
    # A frame of a file without its kind is empty but keeps its columns: check those against both files.
    names = set().union(*(_hdf5_names(p) for p in every_kind))
    folded = {n.lower(): n for n in names}
    for path in every_kind:
        for fn in functions:
            df = fn(path)
            units = df.attrs.get("units")
            assert isinstance(units, dict), f"{fn.__name__}: no units in attrs"
            for c in df.columns:
                seen += 1
                if c in names:
                    continue
                where = f"{fn.__name__}({path.name}).{c}"
                assert c.lower() not in folded, f"{where} is spelled {folded[c.lower()]} in the file"
                m = UNIT_SUFFIX.search(c)
                assert not (m and c[:m.start()] in names), f"{where} adds a unit to the file's {c[:m.start()]}"
                base, _, red = c.rpartition("_")
                if fn is frames.energy or c in DERIVED or (red in frames.REDUCTIONS and base in names):
                    continue
                raise AssertionError(f"{where} is neither a name in the file, a reduction of one, nor derived")
            if fn.__name__ in GROUP:
                stored = frames.dataset_units(path, GROUP[fn.__name__])
                for c in df.columns:
                    if c in stored and df[c].dtype != object:
                        assert units.get(c) == stored[c], f"{fn.__name__}.{c}: {units.get(c)} != {stored[c]}"
            for c in df.columns:
                if str(c).startswith("t_") and fn is not frames.energy:
                    assert units.get(c, "").startswith("s"), f"{fn.__name__}.{c} has no unit in attrs"
    assert seen > 100
    pts = frames.points(every_kind[0])
    assert pts.attrs["units"]["t_fft_max"] == "s" and pts.attrs["units"]["energy_j_sum"] == "J"
    assert pts.attrs["units"]["sample_rate"] == "Hz" and "t_total_s" not in pts.columns
