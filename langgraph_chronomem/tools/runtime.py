"""How a memory tool finds its store and the user's scope in a run, and gets its
async form."""

from __future__ import annotations

import functools
from collections.abc import Callable

from langchain_core.tools import StructuredTool
from langgraph.prebuilt import ToolRuntime
from langgraph.runtime import get_runtime

from langgraph_chronomem._twins import off_loop
from langgraph_chronomem.errors import ConfigError, ScopeError
from langgraph_chronomem.namespace import NamespaceTemplate
from langgraph_chronomem.store.base import ChronoStore


def locate(
    template: NamespaceTemplate, store: ChronoStore | None, runtime: ToolRuntime | None
) -> tuple[ChronoStore, tuple[str, ...]]:
    """The store and the filled namespace for this call."""
    graph = runtime or get_runtime()  # None when called outside a graph
    found = store if store is not None else graph.store if graph else None
    if not isinstance(found, ChronoStore):
        raise ConfigError(
            "memory tools need a ChronoStore: compile the graph with "
            f"store=ChronoStore.from_path(...) or pass store= (got {found!r})"
        )
    outside = [k for k, i in template.keys.items() if i >= found.scope_depth]
    if outside:
        raise ScopeError(
            f"{{{outside[0]}}} in {template.template} lies outside the store's scope "
            f"(scope_depth={found.scope_depth}), so one user's undo would change "
            "another's memory; open the store with a larger scope_depth"
        )
    config = runtime.config if runtime else None
    return found, template(config, graph.context if graph else None)


def make_tool(func: Callable[..., str], name: str, description: str) -> StructuredTool:
    """`func` as a tool; its async form is the store's kind of async twin: a worker
    thread with the context variables (so the run's config and `interrupt`) and the
    caller's event loop (so an `async def` embed) carried over.
    """
    return StructuredTool.from_function(
        func=func,
        coroutine=functools.partial(off_loop, func),
        name=name,
        description=description,
    )
