"""Semantic search is exact: the same top-k as comparing every HEAD vector.

Approximate nearest-neighbour indexes drop near-duplicate vectors and let one
user's many similar memories crowd out another's. These tests build the sets that
break them (thousands of identical vectors, many users, items updated and deleted
so stale vectors linger) in a real store with a real Chroma, and compare every
search with a brute-force cosine over the HEAD items under the prefix.
"""

from __future__ import annotations

import random
import threading
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

import chromadb.errors
import numpy as np
import pytest
from langgraph.store.base import PutOp

from langgraph_chronomem import ChronoStore
from langgraph_chronomem.engine.feed import ProjectionFeed
from langgraph_chronomem.engine.rows import scope_key
from langgraph_chronomem.errors import ConfigError
from langgraph_chronomem.search.vectors import VectorIndex
from tests.test_search import chroma
from testsupport.hashed import DIMS, INDEX, WORDS, Hashed, embed, hashed


@pytest.fixture
def store(tmp_path: Path) -> Iterator[ChronoStore]:
    with ChronoStore.from_path(tmp_path / "m", scope_depth=2, index=INDEX) as s:  # type: ignore[arg-type]
        yield s


def brute_force(
    store: ChronoStore, prefix: tuple[str, ...], query: str, k: int
) -> list[tuple[tuple[tuple[str, ...], str], float]]:
    """The top `k` HEAD items under `prefix` by cosine to `query`, one by one."""
    q = np.asarray(hashed(query))
    q /= np.linalg.norm(q)
    scored = []
    for item in store.search(prefix, limit=100_000):
        v = np.asarray(hashed(item.value["text"]))
        scored.append(((item.namespace, item.key), float(v @ q / np.linalg.norm(v))))
    scored.sort(key=lambda pair: -pair[1])
    return scored[:k]


def assert_exact(store: ChronoStore, prefix: tuple[str, ...], query: str) -> None:
    found = store.search(prefix, query=query, limit=10)
    expected = brute_force(store, prefix, query, 10)
    assert [i.score for i in found] == pytest.approx([s for _, s in expected], abs=1e-5)
    # where scores tie the order may differ, never the items above the last score
    last = expected[-1][1] if expected else 0.0
    above = {key for key, score in expected if score > last + 1e-5}
    assert above <= {(i.namespace, i.key) for i in found}


def test_one_memory_among_hundreds_of_identical_ones_is_found(
    store: ChronoStore,
) -> None:
    store.put(("test", "M"), "m", {"text": "w1 w2 w3"})
    for i in range(200):
        store.put(("test", f"user{i}"), "n", {"text": "w7"})
    for prefix in [("test",), ("test", "M")]:
        found = store.search(prefix, query="w1 w2 w3", limit=10)
        assert found[0].namespace == ("test", "M")
        assert found[0].score == pytest.approx(1.0, abs=1e-5)


def test_a_target_among_thousands_of_identical_vectors_in_one_scope(
    store: ChronoStore,
) -> None:
    scope = ("memories", "alice")
    store.batch([PutOp(scope, f"dup{i}", {"text": "w4 w5"}) for i in range(3000)])
    store.put(scope, "target", {"text": "w9"})
    found = store.search(scope, query="w9", limit=3)
    assert found[0].key == "target"
    assert found[0].score == pytest.approx(1.0, abs=1e-5)
    assert_exact(store, scope, "w4 w5")


def test_many_users_updates_and_deletes_search_like_brute_force(
    store: ChronoStore,
) -> None:
    rng = random.Random(7)
    users = [f"u{i}" for i in range(30)]
    for round_ in range(3):  # later rounds update and delete: stale vectors linger
        for user in users:
            ops = []
            for key in range(15):
                gone = round_ and rng.random() < 0.2
                text = " ".join(rng.choices(WORDS, k=rng.randint(1, 3)))
                value = None if gone else {"text": text}
                ops.append(PutOp(("memories", user), f"k{key}", value))
            store.batch(ops)
    queries = [" ".join(rng.choices(WORDS, k=rng.randint(1, 3))) for _ in range(20)]
    for query in queries:
        assert_exact(store, (), query)
        assert_exact(store, ("memories",), query)
        assert_exact(store, ("memories", rng.choice(users)), query)


