"""--power: each node's leader measures energy from RAPL, hwmon or the Pi 5 PMIC, faked here (the fault
build reads /sys under WB_SYSFS_ROOT; a fake vcgencmd sits on PATH) at known powers."""

from __future__ import annotations

import os
import signal
import subprocess
import sys
import time
from contextlib import contextmanager
from pathlib import Path

import h5py
import numpy as np
import pytest

from conftest import (FAULTS_BIN, ROOT, MachineLoad, error_lines, faketime, launcher, mpi_env, rank_pid,
                      run_faults, run_faults_each, run_wb)

sys.path.insert(0, str(Path(__file__).resolve().parent))
import fake_power  # noqa: E402

PYTHON = "/usr/bin/python3"
HELPER = Path(__file__).resolve().parent / "fake_power.py"


@contextmanager
def advancing(path: Path, watts: float, max_uj: int = 0, stop: Path | None = None, stop_delay_s: float = 0):
    """A helper process that advances the counter file at watts while the block runs (and until
    stop_delay_s after the path stop appears)."""
    p = subprocess.Popen([PYTHON, str(HELPER), str(path), str(watts), str(max_uj), "0.001"]
                         + ([str(stop), str(stop_delay_s)] if stop else []))
    try:
        # Wait for the helper's first write (a fixed sleep lost the race on a busy machine: the
        # idle window then read the file's initial 0 throughout).
        first = path.read_text()
        deadline = time.monotonic() + 10
        while path.read_text() == first and p.poll() is None and time.monotonic() < deadline:
            time.sleep(0.01)
        assert p.poll() is None, "the fake counter stopped"
        assert path.read_text() != first or watts == 0, "the fake counter did not start within 10 s"
        yield
    finally:
        p.terminate()
        p.wait(timeout=10)


def run(np_: int, root: Path, out: Path, *args: str, path: str = "", cmd: str = "fft",
        env_more: dict[str, str] | None = None):
    # This machine has no vcgencmd, so pi5 is found only where a test puts its fake first on PATH.
    env = {"WB_SYSFS_ROOT": str(root), "PATH": f"{path}:{os.environ['PATH']}" if path else os.environ["PATH"],
           **(env_more or {})}
    base = ("--plan", "estimate", "-q", "-o", str(out)) if cmd in ("fft", "dfft") else ("-q", "-o", str(out))
    return run_faults(np_, cmd, *args, *base, env=env, timeout=90)


def fft(np_: int, root: Path, out: Path, *args: str, **kw):
    r = run(np_, root, out, "--sweep", "sizes", *args, **kw)
    assert r.returncode == 0, r.stderr
    return h5py.File(out, "r")


def sources(f) -> list[str]:
    return [s.decode() for s in f["power/source"][()]]


def readers(f) -> list[str]:
    return [s.decode() for s in f["power/reader"][()]]


def mailbox(root: Path, text: str) -> dict[str, str]:
    """A Pi firmware mailbox under root: root/dev/vcio, answered with text by the preloaded
    fake_vcio.so (built by make test)."""
    lib = FAULTS_BIN.parent / "tests" / "fake_vcio.so"
    if not lib.exists():
        pytest.skip(f"{lib} is built by make test")
    (root / "dev").mkdir(parents=True, exist_ok=True)
    (root / "dev" / "vcio").write_text("")
    (root / "pmic-answer.txt").write_text(text)
    return {"LD_PRELOAD": str(lib), "WB_FAKE_VCIO_TEXT": str(root / "pmic-answer.txt")}


