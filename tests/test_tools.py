"""The undo and history tools inside real compiled graphs, driven by a scripted model.

Alice's memory, in every test: v1 home Boston, v2 job teacher, v3 home New York
City, v4 pet cat. Bob has his own timeline (v1 home Rome).
"""

from __future__ import annotations

from collections.abc import Iterator, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import pytest
from langchain_core.language_models import BaseChatModel
from langchain_core.messages import AIMessage, BaseMessage, ToolMessage
from langchain_core.outputs import ChatGeneration, ChatResult
from langchain_core.runnables import RunnableConfig
from langchain_core.tools import BaseTool
from langgraph.checkpoint.memory import InMemorySaver
from langgraph.graph import START, MessagesState, StateGraph
from langgraph.prebuilt import ToolNode, tools_condition
from langgraph.runtime import Runtime
from langgraph.types import Command

from langgraph_chronomem import ChronoStore, ConfigError, ScopeError
from langgraph_chronomem.search.resolve import ResolverConfig
from langgraph_chronomem.tools import (
    NamespaceTemplate,
    create_memory_history_tool,
    create_undo_memory_tool,
    create_undo_node,
)

ALICE = ("memories", "alice")
NYC = "undo the update about my move to New York"


class ScriptedModel(BaseChatModel):
    """A chat model that answers turn `n` with `script[n]`, then says "done".

    The turn is the number of AI messages so far, so a resumed graph replays the
    same answers.
    """

    script: list[AIMessage]

    @property
    def _llm_type(self) -> str:
        return "scripted"

    def bind_tools(self, tools: Any, **kwargs: Any) -> ScriptedModel:
        return self

    def _generate(
        self,
        messages: list[BaseMessage],
        stop: list[str] | None = None,
        run_manager: Any = None,
        **kwargs: Any,
    ) -> ChatResult:
        turn = sum(isinstance(m, AIMessage) for m in messages)
        message = self.script[turn] if turn < len(self.script) else AIMessage("done")
        return ChatResult(generations=[ChatGeneration(message=message)])


def call(name: str, **args: Any) -> AIMessage:
    return AIMessage("", tool_calls=[{"name": name, "args": args, "id": f"c-{name}"}])


class State(MessagesState, total=False):
    seen: dict[str, str]


def recall(state: State, config: RunnableConfig, runtime: Runtime) -> dict[str, Any]:
    """A later node that reads memory: the user's items at HEAD."""
    assert runtime.store is not None
    user = config["configurable"].get("user_id", "nobody")
    items = runtime.store.search(("memories", user))
    return {"seen": {i.key: next(iter(i.value.values())) for i in items}}


def agent_graph(
    store: ChronoStore | None,
    script: list[AIMessage],
    tools: Sequence[BaseTool] | ToolNode,
    context: type | None = None,
) -> Any:
    """agent -> tools -> recall -> agent -> END, with a checkpointer."""
    model = ScriptedModel(script=script)

    def agent(state: State) -> dict[str, Any]:
        return {"messages": [model.invoke(state["messages"])]}

    builder = StateGraph(State, context_schema=context)
    builder.add_node("agent", agent)
    builder.add_node("tools", tools if isinstance(tools, ToolNode) else ToolNode(tools))
    builder.add_node("recall", recall)
    builder.add_edge(START, "agent")
    builder.add_conditional_edges("agent", tools_condition)
    builder.add_edge("tools", "recall")
    builder.add_edge("recall", "agent")
    return builder.compile(store=store, checkpointer=InMemorySaver())


def config(user: str = "alice", thread: str = "t1") -> RunnableConfig:
    return {"configurable": {"user_id": user, "thread_id": thread}}


def ask(text: str) -> dict[str, Any]:
    return {"messages": [("user", text)]}


def replies(result: dict[str, Any]) -> list[str]:
    return [str(m.content) for m in result["messages"] if isinstance(m, ToolMessage)]


def seed(store: ChronoStore) -> ChronoStore:
    store.put(ALICE, "home", {"city": "Boston"})
    store.put(ALICE, "job", {"title": "teacher"})
    store.put(ALICE, "home", {"city": "New York City"})
    store.put(ALICE, "pet", {"kind": "cat"})
    store.put(("memories", "bob"), "home", {"city": "Rome"})
    return store


@pytest.fixture
def alice(store: ChronoStore) -> ChronoStore:
    return seed(store)


