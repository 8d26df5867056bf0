"""The report command as a user runs it: outputs, contents, and bad input."""

from __future__ import annotations

import csv
import dataclasses
import re

import numpy as np
import pytest

import fixtures
from analysis.read.reader import open_run
from conftest import png_size, run_cli

EXPECTED_FIGURES = {
    "fft_sizes_times.png", "fft_files_times.png", "fft_rate.png", "fft_phases.png",
    "speedup.png", "per_rank_pi4x4.png", "per_rank_ec2-c5x2.png", "transfer_p2p.png",
    "transfer_collectives.png", "transfer_ring.png", "transfer_links_ec2-c5x2.png",
    "model_pi4x4.png", "model_ec2-c5x2.png", "model_i5-baseline.png", "load.png",
}
EXPECTED_TABLES = {
    "buys", "study_summary", "provenance", "hosts", "fft_phases", "fft_points", "comparison",
    "crossover", "per_rank", "stragglers", "transfer_p2p", "transfer_collectives",
    "transfer_pairs_ec2-c5x2", "model", "load_steps", "load_saturation", "energy", "ceilings",
    "whatif_pi4x4", "whatif_ec2-c5x2",
}


def read_csv(path):
    with open(path, newline="", encoding="utf-8") as fh:
        return list(csv.DictReader(fh))


def test_full_report_writes_every_output(full_report):
    proc, out = full_report
    assert proc.returncode == 0, proc.stderr
    assert proc.stderr == ""
    assert (out / "index.html").is_file() and (out / "summary.md").is_file()
    pngs = {p.name for p in out.glob("*.png")}
    assert pngs == EXPECTED_FIGURES
    for name in pngs:
        width, height = png_size(out / name)
        assert width > 300 and height > 200, name
    assert {p.stem for p in out.glob("*.csv")} == EXPECTED_TABLES
    for name in EXPECTED_TABLES:
        rows = read_csv(out / f"{name}.csv")
        assert rows, f"{name}.csv is empty"


def test_page_is_self_contained(full_report):
    _, out = full_report
    page = (out / "index.html").read_text(encoding="utf-8")
    srcs = re.findall(r'<img [^>]*src="([^"]*)"', page)
    assert len(srcs) == len(EXPECTED_FIGURES)
    assert all(s.startswith("data:image/png;base64,") for s in srcs)
    assert not re.search(r'(src|href)="https?:', page)
    for name in re.findall(r"href='([^']+\.csv)'", page):
        assert (out / name).is_file(), name
    md = (out / "summary.md").read_text(encoding="utf-8")
    for name in EXPECTED_FIGURES:
        assert f"]({name})" in md


def test_provenance_is_stated_for_every_run(full_report, fixture_dir):
    _, out = full_report
    page = (out / "index.html").read_text(encoding="utf-8")
    for cfg in (fixtures.PI, fixtures.EC2, fixtures.I5):
        for text in (cfg.label, cfg.cpu_model, *cfg.hosts):
            assert text in page, text
    for text in ("Open MPI v4.1.4", "fftw-3.3.10", "1.10.8", "2024-05-01T12:00:00Z",
                 "mpirun -np 4 wulfbench suite -o pi.h5", "passed"):
        assert text in page, text
    rows = read_csv(out / "provenance.csv")
    assert {r["run"] for r in rows} == {"pi4x4", "ec2-c5x2", "i5-baseline"}
    assert all(r["verification"] == "passed" and r["command_line"] for r in rows)


