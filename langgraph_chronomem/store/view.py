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

from collections.abc import Iterable

from langgraph.store.base import Op, PutOp, Result

from langgraph_chronomem._twins import off_loop
from langgraph_chronomem.engine.protocol import LogEngine
from langgraph_chronomem.engine.types import Namespace
from langgraph_chronomem.errors import ReadOnlyError, VersionNotFound
from langgraph_chronomem.store.ops import CheckedKeys, ReadPlan, check_ops, run_reads

__all__ = ["StoreView"]


class StoreView(CheckedKeys):
    """The state of `scope` at `version`: `get`, `search` and `list_namespaces` only.

    Reads outside the scope raise `ScopeError`; writes raise `ReadOnlyError`.
    Items read here have the timestamps they had at that version. A `reset`
    below `version` destroys that state for good, and a commit that reuses the
    number is another state: the view then raises `VersionNotFound`.

    Args:
        engine: The log.
        scope: The scope it shows.
        version: The version it shows.
        commit_seq: The `seq` of the commit at `version` (0 for version 0), by
            which the view knows that version still exists.
    """

    def __init__(
        self, engine: LogEngine, scope: Namespace, version: int, *, commit_seq: int
    ) -> None:
        self._engine = engine
        self.scope = scope
        self.version = version
        self._commit_seq = commit_seq

    def __repr__(self) -> str:
        return f"StoreView(scope={self.scope!r}, version={self.version})"

    def batch(self, ops: Iterable[Op]) -> list[Result]:
        """Run read ops against the scope at this version.

        Raises:
            ReadOnlyError: If any op is a put or delete.
            VersionNotFound: If a reset has destroyed the version since the view
                was made.
            CompactedError: If `compact` has erased values of it since.
        """
        ops, _ = check_ops(ops, self._engine.scope_depth)
        if any(isinstance(op, PutOp) for op in ops):
            raise ReadOnlyError(
                f"this view of {self.scope!r} at v{self.version} is read-only; "
                "write through the store itself, or roll back to this version"
            )
        with self._engine.transaction(write=False) as tx:
            if tx.commit_seq(self.scope, self.version) != self._commit_seq:
                raise VersionNotFound(
                    f"v{self.version} of {'/'.join(self.scope) or 'the store'} was "
                    "destroyed by a reset after this view was made; make a new "
                    "view with as_of() at a version the scope still has"
                )
            tx.check_whole(self.scope, self.version)  # compacted since?
            return run_reads(tx, ops, ReadPlan(self.scope, self.version))

    async def abatch(self, ops: Iterable[Op]) -> list[Result]:
        """Async `batch`."""
        return await off_loop(self.batch, list(ops))
