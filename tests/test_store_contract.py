"""Where ChronoStore differs from LangGraph's SqliteStore on purpose.

The contract both keep is tests/test_compat.py, run on both stores; here is each
difference docs/how-to/swap-store.md lists, shown where it lies (against
`InMemoryStore`, whose behaviour ChronoStore shares, where it helps), and what a
versioned store adds to the contract (one commit per batch, a batch validated
before anything is written). Tests run through the sync and the async methods.
"""

from __future__ import annotations

import sqlite3
from collections.abc import Iterator
from datetime import timezone
from pathlib import Path
from typing import Any

import pytest
from langgraph.store.base import (
    GetOp,
    InvalidNamespaceError,
    PutOp,
    SearchOp,
)
from langgraph.store.memory import InMemoryStore
from langgraph.store.sqlite import SqliteStore

from langgraph_chronomem import ChronoStore, InvalidFilterError
from tests.test_compat import DOCS, FRUIT, SQLITE_WITH_EXTENSIONS, Driver, indexed_by


@pytest.fixture
def store(store_path: Path) -> Iterator[ChronoStore]:
    """A drop-in store with default settings: the whole store is one timeline."""
    with ChronoStore.from_path(store_path) as opened:
        yield opened


@pytest.fixture
async def astore(store: ChronoStore) -> ChronoStore:
    return store


@pytest.fixture(params=["sync", "async"])
def ours(request: pytest.FixtureRequest, store: ChronoStore) -> Driver:
    """The store, through its sync methods or their async twins."""
    return Driver(store, asynchronous=request.param == "async")


@pytest.fixture
def reference(tmp_path: Path) -> Iterator[SqliteStore]:
    """LangGraph's SqliteStore on a file, holding DOCS."""
    conn = sqlite3.connect(
        tmp_path / "ref.sqlite", check_same_thread=False, isolation_level=None
    )
    ref = SqliteStore(conn)
    ref.setup()
    for (ns, key), value in DOCS.items():
        ref.put(ns, key, value)
    yield ref
    conn.close()


async def _load(ours: Driver) -> None:
    for (ns, key), value in DOCS.items():
        await ours.put(ns, key, value)


async def test_an_update_keeps_created_at_in_utc(ours: Driver) -> None:
    """Like InMemoryStore and PostgresStore; SqliteStore's INSERT OR REPLACE sets
    `created_at` again on every put, in naive whole seconds."""
    await ours.put(("users", "1"), "prefs", {"theme": "dark"})
    first = await ours.get(("users", "1"), "prefs")
    assert first.created_at.tzinfo == timezone.utc
    await ours.put(("users", "1"), "prefs", {"theme": "light"})
    second = await ours.get(("users", "1"), "prefs")
    assert second.created_at == first.created_at
    assert second.updated_at > first.updated_at


async def test_recreated_item_gets_a_new_created_at(ours: Driver) -> None:
    await ours.put(("users", "1"), "a", {"x": 1})
    before = (await ours.get(("users", "1"), "a")).created_at
    await ours.delete(("users", "1"), "a")
    await ours.put(("users", "1"), "a", {"x": 2})
    assert (await ours.get(("users", "1"), "a")).created_at > before


async def test_nested_object_filter_matches_inside_the_object(
    ours: Driver, reference: SqliteStore
) -> None:
    """Like InMemoryStore; SqliteStore reads `lang` as an unknown operator."""
    await _load(ours)
    nested = {"meta": {"lang": "en"}}
    found = await ours.search(("docs",), filter=nested)
    assert sorted(i.key for i in found) == ["1", "3"]
    with pytest.raises(ValueError, match="Unsupported operator"):
        reference.search(("docs",), filter=nested)


async def test_order_comparisons_never_mix_strings_and_numbers(
    ours: Driver, reference: SqliteStore
) -> None:
    """SqliteStore casts "high" to 0.0 and calls it < 5; a string is not a number."""
    await _load(ours)
    less = {"score": {"$lt": 5}}
    assert sorted(i.key for i in await ours.search((), filter=less)) == ["3", "5"]
    assert sorted(i.key for i in reference.search((), filter=less)) == ["3", "4", "5"]


async def test_filter_keys_are_matched_literally(
    ours: Driver, reference: SqliteStore
) -> None:
    """Any JSON key works (SqliteStore allows letters, digits, `_`, `.` and `-`)."""
    value = {"it's": 1, "a b": 2, "ключ": 3}
    await ours.put(("d",), "k", value)
    reference.put(("d",), "k", value)
    for key, number in value.items():
        assert [i.key for i in await ours.search(("d",), filter={key: number})] == ["k"]
        with pytest.raises(ValueError, match="Invalid filter key"):
            reference.search(("d",), filter={key: number})


