"""One readable sentence per commit.

The summary is what people read in `log`, so it names the item and the values in
words; `change_text` is what the natural-language undo searches, one item change
at a time, with what the change introduced apart from what it replaced:

    >>> summarize("put", [Change(("memories", "alice"), "city",
    ...                          {"city": "Boston"}, {"city": "Paris"})])
    'updated memories/alice/city: Boston -> Paris'
"""

from __future__ import annotations

import re
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

import orjson

from langgraph_chronomem.engine.fields import (
    changed_fields,
    field_text,
    field_values,
    full_text,
    unwrapped,
)
from langgraph_chronomem.engine.types import Change, Op

__all__ = [
    "CHANGE_TEXT_VERSION",
    "ChangeText",
    "change_text",
    "describe_change",
    "render_value",
    "summarize",
]

_MAX_VALUE_CHARS = 80
_MAX_LISTED_CHANGES = 3

CHANGE_TEXT_VERSION = 3
"""Which derivation of `change_text` the undo search's word index and change
vectors hold; made again from the log when it moves. 2: LangMem's envelope
unwrapped, empty fields left out. 3: an update of a record (`engine.fields`)
is found by the fields it changed, named, not by the whole record."""


def render_value(value: Any) -> str:
    """Show a stored value in a few words.

    A mapping with a single field shows just that field's value; strings show
    without quotes; LangMem's envelope is left out (`unwrapped`); anything long
    is cut with an ellipsis.

        >>> render_value({"city": "Boston"})
        'Boston'
        >>> render_value({"city": "Boston", "since": 2019})
        '{"city":"Boston","since":2019}'
        >>> render_value({"kind": "Memory", "content": {"content": "User likes tea"}})
        'User likes tea'
    """
    value = unwrapped(value)
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

    A change to some fields of a record (`Change.fields`) names only those:

    >>> describe_change(Change(("m",), "me", None, {"diet": "vegan", "age": 30},
    ...                        fields=("diet",)))
    'updated m/me: diet: -> vegan'
    """
    if change.fields and not (change.old_erased or change.new_erased):
        before, after = (
            field_values(side, change.fields) for side in (change.old, change.new)
        )
        return f"updated {change.path}: {_field_changes(before, after)}"
    old = _side(change.old, change.old_erased)
    new = _side(change.new, change.new_erased)
    kind = change.kind
    erased = change.old_erased or change.new_erased
    if change.old is None and change.new is None and not erased:
        return f"no change to {change.path}"
    if kind == "created":
        return f"created {change.path}: {new}"
    if kind == "deleted":
        return f"deleted {change.path} (was {old})"
    if erased:
        return f"updated {change.path}: {old} -> {new}"
    before, after = unwrapped(change.old), unwrapped(change.new)
    if (
        not isinstance(before, dict)
        or not isinstance(after, dict)
        or (len(before) == 1 and before.keys() == after.keys())
    ):
        return f"updated {change.path}: {render_value(before)} -> {render_value(after)}"
    return f"updated {change.path}: {_field_changes(before, after)}"


def _side(value: Any, erased: str | None) -> str:
    """One side of a change in words: `[redacted]` for an erased value."""
    return f"[{erased}]" if erased else render_value(value)


def _list_changes(changes: Sequence[Change]) -> str:
    shown = "; ".join(describe_change(c) for c in changes[:_MAX_LISTED_CHANGES])
    hidden = len(changes) - _MAX_LISTED_CHANGES
    return shown + (f"; and {hidden} more" if hidden > 0 else "")


def summarize(op: Op, changes: Sequence[Change], target: int | None = None) -> str:
    """Build a commit's summary sentence from its op and changes.

    Args:
        op: The commit's op.
        changes: Its changes, in the order they were made.
        target: The version a rollback restored or a revert undid (none for
            a revert of several commits: a thread's, since a checkpoint).

    Returns:
        One sentence, e.g. `rolled back to v3: updated m/city: Paris -> Boston`.
        It names at most three changes and cuts each value, so a batch of any
        size reads in one line:

        >>> many = [Change(("m",), f"k{i}", None, {"n": i}) for i in range(1000)]
        >>> summarize("batch", many)
        '1000 changes: created m/k0: 0; created m/k1: 1; created m/k2: 2; and 997 more'
    """
    listed = _list_changes(changes) if changes else "no item differed"
    if op == "rollback":
        return f"rolled back to v{target}: {listed}"
    if op == "revert":
        return f"reverted v{target}: {listed}" if target else f"reverted: {listed}"
    if op == "propose":
        return f"proposed (pending review): {listed}"
    if op == "approve":
        return f"approved v{target}: {listed}"
    if op == "reject":
        return f"rejected v{target}"
    if op == "merge":
        return f"merged a branch at its v{target}: {listed}"
    if op == "redact" and not changes:
        return "redacted past versions"
    if op in ("expire", "redact"):
        hidden = len(changes) - _MAX_LISTED_CHANGES
        paths = ", ".join(c.path for c in changes[:_MAX_LISTED_CHANGES])
        what = "expired" if op == "expire" else "redacted and removed"
        return f"{what} {paths}" + (f" and {hidden} more" if hidden > 0 else "")
    if len(changes) == 1:
        return describe_change(changes[0])
    return f"{len(changes)} changes: {listed}"


_OPAQUE = re.compile(r"(?i)^[0-9a-f-]{8,}$|^[\W\d_]*$")  # a UUID, hex or a number
_WORDS = re.compile(r"[^\W_]+(?:'[^\W_]+)?")


def _worded(label: str) -> bool:
    """Whether a key or label is words a person might say (not a UUID or a number)."""
    return not _OPAQUE.match(label)


@dataclass(frozen=True)
class ChangeText:
    """The words one item change is found by, side by side.

    Attributes:
        added: Words the new value has and the old one lacked (updates only):
            what the change introduced.
        new: The item after the change (empty for a deletion).
        old: The item before the change (empty for a creation): what it replaced.
        context: The item's path words (unless they are ids), and who made the
            commit and why.
    """

    added: str
    new: str
    old: str
    context: str


def change_text(
    change: Change,
    scope_depth: int,
    *,
    author: str | None = None,
    reason: str | None = None,
) -> ChangeText:
    """Split a change into what it introduced and what it replaced.

    >>> t = change_text(Change(("memories", "alice"), "home",
    ...                        {"city": "Boston"}, {"city": "New York City"}), 2)
    >>> t.added, t.new, t.old, t.context
    ('New York City', 'New York City', 'Boston', 'home')

    An update of a record is found by the fields it changed, named:

    >>> t = change_text(Change(("memories", "ana"), "profile",
    ...                        {"likes": "ramen", "diet": "vegan"},
    ...                        {"likes": "ramen", "diet": "vegetarian"}), 2)
    >>> t.new, t.old
    ('diet vegetarian', 'diet vegan')
    """
    fields = (
        changed_fields(change.old, change.new)
        if change.old is not None and change.new is not None
        else ()
    )
    if fields:
        new, old = (field_text(side, fields) for side in (change.new, change.old))
    else:
        new, old = full_text(change.new), full_text(change.old)
    added = ""
    if change.old is not None and change.new is not None:
        before = {w.lower() for w in _WORDS.findall(old)}
        added = " ".join(w for w in _WORDS.findall(new) if w.lower() not in before)
    labels = [*change.namespace[scope_depth:], change.key]
    context = " ".join(
        [*(label for label in labels if _worded(label)), author or "", reason or ""]
    )
    return ChangeText(added, new, old, " ".join(context.split()))