def test_rapl_at_15_w_with_wraps(tmp_path):
    # Counters of 3 J wrap every 0.2 s at 15 W: several wraps in the run. The psys zone holds the
    # packages and is skipped: its counter is unreadable, and reading it would make the node unmeasured.
    root = tmp_path / "rapl"
    pkg = fake_power.rapl_tree(root, 3_000_000)
    psys = root / "sys/class/powercap/intel-rapl:1/energy_uj"
    psys.unlink()
    psys.mkdir()
    t0 = time.monotonic()
    # Three busy processes: the two ranks and the counter's writer.
    with advancing(pkg, 15, 3_000_000), MachineLoad(cores=3) as load:
        # About 60 ms a repetition here, some 50 counter updates in each: a CPU twice as fast, or a
        # counter writer that waits for a core, still leaves each repetition over 10 update periods.
        f = fft(2, root, tmp_path / "r.h5", "--seconds", "720", "--reps", "8", "--power-idle", "0.5")
    assert (time.monotonic() - t0) * 15 / 3 >= 4, "the run was too short for the counter to wrap"
    assert sources(f) == ["rapl", "shared"] and readers(f) == ["sysfs", ""]
    assert f["power"].attrs["requested"] == "auto"
    assert "rapl" in f["power"].attrs["caveat"]
    # A sampler that waited for a core longer than the counter takes to wrap cannot count the wraps:
    # the window is then unknown (NaN), never short of energy; only a busy machine may do that.
    busy = load.busy()
    if busy is None or not np.isnan(f["power/idle_w"][0]):
        assert f["power/idle_w"][0] == pytest.approx(15, rel=0.05)
    assert f["power/idle_s"][0] == pytest.approx(0.5, abs=0.1)
    assert 0.001 < f["power/period_s"][0] < 0.05
    assert f["power/period_err_s"][0] == pytest.approx(f["power/period_s"][0] / 2)
    g = f["fft/p000"]
    e, t = g["energy_j"][()], g["t_total"][()]
    assert e.shape == (8, 2) and g["energy_j"].attrs["units"] == "J"
    assert np.isnan(e[:, 1]).all()
    # A repetition in which the writer waited for a core throughout reads a stuck counter (NaN, as it
    # must); on a quiet machine none does, on a busy one the others still read 15 W.
    ratio = e[:, 0] / (15 * t)
    finite = np.isfinite(ratio)
    if busy is None:
        assert finite.all(), ratio
    elif finite.sum() < 2 or abs(np.median(ratio[finite]) - 1) > 0.05:
        # The fake's writer, unlike the hardware, can wait for a core past a whole wrap: the reader
        # then sees one step where the counter wrapped, which nothing can tell from a smaller step.
        pytest.skip(f"{busy}; {8 - finite.sum()} of 8 repetitions unmeasured and the rest at "
                    f"{np.median(ratio[finite]) if finite.any() else float('nan'):.2f} of 15 W: the counter's writer "
                    "waited for a core")
    assert np.median(ratio[finite]) == pytest.approx(1, abs=0.05)
    assert (g["power_short"][()] == 0).all(), (f["power/period_s"][0], t)
    window = g["t_end_utc"][()] - g["t_start_utc"][()]
    assert window == pytest.approx(t, abs=0.005)
    assert abs(g["t_start_utc"][0] - time.time()) < 120


def test_hwmon_power_sampled_on_the_leader_only(tmp_path):
    # 4 W + 2.5 W in two power*_input files; three ranks on one node: one measures, two share.
    root = tmp_path / "hw"
    fake_power.hwmon_tree(root, [4_000_000, 2_500_000])
    f = fft(3, root, tmp_path / "h.h5", "--seconds", "5", "--reps", "3", "--power-idle", "0.3")
    assert sources(f) == ["hwmon", "shared", "shared"]
    assert f["power/idle_w"][0] == pytest.approx(6.5, rel=0.01)
    assert np.isnan(f["power/idle_w"][1:]).all()
    assert f["power/period_s"][0] == pytest.approx(0.05, rel=0.5)
    g = f["fft/p000"]
    e, window = g["energy_j"][()], g["t_end_utc"][()] - g["t_start_utc"][()]
    assert np.isfinite(e[:, 0]).all() and np.isnan(e[:, 1:]).all()
    # A constant power is held between samples: exact over the repetition's window.
    assert e[:, 0] / window == pytest.approx(np.full(3, 6.5), rel=0.02)
    # Milliseconds per repetition against a 50 ms period: too short for power, and marked so.
    assert (g["power_short"][()][:, 0] == 1).all() and (g["power_short"][()][:, 1:] == 0).all()


