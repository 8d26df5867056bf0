"""The Storage section: /io read from files written to the io layout with known figures
(io_fixtures), reduced per node, set against the fft request, the slowest node named, SD cards held
to A1/A2, figures from a cache and failed tests named in "Read first"; and, once the binary has an
io subcommand, the same on a file it writes."""

from __future__ import annotations

import csv
import os
import shutil
import subprocess
from pathlib import Path

import h5py
import numpy as np
import pytest

import fixtures
import io_fixtures as iof
from analysis.commands.report import build_parser, load_runs
from analysis.derive import energy, storage
from analysis.find import derive_findings
from analysis.read.reader import open_run
from conftest import ROOT, png_size, run_cli
from io_fixtures import Device, IoTest

ENOSPC = "No space left on device at offset 123456789 of rank 2"
SSHFS = "O_DIRECT refused by fuse.sshfs: buffered, sync per write"
REQUEST_BYTES = 64 * 5 * 44100 * 2  # fft's default request: 64 files of 5 s, 44.1 kHz 16-bit mono
T_READ = (0.30, 0.34, 0.31, 0.33, 0.32, 0.36, 0.29, 0.35, 0.30)  # median 0.32


def _memory(nodes=4, folder="/dev/shm"):
    return {(n, folder): Device(fs_type="tmpfs", kind="memory", device="tmpfs", model="")
            for n in range(nodes)}


def _sd_cluster(path: Path, fft: bool = True, more: list[IoTest] = (), devices=None) -> Path:
    """Four Pis on SD cards (/disk), pi3's card slow; with fft points whose largest request is
    made fft's default 64 x 5 s (REQUEST_BYTES, t_read median 0.32 s)."""
    p = fixtures.write_run(path, iof.io_cluster(fft=fft))
    tests = [IoTest("write", "/disk", mbps=[20, 22, 21, 8]),
             IoTest("read", "/disk", mbps=[40, 42, 41, 30]),
             IoTest("randwrite", "/disk", iops=[600, 650, 2500, 300], p99_s=[0.010, 0.012, 0.011, 0.050]),
             IoTest("randread", "/disk", iops=[2000, 4100, 5000, 1400], p99_s=[0.002, 0.002, 0.002, 0.004]),
             *more]
    iof.add_io(p, tests, devices=devices)
    if fft:
        _default_request(p)
    return p


def _default_request(path: Path, synthetic: bool = False) -> str:
    """Makes the largest fft point fft's default request; returns its id."""
    with h5py.File(path, "a") as f:
        largest = max(f["fft"].values(), key=lambda g: g.attrs["input_bytes"])
        largest.attrs["nfiles"] = np.int64(64)
        largest.attrs["input_bytes"] = np.int64(REQUEST_BYTES)
        largest.attrs["input"] = "synthetic" if synthetic else "wav"
        del largest["t_read"]
        fixtures._dataset(largest, "t_read", np.array(T_READ), "s")
        return largest.name.rsplit("/", 1)[1]


def _findings(*paths: Path, out: Path):
    args = build_parser().parse_args([*map(str, paths), "-o", str(out)])
    args.energy = energy.parse_options(args.power_log, args.price, args.kwh_price)
    runs, baselines, _notes, errors = load_runs(args)
    assert not errors, errors
    return derive_findings(args, runs, baselines)


def _csv(path: Path) -> list[dict]:
    with open(path, newline="", encoding="utf-8") as fh:
        return list(csv.DictReader(fh))


@pytest.fixture(scope="module")
def sd_report(tmp_path_factory):
    """One file: the SD cluster, a tmpfs folder read warm, a second memory folder, and a shared
    folder whose write failed; its report written by the command line."""
    tmp = tmp_path_factory.mktemp("storage")
    devices = _memory() | _memory(folder="/run/ram") | {
        (n, "/share"): Device(fs_type="fuse.sshfs", kind="network", device="pi0:/disk", model="")
        for n in range(4)}
    path = _sd_cluster(tmp / "in" / "pi.h5", devices=devices, more=[
        IoTest("write", "/dev/shm", mbps=[900] * 4), IoTest("read", "/dev/shm", mbps=[3000] * 4, cold=0),
        IoTest("read", "/run/ram", mbps=[2500] * 4, cold=0),
        IoTest("shared-write", "/disk", mbps=[5] * 4, extra_attrs={"api": "mpiio-indep"}),
        IoTest("shared-write", "/disk", mbps=[6] * 4, extra_attrs={"api": "mpiio-coll"}),
        IoTest("write", "/share", mbps=[10] * 4, status=f"failed: {ENOSPC}", reps=0, direct=0,
               direct_note=SSHFS)])
    out = tmp / "out"
    proc = run_cli(str(path.parent), "-o", str(out), "-q")
    return path, out, proc


