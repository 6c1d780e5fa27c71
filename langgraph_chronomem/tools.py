"""Agent tools over a `ChronoStore`: undo memory in words, and look up its history.

The namespace is a template the developer writes; its `{placeholders}` are filled
from each run's config, so a user can only ever reach their own timeline:

    >>> import tempfile
    >>> from langgraph_chronomem import ChronoStore
    >>> store = ChronoStore.from_path(tempfile.mkdtemp(), scope_depth=2)
    >>> store.put(("memories", "alice"), "home", {"city": "Boston"})
    >>> store.put(("memories", "alice"), "home", {"city": "New York City"})
    >>> undo = create_undo_memory_tool(("memories", "{user_id}"), store=store)
    >>> config = {"configurable": {"user_id": "alice"}}
    >>> print(undo.invoke({"request": "undo my move to New York"}, config))
    Memory changed: rolled back to v1: updated memories/alice/home: New York City -> Boston (now v3). To reverse it, call undo_memory with request 'redo'.
    >>> store.get(("memories", "alice"), "home").value
    {'city': 'Boston'}
    >>> store.close()

In a graph the tools find the store through LangGraph's `ToolRuntime`.
"""  # noqa: E501

from __future__ import annotations

import asyncio
from collections.abc import Callable, Mapping, Sequence
from typing import Annotated, Any

from langchain_core.tools import StructuredTool
from langgraph.prebuilt import ToolNode, ToolRuntime
from langgraph.runtime import get_runtime
from langgraph.types import interrupt

from langgraph_chronomem.engine.describe import describe_change
from langgraph_chronomem.engine.types import Change, Commit, RevertConflict
from langgraph_chronomem.errors import ConfigError, ScopeError
from langgraph_chronomem.namespace import NamespaceTemplate
from langgraph_chronomem.search.resolve import Candidate, Resolution
from langgraph_chronomem.store import ChronoStore
from langgraph_chronomem.undo import UndoMode

__all__ = [
    "NamespaceTemplate",
    "create_memory_history_tool",
    "create_undo_memory_tool",
    "create_undo_node",
]

_UNDO = (
    "Undo a change to what you remember about the user, described in words: "
    "'undo the update about my move to NYC', 'go back to when I lived in Boston', "
    "'redo'. Memory goes back to how it was before that change, so later changes "
    "are undone too; set only_that_change to undo just that one change."
)
_HISTORY = (
    "Look up what your memory held in the past, e.g. 'my home city last week'. "
    "Returns past versions with their dates: history, not current memory."
)
_RESUME = "resume with a candidate index, a version like 'v2', or 'cancel'"
_CHOICE = {"type": ["integer", "string"]}  # shown to clients to render a form
_RESUME_SCHEMA = {"anyOf": [_CHOICE, {"properties": {"choice": _CHOICE}}]}


