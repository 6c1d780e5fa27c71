"""What PostgreSQL's ops cost in round trips and rows read (issue 33, item 4).

A real private server (testsupport/pg.py). Round trips are counted by the
benchmarks' `CountingConnection` (each wait for the server's answer), as
`benchmarks/store/store_ops.py --postgres` reports them; rows read by the plan the
server chooses for the store's own statement.
"""

from __future__ import annotations

import re
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import psycopg
import pytest
from langchain_core.runnables import RunnableConfig
from langgraph.checkpoint.base import empty_checkpoint
from langgraph.store.base import PutOp
from psycopg_pool import ConnectionPool

from benchmarks.harness.stores import CountingConnection, Traffic
from langgraph_chronomem import ChronoCheckpointer, ChronoStore
from testsupport.pg import (  # noqa: F401  (fixtures)
    PostgresServer,
    explained_pool,
    pg_database,
    pg_server,
)

SCOPE = ("memories", "alice")


def _memory(i: int) -> PutOp:
    value = {"text": f"memory {i}", "kind": f"k{i % 10}", "n": i}
    return PutOp((*SCOPE, f"topic{i % 3}"), f"m{i}", value)


def _kind_of(i: int, kinds: int) -> PutOp:
    return PutOp((*SCOPE, f"topic{i % 10}"), f"m{i}", {"kind": f"k{i % kinds}"})


@pytest.fixture
def counted(pg_database: str) -> Iterator[tuple[ChronoStore, Traffic]]:  # noqa: F811
    """A store on a pool whose connections count their round trips."""
    traffic = Traffic()
    pool: ConnectionPool[Any] = ConnectionPool(
        pg_database,
        min_size=1,
        max_size=2,
        kwargs={"autocommit": True},
        connection_class=CountingConnection,
        configure=lambda conn: setattr(conn, "traffic", traffic),
        open=True,
    )
    store = ChronoStore.from_pool(pool, scope_depth=2)
    try:
        yield store, traffic
    finally:
        store.close()
        pool.close()


def _round_trips(traffic: Traffic, op: Any) -> int:
    before = traffic.round_trips
    op()
    return traffic.round_trips - before


def test_reads_wait_for_the_server_twice_and_a_put_once(
    counted: tuple[ChronoStore, Traffic],
) -> None:
    """A read's `BEGIN` goes with its statement (PostgresStore's pipeline
    waits twice too); a put is one call sent alone. It was 3 for a read."""
    store, traffic = counted
    store.batch([_memory(i) for i in range(30)])
    for _ in range(6):  # past psycopg's prepare threshold, as a server runs
        store.get((*SCOPE, "topic1"), "m1")
        store.search(SCOPE, filter={"kind": "k1"}, limit=3)
    found: list[Any] = []
    search = _round_trips(
        traffic, lambda: found.extend(store.search(SCOPE, filter={"kind": "k4"}))
    )
    got = _round_trips(traffic, lambda: found.append(store.get(*_memory(7)[:2])))
    put = _round_trips(traffic, lambda: store.put((*SCOPE, "x"), "new", {"n": 1}))
    assert (search, got, put) == (2, 2, 1)
    assert sorted(item.key for item in found[:-1]) == ["m14", "m24", "m4"]
    assert found[-1].value["n"] == 7


def test_a_filtered_search_at_head_reads_the_matching_rows_only(
    pg_server: PostgresServer,  # noqa: F811
) -> None:
    """An equality filter is answered from the index of HEAD values alone,
    also run many times (psycopg prepares a statement at its 6th run, and
    PostgreSQL plans a prepared one generically from its 6th: that plan read
    the prefix's whole range of another index too): the server reads the
    matching rows, not every item under the prefix (it parsed each one's
    JSON: 3x PostgresStore's search at 10k items). The server logs each
    statement's plan (`auto_explain`)."""
    url = pg_server.create_database()
    with ChronoStore.from_conn_string(url, scope_depth=2) as store:
        for start in range(0, 5_000, 1_000):  # a filter selects 1% of them
            store.batch([_kind_of(i, 100) for i in range(start, start + 1_000)])
    with psycopg.connect(url, autocommit=True) as conn:
        conn.execute("ANALYZE items")

    with explained_pool(pg_server, url) as (pool, log):
        store = ChronoStore.from_pool(pool, scope_depth=2)
        try:
            for n in range(14):
                found = store.search(SCOPE, filter={"kind": f"k{n}"}, limit=3)
                assert [item.key for item in found] == [
                    f"m{4900 + n - 100 * j}" for j in range(3)
                ]
        finally:
            store.close()
    plans = log.read().split("Query Text: ")
    searches = [plan for plan in plans if "@>" in plan.split("\n")[0]]
    assert len(searches) == 14
    for plan in searches:  # the table, through that index alone
        used = set(re.findall(r"(?:Scan on|using) (\w+)", plan))
        assert used == {"items", "items_head_values"}, plan


