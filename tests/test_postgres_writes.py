"""What a write costs the PostgreSQL server, and that schema step
`0011_lean_writes` leaves every row as the write function before it did
(issue 33, item 4: put).

A real private server (testsupport/pg.py). The function of step 0004 and the lock of
step 0001 are put back from their own migration steps, so "before" is the text
a store ran, not a copy of it.
"""

from __future__ import annotations

import time
from collections.abc import Callable
from datetime import datetime, timezone
from typing import Any

import psycopg
from langgraph.store.base import PutOp

from langgraph_chronomem import ChronoStore, commit_context
from langgraph_chronomem.engine.postgres_sql import MIGRATIONS
from testsupport.pg import (  # noqa: F401  (fixtures)
    PostgresServer,
    explained_pool,
    pg_database,
    pg_server,
)

SCOPE = ("memories", "alice")
OTHER = ("memories", "bob")
WHEN = datetime(2026, 3, 1, 9, 30, tzinfo=timezone.utc)


def _statements(name: str) -> tuple[str, ...]:
    return next(step for step in MIGRATIONS if step.name == name).statements


def _as_before_0011(url: str) -> None:
    """Put back the write function and the scope lock that steps 0004 and
    0001 made, as a store not yet migrated to step 0011 holds them."""
    lock = _statements("0001_postgres_log")[-1]
    assert lock.startswith("CREATE FUNCTION chronomem_lock_scope(")
    with psycopg.connect(url, autocommit=True) as conn:
        conn.execute(_statements("0004_task_writes_once")[0])
        conn.execute(lock.replace("CREATE FUNCTION", "CREATE OR REPLACE FUNCTION", 1))


def _scenario(store: ChronoStore) -> None:
    """Writes of every kind a version is made by: new items and updates, a
    delete and a delete of nothing, one batch over two scopes, TTL and
    indexed fields, a task run again, a proposal and its approval, a
    rejection (an empty commit), an expiry, a revert and a rollback."""
    with commit_context(timestamp=WHEN, author="ana", reason="setup"):
        store.batch(
            [PutOp((*SCOPE, "food"), f"k{i}", {"text": f"likes {i}"}) for i in range(5)]
        )
        store.put((*SCOPE, "food"), "k1", {"text": "likes pears"})
        store.put((*SCOPE, "home"), "city", {"text": "Lisbon"}, index=["text"])
        store.put((*SCOPE, "home"), "brief", {"text": "soon gone"}, ttl=0.0005)
        store.delete((*SCOPE, "food"), "k2")
        store.delete((*SCOPE, "food"), "never")  # no commit
        store.batch(
            [
                PutOp((*OTHER, "food"), "k1", {"text": "bob's"}),
                PutOp((*SCOPE, "food"), "k3", {"text": "likes figs"}),
                PutOp((*SCOPE, "food"), "missing", None),  # changes nothing
                PutOp((*SCOPE, "food"), "k4", None),
            ]
        )
        task = {"thread_id": "t1", "task_id": "task-9"}
        with commit_context(labels=task):
            store.put((*SCOPE, "plan"), "step", {"text": "call mum"})
            store.put((*SCOPE, "plan"), "step", {"text": "call mum"})  # run again
            store.put((*SCOPE, "plan"), "step", {"text": "call dad"})
        with commit_context(review=True):
            store.put((*SCOPE, "food"), "k0", {"text": "proposed"})
        proposed = store.head(SCOPE)
        store.approve(SCOPE, proposed)
        time.sleep(0.05)  # the TTL of 0.03 s has passed
        assert store.sweep_ttl() == 1
        with commit_context(review=True):
            store.put((*SCOPE, "food"), "k0", {"text": "turned down"})
        store.reject(SCOPE, store.head(SCOPE))  # changes nothing: an empty commit
        store.revert(SCOPE, 3)  # the city
        store.rollback(SCOPE, to=3)


def _rows(url: str) -> dict[str, list[tuple[Any, ...]]]:
    """Every row of the log's tables; of `expires_at`, which the server
    computes from its own clock, only whether it is set, and no time of an
    expiry, which is made when the sweep runs."""
    with psycopg.connect(url) as conn:
        return {
            "scopes": conn.execute("SELECT * FROM scopes ORDER BY scope").fetchall(),
            "commits": conn.execute(
                "SELECT seq, scope, version, parent, CASE WHEN op <> 'expire' "
                "THEN created_at END, author, reason, op, target, labels, "
                "first_id, last_id FROM commits ORDER BY seq"
            ).fetchall(),
            "items": conn.execute(
                "SELECT id, scope, version, valid_to, namespace, key, value, "
                "prev_id, created_at, updated_at, ttl_minutes, "
                "expires_at IS NULL, index_fields FROM items ORDER BY id"
            ).fetchall(),
        }


