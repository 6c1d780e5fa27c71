"""The query side of the vectors: copies of the collections kept in memory,
topped up from Chroma, and exact searches over them (every vector of a scope,
or under a prefix, compared by one matrix product: no approximate index can
drop a near-duplicate or let another user's vectors crowd one out).

The lock that lives here, `KeptVectors._lock`, guards the copies. Searches
take it inside a transaction of the log (they hold the log's lock), so its
holders never wait for the log; it is taken inside a collection's lock (a
scope made ready, a rebuild) and around Chroma calls (`Collections._chroma`).
"""

from __future__ import annotations

import threading
from collections.abc import Callable, Iterator, Mapping, Sequence
from dataclasses import dataclass, replace
from typing import Any

import numpy as np

from langgraph_chronomem.engine.feed import ProjectionState
from langgraph_chronomem.engine.rows import namespace_text, scope_key
from langgraph_chronomem.engine.types import Namespace
from langgraph_chronomem.search.hits import ChangeHit, Distance, ItemHit, unit
from langgraph_chronomem.search.vector_collections import Collections

__all__ = ["KeptVectors", "scores", "unit_rows"]


def unit_rows(vectors: Any) -> tuple[np.ndarray, np.ndarray]:
    """Vectors as kept for exact search: float32 unit rows, and their lengths.

    >>> matrix, norms = unit_rows([[3.0, 4.0]])
    >>> matrix.tolist(), norms.tolist()
    ([[0.6000000238418579, 0.800000011920929]], [5.0])
    """
    matrix = np.asarray(vectors, dtype=np.float32)
    norms = np.linalg.norm(matrix, axis=1)
    matrix /= np.maximum(norms, 1e-12)[:, None]
    return matrix, norms


def scores(
    matrix: np.ndarray, norms: np.ndarray, vector: Sequence[float], distance: Distance
) -> np.ndarray:
    """Each row's score against `vector`, higher is nearer, in the index's
    `distance_type`, as `PostgresStore` scores: cosine similarity, minus the
    L2 distance, or the inner product (`matrix` and `norms` as `unit_rows`
    gives them).

    A row's score depends on that row alone, wherever it sits in `matrix`
    (a matrix-vector product would sum a row otherwise in another matrix):
    equal vectors score equal, so equal scores keep the order of their rows.

    >>> matrix, norms = unit_rows([[3.0, 4.0]])
    >>> [round(float(s), 3) for s in scores(matrix, norms, [3.0, 0.0], "l2")]
    [-4.0]
    """
    query = np.asarray(vector, dtype=np.float32)
    length = float(np.linalg.norm(query)) or 1.0
    cosine: np.ndarray = np.einsum("ij,j->i", matrix, query / length)
    if distance == "cosine":
        return cosine
    inner: np.ndarray = cosine * norms * length
    if distance == "inner_product":
        return inner
    squared = norms**2 + length**2 - 2 * inner
    distance_to: np.ndarray = np.sqrt(np.maximum(squared, 0.0))
    return -distance_to


@dataclass(frozen=True)
class _Kept:
    """Vectors kept in memory for exact search: their log rows, what else each
    needs (`tags`: versions for changes, namespaces and keys for items), the
    unit vectors, one per row of `matrix`, and their lengths (`norms`)."""

    last_row: int
    rows: np.ndarray
    tags: tuple[np.ndarray, ...]
    matrix: np.ndarray
    norms: np.ndarray
    mark: ProjectionState | None = None  # the collection's mark when topped up
    early: frozenset[str] = frozenset()  # ids kept of rows above `last_row`

    def emptied(self) -> _Kept:
        """Nothing kept, with tags of the same types."""
        return _Kept.empty(*(tag.dtype.type for tag in self.tags))

    @staticmethod
    def empty(*tags: type) -> _Kept:
        """Nothing kept yet, with tags of these types (`int`, `str`)."""
        return _Kept(
            0,
            np.zeros(0, dtype=np.int64),
            tuple(np.zeros(0, dtype=kind) for kind in tags),
            np.zeros((0, 0), dtype=np.float32),
            np.zeros(0, dtype=np.float32),
        )

    def extend(
        self, rows: Sequence[int], tags: Sequence[Sequence[Any]], vectors: Any
    ) -> _Kept:
        added, norms = unit_rows(vectors)
        matrix = np.vstack([self.matrix, added]) if len(self.rows) else added
        return _Kept(
            max(self.last_row, *rows),
            np.concatenate([self.rows, np.asarray(rows, dtype=np.int64)]),
            tuple(
                np.concatenate([kept, np.asarray(new, dtype=kept.dtype.type)])
                for kept, new in zip(self.tags, tags, strict=True)
            ),
            matrix,
            np.concatenate([self.norms, norms]),
        )


