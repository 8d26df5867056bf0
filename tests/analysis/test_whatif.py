"""What an upgrade buys (analysis.whatif and the report's section): predictions checked against
runs made from the same known model at the configuration predicted, shown only when the model
held on held-out data, the CSV's columns, and one line with exit 2 for every input the data
cannot support. Real result files from build/wulfbench where a test needs them."""

from __future__ import annotations

import csv
import dataclasses
import os
import re
import subprocess
from pathlib import Path

import h5py
import numpy as np
import pytest

import fixtures
from analysis.derive import stats
from analysis.read.reader import open_run
from conftest import PYTHON, ROOT, run_cli

COLUMNS = ["request", "change", "now_s", "predicted_s", "ci_low_s", "ci_high_s", "ratio", "limited_by"]
PI3 = dict(beta_Bps=11e6, link_rate_Bps=12.5e6, s_per_flop=4e-9)


def whatif(*args) -> subprocess.CompletedProcess:
    env = dict(os.environ, PYTHONDONTWRITEBYTECODE="1")
    env.pop("WB_REPORT_DEBUG", None)
    return subprocess.run([PYTHON, "-m", "analysis.whatif", *map(str, args)], cwd=ROOT, env=env,
                          capture_output=True, text=True, timeout=300)


def one_line_exit_2(proc, *words):
    assert proc.returncode == 2, (proc.returncode, proc.stdout, proc.stderr)
    lines = proc.stderr.strip().splitlines()
    assert len(lines) == 1 and lines[0].startswith("whatif: "), proc.stderr
    for w in words:
        assert w in lines[0], (w, lines[0])
    assert "Traceback" not in proc.stderr and not proc.stdout


def median_at(path: Path, nfiles: int) -> float:
    run = open_run(path)
    pt = next(p for p in run.points if p.scenario == "files" and p.nfiles == nfiles)
    return float(stats.nanmedian(pt.times["t_total"]))


def read_csv(path: Path) -> list[dict]:
    with open(path, newline="", encoding="utf-8") as fh:
        return list(csv.DictReader(fh))


@pytest.fixture(scope="module")
def pi3(tmp_path_factory):
    """A slow cluster at 1, 2 and 4 nodes over 12.5 MB/s (recorded as --link-rate)."""
    return fixtures.node_series(tmp_path_factory.mktemp("pi3"), nodes=(1, 2, 4), **PI3)


def test_more_nodes_predicted_against_the_run_at_that_count(tmp_path):
    fit = fixtures.node_series(tmp_path / "fit", nodes=(1, 2), s_per_flop=4e-9, beta_Bps=1e9)
    truth = fixtures.node_series(tmp_path / "truth", nodes=(4,), s_per_flop=4e-9, beta_Bps=1e9)[0]
    out = tmp_path / "w.csv"
    proc = whatif(*fit, "--nodes", 4, "--csv", out)
    assert proc.returncode == 0, proc.stderr
    rows = read_csv(out)
    assert list(rows[0]) == COLUMNS
    big = next(r for r in rows if r["request"].startswith("16 ×"))
    measured = median_at(truth, 16)
    pred, lo, hi = (float(big[k]) for k in ("predicted_s", "ci_low_s", "ci_high_s"))
    assert abs(pred / measured - 1) < 0.15 and lo <= measured <= hi, (pred, measured, lo, hi)
    assert float(big["ratio"]) == pytest.approx(float(big["now_s"]) / pred)
    assert big["limited_by"] == "compute"
    assert "4 nodes: " in proc.stdout and "compute then limits" in proc.stdout


def test_a_faster_link_predicted_against_a_run_with_it(tmp_path, pi3):
    fast = dict(PI3, beta_Bps=110e6, link_rate_Bps=125e6)
    truth = fixtures.node_series(tmp_path, nodes=(4,), **fast)[0]
    out = tmp_path / "w.csv"
    proc = whatif(*pi3, "--link", "1gbit", "--csv", out)
    assert proc.returncode == 0, proc.stderr
    rows = read_csv(out)
    big = next(r for r in rows if r["request"].startswith("16 ×"))
    measured = median_at(truth, 16)
    assert abs(float(big["predicted_s"]) / measured - 1) < 0.15, (big, measured)
    assert float(big["ratio"]) > 2
    assert "a 1 Gbit/s link: " in proc.stdout
    assert "88 % of the line" in proc.stdout or "88 %" in proc.stdout  # 11 of 12.5 MB/s


def test_shown_only_when_the_model_held_on_held_out_data(tmp_path):
    broken = fixtures.node_scaling_set(tmp_path, nodes=(1, 2, 4), model_break=True)
    out = tmp_path / "w.csv"
    proc = whatif(*broken, "--nodes", 4, "--csv", out)
    assert proc.returncode == 0, proc.stderr
    rows = read_csv(out)
    assert rows and all(r["predicted_s"] == "" and r["ci_low_s"] == "" and r["ratio"] == ""
                        for r in rows)
    assert all(r["limited_by"].startswith("not shown: the model missed its own held-out data")
               for r in rows)
    assert "No prediction is shown as a figure" in proc.stdout
    good = fixtures.node_scaling_set(tmp_path / "good", nodes=(1, 2, 4))
    proc = whatif(*good, "--nodes", 4, "--csv", tmp_path / "g.csv")
    assert proc.returncode == 0 and all(r["predicted_s"] for r in read_csv(tmp_path / "g.csv"))


