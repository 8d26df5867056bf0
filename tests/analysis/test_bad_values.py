"""The analysis on any input: files with NaN, infinite or negative values, wrong
shapes, short arrays, missing datasets and damaged bytes, written with h5py.
Each gives a named warning and loses only the object that holds the bad value,
or one line naming the file; never an internal error or a traceback."""

from __future__ import annotations

import dataclasses

import numpy as np
import pytest

import fixtures
from analysis.commands.cliutil import md_escape
from analysis.read.reader import InputError, open_run
from conftest import run_cli

SMALL = dataclasses.replace(fixtures.PI, scenarios=("files",))


@pytest.mark.parametrize("kind", sorted(fixtures.ODD_VALUES))
def test_odd_value_is_named_and_only_its_object_skipped(tmp_path, kind):
    path, where = fixtures.write_odd(tmp_path / f"{kind}.h5", kind, SMALL)
    good = open_run(fixtures.write_run(tmp_path / "good.h5", SMALL))
    run = open_run(path)
    dataset = where.split("/", 1)[1] if where.count("/") else where
    assert any(dataset in p and p.endswith("skipped") for p in run.skipped), run.problems
    group = where.split("/")[0]
    if group == "fft":
        assert [p.id for p in run.points] == [p.id for p in good.points if p.id != "p001"]
        assert run.point("p001") is None
    elif group == "transfer":
        test = where.split("/")[1]
        assert test not in run.transfer and set(run.transfer) == set(good.transfer) - {test}
    else:
        step = where.split("/")[1]
        assert [s.id for s in run.load_steps] == [s.id for s in good.load_steps if s.id != step]
    for point in run.points:
        for name, arr in point.times.items():
            assert np.isfinite(arr).all() and (arr >= 0).all(), (point.id, name)


@pytest.mark.parametrize("kind", ["wrong_shape", "short_reps", "load_lengths", "short_bw"])
def test_report_warns_naming_file_and_dataset(tmp_path, kind):
    path, where = fixtures.write_odd(tmp_path / "odd.h5", kind, SMALL)
    out = tmp_path / "r"
    proc = run_cli(str(path), "-o", str(out), "-q")
    assert proc.returncode == 0, proc.stderr
    assert "internal error" not in proc.stderr and "Traceback" not in proc.stderr
    lines = proc.stderr.strip().splitlines()
    assert len(lines) == 1, proc.stderr
    assert lines[0].startswith(f"report: {path}: warning: /{where}") and "skipped" in lines[0]
    page = (out / "index.html").read_text(encoding="utf-8")
    assert where.split("/")[-1] in page and "skipped" in page


def test_negative_total_no_longer_gives_a_negative_cv(tmp_path):
    path, _ = fixtures.write_odd(tmp_path / "neg.h5", "negative_total", SMALL)
    out = tmp_path / "r"
    proc = run_cli(str(path), "-o", str(out), "-q")
    assert proc.returncode == 0, proc.stderr
    rows = (out / "fft_points.csv").read_text().splitlines()
    assert not any(",p001," in r for r in rows)
    assert "-3." not in (out / "fft_points.csv").read_text()


def test_corrupt_file_that_crashes_hdf5_is_one_line(tmp_path):
    # inverted bytes in the second half of the file make the HDF5 library
    # itself crash while it reads an attribute; which bytes hold metadata moves with the fixture's
    # layout, so the first of a few patterns that does is taken (one of them must)
    path = fixtures.write_run(tmp_path / "bad.h5", fixtures.PI)
    size = path.stat().st_size
    what = ""
    for start, step in ((size // 2, 1499), (size // 2, 499), (size // 3, 499), (size // 4, 1499)):
        fixtures.write_corrupt(path, start=start, step=step)
        try:
            open_run(path)
        except InputError as err:
            what = err.what
            break
    assert "damaged" in what, "no pattern of inverted bytes made the HDF5 library fail"
    proc = run_cli(str(path), "-o", str(tmp_path / "r"))
    assert proc.returncode == 1
    assert proc.stderr.count("\n") == 1 and proc.stderr.startswith(f"report: {path}: is damaged")


def test_corrupt_root_attributes(tmp_path):
    path = fixtures.write_corrupt(tmp_path / "bad.h5")
    with pytest.raises(InputError, match="damaged"):
        open_run(path)


def test_folder_with_bad_files_reports_the_good_ones(tmp_path):
    res = tmp_path / "results"
    fixtures.write_run(res / "good.h5", dataclasses.replace(SMALL, label="good-run"))
    fixtures.write_corrupt(res / "corrupt.h5", SMALL)
    (res / "notes.h5").write_text("not a result file\n" * 40)
    cut = fixtures.write_run(res / "cut.h5.partial", SMALL)
    cut.write_bytes(cut.read_bytes()[:3000])
    out = tmp_path / "r"
    proc = run_cli(str(res), "-o", str(out), "-q")
    assert proc.returncode == 3, proc.stderr
    lines = proc.stderr.strip().splitlines()
    assert len(lines) == 3, proc.stderr
    for name in ("corrupt.h5", "notes.h5", "cut.h5.partial"):
        line = next(l for l in lines if f"/{name}: " in l)
        assert "skipped" in line
    page = (out / "index.html").read_text(encoding="utf-8")
    assert "good-run" in page
    for name in ("corrupt.h5", "notes.h5", "cut.h5.partial"):
        assert f"Left out: {res / name}" in page


def test_named_bad_file_suggests_skip_bad_and_skip_bad_never_breaks(tmp_path):
    good = fixtures.write_run(tmp_path / "good.h5", SMALL)
    bad = [fixtures.write_corrupt(tmp_path / "c.h5", SMALL)]
    for kind in ("wrong_shape", "negative_total", "load_lengths"):
        bad.append(fixtures.write_odd(tmp_path / f"{kind}.h5", kind, SMALL)[0])
    junk = tmp_path / "junk.h5"
    junk.write_bytes(b"\x89HDF\r\n\x1a\n" + b"\0" * 600)
    proc = run_cli(str(good), str(junk), *map(str, bad), "-o", str(tmp_path / "r"))
    assert proc.returncode == 1
    assert f"report: {junk}: " in proc.stderr and "--skip-bad" in proc.stderr
    assert not (tmp_path / "r" / "index.html").exists()
    proc = run_cli(str(good), str(junk), *map(str, bad), "--skip-bad", "-o", str(tmp_path / "r"))
    assert proc.returncode == 3, proc.stderr
    assert "internal error" not in proc.stderr and "Traceback" not in proc.stderr
    assert (tmp_path / "r" / "index.html").is_file()


def test_md_escape_keeps_user_text_plain():
    assert md_escape("pi4-4node") == "pi4-4node"
    assert md_escape("a|b") == "a\\|b"
    assert md_escape("**x** [y](http://e) `z`") == "\\*\\*x\\*\\* \\[y\\](http://e) \\`z\\`"
    assert md_escape("<img src=x onerror=alert(1)>") == "&lt;img src=x onerror=alert(1)&gt;"
    assert md_escape("two\nlines") == "two lines"
    assert md_escape("# not a heading") == "\\# not a heading"
    assert md_escape("- not a list") == "\\- not a list"
    assert md_escape("1. not a list") == "1\\. not a list"
    assert md_escape("a_b_c") == "a\\_b\\_c"
