"""Erased values out of the vector collections, at the cost of what was erased.

`redact` and `compact` erase values from log rows and list, in the log, what
the collections must do about it (`ERASURES`): delete the vectors of the erased
rows, and embed again the few rows whose change text read an erased value (the
change after an erased one, a commit whose reason was redacted). Nothing else
is embedded again. Each entry is recorded with a rebuild of its scope, asked in
the same transaction: applying the entry strikes that request, and a crash
before it leaves the rebuild to do, as after a `reset`.

The collections' locks are held from before the log is erased until the entry
is applied (`held`), so this store's own catch-up never takes the rebuild
request first and makes the whole scope again.
"""

from __future__ import annotations

import contextlib
import json
from collections.abc import Iterator, Sequence
from typing import Any

from langgraph_chronomem.engine.feed import ProjectionFeed
from langgraph_chronomem.engine.forgetting import ERASURES
from langgraph_chronomem.engine.rows import chunks
from langgraph_chronomem.search.vectors import VectorIndex

__all__ = ["apply_erasures", "held"]


@contextlib.contextmanager
def held(vectors: VectorIndex | None) -> Iterator[None]:
    """Hold every collection's lock (none without `vectors`): no catch-up of
    this store reads a rebuild request meanwhile."""
    if vectors is None:
        yield
        return
    with vectors.collections.holding():
        yield


def apply_erasures(vectors: VectorIndex) -> int:
    """Apply every erasure the log lists, to each collection whose rebuild
    request for it still stands (one made anew since has none: it was made
    from the log as erased), then strike the requests and the entries. The
    caller holds the collections' locks (`held`). Returns how many
    entries were applied."""
    engine = vectors.engine
    with engine.transaction(write=False) as tx:
        pending = json.loads(tx.meta(ERASURES) or "[]")
    if not pending:
        return 0
    for erasure in pending:
        scope = tuple(erasure["scope"])
        for collection in vectors.collections.all():
            name = collection.name
            ticket = erasure["tickets"].get(name)
            with engine.transaction(write=False) as tx:
                standing = ticket in ProjectionFeed(tx).state(name).tickets(scope)
            if not standing:
                continue
            if collection is vectors.changes:
                _erase_changes(vectors, erasure["erased"], erasure["changed"])
            else:
                _erase_items(vectors, collection, erasure["erased"])
            with engine.transaction(write=True) as tx:
                ProjectionFeed(tx).rebuilt(name, scope, [ticket])
        vectors.kept.drop(items=True, scope=scope)
    done = {json.dumps(e["tickets"], sort_keys=True) for e in pending}
    with engine.transaction(write=True) as tx:
        tx.hold_change_index()  # as a redaction does before it adds an entry
        left = [
            e
            for e in json.loads(tx.meta(ERASURES) or "[]")
            if json.dumps(e["tickets"], sort_keys=True) not in done
        ]
        tx.set_meta(ERASURES, json.dumps(left))
    return len(pending)


def _erase_changes(
    vectors: VectorIndex, erased: Sequence[int], changed: Sequence[int]
) -> None:
    """Delete the change vectors of the erased rows, and make those of the
    changed rows again from the log as it is now (a row left with no words
    loses its vector)."""
    with vectors.engine.transaction(write=False) as tx:
        rows = tx.change_rows_of(changed)
    worded = [row for row in rows if row.text.new]
    gone = [*erased, *(row.row_id for row in rows if not row.text.new)]
    vectors.collections.delete(vectors.changes, [str(row_id) for row_id in gone])
    vectors.projector.add_changes(worded)


def _erase_items(vectors: VectorIndex, items: Any, erased: Sequence[int]) -> None:
    """Delete the item vectors of the erased rows (a redacted HEAD: the
    `redact` commit deleted the item; an older row's vector lingering after
    a crash), found by the row their metadata names."""
    collections = vectors.collections
    for chunk in chunks(list(erased)):
        collections.delete(items, collections.ids_of_rows(items, chunk))
