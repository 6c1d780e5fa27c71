"""ChronoCheckpointer: the conformance suite, the shared database, memory positions."""

from __future__ import annotations

import contextlib
import importlib
import io
import json
import sqlite3
import threading
from collections.abc import AsyncIterator
from itertools import count
from pathlib import Path
from typing import Annotated, Any

import pytest
from langgraph.channels.delta import DeltaChannel
from langgraph.checkpoint.base import BaseCheckpointSaver, writes_sort_key
from langgraph.checkpoint.conformance import checkpointer_test, validate
from langgraph.checkpoint.conformance.capabilities import ALL_CAPABILITIES
from langgraph.checkpoint.conformance.test_utils import (
    generate_checkpoint,
    generate_config,
    generate_metadata,
)
from langgraph.checkpoint.memory import InMemorySaver
from langgraph.checkpoint.serde.jsonplus import JsonPlusSerializer
from langgraph.graph import START, StateGraph
from typing_extensions import TypedDict

from langgraph_chronomem import ChronoStore, commit_context
from langgraph_chronomem.checkpoint import ChronoCheckpointer, memory, sql
from langgraph_chronomem.checkpoint import base as checkpoint_module
from langgraph_chronomem.deployment import open_chronomem
from langgraph_chronomem.errors import (
    ConfigError,
    InvalidFilterError,
    InvalidValueError,
    ScopeError,
    VersionError,
    VersionNotFound,
)

ALICE = ("memories", "alice")
BOB = ("memories", "bob")


@pytest.fixture
def checkpointer(store: ChronoStore) -> ChronoCheckpointer:
    return ChronoCheckpointer(store)


def put(
    saver: ChronoCheckpointer,
    thread: str = "t1",
    parent: dict[str, Any] | None = None,
    ns: str = "",
    **metadata: Any,
) -> dict[str, Any]:
    """Put an empty checkpoint after `parent`; return its config."""
    config = generate_config(thread, checkpoint_ns=ns)
    if parent is not None:
        config["configurable"]["checkpoint_id"] = parent["configurable"][
            "checkpoint_id"
        ]
    return saver.put(config, generate_checkpoint(), generate_metadata(**metadata), {})


def last_seq(store: ChronoStore) -> int:
    with store._engine.transaction(write=False) as tx:
        return int(
            tx.cur.execute("SELECT COALESCE(MAX(seq), 0) FROM commits").fetchone()[0]
        )


# -- LangGraph's published conformance suite ---------------------------------


async def test_conformance_suite_passes_every_capability(tmp_path: Path) -> None:
    fresh = count()

    @checkpointer_test(name="ChronoCheckpointer")
    async def factory() -> AsyncIterator[ChronoCheckpointer]:
        store, saver = open_chronomem(tmp_path / f"suite-{next(fresh)}", scope_depth=2)
        try:
            yield saver
        finally:
            store.close()

    assert_full_conformance(await validate(factory))


def assert_full_conformance(report: Any) -> None:
    """Every capability of LangGraph's suite detected and passed: level FULL."""
    printed = io.StringIO()
    with contextlib.redirect_stdout(printed):
        report.print_report()
    failures = [f for result in report.results.values() for f in result.failures]
    assert {cap.value for cap in ALL_CAPABILITIES} == set(report.results)
    assert all(r.detected and r.passed for r in report.results.values()), (
        printed.getvalue() + "\n".join(failures)
    )
    assert report.conformance_level() == "FULL"


# -- one database, one lock ---------------------------------------------------


