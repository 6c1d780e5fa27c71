"""Search by meaning as of a past version (`store.as_of(scope, v).search(query=...)`).

On random histories of puts, updates, deletes and batches (each put's `index`
argument random too: the store's fields, none, or its own), the view at a
version ranks exactly as a fresh store holding exactly the state at that
version, written in the order its rows were, ranks it: the same items, values
and scores, under the same prefix, filter, limit and offset. The embedder is
`testsupport/hashed.py`'s: real `Embeddings`, deterministic, no model.

Then what it costs (the vectors HEAD holds are reused, what it lacks is
embedded once) and its errors: a store without `index=` ignores the query as
its own search does, and a reset or a compaction since the view was made
raise their errors.
"""

from __future__ import annotations

import asyncio
import random
from collections import OrderedDict
from pathlib import Path
from typing import Any

import pytest
from langgraph.store.base import PutOp

from langgraph_chronomem import ChronoStore
from langgraph_chronomem.errors import CompactedError, ReadOnlyError, VersionNotFound
from testsupport.hashed import INDEX, WORDS, Hashed
from testsupport.pg import pg_database, pg_server  # noqa: F401  (fixtures)

Namespace = tuple[str, ...]
Item = tuple[Namespace, str]
State = OrderedDict[Item, tuple[dict[str, Any], Any]]  # in the order of its rows
SCOPES: list[Namespace] = [("u", "alice"), ("u", "bob")]
KEYS = [f"k{i}" for i in range(6)]
INDEXES: list[Any] = [None, None, None, None, False, ["kind"], ["text", "kind"]]
FILTERS: list[Any] = [None, None, {"kind": "a"}, {"n": {"$gte": 1}}]


def _value(rng: random.Random) -> dict[str, Any]:
    words = rng.sample(WORDS, rng.randint(1, 3))
    return {"text": " ".join(words), "kind": rng.choice("ab"), "n": rng.randint(0, 2)}


def _item(rng: random.Random, scope: Namespace) -> Item:
    return (*scope, rng.choice(["notes", "facts"])), rng.choice(KEYS)


def random_commit(
    writer: Any, rng: random.Random, state: State, scope: Namespace
) -> State:
    """One random commit to `scope` through `writer` (a store, or a view that
    writes): a delete, a batch of puts or one put; the state after it."""
    state = OrderedDict(state)
    kind = rng.random()
    if kind < 0.2 and state:  # a delete
        item = rng.choice(list(state))
        writer.delete(*item)
        del state[item]
    elif kind < 0.35:  # a batch of puts to distinct items
        items = list(dict.fromkeys(_item(rng, scope) for _ in range(3)))
        ops = []
        for item in items:
            value, index = _value(rng), rng.choice(INDEXES)
            ops.append(PutOp(item[0], item[1], value, index=index))
            state.pop(item, None)
            state[item] = (value, index)
        writer.batch(ops)
    else:  # a put: a new item or an update
        item = _item(rng, scope)
        value, index = _value(rng), rng.choice(INDEXES)
        writer.put(*item, value, index=index)
        state.pop(item, None)
        state[item] = (value, index)
    return state


def write_history(
    store: ChronoStore, rng: random.Random, steps: int
) -> dict[Namespace, list[State]]:
    """Random writes to `store`; each scope's state at every version."""
    states: dict[Namespace, list[State]] = {scope: [OrderedDict()] for scope in SCOPES}
    for _ in range(steps):
        scope = rng.choice(SCOPES)
        states[scope].append(random_commit(store, rng, states[scope][-1], scope))
    for scope in SCOPES:
        assert store.head(scope) == len(states[scope]) - 1
    return states


def hold(fresh: ChronoStore, scope: Namespace, state: State) -> None:
    """Have `fresh` hold exactly `state` in `scope`, its rows in its order."""
    for item in fresh.search(scope, limit=1000):
        fresh.delete(tuple(item.namespace), item.key)
    for (namespace, key), (value, index) in state.items():
        fresh.put(namespace, key, value, index=index)


