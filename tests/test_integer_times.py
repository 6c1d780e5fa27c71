"""SQLite keeps the log's times as microseconds since the epoch (schema step
`0011_integer_times`): a store written before, with ISO text, opens with every
time read back exactly as before, and keeps working."""

from __future__ import annotations

import sqlite3
import tempfile
from datetime import datetime, timedelta, timezone
from pathlib import Path

import pytest

from benchmarks.store.commit_bytes import measure
from langgraph_chronomem.engine import CommitMeta, SqliteEngine, Write, schema
from langgraph_chronomem.engine.base import LogTransaction
from langgraph_chronomem.engine.sqlite import MIGRATIONS, SqliteDialect
from langgraph_chronomem.engine.values import encode_micros, encode_time, now_text

ALICE = ("memories", "alice")
BOB = ("memories", "bob")
# Before the epoch, naive (taken as UTC), and in another zone: each must come
# back as the same moment, in UTC.
EARLY = datetime(1969, 12, 31, 23, 59, 59, 500000, tzinfo=timezone.utc)
NAIVE = datetime(2024, 2, 29, 12, 0, 0, 1)
ZONED = datetime(2025, 6, 1, 9, 30, tzinfo=timezone(timedelta(hours=-7)))


class _TextTimes(SqliteDialect):
    """The SQLite dialect as it was before `0011_integer_times`: ISO text."""

    now = staticmethod(now_text)
    encode_time = staticmethod(encode_time)


def _write(tx: LogTransaction) -> None:
    for scope, key, value, at in (
        (ALICE, "home", {"city": "Boston"}, EARLY),
        (ALICE, "home", {"city": "Paris"}, NAIVE),
        (BOB, "pet", {"kind": "cat"}, None),
        (ALICE, "food", {"likes": "ramen"}, ZONED),
        (ALICE, "food", None, None),
        (ALICE, "home", {"city": "Oslo"}, None),
    ):
        tx.commit([Write(scope, key, value)], CommitMeta(timestamp=at))


def _times(tx: LogTransaction) -> list[object]:
    """Every time a reader sees: items, history, commits, time windows."""
    items = tx.get(ALICE, ["home", "food"]) | tx.get(BOB, ["pet"])
    return [
        sorted((k, i.created_at, i.updated_at) for k, i in items.items()),
        [(c.version, c.created_at) for c in tx.log(ALICE) + tx.log(BOB)],
        [
            (v.version, v.committed_at, v.created_at, v.updated_at)
            for v in tx.history(ALICE, "home") + tx.history(ALICE, "food")
        ],
        [c.version for c in tx.log(ALICE, since=NAIVE, until=ZONED)],
        sorted(tx.versions_between(ALICE, EARLY + timedelta(microseconds=1), None)),
        [(i.key, i.updated_at) for i in tx.search(ALICE)],
    ]


def test_a_store_written_with_text_times_reads_the_same_after(tmp_path: Path) -> None:
    path = tmp_path / "log.sqlite3"
    conn = sqlite3.connect(path, isolation_level=None)
    conn.execute("PRAGMA journal_mode=WAL")
    schema.apply(schema.SqliteSchema(conn), [m for m in MIGRATIONS if m.name < "0011"])
    conn.execute("INSERT INTO chronomem_meta VALUES ('scope_depth', '2')")
    conn.execute("BEGIN")
    old = LogTransaction(conn.cursor(), _TextTimes(), 2, omit_expired=False)
    _write(old)
    seen = _times(old)
    conn.execute("COMMIT")
    assert conn.execute("SELECT created_at FROM commits WHERE seq = 1").fetchone() == (
        "1969-12-31T23:59:59.500000+00:00",
    )
    conn.close()
    assert seen[1][-4:] == [(3, ZONED), (2, NAIVE.replace(tzinfo=timezone.utc)),
                            (1, EARLY), (1, seen[1][-1][1])]  # fmt: skip
    assert seen[3] == [3, 2]

    engine = SqliteEngine(path)
    with engine.transaction(write=False) as tx:
        assert repr(_times(tx)) == repr(seen)
    with engine.transaction(write=True) as tx:
        tx.commit([Write(ALICE, "home", {"city": "Rome"})], CommitMeta())
        (home,) = tx.get(ALICE, ["home"]).values()
        assert home.created_at == EARLY and home.value == {"city": "Rome"}
        assert _times(tx)[2][1:] == seen[2]  # the history before is unchanged
    engine.close()
    conn = sqlite3.connect(path)
    assert conn.execute(
        "SELECT typeof(c.created_at), typeof(i.created_at), typeof(i.updated_at) "
        "FROM commits AS c JOIN items AS i ON i.id = c.first_id WHERE c.seq = 1"
    ).fetchone() == ("integer", "integer", "integer")
    assert conn.execute("SELECT created_at FROM commits WHERE seq = 1").fetchone() == (
        encode_micros(EARLY),
    )


def test_a_commit_of_a_small_item_takes_a_fifth_fewer_bytes() -> None:
    """`benchmarks/store/commit_bytes.py --quick` (1k items, 2k commits): 430
    bytes a commit of the log with text times, 344 with microseconds."""
    with tempfile.TemporaryDirectory() as tmp:
        figures = measure(1_000, Path(tmp))
    assert figures["ChronoStore log"] < 360


def test_a_writer_of_text_times_on_a_migrated_store_fails_and_writes_nothing(
    tmp_path: Path,
) -> None:
    """A process of the version before, still running when another upgraded
    the file, would write text times that sort after every number (in every
    search and time window): its write is refused and the log stays whole."""
    path = tmp_path / "log.sqlite3"
    engine = SqliteEngine(path, scope_depth=2)
    with engine.transaction(write=True) as tx:
        tx.commit([Write(ALICE, "home", {"city": "Boston"})], CommitMeta())
    engine.close()
    conn = sqlite3.connect(path, isolation_level=None)
    conn.execute("BEGIN IMMEDIATE")
    old = LogTransaction(conn.cursor(), _TextTimes(), 2, omit_expired=False)
    with pytest.raises(sqlite3.IntegrityError, match="CHECK constraint failed"):
        old.commit([Write(ALICE, "home", {"city": "Paris"})], CommitMeta())
    conn.execute("ROLLBACK")
    conn.close()
    engine = SqliteEngine(path)
    with engine.transaction(write=False) as tx:
        assert [c.version for c in tx.log(ALICE)] == [1]
        assert tx.get(ALICE, ["home"])["home"].value == {"city": "Boston"}
    engine.close()
