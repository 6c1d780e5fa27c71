"""What derived indexes read from the log, and how far each has read.

A projection (a Chroma collection of HEAD items, of item changes…) keeps a
mark: the last commit `seq` it has applied. It catches up by reading the commits
after its mark, applying them, and saving the new mark — so a crash between a
commit and its projection update only delays the update to the next catch-up.
A `reset` cannot be caught up that way (it deletes commits), so it also asks
every projection to rebuild the scope it reset.

    >>> import tempfile, pathlib
    >>> from langgraph_chronomem.engine import CommitMeta, SqliteEngine, Write
    >>> engine = SqliteEngine(pathlib.Path(tempfile.mkdtemp()) / "log.sqlite3")
    >>> with engine.transaction(write=True) as tx:
    ...     _ = tx.commit([Write(("notes",), "a", {"t": "hi"})], CommitMeta())
    ...     feed = ProjectionFeed(tx)
    ...     feed.state("demo")
    ...     [(ns, key) for ns, key in feed.changed_items(0, 10)]
    ProjectionState(seq=0, requests=(), remade=0)
    [(('notes',), 'a')]
    >>> engine.close()
"""

from __future__ import annotations

import json
import time
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any, Literal

from langgraph_chronomem.engine.base import LogTransaction
from langgraph_chronomem.engine.rows import (
    RebuildRequest,
    chunks,
    namespace_from_text,
    namespace_text,
    rebuild_requests,
    rebuild_text,
    scope_text,
)
from langgraph_chronomem.engine.types import Namespace
from langgraph_chronomem.engine.values import decode_value

__all__ = ["VECTOR_LOG", "HeadRow", "ProjectionFeed", "ProjectionState"]

_LEASE = "catch-up lease {}"  # the setting holding a projection's lease

VECTOR_LOG = "vector_log"
"""The setting that names this log among the logs sharing a Chroma: its
collections carry the name. Never copied: a copy is another log."""


@dataclass(frozen=True)
class ProjectionState:
    """How far a projection has read the log, the requests to make scopes
    again it has not met yet (a scope reset twice while it was being rebuilt
    has two), and how many times a scope of it was made again (`remade`)."""

    seq: int
    requests: tuple[RebuildRequest, ...] = ()
    remade: int = 0

    @property
    def rebuild(self) -> tuple[Namespace, ...]:
        """The scopes it must make again, each once."""
        return tuple(dict.fromkeys(r.scope for r in self.requests))

    def tickets(self, scope: Namespace) -> tuple[str, ...]:
        """The tickets of the requests to make `scope` again."""
        return tuple(r.ticket for r in self.requests if r.scope == scope)


@dataclass(frozen=True)
class HeadRow:
    """An item at HEAD, with the id of the log row that holds it.

    `index` is the put's `index` argument: `None` (the store's default fields),
    `False` (not embedded) or a list of field paths.
    """

    row_id: int
    scope: Namespace
    namespace: Namespace
    key: str
    value: dict[str, Any]
    index: Literal[False] | list[str] | None


def _head_row(row: Sequence[Any]) -> HeadRow:
    row_id, scope, ns, key, value, index = row
    return HeadRow(
        row_id,
        namespace_from_text(scope),
        namespace_from_text(ns),
        key,
        decode_value(value),  # type: ignore[arg-type]
        None if index is None else json.loads(index),
    )


