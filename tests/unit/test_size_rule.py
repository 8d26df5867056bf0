"""The size rule of src/: no C file over 700 lines, and no function over 80 lines, counted from the
function's opening line to its closing brace, except the option switches named below.
`python3 tests/unit/test_size_rule.py` prints what breaks it."""
from __future__ import annotations

import re
import sys
from pathlib import Path

SRC = Path(__file__).resolve().parents[2] / "src"
MAX_FILE_LINES = 700
MAX_FUNCTION_LINES = 80
# Functions whose body is one switch over a subcommand's option ids: a case per option, each a line
# or two, which read best in one place beside the option table they answer.
SWITCHES = {
    "wb_fft_opts_set": "fft's option switch: one case per option of bench/fft/options_fft.c's table",
    "wb_load_opts_set": "load's option switch: one case per option of bench/load/options_load.c's table",
}
NAME = re.compile(r"(\w+)\s*\(")


def functions(text: str) -> list[tuple[str, int, int]]:
    """(name, first line, line count) of each function of a C file in the house style: its signature
    starts at the left margin, continuation lines are indented, and its braces stand alone at the
    left margin."""
    lines = text.splitlines()
    out = []
    for i, line in enumerate(lines):
        if line != "{":
            continue
        start = i - 1
        while start > 0 and lines[start][:1] in (" ", "\t"):
            start -= 1
        end = i
        while end < len(lines) and lines[end] != "}":
            end += 1
        m = NAME.search(" ".join(lines[start:i]))
        if m:
            out.append((m.group(1), start + 1, end - start + 1))
    return out


def is_switch(text: str, first: int) -> bool:
    """1 if the function at line first has a switch as its body's main statement."""
    body = text.splitlines()[first:]
    return any(l.startswith("    switch (") for l in body[: body.index("}") if "}" in body else len(body)])


def violations(root: Path = SRC) -> list[str]:
    out = []
    for path in sorted(root.rglob("*.c")):
        rel = path.relative_to(root).as_posix()
        text = path.read_text(errors="replace")
        n = len(text.splitlines())
        if n > MAX_FILE_LINES:
            out.append(f"{rel}: {n} lines, over {MAX_FILE_LINES}: split it by role")
        for name, first, count in functions(text):
            if count <= MAX_FUNCTION_LINES:
                continue
            if name in SWITCHES and is_switch(text, first):
                continue
            out.append(f"{rel}:{first}: {name} has {count} lines, over {MAX_FUNCTION_LINES}: split it into named steps")
    return out


def longest(root: Path = SRC) -> tuple[tuple[int, str], tuple[int, str]]:
    """The largest C file and the longest function not exempted, as (lines, where)."""
    files, funcs = [], []
    for path in sorted(root.rglob("*.c")):
        rel = path.relative_to(root).as_posix()
        text = path.read_text(errors="replace")
        files.append((len(text.splitlines()), rel))
        funcs += [(count, f"{rel}:{first} {name}") for name, first, count in functions(text) if name not in SWITCHES]
    return max(files), max(funcs)


def test_src_keeps_the_size_rule():
    assert violations() == []


def test_the_rule_sees_a_long_file_and_a_long_function(tmp_path):
    (tmp_path / "core").mkdir()
    long_fn = "static int long_one(int a,\n                    int b)\n{\n" + "    a++;\n" * 79 + "}\n"
    (tmp_path / "core" / "a.c").write_text(long_fn + "x;\n" * (MAX_FILE_LINES - long_fn.count("\n") + 1))
    switch = "int wb_fft_opts_set(int id)\n{\n    switch (id) {\n" + "    case 1:\n" * 90 + "    }\n}\n"
    ok = "int short_one(void)\n{\n" + "    ;\n" * 77 + "}\n"
    (tmp_path / "core" / "b.c").write_text(switch + ok)
    got = violations(tmp_path)
    assert got == [f"core/a.c: {MAX_FILE_LINES + 1} lines, over {MAX_FILE_LINES}: split it by role",
                   "core/a.c:1: long_one has 83 lines, over 80: split it into named steps"], got


if __name__ == "__main__":
    bad = violations()
    (fl, fw), (nl, nw) = longest()
    print("\n".join(bad) or f"src/ keeps the size rule; largest file {fw} ({fl} lines), longest function {nw} ({nl} lines)")
    sys.exit(1 if bad else 0)