def _locate(
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


def _line(commit: Commit) -> str:
    return (
        f"v{commit.version} ({commit.created_at:%Y-%m-%d %H:%M} UTC): {commit.summary}"
    )


def _done(commit: Commit, name: str) -> str:
    return (
        f"Memory changed: {commit.summary} (now v{commit.version}). "
        f"To reverse it, call {name} with request 'redo'."
    )


def _conflict(conflict: RevertConflict) -> str:
    return f"Nothing changed: {conflict}. Undo without only_that_change instead."


def _unsure(resolution: Resolution) -> str:
    listed = "; ".join(
        f"[{i}] {_line(c.commit)}" for i, c in enumerate(resolution.candidates)
    )
    return (
        f"Nothing changed: not sure which change you mean. Candidates: {listed}. "
        "Ask the person which one, then call again with a more specific request."
    )


def _question(resolution: Resolution, revert: bool) -> dict[str, Any]:
    """The interrupt value: the request, the candidates and what each would change."""

    def changes(c: Candidate) -> list[str]:  # what choosing it would change
        inverse = [Change(x.namespace, x.key, x.new, x.old) for x in c.commit.changes]
        return [describe_change(x) for x in (inverse if revert else c.diff)]

    return {
        "question": f"Undo which change? {_RESUME}.",
        "request": resolution.request,
        "action": "revert" if revert else "rollback",
        "recommended": 0 if resolution.decided else None,
        "candidates": [
            {
                "index": i,
                "target": c.target,
                "commit": c.commit.version,
                "summary": c.summary,
                "date": c.commit.created_at.isoformat(timespec="seconds"),
                "changes": changes(c) or ["no change"],
            }
            for i, c in enumerate(resolution.candidates)
        ],
    }


def _pick(answer: Any, candidates: Sequence[Candidate]) -> Candidate | str:
    """The candidate a resume value names, or why nothing should change."""
    if isinstance(answer, Mapping):
        answer = answer.get("choice", answer)
    if answer is None or answer == "cancel":
        return "cancelled"
    if isinstance(answer, int) and not isinstance(answer, bool):
        if 0 <= answer < len(candidates):
            return candidates[answer]
    elif isinstance(answer, str) and answer[:1] == "v" and answer[1:].isdigit():
        for candidate in candidates:
            if candidate.target == int(answer[1:]):
                return candidate
    return f"no candidate {answer!r}; {_RESUME}"


def _undo(
    store: ChronoStore,
    scope: tuple[str, ...],
    request: str,
    revert: bool,
    approval: bool,
    name: str,
) -> str:
    """Resolve `request`, ask for approval if wanted, apply; say what happened."""
    mode: UndoMode = "revert" if revert else "rollback"
    resolution = store.resolve(scope, request)
    choice = None
    if approval and resolution.candidates:
        answer = interrupt(
            _question(resolution, revert), response_schema=_RESUME_SCHEMA
        )
        chosen = _pick(answer, resolution.candidates)
        if isinstance(chosen, str):
            return f"Nothing changed: {chosen}."
        choice = resolution.candidates.index(chosen)
    result = store.apply(scope, resolution, choice=choice, mode=mode, author=name)
    if result.commit is not None:
        return _done(result.commit, name)
    if result.conflict is not None:
        return _conflict(result.conflict)
    if resolution.candidates and not resolution.decided and choice is None:
        return _unsure(resolution)
    return f"Nothing changed: {result.message}."


def _history(store: ChronoStore, scope: tuple[str, ...], query: str, limit: int) -> str:
    """Past versions matching `query`, best match first, labelled as history."""
    resolution = store.resolve(scope, f"go back to when {query}", k=max(1, limit))
    if not resolution.candidates:
        return f"No history found: {resolution.reason}."
    lines = "\n".join(f"- {_line(c.commit)}" for c in resolution.candidates)
    return (
        f"History for {query!r} (past versions, best match first; not current "
        f"memory, which is at v{resolution.head}):\n{lines}"
    )


def create_undo_memory_tool(
    namespace: Sequence[str] = ("memories", "{user_id}"),
    *,
    require_approval: bool = False,
    name: str = "undo_memory",
    store: ChronoStore | None = None,
) -> StructuredTool:
    """A tool that undoes a memory change the user describes in words.

    The agent calls it with `request` ("undo the update about my move to NYC")
    and optionally `only_that_change=True` (revert just that change, keep later
    ones; the default rolls the whole scope back to before it). When two matches
    are too close to call, nothing changes and the reply lists the candidates.
    See the module docstring for a run.

    With `require_approval=True` the tool pauses the graph (which needs a
    checkpointer) with `interrupt()`. The interrupt value is a dict: `question`,
    `request`, `action` (`rollback` or `revert`), `recommended` (an index, or None
    when undecided) and `candidates`, each with `index`, `target` (the version
    restored), `commit` (the matched version), `summary`, `date` and `changes`
    (readable lines). Resume with `Command(resume=choice)`: a candidate index
    (`0`), a target version (`"v2"`), either as `{"choice": ...}`, or `"cancel"`
    to change nothing.

    Args:
        namespace: The memories' namespace; `{placeholders}` are filled from the
            run's `configurable`, else its context. Every placeholder must lie
            within the store's `scope_depth`, so each user is a timeline of its own.
        require_approval: Ask a person before changing anything.
        name: The tool's name (its replies mention it).
        store: The store to use; by default the graph's (from `ToolRuntime`).

    Returns:
        A LangChain tool with sync and async forms; it replies in one short text.

    Raises:
        ConfigError: For a malformed template; when called, for a missing or bad
            template value, or no `ChronoStore`.
        ScopeError: When called, if a placeholder lies outside the store's scope.
    """
    template = NamespaceTemplate(namespace)

    def undo_memory(
        request: Annotated[str, "What to undo, in the user's words."],
        only_that_change: Annotated[
            bool, "True: undo only that change and keep everything after it."
        ] = False,
        runtime: ToolRuntime = None,  # type: ignore[assignment]  # injected
    ) -> str:
        chrono, scope = _locate(template, store, runtime)
        return _undo(chrono, scope, request, only_that_change, require_approval, name)

    return _tool(undo_memory, name, _UNDO)


def create_undo_node(
    namespace: Sequence[str] = ("memories", "{user_id}"),
    *,
    require_approval: bool = False,
    name: str = "undo_memory",
    store: ChronoStore | None = None,
) -> ToolNode:
    """A `ToolNode` with the undo tool: `builder.add_node("undo", create_undo_node())`.

    Args, Raises: as for `create_undo_memory_tool`.
    """
    tool = create_undo_memory_tool(
        namespace, require_approval=require_approval, name=name, store=store
    )
    return ToolNode([tool])


def create_memory_history_tool(
    namespace: Sequence[str] = ("memories", "{user_id}"),
    *,
    name: str = "memory_history",
    store: ChronoStore | None = None,
) -> StructuredTool:
    """A tool that answers "what did you believe about X last week?" from history.

    The agent calls it with `query` (times like "last week" keep changes made
    then) and optionally `limit`. It searches the scope's commits as the undo
    does and lists the best matches with versions and dates, labelled as history:

        >>> tool = create_memory_history_tool(("memories", "{user_id}"))
        >>> tool.name, list(tool.tool_call_schema.model_json_schema()["properties"])
        ('memory_history', ['query', 'limit'])

    Args:
        namespace: As for `create_undo_memory_tool`.
        name: The tool's name.
        store: The store to use; by default the graph's (from `ToolRuntime`).

    Returns:
        A LangChain tool with sync and async forms.

    Raises:
        ConfigError, ScopeError: As for `create_undo_memory_tool`.
    """
    template = NamespaceTemplate(namespace)

    def memory_history(
        query: Annotated[str, "What to look up, e.g. 'my home city last week'."],
        limit: Annotated[int, "At most this many past versions."] = 5,
        runtime: ToolRuntime = None,  # type: ignore[assignment]  # injected
    ) -> str:
        chrono, scope = _locate(template, store, runtime)
        return _history(chrono, scope, query, limit)

    return _tool(memory_history, name, _HISTORY)


def _tool(func: Callable[..., str], name: str, description: str) -> StructuredTool:
    """`func` as a tool; its async form runs it in a worker thread, like the store's
    async twins (context variables, so the run's config and `interrupt`, carry over).
    """

    async def coroutine(*args: Any, **kwargs: Any) -> str:
        return await asyncio.to_thread(func, *args, **kwargs)

    return StructuredTool.from_function(
        func=func, coroutine=coroutine, name=name, description=description
    )
