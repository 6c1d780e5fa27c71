"""The embedded default: the versioned log in one SQLite file (WAL mode).

    >>> import tempfile, pathlib
    >>> from langgraph_chronomem.engine.types import CommitMeta, Write
    >>> engine = SqliteEngine(pathlib.Path(tempfile.mkdtemp()) / "log.sqlite3")
    >>> with engine.transaction(write=True) as tx:
    ...     commits = tx.commit([Write(("notes",), "a", {"t": "hi"})], CommitMeta())
    >>> [c.summary for c in commits]
    ['created notes/a: hi']
    >>> engine.close()

One connection per engine, guarded by a lock; other processes open their own and
SQLite serialises writers (`BEGIN IMMEDIATE` plus a busy timeout), so versions stay
gap-free across processes too. The SQL, schema steps included, is in
`sqlite_sql.py`; `MIGRATIONS` and `SqliteDialect` are imported from here too.
"""

from __future__ import annotations

import random
import sqlite3
import threading
import time
from collections.abc import Iterator, Sequence
from contextlib import contextmanager
from pathlib import Path
from types import TracebackType
from typing import NoReturn

from langgraph_chronomem.engine import schema
from langgraph_chronomem.engine.base import LogTransaction
from langgraph_chronomem.engine.scrub import holding, zero_free_pages
from langgraph_chronomem.engine.sqlite_file import connect, enable_wal, storage_error
from langgraph_chronomem.engine.sqlite_sql import (
    MIGRATIONS,
    SqliteDialect,
    add_functions,
)
from langgraph_chronomem.errors import (
    ConfigError,
    ReadOnlyError,
    StorageError,
)

__all__ = ["MIGRATIONS", "SqliteDialect", "SqliteEngine"]

MIN_SQLITE = (3, 35, 0)  # ALTER TABLE ... DROP COLUMN
# How long a writer waiting for another process's commit sleeps between tries:
# from about the time a put holds the lock, doubling to a cap.
_FIRST_PAUSE, _LONGEST_PAUSE = 0.0002, 0.004


def _refuse_foreign(conn: sqlite3.Connection, path: Path) -> None:
    """Refuse a database that holds tables but not chronomem's record of its
    migrations: another application's, which opening would add our tables to.

    Raises:
        StorageError: Naming its tables and the fix; nothing was written.
    """
    tables = [
        name
        for (name,) in conn.execute(
            "SELECT name FROM sqlite_master WHERE type = 'table' "
            "AND name NOT LIKE 'sqlite_%' ORDER BY name"
        )
    ]
    # Every store has schema.py's record table, from before its first step.
    if tables and "chronomem_migrations" not in tables:
        shown = ", ".join(tables[:5]) + (", ..." if len(tables) > 5 else "")
        raise StorageError(
            f"cannot use {path}: it is another application's SQLite database "
            f"(tables {shown}), not a chronomem store; nothing was written to "
            "it. Open the store in a directory of its own, or move the file aside"
        )


