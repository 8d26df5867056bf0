"""A run's stdout tables and HDF5 contents as text, with what changes from run to run masked: times
and what follows from them, the FFTW plan's batch, host facts and build names. Two builds of the same
behaviour give the same text for the same fixed-seed run.

  python3 tests/mpi/golden.py OLD_BIN NEW_BIN   runs both on the GOLDEN runs and prints any difference
  python3 tests/mpi/golden.py --write BIN       rewrites the fixtures in tests/mpi/golden/ from BIN
"""
from __future__ import annotations

import argparse
import difflib
import re
import subprocess
import sys
import tempfile
from pathlib import Path

import h5py
import numpy as np

HERE = Path(__file__).resolve().parent
FIXTURES = HERE / "golden"

# name: (ranks, arguments). --plan estimate: FFTW picks the same algorithm every time, so even the
# verify errors are exact; measure would pick by timing.
GOLDEN_RUNS: dict[str, tuple[int, list[str]]] = {
    f"fft_{s}": (3, ["fft", "--seed", "7", "--seconds", "1,5", "--files", "1:2", "--reps", "2", "--plan",
                     "estimate", "--schedule", s])
    for s in ("pipelined", "phased", "dynamic")
}

# Table columns that are times or rates made from times.
TIME_COLUMNS = {"t_read", "t_dist", "t_comp", "t_fft", "t_gather", "t_over", "t_total", "kB/s", "GFLOPS"}
# File attributes that name the build, the host's libraries or the moment of the run.
MASKED_ROOT_ATTRS = {"command_line", "created_utc", "git_rev", "version", "cflags", "compiler", "mpi_library",
                     "fftw_version", "hdf5_version", "wtick_s"}
# Point attributes and datasets measured in time, or chosen from timing (batch, which rank was slowest).
MASKED_NAMES = {"batch", "ci_halfwidth_rel", "overlap", "rate_kBps", "median", "slowest_rank",
                # the rates and ceilings (docs/reading.md, "Ceilings"): from times, and the machine's
                "gflops", "kBps", "core_gflops", "cores_used", "gflops_ceiling", "kBps_ceiling",
                "gflops_above_ceiling", "kBps_above_ceiling", "machines", "oversubscribed_machines"}
# Fields of compound tables that are times or host facts; the other fields are compared.
MASKED_FIELDS = {"t_start", "t_end", "hostname", "cpu_model", "cores", "mem_bytes", "cpu_mhz", "cpu_mhz_min",
                 "temp_c_start", "temp_c_end", "temp_c_max", "throttled"}
# Host facts /hosts gained after the fixtures were written (the readiness columns, docs/check.md): this
# machine's, so neither named nor compared.
ADDED_FIELDS = {"governor", "freq_min_mhz", "freq_max_mhz", "iface", "iface_kind", "link_mbps", "mtu", "git_rev",
                "mpi_library", "fftw_version", "hdf5_version", "model", "arch",
                "boot_id", "cpu_quota", "cores_usable", "cpu_mask", "copy_Bps"}
# Per-rank counts the dynamic schedule shares out by who asks first: only their sum is fixed (and
# its timeline only in its fields).
PER_RANK = {"bytes_in", "bytes_out", "flops", "frames"}
NUMBER = re.compile(r"-?\d+(\.\d+)?(e[-+]?\d+)?")


def normalize_stdout(text: str) -> list[str]:
    out, columns = [], []
    for line in text.splitlines():
        if line.startswith("#point"):
            columns = line[1:].split()
        elif line.startswith("# results:"):
            line = "# results: <path>"
        elif line.startswith("#      t_over < 0:"):
            continue  # printed when the phases overlapped, which timing decides
        elif "per rank:" in line:
            line = NUMBER.sub("<t>", line)
        elif columns and not line.startswith("#") and len(line.split()) == len(columns):
            line = " ".join("<t>" if c in TIME_COLUMNS else v for c, v in zip(columns, line.split()))
        out.append(line)
    return out


