"""Semantic `search(prefix, query=...)` over HEAD items, checked against the log.

Chroma proposes items by vector; the log decides. A hit counts only if the log's
HEAD row for that item is the very row the vector was made from, and the item
passes the search's filter — so a lagging or half-synced collection can make a
search slower, never return a value that is not at HEAD (DESIGN.md, invariant 2).
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

from langgraph_chronomem.engine.base import LogTransaction
from langgraph_chronomem.engine.types import Namespace, StoredItem
from langgraph_chronomem.search.vectors import VectorIndex

__all__ = ["search_by_meaning"]


def search_by_meaning(
    tx: LogTransaction,
    index: VectorIndex,
    prefix: Namespace,
    vector: Sequence[float],
    *,
    filter: Mapping[str, Any] | None,
    limit: int,
    offset: int,
) -> list[tuple[StoredItem, float]]:
    """HEAD items under `prefix` nearest to `vector`: (item, similarity), best first.

    Asks Chroma for more neighbours than needed and widens the ask until enough
    of them survive the log's check, or the collection has no more.
    """
    wanted = offset + limit
    ask = max(3 * wanted, 10)
    while True:
        hits = {
            (h.namespace, h.key): h for h in index.query_items(prefix, vector, n=ask)
        }
        rows = (
            tx.search(prefix, filter=filter, limit=len(hits), among=list(hits))
            if hits
            else []
        )
        fresh = [
            (row, hits[row.namespace, row.key].score)
            for row in rows
            if hits[row.namespace, row.key].row_id == row.row_id
        ]
        if len(fresh) >= wanted or ask >= index.item_count():
            fresh.sort(key=lambda pair: -pair[1])
            return fresh[offset:wanted]
        ask *= 4