def test_equality_filters_mean_what_they_meant(
    pg_database: str,  # noqa: F811
    tmp_path: Path,
) -> None:
    """The containment the index answers only narrows: the exact test decides,
    so a list holding the operand, a number written 1.0, a true that is not
    1 and a missing field select what they did, and what they select on
    SQLite."""
    values = {
        "list": {"tags": ["a", "b"], "n": 1.0, "deep": {"x": [{"y": 2}]}},
        "scalar": {"tags": "a", "n": 1, "flag": True, "deep": {"x": {"0": {"y": 2}}}},
        "other": {"tags": ["a"], "n": "1", "flag": 1},
    }
    cases = [
        ({"tags": "a"}, ["scalar"]),
        ({"tags": ["a"]}, ["other"]),
        ({"tags": ["a", "b"]}, ["list"]),
        ({"n": 1}, ["list", "scalar"]),
        ({"flag": True}, ["scalar"]),
        ({"deep.x": {"y": 2}}, []),
        ({"flag": None}, ["list"]),
        ({"n": {"$eq": 1}, "tags": {"$ne": "a"}}, ["list"]),
    ]
    stores = [
        ChronoStore.from_conn_string(pg_database, scope_depth=2),
        ChronoStore.from_path(tmp_path, scope_depth=2),
    ]
    try:
        for store in stores:
            for key, value in values.items():
                store.put(SCOPE, key, value)
            store.put(SCOPE, "gone", {"tags": "a"})
            store.delete(SCOPE, "gone")
        for wanted, keys in cases:
            found = [
                sorted(item.key for item in store.search(SCOPE, filter=wanted))
                for store in stores
            ]
            assert found == [keys, keys], wanted
    finally:
        for store in stores:
            store.close()


def test_a_store_written_before_the_index_gets_it_and_finds_its_items(
    pg_database: str,  # noqa: F811
) -> None:
    """Schema steps `0009_head_values_index` and `0010_head_values_in_place`
    on a store written without them: its items are found by the index, which
    a put fills in place (GIN's list of pending entries, which every search
    read whole until a vacuum, stays empty)."""
    store = ChronoStore.from_conn_string(pg_database, scope_depth=2)
    store.batch([_memory(i) for i in range(40)])
    store.close()
    with psycopg.connect(pg_database, autocommit=True) as conn:  # as it was
        conn.execute("DROP INDEX items_head_values")
        conn.execute(
            "DELETE FROM chronomem_migrations WHERE name IN "
            "('0009_head_values_index', '0010_head_values_in_place')"
        )
    store = ChronoStore.from_conn_string(pg_database, scope_depth=2)
    try:
        store.put((*SCOPE, "topic2"), "m5", {"kind": "k6", "n": 5})
        found = store.search(SCOPE, filter={"kind": "k5"})
        assert sorted(item.key for item in found) == ["m15", "m25", "m35"]
        newest = store.search(SCOPE, filter={"kind": "k6"}, limit=1)
        assert [item.key for item in newest] == ["m5"]
        with psycopg.connect(pg_database) as conn:
            assert conn.execute(
                "SELECT reloptions FROM pg_class WHERE relname = 'items_head_values'"
            ).fetchone() == (["fastupdate=off"],)
    finally:
        store.close()


def test_put_writes_keeps_any_bytes_and_the_rule_for_repeated_writes(
    counted: tuple[ChronoStore, Traffic],
) -> None:
    """A task's writes reach the server as one statement sent alone (one
    round trip), every byte of a value kept; a task writing again keeps its
    first writes, and special channels (errors, interrupts) the last."""
    store, traffic = counted
    saver = ChronoCheckpointer(store)
    config: RunnableConfig = {"configurable": {"thread_id": "t", "checkpoint_ns": ""}}
    stored = saver.put(config, empty_checkpoint(), {"source": "loop", "step": 0}, {})
    payload = bytes(range(256)) * 3
    trips = _round_trips(
        traffic,
        lambda: saver.put_writes(stored, [("a", payload), ("b", "text")], "task-1"),
    )
    saver.put_writes(stored, [("a", b"later")], "task-1")
    saver.put_writes(stored, [("__error__", "first")], "task-2")
    saver.put_writes(stored, [("__error__", "last")], "task-2")
    written = saver.get_tuple(stored)
    assert written is not None
    assert trips == 1
    assert written.pending_writes == [
        ("task-1", "a", payload),
        ("task-1", "b", "text"),
        ("task-2", "__error__", "last"),
    ]
