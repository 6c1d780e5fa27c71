"""A read-only store at one version of one scope, as `ChronoStore.as_of` returns it.

It is a `BaseStore`, so anything that reads a store can read the past:

    >>> from langgraph_chronomem import ChronoStore
    >>> import tempfile
    >>> store = ChronoStore.from_path(tempfile.mkdtemp(), scope_depth=2)
    >>> store.put(("memories", "alice"), "city", {"city": "Boston"})
    >>> store.put(("memories", "alice"), "city", {"city": "Paris"})
    >>> store.as_of(("memories", "alice"), 1).get(("memories", "alice"), "city").value
    {'city': 'Boston'}
    >>> store.close()
"""

from __future__ import annotations

import asyncio
from collections.abc import Iterable

from langgraph.store.base import BaseStore, Op, PutOp, Result

from langgraph_chronomem.engine.sqlite import SqliteEngine
from langgraph_chronomem.engine.types import Namespace
from langgraph_chronomem.errors import ReadOnlyError
from langgraph_chronomem.ops import ReadPlan, check_ops, run_reads

__all__ = ["StoreView"]


class StoreView(BaseStore):
    """The state of `scope` at `version`: `get`, `search` and `list_namespaces` only.

    Reads outside the scope raise `ScopeError`; writes raise `ReadOnlyError`.
    Items read here have the timestamps they had at that version.
    """

    def __init__(self, engine: SqliteEngine, scope: Namespace, version: int) -> None:
        self._engine = engine
        self.scope = scope
        self.version = version

    def __repr__(self) -> str:
        return f"StoreView(scope={self.scope!r}, version={self.version})"

    def batch(self, ops: Iterable[Op]) -> list[Result]:
        """Run read ops against the scope at this version.

        Raises:
            ReadOnlyError: If any op is a put or delete.
        """
        ops, _ = check_ops(ops, self._engine.scope_depth)
        if any(isinstance(op, PutOp) for op in ops):
            raise ReadOnlyError(
                f"this view of {self.scope!r} at v{self.version} is read-only; "
                "write through the store itself, or roll back to this version"
            )
        with self._engine.transaction(write=False) as tx:
            return run_reads(tx, ops, ReadPlan(self.scope, self.version))

    async def abatch(self, ops: Iterable[Op]) -> list[Result]:
        """Async `batch`."""
        return await asyncio.to_thread(self.batch, list(ops))
