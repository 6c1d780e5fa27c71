"""Where a benchmark's stores live: SQLite directories, or PostgreSQL databases.

The undo benchmarks build their stores through `Stores`, so `--postgres` runs
the same requests on the PostgreSQL engine: one database per store directory
(the directory keeps the store's embedded Chroma), on the server a DSN names or
on a private one started for the run (`tests/pg.py`).

    with Stores(postgres="") as stores:          # a private server
        with stores.open(Path(tmp) / "store", scope_depth=2, build=True) as store:
            store.put(("memories", "alice"), "a", {"content": "hi"})
"""

from __future__ import annotations

import re
from pathlib import Path
from types import TracebackType

import psycopg
from psycopg.conninfo import make_conninfo

from langgraph_chronomem import ChronoStore
from langgraph_chronomem.search.resolve import ResolverConfig
from tests.pg import PostgresServer

__all__ = ["Stores"]


class Stores:
    """Opens a benchmark's stores on SQLite, or on PostgreSQL.

    Args:
        postgres: `None` for SQLite stores (`ChronoStore.from_path`); a libpq
            connection string for databases on that server (its user must be
            allowed to create databases); `""` to start a private server for the
            run and stop it at the end.
    """

    def __init__(self, postgres: str | None = None) -> None:
        self._server: PostgresServer | None = None
        self.dsn = postgres
        if postgres == "":
            self._server = PostgresServer().start()
            self.dsn = self._server.conninfo()

    @property
    def engine(self) -> str:
        """The engine's name, for reports."""
        return "SQLite" if self.dsn is None else "PostgreSQL"

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
        if build:
            with psycopg.connect(self.dsn, autocommit=True) as conn:
                conn.execute(f'DROP DATABASE IF EXISTS "{name}"')
                conn.execute(f'CREATE DATABASE "{name}"')
        return ChronoStore.from_conn_string(
            make_conninfo(self.dsn, dbname=name),
            scope_depth=scope_depth,
            chroma_path=path,
            resolver=resolver,
        )

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
