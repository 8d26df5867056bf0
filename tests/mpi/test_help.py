"""Help, man page and completion: made from the option tables, so every option --help shows has its
default and allowed values, aligned columns, and a man page entry."""

from __future__ import annotations

import re
import subprocess

import pytest

from conftest import BIN, mpi_env

SUBS = ["fft", "transfer", "load", "io", "suite", "info"]
OPTION = re.compile(r"^  (-[a-zA-Z], |    )(--[a-z0-9-]+)( \S+)?(?: +(\S.*))?$")


def run(*args: str) -> str:
    r = subprocess.run([str(BIN), *args], capture_output=True, text=True, timeout=60, env=mpi_env(),
                       stdin=subprocess.DEVNULL)
    assert r.returncode == 0, r.stderr
    return r.stdout


def options(help_text: str) -> list[tuple[str, str | None, int, str]]:
    """(option, argument, column where the description starts, the whole entry's text)."""
    out = []
    lines = help_text.splitlines()
    for i, line in enumerate(lines):
        m = OPTION.match(line)
        if not m:
            continue
        text = m.group(4) or ""
        col = m.start(4) if m.group(4) else None
        j = i + 1
        while j < len(lines) and lines[j].startswith(" " * 10) and not OPTION.match(lines[j]):
            if col is None:
                col = len(lines[j]) - len(lines[j].lstrip())
            text += " " + lines[j].strip()
            j += 1
        out.append((m.group(2), (m.group(3) or "").strip() or None, col or 0, text))
    return out


@pytest.mark.parametrize("sub", ["fft", "load", "suite"])
def test_every_option_with_a_value_shows_its_default(sub):
    for opt, arg, _, text in options(run(sub, "--help")):
        if arg:
            assert "default" in text, f"{sub} {opt}: no default in '{text}'"


@pytest.mark.parametrize("sub", ["fft", "load", "transfer", "suite"])
def test_descriptions_start_in_one_column(sub):
    cols = {col for _, _, col, _ in options(run(sub, "--help"))}
    assert len(cols) == 1, f"{sub}: descriptions start at columns {sorted(cols)}"


def test_choices_are_listed_and_numbers_have_ranges():
    entries = {opt: (arg, text) for opt, arg, _, text in options(run("fft", "--help"))}
    assert entries["--plan"][0] == "estimate|measure|patient"
    assert entries["--schedule"][0].count("|") >= 1
    assert "16 to 16M" in entries["--frame"][1]
    assert "1 to 1000000" in entries["--reps"][1]


def test_suite_help_says_what_it_runs_and_what_passes_through():
    text = run("suite", "--help")
    assert re.search(r"It runs fft, transfer and load", text) or re.search(r"It runs fft, transfer, load", text)
    assert "pass through to every part" in text
    assert "--reps N" in text and "--timeout SECONDS" in text


def test_man_page_lists_every_option_help_does():
    man = run("--man")
    assert man.startswith(".TH WULFBENCH 1")
    for sub in SUBS:
        for opt, _, _, _ in options(run(sub, "--help")):
            assert "\\-\\-" + opt[2:].replace("-", "\\-") + "\\fR" in man, f"{sub} {opt} is not in the man page"


def test_completion_offers_every_subcommand_and_option():
    script = run("--bash-completion")
    assert "complete -F _wulfbench wulfbench" in script
    for sub in SUBS:
        assert f"{sub}) sub={sub}" in script
        for opt, _, _, _ in options(run(sub, "--help")):
            assert f" {opt}" in script, f"{sub} {opt} is not completed"
