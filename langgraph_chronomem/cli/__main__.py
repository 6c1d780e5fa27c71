"""`python -m langgraph_chronomem.cli`: the same as the `chronomem` script."""

import sys

from langgraph_chronomem.cli import main

if __name__ == "__main__":
    sys.exit(main())
