"""The report: `python3 -m analysis.report FILES... -o DIR`, as the Makefile and make install's
wulfbench-report call it. The command is analysis/commands/report.py; this path stays what
users, the Makefile and the docs call."""

import sys

from .commands.report import main

if __name__ == "__main__":
    sys.exit(main())
