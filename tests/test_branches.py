"""Branches of a scope, on SQLite and PostgreSQL (a real private server,
testsupport/pg.py): a compiled graph runs on a branch and HEAD sees nothing of
it until `merge`; merges with and without conflicts leave exactly the expected
items; writers on HEAD and on the branch at once lose nothing; a branch costs
its own rows only; an old store opens and branches."""

from __future__ import annotations

import asyncio
import sqlite3
import threading
from collections.abc import Iterator
from pathlib import Path
from typing import Any, TypedDict

import psycopg
import pytest
from langchain_core.runnables import RunnableConfig
from langgraph.checkpoint.memory import InMemorySaver
from langgraph.graph import END, START, StateGraph
from langgraph.runtime import Runtime
from langgraph.store.base import PutOp

from langgraph_chronomem import (
    BranchError,
    BranchNotFound,
    ChronoStore,
    MergeConflict,
    MergeConflictError,
    ReadOnlyError,
    ScopeError,
    VersionError,
    VersionNotFound,
)
from langgraph_chronomem.store import DATABASE_FILE
from testsupport.pg import PostgresServer, pg_server  # noqa: F401  (fixture)

ME = ("memories", "alice")
BOB = ("memories", "bob")
FOOD = (*ME, "food")


class _Opened:
    """A store, and a way to count its log's rows (by plain SQL)."""

    def __init__(self, store: ChronoStore, count: Any, reopen: Any) -> None:
        self.store, self.count, self.reopen = store, count, reopen


@pytest.fixture(params=["sqlite", "postgres"])
def opened(request: pytest.FixtureRequest, tmp_path: Path) -> Iterator[_Opened]:
    """A store with one timeline per user, on each engine."""
    if request.param == "sqlite":
        path = tmp_path / "memory"

        def open_it() -> ChronoStore:
            return ChronoStore.from_path(path, scope_depth=2)

        def count(sql: str) -> int:
            with sqlite3.connect(path / DATABASE_FILE) as conn:
                return int(conn.execute(sql).fetchone()[0])

        def run(sql: str) -> None:
            with sqlite3.connect(path / DATABASE_FILE) as conn:
                conn.execute(sql)

    else:
        server: PostgresServer = request.getfixturevalue("pg_server")
        url = server.create_database()

        def open_it() -> ChronoStore:
            return ChronoStore.from_conn_string(url, scope_depth=2)

        def count(sql: str) -> int:
            with psycopg.connect(url) as conn:
                return int(conn.execute(sql).fetchone()[0])  # type: ignore[index]

        def run(sql: str) -> None:
            with psycopg.connect(url, autocommit=True) as conn:
                conn.execute(sql)  # type: ignore[arg-type]

    store = open_it()
    holder = _Opened(store, count, open_it)
    holder.run = run  # type: ignore[attr-defined]
    try:
        yield holder
    finally:
        holder.store.close()


def items(store: Any, namespace: tuple[str, ...] = ME) -> dict[str, Any]:
    """Every item under `namespace` a store (or view) reads, by key."""
    return {i.key: i.value for i in store.search(namespace, limit=1000)}


# -- a graph on a branch ---------------------------------------------------------


class State(TypedDict, total=False):
    city: str
    seen: str


def remember(state: State, config: RunnableConfig, runtime: Runtime) -> dict[str, Any]:
    runtime.store.batch(
        [PutOp(FOOD, "city", {"city": state["city"]}), PutOp(FOOD, "pet", None)]
    )  # one commit, a delete in it
    return {}


def recall(state: State, config: RunnableConfig, runtime: Runtime) -> dict[str, Any]:
    item = runtime.store.get(FOOD, "city")
    return {"seen": item.value["city"] if item else "nowhere"}


def _graph(store: Any) -> Any:
    builder = StateGraph(State)
    builder.add_node("remember", remember)
    builder.add_node("recall", recall)
    builder.add_edge(START, "remember")
    builder.add_edge("remember", "recall")
    builder.add_edge("recall", END)
    return builder.compile(store=store, checkpointer=InMemorySaver())


