"""The SQLite change index keeps only what BM25 reads (schema step
`0010_lean_change_index`): terms and lengths, a scope's number, and each
change's distinct terms to delete it by; texts are rendered from the log."""

from __future__ import annotations

import sqlite3
from pathlib import Path

from langgraph_chronomem.engine import CommitMeta, SqliteEngine, Write, schema
from langgraph_chronomem.engine.base import LogTransaction
from langgraph_chronomem.engine.sqlite import MIGRATIONS, SqliteDialect

ALICE = ("memories", "alice")
BOB = ("memories", "bob")


def _moves(tx: LogTransaction) -> None:
    """Alice moves Boston -> Paris -> Oslo; Bob gets a cat."""
    for scope, key, value in (
        (ALICE, "home", {"city": "Boston"}),
        (ALICE, "home", {"city": "Paris"}),
        (BOB, "pet", {"kind": "cat"}),
        (ALICE, "home", {"city": "Oslo"}),
    ):
        tx.commit([Write(scope, key, value)], CommitMeta())


def _found(engine: SqliteEngine, scope: tuple[str, ...], word: str) -> list[int]:
    with engine.transaction(write=True) as tx:
        tx.index_changes()
        return [row for row, _, _ in tx.search_changes(scope, [word], limit=5)]


def test_a_store_indexed_before_opens_and_finds_its_changes(tmp_path: Path) -> None:
    """A database whose change index the schema before wrote (texts, a scope
    word per term row) is indexed anew in the lean form, and finds the same."""
    path = tmp_path / "log.sqlite3"
    conn = sqlite3.connect(path, isolation_level=None)
    conn.execute("PRAGMA journal_mode=WAL")
    schema.apply(schema.SqliteSchema(conn), [m for m in MIGRATIONS if m.name < "0010"])
    conn.execute("INSERT INTO chronomem_meta VALUES ('scope_depth', '2')")
    conn.execute("BEGIN")
    _moves(LogTransaction(conn.cursor(), SqliteDialect(), 2, omit_expired=False))
    # Alice's move to Paris (row 2) as the index before held it, made up to
    # commit 4: a text and one row per term naming the scope in 25 characters.
    conn.execute(
        "INSERT INTO changes VALUES (2, 'sf7e917d8240ba3269c70ca30', 'paris', "
        "'city: paris', 'city: boston', 'home', 6)"
    )
    conn.execute(
        "INSERT INTO change_terms VALUES "
        "('sf7e917d8240ba3269c70ca30', 'pari', 2, 1, 1, 0, 0)"
    )
    conn.execute("INSERT INTO projections VALUES ('full-text', 4, '[]', 0)")
    conn.execute("INSERT INTO chronomem_meta VALUES ('change_text', '3')")
    conn.execute("COMMIT")
    conn.close()

    engine = SqliteEngine(path)
    try:
        assert _found(engine, ALICE, "Paris") == [2]  # the change that added it
        assert _found(engine, BOB, "Paris") == []
        with engine.transaction(write=False) as tx:
            assert tx.indexed_text(2) is not None
            new, old, _ = tx.indexed_text(2)  # type: ignore[misc]
            assert "Paris" in new and "Boston" in old
        columns = [r[1] for r in engine.conn.execute("PRAGMA table_info(changes)")]
        assert columns == ["rowid", "scope_key", "length", "terms"]
        assert engine.conn.execute(
            "SELECT count(*) FROM change_terms WHERE typeof(scope_key) <> 'integer'"
        ).fetchone() == (0,)
        with engine.transaction(write=True) as tx:  # and it keeps working
            tx.commit([Write(ALICE, "home", {"city": "Paris"})], CommitMeta())
        assert sorted(_found(engine, ALICE, "Paris")) == [2, 5]
    finally:
        engine.close()


def test_a_deleted_change_leaves_no_term_behind(tmp_path: Path) -> None:
    """A reset, a redaction and a reindex delete changes; their term rows go
    with them (by the terms each change keeps, not by an index per row)."""
    engine = SqliteEngine(tmp_path / "log.sqlite3", scope_depth=2)
    try:
        with engine.transaction(write=True) as tx:
            _moves(tx)
        assert _found(engine, ALICE, "Oslo") == [4]
        orphans = (
            "SELECT count(*) FROM change_terms WHERE rowid NOT IN "
            "(SELECT rowid FROM changes)"
        )
        with engine.transaction(write=True) as tx:
            tx.reset(ALICE, to=2)
        assert engine.conn.execute(orphans).fetchone() == (0,)
        assert _found(engine, ALICE, "Oslo") == []
        with engine.transaction(write=True) as tx:
            tx.redact(ALICE, CommitMeta(), contains="Paris")
        assert _found(engine, ALICE, "Paris") == []
        assert engine.conn.execute(orphans).fetchone() == (0,)
        with engine.transaction(write=True) as tx:
            tx.reindex_changes()
        assert engine.conn.execute(orphans).fetchone() == (0,)
        assert _found(engine, BOB, "cat") == [3]
    finally:
        engine.close()


def test_the_change_index_takes_a_third_of_the_bytes_it_took(tmp_path: Path) -> None:
    """Bytes on disk per indexed change, measured with SQLite's `dbstat` over
    the index's tables and indexes: about 1,700 before this schema step (the
    texts, a 25-character scope word in every term row and in an index of
    term rows by change), under 700 now."""
    engine = SqliteEngine(tmp_path / "log.sqlite3", scope_depth=2)
    try:
        count = 600
        with engine.transaction(write=True) as tx:
            for i in range(count):
                value = {
                    "text": f"memory {i % 50} (rev {i}): the user mentioned topic "
                    f"{i % 97} on day {i % 365}",
                    "kind": f"k{i % 100}",
                    "n": i,
                }
                tx.commit([Write(ALICE, f"m{i % 50}", value)], CommitMeta())
        assert _found(engine, ALICE, "topic")
        used = engine.conn.execute(
            "SELECT sum(pgsize) FROM dbstat WHERE name IN ('changes', "
            "'change_terms', 'changes_by_scope', 'change_terms_by_row')"
        ).fetchone()[0]
        assert used / count < 700, used / count
    finally:
        engine.close()
