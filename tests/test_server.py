"""The real `langgraph dev`, started as docs/how-to/langgraph-server.md says (from
the repository root, with its langgraph.json) and driven with `langgraph-sdk`.

One server per database serves the module (each starts in a few seconds): memory
and checkpoints in a directory, then in a PostgreSQL database (a private server,
testsupport/pg.py) with the vectors on a Chroma server
(testsupport/chroma_server.py), named by `$CHRONOMEM_PATH` and
`$CHRONOMEM_CHROMA_URL` as a deployment names them. Each test uses a user of its
own. The server runs in its own process group and is always stopped. It must not
reach the network: the Studio (`--no-browser`), the CLI's usage report, the PyPI
version check and LangSmith tracing are turned off, and the store's models are
not used. `langgraph dev` keeps its own state in `.langgraph_api/` of the working
directory: the module puts it back as it was.
"""

from __future__ import annotations

import json
import os
import re
import shlex
import shutil
import signal
import socket
import subprocess
import sys
import time
import urllib.error
import urllib.request
from collections.abc import AsyncIterator, Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import pytest
from langchain_core.runnables import RunnableConfig

from langgraph_chronomem import ChronoCheckpointer, ChronoStore
from langgraph_chronomem.models import models_dir
from tests.test_postgres_store import _url
from testsupport.chroma_server import ChromaServer
from testsupport.pg import PostgresServer, pg_server  # noqa: F401  (fixture)

ROOT = Path(__file__).resolve().parent.parent
SERVER_PAGE = ROOT / "docs" / "how-to" / "langgraph-server.md"
INSTALL_HINT = "the server tests need the test extra: pip install -e '.[test]'"
STARTUP_TIMEOUT = 60.0
GRAPH = "memory_agent"
BOB = ("memories", "bob")


@dataclass(frozen=True)
class Server:
    """A running `langgraph dev`: where it answers and where it keeps memory."""

    url: str
    data: Path | str  # the store's directory, or its database's URL
    chroma_url: str | None = None  # the Chroma server's, beside PostgreSQL

    def open_store(self) -> ChronoStore:
        """The server's store, opened from another process as a person or a
        second host would: on its database and its Chroma."""
        return ChronoStore.from_path(
            self.data, scope_depth=2, chroma_url=self.chroma_url
        )


def _free_port() -> int:
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        return int(probe.getsockname()[1])


def _offline_env(data: Path | str, chroma_url: str | None) -> dict[str, str]:
    """This environment without LangSmith/LangGraph keys, and every phone-home off."""
    env = {
        name: value
        for name, value in os.environ.items()
        if not name.startswith(("LANGSMITH_", "LANGCHAIN_", "LANGGRAPH_"))
    }
    if chroma_url is not None:
        env["CHRONOMEM_CHROMA_URL"] = chroma_url
    env.update(
        CHRONOMEM_PATH=str(data),
        LANGGRAPH_CLI_NO_ANALYTICS="1",  # the CLI's usage report
        LANGGRAPH_NO_VERSION_CHECK="true",  # langgraph-api asking PyPI for news
        LANGSMITH_TRACING="false",
        LANGCHAIN_TRACING_V2="false",
    )
    return env


def _wait_until_up(process: subprocess.Popen[bytes], url: str, log: Path) -> None:
    deadline = time.monotonic() + STARTUP_TIMEOUT
    while time.monotonic() < deadline:
        if process.poll() is not None:
            tail = log.read_text()[-4000:]
            pytest.fail(f"langgraph dev exited with {process.returncode}:\n{tail}")
        try:
            with urllib.request.urlopen(f"{url}/ok", timeout=1) as response:
                if response.status == 200:
                    return
        except (urllib.error.URLError, ConnectionError, TimeoutError):
            time.sleep(0.2)
    tail = log.read_text()[-4000:]
    pytest.fail(f"langgraph dev did not answer in {STARTUP_TIMEOUT:.0f} s:\n{tail}")


def _stop(process: subprocess.Popen[bytes]) -> None:
    """SIGTERM the server's process group (it closes the store), then SIGKILL."""
    for sig, grace in ((signal.SIGTERM, 20.0), (signal.SIGKILL, 5.0)):
        try:
            os.killpg(process.pid, sig)
        except ProcessLookupError:
            return
        try:
            process.wait(grace)
            return
        except subprocess.TimeoutExpired:
            continue