def test_checkpoints_live_in_the_store_database(
    store: ChronoStore, store_path: Path, checkpointer: ChronoCheckpointer
) -> None:
    assert checkpointer._engine is store._engine
    saved = put(checkpointer)
    ChronoCheckpointer(store)  # the migration runs once; a second saver reuses it
    with sqlite3.connect(store_path / "chronomem.sqlite3") as other:
        tables = {r[0] for r in other.execute("SELECT name FROM sqlite_master")}
        migrations = [
            r[0] for r in other.execute("SELECT name FROM chronomem_migrations")
        ]
        stored = other.execute("SELECT checkpoint_id FROM checkpoints").fetchall()
    assert {"checkpoints", "checkpoint_writes", "commits"} <= tables
    assert migrations.count("checkpoint_0001_tables") == 1
    assert stored == [(saved["configurable"]["checkpoint_id"],)]


async def test_setup_as_langgraphs_savers_call_it_changes_nothing(
    store: ChronoStore, checkpointer: ChronoCheckpointer
) -> None:
    """Code written for `SqliteSaver` / `PostgresSaver` calls `setup()` first
    (and for their async twins awaits it); on a saver already in use it keeps
    what is there."""
    saved = put(checkpointer)
    checkpointer.setup()
    await checkpointer.asetup()
    found = checkpointer.get_tuple(saved)
    assert found is not None and found.config == saved


def test_open_chronomem_opens_both_halves_on_one_path(tmp_path: Path) -> None:
    store, saver = open_chronomem(tmp_path, scope_depth=2, on_time_travel="keep")
    with store:
        assert saver.store is store and saver._engine is store._engine
        assert saver.on_time_travel == "keep"


def test_open_chronomem_closes_the_store_when_the_checkpointer_refuses(
    tmp_path: Path,
) -> None:
    with pytest.raises(ScopeError, match="scope_depth=2"):
        # {user_id} lies outside the scope: a rewind would reach every user
        open_chronomem(tmp_path, scope_depth=1, on_time_travel="rewind")
    store, _ = open_chronomem(tmp_path, on_time_travel="keep")  # not left locked
    store.close()


def test_constructor_rejects_bad_settings(store: ChronoStore, tmp_path: Path) -> None:
    with pytest.raises(ConfigError, match="needs a ChronoStore"):
        ChronoCheckpointer(object())  # type: ignore[arg-type]
    with pytest.raises(ConfigError, match="one of revert, rewind, keep"):
        ChronoCheckpointer(store, on_time_travel="undo")  # type: ignore[arg-type]
    with pytest.raises(ScopeError, match="shorter than"):
        ChronoCheckpointer(store, memory_namespace=("{user_id}",))
    with ChronoStore.from_path(tmp_path / "flat") as flat:  # scope_depth 0
        with pytest.raises(ScopeError, match="every user's memory"):
            ChronoCheckpointer(flat, on_time_travel="rewind")
        # a revert touches only the thread's own changes: no risk
        ChronoCheckpointer(flat)
        ChronoCheckpointer(flat, on_time_travel="keep")


def test_run_config_keys_are_langgraphs() -> None:
    from langgraph._internal._constants import CONFIG_KEY_RUNTIME, CONFIG_KEY_TASK_ID

    assert memory.RUN_KEY == CONFIG_KEY_RUNTIME
    assert memory.TASK_KEY == CONFIG_KEY_TASK_ID


# -- memory positions ---------------------------------------------------------


def test_each_checkpoint_records_the_memory_position(
    store: ChronoStore, checkpointer: ChronoCheckpointer
) -> None:
    first = put(checkpointer)
    store.put(ALICE, "city", {"city": "Boston"})
    store.put(BOB, "pet", {"kind": "cat"})
    second = put(checkpointer, parent=first)
    assert checkpointer._stamp(first) == 0
    assert checkpointer._stamp(second) == last_seq(store) == 2