class SqliteEngine:
    """The versioned log in a SQLite file.

    Args:
        path: The database file (created if missing).
        scope_depth: Leading namespace labels that make a scope. `None` takes the
            depth the database was created with (0 for a new one).
        omit_expired: Hide items whose TTL has passed from reads at HEAD.
        busy_timeout: Seconds a writer waits for another process's transaction.
        synchronous: SQLite's `synchronous` pragma. `FULL` (the default) makes
            every commit durable across power loss; `NORMAL` only across crashes
            of the process.
        read_only: Open an existing database for reads only, e.g. on read-only
            media: nothing is created, migrated or written, and write
            transactions raise `ReadOnlyError`.

    Raises:
        ConfigError: If `scope_depth` contradicts the depth the database was
            created with, a newer langgraph-chronomem upgraded the database,
            a read-only open finds it needs upgrading, or SQLite is older than
            3.35.
        StorageError: If the file cannot be opened as a database (not one,
            damaged, read-only media without `read_only`, a full disk), or
            it is another application's database (nothing is written to it).
    """

    dialect = SqliteDialect()

    def __init__(
        self,
        path: str | Path,
        *,
        scope_depth: int | None = None,
        omit_expired: bool = False,
        busy_timeout: float = 30.0,
        synchronous: str = "FULL",
        read_only: bool = False,
    ) -> None:
        if sqlite3.sqlite_version_info < MIN_SQLITE:
            raise ConfigError(
                "langgraph-chronomem needs SQLite >= 3.35 "
                f"(found {sqlite3.sqlite_version})"
            )
        if synchronous.upper() not in ("FULL", "NORMAL", "EXTRA"):
            raise ConfigError(
                f"synchronous must be FULL, NORMAL or EXTRA, not {synchronous!r}"
            )
        self.path = Path(path)
        self.read_only = read_only
        self.busy_timeout = busy_timeout
        self._closed = False
        self._polling = False  # whether SQLite's own busy wait is off (writes)
        self._lock = threading.Lock()
        with self._storage_faults(wrote=False):
            self.conn = connect(self.path, busy_timeout, read_only=read_only)
            try:
                _refuse_foreign(self.conn, self.path)  # before WAL rewrites its header
                add_functions(self.conn)
                if not read_only:
                    enable_wal(self.conn, busy_timeout)
                    self.conn.execute(f"PRAGMA synchronous={synchronous.upper()}")
                self._migrate(MIGRATIONS)
                self.scope_depth = self._settle_scope_depth(scope_depth)
                # One for every transaction: the engine's lock lets one run at a time.
                self._log = LogTransaction(
                    self.conn.cursor(),
                    self.dialect,
                    self.scope_depth,
                    omit_expired=omit_expired,
                )
                # Likewise one of each kind of transaction (they keep no state
                # of their own): a put then makes no object to enter one.
                self._transactions = {
                    (write, dry_run): _Transaction(self, write, dry_run)
                    for write in (False, True)
                    for dry_run in (False, True)
                }
            except BaseException:
                self.conn.close()
                raise

    @property
    def omit_expired(self) -> bool:
        """Whether reads at HEAD hide expired items: a setting of the one
        transaction object every transaction of this engine uses."""
        return self._log.omit_expired

    @omit_expired.setter
    def omit_expired(self, omit: bool) -> None:
        self._log.omit_expired = omit

    def _settle_scope_depth(self, requested: int | None) -> int:
        if requested is not None and (
            isinstance(requested, bool)
            or not isinstance(requested, int)
            or requested < 0
        ):
            raise ConfigError(f"scope_depth must be an int >= 0, got {requested!r}")
        # A writer takes the lock before `scope_depth` exists.
        self.conn.execute("BEGIN" if self.read_only else "BEGIN IMMEDIATE")
        try:
            row = self.conn.execute(self.dialect.META, ("scope_depth",)).fetchone()
            depth = requested or 0 if row is None else int(row[0])
            if row is None and not self.read_only:
                self.conn.execute(self.dialect.SET_META, ("scope_depth", str(depth)))
        finally:
            self.conn.execute("COMMIT")
        if requested is not None and requested != depth:
            raise ConfigError(
                f"this store was created with scope_depth={depth}; open it with "
                f"scope_depth={depth} (or leave it out), not {requested}"
            )
        return depth

    def _migrate(self, steps: Sequence[schema.Migration]) -> list[str]:
        """Apply pending named migrations; a read-only open only checks them."""
        return schema.apply(
            schema.SqliteSchema(self.conn), steps, read_only=self.read_only
        )

    @contextmanager
    def _storage_faults(self, *, wrote: bool) -> Iterator[None]:
        """Turn SQLite's storage failures into a `StorageError` that names the fix.

        Other SQLite errors (a bug in a statement, a broken constraint) pass
        through unchanged.
        """
        try:
            yield
        except sqlite3.Error as exc:
            self._raise_storage_error(exc, wrote=wrote)

    def _raise_storage_error(self, exc: sqlite3.Error, *, wrote: bool) -> NoReturn:
        fault = storage_error(self.path, exc, wrote=wrote)
        if fault is None:
            raise exc
        raise fault from exc

    def check_writable(self, doing: str) -> None:
        """Refuse work that writes (`doing` says what) before any of it is done.

        Raises:
            ReadOnlyError: If the store was opened with `read_only=True`.
        """
        if self.read_only:
            raise ReadOnlyError(
                f"the store at {self.path.parent} is open read-only, so it cannot "
                f"{doing}: open it without read_only=True"
            )

    def transaction(self, *, write: bool, dry_run: bool = False) -> _Transaction:
        """One database transaction; commits on success, rolls back on any error.

        Write transactions take SQLite's write lock up front (`BEGIN IMMEDIATE`),
        so two writers never deadlock upgrading a read. With `dry_run=True` the
        transaction is always rolled back: a dry run that does the real work.

        Raises:
            ReadOnlyError: For a write transaction on a read-only store.
            StorageError: If the store is closed, or storage fails (a full disk).
        """
        if write and self.read_only:
            self.check_writable("write")
        return self._transactions[write, dry_run]

    def _begin_write(self) -> None:
        """Take SQLite's write lock (`BEGIN IMMEDIATE`), waiting up to
        `busy_timeout` for another process's transaction.

        SQLite's own wait sleeps 1, 2, 5, 10… ms between tries, several times
        longer than a put holds the lock, so writers in several processes would
        spend most of their time asleep while the lock sits free. This polls
        with short, jittered pauses instead. SQLite's wait stays on for reads,
        which only wait in rare cases (another opener recovering the WAL); the
        switch between the two costs a pragma only when the kind changes.
        """
        if not self._polling:
            self.conn.execute("PRAGMA busy_timeout = 0")
            self._polling = True
        deadline = time.monotonic() + self.busy_timeout
        pause = _FIRST_PAUSE
        while True:
            try:
                self.conn.execute("BEGIN IMMEDIATE")
                return
            except sqlite3.OperationalError as exc:
                busy = str(exc) == "database is locked"  # SQLITE_BUSY
                if not busy or time.monotonic() + pause > deadline:
                    raise
            time.sleep(pause * random.uniform(0.5, 1.5))
            pause = min(pause * 2, _LONGEST_PAUSE)

    def _wait_like_sqlite(self) -> None:
        """Give reads SQLite's own busy wait back after a write turned it off."""
        if self._polling:
            self.conn.execute(f"PRAGMA busy_timeout = {int(self.busy_timeout * 1000)}")
            self._polling = False

    def migrate(self, steps: Sequence[schema.Migration]) -> list[str]:
        """Apply another component's named migrations (the checkpointer's) on
        this connection, under its lock. Returns the names applied.

        Raises:
            ConfigError: If a newer version migrated them, or a read-only
                store still needs them.
            StorageError: If the store is closed, or storage fails.
        """
        with self._lock, self._storage_faults(wrote=True):
            self.check_open()
            self._wait_like_sqlite()
            return self._migrate(steps)

    def scrub(self, erased: Sequence[str] = ()) -> bool:
        """Leave no copy of erased content in the file, and empty the
        write-ahead log into it. Given the texts `erased` (as written), by
        changes made with `secure_delete` on (as `redact` makes them), it
        costs what is free: the free pages are zeroed, then the file is read
        for those texts, and rewritten only if one is still there (a copy an
        older write left in a page's free space); see `engine/scrub.py`.
        Otherwise it is rewritten (`VACUUM` writes only live rows, so no free
        page or free space in a page keeps an old value). Returns False if
        another connection's open transaction kept the log from being emptied
        (its frames may still hold old pages): call it again later.
        """
        self.check_writable("scrub its file")
        with self._lock, self._storage_faults(wrote=True):
            self.check_open()
            self._wait_like_sqlite()

            def emptied() -> bool:
                checkpoint = self.conn.execute("PRAGMA wal_checkpoint(TRUNCATE)")
                return int(checkpoint.fetchone()[0]) == 0

            if erased:
                zero_free_pages(self.conn)
                if emptied() and not holding(self.path, erased):
                    return True
            self.conn.execute("VACUUM")
            return emptied()

    def check_open(self) -> None:
        """Raise `StorageError` once the engine is closed."""
        if self._closed:
            raise StorageError(
                f"the store at {self.path.parent} is closed: open it again "
                "(ChronoStore.from_path) to keep using it"
            )

    def close(self) -> None:
        """Close the connection. Safe to call twice."""
        with self._lock:
            self._closed = True
            self.conn.close()


