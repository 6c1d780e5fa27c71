"""`chronomem migrate`: a store copied, history and checkpoints included, from
SQLite to PostgreSQL (a real private server, testsupport/pg.py) or to another SQLite
file, answers every question as the source does.

The copy is checked here with the public API on both sides (`log`, `history`,
`as_of`, `memory_version`), not only with the module's own `verify_copy`.
"""

from __future__ import annotations

import json
import os
import random
import signal
import subprocess
import sys
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import psycopg
import pytest
from langchain_core.runnables import RunnableConfig
from langgraph.checkpoint.postgres import PostgresSaver
from langgraph.graph import START, StateGraph
from langgraph.store.base import BaseStore
from psycopg.conninfo import conninfo_to_dict
from typing_extensions import TypedDict

from langgraph_chronomem import ChronoCheckpointer, ChronoStore, open_chronomem
from langgraph_chronomem.cli import main
from langgraph_chronomem.engine.types import CommitMeta, Write
from langgraph_chronomem.errors import ConfigError
from langgraph_chronomem.migrate import (
    DestinationNotEmptyError,
    copy_checkpoints,
    copy_store,
    verify_copy,
)
from testsupport.pg import PostgresServer, pg_server  # noqa: F401  (fixture)

REPO = Path(__file__).resolve().parent.parent
COMMITS = 10_000
SCOPES = [("memories", f"user{n}") for n in range(20)]
ALICE = ("memories", "alice")


