"""When the undo search acts alone, and why it offers instead.

The resolver ranks; these rules decide. `sure` is the calibrated rule (both
searches agree, close in meaning, a clear lead; measured in docs/benchmarks.md),
`offered` the reasons a sure match is still only offered (the request does not
ask now, names its memory in words other memories hold too, gives a name the
memory does not hold, or names a thing the memory neither says nor means), and
`sure_of_planted` the rule for a complaint about a planted memory. Each answers
with its reason, in words the tool passes on. What a request names:

    >>> _head_of("the bank loan for the workshop").words
    'bank loan'
"""

from __future__ import annotations

import re
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from typing import NamedTuple

import numpy as np

from langgraph_chronomem.engine.fields import full_text
from langgraph_chronomem.search.candidates import (
    Candidate,
    ResolverConfig,
)
from langgraph_chronomem.search.held import holds
from langgraph_chronomem.search.intent import Intent
from langgraph_chronomem.search.suspect import Planted, planted
from langgraph_chronomem.search.vectors import unit
from langgraph_chronomem.search.words import content_words

__all__ = ["Complaint", "offered", "sure", "sure_of_planted"]

# The thing a request names (its head, up to four words) before what it is for,
# about, at ...: "the bank loan for the workshop", "Morag's operation on her
# wrist", "tomás's new job".
_AFTER_HEAD = (
    r"(?:for|about|at|in|on|from|with|to|near|by|over|under|that|which|while|who"
    r"|before|after|during|since)"
)
_HEADS = (
    re.compile(
        r"(?i)^(?:the|my|our|his|her|their|your|that|this|those|these)\s+"
        rf"((?:[\w'-]+\s+){{0,3}}?[\w'-]+)\s+{_AFTER_HEAD}\s+\S"
    ),
    re.compile(  # a possessive, not "there's" or "it's"
        r"(?i)^(?:[\w.-]+\s+){0,2}?"
        r"(?!(?:there|here|it|that|what|who|where|how|he|she|let)'s)[\w-]+'s\s+"
        rf"((?:[\w-]+\s+){{0,3}}?[\w-]+)(?=\s+{_AFTER_HEAD}\b|\s*[,.;:!?]|\s*$)"
    ),
)
# Heads that name a memory, a saying or a change, not what it is about: "the
# bit about my sister", "my remark about Bake Off", "my move to NYC" (the
# change to the memory is the move).
_GENERIC_HEADS = frozenset(
    """bit bits part piece thing things stuff detail details info information note
    notes entry entries line lines one ones business matter remark remarks comment
    comments confession joke mention story question news update updates fact facts
    number whole lot pile load list rest half move moving switch switching change
    changes transfer shift swap""".split()  # noqa: SIM905 - a word list reads better as words
)
# How much closer in meaning a request must be to its best match with its head
# than without it, when the match does not say every word of the head.
_HEAD_ADDS = 0.05


@dataclass(frozen=True)
class Complaint:
    """A request about a planted memory: the kind it names, if one, and the
    kinds of the picks that read as planted."""

    named: Planted | None
    kinds: tuple[Planted, ...]


def sure(config: ResolverConfig, candidates: Sequence[Candidate]) -> tuple[bool, str]:
    """The calibrated rule for acting alone (docs/benchmarks.md measures it):
    acting changes something, the best holds a word of the request and is
    close in meaning, and no other candidate holds as much of what the request
    says (another memory, or another change of the same one, that holds every
    term the request names and as many of its words: the request does not
    pick one). A whole-scope rollback undoes every change since, so both
    searches must rank it first and it must hold at least half of the
    request's words.

    It weighs no lead over the runner-up: with a new user's few memories,
    any partial match leads by far, so a lead is surest exactly when the
    request names something memory never held (`search.held` sees that).
    A revert whose items were changed again since may be decided: applying
    it changes nothing and reports the conflict (`apply_undo`).
    """
    best = candidates[0]
    if not best.diff and not best.conflicts:
        # Already undone, or the request meant another change: offer them.
        return False, "acting on the best match would change nothing"
    first = best.scores
    if "dense" not in config.retrievers or "bm25" not in config.retrievers:
        return False, "acting alone needs both searches to agree"
    similarity = first.dense_score or 0.0
    rival = next(
        (
            other
            for other in candidates[1:]
            if not other.lacking
            and (other.diff or other.conflicts)
            and other.scores.coverage >= first.coverage
            and not _one_change(other, best)
        ),
        None,
    )
    rollback = best.action == "rollback"
    checks = [
        (
            first.bm25_rank is not None,
            "the word search finds no word of the request in it",
        ),
        (
            similarity >= config.act_similarity,
            f"the best match is only {similarity:.2f} similar, "
            f"{config.act_similarity} to act",
        ),
        (rival is None, _rivalry(best, rival)),
        (
            not rollback or first.bm25_rank == first.dense_rank == 1,
            "a rollback of the whole memory needs both searches to rank it first",
        ),
        (
            not rollback or first.coverage >= config.act_coverage_rollback,
            f"a rollback of the whole memory needs the request's words to pick "
            f"the version: the best match holds {first.coverage:.0%} of them, "
            f"{config.act_coverage_rollback:.0%} to act",
        ),
    ]
    failed = [why for ok, why in checks if not ok]
    if failed:
        return False, failed[0]
    return True, "sure: the one change that holds what the request says"


