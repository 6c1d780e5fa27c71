"""The log's history: commits with their changes, one item's versions, and
the links between log rows that time travel, review and forgetting follow.
"""

from __future__ import annotations

import json
from collections.abc import Mapping, Sequence
from datetime import datetime
from typing import Any

from langgraph_chronomem.engine.core import TransactionCore
from langgraph_chronomem.engine.rows import (
    _Row,
    chunks,
    namespace_from_text,
    namespace_text,
    scope_text,
)
from langgraph_chronomem.engine.types import Change, Commit, ItemVersion, Namespace
from langgraph_chronomem.engine.values import decode_time, decode_value

__all__ = ["HistoryOps"]


class HistoryOps(TransactionCore):
    """The history reads of a transaction: log, show, history, row links.

    A mixin for `LogTransaction`.
    """

    def log(
        self,
        scope: Namespace,
        *,
        version: int | None = None,
        limit: int | None = None,
        since: datetime | None = None,
        until: datetime | None = None,
        author: str | None = None,
        op: str | None = None,
        labels: Mapping[str, str] | None = None,
        not_ops: Sequence[str] = (),
    ) -> list[Commit]:
        """Commits of a scope, newest first, with their changes; `labels`:
        only those carrying each of these labels with these values; `not_ops`:
        none of these ops."""
        sc = scope_text(scope)
        statement = self.sql.select_commits(
            sc,
            version=version,
            limit=limit,
            since=None if since is None else self.sql.encode_time(since),
            until=None if until is None else self.sql.encode_time(until),
            author=author,
            op=op,
            labels=labels,
            not_ops=not_ops,
        )
        return self._with_changes(scope, self.cur.execute(*statement).fetchall())

    def _with_changes(
        self, scope: Namespace, heads: Sequence[Sequence[Any]]
    ) -> list[Commit]:
        """Commit rows of one scope (newest first) with their changes attached."""
        if not heads:
            return []
        changes: dict[int, list[Change]] = {}
        lo, hi = heads[-1][1], heads[0][1]
        for ver, ns, key, new, old, new_erased, old_erased in self.cur.execute(
            self.sql.CHANGES_IN_RANGE, (scope_text(scope), lo, hi)
        ):
            changes.setdefault(ver, []).append(
                Change(
                    namespace_from_text(ns),
                    key,
                    decode_value(old),
                    decode_value(new),
                    old_erased,
                    new_erased,
                )
            )
        return [
            Commit(
                scope=scope,
                version=ver,
                seq=seq,
                parent=parent,
                created_at=decode_time(created),
                author=who,
                reason=why,
                op=op,
                changes=tuple(changes.get(ver, ())),
                labels=json.loads(labels),
                target=target,
            )
            for (
                seq,
                ver,
                parent,
                created,
                who,
                why,
                op,
                target,
                labels,
            ) in heads
        ]

    def row_links(
        self, ids: Sequence[int], *, following: bool = False
    ) -> list[tuple[int, int, int | None]]:
        """(row id, version, id of the row it replaced) for these log rows, or with
        `following`, for the rows that replaced them."""
        return [
            (row_id, version, prev_id)
            for chunk in chunks(list(dict.fromkeys(ids)))
            for row_id, version, prev_id in self.cur.execute(
                *self.sql.row_links(chunk, following=following)
            )
        ]

    def _rows_by_id(self, ids: Sequence[int]) -> dict[int, _Row]:
        rows = {}
        for chunk in chunks(ids):
            for rid, *rest in self.cur.execute(*self.sql.items_by_id(chunk)):
                rows[rid] = _Row(rid, *rest)
        return rows

    def versions_between(
        self, scope: Namespace, since: datetime | None, until: datetime | None
    ) -> set[int]:
        """The versions of the scope committed in `[since, until)`."""
        low = self.sql.encode_time(since or datetime.min)
        high = self.sql.encode_time(until or datetime.max)
        return {
            row[0]
            for row in self.cur.execute(
                self.sql.VERSIONS_BETWEEN, (scope_text(scope), low, high)
            )
        }

    def row_ids_of(self, scope: Namespace, version: int) -> list[int]:
        """The log rows a commit wrote, in the order of its `changes`."""
        return [
            row[0]
            for row in self.cur.execute(
                self.sql.COMMIT_ROWS, (scope_text(scope), version)
            )
        ]

    def show(self, scope: Namespace, version: int) -> Commit:
        """One commit."""
        self.check_version(scope, version, allow_zero=False)
        return self.log(scope, version=version)[0]

    def history(self, namespace: Namespace, key: str) -> list[ItemVersion]:
        """Every version of one item, newest first, deletions included."""
        scope = self.scope_of(namespace)
        rows = self.cur.execute(
            self.sql.HISTORY, (scope_text(scope), namespace_text(namespace), key)
        )
        return [
            ItemVersion(
                namespace=namespace,
                key=key,
                version=ver,
                seq=seq,
                op=op,
                author=who,
                committed_at=decode_time(committed),
                value=decode_value(value),
                created_at=None if created is None else decode_time(created),
                updated_at=None if updated is None else decode_time(updated),
                erased=erased,
                labels=json.loads(labels),
            )
            for (
                ver,
                seq,
                op,
                who,
                committed,
                value,
                created,
                updated,
                erased,
                labels,
            ) in rows
        ]
