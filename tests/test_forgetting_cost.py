"""Forgetting costs what it erases (issue 33, item 3).

`redact` of one version and `compact` used to embed every change of the whole
store again (every user's), and rewrite every file: 9.6 s at 1,000 commits,
about 95 s at 10,000. Now the vectors of the erased versions go, the few
changes whose words read an erased value are embedded again, and every other
vector stays as it was, while no byte of the erased text is left in any file
(`test_redact.py`, `test_compact.py`).
"""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path
from typing import Any

import numpy as np
import pytest
from langchain_core.embeddings import Embeddings

from langgraph_chronomem import ChronoStore

ALICE = ("memories", "alice")
BOB = ("memories", "bob")
SECRET = "Zorbanite syndrome"


class Counted(Embeddings):
    """The store's own model, counting the texts it is asked to embed."""

    def __init__(self, inner: Embeddings) -> None:
        self.inner = inner
        self.texts: list[str] = []

    def embed_documents(self, texts: list[str]) -> list[list[float]]:
        self.texts += texts
        return self.inner.embed_documents(texts)

    def embed_query(self, text: str) -> list[float]:
        return self.embed_documents([text])[0]


@pytest.fixture
def store(tmp_path: Path) -> Iterator[ChronoStore]:
    """A default store (no `index=`) asked to undo once: every change has
    its vector. Alice updated her notes many times, the secret once, in the
    middle; Bob has memories of his own."""
    with ChronoStore.from_path(tmp_path, scope_depth=2) as opened:
        for n in range(30):
            note = {"text": f"note {n} on the garden", "topic": "garden"}
            opened.put(ALICE, f"note-{n % 5}", note)
            if n == 12:
                sick = {"text": f"diagnosed with {SECRET}", "mood": "low"}
                opened.put(ALICE, "health", sick)
                opened.put(ALICE, "health", {"text": "feeling fine", "mood": "low"})
        for n in range(10):
            opened.put(BOB, f"trip-{n}", {"text": f"trip {n} to the coast"})
        opened.resolve(ALICE, "undo the note on the garden")
        opened.resolve(BOB, "undo the trip to the coast")
        assert opened.wait_for_index(timeout=60)
        yield opened


def vectors_of(store: ChronoStore) -> dict[str, Any]:
    """Every change vector in Chroma, by id (the log row it was made from)."""
    found = store._search.vectors().changes.get(include=["embeddings"])
    embeddings = [np.asarray(e) for e in found["embeddings"]]
    return dict(zip(found["ids"], embeddings, strict=True))


def count_embeddings(store: ChronoStore) -> Counted:
    vectors = store._search.vectors()
    counted = Counted(vectors.embeddings)
    vectors.cache.embeddings = counted
    return counted


def row_of(store: ChronoStore, key: str, version: int) -> str:
    """The id of the log row (and of its change vector) of `key` at `version`."""
    with store._engine.transaction(write=False) as tx:
        (row,) = tx.row_ids_of(ALICE, version)
    assert store.show(ALICE, version).changes[0].key == key
    return str(row)


def test_redacting_one_version_embeds_only_the_change_that_read_it(
    store: ChronoStore,
) -> None:
    before = vectors_of(store)
    secret = next(v.version for v in store.history(ALICE, "health")[1:])
    erased, after_it = (
        row_of(store, "health", secret),
        row_of(store, "health", secret + 1),
    )
    counted = count_embeddings(store)

    done = store.redact(ALICE, contains=SECRET)

    assert [v for _, _, v in done.versions] == [secret] and done.scrubbed
    # One text embedded: the next change of the item, whose words named only
    # the field it changed and now name all, as made from nothing; none of
    # the store's other changes.
    assert counted.texts == ["text feeling fine mood low health"], (
        "it embedded the store again"
    )
    now = vectors_of(store)
    assert erased not in now
    assert not np.allclose(now[after_it], before[after_it])
    # Every other vector is the one made before, Bob's too.
    assert {i: v.tolist() for i, v in now.items() if i != after_it} == {
        i: v.tolist() for i, v in before.items() if i not in (erased, after_it)
    }
    candidates = store.resolve(ALICE, "forget my zorbanite diagnosis").candidates
    assert all(SECRET.lower() not in str(c.changes).lower() for c in candidates)
    assert store.stats().projections[0].rebuild == ()  # no rebuild left to do


