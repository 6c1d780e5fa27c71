"""Finding by meaning: semantic `search(query=...)`, item changes, `resolve`, `undo`.

Real parts only: SQLite files, a Chroma `PersistentClient`, the provisioned
all-MiniLM-L6-v2 (loaded once per process) and FlashRank's own `Ranker` over the
provisioned stand-in. Toy bag-of-words embedders are used only where a test is
about the `embed` plumbing, so their scores can be checked exactly.

What is covered, by DESIGN.md section:

- semantic search: ranking, score, filter, limit/offset, namespace prefix, per-put
  `index`, sync and async, custom `embed` (sync function, async function,
  LangChain `Embeddings`), rebuild when the embedder changes;
- invariant 2: after every kind of change, with the projection caught up or
  lagging, with stale vectors planted in Chroma, and after `kill -9` between the
  SQLite commit and the Chroma update (child process: `tests/_search_child.py`);
- invariant 1: `reindex` rebuilds the FTS rows and both Chroma collections bit for bit;
- the change index: FTS syntax in requests, scope isolation (BM25 and dense);
- `resolve`: every intent, time windows, stage scores, no side effect, abstention;
- `undo`: surgical by default, rollback when asked, conflicts, dry runs,
  messages, redo, stale resolutions. (`tests/test_undo_kinds.py` holds the
  requests written for each kind of failure the undo search had.)
"""

from __future__ import annotations

import hashlib
import logging
import math
import os
import re
import signal
import sqlite3
import subprocess
import sys
import time
from collections.abc import Collection, Iterator, Sequence
from datetime import datetime, timedelta, timezone
from pathlib import Path
from typing import Any

import chromadb
import numpy as np
import pytest
from chromadb.config import Settings
from langchain_core.embeddings import Embeddings
from langgraph.store.base import PutOp, SearchItem, SearchOp

from langgraph_chronomem import ChronoStore, ConfigError, RevertConflict, commit_context
from langgraph_chronomem.engine.base import FULL_TEXT
from langgraph_chronomem.engine.rows import scope_key
from langgraph_chronomem.engine.types import CommitMeta
from langgraph_chronomem.models import PAIR_SCORER, default_embeddings
from langgraph_chronomem.search.index import SearchIndex
from langgraph_chronomem.search.lexical import bm25
from langgraph_chronomem.search.resolve import ResolverConfig
from langgraph_chronomem.search.vector_collections import item_id
from langgraph_chronomem.search.vectors import CHANGES, ITEMS, VectorIndex
from langgraph_chronomem.store import DATABASE_FILE
from langgraph_chronomem.store.undo import apply_undo
from tests import _search_child as child

ALICE = ("memories", "alice")
ALICE_WORK = ("memories", "alice", "work")
BOB = ("memories", "bob")
INDEX: Any = {"fields": ["text"]}
REPO = Path(__file__).resolve().parent.parent

BOSTON = child.BOSTON
PARIS = child.PARIS
CAT = child.CAT
TOKYO = "I relocated to Tokyo for a new job in Japan"
DIARY = "Dear diary, today I failed my driving test"

State = dict[tuple[tuple[str, ...], str], dict[str, Any]]


# -- helpers -------------------------------------------------------------------


def chroma(path: Path) -> Any:
    """A real embedded Chroma, as the store itself would open it."""
    return chromadb.PersistentClient(
        path=str(path), settings=Settings(anonymized_telemetry=False)
    )


def open_store(root: Path, *, index: Any = INDEX, **kwargs: Any) -> ChronoStore:
    return ChronoStore.from_path(root, scope_depth=2, index=index, **kwargs)


def rows(root: Path, query: str, params: Sequence[Any] = ()) -> list[tuple[Any, ...]]:
    """Read the store's SQLite file through a connection of our own."""
    con = sqlite3.connect(f"file:{root / DATABASE_FILE}?mode=ro", uri=True)
    try:
        return con.execute(query, params).fetchall()
    finally:
        con.close()


def marks(root: Path) -> dict[str, int]:
    return dict(rows(root, "SELECT name, seq FROM projections"))


def max_seq(root: Path) -> int:
    return int(rows(root, "SELECT max(seq) FROM commits")[0][0])


def log_tables(root: Path) -> tuple[list[Any], ...]:
    """Everything that is the log (not a projection)."""
    return tuple(
        rows(root, f"SELECT * FROM {table} ORDER BY 1")  # fixed table names
        for table in ("commits", "items", "scopes")
    )


def row_id(root: Path, namespace: tuple[str, ...], key: str, version: int) -> int:
    found = rows(
        root,
        "SELECT id FROM items WHERE namespace = ? AND key = ? AND version = ?",
        (".".join(namespace), key, version),
    )
    return int(found[0][0])


def head_row_ids(root: Path) -> set[int]:
    return {r[0] for r in rows(root, "SELECT id FROM items WHERE valid_to IS NULL")}


def named(client: Any, kind: str, embedder: str = "") -> str:
    """The name of the store's ITEMS or CHANGES collection (one per embedder and
    fields: with several, the one whose embedder ends with `embedder`)."""
    names = [
        c.name
        for c in client.list_collections()
        if c.name.startswith(f"{kind}-")
        and client.get_collection(c.name).metadata["embedder"].endswith(embedder)
    ]
    assert len(names) <= 1, f"several {kind} collections: {names}"
    return names[0] if names else f"{kind}-none"


def mark_of(root: Path, kind: str) -> int:
    """The mark of the store's one ITEMS or CHANGES projection."""
    (seq,) = [seq for name, seq in marks(root).items() if name.startswith(f"{kind}-")]
    return seq


def dump(client: Any, name: str) -> dict[str, tuple[np.ndarray, dict[str, Any]]]:
    """Every vector of a collection: id -> (embedding, metadata)."""
    if name not in {c.name for c in client.list_collections()}:
        return {}
    got = client.get_collection(name).get(include=["embeddings", "metadatas"])
    return {
        i: (np.asarray(e, dtype=np.float64), dict(m))
        for i, e, m in zip(got["ids"], got["embeddings"], got["metadatas"], strict=True)
    }


def assert_same_vectors(
    before: dict[str, Any], after: dict[str, Any], what: str
) -> None:
    assert sorted(before) == sorted(after), f"{what}: different ids"
    for vid, (vector, meta) in before.items():
        again, meta_again = after[vid]
        assert meta == meta_again, f"{what} {vid}: metadata {meta} != {meta_again}"
        assert vector.shape == again.shape
        assert np.max(np.abs(vector - again)) <= 1e-6, f"{what} {vid}: vector differs"


_MODEL = default_embeddings()


def embed(text: str) -> np.ndarray:
    return np.asarray(_MODEL.embed_query(text))


def cosine(a: Any, b: Any) -> float:
    a, b = np.asarray(a, dtype=np.float64), np.asarray(b, dtype=np.float64)
    return float(a @ b / (np.linalg.norm(a) * np.linalg.norm(b)))


def head_state(store: ChronoStore, prefix: tuple[str, ...]) -> State:
    return {(i.namespace, i.key): i.value for i in store.search(prefix, limit=1000)}


def found_by_meaning(
    store: ChronoStore,
    prefix: tuple[str, ...],
    query: str,
    *,
    never: Collection[str] = (),
) -> list[Any]:
    """Search by meaning; check each hit is its item's HEAD value, never a stale one."""
    found = store.search(prefix, query=query, limit=50)
    for item in found:
        head = store.get(item.namespace, item.key)
        assert head is not None, (
            f"search returned {item.namespace}/{item.key}, absent at HEAD"
        )
        assert item.value == head.value, (
            f"search returned {item.value}, HEAD is {head.value}"
        )
        assert item.value.get("text") not in never, (
            f"stale value came back: {item.value}"
        )
    return found


# -- toy embedders (for the `embed` plumbing, exact scores) -------------------------

TOY_DIMS = 256
CALLS: dict[str, int] = {}


def bag_of_words(text: str, dims: int = TOY_DIMS, salt: str = "") -> list[float]:
    vector = [0.0] * dims
    for word in re.findall(r"[a-z]+", text.lower()):
        vector[int(hashlib.sha1((salt + word).encode()).hexdigest(), 16) % dims] += 1.0
    norm = math.sqrt(sum(x * x for x in vector))
    return [x / norm for x in vector] if norm else [1.0] + [0.0] * (dims - 1)


def toy_embed(texts: list[str]) -> list[list[float]]:
    """A plain sync embedding function."""
    CALLS["sync"] = CALLS.get("sync", 0) + 1
    return [bag_of_words(t) for t in texts]


