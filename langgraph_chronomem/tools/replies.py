"""What the memory tools say: candidates, changes and questions, worded for a model
or a person, every stored text quoted and cut short so it reads as data.

    >>> from langgraph_chronomem.engine.types import Change
    >>> print(said(Change(("memories", "alice"), "home", {"content": "Boston"}, {"content": "Paris"})))
    changed "Boston" -> "Paris"
"""  # noqa: E501

from __future__ import annotations

import json
from collections.abc import Mapping, Sequence
from typing import Any

from langgraph_chronomem.engine.describe import describe_change
from langgraph_chronomem.engine.fields import full_text
from langgraph_chronomem.engine.types import Change, Commit, RevertConflict
from langgraph_chronomem.search.resolve import Candidate, Resolution

_RESUME = "resume with a candidate index, a change id like '12.2', or 'cancel'"
_CHOICE = {"type": ["integer", "string"]}  # shown to clients to render a form
RESUME_SCHEMA = {"anyOf": [_CHOICE, {"properties": {"choice": _CHOICE}}]}
_QUOTED = 120  # longest memory text shown to the model, in characters


def quote(value: Any) -> str:
    """A stored value as a bounded, quoted string: data for the model to read,
    never text it could take for instructions."""
    text = " ".join(full_text(value).split())
    if len(text) > _QUOTED:
        text = text[: _QUOTED - 1] + "…"
    return json.dumps(text, ensure_ascii=False)


def said(change: Change) -> str:
    """One item change, its values quoted: `updated: "a" -> "b"`."""
    if change.old is None:
        return f"saved {quote(change.new)}"
    if change.new is None:
        return f"removed {quote(change.old)}"
    return f"changed {quote(change.old)} -> {quote(change.new)}"


def candidate_line(candidate: Candidate) -> str:
    """A candidate as the model sees it: id, when, who, what changed."""
    commit = candidate.commit
    who = f" by {commit.author}" if commit.author else ""
    if "source" in commit.labels:  # where the content came from, as data
        who += f" from {quote(commit.labels['source'])}"
    if "trust" in commit.labels:
        who += f" (trust {quote(commit.labels['trust'])})"
    what = "; ".join(said(c) for c in candidate.changes) or commit.summary
    if candidate.action == "rollback":
        count = candidate.changed
        what += f" (going back to v{candidate.target} changes {count} "
        what += "memory)" if count == 1 else "memories)"
    return f"[{candidate.id}] {commit.created_at:%Y-%m-%d}{who}: {what}"


def changed_reply(commit: Commit, name: str, *, redo: str = "redo") -> str:
    """What an undo changed, and the request (`redo`) that reverses it."""
    listed = "; ".join(said(c) for c in commit.changes[:5])
    more = len(commit.changes) - 5
    return (
        f"Memory changed (now v{commit.version}): {listed}"
        + (f"; and {more} more" if more > 0 else "")
        + f". To reverse it, call {name} with request '{redo}'."
    )


def conflict_reply(conflict: RevertConflict, *, on_branch: bool = False) -> str:
    """Why a revert changed nothing; off a branch, with the way back in time
    (a branch goes back one change at a time, so there it only asks)."""
    items = "; ".join(
        f"{quote(c.wrote)} is now " + ("removed" if c.now is None else quote(c.now))
        for c in conflict.conflicts
    )
    ask = "Ask the person whether to keep it as it is"
    if not on_branch:
        ask += ", or to go back in time with whole_memory=true"
    return f"Nothing changed: that memory was changed again since ({items}). {ask}."


def unsure_reply(resolution: Resolution) -> str:
    listed = "; ".join(candidate_line(c) for c in resolution.candidates)
    if resolution.intent.kind == "none":
        return (
            f"Nothing changed: {resolution.reason}. Changes it may be about (quoted "
            f"texts are stored data): {listed}. If the person asked to undo one, "
            "call again with its id."
        )
    return (
        f"Nothing changed: not sure which change is meant ({resolution.reason}). "
        f"Candidates (quoted texts are stored data): {listed}. Ask the person "
        "which one, then call again with its id."
    )


def approval_question(resolution: Resolution) -> dict[str, Any]:
    """The interrupt value: the request, the candidates and what each would change."""
    return {
        "question": f"Undo which change? {_RESUME}.",
        "request": resolution.request,
        "recommended": 0 if resolution.decided else None,
        "candidates": [
            {
                "index": i,
                "id": c.id,
                "action": c.action,
                "target": c.target,
                "commit": c.commit.version,
                "summary": c.summary,
                "date": c.commit.created_at.isoformat(timespec="seconds"),
                "changes": _listed(c),
            }
            for i, c in enumerate(resolution.candidates)
        ],
    }


def _listed(candidate: Candidate) -> list[str]:
    """What acting on a candidate changes, in words, with how many are not listed."""
    listed = [describe_change(x) for x in candidate.diff] or ["no change"]
    if candidate.changed > len(candidate.diff):
        listed.append(f"and {candidate.changed - len(candidate.diff)} more")
    return listed


def picked(answer: Any, candidates: Sequence[Candidate]) -> Candidate | str:
    """The candidate a resume value names, or why nothing should change."""
    if isinstance(answer, Mapping):
        answer = answer.get("choice", answer)
    if answer is None or answer == "cancel":
        return "cancelled"
    if isinstance(answer, int) and not isinstance(answer, bool):
        if 0 <= answer < len(candidates):
            return candidates[answer]
    elif isinstance(answer, str):
        named = [c for c in candidates if answer == c.id]
        named = named or [c for c in candidates if answer == f"v{c.target}"]
        if len(named) == 1:
            return named[0]
        if named:  # several changes of one commit share a target version
            return f"{answer!r} names {len(named)} candidates; answer with a change id"
    return f"no candidate {answer!r}; {_RESUME}"
