"""Semantic `search(prefix, query=...)` over HEAD items, checked against the log.

The vector side proposes items nearest first, exactly (every vector under the
prefix is compared); the log decides. A hit counts only if the log's HEAD row for
that item is the very row the vector was made from, and the item passes the
search's filter — so a lagging or half-synced collection can make a search slower,
never return a value that is not at HEAD (DESIGN.md, invariant 2).
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

from langgraph_chronomem.engine.base import LogTransaction
from langgraph_chronomem.engine.types import StoredItem
from langgraph_chronomem.search.vectors import ItemHit, VectorIndex

__all__ = ["search_by_meaning"]


def search_by_meaning(
    tx: LogTransaction,
    index: VectorIndex,
    prefix: tuple[str, ...],
    vector: Sequence[float],
    *,
    filter: Mapping[str, Any] | None,
    limit: int,
    offset: int,
) -> list[tuple[StoredItem, float]]:
    """HEAD items under `prefix` nearest to `vector`: (item, similarity), best
    first, equal scores in the order of the rows that hold them (as
    `search_as_of` orders a past state's).

    Reads the nearest vectors a chunk at a time and keeps those the log confirms,
    until `offset + limit` are found and no vector left can tie the last of
    them, or no vector is left: the same items, in the same order, as
    comparing every HEAD item's vector would give.
    """
    wanted = offset + limit
    found: list[tuple[StoredItem, float]] = []
    for hits in index.nearest_items(prefix, vector, chunk=max(2 * wanted, 16)):
        by_item: dict[tuple[tuple[str, ...], str], list[ItemHit]] = {}
        for hit in hits:  # a stale row and the item's HEAD row may share a chunk
            by_item.setdefault((hit.namespace, hit.key), []).append(hit)
        rows = tx.search(prefix, filter=filter, limit=len(by_item), among=list(by_item))
        for row in rows:
            for hit in by_item[row.namespace, row.key]:
                if hit.row_id == row.row_id:
                    found.append((row, hit.score))
        if len(found) >= wanted and hits[-1].score < _nth_best(found, wanted):
            break
    found.sort(key=lambda pair: (-pair[1], pair[0].row_id))
    return found[offset:wanted]


def _nth_best(found: list[tuple[StoredItem, float]], n: int) -> float:
    return sorted((score for _, score in found), reverse=True)[n - 1]
