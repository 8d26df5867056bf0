"""The same fixed-seed fft runs give the same stdout tables and HDF5 contents (apart from times, host
facts and build names) as the fixtures in tests/mpi/golden/, written by the build before src/ was laid
out in folders (820c829). Lines the build adds (new datasets such as energy_j or net/, each checked by
its own tests) are allowed; a fixture line that changed or went missing is not. A change meant to alter
them rewrites them: python3 tests/mpi/golden.py --write BIN."""
from __future__ import annotations

import difflib

import pytest

from conftest import BIN
from golden import FIXTURES, GOLDEN_RUNS, normalize_h5, normalize_stdout, run


@pytest.mark.parametrize("name", sorted(GOLDEN_RUNS))
def test_run_matches_fixture(name, tmp_path):
    want = (FIXTURES / f"{name}.txt").read_text().splitlines()
    got = run(BIN, name, tmp_path)
    diff = list(difflib.unified_diff(want, got, "fixture", "this build", lineterm=""))
    lost = [d for d in diff if d.startswith("-") and not d.startswith("---")]
    assert not lost, "\n".join(diff[:60])


def test_normalizing_keeps_what_must_not_change(tmp_path):
    """The masks hide times, not results: a changed count in a table row or a changed value in the
    file still shows as a difference."""
    table = "#point scenario  files  t_total   kB/s verify\n0     sizes        1     0.252    349750.2 ok\n"
    assert normalize_stdout(table)[1] == "0 sizes 1 <t> <t> ok"
    assert normalize_stdout(table.replace(" 1     0.252", " 2     0.300"))[1] == "0 sizes 2 <t> <t> ok"
    import h5py
    import numpy as np
    path = tmp_path / "x.h5"
    with h5py.File(path, "w") as f:
        g = f.create_group("fft/p000")
        g.attrs["transforms"] = 20
        g.create_dataset("t_total", data=np.array([0.1, 0.2]))
    before = normalize_h5(path)
    with h5py.File(path, "a") as f:
        f["fft/p000/t_total"][...] = [0.3, 0.4]
    assert normalize_h5(path) == before
    with h5py.File(path, "a") as f:
        f["fft/p000"].attrs["transforms"] = 21
    assert normalize_h5(path) != before
