"""The tests of LangGraph's suites that fail on chronomem on purpose, and why.

Keys are `SUITE:TEST_ID` (`SUITE` as in `runner.SUITES`); an id without `[...]`
covers every parametrization of the test, each of which must fail, with a
message that holds `failure`. The runner fails on a test that fails without
being listed here or for another reason, and on a listed test that passes or
no longer exists, so the list cannot outlive its reasons.
"""

from __future__ import annotations

from typing import Literal, NamedTuple

Category = Literal["private", "event-loop", "not-implemented", "disagree"]

CATEGORIES: dict[Category, str] = {
    "private": (
        "reads LangGraph's private tables, connections, cursors or migration lists"
    ),
    "event-loop": "asserts that a sync method refuses to run on the event loop",
    "not-implemented": "asserts that an async method is not implemented",
    "disagree": "LangGraph's own classes disagree; chronomem does what most of them do",
}


class Expected(NamedTuple):
    category: Category
    reason: str
    failure: str  # a part of the failure's message: failing otherwise is a surprise


_MIGRATIONS = Expected(
    "private",
    "reads the class's migration list, `MIGRATIONS`",
    "has no attribute 'MIGRATIONS'",
)
_EVENT_LOOP = Expected(
    "event-loop",
    "calls `put`, `get`, `search`... on the event loop and expects "
    "`asyncio.InvalidStateError`; ChronoStore's sync methods run there too",
    "DID NOT RAISE",
)
_STORE_TABLE = Expected(
    "private",
    "backdates `expires_at` in LangGraph's `store` table through the private "
    "`_cursor()`; chronomem's own tests cover `omit_expired` (tests/test_ttl.py)",
    'relation "store" does not exist',
)
_PENDING_SENDS = Expected(
    "disagree",
    "expects the sends written for a checkpoint older than format 4 to move "
    "to its child, which only the PostgreSQL savers do; SqliteSaver, "
    "AsyncSqliteSaver and InMemorySaver, like ChronoCheckpointer, leave them",
    "assert {} == {",
)
_LOAD_TUPLE = Expected(
    "private",
    "patches the saver's private `_load_checkpoint_tuple`",
    "has no attribute '_load_checkpoint_tuple'",
)

EXPECTED_FAILURES: dict[str, Expected] = {
    # -- langgraph-checkpoint-sqlite ---------------------------------------------
    "sqlite:tests/test_store.py::test_vector_store_initialization": Expected(
        "private",
        "looks for vector tables through the store's `conn`",
        "has no attribute 'conn'",
    ),
    "sqlite:tests/test_store.py::test_nonnull_migrations": _MIGRATIONS,
    "sqlite:tests/test_async_store.py::test_no_running_loop": _EVENT_LOOP,
    "sqlite:tests/test_ttl.py::test_ttl_override_default": Expected(
        "disagree",
        "with a `ttl` that does not set `refresh_on_read`, expects `get` not to "
        "refresh the TTL, as SqliteStore and AsyncSqliteStore do; TTLConfig "
        "documents True as the default, and PostgresStore and AsyncPostgresStore "
        "refresh, as ChronoStore does",
        "key='item2'",
    ),
    "sqlite:tests/test_sqlite.py::TestSqliteSaver::test_informative_async_errors": (
        Expected(
            "not-implemented",
            "expects SqliteSaver's async methods to raise NotImplementedError; "
            "ChronoCheckpointer implements them",
            "DID NOT RAISE",
        )
    ),
    "sqlite:tests/test_sqlite.py::TestSqliteSaver::"
    "test_checkpoint_search_sql_injection_prevention": Expected(
        "disagree",
        "expects `list(filter=...)` to raise ValueError for a metadata key with "
        "quotes, as the SQLite savers do; PostgresSaver, AsyncPostgresSaver and "
        "InMemorySaver match such a key literally (no match), as "
        "ChronoCheckpointer does",
        "DID NOT RAISE",
    ),
    "sqlite:tests/test_sqlite.py::TestSqliteSaver::"
    "test_metadata_filter_keys_with_hyphens_and_digits": Expected(
        "disagree",
        "expects a dotted filter key (`user.access-level`) to reach into nested "
        "metadata, as the SQLite savers do; PostgresSaver, AsyncPostgresSaver and "
        "InMemorySaver take it as one literal key, as ChronoCheckpointer does",
        "assert 0 == 1",
    ),
    # -- langgraph-checkpoint-postgres -------------------------------------------
    "postgres:tests/test_store.py::test_nonnull_migrations": _MIGRATIONS,
    "postgres:tests/test_store.py::test_omit_expired_filters_read_paths": _STORE_TABLE,
    "postgres:tests/test_store.py::test_omit_expired_disabled_preserves_expired_rows": (
        _STORE_TABLE
    ),
    "postgres:tests/test_store.py::"
    "test_omit_expired_refresh_ttl_only_refreshes_live_rows": _STORE_TABLE,
    "postgres:tests/test_store.py::test_omit_expired_search_pagination": _STORE_TABLE,
    "postgres:tests/test_async_store.py::test_no_running_loop": _EVENT_LOOP,
    "postgres:tests/test_async_store.py::test_abatch_uses_single_pool_checkout": (
        Expected(
            "private",
            "counts checkouts of LangGraph's private connection pool",
            "assert 0 == 1",
        )
    ),
    "postgres:tests/test_async_store.py::test_omit_expired_filters_read_paths": (
        _STORE_TABLE
    ),
    "postgres:tests/test_async_store.py::"
    "test_omit_expired_disabled_preserves_expired_rows": _STORE_TABLE,
    "postgres:tests/test_async_store.py::"
    "test_omit_expired_refresh_ttl_only_refreshes_live_rows": _STORE_TABLE,
    "postgres:tests/test_async_store.py::test_omit_expired_search_pagination": (
        _STORE_TABLE
    ),
    "postgres:tests/test_sync.py::test_nonnull_migrations": _MIGRATIONS,
    "postgres:tests/test_sync.py::test_pending_sends_migration": _PENDING_SENDS,
    "postgres:tests/test_sync.py::test_get_checkpoint_no_channel_values": _LOAD_TUPLE,
    "postgres:tests/test_async.py::test_pending_sends_migration": _PENDING_SENDS,
    "postgres:tests/test_async.py::test_get_checkpoint_no_channel_values": _LOAD_TUPLE,
}
