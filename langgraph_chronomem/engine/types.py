"""The records the versioned log reads and writes.

They are plain frozen dataclasses with no database or LangGraph in them, so the
store, the CLI and the undo tool can all hand them around and print them.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field
from datetime import datetime
from functools import cached_property
from typing import Any, Literal

__all__ = [
    "Branch",
    "Change",
    "Commit",
    "CommitMeta",
    "Compaction",
    "Conflict",
    "Erased",
    "ItemVersion",
    "MatchedRevert",
    "MergeConflict",
    "Op",
    "ProjectionStats",
    "Redaction",
    "RevertConflict",
    "ScopeStats",
    "StoreStats",
    "StoredItem",
    "Tag",
    "VersionRef",
    "Write",
]

Op = Literal[
    "put",
    "delete",
    "batch",
    "rollback",
    "revert",
    "expire",
    "redact",
    "propose",
    "approve",
    "reject",
    "merge",
]
"""What made a commit: one put, one delete, a batch of writes, a rollback, a
revert, a TTL expiry, a redaction, writes proposed for review, a review's
decision on them (approve, reject), or a branch merged into HEAD."""

Namespace = tuple[str, ...]

VersionRef = int | str
"""A version of a scope: its number, or the name of a tag on it (`ChronoStore.tag`)."""

Erased = Literal["redacted", "compacted"]
"""Why a version's value is gone: `redact` erased it, or `compact` did (a
retention policy)."""


@dataclass(frozen=True)
class Change:
    """One item's change inside a commit (or between two versions).

    `old` is `None` when the item did not exist before, `new` is `None` when it
    was deleted. A side whose value was erased (`redact`, `compact`) reads
    `None`, and `old_erased` / `new_erased` say why. `fields`, when set, names
    the fields of a record value the change is about (`engine.fields`): a
    profile's `diet`, undone apart from its other fields.

        >>> Change(("memories", "alice"), "city", {"v": "Boston"}, {"v": "Paris"}).kind
        'updated'
        >>> Change(("memories", "alice"), "city", None, {"v": "Paris"}, "redacted").kind
        'updated'
    """

    namespace: Namespace
    key: str
    old: dict[str, Any] | None
    new: dict[str, Any] | None
    old_erased: Erased | None = None
    new_erased: Erased | None = None
    fields: tuple[str, ...] = ()

    @property
    def kind(self) -> Literal["created", "updated", "deleted"]:
        """`created`, `updated` or `deleted`."""
        if self.old is None and self.old_erased is None:
            return "created"
        if self.new is None and self.new_erased is None:
            return "deleted"
        return "updated"

    @property
    def path(self) -> str:
        """The item's address as text: `memories/alice/city`."""
        return "/".join((*self.namespace, self.key))


@dataclass(frozen=True)
class Commit:
    """One atomic change to one scope.

    Attributes:
        scope: The scope (namespace prefix) the commit belongs to.
        version: 1, 2, 3… per scope, gap-free.
        seq: Global commit sequence number, increasing across all scopes.
        parent: The version this commit was made on top of (`None` for version 1).
        created_at: When the commit was made (UTC).
        author: Who made it (`commit_context(author=...)`, `system` for expiries).
        reason: Why, if the writer said.
        op: `put`, `delete`, `batch`, `rollback`, `revert`, `expire`,
            `redact`, `propose`, `approve`, `reject` or `merge`.
        changes: The items it changed, with their old and new values.
        summary: One readable sentence, e.g.
            `updated memories/alice/city: Boston -> Paris`.
        labels: Where it came from: `thread_id`, `checkpoint_id`, `run_id`, `node`
            when written inside a LangGraph run, plus any labels the caller set.
        target: For a rollback the version it restored; for a revert the version
            it undid; for an approve or reject the proposal it decided; for
            a merge the branch version it took; otherwise `None`.
    """

    scope: Namespace
    version: int
    seq: int
    parent: int | None
    created_at: datetime
    author: str | None
    reason: str | None
    op: Op
    changes: tuple[Change, ...]
    labels: Mapping[str, str] = field(default_factory=dict)
    target: int | None = None

    @cached_property
    def summary(self) -> str:
        """One readable sentence, rendered from the changes when first read, so
        writers never spend their write lock on it (see `describe.summarize`)."""
        from langgraph_chronomem.engine.describe import summarize  # imports us

        return summarize(self.op, self.changes, self.target)