def test_offset_pages_through_the_exact_order(store: ChronoStore) -> None:
    rng = random.Random(3)
    for i in range(60):
        store.put(("memories", f"u{i % 6}"), f"k{i}", {"text": rng.choice(WORDS)})
    query = "w3 w5"
    whole = [(i.namespace, i.key) for i in store.search((), query=query, limit=60)]
    pages: list[Any] = []
    for offset in range(0, 60, 7):
        pages += store.search((), query=query, limit=7, offset=offset)
    scores = [i.score for i in pages]
    assert scores == sorted(scores, reverse=True)
    assert len({(i.namespace, i.key) for i in pages}) == len(whole) == 60


@pytest.mark.parametrize("distance", ["l2", "inner_product"])
def test_scores_follow_the_distance_type_as_postgres_store_gives_them(
    tmp_path: Path, distance: str
) -> None:
    index = {**INDEX, "distance_type": distance}
    rng = random.Random(5)
    with ChronoStore.from_path(tmp_path, scope_depth=2, index=index) as store:  # type: ignore[arg-type]
        for i in range(40):
            text = " ".join(rng.choices(WORDS, k=rng.randint(1, 4)))
            store.put(("memories", f"u{i % 4}"), f"k{i}", {"text": text})
        query = "w1 w2 w2"
        q = np.asarray(hashed(query))
        expected = []
        for item in store.search((), limit=100):
            v = np.asarray(hashed(item.value["text"]))
            score = -np.linalg.norm(v - q) if distance == "l2" else float(v @ q)
            expected.append(score)
        expected.sort(reverse=True)
        found = store.search((), query=query, limit=10)
        assert [i.score for i in found] == pytest.approx(expected[:10], rel=1e-4)


def test_an_unknown_distance_type_is_a_config_error(tmp_path: Path) -> None:
    with pytest.raises(ConfigError, match="distance_type is one of"):
        ChronoStore.from_path(tmp_path, index={**INDEX, "distance_type": "hamming"})  # type: ignore[arg-type]


def test_text_fields_choose_what_is_embedded_as_in_sqlite_store(tmp_path: Path) -> None:
    index = {"dims": DIMS, "embed": embed, "text_fields": ["title"]}
    with ChronoStore.from_path(tmp_path, scope_depth=2, index=index) as store:  # type: ignore[arg-type]
        store.put(("memories", "a"), "note", {"title": "w3 w4", "text": "w9 w10"})
        found = store.search(("memories",), query="w3 w4", limit=1)
        assert found[0].key == "note"
        assert found[0].score == pytest.approx(1.0, abs=1e-5)
        assert store.search(("memories",), query="w9 w10", limit=1)[0].score < 0.99


def test_searches_and_undo_searches_racing_writes_never_deadlock(
    store: ChronoStore,
) -> None:
    """Readers hold the log's lock while they read the kept vectors; writers
    catch the vectors up while holding the projection's: neither waits on the
    other's lock in the opposite order."""
    scope = ("memories", "alice")
    store.put(scope, "seed", {"text": "w1 w2"})
    failures: list[BaseException] = []

    def run(work: Any) -> None:
        try:
            work()
        except BaseException as exc:  # reported below
            failures.append(exc)

    def write() -> None:
        for i in range(60):
            store.put(
                scope, f"k{i % 7}", {"text": " ".join(WORDS[i % 12 : i % 12 + 2])}
            )

    def search() -> None:
        for _ in range(60):
            store.search(scope, query="w3 w4", limit=5)

    def resolve() -> None:
        for _ in range(20):
            store.resolve(scope, "undo the w5 note")

    threads = [
        threading.Thread(target=run, args=(w,), daemon=True)
        for w in (write, search, resolve)
    ]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join(timeout=120)
    assert not any(t.is_alive() for t in threads), "deadlocked"
    assert not failures, failures
    assert_exact(store, scope, "w3 w4")