def build(path: Path, commits: int = COMMITS) -> Path:
    """A store with `commits` commits over 20 scopes: puts, deletes and batches
    by several authors, with reasons, labels and TTLs, written through the
    engine 1000 commits per transaction; then a rollback, a revert, and three
    commits a reset removes, so the source's counters run 3 past its last seq."""
    rng = random.Random(7)
    with ChronoStore.from_path(path, scope_depth=2, synchronous="NORMAL") as store:
        made = 0
        while made < commits - 5:
            with store._engine.transaction(write=True) as tx:
                for _ in range(min(1000, commits - 5 - made)):
                    scope = rng.choice(SCOPES)
                    writes = [
                        Write(
                            scope,
                            f"fact{rng.randrange(40)}",
                            None
                            if rng.random() < 0.1
                            else {"text": f"fact {rng.randrange(10**6)}"},
                            ttl_minutes=rng.choice([None, None, 60.0]),
                        )
                        for _ in range(rng.choice([1, 1, 1, 2]))
                    ]
                    meta = CommitMeta(
                        author=rng.choice(["agent", "alice", None]),
                        reason=rng.choice([None, "the user said so"]),
                        labels={"thread_id": f"t{rng.randrange(5)}"},
                    )
                    made += len(tx.commit(writes, meta))
        busiest = sorted(SCOPES, key=store.head, reverse=True)
        store.rollback(busiest[0], to=store.head(busiest[0]) // 2, author="ops")
        store.revert(busiest[1], store.head(busiest[1]), reason="wrong")
        for n in range(3):  # the last seqs given, then removed for good
            store.put(SCOPES[2], "secret", {"text": f"poisoned {n}"})
        store.reset(SCOPES[2], to=store.head(SCOPES[2]) - 3)
    return path


@pytest.fixture
def pg_url(pg_server: PostgresServer) -> str:  # noqa: F811
    """A fresh, empty database, as the `postgresql://` URL users write (the
    server listens on a unix socket: `host` is its directory)."""
    info = conninfo_to_dict(pg_server.create_database("migrate"))
    return (
        f"postgresql://{info['user']}@/{info['dbname']}"
        f"?host={info['host']}&port={info['port']}"
    )


@pytest.fixture(scope="module")
def big(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """10k commits (a little fewer after the reset), built once."""
    return build(tmp_path_factory.mktemp("big") / "memory")


def assert_same_answers(source: Any, dest: Any) -> None:
    """`log`, every item's `history`, and `as_of` at HEAD and at sampled
    versions answer alike, through the public API of each store."""
    with (
        ChronoStore.from_path(source, read_only=True) as a,
        ChronoStore.from_path(dest, read_only=True) as b,
    ):
        assert a.stats().scopes == b.stats().scopes
        assert a.stats().last_seq == b.stats().last_seq
        rng = random.Random(1)
        for stats in a.stats().scopes:
            scope = stats.scope
            log = a.log(scope)
            assert log == b.log(scope)
            items = {(c.namespace, c.key) for commit in log for c in commit.changes}
            for namespace, key in sorted(items)[:10]:
                assert a.history(namespace, key) == b.history(namespace, key)
            for version in {stats.head, rng.randint(1, stats.head)}:
                theirs, ours = a.as_of(scope, version), b.as_of(scope, version)
                assert theirs.search(scope, limit=1000) == ours.search(
                    scope, limit=1000
                )


def commits_at(url: str) -> int:
    """How many commits a PostgreSQL destination holds so far (0 before its
    tables exist)."""
    with psycopg.connect(url, autocommit=True) as conn:
        if conn.execute("SELECT to_regclass('commits')").fetchone()[0] is None:
            return 0
        return int(conn.execute("SELECT count(*) FROM commits").fetchone()[0])


# -- the log ---------------------------------------------------------------------


def test_10k_commits_reach_postgres_with_identical_history(
    big: Path, pg_url: str
) -> None:
    report = copy_store(big, pg_url, batch_size=500)

    assert report.differences == ()
    assert report.copied_commits == report.commits == COMMITS - 3
    assert_same_answers(big, pg_url)
    with ChronoStore.from_path(big, read_only=True) as source:
        last = source.stats().last_seq
    with ChronoStore.from_conn_string(pg_url) as copy:
        stats = copy.stats()
        assert {p.name: p.behind for p in stats.projections} == {"full-text": 0}
        # The copy never gives a seq the source gave, the reset ones included.
        copy.put(SCOPES[4], "new", {"text": "written to the copy"})
        assert copy.log(SCOPES[4], limit=1)[0].seq == last + 3 + 1


def test_sqlite_to_sqlite_keeps_the_id_floors(tmp_path: Path) -> None:
    source = build(tmp_path / "source", commits=300)
    with ChronoStore.from_path(source) as store:
        before = store.stats().last_seq
    report = copy_store(source, tmp_path / "copy")
    assert report.differences == ()
    assert_same_answers(source, tmp_path / "copy")
    with (
        ChronoStore.from_path(source) as a,
        ChronoStore.from_path(tmp_path / "copy") as b,
    ):
        a.put(SCOPES[5], "next", {"text": "x"})
        b.put(SCOPES[5], "next", {"text": "x"})
        assert a.log(SCOPES[5], limit=1)[0].seq == b.log(SCOPES[5], limit=1)[0].seq
        assert b.log(SCOPES[5], limit=1)[0].seq == before + 3 + 1  # past the reset


def test_tags_travel_with_the_copy_and_follow_a_rerun(
    tmp_path: Path, pg_url: str
) -> None:
    """Every tag, one a reset left destroyed included, reaches PostgreSQL and
    comes back; a tag moved or removed at the source follows on the next run;
    a tag changed in the copy is a difference the check reports."""
    source = build(tmp_path / "source", commits=60)
    scope = SCOPES[0]
    with ChronoStore.from_path(source) as store:
        store.tag(scope, "start", 1)
        store.tag(scope, "now")
        store.tag(SCOPES[1], "now")
        store.put(scope, "later", {"text": "soon gone"})
        store.tag(scope, "gone")
        store.reset(scope, to="now")
        tagged = {sc: store.tags(sc) for sc in SCOPES}
    assert copy_store(source, pg_url).differences == ()
    with ChronoStore.from_conn_string(pg_url) as copy:
        assert {sc: copy.tags(sc) for sc in SCOPES} == tagged
        assert [t.destroyed for t in copy.tags(scope)] == [False, False, True]
    with ChronoStore.from_path(source) as store:
        store.untag(scope, "gone")
        store.tag(scope, "start", 2, force=True)
        tagged = {sc: store.tags(sc) for sc in SCOPES}
    assert copy_store(source, pg_url).differences == ()
    with ChronoStore.from_conn_string(pg_url) as copy:
        assert {sc: copy.tags(sc) for sc in SCOPES} == tagged
    back = tmp_path / "back"
    assert copy_store(pg_url, back).differences == ()
    with ChronoStore.from_path(back) as store:
        assert {sc: store.tags(sc) for sc in SCOPES} == tagged
        store.untag(scope, "start")
    found = verify_copy(source, back)
    assert [(d.check, d.where) for d in found] == [("tags", "/".join(scope))]


def test_a_killed_copy_resumes_and_ends_identical(big: Path, pg_url: str) -> None:
    command = [
        sys.executable, "-m", "langgraph_chronomem.cli", "migrate",
        str(big), pg_url, "--batch-size", "50", "--json",
    ]  # fmt: skip
    env = {**os.environ, "CHRONOMEM_OFFLINE": "1"}
    child = subprocess.Popen(
        command, cwd=REPO, env=env, stdout=subprocess.PIPE, stderr=subprocess.PIPE
    )
    try:
        deadline = time.monotonic() + 120
        while commits_at(pg_url) < 200:
            assert child.poll() is None, (child.returncode, child.communicate())
            assert time.monotonic() < deadline
            time.sleep(0.01)
        child.send_signal(signal.SIGKILL)
    finally:
        child.wait()
    partial = commits_at(pg_url)
    assert 200 <= partial < COMMITS - 100, "killed too late to test a resume"

    report = copy_store(big, pg_url, batch_size=500)

    assert report.resumed
    assert report.copied_commits == report.commits - partial
    assert report.differences == ()
    assert_same_answers(big, pg_url)


def test_a_destination_with_other_data_is_refused_and_unchanged(
    tmp_path: Path, pg_url: str
) -> None:
    source = build(tmp_path / "source", commits=100)
    with ChronoStore.from_conn_string(pg_url, scope_depth=2) as other:
        other.put(ALICE, "city", {"city": "Paris"})
        before = other.stats()
    with pytest.raises(DestinationNotEmptyError, match="already holds 1 commits"):
        copy_store(source, pg_url)
    with ChronoStore.from_conn_string(pg_url) as other:
        assert other.stats() == before
        assert other.log(ALICE)[0].seq == 1
    assert main(["migrate", str(source), pg_url]) == 1


def test_a_copy_of_a_copy_written_to_since_is_refused(tmp_path: Path) -> None:
    source = build(tmp_path / "source", commits=100)
    copy_store(source, tmp_path / "copy")
    with ChronoStore.from_path(tmp_path / "copy") as copy:
        copy.put(ALICE, "city", {"city": "Paris"})
    with ChronoStore.from_path(source) as store:
        store.put(ALICE, "city", {"city": "Rome"})
    with pytest.raises(DestinationNotEmptyError, match="does not have"):
        copy_store(source, tmp_path / "copy")


def test_bad_requests_change_nothing(tmp_path: Path) -> None:
    source = build(tmp_path / "source", commits=100)
    with pytest.raises(ConfigError, match="same store"):
        copy_store(source, source)
    with ChronoStore.from_path(tmp_path / "flat", scope_depth=1):
        pass
    with pytest.raises(ConfigError, match="scope_depth"):
        copy_store(source, tmp_path / "flat")
    with pytest.raises(ConfigError, match="batch_size"):
        copy_store(source, tmp_path / "new", batch_size=0)
    assert not (tmp_path / "new").exists()


def test_verify_reports_a_changed_copy(tmp_path: Path) -> None:
    source = build(tmp_path / "source", commits=100)
    copy_store(source, tmp_path / "copy")
    with (
        ChronoStore.from_path(tmp_path / "copy") as copy,
        copy._engine.transaction(write=True) as tx,
    ):
        tx.cur.execute("UPDATE commits SET author = 'mallory' WHERE seq = 7")
    found = verify_copy(source, tmp_path / "copy")
    assert found[0].check == "log" and "mallory" in found[0].detail
    assert {d.check for d in found} == {"log", "history"}  # its items' authors


# -- checkpoints -----------------------------------------------------------------


class State(TypedDict):
    seen: list[str]


def recall(state: State, config: RunnableConfig, *, store: BaseStore) -> dict[str, Any]:
    me = ("memories", config["configurable"]["user_id"])
    seen = sorted(item.key for item in store.search(me))
    store.put(me, f"fact{len(seen) + 1}", {"n": len(seen) + 1})
    return {"seen": seen}


def run_graph(store: ChronoStore, checkpointer: ChronoCheckpointer) -> None:
    """Two threads on alice's memory and one on bob's, with a replay that
    rewinds memory: alice's second thread writes after the first's last
    checkpoint, so a stamp recomputed at the copy would name a later version."""
    graph = (
        StateGraph(State)
        .add_node(recall)
        .add_edge(START, "recall")
        .compile(checkpointer=checkpointer, store=store)
    )
    first = {"configurable": {"thread_id": "t1", "user_id": "alice"}}
    for _ in range(3):
        graph.invoke({"seen": []}, first)
    turn2 = [s for s in graph.get_state_history(first) if s.next == ("recall",)][1]
    graph.invoke(
        None,
        {"configurable": {**first["configurable"], **turn2.config["configurable"]}},
    )
    graph.invoke({"seen": []}, {"configurable": {"thread_id": "t2", "user_id": "bob"}})
    for _ in range(2):
        graph.invoke(
            {"seen": []}, {"configurable": {"thread_id": "t3", "user_id": "alice"}}
        )


def assert_same_checkpoints(
    source: ChronoCheckpointer, dest: ChronoCheckpointer
) -> int:
    count = 0
    for found in source.list(None):
        copy = dest.get_tuple(found.config)
        assert copy is not None
        assert (copy.checkpoint, copy.metadata, copy.parent_config) == (
            found.checkpoint,
            found.metadata,
            found.parent_config,
        )
        assert copy.pending_writes == found.pending_writes
        assert dest.memory_version(found.config, ALICE) == source.memory_version(
            found.config, ALICE
        )
        count += 1
    assert count == sum(1 for _ in dest.list(None))
    return count


@pytest.fixture
def graph_store(tmp_path: Path) -> Iterator[Path]:
    path = tmp_path / "graph"
    store, checkpointer = open_chronomem(path, scope_depth=2)
    with store:
        run_graph(store, checkpointer)
    yield path


def test_checkpoints_keep_their_memory_versions(
    graph_store: Path, tmp_path: Path
) -> None:
    report = copy_store(graph_store, tmp_path / "copy")

    assert report.differences == ()
    assert report.checkpoints == report.copied_checkpoints > 10
    source, source_cp = open_chronomem(graph_store, scope_depth=2)
    dest, dest_cp = open_chronomem(tmp_path / "copy", scope_depth=2)
    with source, dest:
        assert assert_same_checkpoints(source_cp, dest_cp) == report.checkpoints
        versions = {
            source_cp.memory_version(c.config, ALICE) for c in source_cp.list(None)
        }
        assert len(versions) > 3  # the stamps name several versions
    again = copy_store(graph_store, tmp_path / "copy")
    assert (again.copied_commits, again.copied_checkpoints, again.resumed) == (
        0,
        0,
        False,
    )


def test_checkpoints_to_postgres(graph_store: Path, pg_url: str) -> None:
    report = copy_store(graph_store, pg_url)

    assert report.differences == ()
    assert report.checkpoints == report.copied_checkpoints > 10
    assert_same_answers(graph_store, pg_url)
    source, source_cp = open_chronomem(graph_store, scope_depth=2)
    dest, dest_cp = open_chronomem(pg_url, scope_depth=2)
    with source, dest:
        assert assert_same_checkpoints(source_cp, dest_cp) == report.checkpoints


def test_checkpoints_can_stay_behind(graph_store: Path, pg_url: str) -> None:
    report = copy_store(graph_store, pg_url, checkpoints=False)

    assert report.differences == () and report.checkpoints == 0
    dest, dest_cp = open_chronomem(pg_url, scope_depth=2)
    with dest:
        assert list(dest_cp.list(None)) == []


# -- the command line ------------------------------------------------------------


def test_cli_round_trip(
    graph_store: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    dest = tmp_path / "copy"
    assert main(["migrate", str(graph_store), str(dest), "--json"]) == 0
    out = json.loads(capsys.readouterr().out)
    assert out["differences"] == []
    assert out["copied_commits"] == out["commits"] > 5
    assert out["copied_checkpoints"] == out["checkpoints"] > 10
    assert out["resumed"] is False

    assert main(["migrate", str(graph_store), str(dest), "--verify-only"]) == 0
    assert "answer alike" in capsys.readouterr().out

    with ChronoStore.from_path(dest) as copy:
        copy.put(ALICE, "extra", {"n": 0})
    assert main(["migrate", str(graph_store), str(dest), "--verify-only"]) == 1
    shown = capsys.readouterr().out
    assert "differences found" in shown and "memories/alice" in shown

    assert main(["migrate", str(tmp_path / "nowhere"), str(dest)]) == 1
    assert "no store at" in capsys.readouterr().err


def test_checkpoints_copy_into_langgraphs_postgres_saver(
    graph_store: Path, pg_url: str
) -> None:
    """Any saver takes the copy, here LangGraph's own `PostgresSaver`; pending
    writes keep their order though the API does not say the task paths it
    sorts them by (task `z` runs before task `a` here)."""
    store, source = open_chronomem(graph_store, scope_depth=2)
    with store:
        latest = next(iter(source.list(None))).config
        source.put_writes(latest, [("seen", ["z"])], "task-z", "~0")
        source.put_writes(latest, [("seen", ["a"])], "task-a", "~1")
        with PostgresSaver.from_conn_string(pg_url) as saver:
            saver.setup()
            written = copy_checkpoints(source, saver)

            assert written == sum(1 for _ in source.list(None)) > 10
            for found in source.list(None):
                copy = saver.get_tuple(found.config)
                assert copy is not None
                assert copy.metadata == found.metadata
                assert copy.parent_config == found.parent_config
                assert copy.checkpoint == found.checkpoint
                assert copy.pending_writes == found.pending_writes
            tasks = [w[0] for w in saver.get_tuple(latest).pending_writes]
            assert tasks[-2:] == ["task-z", "task-a"]
            assert copy_checkpoints(source, saver) == 0  # all there already


def test_a_store_comes_back_from_postgres_unchanged(
    graph_store: Path, pg_url: str, tmp_path: Path
) -> None:
    copy_store(graph_store, pg_url)
    report = copy_store(pg_url, tmp_path / "back")

    assert report.differences == ()
    assert_same_answers(graph_store, tmp_path / "back")
    source, source_cp = open_chronomem(graph_store, scope_depth=2)
    back, back_cp = open_chronomem(tmp_path / "back", scope_depth=2)
    with source, back:
        assert assert_same_checkpoints(source_cp, back_cp) == report.checkpoints
        source.put(ALICE, "next", {"n": 1})
        back.put(ALICE, "next", {"n": 1})
        assert source.log(ALICE, limit=1)[0].seq == back.log(ALICE, limit=1)[0].seq


def test_the_cli_refuses_a_source_database_without_a_store(
    pg_url: str, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    assert main(["migrate", pg_url, str(tmp_path / "copy")]) == 1
    assert "no store in" in capsys.readouterr().err
    assert not (tmp_path / "copy").exists()
