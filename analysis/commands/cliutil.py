"""What the command lines (report, compare, scaling) share: the one-line error lines and
exit codes, the parser, `guarded_main`, the program name; `md_escape` for the names they
write."""

from __future__ import annotations

import os
import re
from typing import Any

from ..read.reader import InputError, UsageError
from ..read.runs import Run


def bad_file_lines(named: list[InputError], found: list[InputError], runs: list[Run],
                   skip_bad: bool, prog: str) -> list[str]:
    """One stderr line per file that could not be used. A file named on the command
    line stops the report unless --skip-bad; one found in a folder is skipped."""
    lines = []
    for err in named:
        line = f"{prog}: {err.subject}: {err.what}; {err.todo}"
        if skip_bad:
            line += "; skipped"
        elif runs:
            line += (f" (or pass --skip-bad to report the {len(runs)} readable "
                     f"file{'s' if len(runs) != 1 else ''})")
        lines.append(line)
    lines += [f"{prog}: {err.subject}: {err.what}; skipped (found in a folder; {err.todo})"
              for err in found]
    return lines


def new_parser(default_prog: str, description: str, epilog: str):
    """An argparse parser that calls itself prog_name(default_prog), keeps the
    text's line breaks and raises UsageError (one line, no usage dump)."""
    import argparse

    class Parser(argparse.ArgumentParser):
        def error(self, message: str) -> None:
            raise UsageError(message)
    return Parser(prog=prog_name(default_prog), description=description, epilog=epilog,
                  formatter_class=argparse.RawDescriptionHelpFormatter)


def guarded_main(run: Any, argv: list[str], prog: str,
                 interrupted: str = "interrupted") -> int:
    """Run a command line tool's `run(argv)` so that the user sees one line, never
    a traceback: UsageError exits 2, InputError 1, Ctrl-C 130, anything else 1
    as an "internal error" (WB_REPORT_DEBUG=1 shows the traceback)."""
    import sys
    import warnings
    warnings.simplefilter("ignore")
    try:
        return run(argv)
    except UsageError as err:
        print(f"{prog}: {err}; see --help", file=sys.stderr)
        return 2
    except InputError as err:
        print(f"{prog}: {err.subject}: {err.what}; {err.todo}", file=sys.stderr)
        return 1
    except KeyboardInterrupt:
        print(f"{prog}: {interrupted}", file=sys.stderr)
        return 130
    except Exception as exc:  # never show a traceback to the user
        if os.environ.get("WB_REPORT_DEBUG"):
            raise
        detail = " ".join(str(exc).split())[:200]
        print(f"{prog}: internal error ({type(exc).__name__}: {detail}); please report it with "
              "the input files", file=sys.stderr)
        return 1


def prog_name(default: str) -> str:
    """The name a command line tool calls itself: $WB_PROG (set by an installed
    wrapper such as wulfbench-report), else `default`."""
    return os.environ.get("WB_PROG", "").strip() or default


_MD_INLINE = re.compile(r"([\\`*_\[\]|~#!])")


_MD_LIST = re.compile(r"^([-+=])")


_MD_NUMBERED = re.compile(r"^(\d+)([.)])")


def md_escape(value: Any) -> str:
    """User text (a label, a file or host name) made safe for one Markdown line or
    table cell: no line breaks, no HTML, and no character that would start
    emphasis, code, a link, a table cell, a heading or a list."""
    out = " ".join(str(value).split())
    out = out.replace("&", "&amp;").replace("<", "&lt;").replace(">", "&gt;")
    out = _MD_INLINE.sub(r"\\\1", out)
    out = _MD_LIST.sub(r"\\\1", out)
    return _MD_NUMBERED.sub(r"\1\\\2", out)