class _Transaction:
    """`SqliteEngine.transaction`: a class, not a generator, because a put runs
    it on every call (measured: about 10 us less per put than `contextmanager`);
    the engine makes one of each kind when it opens and hands those out.

    Holds the engine's lock from enter to exit; SQLite's storage failures, in
    the body or at `COMMIT`, leave as a `StorageError` that names the fix.
    """

    __slots__ = ("_dry_run", "_engine", "_write")

    def __init__(self, engine: SqliteEngine, write: bool, dry_run: bool) -> None:
        self._engine = engine
        self._write = write
        self._dry_run = dry_run

    def __enter__(self) -> LogTransaction:
        engine = self._engine
        engine._lock.acquire()
        try:
            if engine._closed:
                engine.check_open()
            if self._write:
                engine._begin_write()
            else:
                engine._wait_like_sqlite()
                engine.conn.execute("BEGIN")
        except BaseException as exc:
            engine._lock.release()
            if isinstance(exc, sqlite3.Error):
                wrote = self._write and not self._dry_run
                engine._raise_storage_error(exc, wrote=wrote)
            raise
        return engine._log

    def __exit__(
        self,
        exc_type: type[BaseException] | None,
        exc: BaseException | None,
        traceback: TracebackType | None,
    ) -> None:
        engine = self._engine
        wrote = self._write and not self._dry_run
        try:
            conn = engine.conn
            if exc is None:
                try:
                    conn.execute("ROLLBACK" if self._dry_run else "COMMIT")
                except BaseException:
                    if conn.in_transaction:  # SQLite may have rolled back
                        conn.execute("ROLLBACK")
                    raise
            elif conn.in_transaction:
                conn.execute("ROLLBACK")
        except sqlite3.Error as failure:
            engine._raise_storage_error(failure, wrote=wrote)
        finally:
            engine._lock.release()
        if isinstance(exc, sqlite3.Error):
            engine._raise_storage_error(exc, wrote=wrote)
