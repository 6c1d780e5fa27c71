"""The two engines make the same versions: the same writes through a SQLite
store and a PostgreSQL store leave the same rows in every table of the log.

Versions are made in two places, `LogTransaction._write` (Python, SQLite's
and PostgreSQL's proposals) and `chronomem_write` (PL/pgSQL, every other
PostgreSQL commit); this is what keeps them from drifting apart: a column one
writes and the other does not, or writes differently, fails here. A real
private server (testsupport/pg.py).
"""

from __future__ import annotations

import sqlite3
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

import psycopg
from langgraph.store.base import PutOp

from langgraph_chronomem import ChronoStore, commit_context
from langgraph_chronomem.engine.values import decode_time
from langgraph_chronomem.store import DATABASE_FILE
from testsupport.pg import PostgresServer, pg_server  # noqa: F401  (fixture)

SCOPE = ("memories", "alice")
OTHER = ("memories", "bob")

# Every column of the log's tables, in one order for both engines.
_COLUMNS = {
    "scopes": "scope",
    "commits": "seq, scope, version, parent, created_at, author, reason, op, "
    "target, labels, first_id, last_id",
    "items": "id, scope, version, valid_to, namespace, key, value, prev_id, "
    "created_at, updated_at, ttl_minutes, expires_at, index_fields",
    "erased": "id, seq, why",
}
_ORDER = {"scopes": "scope", "commits": "seq", "items": "id", "erased": "id"}
# A write reads the clock for its commit and for `expires_at` this close
# together; a read restarting the TTL clock comes at least `_PAUSE` later.
_SAME_MOMENT, _PAUSE = 0.1, 0.3


def _scenario(store: ChronoStore) -> None:
    """Writes of every kind a version is made by."""
    food, home, plan = (*SCOPE, "food"), (*SCOPE, "home"), (*SCOPE, "plan")
    with commit_context(author="ana", reason="setup"):
        store.batch([PutOp(food, f"k{i}", {"text": f"likes {i}"}) for i in range(4)])
        store.put(food, "k1", {"text": "likes pears"})
        store.put(food, "k1", {"text": "likes pears"})  # the same value again
        store.put(home, "city", {"text": "I live in Lisbon"}, index=["text"])
        store.put(home, "note", {"text": "not searched"}, index=False)
        store.delete(food, "k2")
        store.delete(food, "never")  # nothing to delete: no commit
        store.batch(
            [
                PutOp((*OTHER, "food"), "k1", {"text": "bob's"}),
                PutOp(food, "k3", {"text": "likes figs"}),
                PutOp(food, "missing", None),
                PutOp(food, "k0", None),
            ]
        )
        with commit_context(labels={"thread_id": "t1", "task_id": "task-9"}):
            store.put(plan, "step", {"text": "call mum"})
            store.put(plan, "step", {"text": "call mum"})  # the task run again
            store.put(plan, "step", {"text": "call dad"})
            store.delete(plan, "step")
        with commit_context(review=True):
            store.put(food, "k5", {"text": "proposed"})
        store.approve(SCOPE, store.head(SCOPE))
        with commit_context(review=True):
            store.delete(food, "k1")
        store.reject(SCOPE, store.head(SCOPE))  # changes nothing: an empty commit
        store.put(home, "brief", {"text": "soon gone"}, ttl=0.0005)
        store.put(home, "kept", {"text": "read keeps it"}, ttl=60)
        store.put(home, "idle", {"text": "never read"}, ttl=60)
        time.sleep(_PAUSE)  # the brief TTL of 0.03 s has passed
        assert store.sweep_ttl() == 1
        assert store.get(home, "kept", refresh_ttl=True) is not None
        store.put(home, "city", {"text": "I moved to Paris"})
        moved = store.head(SCOPE)
        store.revert(SCOPE, moved)
        store.rollback(SCOPE, to=moved)
        assert store.undo(SCOPE, f"{moved}.1").applied
        store.put(home, "secret", {"text": "my pin is 4711"})
        store.put(home, "secret", {"text": "no pin here"})
        store.redact(SCOPE, contains="4711")
        store.put((*OTHER, "food"), "k2", {"text": "bob's too"})


