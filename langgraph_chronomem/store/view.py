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

from langgraph.store.base import Op, PutOp, Result, SearchOp

from langgraph_chronomem._twins import off_loop
from langgraph_chronomem.engine.protocol import LogEngine
from langgraph_chronomem.engine.types import Namespace
from langgraph_chronomem.errors import ConfigError, ReadOnlyError, VersionNotFound
from langgraph_chronomem.search.chroma import NO_CHROMA
from langgraph_chronomem.search.index import SearchIndex
from langgraph_chronomem.search.past import NotEmbedded
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
            timeline); a deleted branch raises `BranchNotFound`, and a search
            by meaning `ScopeError` (not on a branch yet).
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
        self._search = search

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
        asked = list(dict.fromkeys(queries.values()))
        embedded = dict(zip(asked, self._embed(asked), strict=True))
        while True:
            try:
                return self._read(checked, queries, embedded)
            except NotEmbedded as missing:  # embed outside the log's transaction
                self._learn(embedded, missing.texts, self._embed(missing.texts))

    async def abatch(self, ops: Iterable[Op]) -> list[Result]:
        """Async `batch`: embeds with the model's async API, then reads in a
        worker thread."""
        checked, queries = self._checked(ops)
        asked = list(dict.fromkeys(queries.values()))
        embedded = dict(zip(asked, await self._aembed(asked), strict=True))
        while True:
            try:
                return await off_loop(self._read, checked, queries, embedded)
            except NotEmbedded as missing:
                vectors = await self._aembed(missing.texts)
                self._learn(embedded, missing.texts, vectors)

    def _checked(self, ops: Iterable[Op]) -> tuple[list[Op], dict[int, str]]:
        """The ops, checked, and the queries of its searches by meaning (none
        on a store without `index=`, which ignores them, as its search does)."""
        checked, _ = check_ops(ops, self._engine.scope_depth)
        if any(isinstance(op, PutOp) for op in checked):
            raise ReadOnlyError(
                f"this view of {self.scope!r} at v{self.version} is read-only; "
                "write through the store itself, or roll back to this version"
            )
        if (
            self._search is None
            or not self._search.indexes_items
            or self.branch is not None  # refused by `run_reads`
        ):
            return checked, {}
        queries = {
            i: op.query
            for i, op in enumerate(checked)
            if isinstance(op, SearchOp) and op.query
        }
        if queries:  # as the store's search checks them
            self._engine.check_writable("search by meaning")
            if not self._search.has_chroma:
                raise ConfigError(NO_CHROMA)
        return checked, queries

    def _read(
        self,
        ops: Sequence[Op],
        queries: dict[int, str],
        embedded: dict[str, list[float]],
    ) -> list[Result]:
        """One transaction of reads; searches by meaning on the vectors,
        caught up with every write so far (`SearchIndex.searching`).

        Raises:
            NotEmbedded: If a text of a past row has no vector yet.
        """
        if not queries:
            return self._in_transaction(ops, ReadPlan(self.scope, self.version))
        assert self._search is not None  # `_checked` found queries
        return self._search.searching(
            lambda vectors: self._in_transaction(
                ops,
                ReadPlan(
                    self.scope,
                    self.version,
                    vectors=vectors,
                    queries={i: embedded[q] for i, q in queries.items()},
                    embedded=embedded,
                ),
            )
        )

    def _in_transaction(self, ops: Sequence[Op], plan: ReadPlan) -> list[Result]:
        with self._engine.transaction(write=False) as tx:
            if self.branch is not None:
                at = tx.branch_at(self.scope, self.branch, self.version)
                tx.check_whole(self.scope, min(at.fork, self.version))
                return run_reads(tx, ops, ReadPlan(self.scope, branch=at))
            if tx.commit_seq(self.scope, self.version) != self._commit_seq:
                raise VersionNotFound(
                    f"v{self.version} of {'/'.join(self.scope) or 'the store'} was "
                    "destroyed by a reset after this view was made; make a new "
                    "view with as_of() at a version the scope still has"
                )
            tx.check_whole(self.scope, self.version)  # compacted since?
            return run_reads(tx, ops, plan)

    def _learn(
        self,
        embedded: dict[str, list[float]],
        texts: list[str],
        vectors: list[list[float]],
    ) -> None:
        """Keep these texts' vectors: for this batch's next read, and for
        the next searches of past states (`PastVectors`)."""
        new = dict(zip(texts, vectors, strict=True))
        embedded.update(new)
        assert self._search is not None  # only a search by meaning embeds
        self._search.vectors().past.keep(new)

    def _embed(self, texts: list[str]) -> list[list[float]]:
        if not texts:
            return []
        assert self._search is not None  # `_checked` found queries
        return self._search.embeddings.embed_documents(texts)

    async def _aembed(self, texts: list[str]) -> list[list[float]]:
        if not texts:
            return []
        assert self._search is not None
        return await self._search.embeddings.aembed_documents(texts)
