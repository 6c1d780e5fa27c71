"""Undo's change vectors follow the work, not the size of the store (issue 33).

A store opened without `index=` embeds item changes for the undo search alone.
They follow the log in the background as writes land; an undo that finds them
behind embeds its own scope's changes after what is embedded, never renders the
scope's history again, and `wait_for_index` / `stats` tell the truth about it.
Real SQLite files and PostgreSQL databases, real Chroma; the default model where
a store is opened as users open it, bag-of-words vectors where only the catch-up
is looked at.
"""

from __future__ import annotations

import os
import subprocess
import sys
import threading
import time
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

import pytest
from langchain_core.embeddings import Embeddings
from langgraph.store.base import PutOp, ensure_embeddings

from langgraph_chronomem import ChronoStore, models
from langgraph_chronomem.engine import change_index
from langgraph_chronomem.engine.change_index import FULL_TEXT
from langgraph_chronomem.engine.feed import ProjectionFeed
from langgraph_chronomem.engine.postgres import PostgresEngine
from langgraph_chronomem.engine.protocol import LogEngine
from langgraph_chronomem.engine.rows import scope_key
from langgraph_chronomem.engine.sqlite import SqliteEngine
from langgraph_chronomem.engine.types import CommitMeta, Namespace, Write
from langgraph_chronomem.models import embeddings
from langgraph_chronomem.search.resolve import ResolverConfig
from langgraph_chronomem.search.vectors import CHANGES, VectorIndex
from langgraph_chronomem.store import DATABASE_FILE
from tests.test_projections import ENV, REPO
from tests.test_search import bag_of_words, chroma
from testsupport.chroma_server import ChromaServer, chroma_server  # noqa: F401  (fixture)
from testsupport.pg import pg_database, pg_server  # noqa: F401  (fixtures)

ALICE = ("memories", "alice")
BOB = ("memories", "bob")


def fact(n: int) -> str:
    """A fact of its own words (the toy model sees letters only)."""
    return f"fact {chr(97 + n // 26)}{chr(97 + n % 26)} about alice"


@pytest.fixture(params=["sqlite", "postgres"])
def engine(request: pytest.FixtureRequest, tmp_path: Path) -> Iterator[LogEngine]:
    log: LogEngine
    if request.param == "sqlite":
        log = SqliteEngine(tmp_path / "log.sqlite3", scope_depth=2)
    else:
        log = PostgresEngine(request.getfixturevalue("pg_database"), scope_depth=2)
    yield log
    log.close()


@pytest.fixture
def rendered(monkeypatch: pytest.MonkeyPatch) -> list[int]:
    """Counts the change texts the log renders (every row read for the undo
    search is rendered once), calling the real `change_text` each time."""
    count = [0]
    real = change_index.change_text

    def counting(*args: Any, **kwargs: Any) -> Any:
        count[0] += 1
        return real(*args, **kwargs)

    monkeypatch.setattr(change_index, "change_text", counting)
    return count


def commit(engine: LogEngine, scope: Namespace, keys: range) -> None:
    with engine.transaction(write=True) as tx:
        for n in keys:
            tx.commit([Write(scope, f"k{n}", {"text": fact(n)})], CommitMeta())


def changes_index(engine: LogEngine, path: Path) -> VectorIndex:
    toy = ensure_embeddings(lambda texts: [bag_of_words(t) for t in texts])
    return VectorIndex(engine, chroma(path), toy, "toy")


def behind(engine: LogEngine, name: str) -> int:
    with engine.transaction(write=False) as tx:
        return next(p.behind for p in tx.stats().projections if p.name == name)


