"""The versioned log under the store: commits, versions, rollback. No LangGraph here.

`SqliteEngine` is the embedded default; its transactions expose the operations of
`LogTransaction`.
"""

from langgraph_chronomem.engine.base import LogTransaction
from langgraph_chronomem.engine.sqlite import SqliteEngine
from langgraph_chronomem.engine.types import (
    Change,
    Commit,
    CommitMeta,
    Conflict,
    ItemVersion,
    RevertConflict,
    StoredItem,
    Write,
)

__all__ = [
    "Change",
    "Commit",
    "CommitMeta",
    "Conflict",
    "ItemVersion",
    "LogTransaction",
    "RevertConflict",
    "SqliteEngine",
    "StoredItem",
    "Write",
]