def test_one_node_count_is_checked_on_its_largest_request(tmp_path):
    one = fixtures.node_series(tmp_path, nodes=(4,), **PI3)
    proc = whatif(*one, "--link", "1gbit", "--csv", tmp_path / "w.csv")
    assert proc.returncode == 0, proc.stderr
    assert "the held-out largest at 4 node(s)" in proc.stdout
    one_line_exit_2(whatif(*one, "--nodes", 8), "--nodes 8", "validated 4 to 4 nodes", "--extrapolate")


def test_nodes_beyond_the_validated_range(pi3):
    one_line_exit_2(whatif(*pi3, "--nodes", 64), "--nodes 64", "beyond the validated range",
                    "1 to 8 nodes", "--extrapolate")
    proc = whatif(*pi3, "--nodes", 64, "--extrapolate")
    assert proc.returncode == 0
    assert "warning: --nodes 64 extrapolates beyond the validated range" in proc.stderr
    assert "(extrapolated)" in proc.stdout
    assert whatif(*pi3, "--nodes", 8).returncode == 0  # 2 -> 4 held out: validated to 8


@pytest.mark.parametrize("rate", ["fast", "1gb", "100 mbit", "-1gbit", "0mbit", "1e3mbit", ""])
def test_rates_that_cannot_be_read(pi3, rate):
    one_line_exit_2(whatif(*pi3, f"--link={rate}"), f"--link '{rate}'", "100mbit, 1gbit or 2.5gbit")


@pytest.mark.parametrize("rate, words", [("100mbit", "a 100 Mbit/s link"),
                                         ("2.5gbit", "a 2.5 Gbit/s link"),
                                         ("1GBIT", "a 1 Gbit/s link")])
def test_rates_that_can(pi3, rate, words):
    proc = whatif(*pi3, "--link", rate)
    assert proc.returncode == 0 and words in proc.stdout, proc.stderr


def _io_file(path: Path, mbps: float | None, status: str = "ok") -> Path:
    """A wulfbench io result (/coord io schema): one node, one folder, a cold read test."""
    with h5py.File(path, "w") as f:
        f.attrs["schema"] = fixtures.SCHEMA
        f.attrs["subcommand"] = "io"
        io = f.create_group("io")
        io.attrs["dirs"] = "/mnt/usb"
        dt = np.dtype([("node", "<i4"), ("dir", h5py.string_dtype()), ("kind", h5py.string_dtype())])
        io.create_dataset("devices", data=np.array([(0, "/mnt/usb", "usb")], dtype=dt))
        if mbps is None:
            return path
        g = io.create_group("i000")
        for key, value in {"test": "write", "status": "ok", "cold": -1}.items():
            g.attrs[key] = value
        g.create_dataset("mbps", data=np.full((3, 1), 10 * mbps))
        g = io.create_group("i001")
        for key, value in {"test": "read", "status": status, "cold": 1, "dir": "/mnt/usb",
                           "agg_mbps_median": mbps}.items():
            g.attrs[key] = value
        g.create_dataset("mbps", data=np.array([[mbps * 0.98], [mbps], [mbps * 1.02]]))
        g.create_dataset("agg_mbps", data=np.array([mbps * 0.98, mbps, mbps * 1.02]))
    return path


# What fft --input FILES --input-cache drop records: the request's files read cold every repetition.
COLD = {"input": "wav", "input_cache": "drop", "input_resident_max": 0.0}


def _with_attrs(runs, folder: Path, attrs: dict) -> list[Path]:
    """Copies of runs in folder with attrs set on every fft point."""
    out = []
    for src in runs:
        dst = folder / Path(src).name
        dst.write_bytes(Path(src).read_bytes())
        with h5py.File(dst, "r+") as f:
            for g in f["fft"].values():
                if isinstance(g, h5py.Group):
                    g.attrs.update(attrs)
        out.append(dst)
    return out


def test_disk_sets_the_read_time(tmp_path, pi3):
    out = tmp_path / "w.csv"
    pi3 = _with_attrs(pi3, tmp_path, COLD)
    proc = whatif(*pi3, "--disk", _io_file(tmp_path / "sd.h5", 2.0), "--csv", out)
    assert proc.returncode == 0, proc.stderr
    rows = read_csv(out)
    big = next(r for r in rows if r["request"].startswith("16 ×"))
    pt = next(p for p in open_run(pi3[-1]).points if p.nfiles == 16)
    files = sum(float(r["bytes"]) for r in pt.inputs)
    # the request's files at 2 MB/s, added to the request: the disk limits
    assert float(big["predicted_s"]) > files / 2e6 and big["limited_by"] == "disk"
    assert "2 MB/s" in proc.stdout and "cold sequential read" in proc.stdout
    assert float(big["ratio"]) < 1


