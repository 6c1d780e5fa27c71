"""Chat agent: it remembers facts about the user and undoes one when asked.

A tool-calling agent (a StateGraph with a ToolNode) saves what alice tells it with
a `remember` tool, in LangMem's style, under ("memories", "{user_id}"). It wrongly
saves her sister's move to NYC as her own; she says "I never moved to NYC, undo
that", and the agent calls the library's `undo_memory` tool, which finds that
change from her words and undoes just it. The agent node reads memory on every
turn, so its next answer shows the restored memory; `memory_history` answers
"where did you think I lived before?". The transcript ends with the memory log.

    python examples/chat_agent.py                  # offline: a scripted chat model
    python examples/chat_agent.py --path ./memory  # keep the store afterwards
    pip install langchain langchain-openai && export OPENAI_API_KEY=...
    python examples/chat_agent.py --model openai:gpt-4o-mini   # a real model

(`CHRONOMEM_EXAMPLE_MODEL=openai:gpt-4o-mini` works like `--model`.)
"""

from __future__ import annotations

import sys
from collections.abc import Callable, Sequence
from typing import Any

from _chat_model import Turn, choose_model, parse_args, store_dir
from langchain_core.language_models import BaseChatModel
from langchain_core.messages import (
    AIMessage,
    BaseMessage,
    HumanMessage,
    SystemMessage,
    ToolMessage,
)
from langchain_core.runnables import RunnableConfig
from langchain_core.tools import tool
from langgraph.checkpoint.base import BaseCheckpointSaver
from langgraph.graph import START, MessagesState, StateGraph
from langgraph.graph.state import CompiledStateGraph
from langgraph.prebuilt import ToolNode, ToolRuntime, tools_condition
from langgraph.store.base import BaseStore
from langgraph.types import Command

from langgraph_chronomem import (
    ChronoStore,
    create_memory_history_tool,
    create_undo_memory_tool,
    open_chronomem,
)
from langgraph_chronomem.namespace import NamespaceTemplate

MEMORIES = ("memories", "{user_id}")  # one timeline per user (scope_depth=2)
memories = NamespaceTemplate(MEMORIES)

PROMPT = """You are a friendly assistant with a long-term memory of the user.
Save each new or changed fact about the user with `remember`, under a short key \
(home, pet, job). When the user asks you to undo or forget something you \
remembered, call `undo_memory` with what to undo, in the memory's own words; \
if it changes nothing and lists candidates, ask the user which one and call it \
again with that change's id. When asked what you believed before, call `memory_history`.

What you remember about the user now:
{memory}"""


@tool
def remember(key: str, content: str, runtime: ToolRuntime) -> str:
    """Save one fact about the user under a short key (home, pet, job...).
    Saving under a key that exists replaces the fact."""
    if runtime.store is None:
        raise ValueError("remember needs a store: compile the graph with store=...")
    runtime.store.put(memories(runtime.config), key, {"content": content})
    return f"Saved {key}: {content}."


def build_agent(
    model: BaseChatModel, store: ChronoStore, checkpointer: BaseCheckpointSaver[Any]
) -> CompiledStateGraph[Any]:
    """The agent: `agent` (the model, with the user's memory in its prompt) and
    `tools` (remember, undo_memory, memory_history), looping until it replies."""
    tools = [
        remember,
        create_undo_memory_tool(MEMORIES),
        create_memory_history_tool(MEMORIES),
    ]
    bound = model.bind_tools(tools)

    def agent(
        state: MessagesState, config: RunnableConfig, *, store: BaseStore
    ) -> dict[str, Any]:
        found = store.search(memories(config), limit=100)
        memory = "\n".join(f"- {i.key}: {i.value['content']}" for i in found)
        prompt = SystemMessage(PROMPT.format(memory=memory or "(nothing yet)"))
        return {"messages": [bound.invoke([prompt, *state["messages"]], config)]}

    builder = StateGraph(MessagesState)
    builder.add_node("agent", agent)
    builder.add_node("tools", ToolNode(tools))
    builder.add_edge(START, "agent")
    builder.add_conditional_edges("agent", tools_condition)
    builder.add_edge("tools", "agent")
    return builder.compile(store=store, checkpointer=checkpointer)


