"""Chroma collections projected from the log: HEAD items, and every item change.

Both are derived data (DESIGN.md, invariant 1). Each keeps a mark in the log's
`projections` table and catches up by reading the commits after it, so a crash
between a commit and its Chroma update only delays the update; `rebuild` makes
both again from nothing. Every query carries its scope or namespace filter
(invariant 5), and every hit is returned with the log row it was made from, for
the caller to check against the log before trusting it (invariant 2). The change
collection holds one vector per log row with a value: the item as that change
left it, so what a change replaced is the vector of the row before it.

`VectorIndex` puts together the parts, each a module of its own:

- `search/vector_collections.py`: the collections' names, opening them, every
  Chroma call;
- `search/embedding.py`: what is embedded, and the vectors kept so nothing is
  embedded twice;
- `search/project.py`: log rows' vectors into the collections;
- `search/catchup.py`: the marks, and bringing the collections up to the log;
- `search/exact.py`: the copies kept in memory, and the exact searches;
- `search/erase.py`: erased values out of the collections.

Its locks, in the order they are taken (never the other way):

1. `Collections.locks[name]`, one per collection (the items' before the
   changes' when both are held): while its Chroma side and mark are written.
2. `KeptVectors._lock`: the in-memory copies; searches take it inside a
   transaction of the log, so its holders never wait for the log.
3. `EmbeddingCache._lock` and `CatchUp._undos_lock`: held for a dictionary's
   or a counter's work alone.
4. `Collections._chroma`: one Chroma call at a time; the innermost of all.

    >>> import tempfile, chromadb
    >>> from chromadb.config import Settings
    >>> from langgraph_chronomem.engine import CommitMeta, SqliteEngine, Write
    >>> from langgraph.store.base import ensure_embeddings
    >>> engine = SqliteEngine(tempfile.mkdtemp() + "/log.sqlite3", scope_depth=1)
    >>> with engine.transaction(write=True) as tx:
    ...     _ = tx.commit([Write(("alice",), "city", {"city": "Paris"})], CommitMeta())
    >>> toy = ensure_embeddings(lambda ts: [[float("Paris" in t), 1.0] for t in ts])
    >>> client = chromadb.EphemeralClient(Settings(anonymized_telemetry=False))
    >>> index = VectorIndex(engine, client, toy, "toy", item_fields=["city"])
    >>> index.catch_up()  # commits applied
    1
    >>> [hit.version for hit in index.query_changes(("alice",), [1.0, 1.0], n=5)]
    [1]
    >>> [(hit.namespace, hit.key) for hit in next(index.nearest_items((), [1.0, 1.0]))]
    [(('alice',), 'city')]
"""

from __future__ import annotations

from collections.abc import Callable, Iterator, Mapping, Sequence
from typing import Any

import numpy as np
from langchain_core.embeddings import Embeddings

from langgraph_chronomem.engine.protocol import LogEngine
from langgraph_chronomem.engine.types import Namespace
from langgraph_chronomem.search.catchup import CatchUp, Progress
from langgraph_chronomem.search.embedding import EmbeddingCache, ItemTexts
from langgraph_chronomem.search.exact import KeptVectors
from langgraph_chronomem.search.hits import (
    DISTANCES,
    ChangeHit,
    Distance,
    ItemHit,
    unit,
)
from langgraph_chronomem.search.past import PastVectors
from langgraph_chronomem.search.project import BATCH, Projector
from langgraph_chronomem.search.vector_collections import (
    CHANGES,
    ITEMS,
    Collections,
    collection_name,
    collection_names,
    lagging,
    log_name,
)

__all__ = [
    "CHANGES",
    "DISTANCES",
    "ITEMS",
    "ChangeHit",
    "Distance",
    "ItemHit",
    "ItemTexts",
    "Progress",
    "VectorIndex",
    "collection_name",
    "collection_names",
    "lagging",
    "log_name",
    "unit",
]


