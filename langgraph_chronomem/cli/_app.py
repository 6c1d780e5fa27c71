"""What every command shares: the global options, opening the store, reading a
scope or a version from the command line, and printing for people or for scripts.

    >>> parse_scope("memories/alice")
    ('memories', 'alice')
    >>> parse_scope('["memories", "team/red"]')
    ('memories', 'team/red')
    >>> parse_scope("")
    ()
    >>> scope_option(("memories", "team/red"))
    '--scope \\'["memories", "team/red"]\\''
"""

from __future__ import annotations

import argparse
import json
import os
import shlex
import sys
from collections.abc import Callable, Iterator, Sequence
from contextlib import contextmanager
from dataclasses import dataclass, field
from datetime import datetime, timezone
from pathlib import Path
from typing import Any, TypeAlias

from rich.console import Console

from langgraph_chronomem.cli.errors import EXIT_FAILED, EXIT_USAGE, CliError
from langgraph_chronomem.store import DATABASE_FILE, ChronoStore

__all__ = [
    "DEFAULT_PATH",
    "Commands",
    "Context",
    "add_scope_option",
    "common_options",
    "open_store",
    "parse_scope",
    "parse_version",
    "scope_option",
    "scope_text",
    "store_location",
    "store_path",
    "timestamp",
]

Commands: TypeAlias = "argparse._SubParsersAction[argparse.ArgumentParser]"
"""What each command module's `register(commands, common)` adds its parsers to."""

DEFAULT_PATH = "./memory"
PATH_VARIABLE = "CHRONOMEM_PATH"


def common_options(*, top_level: bool) -> argparse.ArgumentParser:
    """`--path` and `--json`, accepted before or after the command.

    The copy on each command defaults to SUPPRESS so that it never overwrites a
    value given before the command.
    """
    parser = argparse.ArgumentParser(add_help=False)
    group = parser.add_argument_group("global options")
    group.add_argument(
        "--path",
        metavar="DIR",
        default=None if top_level else argparse.SUPPRESS,
        help=f"the store's directory (default: ${PATH_VARIABLE}, else {DEFAULT_PATH})",
    )
    group.add_argument(
        "--json",
        action="store_true",
        default=False if top_level else argparse.SUPPRESS,
        help="print one JSON object (shapes in docs/cli.md) instead of tables",
    )
    return parser


def add_scope_option(parser: argparse.ArgumentParser) -> None:
    """`--scope LABEL/LABEL` (or a JSON array of labels)."""
    parser.add_argument(
        "--scope",
        metavar="SCOPE",
        help='the timeline: labels joined by "/" (memories/alice), or a JSON array '
        'for labels holding "/" (\'["memories", "a/b"]\'); leave out when the '
        "store's scope_depth is 0",
    )


def store_location(args: argparse.Namespace) -> str:
    """`--path`, else `$CHRONOMEM_PATH`, else `./memory`, as given."""
    return str(args.path or os.environ.get(PATH_VARIABLE) or DEFAULT_PATH)


def store_path(args: argparse.Namespace) -> Path:
    """The store's directory (`store_location` as a path)."""
    return Path(store_location(args))


@contextmanager
def open_store(args: argparse.Namespace) -> Iterator[ChronoStore]:
    """Open the existing store at `--path`; never create one.

    Raises:
        CliError: If there is no store there (exit 1).
    """
    path = store_path(args)
    if not (path / DATABASE_FILE).is_file():
        raise CliError(
            f"no store at {store_location(args)}",
            EXIT_FAILED,
            hint=f"pass --path DIR or set ${PATH_VARIABLE} to a directory holding "
            f"{DATABASE_FILE}",
        )
    store = ChronoStore.from_path(path)
    try:
        yield store
    finally:
        store.close()


