"""Reading result files: the schema as docs/schema.md writes it, and the checks
that reject what is not a usable wulfbench/1 file."""

from __future__ import annotations

import dataclasses

import h5py
import numpy as np
import pytest

import fixtures
from analysis.read.reader import InputError, find_result_files, open_run
from analysis.read.runs import name_runs


def test_reads_every_group(tmp_path):
    run = open_run(fixtures.write_run(tmp_path / "pi.h5", fixtures.PI))
    assert run.problems == []
    assert run.label == "pi4x4" and run.status == "complete" and run.verified == 1
    assert not run.partial and not run.invalid and not run.is_baseline
    assert [h["hostname"] for h in run.hosts] == ["pi0", "pi1", "pi2", "pi3"]
    assert run.hostname(2) == "pi2" and run.rank_label(3) == "pi3:r3"
    assert len(run.points) == len(fixtures.SIZES_S) + len(fixtures.FILES_N)
    p = run.points[0]
    assert p.id == "p000" and p.scenario == "sizes" and p.mode == "stft"
    assert p.times["t_compute"].shape == (fixtures.PI.reps, 4)
    assert p.times["t_total"].shape == (fixtures.PI.reps,)
    assert p.p == 4 and p.verified == 1
    assert p.key == ("sizes", "stft", "single", 1024, 1, 0.5)
    assert p.inputs[0]["name"] == "synthetic-0.wav"
    assert set(run.transfer) >= {"pingpong", "bw", "bibw", "ring", "barrier", "allreduce"}
    assert run.transfer["pingpong"].t_med.shape == (len(fixtures.MSG_BYTES), 2)
    assert run.transfer["pingpong"].kind == "p2p"
    assert len(run.load_steps) == len(fixtures.LOAD_RPS)
    assert run.load_steps[0].data["status"].dtype.kind in "iu"
    assert run.groups == {"fft", "hosts", "transfer", "load"}


def test_fixed_length_strings_read_like_variable_length(tmp_path):
    vlen = open_run(fixtures.write_run(tmp_path / "a" / "r.h5", fixtures.EC2))
    fixed = open_run(fixtures.write_run(tmp_path / "b" / "r.h5",
                                        dataclasses.replace(fixtures.EC2, fixed_strings=True)))
    assert fixed.attrs["schema"] == "wulfbench/1"
    for key in ("label", "mpi_library", "command_line", "status"):
        assert fixed.attrs[key] == vlen.attrs[key]
    assert fixed.hosts == vlen.hosts
    assert fixed.points[0].scenario == vlen.points[0].scenario
    assert fixed.points[0].inputs == vlen.points[0].inputs
    assert fixed.transfer["pingpong"].attrs["kind"] == "p2p"


def test_partial_and_invalid_flags(tmp_path):
    path = fixtures.write_run(tmp_path / "x.h5.partial",
                              dataclasses.replace(fixtures.I5, status="running", verified=-1))
    run = open_run(path)
    assert run.partial and not run.invalid and run.verified == -1
    bad = open_run(fixtures.write_run(tmp_path / "bad.h5",
                                      dataclasses.replace(fixtures.I5, verified=0, status="invalid")))
    assert bad.invalid


def test_damaged_point_is_skipped_not_fatal(tmp_path):
    path = fixtures.write_run(tmp_path / "pi.h5", fixtures.PI)
    with h5py.File(path, "a") as f:
        del f["fft/p001/t_total"]
        del f["fft/p002/t_gather"]
    run = open_run(path)
    assert "p001" not in [p.id for p in run.points]
    assert any("p001" in msg for msg in run.problems)
    p2 = run.point("p002")
    assert p2 is not None and np.isnan(p2.times["t_gather"]).all()
    assert any("t_gather missing" in msg for msg in run.problems)


def _expect(path, *words):
    with pytest.raises(InputError) as info:
        open_run(path)
    text = str(info.value)
    for word in words:
        assert word in text
    return info.value


def test_rejects_what_is_not_a_result_file(tmp_path):
    txt = tmp_path / "notes.h5"
    txt.write_text("hello, not HDF5\n" * 100)
    _expect(txt, "not an HDF5 file")
    empty = tmp_path / "empty.h5"
    empty.write_bytes(b"")
    _expect(empty, "is empty")
    other = tmp_path / "other.h5"
    with h5py.File(other, "w") as f:
        f.attrs["schema"] = "osu/2"
    _expect(other, "schema 'osu/2'", "wulfbench/1")
    none = tmp_path / "none.h5"
    with h5py.File(none, "w") as f:
        f.create_dataset("x", data=[1, 2, 3])
    _expect(none, "no 'schema' attribute")
    wrong = fixtures.write_run(tmp_path / "w.h5", dataclasses.replace(fixtures.I5, schema="wulfbench/2"))
    _expect(wrong, "wulfbench/2")


def test_rejects_a_truncated_partial_file(tmp_path):
    path = fixtures.write_run(tmp_path / "cut.h5.partial", fixtures.PI)
    data = path.read_bytes()
    path.write_bytes(data[: len(data) // 3])
    err = _expect(path, "truncated")
    assert "rerun" in err.todo


def test_find_result_files(tmp_path):
    (tmp_path / "a").mkdir()
    (tmp_path / "a" / "deep").mkdir()
    fixtures.write_run(tmp_path / "a" / "one.h5", fixtures.I5)
    fixtures.write_run(tmp_path / "a" / "deep" / "two.h5.partial", fixtures.I5)
    (tmp_path / "a" / "log.txt").write_text("x")
    found = find_result_files([str(tmp_path / "a")])
    assert sorted(p.name for p in found) == ["one.h5", "two.h5.partial"]
    assert len(find_result_files([str(tmp_path / "a"), str(tmp_path / "a" / "one.h5")])) == 2
    (tmp_path / "empty").mkdir()
    with pytest.raises(InputError, match="no result files"):
        find_result_files([str(tmp_path / "empty")])
    with pytest.raises(InputError, match="no such file"):
        find_result_files([str(tmp_path / "missing.h5")])


def test_run_names_are_unique(tmp_path):
    a = open_run(fixtures.write_run(tmp_path / "x" / "a.h5", fixtures.I5))
    b = open_run(fixtures.write_run(tmp_path / "y" / "b.h5", fixtures.I5))
    c = open_run(fixtures.write_run(tmp_path / "c.h5", dataclasses.replace(fixtures.I5, label="")))
    name_runs([a, b, c])
    assert a.name == "i5-baseline" and b.name == "i5-baseline (b)" and c.name == "c"