def test_position_stops_before_writes_from_the_checkpoint_itself(
    store: ChronoStore, checkpointer: ChronoCheckpointer
) -> None:
    """LangGraph saves checkpoints in the background: a node running from a
    checkpoint may write memory before that checkpoint is put. Its commit is
    labelled with the checkpoint it ran from, and the stamp stops before it."""
    first = put(checkpointer)
    store.put(ALICE, "a", {"n": 1})
    checkpoint = generate_checkpoint()
    with commit_context(
        labels={"thread_id": "other", "checkpoint_id": checkpoint["id"]}
    ):
        store.put(BOB, "b", {"n": 2})  # another thread: before this checkpoint
    before = last_seq(store)
    with commit_context(labels={"thread_id": "t1", "checkpoint_id": checkpoint["id"]}):
        store.put(ALICE, "b", {"n": 3})  # a task of this thread, from this checkpoint
    config = {"configurable": {**first["configurable"], "user_id": "alice"}}
    saved = checkpointer.put(config, checkpoint, generate_metadata(), {})
    assert checkpointer._stamp(saved) == before
    assert checkpointer.memory_version(saved, ALICE) == 1


def test_memory_version_derives_any_scope(
    store: ChronoStore, checkpointer: ChronoCheckpointer
) -> None:
    store.put(ALICE, "city", {"city": "Boston"})
    early = put(checkpointer, user_id="alice")
    store.put(ALICE, "city", {"city": "Paris"})
    store.put(BOB, "pet", {"kind": "cat"})
    late = put(checkpointer, parent=early, user_id="alice")
    store.put(ALICE, "city", {"city": "Rome"})
    assert checkpointer.memory_version(early) == 1  # user_id recorded in metadata
    assert checkpointer.memory_version(late) == 2
    assert checkpointer.memory_version(late, BOB) == 1
    assert checkpointer.memory_version(early, ("memories", "bob", "pets")) == 0
    assert checkpointer.memory_version({"configurable": {"thread_id": "t1"}}) == 2
    assert store.as_of(ALICE, checkpointer.memory_version(early)).get(
        ALICE, "city"
    ).value == {"city": "Boston"}


def test_bad_metadata_on_a_fork_leaves_memory_alone(
    store: ChronoStore, checkpointer: ChronoCheckpointer
) -> None:
    """A put that forks the past rewinds memory before it writes, so its
    metadata is checked first: refused, it changes neither memory nor checkpoints."""
    first = put(checkpointer, user_id="alice")
    with commit_context(labels={"thread_id": "t1"}):  # as a node of thread t1
        store.put(ALICE, "city", {"city": "Boston"})
    put(checkpointer, parent=first, user_id="alice")
    fork: Any = {"configurable": {**first["configurable"], "user_id": "alice"}}
    bad: Any = {"bad": object()}
    with pytest.raises(InvalidValueError, match="must be JSON"):
        checkpointer.put(fork, generate_checkpoint(), bad, {})
    assert [c.op for c in store.log(ALICE)] == ["put"]
    assert len(list(checkpointer.list(None))) == 2
    forked = checkpointer.put(fork, generate_checkpoint(), generate_metadata(), {})
    assert store.log(ALICE)[0].author == "time-travel"
    assert checkpointer._stamp(forked) == last_seq(store) == 2


async def test_memory_version_errors(checkpointer: ChronoCheckpointer) -> None:
    with pytest.raises(VersionNotFound, match="has no checkpoint"):
        checkpointer.memory_version(generate_config("nobody"))
    saved = put(checkpointer)
    with pytest.raises(ConfigError, match="needs 'user_id'"):
        checkpointer.memory_version(saved)
    with checkpointer._engine.transaction(
        write=True
    ) as tx:  # as another saver wrote it
        tx.cur.execute("UPDATE checkpoints SET memory_seq = NULL")
    with pytest.raises(VersionError, match="no memory position"):
        await checkpointer.amemory_version(saved, ALICE)


# -- metadata as written ------------------------------------------------------


