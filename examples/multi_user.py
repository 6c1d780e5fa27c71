"""Multi-user memory: one store, one timeline per user, undo that stays in its lane.

Alice, bob and carol talk to the same agent (the one in chat_agent.py) on one
`ChronoStore` opened with `scope_depth=2`, so ("memories", "alice") and
("memories", "bob") are separate timelines: each has its own versions, log and
undo. The conversations interleave; bob undoes his move to Milan and alice's
memory does not move; carol's "undo my move to Milan" changes nothing, because
bob's history is not hers: the tool can only offer her own changes, and none of
them is a sure match. Reads at HEAD still span users
(`store.search(("memories",))`), while the past is read per user with `as_of`.

    python examples/multi_user.py                    # offline: a scripted model
    python examples/multi_user.py --model openai:gpt-4o-mini   # needs langchain

(`CHRONOMEM_EXAMPLE_MODEL` works like `--model`; `--path DIR` keeps the store.)
"""

from __future__ import annotations

import sys
from collections.abc import Sequence

from _chat_model import Turn, choose_model, parse_args, store_dir
from chat_agent import build_agent, chat, print_log
from langchain_core.language_models import BaseChatModel
from langchain_core.runnables import RunnableConfig

from langgraph_chronomem import open_chronomem


def _remember(key: str, content: str) -> list[tuple[str, dict[str, str]]]:
    return [("remember", {"key": key, "content": content})]


def _undo(request: str) -> list[tuple[str, dict[str, str]]]:
    return [("undo_memory", {"request": request})]


# Keyed on what the user says, so one script serves every user.
SCRIPT = {
    "I live in Boston.": Turn("Got it.", _remember("home", "Boston")),
    "I live in Rome.": Turn("Got it.", _remember("home", "Rome")),
    "I have a parrot named Kiwi.": Turn("Hi Kiwi!", _remember("pet", "parrot Kiwi")),
    "I have a cat called Tom.": Turn("Hi Tom!", _remember("pet", "cat Tom")),
    "I just moved to Milan.": Turn("Noted.", _remember("home", "Milan")),
    "I live in Lisbon.": Turn("Got it.", _remember("home", "Lisbon")),
    "Actually I didn't move. Undo my move to Milan.": Turn(
        "Done: you live in {home} again.", _undo("undo my move to Milan")
    ),
    "Undo my move to Milan.": Turn(
        "You never told me about Milan.", _undo("undo my move to Milan")
    ),
    "Where do I live?": Turn("You live in {home}."),
}

CONVERSATION = [
    ("alice", "I live in Boston."),
    ("bob", "I live in Rome."),
    ("carol", "I have a parrot named Kiwi."),
    ("alice", "I have a cat called Tom."),
    ("bob", "I just moved to Milan."),
    ("carol", "I live in Lisbon."),
    ("bob", "Actually I didn't move. Undo my move to Milan."),
    ("carol", "Undo my move to Milan."),
    ("alice", "Where do I live?"),
    ("bob", "Where do I live?"),
]
USERS = ("alice", "bob", "carol")


def config(user: str) -> RunnableConfig:
    return {"configurable": {"user_id": user, "thread_id": f"{user}-chat"}}


def main(argv: Sequence[str] | None = None) -> int:
    args = parse_args(__doc__ or "", argv)
    model = choose_model(args.model, SCRIPT)
    with store_dir(args.path) as path:
        return converse(model, path)


def converse(model: BaseChatModel, path: str) -> int:
    store, checkpointer = open_chronomem(path, scope_depth=2)
    try:
        graph = build_agent(model, store, checkpointer)
        heads: dict[str, list[int]] = {user: [] for user in USERS}
        for user, text in CONVERSATION:
            chat(graph, config(user), text)
            for other in USERS:  # every user's HEAD after every turn
                heads[other].append(store.head(("memories", other)))
        for user in USERS:
            print_log(store, ("memories", user))
            print(f"  HEAD after each turn: {heads[user]}")

        print("\nstore.search(('memories',)) spans users, at HEAD:")
        for item in store.search(("memories",), limit=100):
            print(f"  {'/'.join(item.namespace)}/{item.key}: {item.value['content']}")
        bob = ("memories", "bob")
        moved = next(c for c in store.log(bob, op="put") if "Milan" in c.summary)
        print(f"\nthe past is read per user: bob at v{moved.version}:")
        for item in store.as_of(bob, moved.version).search(bob):
            print(f"  {item.key}: {item.value['content']}")
        memory = {
            user: " ".join(str(i.value) for i in store.search(("memories", user)))
            for user in USERS
        }
    finally:
        store.close()
    print(f"\nstore: {path}")
    if "Milan" in memory["bob"] or "Rome" not in memory["bob"]:
        print("FAILED: bob's move to Milan should be undone", file=sys.stderr)
        return 1
    if "Boston" not in memory["alice"] or "Lisbon" not in memory["carol"]:
        print("FAILED: bob's undo changed someone else's memory", file=sys.stderr)
        return 1
    return 0


if __name__ == "__main__":
    sys.exit(main())
