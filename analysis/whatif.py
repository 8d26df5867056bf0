"""What an upgrade buys: `python3 -m analysis.whatif RUN.h5 ... CHANGE...`. The command is
analysis/commands/whatif.py; this path stays what users and the docs call."""

import sys

from .commands.whatif import main

if __name__ == "__main__":
    sys.exit(main())
