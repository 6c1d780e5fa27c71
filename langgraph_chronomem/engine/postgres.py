"""The versioned log on PostgreSQL, for when one machine is outgrown.

    from langgraph_chronomem.engine.types import CommitMeta, Write

    engine = PostgresEngine("postgresql://localhost/memories")
    with engine.transaction(write=True) as tx:
        commits = tx.commit([Write(("notes",), "a", {"t": "hi"})], CommitMeta())
    [c.summary for c in commits]  # ['created notes/a: hi']
    engine.close()

(tests/test_postgres.py runs this against a private server.)

The tables and the transaction logic (`base.py`) are the SQLite engine's; what
differs is how writers take turns. SQLite has one writer at a time. Here each
write transaction locks only the scopes it commits to, with a transaction-level
advisory lock taken when it first reads a scope's HEAD (`chronomem_lock_scope`):
writers to different scopes run side by side on different connections, writers
to one scope queue, so its versions stay gap-free and HEAD exact. Reads run in
`REPEATABLE READ READ ONLY` snapshots and never wait for a writer.

A server is a round trip away, so a write waits for it as seldom as it can: a
commit to a scope is one call of a server-side function (`chronomem_write`)
that takes the scope's lock and writes the rows and the commit, and a store
batch whose only statement is that call (a put) sends it without `BEGIN` and
`COMMIT`, so the server commits it as it ends: one round trip, where the
statements one by one took seven. Any other transaction sends its `BEGIN`
with its first statement (a pipeline), so a read waits twice, as
`PostgresStore`'s does. A filtered search at HEAD finds the rows an equality
filter matches in an index of HEAD values (`postgres_sql.py`).

The undo search's word stage is FTS5's BM25 computed in SQL over a table of
per-change term counts (`postgres_sql.py`), with its statistics counted within
the scope searched.
"""

from __future__ import annotations

import contextlib
import functools
import logging
import threading
import time
from collections.abc import Iterator, Sequence
from contextlib import contextmanager
from datetime import datetime, timezone
from typing import Any

import orjson
import psycopg
from psycopg.pq import TransactionStatus
from psycopg.rows import tuple_row
from psycopg_pool import ConnectionPool

from langgraph_chronomem.engine.base import (
    COMMITS_EVEN_EMPTY,
    SYSTEM_AUTHOR,
    LogTransaction,
)
from langgraph_chronomem.engine.postgres_sql import (
    LOCK_CLASS,
    MIGRATIONS,
    PostgresCursor,
    PostgresDialect,
    WriteDialect,
)
from langgraph_chronomem.engine.rows import _NewRow, _Written, scope_text
from langgraph_chronomem.engine.schema import Migration, Rows, apply
from langgraph_chronomem.engine.sql import BranchAt
from langgraph_chronomem.engine.types import CommitMeta, Namespace, Op, Write
from langgraph_chronomem.engine.values import encode_time, utc
from langgraph_chronomem.errors import ConfigError, ReadOnlyError, StorageError

__all__ = ["Conn", "PostgresEngine"]

_MIGRATION_LOCK = 0  # the advisory lock's second key while applying migrations

# -- the engine ------------------------------------------------------------------

Conn = str | psycopg.Connection[Any] | ConnectionPool[Any]
"""What a `PostgresEngine` opens: a connection string, a connection or a pool."""

_BEGIN_WRITE = "BEGIN ISOLATION LEVEL READ COMMITTED"
_BEGIN_READ = "BEGIN ISOLATION LEVEL REPEATABLE READ READ ONLY"
_LOST = (psycopg.OperationalError, psycopg.InterfaceError)
_POOL = "chronomem"  # the name of the pools engines open


class _OneLine(logging.Filter):
    """Makes the records psycopg_pool logs about a chronomem pool one line:
    libpq's words for a server that is away take two or three (a restart
    logged a screen of them). Other pools' records pass as they are."""

    def filter(self, record: logging.LogRecord) -> bool:
        if isinstance(record.args, tuple) and _POOL in record.args:
            record.msg, record.args = " ".join(record.getMessage().split()), None
        return True


