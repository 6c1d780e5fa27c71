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

from collections.abc import Iterable, Sequence
from dataclasses import replace
from functools import partial

from langgraph.store.base import Op, PutOp, Result

from langgraph_chronomem.engine.protocol import LogEngine
from langgraph_chronomem.engine.types import Namespace
from langgraph_chronomem.errors import ReadOnlyError, VersionNotFound
from langgraph_chronomem.search.index import SearchIndex
from langgraph_chronomem.store.embedded_reads import EmbeddedReads
from langgraph_chronomem.store.ops import CheckedKeys, ReadPlan, check_ops, run_reads

__all__ = ["StoreView"]


class StoreView(CheckedKeys):
    """The state of `scope` at `version`: `get`, `search` and `list_namespaces` only.

    Reads outside the scope raise `ScopeError`; writes raise `ReadOnlyError`.
    Items read here have the timestamps they had at that version. A `reset`
    below `version` destroys that state for good, and a commit that reuses the
    number is another state: the view then raises `VersionNotFound`.

    `search(prefix, query=...)` ranks the state at `version` as the store,
    holding that state, would rank it (`search/past.py`): the same model,
    fields and distance, the same filter, limit and offset. A store without
    `index=` ignores `query`, as its own search does.

        >>> import tempfile
        >>> from langgraph_chronomem import ChronoStore
        >>> def embed(texts):  # a toy model: which of two words a text holds
        ...     return [[float("job" in t), float("pet" in t)] for t in texts]
        >>> index = {"dims": 2, "embed": embed, "fields": ["text"]}
        >>> store = ChronoStore.from_path(tempfile.mkdtemp(), index=index)
        >>> store.put(("bob",), "job", {"text": "a job at the bakery"})
        >>> store.put(("bob",), "pet", {"text": "a pet cat"})
        >>> store.delete(("bob",), "job")
        >>> past = store.as_of((), 2)
        >>> [(i.key, i.score) for i in past.search(("bob",), query="job")]
        [('job', 1.0), ('pet', 0.0)]
        >>> store.close()

    Args:
        engine: The log.
        scope: The scope it shows.
        version: The version it shows.
        commit_seq: The `seq` of the commit at `version` (0 for version 0), by
            which the view knows that version still exists.
        search: The store's semantic side, for `search(query=...)`.
        branch: The branch whose `version` it shows (`None`: the scope's own
            timeline); a deleted branch raises `BranchNotFound`.
    """

    def __init__(
        self,
        engine: LogEngine,
        scope: Namespace,
        version: int,
        *,
        commit_seq: int,
        search: SearchIndex | None = None,
        branch: str | None = None,
    ) -> None:
        self._engine = engine
        self.scope = scope
        self.version = version
        self.branch = branch
        self._commit_seq = commit_seq
        self._reads = EmbeddedReads(engine, search)

    def __repr__(self) -> str:
        on = "" if self.branch is None else f", branch={self.branch!r}"
        return f"StoreView(scope={self.scope!r}, version={self.version}{on})"

    def batch(self, ops: Iterable[Op]) -> list[Result]:
        """Run read ops against the scope at this version.

        Raises:
            ReadOnlyError: If any op is a put or delete.
            VersionNotFound: If a reset has destroyed the version since the view
                was made.
            CompactedError: If `compact` has erased values of it since.
            ConfigError: For a search by meaning on a store with no Chroma,
                as the store's own search.
        """
        checked, queries = self._checked(ops)
        plan = ReadPlan(self.scope, self.version)
        return self._reads.run(queries, plan, partial(self._in_transaction, checked))

    async def abatch(self, ops: Iterable[Op]) -> list[Result]:
        """Async `batch`: embeds with the model's async API, then reads in a
        worker thread."""
        checked, queries = self._checked(ops)
        plan = ReadPlan(self.scope, self.version)
        read = partial(self._in_transaction, checked)
        return await self._reads.arun(queries, plan, read)

    def _checked(self, ops: Iterable[Op]) -> tuple[list[Op], dict[int, str]]:
        """The ops, checked, and the queries of its searches by meaning."""
        checked, _ = check_ops(ops, self._engine.scope_depth)
        if any(isinstance(op, PutOp) for op in checked):
            raise ReadOnlyError(
                f"this view of {self.scope!r} at v{self.version} is read-only; "
                "write through the store itself, or roll back to this version"
            )
        return checked, self._reads.queries(checked)

    def _in_transaction(self, ops: Sequence[Op], plan: ReadPlan) -> list[Result]:
        with self._engine.transaction(write=False) as tx:
            if self.branch is not None:
                at = tx.branch_at(self.scope, self.branch, self.version)
                tx.check_whole(self.scope, min(at.fork, self.version))
                return run_reads(tx, ops, replace(plan, version=None, branch=at))
            if tx.commit_seq(self.scope, self.version) != self._commit_seq:
                raise VersionNotFound(
                    f"v{self.version} of {'/'.join(self.scope) or 'the store'} was "
                    "destroyed by a reset after this view was made; make a new "
                    "view with as_of() at a version the scope still has"
                )
            tx.check_whole(self.scope, self.version)  # compacted since?
            return run_reads(tx, ops, plan)
