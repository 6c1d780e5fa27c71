"""Keeping history bounded: `compact` erases what a retention policy drops.

Years of memory grow without end when every version is kept. A retention policy
keeps each item's first version, HEAD and the newest ones; `compact` erases the
rest, returns the space, and keeps `log`, `as_of` and `rollback` truthful about
what is gone instead of failing obscurely or answering wrongly.
"""

from __future__ import annotations

import sqlite3
import time
from datetime import datetime, timedelta, timezone
from pathlib import Path
from typing import Any

import pytest
from langgraph.graph import END, START, StateGraph
from langgraph.store.base import BaseStore
from typing_extensions import TypedDict

from langgraph_chronomem import (
    ChronoCheckpointer,
    ChronoStore,
    CompactedError,
    InvalidRequestError,
    commit_context,
)
from langgraph_chronomem.store import DATABASE_FILE
from testsupport.pg import PostgresServer, pg_server  # noqa: F401  (fixture)

ALICE = ("memories", "alice")
BOB = ("memories", "bob")
CITIES = ["Boston", "Paris", "Rome", "Oslo", "Lima", "Cairo", "Quito"]


class Move(TypedDict):
    city: str


def move(state: Move, *, store: BaseStore) -> Move:
    """A graph node: the user's home is now `city`."""
    store.put(ALICE, "home", {"city": state["city"]})
    return {}


def moves(store: ChronoStore, scope: tuple[str, ...] = ALICE) -> None:
    """v1..v7: `home` moves through CITIES; v2 also makes `pet`, never changed."""
    for i, city in enumerate(CITIES):
        store.put(scope, "home", {"city": city})
        if i == 0:
            store.put(scope, "pet", {"kind": "cat"})


def head_items(store: ChronoStore, scope: tuple[str, ...]) -> dict[str, Any]:
    return {item.key: item.value for item in store.search(scope, limit=100)}


def test_it_keeps_first_head_and_the_last_n_and_says_what_is_gone(
    store: ChronoStore,
) -> None:
    moves(store)  # home at v1, v3..v8; pet at v2
    before = head_items(store, ALICE)
    commits = [(c.version, c.op, c.author) for c in store.log(ALICE)]

    done = store.compact(ALICE, keep_last=2)

    kept = [(v.version, v.erased) for v in store.history(ALICE, "home")]
    assert kept == [
        (8, None),
        (7, None),
        (6, "compacted"),
        (5, "compacted"),
        (4, "compacted"),
        (3, "compacted"),
        (1, None),
    ]
    assert sorted(v for _, _, v in done.versions) == [3, 4, 5, 6]
    assert done.whole_from == {ALICE: 7}
    # HEAD and the log are as they were; the erased values read as compacted.
    assert head_items(store, ALICE) == before
    assert [(c.version, c.op, c.author) for c in store.log(ALICE)] == commits
    assert (
        store.show(ALICE, 4).summary
        == "updated memories/alice/home: [compacted] -> [compacted]"
    )
    assert "[compacted] -> Quito" not in store.show(ALICE, 8).summary
    # as_of: whole versions read, compacted ones refuse and name the way out.
    assert store.as_of(ALICE, 2).get(ALICE, "home").value == {"city": "Boston"}
    assert store.as_of(ALICE, 7).get(ALICE, "home").value == {"city": "Cairo"}
    with pytest.raises(CompactedError, match="versions from v7 on are whole"):
        store.as_of(ALICE, 5)
    # Nothing brings an erased value back, and nothing changes in trying.
    head = store.head(ALICE)
    with pytest.raises(CompactedError):
        store.rollback(ALICE, to=5)
    with pytest.raises(CompactedError):
        store.revert(ALICE, 7)  # would restore v6's value
    assert store.head(ALICE) == head
    with pytest.raises(CompactedError):
        store.reset(ALICE, to=5)  # its HEAD rows are gone: refused, not half-done
    store.reset(ALICE, to=7)  # a whole version: its later commit goes
    assert store.get(ALICE, "home").value == {"city": "Cairo"}
    assert store.compact(ALICE, keep_last=2).whole_from == {ALICE: 7}
    store.put(ALICE, "home", {"city": "Quito"})  # v8 again
    # Compacting again finds nothing more to erase.
    assert store.compact(ALICE, keep_last=2).versions == ()
    store.rollback(ALICE, to=2)  # a whole version: fine
    assert store.get(ALICE, "home").value == {"city": "Boston"}


def test_keep_within_keeps_the_recent_versions(store: ChronoStore) -> None:
    old = datetime.now(timezone.utc) - timedelta(days=400)
    for i, city in enumerate(CITIES[:5]):
        when = old + timedelta(days=i) if i < 3 else None
        with commit_context(timestamp=when):
            store.put(ALICE, "home", {"city": city})
    done = store.compact(ALICE, keep_within=timedelta(days=30))
    assert [v for _, _, v in done.versions] == [2, 3]  # v1 first, v4 v5 recent
    both = store.compact(ALICE, keep_within=timedelta(days=30), keep_last=1)
    assert both.versions == ()


