"""ChronoStore on PostgreSQL as a user opens it: from a connection string or a pool.

A real private server (testsupport/pg.py) and real psycopg throughout. LangGraph's
store contract (tests/test_compat.py), the differences ChronoStore keeps on
purpose (tests/test_store_contract.py) and the graph tests (tests/test_graph.py)
run here unchanged on `ChronoStore.from_conn_string`; the rest is what opening
a store by URL adds: routing (`from_path`, `open_chronomem`), the checkpointer
beside it, Chroma for `index=`, the
`chronomem` command line given a URL, and importing the package without psycopg.
"""

from __future__ import annotations

import concurrent.futures
import contextlib
import itertools
import json
import os
import subprocess
import sys
from collections.abc import AsyncIterator, Iterator
from pathlib import Path
from typing import Any

import psycopg
import pytest
from langgraph.store.base import IndexConfig, TTLConfig
from langgraph.store.postgres import PostgresStore
from psycopg.conninfo import conninfo_to_dict
from psycopg.rows import dict_row
from psycopg_pool import ConnectionPool

from langgraph_chronomem import (
    ChronoCheckpointer,
    ChronoStore,
    ConfigError,
    StorageError,
    open_chronomem,
    shared_chronomem,
)
from langgraph_chronomem.cli import main
from langgraph_chronomem.engine import PostgresEngine
from langgraph_chronomem.errors import VersionNotFound
from tests.test_compat import (  # noqa: F401  (LangGraph's contract, run here)
    Driver,
    embed,
    test_an_empty_query_is_a_plain_search,
    test_an_item_with_several_texts_is_found_once_by_its_best,
    test_an_update_is_embedded_again,
    test_batch_keeps_the_last_put_to_a_key,
    test_batch_reads_see_the_state_before_its_writes,
    test_batch_returns_results_in_op_order,
    test_concurrent_calls_lose_no_write,
    test_embeddings_are_the_index_model,
    test_filters_never_leak_through_their_text,
    test_filters_select_the_documented_items,
    test_index_on_a_put_replaces_the_configured_fields,
    test_invalid_namespaces_are_refused,
    test_items_put_with_index_false_are_not_found_by_meaning,
    test_list_namespaces_forgets_emptied_namespaces,
    test_list_namespaces_matches_labels_and_pages,
    test_put_get_update_delete,
    test_query_finds_one_item_among_many_identical_vectors,
    test_query_pages_follow_the_ranking,
    test_query_ranks_by_cosine_similarity,
    test_query_with_a_filter_ranks_what_the_filter_keeps,
    test_search_lists_the_newest_update_first,
    test_search_pages_split_the_listing,
    test_search_prefix_matches_whole_labels,
    test_ttl_expires_refreshes_and_keeps,
    test_ttl_sweeper_expires_in_the_background_and_stops,
)
from tests.test_graph import (  # noqa: F401  (real compiled graphs, run here)
    test_after_a_rollback_the_next_run_reads_the_restored_memory,
    test_async_nodes_use_the_async_store_methods,
    test_commits_carry_the_runs_thread_checkpoint_and_node,
    test_nodes_write_versions_and_read_head,
    test_tools_get_the_store_through_langgraph_injection,
)
from tests.test_store_contract import (  # noqa: F401  (ChronoStore's own contract)
    reference,
    test_a_digit_in_a_filter_path_names_a_key_never_a_list_position,
    test_abatch_is_one_commit,
    test_an_update_keeps_created_at_in_utc,
    test_bad_filters_raise_a_typed_error,
    test_filter_keys_are_matched_literally,
    test_namespaces_sort_label_by_label,
    test_nested_object_filter_matches_inside_the_object,
    test_order_comparisons_never_mix_strings_and_numbers,
    test_recreated_item_gets_a_new_created_at,
)
from testsupport.pg import PostgresServer, pg_server  # noqa: F401  (fixture)

ALICE = ("memories", "alice")
SHOWN = {"text": "I moved to Paris"}


