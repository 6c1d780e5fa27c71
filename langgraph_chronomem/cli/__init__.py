"""The `chronomem` command line: git-style history, diff and undo for a store
(a directory, or a PostgreSQL database given by URL).

    chronomem log --scope memories/alice
    chronomem undo "undo the update about my move to NYC" --scope memories/alice

Each command group is one module (`history`, `items`, `restore`, `branches`, `undo`,
`review`, `forget`, `maintenance`, `migrate`, `models`) that calls the public
API; `main` parses the arguments, runs the command, and sends every error
through the one handler in `errors`, which prints it and picks the exit code.
Reference: docs/cli.md.

    >>> main(["--help"])  # doctest: +ELLIPSIS
    usage: chronomem [-h] [--path DIR] [--json] COMMAND ...
    ...
    0
"""

from __future__ import annotations

import argparse
import logging
import os
import sys
from collections.abc import Iterator, Sequence
from contextlib import contextmanager

from langgraph_chronomem.cli import (
    branches,
    forget,
    history,
    items,
    maintenance,
    migrate,
    models,
    restore,
    review,
    undo,
)
from langgraph_chronomem.cli._app import Context, common_options
from langgraph_chronomem.cli.errors import (
    EXIT_USAGE,
    CliError,
    handle,
    handled,
    json_notice,
    notice,
)

__all__ = ["build_parser", "main"]

GROUPS = (
    history,
    items,
    restore,
    branches,
    undo,
    review,
    forget,
    maintenance,
    migrate,
    models,
)
"""The command modules, in the order `--help` lists their commands."""


def build_parser() -> argparse.ArgumentParser:
    """The `chronomem` parser: global options and one subcommand per command."""
    parser = argparse.ArgumentParser(
        prog="chronomem",
        description="Git for agent memory: history, diff, rollback and "
        "natural-language undo for a langgraph-chronomem store.",
        epilog="Exit codes: 0 done; 1 not found, conflict or nothing applied; "
        "2 usage or bad input; 3 store or models unusable. See docs/cli.md.",
        parents=[common_options(top_level=True)],
    )
    commands = parser.add_subparsers(dest="command", metavar="COMMAND", required=True)
    common = common_options(top_level=False)
    for group in GROUPS:
        group.register(commands, common)
    return parser


class _Warnings(logging.Handler):
    """Each library warning (and `warnings.warn`) as a `notice`: one
    `warning: ...` line on stderr, or with `--json` one `{"warning": {message,
    source}}` object."""

    def __init__(self, *, as_json: bool) -> None:
        super().__init__(logging.WARNING)
        self.as_json = as_json

    def emit(self, record: logging.LogRecord) -> None:
        message = record.getMessage()
        if record.name == "py.warnings":  # "file:line: Category: text" + source line
            message = message.strip().splitlines()[0]
        label = record.levelname.lower()
        if self.as_json:
            json_notice(label, {"message": message, "source": record.name})
        else:
            notice(label, message)


@contextmanager
def _warnings_on_stderr(*, as_json: bool) -> Iterator[None]:
    """Send warnings to `_Warnings` while a command runs, unless something
    configured logging before: a caller's own logging stays untouched."""
    root = logging.getLogger()
    if root.handlers:
        yield
        return
    handler, level = _Warnings(as_json=as_json), root.level
    root.addHandler(handler)
    root.setLevel(logging.WARNING)
    logging.captureWarnings(True)
    try:
        yield
    finally:
        logging.captureWarnings(False)
        root.removeHandler(handler)
        root.setLevel(level)


def _not_utf8(argv: Sequence[str]) -> CliError | None:
    """An error for the first argument that is not UTF-8: Python hands such
    bytes over as lone surrogates, which no store, file or output can hold.

        >>> print(_not_utf8(["log", "--author", "caf" + chr(0xDCE9)]))
        argument 3 (caf\\xe9) is not valid UTF-8; nothing was changed
    """
    for position, arg in enumerate(argv, start=1):
        try:
            arg.encode("utf-8")
        except UnicodeEncodeError:
            shown = os.fsencode(arg).decode("ascii", "backslashreplace")
            return CliError(
                f"argument {position} ({shown}) is not valid UTF-8; nothing "
                "was changed",
                EXIT_USAGE,
                hint="give text in UTF-8: check the terminal's or the script's "
                "encoding (locale)",
            )
    return None


def main(argv: Sequence[str] | None = None) -> int:
    """Run one command; return its exit code (the console script exits with it)."""
    argv = sys.argv[1:] if argv is None else list(argv)
    refused = _not_utf8(argv)
    if refused is not None:
        return handle(refused, as_json="--json" in argv)
    parser = build_parser()
    try:
        args = parser.parse_args(argv)
    except SystemExit as exit:  # --help, or a usage error argparse already printed
        return exit.code if isinstance(exit.code, int) else EXIT_USAGE
    ctx = Context(args)
    with _warnings_on_stderr(as_json=ctx.json):
        try:
            return int(args.run(ctx))
        except handled() as error:
            return handle(error, as_json=ctx.json, command=ctx.command)
        except BrokenPipeError:  # `chronomem log | head`
            devnull = os.open(os.devnull, os.O_WRONLY)
            os.dup2(devnull, sys.stdout.fileno())
            return 1