logging.getLogger("psycopg.pool").addFilter(_OneLine())


class PostgresEngine:
    """The versioned log in a PostgreSQL database, shared by any number of servers.

    Args:
        conn: A connection string (`postgresql://user@host/db`; the engine
            opens its own pool and closes it), a `psycopg.Connection`, or a
            `psycopg_pool.ConnectionPool` (the caller's to close). A connection
            serves one transaction at a time; a pool serves one per thread and
            replaces connections that die. Connections need `autocommit=True`,
            as LangGraph's `PostgresStore` asks; any row factory works.
        scope_depth: Leading namespace labels that make a scope. `None` takes
            the depth the database was created with (0 for a new one).
        omit_expired: Hide items whose TTL has passed from reads at HEAD.
        busy_timeout: Seconds a writer waits for another writer to the same
            scope.
        max_connections: The size of the pool opened for a connection string.
        read_only: Only read: nothing is created, migrated or written, and
            write transactions raise `ReadOnlyError`.

    Raises:
        ConfigError: If `scope_depth` contradicts the depth the database was
            created with, a newer langgraph-chronomem upgraded the database, a
            read-only open finds it needs upgrading, or a connection given is
            not in autocommit mode.
        StorageError: If the server cannot be reached.
    """

    dialect = PostgresDialect()

    def __init__(
        self,
        conn: Conn,
        *,
        scope_depth: int | None = None,
        omit_expired: bool = False,
        busy_timeout: float = 30.0,
        max_connections: int = 10,
        read_only: bool = False,
    ) -> None:
        self.omit_expired = omit_expired
        self.read_only = read_only
        self.busy_timeout = busy_timeout
        self._write_dialect = WriteDialect(round(busy_timeout * 1000))
        self._closed = False
        self._lock = threading.Lock()  # one transaction at a time on a connection
        self._owned: ConnectionPool | None = None
        if isinstance(conn, str):
            _reach(conn, busy_timeout)
            self._owned = ConnectionPool(
                conn,
                min_size=1,
                max_size=max_connections,
                kwargs={"autocommit": True},
                open=False,
                name=_POOL,
            )
            conn = self._owned
        self._conn = conn
        self.where = _describe(conn)
        if self._owned is not None:
            try:
                self._owned.open(wait=True, timeout=busy_timeout)
            except _LOST as exc:
                self._owned.close()
                raise self._fault(exc, committing=False) from exc
        try:
            self._migrate(MIGRATIONS)
            self.scope_depth = self._settle_scope_depth(scope_depth)
        except BaseException:
            self.close()
            raise

    # -- connections ----------------------------------------------------------

    @contextmanager
    def _connection(self) -> Iterator[psycopg.Connection[Any]]:
        """A connection for one transaction, checked to be usable by it."""
        self.check_open()
        if isinstance(self._conn, ConnectionPool):
            with self._conn.connection() as conn:
                yield _usable(conn)
        else:
            with self._lock:
                self.check_open()
                yield _usable(self._conn)

    def _fault(self, exc: psycopg.Error, *, committing: bool) -> StorageError:
        """A lost connection or an expired lock wait, as a `StorageError` that
        says whether anything may have been written and what to do."""
        cause = str(exc).strip().splitlines()[0] if str(exc) else type(exc).__name__
        if isinstance(exc, psycopg.errors.LockNotAvailable):
            fix = (
                f"another writer held the scope for over {self.busy_timeout}s; "
                "nothing was written: retry, or raise busy_timeout"
            )
        elif committing:
            fix = (
                "the connection failed while committing, so the write may or may "
                "not have been saved: read HEAD (store.log) before retrying"
            )
        elif isinstance(self._conn, ConnectionPool):
            fix = "nothing was written; the next call uses a new connection"
        else:
            fix = (
                "nothing was written; this engine was given one connection, which "
                "cannot be replaced: give it a pool or a connection string to "
                "survive lost connections"
            )
        return StorageError(f"PostgreSQL at {self.where}: {cause}; {fix}")

    @contextmanager
    def _begun(self, begin: str) -> Iterator[PostgresCursor]:
        """A cursor for a transaction opened with `begin` (ended by the caller).

        `BEGIN` is sent with the first statement (`PostgresCursor`). A pooled
        connection that died while idle (a restarted server, a killed backend)
        fails there, before anything was done: the pool drops every idle
        connection that died with it, and the cursor sends it again on
        another (the dead one goes back to the pool, which drops it, when the
        transaction ends).
        """
        with contextlib.ExitStack() as held:

            def connect() -> psycopg.Cursor[Any]:
                conn = held.enter_context(self._connection())
                return conn.cursor(row_factory=tuple_row)

            def reconnect(pool: ConnectionPool[Any]) -> psycopg.Cursor[Any]:
                pool.check()
                return connect()

            pool = self._conn if isinstance(self._conn, ConnectionPool) else None
            yield PostgresCursor(
                connect(),
                begin,
                reconnect=None if pool is None else functools.partial(reconnect, pool),
            )

    # -- transactions ---------------------------------------------------------

    def check_writable(self, doing: str) -> None:
        """Refuse work that writes (`doing` says what) before any of it is done.

        Raises:
            ReadOnlyError: If the engine was opened with `read_only=True`.
        """
        if self.read_only:
            raise ReadOnlyError(
                f"the store at {self.where} is open read-only, so it cannot "
                f"{doing}: open it without read_only=True"
            )

    @contextmanager
    def transaction(
        self, *, write: bool, dry_run: bool = False
    ) -> Iterator[LogTransaction]:
        """One database transaction; commits on success, rolls back on any error.

        A write transaction locks each scope it reads HEAD of (every commit
        does) until it ends; a read transaction sees one snapshot and waits for
        no writer. With `dry_run=True` the transaction is always rolled back:
        a dry run that does the real work.

        Raises:
            ReadOnlyError: For a write transaction on a read-only engine.
            StorageError: If the engine is closed, the connection is lost (the
                message says whether anything may have been written), or a
                writer waited for a scope longer than `busy_timeout`.
        """
        if write:
            self.check_writable("write")
        committing = False
        began: PostgresCursor | None = None
        try:
            with self._begun(_BEGIN_WRITE if write else _BEGIN_READ) as cur:
                began = cur
                try:
                    yield (
                        _WriteTransaction(
                            cur,
                            self._write_dialect,
                            self.scope_depth,
                            omit_expired=self.omit_expired,
                            dry_run=dry_run,
                        )
                        if write
                        else LogTransaction(
                            cur,
                            self.dialect,
                            self.scope_depth,
                            omit_expired=self.omit_expired,
                        )
                    )
                except BaseException:
                    _roll_back(cur.raw)
                    raise
                if cur.state == "open":  # else none was begun, or it ended
                    committing = write and not dry_run
                    cur.raw.execute("ROLLBACK" if dry_run else "COMMIT")
        except _LOST as exc:
            # A statement sent alone commits as it ends: it may have landed.
            committing = committing or (began is not None and began.state == "alone")
            raise self._fault(exc, committing=committing) from exc

    def migrate(self, steps: Sequence[Migration]) -> list[str]:
        """Apply another component's named migrations (the checkpointer's).
        Returns the names applied.

        Raises:
            ConfigError: If a newer version migrated them, or a read-only
                engine still needs them.
            StorageError: If the engine is closed, or the connection is lost.
        """
        return self._migrate(steps)

    def _migrate(self, steps: Sequence[Migration]) -> list[str]:
        try:
            with self._connection() as conn:
                db = PostgresSchema(conn.cursor(row_factory=tuple_row))
                return apply(db, steps, read_only=self.read_only)
        except _LOST as exc:
            raise self._fault(exc, committing=True) from exc

    def _settle_scope_depth(self, requested: int | None) -> int:
        if requested is not None and (
            isinstance(requested, bool)
            or not isinstance(requested, int)
            or requested < 0
        ):
            raise ConfigError(f"scope_depth must be an int >= 0, got {requested!r}")
        self.scope_depth = 0  # a LogTransaction needs one; the stored one wins
        with self.transaction(write=not self.read_only) as tx:
            if not self.read_only:  # the first opener's depth, even in a race
                tx.cur.execute(
                    self.dialect.FIRST_META, ("scope_depth", str(requested or 0))
                )
            stored = tx.meta("scope_depth")
        depth = requested or 0 if stored is None else int(stored)
        if requested is not None and requested != depth:
            raise ConfigError(
                f"this store was created with scope_depth={depth}; open it with "
                f"scope_depth={depth} (or leave it out), not {requested}"
            )
        return depth

    def scrub(self, erased: Sequence[str] = ()) -> bool:
        """Rewrite the log's tables (`VACUUM FULL`), so no dead row keeps an
        erased value: PostgreSQL leaves a row's old version in its page until
        the space is reused, and has no way to overwrite it in place, so this
        costs the size of the four tables whatever was `erased` (the texts,
        unused here). The server's write-ahead log segments and any backups
        keep what they recorded until they are recycled: that is the
        operator's to manage. Returns True.
        """
        self.check_writable("scrub its tables")
        try:
            with self._connection() as conn:
                for table in _SCRUBBED:
                    conn.execute(f"VACUUM FULL {table}")
        except _LOST as exc:
            raise self._fault(exc, committing=True) from exc
        return True

    def check_open(self) -> None:
        """Raise `StorageError` once the engine is closed."""
        if self._closed:
            raise StorageError(
                f"the store at {self.where} is closed: open it again to keep using it"
            )

    def close(self) -> None:
        """Close the pool this engine opened (a connection or pool given to it
        stays open: it is the caller's). Safe to call twice."""
        with self._lock:
            self._closed = True
        if self._owned is not None:
            self._owned.close()