def _value(name: str, value: object, dynamic: bool) -> str:
    a = np.asarray(value)
    if dynamic and name == "timeline":
        return f"{a.dtype.names} <chunks as they were asked for>"
    if a.dtype.names:
        names = tuple(f for f in a.dtype.names if f not in ADDED_FIELDS)
        keep = [f for f in names if f not in MASKED_FIELDS]
        rows = a.reshape(-1)
        return f"{names} {a.shape} " + repr([[r[f].tolist() for f in keep] for r in rows])
    if dynamic and name in PER_RANK:
        return f"{a.dtype.str} {a.shape} sum={a.sum().tolist()!r}"
    # repr of a float is exact, and NaN equals NaN as text.
    return f"{a.dtype.str} {a.shape} {a.tolist()!r}"


def normalize_h5(path: Path) -> list[str]:
    out: list[str] = []
    with h5py.File(path, "r") as f:
        dynamic = False

        def attrs(obj: h5py.HLObject, where: str, masked: set[str]) -> None:
            for k in sorted(obj.attrs):
                v = obj.attrs[k]
                shown = f"{np.asarray(v).dtype.kind} <masked>" if k in masked else _value(k, v, dynamic)
                out.append(f"{where}@{k} = {shown}")

        attrs(f, "/", MASKED_ROOT_ATTRS)

        def visit(name: str, obj: h5py.HLObject) -> None:
            nonlocal dynamic
            if isinstance(obj, h5py.Group):
                dynamic = obj.attrs.get("schedule", b"") in ("dynamic", b"dynamic") or dynamic
                out.append(f"/{name}/")
            else:
                leaf = name.rsplit("/", 1)[-1]
                if leaf in MASKED_NAMES or leaf.startswith("t_"):
                    shown = f"{obj.dtype.str} {obj.shape} <masked>"
                else:
                    shown = _value(leaf, obj[()], dynamic)
                out.append(f"/{name} = {shown}")
            attrs(obj, f"/{name}", MASKED_NAMES)

        f.visititems(visit)
    return out


def run(binary: Path, name: str, workdir: Path, env: dict[str, str] | None = None) -> list[str]:
    """Run one GOLDEN_RUNS entry with binary; its normalized stdout, then its normalized file."""
    from conftest import launcher, mpi_env  # the one place that spells the launch command
    ranks, args = GOLDEN_RUNS[name]
    h5 = workdir / f"{name}.h5"
    r = subprocess.run([*launcher(ranks), str(binary), *args, "-o", str(h5), "--force"], capture_output=True,
                       text=True, timeout=180, env=env or mpi_env(), stdin=subprocess.DEVNULL, cwd=workdir)
    if r.returncode != 0:
        raise RuntimeError(f"{binary} {' '.join(args)}: exit {r.returncode}: {r.stderr.strip()[-500:]}")
    return ["== stdout", *normalize_stdout(r.stdout), "== file", *normalize_h5(h5)]


def main(argv: list[str]) -> int:
    p = argparse.ArgumentParser(description="Compare two builds' fixed-seed runs, or rewrite the fixtures.")
    p.add_argument("--write", action="store_true", help="rewrite tests/mpi/golden/*.txt from the one binary given")
    p.add_argument("binaries", nargs="+", type=Path, help="OLD_BIN NEW_BIN, or with --write one BIN")
    a = p.parse_args(argv)
    sys.path.insert(0, str(HERE))
    status = 0
    with tempfile.TemporaryDirectory() as d:
        for name in GOLDEN_RUNS:
            if a.write:
                FIXTURES.mkdir(exist_ok=True)
                (FIXTURES / f"{name}.txt").write_text("\n".join(run(a.binaries[0].resolve(), name, Path(d))) + "\n")
                continue
            old, new = (run(b.resolve(), name, Path(d)) for b in a.binaries)
            diff = list(difflib.unified_diff(old, new, f"{name} old", f"{name} new", lineterm=""))
            print(f"{name}: {'same' if not diff else 'DIFFERENT'} ({len(old)} lines)")
            print("\n".join(diff[:80]))
            status |= bool(diff)
    return status


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
