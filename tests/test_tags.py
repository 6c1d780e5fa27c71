"""Tags: names for versions, usable wherever a version is, on SQLite and
PostgreSQL (a real private server, testsupport/pg.py), and what reset and compact
leave of them."""

from __future__ import annotations

import asyncio
import sqlite3
from collections.abc import Iterator
from pathlib import Path

import pytest

from langgraph_chronomem import ChronoStore
from langgraph_chronomem.engine import schema
from langgraph_chronomem.engine.sqlite import MIGRATIONS
from langgraph_chronomem.errors import (
    CompactedError,
    InvalidRequestError,
    ReadOnlyError,
    VersionError,
    VersionNotFound,
)
from langgraph_chronomem.store import DATABASE_FILE
from testsupport.pg import PostgresServer, pg_server  # noqa: F401  (fixture)

ME = ("memories", "alice")


@pytest.fixture(params=["sqlite", "postgres"])
def any_store(request: pytest.FixtureRequest, tmp_path: Path) -> Iterator[ChronoStore]:
    """A store with one timeline per user, on each engine."""
    if request.param == "sqlite":
        opened = ChronoStore.from_path(tmp_path / "memory", scope_depth=2)
    else:
        server: PostgresServer = request.getfixturevalue("pg_server")
        opened = ChronoStore.from_conn_string(server.create_database(), scope_depth=2)
    with opened:
        yield opened


def cities(store: ChronoStore, *names: str) -> None:
    for name in names:
        store.put(ME, "city", {"city": name})


def test_a_tag_stands_for_its_version_in_every_method(any_store: ChronoStore) -> None:
    store = any_store
    cities(store, "Boston")
    store.put(ME, "pet", {"pet": "cat"})
    made = store.tag(ME, "before-import")  # HEAD: v2
    assert (made.name, made.version, made.destroyed) == ("before-import", 2, False)
    cities(store, "Atlantis", "Lima")
    assert store.tag(ME, "first", 1).version == 1
    assert store.tag(ME, "also-first", "first").version == 1

    assert store.as_of(ME, "before-import").get(ME, "city").value == {"city": "Boston"}
    assert store.show(ME, "first").version == 1
    assert store.diff(ME, "first", "before-import") == store.diff(ME, 1, 2)
    assert store.version_of(ME, "before-import") == 2
    assert [(t.name, t.version) for t in store.tags(ME)] == [
        ("also-first", 1),
        ("first", 1),
        ("before-import", 2),
    ]
    assert store.rollback(ME, "before-import", dry_run=True).target == 2
    reverted = store.revert(ME, "first", force=True)
    assert reverted.target == 1  # type: ignore[union-attr]
    assert store.get(ME, "city") is None
    store.rollback(ME, "before-import")
    assert store.get(ME, "city").value == {"city": "Boston"}  # type: ignore[union-attr]
    assert store.untag(ME, "also-first").version == 1
    assert [t.name for t in store.tags(ME)] == ["first", "before-import"]


def test_tags_are_kept_per_scope(any_store: ChronoStore) -> None:
    bob = ("memories", "bob")
    cities(any_store, "Boston")
    any_store.put(bob, "city", {"city": "Oslo"})
    any_store.tag(ME, "start")
    assert any_store.tags(bob) == []
    with pytest.raises(VersionNotFound, match="memories/bob has no tag 'start'"):
        any_store.as_of(bob, "start")


@pytest.mark.parametrize(
    "name", ["v3", "V12", "HEAD", "head", "3", "", "a b", "x/y", "-x", "a~1", "é", 5]
)
def test_a_name_that_could_read_as_a_version_is_refused(
    store: ChronoStore, name: object
) -> None:
    cities(store, "Boston")
    with pytest.raises(InvalidRequestError, match="a tag name starts with"):
        store.tag(ME, name, 1)  # type: ignore[arg-type]
    assert store.tags(ME) == []


def test_a_tag_moves_only_when_forced(store: ChronoStore) -> None:
    cities(store, "Boston", "Paris")
    first = store.tag(ME, "home", 1)
    assert store.tag(ME, "home", 1) == first  # the same commit: nothing changes
    with pytest.raises(VersionError, match=r"already names v1.*force=True"):
        store.tag(ME, "home", 2)
    assert store.version_of(ME, "home") == 1
    assert store.tag(ME, "home", 2, force=True).version == 2
    assert store.head(ME) == 2  # no commit


