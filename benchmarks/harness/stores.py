"""Where a benchmark's stores live: SQLite directories, or PostgreSQL databases.

The undo benchmarks build their stores through `Stores`, so `--postgres` runs
the same requests on the PostgreSQL engine: one database per store directory
(the directory keeps the store's embedded Chroma), on the server a DSN names or
on a private one started for the run (`testsupport/pg.py`).

    with Stores(postgres="") as stores:          # a private server
        with stores.open(Path(tmp) / "store", scope_depth=2, build=True) as store:
            store.put(("memories", "alice"), "a", {"content": "hi"})

The store benchmarks compare ChronoStore on PostgreSQL with LangGraph's
`PostgresStore` on the same server (`open_postgres_pair`), each connected as
its `from_conn_string` connects, through `CountingConnection`, which counts the
round trips and statements each op costs.
"""

from __future__ import annotations

import re
from collections.abc import Callable
from dataclasses import dataclass
from functools import partial
from pathlib import Path
from types import TracebackType
from typing import Any

import psycopg
from langgraph.store.postgres import PostgresStore
from psycopg.conninfo import make_conninfo
from psycopg.rows import dict_row
from psycopg_pool import ConnectionPool

from benchmarks.harness.subjects import SCOPE, Subject
from langgraph_chronomem import ChronoStore
from langgraph_chronomem.search.resolve import ResolverConfig
from testsupport.pg import PostgresServer

__all__ = [
    "CHRONO_PG",
    "PG_STORE",
    "CountingConnection",
    "Stores",
    "Traffic",
    "open_postgres_pair",
    "pair_databases",
]

CHRONO_PG = "ChronoStore (PostgreSQL)"
PG_STORE = "PostgresStore"


class Stores:
    """Opens a benchmark's stores on SQLite, or on PostgreSQL.

    Args:
        postgres: `None` for SQLite stores (`ChronoStore.from_path`); a libpq
            connection string for databases on that server (its user must be
            allowed to create databases); `""` to start a private server for the
            run and stop it at the end.
        durable: Start that private server with `fsync` on, as a production
            server runs (the tests' servers run without it). A commit then
            waits for its WAL flush, as on SQLite with `synchronous=FULL`.
    """

    def __init__(self, postgres: str | None = None, *, durable: bool = False) -> None:
        self._server: PostgresServer | None = None
        self.dsn = postgres
        if postgres == "":
            self._server = PostgresServer(durable=durable).start()
            self.dsn = self._server.conninfo()

    @property
    def engine(self) -> str:
        """The engine's name, for reports."""
        return "SQLite" if self.dsn is None else "PostgreSQL"

    def server_version(self) -> str:
        """The PostgreSQL server's version as it reports it ("15.18"), for
        reports; on SQLite, ""."""
        if self.dsn is None:
            return ""
        with psycopg.connect(self.dsn) as conn:
            row = conn.execute("SHOW server_version").fetchone()
        return str(row[0]) if row else "unknown"

    def open(
        self,
        path: Path,
        *,
        scope_depth: int | None = None,
        resolver: ResolverConfig | None = None,
        build: bool = False,
    ) -> ChronoStore:
        """The store of directory `path`; `build` starts it empty (and, on
        SQLite, writes with `synchronous=NORMAL`, as a build needs no more)."""
        if self.dsn is None:
            return ChronoStore.from_path(
                path,
                scope_depth=scope_depth,
                resolver=resolver,
                synchronous="NORMAL" if build else "FULL",
            )
        name = "chronomem_bench_" + re.sub(r"\W", "_", path.name)
        return ChronoStore.from_conn_string(
            self.database(name) if build else make_conninfo(self.dsn, dbname=name),
            scope_depth=scope_depth,
            chroma_path=path,
            resolver=resolver,
        )

    def database(self, name: str) -> str:
        """A new empty database `name` (dropped first if it exists), as a
        connection string. Only on PostgreSQL."""
        assert self.dsn is not None, "Stores(postgres=...) holds databases"
        with psycopg.connect(self.dsn, autocommit=True) as conn:
            conn.execute(f'DROP DATABASE IF EXISTS "{name}"')
            conn.execute(f'CREATE DATABASE "{name}"')
        return make_conninfo(self.dsn, dbname=name)

    def analyze(self, name: str) -> None:
        """Gather the planner's statistics in database `name`, as autovacuum
        does once its tables have grown: the benchmarks time ops right after
        loading, before autovacuum's next round. Only on PostgreSQL."""
        assert self.dsn is not None, "Stores(postgres=...) holds databases"
        with psycopg.connect(make_conninfo(self.dsn, dbname=name)) as conn:
            conn.execute("ANALYZE")

    def close(self) -> None:
        """Stop the private server, if one was started."""
        if self._server is not None:
            self._server.stop()
            self._server = None

    def __enter__(self) -> Stores:
        return self

    def __exit__(
        self,
        exc_type: type[BaseException] | None,
        exc: BaseException | None,
        tb: TracebackType | None,
    ) -> None:
        self.close()


