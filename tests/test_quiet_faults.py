"""A server that goes away is one line in the log, not a screen of traceback.

A Chroma server stopped under a running store, and a PostgreSQL server
restarted under one: the store keeps working (writes commit, the vectors catch
up), callers get the typed one-line errors they get today, and every record
logged meanwhile, from any thread or library, reads as one line.
"""

from __future__ import annotations

import logging
import threading
import time

import pytest

from langgraph_chronomem import ChronoStore, StorageError
from tests.test_postgres_store import _url
from testsupport.chroma_server import ChromaServer, chroma_server  # noqa: F401  (fixture)
from testsupport.hashed import INDEX
from testsupport.pg import PostgresServer, pg_server  # noqa: F401  (fixture)

ALICE = ("memories", "alice")


def _lines(caplog: pytest.LogCaptureFixture) -> dict[str, int]:
    """Each record at WARNING or above, formatted as a handler prints it
    (with its traceback, if any), and how many lines it takes."""
    formatter = logging.Formatter("%(name)s %(levelname)s %(message)s")
    return {
        formatter.format(record): formatter.format(record).count("\n") + 1
        for record in caplog.records
        if record.levelno >= logging.WARNING
    }


def test_a_chroma_server_that_goes_down_is_one_line(
    pg_server: PostgresServer,  # noqa: F811
    chroma_server: ChromaServer,  # noqa: F811
    caplog: pytest.LogCaptureFixture,
) -> None:
    caplog.set_level(logging.DEBUG)
    url = _url(pg_server.create_database())
    with ChronoStore.from_conn_string(
        url, scope_depth=2, index=INDEX, chroma_url=chroma_server.url
    ) as store:  # type: ignore[arg-type]
        store.put(ALICE, "a", {"text": "w1"})
        store.wait_for_index()
        chroma_server.stop()
        for i in range(3):
            store.put(ALICE, f"k{i}", {"text": f"w{i}"})
        deadline = time.monotonic() + 60  # the follower tries in the background
        while not any("Chroma" in line for line in _lines(caplog)):
            assert time.monotonic() < deadline, "the follower never said it failed"
            time.sleep(0.05)
        with pytest.raises(StorageError, match="unavailable"):
            store.search(ALICE, query="w1")
        chroma_server.start()
        assert store.search(ALICE, query="w2")[0].key == "k2"
    logged = _lines(caplog)
    assert any("Chroma" in line for line in logged), "the outage is logged"
    assert all(count == 1 for count in logged.values()), logged


def test_a_postgres_restart_is_one_line(
    pg_server: PostgresServer,  # noqa: F811
    caplog: pytest.LogCaptureFixture,
) -> None:
    caplog.set_level(logging.DEBUG)
    url = _url(pg_server.create_database())
    with ChronoStore.from_conn_string(url, scope_depth=2) as store:
        store.put(ALICE, "a", {"text": "w1"})
        restart = threading.Thread(target=pg_server.restart, kwargs={"down": 1.5})
        restart.start()
        deadline = time.monotonic() + 30
        while time.monotonic() < deadline:  # writes while it is down, and after
            try:
                store.put(ALICE, "b", {"text": "w2"})
            except StorageError as exc:  # the typed one-line error, as today
                assert "\n" not in str(exc)
                time.sleep(0.1)
            else:
                if not restart.is_alive():
                    break
        restart.join()
        assert store.get(ALICE, "b").value == {"text": "w2"}
    logged = _lines(caplog)
    assert any("psycopg" in line for line in logged), "the outage is logged"
    assert all(count == 1 for count in logged.values()), logged
