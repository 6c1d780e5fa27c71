"""ChronoStore behaves like LangGraph's stores where a swapped-in store is
judged: what it refuses (string namespaces, non-string keys, text that is not
Unicode), what it answers (NaN filters, `omit_expired` read per call), how it
opens (`:memory:`, SQLite paths, foreign databases, typo'd paths) and its
async TTL names (`AsyncChronoStore`). Issue 32, items 1-5, 7-9.
"""

from __future__ import annotations

import asyncio
import hashlib
import logging
import sqlite3
import time
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

import pytest
from langgraph.store.base import (
    InvalidNamespaceError,
    ListNamespacesOp,
    MatchCondition,
    PutOp,
)
from langgraph.store.sqlite import SqliteStore

from langgraph_chronomem import (
    AsyncChronoStore,
    ChronomemError,
    ChronoStore,
    ConfigError,
    InvalidFilterError,
    InvalidRequestError,
    InvalidValueError,
    NamespaceError,
    StorageError,
    commit_context,
)
from langgraph_chronomem.store import DATABASE_FILE
from testsupport.pg import PostgresServer, pg_server  # noqa: F401  (fixture)

ALICE = ("memories", "alice")


@pytest.fixture(params=["sqlite", "postgres"])
def either(request: pytest.FixtureRequest, tmp_path: Path) -> Iterator[ChronoStore]:
    """A store on each engine, one timeline per user; the checks live above
    the engine, so both must refuse alike."""
    if request.param == "sqlite":
        opened = ChronoStore.from_path(tmp_path / "memory", scope_depth=2)
    else:
        server: PostgresServer = request.getfixturevalue("pg_server")
        opened = ChronoStore.from_conn_string(server.create_database(), scope_depth=2)
    with opened:
        yield opened


def unchanged(store: ChronoStore) -> tuple[Any, ...]:
    """What a refused call must leave as it was: every item and every commit."""
    items = sorted((tuple(i.namespace), i.key, str(i.value)) for i in store.search(()))
    return items, store.list_namespaces(), store.head(ALICE), len(store.log(ALICE))


def fingerprint(directory: Path) -> dict[str, str]:
    """Every file under `directory` (the empty `-shm` SQLite makes aside) by hash."""
    return {
        str(path.relative_to(directory)): hashlib.sha256(path.read_bytes()).hexdigest()
        for path in sorted(directory.rglob("*"))
        if path.is_file() and not path.name.endswith("-shm")
    }


# -- 1. a namespace given as one string --------------------------------------------


STRING_NAMESPACE_CALLS: dict[str, Callable[[ChronoStore], Any]] = {
    "put": lambda s: s.put("memories/alice", "k", {"v": 1}),
    "get": lambda s: s.get("memories/alice", "k"),
    "delete": lambda s: s.delete("memories/alice", "k"),
    "search": lambda s: s.search("memories/alice"),
    "list_namespaces prefix": lambda s: s.list_namespaces(prefix="memories/alice"),
    "list_namespaces suffix": lambda s: s.list_namespaces(suffix="memories/alice"),
    "batch": lambda s: s.batch([PutOp("memories/alice", "k", {"v": 1})]),
    "put_if": lambda s: s.put_if("memories/alice", "k", {"v": 1}, if_version=0),
    "history": lambda s: s.history("memories/alice", "k"),
    "log": lambda s: s.log("memories/alice"),
    "as_of": lambda s: s.as_of("memories/alice", 1),
    "rollback": lambda s: s.rollback("memories/alice", to=1),
    "aput": lambda s: asyncio.run(s.aput("memories/alice", "k", {"v": 1})),
    "aget": lambda s: asyncio.run(s.aget("memories/alice", "k")),
    "adelete": lambda s: asyncio.run(s.adelete("memories/alice", "k")),
    "asearch": lambda s: asyncio.run(s.asearch("memories/alice")),
    "alist_namespaces": lambda s: asyncio.run(
        s.alist_namespaces(prefix="memories/alice")
    ),
    "ahistory": lambda s: asyncio.run(s.ahistory("memories/alice", "k")),
    "revert items": lambda s: s.revert(ALICE, 1, items=[("memories/alice", "k")]),
    "redact items": lambda s: s.redact(ALICE, items=[("memories/alice", "k")]),
}


@pytest.mark.parametrize("call", STRING_NAMESPACE_CALLS, ids=str)
def test_a_namespace_given_as_one_string_is_refused_showing_the_tuple(
    either: ChronoStore, call: str
) -> None:
    either.put(ALICE, "k", {"v": 0})
    before = unchanged(either)
    with pytest.raises(InvalidNamespaceError) as info:
        STRING_NAMESPACE_CALLS[call](either)
    assert '("memories", "alice")' in str(info.value)
    assert isinstance(info.value, NamespaceError)  # and ours, a ScopeError
    assert unchanged(either) == before


