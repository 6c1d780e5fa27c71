"""Time travel keeps memory consistent: replays and forks see memory as it was.

Real compiled graphs, with the store and the checkpointer on one path. Each turn a
`read` node records which memories it sees, then a `write` node adds one. Most
tests here run the whole-scope `rewind`; the default, `revert` (undo what the
thread itself wrote since, keep what the user's other threads wrote), has its
own section at the end.
"""

from __future__ import annotations

import operator
from typing import Annotated, Any

import pytest
from langchain_core.runnables import RunnableConfig
from langgraph.graph import END, START, StateGraph
from langgraph.store.base import BaseStore
from langgraph.types import StateSnapshot
from typing_extensions import TypedDict

from langgraph_chronomem import ChronoStore, commit_context
from langgraph_chronomem.checkpoint import ChronoCheckpointer, TimeTravel

ALICE = ("memories", "alice")
BOB = ("memories", "bob")


class Turn(TypedDict):
    turn: int
    seen: Annotated[list, operator.add]


def read(state: Turn, config: RunnableConfig, *, store: BaseStore) -> dict[str, Any]:
    me = ("memories", config["configurable"]["user_id"])
    return {"seen": [sorted(item.key for item in store.search(me))]}


def write(state: Turn, config: RunnableConfig, *, store: BaseStore) -> dict[str, Any]:
    me = ("memories", config["configurable"]["user_id"])
    store.put(me, f"turn{state['turn']}", {"turn": state["turn"]})
    return {}


def build(
    store: ChronoStore, on_time_travel: TimeTravel = "rewind", **compile: Any
) -> tuple[Any, ChronoCheckpointer]:
    saver = ChronoCheckpointer(store, on_time_travel=on_time_travel)
    graph = (
        StateGraph(Turn)
        .add_node(read)
        .add_node(write)
        .add_edge(START, "read")
        .add_edge("read", "write")
        .add_edge("write", END)
        .compile(checkpointer=saver, store=store, **compile)
    )
    return graph, saver


def run(user: str = "alice", thread: str = "t1") -> dict[str, Any]:
    return {"configurable": {"thread_id": thread, "user_id": user}}


def at(snapshot: StateSnapshot, user: str = "alice") -> dict[str, Any]:
    """The run config for replaying from a snapshot."""
    return {"configurable": {**snapshot.config["configurable"], "user_id": user}}


def before(graph: Any, node: str, turn: int, config: dict[str, Any]) -> StateSnapshot:
    """The checkpoint just before `node` ran in `turn`."""
    return next(
        s
        for s in graph.get_state_history(config)
        if s.next == (node,) and s.values.get("turn") == turn
    )


def memory(store: ChronoStore, scope: tuple[str, ...] = ALICE) -> list[str]:
    return sorted(item.key for item in store.search(scope))


def rewinds(store: ChronoStore, scope: tuple[str, ...] = ALICE) -> list[Any]:
    return [c for c in store.log(scope) if c.op == "rollback"]


def three_turns(graph: Any, user: str = "alice", thread: str = "t1") -> None:
    for turn in (1, 2, 3):
        graph.invoke({"turn": turn}, run(user, thread))


def test_a_replay_sees_memory_as_the_first_run_did(store: ChronoStore) -> None:
    graph, _ = build(store)
    three_turns(graph)
    first_time = graph.get_state(run()).values["seen"]
    assert first_time == [[], ["turn1"], ["turn1", "turn2"]]
    past = before(graph, "read", 2, run())
    replayed = graph.invoke(None, at(past))
    assert replayed["seen"][-1] == first_time[1] == ["turn1"]
    (rewind,) = rewinds(store)
    assert rewind.author == "time-travel" and rewind.target == 1
    assert past.config["configurable"]["checkpoint_id"] in (rewind.reason or "")
    assert rewind.labels["thread_id"] == "t1"
    assert memory(store) == ["turn1", "turn2"]  # the replayed turn wrote again


def test_every_checkpoint_records_what_its_next_node_saw(store: ChronoStore) -> None:
    """The memory position is not polluted by writes of the node that ran next,
    although LangGraph saves checkpoints in the background."""
    graph, saver = build(store)
    for turn in range(1, 6):
        graph.invoke({"turn": turn}, run())
    for snapshot in graph.get_state_history(run()):
        turn = snapshot.values.get("turn")
        if snapshot.next in (("read",), ("write",)):
            assert saver.memory_version(snapshot.config) == turn - 1
        elif turn is not None and not snapshot.next:
            assert saver.memory_version(snapshot.config) == turn


def test_update_state_on_the_past_rewinds_before_returning(store: ChronoStore) -> None:
    graph, _ = build(store)
    three_turns(graph)
    past = before(graph, "read", 2, run())
    forked = graph.update_state(past.config, {"turn": 20})  # user_id from the record
    assert memory(store) == ["turn1"]
    assert len(rewinds(store)) == 1
    out = graph.invoke(
        None, {"configurable": {**forked["configurable"], "user_id": "alice"}}
    )
    assert out["seen"][-1] == ["turn1"]
    assert memory(store) == ["turn1", "turn20"]
    assert len(rewinds(store)) == 1  # continuing the fork is a normal step