def test_disk_keeps_the_decode_a_faster_disk_cannot_shorten(tmp_path, pi3):
    """Where fft split t_read into the files' bytes coming in (t_read_io) and the decode, only the first
    changes with the disk: the prediction grows by the decode's median, exactly."""
    (tmp_path / "a").mkdir()
    (tmp_path / "b").mkdir()
    base, split = _with_attrs(pi3, tmp_path / "a", COLD), _with_attrs(pi3, tmp_path / "b", COLD)
    decode = {}
    for path in split:
        with h5py.File(path, "r+") as f:
            for pid, g in f["fft"].items():
                if isinstance(g, h5py.Group):
                    t_read = g["t_read"][()].reshape(-1)
                    g.create_dataset("t_read_io", data=0.25 * t_read).attrs["units"] = "s"
                    decode[(path.name, pid)] = float(np.median(0.75 * t_read))
    disk = _io_file(tmp_path / "sd.h5", 2.0)
    got = []
    for runs, name in ((base, "a.csv"), (split, "b.csv")):
        proc = whatif(*runs, "--disk", disk, "--csv", tmp_path / name)
        assert proc.returncode == 0, proc.stderr
        got.append(next(r for r in read_csv(tmp_path / name) if r["request"].startswith("16 ×")))
    pt = next(p for p in open_run(split[-1]).points if p.nfiles == 16)
    assert pt.t_read_io is not None
    want = decode[(split[-1].name, pt.id)]
    assert float(got[1]["predicted_s"]) - float(got[0]["predicted_s"]) == pytest.approx(want, rel=1e-3)
    assert float(got[1]["now_s"]) == pytest.approx(float(got[0]["now_s"]))


def test_a_read_ahead_request_takes_the_larger_of_bytes_and_decode(tmp_path, pi3):
    """fft that read each file's bytes while the one before decoded (input_read_ahead): after a disk
    change the read is the first file's bytes, then per file the larger of bytes and decode, then
    the last decode, not their sum. A slow disk then hides the decode, and a fast one the bytes."""
    (tmp_path / "a").mkdir()
    runs = _with_attrs(pi3, tmp_path / "a", {**COLD, "input_read_ahead": 1})
    for path in runs:
        with h5py.File(path, "r+") as f:
            for g in f["fft"].values():
                if isinstance(g, h5py.Group):
                    t_read = g["t_read"][()].reshape(-1)
                    g.create_dataset("t_read_io", data=0.25 * t_read).attrs["units"] = "s"
    pt = next(p for p in open_run(runs[-1]).points if p.nfiles == 16)
    n, files = 16, sum(float(r["bytes"]) for r in pt.inputs)
    decode = float(np.median(0.75 * pt.times["t_read"]))
    got = {}
    for mbps in (0.02, 2.0, 20000.0):
        out = tmp_path / f"w{mbps}.csv"
        proc = whatif(*runs, "--disk", _io_file(tmp_path / f"d{mbps}.h5", mbps), "--csv", out)
        assert proc.returncode == 0, proc.stderr
        got[mbps] = next(r for r in read_csv(out) if r["request"].startswith("16 ×"))
    rest = float(got[20000.0]["predicted_s"]) - (decode + files / 20000e6) / n - decode * (n - 1) / n
    for mbps, row in got.items():
        io = files / (mbps * 1e6)
        want = rest + (io + decode) / n + max(io, decode) * (n - 1) / n
        assert float(row["predicted_s"]) == pytest.approx(want, rel=1e-3), (mbps, row)
        assert float(row["ci_low_s"]) <= float(row["predicted_s"]) <= float(row["ci_high_s"])
    # at 0.02 MB/s the bytes hide the decode: all but 1/16 of it is gone from the read
    assert files / 0.02e6 > decode and float(got[0.02]["predicted_s"]) < rest + files / 0.02e6 + decode / 4


@pytest.mark.parametrize("attrs, words", [
    ({"input_cache": "keep"}, "--input-cache keep"),
    ({"input": "synthetic"}, "synthetic"),
    ({"input_resident_max": 0.4}, "40 % of an input file's pages"),
])
def test_a_disk_needs_a_cold_read_of_real_files(tmp_path, pi3, attrs, words):
    """t_read stands for the disk only when fft read WAV files with --input-cache drop, and the drop
    held: otherwise every row of the disk change says why no figure is shown."""
    runs = _with_attrs(pi3, tmp_path, {**COLD, **attrs})
    out = tmp_path / "w.csv"
    proc = whatif(*runs, "--disk", _io_file(tmp_path / "sd.h5", 2.0), "--csv", out)
    assert proc.returncode == 0, proc.stderr
    rows = read_csv(out)
    assert rows and all(r["predicted_s"] in ("", "nan") and words in r["limited_by"] for r in rows), rows
    assert words in proc.stdout


def test_a_disk_without_io_and_an_io_without_a_read(tmp_path, pi3):
    one_line_exit_2(whatif(*pi3, "--disk", pi3[0]), "--disk", "has no /io group", "wulfbench io")
    one_line_exit_2(whatif(*pi3, "--disk", _io_file(tmp_path / "w.h5", None)),
                    "holds no successful sequential read test")
    one_line_exit_2(whatif(*pi3, "--disk", _io_file(tmp_path / "f.h5", 5.0, "failed: ENOSPC")),
                    "holds no successful sequential read test")
    one_line_exit_2(whatif(*pi3, "--disk", tmp_path / "none.h5"), "--disk", "no such file")


def test_compute_needs_a_baseline(tmp_path, pi3):
    desk = fixtures.write_run(tmp_path / "desk.h5", dataclasses.replace(fixtures.I5, scenarios=("files",)))
    out = tmp_path / "w.csv"
    proc = whatif(*pi3, "--compute", desk, "--csv", out)
    assert proc.returncode == 0, proc.stderr
    assert "nodes that compute like i5-baseline" in proc.stdout
    one_line_exit_2(whatif(*pi3, "--compute", pi3[1]), "--compute", "holds no --baseline run",
                    "wulfbench fft --baseline")