def test_a_match_path_given_as_one_label_is_that_label(either: ChronoStore) -> None:
    """As LangGraph's own PostgresStore suite writes a suffix; a path that
    cannot be one label is refused like any other string namespace."""
    for namespace in [("a", "docs", "public"), ("a", "img", "private")]:
        either.put(namespace, "k", {"v": 0})
    suffix = ListNamespacesOp(match_conditions=(MatchCondition("suffix", "public"),))
    assert either.batch([suffix]) == [[("a", "docs", "public")]]
    with pytest.raises(NamespaceError, match=r'\("a", "docs"\)'):
        either.batch(
            [ListNamespacesOp(match_conditions=(MatchCondition("prefix", "a/docs"),))]
        )


# -- 8. keys that are not strings ----------------------------------------------------


KEY_CALLS: dict[str, Callable[[ChronoStore, Any], Any]] = {
    "put": lambda s, k: s.put(ALICE, k, {"v": 1}),
    "get": lambda s, k: s.get(ALICE, k),
    "delete": lambda s, k: s.delete(ALICE, k),
    "batch": lambda s, k: s.batch([PutOp(ALICE, k, {"v": 1})]),
    "put_if": lambda s, k: s.put_if(ALICE, k, {"v": 1}, if_version=0),
    "history": lambda s, k: s.history(ALICE, k),
    "view get": lambda s, k: s.as_of(ALICE, 1).get(ALICE, k),
    "aput": lambda s, k: asyncio.run(s.aput(ALICE, k, {"v": 1})),
    "aget": lambda s, k: asyncio.run(s.aget(ALICE, k)),
    "adelete": lambda s, k: asyncio.run(s.adelete(ALICE, k)),
}


@pytest.mark.parametrize("key", [None, 5, ("k",)], ids=repr)
@pytest.mark.parametrize("call", KEY_CALLS, ids=str)
def test_a_key_that_is_not_a_string_is_refused_everywhere(
    either: ChronoStore, call: str, key: Any
) -> None:
    # Items whose keys are the text the old code made of these keys.
    for text in ("None", "5", "('k',)"):
        either.put(ALICE, text, {"v": 0})
    before = unchanged(either)
    with pytest.raises(InvalidValueError, match="keys are strings"):
        KEY_CALLS[call](either, key)
    assert unchanged(either) == before


# -- 9. text that is not valid Unicode ---------------------------------------------


def _in_context(**meta: Any) -> Callable[[ChronoStore], Any]:
    def write(store: ChronoStore) -> None:
        with commit_context(**meta):
            store.put(ALICE, "k", {"v": 2})

    return write


NOT_UNICODE: dict[str, Callable[[ChronoStore], Any]] = {
    "namespace label": lambda s: s.put(("memories", "al\ud800"), "k", {"v": 2}),
    "search prefix": lambda s: s.search(("memories", "al\ud800")),
    "scope": lambda s: s.log(("memories", "al\udce9")),
    "key": lambda s: s.put(ALICE, "k\ud800", {"v": 2}),
    "value": lambda s: s.put(ALICE, "k", {"v": "x\ud800"}),
    "value's field": lambda s: s.put(ALICE, "k", {"x\ud800": 2}),
    "author": _in_context(author="al\ud800"),
    "reason": _in_context(reason="because \udcff"),
    "label": _in_context(labels={"session": "s\ud800"}),
    "undo request": lambda s: s.undo(ALICE, "undo the \ud800 change"),
    "resolve request": lambda s: s.resolve(ALICE, "undo the \ud800 change"),
}


@pytest.mark.parametrize("where", NOT_UNICODE, ids=str)
def test_text_that_is_not_unicode_gets_a_typed_error_and_changes_nothing(
    either: ChronoStore, where: str
) -> None:
    either.put(ALICE, "k", {"v": 1, "text": "lives in Boston"})
    before = unchanged(either)
    with pytest.raises(ChronomemError) as info:
        NOT_UNICODE[where](either)
    assert isinstance(info.value, ValueError)
    assert unchanged(either) == before


def test_an_undo_request_that_is_not_unicode_is_named_as_the_request(
    either: ChronoStore,
) -> None:
    with pytest.raises(InvalidRequestError, match=r"an undo request .* not valid"):
        either.undo(ALICE, "undo the \ud800 change")


def test_an_author_that_is_not_unicode_is_refused_before_the_block_runs() -> None:
    with (
        pytest.raises(InvalidRequestError, match="not valid Unicode"),
        commit_context(author="\udce9"),
    ):
        pytest.fail("the block ran")


# -- 5, 7. filters as LangGraph's stores answer them --------------------------------


