"""Several logs on one Chroma server: each log's vectors are its own.

Three PostgreSQL databases on one test server (testsupport/pg.py), and SQLite stores
in different directories, all with their vectors on one Chroma server
(testsupport/chroma_server.py). They write the same namespaces and keys (the worst
case: the same row ids, the same item ids), roll back and reset, and every
search in each stays exact: nothing one log does reaches another's vectors.
"""

from __future__ import annotations

import json
import sqlite3
from collections.abc import Callable, Iterator
from contextlib import ExitStack
from pathlib import Path
from typing import Any

import psycopg
import pytest

from langgraph_chronomem import ChronoStore
from langgraph_chronomem.engine.feed import VECTOR_LOG
from langgraph_chronomem.migrate import copy_store
from langgraph_chronomem.search.chroma import CHROMA_DIR, embedded_chroma, forget_chroma
from langgraph_chronomem.search.settings import embedder_name
from langgraph_chronomem.search.vectors import collection_names
from tests.test_chroma_server import client_of
from tests.test_exact_search import assert_exact
from tests.test_postgres_store import _url
from testsupport.chroma_server import ChromaServer, chroma_server  # noqa: F401  (fixture)
from testsupport.hashed import INDEX, embed
from testsupport.pg import PostgresServer, pg_server  # noqa: F401  (fixture)

ALICE = ("memories", "alice")
BOB = ("memories", "bob")
N = 3


def _exercise(stores: list[ChronoStore]) -> None:
    """The same keys in every store, each store its own words; a rollback and
    a reset in each, interleaved with the others' writes and searches."""

    def check(upto: int = N) -> None:
        for i, store in enumerate(stores[:upto]):
            assert_exact(store, ALICE, f"w{i} w{i + 10}")
            assert_exact(store, (), f"w{i + 20}")
            found = store.search(ALICE, query=f"w{i} w{i + 10}", limit=5)
            assert {item.key for item in found} == {"a", "b"}, f"store {i}"
            assert all(item.value["store"] == i for item in found)

    for i, store in enumerate(stores):
        store.put(ALICE, "a", {"text": f"w{i} w{i + 10}", "store": i})
        store.put(ALICE, "b", {"text": f"w{i + 10} w{i + 20}", "store": i})
        store.put(BOB, "a", {"text": f"w{i + 20}", "store": i})
        check(upto=i + 1)
    for i, store in enumerate(stores):
        store.put(ALICE, "b", {"text": f"w{i + 30}", "store": i})
        store.rollback(ALICE, to=2)
        check()
    for i, store in enumerate(stores):
        store.put(ALICE, "c", {"text": f"w{i + 40}", "store": i})
        store.reset(ALICE, to=3)
        check()


def _open_each(
    opens: list[Callable[[], ChronoStore]],
) -> Iterator[list[ChronoStore]]:
    with ExitStack() as stack:
        yield [stack.enter_context(open_()) for open_ in opens]


def test_stores_on_several_databases_share_one_chroma_server(
    pg_server: PostgresServer,  # noqa: F811
    chroma_server: ChromaServer,  # noqa: F811
) -> None:
    urls = [_url(pg_server.create_database()) for _ in range(N)]
    opens: list[Callable[[], ChronoStore]] = [
        lambda url=url: ChronoStore.from_conn_string(  # type: ignore[misc]
            url, scope_depth=2, index=INDEX, chroma_url=chroma_server.url
        )
        for url in urls
    ]
    for stores in _open_each(opens):
        _exercise(stores)
    for stores in _open_each(opens):  # opened again: each finds its own
        for i, store in enumerate(stores):
            found = store.search(ALICE, query=f"w{i} w{i + 10}", limit=5)
            assert [item.value["store"] for item in found] == [i, i]
    names = [c.name for c in client_of(chroma_server).list_collections()]
    assert len(names) == 2 * N, "two collections (items, changes) per log"


def test_sqlite_stores_in_different_directories_share_one_chroma_server(
    tmp_path: Path,
    chroma_server: ChromaServer,  # noqa: F811
) -> None:
    opens: list[Callable[[], Any]] = [
        lambda i=i: ChronoStore.from_path(  # type: ignore[misc]
            tmp_path / f"store{i}",
            scope_depth=2,
            index=INDEX,
            chroma_url=chroma_server.url,
        )
        for i in range(N)
    ]
    for stores in _open_each(opens):
        _exercise(stores)


@pytest.fixture(autouse=True)
def _quiet(caplog: pytest.LogCaptureFixture) -> None:
    caplog.set_level("ERROR")