def test_an_undo_reads_only_what_its_scope_has_not_embedded(
    engine: LogEngine, tmp_path: Path, rendered: list[int]
) -> None:
    """Behind by more than a short backlog, the catch-up embeds the scope's
    own changes after what is embedded: later undos render nothing of its
    history, and nothing of another scope's."""
    commit(engine, ALICE, range(60))
    commit(engine, BOB, range(60))
    index = changes_index(engine, tmp_path / "chroma")
    rendered[0] = 0
    first = index.ready_for(ALICE)
    assert rendered[0] == 60  # alice's changes, none of bob's
    scopes = {m["scope"] for m in index.changes.get()["metadatas"]}
    assert scopes == {scope_key(ALICE)}
    rendered[0] = 0
    again = index.ready_for(ALICE)
    assert rendered[0] == 0  # the code before rendered alice's 60 changes again
    assert (first, again) == (60, 0)
    commit(engine, ALICE, range(60, 61))
    commit(engine, BOB, range(60, 70))
    assert index.ready_for(ALICE) == 1 and rendered[0] == 1
    top = index.query_changes(ALICE, bag_of_words(fact(60)), n=1)
    assert [hit.version for hit in top] == [61]
    # the follower, reaching those commits, embeds bob's and moves the mark
    index.catch_up()
    assert behind(engine, index.changes.name) == 0
    assert index.changes.count() == 131


def test_a_short_backlog_is_caught_up_whole_and_stats_say_so(
    engine: LogEngine, tmp_path: Path
) -> None:
    commit(engine, ALICE, range(5))
    commit(engine, BOB, range(5))
    index = changes_index(engine, tmp_path / "chroma")
    embedded = index.ready_for(ALICE)
    assert behind(engine, index.changes.name) == 0  # never moved before
    assert index.changes.count() == embedded == 10


def open_default(
    kind: str, tmp_path: Path, request: pytest.FixtureRequest
) -> ChronoStore:
    """A store as an app that is its only process opens one: no `index`, the
    default model, the embedded Chroma, its changes following the writes."""
    follows = ResolverConfig(follow_writes=True)
    if kind == "sqlite":
        return ChronoStore.from_path(
            tmp_path / "store", scope_depth=2, resolver=follows
        )
    url = request.getfixturevalue("pg_database")
    return ChronoStore.from_conn_string(
        url, scope_depth=2, chroma_path=tmp_path / "chroma", resolver=follows
    )


def loads_by_thread(monkeypatch: pytest.MonkeyPatch) -> list[str]:
    """The names of the threads that load the default model, recorded as they do."""
    threads: list[str] = []
    real: Callable[[], Any] = models.default_embeddings

    def loading() -> Any:
        threads.append(threading.current_thread().name)
        return real()

    monkeypatch.setattr(models, "default_embeddings", loading)
    return threads


@pytest.mark.parametrize("kind", ["sqlite", "postgres"])
def test_a_default_store_embeds_changes_as_writes_land(
    kind: str,
    tmp_path: Path,
    request: pytest.FixtureRequest,
    monkeypatch: pytest.MonkeyPatch,
    rendered: list[int],
) -> None:
    """Without `index=`, the change vectors follow the writes in the
    background (the model loaded there, never in a put), `wait_for_index`
    waits for them and the full-text index, and an undo then reads nothing
    of the history."""
    loads = loads_by_thread(monkeypatch)
    with open_default(kind, tmp_path, request) as store:
        for n in range(40):
            store.put(ALICE, f"k{n}", {"text": fact(n)})
        store.put(ALICE, "sister", {"text": "my sister Maya runs a cafe in Lisbon"})
        assert store.wait_for_index(timeout=120)
        projections = {
            p.name.split("-")[1]: p.behind for p in store.stats().projections
        }
        assert projections == {"changes": 0, "text": 0}
        assert loads and all(name.startswith("chronomem-follow") for name in loads)
        rendered[0] = 0
        resolution = store.resolve(ALICE, "undo what I said about my sister's cafe")
        assert resolution.best is not None and resolution.best.commit.version == 41
        assert rendered[0] <= 2  # the code before rendered all 41


def test_a_store_opened_after_another_wrote_catches_up_in_the_background(
    tmp_path: Path, request: pytest.FixtureRequest
) -> None:
    """What another store (another process) wrote and left unembedded is
    caught up by the next store opened on the log, without an undo asking,
    and `wait_for_index` waits for it."""
    (tmp_path / "store").mkdir()
    engine = SqliteEngine(tmp_path / "store" / DATABASE_FILE, scope_depth=2)
    commit(engine, ALICE, range(50))
    commit(engine, BOB, range(50))
    engine.close()
    with open_default("sqlite", tmp_path, request) as store:
        (changes,) = (
            p for p in store.stats().projections if p.name.startswith(CHANGES)
        )
        assert changes.behind == 100  # said so, though never made yet
        assert store.wait_for_index(timeout=120)
        assert all(p.behind == 0 for p in store.stats().projections)


