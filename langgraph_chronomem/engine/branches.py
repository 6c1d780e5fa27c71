"""Named branches of a scope: made, listed, written, compared, merged, deleted.

A branch is a scope of its own mounted where no LangGraph namespace can be
(design.md, "Branches"): its commits and rows go to the log as any scope's, by
`_write`, and a read on it sees the base scope at the fork under its own rows
(`sql.BranchAt`). The `branches` table keeps each one's fork and last merge.

    >>> import tempfile, pathlib
    >>> from langgraph_chronomem.engine.sqlite import SqliteEngine
    >>> from langgraph_chronomem.engine.types import CommitMeta, Write
    >>> engine = SqliteEngine(pathlib.Path(tempfile.mkdtemp()) / "log.db")
    >>> hi, yo = Write(("notes",), "a", {"t": "hi"}), Write(("notes",), "a", {"t": "yo"})
    >>> with engine.transaction(write=True) as tx:  # scope_depth 0: one scope, ()
    ...     _ = tx.commit([hi], CommitMeta())
    ...     str(tx.create_branch((), "try"))
    ...     tx.write_on_branch((), "try", [yo], CommitMeta())
    ...     on_try = tx.branch_at((), "try")
    ...     tx.get(("notes",), ["a"])["a"].value, tx.get(("notes",), ["a"], branch=on_try)["a"].value
    'try (from v1, at v1)'
    1
    ({'t': 'hi'}, {'t': 'yo'})
    >>> engine.close()
"""  # noqa: E501

from __future__ import annotations

import re
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import replace
from datetime import datetime
from typing import Any, Literal

from langgraph_chronomem.engine.core import TransactionCore
from langgraph_chronomem.engine.merge import theirs_on_clashes, three_way
from langgraph_chronomem.engine.rows import (
    _NewRow,
    chunks,
    namespace_from_text,
    namespace_text,
    scope_text,
)
from langgraph_chronomem.engine.sql import BranchAt
from langgraph_chronomem.engine.travel import _merged, _restored
from langgraph_chronomem.engine.types import (
    Branch,
    Change,
    Commit,
    CommitMeta,
    MergeConflict,
    Namespace,
    RevertConflict,
    StoredItem,
    Write,
)
from langgraph_chronomem.engine.values import decode_time
from langgraph_chronomem.engine.writes import _record
from langgraph_chronomem.errors import (
    BranchError,
    BranchNotFound,
    MergeConflictError,
    ScopeError,
    VersionError,
    VersionNotFound,
)

__all__ = ["BRANCH_LABEL", "BranchOps", "Resolve"]

BRANCH_LABEL = "branch"
"""The label naming the branch a commit was made on, or merged from."""

_NAME = re.compile(r"[A-Za-z0-9][A-Za-z0-9_-]{0,63}")

Resolve = Literal["ours", "theirs"] | Mapping[tuple[Namespace, str], Any] | None
"""How a merge settles its conflicts: the branch's side (`"ours"`), HEAD's
(`"theirs"`), or the value each conflicting item is to hold (`None`: deleted),
by (namespace, key)."""


