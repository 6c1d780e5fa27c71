"""Reading the log: scopes and their HEADs, store-wide settings and numbers,
and items at HEAD or at any version of their scope.

A read at HEAD sees the rows with `valid_to IS NULL`, a read at version `v`
those with `version <= v < valid_to` (base.py tells the layout); with
`omit_expired`, a read at HEAD also hides the items whose TTL has passed. A
read on a branch (`BranchAt`) sees the base scope at the fork under the
branch's own rows (design.md, "Branches").
"""

from __future__ import annotations

import time
from collections.abc import Mapping, Sequence
from typing import Any

from langgraph_chronomem.engine.core import TransactionCore
from langgraph_chronomem.engine.rows import (
    chunks,
    namespace_from_text,
    namespace_text,
    rebuild_requests,
    scope_of,
    scope_text,
)
from langgraph_chronomem.engine.sql import BranchAt
from langgraph_chronomem.engine.types import (
    Namespace,
    ProjectionStats,
    ScopeStats,
    StoredItem,
    StoreStats,
)
from langgraph_chronomem.engine.values import decode_time, decode_value
from langgraph_chronomem.errors import VersionError, VersionNotFound

__all__ = ["ReadOps"]


class ReadOps(TransactionCore):
    """The reads of a transaction: scopes, settings, numbers and items.

    A mixin for `LogTransaction`; the other parts read through these.
    """

    # -- scopes and settings --------------------------------------------------

    def scope_of(self, namespace: Namespace) -> Namespace:
        """The scope a namespace is in; see `scope_of`."""
        return scope_of(namespace, self.scope_depth)

    def head(self, scope: Namespace) -> int:
        """The scope's HEAD version; 0 before its first commit."""
        head: int = self.cur.execute(self.sql.HEAD, (scope_text(scope),)).fetchone()[0]
        return head

    def stats(self, kept: Sequence[str] = ()) -> StoreStats:
        """Every scope's numbers, and how far each projection has read the log;
        those named in `kept` and never made yet have read nothing."""
        scopes = tuple(
            ScopeStats(
                namespace_from_text(sc),
                head,
                commits,
                items,
                versions,
                None if last is None else decode_time(last),
            )
            for sc, head, commits, last, items, versions in self.cur.execute(
                self.sql.SCOPE_STATS
            ).fetchall()
        )
        (last_seq,) = self.cur.execute(self.sql.LAST_SEQ).fetchone()
        projections = tuple(
            ProjectionStats(
                name,
                seq,
                self.cur.execute(self.sql.COMMITS_AFTER, (seq,)).fetchone()[0],
                tuple(dict.fromkeys(r.scope for r in rebuild_requests(rebuild))),
            )
            for name, seq, rebuild in self.cur.execute(
                self.sql.ALL_PROJECTIONS
            ).fetchall()
        )
        made = {p.name for p in projections}
        unmade = sorted(name for name in kept if name not in made)
        if unmade:
            (count,) = self.cur.execute(self.sql.COMMITS_AFTER, (0,)).fetchone()
            projections += tuple(ProjectionStats(n, 0, count, ()) for n in unmade)
        return StoreStats(scopes, last_seq, projections)

    def projection_names(self) -> list[str]:
        """The projections that have read the log: `stats()`'s, without
        counting every scope's items."""
        return [row[0] for row in self.cur.execute(self.sql.ALL_PROJECTIONS)]

    def meta(self, name: str) -> str | None:
        """A store-wide setting (`scope_depth`, the index settings…), if set."""
        row = self.cur.execute(self.sql.META, (name,)).fetchone()
        return None if row is None else str(row[0])

    def set_meta(self, name: str, value: str) -> None:
        """Record a store-wide setting. Needs a write transaction."""
        self.cur.execute(self.sql.SET_META, (name, value))

    def first_meta(self, name: str, value: str) -> str:
        """Record a store-wide setting unless one is recorded, by this or a
        racing writer; returns the one that stands. Needs a write transaction."""
        self.cur.execute(self.sql.FIRST_META, (name, value))
        stored = self.meta(name)
        assert stored is not None  # recorded, by this transaction or another
        return stored

    def head_seq(self, scope: Namespace) -> int:
        """The `seq` of the scope's HEAD commit (0 before its first commit).

        Unlike the version number, it is never reused after a reset, so it tells
        whether HEAD is still the commit something was computed against.
        """
        return self.commit_seq(scope, self.head(scope))

    def commit_seq(self, scope: Namespace, version: int) -> int:
        """The `seq` of the scope's commit at `version`; 0 for version 0 or a
        version the scope does not have (any more)."""
        row = self.cur.execute(
            self.sql.COMMIT_SEQ, (scope_text(scope), version)
        ).fetchone()
        return row[0] if row else 0

    def _op_of(self, scope: Namespace, version: int) -> str | None:
        """The op of the scope's commit at `version`, if it has one."""
        row = self.cur.execute(
            self.sql.COMMIT_OP, (scope_text(scope), version)
        ).fetchone()
        return None if row is None else str(row[0])

    def check_version(self, scope: Namespace, version: int, *, allow_zero: bool) -> int:
        """Validate a version number against the scope's history; return HEAD."""
        if isinstance(version, bool) or not isinstance(version, int):
            raise VersionError(f"a version is an int, got {version!r}")
        head = self.head(scope)
        lowest = 0 if allow_zero else 1
        if not lowest <= version <= head:
            where = "/".join(scope) or "the store"
            raise VersionNotFound(
                f"{where} has no version {version}; its versions are "
                + (f"{lowest}..{head}" if head else "none yet (HEAD is 0)")
            )
        return head

    # -- items ----------------------------------------------------------------

    def _live_after(self, version: int | None) -> float | None:
        return time.time() if self.omit_expired and version is None else None

    def get(
        self,
        namespace: Namespace,
        keys: Sequence[str],
        *,
        version: int | None = None,
        branch: BranchAt | None = None,
    ) -> dict[str, StoredItem]:
        """Items of one namespace by key, at HEAD, at `version` of its scope
        or on `branch`."""
        branch, version = _on(branch, version)
        found: dict[str, StoredItem] = {}
        for chunk in chunks(list(dict.fromkeys(keys))):
            statement = (
                self.sql.select_items(
                    namespace=namespace_text(namespace),
                    keys=chunk,
                    version=version,
                    live_after=self._live_after(version),
                )
                if branch is None
                else self.sql.select_items_on_branch(
                    namespace=namespace_text(namespace), keys=chunk, at=branch
                )
            )
            for row in self.cur.execute(*statement):
                item = _stored(row, branch)
                found[item.key] = item
        return found

    def search(
        self,
        prefix: Namespace,
        *,
        filter: Mapping[str, Any] | None = None,
        limit: int = 10,
        offset: int = 0,
        scope: Namespace | None = None,
        version: int | None = None,
        among: Sequence[tuple[Namespace, str]] | None = None,
        branch: BranchAt | None = None,
    ) -> list[StoredItem]:
        """Items under a namespace prefix, newest update first.

        With `version`, reads the state of `scope` at that version; with `among`,
        only those (namespace, key) items; with `branch`, the branch's.
        """
        branch, version = _on(branch, version)
        if branch is not None:
            found = self.sql.search_items_on_branch(
                prefix=namespace_text(prefix),
                filter=filter,
                limit=limit,
                offset=offset,
                at=branch,
            )
            return [_stored(row, branch) for row in self.cur.execute(*found)]
        statement = self.sql.search_items(
            prefix=namespace_text(prefix),
            filter=filter,
            limit=limit,
            offset=offset,
            scope=None if scope is None else scope_text(scope),
            version=version,
            live_after=self._live_after(version),
            among=None if among is None else [(namespace_text(n), k) for n, k in among],
        )
        return [_stored(row) for row in self.cur.execute(*statement)]

    def namespaces(
        self,
        prefix: Namespace = (),
        *,
        scope: Namespace | None = None,
        version: int | None = None,
        branch: BranchAt | None = None,
    ) -> list[Namespace]:
        """Every namespace holding an item, under a fixed prefix."""
        branch, version = _on(branch, version)
        if branch is not None:
            found = self.sql.select_namespaces_on_branch(
                prefix=namespace_text(prefix), at=branch
            )
            texts = {branch.unmounted(row[0]) for row in self.cur.execute(*found)}
            return [namespace_from_text(text) for text in sorted(texts)]
        statement = self.sql.select_namespaces(
            prefix=namespace_text(prefix),
            scope=None if scope is None else scope_text(scope),
            version=version,
            live_after=self._live_after(version),
        )
        return [namespace_from_text(row[0]) for row in self.cur.execute(*statement)]

    def refresh_ttl(self, namespace: Namespace, keys: Sequence[str]) -> None:
        """Restart the TTL clock of the given live items. Writes no version."""
        now = time.time()
        for chunk in chunks(list(dict.fromkeys(keys))):
            self.cur.execute(
                *self.sql.refresh_ttl(namespace_text(namespace), chunk, now)
            )


def _on(
    branch: BranchAt | None, version: int | None
) -> tuple[BranchAt | None, int | None]:
    """Where a read looks: a branch at or before its fork is the base scope at
    that version."""
    if branch is not None and branch.version <= branch.fork:
        return None, branch.version
    return branch, version


def _stored(row: Sequence[Any], branch: BranchAt | None = None) -> StoredItem:
    """A read's row (namespace, key, value, created, updated, ttl, id) as an
    item; one read on a branch, without the branch's mount."""
    ns, key, value, created, updated, ttl, row_id = row
    if branch is not None:
        ns = branch.unmounted(ns)
    created_at = decode_time(created)
    return StoredItem(
        namespace_from_text(ns),
        key,
        decode_value(value),  # type: ignore[arg-type]
        created_at,
        # An item read as first written: one datetime (immutable) for both.
        created_at if updated == created else decode_time(updated),
        ttl,
        row_id,
    )