def test_a_dry_run_changes_nothing_and_every_scope_can_be_compacted(
    store: ChronoStore,
) -> None:
    moves(store, ALICE)
    moves(store, BOB)
    preview = store.compact(keep_last=3, dry_run=True)
    assert len(preview.versions) == 2 * 3 and not preview.vacuumed
    assert all(v.erased is None for v in store.history(ALICE, "home"))
    done = store.compact(BOB, keep_last=3)
    assert {ns for ns, _, _ in done.versions} == {BOB}
    assert all(v.erased is None for v in store.history(ALICE, "home"))
    everything = store.compact(keep_last=3)
    assert {ns for ns, _, _ in everything.versions} == {ALICE}


def test_the_file_shrinks(tmp_path: Path) -> None:
    text = "User mentioned a detail worth remembering about their week " * 4
    with ChronoStore.from_path(tmp_path, scope_depth=2) as store:
        for round_ in range(20):
            for item in range(50):
                store.put(ALICE, f"m{item}", {"content": f"{text} {round_}"})
    database = tmp_path / DATABASE_FILE
    with sqlite3.connect(database) as conn:  # like for like: both files packed
        conn.execute("VACUUM")
    before = database.stat().st_size
    with ChronoStore.from_path(tmp_path) as store:
        done = store.compact(ALICE, keep_last=1)
        assert done.vacuumed and len(done.versions) == 50 * 18
    # the values go; every commit and a row per version stay (the audit skeleton)
    assert database.stat().st_size < before * 0.65, (before, database.stat().st_size)


def test_undo_in_words_never_picks_a_compacted_change(store: ChronoStore) -> None:
    moves(store)
    store.compact(ALICE, keep_last=2)
    resolution = store.resolve(ALICE, "undo the move to Oslo")
    assert all(
        c.commit.version not in (3, 4, 5, 6) or c.action == "rollback"
        for c in resolution.candidates
    )
    result = store.undo(ALICE, "go back to when I lived in Oslo")
    assert not result.applied
    assert store.get(ALICE, "home").value == {"city": "Quito"}


@pytest.mark.parametrize(
    "kwargs",
    [
        {},
        {"keep_last": 0},
        {"keep_last": "2"},
        {"keep_last": True},
        {"keep_within": 30},
        {"keep_within": timedelta(0)},
    ],
)
def test_bad_input_is_refused(store: ChronoStore, kwargs: dict[str, Any]) -> None:
    moves(store)
    with pytest.raises(InvalidRequestError):
        store.compact(ALICE, **kwargs)
    assert all(v.erased is None for v in store.history(ALICE, "home"))


async def test_the_async_twin(astore: ChronoStore) -> None:
    for city in CITIES[:4]:
        await astore.aput(ALICE, "home", {"city": city})
    done = await astore.acompact(ALICE, keep_last=1)
    assert [v for _, _, v in done.versions] == [2, 3]


def test_on_postgres(pg_server: PostgresServer) -> None:  # noqa: F811
    with ChronoStore.from_conn_string(pg_server.create_database(), scope_depth=2) as s:
        moves(s)
        done = s.compact(ALICE, keep_last=2)
        assert sorted(v for _, _, v in done.versions) == [3, 4, 5, 6]
        assert done.vacuumed and done.whole_from == {ALICE: 7}
        with pytest.raises(CompactedError):
            s.as_of(ALICE, 4)
        assert s.get(ALICE, "home").value == {"city": "Quito"}


def test_a_view_made_before_a_compaction_refuses_after_it(store: ChronoStore) -> None:
    moves(store)
    past = store.as_of(ALICE, 4)
    assert past.get(ALICE, "home").value == {"city": "Rome"}
    store.compact(ALICE, keep_last=1)
    with pytest.raises(CompactedError):
        past.get(ALICE, "home")


def test_time_travel_to_a_compacted_memory_runs_on_and_says_so(
    store: ChronoStore, caplog: pytest.LogCaptureFixture
) -> None:
    graph = (
        StateGraph(Move)
        .add_node(move)
        .add_edge(START, "move")
        .add_edge("move", END)
        .compile(checkpointer=ChronoCheckpointer(store), store=store)
    )
    config = {"configurable": {"thread_id": "t1", "user_id": "alice"}}
    for city in CITIES[:4]:
        graph.invoke({"city": city}, config)
    store.compact(ALICE, keep_last=1)  # v2 and v3 erased
    past = next(
        s
        for s in graph.get_state_history(config)
        if s.next == ("move",) and s.values.get("city") == "Oslo"
    )  # memory then: v3 (Rome), compacted
    graph.invoke(
        None, {"configurable": {**past.config["configurable"], "user_id": "alice"}}
    )
    assert "memory not rewound" in caplog.text and "compacted" in caplog.text
    assert [c.op for c in store.log(ALICE)].count("rollback") == 0
    assert store.get(ALICE, "home").value == {"city": "Oslo"}


def test_the_compactor_keeps_history_bounded_in_the_background(
    store: ChronoStore,
) -> None:
    moves(store)
    with pytest.raises(InvalidRequestError):
        store.start_compactor(keep_last=0)
    with pytest.raises(InvalidRequestError):
        store.start_compactor(keep_last=2, interval_minutes=0)
    running = store.start_compactor(keep_last=2, interval_minutes=0.001)
    deadline = time.monotonic() + 30
    while store.history(ALICE, "home")[2].erased is None:
        assert time.monotonic() < deadline, "the compactor never ran"
        time.sleep(0.05)
    assert store.stop_compactor(timeout=10) and running.done()
    assert [v.version for v in store.history(ALICE, "home") if v.erased] == [
        6,
        5,
        4,
        3,
    ]
