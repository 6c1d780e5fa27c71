"""The named schema steps and the one runner both engines apply them with.

A step (`Migration`) is a name and its statements. `apply` runs the ones a
database has not recorded yet, in order, each in its own write transaction
together with the row that records it (in `chronomem_migrations`), so a crash
never leaves a half-applied step behind and two processes opening a new
database at once do not both apply it. `pending` only reads.

What differs between engines (how a statement runs, how appliers take turns,
SQLite's indexes kept across a table rebuild) sits behind `SchemaDatabase`:
`SqliteSchema` here, `postgres.PostgresSchema` for a server.

    >>> import sqlite3
    >>> db = SqliteSchema(sqlite3.connect(":memory:", isolation_level=None))
    >>> steps = [Migration("0001_notes", ("CREATE TABLE notes (body TEXT)",))]
    >>> [m.name for m in pending(db, steps)]
    ['0001_notes']
    >>> apply(db, steps)
    ['0001_notes']
    >>> pending(db, steps)
    []

Each record also names the langgraph-chronomem version that applied it, so an
older version opening a database a newer one upgraded refuses it and names the
version to install, instead of misreading a schema it does not know. Names carry
their component (`0001_...` is the log's, `checkpoint_0001_...` the
checkpointer's), so each component checks only its own steps:

    >>> check(db, steps)  # knows every step the database has
    >>> check(db, [Migration("0000_first", ())])  # doctest: +ELLIPSIS
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
from typing import Any, Protocol

from langgraph_chronomem.errors import ConfigError

__all__ = [
    "PACKAGE_VERSION",
    "Migration",
    "SchemaDatabase",
    "SqliteSchema",
    "apply",
    "check",
    "pending",
]

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


class Rows(Protocol):
    """What a statement returns: a DB-API cursor's rows and column names."""

    @property
    def description(self) -> Any: ...

    def fetchall(self) -> list[Any]: ...


class SchemaDatabase(Protocol):
    """What the runner needs of a database, the parts that differ by engine.

    Attributes:
        mark: The driver's parameter placeholder (`?`, `%s`).
    """

    mark: str

    def execute(self, sql: str, params: Sequence[object] | None = None) -> Rows:
        """Run one statement (`params` None: it is sent as written)."""
        ...

    def has_table(self, name: str) -> bool:
        """Whether the table exists. Reads only."""
        ...

    def begin(self) -> None:
        """Open a write transaction that no other applier of steps runs beside."""
        ...

    def commit(self) -> None:
        """Commit the transaction `begin` opened."""
        ...

    def roll_back(self) -> None:
        """End a failed transaction, if the connection still can."""
        ...

    def kept(self, migration: Migration) -> list[str]:
        """Statements that make again what `migration`'s rebuilds would lose."""
        ...


class SqliteSchema:
    """A SQLite connection (autocommit mode, `isolation_level=None`) as a
    `SchemaDatabase`: `BEGIN IMMEDIATE` makes appliers take turns."""

    mark = "?"

    def __init__(self, conn: sqlite3.Connection) -> None:
        self.conn = conn

    def execute(self, sql: str, params: Sequence[object] | None = None) -> Rows:
        return self.conn.execute(sql, () if params is None else params)

    def has_table(self, name: str) -> bool:
        found = self.conn.execute(
            "SELECT 1 FROM sqlite_master WHERE type = 'table' AND name = ?", (name,)
        ).fetchone()
        return found is not None

    def begin(self) -> None:
        self.conn.execute("BEGIN IMMEDIATE")

    def commit(self) -> None:
        self.conn.execute("COMMIT")

    def roll_back(self) -> None:
        self.conn.execute("ROLLBACK")

    def kept(self, migration: Migration) -> list[str]:
        """The `CREATE INDEX` statements of the indexes on the tables
        `migration` rebuilds that its own statements do not name (create or
        drop)."""
        if not migration.rebuilds:
            return []
        marks = ",".join("?" * len(migration.rebuilds))
        found = self.conn.execute(
            "SELECT name, sql FROM sqlite_master WHERE type = 'index' "
            f"AND sql IS NOT NULL AND tbl_name IN ({marks})",
            migration.rebuilds,
        ).fetchall()
        text = " ".join(migration.statements)
        named = [(re.compile(rf"\b{re.escape(name)}\b"), sql) for name, sql in found]
        return [sql for name, sql in named if not name.search(text)]


