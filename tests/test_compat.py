"""LangGraph's store contract, asserted for ChronoStore and for LangGraph's own stores.

Every test runs four times: on `ChronoStore` through its sync methods and through
their async twins, and, as the control, on LangGraph's `SqliteStore` and
`AsyncSqliteStore`. The expectations are written out, from what LangGraph
documents and its own store suites check: basic item operations, batches, search
order, pages and scores (semantic search with a deterministic embedding, checked
against brute-force cosine similarity), filters, namespace listing, TTL and
concurrent async calls. A test the control fails is a wrong test; where
`ChronoStore` differs on purpose, the difference is listed in
docs/how-to/swap-store.md and tested in tests/test_store_contract.py.

`SqliteStore`'s vector search loads the sqlite-vec extension, which a Python whose
`sqlite3` cannot load extensions (pyenv's default build) gets from
`pysqlite3-binary`, a test dependency; without either, those controls skip.
"""

from __future__ import annotations

import asyncio
import concurrent.futures
import contextlib
import itertools
import math
import sqlite3
import time
from collections.abc import AsyncIterator, Awaitable, Callable
from pathlib import Path
from types import ModuleType
from typing import Any, Protocol

import aiosqlite
import pytest
from langgraph.store.base import (
    BaseStore,
    GetOp,
    IndexConfig,
    InvalidNamespaceError,
    Item,
    ListNamespacesOp,
    PutOp,
    SearchOp,
    TTLConfig,
)
from langgraph.store.sqlite import SqliteStore
from langgraph.store.sqlite.aio import AsyncSqliteStore

from langgraph_chronomem import ChronoStore

Namespace = tuple[str, ...]


def _sqlite_with_extensions() -> ModuleType | None:
    """A `sqlite3` module whose connections can load sqlite-vec, if there is one."""
    if hasattr(sqlite3.Connection, "enable_load_extension"):
        return sqlite3
    try:
        import pysqlite3.dbapi2 as module  # type: ignore[import-not-found]
    except ImportError:
        return None
    return module


SQLITE_WITH_EXTENSIONS = _sqlite_with_extensions()


class Driver:
    """A store, driven through its sync methods or through their async twins.

    `await driver.put(...)` calls `store.put(...)`, or awaits `store.aput(...)`.
    The async TTL methods are the exception: `AsyncSqliteStore` gives them the
    sync names (`await store.sweep_ttl()`), `ChronoStore` the `a` prefix of its
    other async methods (`await store.asweep_ttl()`), so the async call is the
    `a` name where the store has one.
    """

    def __init__(self, store: BaseStore, *, asynchronous: bool) -> None:
        self.store = store
        self.asynchronous = asynchronous

    def __getattr__(self, name: str) -> Callable[..., Awaitable[Any]]:
        if self.asynchronous:
            twin = getattr(self.store, "a" + name, None)
            return twin or getattr(self.store, name)
        method = getattr(self.store, name)

        async def call(*args: Any, **kwargs: Any) -> Any:
            return method(*args, **kwargs)

        return call


class Open(Protocol):
    """Opens a store of the test's kind, with LangGraph's index and TTL configs."""

    async def __call__(
        self, *, index: IndexConfig | None = None, ttl: TTLConfig | None = None
    ) -> Driver: ...


ASYNC = {"ChronoStore-async", "AsyncSqliteStore"}