def chat(
    graph: CompiledStateGraph[Any],
    config: RunnableConfig,
    text: str,
    review: Callable[[dict[str, Any]], dict[str, Any]] | None = None,
) -> str:
    """One user turn: print it, the tool calls and results, and the reply.

    A run paused for approval (LangChain's human-in-the-loop middleware) goes on
    with `review`'s decision on each tool call it lists.
    """
    print(f"\n{config['configurable']['user_id']}: {text}")
    out = graph.invoke({"messages": [HumanMessage(text)]}, config)
    messages = out["messages"]
    shown = max(i for i, m in enumerate(messages) if isinstance(m, HumanMessage)) + 1
    while "__interrupt__" in out:
        if review is None:
            raise ValueError("the run paused for approval: pass review=")
        shown = _print_steps(messages, shown, len(messages))
        asked = out["__interrupt__"][0].value["action_requests"]
        decisions = [review(action) for action in asked]
        out = graph.invoke(Command(resume={"decisions": decisions}), config)
        messages = out["messages"]
    _print_steps(messages, shown, len(messages) - 1)
    reply: str = messages[-1].text
    print(f"agent: {reply}")
    return reply


def _print_steps(messages: Sequence[BaseMessage], start: int, end: int) -> int:
    """Print the tool calls and results among `messages[start:end]`; return `end`."""
    for message in messages[start:end]:
        if isinstance(message, AIMessage):
            for call in message.tool_calls:
                args = ", ".join(f"{k}={v!r}" for k, v in call["args"].items())
                print(f"  -> {call['name']}({args})")
        elif isinstance(message, ToolMessage):
            print("  <- " + message.text.replace("\n", "\n     "))
    return end


def print_log(store: ChronoStore, scope: tuple[str, ...]) -> None:
    print(f"\nmemory log of {'/'.join(scope)} (newest first):")
    for commit in store.log(scope):
        by = commit.author or commit.labels.get("node", "")
        print(f"  v{commit.version}  {commit.op:<8} {by:<11} {commit.summary}")


CONVERSATION = {
    "Hi! I live in Boston.": Turn(
        "Nice to meet you! I'll remember that you live in Boston.",
        [("remember", {"key": "home", "content": "Boston"})],
    ),
    "I have a cat called Tom.": Turn(
        "Hello, Tom!", [("remember", {"key": "pet", "content": "a cat called Tom"})]
    ),
    "My sister just moved to NYC!": Turn(  # the agent gets this one wrong
        "Exciting! Noted: you live in NYC now.",
        [("remember", {"key": "home", "content": "NYC"})],
    ),
    "I work as a nurse.": Turn(
        "Noted.", [("remember", {"key": "job", "content": "nurse"})]
    ),
    "I never moved to NYC, my sister did. Undo that.": Turn(
        "Sorry about that! You live in {home} again.",
        [("undo_memory", {"request": "undo my move to NYC"})],
    ),
    "Where do I live, and what do I do?": Turn(
        "You live in {home} and work as a {job}."
    ),
    "Where did you think I lived before?": Turn(
        "For a while I wrongly thought NYC; before that, Boston.",
        [("memory_history", {"query": "my home city", "limit": 3})],
    ),
}


def main(argv: Sequence[str] | None = None) -> int:
    args = parse_args(__doc__ or "", argv)
    model = choose_model(args.model, CONVERSATION)
    with store_dir(args.path) as path:
        return converse(model, path)


def converse(model: BaseChatModel, path: str) -> int:
    store, checkpointer = open_chronomem(path, scope_depth=2)
    try:
        graph = build_agent(model, store, checkpointer)
        alice: RunnableConfig = {
            "configurable": {"user_id": "alice", "thread_id": "alice-chat"}
        }
        for text in CONVERSATION:
            chat(graph, alice, text)
        scope = ("memories", "alice")
        print_log(store, scope)
        found = store.search(scope)
        facts = ", ".join(f"{i.key}={i.value['content']}" for i in found)
        print(f"\nmemory now: {facts}\nstore: {path}")
    finally:
        store.close()
    if "NYC" in facts or "Boston" not in facts:
        print("FAILED: memory should say Boston, not NYC", file=sys.stderr)
        return 1
    return 0


if __name__ == "__main__":
    sys.exit(main())
