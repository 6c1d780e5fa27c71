"""Requests that name no topic: a change by its id ("12.2"), the latest changes
("undo the last change", "undo the last 3 changes", "forget everything"), and a
redo ("undo the undo"). Each is one candidate found without a search.
"""

from __future__ import annotations

import re
from dataclasses import replace

from langgraph_chronomem.engine.base import LogTransaction
from langgraph_chronomem.engine.fields import changed_fields
from langgraph_chronomem.engine.types import Change, Commit, Namespace
from langgraph_chronomem.search.candidates import (
    PLAN,
    Action,
    Candidate,
    Mode,
    Resolution,
    StageScores,
    coverage,
    plan,
    words_of,
)
from langgraph_chronomem.search.effect import effect

__all__ = ["by_id", "latest", "redo"]

# The commits an undo makes.
_UNDOS = ("rollback", "revert")


def by_id(
    tx: LogTransaction,
    scope: Namespace,
    base: Resolution,
    ref: re.Match[str],
    mode: Mode,
) -> Resolution:
    """A change named by its id ("12.2", "12" for the whole commit, or
    "12.2/diet" for one field of a record it changed)."""
    version, position, field = int(ref[1]), ref[2], ref[3]
    commits = tx.log(scope, version=version) if 1 <= version <= base.head else []
    absent = replace(base, reason=f"this memory has no change {ref[0]}")
    if not commits or not commits[0].changes:
        return absent
    commit = commits[0]
    changes = commit.changes
    if position is not None:
        if not 1 <= int(position) <= len(changes):
            return absent
        changes = (changes[int(position) - 1],)
    if field is not None:
        change = changes[0]
        if field not in changed_fields(change.old, change.new):
            return absent
        changes = (replace(change, fields=(field,)),)
    kind = base.intent.kind if base.intent.kind in PLAN else "undo"
    _, offset, action = plan(kind, mode)
    change_id = f"{version}.{position}" if position else str(version)
    change_id += f"/{field}" if field else ""
    candidate = _unscored(
        tx, scope, base.head, change_id, commit, changes, version + offset, action
    )
    return replace(
        base, candidates=(candidate,), decided=True, reason=f"change {change_id}"
    )


def latest(
    tx: LogTransaction, scope: Namespace, base: Resolution, mode: Mode
) -> Resolution:
    """No topic: the newest commit that changed memory ("undo the last
    change"), the newest `count` ("undo the last 3 changes": back to before
    them), or all of them ("forget everything": offered, never done alone),
    in the window if there is one (a proposal, or its rejection, changed none).
    """
    intent = base.intent
    window, kind, count = intent.window, intent.kind, intent.count
    everything = kind == "before"
    skip = ("propose", "reject")
    if kind == "at" and window is not None and window.end is not None:
        # "back to how it was on May 1": as it stood then, changed that day or not
        ended = tx.log(scope, until=window.end, limit=2, not_ops=skip)
        commits = [c for c in ended if c.created_at < window.end][:1]
    else:
        commits = tx.log(
            scope,
            since=window.start if window else None,
            limit=None if window or everything else min(count, base.head),
            not_ops=skip,
        )
        commits = [c for c in commits if window is None or c.created_at in window]
    if not commits:
        return replace(base, reason="no change in that time")
    if (kind, count, window) == ("undo", 1, None) and commits[0].op in _UNDOS:
        return _after_an_undo(tx, scope, base, commits[0])
    commit = commits[-1] if everything else commits[: max(count, 1)][-1]
    several = everything or count > 1
    action: Action = (
        "rollback" if kind == "at" or several or mode == "rollback" else "revert"
    )
    target = commit.version if kind == "at" else commit.version - 1
    if action == "revert" and not commit.changes:
        action = "rollback"
    candidate = _unscored(
        tx, scope, base.head, str(commit.version), commit, commit.changes, target,
        action,
    )  # fmt: skip
    found = replace(base, candidates=(candidate,))
    if not candidate.diff and not candidate.conflicts:  # a redaction, say
        reason = f"undoing the latest change (v{commit.version}) changes nothing"
        return replace(found, reason=reason)
    since = f"going back to before v{commit.version} undoes every change since"
    if everything:
        return replace(found, reason=f"{since}: confirmed first")
    if len(commits) < count or (several and commit.version == 1):
        reason = f"asked for the last {count} changes; there are {len(commits)}"
        return replace(found, reason=f"{reason}: {since}, confirmed first")
    if several and window is not None and commits[0].version != base.head:
        return replace(found, reason=f"{since}, not only those: confirmed first")
    if not intent.asked:  # "the last few changes"
        return replace(found, reason="the request does not say how many changes")
    said = f"the last {count} changes" if several else "the latest change"
    return replace(found, decided=True, reason=said)


def _after_an_undo(
    tx: LogTransaction, scope: Namespace, base: Resolution, undo: Commit
) -> Resolution:
    """ "Undo the last thing" right after an undo: redoing it would bring
    back what the person just asked to forget, and in a chat they most
    likely mean the last fact they gave. Both are offered: the undo
    itself, and the newest change that was no undo."""
    offered = [redo(tx, scope, base).candidates[0]]
    saved = tx.log(scope, limit=1, not_ops=(*_UNDOS, "propose", "reject"))
    if saved and saved[0].changes:
        last = saved[0]
        offered.append(_unscored(
            tx, scope, base.head, str(last.version), last, last.changes,
            last.version - 1, "revert",
        ))  # fmt: skip
    reason = (
        f"the latest change (v{undo.version}) is itself an undo: undo it "
        "(bring back what it removed), or the last change before it?"
    )
    return replace(base, candidates=tuple(offered), reason=reason)


def redo(tx: LogTransaction, scope: Namespace, base: Resolution) -> Resolution:
    """Redo = undo the last undo (a rollback or a revert): revert it, so what
    came after it stays."""
    undos = [c for op in _UNDOS for c in tx.log(scope, op=op, limit=1)]
    if not undos:
        return replace(base, reason="there is no rollback or revert to redo")
    last = max(undos, key=lambda c: c.version)
    action: Action = "revert" if last.changes else "rollback"
    candidate = _unscored(
        tx, scope, base.head, str(last.version), last, last.changes,
        last.version - 1, action,
    )  # fmt: skip
    reason = f"redo: undo v{last.version} ({last.op})"
    topic, decided = base.intent.topic, base.intent.asked
    if not decided:
        reason = "the request names a redo, not clearly asking for it now"
    elif topic and not coverage(topic, words_of(last.changes)):
        decided = False  # "redo my CV with bullet points": not that undo
        reason = f"the last undo (v{last.version}) did not touch {topic!r}"
    return replace(base, candidates=(candidate,), decided=decided, reason=reason)


def _unscored(
    tx: LogTransaction,
    scope: Namespace,
    head: int,
    change_id: str,
    commit: Commit,
    changes: tuple[Change, ...],
    target: int,
    action: Action,
) -> Candidate:
    """A candidate found without a search (no stage scored it), with what acting
    on it would change."""
    candidate = Candidate(
        change_id, commit, changes, target, action, (), (), StageScores()
    )
    return effect(tx, scope, head, candidate)
