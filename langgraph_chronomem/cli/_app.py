"""What every command shares: the global options, opening the store, reading a
scope or a version from the command line, and printing for people or for scripts.

    >>> parse_scope("memories/alice")
    ('memories', 'alice')
    >>> parse_scope('["memories", "team/red"]')
    ('memories', 'team/red')
    >>> parse_scope("")
    ()

What the command line prints as a scope reads back as the same scope: labels
joined by `/`, or the JSON array when a label holds a `/`.

    >>> scope_arg(("memories", "alice")), scope_arg(("memories", "team/red"))
    ('memories/alice', '["memories", "team/red"]')
    >>> parse_scope(scope_arg(("memories", "team/red")))
    ('memories', 'team/red')
"""

from __future__ import annotations

import argparse
import difflib
import json
import os
import re
import shlex
import sys
from collections.abc import Callable, Iterable, Iterator, Mapping, Sequence
from contextlib import contextmanager
from dataclasses import dataclass, field
from datetime import datetime, timezone
from pathlib import Path
from typing import Any, TypeAlias

from rich.console import Console
from rich.progress import (
    BarColumn,
    MofNCompleteColumn,
    Progress,
    TaskID,
    TextColumn,
    TimeElapsedColumn,
)

from langgraph_chronomem.cli.errors import (
    EXIT_ENVIRONMENT,
    EXIT_FAILED,
    EXIT_USAGE,
    CliError,
)
from langgraph_chronomem.deployment import DEFAULT_PATH
from langgraph_chronomem.engine.tags import is_tag_name
from langgraph_chronomem.errors import VersionNotFound
from langgraph_chronomem.store import ChronoStore
from langgraph_chronomem.store.opening import DATABASE_FILE, is_conn_string

__all__ = [
    "DEFAULT_PATH",
    "LABEL_FLAGS",
    "Commands",
    "Context",
    "add_label_options",
    "add_scope_option",
    "common_options",
    "open_store",
    "parse_scope",
    "parse_version",
    "scope_arg",
    "scope_text",
    "shown_location",
    "store_location",
    "store_path",
    "timestamp",
]

Commands: TypeAlias = "argparse._SubParsersAction[argparse.ArgumentParser]"
"""What each command module's `register(commands, common)` adds its parsers to."""

PATH_VARIABLE = "CHRONOMEM_PATH"
_NAMED = 5
"""How many scopes (or keys) an unknown-scope (or key) error names."""


# Flags that filter commits by their labels: the flag, and the label it names
# (the keyword of `ChronoStore.log` and `revert_matching`).
LABEL_FLAGS = {
    "run": "run_id",
    "thread": "thread_id",
    "node": "node",
    "source": "source",
    "trust": "trust",
}


def add_label_options(
    parser: argparse.ArgumentParser, flags: dict[str, str], help: str
) -> None:
    """`--run RUN_ID`, `--source SOURCE`... for each flag: `help` + its label."""
    for flag, label in flags.items():
        parser.add_argument(
            f"--{flag}", dest=label, metavar=label.upper(), help=f"{help} {label}"
        )


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
        help="the store's directory, or a PostgreSQL URL (postgresql://...) "
        f"(default: ${PATH_VARIABLE}, else {DEFAULT_PATH})",
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
        'when a label holds "/" (\'["memories", "a/b"]\'), as the commands print '
        "it; leave out when the store's scope_depth is 0",
    )


def store_location(args: argparse.Namespace) -> str:
    """`--path`, else `$CHRONOMEM_PATH`, else `DEFAULT_PATH`, as given."""
    return str(args.path or os.environ.get(PATH_VARIABLE) or DEFAULT_PATH)


def shown_location(args: argparse.Namespace) -> str:
    """`store_location` to print: a connection string's password is starred out.

    >>> args = argparse.Namespace(path="postgresql://app:s3cret@db/memories")
    >>> shown_location(args)
    'postgresql://app:***@db/memories'
    >>> shown_location(argparse.Namespace(path="host=db password=s3cret user=app"))
    'host=db password=*** user=app'
    """
    location = re.sub(r"^(\w+://[^:/@]*):[^@]*@", r"\1:***@", store_location(args))
    return re.sub(r"(password\s*=\s*)('(?:[^'\\]|\\.)*'|\S+)", r"\1***", location)


def store_path(args: argparse.Namespace) -> Path:
    """The store's directory (`store_location` as a path)."""
    return Path(store_location(args))


@contextmanager
def open_store(args: argparse.Namespace) -> Iterator[ChronoStore]:
    """Open the existing store at `--path` (a directory or a PostgreSQL URL);
    never create one.

    Raises:
        CliError: If there is no store there (exit 1), or psycopg is missing
            for a URL (exit 3).
        psycopg.Error: If the PostgreSQL server refuses the connection.
    """
    location = store_location(args)
    if is_conn_string(location):
        store = _open_on_postgres(location, shown_location(args))
    else:
        path = store_path(args)
        if not (path / DATABASE_FILE).is_file():
            raise CliError(
                f"no store at {location}",
                EXIT_FAILED,
                hint=f"pass --path DIR (or a postgresql:// URL) or set "
                f"${PATH_VARIABLE} to a directory holding {DATABASE_FILE}",
            )
        store = ChronoStore.from_path(path)
    try:
        yield store
    finally:
        store.close()


