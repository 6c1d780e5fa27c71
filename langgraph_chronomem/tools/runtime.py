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
from langgraph_chronomem.store.branch_view import BranchView


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


def locate_on_branch(
    template: NamespaceTemplate,
    branch: NamespaceTemplate | None,
    store: ChronoStore | None,
    runtime: ToolRuntime | None,
) -> tuple[ChronoStore, tuple[str, ...], str | None]:
    """`locate`, and the branch this call works on (`None`: HEAD): the tool's
    `branch` (a name, or a `{placeholder}` filled from the run as the
    namespace's), else the branch of a graph compiled with
    `store.on_branch(scope, name)`.

    Raises:
        ConfigError: As `locate`; for a tool bound to one branch in a graph
            that runs on another.
        ScopeError: For a namespace outside the scope of the graph's branch.
    """
    graph = runtime or get_runtime()
    found = store if store is not None else graph.store if graph else None
    view = found if isinstance(found, BranchView) else None
    if view is not None:
        found = view._store  # type: ignore[assignment]  # a ChronoStore's view
    chrono, scope = locate(template, found, runtime)  # type: ignore[arg-type]
    config = runtime.config if runtime else None
    context = graph.context if graph else None
    name = None if branch is None else branch(config, context)[0]
    if view is None:
        return chrono, scope, name
    if name is not None and name != view.name:
        raise ConfigError(
            f"the tool works on branch {name!r}, the graph on branch {view.name!r}"
        )
    if scope != view.scope:
        raise ScopeError(
            f"{scope!r} is outside the scope {view.scope!r} of branch "
            f"{view.name!r} the graph runs on"
        )
    return chrono, scope, view.name


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
