"""Opening the store and its checkpointer together, and sharing them in a server.

    store, checkpointer = open_chronomem("./memory", scope_depth=2)
    graph = builder.compile(store=store, checkpointer=checkpointer)

A `postgresql://` URL opens both on that database instead: one pool, the
checkpoints next to the memory log, any number of servers sharing them.

`shared_chronomem` is what a LangGraph server deployment's `langgraph.json` points
at (see `langgraph.json` at the repository root, and the docs).
"""

from __future__ import annotations

import os
import threading
from collections.abc import AsyncIterator, Sequence
from contextlib import asynccontextmanager
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from langgraph.checkpoint.serde.base import SerializerProtocol

from langgraph_chronomem._twins import off_loop
from langgraph_chronomem.checkpoint.base import ChronoCheckpointer, TimeTravel
from langgraph_chronomem.namespace import NamespaceTemplate
from langgraph_chronomem.store import ChronoStore
from langgraph_chronomem.store.opening import is_conn_string

__all__ = ["DEFAULT_PATH", "open_chronomem", "shared_chronomem"]

DEFAULT_PATH = str(
    Path(os.environ.get("XDG_DATA_HOME") or Path.home() / ".local" / "share")
    / "chronomem"
)
"""The store's directory when nothing names one (no `--path`, no
`$CHRONOMEM_PATH`), for the `chronomem` CLI and a LangGraph server alike:
`$XDG_DATA_HOME/chronomem`, else `~/.local/share/chronomem`.

Outside the project on purpose: `langgraph dev` watches every file under its
working directory and logs "changes detected" for each write there.
"""


def open_chronomem(
    path: str | Path,
    *,
    memory_namespace: Sequence[str] | NamespaceTemplate = ("memories", "{user_id}"),
    on_time_travel: TimeTravel = "revert",
    serde: SerializerProtocol | None = None,
    **store_kwargs: Any,
) -> tuple[ChronoStore, ChronoCheckpointer]:
    """Open the store and its checkpointer on one database: a directory, or a
    PostgreSQL URL.

        >>> import tempfile
        >>> store, checkpointer = open_chronomem(tempfile.mkdtemp(), scope_depth=2)
        >>> checkpointer.store is store
        True
        >>> store.close()  # closes the checkpointer's database too

    On PostgreSQL the pair shares the store's connection pool, and the
    checkpoints live in the memory log's database, so a replay rewinds memory
    there as it does on SQLite:

        store, checkpointer = open_chronomem(
            "postgresql://app@db-host/memories", scope_depth=2, max_connections=20
        )

    Args:
        path: The store's directory (see `ChronoStore.from_path`), or a
            `postgresql://` URL (see `ChronoStore.from_conn_string`). The
            default directory, `DEFAULT_PATH`, is made with its parents.
        memory_namespace: See `ChronoCheckpointer`.
        on_time_travel: See `ChronoCheckpointer`.
        serde: See `ChronoCheckpointer`.
        **store_kwargs: For `ChronoStore.from_path` (`scope_depth`, `index`,
            `ttl`…), or for a URL `ChronoStore.from_conn_string` (the same, and
            `chroma_client`, `chroma_path`, `max_connections`).

    Raises:
        ConfigError: As `ChronoStore.from_path` / `from_conn_string` and
            `ChronoCheckpointer`.
        ScopeError: As `ChronoCheckpointer`.
        StorageError: If the PostgreSQL server cannot be reached.
    """
    if is_conn_string(path):
        store = ChronoStore.from_conn_string(str(path), **store_kwargs)
    else:
        if str(path) == DEFAULT_PATH:  # ours to make, data directory and all
            store_kwargs.setdefault("parents", True)
        store = ChronoStore.from_path(path, **store_kwargs)
    try:
        checkpointer = ChronoCheckpointer(
            store,
            memory_namespace=memory_namespace,
            on_time_travel=on_time_travel,
            serde=serde,
        )
    except BaseException:
        store.close()
        raise
    return store, checkpointer


@dataclass
class _Opened:
    pair: tuple[ChronoStore, ChronoCheckpointer]
    users: int = 0


_OPENED: dict[Path | str, _Opened] = {}
_OPENED_LOCK = threading.Lock()


def _acquire(
    path: Path | str, kwargs: dict[str, Any]
) -> tuple[ChronoStore, ChronoCheckpointer]:
    with _OPENED_LOCK:
        if path not in _OPENED:
            _OPENED[path] = _Opened(open_chronomem(path, **kwargs))
        _OPENED[path].users += 1
        return _OPENED[path].pair


def _release(path: Path | str) -> None:
    with _OPENED_LOCK:
        opened = _OPENED[path]
        opened.users -= 1
        if opened.users == 0:
            del _OPENED[path]
            opened.pair[0].close()


@asynccontextmanager
async def shared_chronomem(
    path: str | Path, **kwargs: Any
) -> AsyncIterator[tuple[ChronoStore, ChronoCheckpointer]]:
    """`open_chronomem` once per directory (or URL) and process, however often it
    is entered.

    For LangGraph server deployments: `langgraph.json` names the store and the
    checkpointer as two async context managers, which the server loads as
    separate modules and enters in any order (once per worker thread). Built on
    this, they share one pair; the last exit closes it. Opening and closing run
    in a worker thread, off the event loop. The first entry's `kwargs` apply.

        >>> import asyncio, tempfile
        >>> async def both(path):
        ...     async with shared_chronomem(path, scope_depth=2) as (store, _):
        ...         async with shared_chronomem(path, scope_depth=2) as (_, saver):
        ...             return saver.store is store
        >>> asyncio.run(both(tempfile.mkdtemp()))
        True

    On PostgreSQL the pair is keyed by the URL as written, and each worker
    process opens its own pool (`max_connections` each).

    Args:
        path: The store's directory, or a `postgresql://` URL.
        **kwargs: For `open_chronomem`.

    Raises:
        ConfigError, ScopeError, StorageError: As `open_chronomem`.
    """
    key = str(path) if is_conn_string(path) else Path(path).resolve()
    pair = await off_loop(_acquire, key, kwargs)
    try:
        yield pair
    finally:
        await off_loop(_release, key)
