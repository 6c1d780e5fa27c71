"""A prebuilt LangChain agent (`create_agent`) with memory you can undo in words,
where a person approves every undo before it runs.

    python examples/prebuilt_agent.py                  # scripted model, offline
    python examples/prebuilt_agent.py --model openai:gpt-4o-mini   # asks you

`langchain.agents.create_agent` builds the agent loop; nothing in it is ours but
the tools and the store. It gets `remember` (from chat_agent.py), the undo tool
(`create_undo_memory_tool`) and the history tool (`create_memory_history_tool`),
the `ChronoStore` and `ChronoCheckpointer` of `open_chronomem`, and two
middlewares: one puts the user's memory in the system prompt on every model
call, and LangChain's `HumanInTheLoopMiddleware` pauses the run before each
`undo_memory` call (an `interrupt()`, kept by the checkpointer) until a person
approves or rejects it. Here the script plays the person; with `--model` you do,
on the terminal.

Alice says where she lives, gets a cat, and the agent wrongly saves her sister's
move to NYC as hers. She asks to forget the cat and the person rejects that: the
cat stays. She asks to undo the move and the person approves: only that change is
undone, and the agent reads Boston from memory again. The history tool then says
what the agent thought before.
"""

from __future__ import annotations

import sys
from collections.abc import Sequence
from typing import Any

from _chat_model import Turn, choose_model, parse_args, store_dir
from chat_agent import MEMORIES, PROMPT, chat, memories, print_log, remember
from langchain.agents import create_agent
from langchain.agents.middleware import (
    HumanInTheLoopMiddleware,
    ModelRequest,
    dynamic_prompt,
)
from langchain_core.language_models import BaseChatModel
from langchain_core.runnables import RunnableConfig
from langgraph.checkpoint.base import BaseCheckpointSaver
from langgraph.config import get_config
from langgraph.graph.state import CompiledStateGraph

from langgraph_chronomem import (
    ChronoStore,
    create_memory_history_tool,
    create_undo_memory_tool,
    open_chronomem,
)


@dynamic_prompt
def with_memory(request: ModelRequest) -> str:
    """The system prompt, with what the store holds about this user now."""
    store = request.runtime.store
    assert store is not None, "create_agent(..., store=...) gives the runtime one"
    found = store.search(memories(get_config()), limit=100)
    memory = "\n".join(f"- {i.key}: {i.value['content']}" for i in found)
    return PROMPT.format(memory=memory or "(nothing yet)")


def build_agent(
    model: BaseChatModel, store: ChronoStore, checkpointer: BaseCheckpointSaver[Any]
) -> CompiledStateGraph[Any]:
    """LangChain's prebuilt agent on the store; a person approves each undo."""
    approve_undo = HumanInTheLoopMiddleware(
        interrupt_on={
            "undo_memory": {
                "allowed_decisions": ["approve", "reject"],
                "description": "Undo a memory change?",
            }
        }
    )
    return create_agent(
        model,
        tools=[
            remember,
            create_undo_memory_tool(MEMORIES),
            create_memory_history_tool(MEMORIES),
        ],
        middleware=[with_memory, approve_undo],
        store=store,
        checkpointer=checkpointer,
    )


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
    "Forget my cat.": Turn(
        "All right, I did not change anything: I still remember {pet}.",
        [("undo_memory", {"request": "forget my cat called Tom"})],
    ),
    "I never moved to NYC, my sister did. Undo that.": Turn(
        "Sorry about that! You live in {home} again.",
        [("undo_memory", {"request": "undo my move to NYC"})],
    ),
    "Where did you think I lived before?": Turn(
        "For a while I wrongly thought NYC; before that, Boston.",
        [("memory_history", {"query": "my home city", "limit": 3})],
    ),
}
# The person's part for the scripted model: what they decide on each undo.
DECISIONS = {"forget my cat called Tom": "reject", "undo my move to NYC": "approve"}


def review(action: dict[str, Any]) -> dict[str, Any]:
    """A person's decision on one paused tool call: the script's, else asked."""
    decision = DECISIONS.get(action["args"].get("request", ""))
    if decision is None:
        answer = input(f"  ?? {action['name']}({action['args']}): approve? [y/N] ")
        decision = "approve" if answer.strip().lower() in ("y", "yes") else "reject"
    print(f"  ?? the person {decision}s {action['name']}")
    if decision == "reject":
        return {"type": "reject", "message": "The person said no: keep that memory."}
    return {"type": "approve"}


def main(argv: Sequence[str] | None = None) -> int:
    args = parse_args(__doc__ or "", argv)
    model = choose_model(args.model, CONVERSATION)
    with store_dir(args.path) as path:
        return converse(model, path)


def converse(model: BaseChatModel, path: str) -> int:
    store, checkpointer = open_chronomem(path, scope_depth=2)
    try:
        agent = build_agent(model, store, checkpointer)
        alice: RunnableConfig = {
            "configurable": {"user_id": "alice", "thread_id": "alice-chat"}
        }
        for text in CONVERSATION:
            chat(agent, alice, text, review)
        scope = ("memories", "alice")
        print_log(store, scope)
        facts = {i.key: i.value["content"] for i in store.search(scope)}
    finally:
        store.close()
    if facts != {"home": "Boston", "pet": "a cat called Tom"}:
        print(f"FAILED: memory should be Boston and the cat: {facts}", file=sys.stderr)
        return 1
    return 0


if __name__ == "__main__":
    sys.exit(main())
