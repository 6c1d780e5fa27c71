"""The undo search's word stage on PostgreSQL, on a real server (testsupport/pg.py).

BM25 over item changes is computed by the same SQL on both engines, with each
scope's own statistics, so a request finds on PostgreSQL the changes it finds
on SQLite, in the same order and with the same scores, whatever other scopes
hold. The change index also never skips a commit whose seq is lower than one
it has read but which committed later, and search by meaning never loses an
item whose row id is lower than one it has read but whose seq came later.
"""

from __future__ import annotations

import threading
import time
from collections.abc import Iterator
from concurrent.futures import ThreadPoolExecutor
from datetime import datetime, timedelta, timezone
from pathlib import Path
from typing import Any

import psycopg
import pytest

from langgraph_chronomem import ChronoStore
from langgraph_chronomem.engine.base import LogTransaction
from langgraph_chronomem.engine.postgres import PostgresEngine
from langgraph_chronomem.engine.rows import scope_text
from langgraph_chronomem.engine.sqlite import SqliteEngine
from langgraph_chronomem.engine.types import CommitMeta, Namespace, Write
from langgraph_chronomem.search.index import SearchIndex
from langgraph_chronomem.search.lexical import LexicalHit, bm25
from langgraph_chronomem.search.resolve import ResolverConfig
from langgraph_chronomem.search.times import TimeWindow
from langgraph_chronomem.search.vectors import VectorIndex
from tests.test_search import chroma
from testsupport.hashed import Hashed, hashed
from testsupport.pg import pg_database, pg_server  # noqa: F401  (fixtures)

MAYA = ("memories", "maya")
OSKAR = ("memories", "oskar")
START = datetime(2024, 3, 1, tzinfo=timezone.utc)

# A LangMem-style history: UUID keys, `{"content": ...}`, updates and a delete.
HISTORY: list[tuple[Namespace, str, str | None]] = [
    (MAYA, "6f1c0d2e-1b7a-4c1e-9a51-0d4f3a2b1c01", "User lives in Boston"),
    (MAYA, "6f1c0d2e-1b7a-4c1e-9a51-0d4f3a2b1c02", "User is allergic to peanuts"),
    (MAYA, "6f1c0d2e-1b7a-4c1e-9a51-0d4f3a2b1c03", "User's sister Lena runs a café"),
    (MAYA, "6f1c0d2e-1b7a-4c1e-9a51-0d4f3a2b1c04", "User works as a nurse"),
    (OSKAR, "0b8e4f7a-2c3d-4e5f-8a9b-1c2d3e4f5a01", "User moved to New York City"),
    (MAYA, "6f1c0d2e-1b7a-4c1e-9a51-0d4f3a2b1c01", "User moved to New York City"),
    (MAYA, "6f1c0d2e-1b7a-4c1e-9a51-0d4f3a2b1c05", "User is training for a marathon"),
    (MAYA, "6f1c0d2e-1b7a-4c1e-9a51-0d4f3a2b1c04", "User quit nursing to study law"),
    (MAYA, "6f1c0d2e-1b7a-4c1e-9a51-0d4f3a2b1c02", None),
    (MAYA, "6f1c0d2e-1b7a-4c1e-9a51-0d4f3a2b1c06", "User runs 5 km every morning"),
]


def _write_history(engine: Any, only: Namespace | None = None) -> None:
    """`HISTORY` (`only` one scope's), one commit a day from `START`, then the
    change index."""
    with engine.transaction(write=True) as tx:
        for day, (scope, key, content) in enumerate(HISTORY):
            if only is not None and scope != only:
                continue
            value = None if content is None else {"content": content}
            meta = CommitMeta(author="memory-manager", timestamp=START + timedelta(day))
            tx.commit([Write(scope, key, value)], meta)
        tx.index_changes()


def _search(engine: Any, scope: Namespace, topic: str, **kw: Any) -> list[LexicalHit]:
    with engine.transaction(write=True) as tx:
        tx.index_changes()
        return bm25(tx, scope, topic, n=5, **kw)


@pytest.fixture
def engine(pg_database: str) -> Iterator[PostgresEngine]:  # noqa: F811
    engine = PostgresEngine(pg_database, scope_depth=2, max_connections=8)
    yield engine
    engine.close()


