"""A change to a record as the field a request names: "forget that I'm
vegetarian" reverts the profile's `diet`, not the whole profile, and keeps what
its other fields became since.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import replace
from typing import Any

import numpy as np

from langgraph_chronomem.engine.fields import changed_fields, field_text
from langgraph_chronomem.search.candidates import Candidate, coverage

__all__ = ["by_field"]


def by_field(
    changes: list[tuple[Candidate, str, str]],
    side: str,
    topic: str,
    query: np.ndarray | None,
    *,
    embed: Callable[[Sequence[str]], list[np.ndarray]],
    act_similarity: float,
) -> tuple[list[Candidate], dict[str, str]]:
    """The candidates, each change to a record (`engine.fields`) as the
    request names it, with each candidate's matched words by id.

    A change to a record comes first as its field the request means: the
    one its words name ("forget that I'm vegetarian": the profile's
    `diet`), or the one nearest in meaning when they name none (if it is
    `act_similarity` near), and then whole (when it changed several
    fields); as a whole when the words name several of its fields
    ("forget my cat Miso"). Reverting one field keeps what the record's
    other fields became since. `changes` are the candidates with their matched
    words and context; `embed` gives texts' unit vectors.
    """
    fields = [_record_fields(c, side) for c, *_ in changes]
    said = {
        (i, name): f"{field_text(_side_of(c, side), (name,))} {context}"
        for i, ((c, _, context), names) in enumerate(zip(changes, fields, strict=True))
        for name in names
    }
    named = {
        i: [n for n in names if coverage(topic, said[i, n])]
        for i, names in enumerate(fields)
    }
    # a field's own nearness is needed where the change's vector is not
    # the field's: a change to several fields, or the side it replaced
    weigh = [
        (i, n)
        for i, names in enumerate(fields)
        if len(named[i]) < 2 and (len(names) > 1 or side == "old")
        for n in named[i] or names
    ]
    near: dict[tuple[int, str], float] = {}
    if weigh and query is not None:
        vectors = embed([said[k] for k in weigh])
        near = {k: float(np.dot(query, v)) for k, v in zip(weigh, vectors, strict=True)}
    found, texts = [], {}
    for i, ((candidate, words, _), names) in enumerate(
        zip(changes, fields, strict=True)
    ):
        if not names or len(named[i]) > 1:
            found.append(candidate)
            texts[candidate.id] = words
            continue
        name = max(named[i] or names, key=lambda n: near.get((i, n), 0.0))
        if not named[i] and near.get((i, name), 0.0) < act_similarity:
            found.append(candidate)  # no field is what it means: the whole
            texts[candidate.id] = words
            continue
        one = replace(
            candidate,
            id=f"{candidate.id}/{name}",
            changes=(replace(candidate.changes[0], fields=(name,)),),
            scores=replace(
                candidate.scores,
                coverage=coverage(topic, said[i, name]),
                dense_score=near.get((i, name), candidate.scores.dense_score),
            ),
        )
        found.append(one)
        texts[one.id] = said[i, name]
        if len(names) > 1:
            found.append(candidate)
            texts[candidate.id] = words
    return found, texts


def _record_fields(candidate: Candidate, side: str) -> tuple[str, ...]:
    """The fields a candidate's change set, changed or dropped, when it is a
    revert of a change to a record that still stands; else `()`."""
    change = candidate.changes[0]
    if candidate.action != "revert" or change.new is None:
        return ()
    if _side_of(candidate, side) is None:
        return ()
    return changed_fields(change.old, change.new)


def _side_of(candidate: Candidate, side: str) -> Any:
    """The value a candidate's change introduced (`new`) or replaced (`old`)."""
    change = candidate.changes[0]
    return change.new if side == "new" else change.old