def test_unknown_tags_and_versions_are_typed_and_named(store: ChronoStore) -> None:
    cities(store, "Boston")
    with pytest.raises(VersionNotFound, match="it has no tags"):
        store.as_of(ME, "nope")
    store.tag(ME, "start")
    with pytest.raises(VersionNotFound, match="has no tag 'nope'; its tags are start"):
        store.diff(ME, "nope", 1)
    with pytest.raises(VersionNotFound, match="has no tag 'gone'"):
        store.untag(ME, "gone")
    with pytest.raises(VersionNotFound, match="has no version 9"):
        store.tag(ME, "later", 9)
    with pytest.raises(VersionError, match="an int or a tag's name"):
        store.show(ME, 1.0)  # type: ignore[arg-type]
    empty = ("memories", "nobody")
    with pytest.raises(VersionNotFound, match="none yet"):
        store.tag(empty, "start")  # v0 is no commit
    assert [t.name for t in store.tags(ME)] == ["start"]


def test_a_tag_on_a_commit_a_reset_destroyed_is_refused(
    any_store: ChronoStore,
) -> None:
    """The number comes back with a later commit; the tag never reads it."""
    store = any_store
    cities(store, "Boston", "Atlantis")
    store.tag(ME, "poisoned", 2)
    store.tag(ME, "clean", 1)
    store.reset(ME, to="clean")
    with pytest.raises(
        VersionNotFound, match=r"'poisoned' named v2.*a reset destroyed"
    ):
        store.as_of(ME, "poisoned")
    cities(store, "Paris")  # v2 again, another commit
    with pytest.raises(VersionNotFound, match="a reset destroyed"):
        store.rollback(ME, "poisoned")
    assert [(t.name, t.destroyed) for t in store.tags(ME)] == [
        ("clean", False),
        ("poisoned", True),
    ]
    assert store.get(ME, "city").value == {"city": "Paris"}  # type: ignore[union-attr]
    assert store.tag(ME, "poisoned", 2, force=True).destroyed is False
    assert store.as_of(ME, "poisoned").get(ME, "city").value == {"city": "Paris"}


def test_a_tag_on_a_compacted_version_says_so(store: ChronoStore) -> None:
    cities(store, "Boston", "Paris", "Rome", "Oslo")
    store.tag(ME, "paris", 2)
    store.compact(keep_last=1)
    with pytest.raises(CompactedError, match="v2 of memories/alice was compacted"):
        store.as_of(ME, "paris")
    assert store.tags(ME)[0].version == 2  # kept: the commit is still there


def test_tags_survive_reopening_and_a_read_only_store_refuses_them(
    store_path: Path,
) -> None:
    with ChronoStore.from_path(store_path, scope_depth=2) as store:
        cities(store, "Boston")
        store.tag(ME, "start")
    with ChronoStore.from_path(store_path, read_only=True) as reader:
        assert reader.version_of(ME, "start") == 1
        with pytest.raises(ReadOnlyError):
            reader.tag(ME, "again", 1)
        with pytest.raises(ReadOnlyError):
            reader.untag(ME, "start")
        assert [t.name for t in reader.tags(ME)] == ["start"]


def test_async_twins(store: ChronoStore) -> None:
    async def run() -> None:
        await store.aput(ME, "city", {"city": "Boston"})
        assert (await store.atag(ME, "start")).version == 1
        await store.aput(ME, "city", {"city": "Paris"})
        assert [t.name for t in await store.atags(ME)] == ["start"]
        assert await store.aversion_of(ME, "start") == 1
        view = await store.aas_of(ME, "start")
        assert view.get(ME, "city").value == {"city": "Boston"}  # type: ignore[union-attr]
        assert (await store.auntag(ME, "start")).name == "start"
        assert await store.atags(ME) == []

    asyncio.run(run())


def test_a_store_made_before_tags_gets_them_when_opened(tmp_path: Path) -> None:
    """Schema step `0009_tags` on a database every earlier step made."""
    path = tmp_path / "memory"
    path.mkdir()
    conn = sqlite3.connect(path / DATABASE_FILE, isolation_level=None)
    conn.execute("PRAGMA journal_mode=WAL")
    before = [m for m in MIGRATIONS if m.name < "0009_tags"]
    schema.apply(schema.SqliteSchema(conn), before)
    conn.execute("INSERT INTO chronomem_meta VALUES ('scope_depth', '2')")
    conn.close()
    with ChronoStore.from_path(path) as store:
        cities(store, "Boston")
        assert store.tag(ME, "start").version == 1
