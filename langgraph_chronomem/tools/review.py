"""The review node: a person approves or rejects the scope's pending proposals."""

from __future__ import annotations

import logging
from collections.abc import Callable, Mapping, Sequence
from typing import Any

from langgraph.types import interrupt

from langgraph_chronomem.engine.types import Commit
from langgraph_chronomem.errors import InvalidRequestError, WriteConflictError
from langgraph_chronomem.namespace import NamespaceTemplate
from langgraph_chronomem.store.base import ChronoStore
from langgraph_chronomem.tools.replies import said
from langgraph_chronomem.tools.runtime import locate

logger = logging.getLogger(__name__)

_REVIEW = (
    "Approve or reject these proposed memory changes? Resume with "
    "{'approve': [ids], 'reject': [ids]} (optionally 'reason'); a proposal in "
    "neither list stays pending. Quoted texts are stored data."
)


def create_review_node(
    namespace: Sequence[str] = ("memories", "{user_id}"),
    *,
    name: str = "review_memory",
    store: ChronoStore | None = None,
) -> Callable[[Any], None]:
    """A graph node that asks a person to decide the scope's pending proposals.

    When the run's scope holds proposals (writes made with
    `commit_context(review=True)` or from a source `require_review` named),
    the node pauses the graph with `interrupt()`; its value is a dict:
    `question`, and `proposals`, each with `id` (its version), `date`,
    `author`, `source` and `changes` (memory texts quoted as data). Resume
    with `Command(resume={"approve": [ids], "reject": [ids]})`, optionally
    with a `reason`; each decision is a commit by `name`, and a proposal in
    neither list stays pending, as does one approved whose items changed
    since it was shown (the next review shows it again). With no proposals
    it returns at once. The graph needs a checkpointer to pause:

        >>> import tempfile
        >>> from langgraph.graph import START, StateGraph
        >>> from langgraph.types import Command
        >>> from typing_extensions import TypedDict
        >>> from langgraph_chronomem import ChronoCheckpointer, ChronoStore
        >>> store = ChronoStore.from_path(tempfile.mkdtemp(), scope_depth=2)
        >>> with store.commit_context(review=True, labels={"source": "web"}):
        ...     store.put(("memories", "alice"), "city", {"content": "Atlantis"})
        >>> class State(TypedDict):
        ...     pass
        >>> builder = StateGraph(State).add_node("review", create_review_node())
        >>> graph = builder.add_edge(START, "review").compile(
        ...     checkpointer=ChronoCheckpointer(store), store=store
        ... )
        >>> run = {"configurable": {"thread_id": "t1", "user_id": "alice"}}
        >>> asked = graph.invoke({}, run)["__interrupt__"][0].value
        >>> asked["proposals"][0]["changes"]
        ['saved "Atlantis"']
        >>> _ = graph.invoke(Command(resume={"reject": [1]}), run)
        >>> store.log(("memories", "alice"))[0].summary
        'rejected v1'
        >>> store.close()

    Args:
        namespace: The scope, as a template filled from each run's config
            (or context).
        name: The author recorded on the decisions.
        store: The store; default: the graph's.

    Raises:
        ConfigError: If no `ChronoStore` is found, or the template cannot be
            filled.
        ScopeError: If a placeholder lies outside the store's scope.
    """
    template = NamespaceTemplate(namespace)

    def review_memory(state: Any) -> None:
        found, scope = locate(template, store, None)
        pending = found.proposals(scope)
        if pending:
            answer = interrupt({"question": _REVIEW, "proposals": _shown(pending)})
            _decide(found, scope, answer, {c.version for c in pending}, name)

    review_memory.__name__ = name
    return review_memory


def _shown(proposals: Sequence[Commit]) -> list[dict[str, Any]]:
    """Proposals as the interrupt shows them: short, their texts quoted."""
    return [
        {
            "id": commit.version,
            "date": commit.created_at.isoformat(timespec="seconds"),
            "author": commit.author,
            "source": commit.labels.get("source"),
            "changes": [said(change) for change in commit.changes],
        }
        for commit in proposals
    ]


def _decide(
    store: ChronoStore,
    scope: tuple[str, ...],
    answer: Any,
    shown: set[int],
    name: str,
) -> None:
    """Apply a resume value's decisions to the proposals that were shown.

    Raises:
        InvalidRequestError: For a resume value that is not a decision on
            shown proposals, before anything is decided.
    """
    if not isinstance(answer, Mapping) or not set(answer) <= {
        "approve",
        "reject",
        "reason",
    }:
        raise InvalidRequestError(f"{_REVIEW} Got {answer!r}")
    approve, reject = (list(answer.get(k) or ()) for k in ("approve", "reject"))
    unknown = [v for v in (*approve, *reject) if v not in shown]
    both = set(approve) & set(reject)
    if unknown or both:
        raise InvalidRequestError(
            f"decide only the proposals shown ({sorted(shown)}), each once; got "
            f"{unknown or sorted(both)}"
        )
    reason = answer.get("reason")
    for version in approve:
        try:
            store.approve(scope, version, reason=reason, author=name)
        except WriteConflictError:
            # Changed since it was shown: it stays pending, and the next
            # review shows it again against the memory as it is now.
            logger.warning("left v%s pending", version, exc_info=True)
    for version in reject:
        store.reject(scope, version, reason=reason, author=name)
