"""Quickstart: a LangGraph graph whose memory has a history you can roll back.

Runs offline on the embedded default (SQLite in a local directory); no server, no
API key:

    python examples/quickstart.py            # uses a fresh temporary directory
    python examples/quickstart.py --path ./memory

A tiny graph remembers where the user lives. The user moves twice, one of the
moves turns out to be wrong, and we look at the history, compare versions, read
the past, and roll back — after which the graph reads the restored memory.
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
    """Store the city the user says they live in (a stand-in for an LLM extractor)."""
    said = state.get("said", "")
    if said.startswith("I live in "):
        city = said.removeprefix("I live in ").rstrip(".")
        runtime.store.put(_memories(config), "home", {"city": city})
    return {}


def answer(state: State, config: RunnableConfig, runtime: Runtime) -> dict[str, Any]:
    home = runtime.store.get(_memories(config), "home")
    return {"answer": f"You live in {home.value['city']}." if home else "I don't know yet."}


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

    for said in ["I live in Boston.", "I live in New York.", "I live in Nwe Yrok."]:
        reply = graph.invoke({"said": said}, alice)
        print(f"user: {said:<22} agent: {reply['answer']}")

    print("\nhistory (newest first):")
    for commit in store.log(scope):
        print(f"  v{commit.version}  {commit.op:<8} {commit.summary}")

    print("\nwhat changed from v1 to v3:")
    for change in store.diff(scope, 1, 3):
        print(f"  {change.path}: {change.old} -> {change.new}")

    print("\nreading the past: at v1 the memory said", store.as_of(scope, 1).get(scope, "home").value)

    commit = store.rollback(scope, to=2, reason="typo in the city name")
    print(f"\nrolled back: v{commit.version} {commit.summary}")
    print("agent now says:", graph.invoke({"said": "Where do I live?"}, alice)["answer"])
    print(f"(nothing is lost: {store.head(scope)} versions, and `rollback(to=3)` redoes it)")
    store.close()


if __name__ == "__main__":
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--path", help="store directory (default: a new temporary one)")
    args = parser.parse_args()
    main(args.path or tempfile.mkdtemp(prefix="chronomem-"))
