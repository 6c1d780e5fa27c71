"""The order undo candidates are offered in, beyond their scores: for a
complaint about a planted memory the memories that read as planted first;
otherwise stored text after the memory it imitates; and for "bring back the
original" the earliest change to the memory first.
"""

from __future__ import annotations

import re
from collections.abc import Mapping

from langgraph_chronomem.engine.base import LogTransaction
from langgraph_chronomem.search.candidates import Candidate, Pick
from langgraph_chronomem.search.decide import Complaint
from langgraph_chronomem.search.suspect import Planted, imitates, planted

__all__ = ["original_first", "planted_first", "real_first"]

# "I want the original one back": of the matched memory's versions, its first
_ORIGINAL = re.compile(
    r"(?i)\b(?:original(?:ly)?|very\s+first|first\s+(?:version|one|note|entry)"
    r"|(?:how|what)\s+(?:it|I)\s+(?:was|had\s+it|said)\s+at\s+first)\b"
)


def original_first(found: list[Candidate], request: str) -> list[Candidate]:
    """`found`, with the earliest change to the best match's memory first when
    `request` asks for the original ("I want the original one back")."""
    return _earliest_first(found) if _ORIGINAL.search(request) else found


def _earliest_first(found: list[Candidate]) -> list[Candidate]:
    """`found` with the earliest change to the best match's memory first: the
    one that replaced its first value, for "bring back the original"."""
    if not found:
        return found
    same = [c for c in found if set(c.items) == set(found[0].items)]
    earliest = min(same, key=lambda c: c.commit.version)
    return [earliest, *(c for c in found if c is not earliest)]


def planted_first(
    tx: LogTransaction, picks: list[Pick], named: Planted | None
) -> tuple[list[Pick], Complaint]:
    """The picks whose new value reads as planted (`suspect.planted`) first,
    those of the kind the request names before the others.

    Within each, the one whose commit best matches the request comes first: a
    pasted page's planted text is saved beside what the page really said
    ("the handball parents doc" names the kiosk duty saved with its keywords).
    """
    position: dict[int, int] = {}
    for i, pick in enumerate(picks):
        position.setdefault(pick.version, i)
    found: dict[int, Planted] = {}
    for pick in picks:
        text = tx.indexed_text(pick.row_id)
        kind = planted(text[0]) if text is not None else None
        if kind is not None:
            found[pick.row_id] = kind
    first = sorted(
        (p for p in picks if p.row_id in found),
        key=lambda p: (found[p.row_id] != named, position[p.version]),
    )
    rest = [p for p in picks if p.row_id not in found]
    return [*first, *rest], Complaint(named, tuple(found.values()))


def real_first(
    found: list[Candidate], texts: Mapping[str, str], request: str
) -> tuple[list[Candidate], set[str]]:
    """`found` with each memory that reads as planted (`suspect.planted`) or as
    made of the request's own words (`suspect.imitates`) after every other
    that holds as much of the request: stored text never outranks what it
    imitates. Also the ids of those suspects, never acted on alone."""
    suspects = {
        c.id for c in found if planted(texts[c.id]) or imitates(texts[c.id], request)
    }
    real = [c.scores.coverage for c in found if c.id not in suspects]
    outranked = {
        c.id
        for c in found
        if c.id in suspects and any(held >= c.scores.coverage for held in real)
    }
    return sorted(found, key=lambda c: c.id in outranked), suspects
