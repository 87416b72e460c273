"""The frozen app's entry point: the same `desktop-memory` command line as the installed package."""

import sys

from desktop_memory.cli.main import main

if __name__ == "__main__":
    sys.exit(main())
