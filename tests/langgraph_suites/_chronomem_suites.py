"""A pytest plugin that runs LangGraph's own store and saver suites on chronomem.

`runner.py` loads it with `-p _chronomem_suites` into a pytest whose root is an
extracted LangGraph sdist. That sdist's `tests/` package would clash with ours,
so this module is imported by its own name and imports nothing from our `tests`
package (our `testsupport/pg.py` is loaded by its path).

The suites make their stores and savers, in their fixtures and helpers, through
a few names: `SqliteStore.from_conn_string(...)`, `PostgresSaver(conn)`,
`DEFAULT_URI`... Before any test runs, this plugin binds those names, in every
collected test module and in the sdist's `tests.conftest`, to the stand-ins
below, which open `ChronoStore`, `AsyncChronoStore` and `ChronoCheckpointer`
instead: chronomem's temporary store for `":memory:"`, the directory
`<path>.chronomem` for a SQLite file (so reopening a path reopens its store),
and a database of a private PostgreSQL server for the PostgreSQL suites. The
test bodies and their assertions run unchanged.

What the stand-ins add for the fixtures: a coroutine `setup()` on the async
savers, as `AsyncSqliteSaver` names it (ChronoCheckpointer serves sync and
async code with one object, so its coroutine is `asetup()`); on a
PostgreSQL store, an empty `MIGRATIONS` and a `_cursor()` on the same
database, since the fixtures rewrite LangGraph's migration list and drop its
migration table before a second `setup()`.
"""

from __future__ import annotations

import asyncio
import importlib.util
import json
import os
import shutil
import signal
import sys
import tempfile
from collections.abc import AsyncIterator, Iterator
from contextlib import asynccontextmanager, contextmanager
from functools import partial
from pathlib import Path
from typing import Any

import psycopg
import pytest
from psycopg.rows import dict_row

from langgraph_chronomem import AsyncChronoStore, ChronoCheckpointer, ChronoStore

_TESTS_DIR = Path(__file__).resolve().parent.parent
_scratch: Path | None = None  # this session's temporary directory
_server: Any = None  # our testsupport/pg.py PostgresServer, started on first use
_outcomes: dict[str, dict[str, str]] = {}


def _temporary(prefix: str) -> str:
    assert _scratch is not None, "the plugin is configured first"
    return tempfile.mkdtemp(dir=_scratch, prefix=prefix)


# -- stores --------------------------------------------------------------------


def _open(cls: type[ChronoStore], conn_string: str, **options: Any) -> ChronoStore:
    """`cls` opened where LangGraph's SQLite class would open `conn_string`."""
    if conn_string == ":memory:":
        return cls.from_conn_string(conn_string, **options)
    return cls.from_path(f"{conn_string}.chronomem", **options)


class SqliteStore:
    """Stands where `langgraph.store.sqlite.SqliteStore` stood."""

    @staticmethod
    def from_conn_string(
        conn_string: str, *, index: Any = None, ttl: Any = None
    ) -> ChronoStore:
        return _open(ChronoStore, conn_string, index=index, ttl=ttl)


class AsyncSqliteStore:
    """Stands where `AsyncSqliteStore` stood."""

    @staticmethod
    def from_conn_string(
        conn_string: str, *, index: Any = None, ttl: Any = None
    ) -> ChronoStore:
        return _open(AsyncChronoStore, conn_string, index=index, ttl=ttl)