async def toy_aembed(texts: list[str]) -> list[list[float]]:
    """An async embedding function: the only way this store can embed."""
    CALLS["async"] = CALLS.get("async", 0) + 1
    return [bag_of_words(t) for t in texts]


class ToyEmbeddings(Embeddings):
    """A LangChain `Embeddings` object (a different size and hash than `toy_embed`)."""

    def __init__(self, dims: int = 128, salt: str = "lc") -> None:
        self.dims, self.salt = dims, salt
        self.model = f"toy-{dims}-{salt}"
        self.calls = 0

    def embed_documents(self, texts: list[str]) -> list[list[float]]:
        self.calls += 1
        return [bag_of_words(t, self.dims, self.salt) for t in texts]

    def embed_query(self, text: str) -> list[float]:
        return self.embed_documents([text])[0]


TOY_ITEMS = {
    "violin": "I play the violin in a string orchestra",
    "garden": "tomatoes and basil grow in my garden",
    "car": "my car is a red hatchback",
}


def put_toy_items(store: ChronoStore) -> None:
    for key, text in TOY_ITEMS.items():
        store.put(ALICE, key, {"text": text})


def check_toy_search(found: list[Any], query: str, vector: Any = bag_of_words) -> None:
    assert found and found[0].key == "violin", [i.key for i in found]
    for item in found:
        expected = cosine(vector(query), vector(item.value["text"]))
        assert item.score == pytest.approx(expected, abs=1e-5)


# ==============================================================================
# 1. Semantic search
# ==============================================================================

LIBRARY: State = {
    (ALICE, "home"): {"text": "I live in a small apartment in Boston", "kind": "place"},
    (ALICE, "cat"): {"text": "My cat Tom sleeps on the sofa all day", "kind": "pet"},
    (ALICE, "dog"): {
        "text": "We adopted a golden retriever puppy named Rex",
        "kind": "pet",
    },
    (ALICE, "food"): {
        "text": "Sushi and ramen are my favourite dinners",
        "kind": "food",
    },
    (ALICE, "job"): {"text": "I work night shifts as a nurse", "kind": "work"},
    (ALICE_WORK, "boss"): {
        "text": "My manager at the hospital is Dr. Smith",
        "kind": "work",
    },
    (BOB, "cat"): {"text": "Bob's cat is called Whiskers", "kind": "pet"},
}


@pytest.fixture(scope="module")
def library(tmp_path_factory: pytest.TempPathFactory) -> Iterator[ChronoStore]:
    """A read-only store of a few memories, indexed on `text` with the default model."""
    with open_store(tmp_path_factory.mktemp("library")) as store:
        for (namespace, key), value in LIBRARY.items():
            store.put(namespace, key, value)
        yield store


@pytest.mark.parametrize(
    ("query", "expected_top"),
    [
        ("where do I live?", {"home"}),
        ("which animals do we keep as pets?", {"cat", "dog"}),
        ("what do I like to eat for supper?", {"food"}),
        ("who is my supervisor at work?", {"boss"}),
    ],
)
def test_search_ranks_by_meaning(
    library: ChronoStore, query: str, expected_top: set[str]
) -> None:
    found = library.search(ALICE, query=query, limit=10)
    assert {i.key for i in found[: len(expected_top)]} == expected_top, [
        i.key for i in found
    ]
    assert len(found) == 6  # every alice item, nothing of bob's


def test_search_score_is_the_cosine_similarity(library: ChronoStore) -> None:
    query = "pets at home"
    found = library.search(ALICE, query=query, limit=10)
    scores = [i.score for i in found if i.score is not None]
    assert len(scores) == len(found) and scores == sorted(scores, reverse=True)
    for item in found:
        assert item.score == pytest.approx(
            cosine(embed(query), embed(item.value["text"])), abs=1e-4
        )


def test_search_without_query_has_no_score(library: ChronoStore) -> None:
    found = library.search(ALICE, limit=10)
    assert len(found) == 6 and all(i.score is None for i in found)


def test_search_filter_is_applied_to_hits_by_meaning(library: ChronoStore) -> None:
    pets = library.search(
        ALICE, query="a nurse at the hospital", filter={"kind": "pet"}, limit=10
    )
    assert {i.key for i in pets} == {"cat", "dog"}
    work = library.search(
        ALICE, query="my cute animals", filter={"kind": "work"}, limit=10
    )
    assert [i.key for i in work] and {i.key for i in work} == {"job", "boss"}
    assert library.search(ALICE, query="animals", filter={"kind": "nothing"}) == []


def test_search_limit_and_offset_page_through_the_ranking(library: ChronoStore) -> None:
    query = "animals and food"
    everything = [
        (i.namespace, i.key) for i in library.search(ALICE, query=query, limit=10)
    ]
    assert len(everything) == 6
    pages = [
        [
            (i.namespace, i.key)
            for i in library.search(ALICE, query=query, limit=2, offset=offset)
        ]
        for offset in (0, 2, 4, 6)
    ]
    assert pages[:3] == [everything[0:2], everything[2:4], everything[4:6]]
    assert pages[3] == []
    assert len(library.search(ALICE, query=query, limit=1)) == 1


def test_search_honours_the_namespace_prefix(library: ChronoStore) -> None:
    work = library.search(ALICE_WORK, query="my cat", limit=10)
    assert [(i.namespace, i.key) for i in work] == [(ALICE_WORK, "boss")]
    bob = library.search(BOB, query=LIBRARY[ALICE, "cat"]["text"], limit=10)
    assert [(i.namespace, i.key) for i in bob] == [(BOB, "cat")]
    alice = library.search(ALICE, query="Whiskers, Bob's cat", limit=10)
    assert all(i.namespace[:2] == ALICE for i in alice)


async def test_asearch_matches_search(library: ChronoStore) -> None:
    query = "where do I sleep and eat?"
    sync = [(i.key, i.score) for i in library.search(ALICE, query=query, limit=10)]
    async_ = [
        (i.key, i.score) for i in await library.asearch(ALICE, query=query, limit=10)
    ]
    assert [k for k, _ in async_] == [k for k, _ in sync]
    assert [s for _, s in async_] == pytest.approx([s for _, s in sync], abs=1e-6)


def test_search_widens_past_neighbours_the_filter_or_offset_drops(
    tmp_path: Path,
) -> None:
    """The nearest vectors all fail the filter: search must look further."""
    with open_store(tmp_path) as store:
        store.batch(
            [
                PutOp(
                    ALICE,
                    f"cat{i}",
                    {"text": f"my cat number {i} purrs", "kind": "pet"},
                )
                for i in range(40)
            ]
            + [
                PutOp(
                    ALICE,
                    "job",
                    {"text": "I work night shifts as a nurse", "kind": "work"},
                )
            ]
        )
        found = store.search(
            ALICE, query="cats purring", filter={"kind": "work"}, limit=1
        )
        assert [i.key for i in found] == ["job"]
        everything = [
            i.key for i in store.search(ALICE, query="cats purring", limit=41)
        ]
        assert len(everything) == 41 and everything[-1] == "job"
        tail = [
            i.key for i in store.search(ALICE, query="cats purring", limit=5, offset=38)
        ]
        assert tail == everything[38:41]


def test_an_item_with_several_texts_is_found_once_with_its_best_score(
    tmp_path: Path,
) -> None:
    with open_store(tmp_path) as store:
        langs = {"text": ["I speak French", "I am learning Japanese", "I hate opera"]}
        store.put(ALICE, "langs", langs, index=["text[*]"])  # one vector per element
        store.put(ALICE, "home", {"text": BOSTON})
        found = store.search(ALICE, query="learning the Japanese language", limit=10)
        assert [i.key for i in found] == ["langs", "home"]
        best = max(
            cosine(embed("learning the Japanese language"), embed(t))
            for t in found[0].value["text"]
        )
        assert found[0].score == pytest.approx(best, abs=1e-4)


@pytest.fixture
def client(tmp_path: Path) -> Any:
    return chroma(tmp_path / "chroma")


@pytest.fixture
def istore(tmp_path: Path, client: Any) -> Iterator[ChronoStore]:
    """A fresh store indexed on `text` (default model); its Chroma client at hand."""
    with open_store(tmp_path, chroma_client=client) as store:
        yield store


