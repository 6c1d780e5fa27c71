"""ChronoCheckpointer on PostgreSQL, on a real private server (testsupport/pg.py).

LangGraph's conformance suite (level FULL), the time-travel tests
(tests/test_time_travel.py) and the checkpointer tests that hold for any
database (tests/test_checkpoint.py) run here unchanged on a store opened by
URL; the rest is what PostgreSQL adds: `open_chronomem(url)` and
`shared_chronomem(url)`, tables beside LangGraph's own `PostgresSaver`, and
separate processes sharing one thread and its memory.
"""

from __future__ import annotations

import subprocess
import sys
import textwrap
from collections.abc import AsyncIterator, Iterator
from itertools import count
from pathlib import Path

import psycopg
import pytest
from langgraph.checkpoint.conformance import checkpointer_test, validate
from langgraph.checkpoint.postgres import PostgresSaver
from langgraph.store.base import IndexConfig

from langgraph_chronomem import (
    ChronoCheckpointer,
    ChronoStore,
    open_chronomem,
    shared_chronomem,
)
from langgraph_chronomem.errors import StorageError, VersionError
from tests.test_checkpoint import (  # noqa: F401  (any database, run here)
    assert_full_conformance,
    put,
    test_a_graphs_state_metadata_is_what_langgraphs_own_saver_gives,
    test_an_old_checkpoint_moves_its_position_out_of_the_metadata,
    test_async_twins_give_the_sync_answers,
    test_bad_metadata_is_refused_and_writes_nothing,
    test_bad_metadata_on_a_fork_leaves_memory_alone,
    test_copy_and_delete_leave_memory_alone,
    test_delta_channel_history_matches_the_base_walk,
    test_each_checkpoint_records_the_memory_position,
    test_keep_latest_prune_keeps_what_delta_channels_need,
    test_list_pages_without_holding_the_lock,
    test_many_threads_share_the_lock_safely,
    test_memory_version_derives_any_scope,
    test_metadata_is_stored_whole_and_filters_by_json_type,
    test_metadata_round_trips_exactly_as_written,
    test_pending_writes_come_in_writes_sort_key_order,
    test_position_stops_before_writes_from_the_checkpoint_itself,
    test_the_langgraph_server_finds_every_method_it_checks,
)
from tests.test_compat import embed
from tests.test_conditional_writes import (  # noqa: F401  (any database, run here)
    test_a_write_on_the_value_it_read_succeeds_once,
    test_a_write_on_the_version_it_read,
    test_version_zero_means_it_must_not_exist,
)
from tests.test_postgres_store import _tables, _url, url  # noqa: F401  (fixture)
from tests.test_reexecution import (  # noqa: F401  (real graphs, run here)
    test_a_retried_node_commits_its_write_once,
    test_a_task_run_again_still_commits_what_it_now_writes_differently,
    test_a_write_after_an_interrupt_is_committed_once,
    test_a_write_before_an_interrupt_is_committed_once,
    test_writes_outside_a_task_are_never_skipped,
)
from tests.test_revert_matching import (  # noqa: F401  (real graphs, run here)
    graph,
    test_a_reviewer_reverts_what_web_search_taught_in_one_commit,
    test_an_item_changed_since_is_a_conflict_naming_who,
    test_by_run_node_and_author,
    test_the_log_filters_by_source_run_thread_and_node,
)
from tests.test_time_travel import (  # noqa: F401  (real graphs, run here)
    ALICE,
    at,
    before,
    build,
    memory,
    run,
    test_a_fork_keeps_what_three_other_threads_wrote,
    test_a_proposal_of_a_run_time_travel_undid_is_rejected,
    test_a_replay_in_exit_mode_keeps_its_own_writes,
    test_a_replay_sees_memory_as_the_first_run_did,
    test_an_item_another_thread_wrote_over_keeps_that_threads_value,
    test_another_users_memory_is_untouched,
    test_async_replay_and_fork,
    test_every_checkpoint_records_what_its_next_node_saw,
    test_keep_leaves_memory_alone,
    test_looking_at_the_past_never_rewinds,
    test_normal_continuation_never_rewinds,
    test_replaying_a_thread_keeps_what_the_users_other_threads_wrote,
    test_the_rewind_can_be_undone,
    test_the_whole_scope_rewind_is_there_when_asked,
    test_time_travel_without_a_user_replays_and_says_memory_stayed,
    test_update_state_on_the_past_rewinds_before_returning,
)
from testsupport.pg import PostgresServer, pg_server  # noqa: F401  (fixture)

TABLES = {"chronomem_checkpoints", "chronomem_checkpoint_writes"}


@pytest.fixture
def store(url: str) -> Iterator[ChronoStore]:  # noqa: F811
    """One timeline per user, as the imported tests expect: depth 2."""
    with ChronoStore.from_conn_string(url, scope_depth=2) as opened:
        yield opened


@pytest.fixture
def checkpointer(store: ChronoStore) -> ChronoCheckpointer:
    return ChronoCheckpointer(store)


# -- LangGraph's published conformance suite ---------------------------------------


async def test_conformance_suite_passes_every_capability(
    pg_server: PostgresServer,  # noqa: F811
) -> None:
    fresh = count()

    @checkpointer_test(name="ChronoCheckpointer on PostgreSQL")
    async def factory() -> AsyncIterator[ChronoCheckpointer]:
        database = _url(pg_server.create_database(f"suite{next(fresh)}"))
        store, saver = open_chronomem(database, scope_depth=2, max_connections=2)
        try:
            yield saver
        finally:
            store.close()

    assert_full_conformance(await validate(factory))