def test_hwmon_energy_counter_in_load_steps(tmp_path):
    root = tmp_path / "hwe"
    ctr = fake_power.hwmon_tree(root, [1_000_000], energy=True)
    with advancing(ctr, 9):
        r = run(2, root, tmp_path / "l.h5", "--clients", "1", "--seconds", "0.5", "--plan", "estimate",
                "--duration", "1", "--warmup-s", "0.2", "--power-idle", "0", cmd="load")
    assert r.returncode == 0, r.stderr
    f = h5py.File(tmp_path / "l.h5", "r")
    # The energy counter wins over the power file of the same sensor.
    assert sources(f) == ["hwmon", "shared"]
    assert np.isnan(f["power/idle_w"]).all() and f["power/idle_s"][0] == 0
    assert 0.001 < f["power/period_s"][0] < 0.05
    g = f["load/s000"]
    e = g["energy_j"][()]
    assert e.shape == (1, 2) and g["power_short"].shape == (1, 2) and g["t_start_utc"].shape == (1,)
    window = g["t_end_utc"][0] - g["t_start_utc"][0]
    assert window > 1
    assert e[0, 0] / window == pytest.approx(9, rel=0.05)


def test_pi5_pmic_through_vcgencmd_with_paired_baseline(tmp_path):
    bindir = tmp_path / "bin"
    fake_power.fake_vcgencmd(bindir)
    watts = fake_power.pmic_watts()
    f = fft(2, tmp_path / "empty", tmp_path / "p.h5", "--seconds", "2", "--reps", "3", "--power-idle", "1",
            "--paired-baseline", path=str(bindir))
    assert sources(f) == ["pi5", "shared"] and readers(f) == ["vcgencmd", ""]
    assert "PMIC rails only" in f["power"].attrs["caveat"]
    assert f["power/idle_w"][0] == pytest.approx(watts, rel=0.01)
    # 10 Hz, measured over the idle window (about 10 samples); its jitter is stated.
    assert f["power/period_s"][0] == pytest.approx(0.1, rel=0.3)
    assert 0 <= f["power/period_err_s"][0] < 0.05
    for g in (f["fft/p000"], f["fft/p000/baseline"]):
        e = g["energy_j"][()]
        window = g["t_end_utc"][()] - g["t_start_utc"][()]
        assert e.shape == (3, 2) and np.isnan(e[:, 1]).all()
        assert e[:, 0] / window == pytest.approx(np.full(3, watts), rel=0.02)
        # Milliseconds against a 100 ms period.
        assert (g["power_short"][()][:, 0] == 1).all()


@pytest.mark.parametrize("with_tool", [True, False])
def test_pi5_pmic_through_the_firmware_mailbox(tmp_path, with_tool):
    # The mailbox answers as vcgencmd prints, so it is taken (with vcgencmd on PATH as well, after
    # both agree), and no process is started a sample.
    root = tmp_path / "pi5"
    env = mailbox(root, fake_power.pmic_text())
    bindir = tmp_path / "bin"
    if with_tool:
        fake_power.fake_vcgencmd(bindir)
    watts = fake_power.pmic_watts()
    f = fft(2, root, tmp_path / "m.h5", "--seconds", "2", "--reps", "3", "--power-idle", "1",
            path=str(bindir) if with_tool else "", env_more=env)
    assert sources(f) == ["pi5", "shared"] and readers(f) == ["mailbox", ""]
    assert f["power/idle_w"][0] == pytest.approx(watts, rel=0.01)
    assert f["power/period_s"][0] == pytest.approx(0.1, rel=0.3)
    g = f["fft/p000"]
    e, window = g["energy_j"][()], g["t_end_utc"][()] - g["t_start_utc"][()]
    assert e[:, 0] / window == pytest.approx(np.full(3, watts), rel=0.02)