def test_put_index_false_is_stored_but_never_found_by_meaning(
    istore: ChronoStore, client: Any
) -> None:
    istore.put(ALICE, "fear", {"text": "I am afraid of spiders"}, index=False)
    istore.put(ALICE, "home", {"text": BOSTON})
    found = istore.search(ALICE, query="I am afraid of spiders", limit=10)
    assert [i.key for i in found] == ["home"]
    assert istore.get(ALICE, "fear").value == {"text": "I am afraid of spiders"}  # type: ignore[union-attr]
    istore.wait_for_index()
    assert {m["key"] for _, m in dump(client, named(client, ITEMS)).values()} == {
        "home"
    }


def test_put_index_fields_choose_what_is_embedded(
    istore: ChronoStore, client: Any, tmp_path: Path
) -> None:
    value = {
        "text": "groceries: milk, eggs",
        "other": {"field": "I play the violin in an orchestra"},
    }
    istore.put(ALICE, "hobby", value, index=["other.field"])
    istore.put(
        ALICE,
        "list",
        {"text": "I play the violin in an orchestra"},
        index=["missing.field"],
    )
    istore.put(ALICE, "home", {"text": BOSTON})
    istore.wait_for_index()
    vectors = dump(client, named(client, ITEMS))
    hobby_row = row_id(tmp_path, ALICE, "hobby", 1)
    assert sorted(vectors) == sorted(
        [f"{hobby_row}:other.field", f"{row_id(tmp_path, ALICE, 'home', 3)}:text"]
    )
    vector, _ = vectors[f"{hobby_row}:other.field"]
    assert cosine(vector, embed("I play the violin in an orchestra")) == pytest.approx(
        1.0, abs=1e-5
    )
    found = istore.search(ALICE, query="a musical instrument with strings", limit=10)
    assert [i.key for i in found] == ["hobby", "home"]  # "list" has no vector at all
    milk = {
        i.key: i.score
        for i in istore.search(ALICE, query="groceries: milk, eggs", limit=10)
    }
    # hobby's `text` is not embedded, only its other.field
    assert set(milk) == {"hobby", "home"}
    violin = cosine(
        embed("groceries: milk, eggs"), embed("I play the violin in an orchestra")
    )
    assert milk["hobby"] == pytest.approx(violin, abs=1e-4)
    # a later put with the store's default fields re-embeds `text`
    istore.put(
        ALICE, "hobby", {"text": "I collect stamps", "other": {"field": "violin"}}
    )
    assert istore.search(ALICE, query="stamp collecting", limit=1)[0].key == "hobby"
    istore.wait_for_index()
    assert {m["key"] for _, m in dump(client, named(client, ITEMS)).values()} == {
        "hobby",
        "home",
    }


async def test_aput_then_asearch(istore: ChronoStore) -> None:
    await istore.aput(ALICE, "home", {"text": BOSTON})
    await istore.aput(ALICE, "pet", {"text": CAT})
    await istore.aput(ALICE, "home", {"text": PARIS})
    found = await istore.asearch(ALICE, query="the Eiffel Tower", limit=10)
    assert [(i.key, i.value["text"]) for i in found] == [("home", PARIS), ("pet", CAT)]
    results = await istore.abatch(
        [
            PutOp(ALICE, "dog", {"text": "a golden retriever puppy"}),
            SearchOp(ALICE, query="dogs"),
        ]
    )
    seen = results[1]
    assert isinstance(seen, list)
    keys = [i.key for i in seen if isinstance(i, SearchItem)]
    assert keys and "dog" not in keys  # the batch's reads see the store before its puts
    assert (await istore.asearch(ALICE, query="dogs", limit=1))[0].key == "dog"


# -- custom `embed` ---------------------------------------------------------------


def test_custom_sync_embed_function(tmp_path: Path, client: Any) -> None:
    before = CALLS.get("sync", 0)
    with open_store(
        tmp_path, index={"fields": ["text"], "embed": toy_embed}, chroma_client=client
    ) as store:
        put_toy_items(store)
        check_toy_search(
            store.search(ALICE, query="violin music", limit=10), "violin music"
        )
        store.put(ALICE, "violin", {"text": "I sold my violin"})
        store.rollback(ALICE, to=3)
        check_toy_search(
            store.search(ALICE, query="violin orchestra", limit=10), "violin orchestra"
        )
    assert CALLS["sync"] > before
    assert (
        client.get_collection(named(client, ITEMS))
        .metadata["embedder"]
        .endswith("toy_embed")
    )


async def test_custom_async_embed_function_is_used_by_aput_and_asearch(
    tmp_path: Path, client: Any
) -> None:
    before = CALLS.get("async", 0)
    with open_store(
        tmp_path, index={"fields": ["text"], "embed": toy_aembed}, chroma_client=client
    ) as store:
        for key, text in TOY_ITEMS.items():
            await store.aput(ALICE, key, {"text": text})
        check_toy_search(
            await store.asearch(ALICE, query="violin music", limit=10), "violin music"
        )
        await store.adelete(ALICE, "car")
        assert {i.key for i in await store.asearch(ALICE, query="car", limit=10)} == {
            "violin",
            "garden",
        }
    # three puts and a search, each through the async function
    assert CALLS["async"] >= before + 4


async def test_custom_async_embed_function_serves_arollback(
    tmp_path: Path, client: Any, caplog: pytest.LogCaptureFixture
) -> None:
    """An async-only embedder is accepted: async time travel must work with it,
    and no background thread tries the model where it cannot answer."""
    with open_store(
        tmp_path, index={"fields": ["text"], "embed": toy_aembed}, chroma_client=client
    ) as store:
        await store.aput(ALICE, "violin", {"text": TOY_ITEMS["violin"]})
        await store.aput(ALICE, "violin", {"text": "I sold my violin"})
        await store.arollback(ALICE, to=1)
        found = await store.asearch(ALICE, query="string orchestra", limit=10)
        assert [i.value["text"] for i in found] == [TOY_ITEMS["violin"]]
        assert found[0].score == pytest.approx(
            cosine(bag_of_words("string orchestra"), bag_of_words(TOY_ITEMS["violin"])),
            abs=1e-5,
        )
        assert await store.await_for_index(timeout=30)
    assert not [r for r in caplog.records if r.levelno >= logging.WARNING]


async def test_with_an_async_embed_awaiting_the_index_makes_it_whole(
    tmp_path: Path, client: Any
) -> None:
    """No background thread can call an `async def` embed: `await_for_index`
    catches the change vectors and the full-text index up itself, and the
    sync `wait_for_index`, which cannot reach the model, says so."""
    with open_store(
        tmp_path, index={"fields": ["text"], "embed": toy_aembed}, chroma_client=client
    ) as store:
        for key, text in TOY_ITEMS.items():
            await store.aput(ALICE, key, {"text": text})
        assert await store.await_for_index(timeout=60)
        projections = store.stats().projections
        assert FULL_TEXT in {p.name for p in projections}
        assert all(p.behind == 0 for p in projections)
        await store.aput(ALICE, "violin", {"text": "I sold my violin"})
        with pytest.raises(ConfigError, match="async"):
            store.wait_for_index(timeout=60)
        assert await store.await_for_index(timeout=60)


async def test_custom_async_embed_function_serves_aundo(
    tmp_path: Path, client: Any
) -> None:
    with open_store(
        tmp_path, index={"fields": ["text"], "embed": toy_aembed}, chroma_client=client
    ) as store:
        await store.aput(ALICE, "violin", {"text": TOY_ITEMS["violin"]})
        await store.aput(ALICE, "violin", {"text": "I sold my violin"})
        result = await store.aundo(ALICE, "undo that I sold my violin")
        assert result.applied, result.message
        restored = await store.aget(ALICE, "violin")
        assert restored is not None and restored.value == {"text": TOY_ITEMS["violin"]}


async def test_custom_langchain_embeddings_object(tmp_path: Path, client: Any) -> None:
    embeddings = ToyEmbeddings()

    def toy(text: str) -> list[float]:
        return bag_of_words(text, embeddings.dims, embeddings.salt)

    with open_store(
        tmp_path, index={"fields": ["text"], "embed": embeddings}, chroma_client=client
    ) as store:
        put_toy_items(store)
        check_toy_search(
            store.search(ALICE, query="violin music", limit=10), "violin music", toy
        )
        await store.aput(ALICE, "violin", {"text": "my old violin is in the attic"})
        check_toy_search(
            await store.asearch(ALICE, query="old violin", limit=10), "old violin", toy
        )
    assert embeddings.calls > 0
    assert (
        client.get_collection(named(client, ITEMS))
        .metadata["embedder"]
        .endswith("ToyEmbeddings:toy-128-lc")
    )