def _open_on_postgres(url: str, shown: str) -> ChronoStore:
    """The store in the database at `url`, if it holds one: the CLI never
    creates the schema in a database that has none (a typo in its name)."""
    try:
        import psycopg
    except ImportError as exc:
        raise CliError(
            f"{shown} is a PostgreSQL database, and psycopg is not installed",
            EXIT_ENVIRONMENT,
            hint="pip install 'langgraph-chronomem[postgres]'",
        ) from exc
    with psycopg.connect(url, autocommit=True) as conn:
        found = conn.execute("SELECT to_regclass('chronomem_meta')").fetchone()
    if found is None or found[0] is None:
        raise CliError(
            f"no store in {shown}: the database has no langgraph-chronomem tables",
            EXIT_FAILED,
            hint="check the database name; a store is created by opening it "
            "with ChronoStore.from_conn_string(url)",
        )
    return ChronoStore.from_conn_string(url)


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


def scope_arg(scope: Sequence[str]) -> str:
    """A scope as `--scope` reads it back: its labels joined by `/`, or a JSON
    array when joining would not read back (a label holds `/`, or the text would
    start like a JSON array)."""
    joined = "/".join(scope)
    if any("/" in label for label in scope) or joined.lstrip().startswith("["):
        return json.dumps(list(scope), ensure_ascii=False)
    return joined


def scope_text(scope: Sequence[str]) -> str:
    """A scope for people, as `--scope` reads it back; `the store` for the
    whole-store scope."""
    return scope_arg(scope) if scope else "the store"


def parse_version(text: str, store: ChronoStore, scope: Sequence[str]) -> int:
    """A version of `scope` from the command line: `3`, `v3`, `HEAD`, a tag's
    name, or any of them and `~N`, N versions before it (`HEAD~2`, `release~1`).

        >>> import tempfile
        >>> with ChronoStore.from_path(tempfile.mkdtemp()) as store:
        ...     for n in range(3):
        ...         store.put(("notes",), "a", {"n": n})
        ...     _ = store.tag((), "first", 1)
        ...     [parse_version(v, store, ()) for v in ("v3", "HEAD~2", "first~1")]
        [3, 1, 0]

    Whether the scope has a numbered version is for the store to say.

    Raises:
        CliError: If the text is none of these (exit 2).
        VersionNotFound: For an unknown tag, or `~N` before v0 (exit 1).
    """
    raw = text.strip()
    base, tilde, back = raw.rpartition("~")
    if not (tilde and back.isdigit()):
        base, back = raw, "0"
    digits = base[1:] if base[:1] in ("v", "V") else base
    if base.upper() == "HEAD":
        latest = store.head(scope)
    elif digits.isdigit():
        latest = int(digits)
    elif is_tag_name(base):
        latest = store.version_of(scope, base)
    else:
        raise CliError(
            f"bad version {text!r}: give a number like 3, v3, HEAD, HEAD~1 or a "
            "tag's name",
            EXIT_USAGE,
        )
    if int(back) > latest:
        where = (
            f"{scope_text(scope)} has only {latest} version{'' if latest == 1 else 's'}"
            if base.upper() == "HEAD"
            else f"{base} is v{latest} of {scope_text(scope)}"
        )
        raise VersionNotFound(
            f"{where}: {raw} goes back past v0 ({base}~{latest} is v0, the empty state)"
        )
    return latest - int(back)