def test_a_graph_on_a_branch_writes_only_there_until_merged(opened: _Opened) -> None:
    store = opened.store
    store.put(FOOD, "city", {"city": "Boston"})
    store.put(FOOD, "pet", {"kind": "cat"})
    store.put(BOB, "city", {"city": "Lima"})
    made = store.branch(ME, "trial")
    assert (made.fork, made.head, made.merged) == (2, 2, 2)
    head_before = (store.head(ME), items(store), store.list_namespaces())

    config: RunnableConfig = {"configurable": {"thread_id": "t1"}}
    out = _graph(store.on_branch(ME, "trial")).invoke({"city": "Paris"}, config)

    assert out["seen"] == "Paris"  # the graph reads its own writes on the branch
    assert items(store.on_branch(ME, "trial")) == {"city": {"city": "Paris"}}
    # HEAD readers see nothing of it: reads, listings, an empty prefix, history.
    assert (store.head(ME), items(store), store.list_namespaces()) == head_before
    assert {i.key for i in store.search((), limit=100)} == {"city", "pet"}
    assert [c.version for c in store.log(ME)] == [2, 1]
    assert store.get(FOOD, "city").value == {"city": "Boston"}
    assert len(store.history(FOOD, "city")) == 1
    assert store.as_of(ME, 2).get(FOOD, "city").value == {"city": "Boston"}
    # The branch's commit is labelled as any commit made in a graph.
    (commit,) = store.log(ME, branch="trial")
    assert commit.version == 3 and commit.scope == ME
    assert commit.labels["branch"] == "trial"
    assert commit.labels["thread_id"] == "t1" and commit.labels["node"] == "remember"
    assert [(c.path, c.kind) for c in commit.changes] == [
        ("memories/alice/food/city", "updated"),
        ("memories/alice/food/pet", "deleted"),
    ]
    assert [(c.key, c.old, c.new) for c in store.diff(ME, branch="trial")] == [
        ("city", {"city": "Boston"}, {"city": "Paris"}),
        ("pet", {"kind": "cat"}, None),
    ]
    assert store.as_of(ME, 2, branch="trial").get(FOOD, "city").value == {
        "city": "Boston"
    }
    assert store.as_of(ME, 3, branch="trial").get(FOOD, "pet") is None

    merged = store.merge(ME, "trial", author="ana", reason="keep the trial")
    assert (merged.op, merged.version, merged.target) == ("merge", 3, 3)
    assert (merged.author, merged.reason, merged.labels["branch"]) == (
        "ana",
        "keep the trial",
        "trial",
    )
    assert items(store) == {"city": {"city": "Paris"}}
    assert items(store, BOB) == {"city": {"city": "Lima"}}
    assert store.branches(ME)[0].merged == 3
    with pytest.raises(VersionError, match="nothing to merge"):
        store.merge(ME, "trial")


def test_an_async_graph_runs_on_a_branch_view(opened: _Opened) -> None:
    store = opened.store
    store.put(FOOD, "city", {"city": "Boston"})
    store.branch(ME, "trial")

    async def go() -> dict[str, Any]:
        view = store.on_branch(ME, "trial")
        await view.aput(FOOD, "city", {"city": "Oslo"})
        seen = await view.aget(FOOD, "city")
        await store.amerge(ME, "trial")
        return {"seen": seen.value if seen else None}

    assert asyncio.run(go()) == {"seen": {"city": "Oslo"}}
    assert store.get(FOOD, "city").value == {"city": "Oslo"}


# -- merges ----------------------------------------------------------------------


