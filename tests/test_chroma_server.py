"""ChronoStore on PostgreSQL with its vectors on a Chroma server (`chroma run`).

A real private PostgreSQL (testsupport/pg.py) and a real Chroma server of each test's
own (testsupport/chroma_server.py), both on this machine. The store is opened as a
user opens it, with `chroma_url=` (or `$CHRONOMEM_CHROMA_URL`), and keeps the
embedded projection's guarantees: every hit checked against HEAD, exact recall
within a scope, healing from the log, identity by embedder and fields, progress
marks in PostgreSQL with the log. The faults are real too: the server is
stopped, frozen, and started again under a running store.
"""

from __future__ import annotations

import os
import signal
import threading
import time
from collections.abc import Iterator
from typing import Any

import chromadb
import psycopg
import pytest
from chromadb.config import Settings
from langgraph.store.base import IndexConfig, PutOp
from psycopg_pool import ConnectionPool

from benchmarks.concurrency.shared_index import run_round
from langgraph_chronomem import ChronoStore, ConfigError, StorageError
from langgraph_chronomem.engine import CommitMeta, Write
from langgraph_chronomem.search import chroma as search_chroma
from tests.test_exact_search import assert_exact
from tests.test_postgres_store import _tables, _url
from testsupport.chroma_server import ChromaServer, chroma_server  # noqa: F401  (fixture)
from testsupport.hashed import INDEX, embed
from testsupport.pg import PostgresServer, pg_server  # noqa: F401  (fixture)

ALICE = ("memories", "alice")
BOB = ("memories", "bob")


@pytest.fixture
def url(pg_server: PostgresServer) -> str:  # noqa: F811
    """A fresh, empty database, as a URL."""
    return _url(pg_server.create_database())


@pytest.fixture
def store(url: str, chroma_server: ChromaServer) -> Iterator[ChronoStore]:  # noqa: F811
    with ChronoStore.from_conn_string(
        url,
        scope_depth=2,
        index=INDEX,  # type: ignore[arg-type]
        chroma_url=chroma_server.url,
    ) as opened:
        yield opened


def client_of(server: ChromaServer) -> Any:
    """A client of the test's own, to look at the server the store uses."""
    return chromadb.HttpClient(
        host="127.0.0.1",
        port=server.port,
        settings=Settings(anonymized_telemetry=False),
    )


def marks(url: str) -> dict[str, int]:
    """The projections' progress marks, as PostgreSQL holds them."""
    with psycopg.connect(url) as conn:
        return dict(conn.execute("SELECT name, seq FROM projections").fetchall())


def last_seq(url: str) -> int:
    with psycopg.connect(url) as conn:
        return int(conn.execute("SELECT max(seq) FROM commits").fetchone()[0])


# -- configuration ----------------------------------------------------------------


def test_a_chroma_url_keeps_the_vectors_on_the_server_and_the_marks_in_postgres(
    store: ChronoStore,
    url: str,
    chroma_server: ChromaServer,  # noqa: F811
) -> None:
    store.put(ALICE, "home", {"text": "w1 w2"})
    store.put(ALICE, "pet", {"text": "w7"})
    (best, *_) = store.search(ALICE, query="w1 w2")
    assert best.key == "home" and best.score == pytest.approx(1.0, abs=1e-5)
    assert store.resolve(ALICE, "undo the w7 note").candidates  # change vectors
    assert store._search.settle(timeout=60)
    names = {c.name for c in client_of(chroma_server).list_collections()}
    assert {n.rsplit("-", 1)[0] for n in names} == {
        "chronomem-items",
        "chronomem-changes",
    }
    held = marks(url)
    assert names <= set(held), "each collection's mark is in PostgreSQL"
    assert all(held[name] == last_seq(url) for name in names)