def test_link_needs_transfer_between_nodes(tmp_path):
    one = fixtures.node_series(tmp_path, nodes=(1,), s_per_flop=4e-9)
    one_line_exit_2(whatif(*one, "--link", "1gbit"), "--link", "no transfer between nodes")
    two = fixtures.node_series(tmp_path / "two", nodes=(2,), s_per_flop=4e-9)
    one_line_exit_2(whatif(*two, "--link-from", one[0]), "--link-from", "holds no transfer between nodes")
    one_line_exit_2(whatif(*two, "--link", "1gbit", "--link-from", one[0]), "give one")
    # two nodes of four ranks each, whose transfer part measured ranks 0-1 and 0-2: one node
    same = fixtures.write_run(tmp_path / "same.h5", dataclasses.replace(
        fixtures.PI, hosts=("pi0", "pi1"), ranks_per_node=4, scenarios=("files",), load=False))
    one_line_exit_2(whatif(same, "--link", "1gbit"), "--link", "no inter-node pairs")
    assert whatif(same, "--nodes", 2).returncode == 0  # what needs no link still works


def test_link_from_another_runs_transfer(tmp_path, pi3):
    other = fixtures.write_run(tmp_path / "fast.h5", dataclasses.replace(
        fixtures.PI, beta_Bps=110e6, scenarios=(), load=False))
    proc = whatif(*pi3, "--link-from", other, "--csv", tmp_path / "w.csv")
    assert proc.returncode == 0, proc.stderr
    assert "the link of pi4x4 (α 100 µs, β 110 MB/s)" in proc.stdout
    big = next(r for r in read_csv(tmp_path / "w.csv") if r["request"].startswith("16 ×"))
    assert float(big["ratio"]) > 2


def test_other_bad_input(tmp_path, pi3):
    one_line_exit_2(whatif(*pi3), "no change given")
    one_line_exit_2(whatif(tmp_path / "missing.h5", "--nodes", 2), "missing.h5", "no such file")
    old = fixtures.write_run(tmp_path / "old.h5", dataclasses.replace(
        fixtures.PI, schema="wulfbench/0", load=False))
    one_line_exit_2(whatif(old, "--nodes", 4), "old.h5", "schema 'wulfbench/0'")
    desk = fixtures.write_run(tmp_path / "desk.h5", fixtures.I5)
    one_line_exit_2(whatif(desk, "--nodes", 2), "no valid cluster run")
    out = tmp_path / "w.csv"
    out.write_text("mine\n")
    one_line_exit_2(whatif(*pi3, "--nodes", 2, "--csv", out), "exists", "--force")
    assert out.read_text() == "mine\n"
    link = tmp_path / "link.csv"
    link.symlink_to(tmp_path / "elsewhere.csv")
    one_line_exit_2(whatif(*pi3, "--nodes", 2, "--csv", link, "--force"), "symbolic link")
    assert not (tmp_path / "elsewhere.csv").exists()


def test_older_files_without_the_newer_names_are_read(tmp_path, pi3):
    """Files from before slowest_rank, t_over, schedule and link_rate_Bps: still predicted."""
    old = []
    for path in pi3:
        copy = tmp_path / path.name
        copy.write_bytes(path.read_bytes())
        with h5py.File(copy, "a") as f:
            for g in f["fft"].values():
                for name in ("slowest_rank", "t_over"):
                    if name in g:
                        del g[name]
                for key in ("schedule", "link_rate_Bps"):
                    if key in g.attrs:
                        del g.attrs[key]
            del f.attrs["nnodes"]
        old.append(copy)
    proc = whatif(*old, "--link", "1gbit")
    assert proc.returncode == 0, proc.stderr
    assert "a TCP stream's 94 % of the line" not in proc.stderr


def test_saturation_rate_and_energy_carried_through(tmp_path):
    runs = []
    for n in (2, 4):
        cfg = dataclasses.replace(fixtures.PI, label=f"pi n{n}", hosts=tuple(f"pi{k}" for k in range(n)),
                                  straggler_rank=None, unstable_point=None, scenarios=("files",),
                                  transfer=False, load_saturation_attrs=True, seed=70 + n)
        path = fixtures.write_run(tmp_path / f"n{n}.h5", cfg)
        fixtures.add_power(path, 4.0)
        runs.append(path)
    out = tmp_path / "w.csv"
    proc = whatif(*runs, "--nodes", 8, "--price", "all=0.01", "--csv", out)
    assert proc.returncode == 0, proc.stderr
    rows = read_csv(out)
    assert list(rows[0])[:8] == COLUMNS
    sat = next(r for r in rows if r["request"].startswith("load saturation (6 req/s)"))
    assert float(sat["now_s"]) == pytest.approx(1 / 6)
    big = next(r for r in rows if r["request"].startswith("16 ×"))
    for col in ("j_per_request", "usd_per_1000_requests"):
        now, after = float(big[f"{col}_now"]), float(big[f"{col}_after"])
        # the same power and price per node, twice the nodes, the time after
        assert after == pytest.approx(now * 2 * float(big["predicted_s"]) / float(big["now_s"]))
    assert "the load saturates at" in proc.stdout
    assert "J per request now" in proc.stdout and "per 1000 requests now" in proc.stdout


