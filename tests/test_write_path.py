"""The write path: upgrading a database the earlier schemas wrote, what one put
writes, ids a reset frees never coming back, summaries of big commits, and
waiting for another process's write lock.
"""

from __future__ import annotations

import sqlite3
import threading
import time
from datetime import datetime, timezone
from pathlib import Path

import pytest
from langgraph.store.base import PutOp

from benchmarks.concurrency import multi_writer
from langgraph_chronomem import ChronoStore
from langgraph_chronomem.checkpoint.sql import MIGRATIONS as CHECKPOINT_MIGRATIONS
from langgraph_chronomem.engine import CommitMeta, SqliteEngine, Write, schema
from langgraph_chronomem.engine.feed import ProjectionFeed
from langgraph_chronomem.engine.rows import RebuildRequest
from langgraph_chronomem.engine.sqlite import MIGRATIONS
from langgraph_chronomem.engine.values import encode_micros
from langgraph_chronomem.errors import ConfigError, StorageError
from langgraph_chronomem.store import DATABASE_FILE

ALICE = ("memories", "alice")
BOB = ("memories", "bob")
PETS = ("memories", "alice", "pets")


def _at(n: int) -> str:
    return f"2026-11-30T16:00:0{n}.000000+00:00"


# What langgraph-chronomem wrote before `0003_lean_writes`, row for row: alice
# puts home (v1, v2) and a pet (v3), deletes the pet (v4) and rolls back to v1
# (v5); bob puts food (v1) and a second version that `reset` removed again, so
# the sequences are one past the rows that are left.
OLD_SCOPES = [("memories.alice", 5), ("memories.bob", 1)]
OLD_COMMITS = [
    (1, "memories.alice", 1, None, _at(1), "agent", "moved", "put", None,
     "created memories/alice/home: Boston", "{}"),
    (2, "memories.alice", 2, 1, _at(2), None, None, "put", None,
     "updated memories/alice/home: Boston -> New York City", "{}"),
    (3, "memories.alice", 3, 2, _at(3), None, None, "put", None,
     "created memories/alice/pets/pet: cat", "{}"),
    (4, "memories.bob", 1, None, _at(4), None, None, "put", None,
     "created memories/bob/food: ramen", "{}"),
    (5, "memories.alice", 4, 3, _at(5), None, None, "delete", None,
     "deleted memories/alice/pets/pet (was cat)", "{}"),
    (6, "memories.alice", 5, 4, _at(6), None, None, "rollback", 1,
     "rolled back to v1: updated memories/alice/home: New York City -> Boston", "{}"),
]  # fmt: skip
BOSTON, NYC, CAT = '{"city":"Boston"}', '{"city":"New York City"}', '{"kind":"cat"}'
OLD_ITEMS = [
    (1, "memories.alice", 1, 2, "memories.alice", "home", BOSTON, None,
     _at(1), _at(1), None, None, None),
    (2, "memories.alice", 2, 5, "memories.alice", "home", NYC, 1,
     _at(1), _at(2), None, None, None),
    (3, "memories.alice", 3, 4, "memories.alice.pets", "pet", CAT, None,
     _at(3), _at(3), None, None, None),
    (4, "memories.bob", 1, None, "memories.bob", "food", '{"likes":"ramen"}', None,
     _at(4), _at(4), None, None, None),
    (5, "memories.alice", 4, 4, "memories.alice.pets", "pet", None, 3,
     None, None, None, None, None),
    (6, "memories.alice", 5, None, "memories.alice", "home", BOSTON, 2,
     _at(1), _at(1), None, None, None),
]  # fmt: skip


def old_database(directory: Path) -> Path:
    """A store directory holding a database in the schema before 0003."""
    path = directory / DATABASE_FILE
    conn = sqlite3.connect(path, isolation_level=None)
    conn.execute("PRAGMA journal_mode=WAL")
    assert schema.apply(schema.SqliteSchema(conn), MIGRATIONS[:2]) == [
        "0001_versioned_log",
        "0002_change_index",
    ]
    conn.execute("BEGIN")
    conn.execute("INSERT INTO chronomem_meta VALUES ('scope_depth', '2')")
    conn.executemany("INSERT INTO scopes VALUES (?, ?)", OLD_SCOPES)
    conn.executemany(f"INSERT INTO commits VALUES ({','.join('?' * 11)})", OLD_COMMITS)
    conn.executemany(f"INSERT INTO items VALUES ({','.join('?' * 13)})", OLD_ITEMS)
    conn.execute("UPDATE sqlite_sequence SET seq = 7")  # bob's reset version
    conn.execute("COMMIT")
    conn.close()
    return directory