async def test_metadata_round_trips_exactly_as_written(
    store: ChronoStore, checkpointer: ChronoCheckpointer
) -> None:
    """The memory position is kept beside a checkpoint, never in its metadata."""
    store.put(ALICE, "city", {"city": "Boston"})
    written: Any = {"source": "input", "step": -1, "parents": {}, "user_id": "alice"}
    saved = checkpointer.put(generate_config("t1"), generate_checkpoint(), written, {})
    store.put(ALICE, "city", {"city": "Paris"})
    assert checkpointer.get_tuple(saved).metadata == written  # type: ignore[union-attr]
    assert (await checkpointer.aget_tuple(saved)).metadata == written  # type: ignore[union-attr]
    assert [t.metadata for t in checkpointer.list(None)] == [written]
    assert [t.metadata async for t in checkpointer.alist(None)] == [written]
    assert not list(checkpointer.list(None, filter={"chronomem_seq": 1}))
    assert checkpointer.memory_version(saved) == 1  # the position is still there


def counter_graph(saver: BaseCheckpointSaver[Any], store: ChronoStore) -> Any:
    """A graph of two steps, each writing alice's memory."""

    class State(TypedDict):
        n: int

    def step(state: State) -> dict[str, int]:
        store.put(ALICE, f"n{state['n']}", {"n": state["n"]})
        return {"n": state["n"] + 1}

    return (
        StateGraph(State)
        .add_node("one", step)
        .add_node("two", step)
        .add_edge(START, "one")
        .add_edge("one", "two")
        .compile(checkpointer=saver, store=store)
    )


def test_a_graphs_state_metadata_is_what_langgraphs_own_saver_gives(
    store: ChronoStore, checkpointer: ChronoCheckpointer
) -> None:
    """`get_state` and `get_state_history` show the metadata LangGraph wrote,
    as LangGraph's `InMemorySaver` shows it, and time travel still knows
    where memory stood."""
    config: Any = {"configurable": {"thread_id": "t1", "user_id": "alice"}}
    ours, theirs = (
        counter_graph(checkpointer, store),
        counter_graph(InMemorySaver(), store),
    )
    for graph in (ours, theirs):
        graph.invoke({"n": 0}, config)
    assert ours.get_state(config).metadata == theirs.get_state(config).metadata
    history = [s.metadata for s in ours.get_state_history(config)]
    assert history == [s.metadata for s in theirs.get_state_history(config)]
    assert all("chronomem_seq" not in m for m in history) and len(history) == 4
    versions = [
        checkpointer.memory_version(s.config) for s in ours.get_state_history(config)
    ]
    assert versions == [2, 1, 0, 0]


def old_insert(dialect: sql.CheckpointSQL) -> str:
    """A checkpoint row as written before `memory_seq` had its own column."""
    json_type = "TEXT" if dialect is sql.SQLITE else "jsonb"
    return (
        f"INSERT INTO {dialect.TABLE} (thread_id, checkpoint_ns, checkpoint_id, "
        "parent_checkpoint_id, type, checkpoint, metadata) "
        f"VALUES (?, ?, ?, ?, ?, ?, CAST(? AS {json_type}))"
    )


def test_an_old_checkpoint_moves_its_position_out_of_the_metadata(
    store: ChronoStore,
) -> None:
    """A database written before `memory_seq` had its own column: opening the
    checkpointer moves each position out of the metadata, and time travel
    still finds it."""
    dialect = checkpoint_module.dialect_for(store._engine)
    store._engine.migrate(dialect.MIGRATIONS[:-1])
    store.put(ALICE, "city", {"city": "Boston"})
    kind, blob = JsonPlusSerializer().dumps_typed(generate_checkpoint())
    old = {"source": "input", "step": -1, "user_id": "alice", "chronomem_seq": 1}
    with store._engine.transaction(write=True) as tx:
        row = ("t1", "", "1ef0", None, kind, blob, json.dumps(old))
        tx.cur.execute(old_insert(dialect), row)
    store.put(ALICE, "city", {"city": "Paris"})
    checkpointer = ChronoCheckpointer(store)
    saved = generate_config("t1", checkpoint_id="1ef0")
    found = checkpointer.get_tuple(saved)
    assert found is not None
    assert found.metadata == {"source": "input", "step": -1, "user_id": "alice"}
    assert checkpointer.memory_version(saved) == 1


