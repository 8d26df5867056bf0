"""Fake power sources for the tests (no real sensor here): a counter file that this process advances
at a known power, and the static trees and the vcgencmd script the tests lay out.

Run as a helper process:  /usr/bin/python3 tests/mpi/fake_power.py FILE WATTS [MAX_UJ [PERIOD_S [STOP [STOP_DELAY_S]]]]
writes FILE (microjoules, as RAPL's energy_uj and hwmon's energy*_input) every PERIOD_S seconds at
WATTS, wrapping to 0 at MAX_UJ (0: never), each write an atomic rename so a reader never sees half a
number, until killed; from STOP_DELAY_S seconds after the path STOP appears, the counter holds still
(a stuck counter).
"""
from __future__ import annotations

import os
import sys
import time
from pathlib import Path

# A Pi 5's `vcgencmd pmic_read_adc` lists currents, then volts; EXT5V_V has no current and counts nothing.
PMIC_RAILS = [("3V7_WL_SW", 0.1, 3.7), ("3V3_SYS", 0.2, 3.3), ("1V8_SYS", 0.5, 1.8), ("VDD_CORE", 2.0, 0.8),
              ("DDR_VDD2", 0.3, 1.1)]


def pmic_watts() -> float:
    return sum(a * v for _, a, v in PMIC_RAILS)


def pmic_text() -> str:
    lines = [f"{name + '_A':>16} current({i})={a:.8f}A" for i, (name, a, _) in enumerate(PMIC_RAILS)]
    lines += [f"{name + '_V':>16} volt({i + 8})={v:.8f}V" for i, (name, _, v) in enumerate(PMIC_RAILS)]
    lines.append(f"{'EXT5V_V':>16} volt(24)=5.12000000V")
    return "\n".join(lines) + "\n"


def fake_vcgencmd(bindir: Path) -> Path:
    """A vcgencmd on PATH that prints PMIC lines at pmic_watts() (a shell script: a Python start per
    call would cost more than the real tool, which runs at 10 Hz)."""
    bindir.mkdir(parents=True, exist_ok=True)
    (bindir / "pmic.txt").write_text(pmic_text())
    vc = bindir / "vcgencmd"
    vc.write_text(f'#!/bin/sh\ncase "$1" in\n  pmic_read_adc) exec cat "{bindir}/pmic.txt" ;;\n'
                  '  get_throttled) echo throttled=0x0 ;;\n  *) exit 1 ;;\nesac\n')
    vc.chmod(0o755)
    return vc


def rapl_tree(root: Path, max_uj: int, dram: bool = False) -> Path:
    """powercap with package zone intel-rapl:0 (and a dram subzone, and a psys zone that must be
    skipped); returns the package's energy_uj (the helper process advances it)."""
    pc = root / "sys/class/powercap"
    zones = [("intel-rapl:0", "package-0"), ("intel-rapl:0:0", "core"), ("intel-rapl:1", "psys")]
    if dram:
        zones.append(("intel-rapl:0:1", "dram"))
    for zone, name in zones:
        d = pc / zone
        d.mkdir(parents=True)
        (d / "name").write_text(name + "\n")
        (d / "max_energy_range_uj").write_text(f"{max_uj}\n")
        (d / "energy_uj").write_text("0\n")
    # The control type itself has no counter and is not a zone.
    (pc / "intel-rapl").mkdir()
    (pc / "intel-rapl/enabled").write_text("1\n")
    return pc / "intel-rapl:0/energy_uj"


def hwmon_tree(root: Path, power_uw: list[int] | None = None, energy: bool = False) -> Path:
    """hwmon0 with power*_input files (microwatts, constant) or energy1_input (returned, for the helper)."""
    d = root / "sys/class/hwmon/hwmon0"
    d.mkdir(parents=True)
    (d / "name").write_text("ina226\n")
    (d / "in1_input").write_text("5000\n")
    for i, uw in enumerate(power_uw or [], start=1):
        (d / f"power{i}_input").write_text(f"{uw}\n")
    if energy:
        (d / "energy1_input").write_text("0\n")
    return d / "energy1_input"


def advance(path: Path, watts: float, max_uj: int, period_s: float, stop: Path | None = None,
            stop_delay_s: float = 0) -> None:
    tmp = path.with_name(path.name + ".tmp")
    try:
        # A counter that lags while this process waits for a core reads as energy in the wrong repetition.
        os.nice(-10)
    except OSError:
        pass
    t0 = time.monotonic()
    seen = None
    while True:
        if seen is None and stop is not None and stop.exists():
            seen = time.monotonic()
        if seen is not None and time.monotonic() - seen >= stop_delay_s:
            time.sleep(period_s)
            continue
        uj = int(watts * (time.monotonic() - t0) * 1e6)
        if max_uj > 0:
            uj %= max_uj
        tmp.write_text(f"{uj}\n")
        os.replace(tmp, path)
        time.sleep(period_s)


if __name__ == "__main__":
    a = sys.argv[1:]
    advance(Path(a[0]), float(a[1]), int(a[2]) if len(a) > 2 else 0, float(a[3]) if len(a) > 3 else 0.002,
            Path(a[4]) if len(a) > 4 else None, float(a[5]) if len(a) > 5 else 0)