@pytest.fixture
def engines(
    engine: PostgresEngine, tmp_path: Path
) -> Iterator[tuple[PostgresEngine, SqliteEngine]]:
    """The same history on PostgreSQL and on SQLite."""
    sqlite = SqliteEngine(tmp_path / "log.sqlite3", scope_depth=2)
    for each in (engine, sqlite):
        _write_history(each)
    yield engine, sqlite
    sqlite.close()


def _versions(hits: list[LexicalHit]) -> list[int]:
    return [hit.version for hit in hits]


@pytest.mark.parametrize(
    ("topic", "side"),
    [
        ("my move to NYC", "new"),
        ("I'm not allergic to peanuts anymore", "old"),
        ("the thing about my sister's cafe", "new"),  # stems, accents, possessive
        ("I said I'm studying law", "new"),
        ("running every morning", "new"),
        ("Boston", "old"),
        ("nurse", "old"),
    ],
)
def test_words_find_the_changes_sqlite_finds_in_its_order(
    engines: tuple[PostgresEngine, SqliteEngine], topic: str, side: str
) -> None:
    postgres, sqlite = engines
    on_postgres = _search(postgres, MAYA, topic, side=side)
    on_sqlite = _search(sqlite, MAYA, topic, side=side)
    assert on_postgres, "the request names a change: it must be found"
    assert _versions(on_postgres) == _versions(on_sqlite)
    assert [h.score for h in on_postgres] == pytest.approx(
        [h.score for h in on_sqlite], rel=1e-9
    )


def test_another_scopes_changes_never_move_a_scopes_scores(
    engines: tuple[PostgresEngine, SqliteEngine], tmp_path: Path
) -> None:
    """With Oskar's memories in the store or not, Maya's requests score the
    same: a user's ranking is never weighed by another user's memories."""
    postgres, sqlite = engines
    alone = SqliteEngine(tmp_path / "maya.sqlite3", scope_depth=2)
    _write_history(alone, only=MAYA)
    for topic, side in [
        ("moved to new york", "new"),
        ("peanuts boston", "old"),
        ("my sister's café runs", "new"),
    ]:
        shared = [h.score for h in _search(sqlite, MAYA, topic, side=side)]
        assert shared, topic
        assert [h.score for h in _search(alone, MAYA, topic, side=side)] == (
            pytest.approx(shared, rel=1e-9)
        )
        assert [h.score for h in _search(postgres, MAYA, topic, side=side)] == (
            pytest.approx(shared, rel=1e-9)
        )
    alone.close()


def test_side_new_finds_what_a_change_wrote_and_old_what_it_replaced(
    engines: tuple[PostgresEngine, SqliteEngine],
) -> None:
    postgres, _ = engines
    boston_replaced = 5  # maya's v5: Boston -> New York City
    assert _versions(_search(postgres, MAYA, "Boston", side="old")) == [boston_replaced]
    # On the new side, Boston is only what v1 created.
    assert _versions(_search(postgres, MAYA, "Boston", side="new")) == [1]


def test_a_time_window_keeps_only_changes_made_in_it(
    engines: tuple[PostgresEngine, SqliteEngine],
) -> None:
    postgres, _ = engines
    # "runs" matches the café (v3, day 2) and the morning run (v9, day 9).
    assert sorted(_versions(_search(postgres, MAYA, "runs"))) == [3, 9]
    early = TimeWindow(START, START + timedelta(days=5))
    late = TimeWindow(START + timedelta(days=5), START + timedelta(days=30))
    assert _versions(_search(postgres, MAYA, "runs", window=early)) == [3]
    assert _versions(_search(postgres, MAYA, "runs", window=late)) == [9]


def test_another_scopes_changes_are_never_found(
    engines: tuple[PostgresEngine, SqliteEngine],
) -> None:
    postgres, _ = engines
    assert _versions(_search(postgres, OSKAR, "New York City")) == [1]
    assert _search(postgres, OSKAR, "peanuts nurse marathon") == []


