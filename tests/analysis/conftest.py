"""Shared fixtures for the analysis tests: synthetic result files and a helper
that runs the report CLI as a user would. Everything is written under pytest's
temporary folders, nothing into the source tree."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

sys.dont_write_bytecode = True

HERE = Path(__file__).resolve().parent
ROOT = HERE.parents[1]
for path in (str(ROOT), str(HERE)):
    if path not in sys.path:
        sys.path.insert(0, path)

import pytest  # noqa: E402

import fixtures  # noqa: E402

PYTHON = os.environ.get("PYTHON", "/usr/bin/python3")
PNG_MAGIC = b"\x89PNG\r\n\x1a\n"


def run_cli(*args: str, timeout: float = 300) -> subprocess.CompletedProcess:
    """python3 -m analysis.report ARGS from the repository root."""
    env = dict(os.environ, PYTHONDONTWRITEBYTECODE="1")
    env.pop("WB_REPORT_DEBUG", None)
    return subprocess.run([PYTHON, "-m", "analysis.report", *args], cwd=ROOT, env=env,
                          capture_output=True, text=True, timeout=timeout)


def png_size(path: Path) -> tuple[int, int]:
    """(width, height) of a PNG; raises AssertionError if it is not one."""
    data = path.read_bytes()
    assert data[:8] == PNG_MAGIC, f"{path.name}: no PNG signature"
    assert data[12:16] == b"IHDR", f"{path.name}: no IHDR chunk"
    return int.from_bytes(data[16:20], "big"), int.from_bytes(data[20:24], "big")


@pytest.fixture(scope="session")
def fixture_dir(tmp_path_factory) -> Path:
    """pi.h5 (4-rank Pi cluster with transfer and load), ec2.h5 (8 ranks on 2
    nodes, all-pairs matrices) and i5.h5 (baseline=1)."""
    folder = tmp_path_factory.mktemp("results")
    fixtures.write_set(folder)
    return folder


@pytest.fixture(scope="session")
def full_report(fixture_dir, tmp_path_factory) -> tuple[subprocess.CompletedProcess, Path]:
    """The report of the whole fixture folder."""
    out = tmp_path_factory.mktemp("report") / "out"
    proc = run_cli(str(fixture_dir), "-o", str(out))
    return proc, out