def _diverged(store: ChronoStore) -> None:
    """A base, a branch and HEAD that changed it apart: `me` field by field
    (no clash), `city` on both sides (a clash), the rest on one side each."""
    store.batch(
        [
            PutOp(FOOD, "me", {"diet": "meat", "city": "Rome", "pet": "cat"}),
            PutOp(FOOD, "city", {"city": "Boston"}),
            PutOp(FOOD, "old", {"t": "bye"}),
            PutOp(FOOD, "same", {"t": "x"}),
        ]
    )
    store.branch(ME, "trial")
    trial = store.on_branch(ME, "trial")
    trial.batch(
        [
            PutOp(FOOD, "me", {"diet": "vegan", "city": "Rome", "pet": "cat"}),
            PutOp(FOOD, "city", {"city": "Paris"}),
            PutOp(FOOD, "new", {"t": "hello"}),
            PutOp(FOOD, "old", None),
            PutOp(FOOD, "same", {"t": "y"}),
        ]
    )
    store.batch(
        [
            PutOp(FOOD, "me", {"diet": "meat", "city": "Oslo", "pet": "cat"}),
            PutOp(FOOD, "city", {"city": "Lima"}),
            PutOp(FOOD, "same", {"t": "y"}),
            PutOp(FOOD, "head-only", {"t": "mine"}),
        ]
    )


MERGED_BUT_CITY = {
    "me": {"diet": "vegan", "city": "Oslo", "pet": "cat"},
    "new": {"t": "hello"},
    "same": {"t": "y"},
    "head-only": {"t": "mine"},
}


def test_a_merge_without_conflicts_takes_each_sides_changes(opened: _Opened) -> None:
    store = opened.store
    _diverged(store)
    store.on_branch(ME, "trial").put(FOOD, "city", {"city": "Lima"})  # as HEAD
    commit = store.merge(ME, "trial")
    assert items(store) == {**MERGED_BUT_CITY, "city": {"city": "Lima"}}
    assert sorted(c.key for c in commit.changes) == ["me", "new", "old"]


def test_a_conflict_applies_nothing_and_names_item_field_and_values(
    opened: _Opened,
) -> None:
    store = opened.store
    _diverged(store)
    store.on_branch(ME, "trial").put(
        FOOD, "me", {"diet": "vegan", "city": "Paris", "pet": "cat"}
    )
    before = (store.head(ME), items(store))
    with pytest.raises(MergeConflictError) as raised:
        store.merge(ME, "trial")
    assert raised.value.conflicts == (
        MergeConflict(FOOD, "city", None, {"city": "Boston"}, {"city": "Paris"},
                      {"city": "Lima"}),
        MergeConflict(FOOD, "me", "city", "Rome", "Paris", "Oslo"),
    )  # fmt: skip
    assert (store.head(ME), items(store)) == before
    assert store.branches(ME)[0].merged == 1  # nothing moved: the fork


def test_conflicts_resolved_or_forced_leave_exactly_the_chosen_items(
    opened: _Opened,
) -> None:
    store = opened.store
    _diverged(store)
    store.branch(ME, "again")  # a second branch, merged later
    store.on_branch(ME, "again").put(FOOD, "city", {"city": "Kyoto"})

    store.merge(ME, "trial", resolve={(FOOD, "city"): {"city": "Quito"}})
    assert items(store) == {**MERGED_BUT_CITY, "city": {"city": "Quito"}}

    with pytest.raises(MergeConflictError):
        store.merge(ME, "again")
    store.merge(ME, "again", force=True)
    assert items(store) == {**MERGED_BUT_CITY, "city": {"city": "Kyoto"}}


def test_theirs_keeps_heads_side_of_each_conflict_only(opened: _Opened) -> None:
    store = opened.store
    _diverged(store)
    store.merge(ME, "trial", resolve="theirs")
    assert items(store) == {**MERGED_BUT_CITY, "city": {"city": "Lima"}}


# -- concurrency and cost --------------------------------------------------------


def test_writers_on_head_and_on_the_branch_at_once_lose_nothing(
    opened: _Opened,
) -> None:
    store = opened.store
    store.put(FOOD, "seed", {"n": 0})
    store.branch(ME, "trial")
    trial = store.on_branch(ME, "trial")
    errors: list[BaseException] = []

    def write(target: Any, side: str, worker: int) -> None:
        try:
            for n in range(15):
                target.put(FOOD, f"{side}-{worker}-{n}", {"n": n})
        except BaseException as exc:  # reported below
            errors.append(exc)

    threads = [
        threading.Thread(target=write, args=(target, side, worker))
        for target, side in ((store, "head"), (trial, "branch"))
        for worker in range(3)
    ]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()
    assert not errors
    heads = {f"head-{w}-{n}" for w in range(3) for n in range(15)}
    branched = {f"branch-{w}-{n}" for w in range(3) for n in range(15)}
    assert set(items(store)) == {"seed", *heads}
    assert set(items(trial)) == {"seed", *branched}
    assert store.branches(ME)[0].head == 1 + 45  # one version a write
    store.merge(ME, "trial")
    assert set(items(store)) == {"seed", *heads, *branched}