def _url(conninfo: str) -> str:
    """A libpq key=value string as the `postgresql://` URL users write (the
    server listens on a unix socket: `host` is its directory)."""
    info = conninfo_to_dict(conninfo)
    return (
        f"postgresql://{info['user']}@/{info['dbname']}"
        f"?host={info['host']}&port={info['port']}"
    )


@pytest.fixture
def url(pg_server: PostgresServer) -> str:  # noqa: F811
    """A fresh, empty database, as a URL."""
    return _url(pg_server.create_database())


@pytest.fixture
def store(url: str) -> Iterator[ChronoStore]:
    """One timeline per user, as tests/test_graph.py expects: depth 2."""
    with ChronoStore.from_conn_string(url, scope_depth=2) as opened:
        yield opened


@pytest.fixture
def astore(store: ChronoStore) -> ChronoStore:
    return store


@pytest.fixture(params=["sync", "async"])
def ours(request: pytest.FixtureRequest, url: str) -> Iterator[Driver]:
    """A store with default settings (one timeline), through either API."""
    with ChronoStore.from_conn_string(url) as opened:
        yield Driver(opened, asynchronous=request.param == "async")


@pytest.fixture(params=["sync", "async"])
async def open_store(
    request: pytest.FixtureRequest,
    pg_server: PostgresServer,  # noqa: F811
    tmp_path: Path,
) -> AsyncIterator[Any]:
    """tests/test_compat.py's opener: each store in its own database; with
    `index=`, its vectors in an embedded Chroma of its own."""
    count = itertools.count()
    async with contextlib.AsyncExitStack() as stack:

        async def open_(
            *, index: IndexConfig | None = None, ttl: TTLConfig | None = None
        ) -> Driver:
            chroma = None if index is None else tmp_path / f"chroma{next(count)}"
            store = stack.enter_context(
                ChronoStore.from_conn_string(
                    _url(pg_server.create_database()),
                    index=index,
                    ttl=ttl,
                    chroma_path=chroma,
                )
            )
            return Driver(store, asynchronous=request.param == "async")

        yield open_


# -- opening --------------------------------------------------------------------


def test_a_store_opened_by_url_keeps_its_history_across_opens(url: str) -> None:
    with ChronoStore.from_conn_string(url, scope_depth=2) as store:
        store.put(ALICE, "city", {"city": "Boston"})
        store.put(ALICE, "city", {"city": "Paris"})
        store.put(ALICE, "pet", {"kind": "cat"})
        store.revert(ALICE, 3)
        assert store.get(ALICE, "pet") is None
        store.rollback(ALICE, to=3)
    with ChronoStore.from_conn_string(url) as store:
        assert store.scope_depth == 2, "the depth is the database's"
        assert store.get(ALICE, "city").value == {"city": "Paris"}
        assert [c.op for c in store.log(ALICE)] == [
            "rollback", "revert", "put", "put", "put",
        ]  # fmt: skip
        assert [v.value for v in store.history(ALICE, "pet")] == [
            {"kind": "cat"}, None, {"kind": "cat"},
        ]  # fmt: skip
        past = store.as_of(ALICE, 1)
        assert past.get(ALICE, "city").value == {"city": "Boston"}
        assert past.get(ALICE, "pet") is None
        assert store.search(("memories",), filter={"kind": "cat"})[0].key == "pet"
        assert store.list_namespaces(prefix=("memories",)) == [ALICE]
        store.reset(ALICE, to=2)
        assert store.head(ALICE) == 2
        with pytest.raises(VersionNotFound):
            store.show(ALICE, 3)


def test_a_database_that_does_not_exist_fails_with_the_servers_words(
    url: str,
) -> None:
    """Not the pool's "initialization incomplete" after its retries."""
    params = conninfo_to_dict(url)
    missing = url.replace(f"/{params['dbname']}", "/no_such_memories")
    with pytest.raises(StorageError, match='"no_such_memories" does not exist'):
        ChronoStore.from_conn_string(missing)