def test_tables_hold_the_right_numbers(full_report, fixture_dir):
    _, out = full_report
    run = open_run(fixture_dir / "pi.h5")
    p = run.point("p004")
    rows = {(r["run"], r["point"]): r for r in read_csv(out / "fft_points.csv")}
    row = rows[("pi4x4", "p004")]
    assert float(row["total_median_s"]) == pytest.approx(np.median(p.times["t_total"]), rel=1e-6)
    assert float(row["kBps"]) == pytest.approx(p.input_bytes / 1000 / np.median(p.times["t_total"]),
                                               rel=1e-6)
    assert rows[("pi4x4", "p000")]["status"].startswith("unstable")
    comp = read_csv(out / "comparison.csv")
    assert {r["run"] for r in comp} == {"pi4x4", "ec2-c5x2"}
    nodes = {"pi4x4": 4, "ec2-c5x2": 2}
    for r in comp:  # both clusters against an i5 desktop: other hardware, no E or e
        s = float(r["speedup"])
        assert r["kind"] == "cross-machine" and r["karp_flatt"] == r["efficiency"] == ""
        assert float(r["t_baseline_s"]) / float(r["t_run_s"]) == pytest.approx(s, rel=1e-6)
        assert float(r["per_node"]) == pytest.approx(s / nodes[r["run"]], rel=1e-6)
    cross = {(r["run"], r["scenario"]): r for r in read_csv(out / "crossover.csv")}
    assert cross[("pi4x4", "sizes")]["crossover_x"] == ""
    assert cross[("pi4x4", "sizes")]["verdict"].startswith("no crossover: the cluster loses at")
    assert float(cross[("ec2-c5x2", "sizes")]["crossover_x"]) > 0
    stragglers = read_csv(out / "stragglers.csv")
    assert any(r["host"] == "pi2" and r["rank"] == "2" and "compute" in r["reason"]
               for r in stragglers)
    model = {r["run"]: r for r in read_csv(out / "model.csv")}
    assert float(model["pi4x4"]["alpha_s"]) == pytest.approx(fixtures.PI.alpha_s, rel=0.1)
    assert model["ec2-c5x2"]["total_err_max"] != ""
    assert not (out / "forecast.csv").exists()
    load = read_csv(out / "load_steps.csv")
    assert all(int(r["warmup_excluded"]) > 0 for r in load)
    page = (out / "index.html").read_text(encoding="utf-8")
    assert "pi2 (rank 2)" in page and "saturation point" in page
    assert "Not enough data to forecast" in page and "three or more node counts" in page


def test_one_file(fixture_dir, tmp_path):
    proc = run_cli(str(fixture_dir / "pi.h5"), "-o", str(tmp_path / "r"), "-q")
    assert proc.returncode == 0, proc.stderr
    assert proc.stdout == ""
    page = (tmp_path / "r" / "index.html").read_text(encoding="utf-8")
    assert "No cross-run comparison" in page
    assert not (tmp_path / "r" / "speedup.png").exists()
    assert (tmp_path / "r" / "per_rank_pi4x4.png").exists()


def test_explicit_baseline_and_point(fixture_dir, tmp_path):
    proc = run_cli(str(fixture_dir / "pi.h5"), str(fixture_dir / "ec2.h5"),
                   "--baseline", str(fixture_dir / "i5.h5"), "--point", "pi4x4:p004",
                   "--point", "p002", "-o", str(tmp_path / "r"))
    assert proc.returncode == 0, proc.stderr
    page = (tmp_path / "r" / "index.html").read_text(encoding="utf-8")
    assert "named with --baseline" in page
    assert "<b>pi4x4</b> at p004" in page and "<b>ec2-c5x2</b> at p002" in page
    assert (tmp_path / "r" / "speedup.png").exists()


def test_invalid_partial_and_missing_groups(tmp_path):
    res = tmp_path / "res"
    fixtures.write_run(res / "bad.h5", dataclasses.replace(
        fixtures.PI, label="pi-bad", verified=0, status="invalid", transfer=False, load=False))
    fixtures.write_run(res / "ec2.h5.partial", dataclasses.replace(
        fixtures.EC2, label="ec2-partial", status="running", verified=-1, failed_point="p003",
        scenarios=("files",)))
    fixtures.write_run(res / "xfer.h5", dataclasses.replace(
        fixtures.PI, label="pi-transfer", scenarios=(), load=False))
    fixtures.write_run(res / "i5.h5", fixtures.I5)
    out = tmp_path / "r"
    proc = run_cli(str(res), "-o", str(out))
    assert proc.returncode == 0, proc.stderr
    page = (out / "index.html").read_text(encoding="utf-8")
    assert "PARTIAL" in page and "ec2-partial" in page
    assert "FAILED VERIFICATION" in page
    assert "No /fft points in: pi-transfer" in page
    assert "has no /load group" in page
    points = read_csv(out / "fft_points.csv")
    assert all(r["status"].startswith("INVALID") for r in points if r["run"] == "pi-bad")
    failed = [r for r in points if r["run"] == "ec2-partial" and r["point"] == "p003"]
    assert failed and failed[0]["status"].startswith("INVALID")
    comp = read_csv(out / "comparison.csv")
    assert comp and {r["run"] for r in comp} == {"ec2-partial"}
    assert "p003" not in {r["point"] for r in comp}
    prov = {r["run"]: r for r in read_csv(out / "provenance.csv")}
    assert "PARTIAL" in prov["ec2-partial"]["status"]
    assert prov["pi-bad"]["verification"].startswith("INVALID")
    for name in out.glob("*.png"):
        png_size(name)


