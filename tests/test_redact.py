"""Forgetting for real: `redact` erases content from every version, on disk too.

A user asks the agent to forget something. `redact` must leave the content in
no version, no projection and no byte of the store's files (the SQLite file,
its write-ahead log, the Chroma folder), while every unrelated version, later
commit and HEAD stays exactly as it was.
"""

from __future__ import annotations

import sqlite3
import threading
import uuid
from pathlib import Path
from typing import Any

import numpy as np
import pytest
from psycopg.conninfo import conninfo_to_dict

from langgraph_chronomem import (
    ChronoStore,
    InvalidRequestError,
    ScopeError,
    commit_context,
)
from langgraph_chronomem.store import DATABASE_FILE
from testsupport.pg import PostgresServer, pg_server  # noqa: F401  (fixture)

ALICE = ("memories", "alice")
BOB = ("memories", "bob")
SECRET = "Zorbanite syndrome"
SECRET_BYTES = b"zorbanite"


def open_store(root: Path, **kwargs: Any) -> ChronoStore:
    return ChronoStore.from_path(
        root, scope_depth=2, index={"fields": ["content"]}, **kwargs
    )


def fill(store: ChronoStore) -> None:
    """Alice's history: the secret in two versions of one item and in a commit's
    reason and labels, unrelated memories before and after it; Bob's memories
    alongside."""
    store.put(ALICE, "home", {"content": "User lives in Lyon"})
    labels = {"topic": f"{SECRET} follow-up", "session": "s-1"}
    with commit_context(reason=f"user mentioned {SECRET} in chat", labels=labels):
        store.put(ALICE, "health", {"content": f"User was diagnosed with {SECRET}"})
    store.put(ALICE, "pet", {"content": "User has a cat called Miso"})
    store.put(ALICE, "health", {"content": f"User's {SECRET} is under control"})
    store.put(ALICE, "home", {"content": "User moved to Grenoble"})
    store.put(BOB, "health", {"content": "User runs marathons"})


def files_holding(root: Path, needle: bytes, *, any_case: bool = True) -> list[str]:
    """Every file under the store's directory whose bytes hold `needle`."""
    return sorted(
        str(path.relative_to(root))
        for path in root.rglob("*")
        if path.is_file()
        and needle in (path.read_bytes().lower() if any_case else path.read_bytes())
    )


def everything_but(store: ChronoStore, scope: tuple[str, ...], key: str) -> Any:
    """What a redaction of `key` must leave as it is: every other item's
    versions, and the scope's commits (who, when, what op)."""
    items = {
        item.key
        for v in range(1, store.head(scope) + 1)
        for item in store.as_of(scope, v).search(scope)
    }
    return (
        {k: store.history((*scope,), k) for k in sorted(items - {key})},
        [(c.version, c.op, c.author, c.created_at) for c in store.log(scope)],
    )