def test_the_report_shows_it_right_after_what_the_cluster_buys(tmp_path, pi3):
    desk = fixtures.write_run(tmp_path / "desk.h5", dataclasses.replace(fixtures.I5, scenarios=("files",)))
    out = tmp_path / "rep"
    proc = run_cli(*map(str, pi3), "--baseline", str(desk), "-o", str(out), "-q")
    assert proc.returncode == 0, proc.stderr
    page = (out / "summary.md").read_text()
    buys, upgrade = page.index("## What the cluster buys"), page.index("## What an upgrade buys")
    assert buys < upgrade < page.index("## Summary")
    assert "## " not in page[buys + 3:upgrade].replace("### ", "")
    rows = read_csv(out / "whatif.csv")
    assert list(rows[0]) == COLUMNS
    assert {r["change"] for r in rows} >= {"a 1 Gbit/s link", "8 nodes", "nodes that compute like i5-baseline"}
    html = (out / "index.html").read_text()
    assert html.index("id='buys'") < html.index("id='upgrade'") and "href='#upgrade'" in html


WB = ROOT / "build" / "wulfbench"


@pytest.mark.skipif(not WB.is_file(), reason=f"{WB} is not built yet (make)")
def test_real_files(tmp_path):
    """Files the real binary writes: ranks on one machine are one node, so --link is refused
    (nothing crossed a link) and --nodes beyond it needs --extrapolate; a real --baseline run
    sets the compute rate, a real cluster run is no baseline."""
    small = ("--reps", "3", "--plan", "estimate", "-q")
    fixtures.run_wulfbench(2, "fft", "--sweep", "files", "--files", "1,2,4", "--file-seconds", "1",
                           "--label", "np2", "-o", tmp_path / "np2.h5", *small)
    fixtures.run_wulfbench(1, "fft", "--baseline", "--sweep", "files", "--files", "1,2,4",
                           "--file-seconds", "1", "--label", "desk", "-o", tmp_path / "desk.h5", *small)
    run = tmp_path / "np2.h5"
    one_line_exit_2(whatif(run, "--link", "1gbit"), "--link", "no transfer between nodes")
    one_line_exit_2(whatif(run, "--compute", run), "holds no --baseline run")
    one_line_exit_2(whatif(run, "--nodes", 2), "beyond the validated range")
    proc = whatif(run, "--compute", tmp_path / "desk.h5", "--csv", tmp_path / "w.csv")
    assert proc.returncode == 0, proc.stderr
    rows = read_csv(tmp_path / "w.csv")
    assert list(rows[0]) == COLUMNS and {r["change"] for r in rows} == {"nodes that compute like desk"}
    for r in rows:  # a figure, or why not
        assert r["predicted_s"] or r["limited_by"].startswith("not shown: ")


def on_one_machine(paths, cores: int = 2, quota: float = float("nan"), share: float = 1.0,
                   boot: str = "boot-m1") -> None:
    """Put every node of each file on one machine (one boot_id, `cores` online cores, each node
    at CPU quota `quota`), as the emulated cluster's namespaces are, with every rank's cpu_share
    at `share` (its part of a core, as a rank that keeps its share busy shows)."""
    text = h5py.string_dtype()
    for path in paths:
        with h5py.File(path, "a") as f:
            old = f["hosts"][()]
            dt = np.dtype([(n, old.dtype.fields[n][0]) for n in old.dtype.names]
                          + [("boot_id", text), ("cpu_quota", "<f8"), ("cores_usable", "<i4")])
            rows = np.zeros(old.shape, dtype=dt)
            for name in old.dtype.names:
                rows[name] = old[name]
            usable = cores if not np.isfinite(quota) else min(cores, int(np.ceil(quota)))
            rows["cores"], rows["boot_id"], rows["cpu_quota"], rows["cores_usable"] = cores, boot, quota, usable
            del f["hosts"]
            f.create_dataset("hosts", data=rows)
            nodes = len({h.decode() if isinstance(h, bytes) else h for h in old["hostname"]})
            mdt = np.dtype([("name", text), ("boot_id", text), ("nodes", "<i4"), ("ranks", "<i4"),
                            ("cores", "<i4"), ("cores_usable", "<i4"), ("cpu_quota", "<f8"),
                            ("copy_Bps", "<f8"), ("link_mbps", "<i4")])
            total = nodes * quota if np.isfinite(quota) else float("nan")
            usable = cores if not np.isfinite(total) else min(cores, int(np.ceil(total)))
            f.require_group("ceilings").create_dataset("machines", data=np.array(
                [("pi1", boot, nodes, len(old), cores, usable, total, 5e9, 100)], dtype=mdt))
            for _pid, g in (f["fft"].items() if "fft" in f else ()):
                g.create_dataset("cpu_share", data=np.full(g["t_compute"].shape, share))


