"""Time travel that keeps memory in step: a replayed turn sees the memory it saw.

LangGraph can replay a thread from an earlier checkpoint (`get_state_history`,
then `invoke(None, that_config)`). With an ordinary store the replayed nodes read
today's memory, written after that checkpoint. `open_chronomem` pairs the store
with a `ChronoCheckpointer` that records where memory stood in every checkpoint,
and on a replay first undoes what the thread itself wrote since (the default,
`on_time_travel="revert"`): the replay sees the user's home as the original turn
did, while a dog the user mentioned in another conversation (thread) stays. The
revert is an ordinary commit (author `time-travel`), so it shows in the log and
is undone like any other. The same run with `"rewind"` (the whole memory back to
that checkpoint, the other thread's dog included) and `"keep"` shows the
difference.

    python examples/time_travel.py                  # offline: a scripted model
    python examples/time_travel.py --model openai:gpt-4o-mini   # needs langchain

(`CHRONOMEM_EXAMPLE_MODEL` works like `--model`; `--path DIR` keeps the stores.)
"""

from __future__ import annotations

import sys
from collections.abc import Sequence
from pathlib import Path

from _chat_model import Turn, choose_model, parse_args, store_dir
from chat_agent import build_agent, chat, print_log
from langchain_core.language_models import BaseChatModel
from langchain_core.runnables import RunnableConfig

from langgraph_chronomem import ChronoStore, open_chronomem
from langgraph_chronomem.checkpoint import TimeTravel

QUESTION = "Where do I live, and do I have a pet?"
CONVERSATION = {
    "I live in Boston.": Turn(
        "Got it.", [("remember", {"key": "home", "content": "Boston"})]
    ),
    QUESTION: Turn("You live in {home}; pet: {pet}."),
    "I moved to Lisbon.": Turn(
        "Noted.", [("remember", {"key": "home", "content": "Lisbon"})]
    ),
    "I adopted a dog named Rex.": Turn(
        "Hi Rex!", [("remember", {"key": "pet", "content": "a dog named Rex"})]
    ),
}
ALICE: RunnableConfig = {"configurable": {"user_id": "alice", "thread_id": "t1"}}
# The dog comes up in another conversation of Alice's.
ELSEWHERE: RunnableConfig = {"configurable": {"user_id": "alice", "thread_id": "t2"}}
IN_ANOTHER_THREAD = "I adopted a dog named Rex."
SCOPE = ("memories", "alice")


def show_memory(store: ChronoStore, label: str) -> None:
    found = store.search(SCOPE)
    facts = ", ".join(f"{i.key}={i.value['content']}" for i in found)
    print(f"{label} (v{store.head(SCOPE)}): {facts}")


def talk_then_replay(
    model: BaseChatModel, path: Path, on_time_travel: TimeTravel
) -> tuple[str, str]:
    """Talk, replay the question's turn; (first answer, replayed answer)."""
    print(f"\n=== on_time_travel={on_time_travel!r} ===")
    store, checkpointer = open_chronomem(
        path, scope_depth=2, on_time_travel=on_time_travel
    )
    try:
        graph = build_agent(model, store, checkpointer)
        answers = {
            text: chat(graph, ELSEWHERE if text == IN_ANOTHER_THREAD else ALICE, text)
            for text in CONVERSATION
        }
        show_memory(store, "\nmemory now")

        # The checkpoint where the question was asked, before the agent answered.
        asked = next(
            s
            for s in graph.get_state_history(ALICE)
            if s.next == ("agent",) and s.values["messages"][-1].text == QUESTION
        )
        version = checkpointer.memory_version(asked.config)
        print(
            f"replaying from checkpoint {asked.config['configurable']['checkpoint_id']}"
            f" (memory was at v{version} there)"
        )
        replay: RunnableConfig = {
            "configurable": {**ALICE["configurable"], **asked.config["configurable"]}
        }
        replayed = graph.invoke(None, replay)["messages"][-1].text
        print(f"agent (replayed): {replayed}")
        show_memory(store, "memory after the replay")

        travels = store.log(SCOPE, author="time-travel")
        if travels:
            print_log(store, SCOPE)
            store.rollback(SCOPE, to=travels[0].version - 1)
            show_memory(
                store, f"\nundo the time travel (rollback to v{travels[0].version - 1})"
            )
    finally:
        store.close()
    return answers[QUESTION], replayed


def main(argv: Sequence[str] | None = None) -> int:
    args = parse_args(__doc__ or "", argv)
    model = choose_model(args.model, CONVERSATION)
    with store_dir(args.path) as path:
        return replay_three_ways(model, Path(path))


def replay_three_ways(model: BaseChatModel, path: Path) -> int:
    first, reverted = talk_then_replay(model, path / "revert", "revert")
    _, rewound = talk_then_replay(model, path / "rewind", "rewind")
    _, kept = talk_then_replay(model, path / "keep", "keep")
    print(f"\nfirst answer:            {first}")
    print(f"replayed, with revert:   {reverted}  <- the other thread's dog stays")
    print(f"replayed, with rewind:   {rewound}")
    print(f"replayed, with keep:     {kept}  <- memory from after the question")
    print(f"stores: {path}")
    if not ("Boston" in reverted and "Rex" in reverted and "Boston" in rewound):
        print(
            "FAILED: the replay should see Boston, and Rex with revert", file=sys.stderr
        )
        return 1
    if "Rex" in rewound or "Lisbon" not in kept:
        print("FAILED: rewind should drop Rex; keep should see Lisbon", file=sys.stderr)
        return 1
    return 0


if __name__ == "__main__":
    sys.exit(main())