def test_a_reset_that_lands_during_a_catch_up_still_rebuilds_its_scope(
    tmp_path: Path,
) -> None:
    """A catch-up saves its mark after applying a batch; a reset that landed
    meanwhile asked for its scope to be rebuilt, and that request must survive
    the save, or the version the reset brought back is never searchable."""
    bob, alice = ("memories", "bob"), ("memories", "alice")
    with ChronoStore.from_path(tmp_path / "m", scope_depth=2) as store:  # no follower
        store.put(bob, "game", {"text": "w1 w2"})  # v1
        store.put(bob, "game", {"text": "w3 w4"})  # v2

        class ResetMidway(Hashed):
            def embed_documents(self, texts: list[str]) -> list[list[float]]:
                if "w9" in texts:  # while the catch-up applies alice's write
                    store.reset(bob, to=1)
                return super().embed_documents(texts)

        vectors = VectorIndex(
            store._engine,
            chroma(tmp_path / "c"),
            ResetMidway(),
            "hashed",
            item_fields=["text"],
        )
        vectors.catch_up()
        store.put(alice, "note", {"text": "w9"})
        vectors.catch_up()
        vectors.catch_up()
        assert not vectors.behind()
        assert vectors.items is not None
        found = vectors.items.get(include=["metadatas"])
        rows = {(m["key"], m["row"]) for m in found["metadatas"]}
        vectors.rebuild()
        rebuilt = vectors.items.get(include=["metadatas"])
        assert rows == {(m["key"], m["row"]) for m in rebuilt["metadatas"]}
        hits = [
            h for chunk in vectors.nearest_items(bob, hashed("w1 w2")) for h in chunk
        ]
        assert [(h.key, h.score) for h in hits[:1]] == [("game", pytest.approx(1.0))]


def test_an_item_vector_that_arrives_after_a_newer_one_is_still_searched(
    tmp_path: Path,
) -> None:
    """A catch-up writes each changed item's HEAD row, which can be newer than
    its batch: a row of the next batch then lands below one already searched."""
    with ChronoStore.from_path(tmp_path / "m", scope_depth=2) as store:  # no follower
        scope = ("memories", "alice")
        store.put(scope, "a", {"text": "w1 w2"})  # seq 1
        store.put(scope, "b", {"text": "w3 w4"})  # seq 2
        store.put(scope, "a", {"text": "w5 w6"})  # seq 3: a's HEAD, a newer row
        vectors = hashed_vectors(store, chroma(tmp_path / "c"))
        vectors.catch_up(upto=1)  # a's HEAD row (seq 3) comes with the first batch
        list(vectors.nearest_items(scope, hashed("w5 w6")))  # a search keeps it
        vectors.catch_up()  # b's older row (seq 2) comes after it
        hits = vectors.nearest_items(scope, hashed("w3 w4"))
        assert {hit.key for chunk in hits for hit in chunk} == {"a", "b"}


def hashed_vectors(store: ChronoStore, client: Any) -> VectorIndex:
    """A vector index of `store`'s items and changes, as another store of
    another process on the same log and Chroma would keep (no follower)."""
    return VectorIndex(store._engine, client, Hashed(), "hashed", item_fields=["text"])


class Pausing:
    """A real Chroma client that calls `after(call, collection name)` right
    after each `upsert`, `count` and `delete_collection`, and right before
    each `delete`, `get` and `get_or_create_collection`, as if another
    process's store ran at that moment (or as a Chroma server fails when it
    does)."""

    def __init__(self, client: Any, after: Callable[[str, str], None]) -> None:
        self.client, self.after = client, after

    def __getattr__(self, name: str) -> Any:
        return getattr(self.client, name)

    def get_collection(self, *args: Any, **kwargs: Any) -> Any:
        return _PausingCollection(self, self.client.get_collection(*args, **kwargs))

    def get_or_create_collection(self, name: str, **kwargs: Any) -> Any:
        self.after("get_or_create_collection", name)
        made = self.client.get_or_create_collection(name, **kwargs)
        return _PausingCollection(self, made)

    def delete_collection(self, name: str) -> None:
        self.client.delete_collection(name)
        self.after("delete_collection", name)


