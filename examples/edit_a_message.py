"""Edit an earlier message, then switch between the two versions of the chat:
memory follows the line the thread is on.

Alice tells the agent she lives in Boston, then that she moved to Paris (both
saved with `remember`); in another thread she mentions her dog. Then she edits
her first message to "I live in Lisbon.": the app forks the thread from the
checkpoint that message started from (`graph.update_state(past_config, ...)`)
and runs on. She sets her job herself, outside any thread, switches back to the
first version of the chat and goes on from it (she moves to Rome), then to the
edited version, then to the first again. Each time the agent answers from the
memory that line wrote (Rome, Lisbon, Rome), and the dog and the job stay:
`ChronoCheckpointer` undoes only what this thread wrote since the checkpoint it
goes back to, as one `time-travel` commit.

    python examples/edit_a_message.py                  # offline: a scripted model
    python examples/edit_a_message.py --model openai:gpt-4o-mini   # needs langchain

(`CHRONOMEM_EXAMPLE_MODEL` works like `--model`; `--path DIR` keeps the store.)
"""

from __future__ import annotations

import sys
from collections.abc import Sequence
from typing import Any

from _chat_model import Turn, choose_model, parse_args, store_dir
from chat_agent import build_agent, chat, print_log
from langchain_core.language_models import BaseChatModel
from langchain_core.messages import HumanMessage
from langchain_core.runnables import RunnableConfig
from langgraph.graph.state import CompiledStateGraph

from langgraph_chronomem import ChronoStore, commit_context, open_chronomem

FIRST_MESSAGE = "I live in Boston."
EDITED_MESSAGE = "I live in Lisbon."
QUESTION = "What do you know about me?"
CONVERSATION = {
    FIRST_MESSAGE: Turn(
        "Got it: you live in {home}.",
        [("remember", {"key": "home", "content": "Boston"})],
    ),
    "I moved to Paris.": Turn(
        "Noted: you live in {home}.",
        [("remember", {"key": "home", "content": "Paris"})],
    ),
    "My dog is called Rex.": Turn(
        "Hi Rex!", [("remember", {"key": "pet", "content": "a dog called Rex"})]
    ),
    EDITED_MESSAGE: Turn(
        "Got it: you live in {home}.",
        [("remember", {"key": "home", "content": "Lisbon"})],
    ),
    "I moved to Rome.": Turn(
        "Noted: you live in {home}.",
        [("remember", {"key": "home", "content": "Rome"})],
    ),
    QUESTION: Turn("You live in {home}; pet: {pet}; job: {job}."),
}
ALICE: RunnableConfig = {"configurable": {"user_id": "alice", "thread_id": "t1"}}
# The dog comes up in another conversation of Alice's.
ELSEWHERE: RunnableConfig = {"configurable": {"user_id": "alice", "thread_id": "t2"}}
SCOPE = ("memories", "alice")
# What memory must hold on each line once Alice has set her job.
FIRST_LINE = {"home": "Rome", "job": "nurse", "pet": "a dog called Rex"}
EDITED_LINE = {"home": "Lisbon", "job": "nurse", "pet": "a dog called Rex"}


def memory(store: ChronoStore) -> dict[str, str]:
    """Alice's memory now, key by key."""
    return dict(sorted((i.key, i.value["content"]) for i in store.search(SCOPE)))


def show_memory(store: ChronoStore, label: str) -> dict[str, str]:
    now = memory(store)
    facts = ", ".join(f"{key}={value}" for key, value in now.items())
    print(f"{label} (v{store.head(SCOPE)}): {facts}")
    return now


def at(checkpoint: RunnableConfig) -> RunnableConfig:
    """Alice's thread, from `checkpoint` on (a config `invoke` forks from)."""
    return {"configurable": {**ALICE["configurable"], **checkpoint["configurable"]}}


def tip(graph: CompiledStateGraph[Any]) -> RunnableConfig:
    """The checkpoint Alice's thread is at now: the tip of the line it is on."""
    return graph.get_state(ALICE).config


def edit_first_message(graph: CompiledStateGraph[Any]) -> RunnableConfig:
    """Replace Alice's first message, as a chat app's "edit" does: fork from the
    checkpoint it started from, the message swapped for one with the same id."""
    before = next(
        s
        for s in graph.get_state_history(ALICE)
        if s.next == ("agent",) and len(s.values["messages"]) == 1
    )
    (first,) = before.values["messages"]
    print(f"\nalice edits {first.text!r} to {EDITED_MESSAGE!r}")
    edited = HumanMessage(EDITED_MESSAGE, id=first.id)
    return graph.update_state(before.config, {"messages": [edited]})


def switch_and_ask(
    graph: CompiledStateGraph[Any], line: RunnableConfig, name: str
) -> None:
    print(f"\n--- alice switches to the {name} ---", end="")
    chat(graph, at(line), QUESTION)


def main(argv: Sequence[str] | None = None) -> int:
    args = parse_args(__doc__ or "", argv)
    model = choose_model(args.model, CONVERSATION)
    with store_dir(args.path) as path:
        return edit_and_switch(model, path)


def edit_and_switch(model: BaseChatModel, path: str) -> int:
    store, checkpointer = open_chronomem(path, scope_depth=2)
    try:
        graph = build_agent(model, store, checkpointer)
        chat(graph, ALICE, FIRST_MESSAGE)
        chat(graph, ALICE, "I moved to Paris.")
        print("\n--- in another thread (t2) ---", end="")
        chat(graph, ELSEWHERE, "My dog is called Rex.")
        first_line = tip(graph)
        show_memory(store, "\nmemory on the first line")

        fork = edit_first_message(graph)
        show_memory(store, "memory at the fork")
        reply = graph.invoke(None, at(fork))["messages"][-1].text
        print(f"agent: {reply}")
        show_memory(store, "memory on the edited line")
        edited_line = tip(graph)

        with commit_context(author="alice"):  # in the app's settings, say
            store.put(SCOPE, "job", {"content": "nurse"})
        print("\nalice sets her job herself: job=nurse")

        switch_and_ask(graph, first_line, "first line")
        chat(graph, ALICE, "I moved to Rome.")
        first_line = tip(graph)
        seen = {"first line": show_memory(store, "\nmemory on the first line")}
        switch_and_ask(graph, edited_line, "edited line")
        seen["edited line"] = show_memory(store, "\nmemory on the edited line")
        switch_and_ask(graph, first_line, "first line")
        seen["first line again"] = show_memory(store, "\nmemory on the first line")
        print_log(store, SCOPE)
        print(f"store: {path}")
    finally:
        store.close()
    expected = {
        "first line": FIRST_LINE,
        "edited line": EDITED_LINE,
        "first line again": FIRST_LINE,
    }
    if seen != expected:
        print(f"FAILED: memory did not follow the line: {seen}", file=sys.stderr)
        return 1
    return 0


if __name__ == "__main__":
    sys.exit(main())
