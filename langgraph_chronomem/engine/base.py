"""The versioned log: commits, reads at HEAD or at any version, rollback, revert, reset.

Everything here is plain logic over a DB-API cursor and a dialect that supplies the
SQL text, so SQLite and PostgreSQL share it. One `LogTransaction` is one database
transaction: a store `batch()` runs its reads and its commits in the same one.

How the log is laid out: every change to an item is one row of `items`, written by
the commit that made it (`version`) and valid until the commit that replaced it
(`valid_to`, NULL while it is HEAD). A deletion is a row with no value whose
validity is empty (`valid_to = version`), so it shows in history but never in a
read. HEAD is therefore the rows with `valid_to IS NULL`, and the state at
version `v` the rows with `version <= v < valid_to`. A write touches only the
rows it changes; a rollback only the rows written since its target.

`LogTransaction` is assembled from parts, a module each: `reads.py` (scopes,
settings, items), `history.py` (commits, an item's versions), `writes.py` (the
one place versions are made in Python), `change_index.py` (the full-text
change index), `travel.py` (diff, rollback, revert), `proposals.py` (review),
`forgetting.py` (redact, compact, reset), `tags.py` and `branches.py`.
`core.py` declares what the parts call of each other, and `rows.py` holds what
they share, below them all.
"""

from __future__ import annotations

from langgraph_chronomem.engine.branches import BranchOps
from langgraph_chronomem.engine.change_index import FULL_TEXT, ChangeIndexOps
from langgraph_chronomem.engine.forgetting import ForgettingOps
from langgraph_chronomem.engine.history import HistoryOps
from langgraph_chronomem.engine.proposals import ProposalOps
from langgraph_chronomem.engine.reads import ReadOps
from langgraph_chronomem.engine.sql import Cursor, Dialect
from langgraph_chronomem.engine.tags import TagOps
from langgraph_chronomem.engine.travel import TravelOps, by_thread
from langgraph_chronomem.engine.writes import (
    COMMITS_EVEN_EMPTY,
    REVIEW_SOURCE,
    SYSTEM_AUTHOR,
    WriteOps,
)

# With the transaction, the names its callers import from here.
__all__ = [
    "COMMITS_EVEN_EMPTY",
    "FULL_TEXT",
    "REVIEW_SOURCE",
    "SYSTEM_AUTHOR",
    "LogTransaction",
    "by_thread",
]


class LogTransaction(
    ReadOps,
    HistoryOps,
    WriteOps,
    ChangeIndexOps,
    TravelOps,
    ProposalOps,
    ForgettingOps,
    TagOps,
    BranchOps,
):
    """The log's operations inside one open database transaction.

    Args:
        cur: A cursor inside an open transaction (a write transaction for anything
            that commits).
        dialect: The SQL for this database.
        scope_depth: How many leading namespace labels make a scope.
        omit_expired: Hide items whose TTL has passed from reads at HEAD.
    """

    def __init__(
        self, cur: Cursor, dialect: Dialect, scope_depth: int, *, omit_expired: bool
    ) -> None:
        self.cur = cur
        self.sql = dialect
        self.scope_depth = scope_depth
        self.omit_expired = omit_expired