def test_the_sampler_states_its_own_cost(tmp_path):
    # Each sample through vcgencmd starts a program (the fake: a shell and cat, about 1-2 ms of CPU),
    # ten a second: 2-3% of a core here. The mailbox is a system call (here the preloaded fake's file
    # read): 0.2% here, most of it the thread's own wake-ups. 40
    # repetitions of about 30 ms: some 12 samples in the window.
    shares = {}
    for way in ("mailbox", "vcgencmd"):
        root = tmp_path / way
        root.mkdir()
        env, path = {}, ""
        if way == "mailbox":
            env = mailbox(root, fake_power.pmic_text())
        else:
            fake_power.fake_vcgencmd(tmp_path / "bin")
            path = str(tmp_path / "bin")
        f = fft(2, root, tmp_path / f"{way}.h5", "--seconds", "240", "--reps", "40", "--power-idle", "0.3",
                path=path, env_more=env)
        assert readers(f) == [way, ""]
        share = f["fft/p000/sampler_cpu_share"][()]
        assert share.shape == (2,) and np.isnan(share[1]) and f["fft/p000/sampler_cpu_share"].attrs["units"] == "1"
        shares[way] = share[0]
    assert 0 <= shares["mailbox"] < 0.01, shares
    assert 3 * shares["mailbox"] < shares["vcgencmd"] < 0.2, shares


def test_a_mailbox_that_disagrees_with_vcgencmd_is_not_used(tmp_path):
    # A mailbox answer with rails missing (a cut or a misread text) would under-count the board: the
    # run reads with vcgencmd instead, and says so in one line.
    root = tmp_path / "pi5"
    text = fake_power.pmic_text().splitlines()
    env = mailbox(root, "\n".join(l for l in text if "VDD_CORE" not in l) + "\n")
    bindir = tmp_path / "bin"
    fake_power.fake_vcgencmd(bindir)
    out = tmp_path / "d.h5"
    r = run(2, root, out, "--sweep", "sizes", "--seconds", "1", "--reps", "2", "--power-idle", "0.5",
            path=str(bindir), env_more=env)
    assert r.returncode == 0, r.stderr
    f = h5py.File(out, "r")
    assert sources(f) == ["pi5", "shared"] and readers(f) == ["vcgencmd", ""]
    assert f["power/idle_w"][0] == pytest.approx(fake_power.pmic_watts(), rel=0.01)
    lines = [l for l in r.stderr.splitlines() if "mailbox" in l]
    assert len(lines) == 1 and "vcgencmd" in lines[0] and "4 rails" in lines[0] and "5" in lines[0], r.stderr


def test_no_source_is_unmeasured_in_fft_and_dfft(tmp_path):
    root = tmp_path / "bare"
    root.mkdir()
    t0 = time.monotonic()
    f = fft(2, root, tmp_path / "n.h5", "--seconds", "1", "--reps", "2")
    # No source anywhere: no idle window (the default 3 s) is spent.
    assert time.monotonic() - t0 < 20
    assert sources(f) == ["unmeasured", "shared"]
    assert np.isnan(f["power/idle_w"]).all() and np.isnan(f["power/period_s"]).all()
    assert (f["power/idle_s"][()] == 0).all()
    g = f["fft/p000"]
    assert g["energy_j"].shape == (2, 2) and np.isnan(g["energy_j"][()]).all()
    assert (g["t_end_utc"][()] > g["t_start_utc"][()]).all()
    r = run(2, root, tmp_path / "d.h5", "--n", "4096", "--reps", "2", cmd="dfft")
    assert r.returncode == 0, r.stderr
    d = h5py.File(tmp_path / "d.h5", "r")["dfft/p000"]
    assert d["energy_j"].shape == (2, 2) and np.isnan(d["energy_j"][()]).all()
    assert d["t_start_utc"].shape == (2,)


def test_window_keeps_its_length_when_the_wall_clock_runs_off_rate(tmp_path):
    # A repetition's window starts on the wall clock (for a meter's log) but is as long as the monotonic
    # clock says: a wall clock being stepped or slewed inside it (a CI machine's VM time agent shortened
    # two windows by 9 and 13 ms) must not make it shorter than the request. Here the ranks' wall clock
    # runs at half speed (libfaketime), which made every window half the request's time, and under
    # MPICH, whose MPI_Wtime reads the wall clock, every request's t_total half its window.
    root = tmp_path / "bare"
    root.mkdir()
    out = tmp_path / "w.h5"
    r = run_faults(2, "fft", "--sweep", "sizes", "--seconds", "720", "--reps", "4", "--plan", "estimate", "-q",
                   "-o", str(out), env={"WB_SYSFS_ROOT": str(root)}, timeout=120, wrap=tuple(faketime("+0 x0.5")))
    assert r.returncode == 0, r.stderr
    g = h5py.File(out, "r")["fft/p000"]
    t, window = g["t_total"][()], g["t_end_utc"][()] - g["t_start_utc"][()]
    # The window holds the request, plus the counter's reading at its end; a median over the repetitions
    # keeps one wait for a core on a busy machine from deciding it.
    assert (t > 0.01).all(), t
    assert np.median(window / t) == pytest.approx(1, abs=0.1), (window, t)
    assert abs(g["t_start_utc"][0] - time.time()) < 120