class _PausingCollection:
    def __init__(self, client: Pausing, collection: Any) -> None:
        self.client, self.collection = client, collection

    def __getattr__(self, name: str) -> Any:
        return getattr(self.collection, name)

    def upsert(self, **kwargs: Any) -> None:
        self.collection.upsert(**kwargs)
        self.client.after("upsert", self.collection.name)

    def delete(self, **kwargs: Any) -> None:
        self.client.after("delete", self.collection.name)
        self.collection.delete(**kwargs)

    def count(self) -> int:
        counted = self.collection.count()
        self.client.after("count", self.collection.name)
        return int(counted)

    def get(self, **kwargs: Any) -> Any:
        self.client.after("get", self.collection.name)
        return self.collection.get(**kwargs)


def test_a_catch_up_never_saves_its_mark_over_another_stores_reindex(
    tmp_path: Path,
) -> None:
    """Two stores (as two processes) share a log and a Chroma. One catches up
    its items and, between adding their vectors and saving its mark, the
    other's `reindex` resets the mark and makes the collection anew: that
    save must not stand, or the reindex starts from it and its collection
    lacks every item written before."""
    scope = ("memories", "alice")
    armed, upserted, go = threading.Event(), threading.Event(), threading.Event()
    failures: list[Exception] = []

    def pause(call: str, name: str) -> None:  # the store catching up
        if call == "upsert" and armed.is_set():
            armed.clear()
            upserted.set()
            assert go.wait(60)

    def let_it_save(call: str, name: str) -> None:  # the store reindexing
        if call == "get_or_create_collection" and name == items:  # mark reset
            go.set()
            worker.join(60)

    def catch_up() -> None:
        try:
            catching_up.catch_up()
        except Exception as exc:  # its change collection is gone by then
            failures.append(exc)

    with ChronoStore.from_path(tmp_path / "m", scope_depth=2) as store:  # no follower
        for i in range(12):
            store.put(scope, f"k{i}", {"text": f"{WORDS[i]} w0"})
        client = chroma(tmp_path / "c")
        catching_up, reindexing = (
            hashed_vectors(store, Pausing(client, after))
            for after in (pause, let_it_save)
        )
        assert catching_up.items is not None
        items = catching_up.items.name
        catching_up.catch_up(upto=6)
        armed.set()
        worker = threading.Thread(target=catch_up, daemon=True)
        worker.start()
        assert upserted.wait(60)
        reindexing.rebuild()
        assert not worker.is_alive()
        assert not reindexing.behind()
        for i in range(12):
            hits = reindexing.nearest_items(scope, hashed(f"{WORDS[i]} w0"))
            top = next(iter(hits))[0]
            assert (top.key, top.score) == (f"k{i}", pytest.approx(1.0))


def test_a_scope_another_store_made_again_is_read_again(tmp_path: Path) -> None:
    """Two stores (as two processes) share a log and a Chroma. One resets a
    scope, which brings back an older row, and its catch-up makes the scope's
    vectors again; the other's copy of the vectors must take the row back
    too, though its own mark never moved."""
    scope = ("memories", "alice")
    with ChronoStore.from_path(tmp_path / "m", scope_depth=2) as store:  # no follower
        store.put(scope, "home", {"text": "w1 w2"})  # v1
        store.put(scope, "home", {"text": "w3 w4"})  # v2
        client = chroma(tmp_path / "c")
        resetting, other = (hashed_vectors(store, client) for _ in range(2))
        for vectors in (resetting, other):
            vectors.catch_up()
            assert _keys(vectors, scope, "w3 w4")[:1] == ["home"]
        store.reset(scope, to=1)
        resetting.catch_up()  # makes alice's vectors again
        assert _keys(resetting, scope, "w1 w2")[:1] == ["home"]
        other.catch_up()
        assert _keys(other, scope, "w1 w2")[:1] == ["home"]


def _keys(vectors: VectorIndex, scope: tuple[str, ...], text: str) -> list[str]:
    """Keys of the item vectors nearest `text` scoring ~1.0 (stale ones too:
    the store checks every hit against HEAD)."""
    hits = vectors.nearest_items(scope, hashed(text))
    return [h.key for chunk in hits for h in chunk if h.score > 0.999]