def _tables(query: Callable[[str], list[Any]]) -> dict[str, list[tuple[Any, ...]]]:
    """Every row of the log's tables, as the engines agree on them.

    Each engine's clock stamps its commits, so a time is its place among
    the times the database holds (a row that keeps an earlier write's time
    still names that write). `expires_at` is the write's clock plus the
    TTL, or a later read's: only which of the two.
    """
    rows = {
        table: [
            list(row)
            for row in query(f"SELECT {columns} FROM {table} ORDER BY {_ORDER[table]}")
        ]
        for table, columns in _COLUMNS.items()
    }
    made = {
        (scope, version): decode_time(at).timestamp()
        for _, scope, version, _, at, *_ in rows["commits"]
    }
    for row in rows["items"]:
        scope, version, ttl, expires = row[1], row[2], row[10], row[11]
        if expires is not None:
            started = expires - ttl * 60 - made[scope, version]
            row[11] = "at the write" if abs(started) < _SAME_MOMENT else "later"
    times = [(row, 4) for row in rows["commits"]]
    times += [(row, i) for row in rows["items"] for i in (8, 9)]
    stamps = sorted({decode_time(row[i]) for row, i in times if row[i] is not None})
    place = {stamp: n for n, stamp in enumerate(stamps)}
    for row, i in times:
        row[i] = None if row[i] is None else place[decode_time(row[i])]
    return {table: [tuple(row) for row in found] for table, found in rows.items()}


def _sqlite_rows(
    directory: Path, scenario: Callable[[ChronoStore], None]
) -> dict[str, list[tuple[Any, ...]]]:
    with ChronoStore.from_path(directory, scope_depth=2) as store:
        scenario(store)
    conn = sqlite3.connect(directory / DATABASE_FILE)
    try:
        return _tables(lambda sql: conn.execute(sql).fetchall())
    finally:
        conn.close()


def _postgres_rows(
    url: str, scenario: Callable[[ChronoStore], None]
) -> dict[str, list[tuple[Any, ...]]]:
    with ChronoStore.from_conn_string(url, scope_depth=2) as store:
        scenario(store)
    with psycopg.connect(url) as conn:
        return _tables(lambda sql: conn.execute(sql).fetchall())


def test_both_engines_write_the_same_rows_for_the_same_writes(
    tmp_path: Path,
    pg_server: PostgresServer,  # noqa: F811
) -> None:
    """Plain puts and deletes, batches over two scopes, a put of the same
    value, a delete of nothing (no commit), a task run again (no commit), a
    proposal approved and one rejected (an empty commit), a TTL expiry and a
    TTL clock restarted by a read, a revert, a rollback, an undo and a
    redaction (an empty commit): every row of commits, items, scopes and
    erased is the same, every column, ids and seqs included."""
    on_sqlite = _sqlite_rows(tmp_path, _scenario)
    on_postgres = _postgres_rows(pg_server.create_database(), _scenario)
    for table in _COLUMNS:
        assert on_sqlite[table] == on_postgres[table], table
    ops = {row[7] for row in on_sqlite["commits"]}
    assert ops == {
        "batch", "put", "delete", "propose", "approve", "reject", "expire",
        "revert", "rollback", "redact",
    }  # fmt: skip
    expiring = {row[11] for row in on_sqlite["items"] if row[11] is not None}
    assert expiring == {"at the write", "later"}  # a read restarted one clock
    assert on_sqlite["erased"], "the redaction erased a version"


def _task_with_an_empty_thread(store: ChronoStore) -> None:
    """A value written again by labels naming a task but an empty thread."""
    task = {"thread_id": "", "task_id": "task-9"}
    with commit_context(labels=task):
        store.put((*SCOPE, "plan"), "step", {"text": "call mum"})
        store.put((*SCOPE, "plan"), "step", {"text": "call mum"})


def test_a_task_with_an_empty_thread_id_writes_the_same_on_both_engines(
    tmp_path: Path,
    pg_server: PostgresServer,  # noqa: F811
) -> None:
    """The labels {"thread_id": "", "task_id": ...} name no task on either
    engine: the value written again is a second commit on both (PostgreSQL
    took them as a task before schema step 0012)."""
    on_sqlite = _sqlite_rows(tmp_path, _task_with_an_empty_thread)
    on_postgres = _postgres_rows(
        pg_server.create_database(), _task_with_an_empty_thread
    )
    assert on_sqlite["commits"] == on_postgres["commits"]