def test_two_baseline_files_need_a_choice(tmp_path):
    a = fixtures.write_run(tmp_path / "a.h5", dataclasses.replace(fixtures.I5, label="i5-a"))
    b = fixtures.write_run(tmp_path / "b.h5", dataclasses.replace(fixtures.I5, label="i5-b"))
    proc = run_cli(str(a), str(b), "-o", str(tmp_path / "r"), "-q")
    assert proc.returncode == 0, proc.stderr
    page = (tmp_path / "r" / "index.html").read_text(encoding="utf-8")
    assert "several files have baseline=1" in page


def _bad_text(tmp_path):
    p = tmp_path / "notes.h5"
    p.write_text("not hdf5\n" * 50)
    return p


def _bad_schema(tmp_path):
    return fixtures.write_run(tmp_path / "other.h5",
                              dataclasses.replace(fixtures.I5, schema="someone-else/3"))


def _bad_truncated(tmp_path):
    p = fixtures.write_run(tmp_path / "run.h5.partial", fixtures.I5)
    p.write_bytes(p.read_bytes()[:4000])
    return p


def _bad_empty_folder(tmp_path):
    p = tmp_path / "nothing"
    p.mkdir()
    return p


def _bad_missing(tmp_path):
    return tmp_path / "no-such.h5"


def _bad_empty_file(tmp_path):
    p = tmp_path / "zero.h5.partial"
    p.write_bytes(b"")
    return p


@pytest.mark.parametrize("make, words", [
    (_bad_text, "not an HDF5 file"),
    (_bad_schema, "schema 'someone-else/3'"),
    (_bad_truncated, "truncated"),
    (_bad_empty_folder, "no result files"),
    (_bad_missing, "no such file"),
    (_bad_empty_file, "is empty"),
])
def test_bad_input_gives_one_clear_line(tmp_path, make, words):
    path = make(tmp_path)
    proc = run_cli(str(path), "-o", str(tmp_path / "r"))
    assert proc.returncode == 1
    lines = proc.stderr.strip().splitlines()
    assert len(lines) == 1, proc.stderr
    assert lines[0].startswith(f"report: {path}: ")
    assert words in lines[0] and "; " in lines[0]
    assert "Traceback" not in proc.stderr + proc.stdout
    assert not (tmp_path / "r" / "index.html").exists()


def test_skip_bad_reports_the_rest(fixture_dir, tmp_path):
    bad = _bad_text(tmp_path)
    proc = run_cli(str(fixture_dir / "i5.h5"), str(bad), "--skip-bad", "-o", str(tmp_path / "r"), "-q")
    assert proc.returncode == 3  # written, a file left out
    assert proc.stderr.strip().splitlines() == [proc.stderr.strip()]
    assert (tmp_path / "r" / "index.html").is_file()


@pytest.mark.parametrize("args", [[], ["--frobnicate", "x.h5"], ["x.h5", "--max-nodes", "0"],
                                  ["x.h5", "--max-nodes", "many"]])
def test_usage_errors_exit_2(args, tmp_path):
    proc = run_cli(*args)
    assert proc.returncode == 2
    assert len(proc.stderr.strip().splitlines()) == 1
    assert proc.stderr.startswith("report: ") and "--help" in proc.stderr
    assert "Traceback" not in proc.stderr


def test_output_path_that_is_a_file(fixture_dir, tmp_path):
    target = tmp_path / "file"
    target.write_text("x")
    proc = run_cli(str(fixture_dir / "i5.h5"), "-o", str(target))
    assert proc.returncode == 2 and "not a folder" in proc.stderr


def test_help_explains_every_flag():
    proc = run_cli("--help")
    assert proc.returncode == 0
    for flag in ("FILES", "-o", "--output", "--baseline", "--point", "--max-nodes",
                 "--skip-bad", "--title", "--quiet", "Exit status", ".partial"):
        assert flag in proc.stdout, flag