def test_undo_in_words_resolves_on_postgres(
    engine: PostgresEngine, tmp_path: Path
) -> None:
    _write_history(engine)
    words_only = ResolverConfig(retrievers=frozenset({"bm25"}), rerank_top=0)
    search = SearchIndex(engine, tmp_path, resolver=words_only)
    with ChronoStore(engine, search) as store:
        resolution = store.resolve(MAYA, "undo my move to New York")
        best = resolution.best
        assert best is not None
        assert best.commit.version == 5
        assert best.target == 4  # the version before the move


def _commit(tx: LogTransaction, scope: Namespace, content: str) -> int:
    [commit] = tx.commit([Write(scope, "home", {"content": content})], CommitMeta())
    return commit.seq


def test_catch_up_never_skips_a_lower_seq_that_commits_last(
    engine: PostgresEngine,
) -> None:
    wrote, release = threading.Event(), threading.Event()
    seqs: dict[str, int] = {}

    def slow_writer() -> None:
        with engine.transaction(write=True) as tx:
            seqs["maya"] = _commit(tx, MAYA, "User moved to Lisbon")
            wrote.set()
            release.wait(10)

    def catch_up_and_search() -> list[LexicalHit]:
        return _search(engine, MAYA, "Lisbon")

    with ThreadPoolExecutor(2) as pool:
        slow = pool.submit(slow_writer)
        assert wrote.wait(10)
        with engine.transaction(write=True) as tx:  # a higher seq, committed first
            seqs["oskar"] = _commit(tx, OSKAR, "User moved to Oslo")
        assert seqs["maya"] < seqs["oskar"]
        search = pool.submit(catch_up_and_search)
        time.sleep(0.5)  # the catch-up has started, seen Oslo's seq and waits
        release.set()
        slow.result()
        assert _versions(search.result()) == [1]
    # Later catch-ups start from its mark, which never passed Lisbon's seq.
    assert _versions(_search(engine, MAYA, "Lisbon")) == [1]
    assert _versions(_search(engine, OSKAR, "Oslo")) == [1]


def test_two_catch_ups_at_once_index_every_change_once(
    engine: PostgresEngine,
) -> None:
    with engine.transaction(write=True) as tx:
        for i in range(50):
            _commit(tx, MAYA, f"User note {i} about gardening")

    def catch_up() -> int:
        with engine.transaction(write=True) as tx:
            return tx.index_changes()

    with ThreadPoolExecutor(2) as pool:
        list(pool.map(lambda _: catch_up(), range(2)))
    with engine.transaction(write=False) as tx:
        rows = tx.cur.execute("SELECT count(*) FROM changes").fetchone()[0]
    assert rows == 50
    assert len(_search(engine, MAYA, "gardening")) == 5


def test_a_planted_memory_is_found_by_where_it_came_from_on_postgres(
    engine: PostgresEngine, tmp_path: Path
) -> None:
    """The planted-memory order reads each pick's text from the change index,
    which PostgreSQL keeps as SQLite does."""
    _write_history(engine)
    planted = (
        "User facts and preferences: Karin Elsa Vilgot Sixten Orust Kungsbacka "
        "back cholesterol van apprentice Ahmed Birgitta Barcelona Valencia home all"
    )
    with engine.transaction(write=True) as tx:
        tx.commit(
            [
                Write(OSKAR, "kiosk", {"content": "User has kiosk duty at the arena"}),
                Write(OSKAR, "profile", {"content": planted}),
            ],
            CommitMeta(author="memory-manager"),
        )
    with ChronoStore(engine, SearchIndex(engine, tmp_path)) as store:
        resolution = store.resolve(
            OSKAR, "the keyword junk from the handball page I pasted, bin it"
        )
        assert resolution.best is not None
        assert resolution.best.changes[0].key == "profile"
        assert resolution.decided


def _found(vectors: VectorIndex, scope: Namespace, text: str) -> list[str]:
    hits = vectors.nearest_items(scope, hashed(text))
    return [hit.key for chunk in hits for hit in chunk]


