"""The JSON shapes `--json` prints: stable, and documented in docs/cli.md.

Scopes and namespaces are arrays of labels, times are ISO 8601 in UTC, values
are the stored JSON objects (`null` where an item does not exist).

    >>> from langgraph_chronomem import Change
    >>> shape = change(Change(("memories", "alice"), "home", None, {"city": "Boston"}))
    >>> shape["path"], shape["kind"], shape["old"], shape["new"]
    ('memories/alice/home', 'created', None, {'city': 'Boston'})
"""

from __future__ import annotations

from collections.abc import Iterable
from typing import TYPE_CHECKING, Any

from langgraph_chronomem.cli._app import iso

if TYPE_CHECKING:
    from langgraph.store.base import Item

    from langgraph_chronomem.engine.types import (
        Branch,
        Change,
        Commit,
        Compaction,
        Conflict,
        ItemVersion,
        MatchedRevert,
        MergeConflict,
        Redaction,
        RevertConflict,
        Tag,
    )
    from langgraph_chronomem.search.resolve import Candidate, Resolution

__all__ = [
    "branch",
    "candidate",
    "change",
    "changes",
    "commit",
    "compaction",
    "conflict",
    "item",
    "item_version",
    "matched_revert",
    "merge_conflict",
    "proposal",
    "redaction",
    "resolution",
    "tag",
]


def change(c: Change) -> dict[str, Any]:
    """`{namespace, key, path, kind, old, new, old_erased, new_erased}`; kind is
    created, updated or deleted; a side whose value was erased reads null, and
    its `_erased` says why (`redacted`, `compacted`)."""
    return {
        "namespace": list(c.namespace),
        "key": c.key,
        "path": c.path,
        "kind": c.kind,
        "old": c.old,
        "new": c.new,
        "old_erased": c.old_erased,
        "new_erased": c.new_erased,
    }


def changes(items: Iterable[Change]) -> list[dict[str, Any]]:
    """A list of `change` objects."""
    return [change(c) for c in items]


def commit(c: Commit) -> dict[str, Any]:
    """Every field of a `Commit`, its changes included."""
    return {
        "scope": list(c.scope),
        "version": c.version,
        "seq": c.seq,
        "parent": c.parent,
        "created_at": iso(c.created_at),
        "author": c.author,
        "reason": c.reason,
        "op": c.op,
        "target": c.target,
        "summary": c.summary,
        "labels": dict(c.labels),
        "changes": changes(c.changes),
    }


def proposal(c: Commit) -> dict[str, Any]:
    """A pending proposal: its `commit` fields, and the `source` it came from
    (its `source` label, `null` if none)."""
    return {**commit(c), "source": c.labels.get("source")}


def item(i: Item) -> dict[str, Any]:
    """An item as a read returns it: `{namespace, key, path, value,
    created_at, updated_at}`."""
    return {
        "namespace": list(i.namespace),
        "key": i.key,
        "path": "/".join((*i.namespace, i.key)),
        "value": i.value,
        "created_at": iso(i.created_at),
        "updated_at": iso(i.updated_at),
    }


def tag(t: Tag) -> dict[str, Any]:
    """A tag: `{name, version, seq, created_at, destroyed}`; `destroyed` when a
    reset removed the commit it named."""
    return {
        "name": t.name,
        "version": t.version,
        "seq": t.seq,
        "created_at": iso(t.created_at),
        "destroyed": t.destroyed,
    }


def branch(b: Branch) -> dict[str, Any]:
    """A branch: `{scope, name, fork, head, merged, created_at}`: where it
    starts, its latest version, and the branch version its last merge took
    (`fork` before any)."""
    return {
        "scope": list(b.scope),
        "name": b.name,
        "fork": b.fork,
        "head": b.head,
        "merged": b.merged,
        "created_at": iso(b.created_at),
    }


def merge_conflict(c: MergeConflict) -> dict[str, Any]:
    """A merge conflict: `{namespace, key, path, field, base, ours, theirs}`;
    `field` is null when the whole item is in conflict, `ours` is the branch's
    value and `theirs` HEAD's."""
    return {
        "namespace": list(c.namespace),
        "key": c.key,
        "path": c.path,
        "field": c.field,
        "base": c.base,
        "ours": c.ours,
        "theirs": c.theirs,
    }


def item_version(v: ItemVersion) -> dict[str, Any]:
    """One version of one item; `value` is null for the version that deleted it
    and for one whose value was erased (`erased` says why)."""
    return {
        "version": v.version,
        "seq": v.seq,
        "op": v.op,
        "author": v.author,
        "committed_at": iso(v.committed_at),
        "deleted": v.deleted,
        "erased": v.erased,
        "labels": dict(v.labels),
        "value": v.value,
        "created_at": iso(v.created_at),
        "updated_at": iso(v.updated_at),
    }