# -- the stored data ----------------------------------------------------------


def test_metadata_is_stored_whole_and_filters_by_json_type(
    checkpointer: ChronoCheckpointer,
) -> None:
    rich = {"flag": True, "n": 1, "none": None, "nested": {"b": [1, 2], "a": "é"}}
    put(checkpointer, step=1, **rich)
    put(checkpointer, step=2, flag=False, n=True)
    (saved,) = checkpointer.list(None, filter={"step": 1})
    assert {k: saved.metadata[k] for k in rich} == rich  # type: ignore[literal-required]
    assert set(saved.metadata) == {*rich, "source", "step", "parents"}

    def steps(**filter: Any) -> list[int]:
        return [t.metadata["step"] for t in checkpointer.list(None, filter=filter)]

    assert steps(flag=True) == [1]
    assert steps(n=1) == [1]  # True is not 1
    assert steps(nested={"a": "é", "b": [1, 2]}) == [1]  # key order does not matter
    assert steps(none=None) == [2, 1]  # null and missing both match None
    assert steps(source="loop", step=2) == [2]
    with pytest.raises(InvalidFilterError, match="quotes"):
        checkpointer.list(None, filter={'a"b': 1})


def test_bad_metadata_is_refused_and_writes_nothing(
    checkpointer: ChronoCheckpointer,
) -> None:
    for bad in ({"obj": object()}, {"nan": float("nan")}):
        with pytest.raises(InvalidValueError, match="must be JSON"):
            checkpointer.put(generate_config("t1"), generate_checkpoint(), bad, {})  # type: ignore[arg-type]
    assert list(checkpointer.list(None)) == []
    with pytest.raises(ConfigError, match="thread_id"):
        checkpointer.put({"configurable": {}}, generate_checkpoint(), {}, {})
    with pytest.raises(ValueError, match="strategy"):
        checkpointer.prune(["t1"], strategy="oldest")


def test_an_older_checkpoint_schema_upgrades_and_still_finds_runs(
    store: ChronoStore,
) -> None:
    """A database from before `checkpoint_0002` (whose run index held every
    checkpoint) upgrades when opened; `delete_for_runs` still finds a run's
    checkpoints through the index, not by reading them all."""
    store._engine.migrate(sql.MIGRATIONS[:1])
    serde = JsonPlusSerializer()
    with store._engine.transaction(write=True) as tx:
        for n, run in enumerate(["run-a", "run-b", None, "run-a"]):
            meta = {"step": n, **({"run_id": run} if run else {})}
            row = ("t1", "", f"c{n}", None, *serde.dumps_typed(generate_checkpoint()))
            tx.cur.execute(old_insert(sql.SQLITE), (*row, json.dumps(meta)))
            write = ("t1", "", f"c{n}", "task", "", 0, "ch", *serde.dumps_typed(n))
            tx.cur.execute(sql.SQLITE.KEEP_WRITE, write)
    checkpointer = ChronoCheckpointer(store)
    checkpointer.delete_for_runs(["run-a"])
    assert [t.metadata["step"] for t in checkpointer.list(None)] == [2, 1]
    assert [t.pending_writes for t in checkpointer.list(None)] == [
        [("task", "ch", 2)],
        [("task", "ch", 1)],
    ]
    with store._engine.transaction(write=False) as tx:
        plan = tx.cur.execute(
            "EXPLAIN QUERY PLAN SELECT 1 FROM checkpoints "
            "WHERE json_extract(metadata, '$.run_id') IN (?)",
            ("run-a",),
        ).fetchall()
    assert "USING INDEX checkpoints_by_run" in str(plan)


