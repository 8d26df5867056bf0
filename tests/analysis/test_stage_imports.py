"""The stage rule of analysis/ (analysis/README.md): read <- derive <- find <- render <- commands, a
stage imports only itself and the stages below it, and no module outside read opens a result file
(h5py, open_h5). `python3 tests/analysis/test_stage_imports.py` prints what breaks it."""
from __future__ import annotations

import ast
import sys
from pathlib import Path

ANALYSIS = Path(__file__).resolve().parents[2] / "analysis"

STAGES = ("read", "derive", "find", "render", "commands")
# The command lines' old paths (python3 -m analysis.report, ...) are thin shims of commands/.
SHIMS = {"report", "compare", "scaling", "drift", "frames", "whatif"}
# What opens a result file: only the read stage may name these.
OPENERS = {"h5py", "open_h5"}


def stage_of(module: str) -> str | None:
    """'derive.model.fit' -> 'derive', 'report' -> 'commands', '' (the package, SCHEMA) -> None."""
    head = module.split(".", 1)[0]
    if head in STAGES:
        return head
    return "commands" if head in SHIMS else None


def module_of(rel: Path) -> str:
    parts = list(rel.with_suffix("").parts)
    return ".".join(parts[:-1] if parts[-1] == "__init__" else parts)


def imports(tree: ast.AST, module: str, is_package: bool) -> list[tuple[int, str]]:
    """(line, module below analysis) of every import of analysis' own modules."""
    package = module if is_package else module.rpartition(".")[0]
    out = []
    for node in ast.walk(tree):
        if isinstance(node, ast.ImportFrom) and node.level:
            base = package.split(".") if package else []
            base = base[: len(base) - (node.level - 1)]
            target = ".".join(base + ([node.module] if node.module else []))
            out += [(node.lineno, f"{target}.{a.name}".strip(".")) for a in node.names]
        elif isinstance(node, ast.ImportFrom) and (node.module or "").split(".")[0] == "analysis":
            out.append((node.lineno, node.module.partition(".")[2]))
        elif isinstance(node, ast.Import):
            out += [(node.lineno, a.name.partition(".")[2]) for a in node.names
                    if a.name.split(".")[0] == "analysis"]
    return out


def openers(tree: ast.AST) -> list[tuple[int, str]]:
    """(line, name) of every use of h5py or open_h5."""
    out = []
    for node in ast.walk(tree):
        if isinstance(node, ast.Import):
            out += [(node.lineno, a.name) for a in node.names if a.name.split(".")[0] in OPENERS]
        elif isinstance(node, ast.ImportFrom):
            names = {(node.module or "").split(".")[0]} | {a.name for a in node.names}
            out += [(node.lineno, n) for n in sorted(names & OPENERS)]
        elif isinstance(node, ast.Name) and node.id in OPENERS:
            out.append((node.lineno, node.id))
        elif isinstance(node, ast.Attribute) and node.attr in OPENERS:
            out.append((node.lineno, node.attr))
    return out


def violations(root: Path = ANALYSIS) -> list[str]:
    out = []
    for path in sorted(root.rglob("*.py")):
        rel = path.relative_to(root)
        module = module_of(rel)
        mine = stage_of(module)
        if mine is None and module:
            out.append(f"{rel}: every module lives in a stage folder ({', '.join(STAGES)}), "
                       "not at the top of analysis/")
            continue
        tree = ast.parse(path.read_text(encoding="utf-8"))
        for line, target in imports(tree, module, path.name == "__init__.py"):
            theirs = stage_of(target)
            if mine and theirs and STAGES.index(theirs) > STAGES.index(mine):
                out.append(f"{rel}:{line}: imports {target}: {mine}/ may not import {theirs}/")
        if mine != "read":
            out += [f"{rel}:{line}: {name}: only read/ opens a result file"
                    for line, name in sorted(set(openers(tree)))]
    return out


def test_analysis_keeps_the_stage_rule():
    assert violations() == []


def test_the_rule_sees_an_upward_import_and_a_file_opened_outside_read(tmp_path):
    files = {
        "__init__.py": 'SCHEMA = "wulfbench/1"\n',
        "read/__init__.py": "",
        "read/reader.py": "import h5py\nfrom .. import SCHEMA\n\ndef open_h5(p):\n    return h5py.File(p)\n",
        "derive/__init__.py": "",
        "derive/stats.py": "from ..find import tables\n",                   # derive may not import find
        "derive/health.py": "from ..read.reader import open_h5\n",          # opens outside read
        "find/__init__.py": "", "find/tables.py": "from ..derive import stats\n",   # allowed
        "render/__init__.py": "",
        "render/plots.py": "import analysis.commands.cli\n",                 # render may not import commands
        "render/page.py": "import h5py\n\nh5py.File('x.h5')\n",            # opens outside read
        "commands/__init__.py": "", "commands/cli.py": "from ..render import plots\n",  # allowed
        "report.py": "from .commands.cli import main\n",                     # a shim: a command
        "loose.py": "",                                                      # not in a stage
    }
    for rel, text in files.items():
        (tmp_path / rel).parent.mkdir(parents=True, exist_ok=True)
        (tmp_path / rel).write_text(text)
    got = violations(tmp_path)
    assert "derive/stats.py:1: imports find.tables: derive/ may not import find/" in got, got
    assert "render/plots.py:1: imports commands.cli: render/ may not import commands/" in got, got
    assert "derive/health.py:1: open_h5: only read/ opens a result file" in got, got
    assert {"render/page.py:1: h5py: only read/ opens a result file",
            "render/page.py:3: h5py: only read/ opens a result file"} <= set(got), got
    assert any(v.startswith("loose.py: every module lives in a stage folder") for v in got), got
    assert not any(v.startswith(("read/", "find/", "commands/", "report.py")) for v in got), got
    assert len(got) == 6, got


if __name__ == "__main__":
    bad = violations()
    print("\n".join(bad) or "analysis/ keeps the stage rule")
    sys.exit(1 if bad else 0)