def test_an_old_database_opens_upgraded_with_all_its_history(tmp_path: Path) -> None:
    with ChronoStore.from_path(old_database(tmp_path)) as store:
        assert store.scope_depth == 2
        assert [store.head(ALICE), store.head(BOB)] == [5, 1]
        home = store.get(ALICE, "home")
        assert home is not None and home.value == {"city": "Boston"}
        assert store.get(PETS, "pet") is None
        log = store.log(ALICE)
        assert [c.version for c in log] == [5, 4, 3, 2, 1]
        # Summaries are now rendered from the changes: the same sentences.
        old = [c[9] for c in OLD_COMMITS if c[1] == "memories.alice"]
        assert [c.summary for c in reversed(log)] == old
        assert [(v.version, v.value) for v in store.history(ALICE, "home")] == [
            (5, {"city": "Boston"}),
            (2, {"city": "New York City"}),
            (1, {"city": "Boston"}),
        ]
        assert store.as_of(ALICE, 3).get(PETS, "pet") is not None
        store.put(ALICE, "home", {"city": "Paris"})
        store.put(BOB, "food", {"likes": "pho"})
        store.rollback(ALICE, to=2)
        home = store.get(ALICE, "home")
        assert home is not None and home.value == {"city": "New York City"}
        assert [store.head(ALICE), store.head(BOB)] == [7, 2]
        # Sequences carry on past bob's reset commit 7 (alice's put took 8).
        assert [c.seq for c in store.log(BOB)] == [9, 4]
    conn = sqlite3.connect(tmp_path / DATABASE_FILE)
    indexes = {r[0] for r in conn.execute("SELECT name FROM sqlite_master")}
    assert "items_key" in indexes
    assert not {"items_head", "items_history"} & indexes
    assert [r[1] for r in conn.execute("PRAGMA table_info(scopes)")] == ["scope"]
    assert max(r[0] for r in conn.execute("SELECT id FROM items")) > 7


def test_a_0003_database_gets_row_ranges_and_keeps_other_indexes(
    tmp_path: Path,
) -> None:
    """The schema before `0004_row_ranges`, with the checkpointer's index on
    `commits`: the rebuild keeps that index, the history and the id counters."""
    old_database(tmp_path)
    path = tmp_path / DATABASE_FILE
    conn = sqlite3.connect(path, isolation_level=None)
    assert schema.apply(schema.SqliteSchema(conn), MIGRATIONS[:3]) == [
        "0003_lean_writes"
    ]
    schema.apply(schema.SqliteSchema(conn), CHECKPOINT_MIGRATIONS)
    conn.close()
    with ChronoStore.from_path(tmp_path) as store:
        assert [c.version for c in store.log(ALICE)] == [5, 4, 3, 2, 1]
        assert store.show(ALICE, 2).changes[0].new == {"city": "New York City"}
        assert [c.changes[0].key for c in store.log(ALICE, limit=2)] == ["home", "pet"]
        assert [(c.key, c.new) for c in store.diff(ALICE, 1, 3)] == [
            ("home", {"city": "New York City"}),
            ("pet", {"kind": "cat"}),
        ]
        store.put(ALICE, "home", {"city": "Oslo"})  # v6, seq 8: past bob's reset 7
        assert store.log(ALICE, limit=1)[0].seq == 8
    conn = sqlite3.connect(path)
    names = {r[0] for r in conn.execute("SELECT name FROM sqlite_master")}
    assert "commits_by_thread" in names and "items_by_version" not in names
    ranges = conn.execute(
        "SELECT version, first_id, last_id FROM commits "
        "WHERE scope = 'memories.alice' ORDER BY version"
    ).fetchall()
    assert ranges == [(1, 1, 1), (2, 2, 2), (3, 3, 3), (4, 5, 5), (5, 6, 6), (6, 8, 8)]
    assert "AUTOINCREMENT" not in "".join(
        r[0] for r in conn.execute("SELECT sql FROM sqlite_master WHERE sql != ''")
    )


