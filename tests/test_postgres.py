"""The versioned log on PostgreSQL: a real server (testsupport/pg.py), real psycopg.

The versioning suite (tests/test_versions.py) runs here unchanged on a
`ChronoStore` over `PostgresEngine`; the rest is what a server brings: many
writers on many connections, per-scope locks, reads that never wait, killed
connections, several servers opening one database, and filters that mean on
PostgreSQL what they mean on SQLite.
"""

from __future__ import annotations

import threading
import time
from collections.abc import Iterator
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path
from typing import Any

import psycopg
import pytest
from psycopg_pool import ConnectionPool

from langgraph_chronomem import ChronoStore, ConfigError, StorageError
from langgraph_chronomem.engine.feed import ProjectionFeed
from langgraph_chronomem.engine.postgres import PostgresEngine
from langgraph_chronomem.engine.postgres_sql import MIGRATIONS
from langgraph_chronomem.engine.rows import RebuildRequest
from langgraph_chronomem.engine.types import CommitMeta, Write
from langgraph_chronomem.errors import InvalidFilterError
from langgraph_chronomem.search.index import SearchIndex
from tests.test_versions import (  # noqa: F401  (run here on PostgreSQL)
    test_as_of_async,
    test_as_of_reads_the_past_and_is_read_only,
    test_bad_version_and_scope_arguments_raise_and_change_nothing,
    test_commit_context_nests_and_restores,
    test_commit_describes_its_changes,
    test_commit_time_can_be_set_for_imports,
    test_deleting_a_missing_item_makes_no_version,
    test_diff_between_versions,
    test_every_write_is_a_gap_free_version,
    test_history_lists_every_version_of_an_item,
    test_log_filters,
    test_one_batch_is_one_commit_per_scope,
    test_reset_destroys_later_versions,
    test_reset_is_invisible_to_other_scopes,
    test_revert_reports_a_conflict_and_changes_nothing,
    test_revert_undoes_one_commit_and_keeps_later_ones,
    test_rollback_restores_the_whole_scope_as_a_new_commit,
    test_rollback_to_zero_empties_the_scope,
    test_scope_may_be_given_as_any_namespace_inside_it,
    test_scopes_are_separate_timelines,
    test_version_not_found_is_a_key_error_with_a_readable_message,
)
from testsupport.pg import pg_database, pg_server  # noqa: F401  (fixtures)

ALICE = ("memories", "alice")
BOB = ("memories", "bob")


def _store(engine: PostgresEngine, tmp_path: Path) -> ChronoStore:
    # No `index`: nothing is embedded, so the Chroma directory stays unused.
    return ChronoStore(engine, SearchIndex(engine, tmp_path))


@pytest.fixture
def engine(pg_database: str) -> Iterator[PostgresEngine]:  # noqa: F811
    engine = PostgresEngine(pg_database, scope_depth=2, max_connections=8)
    yield engine
    engine.close()


@pytest.fixture
def store(engine: PostgresEngine, tmp_path: Path) -> Iterator[ChronoStore]:
    with _store(engine, tmp_path) as opened:
        yield opened


@pytest.fixture
def astore(store: ChronoStore) -> ChronoStore:
    return store


def _put(
    engine: PostgresEngine, namespace: tuple[str, ...], key: str, value: Any
) -> int:
    with engine.transaction(write=True) as tx:
        (commit,) = tx.commit([Write(namespace, key, value)], CommitMeta())
    return commit.version


def _backend_pid(tx: Any) -> int:
    return int(tx.cur.execute("SELECT pg_backend_pid()").fetchone()[0])


def _terminate(conninfo: str, pid: int) -> None:
    with psycopg.connect(conninfo, autocommit=True) as admin:
        admin.execute("SELECT pg_terminate_backend(%s)", (pid,))


# -- reads at HEAD --------------------------------------------------------------