def test_each_embedder_gets_collections_of_its_own(tmp_path: Path, client: Any) -> None:
    with open_store(
        tmp_path, index={"fields": ["text"], "embed": toy_embed}, chroma_client=client
    ) as store:
        put_toy_items(store)
        # the change collection catches up too
        store.resolve(ALICE, "undo the garden")
        store.wait_for_index()
    first = {kind: dump(client, named(client, kind)) for kind in (ITEMS, CHANGES)}
    assert len(first[CHANGES]) == 3
    new = ToyEmbeddings(dims=128, salt="second")

    def toy(text: str) -> list[float]:
        return bag_of_words(text, new.dims, new.salt)

    with open_store(
        tmp_path, index={"fields": ["text"], "embed": new}, chroma_client=client
    ) as store:
        store.wait_for_index()  # the new collections are made from the log
        items = dump(client, named(client, ITEMS, "ToyEmbeddings:toy-128-second"))
        assert sorted(m["key"] for _, m in items.values()) == sorted(TOY_ITEMS), (
            "items not re-embedded"
        )
        for vector, meta in items.values():
            assert np.allclose(vector, toy(TOY_ITEMS[meta["key"]]), atol=1e-6)
        check_toy_search(
            store.search(ALICE, query="violin music", limit=10), "violin music", toy
        )
        resolution = store.resolve(ALICE, "undo the tomatoes in my garden")
        assert resolution.best is not None and resolution.best.commit.version == 2
        assert resolution.best.scores.dense_rank == 1
        store.wait_for_index()
        changes = dump(client, named(client, CHANGES, "toy-128-second"))
        assert len(changes) == 3 and all(v.shape == (128,) for v, _ in changes.values())
    # the first model's vectors are untouched, for a store still opened with it
    for kind in (ITEMS, CHANGES):
        after = dump(client, named(client, kind, "toy_embed"))
        assert_same_vectors(first[kind], after, kind)


def test_other_fields_get_collections_of_their_own(tmp_path: Path, client: Any) -> None:
    index = {"fields": ["text"], "embed": toy_embed}
    with open_store(tmp_path, index=index, chroma_client=client) as store:
        store.put(ALICE, "note", {"text": "violin lessons", "title": "garden"})
    with open_store(
        tmp_path, index={**index, "fields": ["title"]}, chroma_client=client
    ) as store:
        found = store.search(ALICE, query="garden", limit=1)
        assert found[0].key == "note"
        assert found[0].score == pytest.approx(1.0, abs=1e-6), "made from the new field"


# ==============================================================================
# 2. Invariant 2: no read returns a value that is not at HEAD
# ==============================================================================

KINDS_OF_CHANGE = ("update", "delete", "rollback", "revert", "reset", "ttl")


def _make_history(store: ChronoStore, kind: str) -> None:
    store.put(ALICE, "home", {"text": BOSTON})  # v1
    store.put(ALICE, "pet", {"text": CAT})  # v2
    ttl = 0.002 if kind == "ttl" else None
    store.put(ALICE, "home", {"text": PARIS}, ttl=ttl)  # v3


def _change(store: ChronoStore, kind: str) -> tuple[str | None, set[str]]:
    """Change home; return (its text at HEAD, texts that must never come back)."""
    if kind == "update":
        store.put(ALICE, "home", {"text": TOKYO})
        return TOKYO, {BOSTON, PARIS}
    if kind == "delete":
        store.delete(ALICE, "home")
        return None, {BOSTON, PARIS}
    if kind == "rollback":
        store.rollback(ALICE, to=2)
        return BOSTON, {PARIS}
    if kind == "revert":
        assert not isinstance(store.revert(ALICE, 3), RevertConflict)
        return BOSTON, {PARIS}
    if kind == "reset":
        assert store.reset(ALICE, to=2) == 1
        return BOSTON, {PARIS}
    assert kind == "ttl"
    time.sleep(0.25)
    assert store.sweep_ttl() == 1
    return None, {BOSTON, PARIS}


