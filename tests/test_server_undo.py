"""Undo in words over HTTP: a run of the server example's graph on the real
`langgraph dev` (started by tests/test_server.py's fixtures, on a directory and
on PostgreSQL with a Chroma server) undoes a change the user describes, with the
undo tool, and the next run recalls the memory as it is after the undo.
"""

from __future__ import annotations

from typing import Any

from tests.test_server import GRAPH, Server, _as, _remember, client, server  # noqa: F401
from testsupport.pg import pg_server  # noqa: F401  (fixture, for the postgres server)

ERIN = ("memories", "erin")


async def _undo(client: Any, thread_id: str, user: str, request: str) -> Any:  # noqa: F811
    return await client.runs.wait(
        thread_id, GRAPH, input={"undo": request}, config=_as(user)
    )


async def test_a_run_undoes_in_words_and_the_next_run_recalls_the_rest(
    server: Server,  # noqa: F811
    client: Any,  # noqa: F811
) -> None:
    thread = (await client.threads.create())["thread_id"]
    for note in ("lives in Boston", "moved to Paris"):
        await _remember(client, thread, "erin", note)

    undone = await _undo(client, thread, "erin", "forget that I moved to Paris")
    assert undone["undo"] == ""  # answered, so the next run is a note again
    assert undone["undone"].startswith("Memory changed (now v3): "), undone
    assert "Paris" in undone["undone"] and "'redo'" in undone["undone"]

    after = await _remember(client, thread, "erin", "likes jazz")
    assert after["recalled"] == ["lives in Boston"]
    with server.open_store() as store:
        ops = [(c.op, c.author) for c in store.log(ERIN)]
        assert ops == [
            ("put", None), ("revert", "undo_memory"), ("put", None), ("put", None)
        ]  # fmt: skip
        assert store.get(ERIN, "moved to Paris") is None

    redone = await _undo(client, thread, "erin", "redo")
    assert redone["undone"].startswith("Memory changed (now v5): "), redone
    with server.open_store() as store:
        assert store.get(ERIN, "moved to Paris") is not None


async def test_an_unclear_request_over_http_changes_nothing(
    server: Server,  # noqa: F811
    client: Any,  # noqa: F811
) -> None:
    thread = (await client.threads.create())["thread_id"]
    for note in ("lives in Boston", "moved to Paris"):
        await _remember(client, thread, "frank", note)
    answer = await _undo(client, thread, "frank", "forget what I said about my dog")
    assert answer["undone"].startswith("Nothing changed"), answer
    with server.open_store() as store:
        assert store.head(("memories", "frank")) == 2
