"""The measured scaling figure: `python3 -m analysis.scaling FILES... -o DIR`. The command is
analysis/commands/scaling.py; this path stays what users, the Makefile and the docs call."""

import sys

from .commands.scaling import main

if __name__ == "__main__":
    sys.exit(main())