def test_nodes_on_one_machine_add_no_cores(tmp_path):
    """1 and 2 nodes on a 2-core machine, each rank busy on its core: 4 nodes there get half a
    core each, so the request takes as long as at 2 (the truth is made that way); a model that
    counted the nodes' cores would halve it."""
    per_core = dict(beta_Bps=1e9, s_per_flop=4e-9)
    fit = fixtures.node_series(tmp_path / "fit", nodes=(1, 2), **per_core)
    on_one_machine(fit)
    truth = fixtures.node_series(tmp_path / "truth", nodes=(4,), beta_Bps=1e9, s_per_flop=8e-9)
    on_one_machine(truth, share=0.5)
    out = tmp_path / "w.csv"
    proc = whatif(*fit, "--nodes", 4, "--csv", out)
    assert proc.returncode == 0, proc.stderr
    big = next(r for r in read_csv(out) if r["request"].startswith("16 ×"))
    measured = median_at(truth[0], 16)
    pred, lo, hi = (float(big[k]) for k in ("predicted_s", "ci_low_s", "ci_high_s"))
    assert abs(pred / measured - 1) < 0.15 and lo <= measured <= hi, (pred, measured, lo, hi)
    assert float(big["ratio"]) == pytest.approx(1.0, abs=0.15)
    assert big["limited_by"] == "the machine's 2 cores"
    assert "neither more nodes on that machine nor a faster link helps" in proc.stdout
    # the same runs on machines of their own: 4 nodes do halve it
    apart = fixtures.node_series(tmp_path / "apart", nodes=(1, 2), **per_core)
    proc = whatif(*apart, "--nodes", 4, "--csv", tmp_path / "a.csv")
    big = next(r for r in read_csv(tmp_path / "a.csv") if r["request"].startswith("16 ×"))
    assert float(big["ratio"]) > 1.6 and big["limited_by"] == "compute", big


def test_ranks_spinning_on_a_slow_link_are_no_cpu_work(tmp_path):
    """A link-bound cluster of nodes on one machine whose ranks spin while they wait (cpu_share 1 over
    the whole request, as MPI ranks show on a 100 Mbit/s link) predicts what the same runs with idle
    waits predict: only the compute's CPU is work a change must still do."""
    got = {}
    for share in (0.05, 1.0):
        runs = fixtures.node_series(tmp_path / f"s{share}", nodes=(2, 4), **PI3)
        on_one_machine(runs, share=share)
        out = tmp_path / f"{share}.csv"
        proc = whatif(*runs, "--nodes", 6, "--csv", out)
        assert proc.returncode == 0, proc.stderr
        got[share] = next(r for r in read_csv(out) if r["request"].startswith("16 ×"))
    idle, spin = got[0.05], got[1.0]
    assert spin["limited_by"] == idle["limited_by"] == "link", got
    assert float(spin["predicted_s"]) == pytest.approx(float(idle["predicted_s"]), rel=1e-6)


def _quota_series(folder: Path, quota: float, nodes=(2,), **more) -> list[Path]:
    """Nodes of one 2-core machine at CPU quota `quota`: each rank computes 1/quota slower, and
    their links, which no line rate holds, are carried by the same quota (4 GB/s a CPU), as the
    emulated cluster's unshaped links are."""
    paths = fixtures.node_series(folder, nodes=nodes, **{"beta_Bps": 4e9 * quota, **more},
                                 s_per_flop=2e-9 / quota)
    on_one_machine(paths, quota=quota, share=quota)
    return paths


def _baseline_on_the_machine(path: Path, quota: float) -> Path:
    desk = fixtures.write_run(path, dataclasses.replace(fixtures.I5, scenarios=("files",),
                                                        s_per_flop=2e-9 / quota, c0_s=2e-4))
    on_one_machine([desk], quota=quota, share=quota)
    return desk


def test_a_cpu_share_on_the_same_machine(tmp_path):
    """A baseline made on the cluster's own machine at quota 0.5 gives 2 nodes at 0.25 twice
    the CPU: twice as fast, as the truth at 0.5 is; limited by the quota."""
    slow = _quota_series(tmp_path / "slow", 0.25)
    truth = _quota_series(tmp_path / "fast", 0.5)
    desk = _baseline_on_the_machine(tmp_path / "desk.h5", 0.5)
    out = tmp_path / "w.csv"
    proc = whatif(*slow, "--compute", desk, "--csv", out)
    assert proc.returncode == 0, proc.stderr
    big = next(r for r in read_csv(out) if r["request"].startswith("16 ×"))
    measured = median_at(truth[0], 16)
    pred, lo, hi = (float(big[k]) for k in ("predicted_s", "ci_low_s", "ci_high_s"))
    assert abs(pred / measured - 1) < 0.15 and lo <= measured <= hi, (pred, measured, lo, hi)
    assert big["limited_by"] == "the nodes' CPU quota (0.5 CPU each)"
    assert "nodes at 0.5 CPU each, as i5-baseline" in proc.stdout
    assert ("The 2 nodes share one machine (pi1, 2 cores): at 16 × 5 s files (28.1 MB) each rank "
            "ran 0.25 of a core, against the 0.25 it may use; what it may use limits it.") in proc.stdout


def test_a_cpu_share_speeds_unshaped_links_and_not_a_line(tmp_path):
    """On one machine a link no line rate holds goes as fast as the CPU that carries it: a quota
    change scales its beta too (the emulator's 2 nodes at 0.25 CPU moved 401 MB/s). A link with a
    recorded line rate keeps its beta: the same change then buys less."""
    desk = _baseline_on_the_machine(tmp_path / "desk.h5", 0.5)
    slow_net = dict(beta_Bps=20e6, s_per_flop=2e-9 / 0.25)
    got = {}
    for name, extra in (("unshaped", {}), ("line", {"link_rate_Bps": 25e6})):
        runs = fixtures.node_series(tmp_path / name, nodes=(2,), **slow_net, **extra)
        on_one_machine(runs, quota=0.25, share=0.25)
        proc = whatif(*runs, "--compute", desk, "--csv", tmp_path / f"{name}.csv")
        assert proc.returncode == 0, proc.stderr
        got[name] = next(r for r in read_csv(tmp_path / f"{name}.csv") if r["request"].startswith("16 ×"))
    assert float(got["unshaped"]["ratio"]) > 1.6, got["unshaped"]
    assert float(got["line"]["ratio"]) < 0.8 * float(got["unshaped"]["ratio"]), got
    assert got["line"]["limited_by"] == "link", got["line"]