def _on_postgres(
    cls: type[ChronoStore],
    conn_string: str,
    *,
    pipeline: bool = False,
    pool_config: dict[str, Any] | None = None,
    index: Any = None,
    ttl: Any = None,
) -> ChronoStore:
    """`cls` on the database `conn_string` names.

    `pipeline` (a psycopg performance mode) has no counterpart; a pool's
    `max_size` becomes the store's `max_connections`; a store searched by
    meaning keeps its vectors in an embedded Chroma of its own.
    """
    options: dict[str, Any] = {}
    if pool_config and "max_size" in pool_config:
        options["max_connections"] = pool_config["max_size"]
    if index:
        options["chroma_path"] = _temporary("chroma-")
    store = cls.from_conn_string(conn_string, index=index, ttl=ttl, **options)
    # A test that reads LangGraph's tables through `_cursor()` finds none.
    store.MIGRATIONS = []  # type: ignore[attr-defined]
    cursor = _acursor_on if cls is AsyncChronoStore else _cursor_on
    store._cursor = partial(cursor, conn_string)  # type: ignore[attr-defined]
    return store


@contextmanager
def _cursor_on(conn_string: str) -> Iterator[Any]:
    with (
        psycopg.connect(conn_string, autocommit=True, row_factory=dict_row) as conn,
        conn.cursor() as cursor,
    ):
        yield cursor


@asynccontextmanager
async def _acursor_on(conn_string: str) -> AsyncIterator[Any]:
    async with (
        await psycopg.AsyncConnection.connect(
            conn_string, autocommit=True, row_factory=dict_row
        ) as conn,
        conn.cursor() as cursor,
    ):
        yield cursor


class PostgresStore:
    """Stands where `langgraph.store.postgres.PostgresStore` stood."""

    from_conn_string = staticmethod(partial(_on_postgres, ChronoStore))


class AsyncPostgresStore:
    """Stands where `AsyncPostgresStore` stood."""

    from_conn_string = staticmethod(partial(_on_postgres, AsyncChronoStore))


# -- savers --------------------------------------------------------------------


class _AsyncSaver(ChronoCheckpointer):
    async def setup(self) -> None:  # type: ignore[override]
        await self.asetup()


class SqliteSaver:
    """Stands where `langgraph.checkpoint.sqlite.SqliteSaver` stood."""

    @staticmethod
    @contextmanager
    def from_conn_string(conn_string: str) -> Iterator[ChronoCheckpointer]:
        with _open(ChronoStore, conn_string) as store:
            yield ChronoCheckpointer(store)


class AsyncSqliteSaver:
    """Stands where `AsyncSqliteSaver` stood."""

    @staticmethod
    @asynccontextmanager
    async def from_conn_string(conn_string: str) -> AsyncIterator[ChronoCheckpointer]:
        async with _open(ChronoStore, conn_string) as store:
            yield _AsyncSaver(store)


def PostgresSaver(conn: Any, pipe: Any = None, serde: Any = None) -> ChronoCheckpointer:
    """Stands where `PostgresSaver(conn_or_pool)` stood.

    The store shares the connection or pool (`from_pool`), except a connection
    in pipeline mode, which chronomem's transactions cannot run in: then it
    opens its own pool on the same database. It closes when `conn` does.
    """
    if pipe is None:
        store = ChronoStore.from_pool(conn)
    else:
        store = ChronoStore.from_conn_string(conn.info.dsn)
    _close_with(conn, store)
    return ChronoCheckpointer(store, serde=serde)


def AsyncPostgresSaver(
    conn: Any, pipe: Any = None, serde: Any = None
) -> ChronoCheckpointer:
    """Stands where `AsyncPostgresSaver(aconn_or_pool)` stood.

    chronomem runs on sync psycopg connections, so the store opens its own pool
    on the database of the async connection (or pool), and closes when it does.
    """
    dsn = conn.conninfo if hasattr(conn, "conninfo") else conn.info.dsn
    store = ChronoStore.from_conn_string(dsn)
    _close_with(conn, store)
    return _AsyncSaver(store, serde=serde)


def _close_with(conn: Any, store: ChronoStore) -> None:
    """Close `store` when `conn` (a psycopg connection or pool) closes, so the
    suite can drop its database right after."""
    close = conn.close
    if asyncio.iscoroutinefunction(close):

        async def aclosing(*args: Any, **kwargs: Any) -> Any:
            store.close()
            return await close(*args, **kwargs)

        conn.close = aclosing
    else:

        def closing(*args: Any, **kwargs: Any) -> Any:
            store.close()
            return close(*args, **kwargs)

        conn.close = closing