def test_the_rewind_can_be_undone(store: ChronoStore) -> None:
    graph, _ = build(store)
    three_turns(graph)
    graph.update_state(at(before(graph, "write", 2, run())), {"turn": 7})
    (rewind,) = rewinds(store)
    assert memory(store) == ["turn1"]
    store.rollback(ALICE, to=rewind.version - 1)
    assert memory(store) == ["turn1", "turn2", "turn3"]


def test_keep_leaves_memory_alone(store: ChronoStore) -> None:
    graph, _ = build(store, on_time_travel="keep")
    three_turns(graph)
    replayed = graph.invoke(None, at(before(graph, "read", 2, run())))
    assert replayed["seen"][-1] == ["turn1", "turn2", "turn3"]
    assert rewinds(store) == []


def test_another_users_memory_is_untouched(store: ChronoStore) -> None:
    graph, _ = build(store)
    three_turns(graph)
    three_turns(graph, user="bob", thread="t2")
    bob_before = (store.head(BOB), memory(store, BOB))
    graph.invoke(None, at(before(graph, "read", 1, run())))
    assert memory(store) == ["turn1"]
    assert (store.head(BOB), memory(store, BOB)) == bob_before
    assert rewinds(store, BOB) == []


def test_normal_continuation_never_rewinds(store: ChronoStore) -> None:
    graph, _ = build(store, interrupt_before=["write"])
    for turn in (1, 2):
        graph.invoke({"turn": turn}, run())  # pauses before `write`
        graph.invoke(None, run())  # resumes from the latest checkpoint
    latest = graph.get_state(run())
    graph.invoke({"turn": 3}, at(latest))  # addressed, but it is the latest
    graph.invoke(None, at(graph.get_state(run())))
    assert memory(store) == ["turn1", "turn2", "turn3"]
    assert rewinds(store) == []


def test_looking_at_the_past_never_rewinds(store: ChronoStore) -> None:
    graph, saver = build(store)
    three_turns(graph)
    past = before(graph, "read", 1, run())
    looked: list[Any] = []

    def peek(state: Turn, config: RunnableConfig) -> dict[str, Any]:
        at_past = {**config["configurable"], **past.config["configurable"]}
        looked.append(saver.get_tuple({"configurable": at_past}))  # inside a task
        return {}

    peeking = (
        StateGraph(Turn)
        .add_node(peek)
        .add_edge(START, "peek")
        .compile(checkpointer=saver, store=store)
    )
    peeking.invoke({"turn": 4}, run(thread="t2"))
    assert graph.get_state(at(past)).values["turn"] == 1
    assert saver.memory_version(past.config) == 0
    assert looked[0].checkpoint["id"] == past.config["configurable"]["checkpoint_id"]
    assert memory(store) == ["turn1", "turn2", "turn3"]
    assert rewinds(store) == []


def test_a_replay_in_exit_mode_keeps_its_own_writes(store: ChronoStore) -> None:
    """With `durability="exit"` the fork is saved only at the end, after the
    replayed nodes wrote memory; saving it must not rewind a second time."""
    graph, saver = build(store)
    three_turns(graph)
    out = graph.invoke(None, at(before(graph, "read", 2, run())), durability="exit")
    assert out["seen"][-1] == ["turn1"]
    assert memory(store) == ["turn1", "turn2"]
    assert len(rewinds(store)) == 1
    assert saver.memory_version(run()) == store.head(ALICE)


def test_time_travel_without_a_user_replays_and_says_memory_stayed(
    store: ChronoStore, caplog: pytest.LogCaptureFixture
) -> None:
    """A graph whose runs name no user (one that keeps no memory, as in
    LangGraph's own saver suites) replays as on any checkpointer; the log says
    why memory was not rewound and what would name it."""
    saver = ChronoCheckpointer(store)
    graph = (
        StateGraph(Turn)
        .add_node("count", lambda s: {"turn": s["turn"] + 1})
        .add_edge(START, "count")
        .compile(checkpointer=saver, store=store)
    )
    config = {"configurable": {"thread_id": "anon"}}
    graph.invoke({"turn": 0}, config)
    graph.invoke({"turn": 5}, config)
    first = list(graph.get_state_history(config))[-1]
    with caplog.at_level("WARNING", logger="langgraph_chronomem"):
        assert graph.invoke(None, first.config)["turn"] == 1
    assert "memory not rewound" in caplog.text and "needs 'user_id'" in caplog.text


async def test_async_replay_and_fork(store: ChronoStore) -> None:
    graph, saver = build(store)
    for turn in (1, 2, 3):
        await graph.ainvoke({"turn": turn}, run())
    history = [s async for s in graph.aget_state_history(run())]
    past = next(s for s in history if s.next == ("read",) and s.values["turn"] == 2)
    replayed = await graph.ainvoke(None, at(past))
    assert replayed["seen"][-1] == ["turn1"]
    assert memory(store) == ["turn1", "turn2"]
    await graph.aupdate_state(at(past), {"turn": 9})
    assert memory(store) == ["turn1"]
    assert [c.author for c in rewinds(store)] == ["time-travel", "time-travel"]
    assert await saver.amemory_version(past.config) == 1


