"""ChronoStore keeps LangGraph's store contract: what works on SqliteStore works here.

Filters and namespace listings are checked differentially: the same data goes
into LangGraph's own `SqliteStore` (and `InMemoryStore`) and the answers must
match. Every test runs through both the sync and the async methods.
"""

from __future__ import annotations

import asyncio
import sqlite3
from collections.abc import Callable, Iterator
from datetime import timezone
from pathlib import Path
from typing import Any

import pytest
from langgraph.store.base import BaseStore, GetOp, InvalidNamespaceError, PutOp, SearchOp
from langgraph.store.memory import InMemoryStore
from langgraph.store.sqlite import SqliteStore

from langgraph_chronomem import ChronoStore, InvalidFilterError

DOCS: dict[tuple[tuple[str, ...], str], dict[str, Any]] = {
    (("docs", "a"), "1"): {
        "kind": "note",
        "score": 5,
        "flag": True,
        "tags": ["x", "y"],
        "meta": {"lang": "en", "n": 2},
    },
    (("docs", "a"), "2"): {"kind": "note", "score": 7.5, "flag": False, "meta": {"lang": "fr", "n": 3}},
    (("docs", "b"), "3"): {"kind": "task", "score": 1, "flag": True, "tags": ["y"], "meta": {"lang": "en"}},
    (("docs", "b", "c"), "4"): {"kind": "task", "score": "high", "none": None},
    (("other",), "5"): {"kind": "note", "score": 3},
}


class Calls:
    """The store's convenience methods, called sync or through their async twins."""

    def __init__(self, store: BaseStore, mode: str) -> None:
        self.store, self.mode = store, mode

    def __getattr__(self, name: str) -> Callable[..., Any]:
        if self.mode == "sync":
            return getattr(self.store, name)
        method = getattr(self.store, "a" + name)
        return lambda *args, **kwargs: asyncio.run(method(*args, **kwargs))


@pytest.fixture
def store(store_path: Path) -> Iterator[ChronoStore]:
    """A drop-in store with default settings: the whole store is one timeline."""
    with ChronoStore.from_path(store_path) as opened:
        yield opened


@pytest.fixture
async def astore(store: ChronoStore) -> ChronoStore:
    return store


@pytest.fixture(params=["sync", "async"])
def calls(request: pytest.FixtureRequest, store: ChronoStore) -> Calls:
    return Calls(store, request.param)


@pytest.fixture
def reference(tmp_path: Path) -> Iterator[SqliteStore]:
    """LangGraph's SqliteStore on a file, holding DOCS."""
    conn = sqlite3.connect(tmp_path / "ref.sqlite", check_same_thread=False, isolation_level=None)
    ref = SqliteStore(conn)
    ref.setup()
    for (ns, key), value in DOCS.items():
        ref.put(ns, key, value)
    yield ref
    conn.close()


def _load(calls: Calls) -> None:
    for (ns, key), value in DOCS.items():
        calls.put(ns, key, value)


def test_put_get_roundtrip_keeps_item_fields(calls: Calls) -> None:
    calls.put(("users", "1"), "prefs", {"theme": "dark", "size": 3})
    first = calls.get(("users", "1"), "prefs")
    assert first.value == {"theme": "dark", "size": 3}
    assert first.namespace == ("users", "1") and first.key == "prefs"
    assert first.created_at.tzinfo == timezone.utc
    calls.put(("users", "1"), "prefs", {"theme": "light"})
    second = calls.get(("users", "1"), "prefs")
    assert second.value == {"theme": "light"}
    assert second.created_at == first.created_at
    assert second.updated_at > first.updated_at
    assert calls.get(("users", "1"), "missing") is None


def test_delete_removes_from_every_read(calls: Calls) -> None:
    calls.put(("users", "1"), "a", {"x": 1})
    calls.delete(("users", "1"), "a")
    assert calls.get(("users", "1"), "a") is None
    assert calls.search(("users",)) == []
    assert calls.list_namespaces() == []


def test_recreated_item_gets_a_new_created_at(calls: Calls) -> None:
    calls.put(("users", "1"), "a", {"x": 1})
    before = calls.get(("users", "1"), "a").created_at
    calls.delete(("users", "1"), "a")
    calls.put(("users", "1"), "a", {"x": 2})
    assert calls.get(("users", "1"), "a").created_at > before


FILTERS_SHARED_WITH_SQLITESTORE = [
    {"kind": "note"},
    {"kind": {"$eq": "note"}},
    {"kind": {"$ne": "note"}},
    {"score": 5},
    {"score": 7.5},
    {"score": {"$gt": 4}},
    {"score": {"$gte": 5}},
    {"score": {"$gt": 1, "$lt": 7}},
    {"score": {"$ne": 5}},
    {"score": {"$gt": "a"}},
    {"flag": True},
    {"flag": False},
    {"flag": {"$ne": True}},
    {"meta.lang": "en"},
    {"meta.n": {"$gte": 2}},
    {"tags": ["x", "y"]},
    {"none": None},
    {"missing": None},
    {"kind": "note", "score": {"$gt": 4}},
    {"kind": "nothing"},
]