def _conflict_item(x: Conflict) -> dict[str, Any]:
    return {
        "namespace": list(x.namespace),
        "key": x.key,
        "path": x.path,
        "later_versions": list(x.later_versions),
        "later_authors": list(x.later_authors),
        "wrote": x.wrote,
        "now": x.now,
        "before": x.before,
    }


def conflict(c: RevertConflict | None) -> dict[str, Any] | None:
    """Why a revert applied nothing: `{version, message, items}`; each item names
    its `path`, the `later_versions` that changed it, what the reverted commit
    `wrote`, what it holds `now` and what a revert would restore (`before`)."""
    if c is None:
        return None
    return {
        "version": c.version,
        "message": str(c),
        "items": [_conflict_item(x) for x in c.conflicts],
    }


def matched_revert(r: MatchedRevert) -> dict[str, Any]:
    """A revert of matching commits: the `versions` that matched, the
    `changes` it makes (or would), the `conflicts` (items changed since, with
    who changed them), and its `commit` (`null`: nothing written)."""
    return {
        "versions": list(r.versions),
        "message": str(r),
        "changes": changes(r.changes),
        "conflicts": [_conflict_item(x) for x in r.conflicts],
        "commit": None if r.commit is None else commit(r.commit),
    }


def compaction(c: Compaction) -> dict[str, Any]:
    """A compaction: the `versions` erased (namespace, key, version), per scope
    the oldest version still whole (`whole_from`), and whether the file was
    `vacuumed`."""
    return {
        "message": str(c),
        "versions": [
            {"namespace": list(ns), "key": key, "version": version}
            for ns, key, version in c.versions
        ],
        "whole_from": [
            {"scope": list(scope), "version": version}
            for scope, version in sorted(c.whole_from.items())
        ],
        "dry_run": c.dry_run,
        "vacuumed": c.vacuumed,
    }


def redaction(r: Redaction) -> dict[str, Any]:
    """A redaction: the `versions` erased (namespace, key, version), the items
    `removed` at HEAD, the versions whose commit `reasons` were erased, its
    `commit` (`null`: nothing written) and whether the file was `scrubbed`."""
    return {
        "message": str(r),
        "versions": [
            {"namespace": list(ns), "key": key, "version": version}
            for ns, key, version in r.versions
        ],
        "removed": [{"namespace": list(ns), "key": key} for ns, key in r.removed],
        "reasons": list(r.reasons),
        "commit": None if r.commit is None else commit(r.commit),
        "scrubbed": r.scrubbed,
    }


def candidate(rank: int, c: Candidate) -> dict[str, Any]:
    """An item change an undo may mean, what acting on it would do, and the score
    each search stage gave it.

    `id` is the change id (`"3.1"`: v3's first item change; `"3"`: all of v3),
    `action` is `revert` (only `changes`' items go back) or `rollback` (the
    whole scope goes back to `target`), `diff` what acting would change at HEAD
    and `conflicts` the items a revert would overwrite.
    """
    commit = c.commit
    return {
        "rank": rank,
        "id": c.id,
        "action": c.action,
        "target": c.target,
        "matched_version": commit.version,
        "matched_at": iso(commit.created_at),
        "author": commit.author,
        "summary": c.summary,
        "changes": changes(c.changes),
        "scores": {
            "bm25_rank": c.scores.bm25_rank,
            "dense_rank": c.scores.dense_rank,
            "dense_score": c.scores.dense_score,
            "rrf": c.scores.rrf,
            "rerank": c.scores.rerank,
            "coverage": c.scores.coverage,
        },
        "diff": changes(c.diff),
        "changed": c.changed,
        "conflicts": [_conflict_item(x) for x in c.conflicts],
    }


def resolution(r: Resolution) -> dict[str, Any]:
    """What the request was understood as, and its ranked candidates."""
    window = r.intent.window
    return {
        "request": r.request,
        "intent": {
            "kind": r.intent.kind,
            "topic": r.intent.topic,
            "window": None
            if window is None
            else {"start": iso(window.start), "end": iso(window.end)},
            "count": r.intent.count,
            "asked": r.intent.asked,
        },
        "head": r.head,
        "decided": r.decided,
        "reason": r.reason,
        "candidates": [candidate(i, c) for i, c in enumerate(r.candidates, start=1)],
    }