@pytest.mark.parametrize(
    ("filter", "keys"),
    [
        ({"tags.0": "x"}, ["object"]),
        ({"tags.0": {"$ne": "z"}}, ["object"]),
        ({"tags.0": {"$gte": "x"}}, ["object"]),
        ({"tags.1": None}, ["list", "object"]),
        ({"tags.0": None}, ["list"]),
    ],
    ids=repr,
)
async def test_a_digit_in_a_filter_path_names_a_key_never_a_list_position(
    ours: Driver, filter: dict[str, Any], keys: list[str]
) -> None:
    """`tags.0` means the field "0" of the object `tags` on every engine, as
    `json_extract` reads `$.tags.0`; it never reads the first of a list."""
    await ours.put(("d",), "list", {"tags": ["x", "y"]})
    await ours.put(("d",), "object", {"tags": {"0": "x"}})
    assert sorted(i.key for i in await ours.search(("d",), filter=filter)) == keys


async def test_namespaces_sort_label_by_label(
    ours: Driver, reference: SqliteStore
) -> None:
    """Like InMemoryStore; SqliteStore sorts the dot-joined text, so a label with
    a character below "." (a space, "-") moves ahead of a shorter namespace's."""
    memory = InMemoryStore()
    for ns in [("a", "b"), ("a-c",), ("a b",)]:
        await ours.put(ns, "k", {"v": 1})
        for store in (reference, memory):
            store.put(ns, "k", {"v": 1})
    listed = await ours.list_namespaces()
    labels = [("a", "b"), ("a b",), ("a-c",)]
    assert [ns for ns in listed if ns in labels] == labels
    assert memory.list_namespaces() == listed
    assert [ns for ns in reference.list_namespaces() if ns in labels] == [
        ("a b",),
        ("a-c",),
        ("a", "b"),
    ]


def test_query_pages_reach_past_twice_the_limit(store_path: Path) -> None:
    """Like InMemoryStore; SqliteStore ranks only `2 * limit` vectors before
    applying `offset`, so its later pages come back empty."""
    if SQLITE_WITH_EXTENSIONS is None:
        pytest.skip("SqliteStore's vector search needs pysqlite3-binary here")
    conn = SQLITE_WITH_EXTENSIONS.connect(":memory:", isolation_level=None)
    reference = SqliteStore(conn, index=indexed_by("text"))
    reference.setup()
    memory = InMemoryStore(index=indexed_by("text"))
    with ChronoStore.from_path(store_path, index=indexed_by("text")) as ours:
        pages = {}
        for store in (ours, memory, reference):
            for key, value in FRUIT.items():
                store.put(("fruit",), key, value)
            pages[store] = [
                [
                    i.key
                    for i in store.search(("fruit",), query="green", offset=n, limit=1)
                ]
                for n in range(len(FRUIT))
            ]
        assert pages[ours] == pages[memory]
        assert sorted(key for (key,) in pages[ours]) == sorted(FRUIT)
        assert pages[reference][2:] == [[], [], []]
    conn.close()


def test_the_ttl_sweeper_runs_without_a_ttl_config(
    store: ChronoStore, reference: SqliteStore
) -> None:
    """Per-put TTLs need sweeping too; SqliteStore's sweeper does not start
    without `ttl=` (its future is done at once)."""
    assert reference.start_ttl_sweeper().done()
    swept = store.start_ttl_sweeper()
    assert not swept.done()
    assert store.stop_ttl_sweeper(timeout=5)
    assert swept.result(timeout=5) is None


@pytest.mark.parametrize(
    "filter",
    [{"score": {"$in": [1, 2]}}, {"score": {"$gt": None}}, {'bad"key': 1}, {"a..b": 1}],
    ids=repr,
)
async def test_bad_filters_raise_a_typed_error(
    ours: Driver, filter: dict[str, Any]
) -> None:
    await _load(ours)
    with pytest.raises(InvalidFilterError):
        await ours.search((), filter=filter)


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


def test_a_namespace_is_checked_on_every_put_not_only_the_first(
    store: ChronoStore,
) -> None:
    # A namespace's checked scope is cached, its refusals are not; a label no
    # dict can hold (a list) is refused like any other bad label.
    for _ in range(2):
        with pytest.raises(InvalidNamespaceError):
            store.put(("users", ["1"]), "k", {"v": 1})  # type: ignore[arg-type]
        with pytest.raises(InvalidNamespaceError):
            store.put(("users", "a.b"), "k", {"v": 1})
    store.put(["users", "1"], "k", {"v": 1})  # type: ignore[arg-type]
    item = store.get(("users", "1"), "k")
    assert item is not None and item.namespace == ("users", "1")
    assert store.head(("users", "1")) == 1