def test_rebuild_requests_stored_before_tickets_still_ask(tmp_path: Path) -> None:
    """Schema step `0008_rebuild_tickets`: a request stored as a scope's labels
    becomes one with an empty ticket (a version before it would read a
    ticketed request as a scope named "scope", so it refuses the database)."""
    conn = sqlite3.connect(tmp_path / DATABASE_FILE, isolation_level=None)
    conn.execute("PRAGMA journal_mode=WAL")
    schema.apply(
        schema.SqliteSchema(conn), [m for m in MIGRATIONS if m.name < "0008_rebuild"]
    )
    conn.execute("INSERT INTO chronomem_meta VALUES ('scope_depth', '2')")
    asked = '[["memories", "alice"], ["memories", "alice"], ["memories", "bob"]]'
    conn.executemany(
        "INSERT INTO projections (name, seq, rebuild) VALUES (?, 0, ?)",
        [("items", asked), ("changes", "[]")],
    )
    conn.close()
    with (
        ChronoStore.from_path(tmp_path) as store,
        store._engine.transaction(write=False) as tx,
    ):
        items, changes = (ProjectionFeed(tx).state(n) for n in ("items", "changes"))
    assert items.requests == (
        RebuildRequest(ALICE, ""),
        RebuildRequest(ALICE, ""),
        RebuildRequest(BOB, ""),
    )
    assert items.rebuild == (ALICE, BOB) and items.tickets(ALICE) == ("", "")
    assert changes.requests == ()


def test_ids_a_reset_frees_are_never_given_again(tmp_path: Path) -> None:
    """A vector or a projection mark made from a removed row or commit must not
    vouch for a new one, so a reset of the newest versions leaves a floor."""
    with ChronoStore.from_path(tmp_path, scope_depth=2) as store:
        store.put(ALICE, "a", {"v": 1})
        store.batch([PutOp(ALICE, "b", {"v": 2}), PutOp(ALICE, "c", {"v": 3})])
        store.put(BOB, "a", {"v": 4})
        removed = store.log(ALICE, limit=1)[0].seq
        assert store.reset(ALICE, to=1) == 1
        assert store.reset(BOB, to=0) == 1
        store.put(ALICE, "d", {"v": 5})
        (commit,) = store.log(ALICE, limit=1)
        assert commit.version == 2 and commit.seq == removed + 2
        assert [c.key for c in commit.changes] == ["d"]
        assert store.get(ALICE, "b") is None and store.get(ALICE, "a") is not None
    conn = sqlite3.connect(tmp_path / DATABASE_FILE)
    assert [r[0] for r in conn.execute("SELECT id FROM items ORDER BY id")] == [1, 5]


def test_an_upgrade_is_refused_on_a_read_only_open(tmp_path: Path) -> None:
    old_database(tmp_path)
    with pytest.raises(ConfigError, match="0003_lean_writes"):
        ChronoStore.from_path(tmp_path, read_only=True)
    assert ChronoStore.from_path(tmp_path).head(ALICE) == 5


def _wal_pages(engine: SqliteEngine) -> int:
    wal = Path(f"{engine.path}-wal")
    return (wal.stat().st_size - 32) // (4096 + 24) if wal.exists() else 0


def test_a_put_writes_a_bounded_number_of_pages(tmp_path: Path) -> None:
    """Cost follows the change: updating one item of 5,000 writes about 5 pages
    (the item's old and new row, their index entry, the commit and its
    `(scope, version)` entry); 9-10 before 0003 dropped an index and the HEAD
    row, 7 before 0004 dropped another index and AUTOINCREMENT's counter."""
    engine = SqliteEngine(tmp_path / "log.sqlite3", scope_depth=2)
    meta = CommitMeta()
    for start in range(0, 5000, 1000):
        batch = [
            Write(ALICE, f"k{i}", {"text": f"memory {i}"})
            for i in range(start, start + 1000)
        ]
        with engine.transaction(write=True) as tx:
            tx.commit(batch, meta)
    engine.conn.execute("PRAGMA wal_checkpoint(TRUNCATE)")
    engine.conn.execute("PRAGMA wal_autocheckpoint = 0")
    puts = 100
    for i in range(puts):
        with engine.transaction(write=True) as tx:
            tx.commit([Write(ALICE, f"k{i * 37 % 5000}", {"text": f"new {i}"})], meta)
    assert _wal_pages(engine) / puts <= 6
    engine.close()