def test_a_catch_up_never_deletes_a_newer_vector_another_store_added(
    tmp_path: Path,
) -> None:
    """Two stores (as two processes) catch up the same commits. One reads an
    item's HEAD; before it drops the item's older vectors, the item is
    written again and the other store adds the new row's vector: that vector
    is newer than anything the first store read, and must stay."""
    scope = ("memories", "alice")
    armed = threading.Event()

    def meanwhile(call: str, name: str) -> None:
        if call == "delete" and armed.is_set():
            armed.clear()
            store.put(scope, "home", {"text": "w5 w6"})
            other.catch_up()

    with ChronoStore.from_path(tmp_path / "m", scope_depth=2) as store:  # no follower
        store.put(scope, "home", {"text": "w1 w2"})
        client = chroma(tmp_path / "c")
        catching_up, other = (
            hashed_vectors(store, c) for c in (Pausing(client, meanwhile), client)
        )
        catching_up.catch_up()
        other.catch_up()
        store.put(scope, "home", {"text": "w3 w4"})
        armed.set()
        catching_up.catch_up()
        assert not armed.is_set()
        fresh = hashed_vectors(store, client)
        assert not fresh.behind()
        assert _keys(fresh, scope, "w5 w6") == ["home"]


@pytest.mark.parametrize("collection", ["items", "changes"])
def test_a_scope_rebuild_never_deletes_a_newer_vector_another_store_added(
    tmp_path: Path, collection: str
) -> None:
    """A reset asks every store to make the scope's vectors again. One store
    reads the scope; before it deletes the scope's old vectors, the scope is
    written again and another store, catching up, adds the new row's vectors:
    they are newer than anything the first store read, and must stay (that
    store goes on from the other's mark, so it never applies the write)."""
    alice, bob = ("memories", "alice"), ("memories", "bob")
    armed = threading.Event()

    def meanwhile(call: str, name: str) -> None:
        if call == "delete" and name == paused and armed.is_set():
            armed.clear()
            store.put(alice, "home", {"text": "w5 w6"})
            other.catch_up()

    with ChronoStore.from_path(tmp_path / "m", scope_depth=2) as store:  # no follower
        store.put(alice, "home", {"text": "w1 w2"})  # v1
        store.put(alice, "home", {"text": "w3 w4"})  # v2
        client = chroma(tmp_path / "c")
        rebuilding, other = (
            hashed_vectors(store, c) for c in (Pausing(client, meanwhile), client)
        )
        paused = getattr(rebuilding, collection).name
        for vectors in (rebuilding, other):
            vectors.catch_up()
        store.put(bob, "game", {"text": "w7 w8"})  # the rebuilding store's next batch
        store.reset(alice, to=1)
        armed.set()
        rebuilding.catch_up(batch=1)
        assert not armed.is_set()
        fresh = hashed_vectors(store, client)
        assert not fresh.behind()
        assert _keys(fresh, alice, "w5 w6") == ["home"]
        with store._engine.transaction(write=False) as tx:
            described = {str(r.row_id) for r in tx.change_rows(scope=alice)}
        kept = fresh.changes.get(where={"scope": scope_key(alice)})["ids"]
        assert set(kept) == described


