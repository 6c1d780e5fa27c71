"""The full-text change index: BM25 over what each commit changed.

The index is a projection of the log with a mark (`FULL_TEXT`), as the vector
ones are, and keeps only terms: the text of a change (`change_text`) is
rendered from the log whenever it is read (`change_rows`).
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from datetime import datetime
from typing import Any

from langgraph_chronomem.engine.core import TransactionCore
from langgraph_chronomem.engine.describe import CHANGE_TEXT_VERSION, change_text
from langgraph_chronomem.engine.rows import (
    ChangeRow,
    _index_rows,
    chunks,
    namespace_from_text,
    scope_key,
    scope_text,
)
from langgraph_chronomem.engine.types import Change, Namespace
from langgraph_chronomem.engine.values import decode_time, decode_value

__all__ = ["FULL_TEXT", "ChangeIndexOps"]

FULL_TEXT = "full-text"  # the descriptor index's name in the projections table
# The setting recording which `change_text` derivation the word index holds.
_CHANGE_TEXT = "change_text"


class ChangeIndexOps(TransactionCore):
    """The change index's operations: keep it up to the log, search it.

    A mixin for `LogTransaction`.
    """

    def search_changes(
        self,
        scope: Namespace,
        words: Sequence[str],
        *,
        side: str = "new",
        limit: int,
        since: datetime | None = None,
        until: datetime | None = None,
    ) -> list[tuple[int, int, float]]:
        """BM25 over the scope's item changes: (row id, version, score), best first.

        `side="new"` matches what changes introduced, `"old"` what they
        replaced. Lower scores are better (SQLite's bm25 sign convention). Sees
        the changes `index_changes` has indexed: call it first.
        """
        if not words:
            return []
        statement = self.sql.search_changes(
            scope_key(scope),
            words,
            side=side,
            limit=limit,
            since=None if since is None else self.sql.encode_time(since),
            until=None if until is None else self.sql.encode_time(until),
        )
        return [
            (row_id, version, score)
            for row_id, version, score in self.cur.execute(*statement)
        ]

    def indexed_text(self, row_id: int) -> tuple[str, str, str] | None:
        """The (new, old, context) text the change index reads for a log row,
        rendered from the log (the index keeps only terms); `None` for a row
        it never reads (a proposal's, or none)."""
        rows = self.change_rows_of([row_id])
        if not rows:
            return None
        text = rows[0].text
        return text.new, text.old, text.context

    def change_rows(
        self, *, after: int = 0, upto: int = 0, scope: Namespace | None = None
    ) -> list[ChangeRow]:
        """Item changes with their texts: of the commits with `after < seq <=
        upto`, or of `scope`'s commits after `after` (0: every one); oldest
        first."""
        if scope is not None:
            rows = self.cur.execute(
                self.sql.SCOPE_CHANGE_ROWS, (scope_text(scope), after)
            )
        else:
            rows = self.cur.execute(self.sql.CHANGE_ROWS_BETWEEN, (after, upto))
        return self._change_rows(rows)

    def change_rows_of(self, ids: Sequence[int]) -> list[ChangeRow]:
        """These log rows' changes with their texts, as the log reads now
        (proposals' rows have none)."""
        return [
            row
            for chunk in chunks(list(ids))
            for row in self._change_rows(
                self.cur.execute(*self.sql.change_rows_of(chunk))
            )
        ]

    def _change_rows(self, rows: Iterable[Sequence[Any]]) -> list[ChangeRow]:
        """`ChangeRow`s of the rows the change-row statements select."""
        found = []
        for row_id, sc, version, created, ns, key, new, old, author, reason, op in rows:
            change = Change(
                namespace_from_text(ns), key, decode_value(old), decode_value(new)
            )
            if op in ("rollback", "revert"):  # its reason is the request that made
                reason = None  # it: left out, so the same words find the change
            text = change_text(change, self.scope_depth, author=author, reason=reason)
            found.append(
                ChangeRow(
                    row_id, namespace_from_text(sc), version, decode_time(created), text
                )
            )
        return found

    def index_changes(self, *, batch: int = 500, limit: int | None = None) -> int:
        """Bring the full-text change index up to the log. Returns commits added.

        The index is a projection with a mark like any other: writes skip it (it
        would double a put's pages), and searches call this first, so BM25 always
        sees every change. Needs a write transaction. An index made from an
        earlier derivation of the text (`CHANGE_TEXT_VERSION`) is made again.

        Args:
            batch: Commits read at a time.
            limit: Stop after this many commits (default: at the log's end), so
                a background caller holds the write lock the store's puts and
                reads wait for only briefly; the next call goes on from there.
        """
        self.cur.execute(self.sql.FIRST_PROJECTION, (FULL_TEXT,))
        seq = self.hold_change_index()
        if self.meta(_CHANGE_TEXT) != str(CHANGE_TEXT_VERSION):
            self._clear_changes()
            self.set_meta(_CHANGE_TEXT, str(CHANGE_TEXT_VERSION))
            seq = 0
        added = 0
        while limit is None or added < limit:
            step = batch if limit is None else min(batch, limit - added)
            seqs = [r[0] for r in self.cur.execute(self.sql.SEQS_AFTER, (seq, step))]
            if not seqs:
                break
            rows = _index_rows(self.change_rows(after=seq, upto=seqs[-1]))
            for statement, params in self.sql.index_changes(rows):
                self.cur.executemany(statement, params)
            seq, added = seqs[-1], added + len(seqs)
            self.cur.execute(self.sql.SAVE_PROJECTION, (seq, "[]", FULL_TEXT))
        return added

    def reindex_changes(self) -> int:
        """Rebuild the full-text change index from the log."""
        self.hold_change_index()
        self._clear_changes()
        return self.index_changes()

    def hold_change_index(self) -> int:
        """The change index's mark, its row held until the transaction ends:
        whatever changes the index (a catch-up, a reindex, a reset, a
        redaction, a compaction) in another process waits here for this one,
        not halfway through (two adding the same rows, or one deleting rows
        the other adds, deadlock on PostgreSQL). Taken before any scope's
        lock, as a catch-up waits for the writers holding one. 0 (and nothing
        held) before the index was first made."""
        row = self.cur.execute(self.sql.PROJECTION_FOR_UPDATE, (FULL_TEXT,)).fetchone()
        return 0 if row is None else int(row[0])

    def _clear_changes(self) -> None:
        self.cur.execute(self.sql.CLEAR_CHANGES)
        self.cur.execute(self.sql.SAVE_PROJECTION, (0, "[]", FULL_TEXT))