def test_compacting_embeds_only_the_versions_kept_after_an_erased_one(
    store: ChronoStore,
) -> None:
    before = vectors_of(store)
    notes = [f"note-{n}" for n in range(5)]
    history = {key: [v.version for v in store.history(ALICE, key)] for key in notes}
    counted = count_embeddings(store)

    done = store.compact(ALICE, keep_last=2)

    # Each note: 6 versions; the first and the last 2 kept, 3 erased.
    erased = {row_of(store, key, version) for _, key, version in done.versions}
    assert len(erased) == 15
    # The first version kept after the erased ones named the one field it
    # changed, and now names all, as made from nothing: embedded again,
    # alone, one per note; nothing of Bob's.
    next_kept = {row_of(store, key, versions[1]) for key, versions in history.items()}
    assert len(counted.texts) == 5
    now = vectors_of(store)
    assert set(now) == set(before) - erased
    changed = {i for i, v in now.items() if not np.allclose(v, before[i])}
    assert changed == next_kept


def test_a_failure_on_the_vector_side_leaves_a_rebuild_of_the_scope(
    store: ChronoStore, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The log is erased in one transaction with a rebuild of the scope
    asked: if its vectors cannot be taken out then (a Chroma server away, a
    crash), the next catch-up makes the scope again without the erased
    values."""
    secret = next(v.version for v in store.history(ALICE, "health")[1:])
    erased = row_of(store, "health", secret)

    def away(vectors: Any) -> int:
        raise ConnectionError("the Chroma server is away")

    with monkeypatch.context() as patched:
        patched.setattr("langgraph_chronomem.search.index.apply_erasures", away)
        done = store.redact(ALICE, contains=SECRET)
    assert not done.scrubbed
    assert erased in vectors_of(store)
    assert store.stats().projections[0].rebuild == (ALICE,)
    store.resolve(ALICE, "undo the note on the garden")  # catches up
    assert store.stats().projections[0].rebuild == ()
    assert erased not in vectors_of(store)


def test_a_file_written_without_secure_delete_keeps_no_copy_either(
    tmp_path: Path,
) -> None:
    """The log's file is cleaned in place, at the cost of its free pages, and
    read for the erased text: where a write made without SQLite's
    `secure_delete` (most builds' default) left a copy in a page's free
    space, it is rewritten after all."""
    with ChronoStore.from_path(tmp_path, scope_depth=2) as store:
        store._engine.conn.execute("PRAGMA secure_delete = OFF")
        long = f"diagnosed with {SECRET}. " * 300  # past a page: overflow pages
        store.put(ALICE, "health", {"text": long})
        store.put(ALICE, "health", {"text": f"{SECRET} cured"})
        store.delete(ALICE, "health")
        for n in range(50):  # rows moved in their pages, some freed
            store.put(ALICE, f"note-{n % 7}", {"text": f"note {n}" * (n % 9)})
        done = store.redact(ALICE, contains="zorbanite")
        assert len(done.versions) == 2 and done.scrubbed
        holding = [
            p
            for p in tmp_path.rglob("*")
            if p.is_file() and b"zorbanite" in p.read_bytes().lower()
        ]
        assert holding == []


def test_redacting_by_text_decodes_only_the_values_that_may_hold_it(
    store: ChronoStore, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Which versions hold the text is read in the database: of Alice's 32
    versions, only the one holding the secret is decoded and searched in
    Python, and no commit's reason but its own is read (both were read
    whole, every version and commit of the scope, 1.3 s at 100k commits)."""
    from langgraph_chronomem.engine import forgetting

    decoded: list[Any] = []
    decode = forgetting.decode_value

    def counted(text: Any) -> Any:
        decoded.append(text)
        return decode(text)

    monkeypatch.setattr(forgetting, "decode_value", counted)
    read: list[str] = []
    store._engine.conn.set_trace_callback(read.append)
    try:
        done = store.redact(ALICE, contains=SECRET.upper(), scrub=False)
    finally:
        store._engine.conn.set_trace_callback(None)
    assert len(done.versions) == 1
    assert len(decoded) == 1 and SECRET in decoded[0]
    texts = [s for s in read if s.startswith("SELECT seq, version, reason, labels")]
    assert texts and all("version IN" in s for s in texts)


@pytest.mark.parametrize(
    ("value", "contains", "found"),
    [
        ({"text": "zorbanite SYNDROME"}, SECRET, True),
        ({"Zorbanite syndrome": 1}, SECRET, True),  # a key
        ({"text": "\uff3aorbanite syndrome"}, SECRET, True),  # fullwidth Z
        ({"text": "ZORBANITE \u017fYNDROME"}, SECRET, True),  # long s
        ({"text": 'said "hi",\nZorbanite syndrome'}, SECRET, True),  # escapes
        ({"text": "Zorbanite\u0009syndrome"}, SECRET, False),  # a tab
        ({"text": ["Zorbanite", "syndrome"]}, SECRET, False),  # two strings
        ({"text": "Zorbanite  syndrome"}, SECRET, False),
        ({"text": "Stra\u00dfe 9"}, "STRASSE", True),  # ß folds to ss
        ({"flag": True}, "TRUE", True),
        ({"n": 1e16}, "1e+16", True),  # as Python writes it, not JSON (1e16)
        ({"text": 'he said "hi"'}, 'said "hi"', True),
        ({"text": "a\nb"}, "a\nb", True),
        ({"text": ["a", "b"]}, "a\nb", True),  # as `contains` always read it
    ],
)
def test_redacting_by_text_finds_it_in_every_form_a_value_holds_it(
    tmp_path: Path, value: dict[str, Any], contains: str, found: bool
) -> None:
    """The database picks out the values whose JSON may hold the text; the
    others are read whole. Either way a redaction finds what it always
    found: the text in any case or Unicode form, in a key, beside escaped
    characters, inside a number or a boolean as Python writes them."""
    with ChronoStore.from_path(tmp_path, scope_depth=2) as store:
        store.put(ALICE, "other", {"text": "nothing to see"})
        store.put(ALICE, "it", value)
        done = store.redact(ALICE, contains=contains, scrub=False)
    assert [k for _, k, _ in done.versions] == (["it"] if found else [])


def test_redacting_by_text_finds_it_behind_a_json_escape(tmp_path: Path) -> None:
    """A value whose JSON spells a character as an escape (`\\uff3a`, as a
    writer with ASCII-only output leaves it) holds what the escape stands
    for: it is read whole, and the text found."""
    with ChronoStore.from_path(tmp_path, scope_depth=2) as store:
        store.put(ALICE, "it", {"text": "placeholder"})
        store._engine.conn.execute(
            "UPDATE items SET value = ? WHERE key = 'it'",
            ('{"text": "\\uff3aorbanite syndrome"}',),
        )
        assert store.get(ALICE, "it").value == {"text": "\uff3aorbanite syndrome"}
        done = store.redact(ALICE, contains=SECRET, scrub=False)
    assert [k for _, k, _ in done.versions] == ["it"]


def test_a_scrub_leaves_the_vector_files_it_cleaned_before_as_they_are(
    store: ChronoStore,
) -> None:
    """Chroma's vector arrays are cleaned at the cost of what was deleted
    since: a deleted vector zeroed by an earlier scrub is not written again
    (every one was, on every scrub)."""
    done = store.redact(ALICE, contains=SECRET)
    assert done.scrubbed
    arrays = sorted((store._search.directory / "chroma").glob("*/data_level0.bin"))
    assert arrays
    before = [(p.stat().st_mtime_ns, p.read_bytes()) for p in arrays]
    assert store._search.scrub()
    assert [(p.stat().st_mtime_ns, p.read_bytes()) for p in arrays] == before


def test_zeroing_many_spans_syncs_the_file_once(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """A compaction deletes thousands of vectors: their bytes are zeroed and
    the file synced once (a durable write each took 29 s for 70,000), while
    the one vector of a redaction is synced alone, not with the whole file."""
    import os

    from langgraph_chronomem.engine import scrub

    path = tmp_path / "vectors.bin"
    path.write_bytes(b"\x01" * 64_000)
    synced: list[str] = []
    pwritev, fsync = os.pwritev, os.fsync

    def alone(fd: int, buffers: Any, offset: int, flags: int = 0) -> int:
        synced.append("write")
        return pwritev(fd, buffers, offset, flags)

    def whole(fd: int) -> None:
        synced.append("file")
        fsync(fd)

    monkeypatch.setattr(scrub.os, "pwritev", alone)
    monkeypatch.setattr(scrub.os, "fsync", whole)
    scrub.zero_spans(path, [(n * 64, 32) for n in range(1000)])
    assert synced == ["file"]
    assert path.read_bytes() == (bytes(32) + b"\x01" * 32) * 1000
    synced.clear()
    scrub.zero_spans(path, [(32, 32)])
    assert synced == (["write"] if hasattr(os, "RWF_DSYNC") else ["file"])
    assert path.read_bytes()[:64] == bytes(64)


def test_vectors_are_deleted_in_batches_as_large_as_chroma_takes(
    store: ChronoStore,
) -> None:
    """A compaction that erases most of a store deletes tens of thousands of
    vectors: in calls of Chroma's largest batch, not of 500 (5,000 took 1.3 s
    in calls of 500, 0.86 s in one)."""
    vectors = store._search.vectors()
    collection = vectors.changes
    dim = len(vectors.embed(["x"])[0])
    ids = [f"extra-{n}" for n in range(1200)]
    collection.add(ids=ids, embeddings=np.ones((len(ids), dim)).tolist())
    calls: list[int] = []
    delete = collection.delete

    def counted(ids: list[str]) -> None:
        calls.append(len(ids))
        delete(ids=ids)

    collection.delete = counted  # type: ignore[method-assign]
    vectors.collections.delete(collection, ids)
    assert calls == [1200]
    assert collection.get(ids=ids, include=[])["ids"] == []