def test_a_puts_stamp_is_one_moment_in_the_stored_format(tmp_path: Path) -> None:
    """A put stamps its commit and row with the dialect's `now`, not a
    `datetime`: the same microseconds since the epoch in both (schema step
    `0011_integer_times`), read back as the moment of the put."""
    with ChronoStore.from_path(tmp_path, scope_depth=2) as store:
        before = datetime.now(timezone.utc)
        store.put(ALICE, "a", {"v": 1})
        after = datetime.now(timezone.utc)
        (commit,) = store.log(ALICE)
        item = store.get(ALICE, "a")
        assert item is not None
        assert before <= commit.created_at <= after
        assert item.created_at == item.updated_at == commit.created_at
    conn = sqlite3.connect(tmp_path / DATABASE_FILE)
    stamps = conn.execute(
        "SELECT c.created_at, i.created_at FROM commits AS c, items AS i"
    ).fetchone()
    assert stamps[0] == stamps[1] == encode_micros(commit.created_at)
    assert type(stamps[0]) is int


def test_the_summary_of_a_huge_batch_stays_one_line(tmp_path: Path) -> None:
    with ChronoStore.from_path(tmp_path, scope_depth=2) as store:
        store.batch([PutOp(ALICE, f"k{i}", {"text": "x" * 500}) for i in range(1000)])
        store.batch(
            [PutOp(ALICE, f"k{i}", {"text": "gone"}, ttl=0.0001) for i in range(1000)]
        )
        time.sleep(0.05)
        assert store.sweep_ttl() == 1000
        batch, expired = store.log(ALICE, limit=1001)[-1], store.log(ALICE, limit=1)[0]
        assert len(batch.changes) == 1000 and len(batch.summary) < 400
        assert batch.summary.endswith("and 997 more")
        assert expired.op == "expire" and len(expired.summary) < 400


def _hold_write_lock(path: Path, seconds: float, held: threading.Event) -> None:
    conn = sqlite3.connect(path, isolation_level=None)
    conn.execute("BEGIN IMMEDIATE")
    held.set()
    time.sleep(seconds)
    conn.execute("COMMIT")
    conn.close()


def test_a_writer_waits_for_another_connections_write(tmp_path: Path) -> None:
    engine = SqliteEngine(tmp_path / "log.sqlite3", busy_timeout=10)
    held = threading.Event()
    holder = threading.Thread(target=_hold_write_lock, args=(engine.path, 0.3, held))
    holder.start()
    held.wait()
    started = time.monotonic()
    with engine.transaction(write=True) as tx:
        (commit,) = tx.commit([Write(ALICE, "a", {"t": 1})], CommitMeta())
    waited = time.monotonic() - started
    holder.join()
    assert commit.version == 1
    assert 0.25 <= waited < 5
    engine.close()


def test_a_writer_gives_up_after_busy_timeout_and_writes_nothing(
    tmp_path: Path,
) -> None:
    engine = SqliteEngine(tmp_path / "log.sqlite3", busy_timeout=0.2)
    held = threading.Event()
    holder = threading.Thread(target=_hold_write_lock, args=(engine.path, 1.0, held))
    holder.start()
    held.wait()
    started = time.monotonic()
    with (
        pytest.raises(StorageError, match="busy_timeout"),
        engine.transaction(write=True) as tx,
    ):
        tx.commit([Write(ALICE, "a", {"t": 1})], CommitMeta())
    assert time.monotonic() - started < 0.9
    holder.join()
    with engine.transaction(write=False) as tx:  # reads work after the refusal
        assert tx.head(ALICE) == 0
    engine.close()


def test_the_multi_writer_benchmark_loses_no_write(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """Real writer processes on ChronoStore and SqliteStore, then the check."""
    out = tmp_path / "multi_writer.md"
    argv = ["--writers", "2", "--puts", "20", "--rounds", "1"]
    assert multi_writer.main([*argv, "--dir", str(tmp_path), "--out", str(out)]) == 0
    report = out.read_text()
    assert "| ChronoStore | " in report and "| SqliteStore (WAL) | " in report
    assert "ChronoStore throughput >= 0.9x" in report
    assert "2 processes x 20 puts" in capsys.readouterr().out