@dataclass(frozen=True)
class Conflict:
    """An item a revert would overwrite: it no longer holds what the commit wrote.

    Attributes:
        namespace: The item's namespace.
        key: The item's key.
        later_versions: The versions that changed it after the reverted commit.
        wrote: What the reverted commit wrote (`None`: it deleted the item).
        now: What the item holds at HEAD (`None`: it does not exist).
        before: What a revert would restore (`None`: delete the item).
        later_authors: Who made `later_versions`, where that is known.
        fields: For a revert of some fields of a record, those fields: only
            they were compared, and `wrote` and `now` hold only them.
    """

    namespace: Namespace
    key: str
    later_versions: tuple[int, ...]
    wrote: dict[str, Any] | None = None
    now: dict[str, Any] | None = None
    before: dict[str, Any] | None = None
    later_authors: tuple[str | None, ...] = ()
    fields: tuple[str, ...] = ()

    @property
    def path(self) -> str:
        """`namespace/.../key`, and the fields when only those were compared."""
        path = "/".join((*self.namespace, self.key))
        return f"{path} ({', '.join(self.fields)})" if self.fields else path


@dataclass(frozen=True)
class RevertConflict:
    """Why `revert` applied nothing: items no longer hold what the commit wrote.

    A later write that changed an item to something else is a conflict; one
    that brought back exactly what the commit wrote is not. The choices: keep
    things as they are, revert anyway (`force=True` overwrites the later
    values), or roll the scope back to before the commit.
    """

    scope: Namespace
    version: int
    conflicts: tuple[Conflict, ...]

    def __str__(self) -> str:
        items = ", ".join(
            f"{c.path} (changed again in "
            f"{', '.join(f'v{v}' for v in c.later_versions)})"
            for c in self.conflicts
        )
        return (
            f"cannot revert v{self.version}: {items}; keep it as it is, revert "
            f"anyway with force=True, or roll back to v{self.version - 1}"
        )


@dataclass(frozen=True)
class MatchedRevert:
    """What `revert_matching` did, or would do: undo every change of the
    commits that matched (a run's, a thread's, a source's...) in one commit.

    Attributes:
        scope: The scope.
        versions: The matching commits' versions.
        changes: What the revert changes at HEAD (old = HEAD before it).
        conflicts: Items another writer changed after the matching commits,
            left as they are (unless `force`), with who changed them.
        commit: The revert's commit; `None` for a dry run, when nothing would
            change, or when there are conflicts and no `force`.
    """

    scope: Namespace
    versions: tuple[int, ...]
    changes: tuple[Change, ...]
    conflicts: tuple[Conflict, ...]
    commit: Commit | None = None

    def __str__(self) -> str:
        if not self.versions:
            return "no commit matched: nothing to revert"
        matched = ", ".join(f"v{v}" for v in self.versions)
        later = "; ".join(
            f"{c.path} changed again in "
            + ", ".join(
                f"v{v}" + (f" by {who}" if who else "")
                for v, who in zip(
                    c.later_versions,
                    c.later_authors or (None,) * len(c.later_versions),
                    strict=True,
                )
            )
            for c in self.conflicts
        )
        if self.commit is not None:
            summary = self.commit.summary.removeprefix("reverted: ")
            done = f"v{self.commit.version} reverted {matched}: {summary}"
            return done + (f"; forced over: {later}" if later else "")
        what = f"reverting {matched} would change {len(self.changes)} item(s)"
        return what + (f"; conflicts (kept as they are): {later}" if later else "")