ITEMS = {
    "a": {"n": 1, "city": "Paris", "ok": True, "tags": ["x", "y"], "p": {"c": "Rome"}},
    "b": {"n": 2.5, "city": "paris", "ok": False, "tags": ["y"], "p": {"c": "Oslo"}},
    "c": {"n": "1", "city": "Zurich", "ok": 1, "p": {}},
    "d": {"n": None, "city": "Éire", "big": 2**62},
    "e": {"city": "apple"},
}
FILTERS = [
    {"n": 1},
    {"n": {"$gt": 1}},
    {"n": {"$lte": 2.5}},
    {"n": {"$ne": 1}},
    {"n": None},
    {"n": {"$ne": None}},
    {"n": "1"},
    {"ok": True},
    {"ok": 1},
    {"city": {"$gt": "Zurich"}},
    {"city": {"$lt": "a"}},
    {"city": {"$gte": "paris"}},
    {"tags": ["x", "y"]},
    {"p": {"c": "Rome"}},
    {"p.c": {"$ne": "Rome"}},
    {"big": {"$gt": 2**61}},
    {"big": {"$lt": 10**30}},
    {"n": {"$gt": -(10**30)}},
    {"n": {"$gte": 1, "$lt": 3}},
    {"missing": None},
]


def test_filters_match_what_they_match_on_sqlite(
    store: ChronoStore, tmp_path: Path
) -> None:
    """JSON types, null and missing fields, code-point string order, nested
    objects: every filter selects the same items on both engines."""
    with ChronoStore.from_path(tmp_path / "sqlite", scope_depth=2) as sqlite:
        for key, value in ITEMS.items():
            store.put(ALICE, key, value)
            sqlite.put(ALICE, key, value)
        for filter in FILTERS:
            ours = sorted(i.key for i in store.search(ALICE, filter=filter))
            theirs = sorted(i.key for i in sqlite.search(ALICE, filter=filter))
            assert ours == theirs, filter


def test_put_get_delete_and_search_at_head(store: ChronoStore) -> None:
    store.put(ALICE, "city", {"city": "Boston"})
    store.put((*ALICE, "food"), "likes", {"v": "pasta"})
    store.put(ALICE, "city", {"city": "Paris"})
    store.put(BOB, "city", {"city": "Rome"})
    assert store.get(ALICE, "city").value == {"city": "Paris"}
    assert [i.key for i in store.search(ALICE)] == ["city", "likes"]  # newest first
    assert [i.key for i in store.search(ALICE, limit=1, offset=1)] == ["likes"]
    store.delete(ALICE, "city")
    assert store.get(ALICE, "city") is None
    assert [i.value for i in store.search(("memories",))] == [
        {"city": "Rome"},
        {"v": "pasta"},
    ]
    assert store.head(ALICE) == 4 and store.head(BOB) == 1


def test_namespace_prefixes_follow_bytes_not_the_database_collation(
    store: ChronoStore,
) -> None:
    """The test server sorts text with ICU's en-US; a prefix still means the
    namespace and what lies below it, and nothing that only sorts near it."""
    for label in ("b", "b-x", "b@x", "b(x)", "bZ", "B", "b~", "é"):
        store.put((*ALICE, label), "k", {"label": label})
    store.put((*ALICE, "b", "c"), "k", {"label": "b/c"})
    under_b = store.list_namespaces(prefix=(*ALICE, "b"))
    assert sorted(under_b) == [(*ALICE, "b"), (*ALICE, "b", "c")]
    found = {i.value["label"] for i in store.search((*ALICE, "b"))}
    assert found == {"b", "b/c"}


def test_a_bad_filter_raises_a_typed_error_and_writes_nothing(
    store: ChronoStore,
) -> None:
    store.put(ALICE, "a", {"v": 1})
    for bad in (
        {"$or": [{"v": 1}]},
        {"v": {"$regex": "x"}},
        {'a"b': 1},
    ):
        with pytest.raises(InvalidFilterError):
            store.search(ALICE, filter=bad)
    assert store.head(ALICE) == 1


# -- many writers -----------------------------------------------------------------