@pytest.fixture
def unsure(tmp_path: Path) -> Iterator[ChronoStore]:
    """Alice's memory in a store that never decides between two matches."""
    resolver = ResolverConfig(margin=1.0)
    with ChronoStore.from_path(tmp_path / "m", scope_depth=2, resolver=resolver) as s:
        yield seed(s)


def memory(store: ChronoStore, scope: tuple[str, ...] = ALICE) -> dict[str, str]:
    return {i.key: next(iter(i.value.values())) for i in store.search(scope)}


# 1. later reads see the restored HEAD, and 'redo' reverses the undo


def test_after_the_undo_later_nodes_read_the_restored_memory(
    alice: ChronoStore,
) -> None:
    tool = create_undo_memory_tool(("memories", "{user_id}"))
    script = [call("undo_memory", request=NYC), call("undo_memory", request="redo")]
    graph = agent_graph(alice, script, [tool])
    updates = graph.stream(ask("I never moved to NYC"), config(), stream_mode="updates")
    seen = [u["recall"]["seen"] for u in updates if "recall" in u]
    assert seen == [
        {"home": "Boston", "job": "teacher"},
        {"home": "New York City", "job": "teacher", "pet": "cat"},
    ]
    undo, redo = replies(graph.get_state(config()).values)
    assert undo == (
        "Memory changed: rolled back to v2: updated memories/alice/home: New York "
        "City -> Boston; deleted memories/alice/pet (was cat) (now v5). To reverse "
        "it, call undo_memory with request 'redo'."
    )
    assert redo.startswith("Memory changed: rolled back to v4:")
    commit = alice.show(ALICE, 5)
    assert (commit.author, commit.reason) == ("undo_memory", f"undo: {NYC}")
    assert commit.labels["node"] == "tools"


def test_the_model_sees_only_the_request_arguments() -> None:
    undo = create_undo_memory_tool()
    history = create_memory_history_tool()
    assert set(undo.tool_call_schema.model_json_schema()["properties"]) == {
        "request",
        "only_that_change",
    }
    assert set(history.tool_call_schema.model_json_schema()["properties"]) == {
        "query",
        "limit",
    }


# 2. approval through interrupt()


def _pending(graph: Any, cfg: RunnableConfig) -> dict[str, Any]:
    (task,) = [t for t in graph.get_state(cfg).tasks if t.interrupts]
    (pending,) = task.interrupts
    return pending.value


def test_approval_pauses_with_the_candidates_and_applies_the_choice(
    unsure: ChronoStore,
) -> None:
    node = create_undo_node(require_approval=True)
    script = [call("undo_memory", request="go back to when I lived in Boston")]
    graph = agent_graph(unsure, script, node)
    paused = graph.invoke(ask("back to Boston please"), config())
    (pending,) = paused["__interrupt__"]
    question = pending.value
    assert question == _pending(graph, config())
    assert pending.response_schema is not None  # for clients that render a form
    assert unsure.head(ALICE) == 4  # nothing applied while waiting
    assert question["action"] == "rollback" and question["recommended"] is None
    by_summary = {c["summary"]: c for c in question["candidates"]}
    boston = by_summary["created memories/alice/home: Boston"]
    assert (boston["target"], boston["commit"]) == (1, 1)
    assert boston["changes"] == [
        "updated memories/alice/home: New York City -> Boston",
        "deleted memories/alice/job (was teacher)",
        "deleted memories/alice/pet (was cat)",
    ]
    done = graph.invoke(Command(resume={"choice": boston["index"]}), config())
    assert done["seen"] == memory(unsure) == {"home": "Boston"}
    assert replies(done)[-1].startswith("Memory changed: rolled back to v1:")


@pytest.mark.parametrize(
    ("answer", "reply"),
    [
        ("cancel", "Nothing changed: cancelled."),
        ({"choice": "cancel"}, "Nothing changed: cancelled."),
        ("v99", "Nothing changed: no candidate 'v99'; resume with a candidate index"),
        (True, "Nothing changed: no candidate True;"),
    ],
)
def test_cancel_or_an_unknown_choice_applies_nothing(
    unsure: ChronoStore, answer: Any, reply: str
) -> None:
    node = create_undo_node(require_approval=True)
    graph = agent_graph(unsure, [call("undo_memory", request=NYC)], node)
    graph.invoke(ask("undo NYC"), config())
    done = graph.invoke(Command(resume=answer), config())
    assert unsure.head(ALICE) == 4
    assert replies(done)[-1].startswith(reply)