def test_reader_reads_io_as_written(sd_report):
    path, _out, _proc = sd_report
    run = open_run(path)
    assert run.problems == [], run.problems
    io = run.io
    assert [p.test for p in io.points][:4] == ["write", "read", "randwrite", "randread"]
    assert len(io.devices) == 4 * 4  # four nodes under four folders
    assert io.device(3, "/disk")["kind"] == "sd" and io.device(2, "/dev/shm")["fs_type"] == "tmpfs"
    failed = io.points[-1]
    assert failed.failed and failed.reps == 0 and failed.status == f"failed: {ENOSPC}"
    sp = storage.storage_point(run, io.points[0])
    assert [n.host for n in sp.nodes] == ["pi0", "pi1", "pi2", "pi3"]
    # the median repetition is the rate written; the others spread 2 % a step about it
    assert [round(n.mbps.median, 9) for n in sp.nodes] == [20, 22, 21, 8]
    assert (sp.nodes[3].mbps.low, sp.nodes[3].mbps.high) == pytest.approx((8 / 1.04, 8 / 0.96))
    with h5py.File(path) as f:
        assert sp.agg_mbps.median == f["io/i000"].attrs["agg_mbps_median"]  # the program's, as stored
    rand = storage.storage_point(run, io.points[2])
    assert [round(n.iops.median, 6) for n in rand.nodes] == [600, 650, 2500, 300]
    assert [round(n.p99_s, 9) for n in rand.nodes] == [0.010, 0.012, 0.011, 0.050]
    assert rand.p99_s == pytest.approx(0.050)  # the worst rank's


def test_file_without_io_has_no_storage_section(fixture_dir, full_report, tmp_path):
    assert open_run(fixture_dir / "pi.h5").io is None
    proc, out = full_report
    assert proc.returncode == 0, proc.stderr
    page = (out / "index.html").read_text(encoding="utf-8")
    assert "id='storage'" not in page and not (out / "storage.csv").exists()
    assert _findings(fixture_dir / "pi.h5", out=tmp_path).storage.any_io is False


def test_table_and_csv_hold_each_node_and_the_aggregate(sd_report):
    path, out, proc = sd_report
    assert proc.returncode == 0, proc.stderr
    rows = _csv(out / "storage.csv")
    by = {(r["folder"], r["test"], r["node"]): r for r in rows}
    assert float(by[("/disk", "write", "pi3")]["bandwidth_Bps"]) == pytest.approx(8e6)
    assert float(by[("/disk", "read", "pi1")]["bandwidth_Bps"]) == pytest.approx(42e6)
    assert float(by[("/disk", "randread", "pi2")]["iops"]) == pytest.approx(5000)
    assert float(by[("/disk", "randwrite", "pi3")]["p99_latency_s"]) == pytest.approx(0.050)
    with h5py.File(path) as f:
        agg = f["io/i001"].attrs["agg_mbps_median"]
    assert float(by[("/disk", "read", "all nodes")]["bandwidth_Bps"]) == pytest.approx(agg * 1e6)
    assert agg == pytest.approx(4 * 64 / (64 / 30))  # all bytes over the slowest rank's time
    r = by[("/disk", "read", "pi0")]
    assert (r["cache"], r["direct"], r["sync"], r["fs_type"], r["kind"], r["status"]) == \
        ("cold (drop_caches)", "O_DIRECT", "none", "ext4", "sd", "ok")
    assert by[("/disk", "write", "pi0")]["sync"] == "fdatasync"
    assert by[("/dev/shm", "read", "pi0")]["cache"] == "warm"
    assert by[("/share", "write", "pi2")]["status"] == f"FAILED: {ENOSPC}"
    assert by[("/share", "write", "pi2")]["bandwidth_Bps"] == ""  # no repetition completed
    assert (by[("/share", "write", "pi2")]["direct"], by[("/share", "write", "pi2")]["direct_note"]) == \
        ("buffered", SSHFS)
    coll = by[("/disk", "shared-write (mpiio-coll)", "pi1")]
    assert float(coll["bandwidth_Bps"]) == pytest.approx(6e6) and coll["api"] == "mpiio-coll"
    assert float(by[("/disk", "shared-write (mpiio-indep)", "all nodes")]["bandwidth_Bps"]) == \
        pytest.approx(20e6)  # four ranks at 5 MB/s from one start
    page = (out / "index.html").read_text(encoding="utf-8")
    assert "id='storage'" in page and ">Storage</a>" in page
    for name in ("storage_bandwidth.png", "storage_iops.png"):
        width, height = png_size(out / name)
        assert width > 600 and height > 300


