"""Who, why and from where: the metadata stamped on every commit.

Code that only knows `BaseStore.put` cannot pass an author, so the author and the
reason travel in a context variable instead, set around any block of writes:

    >>> with commit_context(author="alice", reason="profile import"):
    ...     current_meta().author
    'alice'

Inside a LangGraph run the thread, checkpoint, run, node and task are added as
labels on their own, read from the run's config (`get_runtime().execution_info`).
The task's id lets a task that LangGraph runs again (resumed after an
`interrupt()`, retried, or re-run after a crash) leave one commit per write.
"""

from __future__ import annotations

from collections.abc import Iterator, Mapping
from contextlib import contextmanager
from contextvars import ContextVar
from dataclasses import replace
from datetime import datetime
from typing import Any

from langchain_core.runnables.config import var_child_runnable_config
from langgraph.runtime import Runtime

from langgraph_chronomem.engine.types import CommitMeta
from langgraph_chronomem.store.ops import check_text

__all__ = ["commit_context", "current_meta", "runtime_labels"]

_META: ContextVar[CommitMeta | None] = ContextVar("chronomem_commit_meta", default=None)
# The metadata of a write outside any `commit_context`, made once: every put
# asks for it. Shared, as nothing changes a `CommitMeta`'s labels in place.
_NO_META = CommitMeta()
_RUNTIME_KEY = "__pregel_runtime"  # where LangGraph keeps the Runtime in a run's config


@contextmanager
def commit_context(
    *,
    author: str | None = None,
    reason: str | None = None,
    labels: Mapping[str, str] | None = None,
    timestamp: datetime | None = None,
    review: bool | None = None,
) -> Iterator[CommitMeta]:
    """Set the author, reason and labels of every commit made inside the block.

    Blocks nest: an inner block keeps what it does not override, and labels merge.

    Args:
        author: Who is writing (a user id, an agent name, `"cli"`…).
        reason: Why, in a few words; shown in `log` and searched by undo.
        labels: Extra labels, e.g. `{"session": "s-42"}`.
        timestamp: The commit time to record instead of now, for importing old
            data (the LoCoMo benchmark replays dated sessions this way).
        review: Make every write in the block a proposal: in the log, but
            invisible to reads until `store.approve` (`False` turns it off
            for an inner block).

    Yields:
        The metadata now in force.

    Raises:
        InvalidRequestError: If the author, reason or a label is not valid
            Unicode (a lone surrogate, as undecoded bytes become): no commit
            could store it, so the block does not start.
    """
    for what, text in (
        ("author", author),
        ("reason", reason),
        *(("label name", name) for name in labels or {}),
        *((f"label {name!r}", value) for name, value in (labels or {}).items()),
    ):
        if isinstance(text, str):
            check_text(what, text)
    outer = _META.get() or CommitMeta()
    merged = replace(
        outer,
        author=author if author is not None else outer.author,
        reason=reason if reason is not None else outer.reason,
        labels={**outer.labels, **(labels or {})},
        timestamp=timestamp if timestamp is not None else outer.timestamp,
        review=review if review is not None else outer.review,
    )
    token = _META.set(merged)
    try:
        yield merged
    finally:
        _META.reset(token)


def runtime_labels() -> dict[str, str]:
    """Thread, checkpoint, run, node and task of the LangGraph run we are in,
    if any."""
    config: Any = var_child_runnable_config.get()
    if not config:
        return {}
    labels: dict[str, Any] = {
        "node": (config.get("metadata") or {}).get("langgraph_node")
    }
    runtime = (config.get("configurable") or {}).get(_RUNTIME_KEY)
    info = runtime.execution_info if isinstance(runtime, Runtime) else None
    if info is not None:
        labels.update(
            thread_id=info.thread_id,
            checkpoint_id=info.checkpoint_id,
            run_id=info.run_id,
            task_id=info.task_id,
        )
    return {name: str(value) for name, value in labels.items() if value is not None}


def current_meta(*, hold_returning: bool = False) -> CommitMeta:
    """The metadata for a commit made now: the context's, plus the run's labels,
    and `hold_returning` if the store holds returning values for review."""
    meta = _META.get() or _NO_META
    # Outside a run, no call to find no labels: every put asks.
    from_run = runtime_labels() if var_child_runnable_config.get() else None
    if not from_run and not hold_returning:
        return meta
    return replace(
        meta,
        labels={**(from_run or {}), **meta.labels},
        hold_returning=hold_returning or meta.hold_returning,
    )