def test_a_branch_costs_its_own_changes_only(opened: _Opened) -> None:
    store = opened.store
    store.batch([PutOp(FOOD, f"k{i}", {"n": i}) for i in range(300)])
    rows, commits = (
        opened.count("SELECT count(*) FROM items"),
        opened.count("SELECT count(*) FROM commits"),
    )
    store.branch(ME, "trial")
    assert opened.count("SELECT count(*) FROM items") == rows  # no copy
    trial = store.on_branch(ME, "trial")
    trial.put(FOOD, "k1", {"n": -1})
    trial.batch([PutOp(FOOD, "k2", None), PutOp(FOOD, "new", {"n": 1})])
    assert opened.count("SELECT count(*) FROM items") == rows + 3
    assert opened.count("SELECT count(*) FROM commits") == commits + 2
    assert len(items(trial)) == 300  # 299 of the base's, one new; k1 changed

    store.delete_branch(ME, "trial")
    assert opened.count("SELECT count(*) FROM items") == rows
    assert opened.count("SELECT count(*) FROM commits") == commits
    assert store.branches(ME) == []
    store.branch(ME, "trial")  # the name again: none of the old one's writes
    assert items(store.on_branch(ME, "trial"))["k1"] == {"n": 1}


# -- bad input and old stores ----------------------------------------------------


def test_bad_input_is_refused_and_changes_nothing(opened: _Opened) -> None:
    store = opened.store
    store.put(FOOD, "city", {"city": "Boston"})
    store.branch(ME, "trial", at=0)
    with pytest.raises(BranchError, match="already"):
        store.branch(ME, "trial")
    for bad in ("", "a b", "a.b", "-x", "x" * 65, 7):
        with pytest.raises(BranchError):
            store.branch(ME, bad)  # type: ignore[arg-type]
    with pytest.raises(VersionNotFound):
        store.branch(ME, "later", at=2)
    for call in (
        lambda: store.on_branch(ME, "nope"),
        lambda: store.merge(ME, "nope"),
        lambda: store.delete_branch(ME, "nope"),
        lambda: store.log(ME, branch="nope"),
        lambda: store.diff(ME, branch="nope"),
        lambda: store.as_of(ME, 1, branch="nope"),
    ):
        with pytest.raises(BranchNotFound, match="trial"):
            call()
    with pytest.raises(VersionNotFound):
        store.as_of(ME, 1, branch="trial")  # forked at 0, no commit yet
    with pytest.raises(ScopeError):
        store.on_branch(ME, "trial").put(BOB, "city", {"city": "Lima"})
    # no index=: the query is ignored, as the store's own search ignores it
    assert store.on_branch(ME, "trial").search(ME, query="city") == []
    with pytest.raises(ReadOnlyError):
        store.as_of(ME, 0, branch="trial").put(FOOD, "city", {"city": "Oslo"})
    assert [b.name for b in store.branches(ME)] == ["trial"]
    assert store.branches(ME)[0].head == 0
    assert items(store.on_branch(ME, "trial")) == {}  # forked before v1
    assert store.head(ME) == 1


def test_a_store_from_before_branches_opens_and_branches(opened: _Opened) -> None:
    store = opened.store
    store.put(FOOD, "city", {"city": "Boston"})
    store.close()
    step = (
        "0012_branches"
        if "sqlite" in repr(type(store._engine)).lower()
        else ("0013_branches")
    )
    opened.run("DROP TABLE branches")  # type: ignore[attr-defined]
    opened.run(  # type: ignore[attr-defined]
        f"DELETE FROM chronomem_migrations WHERE name = '{step}'"
    )
    opened.store = store = opened.reopen()
    store.branch(ME, "trial")
    store.on_branch(ME, "trial").put(FOOD, "city", {"city": "Paris"})
    assert store.get(FOOD, "city").value == {"city": "Boston"}
    store.merge(ME, "trial")
    assert store.get(FOOD, "city").value == {"city": "Paris"}
    assert [c.op for c in store.log(ME)] == ["merge", "put"]