@pytest.mark.parametrize("lagging", [False, True], ids=["caught-up", "lagging"])
@pytest.mark.parametrize("kind", KINDS_OF_CHANGE)
def test_semantic_search_only_returns_head(
    tmp_path: Path,
    client: Any,
    kind: str,
    lagging: bool,
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    """After each kind of change, with the item projection caught up or stopped."""
    with open_store(tmp_path, chroma_client=client) as store:
        _make_history(store, kind)
        paris_row = row_id(tmp_path, ALICE, "home", 3)
        store.wait_for_index()
        if lagging:  # the projection stops catching up, as if its writer died
            vectors = store._search.vectors()
            monkeypatch.setattr(vectors, "catch_up", lambda **_: 0)
        current, stale = _change(store, kind)
        store.wait_for_index()
        vector_rows = {m["row"] for _, m in dump(client, named(client, ITEMS)).values()}
        # a lagging index still holds the Paris vector; one caught up does not
        assert (paris_row in vector_rows) is lagging
        if current is None:
            assert store.get(ALICE, "home") is None
        else:
            assert store.get(ALICE, "home").value == {"text": current}  # type: ignore[union-attr]
        for query in (*stale, current or "my home", CAT):
            found_by_meaning(store, ALICE, query, never=stale)
        if current is not None and not lagging:
            top = store.search(ALICE, query=current, limit=1)[0]
            assert (top.key, top.value) == ("home", {"text": current})
        assert store.search(ALICE, query=CAT, limit=1)[0].key == "pet"


def test_planted_stale_vectors_are_never_returned(tmp_path: Path, client: Any) -> None:
    with open_store(tmp_path, chroma_client=client) as store:
        store.put(ALICE, "home", {"text": BOSTON})  # v1
        store.put(ALICE, "home", {"text": PARIS})  # v2
        store.put(ALICE, "diary", {"text": DIARY})  # v3
        store.delete(ALICE, "diary")  # v4
        store.wait_for_index()
        items = client.get_collection(named(client, ITEMS))

        def plant(vid: str, text: str, key: str, row: int) -> None:
            items.upsert(
                ids=[vid],
                embeddings=[embed(text).tolist()],
                metadatas=[
                    {
                        "scope": scope_key(ALICE),
                        "item": item_id(ALICE, key),
                        "row": row,
                        "key": key,
                        "ns": "memories.alice",
                        "l0": "memories",
                        "l1": "alice",
                    }
                ],
            )

        spy = "I am secretly a spy"
        # an old version, an item deleted since, and a row that never was
        plant("planted-old", BOSTON, "home", row_id(tmp_path, ALICE, "home", 1))
        plant("planted-deleted", DIARY, "diary", row_id(tmp_path, ALICE, "diary", 3))
        plant("planted-bogus", spy, "home", 10_000)
        for text, vid in (
            (BOSTON, "planted-old"),
            (DIARY, "planted-deleted"),
            (spy, "planted-bogus"),
        ):
            nearest = items.query(query_embeddings=[embed(text).tolist()], n_results=1)
            assert nearest["ids"][0] == [vid]  # search has to reject the planted vector
            found = found_by_meaning(store, ALICE, text, never={BOSTON, DIARY})
            assert all(i.value == {"text": PARIS} for i in found)


def test_a_stale_vector_never_vouches_for_a_row_that_reuses_its_id(
    tmp_path: Path, client: Any, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The vector check compares log row ids; after `reset` SQLite reuses them.

    While the projection lags (a writer killed after its commit, another process
    searching), the Paris vector of a row that `reset` destroyed must not stand for
    the new Tokyo row that got the same id: a hit's score must be its own value's.
    """
    with open_store(tmp_path, chroma_client=client) as store:
        store.put(ALICE, "home", {"text": BOSTON})  # v1
        store.put(ALICE, "home", {"text": PARIS})  # v2
        monkeypatch.setattr(store._search, "after_commit", lambda known: None)
        store.reset(ALICE, to=1)
        store.put(ALICE, "home", {"text": TOKYO})  # v2 again, written after the reset
        for item in found_by_meaning(store, ALICE, PARIS, never={PARIS}):
            own = cosine(embed(PARIS), embed(item.value["text"]))
            assert item.score == pytest.approx(own, abs=1e-3), (
                f"{item.value} was returned for {PARIS!r} with score {item.score:.3f}, "
                f"the score of the destroyed Paris row (its own is {own:.3f})"
            )


# -- kill -9 between the SQLite commit and the Chroma update -------------------


@pytest.fixture(scope="module")
def crashed(
    tmp_path_factory: pytest.TempPathFactory,
) -> dict[tuple[str, str], tuple[Path, Any]]:
    """Every (kill point, action) child, run at once; each leaves a store behind."""
    env = {
        **os.environ,
        "PYTHONPATH": os.pathsep.join(
            filter(None, [str(REPO), os.environ.get("PYTHONPATH")])
        ),
    }
    started = {}
    for point in child.KILL_POINTS:
        for action in child.ACTIONS:
            root = tmp_path_factory.mktemp(f"crash-{point}-{action}")
            started[point, action] = (
                root,
                subprocess.Popen(
                    [
                        sys.executable,
                        "-m",
                        "tests._search_child",
                        str(root),
                        point,
                        action,
                    ],
                    cwd=REPO,
                    env=env,
                    stdout=subprocess.PIPE,
                    stderr=subprocess.PIPE,
                    text=True,
                ),
            )
    done = {}
    for key, (root, proc) in started.items():
        try:
            out, err = proc.communicate(timeout=120)
        except subprocess.TimeoutExpired:
            proc.kill()  # this child only, by its own handle
            out, err = proc.communicate()
        done[key] = root, (proc.returncode, out + err)
    return done


@pytest.mark.parametrize("action", child.ACTIONS)
@pytest.mark.parametrize("point", child.KILL_POINTS)
def test_kill_9_between_commit_and_chroma_update(
    crashed: dict[tuple[str, str], tuple[Path, Any]],
    point: str,
    action: str,
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    root, (returncode, output) = crashed[point, action]
    assert returncode == -signal.SIGKILL, output
    head, current, stale = child.expected(action)
    assert mark_of(root, ITEMS) < max_seq(root), (
        "the kill came before the projection's mark"
    )
    client = chroma(root / "chroma")

    # Opened without catching up, the half-synced index never leaks the stale value.
    with monkeypatch.context() as patched:
        patched.setattr(SearchIndex, "heal", lambda self: None)
        patched.setattr(VectorIndex, "catch_up", lambda self, **_: 0)
        with open_store(root) as store:
            assert store.head(ALICE) == head
            assert store.get(ALICE, "home").value == {"text": current}  # type: ignore[union-attr]
            for query in (stale, current, CAT):
                found_by_meaning(store, ALICE, query, never={stale})
        assert mark_of(root, ITEMS) < max_seq(root)

    # Reopened normally, the index catches up before the first search by meaning.
    with open_store(root) as store:
        top = store.search(ALICE, query=current, limit=1)[0]
        assert (top.key, top.value) == ("home", {"text": current})
        assert mark_of(root, ITEMS) == max_seq(root)
        vectors = dump(client, named(client, ITEMS))
        assert {m["row"] for _, m in vectors.values()} == head_row_ids(root)
        assert len(vectors) == 2
        found_by_meaning(store, ALICE, stale, never={stale})
        assert [c.version for c in store.log(ALICE)] == list(range(head, 0, -1))


# ==============================================================================
# 3. Invariant 1: reindex rebuilds every projection from the log, bit for bit
# ==============================================================================


def _projections(root: Path, client: Any) -> tuple[Any, ...]:
    fts = sorted(rows(root, "SELECT rowid, scope_key, length, terms FROM changes"))
    terms = rows(root, "SELECT * FROM change_terms ORDER BY scope_key, term, rowid")
    return (
        (fts, terms),
        dump(client, named(client, ITEMS)),
        dump(client, named(client, CHANGES)),
        marks(root),
    )


def test_reindex_rebuilds_every_projection_bit_for_bit(
    tmp_path: Path, client: Any
) -> None:
    with open_store(tmp_path, chroma_client=client) as store:
        store.put(ALICE, "home", {"text": BOSTON})
        store.put(ALICE, "pet", {"text": CAT})
        store.batch(
            [
                PutOp(ALICE, "home", {"text": PARIS}),
                PutOp(
                    ALICE,
                    "langs",
                    {"text": ["French is hard", "Japanese is harder"]},
                    index=["text[*]"],
                ),
                PutOp(ALICE, "secret", {"text": DIARY}, index=False),
                PutOp(
                    ALICE_WORK,
                    "boss",
                    {"text": "x", "note": {"who": "Dr. Smith"}},
                    index=["note.who"],
                ),
            ]
        )
        store.delete(ALICE, "pet")
        store.rollback(ALICE, to=2)
        store.put(ALICE, "food", {"text": "sushi and ramen"})
        store.revert(ALICE, 5)
        store.put(BOB, "tea", {"text": "green tea"})
        store.put(BOB, "chess", {"text": "I play chess"})
        store.reset(BOB, to=1)
        store.put(BOB, "short", {"text": "gone soon"}, ttl=0.002)
        time.sleep(0.2)
        assert store.sweep_ttl() == 1
        store.resolve(ALICE, "undo the sushi")  # the change collection catches up
        store.resolve(BOB, "undo the tea")
        assert store.wait_for_index(timeout=60)  # the follower applied the sweep too
        commits = rows(tmp_path, "SELECT count(*) FROM commits")[0][0]
        changes = rows(tmp_path, "SELECT count(*) FROM items")[0][0]
        valued = rows(tmp_path, "SELECT count(*) FROM items WHERE value IS NOT NULL")
        before = _projections(tmp_path, client)
        assert len(before[0][0]) == changes and len(before[2]) == valued[0][0]
        # a list field has one vector per element; a put can choose its own fields
        assert any(vid.endswith(":text[*].1") for vid in before[1])
        assert any(vid.endswith(":note.who") for vid in before[1])
        searched = [
            (i.key, i.score) for i in store.search(ALICE, query="languages", limit=10)
        ]
        resolved = store.resolve(ALICE, "undo my move to Paris")

        # Damage every projection, then rebuild from the log.
        con = sqlite3.connect(tmp_path / DATABASE_FILE)
        with con:
            con.execute(
                "DELETE FROM changes WHERE rowid = (SELECT min(rowid) FROM changes)"
            )
            con.execute(
                "INSERT INTO changes (rowid, scope_key, length, terms) "
                "VALUES (9999, 1, 2, 'junk')"
            )
        con.close()
        client.get_collection(named(client, ITEMS)).upsert(
            ids=["junk"], embeddings=[embed("junk").tolist()], metadatas=[{"row": 1}]
        )
        client.get_collection(named(client, CHANGES)).delete(
            ids=[next(iter(before[2]))]
        )

        reports: list[tuple[int, int]] = []
        count = store.reindex(lambda done, total: reports.append((done, total)))
        assert count == commits
        # one count over both collections, from 0 up to all of it
        assert reports[0] == (0, 2 * commits) and reports[-1] == (2 * commits,) * 2
        assert [done for done, _ in reports] == sorted(done for done, _ in reports)
        after = _projections(tmp_path, client)
        assert after[0] == before[0], "FTS rows differ"
        assert_same_vectors(before[1], after[1], "items")
        assert_same_vectors(before[2], after[2], "changes")
        assert after[3] == before[3], "projection marks differ"
        again = [
            (i.key, i.score) for i in store.search(ALICE, query="languages", limit=10)
        ]
        assert [k for k, _ in again] == [k for k, _ in searched]
        assert [s for _, s in again] == pytest.approx(
            [s for _, s in searched], abs=1e-5
        )
        assert (
            store.resolve(ALICE, "undo my move to Paris").candidates
            == resolved.candidates
        )


# ==============================================================================
# 4. The change index: any text is a request, scopes never mix
# ==============================================================================


@pytest.fixture(scope="module")
def moves_root(tmp_path_factory: pytest.TempPathFactory) -> Path:
    return tmp_path_factory.mktemp("moves")


@pytest.fixture(scope="module")
def moves(moves_root: Path) -> Iterator[ChronoStore]:
    """Alice: Boston, cat, NYC, sushi, Paris. Bob: tea, chess. Resolved, never changed.

    v1 home=Boston, v2 pet=cat, v3 home=NYC, v4 food=sushi, v5 home=Paris.
    """
    with ChronoStore.from_path(moves_root, scope_depth=2) as store:
        store.put(ALICE, "home", {"city": "Boston"})
        store.put(ALICE, "pet", {"kind": "cat"})
        store.put(ALICE, "home", {"city": "NYC"})
        store.put(ALICE, "food", {"dish": "sushi"})
        store.put(ALICE, "home", {"city": "Paris"})
        store.put(BOB, "drink", {"tea": "green tea"})
        store.put(BOB, "game", {"board": "chess"})
        yield store


NASTY = [
    'undo "NYC" AND NEAR(x*',
    'undo the "NYC',
    "undo the NYC'",
    "undo -NYC",
    "undo city:NYC",
    "undo home : NYC OR",
    "undo NOT NYC",
    "undo (NYC",
    "undo NYC)",
    "undo ^NYC*",
    'undo x" OR scope_key : "s',
    "undo {city}: NYC",
    "undo -",
    "undo :",
    '"',
    "*",
    "AND OR NOT",
    "undo NEAR(",
]


@pytest.mark.parametrize("request_", NASTY)
def test_fts_syntax_in_a_request_is_never_an_error(
    moves: ChronoStore, moves_root: Path, request_: str
) -> None:
    before = log_tables(moves_root)
    resolution = moves.resolve(ALICE, request_)
    assert resolution.head == 5
    for candidate in resolution.candidates:
        assert candidate.commit.scope == ALICE
    dry = moves.undo(ALICE, request_, dry_run=True)
    assert not dry.applied
    with moves._engine.transaction(write=False) as tx:
        bm25(tx, ALICE, request_, n=10)
        for side in ("new", "old"):
            words = [request_, '"', "NEAR(", "*", "-", ":"]
            tx.search_changes(ALICE, words, side=side, limit=10)
    assert log_tables(moves_root) == before
    if "nyc" in request_.lower():
        assert resolution.best is not None and "NYC" in resolution.best.summary


def test_requests_never_cross_scopes(moves: ChronoStore, moves_root: Path) -> None:
    bob_seqs = {c.seq for c in moves.log(BOB)}
    bob_versions = [c.version for c in moves.log(BOB)]
    with moves._engine.transaction(write=False) as tx:
        bob_rows = {r for v in bob_versions for r in tx.row_ids_of(BOB, v)}
    for request_ in (
        "undo my move to Paris",
        "go back to when I still lived in NYC",
        "undo the sushi",
    ):
        resolution = moves.resolve(BOB, request_)
        assert all(c.commit.scope == BOB for c in resolution.candidates), request_
        assert all(c.commit.seq in bob_seqs for c in resolution.candidates)
        assert not any(
            w in c.summary
            for c in resolution.candidates
            for w in ("Paris", "NYC", "sushi")
        )
    for request_ in ("undo the green tea", "undo chess"):
        assert all(
            c.commit.scope == ALICE for c in moves.resolve(ALICE, request_).candidates
        )
    with moves._engine.transaction(write=False) as tx:  # BM25 alone
        assert bm25(tx, BOB, "Paris NYC sushi Boston", n=50) == []
        assert {h.version for h in bm25(tx, ALICE, "Paris", n=50)} == {5}
    vectors = moves._search.vectors()  # dense alone
    hits = vectors.query_changes(BOB, embed("I moved to Paris").tolist(), n=50)
    assert hits and {h.row_id for h in hits} <= bob_rows
    assert (
        not {
            h.row_id
            for h in vectors.query_changes(ALICE, embed("green tea").tolist(), n=50)
        }
        & bob_rows
    )
    alice_before = log_tables(moves_root)
    assert not moves.undo(BOB, "undo my move to Paris", dry_run=True).applied
    assert log_tables(moves_root) == alice_before


# ==============================================================================
# 5. resolve()
# ==============================================================================


@pytest.mark.parametrize(
    ("request_", "kind", "matched", "target", "action"),
    [
        ("undo my move to Paris", "undo", 5, 4, "revert"),  # before the match
        ("forget that I like sushi", "undo", 4, 3, "revert"),
        ("go back to when I got my cat", "at", 2, 2, "rollback"),  # at the match
        # NYC held until Paris replaced it in v5; Boston until NYC, in v3
        ("go back to when I still lived in NYC", "still", 5, 4, "rollback"),
        ("go back to when I still lived in Boston", "still", 3, 2, "rollback"),
        ("bring back my NYC address", "restore", 5, 4, "revert"),
        ("go back to before I moved to Paris", "before", 5, 4, "rollback"),
        ("undo the last change", "undo", 5, 4, "revert"),  # no topic: the latest
    ],
)
def test_resolve_targets_by_intent(
    moves: ChronoStore,
    request_: str,
    kind: str,
    matched: int,
    target: int,
    action: str,
) -> None:
    resolution = moves.resolve(ALICE, request_)
    assert resolution.intent.kind == kind
    best = resolution.best
    assert best is not None and (best.commit.version, best.target) == (
        matched,
        target,
    ), [(c.id, c.target, c.summary) for c in resolution.candidates]
    assert best.action == action
    if action == "rollback":
        assert list(best.diff) == moves.diff(ALICE, 5, target)
    else:  # only the matched item goes back to its value before the change
        assert [(c.key, c.new) for c in best.diff] == [
            (c.key, c.old) for c in best.changes
        ]


def test_a_change_id_names_the_change_exactly(moves: ChronoStore) -> None:
    resolution = moves.resolve(ALICE, "3.1")
    assert resolution.decided and resolution.best is not None
    assert (resolution.best.id, resolution.best.commit.version) == ("3.1", 3)
    assert moves.resolve(ALICE, "undo change 3").best.id == "3"  # type: ignore[union-attr]
    assert moves.resolve(ALICE, "go back to 3").best.target == 3  # type: ignore[union-attr]
    missing = moves.resolve(ALICE, "9.1")
    assert missing.candidates == () and "no change 9.1" in missing.reason
    assert moves.resolve(ALICE, "3.7").candidates == ()


def test_resolve_exposes_every_stage_score(tmp_path: Path) -> None:
    reranked = ResolverConfig(reranker=PAIR_SCORER)  # a FlashRank model, named
    moves = ChronoStore.from_path(tmp_path, scope_depth=2, resolver=reranked)
    for key, value in [
        ("home", {"city": "Boston"}),
        ("pet", {"kind": "cat"}),
        ("home", {"city": "NYC"}),
        ("food", {"dish": "sushi"}),
        ("home", {"city": "Paris"}),
    ]:
        moves.put(ALICE, key, value)
    resolution = moves.resolve(ALICE, "undo my move to Paris", k=5)
    assert len(resolution.candidates) >= 3
    best = resolution.best
    assert best is not None
    assert best.scores.bm25_rank == 1
    for candidate in resolution.candidates:
        assert isinstance(candidate.scores.rerank, float)
        assert candidate.scores.rrf > 0 and 0 <= candidate.scores.coverage <= 1
    reranks = [c.scores.rerank for c in resolution.candidates if c.scores.rerank]
    assert len(reranks) == len(resolution.candidates)
    assert reranks == sorted(reranks, reverse=True)
    assert len(moves.resolve(ALICE, "undo my move to Paris", k=1).candidates) == 1
    moves.close()


def test_without_a_cross_encoder_the_default_keeps_the_fused_order(
    moves: ChronoStore, caplog: pytest.LogCaptureFixture
) -> None:
    """Offline, FlashRank's cross-encoder is missing; the stand-in is not used
    unless named, so candidates come in RRF order."""
    with caplog.at_level(logging.WARNING):
        resolution = moves.resolve(ALICE, "undo my move to Paris", k=5)
        again = moves.resolve(ALICE, "undo my move to NYC", k=5)
    candidates = (*resolution.candidates, *again.candidates)
    assert all(c.scores.rerank is None for c in candidates)
    fused = [c.scores.rrf for c in resolution.candidates]
    assert fused == sorted(fused, reverse=True)
    assert resolution.best is not None and resolution.best.commit.version == 5
    notice = "with no cross-encoder rerank"
    warned = [r for r in caplog.records if notice in r.getMessage()]
    assert len(warned) <= 1  # said once per process, not per request


def test_resolve_changes_nothing(moves: ChronoStore, moves_root: Path) -> None:
    before = log_tables(moves_root), moves.head(ALICE), head_state(moves, ALICE)
    for request_ in (
        "undo my move to Paris",
        "redo",
        "undo the last change",
        "go back to when I got my cat",
    ):
        moves.resolve(ALICE, request_)
        moves.undo(ALICE, request_, dry_run=True)
    assert (
        log_tables(moves_root),
        moves.head(ALICE),
        head_state(moves, ALICE),
    ) == before


def test_a_request_matching_nothing_changes_nothing(
    moves: ChronoStore, tmp_path: Path
) -> None:
    result = moves.undo(ALICE, "undo my trip to Zanzibar")
    assert not result.applied and moves.head(ALICE) == 5
    with ChronoStore.from_path(tmp_path, scope_depth=2) as empty:
        assert "no history" in empty.resolve(ALICE, "undo my move to Paris").reason
        assert not empty.undo(ALICE, "undo my move to Paris").applied


async def test_aresolve_matches_resolve(moves: ChronoStore) -> None:
    sync = moves.resolve(ALICE, "undo my move to Paris")
    async_ = await moves.aresolve(ALICE, "undo my move to Paris")
    assert [(c.id, c.target) for c in async_.candidates] == [
        (c.id, c.target) for c in sync.candidates
    ]


def test_redo_undoes_the_last_rollback(tmp_path: Path) -> None:
    with ChronoStore.from_path(tmp_path, scope_depth=2) as store:
        store.put(ALICE, "home", {"city": "Boston"})
        store.put(ALICE, "home", {"city": "Paris"})
        assert "no rollback" in store.resolve(ALICE, "redo").reason
        store.rollback(ALICE, to=1)  # v3
        for request_ in ("redo", "undo the undo", "put it back"):
            resolution = store.resolve(ALICE, request_)
            assert resolution.intent.kind == "redo" and resolution.decided
            assert (resolution.best.target, resolution.best.commit.version) == (2, 3)  # type: ignore[union-attr]
        result = store.undo(ALICE, "redo")
        assert result.applied and store.get(ALICE, "home").value == {"city": "Paris"}  # type: ignore[union-attr]
        assert store.head(ALICE) == 4


def test_redo_after_later_writes_keeps_them(tmp_path: Path) -> None:
    with ChronoStore.from_path(tmp_path, scope_depth=2) as store:
        store.put(ALICE, "home", {"city": "Boston"})
        store.put(ALICE, "home", {"city": "Paris"})
        store.rollback(ALICE, to=1)  # v3
        store.put(ALICE, "pet", {"kind": "cat"})  # v4, after the rollback
        result = store.undo(ALICE, "redo")
        assert result.applied and result.commit.op == "revert"  # type: ignore[union-attr]
        assert head_state(store, ALICE) == {
            (ALICE, "home"): {"city": "Paris"},
            (ALICE, "pet"): {"kind": "cat"},
        }


def test_a_time_in_the_request_prefers_the_changes_made_then(tmp_path: Path) -> None:
    now = datetime.now(timezone.utc)
    yesterday_noon = now.replace(hour=0, minute=0, second=0, microsecond=0) - timedelta(
        hours=12
    )
    with ChronoStore.from_path(tmp_path, scope_depth=2) as store:
        with commit_context(timestamp=now - timedelta(days=3)):
            store.put(ALICE, "home", {"city": "Boston"})  # v1
        with commit_context(timestamp=yesterday_noon):
            store.put(ALICE, "home", {"city": "NYC"})  # v2
        store.put(ALICE, "home", {"city": "Paris"})  # v3, today
        resolution = store.resolve(ALICE, "undo yesterday's change to my city")
        assert resolution.intent.window is not None
        assert resolution.best is not None and resolution.best.commit.version == 2
        # no topic: the latest commit in the window
        latest = store.resolve(ALICE, "undo yesterday's change")
        assert [(c.commit.version, c.target) for c in latest.candidates] == [(2, 1)]
        everything = store.resolve(ALICE, "undo the change to my city")
        assert {c.commit.version for c in everything.candidates} == {1, 2, 3}
        # a date the person meant as when something happened, not when it was
        # saved, does not hide the change
        long_ago = store.resolve(ALICE, "undo my move to Paris back in 2019")
        assert long_ago.best is not None and long_ago.best.commit.version == 3


def test_two_near_identical_candidates_are_offered_not_guessed(tmp_path: Path) -> None:
    with ChronoStore.from_path(tmp_path, scope_depth=2) as store:
        store.put(ALICE, "trip", {"city": "Paris"})  # v1
        store.delete(ALICE, "trip")  # v2
        store.put(ALICE, "trip", {"city": "Paris"})  # v3: the very same words as v1
        store.put(ALICE, "pet", {"kind": "cat"})  # v4
        resolution = store.resolve(ALICE, "undo my trip to Paris")
        assert not resolution.decided
        first, second = resolution.candidates[:2]
        assert {first.commit.version, second.commit.version} == {1, 3}
        before = log_tables(tmp_path)
        result = store.undo(ALICE, "undo my trip to Paris")
        assert not result.applied and result.commit is None
        assert "1.1" in result.message and "3.1" in result.message
        assert log_tables(tmp_path) == before


def test_resolver_knobs(tmp_path: Path) -> None:
    config = ResolverConfig(rrf_k=10, rrf_weights=(1.0, 0.5), rerank_top=0)
    with ChronoStore.from_path(tmp_path, scope_depth=2, resolver=config) as store:
        store.put(ALICE, "home", {"city": "Boston"})
        store.put(ALICE, "pet", {"kind": "cat"})
        store.put(ALICE, "home", {"city": "Paris"})
        resolution = store.resolve(ALICE, "undo my move to Paris")
        assert resolution.best is not None and resolution.best.commit.version == 3
        assert all(c.scores.rerank is None for c in resolution.candidates)
    for retrievers in ({"bm25"}, {"dense"}):  # one search alone never acts alone
        alone = ResolverConfig(retrievers=frozenset(retrievers), rerank_top=0)
        with ChronoStore.from_path(tmp_path, resolver=alone) as store:
            resolution = store.resolve(ALICE, "undo my move to Paris")
            assert resolution.best is not None and not resolution.decided


# ==============================================================================
# 6. undo()
# ==============================================================================


@pytest.fixture
def moved(tmp_path: Path, client: Any) -> Iterator[ChronoStore]:
    """v1 home=Boston, v2 home=NYC (the move), v3 pet=cat (later, unrelated)."""
    with open_store(tmp_path, chroma_client=client) as store:
        store.put(ALICE, "home", {"text": "I live in Boston"})
        store.put(ALICE, "home", {"text": "I moved to New York City"})
        store.put(ALICE, "pet", {"text": CAT})
        yield store


def test_undo_is_surgical_and_every_read_sees_it(moved: ChronoStore) -> None:
    result = moved.undo(ALICE, "undo my move to New York City")
    assert result.applied, result.message
    assert result.candidate is not None and result.candidate.id == "2.1"
    assert (result.commit.op, result.commit.target, result.redo) == ("revert", 2, 3)  # type: ignore[union-attr]
    assert head_state(moved, ALICE) == {
        (ALICE, "home"): {"text": "I live in Boston"},
        (ALICE, "pet"): {"text": CAT},  # later and unrelated: kept
    }
    assert [c.key for c in result.changes] == ["home"]
    found = found_by_meaning(
        moved, ALICE, "New York City", never={"I moved to New York City"}
    )
    assert {i.key for i in found} == {"home", "pet"}
    assert "New York City" in result.message and "Boston" in result.message


def test_undo_whole_scope_when_asked(moved: ChronoStore) -> None:
    result = moved.undo(ALICE, "undo my move to New York City", mode="rollback")
    assert result.applied and result.commit.op == "rollback"  # type: ignore[union-attr]
    assert head_state(moved, ALICE) == {(ALICE, "home"): {"text": "I live in Boston"}}
    assert [c.key for c in result.changed] == ["home"]
    assert [c.key for c in result.removed] == ["pet"]
    for query in ("New York City", "Boston", CAT):
        found = found_by_meaning(
            moved, ALICE, query, never={"I moved to New York City", CAT}
        )
        assert [i.key for i in found] == ["home"]


def test_rolling_back_to_redo_redoes_the_undo(moved: ChronoStore) -> None:
    before = head_state(moved, ALICE)
    result = moved.undo(ALICE, "undo my move to New York City")
    assert f"roll back to v{result.redo}" in result.message
    moved.rollback(ALICE, to=result.redo)  # type: ignore[arg-type]
    assert head_state(moved, ALICE) == before
    top = moved.search(ALICE, query="New York", limit=1)[0]
    assert top.value == {"text": "I moved to New York City"}


def test_undo_conflict_is_reported_and_applies_nothing(tmp_path: Path) -> None:
    with ChronoStore.from_path(tmp_path, scope_depth=2) as store:
        store.put(ALICE, "profile", {"city": "Boston"})
        with commit_context(reason="moved to New York for a new job"):
            store.put(ALICE, "profile", {"city": "New York"})  # v2
        # v3 changes the same item again
        store.put(ALICE, "profile", {"city": "New York", "phone": "555-0100"})
        before = log_tables(tmp_path)
        result = store.undo(ALICE, "2.1")
        assert not result.applied and result.commit is None
        assert isinstance(result.conflict, RevertConflict)
        assert result.conflict.version == 2
        (conflict,) = result.conflict.conflicts
        assert (conflict.key, conflict.later_versions) == ("profile", (3,))
        assert conflict.wrote == {"city": "New York"}
        assert conflict.now == {"city": "New York", "phone": "555-0100"}
        assert conflict.before == {"city": "Boston"}
        assert "v3" in result.message and "force=True" in result.message
        assert log_tables(tmp_path) == before
        forced = store.undo(ALICE, "2.1", force=True)
        assert forced.applied and store.get(ALICE, "profile").value == {
            "city": "Boston"
        }  # type: ignore[union-attr]


def test_undo_dry_run_reports_a_revert_conflict(tmp_path: Path) -> None:
    with ChronoStore.from_path(tmp_path, scope_depth=2) as store:
        store.put(ALICE, "home", {"city": "Boston"})
        store.put(ALICE, "home", {"city": "Paris"})
        store.rollback(ALICE, to=1)  # v3
        # v4 touches what a redo would revert
        store.put(ALICE, "home", {"city": "Rome"})
        dry = store.undo(ALICE, "redo", dry_run=True)
        real = store.undo(ALICE, "redo")
        assert not real.applied and real.conflict is not None
        assert dry.conflict is not None and not dry.message.startswith("would "), (
            f"dry run promised {dry.message!r}; applying said {real.message!r}"
        )


def test_undo_when_memory_already_is_as_asked(tmp_path: Path) -> None:
    with ChronoStore.from_path(tmp_path, scope_depth=2) as store:
        store.put(ALICE, "home", {"city": "Boston"})
        store.put(ALICE, "home", {"city": "NYC"})
        store.revert(ALICE, 2)  # v3: Boston again
        before = log_tables(tmp_path)
        result = store.undo(ALICE, "2.1")
        assert not result.applied and "already" in result.message
        assert log_tables(tmp_path) == before


@pytest.mark.parametrize(
    ("request_", "must_hold"),
    [
        ("go back to when I got my cat", ("pet", {"kind": "cat"})),
        ("go back to when I still lived in NYC", ("home", {"city": "NYC"})),
    ],
)
def test_revert_mode_never_undoes_what_a_go_back_request_asks_for(
    tmp_path: Path, request_: str, must_hold: tuple[str, dict[str, Any]]
) -> None:
    """`at` and `still` name a state to return to; revert mode must not invert it."""
    with ChronoStore.from_path(tmp_path, scope_depth=2) as store:
        store.put(ALICE, "home", {"city": "Boston"})  # v1
        store.put(ALICE, "pet", {"kind": "cat"})  # v2
        store.put(ALICE, "home", {"city": "NYC"})  # v3
        store.put(ALICE, "food", {"dish": "sushi"})  # v4
        store.put(ALICE, "home", {"city": "Paris"})  # v5
        resolution = store.resolve(ALICE, request_, mode="revert")
        assert resolution.best is not None and resolution.best.action == "rollback"
        result = store.apply(ALICE, resolution, choice=0)
        key, value = must_hold
        held = store.get(ALICE, key)
        assert held is not None and held.value == value, (
            f"{request_!r} in revert mode removed what it asked to go back to: "
            f"{result.message}"
        )


@pytest.mark.parametrize("mode", ["rollback", "revert"])
def test_undo_dry_run_changes_nothing_and_reports_what_apply_does(
    moved: ChronoStore, tmp_path: Path, mode: str
) -> None:
    before = log_tables(tmp_path)
    dry = moved.undo(ALICE, "2.1", mode=mode, dry_run=True)  # type: ignore[arg-type]
    assert not dry.applied and dry.commit is None and dry.message.startswith("would ")
    assert log_tables(tmp_path) == before
    real = moved.undo(ALICE, "2.1", mode=mode)  # type: ignore[arg-type]
    assert real.applied
    assert sorted(dry.changes, key=str) == sorted(real.changes, key=str), (
        f"dry run said {dry.message!r}, the {mode} did {real.message!r}"
    )


def test_undo_refuses_a_resolution_the_store_has_moved_past(
    moved: ChronoStore, tmp_path: Path
) -> None:
    resolution = moved.resolve(ALICE, "2.1")
    assert resolution.decided and resolution.head == 3
    moved.put(ALICE, "food", {"text": "sushi"})  # v4, between resolve and apply
    before = log_tables(tmp_path)
    result = apply_undo(
        moved._engine, ALICE, resolution, dry_run=False, meta=CommitMeta()
    )
    assert not result.applied and "changed" in result.message
    assert log_tables(tmp_path) == before


def test_undo_refuses_a_resolution_made_before_a_reset_and_rewrite(
    tmp_path: Path,
) -> None:
    """HEAD has the same number again, but it is another history: leave it alone."""
    with ChronoStore.from_path(tmp_path, scope_depth=2) as store:
        store.put(ALICE, "home", {"city": "Boston"})
        store.put(ALICE, "pet", {"kind": "cat"})
        store.put(ALICE, "home", {"city": "Paris"})  # v3
        resolution = store.resolve(ALICE, "3.1")
        assert resolution.decided and resolution.head == 3
        store.reset(ALICE, to=2)
        store.put(ALICE, "job", {"title": "nurse"})  # a different v3
        before = log_tables(tmp_path)
        result = apply_undo(
            store._engine, ALICE, resolution, dry_run=False, meta=CommitMeta()
        )
        assert not result.applied, f"changed a history it never saw: {result.message}"
        assert store.get(ALICE, "job") is not None
        assert log_tables(tmp_path) == before


async def test_aundo(moved: ChronoStore) -> None:
    result = await moved.aundo(ALICE, "undo my move to New York City")
    assert result.applied
    found = await moved.asearch(ALICE, query="New York City", limit=10)
    assert {i.value["text"] for i in found} == {"I live in Boston", CAT}


# -- the index settings travel with the store ---------------------------------


def test_opened_without_index_a_store_reuses_its_default_model_index(
    tmp_path: Path, client: Any
) -> None:
    """The `chronomem` command opens stores without `index`: it must still search
    by meaning with the settings the application used."""
    with open_store(tmp_path, chroma_client=client) as store:
        put_toy_items(store)
    with ChronoStore.from_path(tmp_path, chroma_client=client) as store:
        assert store.index_config is None
        found = store.search(ALICE, query="playing music", limit=1)
        assert [i.key for i in found] == ["violin"] and found[0].score is not None
        assert store.resolve(ALICE, "undo the violin").best is not None


def test_opened_without_its_custom_model_a_store_refuses_rather_than_reembeds(
    tmp_path: Path, client: Any
) -> None:
    index = {"fields": ["text"], "embed": toy_embed}
    with open_store(tmp_path, index=index, chroma_client=client) as store:
        put_toy_items(store)
        store.resolve(ALICE, "undo the garden")
    before = dump(client, named(client, CHANGES))
    with ChronoStore.from_path(tmp_path, chroma_client=client) as store:
        with pytest.raises(ConfigError, match="same index="):
            store.resolve(ALICE, "undo the garden")
        with pytest.raises(ConfigError, match="same index="):
            store.reindex()
        assert store.get(ALICE, "garden") is not None, "plain reads still work"
    assert dump(client, named(client, CHANGES)).keys() == before.keys(), (
        "nothing was re-embedded"
    )
    with open_store(tmp_path, index=index, chroma_client=client) as store:
        assert store.resolve(ALICE, "undo the garden").best is not None


def test_a_match_in_meaning_alone_too_weak_to_trust_is_offered_not_applied(
    tmp_path: Path,
) -> None:
    """Nothing about Milan is in carol's memory: the nearest change shares no word
    with the request and is barely similar, so undo must not act on it."""
    carol = ("memories", "carol")
    with ChronoStore.from_path(tmp_path, scope_depth=2) as store:
        store.put(carol, "pet", {"content": "has a parrot named Kiwi"})
        store.put(carol, "home", {"content": "lives in Lisbon"})
        result = store.undo(carol, "forget that I moved to Milan")
        assert not result.applied and not result.resolution.decided
        assert store.get(carol, "home").value == {"content": "lives in Lisbon"}
        assert store.head(carol) == 2