def found(items: list[Any]) -> list[tuple[Any, ...]]:
    return [(tuple(i.namespace), i.key, i.value, round(i.score, 6)) for i in items]


def assert_same_ranking(page: list[Any], expected: list[Any], every: list[Any]) -> None:
    """`page` ranks as `expected` (the fresh store's page; `every`, its whole
    ranking): the same scores, to 1e-6, each an item of the state with its
    value and its score there. Items whose scores differ by less than that may
    trade places: a vector Chroma gives back differs from the model's in its
    last bit, and mathematically equal scores then differ by 1e-8."""
    assert [round(i.score, 6) for i in page] == pytest.approx(
        [round(i.score, 6) for i in expected], abs=2e-6
    )
    state = {(tuple(i.namespace), i.key): (i.value, i.score) for i in every}
    for item in page:
        value, score = state[tuple(item.namespace), item.key]
        assert item.value == value and item.score == pytest.approx(score, abs=1e-6)
    assert len({(tuple(i.namespace), i.key) for i in page}) == len(page)


def check_random_searches(
    store: ChronoStore,
    fresh: ChronoStore,
    states: dict[Namespace, list[State]],
    rng: random.Random,
) -> int:
    """Compare the views at sampled versions with `fresh`; how many searches."""
    compared = 0
    for scope in SCOPES:
        last = len(states[scope]) - 1
        versions = sorted({0, last, *rng.sample(range(last + 1), min(4, last + 1))})
        for version in versions:
            hold(fresh, scope, states[scope][version])
            view = store.as_of(scope, version)
            for _ in range(4):
                query = " ".join(rng.sample(WORDS, rng.randint(1, 2)))
                asked = {
                    "query": query,
                    "filter": rng.choice(FILTERS),
                    "limit": rng.randint(1, 6),
                    "offset": rng.choice([0, 0, 1, 3]),
                }
                prefix = rng.choice([scope, (*scope, "notes"), ()])
                expected = fresh.search(prefix or scope, **asked)
                every = fresh.search(
                    prefix or scope, **{**asked, "limit": 1000, "offset": 0}
                )
                page = view.search(prefix, **asked)
                assert_same_ranking(page, expected, every)
                compared += 1
    return compared


@pytest.mark.parametrize("seed", [1, 2, 3])
def test_as_of_search_ranks_as_a_store_holding_that_state(
    tmp_path: Path, seed: int
) -> None:
    rng = random.Random(seed)
    with (
        ChronoStore.from_path(tmp_path / "s", scope_depth=2, index=INDEX) as store,  # type: ignore[arg-type]
        ChronoStore.from_path(tmp_path / "f", scope_depth=2, index=INDEX) as fresh,  # type: ignore[arg-type]
    ):
        states = write_history(store, rng, steps=40)
        assert check_random_searches(store, fresh, states, rng) >= 24


@pytest.mark.parametrize("distance", ["l2", "inner_product"])
def test_as_of_search_scores_in_the_store_s_distance(
    tmp_path: Path, distance: str
) -> None:
    rng = random.Random(7)
    index = {**INDEX, "distance_type": distance}
    with (
        ChronoStore.from_path(tmp_path / "s", scope_depth=2, index=index) as store,  # type: ignore[arg-type]
        ChronoStore.from_path(tmp_path / "f", scope_depth=2, index=index) as fresh,  # type: ignore[arg-type]
    ):
        states = write_history(store, rng, steps=25)
        check_random_searches(store, fresh, states, rng)


def test_as_of_search_on_postgresql(
    tmp_path: Path,
    pg_database: str,  # noqa: F811
) -> None:
    rng = random.Random(11)
    with (
        ChronoStore.from_conn_string(
            pg_database,
            scope_depth=2,
            index=INDEX,  # type: ignore[arg-type]
            chroma_path=tmp_path / "chroma",
        ) as store,
        ChronoStore.from_path(tmp_path / "f", scope_depth=2, index=INDEX) as fresh,  # type: ignore[arg-type]
    ):
        states = write_history(store, rng, steps=30)
        check_random_searches(store, fresh, states, rng)