# The tables that hold values or words from them.
_SCRUBBED = ("items", "changes", "change_terms", "commits")

_ROW_FIELDS = ("ns", "k", "v", "ttl", "created", "updated", "fields")  # of a _NewRow


class _WriteTransaction(LogTransaction):
    """A write transaction whose commits are each one call of the server-side
    `chronomem_write` (`postgres_sql.py`), which does what `LogTransaction._write`
    does statement by statement, in one round trip.

    `write` (a store batch's writes), when it is the transaction's first
    statement and commits to one scope, sends that call alone: the server
    commits it as it ends, and the transaction is over (a later statement
    raises; `ChronoStore.batch` sends none). A proposal (op `propose`) takes
    the portable path of `LogTransaction._write`, statement by statement.
    """

    cur: PostgresCursor
    sql: WriteDialect

    def __init__(
        self,
        cur: PostgresCursor,
        dialect: WriteDialect,
        scope_depth: int,
        *,
        omit_expired: bool,
        dry_run: bool,
    ) -> None:
        super().__init__(cur, dialect, scope_depth, omit_expired=omit_expired)
        self._may_end = False
        self._dry_run = dry_run

    def write(self, writes: Sequence[Write], meta: CommitMeta) -> int:
        self._may_end = not self._dry_run
        try:
            return super().write(writes, meta)
        finally:
            self._may_end = False

    def _write(
        self,
        scope: Namespace,
        op: Op,
        rows: Sequence[_NewRow],
        meta: CommitMeta,
        *,
        target: int | None = None,
        branch: BranchAt | None = None,
    ) -> _Written | None:
        if op == "propose" or branch is not None:  # rare: the portable path
            return super()._write(scope, op, rows, meta, target=target, branch=branch)
        moment = utc(meta.timestamp) if meta.timestamp else datetime.now(timezone.utc)
        stamp = encode_time(moment)
        author = SYSTEM_AUTHOR if op == "expire" else meta.author
        labels = dict(meta.labels)
        run = self.cur.alone if self._may_end else self.cur.execute
        done = run(
            self.sql.WRITE,
            (
                scope_text(scope),
                op,
                stamp,
                time.time(),
                author,
                meta.reason,
                target,
                orjson.dumps(labels, option=orjson.OPT_SORT_KEYS).decode(),
                op in COMMITS_EVEN_EMPTY,
                orjson.dumps(
                    [dict(zip(_ROW_FIELDS, row, strict=True)) for row in rows]
                ).decode(),
            ),
        ).fetchone()
        assert done is not None  # the function returns one row
        version, seq, written, replaced = done
        if version is None:
            return None
        changes = [
            (rows[i - 1].namespace, rows[i - 1].key, old, rows[i - 1].value)
            for i, old in zip(written, replaced, strict=True)
        ]
        return _Written(
            scope, version, seq, version - 1 or None, stamp, author, op, changes,
            labels, target,
        )  # fmt: skip


