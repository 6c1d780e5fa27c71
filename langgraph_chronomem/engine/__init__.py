"""The versioned log under the store: commits, versions, rollback. No LangGraph here.

`SqliteEngine` is the embedded default; `PostgresEngine` runs the same log on a
PostgreSQL server and is imported on first use, since psycopg is an optional
extra (`pip install 'langgraph-chronomem[postgres]'`). Both satisfy `LogEngine`,
and their transactions expose the operations of `LogTransaction`.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from langgraph_chronomem.engine.base import LogTransaction
from langgraph_chronomem.engine.protocol import LogEngine
from langgraph_chronomem.engine.sqlite import SqliteEngine
from langgraph_chronomem.engine.types import (
    Change,
    Commit,
    CommitMeta,
    Compaction,
    Conflict,
    ItemVersion,
    MatchedRevert,
    Redaction,
    RevertConflict,
    StoredItem,
    Write,
)

if TYPE_CHECKING:
    from langgraph_chronomem.engine.postgres import PostgresEngine

__all__ = [
    "Change",
    "Commit",
    "CommitMeta",
    "Compaction",
    "Conflict",
    "ItemVersion",
    "LogEngine",
    "LogTransaction",
    "MatchedRevert",
    "PostgresEngine",
    "Redaction",
    "RevertConflict",
    "SqliteEngine",
    "StoredItem",
    "Write",
]

_POSTGRES_DRIVER = ("psycopg", "psycopg_pool")


def __getattr__(name: str) -> Any:
    """`PostgresEngine`, imported when first asked for.

    Raises:
        ImportError: If psycopg is not installed (the message names the extra).
    """
    if name != "PostgresEngine":
        raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
    try:
        from langgraph_chronomem.engine.postgres import PostgresEngine
    except ImportError as exc:
        if (exc.name or "").split(".")[0] not in _POSTGRES_DRIVER:
            raise
        raise ImportError(
            f"the PostgreSQL engine needs psycopg ({exc.name} is missing): "
            "pip install 'langgraph-chronomem[postgres]'",
            name=exc.name,
        ) from exc
    return PostgresEngine
