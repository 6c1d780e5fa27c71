"""ChronoStore inside real compiled LangGraph graphs."""

from __future__ import annotations

from typing import Annotated, Any, TypedDict

from langchain_core.messages import AIMessage, ToolMessage
from langchain_core.runnables import RunnableConfig
from langchain_core.tools import tool
from langgraph.checkpoint.memory import InMemorySaver
from langgraph.graph import END, START, MessagesState, StateGraph
from langgraph.prebuilt import InjectedStore, ToolNode
from langgraph.runtime import Runtime
from langgraph.store.base import BaseStore

from langgraph_chronomem import ChronoStore


class State(TypedDict, total=False):
    city: str
    seen: str


def _namespace(config: RunnableConfig) -> tuple[str, str]:
    return ("memories", config["configurable"]["user_id"])


def remember(state: State, config: RunnableConfig, runtime: Runtime) -> dict[str, Any]:
    if "city" in state:
        runtime.store.put(_namespace(config), "city", {"city": state["city"]})
    return {}


def recall(state: State, config: RunnableConfig, runtime: Runtime) -> dict[str, Any]:
    item = runtime.store.get(_namespace(config), "city")
    return {"seen": item.value["city"] if item else "nowhere"}


async def aremember(
    state: State, config: RunnableConfig, runtime: Runtime
) -> dict[str, Any]:
    if "city" in state:
        await runtime.store.aput(_namespace(config), "city", {"city": state["city"]})
    return {}


async def arecall(
    state: State, config: RunnableConfig, runtime: Runtime
) -> dict[str, Any]:
    item = await runtime.store.aget(_namespace(config), "city")
    return {"seen": item.value["city"] if item else "nowhere"}


def _graph(store: ChronoStore, write: Any = remember, read: Any = recall) -> Any:
    builder = StateGraph(State)
    builder.add_node("remember", write)
    builder.add_node("recall", read)
    builder.add_edge(START, "remember")
    builder.add_edge("remember", "recall")
    builder.add_edge("recall", END)
    return builder.compile(store=store, checkpointer=InMemorySaver())


def _config(user: str, thread: str) -> RunnableConfig:
    return {"configurable": {"user_id": user, "thread_id": thread}}


def test_nodes_write_versions_and_read_head(store: ChronoStore) -> None:
    graph = _graph(store)
    assert graph.invoke({"city": "Boston"}, _config("alice", "t1"))["seen"] == "Boston"
    assert graph.invoke({"city": "Paris"}, _config("alice", "t1"))["seen"] == "Paris"
    assert graph.invoke({"city": "Rome"}, _config("bob", "t2"))["seen"] == "Rome"
    alice = ("memories", "alice")
    assert [c.summary for c in store.log(alice)] == [
        "updated memories/alice/city: Boston -> Paris",
        "created memories/alice/city: Boston",
    ]
    assert store.head(("memories", "bob")) == 1


def test_commits_carry_the_runs_thread_checkpoint_and_node(store: ChronoStore) -> None:
    graph = _graph(store)
    config = _config("alice", "thread-7")
    config["run_id"] = "8f2b7c1e-0000-4000-8000-000000000001"
    graph.invoke({"city": "Boston"}, config)
    labels = store.show(("memories", "alice"), 1).labels
    assert labels["thread_id"] == "thread-7"
    assert labels["node"] == "remember"
    assert labels["run_id"] == "8f2b7c1e-0000-4000-8000-000000000001"
    checkpoints = [
        s.config["configurable"]["checkpoint_id"]
        for s in graph.get_state_history(config)
    ]
    assert labels["checkpoint_id"] in checkpoints


def test_after_a_rollback_the_next_run_reads_the_restored_memory(
    store: ChronoStore,
) -> None:
    graph = _graph(store)
    graph.invoke({"city": "Boston"}, _config("alice", "t1"))
    graph.invoke({"city": "NYC"}, _config("alice", "t1"))
    store.rollback(("memories", "alice"), to=1)
    assert graph.invoke({}, _config("alice", "a-new-thread"))["seen"] == "Boston"


async def test_async_nodes_use_the_async_store_methods(astore: ChronoStore) -> None:
    graph = _graph(astore, aremember, arecall)
    result = await graph.ainvoke({"city": "Lisbon"}, _config("carol", "t3"))
    assert result["seen"] == "Lisbon"
    (commit,) = await astore.alog(("memories", "carol"))
    assert commit.labels["node"] == "remember" and commit.labels["thread_id"] == "t3"


@tool
def save_city(
    city: str, user_id: str, store: Annotated[BaseStore, InjectedStore()]
) -> str:
    """Remember the user's city."""
    store.put(("memories", user_id), "city", {"city": city})
    return f"saved {city}"


def test_tools_get_the_store_through_langgraph_injection(store: ChronoStore) -> None:
    def agent(state: MessagesState) -> dict[str, Any]:
        if isinstance(state["messages"][-1], ToolMessage):
            return {"messages": [AIMessage("done")]}
        call = {
            "name": "save_city",
            "args": {"city": "Oslo", "user_id": "dan"},
            "id": "c1",
        }
        return {"messages": [AIMessage("", tool_calls=[call])]}

    builder = StateGraph(MessagesState)
    builder.add_node("agent", agent)
    builder.add_node("tools", ToolNode([save_city]))
    builder.add_edge(START, "agent")
    builder.add_conditional_edges(
        "agent", lambda s: "tools" if s["messages"][-1].tool_calls else END
    )
    builder.add_edge("tools", "agent")
    graph = builder.compile(store=store)
    graph.invoke({"messages": [("user", "I live in Oslo now")]})
    commit = store.show(("memories", "dan"), 1)
    assert commit.summary == "created memories/dan/city: Oslo"
    assert commit.labels["node"] == "tools"