class BranchOps(TransactionCore):
    """The branches of a transaction. A mixin for `LogTransaction`."""

    def create_branch(
        self, scope: Namespace, name: str, *, at: int | None = None
    ) -> Branch:
        """Make branch `name` of `scope` at version `at` (HEAD by default).

        Raises:
            BranchError: For a name that is not one word of letters, digits,
                `-` and `_` (at most 64), or one the scope has.
            VersionNotFound: For an `at` the scope does not have.
        """
        if not isinstance(name, str) or not _NAME.fullmatch(name):
            raise BranchError(
                f"a branch name is one word of letters, digits, '-' and '_' "
                f"(at most 64, not starting with '-' or '_'); got {name!r}"
            )
        head = self.head(scope)
        fork = head if at is None else at
        self.check_version(scope, fork, allow_zero=True)
        sc = scope_text(scope)
        if self.cur.execute(self.sql.BRANCH, (sc, name)).fetchone() is not None:
            raise BranchError(
                f"{_where(scope)} has a branch {name!r} already; pick another "
                "name, or delete it first"
            )
        self.cur.execute(
            self.sql.ADD_BRANCH,
            (sc, name, fork, self.commit_seq(scope, fork), fork, self.sql.now()),
        )
        return self.branch(scope, name)

    def branches(self, scope: Namespace) -> list[Branch]:
        """The scope's branches, by name."""
        rows = self.cur.execute(self.sql.BRANCHES, (scope_text(scope),)).fetchall()
        return [self._record(scope, row) for row in rows]

    def branch_mounts(self, scope: Namespace) -> list[BranchAt]:
        """Where each of the scope's branches keeps its rows (at its fork)."""
        rows = self.cur.execute(self.sql.BRANCHES, (scope_text(scope),)).fetchall()
        return [_at(scope, tuple(row)) for row in rows]

    def branch_of_mount(self, scope: Namespace) -> BranchAt | None:
        """The branch whose own scope `scope` is (`("", id, *base scope)`, as
        its commits and rows are kept), at its fork; `None` for any other."""
        if scope[:1] != ("",) or len(scope) < 2:
            return None
        mount = f".{scope[1]}"
        found = [at for at in self.branch_mounts(scope[2:]) if at.mount == mount]
        return found[0] if found else None

    def revert_on_branch(
        self,
        scope: Namespace,
        name: str,
        version: int,
        meta: CommitMeta,
        *,
        items: Sequence[tuple[Namespace, str]] | None = None,
        fields: Sequence[str] = (),
        force: bool = False,
    ) -> Commit | RevertConflict:
        """`revert` of one of branch `name`'s own commits (`version`, a
        branch version), as a new commit on the branch, three-way against
        what the branch holds; HEAD is untouched. `items` and the result's
        namespaces are as the branch is read (without its mount).

        Raises:
            BranchNotFound: If the scope has no branch of that name.
            VersionError: As `revert` (nothing to undo, a version that is not
                the branch's own).
        """
        at = self.branch_at(scope, name)
        own = namespace_from_text(at.scope_text)
        self.head(own)  # its lock: another write on the branch waits
        if not at.fork < version <= self._branch_head(at):
            raise VersionError(
                f"v{version} is not a commit of branch {name!r} (its own are "
                f"v{at.fork + 1}..v{self._branch_head(at)})"
            )
        mounted = None if items is None else [((*own[:2], *ns), k) for ns, k in items]
        restore, _, conflicts = self._plan_revert(own, version, mounted, fields)
        if conflicts and not force:
            return RevertConflict(
                scope,
                version,
                tuple(replace(c, namespace=c.namespace[2:]) for c in conflicts),
            )
        if not restore:
            raise VersionError(f"v{version}'s changes are already undone on the branch")
        rows = [row._replace(namespace=at.unmounted(row.namespace)) for row in restore]
        labelled = replace(meta, labels={**meta.labels, BRANCH_LABEL: name})
        written = self._write(
            scope, "revert", rows, labelled, target=version, branch=at
        )
        assert written is not None  # `restore` changes something
        return _record(written, labelled)

    def branch(self, scope: Namespace, name: str) -> Branch:
        """Branch `name` of `scope`.

        Raises:
            BranchNotFound: If the scope has no branch of that name.
        """
        return self._record(scope, self._branch_row_of(scope, name))

    def branch_at(
        self, scope: Namespace, name: str, version: int | None = None
    ) -> BranchAt:
        """Where a read of branch `name` at `version` (its head by default)
        looks.

        Raises:
            BranchNotFound: If the scope has no branch of that name.
            BranchError: If a reset of the scope destroyed its fork.
            VersionNotFound: For a version past the branch's head.
        """
        row = self._branch_row_of(scope, name)
        at = _at(scope, row)
        if self.commit_seq(scope, at.fork) != row[3]:
            raise BranchError(
                f"branch {name!r} of {_where(scope)} started at v{at.fork}, which "
                "a reset has since destroyed; delete the branch"
            )
        head = self._branch_head(at)
        if version is None:
            return at._replace(version=head)
        if isinstance(version, bool) or not isinstance(version, int):
            raise VersionError(f"a version is an int, got {version!r}")
        if not 0 <= version <= head:
            raise VersionNotFound(
                f"branch {name!r} of {_where(scope)} has no version {version}; "
                f"its versions are 0..{head}"
            )
        return at._replace(version=version)

    def write_on_branch(
        self,
        scope: Namespace,
        name: str,
        writes: Iterable[Write],
        meta: CommitMeta,
    ) -> int:
        """Commit writes to branch `name`, as `write` commits them to HEAD
        (labelled with the branch's name); return how many commits (0 or 1).

        Raises:
            ScopeError: For a write outside the scope.
        """
        writes = list(writes)
        for write in writes:
            if self.scope_of(write.namespace) != scope:
                raise ScopeError(
                    f"{write.namespace!r} is outside the scope {scope!r} of "
                    f"branch {name!r}"
                )
        mount = _at(scope, self._branch_row_of(scope, name)).scope_text
        self.head(namespace_from_text(mount))  # its lock: a delete waits, or went
        at = self.branch_at(scope, name)
        labelled = replace(meta, labels={**meta.labels, BRANCH_LABEL: name})
        return len(self._write_all(writes, labelled, branch=at))

    def branch_log(
        self,
        scope: Namespace,
        name: str,
        *,
        limit: int | None = None,
        since: datetime | None = None,
        until: datetime | None = None,
        author: str | None = None,
        op: str | None = None,
        labels: Mapping[str, str] | None = None,
    ) -> list[Commit]:
        """The branch's own commits, newest first (those before its fork are
        the scope's), filtered as `log` filters."""
        at = self.branch_at(scope, name)
        mounted = namespace_from_text(at.scope_text)
        return [
            replace(
                commit,
                scope=scope,
                changes=tuple(
                    replace(c, namespace=c.namespace[2:]) for c in commit.changes
                ),
            )
            for commit in self.log(
                mounted,
                limit=limit,
                since=since,
                until=until,
                author=author,
                op=op,
                labels=labels,
            )
        ]

    def branch_diff(self, scope: Namespace, name: str) -> list[Change]:
        """What differs between HEAD (`old`) and the branch's head (`new`), by
        item, in namespace and key order."""
        at = self.branch_at(scope, name)
        items = self._written_after(at.scope_text, at.fork, at)
        items |= self._written_after(at.scope, at.fork, None)
        changes = []
        for namespace, keys in _by_namespace(items):
            ours = self.get(namespace, keys, branch=at)
            theirs = self.get(namespace, keys)
            for key in keys:
                new, old = _value(ours.get(key)), _value(theirs.get(key))
                if new != old:
                    changes.append(Change(namespace, key, old, new))
        return changes

    def merge(
        self,
        scope: Namespace,
        name: str,
        meta: CommitMeta,
        *,
        resolve: Resolve = None,
        force: bool = False,
    ) -> Commit:
        """Merge the branch's changes since its last merge (its fork, the
        first time) into HEAD as one commit (op `merge`), three-way
        (`engine/merge.py`); the branch stays, and the next merge takes what
        comes after.

        Raises:
            MergeConflictError: If both sides changed an item (or a field of a
                record) to different values and neither `resolve` nor `force`
                settles it; nothing is written.
            VersionError: If the branch has nothing new to merge.
        """
        at = self.branch_at(scope, name)
        self._lock_in_order([namespace_from_text(at.scope_text), scope])
        at = self.branch_at(scope, name)  # its head, now that writers wait
        row = self._branch_row_of(scope, name)
        branch_id, merged = row[0], row[4]
        if at.version == merged:
            raise VersionError(
                f"branch {name!r} of {_where(scope)} has nothing to merge: no "
                f"commit since v{merged}"
            )
        base = at._replace(version=merged)
        rows, unsettled = [], []
        for namespace, keys in _by_namespace(
            self._written_after(at.scope_text, merged, at)
        ):
            before = self.get(namespace, keys, branch=base)
            ours = self.get(namespace, keys, branch=at)
            theirs = self.get(namespace, keys)
            for key in keys:
                head = _value(theirs.get(key))
                value, clashes = three_way(
                    namespace,
                    key,
                    _value(before.get(key)),
                    _value(ours.get(key)),
                    head,
                )
                if clashes:
                    value, clashes = _settle(value, head, clashes, resolve, force)
                    unsettled += clashes
                if value != head:
                    rows.append(self._merge_row(namespace, key, value, ours.get(key)))
        if unsettled:
            raise MergeConflictError(_conflicts_text(name, unsettled), tuple(unsettled))
        labels = {**meta.labels, BRANCH_LABEL: name}
        commit = self._commit(
            scope, "merge", rows, replace(meta, labels=labels), target=at.version
        )
        assert commit is not None  # a merge commits even when nothing changed
        self.cur.execute(self.sql.BRANCH_MERGED, (at.version, branch_id))
        return commit

    def delete_branch(self, scope: Namespace, name: str) -> None:
        """Delete branch `name`: its rows, commits, change-index entries and
        vectors go, and its id is never given again.

        Raises:
            BranchNotFound: If the scope has no branch of that name.
        """
        self.hold_change_index()  # before the branch's lock, as a reset does
        row = self._branch_row_of(scope, name)
        at = _at(scope, row)
        self.head(namespace_from_text(at.scope_text))  # its writers wait
        for floors in (self.sql.KEEP_ID_FLOORS, self.sql.KEEP_BRANCH_FLOOR):
            if floors is not None:
                self.cur.execute(floors)
        after = (at.scope_text, at.fork)
        self.cur.execute(self.sql.DELETE_CHANGES_AFTER, after)
        self.cur.execute(self.sql.DELETE_ERASED_AFTER, after)
        self.cur.execute(self.sql.DELETE_ITEMS_AFTER, after)
        self.cur.execute(self.sql.DELETE_COMMITS_AFTER, after)
        self.cur.execute(self.sql.DELETE_BRANCH, (row[0],))
        self._rebuild_projections(namespace_from_text(at.scope_text))  # vectors out

    # -- parts ----------------------------------------------------------------

    def _branch_row_of(self, scope: Namespace, name: str) -> tuple[Any, ...]:
        """The `branches` row (id, name, fork, fork_seq, merged, created_at)."""
        row = self.cur.execute(self.sql.BRANCH, (scope_text(scope), name)).fetchone()
        if row is None:
            known = ", ".join(b.name for b in self.branches(scope)) or "none"
            raise BranchNotFound(
                f"{_where(scope)} has no branch {name!r} (its branches: {known})"
            )
        return tuple(row)

    def _branch_head(self, at: BranchAt) -> int:
        """The branch's latest version: its newest commit's, or its fork."""
        found = self.cur.execute(self.sql.HEAD, (at.scope_text,)).fetchone()[0]
        return max(int(found), at.fork)

    def _record(self, scope: Namespace, row: tuple[Any, ...]) -> Branch:
        _, name, fork, _, merged, created = row
        head = self._branch_head(_at(scope, row))
        return Branch(scope, name, fork, head, merged, decode_time(created))

    def _branch_row(
        self, at: BranchAt, namespace: str, key: str
    ) -> tuple[Any, ...] | None:
        """An item's live row on a branch, as `LIVE_ROW` reads HEAD's: (id,
        value, created_at, version), or `None` where it is absent."""
        row = self.cur.execute(
            self.sql.BRANCH_ROW, (at.mounted(namespace), key)
        ).fetchone()
        if row is not None:
            return None if row[1] is None else tuple(row)
        row = self.cur.execute(
            self.sql.BASE_ROW, (namespace, key, at.fork, at.fork)
        ).fetchone()
        return None if row is None else tuple(row)

    def _written_after(
        self, scope: str, version: int, branch: BranchAt | None
    ) -> set[tuple[str, str]]:
        """The items (namespace text, key) a scope's commits after `version`
        wrote; a branch's without its mount."""
        found = self.cur.execute(self.sql.ITEMS_WRITTEN_AFTER, (scope, version))
        if branch is None:
            return {(ns, key) for ns, key in found}
        return {(branch.unmounted(ns), key) for ns, key in found}

    def _merge_row(
        self, namespace: Namespace, key: str, value: Any, ours: StoredItem | None
    ) -> _NewRow:
        """The row a merge writes: the branch's row as it is (timestamps, TTL
        and indexed fields) where the item takes the branch's value, else the
        merged value with the branch's TTL and indexed fields."""
        ns = namespace_text(namespace)
        if ours is None:
            return _merged(ns, key, value, None)
        (row,) = self._rows_by_id([ours.row_id]).values()
        if value == ours.value:
            return _restored(replace(row, namespace=ns))
        return _merged(ns, key, value, row)