def test_power_none_records_times_only(tmp_path):
    root = tmp_path / "hw"
    fake_power.hwmon_tree(root, [4_000_000])
    f = fft(2, root, tmp_path / "x.h5", "--seconds", "1", "--reps", "2", "--power", "none")
    assert sources(f) == ["none", "shared"]
    assert f["power"].attrs["requested"] == "none"
    assert np.isnan(f["fft/p000/energy_j"][()]).all()


def test_unreadable_counter_is_one_line_and_the_run_goes_on(tmp_path):
    # As root every file is readable, so the counter is a folder: reading it fails as EACCES would.
    # It is the dram subzone's, which counts beside the package (the core subzone, inside it, does not).
    root = tmp_path / "rapl"
    fake_power.rapl_tree(root, 6_000_000, dram=True)
    pkg = root / "sys/class/powercap/intel-rapl:0:1/energy_uj"
    pkg.unlink()
    pkg.mkdir()
    out = tmp_path / "u.h5"
    r = run(2, root, out, "--sweep", "sizes", "--seconds", "1", "--reps", "2", "--power", "rapl")
    assert r.returncode == 0, r.stderr
    lines = [l for l in error_lines(r.stderr) if "energy_uj" in l]
    assert len(lines) == 1, r.stderr
    assert str(pkg) in lines[0] and "chmod a+r" in lines[0] and "udev" in lines[0]
    f = h5py.File(out, "r")
    assert sources(f) == ["unmeasured", "shared"]
    assert np.isnan(f["fft/p000/energy_j"][()]).all()


def test_forced_rapl_without_rapl_exits_2_on_all_ranks_and_leaves_no_file(tmp_path):
    root = tmp_path / "bare"
    root.mkdir()
    out = tmp_path / "f.h5"
    codes, err = run_faults_each(3, "fft", "--seconds", "1", "--power", "rapl", "-q", "-o", str(out),
                                 env={"WB_SYSFS_ROOT": str(root)})
    assert codes == [2, 2, 2], err
    lines = error_lines(err)
    assert len(lines) == 1 and "--power rapl" in lines[0] and "no RAPL" in lines[0], err
    assert not out.exists() and not Path(str(out) + ".partial").exists()


@pytest.mark.parametrize("args, says", [(("fft", "--power", "watts"), "auto, rapl, hwmon, pi5"),
                                        (("fft", "--power-idle", "-1"), "--power-idle"),
                                        (("transfer", "--power", "rapl"), "transfer records no energy")])
def test_bad_power_options_exit_2(tmp_path, args, says):
    r = run_wb(0, *args, "-o", str(tmp_path / "b.h5"))
    assert r.returncode == 2
    lines = error_lines(r.stderr)
    assert len(lines) == 1 and says in lines[0], r.stderr


def test_counter_going_back_without_a_wrap_gives_nan_not_a_number(tmp_path):
    # An hwmon energy counter has no wrap range: one that falls is a fault, never negative energy.
    # About 40 ms a repetition (10 update periods is 13 ms): the counter falls many times in each (and a repetition in which the
    # helper stalled, so that the counter did not move, is stuck: NaN too).
    root = tmp_path / "back"
    ctr = fake_power.hwmon_tree(root, energy=True)
    with advancing(ctr, -5):
        f = fft(2, root, tmp_path / "k.h5", "--seconds", "300", "--reps", "3", "--power-idle", "0.3")
    assert sources(f) == ["hwmon", "shared"]
    assert np.isnan(f["power/idle_w"][0])
    assert np.isnan(f["fft/p000/energy_j"][()]).all()


