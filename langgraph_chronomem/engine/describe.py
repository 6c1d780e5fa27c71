"""One readable sentence per commit.

The summary is what people read in `log` and, with the changes, what the
natural-language undo searches, so it names the item and the values in words:

    >>> summarize("put", [Change(("memories", "alice"), "city",
    ...                          {"city": "Boston"}, {"city": "Paris"})])
    'updated memories/alice/city: Boston -> Paris'
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

import orjson

from langgraph_chronomem.engine.types import Change, Commit, Op

__all__ = ["describe_change", "descriptor", "render_value", "summarize"]

_MAX_VALUE_CHARS = 80
_MAX_LISTED_CHANGES = 3


def render_value(value: Any) -> str:
    """Show a stored value in a few words.

    A mapping with a single field shows just that field's value; strings show
    without quotes; anything long is cut with an ellipsis.

        >>> render_value({"city": "Boston"})
        'Boston'
        >>> render_value({"city": "Boston", "since": 2019})
        '{"city":"Boston","since":2019}'
    """
    if isinstance(value, dict) and len(value) == 1:
        value = next(iter(value.values()))
    text = value if isinstance(value, str) else orjson.dumps(value).decode()
    text = " ".join(text.split())
    if len(text) > _MAX_VALUE_CHARS:
        text = text[: _MAX_VALUE_CHARS - 1] + "…"
    return text


def _field_changes(old: dict[str, Any], new: dict[str, Any]) -> str:
    """`city: Boston -> Paris, pet: -> cat` for the top-level fields that differ."""
    parts = []
    for name in [*old, *(k for k in new if k not in old)]:
        if old.get(name) != new.get(name):
            before = "" if name not in old else render_value(old[name]) + " "
            after = "(removed)" if name not in new else render_value(new[name])
            parts.append(f"{name}: {before}-> {after}")
    return ", ".join(parts) if parts else "unchanged"


def describe_change(change: Change) -> str:
    """Describe one item's change.

    >>> describe_change(Change(("m",), "pet", {"pet": "cat"}, None))
    'deleted m/pet (was cat)'
    """
    if change.old is None and change.new is None:
        return f"no change to {change.path}"
    if change.old is None:
        return f"created {change.path}: {render_value(change.new)}"
    if change.new is None:
        return f"deleted {change.path} (was {render_value(change.old)})"
    if len(change.old) == 1 and change.old.keys() == change.new.keys():
        before, after = render_value(change.old), render_value(change.new)
        return f"updated {change.path}: {before} -> {after}"
    return f"updated {change.path}: {_field_changes(change.old, change.new)}"


def _list_changes(changes: Sequence[Change]) -> str:
    shown = "; ".join(describe_change(c) for c in changes[:_MAX_LISTED_CHANGES])
    hidden = len(changes) - _MAX_LISTED_CHANGES
    return shown + (f"; and {hidden} more" if hidden > 0 else "")


def summarize(op: Op, changes: Sequence[Change], target: int | None = None) -> str:
    """Build a commit's summary sentence from its op and changes.

    Args:
        op: The commit's op.
        changes: Its changes, in the order they were made.
        target: The version a rollback restored or a revert undid.

    Returns:
        One sentence, e.g. `rolled back to v3: updated m/city: Paris -> Boston`.
    """
    listed = _list_changes(changes) if changes else "no item differed"
    if op == "rollback":
        return f"rolled back to v{target}: {listed}"
    if op == "revert":
        return f"reverted v{target}: {listed}"
    if op == "expire":
        return "expired " + ", ".join(c.path for c in changes)
    if len(changes) == 1:
        return describe_change(changes[0])
    return f"{len(changes)} changes: {listed}"


def _full_text(value: Any) -> str:
    if value is None:
        return ""
    if isinstance(value, dict):
        return " ".join(f"{name} {_full_text(inner)}" for name, inner in value.items())
    if isinstance(value, list):
        return " ".join(_full_text(inner) for inner in value)
    return str(value)


def descriptor(commit: Commit) -> str:
    """The text a commit is found by: what the natural-language undo searches.

    Its summary, every change with the item's path and its values before and
    after in full, and who wrote it and why. Ids (thread, checkpoint, run) are
    left out: they would only add noise to word matching.

        >>> from datetime import datetime, timezone
        >>> c = Commit(("m", "alice"), 2, 2, 1, datetime.now(timezone.utc), "agent",
        ...            "user moved", "put",
        ...            (Change(("m", "alice"), "city", {"c": "Boston"}, {"c": "NYC"}),),
        ...            "updated m/alice/city: Boston -> NYC", {"node": "remember"})
        >>> print(descriptor(c))
        updated m/alice/city: Boston -> NYC
        updated city m alice before: c Boston after: c NYC
        put by agent because user moved; remember
    """
    lines = [commit.summary]
    for change in commit.changes:
        words = " ".join((change.kind, change.key, *change.namespace))
        before = f" before: {_full_text(change.old)}" if change.old is not None else ""
        after = f" after: {_full_text(change.new)}" if change.new is not None else ""
        lines.append(words + before + after)
    footer: str = commit.op
    if commit.author:
        footer += f" by {commit.author}"
    if commit.reason:
        footer += f" because {commit.reason}"
    context = [v for k, v in sorted(commit.labels.items()) if not k.endswith("_id")]
    if context:
        footer += "; " + " ".join(context)
    lines.append(footer)
    return "\n".join(lines)