def parse_scope(text: str | None) -> tuple[str, ...]:
    """A scope or namespace from the command line: `a/b`, or a JSON array of labels.

    The labels themselves are checked by the store (no dots, none empty).

    Raises:
        CliError: For a JSON array that is not a list of strings (exit 2).
    """
    if text is None or text == "":
        return ()
    if text.lstrip().startswith("["):
        try:
            labels = json.loads(text)
        except json.JSONDecodeError as exc:
            raise CliError(
                f"bad scope {text!r}: not a JSON array ({exc})", EXIT_USAGE
            ) from exc
        if not isinstance(labels, list) or not all(isinstance(x, str) for x in labels):
            raise CliError(
                f"bad scope {text!r}: a JSON scope is an array of strings", EXIT_USAGE
            )
        return tuple(labels)
    return tuple(text.split("/"))


def scope_text(scope: Sequence[str]) -> str:
    """A scope for people: `memories/alice`; `the store` for the whole-store scope."""
    return "/".join(scope) if scope else "the store"


def scope_option(scope: Sequence[str]) -> str:
    """The `--scope` option naming `scope`, for hints ("" for the whole store)."""
    if not scope:
        return ""
    if any("/" in label for label in scope):
        return "--scope " + shlex.quote(json.dumps(list(scope)))
    return "--scope " + shlex.quote("/".join(scope))


def parse_version(text: str, head: Callable[[], int]) -> int:
    """A version from the command line: `3`, `v3`, `HEAD` or `HEAD~2`.

        >>> parse_version("v3", lambda: 7), parse_version("HEAD~2", lambda: 7)
        (3, 5)

    Whether the scope has that version is for the store to say.

    Raises:
        CliError: If the text is none of these (exit 2).
    """
    raw = text.strip()
    upper = raw.upper()
    if upper == "HEAD":
        return head()
    if upper.startswith("HEAD~") and upper[5:].isdigit():
        return head() - int(upper[5:])
    digits = raw[1:] if raw[:1] in ("v", "V") else raw
    if digits.isdigit():
        return int(digits)
    raise CliError(
        f"bad version {text!r}: give a number like 3, v3, HEAD or HEAD~1", EXIT_USAGE
    )


def timestamp(moment: datetime | None) -> str:
    """A time for tables: UTC, to the second."""
    if moment is None:
        return ""
    return moment.astimezone(timezone.utc).strftime("%Y-%m-%d %H:%M:%S")


def iso(moment: datetime | None) -> str | None:
    """A time for JSON: ISO 8601 with its UTC offset."""
    return None if moment is None else moment.astimezone(timezone.utc).isoformat()


@dataclass
class Context:
    """One run of one command: its arguments and where it prints."""

    args: argparse.Namespace
    out: Console = field(default_factory=lambda: Console(highlight=False))
    err: Console = field(default_factory=lambda: Console(stderr=True, highlight=False))

    @property
    def json(self) -> bool:
        """Whether to print JSON for scripts."""
        return bool(getattr(self.args, "json", False))

    def emit(self, data: Any) -> None:
        """Print one JSON document on stdout."""
        sys.stdout.write(json.dumps(data, ensure_ascii=False, indent=2) + "\n")
        sys.stdout.flush()

    def scope(self, store: ChronoStore) -> tuple[str, ...]:
        """The `--scope` of this run, checked against the store's depth.

        Raises:
            CliError: If the store has scopes and none was given (exit 2).
        """
        scope = parse_scope(getattr(self.args, "scope", None))
        depth = store.scope_depth
        if depth and not scope:
            raise CliError(
                f"this store has scope_depth={depth}: give --scope with {depth} "
                f"label{'s' if depth > 1 else ''}",
                EXIT_USAGE,
                hint="e.g. --scope "
                + "/".join(["memories", "alice", "x", "y"][:depth])
                + "; `chronomem stats` lists the scopes",
            )
        store.head(scope)  # the store checks the labels
        return scope[:depth]

    def confirm(self, question: str) -> str:
        """Ask on stderr, read one line from stdin; "" at end of input."""
        self.err.print(question, end=" ", markup=False)
        line = sys.stdin.readline()
        if not line or not sys.stdin.isatty():
            self.err.print()  # end the question's line
        return line.strip().lower()