class Counting(Hashed):
    """`Hashed`, counting the texts it embeds."""

    def __init__(self) -> None:
        self.texts: list[str] = []

    def embed_documents(self, texts: list[str]) -> list[list[float]]:
        self.texts += texts
        return super().embed_documents(texts)


def test_as_of_search_embeds_only_what_head_lacks_and_once(tmp_path: Path) -> None:
    counting = Counting()
    index = {**INDEX, "embed": counting}
    with ChronoStore.from_path(tmp_path, scope_depth=1, index=index) as store:  # type: ignore[arg-type]
        alice = ("alice",)
        store.put(alice, "job", {"text": "w1 w2"})
        store.put(alice, "city", {"text": "w3 w4"})
        store.put(alice, "pet", {"text": "w5"})
        store.put(alice, "job", {"text": "w6 w7"})  # v4: job changed since v3
        store.delete(alice, "pet")
        store.wait_for_index()
        counting.texts.clear()
        view = store.as_of(alice, 3)
        hits = view.search(alice, query="w1")
        assert (hits[0].key, hits[0].value["text"]) == ("job", "w1 w2")
        assert {i.key for i in hits} == {"job", "city", "pet"}
        # the query, and the two rows no longer at HEAD: city's vector is HEAD's
        assert sorted(counting.texts) == ["w1", "w1 w2", "w5"]
        counting.texts.clear()
        store.as_of(alice, 3).search(alice, query="w3")  # another view, too
        assert counting.texts == ["w3"]


def test_the_async_twin_ranks_as_the_sync_call(tmp_path: Path) -> None:
    with ChronoStore.from_path(tmp_path, scope_depth=1, index=INDEX) as store:  # type: ignore[arg-type]
        alice = ("alice",)
        for i, words in enumerate(["w1 w2", "w2 w3", "w3 w4", "w1"]):
            store.put(alice, f"k{i % 3}", {"text": words})
        view = store.as_of(alice, 3)
        sync = view.search(alice, query="w1 w2", limit=3)
        assert found(asyncio.run(view.asearch(alice, query="w1 w2", limit=3))) == (
            found(sync)
        )
        assert (sync[0].key, sync[0].value["text"]) == ("k0", "w1 w2")


def test_without_index_the_query_is_ignored_as_at_head(tmp_path: Path) -> None:
    with ChronoStore.from_path(tmp_path, scope_depth=1) as store:
        alice = ("alice",)
        store.put(alice, "a", {"text": "w1"})
        store.put(alice, "b", {"text": "w2"})
        view = store.as_of(alice, 2)
        assert [(i.key, i.score) for i in view.search(alice, query="w1")] == [
            (i.key, i.score) for i in store.search(alice, query="w1")
        ]


def test_a_reset_or_compaction_since_the_view_raises(tmp_path: Path) -> None:
    with ChronoStore.from_path(tmp_path, scope_depth=1, index=INDEX) as store:  # type: ignore[arg-type]
        alice = ("alice",)
        for i in range(4):
            store.put(alice, "home", {"text": f"w{i}"})
        gone = store.as_of(alice, 3)
        compacted = store.as_of(alice, 2)
        with pytest.raises(ReadOnlyError):
            gone.put(alice, "home", {"text": "w9"})
        store.reset(alice, to=2)
        store.put(alice, "home", {"text": "w8"})  # another v3
        with pytest.raises(VersionNotFound, match="destroyed by a reset"):
            gone.search(alice, query="w2")
        store.put(alice, "home", {"text": "w9"})
        store.compact(alice, keep_last=1)
        with pytest.raises(CompactedError):
            compacted.search(alice, query="w1")
