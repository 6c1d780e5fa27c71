"""What the layers above the log use of an engine, whichever database it runs on.

`SqliteEngine` (one file, the embedded default) and `PostgresEngine` (a server
shared by many processes) both satisfy `LogEngine`; the store, its search side,
the undo and the checkpointer are typed with it, never with one engine:

    >>> import tempfile, pathlib
    >>> from langgraph_chronomem.engine.sqlite import SqliteEngine
    >>> engine: LogEngine = SqliteEngine(pathlib.Path(tempfile.mkdtemp()) / "log.db")
    >>> with engine.transaction(write=False) as tx:
    ...     tx.head(())
    0
    >>> engine.close()
"""

from __future__ import annotations

from collections.abc import Sequence
from contextlib import AbstractContextManager
from typing import Protocol

from langgraph_chronomem.engine.base import LogTransaction
from langgraph_chronomem.engine.schema import Migration

__all__ = ["LogEngine"]


class LogEngine(Protocol):
    """A versioned log an engine opened: its transactions and its settings.

    Attributes:
        scope_depth: Leading namespace labels that make a scope (the depth the
            database was created with).
        read_only: Whether the engine was opened for reads only.
        omit_expired: Whether reads at HEAD hide items whose TTL has passed,
            from the next transaction on (the store sets it from its
            `ttl_config` on every call).
    """

    scope_depth: int
    read_only: bool
    omit_expired: bool

    def check_open(self) -> None:
        """Raise `StorageError` (saying how to reopen) once the engine is closed."""
        ...

    def check_writable(self, doing: str) -> None:
        """Raise `ReadOnlyError` (saying it cannot do `doing`) on a read-only
        engine, before any work is done."""
        ...

    def transaction(
        self, *, write: bool, dry_run: bool = False
    ) -> AbstractContextManager[LogTransaction]:
        """One database transaction: committed on success (rolled back with
        `dry_run=True`), rolled back on any error."""
        ...

    def migrate(self, steps: Sequence[Migration]) -> list[str]:
        """Apply another component's named migrations; returns the names applied."""
        ...

    def scrub(self, erased: Sequence[str] = ()) -> bool:
        """Overwrite the database's own leftover copies of erased values (free
        pages, dead rows, the write-ahead log), checked against the texts
        `erased` where given; False if something held part of it back, to
        try again later."""
        ...

    def close(self) -> None:
        """Close what the engine opened. Safe to call twice."""
        ...