def test_slowest_node_is_named_as_a_slow_link_is(sd_report, tmp_path):
    path, out, _proc = sd_report
    f = _findings(path, out=tmp_path).storage
    disk = next(line for line in f.slow_lines if "/disk" in line)
    # pi3 writes 8 MB/s against the nodes' median (20 + 21) / 2 = 20.5: 39 %
    assert "the slowest storage is **pi3**'s (sd, ext4 on /dev/mmcblk0p2): write 8 MB/s, 39 % of " \
           "the median node's 20.5 MB/s; below 80 % of the median" in disk
    shm = next(line for line in f.slow_lines if "/dev/shm" in line)
    assert "every node is within 80 % of the median" in shm
    assert ("pi-io", "pi3's storage on /disk is below 80 % of the median node (write: 39 %).") in f.finds
    summary = (out / "summary.md").read_text(encoding="utf-8")
    assert "pi3's storage on /disk is below 80 %" in summary  # a headline finding


def test_cache_and_failed_warnings_one_line_per_kind(sd_report):
    _path, out, _proc = sd_report
    summary = (out / "summary.md").read_text(encoding="utf-8")
    first = summary.split("## Read first", 1)[1].split("\n## ", 1)[0]
    lines = [line for line in first.splitlines() if line.startswith("- ")]
    ram = [line for line in lines if "Storage figures from RAM" in line]
    warm = [line for line in lines if "Storage reads measured warm" in line]
    failed = [line for line in lines if "Storage tests FAILED" in line]
    assert len(ram) == len(warm) == len(failed) == 1, lines
    assert "/dev/shm on pi0, pi1, pi2, pi3 (tmpfs)" in ram[0] and "/run/ram" in ram[0]
    assert "/disk" not in ram[0]
    assert "read on /dev/shm" in warm[0] and "read on /run/ram" in warm[0] and "/disk" not in warm[0]
    assert f"write on /share ({ENOSPC})" in failed[0]
    assert f"write on /share FAILED: {ENOSPC} (0 repetitions completed)" in summary
    assert f"- **pi-io**: {SSHFS}: write on /share." in summary
    page = (out / "index.html").read_text(encoding="utf-8")
    readfirst = page.split("id='readfirst'", 1)[1].split("</div>", 1)[0]
    assert "Storage figures from RAM" in readfirst and "Storage tests FAILED" in readfirst


def test_a_cold_file_system_on_disk_gives_no_cache_warning(tmp_path):
    path = _sd_cluster(tmp_path / "in" / "pi.h5", fft=False)
    f = _findings(path, out=tmp_path / "o")
    assert f.storage.any_io and not [w for w in f.warnings if w.startswith("Storage")]


def test_sd_cards_against_a1_and_a2(sd_report, tmp_path):
    path, _out, _proc = sd_report
    f = _findings(path, out=tmp_path).storage
    lines = {line.split("**")[3]: line for line in f.sd_lines}  # host -> its line
    assert set(lines) == {"pi0", "pi1", "pi2", "pi3"}  # the SD folder only, one card per node
    assert "meets A1, below A2 (randread 2,000 < 4000; randwrite 600 < 2000)" in lines["pi0"]
    assert "meets A1, below A2 (randwrite 650 < 2000)" in lines["pi1"]
    assert lines["pi2"].endswith("randread 5,000 IOPS: meets A2.")
    assert "below A1 (write 8 < 10; randread 1,400 < 1500; randwrite 300 < 500)" in lines["pi3"]
    disk_iops = next(p for p in f.iops if "/disk" in p.title)
    assert {(m.cls, m.test, m.value) for m in disk_iops.marks} == {
        ("A1", "randread", 1500), ("A1", "randwrite", 500), ("A2", "randread", 4000),
        ("A2", "randwrite", 2000)}
    disk_bw = next(p for p in f.bandwidth if "/disk" in p.title)
    assert [(m.test, m.value) for m in disk_bw.marks] == [("write", 10)]
    assert all(not p.marks for p in f.bandwidth + f.iops if "/disk" not in p.title)


