"""Node health: /hosts and /fft/<id>/health/nodes from a fake Raspberry Pi sysfs tree (the fault
build reads /sys and /proc/cpuinfo under WB_SYSFS_ROOT), and the report's warnings naming the node."""

from __future__ import annotations

import os
import socket
import subprocess
import threading
import time
from pathlib import Path

import h5py
import pytest

from conftest import ROOT, run_faults

PYTHON = "/usr/bin/python3"
HOST = socket.gethostname()


def fake_pi(root: Path, temp_milli_c: int, flags: int | None, mhz: int = 600) -> Path:
    """A Pi 3's sysfs: one thermal zone, four CPUs at mhz, and the firmware's throttle node (None: none)."""
    (root / "sys/class/thermal/thermal_zone0").mkdir(parents=True)
    (root / "sys/class/thermal/thermal_zone0/temp").write_text(f"{temp_milli_c}\n")
    for cpu in range(4):
        d = root / f"sys/devices/system/cpu/cpu{cpu}/cpufreq"
        d.mkdir(parents=True)
        d.joinpath("scaling_cur_freq").write_text(f"{mhz * 1000}\n")
    if flags is not None:
        fw = root / "sys/devices/platform/soc/soc:firmware"
        fw.mkdir(parents=True)
        fw.joinpath("get_throttled").write_text(f"{flags:x}\n")
    (root / "proc").mkdir()
    (root / "proc/cpuinfo").write_text("processor\t: 0\nModel\t\t: Raspberry Pi 3 Model B Rev 1.2\n")
    return root


def fft(out: Path, root: Path, *extra: str, env: dict[str, str] | None = None) -> None:
    r = run_faults(2, "fft", "--sweep", "sizes", "--seconds", "1,2", "--reps", "2", "--plan", "estimate",
                   "-q", "-o", str(out), *extra, env={"WB_SYSFS_ROOT": str(root), **(env or {})})
    assert r.returncode == 0, r.stderr


def report_warnings(h5: Path, tmp_path: Path) -> list[str]:
    out = tmp_path / "report"
    r = subprocess.run([PYTHON, "-m", "analysis.report", str(h5), "-o", str(out), "-q"], cwd=ROOT,
                       capture_output=True, text=True, timeout=120)
    assert r.returncode == 0, r.stderr
    # The report's real warnings are the "Read first" list at the top of summary.md.
    lines = (out / "summary.md").read_text().splitlines()
    start = next((i for i, l in enumerate(lines) if l.startswith("#") and "Read first" in l), None)
    if start is None:
        return []
    end = next((i for i in range(start + 1, len(lines)) if lines[i].startswith("#")), len(lines))
    return [l for l in lines[start + 1:end] if l.strip()]


def test_throttled_hot_pi_in_hosts_health_and_report(tmp_path):
    root = fake_pi(tmp_path / "pi", 84500, 0x50005)
    h5 = tmp_path / "pi.h5"
    fft(h5, root)
    with h5py.File(h5) as f:
        hosts = f["hosts"][()]
        assert all(h["throttled"] == 1 for h in hosts)
        assert all(h["cpu_model"].startswith(b"Raspberry Pi 3") for h in hosts)
        assert all(h["temp_c_start"] == pytest.approx(84.5) and h["cpu_mhz"] == pytest.approx(600) for h in hosts)
        for pid in ("p000", "p001"):
            nodes = f[f"fft/{pid}/health/nodes"]
            assert "units" in nodes.attrs
            (row,) = nodes[()]
            assert (row["node"], row["hostname"].decode(), row["throttled"]) == (0, HOST, 1)
            assert row["temp_c_max"] == pytest.approx(84.5) and row["cpu_mhz_min"] == pytest.approx(600)
    warned = report_warnings(h5, tmp_path)
    for pid in ("p000", "p001"):
        assert any(f"point {pid}: node 0 ({HOST}) was throttled and hot (84.5" in w for w in warned), warned
    assert any(f"/hosts: {HOST} reported firmware throttling" in w for w in warned), warned


def test_cool_pi_through_vcgencmd_has_no_warnings(tmp_path):
    # No sysfs throttle node, as on older Raspberry Pi OS kernels: vcgencmd answers instead.
    root = fake_pi(tmp_path / "pi", 45000, None, mhz=1200)
    bindir = tmp_path / "bin"
    bindir.mkdir()
    vc = bindir / "vcgencmd"
    vc.write_text('#!/bin/sh\n[ "$1" = get_throttled ] && echo "throttled=0x0"\n')
    vc.chmod(0o755)
    h5 = tmp_path / "cool.h5"
    fft(h5, root, env={"PATH": f"{bindir}:{os.environ['PATH']}"})
    with h5py.File(h5) as f:
        assert all(h["throttled"] == 0 for h in f["hosts"][()])
        (row,) = f["fft/p000/health/nodes"][()]
        assert row["throttled"] == 0 and row["temp_c_max"] == pytest.approx(45.0)
        assert row["cpu_mhz_min"] == pytest.approx(1200)
    # No health warning (an unrelated one, e.g. a 2-rep point's CV, may stand in Read first too).
    health = [w for w in report_warnings(h5, tmp_path) if "throttl" in w or "hot" in w or "°C" in w]
    assert health == [], health


def test_sampler_sees_heat_and_throttling_during_a_point(tmp_path):
    # Cool and unthrottled at the start and at the end; hot and throttled (a since-boot flag newly
    # set) for 1.5 s in the middle of one long point: only a sampler running during it sees that.
    root = fake_pi(tmp_path / "pi", 50000, 0)
    temp = root / "sys/class/thermal/thermal_zone0/temp"
    flags = root / "sys/devices/platform/soc/soc:firmware/get_throttled"
    h5 = tmp_path / "mid.h5"

    def heat_wave() -> None:
        partial = Path(str(h5) + ".partial")
        deadline = time.monotonic() + 60
        while not partial.exists() and time.monotonic() < deadline:
            time.sleep(0.02)
        time.sleep(0.5)
        temp.write_text("91000\n")
        flags.write_text("50000\n")
        time.sleep(1.5)
        temp.write_text("50000\n")
        wave_end.append(time.monotonic())

    wave_end: list[float] = []
    t = threading.Thread(target=heat_wave)
    t.start()
    r = run_faults(2, "fft", "--sweep", "sizes", "--seconds", "60", "--reps", "1500", "--warmup", "0",
                   "--plan", "estimate", "-q", "-o", str(h5), env={"WB_SYSFS_ROOT": str(root)}, timeout=120)
    run_end = time.monotonic()
    t.join()
    assert r.returncode == 0, r.stderr
    if not wave_end or run_end < wave_end[0] + 0.5:
        pytest.fail("the point ended before the heat wave did; raise --reps so that it lasts longer")
    with h5py.File(h5) as f:
        hosts = f["hosts"][()]
        assert all(h["temp_c_start"] == pytest.approx(50) and h["temp_c_end"] == pytest.approx(50) for h in hosts)
        assert all(h["throttled"] == 0 for h in hosts)
        (row,) = f["fft/p000/health/nodes"][()]
        assert row["temp_c_max"] == pytest.approx(91.0)
        assert row["throttled"] == 1