# == The default: revert the thread's own changes, spare the other threads' ====


def interleaved(graph: Any) -> None:
    """Alice talks in two threads: t1 turns 1-3, t2 turns 11-12 in between."""
    for thread, turn in (("t1", 1), ("t2", 11), ("t1", 2), ("t2", 12), ("t1", 3)):
        graph.invoke({"turn": turn}, run(thread=thread))


def test_replaying_a_thread_keeps_what_the_users_other_threads_wrote(
    store: ChronoStore,
) -> None:
    graph, saver = build(store, "revert")
    assert saver.on_time_travel == ChronoCheckpointer(store).on_time_travel
    interleaved(graph)
    replayed = graph.invoke(None, at(before(graph, "read", 2, run())))
    # t1's turn2 and turn3 are undone; t2's turn12, written since, stays
    assert replayed["seen"][-1] == ["turn1", "turn11", "turn12"]
    assert memory(store) == ["turn1", "turn11", "turn12", "turn2"]
    travel = next(c for c in store.log(ALICE) if c.author == "time-travel")
    assert travel.op == "revert" and travel.labels["thread_id"] == "t1"
    assert sorted(c.key for c in travel.changes) == ["turn2", "turn3"]
    assert rewinds(store) == []  # no whole-scope rollback


def test_a_fork_keeps_what_three_other_threads_wrote(store: ChronoStore) -> None:
    graph, _ = build(store, "revert")
    graph.invoke({"turn": 1}, run(thread="t1"))
    for thread, turn in (("t2", 21), ("t3", 31), ("t4", 41)):
        graph.invoke({"turn": turn}, run(thread=thread))
    graph.invoke({"turn": 2}, run(thread="t1"))
    graph.update_state(at(before(graph, "read", 2, run())), {"turn": 9})
    assert memory(store) == ["turn1", "turn21", "turn31", "turn41"]


def test_an_item_another_thread_wrote_over_keeps_that_threads_value(
    store: ChronoStore,
) -> None:
    """Three-way: the thread's change sits under another writer's, which stays."""
    graph, _ = build(store, "revert")
    graph.invoke({"turn": 1}, run())
    graph.invoke({"turn": 2}, run())  # t1 writes turn2 ...
    with commit_context(labels={"thread_id": "t2"}):  # ... which t2 then rewrites
        store.put(ALICE, "turn2", {"turn": "from t2"})
    graph.invoke({"turn": 3}, run())
    replayed = graph.invoke(None, at(before(graph, "read", 2, run())))
    assert replayed["seen"][-1] == ["turn1", "turn2"]  # t2's turn2, not t1's turn3
    travel = next(c for c in store.log(ALICE) if c.author == "time-travel")
    assert [c.key for c in travel.changes] == ["turn3"]


def test_the_whole_scope_rewind_is_there_when_asked(store: ChronoStore) -> None:
    graph, _ = build(store, "rewind")
    interleaved(graph)
    replayed = graph.invoke(None, at(before(graph, "read", 2, run())))
    assert replayed["seen"][-1] == ["turn1", "turn11"]  # t2's turn12 rolled back too
    (rewind,) = rewinds(store)
    assert rewind.author == "time-travel"


# -- proposals (writes awaiting review) ---------------------------------------


def propose(state: Turn, config: RunnableConfig, *, store: BaseStore) -> dict[str, Any]:
    """`write`, as a proposal a person must approve."""
    with commit_context(review=True):
        return write(state, config, store=store)


@pytest.mark.parametrize(
    ("mode", "kept"), [("revert", ["turn1", "turn9"]), ("rewind", ["turn1"])]
)
def test_a_proposal_of_a_run_time_travel_undid_is_rejected(
    store: ChronoStore, mode: TimeTravel, kept: list[str]
) -> None:
    """A replay rejects what the runs it goes back before proposed (with
    `rewind`, what anyone proposed since), so no review waits on a past the
    thread left; the replayed run proposes again."""
    saver = ChronoCheckpointer(store, on_time_travel=mode)
    graph = (
        StateGraph(Turn)
        .add_node(read)
        .add_node("write", propose)
        .add_edge(START, "read")
        .add_edge("read", "write")
        .compile(checkpointer=saver, store=store)
    )
    graph.invoke({"turn": 1}, run())
    graph.invoke({"turn": 2}, run())
    graph.invoke({"turn": 9}, run(thread="t2"))  # the user's other thread

    def pending() -> list[str]:
        return [p.changes[0].key for p in store.proposals(ALICE)]

    assert pending() == ["turn1", "turn2", "turn9"]
    graph.invoke(None, at(before(graph, "read", 2, run())))
    assert pending() == [*kept, "turn2"]  # turn2 proposed again by the replay
    rejected = [c for c in store.log(ALICE) if c.op == "reject"]
    assert {c.author for c in rejected} == {"time-travel"}
    assert all(c.labels["thread_id"] == "t1" for c in rejected)
    assert memory(store) == []  # nothing was approved, nothing is in memory