def likeliest(given: str, names: Iterable[str]) -> str:
    """Some of `names` for an error, the likeliest meant by `given` first.

    >>> likeliest("city", ["pet", "cities", "job"])
    'cities, pet, job'
    """
    ranked = sorted(
        names,
        key=lambda name: (-difflib.SequenceMatcher(None, given, name).ratio(), name),
    )
    more = f" and {len(ranked) - _NAMED} more" if len(ranked) > _NAMED else ""
    return ", ".join(ranked[:_NAMED]) + more


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

    def progress(self) -> Progress:
        """Rich progress bars on stderr, gone when done; none for `--json` or
        when stderr is not a terminal."""
        return Progress(
            TextColumn("[progress.description]{task.description}"),
            BarColumn(),
            MofNCompleteColumn(),
            TimeElapsedColumn(),
            console=self.err,
            transient=True,
            disable=self.json or not self.err.is_terminal,
        )

    @contextmanager
    def phases(
        self, labels: Mapping[str, str]
    ) -> Iterator[Callable[[str, int, int | None], None]]:
        """A `(phase, done, total)` callback (`ChronoStore.redact`'s
        `progress`, `copy_store`'s) drawing one bar per phase on stderr, named
        by `labels`; a phase of unknown size pulses with its time. Nothing
        for `--json` or when stderr is not a terminal."""
        with self.progress() as bars:
            tasks: dict[str, TaskID] = {}

            def told(phase: str, done: int, total: int | None) -> None:
                if phase not in tasks:
                    label = labels.get(phase, phase)
                    tasks[phase] = bars.add_task(label, total=total)
                bars.update(tasks[phase], completed=done, total=total)

            yield told

    def emit(self, data: Any) -> None:
        """Print one JSON document on stdout."""
        sys.stdout.write(json.dumps(data, ensure_ascii=False, indent=2) + "\n")
        sys.stdout.flush()

    def scope(self, store: ChronoStore) -> tuple[str, ...]:
        """The `--scope` of this run: a scope of the store, with as many labels as
        its scope_depth (the whole store, `()`, when that is 0).

        Raises:
            CliError: If the store has scopes and none was given, or more labels
                than a scope has (exit 2); if the store has no such scope (exit 1).
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
                + f"; `{self.command('stats', scope=False)}` lists the scopes",
            )
        head = store.head(scope)  # the store checks the labels
        if len(scope) > depth:
            raise self._too_long(store, scope)
        if depth and not head:
            known = [s.scope for s in store.stats().scopes]
            if scope not in known:
                raise self._unknown(scope, known)
        return scope

    def _too_long(self, store: ChronoStore, scope: tuple[str, ...]) -> CliError:
        """`scope` has more labels than the store's scopes: name the scope meant
        when a label of a known scope holds the `/` that split it."""
        depth = store.scope_depth
        if not depth:
            return CliError(
                "this store is one timeline (scope_depth=0): leave --scope out",
                EXIT_USAGE,
            )
        text = "/".join(scope)
        meant = [s.scope for s in store.stats().scopes if "/".join(s.scope) == text]
        if meant:
            options = (f"--scope {shlex.quote(scope_arg(m))}" for m in meant)
            hint = 'a label holds "/": ' + " or ".join(options)
        else:
            example = [*["memories", "alice", "x"][: depth - 1], "a/b"]
            hint = (
                'a label holding "/" needs the JSON form, e.g. --scope '
                f"{shlex.quote(json.dumps(example))}; "
                f"`{self.command('stats', scope=False)}` lists the scopes"
            )
        return CliError(
            f"--scope {scope_arg(scope)} has {len(scope)} labels, but this store's "
            f"scopes have {depth} (scope_depth={depth})",
            EXIT_USAGE,
            hint=hint,
        )

    def _unknown(
        self, scope: tuple[str, ...], known: Sequence[tuple[str, ...]]
    ) -> CliError:
        """No commit was ever made in `scope`: name the store's scopes, the
        likeliest first."""
        given = scope_text(scope)
        if not known:
            return CliError(
                f"no scope {given}: this store has no commits yet", EXIT_FAILED
            )
        return CliError(
            f"no scope {given} in this store; it has "
            + likeliest(given, map(scope_text, known)),
            EXIT_FAILED,
            hint=f"`{self.command('stats', scope=False)}` lists the scopes",
        )

    def unknown_key(
        self,
        store: ChronoStore,
        namespace: tuple[str, ...],
        key: str,
        version: int | None = None,
    ) -> CliError:
        """No item `key` in `namespace` (at `version`; HEAD: `None`): name the
        keys it has, the likeliest first, or say it holds none."""
        path = "/".join((*namespace, key))
        at = "" if version is None else f" at v{version}"
        scope = namespace[: store.scope_depth]
        reader: Any = store if version is None else store.as_of(scope, version)
        keys = [
            item.key
            for item in reader.search(namespace, limit=2**62, refresh_ttl=False)
            if item.namespace == namespace
        ]
        where = scope_text(namespace)
        if not keys:
            return CliError(
                f"no item {path}{at}: {where} holds no items{at}",
                EXIT_FAILED,
                hint=f"`{self.command('ls', scope=False)} --scope "
                f"{shlex.quote(scope_arg(scope))}` lists the items",
            )
        return CliError(
            f"no item {path}{at}; {where} has {likeliest(key, keys)}",
            EXIT_FAILED,
        )

    def command(self, *words: str, scope: bool = True) -> str:
        """A `chronomem` command for a hint, ending with the `--scope` (unless
        `scope` is false) and `--path` this run was given: it runs as printed."""
        given = {
            "--scope": getattr(self.args, "scope", None) if scope else None,
            "--path": self.args.path,
        }
        options = [
            f"{name} {shlex.quote(value)}" for name, value in given.items() if value
        ]
        return " ".join(["chronomem", *words, *options])

    def confirm(self, question: str) -> str:
        """Ask on stderr, read one line from stdin; "" at end of input."""
        self.err.print(question, end=" ", markup=False)
        line = sys.stdin.readline()
        if not line or not sys.stdin.isatty():
            self.err.print()  # end the question's line
        return line.strip().lower()