def test_threads_on_many_connections_write_one_scope_without_gaps(
    engine: PostgresEngine,
) -> None:
    """8 threads on a pool of 8 connections, 40 puts each, to one scope and to
    one shared item: every write lands, as its own version, with no gap."""
    threads, per_thread = 8, 40

    def writer(t: int) -> list[int]:
        versions = []
        for i in range(per_thread):
            versions.append(_put(engine, ALICE, f"t{t}-{i}", {"i": i}))
            versions.append(_put(engine, ALICE, "shared", {"by": t, "i": i}))
        return versions

    with ThreadPoolExecutor(threads) as pool:
        got = [v for vs in pool.map(writer, range(threads)) for v in vs]
    total = threads * per_thread * 2
    assert sorted(got) == list(range(1, total + 1)), "each commit got its own version"
    with engine.transaction(write=False) as tx:
        assert tx.head(ALICE) == total
        log = tx.log(ALICE)
        assert [c.version for c in log] == list(range(total, 0, -1))
        assert [c.parent for c in log] == [*range(total - 1, 0, -1), None]
        keys = {i.key for i in tx.search(ALICE, limit=10_000)}
        assert keys == {"shared"} | {
            f"t{t}-{i}" for t in range(threads) for i in range(per_thread)
        }
        shared = tx.history(ALICE, "shared")
        assert len(shared) == threads * per_thread  # no lost update
        replaced = [c.changes[0].old for c in log if c.changes[0].key == "shared"]
        assert replaced == [h.value for h in shared[1:]] + [None], (
            "each built on the last"
        )


def test_a_writer_locks_its_scope_only_and_readers_never_wait(
    engine: PostgresEngine,
) -> None:
    """While one transaction is writing to alice: bob's writer goes ahead, a
    reader of alice sees the last committed HEAD at once, and alice's next
    writer waits until the first commits, then builds on its version."""
    _put(engine, ALICE, "a", {"v": 0})
    holding, release = threading.Event(), threading.Event()

    def slow_writer() -> None:
        with engine.transaction(write=True) as tx:
            tx.commit([Write(ALICE, "a", {"v": 1})], CommitMeta())
            holding.set()
            release.wait(10)

    with ThreadPoolExecutor(3) as pool:
        slow = pool.submit(slow_writer)
        assert holding.wait(10)
        started = time.monotonic()
        assert pool.submit(_put, engine, BOB, "b", {"v": 1}).result(5) == 1
        with engine.transaction(write=False) as tx:
            assert tx.head(ALICE) == 1
            assert tx.get(ALICE, ["a"])["a"].value == {"v": 0}
        assert time.monotonic() - started < 2, "bob and the reader did not wait"
        queued = pool.submit(_put, engine, ALICE, "a", {"v": 2})
        time.sleep(0.3)
        assert not queued.done(), "alice's second writer waits for the first"
        release.set()
        slow.result(5)
        assert queued.result(5) == 3
    with engine.transaction(write=False) as tx:
        assert [c.version for c in tx.log(ALICE)] == [3, 2, 1]


def test_a_writer_that_waits_too_long_gets_a_storage_error(pg_database: str) -> None:  # noqa: F811
    engine = PostgresEngine(pg_database, scope_depth=2, busy_timeout=0.2)
    try:
        holding, release = threading.Event(), threading.Event()

        def holder() -> None:
            with engine.transaction(write=True) as tx:
                tx.commit([Write(ALICE, "a", {"v": 1})], CommitMeta())
                holding.set()
                release.wait(10)

        thread = threading.Thread(target=holder)
        thread.start()
        assert holding.wait(10)
        with pytest.raises(StorageError, match="nothing was written"):
            _put(engine, ALICE, "b", {"v": 1})
        release.set()
        thread.join()
        with engine.transaction(write=False) as tx:
            assert tx.head(ALICE) == 1 and "b" not in tx.get(ALICE, ["b"])
    finally:
        engine.close()


# -- lost connections ------------------------------------------------------------


def test_a_connection_killed_mid_transaction_commits_nothing(
    engine: PostgresEngine,
    pg_database: str,  # noqa: F811
) -> None:
    _put(engine, ALICE, "a", {"v": 1})
    killed = pytest.raises(StorageError, match="nothing was written")
    with killed, engine.transaction(write=True) as tx:
        both = [Write(ALICE, "a", {"v": 2}), Write(ALICE, "b", {"v": 2})]
        tx.commit(both, CommitMeta())
        _terminate(pg_database, _backend_pid(tx))
        tx.commit([Write(BOB, "c", {"v": 2})], CommitMeta())
    with engine.transaction(write=False) as tx:
        assert tx.head(ALICE) == 1 and tx.head(BOB) == 0
        assert {k: i.value for k, i in tx.get(ALICE, ["a", "b"]).items()} == {
            "a": {"v": 1}
        }
    assert _put(engine, ALICE, "a", {"v": 3}) == 2, "the next write continues gap-free"