class KeptVectors:
    """The in-memory copies of a log's collections, and the searches over them.

    The catch-up tells it how far each collection has followed the log
    (`marks`, `item_cap`): nothing is read from Chroma while a collection's
    mark has not moved since the last top-up.

    Args:
        collections: The collections the copies are read from.
        distance: How item scores are given.
    """

    def __init__(self, collections: Collections, distance: Distance) -> None:
        self.collections = collections
        self.distance = distance
        self._lock = threading.Lock()
        self._changes: dict[str, _Kept] = {}  # scope key -> its change vectors
        self._items = _Kept.empty(str, str)  # item vectors: (namespace, key)
        # Each collection's mark as the catch-up last left it.
        self.marks: dict[str, ProjectionState] = {}
        # The last log row of a commit the item collection has applied (see
        # `_top_up`); read by catch-up, as searches read the copy inside a
        # transaction of the log and may not open another. 0 until then.
        self._item_cap = 0
        self._counted: int | None = None  # the item count `counted` was told

    def counted(self, count: int) -> None:
        """The item collection's count, just read: the next item search needs
        no other."""
        self._counted = count

    def cap_items(self, row: int) -> None:
        """The last log row of a commit the item collection has applied."""
        self._item_cap = row

    def drop(
        self,
        *,
        items: bool = False,
        changes: bool = False,
        scope: Namespace | None = None,
    ) -> None:
        """Forget the in-memory copies of vectors (the item copy, every
        scope's change copy, or one scope's): the next search reads them
        from Chroma again."""
        with self._lock:
            if items:
                self._items = _Kept.empty(str, str)
            if changes:
                self._changes.clear()
            if scope is not None:
                self._changes.pop(scope_key(scope), None)

    def drop_all(self) -> None:
        """Forget every copy, and the item cap: nothing is in the collections
        until a catch-up says so (they were made anew)."""
        with self._lock:
            self._item_cap = 0
        self.drop(items=True, changes=True)

    def unmark(self, scope: Namespace) -> None:
        """Have the next search of `scope` read Chroma again: rows were added
        to it without moving the collection's mark."""
        key = scope_key(scope)
        with self._lock:
            if key in self._changes:
                self._changes[key] = replace(self._changes[key], mark=None)

    def nearest_items(
        self, prefix: Namespace, vector: Sequence[float], *, chunk: int = 64
    ) -> Iterator[list[ItemHit]]:
        """Item vectors under `prefix`, nearest first, in chunks: one hit per log
        row (its best field), with the row it was made from.

        Exact: every item vector under the prefix is compared (one matrix product
        over a copy kept in memory and topped up from Chroma), so no approximate
        index can drop a near-duplicate or another user's vector crowd one out.
        Vectors of rows no longer at HEAD may linger in the copy; callers check
        every hit against the log (invariant 2) and read on to the next chunk.
        """
        kept = self._item_vectors()
        if not len(kept.rows):
            return
        namespaces, keys = kept.tags
        order = np.arange(len(kept.rows))
        if prefix:
            text = namespace_text(prefix)
            under = (namespaces == text) | np.char.startswith(namespaces, text + ".")
            order = order[under]
        scores = self._scores(kept, order, vector)
        ranked = np.argsort(-scores, kind="stable")
        seen: set[int] = set()
        hits: list[ItemHit] = []
        for i, score in zip(order[ranked], scores[ranked].tolist(), strict=True):
            row = int(kept.rows[i])
            if row in seen:  # another field of the same row, less near
                continue
            seen.add(row)
            namespace = tuple(str(namespaces[i]).split("."))
            hits.append(ItemHit(namespace, str(keys[i]), row, score))
            if len(hits) == chunk:
                yield hits
                hits = []
        if hits:
            yield hits

    def _scores(
        self, kept: _Kept, order: np.ndarray, vector: Sequence[float]
    ) -> np.ndarray:
        """The `order` vectors' scores against `vector` (`scores`)."""
        return scores(kept.matrix[order], kept.norms[order], vector, self.distance)

    def item_vectors_of(
        self, row_ids: Sequence[int]
    ) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
        """The item vectors kept of these log rows, topped up first, HEAD or
        not (a row's vectors are made from its value alone): their rows,
        unit vectors and lengths, one per embedded field."""
        kept = self._item_vectors()
        held = np.isin(kept.rows, np.asarray(row_ids, dtype=np.int64))
        return kept.rows[held], kept.matrix[held], kept.norms[held]

    def query_changes(
        self, scope: Namespace, vector: Sequence[float], *, n: int
    ) -> list[ChangeHit]:
        """The `n` item changes of `scope` whose new values are nearest, best first.

        Exact: every vector of the scope is compared (one matrix product over a
        copy kept in memory and topped up from Chroma), so no approximate index
        can drop a near-duplicate, and no other scope's vectors are looked at.
        """
        kept = self.scope_vectors(scope)
        if not len(kept.rows) or n <= 0:
            return []
        scores = kept.matrix @ unit(vector)
        best = np.argsort(-scores, kind="stable")[:n]
        return [
            ChangeHit(int(kept.rows[i]), int(kept.tags[0][i]), float(scores[i]))
            for i in best
        ]

    def change_vectors(
        self, scope: Namespace, row_ids: Sequence[int]
    ) -> dict[int, np.ndarray]:
        """The unit vectors of these log rows of `scope` (rows without a value
        have none)."""
        kept = self.scope_vectors(scope)
        found = np.nonzero(np.isin(kept.rows, np.asarray(row_ids, dtype=np.int64)))
        return {int(kept.rows[i]): kept.matrix[i] for i in found[0]}

    def scope_rows(self, scope: Namespace) -> set[int]:
        """The log rows of `scope`'s change vectors, topped up."""
        return set(self.scope_vectors(scope).rows.tolist())

    def scope_vectors(self, scope: Namespace) -> _Kept:
        """The scope's change vectors, topped up with the rows added since."""
        key = scope_key(scope)
        changes = self.collections.changes
        with self._lock:
            kept = self._top_up(
                changes,
                self._changes.get(key) or _Kept.empty(int),
                self.marks.get(changes.name),
                {"scope": key},
                lambda meta: (meta["version"],),
            )
            self._changes[key] = kept
            return kept

    def _item_vectors(self) -> _Kept:
        """Every item vector, topped up with the rows added since."""
        items = self.collections.items
        if items is None:
            return _Kept.empty(str, str)
        with self._lock:
            kept = self._items
            count, self._counted = self._counted, None
            if count is None:
                count = self.collections.call(items.count)
            if len(kept.rows) > 2 * count + 1000:
                kept = _Kept.empty(str, str)  # mostly rows no longer at HEAD: read anew
            self._items = self._top_up(
                items,
                kept,
                self.marks.get(items.name),
                None,
                lambda meta: (meta["ns"], meta["key"]),
                cap=self._item_cap,
            )
            return self._items

    def _top_up(
        self,
        collection: Any,
        kept: _Kept,
        mark: ProjectionState | None,
        where: dict[str, Any] | None,
        tags: Callable[[Mapping[str, Any]], tuple[Any, ...]],
        *,
        cap: int | None = None,
    ) -> _Kept:
        """`kept` with the collection's vectors of rows after its last one.

        Catch-up adds a batch's rows in row order, so "rows after the last one
        kept" is what is new, even read while a catch-up is adding more; nothing
        is new while the collection's mark has not moved since the last top-up;
        a projection made again from older rows, or a scope of it (by any
        store: the mark's `remade` moved), empties what was kept first.

        `cap` (the item collection's): a catch-up writes each changed item's
        HEAD row, which may belong to a commit after its batch, so a row of the
        next batch can land below one already read. The rows up to `cap` (the
        last row of a commit the collection had applied when it was read) are
        all there; those above it are read again next time (`early` keeps
        them from being kept twice).
        """
        if mark is not None and kept.mark == mark:
            return kept
        if mark and kept.mark and kept.mark.remade != mark.remade:
            kept = kept.emptied()  # a scope was made again since (another store's)
        newer: dict[str, Any] = {"row": {"$gt": kept.last_row}}
        condition = {"$and": [where, newer]} if where else newer
        found = self.collections.read_all(collection, condition)
        fresh = [i for i, id_ in enumerate(found["ids"]) if id_ not in kept.early]
        if fresh:
            metas = [found["metadatas"][i] for i in fresh]
            kept = kept.extend(
                [m["row"] for m in metas],
                list(zip(*(tags(m) for m in metas), strict=True)),
                [found["embeddings"][i] for i in fresh],
            )
        if cap is not None:  # what was read above `cap` is read again next time
            rows = zip(found["ids"], found["metadatas"], strict=True)
            kept = replace(
                kept,
                last_row=min(kept.last_row, cap),
                early=frozenset(id_ for id_, meta in rows if meta["row"] > cap),
            )
        return replace(kept, mark=mark)