class ProjectionFeed:
    """Reads for projections, inside one log transaction."""

    def __init__(self, tx: LogTransaction) -> None:
        self.tx, self.cur, self.sql = tx, tx.cur, tx.sql

    def state(self, name: str) -> ProjectionState:
        """The projection's mark; one never saved starts at 0 (the whole log)."""
        row = self.cur.execute(self.sql.PROJECTION, (name,)).fetchone()
        if row is None:
            return ProjectionState(0)
        seq, rebuild, remade = row
        return ProjectionState(seq, tuple(rebuild_requests(rebuild)), remade)

    def save(self, name: str, state: ProjectionState) -> None:
        """Record the whole state: for a projection made anew."""
        rebuild = rebuild_text(state.requests)
        self.cur.execute(self.sql.SAVE_PROJECTION, (state.seq, rebuild, name))

    def advance(self, name: str, seq: int, *, since: int) -> bool:
        """Record that the projection has applied every commit up to `seq`,
        if its mark is still `since`, where the catch-up read it; leave the
        scopes it must rebuild as they are now (a reset may have added one).
        Returns False if the mark moved meanwhile (another store caught up,
        or reset it to make the projection anew): it stays as it is."""
        moved = self.cur.execute(self.sql.ADVANCE_PROJECTION, (seq, name, since))
        return moved.fetchone() is not None

    def rebuilt(self, name: str, scope: Namespace, tickets: Sequence[str]) -> None:
        """Record that `scope` was made again for the requests with these
        `tickets`, read before the rebuild began: only those are struck (a
        request made since keeps asking, though another store's rebuild
        struck these meanwhile), and count it in `remade`, so other stores
        read their copies anew. Needs a write transaction."""
        row = self.cur.execute(self.sql.PROJECTION_FOR_UPDATE, (name,)).fetchone()
        if row is None:
            return
        met, left = list(tickets), []
        for request in rebuild_requests(row[1]):
            if request.scope == scope and request.ticket in met:
                met.remove(request.ticket)
            else:
                left.append(request)
        self.cur.execute(self.sql.REBUILT, (rebuild_text(left), name))

    def remade(self, name: str) -> None:
        """Count a part of the projection made again outside a rebuild, so
        other stores read their copies anew. Needs a write transaction."""
        self.cur.execute(self.sql.REMADE, (name,))

    def leased_to_another(self, name: str, owner: str) -> bool:
        """Whether another owner than `owner` holds an unexpired lease on
        projection `name`'s catch-up (see `lease`): a read, to skip the write
        transaction `lease` takes."""
        held = self._lease(name)
        return held is not None and held[0] != owner and held[1] > time.time()

    def lease_left(self, name: str, owner: str) -> float:
        """Seconds left on `owner`'s lease on projection `name`'s catch-up
        (0 when another owner, or none, holds it): a read."""
        held = self._lease(name)
        if held is None or held[0] != owner:
            return 0.0
        return max(0.0, held[1] - time.time())

    def lease(self, name: str, owner: str, *, seconds: float) -> bool:
        """Take, or renew, the lease on projection `name`'s catch-up for
        `owner` (a process's catch-up of the shared log) for `seconds`, unless
        another owner holds one that has not expired. Returns whether `owner`
        holds it now. Compare and set: the projection's row is locked first
        (on PostgreSQL; a SQLite write transaction holds the whole file), so
        of two stores asking at once one gets it. Needs a write transaction.

            >>> import tempfile, pathlib
            >>> from langgraph_chronomem.engine import SqliteEngine
            >>> engine = SqliteEngine(pathlib.Path(tempfile.mkdtemp()) / "l.sqlite3")
            >>> with engine.transaction(write=True) as tx:
            ...     feed = ProjectionFeed(tx)
            ...     [feed.lease("demo", owner, seconds=30) for owner in "ab"]
            [True, False]
            >>> engine.close()
        """
        self.cur.execute(self.sql.PROJECTION_FOR_UPDATE, (name,)).fetchall()
        if self.leased_to_another(name, owner):
            return False
        until = time.time() + seconds
        self.tx.set_meta(_LEASE.format(name), json.dumps([owner, until]))
        return True

    def release(self, name: str, owner: str) -> None:
        """Give up `owner`'s lease on `name`'s catch-up, if it holds it.
        Needs a write transaction."""
        self.cur.execute(self.sql.PROJECTION_FOR_UPDATE, (name,)).fetchall()
        held = self._lease(name)
        if held is not None and held[0] == owner:
            self.tx.set_meta(_LEASE.format(name), json.dumps([owner, 0]))

    def _lease(self, name: str) -> tuple[str, float] | None:
        stored = self.tx.meta(_LEASE.format(name))
        if stored is None:
            return None
        owner, until = json.loads(stored)
        return str(owner), float(until)

    def forget(self, name: str) -> None:
        """Drop the mark of a projection that is gone for good."""
        self.cur.execute(self.sql.FORGET_PROJECTION, (name,))

    def commit_seqs_after(self, seq: int, *, limit: int) -> list[int]:
        """The next commits' seqs after `seq`, oldest first."""
        return [row[0] for row in self.cur.execute(self.sql.SEQS_AFTER, (seq, limit))]

    def last_seq(self) -> int:
        """The newest commit's seq (0 for an empty log)."""
        return int(self.cur.execute(self.sql.LAST_SEQ).fetchone()[0])

    def count_after(self, seq: int) -> int:
        """How many commits come after `seq`: the work a catch-up from there has."""
        return int(self.cur.execute(self.sql.COMMITS_AFTER, (seq,)).fetchone()[0])

    def last_row_upto(self, seq: int) -> int:
        """A log row at or below which every row was written by a commit up
        to `seq` (0 for none): on SQLite, whose writers take turns, that
        commits' last row; on PostgreSQL also below any later commit's."""
        row = self.cur.execute(self.sql.LAST_ROW_UPTO, (seq,)).fetchone()
        return 0 if row is None or row[0] is None else int(row[0])

    def changed_items(self, after: int, upto: int) -> list[tuple[Namespace, str]]:
        """Every item a commit with `after < seq <= upto` changed."""
        return [
            (namespace_from_text(ns), key)
            for ns, key in self.cur.execute(self.sql.CHANGED_ITEMS, (after, upto))
        ]

    def head_rows(self, items: Sequence[tuple[Namespace, str]]) -> list[HeadRow]:
        """The HEAD rows of these items (deleted ones are simply absent)."""
        pairs = [(namespace_text(ns), key) for ns, key in items]
        return [
            _head_row(row)
            for chunk in chunks(pairs)
            for row in self.cur.execute(*self.sql.head_rows(chunk))
        ]

    def newest_rows(
        self, items: Sequence[tuple[Namespace, str]]
    ) -> dict[tuple[Namespace, str], int]:
        """The id of each item's newest log row (a deletion's too)."""
        pairs = [(namespace_text(ns), key) for ns, key in items]
        return {
            (namespace_from_text(ns), key): row_id
            for chunk in chunks(pairs)
            for ns, key, row_id in self.cur.execute(*self.sql.newest_rows(chunk))
        }

    def index_of(
        self, ids: Sequence[int]
    ) -> dict[int, Literal[False] | list[str] | None]:
        """The `index` argument of the puts that wrote these log rows, as
        `HeadRow.index` holds it: what a search of a past state embeds."""
        found: dict[int, Literal[False] | list[str] | None] = {}
        for chunk in chunks(list(ids)):
            for row_id, *_, index, _erased in self.cur.execute(
                *self.sql.items_by_id(chunk)
            ):
                found[row_id] = None if index is None else json.loads(index)
        return found

    def holding_values(self, ids: Sequence[int]) -> set[int]:
        """Which of these log rows still hold a value (not erased, not gone)."""
        return {
            row[0]
            for chunk in chunks(list(ids))
            for row in self.cur.execute(*self.sql.holding_values(chunk))
        }

    def scope_head(self, scope: Namespace) -> list[HeadRow]:
        """Every item of a scope at HEAD."""
        return [
            _head_row(row)
            for row in self.cur.execute(self.sql.SCOPE_HEAD, (scope_text(scope),))
        ]
