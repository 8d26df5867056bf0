"""A C check that cannot run says "skipped" and counts as skipped, never as passed: wbtest.h's
WBTEST_SKIP in a program built here, and tests/harness.sh's tally adding its closing line up."""
from __future__ import annotations

import shutil
import subprocess
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]
PROGRAM = r"""
#include "wbtest.h"
int main(int argc, char **argv)
{
    WBTEST_CHECK(argc > 0, "a check that holds");
    WBTEST_SKIP("a check this machine cannot make");
    WBTEST_CHECK(argc > 1, "a check that fails without an argument");
    return wbtest_done();
}
"""


@pytest.fixture(scope="module")
def program(tmp_path_factory) -> Path:
    cc = shutil.which("cc") or shutil.which("gcc")
    if not cc:
        pytest.fail("no C compiler: install build-essential (jobs/install-deps.sh build)")
    d = tmp_path_factory.mktemp("wbtest")
    (d / "p.c").write_text(PROGRAM)
    subprocess.run([cc, "-std=c11", "-Wall", "-Werror", f"-I{ROOT / 'tests/unit'}", "-o", str(d / "p"),
                    str(d / "p.c")], check=True, timeout=60)
    return d / "p"


def tally(log: Path, rc: int) -> str:
    script = f'source tests/harness.sh; skipped=0; tally "{log}" {rc}; echo "$passed $failed $skipped"'
    return subprocess.run(["bash", "-c", script], cwd=ROOT, capture_output=True, text=True,
                          check=True).stdout.strip()


@pytest.mark.parametrize("args,closing,counts", [
    ([], "1 passed, 1 failed, 1 skipped", "1 1 1"),
    (["x"], "2 passed, 0 failed, 1 skipped", "2 0 1"),
])
def test_a_skip_is_printed_and_counted_as_skipped(program, tmp_path, args, closing, counts):
    r = subprocess.run([str(program), *args], capture_output=True, text=True, timeout=10)
    lines = r.stdout.splitlines()
    assert "skip - a check this machine cannot make" in lines, r.stdout
    assert lines[-1] == closing and r.returncode == (0 if args else 1), r.stdout
    log = tmp_path / "log"
    log.write_text(r.stdout)
    assert tally(log, r.returncode) == counts
