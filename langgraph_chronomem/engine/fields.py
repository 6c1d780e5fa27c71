"""The fields of a record: which ones a change touched, and putting some back.

A profile kept as one item (LangMem's memory manager with a profile schema,
and many apps) changes field by field: undoing "I'm vegetarian" must put back
`diet` and keep `likes`. A record is a dict value, read inside LangMem's
envelope (`{"kind": ..., "content": {...}}`); a field is one of its top-level
keys. A value with a single field (`{"content": "User likes tea"}`) is a fact,
not a record: it changes as a whole.

    >>> changed_fields({"likes": "ramen"}, {"likes": "ramen", "diet": "vegan"})
    ('diet',)
    >>> changed_fields({"content": "User likes tea"}, {"content": "User likes coffee"})
    ()
    >>> with_fields({"likes": "ramen", "diet": "vegan"}, {"likes": "pho"}, ("diet",))
    {'likes': 'ramen'}
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

__all__ = [
    "changed_fields",
    "field_text",
    "field_values",
    "full_text",
    "unwrapped",
    "with_fields",
]

_ABSENT = object()  # a field the record does not have (unlike one holding null)


def unwrapped(value: Any) -> Any:
    """A stored value without LangMem's envelope: its memory manager stores
    `{"kind": "Memory", "content": {...}}`, and the words are in `content`.

        >>> unwrapped({"kind": "Memory", "content": {"content": "User likes tea"}})
        {'content': 'User likes tea'}
        >>> unwrapped({"kind": "bird", "name": "Kiwi"})
        {'kind': 'bird', 'name': 'Kiwi'}
    """
    if (
        isinstance(value, dict)
        and value.keys() == {"kind", "content"}
        and isinstance(value["kind"], str)
    ):
        return value["content"]
    return value


def _record(value: Any) -> dict[str, Any] | None:
    """The fields of `value` (inside LangMem's envelope), or `None` for a value
    that is not a dict."""
    inner = unwrapped(value)
    return inner if isinstance(inner, dict) else None


def changed_fields(old: Any, new: Any) -> tuple[str, ...]:
    """The fields a change from `old` to `new` set, changed or dropped, in the
    order the values hold them; `()` when the item is not a record of several
    fields (then it changes as a whole). `None` is an absent item."""
    before, after = _record(old), _record(new)
    if (old is not None and before is None) or (new is not None and after is None):
        return ()
    before, after = before or {}, after or {}
    names = [*before, *(name for name in after if name not in before)]
    if len(names) < 2:
        return ()
    return tuple(
        name for name in names if before.get(name, _ABSENT) != after.get(name, _ABSENT)
    )


def field_values(value: Any, fields: Sequence[str]) -> dict[str, Any]:
    """The `fields` `value` holds, by name (absent ones left out).

    >>> field_values({"kind": "Profile", "content": {"diet": "vegan"}}, ["diet", "age"])
    {'diet': 'vegan'}
    """
    record = _record(value) or {}
    return {name: record[name] for name in fields if name in record}


def full_text(value: Any) -> str:
    """Every word of a stored value, for searching: field names and values,
    without LangMem's envelope (`unwrapped`) or fields that hold nothing.

    >>> full_text({"content": "User is allergic to peanuts"})
    'User is allergic to peanuts'
    >>> full_text({"city": "Boston", "tags": ["home", "rent"], "zip": None})
    'city Boston tags home rent'
    >>> full_text({"kind": "Memory", "content": {"content": "User likes tea"}})
    'User likes tea'
    """
    value = unwrapped(value)
    if value is None:
        return ""
    if isinstance(value, dict):
        fields = {name: inner for name, inner in value.items() if inner is not None}
        if len(fields) == 1:
            return full_text(next(iter(fields.values())))
        return " ".join(f"{name} {full_text(inner)}" for name, inner in fields.items())
    if isinstance(value, list):
        return " ".join(full_text(inner) for inner in value)
    return str(value)


def field_text(value: Any, fields: Sequence[str]) -> str:
    """The `fields` `value` holds, as words, each after its name (for searching).

    >>> field_text({"diet": "vegetarian", "home_city": "Lisbon"}, ["home_city"])
    'home_city Lisbon'
    """
    return " ".join(
        f"{name} {full_text(inner)}"
        for name, inner in field_values(value, fields).items()
    )


def with_fields(
    now: Mapping[str, Any] | None, before: Any, fields: Sequence[str]
) -> dict[str, Any] | None:
    """`now` with `fields` as `before` held them (dropped where `before` had
    none), the rest untouched; `None` when no field is left (the item goes).

    >>> with_fields(
    ...     {"kind": "Profile", "content": {"diet": "vegan", "city": "Rome"}},
    ...     {"kind": "Profile", "content": {"diet": "meat"}},
    ...     ["diet"],
    ... )
    {'kind': 'Profile', 'content': {'diet': 'meat', 'city': 'Rome'}}
    """
    restored = dict(_record(now) or {})
    old = _record(before) or {}
    for name in fields:
        if name in old:
            restored[name] = old[name]
        else:
            restored.pop(name, None)
    if not restored:
        return None
    if now is not None and unwrapped(now) is not now:  # keep LangMem's envelope
        return {**now, "content": restored}
    if now is None and before is not None and unwrapped(before) is not before:
        return {**before, "content": restored}
    return restored
