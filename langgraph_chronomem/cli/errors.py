"""Exit codes, and the one handler that turns errors into messages and codes.

Commands raise; only `handle` prints an error. A user error never shows a
traceback: it becomes one `error: ...` line on stderr (or, with `--json`, one
JSON object on stderr) and an exit code. Every line the command line writes to
stderr about what happened (error, hint, warning, "nothing changed") has the one
format of `notice`: `label: message`, unwrapped and unstyled.

    >>> EXIT_OK, EXIT_FAILED, EXIT_USAGE, EXIT_ENVIRONMENT
    (0, 1, 2, 3)
    >>> from langgraph_chronomem.errors import VersionNotFound, ScopeError
    >>> exit_code(VersionNotFound("memories/alice has no version 9"))
    1
    >>> exit_code(ScopeError("too short"))
    2
"""

from __future__ import annotations

import json
import sqlite3
import sys
from collections.abc import Callable
from typing import Any, TextIO

from langgraph.store.base import InvalidNamespaceError

from langgraph_chronomem.errors import (
    ChronomemError,
    ConfigError,
    InvalidFilterError,
    InvalidRequestError,
    InvalidValueError,
    ModelUnavailableError,
    ScopeError,
    StorageError,
    VersionError,
    VersionNotFound,
)

__all__ = [
    "EXIT_ENVIRONMENT",
    "EXIT_FAILED",
    "EXIT_INTERRUPTED",
    "EXIT_OK",
    "EXIT_USAGE",
    "CliError",
    "exit_code",
    "handle",
    "handled",
    "json_notice",
    "notice",
]

EXIT_OK = 0
"""The command did what was asked."""
EXIT_FAILED = 1
"""Not found, a conflict, or nothing applied (no clear match, declined)."""
EXIT_USAGE = 2
"""Usage or bad input: an unknown option, a malformed scope or version."""
EXIT_ENVIRONMENT = 3
"""The store or the models cannot be used: a locked or damaged database, no models."""
EXIT_INTERRUPTED = 130
"""Ctrl-C."""


class CliError(Exception):
    """An error the command line itself detects, with its exit code and a hint."""

    def __init__(
        self, message: str, code: int = EXIT_FAILED, hint: str | None = None
    ) -> None:
        super().__init__(message)
        self.code = code
        self.hint = hint


_USAGE_ERRORS = (
    ScopeError,
    InvalidNamespaceError,
    ConfigError,
    InvalidValueError,
    InvalidFilterError,
    InvalidRequestError,
)


def exit_code(error: BaseException) -> int:
    """The exit code for an error the handler knows; raises nothing."""
    if isinstance(error, CliError):
        return error.code
    if isinstance(error, KeyboardInterrupt):
        return EXIT_INTERRUPTED
    if isinstance(error, (ModelUnavailableError, StorageError)) or _driver(error):
        return EXIT_ENVIRONMENT
    if isinstance(error, _USAGE_ERRORS):
        return EXIT_USAGE
    if isinstance(error, (VersionNotFound, VersionError, ChronomemError)):
        return EXIT_FAILED
    raise TypeError(f"not a user error: {error!r}")


def _message(error: BaseException) -> str:
    if isinstance(error, KeyboardInterrupt):
        return "interrupted"
    if _driver(error):
        return f"database error: {error}"
    return str(error)


def _hint(error: BaseException, command: Callable[[str], str]) -> str | None:
    if isinstance(error, CliError):
        return error.hint
    if isinstance(error, ModelUnavailableError):
        return "run `chronomem models provision` (or `chronomem models verify`)"
    if isinstance(error, VersionNotFound):
        return f"`{command('log')}` lists the versions"
    return None


HANDLED = (
    CliError,
    ChronomemError,
    InvalidNamespaceError,
    sqlite3.Error,
    KeyboardInterrupt,
)
"""What `handle` prints (and psycopg's errors, see `handled`); anything else is
a bug, and keeps its traceback."""


def _psycopg_error() -> type[Exception] | None:
    """psycopg's root error, if a store on PostgreSQL loaded psycopg: without
    it, none can be raised, and the CLI never imports the optional driver."""
    psycopg = sys.modules.get("psycopg")
    return None if psycopg is None else psycopg.Error


def _driver(error: BaseException) -> bool:
    """A database driver's own error: SQLite's or psycopg's."""
    psycopg_error = _psycopg_error()
    return isinstance(error, sqlite3.Error) or (
        psycopg_error is not None and isinstance(error, psycopg_error)
    )


def handled() -> tuple[type[BaseException], ...]:
    """What `handle` prints, as `except handled() as error:` catches it:
    `HANDLED`, and psycopg's errors (like sqlite3's) once psycopg is loaded."""
    psycopg_error = _psycopg_error()
    return HANDLED if psycopg_error is None else (*HANDLED, psycopg_error)


def notice(label: str, message: str, stream: TextIO | None = None) -> None:
    """Write `label: message` as one line (default: on stderr), unwrapped and
    unstyled, so a command in it can be pasted as is.

        >>> notice("hint", "chronomem log --scope memories/alice", sys.stdout)
        hint: chronomem log --scope memories/alice
    """
    stream = stream or sys.stderr
    stream.write(f"{label}: {message}\n")
    stream.flush()


def json_notice(label: str, body: dict[str, Any], stream: TextIO | None = None) -> None:
    """`notice` for `--json`: one object `{label: body}` on one line.

    >>> json_notice("warning", {"message": "slow", "source": "x"}, sys.stdout)
    {"warning": {"message": "slow", "source": "x"}}
    """
    stream = stream or sys.stderr
    stream.write(json.dumps({label: body}, ensure_ascii=False) + "\n")
    stream.flush()


def handle(
    error: BaseException,
    *,
    as_json: bool,
    command: Callable[[str], str] = "chronomem {}".format,
    stream: TextIO | None = None,
) -> int:
    """Print `error` for a person (or, with `as_json`, a script); return its exit code.

    Args:
        error: One of `handled()`.
        as_json: Print `{"error": {"type", "message", "hint", "exit_code"}}` instead.
        command: Makes a hint's `chronomem WORD ...` command, with the options
            the run was given (`Context.command`).
        stream: Where to print (default: stderr).
    """
    code = exit_code(error)
    message, hint = _message(error), _hint(error, command)
    if as_json:
        body = {
            "type": type(error).__name__,
            "message": message,
            "hint": hint,
            "exit_code": code,
        }
        json_notice("error", body, stream)
    else:
        notice("error", message, stream)
        if hint:
            notice("hint", hint, stream)
    return code