def test_a_store_whose_collections_predate_log_names_keeps_its_vectors(
    tmp_path: Path,
) -> None:
    """A store made before logs had names (its collections named by embedder
    and fields alone) has them renamed on open, not embedded again."""
    embedded: list[str] = []

    def counting(texts: list[str]) -> list[list[float]]:
        embedded.extend(texts)
        return embed(texts)

    index = {**INDEX, "embed": counting}
    with ChronoStore.from_path(tmp_path, scope_depth=2, index=index) as store:  # type: ignore[arg-type]
        store.put(ALICE, "a", {"text": "w1 w2"})
        store.put(BOB, "a", {"text": "w3"})
        store.wait_for_index()
    _unname(tmp_path)
    embedded.clear()
    with ChronoStore.from_path(tmp_path, scope_depth=2, index=index) as store:  # type: ignore[arg-type]
        assert store.search(ALICE, query="w1 w2")[0].score > 0.999
        assert_exact(store, (), "w3")
        store.wait_for_index()
        assert embedded == ["w1 w2", "w3"], "only the queries are embedded"
        assert not any(p.behind for p in store.stats().projections)
    with sqlite3.connect(tmp_path / "chronomem.sqlite3") as conn:
        (log,) = conn.execute(
            "SELECT value FROM chronomem_meta WHERE name = ?", (VECTOR_LOG,)
        ).fetchone()
        marks = {name for (name,) in conn.execute("SELECT name FROM projections")}
    named = set(collection_names(embedder_name(counting), ["text"], log))
    assert named <= marks
    assert not marks & set(collection_names(embedder_name(counting), ["text"], None))


def _unname(path: Path) -> None:
    """Leave a closed store as a version before log names left it: its
    collections and their marks under the names of embedder and fields alone,
    and no log name."""
    with sqlite3.connect(path / "chronomem.sqlite3") as conn:
        client = embedded_chroma(path / CHROMA_DIR)
        _unname_log(conn, client, "?")
        client.close()
    forget_chroma(path / CHROMA_DIR)


def _unname_log(conn: Any, client: Any, param: str) -> None:
    """`_unname` on a database connection (whose parameters read `param`)
    and a Chroma client."""
    meta = f"SELECT value FROM chronomem_meta WHERE name = {param}"
    (log,) = conn.execute(meta, (VECTOR_LOG,)).fetchone()
    conn.execute(f"DELETE FROM chronomem_meta WHERE name = {param}", (VECTOR_LOG,))
    rename = f"UPDATE projections SET name = {param} WHERE name = {param}"
    for collection in client.list_collections():
        embedder = collection.metadata["embedder"]
        fields = json.loads(collection.metadata["fields"])
        pairs = zip(
            collection_names(embedder, fields, log),
            collection_names(embedder, fields, None),
            strict=True,
        )
        for new, old in pairs:
            if collection.name == new:
                collection.modify(name=old)
                conn.execute(rename, (old, new))


def test_on_a_server_a_store_of_before_makes_its_own_collections_again(
    pg_server: PostgresServer,  # noqa: F811
    chroma_server: ChromaServer,  # noqa: F811
) -> None:
    """Its collections of before may hold other databases' vectors under the
    same ids: dropped, and made again from its log, by the store that used
    them; a store that never used them leaves them be."""
    mine, other = (_url(pg_server.create_database()) for _ in range(2))
    open_ = dict(scope_depth=2, index=INDEX, chroma_url=chroma_server.url)
    with ChronoStore.from_conn_string(mine, **open_) as store:  # type: ignore[arg-type]
        store.put(ALICE, "a", {"text": "w1 w2"})
        store.put(BOB, "a", {"text": "w3"})
        store.wait_for_index()
    client = client_of(chroma_server)
    with psycopg.connect(mine, autocommit=True) as conn:
        _unname_log(conn, client, "%s")
    before = {c.name for c in client.list_collections()}
    with ChronoStore.from_conn_string(other, **open_) as store:  # type: ignore[arg-type]
        store.put(ALICE, "a", {"text": "w9"})
        assert store.search(ALICE, query="w9")[0].score > 0.999
    assert before <= {c.name for c in client.list_collections()}
    with ChronoStore.from_conn_string(mine, **open_) as store:  # type: ignore[arg-type]
        assert_exact(store, ALICE, "w1 w2")
        assert_exact(store, (), "w3")
        assert store.search(ALICE, query="w1 w2")[0].value == {"text": "w1 w2"}
    left = {c.name for c in client.list_collections()}
    assert not before & left, "the collections of before are dropped"
    assert len(left) == 4, "two collections of each log"


def test_a_copy_of_a_store_is_another_log(tmp_path: Path) -> None:
    """`copy_store` copies the settings, not the log's name: the copy and its
    source can share a Chroma server and go their own ways."""
    with ChronoStore.from_path(tmp_path / "a", scope_depth=2, index=INDEX) as store:  # type: ignore[arg-type]
        store.put(ALICE, "a", {"text": "w1"})
    copy_store(tmp_path / "a", tmp_path / "b")
    with ChronoStore.from_path(tmp_path / "b", scope_depth=2, index=INDEX):  # type: ignore[arg-type]
        pass
    names = {_log_name(tmp_path / name) for name in ("a", "b")}
    assert len(names) == 2 and None not in names


def _log_name(path: Path) -> str | None:
    with sqlite3.connect(path / "chronomem.sqlite3") as conn:
        row = conn.execute(
            "SELECT value FROM chronomem_meta WHERE name = ?", (VECTOR_LOG,)
        ).fetchone()
    return None if row is None else str(row[0])