def test_an_sd_card_with_a_test_missing_is_judged_as_far_as_measured(tmp_path):
    p = fixtures.write_run(tmp_path / "in" / "pi.h5", iof.io_cluster(hosts=("pi0",)))
    iof.add_io(p, [IoTest("write", "/disk", mbps=[12])])
    (line,) = _findings(p, out=tmp_path / "o").storage.sd_lines
    assert "meets A2, as far as measured (randread, randwrite not measured)" in line


def test_fft_line_sets_the_request_against_each_folder(sd_report, tmp_path):
    path, _out, _proc = sd_report
    f = _findings(path, out=tmp_path).storage
    disk = next(line for line in f.fft_lines if "/disk" in line)
    with h5py.File(path) as h5:
        pid = max(h5["fft"], key=lambda k: h5["fft"][k].attrs["input_bytes"])
    request = REQUEST_BYTES / 1e6  # 28.224 MB
    assert f"64 × 5 s files ({request:.3g} MB)" in disk
    # pi0, the node of rank 0, reads 40 MB/s; pi3, the slowest, 30 MB/s
    assert "cold from this folder takes about 706 ms at pi0's measured 40 MB/s" in disk  # 28.224 / 40
    assert "941 ms on the slowest node, pi3" in disk  # 28.224 / 30
    assert f"fft's t_read was 320 ms ({pid})" in disk  # the median of T_READ
    shm = next(line for line in f.fft_lines if "/dev/shm" in line)
    assert "warm (the cold rule did not hold)" in shm and "about 9.41 ms" in shm  # 28.224 / 3000
    share = next(line for line in f.fft_lines if "/share" in line)
    assert "no sequential read test on this folder" in share


def test_fft_line_takes_the_request_from_another_file(tmp_path):
    io_only = _sd_cluster(tmp_path / "in" / "io.h5", fft=False)
    with h5py.File(io_only, "a") as f:
        f.attrs["label"] = "pi-disks"
    alone = _findings(io_only, out=tmp_path / "o1").storage.fft_lines[0]
    assert "no fft result was given" in alone
    fft = fixtures.write_run(tmp_path / "in" / "fft.h5", iof.io_cluster(fft=True, label="pi-fft"))
    pid = _default_request(fft, synthetic=True)
    f = _findings(io_only, fft, out=tmp_path / "o2").storage
    (line,) = [x for x in f.fft_lines if "**pi-disks**" in x]
    assert "about 706 ms" in line and f"({pid} in **pi-fft**)" in line
    assert "its audio was synthetic, made in memory: that t_read read no file" in line


def test_a_node_of_several_ranks_is_its_bytes_over_its_span(tmp_path):
    """Ranks 0, 1 on node a and 2, 3 on b, each writing the same bytes from one start: a node's
    rate is its bytes over its slowest rank's time, not the sum or the mean of its ranks' rates."""
    p = fixtures.write_run(tmp_path / "in" / "x.h5", iof.io_cluster(hosts=("a", "b"), ranks_per_node=2))
    iof.add_io(p, [IoTest("write", "/disk", mbps=[10, 30, 20, 20])])
    run = open_run(p)
    sp = storage.storage_point(run, run.io.points[0])
    assert [(n.host, n.ranks) for n in sp.nodes] == [("a", (0, 1)), ("b", (2, 3))]
    assert [round(n.mbps.median, 9) for n in sp.nodes] == [20, 40]


def test_a_bad_io_dataset_costs_that_test_only(tmp_path):
    path = _sd_cluster(tmp_path / "in" / "pi.h5", fft=False)
    with h5py.File(path, "a") as f:
        arr = f["io/i001/mbps"][()]
        arr[1, 2] = -5.0
        f["io/i001/mbps"][...] = arr
    run = open_run(path)
    assert [p.id for p in run.io.points] == ["i000", "i002", "i003"]
    assert any(p.startswith("/io/i001/mbps: holds 1 negative values") and p.endswith("test skipped")
               for p in run.problems), run.problems
    proc = run_cli(str(path), "-o", str(tmp_path / "out"), "-q")
    assert proc.returncode == 0, proc.stderr
    assert "/io/i001/mbps" in proc.stderr