@pytest.mark.parametrize(
    "filter",
    [
        {"price": float("nan")},
        {"price": {"$eq": float("nan")}},
        {"price": {"$ne": float("nan")}},
        {"price": {"$lt": float("nan")}},
        {"profile": {"age": float("nan")}},
        {"price": 5, "size": {"$gte": float("nan")}},
    ],
    ids=["plain", "$eq", "$ne", "$lt", "nested", "and"],
)
def test_a_comparison_with_nan_matches_nothing(
    either: ChronoStore, filter: dict[str, Any]
) -> None:
    either.put(ALICE, "a", {"price": 5, "size": 1, "profile": {"age": 3}})
    assert either.search(ALICE, filter=filter) == []
    assert asyncio.run(either.asearch(ALICE, filter=filter)) == []


def test_a_nan_filter_with_a_bad_operator_or_key_is_still_refused(
    either: ChronoStore,
) -> None:
    with pytest.raises(InvalidFilterError, match="unsupported filter operator"):
        either.search(ALICE, filter={"price": {"$near": float("nan")}})
    with pytest.raises(InvalidFilterError, match="Invalid filter key"):
        either.search(ALICE, filter={'a"b': float("nan")})


def test_an_unsafe_filter_key_is_refused_in_langgraphs_words(
    either: ChronoStore,
) -> None:
    malicious = "access') = 'public' OR '1'='1' OR json_extract(value, '$."
    with pytest.raises(ValueError, match="Invalid filter key"):
        either.search(("docs",), filter={malicious: "dummy"})


def test_omit_expired_is_read_on_every_call(
    either: ChronoStore,
) -> None:
    either.ttl_config = {"omit_expired": False}
    either.put(ALICE, "brief", {"v": 1}, ttl=0.001)  # 60 ms
    either.put(ALICE, "kept", {"v": 2})
    time.sleep(0.2)

    def keys() -> list[str]:
        return sorted(i.key for i in either.search(ALICE, refresh_ttl=False))

    assert keys() == ["brief", "kept"]
    assert either.ttl_config is not None
    either.ttl_config["omit_expired"] = True
    assert keys() == ["kept"]
    assert either.get(ALICE, "brief", refresh_ttl=False) is None
    either.ttl_config["omit_expired"] = False
    assert either.get(ALICE, "brief", refresh_ttl=False) is not None


# -- 2. what SqliteStore.from_conn_string takes ---------------------------------------


@pytest.mark.parametrize(
    "conn", ["memory.db", "sqlite:///memory.db", "./data/m.db", Path("memory.db")]
)
def test_a_sqlite_file_given_to_from_conn_string_names_from_path(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, conn: str | Path
) -> None:
    monkeypatch.chdir(tmp_path)
    with pytest.raises(ConfigError, match=r"ChronoStore\.from_path\(") as info:
        ChronoStore.from_conn_string(conn)
    assert "is a SQLite file" in str(info.value)
    assert list(tmp_path.iterdir()) == []  # nothing made


@pytest.mark.parametrize(
    "open_",
    [
        lambda: ChronoStore.from_conn_string(":memory:"),
        lambda: ChronoStore.from_path(":memory:"),
        lambda: ChronoStore.from_conn_string("sqlite://"),
        lambda: ChronoStore.from_conn_string(Path(":memory:")),
    ],
    ids=["from_conn_string", "from_path", "sqlite-url", "a-path"],
)
def test_memory_is_a_temporary_store_removed_on_close(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, open_: Callable[[], ChronoStore]
) -> None:
    monkeypatch.chdir(tmp_path)
    with open_() as store:
        store.put(ALICE, "k", {"v": 1})
        assert store.get(ALICE, "k").value == {"v": 1}
        assert [c.version for c in store.log(ALICE)] == [1]
        directory = store._temporary
        assert directory is not None and directory.is_dir()
    assert not directory.exists()
    assert list(tmp_path.iterdir()) == []  # no directory named ':memory:'


def test_two_memory_stores_are_separate() -> None:
    with (
        ChronoStore.from_path(":memory:") as one,
        ChronoStore.from_path(":memory:") as two,
    ):
        one.put(ALICE, "k", {"v": 1})
        assert two.get(ALICE, "k") is None


# -- 3. foreign databases, typo'd paths, new stores ------------------------------------


def test_another_applications_database_is_refused_and_left_alone(
    tmp_path: Path,
) -> None:
    directory = tmp_path / "memory"
    directory.mkdir()
    # LangGraph's own store, in the file a ChronoStore would use.
    with SqliteStore.from_conn_string(str(directory / DATABASE_FILE)) as theirs:
        theirs.setup()
        theirs.put(ALICE, "k", {"v": 1})
    before = fingerprint(directory)
    for read_only in (False, True):
        with pytest.raises(StorageError, match="another application's") as info:
            ChronoStore.from_path(directory, read_only=read_only)
        assert "nothing was written" in str(info.value)
        assert "store" in str(info.value)  # names its tables
    assert fingerprint(directory) == before
    with sqlite3.connect(directory / DATABASE_FILE) as conn:
        journal = conn.execute("PRAGMA journal_mode").fetchone()[0]
    conn.close()
    assert journal != "wal"