def _at(scope: Namespace, row: tuple[Any, ...]) -> BranchAt:
    """A `branches` row as where a read looks, at its fork: its mount is an
    empty label, then its id."""
    return BranchAt(scope_text(scope), f".{row[0]}", row[2], row[2])


def _settle(
    value: Any,
    theirs: Any,
    clashes: list[MergeConflict],
    resolve: Resolve,
    force: bool,
) -> tuple[Any, list[MergeConflict]]:
    """An item's value once `resolve` (or `force`) settled its clashes, and
    the clashes left."""
    item = (clashes[0].namespace, clashes[0].key)
    if isinstance(resolve, Mapping) and item in resolve:
        return resolve[item], []
    if resolve == "theirs":
        return theirs_on_clashes(value, theirs, clashes), []
    if resolve == "ours" or force:
        return value, []
    return value, clashes


def _conflicts_text(name: str, conflicts: list[MergeConflict]) -> str:
    listed = "; ".join(
        f"{c.path}: base {c.base!r}, branch {c.ours!r}, HEAD {c.theirs!r}"
        for c in conflicts[:5]
    )
    more = f" and {len(conflicts) - 5} more" if len(conflicts) > 5 else ""
    return (
        f"merging branch {name!r} conflicts with HEAD: {listed}{more}; nothing "
        "was merged. Settle them with resolve='ours', resolve='theirs' or "
        "resolve={(namespace, key): value}, or force=True (the branch wins)"
    )


def _by_namespace(
    items: Iterable[tuple[str, str]],
) -> list[tuple[Namespace, list[str]]]:
    """Items grouped by namespace (at most a chunk of keys a group), in order."""
    grouped: dict[str, list[str]] = {}
    for ns, key in sorted(items):
        grouped.setdefault(ns, []).append(key)
    return [
        (namespace_from_text(ns), list(chunk))
        for ns, keys in grouped.items()
        for chunk in chunks(keys)
    ]


def _value(item: StoredItem | None) -> Any:
    return None if item is None else item.value


def _where(scope: Namespace) -> str:
    return "/".join(scope) or "the store"