def test_an_io_only_file_reports(tmp_path):
    p = fixtures.write_run(tmp_path / "in" / "io.h5", iof.io_cluster())
    iof.add_io(p, [IoTest("write", "/disk", mbps=[20, 22, 21, 8])], subcommand="io")
    proc = run_cli(str(p), "-o", str(tmp_path / "out"), "-q")
    assert proc.returncode == 0, proc.stderr
    assert "Traceback" not in proc.stderr
    assert len(_csv(tmp_path / "out" / "storage.csv")) == 5


WB = Path(os.environ.get("WB_BIN", ROOT / "build" / "wulfbench"))


def _has_io() -> str:
    """'' when the binary has an io subcommand, else why not."""
    if not WB.is_file():
        return f"{WB} is not built"
    try:
        proc = subprocess.run([str(WB), "io", "--help"], capture_output=True, text=True, timeout=30,
                              stdin=subprocess.DEVNULL)
    except (OSError, subprocess.TimeoutExpired) as exc:
        return f"{WB} io --help did not run ({exc})"
    return "" if proc.returncode == 0 else f"{WB} has no io subcommand yet (io --help exit {proc.returncode})"


def test_report_on_a_file_the_real_binary_writes(tmp_path):
    why = _has_io()
    if why:
        pytest.skip(why + "; the Storage section is tested on files written to the io layout")
    env = dict(os.environ)
    if os.geteuid() == 0:
        env.update(OMPI_ALLOW_RUN_AS_ROOT="1", OMPI_ALLOW_RUN_AS_ROOT_CONFIRM="1")
    folder = tmp_path / "disk"
    folder.mkdir()
    out = tmp_path / "io.h5"
    cmd = [shutil.which("mpirun") or "mpirun", "-np", "2", "--oversubscribe", str(WB), "io",
           "--dir", str(folder), "--tests", "write,read,randread", "--time", "6", "--reps", "3",
           "-o", str(out), "-q"]
    proc = subprocess.run(cmd, env=env, capture_output=True, text=True, timeout=300,
                          stdin=subprocess.DEVNULL)
    assert proc.returncode == 0, f"{' '.join(cmd)}\n{proc.stdout}\n{proc.stderr}"
    run = open_run(out)
    assert run.io is not None and not [p for p in run.problems if p.startswith("/io")], run.problems
    assert {p.test for p in run.io.points} == {"write", "read", "randread"}
    rep = tmp_path / "r"
    res = run_cli(str(out), "-o", str(rep), "-q")
    assert res.returncode == 0, res.stderr
    rows = _csv(rep / "storage.csv")
    node_ranks: dict[str, list[int]] = {}
    for h in run.hosts:
        node_ranks.setdefault(h["hostname"], []).append(int(h["rank"]))
    with h5py.File(out) as f:
        for p in run.io.points:
            g = f[f"io/{p.id}"]
            assert g.attrs["status"] == "ok"
            for host, ranks in node_ranks.items():
                (row,) = [r for r in rows if r["id"] == p.id and r["node"] == host]
                if len(ranks) == 1:  # the rank's stored rate
                    want = np.median(g["mbps"][:, ranks[0]])
                else:  # the node's bytes over its ranks' span, the aggregate's rule
                    span = g["t_end"][:, ranks].max(axis=1) - g["t_start"][:, ranks].min(axis=1)
                    want = np.median(g["bytes"][:, ranks].sum(axis=1) / 1e6 / span)
                assert float(row["bandwidth_Bps"]) == pytest.approx(want * 1e6, rel=1e-6), (p.id, host)


def test_storage_renders_the_same_in_any_section_order(sd_report, tmp_path):
    """The section only formats its findings: in the page's order and reversed, the same."""
    from analysis.render import plots, sections
    from analysis.render.md import md_section
    path, _out, _proc = sd_report
    ctx = _findings(path, out=tmp_path)
    plots.apply_style()
    got = []
    for k, order in enumerate((sections.SECTIONS, tuple(reversed(sections.SECTIONS)))):
        outdir = tmp_path / f"o{k}"
        outdir.mkdir()
        rep = sections.render(ctx, [], outdir, order)
        sec = next(s for s in rep.sections if s.anchor == "storage")
        got.append(("\n".join(md_section(sec)), [(outdir / b[1].file).read_bytes()
                                                  for b in sec.blocks if b[0] == "figure"]))
    assert got[0] == got[1] and len(got[0][1]) == 2