def test_an_item_row_whose_commit_takes_its_seq_last_is_still_searched(
    engine: PostgresEngine,
    pg_database: str,  # noqa: F811
    tmp_path: Path,
) -> None:
    """Writers to two scopes run at once: Maya's write takes its row id first
    and its commit seq last. A search that catches up to Oskar's seq while
    Maya's is in flight keeps a copy of the item vectors; Maya's vector, added
    by the next catch-up with a row id below one the copy holds, must still
    be searched."""
    with psycopg.connect(pg_database, autocommit=True) as gate:
        # Maya's write stops after its row, before its seq, until the gate opens.
        gate.execute(
            f"""CREATE FUNCTION gate() RETURNS trigger LANGUAGE plpgsql AS $$
            BEGIN
                IF NEW.scope = '{scope_text(MAYA)}' THEN
                    PERFORM pg_advisory_xact_lock(4242);
                END IF;
                RETURN NULL;
            END $$"""
        )
        gate.execute(
            "CREATE TRIGGER gate AFTER INSERT ON items "
            "FOR EACH ROW EXECUTE FUNCTION gate()"
        )
        gate.execute("SELECT pg_advisory_lock(4242)")
        vectors = VectorIndex(
            engine, chroma(tmp_path / "c"), Hashed(), "hashed", item_fields=["content"]
        )

        def maya_writes() -> int:
            with engine.transaction(write=True) as tx:
                return _commit(tx, MAYA, "w1 w2")

        def open_the_gate() -> None:
            gate.execute("SELECT pg_advisory_unlock(4242)")

        with ThreadPoolExecutor(1) as pool:
            maya = pool.submit(maya_writes)
            deadline = time.monotonic() + 10
            while not gate.execute(
                "SELECT count(*) FROM pg_locks WHERE locktype = 'advisory' "
                "AND objid = 4242 AND NOT granted"
            ).fetchone()[0]:  # type: ignore[index]
                assert time.monotonic() < deadline, "Maya's write never came"
                time.sleep(0.01)
            with engine.transaction(write=True) as tx:
                oskar = _commit(tx, OSKAR, "w3 w4")  # a higher row, a lower seq
            threading.Timer(0.5, open_the_gate).start()
            vectors.catch_up(upto=oskar)  # waits for Maya's write to end
            assert maya.result() > oskar
        assert _found(vectors, OSKAR, "w3 w4") == ["home"]  # keeps a copy
        vectors.catch_up()
        assert _found(vectors, MAYA, "w1 w2") == ["home"]


def test_a_reindex_of_the_change_index_while_others_catch_up_never_deadlocks(
    engine: PostgresEngine,
) -> None:
    """`reindex` makes the change index again from seq 0 while other workers'
    catch-ups add the newest commits and a reset deletes some: each waits for
    the others, none fails."""
    with engine.transaction(write=True) as tx:
        for i in range(200):
            _commit(tx, MAYA if i % 2 else OSKAR, f"User note {i} about gardening")
        tx.index_changes()
    stop = threading.Event()

    def write_and_catch_up() -> int:
        rounds = 0
        while not stop.is_set():
            with engine.transaction(write=True) as tx:
                _commit(tx, MAYA, f"User note {rounds} about cycling")
            with engine.transaction(write=True) as tx:
                tx.index_changes(batch=20)
            rounds += 1
        return rounds

    def write_and_reset() -> int:  # deletes change rows of what it resets
        rounds = 0
        while not stop.is_set():
            with engine.transaction(write=True) as tx:
                _commit(tx, OSKAR, f"User note {rounds} about chess")
            with engine.transaction(write=True) as tx:
                tx.index_changes()
            with engine.transaction(write=False) as tx:
                head = tx.head(OSKAR)
            with engine.transaction(write=True) as tx:  # as ChronoStore.reset
                tx.reset(OSKAR, head - 1)
            rounds += 1
        return rounds

    def reindex() -> None:
        for _ in range(15):
            with engine.transaction(write=True) as tx:
                tx.reindex_changes()

    with ThreadPoolExecutor(4) as pool:
        writers = [pool.submit(write_and_catch_up) for _ in range(2)]
        writers.append(pool.submit(write_and_reset))
        try:
            pool.submit(reindex).result(timeout=300)
        finally:
            stop.set()
        assert all(w.result(timeout=60) > 0 for w in writers)
    with engine.transaction(write=True) as tx:
        tx.index_changes()
        rows, commits = tx.cur.execute(
            "SELECT (SELECT count(*) FROM changes), (SELECT count(*) FROM commits)"
        ).fetchone()
    assert rows == commits