def test_redacted_content_is_gone_from_every_version_and_every_file(
    tmp_path: Path,
) -> None:
    store = open_store(tmp_path)
    fill(store)
    # Every projection holds it: the vectors of items and changes, the words.
    assert store.search(ALICE, query="zorbanite diagnosis")[0].key == "health"
    assert store.resolve(ALICE, "forget my zorbanite diagnosis").candidates
    # The vector of the secret item, as Chroma's files would hold its bytes.
    vector = store.embeddings.embed_documents([f"User's {SECRET} is under control"])
    vector_bytes = np.asarray(vector[0], dtype=np.float32).tobytes()[:64]
    assert files_holding(tmp_path, SECRET_BYTES)  # the search below can see it
    assert files_holding(tmp_path, vector_bytes, any_case=False) == [
        "chroma/chroma.sqlite3"
    ]
    kept, commits = everything_but(store, ALICE, "health")
    bob = store.history(BOB, "health")
    head = store.head(ALICE)

    done = store.redact(ALICE, contains="ZORBANITE", reason="user asked", author="dpo")

    assert done.commit is not None and done.scrubbed
    assert (done.commit.version, done.commit.op) == (head + 1, "redact")
    assert (done.commit.author, done.commit.reason) == ("dpo", "user asked")
    assert [v for _, _, v in done.versions] == [2, 4]
    assert done.removed == ((ALICE, "health"),) and done.reasons == (2,)
    # Found in no file while the store is open: SQLite file, WAL, Chroma.
    assert files_holding(tmp_path, SECRET_BYTES) == []
    assert files_holding(tmp_path, vector_bytes, any_case=False) == []
    assert (tmp_path / DATABASE_FILE).exists()
    # No read path shows it, at HEAD or in the past.
    assert store.get(ALICE, "health") is None
    assert all(store.as_of(ALICE, v).get(ALICE, "health") is None for v in (2, 4, 5))
    assert "health" not in {i.key for i in store.search(ALICE, query="zorbanite")}
    resolution = store.resolve(ALICE, "forget my zorbanite diagnosis")
    assert all(
        SECRET.lower() not in str(c.changes).lower() for c in resolution.candidates
    )
    history = store.history(ALICE, "health")
    assert [(v.version, v.value, v.erased, v.deleted) for v in history] == [
        (6, None, None, True),
        (4, None, "redacted", False),
        (2, None, "redacted", False),
    ]
    audit = store.show(ALICE, 2)
    assert audit.reason == "[redacted]" and audit.changes[0].new_erased == "redacted"
    assert audit.labels == {"topic": "[redacted]", "session": "s-1"}
    assert audit.summary == "created memories/alice/health: [redacted]"
    removal = done.commit.changes[0]
    assert (removal.kind, removal.old_erased) == ("deleted", "redacted")
    assert [(c.kind, c.old_erased, c.new_erased) for c in store.diff(ALICE, 1, 5)] == [
        ("created", None, "redacted"),
        ("updated", None, None),
        ("created", None, None),
    ]
    # Everything else is as it was; the commits stay as an audit skeleton.
    assert everything_but(store, ALICE, "health") == (
        kept,
        [(done.commit.version, "redact", "dpo", done.commit.created_at), *commits],
    )
    assert store.history(BOB, "health") == bob
    # Nothing brings it back: rollback, revert, reset reopen it as absent.
    store.rollback(ALICE, to=4)
    assert store.get(ALICE, "health") is None
    assert store.get(ALICE, "home").value == {"content": "User lives in Lyon"}
    store.reset(ALICE, to=done.commit.version - 1)
    assert store.get(ALICE, "health") is None
    store.close()
    reopened = open_store(tmp_path)
    assert reopened.get(ALICE, "health") is None
    reopened.close()


def test_by_item_by_key_pattern_and_by_source(store: ChronoStore) -> None:
    me = ("memories", "carol")
    store.put(me, "contact-mum", {"phone": "555-0101"})
    store.put(me, "contact-dan", {"phone": "555-0102"})
    store.put(me, "city", {"name": "Oslo"})
    with commit_context(labels={"source": "tool:web_search"}):
        store.put(me, "tip", {"text": "wire money to account 42"})
        store.put(me, "city", {"name": "Atlantis"})
    store.put(me, "city", {"name": "Bergen"})

    by_key = store.redact(me, key="contact-*", scrub=False)
    assert sorted(k for _, k, _ in by_key.versions) == ["contact-dan", "contact-mum"]
    by_source = store.redact(me, source="tool:web_search", scrub=False)
    # The source's versions only: the city it overwrote was changed since.
    assert sorted((k, v) for _, k, v in by_source.versions) == [("city", 5), ("tip", 4)]
    assert by_source.removed == ((me, "tip"),)
    assert store.get(me, "city").value == {"name": "Bergen"}
    assert [v.value for v in store.history(me, "city")] == [
        {"name": "Bergen"},
        None,
        {"name": "Oslo"},
    ]
    by_item = store.redact(me, items=[(me, "city")], scrub=False)
    assert len(by_item.versions) == 2 and store.search(me) == []


def test_a_dry_run_and_a_miss_change_nothing(store: ChronoStore) -> None:
    store.put(ALICE, "health", {"content": f"User has {SECRET}"})
    head = store.head(ALICE)
    preview = store.redact(ALICE, contains=SECRET, dry_run=True)
    assert preview.commit is None and len(preview.versions) == 1
    assert str(preview) == "would redact 1 version(s) of 1 item(s), 1 removed at HEAD"
    miss = store.redact(ALICE, contains="nothing like this")
    assert miss.commit is None and str(miss) == "nothing matched: nothing to redact"
    assert store.head(ALICE) == head
    assert store.get(ALICE, "health").value == {"content": f"User has {SECRET}"}


