"""Searches by meaning of a state the item collection does not hold (a past
version, a branch): the batch's queries embedded before the log's transaction
opens, and the texts of rows HEAD has no vector of embedded between tries
(`search/past.py` raises `NotEmbedded` for them), so the model never runs
while the log is held. `StoreView` and `BranchView` read through it:

    >>> import tempfile
    >>> from langgraph_chronomem import ChronoStore
    >>> def embed(texts):  # a toy model: which of two words a text holds
    ...     return [[float("tea" in t), float("cat" in t)] for t in texts]
    >>> index = {"dims": 2, "embed": embed, "fields": ["text"]}
    >>> store = ChronoStore.from_path(tempfile.mkdtemp(), index=index)
    >>> _ = store.branch((), "pets")
    >>> store.on_branch((), "pets").put(("bob",), "pet", {"text": "a cat"})
    >>> [i.key for i in store.on_branch((), "pets").search(("bob",), query="cat")]
    ['pet']
    >>> store.close()
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import replace
from typing import TypeVar

from langgraph.store.base import Op, SearchOp

from langgraph_chronomem._twins import off_loop
from langgraph_chronomem.engine.protocol import LogEngine
from langgraph_chronomem.errors import ConfigError
from langgraph_chronomem.search.chroma import NO_CHROMA
from langgraph_chronomem.search.index import SearchIndex
from langgraph_chronomem.search.past import NotEmbedded
from langgraph_chronomem.store.ops import ReadPlan

__all__ = ["EmbeddedReads"]

T = TypeVar("T")
Read = Callable[[ReadPlan], T]


class EmbeddedReads:
    """Runs a view's reads with its searches by meaning embedded.

    Args:
        engine: The log.
        search: The store's semantic side (`None`: queries are ignored).
    """

    def __init__(self, engine: LogEngine, search: SearchIndex | None) -> None:
        self._engine = engine
        self._search = search

    def queries(self, ops: Sequence[Op]) -> dict[int, str]:
        """The queries of the checked ops' searches by meaning, by op position
        (none on a store without `index=`, which ignores them, as its own
        search does).

        Raises:
            ReadOnlyError: On a store opened with `read_only=True`, as its
                own search by meaning.
            ConfigError: On a store with no Chroma.
        """
        if self._search is None or not self._search.indexes_items:
            return {}
        queries = {
            i: op.query
            for i, op in enumerate(ops)
            if isinstance(op, SearchOp) and op.query
        }
        if queries:  # as the store's search checks them
            self._engine.check_writable("search by meaning")
            if not self._search.has_chroma:
                raise ConfigError(NO_CHROMA)
        return queries

    def run(self, queries: dict[int, str], plan: ReadPlan, read: Read[T]) -> T:
        """`read(plan)`, the plan given the vectors of `queries` and of the
        texts the state's rows need; `read` runs again after each embedding."""
        asked = list(dict.fromkeys(queries.values()))
        embedded = dict(zip(asked, self._embed(asked), strict=True))
        while True:
            try:
                return self._read(queries, embedded, plan, read)
            except NotEmbedded as missing:  # embed outside the log's transaction
                self._learn(embedded, missing.texts, self._embed(missing.texts))

    async def arun(self, queries: dict[int, str], plan: ReadPlan, read: Read[T]) -> T:
        """Async `run`: embeds with the model's async API, reads in a worker
        thread."""
        asked = list(dict.fromkeys(queries.values()))
        embedded = dict(zip(asked, await self._aembed(asked), strict=True))
        while True:
            try:
                return await off_loop(self._read, queries, embedded, plan, read)
            except NotEmbedded as missing:
                vectors = await self._aembed(missing.texts)
                self._learn(embedded, missing.texts, vectors)

    def _read(
        self,
        queries: dict[int, str],
        embedded: dict[str, list[float]],
        plan: ReadPlan,
        read: Read[T],
    ) -> T:
        """`read` on the vectors caught up with every write so far
        (`SearchIndex.searching`).

        Raises:
            NotEmbedded: If a text of a row has no vector yet.
        """
        if not queries:
            return read(plan)
        assert self._search is not None  # `queries` found some
        vectors_of = {i: embedded[q] for i, q in queries.items()}
        return self._search.searching(
            lambda vectors: read(
                replace(plan, vectors=vectors, queries=vectors_of, embedded=embedded)
            )
        )

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
        assert self._search is not None  # `queries` found some
        return self._search.embeddings.embed_documents(texts)

    async def _aembed(self, texts: list[str]) -> list[list[float]]:
        if not texts:
            return []
        assert self._search is not None
        return await self._search.embeddings.aembed_documents(texts)
