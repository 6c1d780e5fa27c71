"""Search by meaning on a branch (`store.on_branch(scope, name).search(query=...)`,
and `store.as_of(scope, v, branch=name)`), on SQLite and PostgreSQL.

On random histories (HEAD written, a branch made at a random version, then
HEAD and the branch written in turn, each put's `index` argument random), the
branch ranks exactly as a fresh store holding exactly the branch's state
ranks it: the same items, values and scores under the same prefix, filter,
limit and offset; so does each version of the branch. Then what it costs
(HEAD's vectors reused, the branch's own texts embedded once, nothing of the
branch in Chroma) and the async twin.
"""

from __future__ import annotations

import asyncio
import random
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from langgraph_chronomem import ChronoStore
from tests.test_as_of_search import (
    FILTERS,
    Counting,
    State,
    assert_same_ranking,
    found,
    hold,
    random_commit,
    write_history,
)
from testsupport.hashed import INDEX, WORDS
from testsupport.pg import PostgresServer, pg_server  # noqa: F401  (fixture)

ALICE = ("u", "alice")


@pytest.fixture(params=["sqlite", "postgres"])
def store(request: pytest.FixtureRequest, tmp_path: Path) -> Iterator[ChronoStore]:
    """A store with one timeline per user and `index=`, on each engine."""
    if request.param == "sqlite":
        opened = ChronoStore.from_path(tmp_path / "s", scope_depth=2, index=INDEX)  # type: ignore[arg-type]
    else:
        server: PostgresServer = request.getfixturevalue("pg_server")
        opened = ChronoStore.from_conn_string(
            server.create_database(),
            scope_depth=2,
            index=INDEX,  # type: ignore[arg-type]
            chroma_path=tmp_path / "chroma",
        )
    with opened:
        yield opened


def step(writer: Any, rng: random.Random, state: State) -> State:
    """One random commit to `ALICE` through `writer` (the store or a branch)."""
    return random_commit(writer, rng, state, ALICE)


def compare(view: Any, fresh: ChronoStore, state: State, rng: random.Random) -> None:
    """`view` ranks as `fresh` holding `state`, on a few random searches."""
    hold(fresh, ALICE, state)
    for _ in range(4):
        asked = {
            "query": " ".join(rng.sample(WORDS, rng.randint(1, 2))),
            "filter": rng.choice(FILTERS),
            "limit": rng.randint(1, 6),
            "offset": rng.choice([0, 0, 1, 3]),
        }
        prefix = rng.choice([ALICE, (*ALICE, "notes"), ()])
        expected = fresh.search(prefix or ALICE, **asked)
        every = fresh.search(prefix or ALICE, **{**asked, "limit": 1000, "offset": 0})
        assert_same_ranking(view.search(prefix, **asked), expected, every)


@pytest.mark.parametrize("seed", [1, 2])
def test_a_branch_ranks_as_a_store_holding_its_state(
    store: ChronoStore, tmp_path: Path, seed: int
) -> None:
    rng = random.Random(seed)
    head = write_history(store, rng, steps=20)[ALICE]
    fork = rng.randrange(len(head))
    store.branch(ALICE, "trial", at=fork)
    trial = store.on_branch(ALICE, "trial")
    on_branch = [head[fork]]  # the branch's state at fork, fork + 1, ...
    for _ in range(16):
        if rng.random() < 0.6:
            on_branch.append(step(trial, rng, on_branch[-1]))
        else:
            head.append(step(store, rng, head[-1]))
    with ChronoStore.from_path(tmp_path / "f", scope_depth=2, index=INDEX) as fresh:  # type: ignore[arg-type]
        compare(trial, fresh, on_branch[-1], rng)
        for version in sorted(rng.sample(range(fork + len(on_branch)), 3)):
            state = head[version] if version <= fork else on_branch[version - fork]
            compare(store.as_of(ALICE, version, branch="trial"), fresh, state, rng)


def test_a_branch_reuses_head_s_vectors_and_puts_nothing_in_chroma(
    tmp_path: Path,
) -> None:
    counting = Counting()
    index = {**INDEX, "embed": counting}
    with ChronoStore.from_path(tmp_path, scope_depth=1, index=index) as store:  # type: ignore[arg-type]
        alice = ("alice",)
        store.put(alice, "job", {"text": "w1 w2"})
        store.put(alice, "city", {"text": "w3 w4"})
        store.branch(alice, "move")
        trial = store.on_branch(alice, "move")
        trial.put(alice, "city", {"text": "w5"})
        trial.put(alice, "pet", {"text": "w1 w6"})
        store.wait_for_index()
        counting.texts.clear()
        hits = trial.search(alice, query="w1")
        assert [(i.key, i.value["text"]) for i in hits][:2] == [
            ("job", "w1 w2"),
            ("pet", "w1 w6"),
        ]
        assert {i.key for i in hits} == {"job", "city", "pet"}
        # the query and the branch's own rows; job's vector is HEAD's
        assert sorted(counting.texts) == ["w1", "w1 w6", "w5"]
        counting.texts.clear()
        trial.search(alice, query="w5")
        assert counting.texts == ["w5"]
        # HEAD's search finds nothing the branch wrote
        assert {i.key: i.value["text"] for i in store.search(alice, query="w6")} == {
            "job": "w1 w2",
            "city": "w3 w4",
        }


def test_the_async_twin_ranks_as_the_sync_call(tmp_path: Path) -> None:
    with ChronoStore.from_path(tmp_path, scope_depth=1, index=INDEX) as store:  # type: ignore[arg-type]
        alice = ("alice",)
        store.put(alice, "k0", {"text": "w1 w2"})
        store.branch(alice, "b")
        trial = store.on_branch(alice, "b")
        for i, words in enumerate(["w2 w3", "w3 w4", "w1"]):
            trial.put(alice, f"k{i + 1}", {"text": words})
        sync = trial.search(alice, query="w1 w2", limit=3)
        assert found(asyncio.run(trial.asearch(alice, query="w1 w2", limit=3))) == (
            found(sync)
        )
        assert (sync[0].key, sync[0].value["text"]) == ("k0", "w1 w2")