@pytest.fixture(scope="module", params=["sqlite", "postgres"])
def server(
    request: pytest.FixtureRequest, tmp_path_factory: pytest.TempPathFactory
) -> Iterator[Server]:
    """`langgraph dev` from the repository root, on a free port, memory in a tmp
    dir, or in a fresh PostgreSQL database with a Chroma server of its own."""
    if sys.version_info < (3, 11):
        pytest.skip("langgraph-api (the dev server) needs Python 3.11 or later")
    langgraph = shutil.which("langgraph", path=str(Path(sys.executable).parent))
    if langgraph is None:
        pytest.fail(f"no `langgraph` command beside {sys.executable}: {INSTALL_HINT}")
    tmp = tmp_path_factory.mktemp("server")
    data: Path | str = tmp / "data"
    chroma: ChromaServer | None = None
    if request.param == "postgres":
        pg: PostgresServer = request.getfixturevalue("pg_server")
        data = _url(pg.create_database("server"))
        chroma = ChromaServer().start()
    state, saved = ROOT / ".langgraph_api", tmp / "langgraph_api"
    if state.exists():
        shutil.copytree(state, saved)
    port = _free_port()
    url, log = f"http://127.0.0.1:{port}", tmp / "server.log"
    command = [langgraph, "dev", "--no-browser", "--no-reload", "--port", str(port)]
    with log.open("wb") as out:
        process = subprocess.Popen(
            command,
            cwd=ROOT,
            env=_offline_env(data, chroma and chroma.url),
            stdout=out,
            stderr=subprocess.STDOUT,
            start_new_session=True,  # its own process group, stopped as one
        )
    try:
        _wait_until_up(process, url, log)
        yield Server(url, data, chroma and chroma.url)
    finally:
        _stop(process)
        if chroma is not None:
            chroma.close()
        shutil.rmtree(state, ignore_errors=True)
        if saved.exists():
            shutil.copytree(saved, state)


@pytest.fixture
async def client(server: Server) -> AsyncIterator[Any]:
    """An SDK client of the server (no API key: the dev server has no auth)."""
    from langgraph_sdk import get_client

    async with get_client(url=server.url, api_key=None) as opened:
        yield opened


def _as(user: str) -> dict[str, Any]:
    return {"configurable": {"user_id": user}}


async def _remember(client: Any, thread_id: str, user: str, note: str) -> Any:
    return await client.runs.wait(
        thread_id, GRAPH, input={"note": note}, config=_as(user)
    )


async def test_runs_write_versioned_memory_and_chrono_checkpoints(
    server: Server, client: Any
) -> None:
    thread = await client.threads.create()
    first = await _remember(client, thread["thread_id"], "alice", "lives in Boston")
    second = await _remember(client, thread["thread_id"], "alice", "moved to Paris")
    assert first == {"note": "lives in Boston", "recalled": []}
    assert second == {"note": "moved to Paris", "recalled": ["lives in Boston"]}

    found = await client.store.search_items(["memories", "alice"])
    assert sorted(item["key"] for item in found["items"]) == [
        "lives in Boston",
        "moved to Paris",
    ]
    state = await client.threads.get_state(thread["thread_id"])
    assert state["values"] == second

    alice = ("memories", "alice")
    with server.open_store() as store:
        assert store.head(alice) == 2
        assert [c.op for c in store.log(alice)] == ["put", "put"]
        saver = ChronoCheckpointer(store)
        latest: RunnableConfig = {"configurable": {"thread_id": thread["thread_id"]}}
        assert len(list(saver.list(latest))) == len(
            await client.threads.get_history(thread["thread_id"], limit=100)
        )
        assert saver.memory_version(latest, alice) == 2  # stamped by ChronoCheckpointer