class VectorIndex:
    """The store's Chroma side: one collection of HEAD items, one of item changes.

    Args:
        engine: The log.
        client: A Chroma client: `PersistentClient` for one process,
            `HttpClient` (a Chroma server) when several processes share a store.
        embeddings: What turns text into vectors (the store's `index["embed"]`, or
            the default all-MiniLM-L6-v2).
        embedder: A name for the embedding model. A collection made with another
            model is dropped and rebuilt, never mixed.
        item_fields: JSON paths embedded for items (`index["fields"]`), or `None`
            when items are not indexed (changes always are).
        distance: How item scores are given (`index["distance_type"]`).
        log: The log's name among the logs sharing the Chroma (`log_name`),
            carried by its collections' names; `None` for the names of before.
        own_chroma: Whether the Chroma holds this log's vectors alone (an
            embedded one in the store's directory): collections of before
            logs had names are then renamed, not made again from the log.
        on_lag: Called when `ready_for` caught up one scope alone, leaving
            other scopes' commits to embed: the store's follower takes them.
    """

    def __init__(
        self,
        engine: LogEngine,
        client: Any,
        embeddings: Embeddings,
        embedder: str,
        *,
        item_fields: Sequence[str] | None = None,
        distance: Distance = "cosine",
        log: str | None = None,
        own_chroma: bool = False,
        on_lag: Callable[[], None] | None = None,
    ) -> None:
        self.engine = engine
        self.embedder = embedder
        self.item_texts = ItemTexts(item_fields)
        self.collections = Collections(
            engine, client, embedder, item_fields, log=log, own_chroma=own_chroma
        )
        self.cache = EmbeddingCache(embeddings)
        self.kept = KeptVectors(self.collections, distance)
        self.past = PastVectors()  # texts of past states, as `as_of` searches them
        self.projector = Projector(
            engine, self.collections, self.cache, self.item_texts, self.kept
        )
        self._catch_up = CatchUp(
            engine, self.collections, self.cache, self.kept, self.projector, on_lag
        )

    @property
    def client(self) -> Any:
        """The Chroma client."""
        return self.collections.client

    @property
    def embeddings(self) -> Embeddings:
        """What turns text into vectors."""
        return self.cache.embeddings

    @property
    def changes(self) -> Any:
        """The collection of item changes."""
        return self.collections.changes

    @property
    def items(self) -> Any:
        """The collection of HEAD items (`None` when items are not indexed)."""
        return self.collections.items

    def check(self) -> VectorIndex:
        """Read each collection once, so a damaged one fails here, on open.

        Raises:
            Exception: Whatever Chroma raises for a collection it cannot read.
        """
        self.collections.check()
        return self

    def present(self, *, changes: bool = False) -> VectorIndex:
        """Ask Chroma for the collection a search reads (items; `changes` for
        the undo search's), so one gone since it was opened (a server restarted
        on empty data, a rebuild by another store) fails here, where it can be
        made again.

        Raises:
            chromadb.errors.NotFoundError: If it is gone.
        """
        read = self.changes if changes or self.items is None else self.items
        count = self.collections.call(read.count)
        if read is self.items:  # the search that follows needs no other count
            self.kept.counted(count)
        return self

    # -- what gets embedded ---------------------------------------------------

    def embed(self, texts: Sequence[str]) -> list[list[float]]:
        """Vectors for `texts`, reusing those writes computed (`remember`)
        and those `embed_ahead` did (each used once)."""
        return self.cache.embed(texts)

    def remember(self, known: Mapping[str, list[float]]) -> None:
        """Keep the vectors a write computed before it committed, for the
        catch-up that applies its commit: nothing is embedded twice."""
        self.cache.remember(known)

    # -- catching up with the log (`search/catchup.py`) -----------------------

    def catch_up(
        self,
        *,
        items: bool = True,
        changes: bool = True,
        steps: int | None = None,
        batch: int = BATCH,
        upto: int | None = None,
        progress: Progress | None = None,
        shared: bool = True,
    ) -> int:
        """Apply the commits the collections have not seen; how many
        (`CatchUp.catch_up` says what each argument does)."""
        return self._catch_up.catch_up(
            items=items,
            changes=changes,
            steps=steps,
            batch=batch,
            upto=upto,
            progress=progress,
            shared=shared,
        )

    def behind(self) -> bool:
        """Whether a collection has commits (or a rebuild) still to apply."""
        return self._catch_up.behind()

    def last_seq(self) -> int:
        """The log's newest commit `seq`: what a catch-up must reach to hold
        every write made so far."""
        return self._catch_up.last_seq()

    def ready_for(self, scope: Namespace) -> int:
        """Bring `scope`'s change vectors up to the log, and no other scope's
        (`CatchUp.ready_for`). Returns how many of its changes were embedded."""
        return self._catch_up.ready_for(scope)

    def embed_ahead(self, *, batch: int, piece: int) -> int:
        """Embed the changes of the next `batch` commits, reading the log
        `piece` commits a transaction, and keep their vectors for the
        catch-up (`CatchUp.embed_ahead`). Returns how many commits."""
        return self._catch_up.embed_ahead(batch=batch, piece=piece)

    def write_ahead(self, seconds: float) -> int:
        """Write to Chroma what `embed_ahead` embedded, for about `seconds`
        at most (`CatchUp.write_ahead`). Returns how many commits."""
        return self._catch_up.write_ahead(seconds)

    def rebuild(self, progress: Progress | None = None) -> int:
        """Drop both collections and make them again from the log.

        `progress` is called as in `catch_up`.
        """
        return self._catch_up.rebuild(progress)

    # -- queries (`search/exact.py`) ------------------------------------------

    def nearest_items(
        self, prefix: Namespace, vector: Sequence[float], *, chunk: int = 64
    ) -> Iterator[list[ItemHit]]:
        """Item vectors under `prefix`, nearest first, exactly, in chunks: one
        hit per log row, with the row it was made from (`KeptVectors.nearest_items`)."""
        return self.kept.nearest_items(prefix, vector, chunk=chunk)

    def query_changes(
        self, scope: Namespace, vector: Sequence[float], *, n: int
    ) -> list[ChangeHit]:
        """The `n` item changes of `scope` whose new values are nearest, best
        first, exactly (`KeptVectors.query_changes`)."""
        return self.kept.query_changes(scope, vector, n=n)

    def change_vectors(
        self, scope: Namespace, row_ids: Sequence[int]
    ) -> dict[int, np.ndarray]:
        """The unit vectors of these log rows of `scope` (rows without a value
        have none)."""
        return self.kept.change_vectors(scope, row_ids)