def _usable(conn: psycopg.Connection[Any]) -> psycopg.Connection[Any]:
    if not conn.autocommit:
        raise ConfigError(
            "the engine runs its own transactions, so its connections need "
            "autocommit=True: psycopg.connect(..., autocommit=True), or "
            "ConnectionPool(..., kwargs={'autocommit': True})"
        )
    return conn


def _roll_back(cur: psycopg.Cursor[Any]) -> None:
    """End a failed transaction, if its connection still can."""
    conn = cur.connection
    if not conn.closed and conn.info.transaction_status != TransactionStatus.IDLE:
        # If the connection dies now, the server rolls the transaction back.
        with contextlib.suppress(psycopg.Error):
            cur.execute("ROLLBACK")


def _reach(url: str, timeout: float) -> None:
    """Connect once before the pool does: a wrong URL, database or password
    fails at once with the server's own words, not after the pool's retries
    with "pool initialization incomplete"."""
    try:
        psycopg.connect(url, connect_timeout=max(2, round(timeout))).close()
    except psycopg.Error as exc:
        raise StorageError(
            f"cannot connect to PostgreSQL at {_where(url)}: {str(exc).strip()}"
        ) from exc


def _where(conninfo: str) -> str:
    """Host, port and database name of a connection string, no password."""
    params = psycopg.conninfo.conninfo_to_dict(conninfo)
    host, port, db = params.get("host"), params.get("port"), params.get("dbname")
    return f"{host or 'localhost'}:{port or 5432}/{db or ''}"