def test_the_chroma_url_can_come_from_the_environment(
    url: str,
    chroma_server: ChromaServer,  # noqa: F811
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    """What a langgraph.json deployment sets, with no code change."""
    monkeypatch.setenv("CHRONOMEM_CHROMA_URL", chroma_server.url)
    with ChronoStore.from_conn_string(url, scope_depth=2, index=INDEX) as store:  # type: ignore[arg-type]
        store.put(ALICE, "home", {"text": "w1 w2"})
        assert store.search(ALICE, query="w1 w2")[0].key == "home"
    assert client_of(chroma_server).list_collections()


@pytest.mark.parametrize(
    "bad",
    [
        "127.0.0.1:8000",  # no scheme
        "chroma:8000",
        "grpc://127.0.0.1:8000",
        "http://",
        "http://127.0.0.1:port",
        "http://127.0.0.1:99999",
        "http://127.0.0.1:8000/api/v2",
        "http://127.0.0.1:8000/?tenant=a",
        "http://user:secret@127.0.0.1:8000",
        "",
    ],
)
def test_a_malformed_chroma_url_is_a_config_error_before_connecting(
    url: str, bad: str, monkeypatch: pytest.MonkeyPatch
) -> None:
    with pytest.raises(ConfigError, match=r"chroma_url is a Chroma server's http"):
        ChronoStore.from_conn_string(url, index=INDEX, chroma_url=bad)  # type: ignore[arg-type]
    monkeypatch.setenv("CHRONOMEM_CHROMA_URL", bad)
    if bad:  # an empty variable is no variable
        with pytest.raises(ConfigError, match=r"\$CHRONOMEM_CHROMA_URL: chroma_url"):
            ChronoStore.from_conn_string(url, index=INDEX)  # type: ignore[arg-type]
    assert _tables(url) == [], "nothing was created"


def test_from_path_and_from_pool_take_a_chroma_url(
    url: str,
    chroma_server: ChromaServer,  # noqa: F811
) -> None:
    with ChronoStore.from_path(
        url,
        scope_depth=2,
        index=INDEX,  # type: ignore[arg-type]
        chroma_url=chroma_server.url,
    ) as store:
        store.put(ALICE, "a", {"text": "w1"})
    with (
        ConnectionPool(url, kwargs={"autocommit": True}) as pool,
        ChronoStore.from_pool(
            pool,
            index=INDEX,  # type: ignore[arg-type]
            chroma_url=chroma_server.url,
        ) as store,
    ):
        store.put(BOB, "b", {"text": "w2"})
        assert [i.key for i in store.search(("memories",), query="w1")][:1] == ["a"]
        assert [i.key for i in store.search(("memories",), query="w2")][:1] == ["b"]


def test_two_chromas_are_refused(url: str, tmp_path: Any) -> None:
    with pytest.raises(ConfigError, match="chroma_url and chroma_path"):
        ChronoStore.from_conn_string(
            url, chroma_url="http://127.0.0.1:8000", chroma_path=tmp_path
        )
    with pytest.raises(ConfigError, match="chroma_client and chroma_url"):
        ChronoStore.from_path(
            tmp_path, chroma_client=object(), chroma_url="http://127.0.0.1:8000"
        )
    assert _tables(url) == []


def test_an_explicit_chroma_wins_over_the_environment(
    url: str, tmp_path: Any, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("CHRONOMEM_CHROMA_URL", "not a url")
    with ChronoStore.from_conn_string(
        url,
        index=INDEX,  # type: ignore[arg-type]
        chroma_path=tmp_path,
    ) as store:
        store.put(("notes",), "a", {"text": "w1"})
        assert store.search(("notes",), query="w1")[0].key == "a"


# -- the embedded projection's guarantees, on the server ------------------------------


def test_one_memory_among_hundreds_of_identical_ones_is_found(
    store: ChronoStore,
) -> None:
    """Issue 10's "mmm" case: one shared collection, many near-duplicates."""
    store.put(("test", "M"), "m", {"text": "w1 w2 w3"})
    store.batch([PutOp(("test", f"user{i}"), "n", {"text": "w7"}) for i in range(200)])
    for prefix in [("test",), ("test", "M")]:
        found = store.search(prefix, query="w1 w2 w3", limit=10)
        assert found[0].namespace == ("test", "M")
        assert found[0].score == pytest.approx(1.0, abs=1e-5)
    store.batch([PutOp(ALICE, f"dup{i}", {"text": "w4 w5"}) for i in range(500)])
    store.put(ALICE, "target", {"text": "w9"})
    assert store.search(ALICE, query="w9", limit=1)[0].key == "target"
    assert_exact(store, ALICE, "w4 w5")
    assert_exact(store, (), "w9 w4")


def test_a_stale_vector_on_the_server_never_returns_a_value_not_at_head(
    url: str,
    chroma_server: ChromaServer,  # noqa: F811
) -> None:
    """A half-synced index (here a vector put back by hand for a row no longer
    at HEAD) can cost a search a slot, never return the old value."""
    open_ = dict(scope_depth=2, index=INDEX, chroma_url=chroma_server.url)
    with ChronoStore.from_conn_string(url, **open_) as store:  # type: ignore[arg-type]
        store.put(ALICE, "city", {"text": "w1 w2"})
        assert store.search(ALICE, query="w1 w2")[0].score > 0.999
        store.put(ALICE, "city", {"text": "w8"})
        store.search(ALICE, query="w8")
        items = next(
            c
            for c in client_of(chroma_server).list_collections()
            if c.name.startswith("chronomem-items")
        )
        current = items.get(include=["metadatas"])
        (meta,) = current["metadatas"]
        old_row = meta["row"] - 1  # the first put's row
        items.upsert(
            ids=[f"{old_row}:text"],
            embeddings=embed(["w1 w2"]),
            metadatas=[{**meta, "row": old_row}],
        )
    with ChronoStore.from_conn_string(url, **open_) as store:  # type: ignore[arg-type]
        found = store.search(ALICE, query="w1 w2")
        assert [i.value for i in found] == [{"text": "w8"}]
        assert found[0].score < 0.99, "scored by its HEAD vector"


def test_writes_made_without_a_chroma_are_embedded_when_one_opens(
    url: str,
    chroma_server: ChromaServer,  # noqa: F811
) -> None:
    open_ = dict(scope_depth=2, index=INDEX, chroma_url=chroma_server.url)
    with ChronoStore.from_conn_string(url, **open_) as store:  # type: ignore[arg-type]
        store.put(ALICE, "a", {"text": "w1"})
    with ChronoStore.from_conn_string(url) as plain:  # the `chronomem` command
        plain.put(ALICE, "b", {"text": "w2 w3"})
    with ChronoStore.from_conn_string(url, **open_) as store:  # type: ignore[arg-type]
        assert store.search(ALICE, query="w2 w3")[0].key == "b"
        assert_exact(store, ALICE, "w1 w3")


def test_another_embedder_or_other_fields_get_collections_of_their_own(
    url: str,
    chroma_server: ChromaServer,  # noqa: F811
) -> None:
    """Two stores on one database and one server never mix their vectors."""
    by_text: IndexConfig = INDEX  # type: ignore[assignment]
    by_title: IndexConfig = {**by_text, "fields": ["title"]}  # type: ignore[typeddict-item]
    value = {"text": "w1 w2", "title": "w9"}
    with ChronoStore.from_conn_string(
        url, scope_depth=2, index=by_text, chroma_url=chroma_server.url
    ) as store:
        store.put(ALICE, "note", value)
        assert store.search(ALICE, query="w1 w2")[0].score > 0.999
    with ChronoStore.from_conn_string(
        url, scope_depth=2, index=by_title, chroma_url=chroma_server.url
    ) as store:
        assert store.search(ALICE, query="w9")[0].score > 0.999
        assert store.search(ALICE, query="w1 w2")[0].score < 0.99
    items = [
        c.name
        for c in client_of(chroma_server).list_collections()
        if c.name.startswith("chronomem-items")
    ]
    assert len(items) == 2, "the first store's collection is still there"
    with ChronoStore.from_conn_string(
        url, scope_depth=2, index=by_text, chroma_url=chroma_server.url
    ) as store:
        assert store.search(ALICE, query="w1 w2")[0].score > 0.999


def test_a_server_restarted_on_empty_data_is_refilled_from_the_log(
    store: ChronoStore,
    chroma_server: ChromaServer,  # noqa: F811
) -> None:
    for i in range(40):
        store.put(ALICE if i % 2 else BOB, f"k{i}", {"text": f"w{i % 12} w{i % 5}"})
    assert store.search(ALICE, query="w1 w1")[0].score > 0.9
    chroma_server.stop()
    (chroma_server.root / "data").rename(chroma_server.root / "lost")
    chroma_server.start()
    assert_exact(store, ALICE, "w3 w1")
    assert_exact(store, (), "w4")
    assert store.resolve(BOB, "undo the w2 note").candidates


def test_a_reindex_by_another_worker_does_not_break_this_ones_search(
    url: str,
    chroma_server: ChromaServer,  # noqa: F811
) -> None:
    """`reindex` makes the collections anew: another store's handles to the old
    ones are gone, and its next search opens the new ones."""
    open_ = dict(scope_depth=2, index=INDEX, chroma_url=chroma_server.url)
    with (
        ChronoStore.from_conn_string(url, **open_) as first,  # type: ignore[arg-type]
        ChronoStore.from_conn_string(url, **open_) as second,  # type: ignore[arg-type]
    ):
        first.put(ALICE, "a", {"text": "w1 w2"})
        assert second.search(ALICE, query="w1 w2")[0].key == "a"
        first.reindex()
        second.put(ALICE, "b", {"text": "w5"})
        assert second.search(ALICE, query="w1 w2")[0].key == "a"
        assert second.search(ALICE, query="w5")[0].key == "b"
        assert first.search(ALICE, query="w5")[0].key == "b"
        first.reindex()
        best = second.resolve(ALICE, "undo the w5 note").best
        assert best is not None and best.summary.endswith("b: w5")


# -- faults -------------------------------------------------------------------------


def test_while_the_server_is_down_writes_commit_and_search_says_it_is_degraded(
    store: ChronoStore,
    chroma_server: ChromaServer,  # noqa: F811
) -> None:
    store.put(ALICE, "before", {"text": "w1 w2"})
    assert store.search(ALICE, query="w1 w2")[0].key == "before"
    chroma_server.stop()
    store.put(ALICE, "during", {"text": "w5 w6"})
    store.batch([PutOp(BOB, f"k{i}", {"text": f"w{i}"}) for i in range(5)])
    assert store.get(ALICE, "during").value == {"text": "w5 w6"}
    assert store.head(ALICE) == 2 and store.head(BOB) == 1
    assert {i.key for i in store.search(ALICE)} == {"before", "during"}
    started = time.monotonic()
    with pytest.raises(StorageError, match="searching by meaning is unavailable"):
        store.search(ALICE, query="w5 w6")
    assert time.monotonic() - started < 5, "a refused connection fails at once"
    with pytest.raises(StorageError, match="unavailable"):
        store.resolve(ALICE, "undo the w5 note")  # its dense stage reads Chroma
    chroma_server.start()  # the same application, no reopen
    found = store.search(ALICE, query="w5 w6")
    assert found[0].key == "during" and found[0].score > 0.999
    assert_exact(store, (), "w1 w3")


def test_a_store_opens_and_writes_while_the_server_is_down(
    url: str,
    chroma_server: ChromaServer,  # noqa: F811
) -> None:
    open_ = dict(scope_depth=2, index=INDEX, chroma_url=chroma_server.url)
    with ChronoStore.from_conn_string(url, **open_) as store:  # type: ignore[arg-type]
        store.put(ALICE, "a", {"text": "w1"})
    chroma_server.stop()
    with ChronoStore.from_conn_string(url, **open_) as store:  # type: ignore[arg-type]
        store.put(ALICE, "b", {"text": "w2 w3"})
        with pytest.raises(StorageError, match=chroma_server.url):
            store.search(ALICE, query="w2 w3")
        chroma_server.start()
        assert store.search(ALICE, query="w2 w3")[0].key == "b"


def test_a_frozen_server_fails_a_search_in_bounded_time(
    url: str,
    chroma_server: ChromaServer,  # noqa: F811
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    """A server that accepts connections but never answers (SIGSTOP) must not
    hang a search: Chroma's own client waits forever. (Catching up once it
    answers again is the stopped server's test's; here the timeout is cut to
    a second, which a loaded machine can take for a real answer.)"""
    monkeypatch.setattr(search_chroma, "CHROMA_TIMEOUT", 1.0)
    with ChronoStore.from_conn_string(
        url,
        scope_depth=2,
        index=INDEX,  # type: ignore[arg-type]
        chroma_url=chroma_server.url,
    ) as store:
        store.put(ALICE, "a", {"text": "w1"})
        assert store.search(ALICE, query="w1")[0].key == "a"
        assert store._search.settle(timeout=60)
        pid = chroma_server.pid
        os.kill(pid, signal.SIGSTOP)
        try:
            store.put(ALICE, "b", {"text": "w4"})
            started = time.monotonic()
            with pytest.raises(StorageError, match="unavailable"):
                store.search(ALICE, query="w4")
            # its own call, and at most one of the follower's ahead of it
            assert time.monotonic() - started < 10
            assert store.get(ALICE, "b").value == {"text": "w4"}
        finally:
            os.kill(pid, signal.SIGCONT)


# -- the follower on PostgreSQL: seqs commit out of order ---------------------------


def test_a_lower_seq_that_commits_last_is_not_skipped(store: ChronoStore) -> None:
    """A writer takes seq n and commits after the writer of seq n+1. A catch-up
    that read n+1 and moved its mark past n would never embed n's item; the
    follower must wait for the commit in flight, as the change index does."""
    store.put(BOB, "seed", {"text": "w1"})
    assert store.search(BOB, query="w1")[0].key == "seed"
    holding, release = threading.Event(), threading.Event()

    def slow_writer() -> None:
        with store._engine.transaction(write=True) as tx:
            tx.write([Write(ALICE, "late", {"text": "w9 w10"})], CommitMeta())
            holding.set()  # its seq is taken; it commits when released
            release.wait(timeout=30)

    writer = threading.Thread(target=slow_writer, daemon=True)
    writer.start()
    assert holding.wait(timeout=30)
    store.put(BOB, "early", {"text": "w3"})  # the next seq, committed first
    found: list[Any] = []
    search = threading.Thread(
        target=lambda: found.extend(store.search(BOB, query="w3")), daemon=True
    )
    search.start()
    search.join(timeout=0.5)  # without the wait, it is done by now
    release.set()
    writer.join(timeout=30)
    search.join(timeout=30)
    assert found and found[0].key == "early"
    late = store.search(ALICE, query="w9 w10")
    assert [i.key for i in late] == ["late"], "the lower seq was skipped for good"


def test_an_index_never_made_shows_as_behind(
    url: str,
    chroma_server: ChromaServer,  # noqa: F811
) -> None:
    """A server down since the store first opened: its collections were never
    made, and `stats()` says the index lags every commit, not that it is whole."""
    chroma_server.stop()
    open_ = dict(scope_depth=2, index=INDEX, chroma_url=chroma_server.url)
    with ChronoStore.from_conn_string(url, **open_) as store:  # type: ignore[arg-type]
        store.put(ALICE, "a", {"text": "w1"})
        store.put(BOB, "b", {"text": "w2 w3"})
        behind = {p.name.split("-")[1]: p.behind for p in store.stats().projections}
        assert behind == {"items": 2, "changes": 2}
    chroma_server.start()
    with ChronoStore.from_conn_string(url, **open_) as store:  # type: ignore[arg-type]
        assert store.wait_for_index(timeout=60)
        caught_up = {p.name.split("-")[1]: p.behind for p in store.stats().projections}
        assert caught_up == {"items": 0, "changes": 0, "text": 0}


# -- several processes --------------------------------------------------------------

# The benchmark's round at a small size, one reindex midway; the full run is
# python benchmarks/concurrency/shared_index.py (--reindex K --resets)
WORKERS, STEPS, REINDEX_EVERY = 3, 12, 6


def test_processes_writing_searching_and_reindexing_at_once_find_every_write(
    url: str,
    chroma_server: ChromaServer,  # noqa: F811
) -> None:
    """The deployment for more than one machine: processes of their own on one
    PostgreSQL log and one Chroma server write, update, delete and search by
    meaning at once, and one reindexes midway. Each finds every write of its
    own right after it, and every item at the end; a store opened afterwards
    finds no projection behind, every live item first at a score of 1.0, no
    deleted one, and HEAD holding what the workers wrote."""
    done = run_round(
        url,
        chroma_server.url,
        workers=WORKERS,
        steps=STEPS,
        reindex_every=REINDEX_EVERY,
        timeout=240,
    )
    assert not done.violations, "\n\n".join(
        f"{v.kind} ({v.where}):\n{v.detail}" for v in done.violations
    )
    assert done.reindexes == 1
    assert done.writes >= 2 * WORKERS * STEPS
    assert done.checked >= WORKERS * STEPS  # each step leaves one more item at least
