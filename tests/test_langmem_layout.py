"""Memory as LangMem's background memory manager stores it.

`create_memory_store_manager` writes `{"kind": "Memory", "content": {"content":
"User ..."}}` under UUID keys (`manage_memory` writes the inner dict alone). The
undo search, the summaries people read and the tools' candidates see the
memory's words, never the envelope. Real store, real Chroma, the provisioned
all-MiniLM-L6-v2.
"""

from __future__ import annotations

import sqlite3
import uuid
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import chromadb
import pytest
from chromadb.config import Settings

from langgraph_chronomem import ChronoStore
from langgraph_chronomem.models import DEFAULT_EMBEDDER
from langgraph_chronomem.search.vectors import (
    CHANGES,
    collection_name,
    collection_names,
    log_name,
)
from langgraph_chronomem.store import DATABASE_FILE
from langgraph_chronomem.tools import create_memory_history_tool

ALICE = ("memories", "alice")


def key(name: str) -> str:
    return str(uuid.uuid5(uuid.NAMESPACE_URL, name))


def memory(text: str) -> dict[str, Any]:
    return {"kind": "Memory", "content": {"content": text}}


def write(store: ChronoStore) -> None:
    store.put(ALICE, key("home"), memory("User lives in Boston near Davis Square"))
    store.put(ALICE, key("pet"), memory("User has an orange tabby cat named Miso"))
    store.put(ALICE, key("home"), memory("User moved to New York City for a new job"))
    store.put(ALICE, key("trip"), memory("User is planning a trip to Osaka in April"))


@pytest.fixture
def store(tmp_path: Path) -> Iterator[ChronoStore]:
    with ChronoStore.from_path(tmp_path, scope_depth=2) as opened:
        write(opened)
        yield opened


def test_summaries_read_the_memory_not_the_envelope(store: ChronoStore) -> None:
    assert store.show(ALICE, 3).summary == (
        f"updated memories/alice/{key('home')}: User lives in Boston near Davis "
        "Square -> User moved to New York City for a new job"
    )
    assert store.show(ALICE, 4).summary == (
        f"created memories/alice/{key('trip')}: User is planning a trip to Osaka "
        "in April"
    )
    history = create_memory_history_tool(("memories", "{user_id}"), store=store)
    listed = history.invoke({"query": "Osaka"}, {"configurable": {"user_id": "alice"}})
    assert "User is planning a trip to Osaka" in listed
    assert '"kind"' not in listed and "Memory" not in listed


def test_undo_by_words_finds_the_change_and_restores_the_envelope(
    store: ChronoStore,
) -> None:
    resolution = store.resolve(ALICE, "forget that I moved to New York")
    best = resolution.best
    assert best is not None and best.id == "3.1"
    assert best.scores.bm25_rank == 1 and best.scores.dense_rank == 1
    result = store.undo(ALICE, "forget that I moved to New York")
    assert result.applied, result.message
    home = store.get(ALICE, key("home"))
    assert home is not None
    assert home.value == memory("User lives in Boston near Davis Square")


def test_a_word_index_from_an_earlier_text_is_made_again(tmp_path: Path) -> None:
    """A store whose word index an earlier version derived (here: emptied, its
    mark at the last commit, the setting saying text 1) is indexed anew on the
    next undo search, not left to miss every change it holds."""
    with ChronoStore.from_path(tmp_path, scope_depth=2) as store:
        write(store)
        assert store.resolve(ALICE, "forget the Osaka trip").best is not None
    with sqlite3.connect(tmp_path / DATABASE_FILE) as db:
        db.execute("DELETE FROM changes")
        db.execute("UPDATE chronomem_meta SET value = '1' WHERE name = 'change_text'")
        assert db.total_changes > 1
    with ChronoStore.from_path(tmp_path, scope_depth=2) as store:
        best = store.resolve(ALICE, "forget the Osaka trip").best
        assert best is not None and best.id == "4.1"
        assert best.scores.bm25_rank == 1


def test_change_vectors_from_an_earlier_text_are_dropped(tmp_path: Path) -> None:
    """The change vectors an earlier version embedded (its collection and its
    mark) go when the store opens; the current text's collection is made."""
    with ChronoStore.from_path(tmp_path, scope_depth=2) as store:
        write(store)
    older = collection_name(CHANGES, DEFAULT_EMBEDDER)  # text 1: unnumbered
    client = chromadb.PersistentClient(
        path=str(tmp_path / "chroma"), settings=Settings(anonymized_telemetry=False)
    )
    client.create_collection(older, embedding_function=None)
    del client
    with sqlite3.connect(tmp_path / DATABASE_FILE) as db:
        db.execute(
            "INSERT INTO projections (name, seq, rebuild) VALUES (?, 4, '[]')", (older,)
        )
    with ChronoStore.from_path(tmp_path, scope_depth=2) as store:
        best = store.resolve(ALICE, "forget the Osaka trip").best
        marks = {p.name for p in store.stats().projections}
        _, current = collection_names(DEFAULT_EMBEDDER, None, log_name(store._engine))
    assert older not in marks
    client = chromadb.PersistentClient(
        path=str(tmp_path / "chroma"), settings=Settings(anonymized_telemetry=False)
    )
    assert older not in {c.name for c in client.list_collections()}
    assert current in marks
    assert best is not None and best.scores.dense_rank == 1