def test_pending_writes_come_in_writes_sort_key_order(
    checkpointer: ChronoCheckpointer,
) -> None:
    saved = put(checkpointer)
    tasks = [("t9", "b"), ("t1", "b"), ("t5", ""), ("t2", "a~1"), ("t3", "a")]
    for task_id, path in tasks:
        checkpointer.put_writes(saved, [("x", task_id), ("y", path)], task_id, path)
    expected = sorted(
        ((path, task_id, idx), (task_id, ch, value))
        for task_id, path in tasks
        for idx, (ch, value) in enumerate([("x", task_id), ("y", path)])
    )
    assert [w for _, w in expected] == checkpointer.get_tuple(saved).pending_writes
    (listed,) = checkpointer.list(saved)
    assert listed.pending_writes == [w for _, w in expected]
    assert [k for k, _ in expected] == sorted(k for k, _ in expected)
    assert writes_sort_key("a", "t3", 0) < writes_sort_key("a~1", "t2", 0)


def test_list_pages_without_holding_the_lock(
    checkpointer: ChronoCheckpointer, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(checkpoint_module, "_PAGE", 3)
    parent = None
    made = []
    for _ in range(8):
        parent = put(checkpointer, parent=parent)
        made.append(parent["configurable"]["checkpoint_id"])
    seen = []
    for found in checkpointer.list(generate_config("t1")):
        seen.append(found.config["configurable"]["checkpoint_id"])
        put(checkpointer, thread="t2")  # a write mid-iteration must not deadlock
    assert seen == made[::-1]
    before = generate_config("t1", checkpoint_id=made[6])
    paged = checkpointer.list(generate_config("t1"), before=before, limit=4)
    assert [t.checkpoint["id"] for t in paged] == made[5:1:-1]


def test_copy_and_delete_leave_memory_alone(
    store: ChronoStore, checkpointer: ChronoCheckpointer
) -> None:
    store.put(ALICE, "city", {"city": "Boston"})
    saved = put(checkpointer, user_id="alice")
    checkpointer.copy_thread("t1", "t2")
    copied = checkpointer.get_tuple(generate_config("t2"))
    assert copied is not None and checkpointer._stamp(copied.config) == 1
    assert checkpointer.memory_version(copied.config) == 1
    checkpointer.delete_thread("t1")
    assert checkpointer.get_tuple(saved) is None
    assert store.head(ALICE) == 1


# -- delta channels -----------------------------------------------------------


def extend(state: list[str], writes: list[list[str]]) -> list[str]:
    return [*state, *(item for write in writes for item in write)]


class Items(TypedDict):
    items: Annotated[list, DeltaChannel(extend, snapshot_frequency=3)]


def delta_graph(saver: BaseCheckpointSaver) -> Any:
    return (
        StateGraph(Items)
        .add_node("a", lambda s: {"items": ["a"]})
        .add_node("b", lambda s: {"items": ["b"]})
        .add_edge(START, "a")
        .add_edge("a", "b")
        .compile(checkpointer=saver)
    )


def test_delta_channel_history_matches_the_base_walk(
    checkpointer: ChronoCheckpointer,
) -> None:
    config = generate_config("t1")
    graph = delta_graph(checkpointer)
    for turn in range(3):
        graph.invoke({"items": [f"in{turn}"]}, config)
    for found in checkpointer.list(config):
        ours = checkpointer.get_delta_channel_history(
            config=found.config, channels=["items", "branch:to:b", "nothing"]
        )
        walked = BaseCheckpointSaver.get_delta_channel_history(
            checkpointer,
            config=found.config,
            channels=["items", "branch:to:b", "nothing"],
        )
        assert ours == walked
    assert checkpointer.get_delta_channel_history(config=config, channels=[]) == {}


def test_keep_latest_prune_keeps_what_delta_channels_need(
    checkpointer: ChronoCheckpointer,
) -> None:
    config = generate_config("t1")
    reference = delta_graph(InMemorySaver())
    graph = delta_graph(checkpointer)
    for turn in range(3):
        reference.invoke({"items": [f"in{turn}"]}, config)
        graph.invoke({"items": [f"in{turn}"]}, config)
    reference.update_state(config, {"items": ["late"]})
    graph.update_state(config, {"items": ["late"]})  # one update since the snapshot
    latest = checkpointer.get_tuple(config)
    assert latest is not None and latest.metadata.get("counters_since_delta_snapshot")
    checkpointer.prune(["t1"], strategy="keep_latest")
    assert graph.get_state(config).values == reference.get_state(config).values
    assert 1 < len(list(checkpointer.list(config))) < 10  # the ancestors, not all


# -- the sync and async halves agree ------------------------------------------


async def test_async_twins_give_the_sync_answers(
    store: ChronoStore, checkpointer: ChronoCheckpointer
) -> None:
    config = generate_config("t1")
    graph = delta_graph(checkpointer)
    await graph.ainvoke({"items": ["x"]}, config)
    store.put(ALICE, "city", {"city": "Boston"})
    latest = put(
        checkpointer, parent=checkpointer.get_tuple(config).config, user_id="alice"
    )
    assert await checkpointer.amemory_version(latest) == checkpointer.memory_version(
        latest
    )
    assert await checkpointer.aget_delta_channel_history(
        config=latest, channels=["items"]
    ) == checkpointer.get_delta_channel_history(config=latest, channels=["items"])
    listed = [t.config async for t in checkpointer.alist(config, limit=2)]
    assert listed == [t.config for t in checkpointer.list(config, limit=2)]


def test_many_threads_share_the_lock_safely(checkpointer: ChronoCheckpointer) -> None:
    errors: list[BaseException] = []

    def worker(name: str) -> None:
        try:
            parent = None
            for _ in range(5):
                parent = put(checkpointer, thread=name, parent=parent)
                checkpointer.put_writes(parent, [("ch", name)], "task")
        except BaseException as error:  # pragma: no cover - reported below
            errors.append(error)

    threads = [threading.Thread(target=worker, args=(f"t{i}",)) for i in range(4)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()
    assert errors == []
    assert len(list(checkpointer.list(None))) == 20


# -- on LangGraph's server ------------------------------------------------------


async def test_the_langgraph_server_finds_every_method_it_checks(
    checkpointer: ChronoCheckpointer, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The server's adapter for a custom checkpointer (in `langgraph_api`) looks
    for `aget_iter`, `adelete_thread`, `adelete_for_runs`, `acopy_thread` and
    `aprune`, and degrades (fallbacks, refused requests) for each one missing."""
    # What `langgraph dev` sets before `langgraph_api` reads its config.
    for name, value in [
        ("REDIS_URI", "fake"),
        ("DATABASE_URI", ":memory:"),
        ("MIGRATIONS_PATH", "__inmem"),
    ]:
        monkeypatch.setenv(name, value)
    # A test dependency (langgraph-cli[inmem]): if a release moves the check,
    # this fails, as a skip would hide what the server then degrades.
    adapter_module = importlib.import_module("langgraph_api._checkpointer._adapter")
    found = adapter_module.CheckpointerCapabilities.from_type(ChronoCheckpointer)
    assert all(getattr(found, name) for name in found.__slots__)
    server = adapter_module._CustomCheckpointerAdapter(checkpointer, found)
    first = put(checkpointer)
    latest = put(checkpointer, parent=first)
    thread = generate_config("t1")
    assert [t.config async for t in await server.aget_iter(thread)] == [latest]
    assert [t.config async for t in await server.aget_iter(first)] == [first]
    assert [t.config for t in checkpointer.get_iter(first)] == [first]
    assert not [t async for t in await server.aget_iter(generate_config("none"))]
    assert not list(checkpointer.get_iter(generate_config("none")))
    await server.acopy_thread("t1", "t2")
    await server.aprune(["t1"], strategy="keep_latest")
    assert [t.config for t in checkpointer.list(thread)] == [latest]
    await server.adelete_thread("t1")
    assert checkpointer.get_tuple(thread) is None
    assert len(list(checkpointer.list(generate_config("t2")))) == 2