@dataclass(frozen=True)
class _Record:
    name: str
    applied_at: str
    package_version: str | None


def _component(name: str) -> str:
    """The component a step belongs to: its name up to the step number."""
    return name[: len(name) - len(name.lstrip("abcdefghijklmnopqrstuvwxyz_"))]


def _records(db: SchemaDatabase) -> list[_Record]:
    """The steps a database has applied, oldest first. Reads only.

    Databases made before steps recorded their package version lack that column.
    """
    if not db.has_table(_TABLE):
        return []
    cur = db.execute(f"SELECT * FROM {_TABLE} ORDER BY applied_at")
    columns = [column[0] for column in cur.description]
    rows = [dict(zip(columns, row, strict=True)) for row in cur.fetchall()]
    return [
        _Record(row["name"], row["applied_at"], row.get("package_version"))
        for row in rows
    ]


def pending(db: SchemaDatabase, migrations: Sequence[Migration]) -> list[Migration]:
    """The migrations this database has not applied yet. Reads only."""
    done = {record.name for record in _records(db)}
    return [m for m in migrations if m.name not in done]


def check(db: SchemaDatabase, migrations: Sequence[Migration]) -> None:
    """Refuse a database that a newer version has taken past `migrations`. Reads only.

    Raises:
        ConfigError: If the database records a step of one of these migrations'
            components that they do not hold; it names the version to install.
    """
    known = {m.name for m in migrations}
    components = {_component(name) for name in known}
    newer = [
        record
        for record in _records(db)
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


def _prepare_table(db: SchemaDatabase) -> None:
    """Create the record table, or add the version column an older one lacks."""
    db.execute(
        f"CREATE TABLE IF NOT EXISTS {_TABLE} (name TEXT PRIMARY KEY, "
        "applied_at TEXT NOT NULL, package_version TEXT)"
    )
    columns = {c[0] for c in db.execute(f"SELECT * FROM {_TABLE} LIMIT 0").description}
    if "package_version" not in columns:
        db.execute(f"ALTER TABLE {_TABLE} ADD COLUMN package_version TEXT")


def apply(
    db: SchemaDatabase, migrations: Sequence[Migration], *, read_only: bool = False
) -> list[str]:
    """Apply what is pending; return the names applied. Safe to call on every open:
    with nothing pending it only reads. With `read_only=True` it only checks.

    Raises:
        ConfigError: If a newer version has migrated the database (see `check`),
            or a read-only open finds steps pending.
    """
    check(db, migrations)
    steps = pending(db, migrations)
    if steps and read_only:
        raise ConfigError(
            f"this store needs upgrading ({', '.join(m.name for m in steps)}), "
            "which a read-only open cannot do: open it once without read_only=True"
        )
    applied = []
    for migration in steps:
        db.begin()
        try:
            _prepare_table(db)
            if migration.name in {r.name for r in _records(db)}:
                db.commit()  # another process applied it meanwhile
                continue
            for statement in (*migration.statements, *db.kept(migration)):
                db.execute(statement)
            db.execute(
                f"INSERT INTO {_TABLE} (name, applied_at, package_version) "
                f"VALUES ({db.mark}, {db.mark}, {db.mark})",
                (
                    migration.name,
                    datetime.now(timezone.utc).isoformat(),
                    PACKAGE_VERSION,
                ),
            )
        except BaseException:
            db.roll_back()
            raise
        db.commit()
        applied.append(migration.name)
    return applied