def test_a_cpu_share_beyond_the_machine_buys_nothing(tmp_path):
    """4 nodes at 0.5 CPU fill a 2-core machine: a baseline at 1.0 CPU on it adds no core."""
    now = _quota_series(tmp_path / "now", 0.5, nodes=(4,))
    desk = _baseline_on_the_machine(tmp_path / "desk.h5", 1.0)
    out = tmp_path / "w.csv"
    proc = whatif(*now, "--compute", desk, "--csv", out)
    assert proc.returncode == 0, proc.stderr
    big = next(r for r in read_csv(out) if r["request"].startswith("16 ×"))
    assert float(big["ratio"]) == pytest.approx(1.0, abs=0.1), big
    assert big["limited_by"] == "the machine's 2 cores"


def test_runs_of_one_configuration_are_pooled(tmp_path):
    """Three runs of 2 nodes at 0.25 CPU that came out 10 % apart (as the emulator's do between
    runs of the same commands): "now" is the median of all their repetitions, and the interval
    reaches what each run alone predicts. A run at another quota is not pooled with them."""
    desk = _baseline_on_the_machine(tmp_path / "desk.h5", 0.5)
    runs = []
    for k, slower in enumerate((0.9, 1.0, 1.1)):
        paths = fixtures.node_series(tmp_path / f"r{k}", nodes=(2,), beta_Bps=1e9,
                                     s_per_flop=2e-9 / 0.25 * slower, seed=70 + k)
        on_one_machine(paths, quota=0.25, share=0.25)
        runs += paths
    alone = []
    for k, run in enumerate(runs):
        proc = whatif(run, "--compute", desk, "--csv", tmp_path / f"a{k}.csv")
        assert proc.returncode == 0 and "pooled" not in proc.stdout, proc.stdout + proc.stderr
        alone.append(next(r for r in read_csv(tmp_path / f"a{k}.csv") if r["request"].startswith("16 ×")))
    out = tmp_path / "w.csv"
    proc = whatif(*runs, "--compute", desk, "--csv", out)
    assert proc.returncode == 0, proc.stderr
    assert "From pi-2n (2 nodes, 3 runs of it pooled); now = pi-2n." in proc.stdout, proc.stdout
    big = next(r for r in read_csv(out) if r["request"].startswith("16 ×"))
    reps = []
    for run in runs:
        pt = next(p for p in open_run(run).points if p.nfiles == 16)
        reps += list(pt.times["t_total"])
    assert float(big["now_s"]) == pytest.approx(float(np.median(reps)), rel=1e-9)
    ends = [float(r["predicted_s"]) for r in alone]
    # (each run alone fits its own model, so its prediction may differ from the pooled one's ends by
    # a little more than the fit's error)
    assert float(big["ci_low_s"]) <= 1.01 * min(ends) and 0.99 * max(ends) <= float(big["ci_high_s"]), (big, ends)
    assert float(big["ci_high_s"]) / float(big["ci_low_s"]) > 1.15, big  # the runs 20 % apart
    assert min(ends) < float(big["predicted_s"]) < max(ends)
    # one of them at 0.5 CPU: another configuration, so the 0.25 runs are not pooled with it
    other = _quota_series(tmp_path / "half", 0.5)
    proc = whatif(*runs[:2], *other, "--compute", desk)
    assert proc.returncode == 0, proc.stderr
    lead = proc.stdout.split(";")[0]
    assert lead.count("runs of it pooled") == 1 and "(2 nodes, 2 runs of it pooled)" in lead, lead

def test_a_link_carried_by_the_nodes_own_machine(tmp_path, pi3):
    """Nodes of one machine: its CPU carries their links, at a rate no run measured above the
    line, so --link shows no figure and names the machine; --link-from a transfer made on one
    machine without a bibw adds the two directions, and its interval reaches the sum of link and
    CPU."""
    shared = fixtures.node_series(tmp_path / "shared", nodes=(2, 4), **PI3)
    on_one_machine(shared, share=0.2)
    out = tmp_path / "w.csv"
    proc = whatif(*shared, "--link", "1gbit", "--csv", out)
    assert proc.returncode == 0, proc.stderr
    rows = read_csv(out)
    assert rows and all(not r["predicted_s"] for r in rows)
    assert all("the 4 nodes share one machine (pi1, 2 cores)" in r["limited_by"] for r in rows)
    assert "--link-from" in rows[0]["limited_by"]
    assert whatif(*pi3, "--link", "1gbit").returncode == 0 and "not shown" not in whatif(*pi3, "--link", "1gbit").stdout
    probe = fixtures.write_run(tmp_path / "probe.h5", dataclasses.replace(
        fixtures.PI, hosts=("pi1", "pi2"), beta_Bps=60e6, scenarios=(), load=False, bibw_both=None))
    on_one_machine([probe])
    proc = whatif(*shared, "--link-from", probe, "--csv", out, "--force")
    assert proc.returncode == 0, proc.stderr
    assert "its nodes shared one machine, whose CPU carries both directions" in proc.stdout
    big = next(r for r in read_csv(out) if r["request"].startswith("16 ×"))
    assert big["predicted_s"] and float(big["ratio"]) > 1