def test_counter_that_stops_moving_gives_nan_not_zero_joules(tmp_path):
    # The counter moves at 5 W through the idle window, which starts when the result file appears and
    # lasts 0.5 s (so its update period, 1 ms, is known), and holds still from 0.8 s after: the
    # repetitions after that, some 50 update periods long each (about 60 ms here), read a stuck counter.
    root = tmp_path / "stuck"
    ctr = fake_power.hwmon_tree(root, energy=True)
    out = tmp_path / "s.h5"
    with advancing(ctr, 5, stop=Path(str(out) + ".partial"), stop_delay_s=0.8):
        f = fft(2, root, out, "--seconds", "800", "--reps", "40", "--power-idle", "0.5")
    assert sources(f) == ["hwmon", "shared"]
    assert 0.0005 < f["power/period_s"][0] < 0.01
    pts = [g for k, g in f["fft"].items() if k.startswith("p")]
    e = np.concatenate([g["energy_j"][()][:, 0] for g in pts])
    short = np.concatenate([g["power_short"][()][:, 0] for g in pts])
    assert not short.any(), (f["power/period_s"][0], np.concatenate([g["t_total"][()] for g in pts]))
    # Never 0 J: a repetition read the moving counter (about 5 W) or the stuck one (NaN).
    assert (np.isnan(e) | (e > 0)).all(), e
    assert np.isnan(e).sum() >= 10, e


def test_counter_that_never_moves_gives_no_idle_power_not_zero_watts(tmp_path):
    # No helper: the energy counter holds its first value through the whole idle window (and a
    # warning names the file); the idle power is unknown, never 0 W.
    root = tmp_path / "still"
    fake_power.hwmon_tree(root, energy=True)
    r = run(2, root, tmp_path / "n.h5", "--sweep", "sizes", "--seconds", "100", "--reps", "2", "--power-idle", "0.3")
    assert r.returncode == 0, r.stderr
    assert "energy1_input changed 0 times" in r.stderr, r.stderr
    f = h5py.File(tmp_path / "n.h5", "r")
    assert sources(f) == ["hwmon", "shared"]
    assert np.isnan(f["power/idle_w"][0])


def test_a_reader_stopped_past_a_wrap_gives_nan_not_short_energy(tmp_path):
    # The counter wraps every 0.2 s (3 J at 15 W). The process is stopped for 0.7 s again and again
    # through the run, its sampler with it: the counter wraps three times unseen, which no reading can
    # tell from none, so a repetition around such a gap has no energy (NaN), never 15 W less 9 J.
    root = tmp_path / "rapl"
    pkg = fake_power.rapl_tree(root, 3_000_000)
    out = tmp_path / "w.h5"
    env = {**mpi_env(), "WB_SYSFS_ROOT": str(root)}
    cmd = [*launcher(1, {"WB_SYSFS_ROOT": str(root)}), str(FAULTS_BIN), "fft", "--sweep", "sizes", "--seconds", "360",
           "--reps", "20", "--power-idle", "0.3", "--plan", "estimate", "-q", "-o", str(out)]
    with advancing(pkg, 15, 3_000_000):
        p = subprocess.Popen(cmd, env=env, cwd=ROOT, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
        try:
            pid = rank_pid(p, 0, wait_s=30)
            while p.poll() is None:
                time.sleep(0.5)
                try:
                    os.kill(pid, signal.SIGSTOP)
                    time.sleep(0.7)
                    os.kill(pid, signal.SIGCONT)
                except ProcessLookupError:
                    break
            _, err = p.communicate(timeout=120)
        finally:
            if p.poll() is None:
                p.kill()
    assert p.returncode == 0, err
    f = h5py.File(out, "r")
    g = f["fft/p000"]
    e, t = g["energy_j"][()][:, 0], g["t_total"][()]
    stopped = t > 0.7
    assert stopped.any(), ("no repetition held a stop", t)
    ratio = e / (15 * t)
    assert (ratio[np.isfinite(ratio)] > 0.9).all(), (ratio, t)
    assert np.isnan(ratio[stopped]).all(), (ratio, t)