def test_a_rebuild_strikes_only_the_requests_it_saw(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Two stores (as two processes) make a reset scope again at once, and a
    second reset lands after the slower one read the scope: its request must
    outlive both rebuilds, or the row it brings back never gets a vector."""
    alice = ("memories", "alice")
    armed = threading.Event()

    def made_then_reset(**applied: Any) -> None:
        made(**applied)
        if applied.get("scope") == alice and armed.is_set():
            armed.clear()  # before the slower store strikes its request:
            other.catch_up()  # the other makes alice again and strikes it
            store.reset(alice, to=1)  # and a new request comes

    with ChronoStore.from_path(tmp_path / "m", scope_depth=2) as store:  # no follower
        for text in ("w1 w2", "w3 w4", "w5 w6"):  # v1, v2, v3
            store.put(alice, "home", {"text": text})
        client = chroma(tmp_path / "c")
        slower, other = (hashed_vectors(store, client) for _ in range(2))
        for vectors in (slower, other):
            vectors.catch_up()
        made = slower.projector.apply_items
        monkeypatch.setattr(slower.projector, "apply_items", made_then_reset)
        store.reset(alice, to=2)
        armed.set()
        slower.catch_up()
        assert not armed.is_set()
        fresh = hashed_vectors(store, client)
        fresh.catch_up()
        assert _keys(fresh, alice, "w1 w2") == ["home"]


def test_a_rebuild_request_stored_before_tickets_is_still_met(tmp_path: Path) -> None:
    """A database written by an earlier version holds requests as bare scopes."""
    alice = ("memories", "alice")
    with ChronoStore.from_path(tmp_path / "m", scope_depth=2) as store:  # no follower
        store.put(alice, "home", {"text": "w1 w2"})  # v1
        store.put(alice, "home", {"text": "w3 w4"})  # v2
        vectors = hashed_vectors(store, chroma(tmp_path / "c"))
        vectors.catch_up()
        store.reset(alice, to=1)
        with store._engine.transaction(write=True) as tx:
            tx.cur.execute(
                "UPDATE projections SET rebuild = ? WHERE name != 'full-text'",
                ('[["memories", "alice"]]',),
            )
        assert vectors.behind()
        vectors.catch_up()
        assert not vectors.behind()
        assert _keys(vectors, alice, "w1 w2") == ["home"]


def test_a_catch_up_never_drops_a_vector_a_reset_brought_back(tmp_path: Path) -> None:
    """Two stores (as two processes) share a log and a Chroma. One catches up an
    item's newer row; before it drops the item's older vectors, a reset brings
    the older row back and the other store makes the scope again with it: the
    drop must not take that vector, or the item at HEAD has none, and no
    commit ever comes to add it."""
    alice = ("memories", "alice")
    armed = threading.Event()

    def meanwhile(call: str, name: str) -> None:
        if call == "get" and name == paused and armed.is_set():
            armed.clear()
            store.reset(alice, to=1)
            other.catch_up()

    with ChronoStore.from_path(tmp_path / "m", scope_depth=2) as store:  # no follower
        client = chroma(tmp_path / "c")
        lagging, other = (
            hashed_vectors(store, c) for c in (Pausing(client, meanwhile), client)
        )
        assert lagging.items is not None
        paused = lagging.items.name
        store.put(alice, "home", {"text": "w1 w2"})  # v1
        for vectors in (lagging, other):
            vectors.catch_up()
        store.put(alice, "home", {"text": "w3 w4"})  # v2
        armed.set()
        lagging.catch_up()
        assert not armed.is_set()
        fresh = hashed_vectors(store, client)
        fresh.catch_up()
        assert _keys(fresh, alice, "w1 w2") == ["home"]


@pytest.mark.parametrize("reset_at", ["get", "delete"])
def test_a_copy_read_while_a_lagging_catch_up_drops_stale_vectors_gets_the_reset_row(
    tmp_path: Path, reset_at: str
) -> None:
    """Two stores (as two processes, each its own log connection) share a log
    and a Chroma. One lags in catching up an item's newer row: it read HEAD
    before the other reset the scope (bringing the older row back) and made
    the scope again, and the resetting store's search reads its copy while
    the lagging one drops stale vectors. A reset before the drop's last look
    at HEAD (`get`) never loses the row's vector; one just before its delete
    (`delete`) loses it for a moment, and the copy read then must be read
    anew: a copy never reads a row below the last it kept again, so the item
    was missing from it for good (benchmarks/concurrency/shared_index.py, worker 0)."""
    alice = ("memories", "alice")
    armed = threading.Event()
    found: list[list[str]] = []

    def meanwhile(call: str, name: str) -> None:
        if not armed.is_set() or name != paused:
            return
        if call == reset_at:
            resetting.catch_up()  # its search after the update
            store.reset(alice, to=1)
            resetting.catch_up()  # its search after the reset: makes alice again
        elif call == "upsert":  # the lagging store has dropped what it read stale
            armed.clear()
            found.append(_keys(resetting, alice, "w1 w2"))  # the search reads

    with (
        ChronoStore.from_path(tmp_path / "m", scope_depth=2) as store,
        ChronoStore.from_path(tmp_path / "m", scope_depth=2) as elsewhere,
    ):  # no followers
        client = chroma(tmp_path / "c")
        lagging, resetting = (
            hashed_vectors(s, c)
            for s, c in ((elsewhere, Pausing(client, meanwhile)), (store, client))
        )
        assert lagging.items is not None
        paused = lagging.items.name
        store.put(alice, "home", {"text": "w1 w2"})  # v1
        for vectors in (lagging, resetting):
            vectors.catch_up()
        assert _keys(resetting, alice, "w1 w2") == ["home"]
        store.put(alice, "home", {"text": "w3 w4"})  # v2
        armed.set()
        lagging.catch_up()
        assert not armed.is_set()
        if reset_at == "get":
            assert found == [["home"]]
        resetting.catch_up()
        assert _keys(resetting, alice, "w1 w2") == ["home"]


def test_a_search_while_another_store_makes_a_reset_scope_again_finds_it(
    tmp_path: Path,
) -> None:
    """After a reset every store's catch-up makes the scope again, and the
    resetting process searches meanwhile: whenever it reads, another store's
    rebuild has the scope's vectors there (it adds before it deletes; deleting
    first, the search found nothing of the scope)."""
    alice = ("memories", "alice")
    started = threading.Event()
    found: list[list[str]] = []

    def meanwhile(call: str, name: str) -> None:
        if name != other_items:
            return
        if not started.is_set():  # other's first call of its rebuild: the
            started.set()  # resetting store's search makes alice again,
            resetting.catch_up()
        else:  # and then reads the vectors, at every later moment
            found.append(_keys(resetting, alice, "w1 w2"))

    class Watched(Hashed):  # other's embedding: a moment inside its rebuild
        def embed_documents(self, texts: list[str]) -> list[list[float]]:
            meanwhile("embed", other_items)
            return super().embed_documents(texts)

    with (
        ChronoStore.from_path(tmp_path / "m", scope_depth=2) as store,
        ChronoStore.from_path(tmp_path / "m", scope_depth=2) as elsewhere,
    ):  # no followers
        client = chroma(tmp_path / "c")
        resetting = hashed_vectors(store, client)
        other = VectorIndex(
            elsewhere._engine,
            Pausing(client, meanwhile),
            Watched(),
            "hashed",
            item_fields=["text"],
        )
        assert other.items is not None
        other_items = other.items.name
        store.put(alice, "home", {"text": "w1 w2"})  # v1
        store.put(alice, "home", {"text": "w3 w4"})  # v2
        resetting.catch_up()
        store.reset(alice, to=1)
        other.catch_up(changes=False)
        assert found and all(keys == ["home"] for keys in found), found


@pytest.mark.parametrize("collection", ["items", "changes"])
def test_no_vector_of_a_value_redacted_meanwhile_stays(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, collection: str
) -> None:
    """A store (as a process) reads a value to embed it; before it adds the
    vector, a redaction erases the value and another store makes the scope
    again without it: the late vector must not stay, or the erased text
    stays in Chroma, and is found."""
    alice = ("memories", "alice")
    adding = f"add_{collection}"

    def redacted_meanwhile(rows: list[Any]) -> None:
        if rows and not redacted:
            redacted.append(store.redact(alice, contains="w9"))
            other.catch_up()  # the redacting process's catch-up
        add(rows)

    redacted: list[Any] = []
    with ChronoStore.from_path(tmp_path / "m", scope_depth=2) as store:  # no follower
        client = chroma(tmp_path / "c")
        lagging, other = (hashed_vectors(store, client) for _ in range(2))
        for vectors in (lagging, other):
            vectors.catch_up()
        store.put(alice, "home", {"text": "w1 w2"})
        store.put(alice, "pin", {"text": "w9 w10 w11"})  # the secret
        add = getattr(lagging.projector, adding)
        monkeypatch.setattr(lagging.projector, adding, redacted_meanwhile)
        lagging.catch_up()
        assert redacted
        kept = getattr(lagging, collection).get(include=["metadatas"])["metadatas"]
        with store._engine.transaction(write=False) as tx:
            held = ProjectionFeed(tx).holding_values([m["row"] for m in kept])
        assert kept and {m["row"] for m in kept} == held


def test_a_search_whose_collection_another_store_remakes_meanwhile_reads_the_new(
    tmp_path: Path,
) -> None:
    """Another store's `reindex` lands after a search caught up its vectors
    and before it reads them: the search opens the new collections and
    answers, as it does when that happens before it."""
    scope = ("memories", "alice")
    armed = threading.Event()

    def meanwhile(call: str, name: str) -> None:
        if call == "count" and armed.is_set():
            armed.clear()
            first.put(scope, "b", {"text": "w5 w6"})
            first.reindex()

    client = chroma(tmp_path / "c")
    open_ = dict(scope_depth=2, index=INDEX)
    with (
        ChronoStore.from_path(tmp_path / "m", chroma_client=client, **open_) as first,  # type: ignore[arg-type]
        ChronoStore.from_path(
            tmp_path / "m", chroma_client=Pausing(client, meanwhile), **open_
        ) as second,  # type: ignore[arg-type]
    ):
        first.put(scope, "a", {"text": "w1 w2"})
        assert second.search(scope, query="w1 w2")[0].key == "a"
        armed.set()
        found = second.search(scope, query="w5 w6")
        assert not armed.is_set()
        assert found[0].key == "b" and found[0].score == pytest.approx(1.0)


@pytest.mark.parametrize(
    "failure",
    [
        # A read racing another client's write: the read is tried again.
        chromadb.errors.InternalError(
            "Error executing plan: Internal error: Error finding id"
        ),
        # A collection another store's reindex is still making: the
        # collections are opened again a moment later.
        chromadb.errors.ChromaError("Missing field: [Missing metadata segment]"),
    ],
    ids=["raced", "half-made"],
)
def test_a_chroma_server_failing_for_a_moment_still_gets_an_answer(
    tmp_path: Path, failure: Exception
) -> None:
    """Seen with four processes on one Chroma server: reads that fail for a
    moment while another client writes or reindexes. The search answers."""
    scope = ("memories", "alice")
    failures = [2]  # the next two reads fail

    def failing(call: str, name: str) -> None:
        if call == "get" and failures[0]:
            failures[0] -= 1
            raise failure

    with ChronoStore.from_path(
        tmp_path / "m",
        scope_depth=2,
        index=INDEX,  # type: ignore[arg-type]
        chroma_client=Pausing(chroma(tmp_path / "c"), failing),
    ) as store:
        store.put(scope, "a", {"text": "w1 w2"})
        assert store.search(scope, query="w1 w2")[0].key == "a"
        assert failures == [0]


def test_a_follower_step_that_loses_its_marks_to_another_store_keeps_following(
    tmp_path: Path,
) -> None:
    """Another store moves the marks while this store's follower applies a
    step: the step saves nothing, but the log is still ahead of the vectors,
    so the follower must say more remains, not go idle."""
    scope = ("memories", "alice")
    moves: list[int] = []  # where the other store takes each collection's mark

    def meanwhile(call: str, name: str) -> None:
        if call == "upsert" and moves:
            other.catch_up(upto=moves.pop(0))

    client = chroma(tmp_path / "c")
    open_ = dict(scope_depth=2, index=INDEX)
    with ChronoStore.from_path(
        tmp_path / "m", chroma_client=Pausing(client, meanwhile), **open_
    ) as store:  # type: ignore[arg-type]
        search = store._search
        for i in range(60):
            store.put(scope, f"k{i}", {"text": f"{WORDS[i % 12]} n{i}"})
        assert store.wait_for_index(timeout=60)
        search._follower.stop()  # its steps run in this thread below
        for i in range(60):
            store.put(scope, f"k{i}", {"text": f"{WORDS[i % 12]} m{i}"})
        mine = search.vectors()
        other = VectorIndex(
            store._engine, client, mine.embeddings, mine.embedder, item_fields=["text"]
        )
        moves[:] = [70, 80]
        while search._follow():
            pass
        assert not moves
        assert not mine.behind()