@dataclass(frozen=True)
class Compaction:
    """What `compact` erased, or would erase, under a retention policy.

    Attributes:
        versions: Every compacted version, as (namespace, key, version).
        whole_from: Per scope looked at, the oldest version that `as_of` and
            `rollback` can read whole (every later one can too), after it.
        dry_run: Whether it only said what it would erase.
        vacuumed: Whether the database file was rewritten to return the space.
    """

    versions: tuple[tuple[Namespace, str, int], ...]
    whole_from: Mapping[Namespace, int] = field(default_factory=dict)
    dry_run: bool = False
    vacuumed: bool = False

    def __str__(self) -> str:
        items = len({(ns, key) for ns, key, _ in self.versions})
        verb = "would compact" if self.dry_run else "compacted"
        return (
            f"{verb} {len(self.versions)} version(s) of {items} item(s) "
            f"in {len(self.whole_from)} scope(s)"
        )


@dataclass(frozen=True)
class Redaction:
    """What `redact` erased, or would erase.

    Attributes:
        scope: The scope.
        versions: Every erased version, as (namespace, key, version), oldest
            first per item.
        removed: The items it deleted at HEAD (those whose current value
            matched).
        reasons: The versions whose commit reason held the text (`contains`),
            which now reads `[redacted]`.
        commit: The `redact` commit that records it (who, when, why; its
            changes are the deletions at HEAD); `None` for a dry run or when
            nothing matched.
        scrubbed: Whether the database's own leftovers were overwritten too:
            SQLite's free pages and write-ahead log, PostgreSQL's dead rows
            (not the server's WAL segments or backups; see `redact`).
    """

    scope: Namespace
    versions: tuple[tuple[Namespace, str, int], ...]
    removed: tuple[tuple[Namespace, str], ...]
    reasons: tuple[int, ...] = ()
    commit: Commit | None = None
    scrubbed: bool = False

    def __str__(self) -> str:
        if not self.versions:
            return "nothing matched: nothing to redact"
        items = len({(ns, key) for ns, key, _ in self.versions})
        what = f"{len(self.versions)} version(s) of {items} item(s)"
        gone = f", {len(self.removed)} removed at HEAD" if self.removed else ""
        if self.commit is None:
            return f"would redact {what}{gone}"
        return f"v{self.commit.version} redacted {what}{gone}"


@dataclass(frozen=True)
class ItemVersion:
    """One version of one item, as `history()` lists them.

    `value` is `None` for the version that deleted the item, and for a version
    whose value was erased (`erased` then says why). `labels` are its commit's:
    where it came from (`source`, `thread_id`, `run_id`, `node`...).
    """

    namespace: Namespace
    key: str
    version: int
    seq: int
    op: Op
    author: str | None
    committed_at: datetime
    value: dict[str, Any] | None
    created_at: datetime | None
    updated_at: datetime | None
    erased: Erased | None = None
    labels: Mapping[str, str] = field(default_factory=dict)

    @property
    def deleted(self) -> bool:
        """True for the version that removed the item."""
        return self.value is None and self.erased is None


@dataclass(frozen=True)
class Tag:
    """A name for one version of a scope (`ChronoStore.tag`), usable wherever a
    version number is.

    Attributes:
        scope: The scope.
        name: The tag's name.
        version: The version it names.
        seq: The `seq` of the commit it was put on.
        created_at: When the tag was made (or last moved).
        destroyed: Whether a `reset` has since destroyed that commit: the
            number may now belong to another commit, or to none, and using the
            tag raises `VersionNotFound` until it is moved or removed.
    """

    scope: Namespace
    name: str
    version: int
    seq: int
    created_at: datetime
    destroyed: bool = False

    def __str__(self) -> str:
        gone = " (destroyed by a reset)" if self.destroyed else ""
        return f"{self.name} -> v{self.version}{gone}"