def test_the_lean_write_function_writes_the_rows_the_one_before_wrote(
    pg_server: PostgresServer,  # noqa: F811
) -> None:
    """The same writes, on a store whose write function and scope lock are
    step 0004's and 0001's and on one migrated to step 0011, leave the same
    rows in every table: versions, parents, seqs, ids, which rows a write
    closed, what a task run again and a delete of nothing left out, the
    empty commit of a rejection."""
    before, after = pg_server.create_database(), pg_server.create_database()
    found = []
    for url in (before, after):
        store = ChronoStore.from_conn_string(url, scope_depth=2)
        try:
            if url == before:
                _as_before_0011(url)
            _scenario(store)
        finally:
            store.close()
        found.append(_rows(url))
    assert found[0] == found[1]
    ops = [row[7] for row in found[1]["commits"]]
    assert {"put", "delete", "batch", "propose", "approve", "rollback"} <= set(ops)
    assert {"reject", "revert", "expire"} <= set(ops)


def _plans_of(
    server: PostgresServer,
    url: str,
    work: Callable[[ChronoStore, int], None],
    *,
    runs: int,
) -> str:
    """What the server logged of the plans of every statement `work` ran,
    nested ones included (each statement a write function runs), after
    `runs` rounds of it: a session plans a statement for its values 5
    times, then decides on a plan for any values, which it keeps."""

    with explained_pool(server, url, nested=True) as (pool, plans):
        store = ChronoStore.from_pool(pool, scope_depth=2)
        try:
            for n in range(runs):
                work(store, n)
            plans.mark()
            for n in range(runs, runs + 6):
                work(store, n)
        finally:
            store.close()
    return plans.read()


def test_a_write_reads_the_scopes_head_from_its_index_not_every_commit(
    pg_server: PostgresServer,  # noqa: F811
) -> None:
    """Invariant 4, a write costs its changes: on a store whose commits were
    analyzed while few (a new store loaded in one batch), a put, and a batch
    over two scopes (which takes both scopes' locks first), read HEAD
    through the index of (scope, version), also once the session's plans
    are generic (from the 6th run). Before step 0011, `max(version)` read
    every commit of the table at each write, until autovacuum analyzed it
    again."""
    url = pg_server.create_database()
    with ChronoStore.from_conn_string(url, scope_depth=2) as store:
        store.batch([PutOp((*SCOPE, "food"), f"k{i}", {"n": i}) for i in range(50)])
        store.put((*OTHER, "food"), "k0", {"n": 0})
    with psycopg.connect(url, autocommit=True) as conn:
        conn.execute("ANALYZE")

    def writes(store: ChronoStore, n: int) -> None:
        store.put((*SCOPE, "food"), f"k{n}", {"n": -n})
        store.batch(
            [
                PutOp((*SCOPE, "home"), "city", {"n": n}),
                PutOp((*OTHER, "home"), "city", {"n": n}),
            ]
        )

    plans = _plans_of(pg_server, url, writes, runs=6)
    assert plans.count("chronomem_write(") >= 18  # each commit's plans logged
    assert "Seq Scan on commits" not in plans
    assert "Seq Scan on items" not in plans
    assert "Index Only Scan Backward using commits_scope_version_key" in plans


def test_a_store_written_before_step_0011_gets_it_and_keeps_writing(
    pg_database: str,  # noqa: F811
) -> None:
    """A store written by the code before opens, takes step 0011 and goes on
    from its HEAD: versions stay gap-free and reads see the last writes."""
    store = ChronoStore.from_conn_string(pg_database, scope_depth=2)
    store.batch([PutOp((*SCOPE, "food"), f"k{i}", {"n": i}) for i in range(3)])
    store.close()
    _as_before_0011(pg_database)
    with psycopg.connect(pg_database, autocommit=True) as conn:
        conn.execute("DELETE FROM chronomem_migrations WHERE name = '0011_lean_writes'")
    store = ChronoStore.from_conn_string(pg_database, scope_depth=2)
    try:
        _scenario_tail(store)
    finally:
        store.close()
    with psycopg.connect(pg_database) as conn:
        applied = conn.execute(
            "SELECT count(*) FROM chronomem_migrations WHERE name = '0011_lean_writes'"
        ).fetchone()
        source = conn.execute(
            "SELECT prosrc FROM pg_proc WHERE proname = 'chronomem_write'"
        ).fetchone()
    assert applied == (1,)
    assert source is not None and "ORDER BY c.version DESC LIMIT 1" in source[0]


def _scenario_tail(store: ChronoStore) -> None:
    store.put((*SCOPE, "food"), "k1", {"n": 10})
    store.delete((*SCOPE, "food"), "k2")
    store.batch(
        [PutOp((*SCOPE, "food"), "k3", {"n": 3}), PutOp((*OTHER, "x"), "y", {"n": 1})]
    )
    assert [c.version for c in store.log(SCOPE)] == [4, 3, 2, 1]
    assert store.get((*SCOPE, "food"), "k1").value == {"n": 10}  # type: ignore[union-attr]
    assert store.get((*SCOPE, "food"), "k2") is None
    assert store.head(OTHER) == 1
