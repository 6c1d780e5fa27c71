"""The undo tool: undo a memory change the user describes in words or by id."""

from __future__ import annotations

from collections.abc import Sequence
from typing import Annotated

from langchain_core.tools import StructuredTool
from langgraph.prebuilt import ToolNode, ToolRuntime
from langgraph.types import interrupt

from langgraph_chronomem.errors import InvalidRequestError, VersionError
from langgraph_chronomem.namespace import NamespaceTemplate
from langgraph_chronomem.search.candidates import Mode
from langgraph_chronomem.store.base import ChronoStore
from langgraph_chronomem.tools.replies import (
    RESUME_SCHEMA,
    approval_question,
    changed_reply,
    conflict_reply,
    picked,
    unsure_reply,
)
from langgraph_chronomem.tools.runtime import locate_on_branch, make_tool

_UNDO = (
    "Undo a change to what you remember about the user. `request` is best a change "
    "id from memory_history or an earlier reply (e.g. '12.2', or '12.2/diet' for one "
    "field of a profile); else the user's own words ('forget that I moved to Rome'), "
    "'go back to when ...' to restore the whole memory to a moment, or 'redo'. Only "
    "the matched memory changes unless whole_memory is true. It acts alone only when "
    "one change holds everything the request names; otherwise nothing changes and "
    "you get candidates with ids: ask the person which one they mean, then call "
    "again with its id."
)


def _undo(
    store: ChronoStore,
    scope: tuple[str, ...],
    request: str,
    whole: bool,
    approval: bool,
    name: str,
    branch: str | None,
) -> str:
    """Resolve `request`, ask for approval if wanted, apply (on `branch`, if
    given); say what happened."""
    mode: Mode = "rollback" if whole else "auto"
    try:
        resolution = store.resolve(scope, request, mode=mode, branch=branch)
    except (InvalidRequestError, VersionError) as exc:  # e.g. a proposal's id
        return f"Nothing changed: {exc}."
    choice = None
    if approval and resolution.candidates:
        answer = interrupt(approval_question(resolution), response_schema=RESUME_SCHEMA)
        chosen = picked(answer, resolution.candidates)
        if isinstance(chosen, str):
            return f"Nothing changed: {chosen}."
        choice = resolution.candidates.index(chosen)
    result = store.apply(scope, resolution, choice=choice, author=name, branch=branch)
    if result.commit is not None:  # on a branch, undone by its id: no rollback there
        redo = "redo" if branch is None else str(result.commit.version)
        return changed_reply(result.commit, name, redo=redo)
    if result.conflict is not None:
        return conflict_reply(result.conflict, on_branch=branch is not None)
    if resolution.candidates and not resolution.decided and choice is None:
        return unsure_reply(resolution)
    return f"Nothing changed: {result.message}."


def create_undo_memory_tool(
    namespace: Sequence[str] = ("memories", "{user_id}"),
    *,
    require_approval: bool = False,
    name: str = "undo_memory",
    store: ChronoStore | None = None,
    branch: str | None = None,
) -> StructuredTool:
    """A tool that undoes a memory change the user describes in words.

    The agent calls it with `request`: a change id from the history tool
    ("12.2"), or words ("undo the update about my move to NYC", "go back to
    when I lived in Boston", "redo"), and optionally `whole_memory=True` (roll
    the whole scope back to before the change; by default only the matched
    memory changes). Unless the resolver is sure, nothing changes and the reply
    lists candidates with ids. Memory text reaches the model quoted and cut to
    a bounded length. See `langgraph_chronomem.tools` for a run.

    With `require_approval=True` the tool pauses the graph (which needs a
    checkpointer) with `interrupt()`. The interrupt value is a dict: `question`,
    `request`, `recommended` (an index, or None when undecided) and
    `candidates`, each with `index`, `id`, `action` (`revert`: just its items;
    `rollback`: the whole scope), `target` (the version a rollback restores),
    `commit` (the matched version), `summary`, `date` and `changes` (readable
    lines). Resume with `Command(resume=choice)`: a candidate index (`0`), a
    change id (`"2.1"`) or target version (`"v2"`), either as
    `{"choice": ...}`, or `"cancel"` to change nothing.

    Args:
        namespace: The memories' namespace; `{placeholders}` are filled from the
            run's `configurable`, else its context. Every placeholder must lie
            within the store's `scope_depth`, so each user is a timeline of its own.
        require_approval: Ask a person before changing anything.
        name: The tool's name (its replies mention it).
        store: The store to use; by default the graph's (from `ToolRuntime`).
        branch: Undo on this branch of the scope (`ChronoStore.undo(...,
            branch=)`: among its own changes, HEAD untouched): a name, or a
            `{placeholder}` filled from the run as the namespace's. A graph
            compiled with `store.on_branch(scope, name)` undoes on that
            branch without it.

    Returns:
        A LangChain tool with sync and async forms; it replies in one short text.

    Raises:
        ConfigError: For a malformed template; when called, for a missing or bad
            template value, no `ChronoStore`, or a `branch` other than the
            graph's.
        ScopeError: When called, if a placeholder lies outside the store's scope
            (or the graph's branch's).
    """
    template = NamespaceTemplate(namespace)
    on = None if branch is None else NamespaceTemplate((branch,))

    def undo_memory(
        request: Annotated[
            str, "A change id like '12.2', or what to undo in the memory's own words."
        ],
        whole_memory: Annotated[
            bool, "True: roll the whole memory back, undoing everything after it too."
        ] = False,
        runtime: ToolRuntime = None,  # type: ignore[assignment]  # injected
    ) -> str:
        chrono, scope, on_branch = locate_on_branch(template, on, store, runtime)
        return _undo(
            chrono, scope, request, whole_memory, require_approval, name, on_branch
        )

    return make_tool(undo_memory, name, _UNDO)


def create_undo_node(
    namespace: Sequence[str] = ("memories", "{user_id}"),
    *,
    require_approval: bool = False,
    name: str = "undo_memory",
    store: ChronoStore | None = None,
    branch: str | None = None,
) -> ToolNode:
    """A `ToolNode` with the undo tool: `builder.add_node("undo", create_undo_node())`.

    Args, Raises: as for `create_undo_memory_tool`.
    """
    tool = create_undo_memory_tool(
        namespace,
        require_approval=require_approval,
        name=name,
        store=store,
        branch=branch,
    )
    return ToolNode([tool])
