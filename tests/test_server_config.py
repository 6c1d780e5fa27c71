"""langgraph.json (at the repository root) works the way the LangGraph server loads it.

The loaders below follow langgraph-api (0.16.7): a graph or checkpointer path
"file.py:attr" is imported under a module name derived from the path (the
checkpointer reuses the graph's module when it is already loaded), a store path
under a random module name; the attribute is called, and what it returns is
entered as an async context manager. The server then gives the graph both
objects with `graph.copy(update=...)`.
"""

from __future__ import annotations

import importlib.util
import json
import os
import random
import string
import subprocess
import sys
from collections.abc import Iterator
from contextlib import AsyncExitStack
from pathlib import Path
from types import ModuleType
from typing import Any

import pytest

from langgraph_chronomem import ChronoStore, StorageError, deployment
from langgraph_chronomem.checkpoint import ChronoCheckpointer
from langgraph_chronomem.cli import _app, build_parser

ROOT = Path(__file__).resolve().parent.parent
_LOADED: list[str] = []  # sys.modules entries the loaders below made


@pytest.fixture
def server_config(monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> Iterator[Any]:
    """langgraph.json, with the data directory in a temporary place."""
    monkeypatch.setenv("CHRONOMEM_PATH", str(tmp_path / "data"))
    yield json.loads((ROOT / "langgraph.json").read_text())
    while _LOADED:  # forget the example modules loaded by path
        sys.modules.pop(_LOADED.pop(), None)


def _file(reference: str) -> tuple[str, str]:
    """An absolute 'file.py' and the attribute: relative to langgraph.json's folder
    (as `langgraph build` resolves it), which is the repository root, the working
    directory of `langgraph dev` (tests/test_server.py runs that)."""
    path, attribute = reference.rsplit(":", 1)
    return str((ROOT / path).resolve()), attribute


def _exec(modname: str, path: str, register_as: str) -> ModuleType:
    spec = importlib.util.spec_from_file_location(modname, path)
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    sys.modules[register_as] = module
    _LOADED.append(register_as)
    spec.loader.exec_module(module)
    return module


def _stable_name(path: str) -> str:
    return path.replace("/", "__").replace(".py", "").replace(" ", "_").lstrip(".")


def load_graph(reference: str) -> Any:
    path, attribute = _file(reference)
    name = _stable_name(path)
    return _exec(name, path, name).__dict__[attribute]


def load_checkpointer(reference: str) -> Any:
    path, attribute = _file(reference)
    name = _stable_name(path)
    module = sys.modules.get(name) or _exec(name, path, name)
    return module.__dict__[attribute]


def load_store(reference: str) -> Any:
    path, attribute = _file(reference)
    name = "".join(random.choices(string.ascii_lowercase, k=24))
    return _exec(name, path, path).__dict__[attribute]


async def enter(stack: AsyncExitStack, factory: Any) -> Any:
    """What the server does with a loaded store or checkpointer factory."""
    assert callable(factory)
    return await stack.enter_async_context(factory())


def test_langgraph_json_declares_store_and_checkpointer(server_config: Any) -> None:
    example = "./examples/server_graph.py"
    assert server_config["store"] == {"path": f"{example}:make_store"}
    assert server_config["checkpointer"] == {"path": f"{example}:make_checkpointer"}
    assert server_config["graphs"] == {"memory_agent": f"{example}:graph"}
    assert (ROOT / server_config["dependencies"][0] / "pyproject.toml").exists()


async def test_the_server_wiring_runs_a_graph_with_time_travel(
    server_config: Any,
) -> None:
    graph = load_graph(server_config["graphs"]["memory_agent"])
    make_checkpointer = load_checkpointer(server_config["checkpointer"]["path"])
    make_store = load_store(server_config["store"]["path"])
    assert make_store.__module__ != make_checkpointer.__module__  # two modules

    async with AsyncExitStack() as stack:
        checkpointer = await enter(stack, make_checkpointer)
        store = await enter(stack, make_store)
        assert isinstance(store, ChronoStore)
        assert isinstance(checkpointer, ChronoCheckpointer)
        assert checkpointer.store is store  # one database, one connection, one lock
        assert store.scope_depth == 2

        served = graph.copy(update={"checkpointer": checkpointer, "store": store})
        config = {"configurable": {"thread_id": "t1", "user_id": "alice"}}
        for note in ("lives in Boston", "moved to Paris", "has a cat"):
            await served.ainvoke({"note": note}, config)
        assert (await served.aget_state(config)).values["recalled"] == [
            "lives in Boston",
            "moved to Paris",
        ]

        history = [s async for s in served.aget_state_history(config)]
        second = next(
            s
            for s in history
            if s.next == ("recall",) and s.values["note"] == "moved to Paris"
        )
        replay = {
            "configurable": {**config["configurable"], **second.config["configurable"]}
        }
        replayed = await served.ainvoke(None, replay)
        assert replayed["recalled"] == ["lives in Boston"]
        ops = [(c.op, c.author) for c in await store.alog(("memories", "alice"))]
        assert ops[:2] == [("put", None), ("revert", "time-travel")]

        again = await enter(stack, make_store)  # another worker thread's entry
        assert again is store
    assert deployment._OPENED == {}  # the last exit closed the pair
    with pytest.raises(Exception, match="closed"):
        store.head(("memories", "alice"))


def test_the_cli_and_the_server_share_one_default_outside_the_project(
    monkeypatch: pytest.MonkeyPatch, tmp_path: Path
) -> None:
    """`chronomem` with no `--path` opens the store a server made with no
    `$CHRONOMEM_PATH`: one default, defined once, in the user's data directory,
    where `langgraph dev` (which watches its whole working directory) does not
    log each write as a change."""
    assert _app.DEFAULT_PATH is deployment.DEFAULT_PATH
    monkeypatch.delenv("CHRONOMEM_PATH", raising=False)
    assert _app.store_location(build_parser().parse_args(["log"])) == (
        deployment.DEFAULT_PATH
    )
    default = Path(deployment.DEFAULT_PATH)
    assert default.is_absolute() and not default.is_relative_to(ROOT)
    shown = subprocess.run(
        [sys.executable, "-c", "import langgraph_chronomem.deployment as d; "
         "print(d.DEFAULT_PATH)"],
        env={**os.environ, "XDG_DATA_HOME": str(tmp_path)},
        capture_output=True, text=True, check=True,
    )  # fmt: skip
    assert shown.stdout.strip() == str(tmp_path / "chronomem")
    example = importlib.util.spec_from_file_location(
        "server_graph_default", ROOT / "examples" / "server_graph.py"
    )
    assert example is not None and example.loader is not None
    server_graph = importlib.util.module_from_spec(example)
    example.loader.exec_module(server_graph)
    assert server_graph._settings()["path"] == deployment.DEFAULT_PATH


def test_the_default_store_is_made_on_a_machine_without_a_data_directory(
    monkeypatch: pytest.MonkeyPatch, tmp_path: Path
) -> None:
    """A fresh machine (or container) has no `~/.local/share` yet: the server's
    default store makes it, where a path a user typed must have its parent."""
    default = tmp_path / "home" / ".local" / "share" / "chronomem"
    monkeypatch.setattr(deployment, "DEFAULT_PATH", str(default))
    store, _ = deployment.open_chronomem(deployment.DEFAULT_PATH, scope_depth=2)
    with store:
        store.put(("memories", "alice"), "home", {"city": "Paris"})
    assert (default / "chronomem.sqlite3").is_file()
    typed = tmp_path / "elsewhere" / "memory"
    with pytest.raises(StorageError, match="parent directory"):
        deployment.open_chronomem(typed, scope_depth=2)
