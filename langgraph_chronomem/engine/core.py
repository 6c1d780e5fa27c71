"""What the parts of a transaction use of each other.

`ReadOps`, `HistoryOps`, `WriteOps`, `ChangeIndexOps`, `TravelOps`,
`ProposalOps`, `ForgettingOps`, `TagOps` and `BranchOps` each hold one kind
of operation; `LogTransaction` (base.py) inherits them all. What one part
calls of another is declared here once, for the type checker: at run time this
class holds nothing, and no part imports another's class or base.py.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping, Sequence
from datetime import datetime
from typing import TYPE_CHECKING, Any

from langgraph_chronomem.engine.rows import ChangeRow, _NewRow, _Row, _Written
from langgraph_chronomem.engine.sql import BranchAt, Cursor, Dialect
from langgraph_chronomem.engine.types import (
    Change,
    Commit,
    CommitMeta,
    Conflict,
    Namespace,
    Op,
    StoredItem,
    Write,
)


class TransactionCore:
    """A transaction's cursor, SQL and settings, and the methods of
    `LogTransaction` that its parts call of each other."""

    cur: Cursor
    sql: Dialect
    scope_depth: int
    omit_expired: bool

    if TYPE_CHECKING:

        def check_version(
            self, scope: Namespace, version: int, *, allow_zero: bool
        ) -> int: ...

        def commit_seq(self, scope: Namespace, version: int) -> int: ...

        def head(self, scope: Namespace) -> int: ...

        def get(
            self,
            namespace: Namespace,
            keys: Sequence[str],
            *,
            version: int | None = None,
            branch: BranchAt | None = None,
        ) -> dict[str, StoredItem]: ...

        def hold_change_index(self) -> int: ...

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
        ) -> list[Commit]: ...

        def meta(self, name: str) -> str | None: ...

        def scope_of(self, namespace: Namespace) -> Namespace: ...

        def row_ids_of(self, scope: Namespace, version: int) -> list[int]: ...

        def row_links(
            self, ids: Sequence[int], *, following: bool = False
        ) -> list[tuple[int, int, int | None]]: ...

        def set_meta(self, name: str, value: str) -> None: ...

        def change_rows_of(self, ids: Sequence[int]) -> list[ChangeRow]: ...

        def _commit(
            self,
            scope: Namespace,
            op: Op,
            rows: Sequence[_NewRow],
            meta: CommitMeta,
            *,
            target: int | None = None,
        ) -> Commit | None: ...

        def _op_of(self, scope: Namespace, version: int) -> str | None: ...

        def _branch_row(
            self, at: BranchAt, namespace: str, key: str
        ) -> tuple[Any, ...] | None: ...

        def _lock_in_order(self, scopes: Iterable[Namespace]) -> None: ...

        def branch_mounts(self, scope: Namespace) -> list[BranchAt]: ...

        def branch_of_mount(self, scope: Namespace) -> BranchAt | None: ...

        def _plan_revert(
            self,
            scope: Namespace,
            version: int,
            items: Sequence[tuple[Namespace, str]] | None,
            fields: Sequence[str] = (),
        ) -> tuple[list[_NewRow], tuple[Change, ...], tuple[Conflict, ...]]: ...

        def _rebuild_projections(self, scope: Namespace) -> None: ...

        def _write_all(
            self,
            writes: Sequence[Write],
            meta: CommitMeta,
            *,
            branch: BranchAt | None = None,
        ) -> list[_Written]: ...

        def _rows_by_id(self, ids: Sequence[int]) -> dict[int, _Row]: ...

        def _write(
            self,
            scope: Namespace,
            op: Op,
            rows: Sequence[_NewRow],
            meta: CommitMeta,
            *,
            target: int | None = None,
            branch: BranchAt | None = None,
        ) -> _Written | None: ...
