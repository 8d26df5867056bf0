"""A machine's speed change between two baselines: `python3 -m analysis.drift BEFORE AFTER`, as
`make run` calls it. The command is analysis/commands/drift.py; this path stays what users, the
Makefile and the docs call."""

import sys

from .commands.drift import main

if __name__ == "__main__":
    sys.exit(main())
