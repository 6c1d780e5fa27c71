"""Serve a graph on the LangGraph server with langgraph-chronomem as its store and
checkpointer: memory with history, and time travel that keeps memory in step.

`langgraph.json` at the repository root declares all three; run `langgraph dev`
there. (`langgraph dev` resolves its paths from the working directory, `langgraph
build` and `up` from the file's folder: at the root, the two agree.)

    {
      "dependencies": ["."],
      "graphs": {"memory_agent": "./examples/server_graph.py:graph"},
      "store": {"path": "./examples/server_graph.py:make_store"},
      "checkpointer": {"path": "./examples/server_graph.py:make_checkpointer"}
    }

`store.path` and `checkpointer.path` name "file.py:attribute" (or "package.module.
attribute"), and the attribute is a function decorated with `@asynccontextmanager`
that yields the object: the server calls and enters it at startup and exits it at
shutdown. (Custom stores and checkpointers are alpha in LangGraph's server; it
then skips its own store TTL sweeper and Postgres checkpoints.)

The server imports each path as its own module, the store's under a random
module name, so the two factories cannot share this module's globals.
`shared_chronomem` keeps one open store and checkpointer per directory (or
database) for the whole process instead: whichever factory runs first opens them,
both get the same pair (one database, one lock or pool), and the last exit closes
them.

The data lives in `$CHRONOMEM_PATH`: a directory (default `DEFAULT_PATH`,
`~/.local/share/chronomem`, outside the project because `langgraph dev` reloads on
every file written under it, and the `chronomem` CLI's default too), or a
`postgresql://` URL, which every server process
and replica can share. Each run names its user, so memory is per user and time
travel knows whose memory to rewind:

    client.runs.wait(thread_id, "memory_agent", input={"note": "I moved to Paris"},
                     config={"configurable": {"user_id": "alice"}})

The server fills `user_id` itself when a run names none: with the authenticated
user, or `''` without auth (as under `langgraph dev`), which the memory namespace
refuses with a `ConfigError` saying what to do.

The graph needs no model: `recall` lists the user's notes, then `remember` adds
the run's note. Replaying a thread from an earlier checkpoint (the Studio's
"fork", or `runs.create` with a `checkpoint_id`) rolls that user's notes back to
what they were there, as an undoable commit, before `recall` runs again.

A run given `undo` instead of `note` undoes a change described in words, with
the undo tool (`create_undo_memory_tool`), and answers in `undone`:

    client.runs.wait(thread_id, "memory_agent",
                     input={"undo": "forget that I moved to Paris"},
                     config={"configurable": {"user_id": "alice"}})
    # {..., "undo": "", "undone": 'Memory changed (now v3): removed "moved to
    #  Paris". To reverse it, call undo_memory with request \'redo\'.'}

It changes memory only when it is sure which change is meant; otherwise it
changes nothing and `undone` lists the candidates with their ids ("2.1"), which
a next run can pass as `undo`. The search uses the models
(docs/how-to/offline-models.md).
"""

from __future__ import annotations

import os
from collections.abc import AsyncIterator
from contextlib import asynccontextmanager
from typing import Any, Literal, TypedDict

from langchain_core.runnables import RunnableConfig
from langgraph.graph import END, START, StateGraph
from langgraph.store.base import BaseStore

from langgraph_chronomem import (
    ChronoCheckpointer,
    ChronoStore,
    NamespaceTemplate,
    create_undo_memory_tool,
    shared_chronomem,
)
from langgraph_chronomem.deployment import DEFAULT_PATH

# The user's notes, as the checkpointer's default `memory_namespace` names them.
NOTES = NamespaceTemplate(("memories", "{user_id}"))
UNDO = create_undo_memory_tool(NOTES.template)


def _settings() -> dict[str, Any]:
    """Where the data lives, and one timeline per user: ("memories", user_id)."""
    return {"path": os.environ.get("CHRONOMEM_PATH", DEFAULT_PATH), "scope_depth": 2}


@asynccontextmanager
async def make_store() -> AsyncIterator[ChronoStore]:
    """The server's long-term memory store (`store.path` in langgraph.json)."""
    async with shared_chronomem(**_settings()) as (store, _):
        yield store


@asynccontextmanager
async def make_checkpointer() -> AsyncIterator[ChronoCheckpointer]:
    """The server's checkpointer (`checkpointer.path`), on the store's database."""
    async with shared_chronomem(**_settings()) as (_, checkpointer):
        yield checkpointer


class Note(TypedDict, total=False):
    note: str
    recalled: list[str]
    undo: str  # a request in words, or a change id; emptied once answered
    undone: str  # the undo tool's reply to the last one


async def recall(state: Note, config: RunnableConfig, *, store: BaseStore) -> Note:
    """What we remember about this user, before this run's note."""
    found = await store.asearch(NOTES(config), limit=100)
    return {"recalled": sorted(item.value["text"] for item in found)}


async def remember(state: Note, config: RunnableConfig, *, store: BaseStore) -> Note:
    """Keep this run's note."""
    await store.aput(NOTES(config), state["note"], {"text": state["note"]})
    return {}


async def undo(state: Note) -> Note:
    """Undo the change the run's `undo` describes, and say what happened."""
    reply = await UNDO.ainvoke({"request": state["undo"]})
    return {"undo": "", "undone": reply}


def _route(state: Note) -> Literal["undo", "recall"]:
    return "undo" if state.get("undo") else "recall"


# Compiled without a store or checkpointer: the server attaches its own.
graph = (
    StateGraph(Note)
    .add_node(recall)
    .add_node(remember)
    .add_node(undo)
    .add_conditional_edges(START, _route)
    .add_edge("undo", END)
    .add_edge("recall", "remember")
    .add_edge("remember", END)
    .compile()
)
