"""Two runs side by side: `python3 -m analysis.compare A.h5 B.h5`, as `make compare` calls it. The
command is analysis/commands/compare.py; this path stays what users, the Makefile and the docs
call."""

import sys

from .commands.compare import main

if __name__ == "__main__":
    sys.exit(main())