def embedding_niceness(monkeypatch: pytest.MonkeyPatch) -> list[tuple[str, int]]:
    """(thread name, nice value) of every call that embeds with the default
    model, recorded as it embeds, each calling the real model."""
    calls: list[tuple[str, int]] = []
    real: Callable[[], Any] = models.default_embeddings

    class Recording(Embeddings):
        def __init__(self) -> None:
            self.inner = real()

        def embed_documents(self, texts: list[str]) -> list[list[float]]:
            nice = os.getpriority(os.PRIO_PROCESS, threading.get_native_id())
            calls.append((threading.current_thread().name, nice))
            return self.inner.embed_documents(texts)

        def embed_query(self, text: str) -> list[float]:
            return self.embed_documents([text])[0]

    monkeypatch.setattr(models, "default_embeddings", Recording)
    return calls


@pytest.mark.skipif(not sys.platform.startswith("linux"), reason="per-thread nice")
def test_the_follower_embeds_at_a_low_priority_and_puts_keep_theirs(
    tmp_path: Path, request: pytest.FixtureRequest, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The background embedding gives way to the writes on a busy machine:
    its thread (and the model's threads it starts) runs at a nice value of
    10, the caller's threads at their own."""
    calls = embedding_niceness(monkeypatch)
    mine = os.getpriority(os.PRIO_PROCESS, threading.get_native_id())
    with open_default("sqlite", tmp_path, request) as store:
        for n in range(40):
            store.put(ALICE, f"k{n}", {"text": fact(n)})
        assert store.wait_for_index(timeout=120)
        assert os.getpriority(os.PRIO_PROCESS, threading.get_native_id()) == mine
        followed = [nice for name, nice in calls if name.startswith("chronomem-follow")]
        assert followed and set(followed) == {max(mine, 10)}
        calls.clear()
        store.resolve(ALICE, "undo what I said about fact ab")
        assert {nice for _, nice in calls} <= {mine}  # the undo's own, in its thread


@pytest.mark.parametrize("kind", ["sqlite", "postgres"])
def test_a_store_whose_changes_do_not_follow_writes_loads_no_model_until_an_undo(
    kind: str,
    tmp_path: Path,
    request: pytest.FixtureRequest,
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    """`ResolverConfig(follow_writes=False)`: writes, reads and a reopen with
    changes behind load no model and embed nothing; the first undo embeds
    its scope's changes in its own thread and finds the one asked about."""
    loads = loads_by_thread(monkeypatch)
    off = ResolverConfig(follow_writes=False)
    if kind == "sqlite":
        store = ChronoStore.from_path(tmp_path / "store", scope_depth=2, resolver=off)
    else:
        url = request.getfixturevalue("pg_database")
        store = ChronoStore.from_conn_string(
            url, scope_depth=2, chroma_path=tmp_path / "chroma", resolver=off
        )
    with store:
        for n in range(40):
            store.put(ALICE, f"k{n}", {"text": fact(n)})
        store.put(ALICE, "sister", {"text": "my sister Maya runs a cafe in Lisbon"})
        assert store.get(ALICE, "k3") is not None
        time.sleep(0.5)  # a follower poked by the writes would have started
        assert loads == []
        (changes,) = (
            p for p in store.stats().projections if p.name.startswith(CHANGES)
        )
        assert changes.behind == 41  # said so, though nothing embeds them yet
        resolution = store.resolve(ALICE, "undo what I said about my sister's cafe")
        assert resolution.best is not None and resolution.best.commit.version == 41
        assert len(loads) == 1  # by the undo's search, not a follower
        assert not loads[0].startswith("chronomem-follow")


def test_close_does_not_wait_for_the_followers_model_load(
    tmp_path: Path, request: pytest.FixtureRequest, monkeypatch: pytest.MonkeyPatch
) -> None:
    """A store closed while its follower loads the model (seconds on a busy
    machine) returns at once; the load ends on its own, opens nothing, and
    the next open catches the vectors up."""
    loading, release = threading.Event(), threading.Event()
    real: Callable[[], Any] = embeddings.default_embedding_function

    def slow() -> Any:  # the real model, its load held back in the follower
        if threading.current_thread().name.startswith("chronomem-follow"):
            loading.set()
            release.wait(timeout=60)
        return real()

    monkeypatch.setattr(embeddings, "default_embedding_function", slow)
    store = open_default("sqlite", tmp_path, request)
    store.put(ALICE, "sister", {"text": "my sister Maya runs a cafe in Lisbon"})
    assert loading.wait(timeout=60)
    threading.Timer(3.0, release.set).start()  # the code before waited for it
    began = time.monotonic()
    store.close()
    assert time.monotonic() - began < 1.5
    release.set()
    with open_default("sqlite", tmp_path, request) as again:  # Chroma is free
        assert again.wait_for_index(timeout=120)
        assert all(p.behind == 0 for p in again.stats().projections)
        resolution = again.resolve(ALICE, "undo what I said about my sister's cafe")
        assert resolution.best is not None and resolution.best.commit.version == 1


def test_processes_on_one_log_share_one_background_catch_up(
    tmp_path: Path,
    chroma_server: ChromaServer,  # noqa: F811
) -> None:
    """Two processes open a store on a log with a backlog of change vectors
    (another process's writes), sharing a Chroma server: their followers
    embed every change once between them, never the same batch twice (the
    code before had both embed the whole backlog)."""
    root = tmp_path / "store"
    root.mkdir()
    engine = SqliteEngine(root / DATABASE_FILE, scope_depth=2)
    commit(engine, ALICE, range(200))
    commit(engine, BOB, range(200))
    engine.close()
    go = tmp_path / "go"
    children = [
        subprocess.Popen(
            [
                sys.executable,
                "-m",
                "tests._catchup_child",
                str(root),
                chroma_server.url,
                str(go),
            ],
            cwd=REPO,
            env=ENV,
            stdout=subprocess.PIPE,
            stderr=subprocess.PIPE,
            text=True,
        )
        for _ in range(2)
    ]
    for child in children:
        assert child.stdout is not None and child.stdout.readline() == "ready\n"
    go.touch()
    embedded = []
    for child in children:
        out, err = child.communicate(timeout=300)
        assert child.returncode == 0, err[-3000:]
        embedded.append(int(out.split()[-1]))
    assert sum(embedded) == 400, embedded


def test_a_scope_past_sqlites_variable_limit_is_searched_and_undone(
    tmp_path: Path,
) -> None:
    """Chroma reads a read's vectors with one SQL variable per id and SQLite
    allows 32,766: a scope of 33k changes (a user's long history), read whole,
    failed every search by meaning and every undo with 'too many SQL
    variables'. Read a page at a time, both work."""
    count = 33_000
    index = {"embed": lambda texts: [bag_of_words(t, 16) for t in texts], "dims": 16}
    with ChronoStore.from_path(
        tmp_path, scope_depth=2, index={**index, "fields": ["text"]}
    ) as store:
        store.batch(
            [PutOp(ALICE, f"note-{n}", {"text": f"note {n}"}) for n in range(count)]
        )
        store.put(ALICE, "home", {"text": "I moved to Lisbon"})
        hits = store.search(ALICE, query="moved to Lisbon", limit=2)
        assert hits[0].key == "home"
        resolution = store.resolve(ALICE, "undo the update about my move to Lisbon")
        assert resolution.candidates
        assert resolution.candidates[0].commit.version == store.head(ALICE)


def test_the_full_text_index_catches_up_a_step_at_a_time(engine: LogEngine) -> None:
    """The follower indexes the words of a default store's changes as writes
    land, in the write transaction every put and read of the store waits for:
    a step takes at most `limit` commits and the next goes on from there, so
    a backlog of thousands never holds the store for the whole of it."""
    for n in range(70):
        with engine.transaction(write=True) as tx:
            tx.commit([Write(ALICE, f"k{n}", {"text": fact(n)})], CommitMeta())
    steps = []
    while True:
        with engine.transaction(write=True) as tx:
            steps.append(tx.index_changes(limit=32))
            mark = ProjectionFeed(tx).state(FULL_TEXT).seq
        if steps[-1] < 32:
            break
    assert steps == [32, 32, 6]
    with engine.transaction(write=False) as tx:
        assert mark == ProjectionFeed(tx).last_seq()
