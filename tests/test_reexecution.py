"""A task LangGraph runs again leaves one commit per write.

LangGraph runs a node again from its start when a run resumes after the node's
`interrupt()`, when a retry policy retries it, and when a run is resumed after
the process died inside it. Writes the node made before that point come again,
from the same task (same thread, same task id): each finds the value it wrote
already at HEAD, and makes no second commit. Real compiled graphs, a real
`ChronoCheckpointer`, and for the crash a real `kill -9`.
"""

from __future__ import annotations

import os
import subprocess
import sys
import textwrap
from pathlib import Path
from typing import Any

import pytest
from langgraph.graph import END, START, StateGraph
from langgraph.store.base import BaseStore
from langgraph.types import Command, RetryPolicy, interrupt
from typing_extensions import TypedDict

from langgraph_chronomem import ChronoCheckpointer, ChronoStore

ALICE = ("memories", "alice")
CONFIG: Any = {"configurable": {"thread_id": "t1", "user_id": "alice"}}


class State(TypedDict, total=False):
    answer: str


def compiled(store: ChronoStore, node: Any, **options: Any) -> Any:
    return (
        StateGraph(State)
        .add_node("node", node, **options)
        .add_edge(START, "node")
        .add_edge("node", END)
        .compile(checkpointer=ChronoCheckpointer(store), store=store)
    )


def puts(store: ChronoStore) -> list[tuple[str, str]]:
    """(op, summary) of every commit, oldest first."""
    return [(c.op, c.summary) for c in reversed(store.log(ALICE))]


def test_a_write_before_an_interrupt_is_committed_once(store: ChronoStore) -> None:
    def ask(state: State, *, store: BaseStore) -> State:
        store.put(ALICE, "plan", {"text": "move to Lisbon"})
        answer = interrupt("keep the plan?")
        store.put(ALICE, "answer", {"text": answer})
        return {"answer": answer}

    graph = compiled(store, ask)
    graph.invoke({}, CONFIG)
    assert graph.get_state(CONFIG).next == ("node",)  # paused at the interrupt
    graph.invoke(Command(resume="yes"), CONFIG)  # the node runs again from its start
    assert puts(store) == [
        ("put", "created memories/alice/plan: move to Lisbon"),
        ("put", "created memories/alice/answer: yes"),
    ]


def test_a_write_after_an_interrupt_is_committed_once(store: ChronoStore) -> None:
    def ask(state: State, *, store: BaseStore) -> State:
        answer = interrupt("which city?")
        store.put(ALICE, "city", {"text": answer})
        return {"answer": answer}

    graph = compiled(store, ask)
    graph.invoke({}, CONFIG)
    assert puts(store) == []
    graph.invoke(Command(resume="Lisbon"), CONFIG)
    assert puts(store) == [("put", "created memories/alice/city: Lisbon")]


def test_a_retried_node_commits_its_write_once(store: ChronoStore) -> None:
    attempts = []

    def flaky(state: State, *, store: BaseStore) -> State:
        store.put(ALICE, "plan", {"text": "move to Lisbon"})
        attempts.append(1)
        if len(attempts) == 1:
            raise ConnectionError("the model's API hung up")
        return {}

    graph = compiled(store, flaky, retry_policy=RetryPolicy(initial_interval=0.01))
    graph.invoke({}, CONFIG)
    assert len(attempts) == 2
    assert puts(store) == [("put", "created memories/alice/plan: move to Lisbon")]


def test_a_task_run_again_still_commits_what_it_now_writes_differently(
    store: ChronoStore,
) -> None:
    """Only the same value from the same task is skipped: a resumed node that
    writes something else, and another run writing the same value, commit."""

    def ask(state: State, *, store: BaseStore) -> State:
        store.put(ALICE, "draft", {"text": state.get("answer") or "first"})
        answer = interrupt("ok?")
        return {"answer": answer}

    graph = compiled(store, ask)
    graph.invoke({}, CONFIG)
    graph.invoke(Command(resume="yes"), CONFIG)
    other = {"configurable": {"thread_id": "t2", "user_id": "alice"}}
    graph.invoke({}, other)  # another thread, another task: the same value
    assert [op for op, _ in puts(store)] == ["put", "put"]


CHILD = textwrap.dedent(
    """
    import os, signal, sys
    from langgraph.graph import END, START, StateGraph
    from typing_extensions import TypedDict
    from langgraph_chronomem import open_chronomem

    class State(TypedDict, total=False):
        done: bool

    def work(state, *, store):
        store.put(("memories", "alice"), "plan", {"text": "move to Lisbon"})
        if sys.argv[2] == "crash":
            os.kill(os.getpid(), signal.SIGKILL)  # dies inside the node
        store.put(("memories", "alice"), "done", {"text": "yes"})
        return {"done": True}

    store, saver = open_chronomem(sys.argv[1], scope_depth=2)
    graph = (
        StateGraph(State).add_node("work", work).add_edge(START, "work")
        .add_edge("work", END).compile(checkpointer=saver, store=store)
    )
    config = {"configurable": {"thread_id": "t1", "user_id": "alice"}}
    # "sync": each checkpoint is saved before its tasks run, so the resumed run
    # has the same task (with LangGraph's default, "async", a kill can come
    # before the checkpoint is saved, and the task is a new one)
    graph.invoke({} if sys.argv[2] == "crash" else None, config, durability="sync")
    store.close()
    """
)


def test_a_node_run_again_after_a_crash_commits_its_write_once(
    tmp_path: Path,
) -> None:
    env = {**os.environ, "PYTHONPATH": os.pathsep.join(sys.path)}
    for mode, code in (("crash", -9), ("resume", 0)):
        done = subprocess.run(
            [sys.executable, "-c", CHILD, str(tmp_path), mode],
            env=env,
            capture_output=True,
            text=True,
            timeout=120,
            check=False,
        )
        assert done.returncode == code, done.stderr
    with ChronoStore.from_path(tmp_path, scope_depth=2) as store:
        assert puts(store) == [
            ("put", "created memories/alice/plan: move to Lisbon"),
            ("put", "created memories/alice/done: yes"),
        ]


@pytest.mark.parametrize("value", [{"text": "move to Lisbon"}, {"text": "stay"}])
def test_writes_outside_a_task_are_never_skipped(
    store: ChronoStore, value: dict[str, str]
) -> None:
    store.put(ALICE, "plan", {"text": "move to Lisbon"})
    store.put(ALICE, "plan", value)
    assert store.head(ALICE) == 2