# -- binding the names ------------------------------------------------------------

_STAND_INS: dict[str, Any] = {
    "SqliteStore": SqliteStore,
    "AsyncSqliteStore": AsyncSqliteStore,
    "PostgresStore": PostgresStore,
    "AsyncPostgresStore": AsyncPostgresStore,
    "SqliteSaver": SqliteSaver,
    "AsyncSqliteSaver": AsyncSqliteSaver,
    "PostgresSaver": PostgresSaver,
    "AsyncPostgresSaver": AsyncPostgresSaver,
}


def _postgres_uri() -> str:
    """The private server's URI without a database, started on first use."""
    global _server
    if _server is None:
        spec = importlib.util.spec_from_file_location(
            "_chronomem_pg", _TESTS_DIR.parent / "testsupport" / "pg.py"
        )
        assert spec is not None and spec.loader is not None
        pg = importlib.util.module_from_spec(spec)
        spec.loader.exec_module(pg)
        _server = pg.PostgresServer().start()
        # The savers' suites connect to the URI without a database name, which
        # libpq takes as the user's name.
        with psycopg.connect(_server.conninfo(), autocommit=True) as conn:
            conn.execute("CREATE DATABASE chronomem")
    return f"postgresql://chronomem@127.0.0.1:{_server.port}/"


def _bind(module: Any) -> None:
    names = vars(module)
    for name, stand_in in _STAND_INS.items():
        if name in names:
            setattr(module, name, stand_in)
    if "DEFAULT_POSTGRES_URI" in names:
        module.DEFAULT_POSTGRES_URI = _postgres_uri()
    if "DEFAULT_URI" in names:
        module.DEFAULT_URI = _postgres_uri() + "postgres?sslmode=disable"


# -- hooks ---------------------------------------------------------------------


def pytest_configure() -> None:
    global _scratch
    _scratch = Path(tempfile.mkdtemp(prefix="chronomem-lg-suites-"))
    # A SIGTERM (a timeout) still stops the server and removes the scratch.
    signal.signal(signal.SIGTERM, _interrupt)


def _interrupt(signum: int, frame: object) -> None:
    raise KeyboardInterrupt  # pytest still runs pytest_sessionfinish below


def pytest_collection_modifyitems(items: list[pytest.Item]) -> None:
    modules = {id(m): m for m in (getattr(i, "module", None) for i in items) if m}
    conftest = sys.modules.get("tests.conftest")
    if conftest is not None:
        modules[id(conftest)] = conftest
    for module in modules.values():
        _bind(module)


def pytest_runtest_logreport(report: pytest.TestReport) -> None:
    """Keep each test's outcome: failed if any phase failed, else its call's."""
    outcome = _outcomes.setdefault(
        report.nodeid, {"test_id": report.nodeid, "outcome": "passed", "message": ""}
    )
    if outcome["outcome"] == "failed":
        return
    if report.failed:
        crash = getattr(report.longrepr, "reprcrash", None)
        message = (crash.message if crash is not None else str(report.longrepr)).strip()
        outcome["outcome"] = "failed"
        outcome["message"] = message.splitlines()[0][:200] if message else ""
    elif report.skipped:
        outcome["outcome"] = "skipped"


def pytest_sessionfinish() -> None:
    if "CHRONOMEM_SUITES_REPORT" in os.environ:
        with open(os.environ["CHRONOMEM_SUITES_REPORT"], "w") as report:
            for outcome in _outcomes.values():
                report.write(json.dumps(outcome) + "\n")
    if _server is not None:
        _server.stop()
    if _scratch is not None:
        shutil.rmtree(_scratch, ignore_errors=True)