@dataclass(frozen=True)
class Branch:
    """A named branch of a scope (`ChronoStore.branch`): the scope as it was
    at `fork`, with changes of its own that HEAD does not see until `merge`.

    Attributes:
        scope: The scope it branches.
        name: Its name, unique in the scope.
        fork: The scope's version it starts at.
        head: Its latest version: its commits go on from `fork` (`fork + 1`,
            ...), so `head == fork` until its first write.
        merged: The branch version its last merge took (`fork` before any):
            the next merge takes only what came after.
        created_at: When it was made (UTC).
    """

    scope: Namespace
    name: str
    fork: int
    head: int
    merged: int
    created_at: datetime

    def __str__(self) -> str:
        return f"{self.name} (from v{self.fork}, at v{self.head})"


@dataclass(frozen=True)
class MergeConflict:
    """An item (or one field of a record) that both a branch and HEAD changed
    since their common base, to different values.

        >>> MergeConflict(("m",), "me", "diet", "meat", "vegan", "fish").path
        'm/me (diet)'

    Attributes:
        namespace: The item's namespace.
        key: The item's key.
        field: The record's field in conflict; `None` when the whole item is
            (it is not a record of several fields on every side, or one side
            deleted it).
        base: What the item (or field) held at the merge's base: the branch's
            fork, or its last merge. `None`: absent.
        ours: What the branch holds.
        theirs: What HEAD holds.
    """

    namespace: Namespace
    key: str
    field: str | None
    base: Any
    ours: Any
    theirs: Any

    @property
    def path(self) -> str:
        """`namespace/.../key`, and the field when only it is in conflict."""
        path = "/".join((*self.namespace, self.key))
        return f"{path} ({self.field})" if self.field else path


@dataclass(frozen=True)
class StoredItem:
    """An item as the log holds it at some version (the store turns it into an `Item`).

    `ttl_minutes` is its time to live, `None` if it never expires; `row_id`
    identifies the log row it was read from.
    """

    namespace: Namespace
    key: str
    value: dict[str, Any]
    created_at: datetime
    updated_at: datetime
    ttl_minutes: float | None = None
    row_id: int = 0


@dataclass(frozen=True)
class Write:
    """A put (`value` is a mapping) or a delete (`value` is `None`) of one item.

    `ttl_minutes` sets the item's time to live; `None` keeps it forever. `index`
    is LangGraph's per-put choice of fields to embed: `None` for the store's
    default, `False` for none, or a list of field paths.
    """

    namespace: Namespace
    key: str
    value: Mapping[str, Any] | None
    ttl_minutes: float | None = None
    index: Literal[False] | list[str] | None = None


@dataclass(frozen=True)
class CommitMeta:
    """Who, why, when and from where, for the commits one call makes; with
    `review`, its writes land as proposals that wait for a decision; with
    `hold_returning`, so do those that bring back content a delete, revert
    or rollback removed."""

    author: str | None = None
    reason: str | None = None
    labels: Mapping[str, str] = field(default_factory=dict)
    timestamp: datetime | None = None
    review: bool = False
    hold_returning: bool = False


@dataclass(frozen=True)
class ScopeStats:
    """One scope's numbers: its HEAD, commits, live items and stored versions."""

    scope: Namespace
    head: int
    commits: int
    items: int
    item_versions: int
    last_commit_at: datetime | None


@dataclass(frozen=True)
class ProjectionStats:
    """How far a derived index has read the log, and what it still has to do."""

    name: str
    seq: int
    behind: int
    rebuild: tuple[Namespace, ...]


@dataclass(frozen=True)
class StoreStats:
    """A whole store at a glance (`ChronoStore.stats()`, `chronomem stats`)."""

    scopes: tuple[ScopeStats, ...]
    last_seq: int
    projections: tuple[ProjectionStats, ...]
