"""BM25 over a scope's item changes, through the log's full-text index.

The index lives in the log's own database (FTS5 on SQLite) and catches up before
every search, so it never lags. Each change is indexed with what it introduced
apart from what it replaced: an undo ("forget that I moved to NYC") searches the
first side, a restore ("bring back my Boston address") the second. Requests are
reduced to their content words first, and each word is quoted by the dialect:
any text is a valid query.

    >>> import tempfile
    >>> from langgraph_chronomem.engine import CommitMeta, SqliteEngine, Write
    >>> engine = SqliteEngine(tempfile.mkdtemp() + "/log.sqlite3", scope_depth=1)
    >>> with engine.transaction(write=True) as tx:
    ...     _ = tx.commit([Write(("alice",), "home", {"city": "Boston"})], CommitMeta())
    ...     _ = tx.commit([Write(("alice",), "home", {"city": "NYC"})], CommitMeta())
    ...     _ = tx.index_changes()
    ...     [hit.version for hit in bm25(tx, ("alice",), "my move to NYC", n=5)]
    ...     [hit.version for hit in bm25(tx, ("alice",), "Boston", n=5, side="old")]
    [2]
    [2]
"""

from __future__ import annotations

from dataclasses import dataclass

from langgraph_chronomem.engine.base import LogTransaction
from langgraph_chronomem.engine.types import Namespace
from langgraph_chronomem.search.intent import content_words, units_apart
from langgraph_chronomem.search.times import TimeWindow

__all__ = ["LexicalHit", "bm25"]


@dataclass(frozen=True)
class LexicalHit:
    """An item change whose text shares words with the request; higher is better."""

    row_id: int
    version: int
    score: float


def bm25(
    tx: LogTransaction,
    scope: Namespace,
    topic: str,
    *,
    n: int,
    side: str = "new",
    window: TimeWindow | None = None,
) -> list[LexicalHit]:
    """The `n` best BM25 matches for `topic` among the scope's changes, best first.

    `side="new"` matches what each change introduced, `"old"` what it replaced.
    """
    words = content_words(topic)
    words += [part for word in words for part in units_apart(word) if part != word]
    rows = tx.search_changes(
        scope,
        words,
        side=side,
        limit=n,
        since=window.start if window else None,
        until=window.end if window else None,
    )
    return [LexicalHit(row_id, version, -score) for row_id, version, score in rows]
