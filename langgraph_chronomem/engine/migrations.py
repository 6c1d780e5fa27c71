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
"""

from __future__ import annotations

import sqlite3
from collections.abc import Sequence
from dataclasses import dataclass
from datetime import datetime, timezone

__all__ = ["Migration", "apply", "pending"]

_TABLE = "chronomem_migrations"


@dataclass(frozen=True)
class Migration:
    """One schema step: a stable name and the statements it runs."""

    name: str
    statements: tuple[str, ...]


def _applied(conn: sqlite3.Connection) -> set[str]:
    exists = conn.execute(
        "SELECT 1 FROM sqlite_master WHERE type = 'table' AND name = ?", (_TABLE,)
    ).fetchone()
    if not exists:
        return set()
    return {row[0] for row in conn.execute(f"SELECT name FROM {_TABLE}")}


def pending(
    conn: sqlite3.Connection, migrations: Sequence[Migration]
) -> list[Migration]:
    """The migrations this database has not applied yet. Reads only."""
    done = _applied(conn)
    return [m for m in migrations if m.name not in done]


def apply(conn: sqlite3.Connection, migrations: Sequence[Migration]) -> list[str]:
    """Apply what is pending; return the names applied. Safe to call on every open.

    `conn` must be in autocommit mode (`isolation_level=None`).
    """
    applied = []
    for migration in migrations:
        conn.execute("BEGIN IMMEDIATE")
        try:
            conn.execute(
                f"CREATE TABLE IF NOT EXISTS {_TABLE} "
                "(name TEXT PRIMARY KEY, applied_at TEXT NOT NULL)"
            )
            if migration.name in _applied(conn):
                conn.execute("COMMIT")
                continue
            for statement in migration.statements:
                conn.execute(statement)
            conn.execute(
                f"INSERT INTO {_TABLE} (name, applied_at) VALUES (?, ?)",
                (migration.name, datetime.now(timezone.utc).isoformat()),
            )
        except BaseException:
            conn.execute("ROLLBACK")
            raise
        conn.execute("COMMIT")
        applied.append(migration.name)
    return applied
