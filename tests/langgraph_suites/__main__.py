"""`python -m tests.langgraph_suites [SUITE ...] [-k EXPRESSION]`: run LangGraph's
suites against chronomem side by side, print the table, exit 1 on a surprise."""

from __future__ import annotations

import argparse
import sys
from concurrent.futures import ThreadPoolExecutor

from tests.langgraph_suites.runner import SUITES, DownloadError, run, table


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m tests.langgraph_suites")
    names = [suite.name for suite in SUITES]
    parser.add_argument("suites", nargs="*", metavar="SUITE", help=", ".join(names))
    parser.add_argument("-k", dest="select", help="run only the tests pytest -k picks")
    args = parser.parse_args(argv)
    unknown = sorted(set(args.suites) - set(names))
    if unknown:
        parser.error(f"unknown suite {', '.join(unknown)}; choose from {names}")
    chosen = [suite for suite in SUITES if not args.suites or suite.name in args.suites]
    try:
        with ThreadPoolExecutor(len(chosen)) as pool:
            comparisons = list(pool.map(lambda s: run(s, select=args.select), chosen))
    except DownloadError as error:
        print(error, file=sys.stderr)
        return 2
    print(table(comparisons))
    return 0 if all(comparison.ok for comparison in comparisons) else 1


if __name__ == "__main__":
    sys.exit(main())