# -- one database -------------------------------------------------------------------


def test_open_chronomem_puts_checkpoints_beside_the_log_and_reopens_them(
    url: str,  # noqa: F811
) -> None:
    store, saver = open_chronomem(url, scope_depth=2, max_connections=3)
    with store:
        assert saver.store is store and saver._engine is store._engine
        graph, _ = build(store)
        graph.invoke({"turn": 1, "seen": []}, run())
        first = graph.get_state(run())
    assert set(_tables(url)) >= TABLES
    store, saver = open_chronomem(url)  # the depth the database was made with
    with store:
        graph, saver = build(store)
        assert graph.get_state(run()).values == first.values
        assert saver.memory_version(first.config) == 1
        assert memory(store) == ["turn1"]


def test_open_chronomem_passes_the_stores_options_through(
    url: str,  # noqa: F811
    tmp_path: Path,
) -> None:
    index: IndexConfig = {"dims": 2, "embed": embed, "fields": ["text"]}
    store, _ = open_chronomem(
        url,
        scope_depth=2,
        index=index,
        chroma_path=tmp_path / "vectors",
        max_connections=2,
    )
    with store:
        store.put(ALICE, "home", {"text": "I moved to Paris"})
        store.put(ALICE, "pet", {"text": "a cat named Tom"})
        assert store.search(ALICE, query="Paris")[0].key == "home"
        assert store._engine._owned.max_size == 2  # type: ignore[attr-defined]


def test_memory_version_refuses_a_checkpoint_without_a_position(
    checkpointer: ChronoCheckpointer,
) -> None:
    saved = put(checkpointer)
    with checkpointer._engine.transaction(write=True) as tx:  # as another saver
        tx.cur.execute("UPDATE chronomem_checkpoints SET memory_seq = NULL")
    with pytest.raises(VersionError, match="no memory position"):
        checkpointer.memory_version(saved, ALICE)


def test_langgraphs_postgres_saver_keeps_its_tables_in_the_same_database(
    url: str,  # noqa: F811
) -> None:
    """A database that already holds `PostgresSaver`'s checkpoints (as the
    store-only setup suggested) opens, and both savers keep their own."""
    with PostgresSaver.from_conn_string(url) as theirs:
        theirs.setup()
        put(theirs, thread="theirs")  # type: ignore[arg-type]
        store, ours = open_chronomem(url, scope_depth=2)
        with store:
            put(ours, thread="ours")
            assert [t.config["configurable"]["thread_id"] for t in ours.list(None)] == [
                "ours"
            ]
            assert [
                t.config["configurable"]["thread_id"] for t in theirs.list(None)
            ] == ["theirs"]


async def test_shared_chronomem_gives_one_pair_per_url(url: str) -> None:  # noqa: F811
    async with shared_chronomem(url, scope_depth=2) as (store, _):
        async with shared_chronomem(url, scope_depth=2) as (_, saver):
            assert saver.store is store
            graph, _ = build(store)
            await graph.ainvoke({"turn": 1, "seen": []}, run())
            assert (await saver.aget_tuple(run())) is not None
        store.put(ALICE, "still", {"open": True})  # the first user keeps it open
    with pytest.raises(StorageError, match="closed"):
        store.put(ALICE, "after", {"open": False})


# -- several processes ---------------------------------------------------------------

# One turn of tests/test_time_travel.py's graph, in a process of its own.
TURN = """
import sys
from tests.test_time_travel import build, run
from langgraph_chronomem import open_chronomem

store, _ = open_chronomem(sys.argv[1], scope_depth=2)
with store:
    graph, _ = build(store)
    graph.invoke({"turn": int(sys.argv[2]), "seen": []}, run())
"""


def _turn(database: str, turn: int) -> None:
    done = subprocess.run(
        [sys.executable, "-c", textwrap.dedent(TURN), database, str(turn)],
        cwd=Path(__file__).resolve().parent.parent,
        capture_output=True,
        text=True,
        timeout=120,
        check=False,
    )
    assert done.returncode == 0, done.stderr


def test_processes_share_threads_and_a_replay_rewinds_what_another_wrote(
    url: str,  # noqa: F811
) -> None:
    """Turns run by other processes (other app servers) are checkpointed in
    the one database; replaying one here rewinds the memory they wrote, and
    the next process sees the rewind."""
    _turn(url, 1)
    _turn(url, 2)
    with ChronoStore.from_conn_string(url) as store:
        graph, _ = build(store)
        assert graph.get_state(run()).values["seen"] == [[], ["turn1"]]
        graph.invoke(None, at(before(graph, "read", 2, run())))
        assert memory(store) == ["turn1", "turn2"]  # the replay wrote turn2 again
        assert [c.author for c in store.log(ALICE)][:2] == [None, "time-travel"]
    _turn(url, 3)
    with psycopg.connect(url) as conn:
        threads = conn.execute(
            "SELECT DISTINCT thread_id FROM chronomem_checkpoints"
        ).fetchall()
    assert threads == [("t1",)]
    with ChronoStore.from_conn_string(url) as store:
        graph, _ = build(store)
        assert graph.get_state(run()).values["seen"][-1] == ["turn1", "turn2"]
