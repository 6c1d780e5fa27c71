"""BM25 over a scope's commit descriptors, through the log's full-text index.

The index lives in the log's own database (FTS5 on SQLite) and is written in each
commit's transaction, so it never lags. Requests are reduced to their content
words first, and each word is quoted by the dialect: any text is a valid query.

    >>> import tempfile
    >>> from langgraph_chronomem.engine import CommitMeta, SqliteEngine, Write
    >>> engine = SqliteEngine(tempfile.mkdtemp() + "/log.sqlite3", scope_depth=1)
    >>> with engine.transaction(write=True) as tx:
    ...     _ = tx.commit([Write(("alice",), "home", {"city": "Boston"})], CommitMeta())
    ...     _ = tx.commit([Write(("alice",), "home", {"city": "NYC"})], CommitMeta())
    ...     _ = tx.index_descriptors()
    ...     [hit.version for hit in bm25(tx, ("alice",), "my move to NYC", n=5)]
    [2]
"""

from __future__ import annotations

from dataclasses import dataclass

from langgraph_chronomem.engine.base import LogTransaction
from langgraph_chronomem.engine.types import Namespace
from langgraph_chronomem.search.intent import TimeWindow, content_words

__all__ = ["LexicalHit", "bm25"]


@dataclass(frozen=True)
class LexicalHit:
    """A commit whose descriptor shares words with the request; higher is better."""

    version: int
    score: float


def bm25(
    tx: LogTransaction,
    scope: Namespace,
    topic: str,
    *,
    n: int,
    window: TimeWindow | None = None,
) -> list[LexicalHit]:
    """The `n` best BM25 matches for `topic` among the scope's commits, best first."""
    rows = tx.search_descriptors(
        scope,
        content_words(topic),
        limit=n,
        since=window.start if window else None,
        until=window.end if window else None,
    )
    return [LexicalHit(version, -score) for version, score in rows]
