"""A vector whose row was replaced does not stay in Chroma for good.

A crash between a commit and the Chroma delete of its catch-up (kill -9 on
PostgreSQL and a Chroma server left 2 such vectors of 80) leaves the vector of
a row no longer at HEAD. Searches filter it out (every hit is checked against
HEAD), but only the next catch-up after an open takes it away.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

from langgraph_chronomem import ChronoStore
from tests.test_exact_search import assert_exact
from testsupport.hashed import INDEX

ALICE = ("memories", "alice")


def _items(store: ChronoStore) -> Any:
    """The store's item collection, in its embedded Chroma."""
    items = store._search.vectors().items
    assert items is not None
    return items


def _rows(store: ChronoStore) -> set[int]:
    return {meta["row"] for meta in _items(store).get()["metadatas"]}


def test_the_catch_up_after_an_open_deletes_a_vector_of_a_replaced_row(
    tmp_path: Path,
) -> None:
    open_ = dict(scope_depth=2, index=INDEX)
    with ChronoStore.from_path(tmp_path, **open_) as store:  # type: ignore[arg-type]
        store.put(ALICE, "a", {"text": "w1 w2"})
        store.put(ALICE, "b", {"text": "w5"})
        store.wait_for_index()
        replaced = _items(store).get(
            where={"key": "a"}, include=["embeddings", "metadatas"]
        )
        store.put(ALICE, "a", {"text": "w3"})
        store.wait_for_index()
        at_head = _rows(store)
        # What the crash leaves: the replaced row's vector, back in Chroma.
        _items(store).add(
            ids=replaced["ids"],
            embeddings=replaced["embeddings"],
            metadatas=replaced["metadatas"],
        )
        assert _rows(store) == at_head | {replaced["metadatas"][0]["row"]}
    with ChronoStore.from_path(tmp_path, **open_) as store:  # type: ignore[arg-type]
        found = store.search(ALICE, query="w1 w2")
        assert [item.value for item in found][:1] != [{"text": "w1 w2"}]
        assert _rows(store) == at_head, "the stale vector is gone"
        assert_exact(store, ALICE, "w3")
        assert_exact(store, ALICE, "w5")