def _describe(conn: ConnectionPool[Any] | psycopg.Connection[Any]) -> str:
    """Where the database is, for messages: host, port and name, no password."""
    if isinstance(conn, ConnectionPool):
        info = conn.conninfo
        return _where(info if isinstance(info, str) else info())
    where = conn.info
    return f"{where.host or 'localhost'}:{where.port or 5432}/{where.dbname or ''}"


# -- migrations ------------------------------------------------------------------


class PostgresSchema:
    """A connection as the schema runner's `SchemaDatabase`: servers opening a
    new database at once take turns on an advisory lock."""

    mark = "%s"

    def __init__(self, cur: psycopg.Cursor[Any]) -> None:
        self.cur = cur

    def execute(self, sql: str, params: Sequence[object] | None = None) -> Rows:
        return self.cur.execute(sql, params)

    def has_table(self, name: str) -> bool:
        found = self.cur.execute("SELECT to_regclass(%s)", (name,)).fetchone()
        return found is not None and found[0] is not None

    def begin(self) -> None:
        self.cur.execute("BEGIN")
        self.cur.execute(
            "SELECT pg_advisory_xact_lock(%s, %s)", (LOCK_CLASS, _MIGRATION_LOCK)
        )

    def commit(self) -> None:
        self.cur.execute("COMMIT")

    def roll_back(self) -> None:
        _roll_back(self.cur)

    def kept(self, migration: Migration) -> list[str]:
        return []  # a rebuilt table's indexes are the steps' own
