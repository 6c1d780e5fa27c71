"""The undo and history tools on a branch, in real compiled graphs driven by a
scripted model: a graph compiled with `store.on_branch(...)` undoes on that
branch, and so does a tool given `branch=` (a name from the run's config)
in a graph compiled with the store; HEAD is never touched.
"""

from __future__ import annotations

import pytest

from langgraph_chronomem import BranchNotFound, ChronoStore
from langgraph_chronomem.tools import (
    create_memory_history_tool,
    create_undo_memory_tool,
)
from tests.test_tools import (
    ALICE,
    SEEDED,
    TEACHER,
    agent_graph,
    ask,
    call,
    config,
    memory,
    replies,
    seed,
)

ASTRONAUT = "User works as an astronaut"
WRONG = "forget that I work as an astronaut"


def on_trial(store: ChronoStore) -> ChronoStore:
    """Alice's memory (test_tools.py's, v1..v4), and branch `trial` of it
    where an agent wrote a wrong job as v5."""
    seed(store)
    store.branch(ALICE, "trial")
    store.on_branch(ALICE, "trial").put(ALICE, "job", {"content": ASTRONAUT})
    return store


def test_a_graph_compiled_on_a_branch_undoes_there(store: ChronoStore) -> None:
    on_trial(store)
    tool = create_undo_memory_tool(("memories", "{user_id}"))
    script = [call("undo_memory", request=WRONG), call("undo_memory", request="6")]
    graph = agent_graph(store.on_branch(ALICE, "trial"), script, [tool])
    updates = graph.stream(ask(WRONG), config(), stream_mode="updates")
    seen = [u["recall"]["seen"] for u in updates if "recall" in u]
    # the later node reads the branch: the job undone, then (by its id) redone
    assert seen == [SEEDED, {**SEEDED, "job": ASTRONAUT}]
    undo, redo = replies(graph.get_state(config()).values)
    assert undo == (
        f'Memory changed (now v6): changed "{ASTRONAUT}" -> "{TEACHER}". '
        "To reverse it, call undo_memory with request '6'."
    )
    assert redo.startswith("Memory changed (now v7)")
    assert memory(store) == SEEDED and store.head(ALICE) == 4  # HEAD untouched
    revert = store.log(ALICE, branch="trial")[1]
    assert (revert.version, revert.op, revert.target) == (6, "revert", 5)
    assert (revert.labels["branch"], revert.labels["node"]) == ("trial", "tools")


def test_a_tool_bound_to_the_run_s_branch_undoes_there(store: ChronoStore) -> None:
    on_trial(store)
    undo = create_undo_memory_tool(("memories", "{user_id}"), branch="{branch}")
    history = create_memory_history_tool(("memories", "{user_id}"), branch="{branch}")
    script = [
        call("memory_history", query="my job"),
        call("undo_memory", request=WRONG),
        call("memory_history", query="my job", as_of="v5"),
    ]
    graph = agent_graph(store, script, [undo, history])
    run = {"configurable": {**config()["configurable"], "branch": "trial"}}
    graph.invoke(ask(WRONG), run)
    found, undone, then = replies(graph.get_state(run).values)
    # the branch's own change, by its id on the branch; none of HEAD's
    assert found.splitlines()[1].startswith("- [5.1] ")
    assert len(found.splitlines()) == 2
    assert undone.startswith(f'Memory changed (now v6): changed "{ASTRONAUT}"')
    assert memory(store.on_branch(ALICE, "trial"))["job"] == TEACHER
    assert memory(store) == SEEDED and store.head(ALICE) == 4
    # as of the branch's v5: what the branch held then, before the undo
    assert then.startswith("Memory as of v5 matching") and "at v6" in then
    assert ASTRONAUT in then and TEACHER not in then


def test_a_conflict_on_a_branch_asks_without_offering_to_go_back(
    store: ChronoStore,
) -> None:
    """A branch goes back one change at a time, so when the change to undo was
    changed again since, the reply asks the person and does not offer
    `whole_memory=true`, which a branch refuses."""
    on_trial(store)
    branch = store.on_branch(ALICE, "trial")
    branch.put(ALICE, "job", {"content": "User works as an astronaut at NASA"})
    undo = create_undo_memory_tool(store=store, branch="trial")
    reply = undo.invoke({"request": "5.1"}, config())
    assert reply.startswith("Nothing changed: that memory was changed again since")
    assert "whole_memory" not in reply
    assert branch.get(ALICE, "job").value == {
        "content": "User works as an astronaut at NASA"
    }


def test_the_history_tool_on_an_unknown_branch_says_which_branches_there_are(
    store: ChronoStore,
) -> None:
    """A history tool bound to a branch the scope lacks raises `BranchNotFound`,
    as every other branch call does, whatever `as_of` names."""
    on_trial(store)
    history = create_memory_history_tool(store=store, branch="nope")
    for as_of in ("v1", "2030-01-01", None):
        args = {"query": "job"} if as_of is None else {"query": "job", "as_of": as_of}
        with pytest.raises(BranchNotFound, match="trial"):
            history.invoke(args, config())