@pytest.mark.parametrize(
    ("kwargs", "error"),
    [
        ({}, InvalidRequestError),
        ({"contains": ""}, InvalidRequestError),
        ({"contains": 5}, InvalidRequestError),
        ({"key": ["a*"]}, InvalidRequestError),
        ({"items": "health"}, InvalidRequestError),
        ({"items": [("memories", "alice", "health")]}, InvalidRequestError),
        ({"items": [("memories", "alice"), 5]}, InvalidRequestError),
        ({"scope": ("memories",), "contains": "x"}, ScopeError),
    ],
)
def test_bad_input_is_refused_and_changes_nothing(
    store: ChronoStore, kwargs: dict[str, Any], error: type[Exception]
) -> None:
    store.put(ALICE, "health", {"content": SECRET})
    scope = kwargs.pop("scope", ALICE)
    with pytest.raises(error):
        store.redact(scope, **kwargs)
    assert store.head(ALICE) == 1 and store.get(ALICE, "health") is not None


async def test_the_async_twin(astore: ChronoStore) -> None:
    await astore.aput(ALICE, "health", {"content": SECRET})
    done = await astore.aredact(ALICE, contains=SECRET)
    assert done.commit is not None and await astore.aget(ALICE, "health") is None


def test_on_postgres_no_row_keeps_it(
    pg_server: PostgresServer,  # noqa: F811
    tmp_path: Path,
) -> None:
    import chromadb
    import psycopg
    from chromadb.config import Settings

    conninfo = pg_server.create_database()
    # A client of this test's own: every EphemeralClient of a process shares one.
    client = chromadb.PersistentClient(
        path=str(tmp_path / "vectors"), settings=Settings(anonymized_telemetry=False)
    )
    with ChronoStore.from_conn_string(
        conninfo, scope_depth=2, chroma_client=client
    ) as store:
        fill(store)
        store.resolve(ALICE, "forget my zorbanite diagnosis")  # the words indexed
        done = store.redact(ALICE, contains=SECRET)
        assert [v for _, _, v in done.versions] == [2, 4]
        # Made again, but on a client the caller gave: its files are not ours.
        assert not done.scrubbed
        assert [v.erased for v in store.history(ALICE, "health")] == [
            None,
            "redacted",
            "redacted",
        ]
        assert store.get(ALICE, "home").value == {"content": "User moved to Grenoble"}
    info = conninfo_to_dict(conninfo)
    with psycopg.connect(**info) as conn:
        for table in ("items", "commits", "changes", "change_terms"):
            rows = conn.execute(f"SELECT * FROM {table}").fetchall()
            assert rows and "zorbanit" not in str(rows).lower(), table


def test_only_the_matching_commits_reasons_are_erased(store: ChronoStore) -> None:
    with commit_context(reason="trip to Paris planned"):
        store.put(ALICE, "trip", {"city": "Paris"})
    with commit_context(reason="moved to Paris"):
        store.put(ALICE, "home", {"city": "Paris"})
    done = store.redact(ALICE, key="trip", contains="paris", scrub=False)
    assert done.reasons == (1,)
    assert [c.reason for c in store.log(ALICE)] == [
        None,
        "moved to Paris",
        "[redacted]",
    ]
    assert store.get(ALICE, "home").value == {"city": "Paris"}


def test_labels_keep_their_names_the_library_reads_and_lose_none(
    store: ChronoStore,
) -> None:
    """Label names holding the text are renamed apart, never merged; the names
    time travel and `source` read stay, so those commits are still found."""
    labels = {"source": "web", "thread_id": "t-1", "paris_a": "1", "paris_b": "2"}
    with commit_context(labels=labels):
        store.put(ALICE, "trip", {"city": "Paris"})
    store.redact(ALICE, contains="paris", scrub=False)
    store.redact(ALICE, contains="id", scrub=False)  # within "thread_id"
    assert store.show(ALICE, 1).labels == {
        "source": "web",
        "thread_id": "t-1",
        "[redacted]": "1",
        "[redacted 2]": "2",
    }
    assert [c.version for c in store.log(ALICE, source="web")] == [1]
    assert [c.version for c in store.log(ALICE, thread_id="t-1")] == [1]


def test_text_matches_whatever_its_unicode_form(store: ChronoStore) -> None:
    decomposed = "Mu\u0308ller"  # "Müller" as u + combining diaeresis
    store.put(ALICE, "friend", {"name": decomposed, "tags": ["x", {"note": "ok"}]})
    done = store.redact(ALICE, contains="MÜLLER", scrub=False)
    assert [k for _, k, _ in done.versions] == ["friend"]