def test_a_connection_killed_at_commit_says_the_write_may_have_landed(
    engine: PostgresEngine,
    pg_database: str,  # noqa: F811
) -> None:
    killed = pytest.raises(StorageError, match="may or may not")
    with killed, engine.transaction(write=True) as tx:
        tx.commit([Write(ALICE, "a", {"v": 1})], CommitMeta())
        _terminate(pg_database, _backend_pid(tx))
    with engine.transaction(write=False) as tx:
        assert tx.head(ALICE) == 0  # here it did not: the server rolled it back


def test_idle_pooled_connections_killed_between_calls_are_replaced(
    engine: PostgresEngine,
    pg_database: str,  # noqa: F811
) -> None:
    _put(engine, ALICE, "a", {"v": 1})
    with psycopg.connect(pg_database, autocommit=True) as admin:
        admin.execute(
            "SELECT pg_terminate_backend(pid) FROM pg_stat_activity "
            "WHERE datname = current_database() AND pid <> pg_backend_pid()"
        )
    assert _put(engine, ALICE, "a", {"v": 2}) == 2


# -- opening -------------------------------------------------------------------


def test_servers_opening_a_new_database_at_once_migrate_it_once(
    pg_database: str,  # noqa: F811
) -> None:
    with ThreadPoolExecutor(4) as pool:
        engines = list(
            pool.map(lambda _: PostgresEngine(pg_database, scope_depth=2), range(4))
        )
    try:
        assert {e.scope_depth for e in engines} == {2}
        with psycopg.connect(pg_database) as conn:
            names = conn.execute("SELECT name FROM chronomem_migrations").fetchall()
        assert names == [(m.name,) for m in MIGRATIONS]
    finally:
        for e in engines:
            e.close()
    with pytest.raises(ConfigError, match="scope_depth=2"):
        PostgresEngine(pg_database, scope_depth=1)


def test_rebuild_requests_stored_before_tickets_still_ask(
    pg_database: str,  # noqa: F811
) -> None:
    """Schema step `0007_rebuild_tickets`, as SQLite's `0008`: a request stored
    as a scope's labels becomes one with an empty ticket."""
    PostgresEngine(pg_database, scope_depth=2).close()
    asked = '[["memories", "alice"], ["memories", "alice"], ["memories", "bob"]]'
    step = "0007_rebuild_tickets"
    with psycopg.connect(pg_database) as conn:  # as it was before the step
        conn.execute("DELETE FROM chronomem_migrations WHERE name = %s", (step,))
        conn.execute(
            "INSERT INTO projections (name, seq, rebuild) VALUES "
            "('items', 0, %s), ('changes', 0, '[]')",
            (asked,),
        )
    engine = PostgresEngine(pg_database, scope_depth=2)
    try:
        with engine.transaction(write=False) as tx:
            items, changes = (ProjectionFeed(tx).state(n) for n in ("items", "changes"))
    finally:
        engine.close()
    assert items.requests == (
        RebuildRequest(ALICE, ""),
        RebuildRequest(ALICE, ""),
        RebuildRequest(BOB, ""),
    )
    assert changes.requests == ()


def test_a_connection_or_pool_given_stays_the_callers(pg_database: str) -> None:  # noqa: F811
    with psycopg.connect(pg_database, autocommit=True) as conn:
        engine = PostgresEngine(conn, scope_depth=2)
        assert _put(engine, ALICE, "a", {"v": 1}) == 1
        engine.close()
        assert not conn.closed
        with pytest.raises(StorageError, match="closed"):
            _put(engine, ALICE, "a", {"v": 2})
    with ConnectionPool(pg_database, kwargs={"autocommit": True}, open=True) as pool:
        engine = PostgresEngine(pool)
        assert engine.scope_depth == 2 and _put(engine, ALICE, "a", {"v": 2}) == 2
        engine.close()
        assert not pool.closed
    with (
        psycopg.connect(pg_database) as conn,
        pytest.raises(ConfigError, match="autocommit"),
    ):
        PostgresEngine(conn)