def test_search_by_meaning_at_head_sees_a_branch_only_once_merged(
    tmp_path: Path,
) -> None:
    from testsupport.hashed import INDEX

    with ChronoStore.from_path(tmp_path, scope_depth=2, index=INDEX) as store:
        store.put(FOOD, "a", {"text": "w1 w2"})
        store.branch(ME, "trial")
        store.on_branch(ME, "trial").put(FOOD, "b", {"text": "w3 w4"})
        store.wait_for_index()
        assert [i.key for i in store.search(ME, query="w3 w4")] == ["a"]
        store.merge(ME, "trial")
        assert store.search(ME, query="w3 w4")[0].key == "b"
        store.delete_branch(ME, "trial")
        store.wait_for_index()
        assert {i.key for i in store.search(ME, query="w3 w4")} == {"a", "b"}


def test_a_copy_to_postgresql_keeps_branches(
    tmp_path: Path,
    pg_server: PostgresServer,  # noqa: F811  (the fixture)
) -> None:
    from langgraph_chronomem.migrate import copy_store

    source = tmp_path / "memory"
    with ChronoStore.from_path(source, scope_depth=2) as store:
        store.put(FOOD, "city", {"city": "Boston"})
        store.branch(ME, "gone")
        store.delete_branch(ME, "gone")  # its id is not given again, copied or not
        store.branch(ME, "trial")
        store.on_branch(ME, "trial").put(FOOD, "city", {"city": "Paris"})
    url = pg_server.create_database()
    assert copy_store(source, url).differences == ()
    with ChronoStore.from_conn_string(url) as copy:
        assert copy.get(FOOD, "city").value == {"city": "Boston"}
        assert items(copy.on_branch(ME, "trial"), FOOD) == {"city": {"city": "Paris"}}
        assert [s.scope for s in copy.stats().scopes] == [ME]  # no branch's scope
        copy.branch(ME, "next")  # a new id, past the copied ones
        copy.on_branch(ME, "next").put(FOOD, "city", {"city": "Rome"})
        copy.merge(ME, "trial")
        assert copy.get(FOOD, "city").value == {"city": "Paris"}
        assert items(copy.on_branch(ME, "next"), FOOD) == {"city": {"city": "Rome"}}


def test_a_reset_below_the_fork_makes_the_branch_unreadable_not_wrong(
    opened: _Opened,
) -> None:
    store = opened.store
    store.put(FOOD, "city", {"city": "Boston"})
    store.put(FOOD, "city", {"city": "Paris"})
    store.branch(ME, "trial")  # at v2
    store.reset(ME, to=1)
    store.put(FOOD, "city", {"city": "Lima"})  # a new v2: another state
    with pytest.raises(BranchError, match="reset"):
        store.on_branch(ME, "trial")
    with pytest.raises(BranchError, match="reset"):
        store.merge(ME, "trial")
    store.delete_branch(ME, "trial")
    assert store.branches(ME) == []


def test_a_redaction_of_the_scope_erases_what_its_branches_wrote(
    opened: _Opened,
) -> None:
    store = opened.store
    store.put(FOOD, "id", {"t": "passport X-123"})
    store.branch(ME, "trial")
    trial = store.on_branch(ME, "trial")
    trial.put(FOOD, "note", {"t": "copied passport X-123"})
    trial.put(FOOD, "kept", {"t": "nothing secret"})
    done = store.redact(ME, contains="X-123")
    assert [(v[1], v[2]) for v in done.versions] == [("id", 1)]  # the scope's own
    assert opened.count("SELECT count(*) FROM items WHERE value LIKE '%X-123%'") == 0
    assert items(trial, FOOD) == {"kept": {"t": "nothing secret"}}
    assert store.search(FOOD) == []
