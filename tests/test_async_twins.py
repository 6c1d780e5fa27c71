"""Every async path carries the caller's event loop to its worker thread.

A store whose `index` embeds with an `async def` function can only embed from
an async call: the tools' `ainvoke`, run by a compiled graph or called with the
config a graph gives, must reach that function.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

from langchain_core.messages import AIMessage, ToolMessage
from langchain_core.runnables import RunnableConfig
from langgraph.graph import START, MessagesState, StateGraph
from langgraph.prebuilt import ToolNode

from langgraph_chronomem import ChronoStore
from langgraph_chronomem.tools import (
    create_memory_history_tool,
    create_undo_memory_tool,
)
from testsupport.hashed import DIMS, embed

ALICE = ("memories", "alice")
BOSTON = "User lives in Boston"
PARIS = "User moved to Paris"
CALLS = {"async": 0}


async def aembed(texts: list[str]) -> list[list[float]]:
    """The hashed embedding, as an async function: the only way these stores embed."""
    CALLS["async"] += 1
    return embed(texts)


INDEX: Any = {"dims": DIMS, "embed": aembed, "fields": ["content"]}
CONFIG: RunnableConfig = {"configurable": {"user_id": "alice", "thread_id": "t1"}}


def open_store(root: Path) -> ChronoStore:
    return ChronoStore.from_path(root, scope_depth=2, index=INDEX)


async def test_the_undo_tools_async_path_embeds_with_an_async_function(
    tmp_path: Path,
) -> None:
    with open_store(tmp_path) as store:
        await store.aput(ALICE, "home", {"content": BOSTON})
        await store.aput(ALICE, "home", {"content": PARIS})
        builder = StateGraph(MessagesState)
        builder.add_node("tools", ToolNode([create_undo_memory_tool()]))
        builder.add_edge(START, "tools")
        graph = builder.compile(store=store)
        call = {
            "name": "undo_memory",
            "args": {"request": "forget that I moved to Paris"},
            "id": "c1",
        }
        before = CALLS["async"]
        result = await graph.ainvoke(
            {"messages": [AIMessage("", tool_calls=[call])]},
            CONFIG,
        )
        (reply,) = [m for m in result["messages"] if isinstance(m, ToolMessage)]
        assert reply.status == "success", reply.content
        assert str(reply.content).startswith("Memory changed (now v3)")
        home = await store.aget(ALICE, "home")
        assert home is not None and home.value == {"content": BOSTON}
        assert CALLS["async"] > before


async def test_the_history_tools_async_path_embeds_with_an_async_function(
    tmp_path: Path,
) -> None:
    with open_store(tmp_path) as store:
        await store.aput(ALICE, "home", {"content": BOSTON})
        tool = create_memory_history_tool(store=store)
        reply = await tool.ainvoke({"query": "where I live"}, CONFIG)
        assert reply.startswith('Changes matching "where I live"'), reply