def _link_from(tmp_path, now, probe, out) -> tuple[dict, str]:
    proc = whatif(*now, "--link-from", probe, "--csv", out, "--force")
    assert proc.returncode == 0, proc.stderr
    big = next(r for r in read_csv(out) if r["request"].startswith("16 ×"))
    return {k: float(big[k]) for k in ("predicted_s", "ci_low_s", "ci_high_s")}, proc.stdout


def test_link_from_overlaps_the_directions_as_far_as_its_bibw_did(tmp_path):
    """A pipelined request on nodes of one machine, --link-from a transfer made on one machine: its
    bibw beside its bw says how far the two directions overlap (1.5x one: by half), so the
    prediction lies between full duplex (bibw 2x) and the two added (1x); without a bibw they add
    and the interval reaches down to full overlap, which a measured 1x does not."""
    now = fixtures.node_series(tmp_path / "now", nodes=(2, 4), **PI3, schedule="pipelined")
    on_one_machine(now, share=0.2)
    got, text = {}, {}
    for both in (2.0, 1.5, 1.0, None):
        probe = fixtures.write_run(tmp_path / f"probe-{both}.h5", dataclasses.replace(
            fixtures.PI, hosts=("pi1", "pi2"), beta_Bps=30e6, scenarios=(), load=False, bibw_both=both))
        on_one_machine([probe])
        got[both], text[both] = _link_from(tmp_path, now, probe, tmp_path / "w.csv")
    pred = {k: v["predicted_s"] for k, v in got.items()}
    assert pred[2.0] < 0.9 * pred[1.5] and pred[1.5] < 0.9 * pred[1.0], pred
    assert pred[None] == pytest.approx(pred[1.0], rel=0.02)
    share = re.search(r"so the second overlaps the first by (\d+) %", text[1.5])
    assert share and 45 <= int(share.group(1)) <= 55, text[1.5]
    assert "so they add (the interval reaches full overlap" in text[None], text[None]
    assert got[None]["ci_low_s"] <= 1.05 * pred[2.0], got
    assert got[1.0]["ci_low_s"] > 1.1 * pred[2.0], got


def test_link_from_takes_beta_at_the_largest_message(tmp_path, pi3):
    """A transfer whose messages below 1 MiB beat the line (a token bucket's burst): β is the largest
    message's, the rate a request's megabytes reach, not the fit over all sizes."""
    probe = fixtures.write_run(tmp_path / "burst.h5", dataclasses.replace(
        fixtures.PI, beta_Bps=30e6, scenarios=(), load=False))
    with h5py.File(probe, "a") as f:
        for name in ("t", "t_med"):
            data = f["transfer/pingpong"][name]
            data[:-1] = data[:-1] * 0.6
    plain = fixtures.write_run(tmp_path / "plain.h5", dataclasses.replace(
        fixtures.PI, beta_Bps=30e6, scenarios=(), load=False))
    burst, text = _link_from(tmp_path, pi3, probe, tmp_path / "w.csv")
    same, _ = _link_from(tmp_path, pi3, plain, tmp_path / "w.csv")
    beta = re.search(r"the link of pi4x4 \(α [^,]+, β ([\d.]+) MB/s\)", text)
    assert beta and float(beta.group(1)) == pytest.approx(30, rel=0.05), text
    assert "β from its largest message (1 MiB)" in text, text
    assert burst["predicted_s"] == pytest.approx(same["predicted_s"], rel=0.05), (burst, same)


def test_link_from_takes_the_overlap_halfway_between_the_chunks_size_and_the_largest(tmp_path):
    """bibw overlapped the directions fully at 64 KiB and by half at 1 MiB; a request sending 64 KiB
    chunks back to back lies between the two, so the overlap is taken halfway (75 %) and the
    interval reaches both ends. Points that do not say their chunk keep the largest size's."""
    now = fixtures.node_series(tmp_path / "now", nodes=(2, 4), **PI3, schedule="pipelined")
    on_one_machine(now, share=0.2)
    probe = fixtures.write_run(tmp_path / "probe.h5", dataclasses.replace(
        fixtures.PI, hosts=("pi1", "pi2"), beta_Bps=30e6, scenarios=(), load=False, bibw_both=1.5))
    on_one_machine([probe])
    with h5py.File(probe, "a") as f:
        row = fixtures.MSG_BYTES.index(65536)
        for name in ("t", "t_med"):
            data = f["transfer/bibw"][name]
            data[row] = data[row] * 0.75  # 1.5x one at 64 KiB becomes 2x
    plain, _ = _link_from(tmp_path, now, probe, tmp_path / "w.csv")
    for path in now:
        with h5py.File(path, "a") as f:
            for g in f["fft"].values():
                g.attrs["chunk_frames"] = np.int64(32)  # 32 hops of 512 float32 samples: 64 KiB
    half, text = _link_from(tmp_path, now, probe, tmp_path / "w.csv")
    assert "nearest the request's chunks of 65.5 kB" in text and "taken halfway" in text, text
    share = re.search(r"taken halfway, (\d+) %", text)
    assert share and 70 <= int(share.group(1)) <= 80, text
    assert half["predicted_s"] < 0.97 * plain["predicted_s"], (half, plain)
    assert half["ci_low_s"] < plain["ci_low_s"], (half, plain)