async def test_replaying_a_thread_spares_what_another_thread_wrote(
    server: Server, client: Any
) -> None:
    """Replaying thread A from a past checkpoint undoes A's own notes since,
    and keeps the note the same user left in thread B meanwhile."""
    a = (await client.threads.create())["thread_id"]
    b = (await client.threads.create())["thread_id"]
    await _remember(client, a, "bob", "likes tea")
    await _remember(client, a, "bob", "likes coffee")
    await _remember(client, b, "bob", "plays chess")
    history = await client.threads.get_history(a, limit=100)
    before_coffee = next(
        s
        for s in history
        if s["next"] == ["recall"] and s["values"]["note"] == "likes coffee"
    )
    replayed = await client.runs.wait(
        a,
        GRAPH,
        input=None,
        checkpoint_id=before_coffee["checkpoint"]["checkpoint_id"],
        config=_as("bob"),
    )
    # A's coffee is undone before `recall` runs again; B's chess stays
    assert replayed["recalled"] == ["likes tea", "plays chess"]

    with server.open_store() as store:
        log = [(c.op, c.author, c.labels.get("thread_id")) for c in store.log(BOB)]
        assert store.get(BOB, "plays chess") is not None
    assert log[:2] == [("put", None, a), ("revert", "time-travel", a)]


async def test_an_undo_made_elsewhere_is_what_the_next_run_recalls(
    server: Server, client: Any
) -> None:
    """A person (or a second host) undoes a memory in words, on the server's
    database and Chroma; the server's next run reads the restored memory."""
    thread = await client.threads.create()
    for note in ("lives in Boston", "moved to Paris"):
        await _remember(client, thread["thread_id"], "dora", note)
    dora = ("memories", "dora")
    with server.open_store() as store:
        resolution = store.resolve(dora, "forget that I moved to Paris")
        best = resolution.best
        assert best is not None and [c.key for c in best.changes] == ["moved to Paris"]
        result = store.apply(dora, resolution, choice=0, author="dora")
        assert result.applied, result.message
        assert store.get(dora, "moved to Paris") is None
    after = await _remember(client, thread["thread_id"], "dora", "likes jazz")
    assert after["recalled"] == ["lives in Boston"]


async def test_a_run_without_a_user_says_what_to_do(client: Any) -> None:
    """Dev auth makes `user_id` '' (not missing): a ConfigError naming the fix."""
    thread = await client.threads.create()
    refused = "ConfigError: namespace value user_id=''"
    with pytest.raises(Exception, match=refused) as raised:
        await client.runs.wait(thread["thread_id"], GRAPH, input={"note": "hi"})
    assert "pass user_id with each run" in str(raised.value)


async def test_an_assistant_can_carry_the_user(server: Server, client: Any) -> None:
    assistant = await client.assistants.create(GRAPH, config=_as("carol"))
    thread = await client.threads.create()
    await client.runs.wait(
        thread["thread_id"], assistant["assistant_id"], input={"note": "has a cat"}
    )
    with server.open_store() as store:
        assert store.get(("memories", "carol"), "has a cat") is not None


def _docker_checks() -> list[list[str]]:
    """The `RUN python -c ...` lines of the page's dockerfile_lines, as argv."""
    blocks = re.findall(r"```json\n(.*?)\n```", SERVER_PAGE.read_text(), re.S)
    configs = [json.loads(b) for b in blocks if "dockerfile_lines" in b]
    lines = [line for c in configs for line in c["dockerfile_lines"]]
    return [shlex.split(line[4:]) for line in lines if line.startswith("RUN python -c")]


def test_the_docker_recipe_fails_when_the_reranker_is_missing(tmp_path: Path) -> None:
    """With the stand-in provisioned but FlashRank's reranker absent, the build's
    reranker check must fail (a plain `load_ranker()` passed on the stand-in)."""
    checks = _docker_checks()
    assert checks, f"{SERVER_PAGE.name} shows no `RUN python -c` reranker check"
    env = dict(
        os.environ,
        CHRONOMEM_OFFLINE="1",  # the download fails, without trying the network
        CHRONOMEM_MODELS_DIR=str(models_dir()),  # wherever provision put the models
        XDG_CACHE_HOME=str(tmp_path),  # an empty FlashRank cache
    )
    for _, flag, code in checks:
        done = subprocess.run(
            [sys.executable, flag, code],
            env=env,
            capture_output=True,
            text=True,
            timeout=120,
            check=False,
        )
        assert done.returncode != 0, f"{code!r} passed without a reranker"
        assert "ModelUnavailableError" in done.stderr