@pytest.mark.parametrize("filter", FILTERS_SHARED_WITH_SQLITESTORE, ids=repr)
def test_filters_match_sqlitestore(
    calls: Calls, reference: SqliteStore, filter: dict[str, Any]
) -> None:
    _load(calls)
    ours = {(i.namespace, i.key) for i in calls.search((), filter=filter, limit=100)}
    theirs = {(i.namespace, i.key) for i in reference.search((), filter=filter, limit=100)}
    assert ours == theirs


def test_nested_object_filter_matches_inside_the_object(calls: Calls) -> None:
    """Like InMemoryStore (SqliteStore rejects this form)."""
    _load(calls)
    found = calls.search(("docs",), filter={"meta": {"lang": "en"}})
    assert sorted(i.key for i in found) == ["1", "3"]


def test_order_comparisons_never_mix_strings_and_numbers(calls: Calls) -> None:
    """SqliteStore casts "high" to 0.0 and calls it < 5; a string is not a number."""
    _load(calls)
    assert sorted(i.key for i in calls.search((), filter={"score": {"$lt": 5}})) == ["3", "5"]


@pytest.mark.parametrize(
    "filter",
    [{"score": {"$in": [1, 2]}}, {"score": {"$gt": None}}, {'bad"key': 1}, {"a..b": 1}],
    ids=repr,
)
def test_bad_filters_raise_a_typed_error(calls: Calls, filter: dict[str, Any]) -> None:
    _load(calls)
    with pytest.raises(InvalidFilterError):
        calls.search((), filter=filter)


def test_search_pages_newest_update_first(calls: Calls) -> None:
    for n in range(7):
        calls.put(("pages",), f"k{n}", {"n": n})
    calls.put(("pages",), "k2", {"n": 2, "touched": True})
    everything = [i.key for i in calls.search(("pages",), limit=100)]
    assert everything == ["k2", "k6", "k5", "k4", "k3", "k1", "k0"]
    pages = [calls.search(("pages",), limit=3, offset=o) for o in (0, 3, 6)]
    assert [i.key for page in pages for i in page] == everything


def test_search_prefix_is_label_aware(calls: Calls) -> None:
    calls.put(("foo",), "a", {"v": 1})
    calls.put(("foobar",), "b", {"v": 2})
    calls.put(("foo", "bar"), "c", {"v": 3})
    assert sorted(i.key for i in calls.search(("foo",))) == ["a", "c"]


LISTINGS: list[dict[str, Any]] = [
    {},
    {"prefix": ("docs",)},
    {"suffix": ("c",)},
    {"prefix": ("docs", "*")},
    {"suffix": ("*", "b")},
    {"prefix": ("docs",), "suffix": ("c",)},
    {"max_depth": 1},
    {"prefix": ("docs",), "max_depth": 2},
    {"prefix": ("docs",), "max_depth": 2, "limit": 1, "offset": 1},
    {"limit": 2},
    {"offset": 3},
]


@pytest.mark.parametrize("kwargs", LISTINGS, ids=repr)
def test_list_namespaces_matches_langgraph_stores(
    calls: Calls, reference: SqliteStore, kwargs: dict[str, Any]
) -> None:
    _load(calls)
    memory = InMemoryStore()
    for (ns, key), value in DOCS.items():
        memory.put(ns, key, value)
    ours = calls.list_namespaces(**kwargs)
    assert ours == memory.list_namespaces(**kwargs) == reference.list_namespaces(**kwargs)


def test_batch_returns_results_in_op_order_and_reads_before_writes(store: ChronoStore) -> None:
    ns = ("users", "1")
    store.put(ns, "a", {"v": "old"})
    results = store.batch(
        [
            PutOp(ns, "a", {"v": "new"}),
            GetOp(ns, "a"),
            SearchOp(ns),
            PutOp(ns, "b", {"v": "b"}),
        ]
    )
    assert results[0] is None and results[3] is None
    assert results[1].value == {"v": "old"}
    assert [i.value for i in results[2]] == [{"v": "old"}]
    assert store.get(ns, "a").value == {"v": "new"}
    assert store.head(ns) == 2


async def test_abatch_is_one_commit(astore: ChronoStore) -> None:
    ns = ("users", "1")
    await astore.abatch([PutOp(ns, "a", {"v": 1}), PutOp(ns, "b", {"v": 2})])
    assert await astore.ahead(ns) == 1
    assert [c.op for c in await astore.alog(ns)] == ["batch"]


@pytest.mark.parametrize(
    "op",
    [
        PutOp(("a.b",), "k", {"v": 1}),
        PutOp(("a", ""), "k", {"v": 1}),
        GetOp(("a.b",), "k"),
        SearchOp(("a.b",)),
        PutOp((), "k", {"v": 1}),
    ],
    ids=repr,
)
def test_batch_validates_every_namespace_and_writes_nothing(
    store: ChronoStore, op: Any
) -> None:
    good = PutOp(("users", "1"), "k", {"v": 1})
    with pytest.raises(InvalidNamespaceError):
        store.batch([good, op])
    assert store.get(("users", "1"), "k") is None
    assert store.head(("users", "1")) == 0
