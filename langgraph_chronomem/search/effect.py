"""What acting on an undo candidate would change at HEAD: the items, the first
`DIFF_SHOWN` of them, and the conflicts a revert would meet.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import replace

from langgraph_chronomem.engine.base import LogTransaction
from langgraph_chronomem.engine.types import Change, Namespace
from langgraph_chronomem.errors import CompactedError
from langgraph_chronomem.search.candidates import DIFF_SHOWN, Candidate

__all__ = ["effect"]


def effect(
    tx: LogTransaction,
    scope: Namespace,
    head: int,
    candidate: Candidate,
    previews: Mapping[int, tuple[tuple[Change, ...], int]] | None = None,
) -> Candidate:
    """The candidate with what acting on it would change at HEAD: how many
    items, and the first `DIFF_SHOWN` of them. A rollback's comes from
    `previews` (`LogTransaction.previews`, which reads the rows since the
    earliest of several targets once), or is read for it alone."""
    if candidate.action == "revert":
        diff, conflicts = tx.revert_effect(
            scope,
            candidate.commit.version,
            items=candidate.items,
            fields=candidate.fields,
        )
        shown = diff[:DIFF_SHOWN]
        return replace(candidate, diff=shown, conflicts=conflicts, changed=len(diff))
    target = candidate.target
    try:
        tx.check_whole(scope, target)
    except CompactedError:  # cannot be gone back to: acting changes nothing
        return candidate
    if previews is None or target not in previews:
        previews = tx.previews(scope, head, [target], DIFF_SHOWN)
    shown, changed = previews[target]
    return replace(candidate, diff=shown, conflicts=(), changed=changed)