def test_frames_storage_has_every_rank_and_repetition(sd_report):
    pd = pytest.importorskip("pandas")
    from analysis import frames
    path, _out, _proc = sd_report
    df = frames.storage(path)
    write = df[(df.test == "write") & (df.dir == "/disk")]
    assert len(write) == 5 * 4 and set(write.hostname) == {"pi0", "pi1", "pi2", "pi3"}
    per_node = write.groupby("hostname").mbps.median()
    assert per_node.to_dict() == pytest.approx({"pi0": 20, "pi1": 22, "pi2": 21, "pi3": 8})
    assert df.attrs["units"]["mbps"] == "MB/s" and df.attrs["units"]["lat_s_p99"] == "s"
    rand = df[df.test == "randwrite"]
    assert rand.groupby("hostname").lat_s_p99.median()["pi3"] == pytest.approx(0.050)
    assert (write.sync == "fdatasync").all() and (write.fs_type == "ext4").all()
    assert df[df.dir == "/share"].empty  # the failed write completed no repetition
    assert isinstance(df, pd.DataFrame)


def test_frames_storage_of_a_file_without_io_is_empty(fixture_dir):
    pytest.importorskip("pandas")
    from analysis import frames
    df = frames.storage(fixture_dir / "pi.h5")
    assert df.empty and list(df.columns)[:4] == ["file", "label", "point", "test"]


def test_a_failed_test_stored_without_a_rank_axis_still_shows_every_node(tmp_path):
    """A test that failed before its first repetition may hold empty datasets of any shape: its
    nodes are those of /hosts, each FAILED with the reason."""
    p = fixtures.write_run(tmp_path / "in" / "x.h5", iof.io_cluster(hosts=("a", "b")))
    iof.add_io(p, [IoTest("write", "/disk", mbps=[20, 30], status=f"failed: {ENOSPC}", reps=0)])
    with h5py.File(p, "a") as f:
        for name in list(f["io/i000"]):
            del f[f"io/i000/{name}"]
            fixtures._dataset(f["io/i000"], name, np.zeros(0), "s")
    proc = run_cli(str(p), "-o", str(tmp_path / "out"), "-q")
    assert proc.returncode == 0, proc.stderr
    rows = _csv(tmp_path / "out" / "storage.csv")
    assert [(r["node"], r["status"], r["bandwidth_Bps"]) for r in rows] == [
        ("a", f"FAILED: {ENOSPC}", ""), ("b", f"FAILED: {ENOSPC}", ""), ("all nodes", f"FAILED: {ENOSPC}", "")]


def _read_ceiling(*paths: Path, out: Path) -> list:
    """The rows of "Figures against their ceilings" for the inputs' read, and Read first's lines."""
    f = _findings(*paths, out=out)
    rows = [r for r in f.ceilings.table.rows if r["figure"].startswith("read MB/s")]
    return rows, list(f.ceilings.warnings)