def _one_change(a: Candidate, b: Candidate) -> bool:
    """Whether `a` and `b` are one change seen whole and by one of its fields."""
    return a.commit.version == b.commit.version and a.items == b.items


def _rivalry(best: Candidate, rival: Candidate | None) -> str:
    """Why a rival holding as much of the request as the best stops an action."""
    if rival is None:
        return ""
    if set(rival.items) & set(best.items) and rival.fields == best.fields:
        return "the request names a memory but not which of its changes"
    return f"change {rival.id} holds as much of what the request says"


def offered(
    config: ResolverConfig,
    intent: Intent,
    candidates: Sequence[Candidate],
    texts: Mapping[str, str],
    embed: Callable[[list[str]], list[list[float]]],
    *,
    by_words: bool = True,
    named: bool = True,
) -> str | None:
    """Why a sure match is offered rather than acted on, if it is: what the
    request asks for and, for a request matched by its words (`by_words`; a
    complaint about a planted memory is matched by the memory's shape),
    whether it names anything (`named`), whether the best match holds every
    term it names (`Candidate.lacking`, `search.held`) and whether the thing
    it names is the one the memory is about. `texts` holds each candidate's
    matched words; `embed` embeds texts (called only when a head must be
    weighed)."""
    best = candidates[0]
    if not intent.asked:
        return "the request names a memory, not clearly asking to change it now"
    if intent.kind not in config.act_on:
        what = (
            "going back to when something was still true"
            if intent.kind == "still"
            else f"a {intent.kind!r} request"
        )
        return f"{what} is confirmed first (ResolverConfig.act_on)"
    if by_words and not named:
        return "the request names nothing a memory could hold"
    if by_words and best.lacking:
        return (
            f"the request names {', '.join(map(repr, best.lacking))}, which the "
            "best match does not hold"
        )
    head = _head_of(intent.topic) if by_words else None
    if head is not None and not holds(texts[best.id], head.words):
        # Does the thing named make the request any nearer the memory, or
        # is the match all in what it is for ("the bank loan for the
        # workshop" is no nearer the workshop's memory than "the workshop")?
        topic, text = intent.topic.strip(), texts[best.id]
        without = topic[: head.start] + topic[head.end :]
        whole, rest, held = (unit(v) for v in embed([topic, without, text]))
        if float(np.dot(whole, held) - np.dot(rest, held)) < _HEAD_ADDS:
            return (
                f"the request is about {head.words!r}, which the best match "
                "neither says nor means: it matched what that is for"
            )
    return None


def sure_of_planted(complaint: Complaint, best: Candidate) -> tuple[bool, str]:
    """Act alone on a complaint about a planted memory only when it names the
    kind ("keyword soup", "hidden instructions") and one memory reads so."""
    if best.action != "revert":
        return False, "going back in time over a planted memory is confirmed first"
    if complaint.named is None:
        return False, (
            "the request is about something pasted, but not whether keywords or "
            "instructions: more than one memory may be meant"
        )
    kind = planted(full_text(best.changes[0].new))
    if kind != complaint.named:
        return False, f"no memory that reads as planted {complaint.named} was found"
    if complaint.kinds.count(kind) > 1:
        return False, f"several memories read as planted {kind}"
    if not best.diff and not best.conflicts:
        return False, "acting on the best match would change nothing"
    return (
        True,
        f"sure: the one memory that reads as planted {kind}, as the request says",
    )


class _Head(NamedTuple):
    """The thing a request names: its content words, and where it stands."""

    words: str
    start: int
    end: int


def _head_of(topic: str) -> _Head | None:
    """The thing `topic` names before what it is for or about, when that is
    more than a word for a memory: "the bank loan for the workshop" names
    "bank loan", "the bit about my sister" names nothing of its own.

    >>> _head_of("the bank loan for the workshop").words
    'bank loan'
    >>> _head_of("Morag's operation on her wrist").words
    'operation'
    >>> _head_of("the bit about my sister") is None
    True
    """
    topic = topic.strip()
    found = next(filter(None, (pattern.match(topic) for pattern in _HEADS)), None)
    if not found:
        return None
    words = [w for w in content_words(found.group(1)) if w not in _GENERIC_HEADS]
    return _Head(" ".join(words), *found.span(1)) if words else None
