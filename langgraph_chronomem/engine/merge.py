"""A three-way merge of one item: what it holds after a branch is merged into
HEAD, and where the two sides clash. Pure: no database here.

`base` is what the item held where the two sides parted (the branch's fork or
its last merge), `ours` what the branch holds, `theirs` what HEAD holds; each
is a value, or `None` for an absent item. A side that left the item as the
base had it gives way to the other; two sides that changed a record (a dict of
several fields, inside LangMem's envelope: `engine/fields.py`) are merged field
by field, as the field-level revert reads them:

    >>> merged, clashes = three_way(
    ...     ("m",), "profile",
    ...     {"diet": "meat", "city": "Rome"},
    ...     {"diet": "vegan", "city": "Rome"},
    ...     {"diet": "meat", "city": "Oslo"},
    ... )
    >>> merged, clashes
    ({'diet': 'vegan', 'city': 'Oslo'}, [])
    >>> _, clashes = three_way(("m",), "k", {"t": "a"}, {"t": "b"}, {"t": "c"})
    >>> [(c.field, c.base, c.ours, c.theirs) for c in clashes]
    [(None, {'t': 'a'}, {'t': 'b'}, {'t': 'c'})]
"""

from __future__ import annotations

from typing import Any

from langgraph_chronomem.engine.fields import changed_fields, field_values, with_fields
from langgraph_chronomem.engine.types import MergeConflict, Namespace

__all__ = ["theirs_on_clashes", "three_way"]


def three_way(
    namespace: Namespace, key: str, base: Any, ours: Any, theirs: Any
) -> tuple[Any, list[MergeConflict]]:
    """The item's value after the merge, with the branch's side taken where
    the two clash, and the clashes (none: the value is the merge's).

    A clash on a whole item (not a record on every side, or deleted on one)
    names no field; a clash on records names each field both sides set to
    different values, and the value holds the branch's for them.
    """
    if ours in (base, theirs):
        return theirs, []
    if theirs == base:
        return ours, []
    ours_fields = changed_fields(base, ours)
    theirs_fields = changed_fields(base, theirs)
    if ours is None or theirs is None or not ours_fields or not theirs_fields:
        return ours, [MergeConflict(namespace, key, None, base, ours, theirs)]
    clashes = [
        MergeConflict(
            namespace,
            key,
            name,
            _field(base, name),
            _field(ours, name),
            _field(theirs, name),
        )
        for name in ours_fields
        if name in theirs_fields
        and field_values(ours, [name]) != field_values(theirs, [name])
    ]
    return with_fields(theirs, ours, ours_fields), clashes


def theirs_on_clashes(merged: Any, theirs: Any, clashes: list[MergeConflict]) -> Any:
    """`merged` with HEAD's side taken where it clashed with the branch's:
    HEAD's whole value for a clash on the item, HEAD's fields for clashes on
    fields.

        >>> theirs_on_clashes(
        ...     {"diet": "vegan", "city": "Oslo"},
        ...     {"diet": "fish", "city": "Oslo"},
        ...     [MergeConflict(("m",), "p", "diet", "meat", "vegan", "fish")],
        ... )
        {'diet': 'fish', 'city': 'Oslo'}
    """
    if any(clash.field is None for clash in clashes):
        return theirs
    return with_fields(merged, theirs, [c.field for c in clashes if c.field])


def _field(value: Any, name: str) -> Any:
    """One field of a record (`None`: absent)."""
    return field_values(value, [name]).get(name)