@pytest.fixture(
    params=["ChronoStore", "ChronoStore-async", "SqliteStore", "AsyncSqliteStore"]
)
async def open_store(
    request: pytest.FixtureRequest, tmp_path: Path
) -> AsyncIterator[Open]:
    """Opens stores of one kind (closed after the test), each in its own file."""
    kind: str = request.param
    count = itertools.count()
    async with contextlib.AsyncExitStack() as stack:

        async def open_(
            *, index: IndexConfig | None = None, ttl: TTLConfig | None = None
        ) -> Driver:
            path = tmp_path / f"store{next(count)}"
            module = sqlite3
            if index is not None and not kind.startswith("Chrono"):
                if SQLITE_WITH_EXTENSIONS is None:
                    pytest.skip(
                        "SqliteStore's vector search needs a sqlite3 that loads "
                        "extensions: pip install pysqlite3-binary"
                    )
                module = SQLITE_WITH_EXTENSIONS

            def connect() -> sqlite3.Connection:
                return module.connect(  # type: ignore[no-any-return]
                    str(path), check_same_thread=False, isolation_level=None
                )

            store: BaseStore
            if kind == "ChronoStore":
                store = stack.enter_context(
                    ChronoStore.from_path(path, index=index, ttl=ttl)
                )
            elif kind == "ChronoStore-async":
                store = await stack.enter_async_context(
                    ChronoStore.from_path(path, index=index, ttl=ttl)
                )
            elif kind == "SqliteStore":
                conn = connect()
                stack.callback(conn.close)
                store = SqliteStore(conn, index=index, ttl=ttl)  # type: ignore[arg-type]
                stack.callback(store.stop_ttl_sweeper)
                store.setup()
            else:
                aconn = await aiosqlite.Connection(connect, iter_chunk_size=64)
                stack.push_async_callback(aconn.close)
                astore = AsyncSqliteStore(aconn, index=index, ttl=ttl)  # type: ignore[arg-type]
                stack.push_async_callback(astore.stop_ttl_sweeper)
                await astore.setup()
                store = astore
            return Driver(store, asynchronous=kind in ASYNC)

        yield open_


async def test_put_get_update_delete(open_store: Open) -> None:
    store = await open_store()
    ns = ("users", "1")
    assert await store.put(ns, "prefs", {"theme": "dark", "size": 3}) is None
    first = await store.get(ns, "prefs")
    assert isinstance(first, Item)
    assert (first.namespace, first.key) == (ns, "prefs")
    assert first.value == {"theme": "dark", "size": 3}
    assert first.updated_at >= first.created_at
    await store.put(ns, "prefs", {"theme": "light"})
    second = await store.get(ns, "prefs")
    assert second.value == {"theme": "light"}, "a put replaces the whole value"
    assert second.updated_at >= first.updated_at
    assert await store.get(ns, "missing") is None
    assert await store.get(("users", "2"), "prefs") is None
    await store.delete(ns, "prefs")
    assert await store.get(ns, "prefs") is None
    await store.delete(ns, "prefs")  # deleting what is gone is no error
    assert await store.search(("users",)) == []
    assert await store.list_namespaces() == []


@pytest.mark.parametrize(
    "namespace",
    [(), ("a.b",), ("a", ""), ("langgraph", "x"), ("a", 1)],
    ids=repr,
)
async def test_invalid_namespaces_are_refused(
    open_store: Open, namespace: tuple[Any, ...]
) -> None:
    store = await open_store()
    with pytest.raises(InvalidNamespaceError):
        await store.put(namespace, "k", {"v": 1})
    assert await store.search(()) == []


# -- batches -----------------------------------------------------------------


async def test_batch_returns_results_in_op_order(open_store: Open) -> None:
    store = await open_store()
    await store.put(("test", "foo"), "key1", {"data": "value1"})
    await store.put(("test", "bar"), "key2", {"data": "value2"})
    results = await store.batch(
        [
            GetOp(("test", "foo"), "key1"),
            PutOp(("test", "bar"), "key2", {"data": "value2"}),
            SearchOp(("test",), filter={"data": "value1"}),
            ListNamespacesOp(match_conditions=None, max_depth=None, limit=10),
            GetOp(("test",), "key3"),
        ]
    )
    assert len(results) == 5
    assert results[0].value == {"data": "value1"} and results[0].key == "key1"
    assert results[1] is None
    assert [(i.namespace, i.key) for i in results[2]] == [(("test", "foo"), "key1")]
    assert results[3] == [("test", "bar"), ("test", "foo")]
    assert results[4] is None


async def test_batch_reads_see_the_state_before_its_writes(open_store: Open) -> None:
    store = await open_store()
    ns = ("users", "1")
    await store.put(ns, "a", {"v": "old"})
    results = await store.batch(
        [
            PutOp(ns, "a", {"v": "new"}),
            GetOp(ns, "a"),
            SearchOp(ns),
            PutOp(ns, "b", {"v": "b"}),
        ]
    )
    assert results[1].value == {"v": "old"}
    assert [i.value for i in results[2]] == [{"v": "old"}]
    assert (await store.get(ns, "a")).value == {"v": "new"}
    assert (await store.get(ns, "b")).value == {"v": "b"}