def test_an_empty_database_file_becomes_a_store(tmp_path: Path) -> None:
    directory = tmp_path / "memory"
    directory.mkdir()
    (directory / DATABASE_FILE).touch()
    with ChronoStore.from_path(directory) as store:
        store.put(ALICE, "k", {"v": 1})
    with ChronoStore.from_path(directory) as store:
        assert store.get(ALICE, "k").value == {"v": 1}


def test_a_path_whose_parent_is_missing_is_refused_unless_asked(
    tmp_path: Path,
) -> None:
    typo = tmp_path / "projcts" / "memory"
    with pytest.raises(StorageError, match="parents=True") as info:
        ChronoStore.from_path(typo)
    assert str(tmp_path / "projcts") in str(info.value)
    assert list(tmp_path.iterdir()) == []
    with ChronoStore.from_path(typo, parents=True) as store:
        store.put(ALICE, "k", {"v": 1})
    assert (typo / DATABASE_FILE).is_file()


def test_a_new_store_is_announced_and_a_reopened_one_is_not(
    tmp_path: Path, caplog: pytest.LogCaptureFixture
) -> None:
    caplog.set_level(logging.INFO, logger="langgraph_chronomem.store")
    ChronoStore.from_path(tmp_path / "memory").close()
    assert [r.getMessage() for r in caplog.records] == [
        f"created a new store in {tmp_path / 'memory'}"
    ]
    caplog.clear()
    ChronoStore.from_path(tmp_path / "memory").close()
    assert caplog.records == []


# -- 4. AsyncChronoStore: LangGraph's async TTL names ----------------------------------


def test_async_store_sweeps_as_async_sqlite_store_does(tmp_path: Path) -> None:
    ttl_seconds = 1

    async def main() -> tuple[Any, ...]:
        async with AsyncChronoStore.from_path(
            tmp_path / "memory", ttl={"default_ttl": ttl_seconds / 60}
        ) as store:
            await store.setup()
            await store.aput(("test",), "item1", {"value": "test"})
            assert (await store.aget(("test",), "item1")) is not None
            await asyncio.sleep(ttl_seconds + 0.5)
            swept = await store.sweep_ttl()
            gone = await store.aget(("test",), "item1")
            return swept, gone, [c.op for c in await store.alog(("test",))]

    assert asyncio.run(main()) == (1, None, ["expire", "put"])


def test_async_store_sweeper_is_a_task_started_and_stopped_by_await(
    tmp_path: Path,
) -> None:
    ttl_seconds = 1.0

    async def main() -> tuple[Any, ...]:
        async with AsyncChronoStore.from_conn_string(
            ":memory:",
            ttl={
                "default_ttl": ttl_seconds / 60,
                "sweep_interval_minutes": ttl_seconds / 4 / 60,
            },
        ) as store:
            task = await store.start_ttl_sweeper()
            await store.aput(("test",), "item1", {"value": "test"})
            await asyncio.sleep(ttl_seconds)
            deadline = time.monotonic() + 30  # a busy machine sweeps late
            while (
                gone := await store.aget(("test",), "item1", refresh_ttl=False)
            ) is not None and time.monotonic() < deadline:
                await asyncio.sleep(0.1)
            stopped = await store.stop_ttl_sweeper()
            await asyncio.wait_for(task, 5)
            return isinstance(task, asyncio.Task), gone, stopped, task.done()

    assert asyncio.run(main()) == (True, None, True, True)


def test_async_store_is_a_chronostore_and_chronostore_stays_sync(
    tmp_path: Path,
) -> None:
    with AsyncChronoStore.from_path(tmp_path / "a") as store:
        assert isinstance(store, ChronoStore)
        store.put(ALICE, "k", {"v": 1})
        assert store.head(ALICE) == 1
    with ChronoStore.from_path(tmp_path / "b") as plain:
        assert plain.sweep_ttl() == 0
        plain.setup()
        assert plain.stop_ttl_sweeper() is True


def test_langgraph_async_store_usage_runs_unchanged(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The calls of LangGraph's async store suites, on a file and in memory."""

    async def main(conn: str) -> list[str]:
        async with AsyncChronoStore.from_conn_string(conn) as store:
            await store.setup()
            await store.aput(("docs", "u1"), "a", {"text": "x"})
            found = await store.asearch(("docs",))
            await store.sweep_ttl()
            return [i.key for i in found]

    assert asyncio.run(main(":memory:")) == ["a"]
    monkeypatch.chdir(tmp_path)
    with pytest.raises(ConfigError, match="from_path"):
        asyncio.run(main("memory.db"))