def test_past_versions_only_on_postgres_make_an_audit_commit(
    pg_server: PostgresServer,  # noqa: F811
) -> None:
    with ChronoStore.from_conn_string(pg_server.create_database(), scope_depth=2) as s:
        s.put(ALICE, "health", {"content": f"User has {SECRET}"})
        s.put(ALICE, "health", {"content": "User is fine"})
        done = s.redact(ALICE, contains=SECRET)
        assert done.commit is not None and done.commit.changes == ()
        assert done.commit.summary == "redacted past versions"
        assert s.get(ALICE, "health").value == {"content": "User is fine"}
        assert [v.erased for v in s.history(ALICE, "health")] == [None, "redacted"]


def test_undo_the_last_change_after_a_redaction_changes_nothing(
    store: ChronoStore,
) -> None:
    store.put(ALICE, "health", {"content": f"User has {SECRET}"})
    store.put(ALICE, "health", {"content": "User is fine"})
    store.redact(ALICE, contains=SECRET, scrub=False)
    head = store.head(ALICE)
    result = store.undo(ALICE, "undo the last change")
    assert not result.applied and store.head(ALICE) == head
    assert store.get(ALICE, "health").value == {"content": "User is fine"}


def test_a_copy_keeps_the_redaction_and_a_resumed_copy_applies_it(
    tmp_path: Path,
) -> None:
    from langgraph_chronomem.migrate import copy_store

    source, copy, fresh = tmp_path / "src", tmp_path / "copy", tmp_path / "fresh"
    with ChronoStore.from_path(source, scope_depth=2) as store:
        labels = {"topic": f"{SECRET} follow-up"}
        with commit_context(reason=f"said {SECRET}", labels=labels):
            store.put(ALICE, "health", {"content": f"User has {SECRET}"})
    copy_store(source, copy)  # its last commit's reason and labels change below
    with ChronoStore.from_path(source) as store:
        store.put(ALICE, "health", {"content": "User is fine"})
        store.redact(ALICE, contains=SECRET)
    for dest in (copy, fresh):  # the copy brought up to date, and a new one
        report = copy_store(source, dest, verify=True)
        assert report.differences == ()
        with ChronoStore.from_path(dest) as store:
            assert store.as_of(ALICE, 1).get(ALICE, "health") is None
            assert [v.erased for v in store.history(ALICE, "health")] == [
                None,
                "redacted",
            ]
            assert store.show(ALICE, 1).reason == "[redacted]"
            assert store.show(ALICE, 1).labels == {"topic": "[redacted]"}
        assert files_holding(dest, SECRET_BYTES) == []


def test_no_byte_of_any_file_keeps_it_after_a_scrub_however_memory_was_used(
    tmp_path: Path,
) -> None:
    """Chroma writes a new HNSW segment's arrays for their whole capacity from
    memory it never filled, and leaves a dropped collection's folder behind:
    the erased text, freed but still in the process's memory, reached
    `data_level0.bin` once in four redactions. Repeated, with that memory
    littered with the text on purpose each time."""
    for run in range(3):
        root = tmp_path / f"run{run}"
        with open_store(root) as store:
            fill(store)
            store.resolve(ALICE, "forget my zorbanite diagnosis")  # vectors made
            _litter_memory(SECRET_BYTES)
            done = store.redact(ALICE, contains=SECRET)
            assert done.scrubbed
            assert files_holding(root, SECRET_BYTES) == [], f"run {run}"
            live = {segment.hex for segment in _chroma_segments(root)}
            folders = {p.name.replace("-", "") for p in (root / "chroma").iterdir()}
            assert folders - {"chroma.sqlite3"} <= live, "a dropped segment's folder"
            store.search(ALICE, query="cat")  # Chroma open again, and written
        assert files_holding(root, SECRET_BYTES) == [], f"run {run}, closed"


def _litter_memory(text: bytes) -> None:
    """Leave `text` all over freed heap memory, as a process that has read it
    (to match it, to embed it) does: blocks of the sizes Chroma's index
    buffers take, filled and freed, by threads that end (the allocator hands
    their memory to the next threads, Chroma's among them)."""

    def litter() -> None:
        sizes = (4096, 167_600) * 64
        blocks = [bytearray(text * (size // len(text))) for size in sizes]
        del blocks

    for _ in range(8):
        thread = threading.Thread(target=litter)
        thread.start()
        thread.join()


def _chroma_segments(root: Path) -> list[uuid.UUID]:
    """The segments Chroma lists for the store's collections."""
    with sqlite3.connect(root / "chroma" / "chroma.sqlite3") as conn:
        return [uuid.UUID(row[0]) for row in conn.execute("SELECT id FROM segments")]