def test_without_approval_close_matches_are_listed_not_guessed(
    unsure: ChronoStore,
) -> None:
    graph = agent_graph(
        unsure, [call("undo_memory", request=NYC)], [create_undo_memory_tool()]
    )
    (reply,) = replies(graph.invoke(ask("undo NYC"), config()))
    assert reply.startswith("Nothing changed: not sure which change you mean. ")
    assert (
        "[0] v3 (" in reply
        and "updated memories/alice/home: Boston -> New York City" in reply
    )
    assert reply.endswith("then call again with a more specific request.")
    assert unsure.head(ALICE) == 4


# 3. one user can never reach another's memory


def test_bob_cannot_undo_or_see_alices_memory(alice: ChronoStore) -> None:
    before = alice.log(ALICE)
    tools = [create_undo_memory_tool(), create_memory_history_tool()]
    script = [
        call("undo_memory", request=NYC),
        call("memory_history", query="my move to New York City"),
    ]
    result = agent_graph(alice, script, tools).invoke(ask("undo NYC"), config("bob"))
    assert alice.log(ALICE) == before
    assert memory(alice)["home"] == "New York City"
    undo, history = replies(result)
    assert undo.startswith("Nothing changed: nothing in this memory's history")
    assert "memories/bob/home: Rome" in history
    assert not any(word in undo + history for word in ("alice", "Boston", "teacher"))
    assert memory(alice, ("memories", "bob")) == {"home": "Rome"}


def test_a_placeholder_outside_the_scope_is_refused(tmp_path: Path) -> None:
    with ChronoStore.from_path(tmp_path / "shared", scope_depth=1) as shared:
        shared.put(ALICE, "home", {"city": "Boston"})
        tool = create_undo_memory_tool(store=shared)
        with pytest.raises(ScopeError, match="outside the store's scope"):
            tool.invoke({"request": "undo Boston"}, config())
        assert shared.head(("memories",)) == 1


# 4. namespace templates are checked


def test_a_missing_template_value_names_the_available_keys(alice: ChronoStore) -> None:
    graph = agent_graph(
        alice,
        [call("undo_memory", request=NYC)],
        [create_undo_memory_tool(("memories", "{user_id}"))],
    )
    cfg: RunnableConfig = {"configurable": {"thread_id": "t9", "user": "alice"}}
    with pytest.raises(ConfigError, match=r"needs 'user_id'.*available: .*\buser\b"):
        graph.invoke(ask("undo NYC"), cfg)
    assert alice.head(ALICE) == 4


@pytest.mark.parametrize("value", ["alice.admin", "", 42])
def test_a_template_value_must_be_a_plain_string(value: Any) -> None:
    with pytest.raises(ConfigError, match="must be a non-empty string without '\\.'"):
        NamespaceTemplate(("memories", "{user_id}"))(
            {"configurable": {"user_id": value}}
        )


def test_template_values_come_from_configurable_then_context() -> None:
    template = NamespaceTemplate(("memories", "{org}", "user-{user_id}"))
    filled = template({"configurable": {"org": "acme"}}, {"user_id": "7"})
    assert filled == ("memories", "acme", "user-7")
    both = template({"configurable": {"org": "a", "user_id": "8"}}, {"user_id": "7"})
    assert both == ("memories", "a", "user-8")


@dataclass
class UserContext:
    user_id: str


# LangChain warns when it serializes any ToolRuntime that carries a context.
@pytest.mark.filterwarnings("ignore:Pydantic serializer warnings:UserWarning")
@pytest.mark.parametrize("context", [{"user_id": "alice"}, UserContext("alice")])
def test_template_values_can_come_from_the_graph_context(
    alice: ChronoStore, context: Any
) -> None:
    script = [call("memory_history", query="my home city")]
    graph = agent_graph(alice, script, [create_memory_history_tool()], type(context))
    cfg: RunnableConfig = {"configurable": {"thread_id": "t1"}}
    (reply,) = replies(graph.invoke(ask("where did I live?"), cfg, context=context))
    assert "memories/alice/home: Boston -> New York City" in reply