async def test_batch_keeps_the_last_put_to_a_key(open_store: Open) -> None:
    store = await open_store()
    ns = ("users", "1")
    await store.put(ns, "gone", {"v": 0})
    await store.batch(
        [
            PutOp(ns, "a", {"v": 1}),
            PutOp(ns, "a", {"v": 2}),
            PutOp(ns, "b", {"v": 1}),
            PutOp(ns, "b", None),
            PutOp(ns, "gone", None),
        ]
    )
    assert (await store.get(ns, "a")).value == {"v": 2}
    assert await store.get(ns, "b") is None
    assert await store.get(ns, "gone") is None, "a put of None deletes"


async def test_concurrent_calls_lose_no_write(open_store: Open) -> None:
    """Many calls at once: through `asyncio.gather`, or from threads for sync code."""
    store = await open_store()

    async def one_user(user: int) -> None:
        ns = ("users", str(user))
        for n in range(6):
            await store.put(ns, f"k{n}", {"n": n})
            assert (await store.get(ns, f"k{n}")).value == {"n": n}
            await store.search(ns)
            await store.list_namespaces(prefix=("users",))
        await store.delete(ns, "k0")

    if store.asynchronous:
        await asyncio.gather(*(one_user(user) for user in range(8)))
    else:
        with concurrent.futures.ThreadPoolExecutor(4) as pool:
            list(pool.map(lambda user: asyncio.run(one_user(user)), range(8)))
    found = await store.search(("users",), limit=100)
    assert len(found) == 8 * 5
    assert len(await store.list_namespaces(prefix=("users",))) == 8


# -- search without a query --------------------------------------------------

DOCS: dict[tuple[Namespace, str], dict[str, Any]] = {
    (("docs", "a"), "1"): {
        "kind": "note",
        "score": 5,
        "flag": True,
        "tags": ["x", "y"],
        "meta": {"lang": "en", "n": 2},
    },
    (("docs", "a"), "2"): {
        "kind": "note",
        "score": 7.5,
        "flag": False,
        "meta": {"lang": "fr", "n": 3},
    },
    (("docs", "b"), "3"): {
        "kind": "task",
        "score": 1,
        "flag": True,
        "tags": ["y"],
        "meta": {"lang": "en"},
    },
    (("docs", "b", "c"), "4"): {"kind": "task", "score": "high", "none": None},
    (("other",), "5"): {"kind": "note", "score": 3},
}


async def _open_docs(open_store: Open) -> Driver:
    store = await open_store()
    for (ns, key), value in DOCS.items():
        await store.put(ns, key, value)
    return store


FILTERS: list[tuple[dict[str, Any], list[str]]] = [
    ({"kind": "note"}, ["1", "2", "5"]),
    ({"kind": {"$eq": "note"}}, ["1", "2", "5"]),
    ({"kind": {"$ne": "note"}}, ["3", "4"]),
    ({"score": 5}, ["1"]),
    ({"score": 7.5}, ["2"]),
    ({"score": {"$gt": 4}}, ["1", "2"]),
    ({"score": {"$gte": 5}}, ["1", "2"]),
    ({"score": {"$gt": 1, "$lt": 7}}, ["1", "5"]),
    ({"score": {"$ne": 5}}, ["2", "3", "4", "5"]),
    ({"flag": True}, ["1", "3"]),
    ({"flag": False}, ["2"]),
    ({"flag": {"$ne": True}}, ["2"]),
    ({"meta.lang": "en"}, ["1", "3"]),
    ({"meta.lang": {"$ne": "en"}}, ["2"]),
    ({"meta.n": {"$gte": 2}}, ["1", "2"]),
    ({"tags": ["x", "y"]}, ["1"]),
    ({"none": None}, ["1", "2", "3", "4", "5"]),
    ({"missing": None}, ["1", "2", "3", "4", "5"]),
    ({"kind": "note", "score": {"$gt": 4}}, ["1", "2"]),
    ({"kind": "nothing"}, []),
    ({"meta.n": {"$lt": math.inf}}, ["1", "2"]),
    ({"meta.n": {"$gt": -math.inf}}, ["1", "2"]),
    ({"meta.n": {"$lt": 10**100}}, ["1", "2"]),
]


async def test_filters_select_the_documented_items(open_store: Open) -> None:
    """Exact matches, `$eq $ne $gt $gte $lt $lte`, dotted paths, several keys (AND)."""
    store = await _open_docs(open_store)
    found = {
        repr(filter): sorted(i.key for i in await store.search((), filter=filter))
        for filter, _ in FILTERS
    }
    assert found == {repr(filter): keys for filter, keys in FILTERS}


