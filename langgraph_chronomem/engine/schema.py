"""Named schema migrations, each applied in the same transaction as its record.

A migration is a name and its statements. `apply` runs the ones a database has
not recorded yet, in order, each in its own write transaction together with the
row that records it, so a crash never leaves a half-applied step behind and two
processes opening a new database at once do not both apply it. `pending` only
reads.

    >>> import sqlite3
    >>> conn = sqlite3.connect(":memory:", isolation_level=None)
    >>> steps = [Migration("0001_notes", ("CREATE TABLE notes (body TEXT)",))]
    >>> [m.name for m in pending(conn, steps)]
    ['0001_notes']
    >>> apply(conn, steps)
    ['0001_notes']
    >>> pending(conn, steps)
    []

Each record also names the langgraph-chronomem version that applied it, so an
older version opening a database a newer one upgraded refuses it and names the
version to install, instead of misreading a schema it does not know. Names carry
their component (`0001_...` is the log's, `checkpoint_0001_...` the
checkpointer's), so each component checks only its own steps:

    >>> check(conn, steps)  # knows every step the database has
    >>> check(conn, [Migration("0000_first", ())])  # doctest: +ELLIPSIS
    Traceback (most recent call last):
    ...
    langgraph_chronomem.errors.ConfigError: this database was upgraded by ...
"""

from __future__ import annotations

import re
import sqlite3
from collections.abc import Sequence
from dataclasses import dataclass
from datetime import datetime, timezone
from importlib import metadata

from langgraph_chronomem.errors import ConfigError

__all__ = ["PACKAGE_VERSION", "Migration", "apply", "check", "pending"]

_TABLE = "chronomem_migrations"

try:
    PACKAGE_VERSION: str | None = metadata.version("langgraph-chronomem")
except metadata.PackageNotFoundError:  # imported from a source tree
    PACKAGE_VERSION = None
"""The installed langgraph-chronomem version, recorded with every step applied."""


@dataclass(frozen=True)
class Migration:
    """One schema step: a stable name and the statements it runs.

    `rebuilds` names the tables the step makes anew (SQLite changes some things,
    such as `AUTOINCREMENT`, only by copying a table into a new one). Dropping a
    table drops its indexes, so those the step does not name itself, made by
    another component (the checkpointer's on `commits`), are made again after it.
    """

    name: str
    statements: tuple[str, ...]
    rebuilds: tuple[str, ...] = ()


@dataclass(frozen=True)
class _Record:
    name: str
    applied_at: str
    package_version: str | None


def _component(name: str) -> str:
    """The component a step belongs to: its name up to the step number."""
    return name[: len(name) - len(name.lstrip("abcdefghijklmnopqrstuvwxyz_"))]


def _records(conn: sqlite3.Connection) -> list[_Record]:
    """The steps a database has applied, oldest first. Reads only.

    Databases made before steps recorded their package version lack that column.
    """
    exists = conn.execute(
        "SELECT 1 FROM sqlite_master WHERE type = 'table' AND name = ?", (_TABLE,)
    ).fetchone()
    if not exists:
        return []
    cur = conn.execute(f"SELECT * FROM {_TABLE} ORDER BY applied_at")
    columns = [column[0] for column in cur.description]
    rows = [dict(zip(columns, row, strict=True)) for row in cur]
    return [
        _Record(row["name"], row["applied_at"], row.get("package_version"))
        for row in rows
    ]


def pending(
    conn: sqlite3.Connection, migrations: Sequence[Migration]
) -> list[Migration]:
    """The migrations this database has not applied yet. Reads only."""
    done = {record.name for record in _records(conn)}
    return [m for m in migrations if m.name not in done]


def check(conn: sqlite3.Connection, migrations: Sequence[Migration]) -> None:
    """Refuse a database that a newer version has taken past `migrations`. Reads only.

    Raises:
        ConfigError: If the database records a step of one of these migrations'
            components that they do not hold; it names the version to install.
    """
    known = {m.name for m in migrations}
    components = {_component(name) for name in known}
    newer = [
        record
        for record in _records(conn)
        if record.name not in known and _component(record.name) in components
    ]
    if not newer:
        return
    latest = newer[-1]
    this = f"langgraph-chronomem {PACKAGE_VERSION or '(source tree)'}"
    if latest.package_version is None:
        by, fix = "a newer langgraph-chronomem", "pip install -U langgraph-chronomem"
    else:
        by = f"langgraph-chronomem {latest.package_version}"
        fix = f"pip install 'langgraph-chronomem>={latest.package_version}'"
    raise ConfigError(
        f"this database was upgraded by {by} (schema step {latest.name!r}), which "
        f"{this} cannot read safely; upgrade to open it: {fix}"
    )


def _prepare_table(conn: sqlite3.Connection) -> None:
    """Create the record table, or add the version column an older one lacks."""
    conn.execute(
        f"CREATE TABLE IF NOT EXISTS {_TABLE} (name TEXT PRIMARY KEY, "
        "applied_at TEXT NOT NULL, package_version TEXT)"
    )
    columns = {row[1] for row in conn.execute(f"PRAGMA table_info({_TABLE})")}
    if "package_version" not in columns:
        conn.execute(f"ALTER TABLE {_TABLE} ADD COLUMN package_version TEXT")


def _indexes_to_keep(conn: sqlite3.Connection, migration: Migration) -> list[str]:
    """The `CREATE INDEX` statements of the indexes on the tables `migration`
    rebuilds that its own statements do not name (create or drop)."""
    if not migration.rebuilds:
        return []
    marks = ",".join("?" * len(migration.rebuilds))
    found = conn.execute(
        "SELECT name, sql FROM sqlite_master WHERE type = 'index' "
        f"AND sql IS NOT NULL AND tbl_name IN ({marks})",
        migration.rebuilds,
    ).fetchall()
    text = " ".join(migration.statements)
    named = [(re.compile(rf"\b{re.escape(name)}\b"), sql) for name, sql in found]
    return [sql for name, sql in named if not name.search(text)]


def apply(conn: sqlite3.Connection, migrations: Sequence[Migration]) -> list[str]:
    """Apply what is pending; return the names applied. Safe to call on every open:
    with nothing pending it only reads.

    `conn` must be in autocommit mode (`isolation_level=None`).

    Raises:
        ConfigError: If a newer version has migrated the database (see `check`).
    """
    check(conn, migrations)
    applied = []
    for migration in pending(conn, migrations):
        conn.execute("BEGIN IMMEDIATE")
        try:
            _prepare_table(conn)
            if migration.name in {r.name for r in _records(conn)}:
                conn.execute("COMMIT")  # another process applied it meanwhile
                continue
            kept = _indexes_to_keep(conn, migration)
            for statement in (*migration.statements, *kept):
                conn.execute(statement)
            conn.execute(
                f"INSERT INTO {_TABLE} (name, applied_at, package_version) "
                "VALUES (?, ?, ?)",
                (
                    migration.name,
                    datetime.now(timezone.utc).isoformat(),
                    PACKAGE_VERSION,
                ),
            )
        except BaseException:
            conn.execute("ROLLBACK")
            raise
        conn.execute("COMMIT")
        applied.append(migration.name)
    return applied