@dataclass
class Traffic:
    """What a store sent its server: round trips (each a wait for the server's
    answer) and statements."""

    round_trips: int = 0
    statements: int = 0


class _CountingCursor(psycopg.Cursor[Any]):
    def execute(self, query: Any, params: Any = None, **kwargs: Any) -> Any:
        self.connection.traffic.statements += 1  # type: ignore[attr-defined]
        return super().execute(query, params, **kwargs)

    def executemany(self, query: Any, params_seq: Any, **kwargs: Any) -> None:
        rows = list(params_seq)
        self.connection.traffic.statements += len(rows)  # type: ignore[attr-defined]
        super().executemany(query, rows, **kwargs)


# psycopg's steps that wait for the server's answer: a statement outside a
# pipeline, a pipeline's sync (at its end, or when a result is fetched), and
# COMMIT or ROLLBACK of an open transaction (`with conn:` calls them on an
# idle one too, which sends nothing).
_ANSWERED = {"_execute_gen", "_sync_gen", "_exit_gen", "_fetch_gen"}
_ENDS = {"_commit_gen", "_rollback_gen"}


class CountingConnection(psycopg.Connection[Any]):
    """A psycopg connection that counts into its `traffic` (set it after
    connecting) the round trips it makes and the statements it sends."""

    traffic = Traffic()

    def wait(self, gen: Any, *args: Any, **kwargs: Any) -> Any:
        step = gen.gi_code.co_name if hasattr(gen, "gi_code") else ""
        idle = self.info.transaction_status == psycopg.pq.TransactionStatus.IDLE
        if (step in _ANSWERED and not (step == "_execute_gen" and self._pipeline)) or (
            step in _ENDS and not idle
        ):
            self.traffic.round_trips += 1
        return super().wait(gen, *args, **kwargs)


def pair_databases(size: int) -> tuple[str, str]:
    """The databases of ChronoStore and `PostgresStore` in `open_postgres_pair`."""
    return f"chronomem_ops_{size}", f"langgraph_ops_{size}"


def open_postgres_pair(
    stores: Stores, size: int
) -> tuple[list[Subject], dict[str, Traffic]]:
    """ChronoStore and LangGraph's `PostgresStore`, each in a new database on
    the server of `stores`, connected as each one's `from_conn_string`
    connects (a pool of up to 10 for ChronoStore, one connection for
    `PostgresStore`), and what each sends the server."""
    traffic = {CHRONO_PG: Traffic(), PG_STORE: Traffic()}
    chrono_db, langgraph_db = pair_databases(size)
    pool = ConnectionPool(
        stores.database(chrono_db),
        min_size=1,
        max_size=10,
        kwargs={"autocommit": True, "cursor_factory": _CountingCursor},
        connection_class=CountingConnection,
        configure=lambda conn: setattr(conn, "traffic", traffic[CHRONO_PG]),
        open=True,
    )
    chrono = ChronoStore.from_pool(pool, scope_depth=len(SCOPE))

    def mark() -> Callable[[], object]:
        return partial(chrono.rollback, SCOPE, to=chrono.head(SCOPE))

    def close_chrono() -> None:
        chrono.close()
        pool.close()

    conn = CountingConnection.connect(
        stores.database(langgraph_db),
        autocommit=True,
        prepare_threshold=0,
        row_factory=dict_row,
        cursor_factory=_CountingCursor,
    )
    conn.traffic = traffic[PG_STORE]
    langgraph = PostgresStore(conn)
    langgraph.setup()
    return [
        Subject(CHRONO_PG, size, chrono, close_chrono, mark),
        Subject(PG_STORE, size, langgraph, conn.close),
    ], traffic