@pytest.mark.parametrize("bad", ["memories", (), ("m", "{user.id}"), ("m", "{user_id")])
def test_a_malformed_template_is_refused_at_creation(bad: Any) -> None:
    with pytest.raises(ConfigError):
        create_undo_memory_tool(bad)


def test_without_a_chronostore_the_error_says_so() -> None:
    with pytest.raises(ConfigError, match="need a ChronoStore"):
        create_undo_memory_tool().invoke({"request": "undo"})  # outside any graph


def test_a_graph_without_a_chronostore_gets_a_clear_error() -> None:
    graph = agent_graph(
        None, [call("undo_memory", request=NYC)], [create_undo_memory_tool()]
    )
    with pytest.raises(ConfigError, match="need a ChronoStore"):
        graph.invoke(ask("undo NYC"), config())


# 5. async graphs


async def test_the_async_path_undoes_and_resumes(astore: ChronoStore) -> None:
    seed(astore)
    graph = agent_graph(
        astore,
        [call("undo_memory", request=NYC)],
        [create_undo_memory_tool(require_approval=True)],
    )
    paused = await graph.ainvoke(ask("undo NYC"), config())
    (question,) = [i.value for i in paused["__interrupt__"]]
    assert question["candidates"][0]["summary"].endswith("Boston -> New York City")
    done = await graph.ainvoke(Command(resume=0), config())
    assert done["seen"] == {"home": "Boston", "job": "teacher"}


# 6. only that change


@pytest.mark.parametrize("approval", [False, True])
def test_only_that_change_keeps_later_changes(
    alice: ChronoStore, approval: bool
) -> None:
    tool = create_undo_memory_tool(require_approval=approval)
    script = [call("undo_memory", request=NYC, only_that_change=True)]
    graph = agent_graph(alice, script, [tool])
    result = graph.invoke(ask("undo NYC, keep the rest"), config())
    if approval:
        (question,) = [i.value for i in result["__interrupt__"]]
        (nyc,) = [c for c in question["candidates"] if c["commit"] == 3]
        assert question["action"] == "revert"
        assert nyc["changes"] == [
            "updated memories/alice/home: New York City -> Boston"
        ]
        result = graph.invoke(Command(resume=f"v{nyc['target']}"), config())
    assert result["seen"] == {"home": "Boston", "job": "teacher", "pet": "cat"}
    assert replies(result)[-1].startswith(
        "Memory changed: reverted v3: updated memories/alice/home: New York City -> "
        "Boston (now v5)."
    )


def test_only_that_change_reports_a_conflict_and_changes_nothing(
    alice: ChronoStore,
) -> None:
    alice.put(ALICE, "home", {"city": "Denver"})
    tool = create_undo_memory_tool(store=alice)
    request = "undo my move from Boston to New York"
    reply = tool.invoke({"request": request, "only_that_change": True}, config())
    assert reply == (
        "Nothing changed: cannot revert v3: memories/alice/home (changed again in "
        "v5). Undo without only_that_change instead."
    )
    assert alice.head(ALICE) == 5


def test_redo_reverses_an_only_that_change_undo(alice: ChronoStore) -> None:
    tool = create_undo_memory_tool(store=alice)
    tool.invoke({"request": NYC, "only_that_change": True}, config())
    tool.invoke({"request": "redo"}, config())
    assert memory(alice)["home"] == "New York City"


# 7. history


def test_history_returns_past_values_labelled_as_history(alice: ChronoStore) -> None:
    alice.rollback(ALICE, to=2)  # New York City is no longer in memory
    graph = agent_graph(
        alice,
        [call("memory_history", query="my home city")],
        [create_memory_history_tool(("memories", "{user_id}"))],
    )
    (reply,) = replies(graph.invoke(ask("where did I live last week?"), config()))
    header, *lines = reply.splitlines()
    assert header == (
        "History for 'my home city' (past versions, best match first; not current "
        "memory, which is at v5):"
    )
    nyc = "UTC): updated memories/alice/home: Boston -> New York City"
    assert any(line.startswith("- v3 (") and line.endswith(nyc) for line in lines)
    assert 1 <= len(lines) <= 5


async def test_history_async_and_with_nothing_to_find(astore: ChronoStore) -> None:
    tool = create_memory_history_tool(store=astore)
    reply = await tool.ainvoke({"query": "my home city"}, config("carol"))
    assert reply == "No history found: this memory has no history yet."
