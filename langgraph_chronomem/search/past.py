"""Search by meaning of a scope as it was at a past version
(`store.as_of(scope, v).search(prefix, query=...)`) or as a branch holds it
(`store.on_branch(scope, name).search(...)`), ranked exactly as the live
store ranks the same state: the same fields embedded with the same
model, the same distance, every item's score its best field's.

Nothing is copied into Chroma. The items of the scope at `v` under the prefix
that pass the filter are read from the log (O(items at `v`)); a row the item
collection holds a vector of (HEAD's row of an item unchanged since `v`) is
scored with that vector, from the in-memory copy; the texts of the other rows
are embedded with the store's model, outside the log's transaction, and kept
by text (`PastVectors`), so the next search embeds none of them again. The
change collection's vectors are never used: they are of a change's words in
their context (`embedding.change_text`), not of an item's fields, and would
score otherwise.

    >>> import tempfile
    >>> from langgraph_chronomem import ChronoStore
    >>> def embed(ts):  # a toy model: which of three words a text holds
    ...     return [[float(w in t) for w in ("teacher", "nurse", "Paris")] for t in ts]
    >>> index = {"dims": 3, "embed": embed, "fields": ["text"]}
    >>> store = ChronoStore.from_path(tempfile.mkdtemp(), scope_depth=1, index=index)
    >>> store.put(("alice",), "job", {"text": "a teacher"})
    >>> store.put(("alice",), "job", {"text": "a nurse"})
    >>> store.put(("alice",), "home", {"text": "Paris"})
    >>> past = store.as_of(("alice",), 1)
    >>> [i.value for i in past.search(("alice",), query="teacher")]
    [{'text': 'a teacher'}]
    >>> store.close()
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

import numpy as np

from langgraph_chronomem.engine.base import LogTransaction
from langgraph_chronomem.engine.feed import ProjectionFeed
from langgraph_chronomem.engine.sql import BranchAt
from langgraph_chronomem.engine.types import Namespace, StoredItem
from langgraph_chronomem.search.embedding import ItemTexts, Recent
from langgraph_chronomem.search.exact import KeptVectors, scores, unit_rows

__all__ = ["PAST_MOST", "NotEmbedded", "PastVectors", "search_as_of"]

PAST_MOST = 20_000  # texts (about 30 MB at 384 dimensions) and rows `PastVectors` keeps
# Every item: SQL's LIMIT takes a number, in both dialects' range.
_EVERY = 2**62


class NotEmbedded(Exception):
    """Raised inside the log's transaction when rows of the past state have
    texts with no vector yet: the caller embeds `texts` outside it (the model
    never runs while the log is held) and reads again."""

    def __init__(self, texts: Sequence[str]) -> None:
        super().__init__(f"{len(texts)} texts to embed")
        self.texts = list(texts)


class PastVectors:
    """What searches of past states keep, at most `most` of each: vectors
    of item texts embedded for them, by text, and the texts of past rows, by
    row (a row visible at a version never changes its value; an erased one
    is visible no more).

        >>> past = PastVectors(most=1)
        >>> past.keep({"Paris": [1.0, 0.0]})
        >>> past.keep({"Rome": [0.0, 1.0]})
        >>> past.vectors.get("Paris") is None, past.vectors.get("Rome").tolist()
        (True, [0.0, 1.0])

    Args:
        most: How many texts, and how many rows, it keeps.
    """

    def __init__(self, most: int = PAST_MOST) -> None:
        self.vectors: Recent[str, np.ndarray] = Recent(most)  # float32
        self.texts: Recent[int, tuple[str, ...]] = Recent(most)

    def keep(self, vectors: Mapping[str, list[float]]) -> None:
        """Keep these texts' vectors (as float32, as searches score them)."""
        self.vectors.keep(
            {text: np.asarray(v, dtype=np.float32) for text, v in vectors.items()}
        )


def search_as_of(
    tx: LogTransaction,
    kept: KeptVectors,
    item_texts: ItemTexts,
    past: PastVectors,
    embedded: Mapping[str, list[float]],
    *,
    scope: Namespace,
    version: int | None,
    prefix: Namespace,
    branch: BranchAt | None = None,
    vector: Sequence[float],
    filter: Mapping[str, Any] | None,
    limit: int,
    offset: int,
) -> list[tuple[StoredItem, float]]:
    """Items of `scope` at `version` (of `branch`, if given) under `prefix`
    nearest to `vector`:
    (item, score), best first, equal scores in the order of the rows that
    hold them (the live store's order for a state written in that order).

    `kept` gives the vectors the item collection holds, `embedded` and
    `past` those of other texts.

    Raises:
        NotEmbedded: If a text of the state has no vector in either.
    """
    items = tx.search(
        prefix,
        filter=filter,
        limit=_EVERY,
        offset=0,
        scope=scope,
        version=version,
        branch=branch,
    )
    by_row = {item.row_id: item for item in items}
    rows, matrix, norms = kept.item_vectors_of(list(by_row))
    held = set(rows.tolist())
    lacking = [row for row in by_row if row not in held]
    if lacking:
        pairs = _texts(tx, item_texts, past, {row: by_row[row] for row in lacking})
        vectors = _vectors([text for _, text in pairs], embedded, past)
        if pairs:
            added, added_norms = unit_rows(vectors)
            rows = np.concatenate([rows, [row for row, _ in pairs]])
            matrix = np.vstack([matrix, added]) if len(matrix) else added
            norms = np.concatenate([norms, added_norms])
    if not len(rows):
        return []
    best: dict[int, float] = {}
    for row, score in zip(
        rows.tolist(),
        scores(matrix, norms, vector, kept.distance).tolist(),
        strict=True,
    ):
        if row not in best or score > best[row]:
            best[row] = score
    ranked = sorted(best.items(), key=lambda pair: (-pair[1], pair[0]))
    return [(by_row[row], score) for row, score in ranked[offset : offset + limit]]


def _texts(
    tx: LogTransaction,
    item_texts: ItemTexts,
    past: PastVectors,
    items: Mapping[int, StoredItem],
) -> list[tuple[int, str]]:
    """(row, text) for each text these rows embed: the fields their puts'
    `index` argument names, else the store's."""
    known = {row: past.texts.get(row) for row in items}
    unknown = [row for row, texts in known.items() if texts is None]
    if unknown:
        index = ProjectionFeed(tx).index_of(unknown)
        found = {
            row: tuple(text for _, text in item_texts(items[row].value, index.get(row)))
            for row in unknown
        }
        past.texts.keep(found)
        known.update(found)
    return [(row, text) for row, texts in known.items() for text in texts or ()]


def _vectors(
    texts: Sequence[str], embedded: Mapping[str, list[float]], past: PastVectors
) -> list[Any]:
    found: dict[str, Any] = {}
    for text in texts:
        vector = embedded.get(text)
        found[text] = past.vectors.get(text) if vector is None else vector
    missing = [text for text, vector in found.items() if vector is None]
    if missing:
        raise NotEmbedded(missing)
    return [found[text] for text in texts]