async def test_filters_never_leak_through_their_text(open_store: Open) -> None:
    store = await open_store()
    ns = ("docs",)
    await store.put(ns, "public", {"access": "public", "title": "O'Brien's notes"})
    await store.put(ns, "private", {"access": "private", "password": "123"})
    for value in ["public' OR '1'='1", "public'; --", "x' UNION SELECT * FROM t --"]:
        assert await store.search(ns, filter={"access": value}) == []
    quoted = await store.search(ns, filter={"title": "O'Brien's notes"})
    assert [i.key for i in quoted] == ["public"]
    key = "access') = 'public' OR '1'='1' OR json_extract(value, '$."
    with contextlib.suppress(ValueError):  # SqliteStore refuses such keys
        assert await store.search(ns, filter={key: "x"}) == []


async def test_search_prefix_matches_whole_labels(open_store: Open) -> None:
    store = await open_store()
    for ns in [("foo",), ("foo", "child"), ("foobar",), ("Foo",), ("a", "foo")]:
        await store.put(ns, "k", {"v": 1})

    async def namespaces(prefix: Namespace) -> set[Namespace]:
        return {i.namespace for i in await store.search(prefix, limit=100)}

    assert await namespaces(("foo",)) == {("foo",), ("foo", "child")}
    assert await namespaces(("Foo",)) == {("Foo",)}
    assert await namespaces(("fo",)) == set()
    assert len(await namespaces(())) == 5


async def test_search_lists_the_newest_update_first(open_store: Open) -> None:
    store = await open_store()
    ns = ("notes",)
    await store.put(ns, "a", {"v": 1})
    await store.put(ns, "b", {"v": 1})
    time.sleep(1.05)  # SqliteStore keeps whole seconds
    await store.put(ns, "a", {"v": 2})
    assert [i.key for i in await store.search(ns)] == ["a", "b"]


async def test_search_pages_split_the_listing(open_store: Open) -> None:
    store = await open_store()
    await store.batch([PutOp(("pages",), f"k{n}", {"n": n}) for n in range(7)])
    everything = [i.key for i in await store.search(("pages",), limit=100)]
    pages = [await store.search(("pages",), limit=3, offset=o) for o in (0, 3, 6)]
    assert [len(page) for page in pages] == [3, 3, 1]
    assert [i.key for page in pages for i in page] == everything
    assert sorted(everything) == [f"k{n}" for n in range(7)]
    assert [i.score for page in pages for i in page] == [None] * 7


# -- search by meaning ---------------------------------------------------------

LETTERS = "abcdefghijklmnopqrstuvwxyz"


def embed(texts: list[str]) -> list[list[float]]:
    """Letter counts: deterministic, and different words rarely tie."""
    return [[float(text.count(c)) for c in LETTERS] + [0.5] for text in texts]


def cosine(a: list[float], b: list[float]) -> float:
    dot = sum(x * y for x, y in zip(a, b, strict=True))
    return dot / math.sqrt(sum(x * x for x in a) * sum(y * y for y in b))


def similarity(query: str, text: str) -> float:
    return cosine(*embed([query, text]))


def indexed_by(*fields: str) -> Any:
    """One index config for every store: `fields` is `IndexConfig`'s key (what
    ChronoStore and InMemoryStore read), `text_fields` the one SqliteStore reads."""
    texts = list(fields)
    dims = len(LETTERS) + 1
    return {"dims": dims, "embed": embed, "fields": texts, "text_fields": texts}


FRUIT = {
    "apple": {"text": "red apple", "color": "red"},
    "berry": {"text": "blueberry jam", "color": "blue"},
    "cherry": {"text": "cherry pie", "color": "red"},
    "grape": {"text": "green grapes", "color": "green"},
    "melon": {"text": "watermelon slices", "color": "green"},
}


async def _open_fruit(open_store: Open) -> Driver:
    store = await open_store(index=indexed_by("text"))
    await store.batch([PutOp(("fruit",), k, v) for k, v in FRUIT.items()])
    await store.put(("elsewhere",), "apple", {"text": "red apple"})
    return store


def _ranked(query: str, keys: list[str]) -> list[tuple[str, float]]:
    """Brute force: each item's cosine similarity to the query, best first."""
    scores = [(key, similarity(query, FRUIT[key]["text"])) for key in keys]
    ranked = sorted(scores, key=lambda pair: -pair[1])
    assert len({round(s, 6) for _, s in ranked}) == len(ranked), "no ties"
    return ranked