def test_from_path_given_a_url_opens_the_database_not_a_directory(
    url: str, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.chdir(tmp_path)
    with ChronoStore.from_path(url, scope_depth=1) as store:
        assert isinstance(store._engine, PostgresEngine)
        store.put(("alice",), "city", {"city": "Paris"})
    assert list(tmp_path.iterdir()) == [], "no local directory named postgresql:"
    with ChronoStore.from_conn_string(url) as again:
        assert again.head(("alice",)) == 1
    with pytest.raises(ConfigError, match="synchronous"):
        ChronoStore.from_path(url, synchronous="NORMAL")


def test_a_keyword_connection_string_opens_the_database_not_a_directory(
    pg_server: PostgresServer,  # noqa: F811
    tmp_path: Path,
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    """libpq's `host=... dbname=...` form, as psycopg and PostgresStore take it,
    where a path goes: the database, never a local folder of that name."""
    monkeypatch.chdir(tmp_path)
    conninfo = pg_server.conninfo(pg_server.create_database())
    store, saver = open_chronomem(conninfo, scope_depth=2)
    with store:
        assert isinstance(saver.store._engine, PostgresEngine)
        store.put(ALICE, "city", {"city": "Paris"})
    with ChronoStore.from_path(conninfo) as again:
        assert again.head(ALICE) == 1
    assert list(tmp_path.iterdir()) == [], "no local directory named host=..."


def test_a_pool_is_shared_with_langgraphs_postgres_store(url: str) -> None:
    """One pool for both stores: PostgresStore's connections use `dict_row`,
    ChronoStore's cursors their own rows. Closing ChronoStore leaves it open."""
    with ConnectionPool(
        url, max_size=4, kwargs={"autocommit": True, "row_factory": dict_row}
    ) as pool:
        theirs = PostgresStore(pool)  # type: ignore[arg-type]
        theirs.setup()
        with ChronoStore.from_pool(pool, scope_depth=2) as ours:
            theirs.put(("docs",), "a", {"v": 1})
            ours.put(ALICE, "city", {"city": "Paris"})
            assert ours.get(ALICE, "city").value == {"city": "Paris"}
            assert theirs.get(("docs",), "a").value == {"v": 1}
        assert not pool.closed
        with pool.connection() as conn:
            assert conn.execute("SELECT count(*) AS n FROM commits").fetchone() == {
                "n": 1
            }


def test_a_connection_not_in_autocommit_is_refused(url: str) -> None:
    with (
        psycopg.connect(url) as conn,
        pytest.raises(ConfigError, match="autocommit=True"),
    ):
        ChronoStore.from_pool(conn)


# -- searching by meaning needs a Chroma --------------------------------------------


def test_index_without_a_chroma_is_refused_before_connecting(url: str) -> None:
    with pytest.raises(ConfigError, match=r"chroma_url='http://host:8000'"):
        ChronoStore.from_conn_string(url, index={"dims": 2, "embed": embed})
    with pytest.raises(ConfigError, match="not both"):
        ChronoStore.from_conn_string(
            url, index={"dims": 2, "embed": embed}, chroma_client=object(),
            chroma_path="x",
        )  # fmt: skip
    assert _tables(url) == [], "nothing was created"
    with (
        ChronoStore.from_conn_string(url) as plain,  # the undo search's vectors
        pytest.raises(ConfigError, match="chroma_path=DIR"),
    ):
        plain.reindex()


def test_a_chroma_client_holds_the_vectors(url: str, tmp_path: Path) -> None:
    import chromadb
    from chromadb.config import Settings

    client = chromadb.PersistentClient(
        path=str(tmp_path / "vectors"), settings=Settings(anonymized_telemetry=False)
    )
    index: IndexConfig = {"dims": 2, "embed": embed, "fields": ["text"]}
    with ChronoStore.from_conn_string(
        url, scope_depth=2, index=index, chroma_client=client
    ) as store:
        store.put(ALICE, "home", SHOWN)
        store.put(ALICE, "pet", {"text": "a cat named Tom"})
        (best, *_) = store.search(ALICE, query="Paris")
        assert best.key == "home"
    assert client.list_collections(), "the caller's client holds the collections"


def test_reopened_without_a_chroma_it_reads_and_writes_and_catches_up_later(
    url: str, tmp_path: Path
) -> None:
    """What `chronomem` does to a store with an index: reads and writes work,
    and the vectors catch up when a Chroma is given again."""
    index: IndexConfig = {"dims": 2, "embed": embed, "fields": ["text"]}
    chroma = tmp_path / "vectors"
    with ChronoStore.from_conn_string(url, index=index, chroma_path=chroma) as store:
        store.put(("notes",), "a", SHOWN)
    with ChronoStore.from_conn_string(url) as plain:
        plain.put(("notes",), "b", {"text": "Paris in the spring"})
        assert plain.get(("notes",), "b") is not None
    with ChronoStore.from_conn_string(url, index=index, chroma_path=chroma) as store:
        found = store.search(("notes",), query="Paris")
        assert sorted(i.key for i in found) == ["a", "b"]


# -- the checkpointer beside the store (tests/test_postgres_checkpoint.py for more) ---


def test_open_chronomem_on_a_url_opens_the_pair_there_and_nothing_local(
    url: str, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.chdir(tmp_path)
    store, saver = open_chronomem(url, scope_depth=2)
    with store:
        assert saver.store is store
        assert isinstance(store._engine, PostgresEngine)
    assert list(tmp_path.iterdir()) == [], "no local directory named postgresql:"
    assert {"commits", "chronomem_checkpoints"} <= set(_tables(url))


async def test_shared_chronomem_on_a_url_opens_the_pair_there_and_nothing_local(
    url: str, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.chdir(tmp_path)
    async with shared_chronomem(url, scope_depth=2) as (store, saver):
        assert saver.store is store
        assert isinstance(store._engine, PostgresEngine)
    assert list(tmp_path.iterdir()) == []
    assert {"commits", "chronomem_checkpoints"} <= set(_tables(url))


def test_a_checkpointer_over_a_postgres_store_adds_only_its_tables(
    store: ChronoStore, url: str
) -> None:
    before = _tables(url)
    ChronoCheckpointer(store)
    ChronoCheckpointer(store)  # the migration runs once; a second saver reuses it
    assert sorted(set(_tables(url)) - set(before)) == [
        "chronomem_checkpoint_writes",
        "chronomem_checkpoints",
    ]


def _tables(url: str) -> list[str]:
    with psycopg.connect(url) as conn:
        rows = conn.execute(
            "SELECT tablename FROM pg_tables WHERE schemaname = 'public'"
        ).fetchall()
    return sorted(row[0] for row in rows)


# -- the command line ---------------------------------------------------------------


def _cli(capsys: pytest.CaptureFixture[str], *argv: str) -> tuple[int, str, str]:
    code = main(list(argv))
    out, err = capsys.readouterr()
    return code, out, err


def test_the_cli_reads_and_rolls_back_a_store_given_by_url(
    url: str, capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("COLUMNS", "200")
    with ChronoStore.from_conn_string(url, scope_depth=2) as store:
        store.put(ALICE, "city", {"city": "Boston"})
        store.put(ALICE, "city", {"city": "Paris"})
    scope = ["--scope", "memories/alice", "--path", url]
    code, out, _ = _cli(capsys, "log", *scope, "--json")
    assert code == 0 and json.loads(out)["head"] == 2
    code, out, _ = _cli(capsys, "history", "memories/alice", "city", "--path", url)
    assert code == 0 and "Boston" in out and "Paris" in out
    code, out, _ = _cli(capsys, "diff", "1", "2", *scope, "--json")
    assert code == 0 and json.loads(out)["changes"][0]["new"] == {"city": "Paris"}
    code, out, _ = _cli(capsys, "rollback", "1", *scope, "--json")
    assert code == 0 and json.loads(out)["applied"] is True
    monkeypatch.setenv("CHRONOMEM_PATH", url)  # as --path
    code, out, _ = _cli(capsys, "stats", "--json")
    stats = json.loads(out)
    assert code == 0 and stats["totals"]["commits"] == 3
    assert stats["files"] is None, "a server's files are not the CLI's to size"
    with ChronoStore.from_conn_string(url) as store:
        assert store.get(ALICE, "city").value == {"city": "Boston"}


def test_the_cli_never_creates_a_store_in_an_empty_database(
    url: str, capsys: pytest.CaptureFixture[str]
) -> None:
    code, _, err = _cli(capsys, "log", "--path", url)
    assert code == 1 and "no store in" in err
    assert _tables(url) == []


def test_the_cli_reports_a_database_error_with_exit_3(
    url: str, capsys: pytest.CaptureFixture[str]
) -> None:
    missing = url.replace("@/", "@/no_such_db_")
    code, _, err = _cli(capsys, "log", "--path", missing, "--json")
    error = json.loads(err.splitlines()[-1])["error"]
    assert code == 3 and error["exit_code"] == 3
    assert "does not exist" in error["message"] and "Traceback" not in err


# -- psycopg is optional ---------------------------------------------------------------

_WITHOUT_PSYCOPG = """
import sys, tempfile
sys.modules["psycopg"] = None  # as if not installed: importing it fails
sys.modules["psycopg_pool"] = None
import langgraph_chronomem
from langgraph_chronomem import ChronoStore
from langgraph_chronomem.cli import main
with ChronoStore.from_path(tempfile.mkdtemp(), scope_depth=1) as store:
    store.put(("alice",), "city", {"city": "Paris"})
    assert store.head(("alice",)) == 1
for attempt in (
    lambda: ChronoStore.from_conn_string("postgresql://app@db/mem"),
    lambda: __import__("langgraph_chronomem.engine", fromlist=["x"]).PostgresEngine,
):
    try:
        attempt()
    except ImportError as exc:
        assert "langgraph-chronomem[postgres]" in str(exc), exc
    else:
        raise AssertionError("no ImportError")
assert main(["log", "--path", "postgresql://app@db/mem"]) == 3
print("ok")
"""


def test_the_package_works_without_psycopg() -> None:
    done = subprocess.run(
        [sys.executable, "-c", _WITHOUT_PSYCOPG],
        capture_output=True, text=True, timeout=300, check=False,
        env={**os.environ, "CHRONOMEM_OFFLINE": "1"},
    )  # fmt: skip
    assert done.returncode == 0, done.stderr
    assert done.stdout.strip() == "ok"
    assert "pip install 'langgraph-chronomem[postgres]'" in done.stderr


def test_reads_refreshing_ttl_beside_writers_never_deadlock(url: str) -> None:
    """Reads that restart TTL clocks lock rows as they go; beside writers and
    each other (as LangGraph's own `test_large_batches` runs them) they once
    deadlocked, losing the read. Every call must succeed."""
    ttl: TTLConfig = {"default_ttl": 5, "refresh_on_read": True}
    with (
        ChronoStore.from_conn_string(url, ttl=ttl) as store,
        concurrent.futures.ThreadPoolExecutor(10) as pool,
    ):
        calls = []
        for m in range(4):
            namespace = ("test", "foo", "bar", str(m % 2))
            for i in range(40):
                key = f"key{i}"
                calls += [
                    pool.submit(store.put, namespace, key, {"foo": i}),
                    pool.submit(store.get, namespace, key),
                    pool.submit(store.list_namespaces, max_depth=m + 1),
                    pool.submit(store.search, ("test",)),
                    pool.submit(store.put, namespace, key, {"foo": i}),
                    pool.submit(store.delete, namespace, key),
                ]
        failed = [call.exception() for call in calls if call.exception()]
    assert failed == []
