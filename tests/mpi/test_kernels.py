"""The kernels module through the programs: info and the result file name each rank's variant, a
fault-build switch forces each variant, and every variant this CPU runs gives the same results."""
from __future__ import annotations

import re
from pathlib import Path

import h5py
import pytest

from conftest import run_faults, run_wb

SMALL = ("--sweep", "files", "--files", "3", "--file-seconds", "1", "--reps", "1", "--warmup", "0")


def kernels_line(stdout: str) -> str:
    lines = [l for l in stdout.splitlines() if l.startswith("kernels ")]
    assert len(lines) == 1, stdout
    return lines[0]


def built_and_here() -> tuple[list[str], list[str]]:
    """The variants the build holds, and those this CPU runs, as info lists them."""
    r = run_wb(1, "info")
    assert r.returncode == 0, r.stderr
    built = re.search(r"\(built: (.*)\)$", kernels_line(r.stdout)).group(1).split()
    return [b.removesuffix("(not here)") for b in built], [b for b in built if not b.endswith("(not here)")]


def test_info_names_the_best_variant_this_cpu_runs():
    built, here = built_and_here()
    assert built and here and built[0] == here[0]
    r = run_wb(2, "info")
    assert re.match(rf"kernels +{re.escape(here[-1])} on every rank ", kernels_line(r.stdout)), r.stdout


def test_a_forced_variant_is_named_by_info_and_a_missing_one_refused():
    built, here = built_and_here()
    for v in here:
        r = run_faults(2, "info", env={"WB_KERNEL_VARIANT": v})
        assert r.returncode == 0, r.stderr
        assert re.match(rf"kernels +{re.escape(v)} on every rank ", kernels_line(r.stdout))
    r = run_faults(2, "info", env={"WB_KERNEL_VARIANT": "no-such-isa"})
    assert r.returncode == 2 and "kernel variant 'no-such-isa' is not in this build" in r.stderr, r.stderr
    if len(built) > 1:
        # A CPU that lacks the best variant: asked for, it is refused; not asked for, the next best runs.
        best = built[-1]
        r = run_faults(2, "info", env={"WB_KERNEL_VARIANT": best, "WB_KERNEL_HIDE": best})
        assert r.returncode == 2 and f"'{best}' needs an instruction set this CPU lacks" in r.stderr, r.stderr
        r = run_faults(2, "info", env={"WB_KERNEL_HIDE": best})
        assert r.returncode == 0 and re.match(rf"kernels +{re.escape(built[-2])} on", kernels_line(r.stdout))


@pytest.mark.parametrize("precision,result", [("single", "spectra"), ("double", "peaks")])
def test_every_variant_gives_the_same_results_and_the_file_names_it(tmp_path: Path, result, precision):
    _, here = built_and_here()
    wisdom = tmp_path / "w.wisdom"
    args = ("fft", *SMALL, "--precision", precision, "--result", result, "--wisdom", str(wisdom))
    # Shared wisdom: every run uses the same FFTW plan, so only the kernel variant differs.
    r = run_faults(1, *args, "-o", str(tmp_path / "plan.h5"), env={"WB_FAULT": "none"}, timeout=120)
    assert r.returncode == 0, r.stderr
    digests = {}
    for v in here:
        out = tmp_path / f"{v}.h5"
        r = run_faults(2, *args, "-o", str(out), env={"WB_KERNEL_VARIANT": v}, timeout=120)
        assert r.returncode == 0, r.stderr
        with h5py.File(out, "r") as f:
            assert f.attrs["kernel_variant"] == v
            d = f["kernel_variant"]
            names = h5py.check_enum_dtype(d.dtype)
            assert [k for c in d[()] for k, n in names.items() if n == c] == [v, v]
            g = f["fft/p000/verify"]
            assert g.attrs["passed"] == 1
            digests[v] = int(g.attrs["test_results_digest"])
    assert len(set(digests.values())) == 1, digests