def _t_read(path: Path, mbps: tuple[float, float, float]) -> None:
    """The largest point's t_read at these read rates of its inputs, each for a third of its repetitions."""
    with h5py.File(path, "a") as f:
        g = max(f["fft"].values(), key=lambda g: g.attrs["input_bytes"])
        reps = len(g["t_read"])
        seconds = [REQUEST_BYTES / mbps[k * 3 // reps] / 1e6 for k in range(reps)]
        del g["t_read"]
        fixtures._dataset(g, "t_read", np.array(seconds), "s")


def test_inputs_read_faster_than_the_disk_are_the_page_cache_never_a_finding(tmp_path):
    # 28.2 MB in 0.29-0.36 s: 78-97 MB/s, every repetition above the cold read's fastest (40 MB/s
    # at its median repetition, 41.7 at its fastest).
    path = _sd_cluster(tmp_path / "in" / "pi.h5")
    rows, warnings = _read_ceiling(path, out=tmp_path / "out")
    (row,) = rows
    assert row["where"] == "p004" and row["ceiling"] == pytest.approx(40.0)
    assert row["value"] == pytest.approx(REQUEST_BYTES / 0.32 / 1e6)
    assert "cold sequential read, pi.h5" in row["bound"]
    assert row["verdict"] == "ABOVE THE CEILING, beyond its noise; likely cause: page cache: the inputs were read warm"
    (line,) = [w for w in warnings if "read MB/s" in w]
    assert "left out of the findings" in line and "page cache: the inputs were read warm" in line


def test_inputs_read_within_the_disk_s_spread_are_not_above(tmp_path):
    path = _sd_cluster(tmp_path / "in" / "pi.h5")
    # A median of 42.3 MB/s passes the ceiling (40), but the slowest repetition (39.2) does not pass
    # the io read's fastest (41.7): at the ceiling within its noise.
    _t_read(path, (39.2, 42.3, 43.0))
    (row,) = _read_ceiling(path, out=tmp_path / "o1")[0]
    assert row["value"] == pytest.approx(42.3) and row["verdict"] == "at the ceiling, within its noise"
    # Slower than the disk: within, with its share of the ceiling.
    _t_read(path, (19.0, 20.0, 21.0))
    (row,) = _read_ceiling(path, out=tmp_path / "o2")[0]
    assert row["verdict"] == "within (50 % of it)"


def test_a_read_ahead_is_held_to_the_disk_over_its_whole_read(tmp_path):
    """Where fft read each file's bytes while it decoded the one before, t_read_io is only the wait
    the decode did not hide: the inputs' bytes came in over t_read, and that is the rate checked."""
    path = _sd_cluster(tmp_path / "in" / "pi.h5")
    _t_read(path, (19.0, 20.0, 21.0))
    with h5py.File(path, "a") as f:
        g = max(f["fft"].values(), key=lambda g: g.attrs["input_bytes"])
        g.attrs["input_read_ahead"] = 1
        fixtures._dataset(g, "t_read_io", 0.01 * g["t_read"][()], "s")
    (row,) = _read_ceiling(path, out=tmp_path / "o1")[0]
    assert row["figure"] == "read MB/s (inputs over t_read)" and row["value"] == pytest.approx(20.0)
    assert row["verdict"] == "within (50 % of it)"
    with h5py.File(path, "a") as f:
        max(f["fft"].values(), key=lambda g: g.attrs["input_bytes"]).attrs["input_read_ahead"] = 0
    (row,) = _read_ceiling(path, out=tmp_path / "o2")[0]
    assert row["figure"] == "read MB/s (inputs over t_read_io)" and row["value"] == pytest.approx(2000.0)


def test_the_read_ceiling_comes_from_an_io_result_given_beside(tmp_path):
    fft = fixtures.write_run(tmp_path / "in" / "fft.h5", iof.io_cluster(fft=True, label="pi-fft"))
    _default_request(fft)
    _t_read(fft, (20.0, 21.0, 22.0))
    rows, _ = _read_ceiling(fft, out=tmp_path / "o1")
    assert [(r["ceiling"] != r["ceiling"], r["verdict"]) for r in rows] == [(True, "no ceiling known")]
    assert "no cold sequential read of wulfbench io" in rows[0]["bound"]
    io_only = _sd_cluster(tmp_path / "in" / "io.h5", fft=False)
    rows, _ = _read_ceiling(io_only, fft, out=tmp_path / "o2")
    (row,) = rows
    assert row["run"] == "pi-fft" and row["ceiling"] == pytest.approx(40.0) and "io.h5" in row["bound"]
    assert row["verdict"] == "within (52 % of it)"


def test_warm_reads_and_synthetic_inputs_give_no_read_ceiling(tmp_path):
    path = fixtures.write_run(tmp_path / "in" / "pi.h5", iof.io_cluster(fft=True))
    iof.add_io(path, [IoTest("read", "/disk", mbps=[40, 42, 41, 30], cold=0)])
    _default_request(path)
    (row,) = _read_ceiling(path, out=tmp_path / "o1")[0]
    assert row["verdict"] == "no ceiling known"
    synthetic = _sd_cluster(tmp_path / "in2" / "pi.h5")
    _default_request(synthetic, synthetic=True)
    assert _read_ceiling(synthetic, out=tmp_path / "o2")[0] == []