def _scored(items: list[Any]) -> list[tuple[str, float]]:
    return [(i.key, pytest.approx(i.score, abs=1e-5)) for i in items]


@pytest.mark.parametrize("query", ["apple", "red berries", "pie", "melons"])
async def test_query_ranks_by_cosine_similarity(open_store: Open, query: str) -> None:
    store = await _open_fruit(open_store)
    found = await store.search(("fruit",), query=query)
    assert _scored(found) == _ranked(query, list(FRUIT))


async def test_query_with_a_filter_ranks_what_the_filter_keeps(
    open_store: Open,
) -> None:
    store = await _open_fruit(open_store)
    found = await store.search(("fruit",), query="apple", filter={"color": "red"})
    assert _scored(found) == _ranked("apple", ["apple", "cherry"])


async def test_query_pages_follow_the_ranking(open_store: Open) -> None:
    store = await _open_fruit(open_store)
    pages = [
        await store.search(("fruit",), query="green", limit=2, offset=o) for o in (0, 2)
    ]
    assert [_scored(page) for page in pages] == [
        _ranked("green", list(FRUIT))[:2],
        _ranked("green", list(FRUIT))[2:4],
    ]


async def test_query_finds_one_item_among_many_identical_vectors(
    open_store: Open,
) -> None:
    """One user's memory is found however many near-duplicates other users hold."""
    store = await open_store(index=indexed_by("key1"))
    await store.batch(
        [PutOp(("test", f"u{n}"), "k", {"key1": "no"}) for n in range(200)]
    )
    await store.put(("test", "M"), "k", {"key1": "mmm"})
    (mine,) = await store.search(("test", "M"), query="mmm")
    assert (mine.namespace, mine.score) == (("test", "M"), pytest.approx(1.0))
    best = (await store.search(("test",), query="mmm", limit=3))[0]
    assert (best.namespace, best.score) == (("test", "M"), pytest.approx(1.0))


async def test_items_put_with_index_false_are_not_found_by_meaning(
    open_store: Open,
) -> None:
    store = await _open_fruit(open_store)
    await store.put(("fruit",), "hidden", {"text": "red apple"}, index=False)
    found = await store.search(("fruit",), query="red apple", limit=10)
    assert "hidden" not in [i.key for i in found] and len(found) == len(FRUIT)
    assert "hidden" in [i.key for i in await store.search(("fruit",), limit=10)]


async def test_an_update_is_embedded_again(open_store: Open) -> None:
    store = await _open_fruit(open_store)
    await store.put(("fruit",), "apple", {"text": "kiwi", "color": "green"})
    found = {i.key: i.score for i in await store.search(("fruit",), query="kiwi")}
    assert found["apple"] == pytest.approx(1.0)
    assert max(v for k, v in found.items() if k != "apple") < 0.9


async def test_index_on_a_put_replaces_the_configured_fields(open_store: Open) -> None:
    store = await open_store(index=indexed_by("text"))
    await store.put(("t",), "a", {"text": "apple", "title": "zebra"})
    await store.put(("t",), "b", {"text": "banana", "title": "kiwi"}, index=["title"])
    by_title = (await store.search(("t",), query="kiwi"))[0]
    assert (by_title.key, by_title.score) == ("b", pytest.approx(1.0))
    scores = {i.key: i.score for i in await store.search(("t",), query="banana")}
    assert scores["b"] == pytest.approx(similarity("banana", "kiwi"))


async def test_an_item_with_several_texts_is_found_once_by_its_best(
    open_store: Open,
) -> None:
    store = await open_store(index=indexed_by("text", "title"))
    await store.put(("t",), "a", {"text": "apple", "title": "zebra"})
    await store.put(("t",), "b", {"text": "banana", "title": "kiwi"})
    found = await store.search(("t",), query="zebra")
    assert _scored(found) == [
        ("a", 1.0),
        ("b", max(similarity("zebra", text) for text in ("banana", "kiwi"))),
    ]


async def test_an_empty_query_is_a_plain_search(open_store: Open) -> None:
    store = await _open_fruit(open_store)
    found = await store.search(("fruit",), query="", limit=10)
    assert sorted(i.key for i in found) == sorted(FRUIT)
    assert {i.score for i in found} == {None}


