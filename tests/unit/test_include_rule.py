"""The include rule of src/ (README, module map): a folder includes only its own files and the
folders below it, the bench/* folders never include each other, and no files include each other in
a circle; and no code compares with a subcommand's name, which a property of its table entry answers.
`python3 tests/unit/test_include_rule.py` prints what breaks it."""
from __future__ import annotations

import re
import sys
from pathlib import Path

SRC = Path(__file__).resolve().parents[2] / "src"

# Each folder and the folders it may include besides itself, lowest first. bench/* stands for
# each of bench/fft, bench/transfer, bench/load, bench/dfft: it may include itself and bench/ but
# not a sibling.
BELOW: dict[str, set[str]] = {
    "core": set(),
    "par": {"core"},
    "fftw": {"core", "par"},
    "io": {"core", "par"},
    "bench": {"core", "fftw", "par", "io"},
    "bench/*": {"core", "fftw", "par", "io", "bench"},
    "cli": {"core", "fftw", "par", "io", "bench", "bench/*"},
}
# The subcommand table: the one file outside a bench/X folder that includes from it.
TABLE = "cli/subcommand.c"
INCLUDE = re.compile(r'^\s*#\s*include\s+"([^"]+)"', re.M)


def folder_of(rel: str) -> str:
    """'bench/fft/bench_fft.c' -> 'bench/fft', 'core/error.h' -> 'core'."""
    return rel.rsplit("/", 1)[0] if "/" in rel else ""


def allowed(src_folder: str, dst_folder: str) -> bool:
    if src_folder == dst_folder:
        return True
    rule = "bench/*" if src_folder.startswith("bench/") else src_folder
    if rule not in BELOW:
        return False
    ok = BELOW[rule]
    return dst_folder in ok or (dst_folder.startswith("bench/") and "bench/*" in ok)


def includes(root: Path) -> dict[str, list[str]]:
    """Every .c and .h under root (paths relative to it) and the project headers it includes."""
    return {p.relative_to(root).as_posix(): INCLUDE.findall(p.read_text(errors="replace"))
            for p in sorted(root.rglob("*.[ch]"))}


def module(rel: str) -> str:
    """A .c and its .h are one module: 'par/comm.c' and 'par/comm.h' -> 'par/comm'."""
    return rel.rsplit(".", 1)[0]


def uses(files: dict[str, list[str]]) -> dict[str, set[str]]:
    """Who depends on whom: a module's .c on the modules whose headers it includes (what it calls),
    and a header on the headers it includes (what it declares with). A header without a .c, such as
    the internal results_int.h, stands for itself."""
    graph: dict[str, set[str]] = {}
    for rel, incs in files.items():
        if rel.endswith(".c"):
            node = module(rel)
            dsts = {module(i) if f"{module(i)}.c" in files else i for i in incs}
        else:
            node, dsts = rel, set(incs)
        graph.setdefault(node, set()).update(d for d in dsts if d != node)
    return graph


def circles(graph: dict[str, set[str]]) -> list[list[str]]:
    """Each circle found by a depth-first walk, as the modules along it."""
    found, state, path = [], {}, []

    def walk(m: str) -> None:
        state[m] = 1
        path.append(m)
        for n in sorted(graph.get(m, ())):
            if state.get(n) == 1:
                found.append(path[path.index(n):] + [n])
            elif n not in state:
                walk(n)
        path.pop()
        state[m] = 2

    for m in sorted(graph):
        if m not in state:
            walk(m)
    return found


def violations(root: Path = SRC) -> list[str]:
    files = includes(root)
    out = []
    for rel, incs in files.items():
        if "/" not in rel:
            out.append(f"{rel}: every file lives in a layer folder, not at the top of src/")
        for inc in incs:
            if inc not in files:
                out.append(f'{rel}: #include "{inc}" is not a path under src/ (write it as folder/name.h)')
                continue
            sub = folder_of(inc)
            if sub.startswith("bench/") and folder_of(rel) != sub and rel != TABLE:
                # Adding a subcommand touches only the table and its own folder.
                out.append(f'{rel}: #include "{inc}": only {TABLE} reaches into a subcommand\'s folder')
            elif not allowed(folder_of(rel), folder_of(inc)):
                out.append(f'{rel}: #include "{inc}": {folder_of(rel) or "src"}/ may not include '
                           f'{folder_of(inc) or "src"}/')
    out += [f"circle: {' -> '.join(c)}" for c in circles(uses(files))]
    return out


def test_src_keeps_the_include_rule():
    assert violations() == []


def test_the_rule_sees_a_bad_include(tmp_path):
    """An up-include, a sibling include, a bare name, a circle and a reach into a subcommand's folder
    from outside the table are each reported."""
    files = {
        "core/error.h": "",
        "core/timer.c": '#include "par/comm.h"\n',            # core may not include par
        "par/comm.h": "",
        "par/comm.c": '#include "par/comm.h"\n#include "core/error.h"\n',
        "bench/fft/a.c": '#include "bench/load/b.h"\n',      # a sibling bench folder
        "bench/load/b.h": '#include "bench.h"\n',            # not a path under src/
        "io/x.c": '#include "io/y.h"\n', "io/x.h": "",
        "io/y.c": '#include "io/x.h"\n', "io/y.h": "",       # io/x and io/y in a circle
        "cli/main.c": '#include "bench/load/b.h"\n#include "core/error.h"\n',   # only the table may
        "cli/subcommand.c": '#include "bench/load/b.h"\n',  # allowed
    }
    for rel, text in files.items():
        (tmp_path / rel).parent.mkdir(parents=True, exist_ok=True)
        (tmp_path / rel).write_text(text)
    got = violations(tmp_path)
    assert any(v.startswith('core/timer.c: #include "par/comm.h"') for v in got), got
    assert any(v.startswith('bench/fft/a.c: #include "bench/load/b.h"') for v in got), got
    assert any(v.startswith('bench/load/b.h: #include "bench.h" is not a path') for v in got), got
    assert any(v.startswith("circle: io/x -> io/y -> io/x") for v in got), got
    assert any(v.startswith('cli/main.c: #include "bench/load/b.h": only cli/subcommand.c') for v in got), got
    assert not any(v.startswith("cli/subcommand.c") or v.startswith("par/") for v in got), got
    assert len(got) == 5, got


def by_name(root: Path = SRC) -> list[str]:
    """Places that compare with a subcommand's name (a name of the table) instead of asking a property
    of its table entry."""
    names = re.findall(r'\.name = "([^"]+)"', (root / TABLE).read_text())
    cmp = re.compile(r'strn?cmp\([^;]*"(%s)"' % "|".join(map(re.escape, names)))
    return [f"{p.relative_to(root).as_posix()}:{i}: compares with the name \"{m.group(1)}\"; give its table "
            f"entry a property instead"
            for p in sorted(root.rglob("*.[ch]"))
            for i, line in enumerate(p.read_text(errors="replace").splitlines(), 1)
            for m in [cmp.search(line)] if m]


def test_no_code_asks_for_a_subcommand_by_name():
    assert by_name() == []


if __name__ == "__main__":
    bad = violations() + by_name()
    print("\n".join(bad) or "src/ keeps the include rule")
    sys.exit(1 if bad else 0)
