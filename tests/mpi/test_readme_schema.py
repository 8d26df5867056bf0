"""The HDF5 layout block of docs/reading.md against real files: every name it lists is an attribute, member
or compound field where the block puts it, in a file written by `wulfbench suite` (and, for the
lines marked "(with --pairs all)", by `transfer --pairs all`)."""

from __future__ import annotations

import re

import h5py
import pytest

from conftest import MPI_IMPL, ROOT, build_has_fftw_mpi, run_wb

NAME = re.compile(r"[A-Za-z_][A-Za-z0-9_]*")


def readme_block() -> list[str]:
    text = (ROOT / "docs" / "reading.md").read_text()
    head = text.index("### HDF5 layout")
    start = text.index("```\n", head) + 4
    return text[start:text.index("```", start)].splitlines()


def entries(lines: list[str]) -> list[tuple[str, str, bool, list[str]]]:
    """(group path, sub path or "", attrs?, names) per logical line; continuation lines join the
    line above."""
    out: list[tuple[str, str, bool, list[str]]] = []
    group = ""
    for line in lines:
        if not line.strip():
            continue
        if line.startswith("/"):
            path, _, rest = line.partition(" ")
            group, sub = path, ""
        elif line.startswith("    ") and line[4] != " ":
            first, _, after = line.strip().partition(" ")
            sub, rest = (first, after) if first.endswith("/") or "/" in first else ("", line)
        else:
            out[-1][3].extend(names_of(line))
            continue
        attrs = "attrs:" in rest
        out.append((group, sub, attrs, names_of(rest.replace("attrs:", ""))))
    return out


def names_of(text: str) -> list[str]:
    text = re.sub(r"\[[^]]*\]", " ", text)
    text = re.sub(r"\([^)]*\)", " ", text)
    return NAME.findall(text)


def resolve(f: h5py.File, path: str) -> list[h5py.HLObject]:
    """The objects a block path stands for: pNNN, sNNN and <test> mean every such member."""
    objs: list[h5py.HLObject] = [f]
    for part in [p for p in path.strip("/").split("/") if p]:
        nxt = []
        for o in objs:
            if part in ("pNNN", "sNNN", "<test>"):
                nxt += [o[k] for k in o if isinstance(o[k], h5py.Group) and not k.startswith("pairs_")]
            elif part in o:
                nxt.append(o[part])
        objs = nxt
    return objs


def known(obj: h5py.HLObject) -> set[str]:
    names = set(obj.attrs)
    if isinstance(obj, h5py.Dataset):
        names |= set(obj.dtype.names or ())
    else:
        for k in obj:
            names.add(k)
            if isinstance(obj[k], h5py.Dataset) and obj[k].dtype.names:
                names |= set(obj[k].dtype.names)
    return names


@pytest.fixture(scope="module")
def files(tmp_path_factory):
    d = tmp_path_factory.mktemp("schema")
    suite, pairs = d / "suite.h5", d / "pairs.h5"
    r = run_wb(2, "suite", "--reps", "2", "--warmup", "0", "-q", "-o", str(suite), timeout=300)
    assert r.returncode == 0, r.stderr
    r = run_wb(2, "transfer", "--pairs", "all", "--tests", "pingpong", "-m", "8", "-i", "5", "-q", "-o", str(pairs))
    assert r.returncode == 0, r.stderr
    return suite, pairs


def test_every_name_in_the_readme_block_is_in_a_real_file(files):
    suite, pairs = files
    lines = readme_block()
    assert any(line.startswith("/fft/") for line in lines)
    missing = []
    checked = 0
    for group, sub, _, names in entries(lines):
        wanted = pairs if "(with --pairs all)" in "\n".join(l for l in lines if l.startswith(group + " ")) else suite
        with h5py.File(wanted) as f:
            if group.startswith("/dfft") and MPI_IMPL == "mpich" and not build_has_fftw_mpi():
                continue  # an MPICH build without FFTW-MPI for MPICH (jobs/build-fftw-mpi.sh) has no dfft to run
            objs = resolve(f, group + "/" + sub) if sub else resolve(f, group)
            if not objs:
                missing.append(f"{group}{sub} (no such object)")
                continue
            have = set().union(*(known(o) for o in objs))
            for n in names:
                checked += 1
                if n not in have:
                    missing.append(f"{group}{sub}: {n}")
    assert checked > 100, f"only {checked} names parsed from the docs/reading.md block"
    assert not missing, "in docs/reading.md's layout block but not in the file: " + ", ".join(missing)


def test_the_readme_units_claim_holds(files):
    suite, _ = files
    without: list[str] = []
    with h5py.File(suite) as f:
        f.visititems(lambda n, o: without.append(n) if isinstance(o, h5py.Dataset) and "units" not in o.attrs
                     else None)
    exceptions = {re.sub(r"p\d{3}", "pNNN", n) for n in without}
    assert exceptions <= {"hosts", "fft/pNNN/inputs"}, exceptions


def test_the_suite_and_the_dfft_bench_measure_bibw_by_one_rule(files, tmp_path):
    """The bench sets the transposes against bibw; the report sets the suite's against it. Both must
    follow one rule (fresh send buffers, no extra check that moves the caches): the bench's command
    line, as tests/bench/dfft_bench.sh writes it, gives the suite's rule attributes."""
    script = (ROOT / "tests" / "bench" / "dfft_bench.sh").read_text()
    line = re.search(r'"\$BIN" (transfer --tests bibw [^\\\n]*)', script)
    assert line, "no bibw command in tests/bench/dfft_bench.sh"
    args = line.group(1).replace('"$msg:$msg"', "65536:65536").split()
    assert all("$" not in a for a in args), args
    bench = tmp_path / "bench.h5"
    r = run_wb(2, *args, "-i", "3", "-o", str(bench))
    assert r.returncode == 0, r.stderr
    suite, _ = files
    rule = ("send_buffers", "validated", "kind", "operation", "pairs_mode")
    with h5py.File(suite) as s, h5py.File(bench) as b:
        mine, theirs = (dict((k, f["transfer/bibw"].attrs.get(k)) for k in rule) for f in (b, s))
    assert mine == theirs and mine["send_buffers"] == "fresh", (mine, theirs)