async def test_embeddings_are_the_index_model(open_store: Open) -> None:
    indexed = await open_store(index=indexed_by("text"))
    assert indexed.store.embeddings.embed_query("kiwi") == embed(["kiwi"])[0]
    plain = await open_store()
    assert plain.store.embeddings is None


# -- namespaces --------------------------------------------------------------

LISTINGS: list[tuple[dict[str, Any], list[Namespace]]] = [
    ({}, [("docs", "a"), ("docs", "b"), ("docs", "b", "c"), ("other",)]),
    ({"prefix": ("docs",)}, [("docs", "a"), ("docs", "b"), ("docs", "b", "c")]),
    ({"suffix": ("c",)}, [("docs", "b", "c")]),
    ({"prefix": ("docs", "*")}, [("docs", "a"), ("docs", "b"), ("docs", "b", "c")]),
    ({"prefix": ("docs", "*", "c")}, [("docs", "b", "c")]),
    ({"suffix": ("*", "b")}, [("docs", "b")]),
    ({"prefix": ("docs",), "suffix": ("c",)}, [("docs", "b", "c")]),
    ({"prefix": ("doc",)}, []),
    ({"max_depth": 1}, [("docs",), ("other",)]),
    ({"prefix": ("docs",), "max_depth": 2}, [("docs", "a"), ("docs", "b")]),
    ({"prefix": ("docs",), "max_depth": 2, "limit": 1, "offset": 1}, [("docs", "b")]),
    ({"limit": 2}, [("docs", "a"), ("docs", "b")]),
    ({"offset": 3}, [("other",)]),
]


async def test_list_namespaces_matches_labels_and_pages(open_store: Open) -> None:
    store = await _open_docs(open_store)
    found = {repr(kw): await store.list_namespaces(**kw) for kw, _ in LISTINGS}
    assert found == {repr(kw): namespaces for kw, namespaces in LISTINGS}


async def test_list_namespaces_forgets_emptied_namespaces(open_store: Open) -> None:
    store = await _open_docs(open_store)
    await store.delete(("docs", "b", "c"), "4")
    assert await store.list_namespaces(prefix=("docs", "b")) == [("docs", "b")]


# -- TTL -----------------------------------------------------------------------

SECOND = 1 / 60  # TTLs are in minutes


async def test_ttl_expires_refreshes_and_keeps(open_store: Open) -> None:
    """Timed for SqliteStore, which compares expiry times in whole seconds."""
    store = await open_store(ttl={"default_ttl": 2 * SECOND, "refresh_on_read": True})
    ns = ("ttl",)
    await store.put(ns, "read", {"v": 1})
    await store.put(ns, "unread", {"v": 2})
    await store.put(ns, "forever", {"v": 4}, ttl=None)
    # A PutOp, since AsyncSqliteStore (unlike SqliteStore) leaves `supports_ttl`
    # False, so its `aput` refuses a `ttl` argument.
    await store.batch([PutOp(ns, "short", {"v": 3}, ttl=0.2 * SECOND)])
    assert await store.sweep_ttl() == 0
    time.sleep(1.5)
    assert await store.get(ns, "read") is not None  # restarts its 2 s
    time.sleep(1.5)
    assert await store.sweep_ttl() == 2
    assert await store.get(ns, "unread") is None
    assert await store.get(ns, "short") is None
    found = await store.search(ns, filter={"v": {"$gte": 1}})
    assert sorted(i.key for i in found) == ["forever", "read"]


async def test_ttl_sweeper_expires_in_the_background_and_stops(
    open_store: Open,
) -> None:
    ttl: TTLConfig = {"default_ttl": 0.2 * SECOND, "sweep_interval_minutes": SECOND}
    store = await open_store(ttl=ttl)
    ns = ("ttl",)
    await store.put(ns, "short", {"v": 1})
    handle = await store.start_ttl_sweeper()
    deadline = time.monotonic() + 10
    while await store.get(ns, "short", refresh_ttl=False) is not None:
        assert time.monotonic() < deadline, "the sweeper never expired the item"
        await asyncio.sleep(0.1)
    assert await store.stop_ttl_sweeper(timeout=5) is True
    if store.asynchronous:
        assert isinstance(handle, asyncio.Task)
        await asyncio.wait_for(handle, 5)
    else:
        assert isinstance(handle, concurrent.futures.Future)
        handle.result(timeout=5)
