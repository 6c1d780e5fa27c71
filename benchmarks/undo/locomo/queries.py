"""Rollback requests built from anchors, with the versions they must resolve to.

A request names an anchor's fact the way a person would ask to undo it, in
words taken from the QA question (and its answer) or from the event sentence,
never from the turn that holds the fact. Two intents, each in several phrasings:

- *undo X* ("undo the update about X", "forget what you saved about X") targets
  the version before the first evidence commit;
- *go back to when X* ("go back to when you learned about X") targets the last
  evidence commit.

An event names a session, not a turn, so any turn of that session counts: an
undo must land on a version just before one of its turns, a go-back on one of
its turns (session-level gold, as the ChronoMem paper aligns events).

Requests that name a date ("on 8 May, 2023", "in June", a temporal answer such
as "The week before 9 June 2023") go to a separate slice: the undo parser turns
them into a window of *commit* times, which helps when the date is the day the
memory was written and hurts when it is the day the thing happened.
"""

from __future__ import annotations

import re
from collections.abc import Iterable, Sequence
from dataclasses import dataclass
from typing import Literal

from benchmarks.undo.locomo.data import Anchor, Conversation
from langgraph_chronomem.search.intent import content_words, parse

__all__ = ["TEMPLATES", "Query", "build_queries", "overlap", "question_clause"]

Intent = Literal["undo", "at"]

# (template id, intent, text); {clause}: the question as a clause; {fact}: the
# clause and its answer; {event}: the event sentence; {date}: its session date.
TEMPLATES: dict[str, tuple[Intent, str]] = {
    "undo-update": ("undo", "undo the update about {clause}"),
    "undo-forget": ("undo", "forget what you saved about {clause}"),
    "undo-fact": ("undo", "please remove the memory about {fact}"),
    "undo-fact-wrong": ("undo", "that's wrong, delete what you stored about {fact}"),
    "at-learned": ("at", "go back to when you learned about {clause}"),
    "at-came-up": ("at", "take me back to the point where {clause} came up"),
    "at-fact": ("at", "roll back to when you found out about {fact}"),
    "at-fact-heard": ("at", "go back to the version where you first heard of {fact}"),
    "undo-before": ("undo", "go back to before {clause}"),
    "at-rewind": ("at", "rewind to when {clause}"),
    "undo-event": ("undo", "undo the update about {event}"),
    "undo-event-forget": ("undo", "forget that {event}"),
    "undo-event-remove": ("undo", "remove what you saved about {event}"),
    "at-event": ("at", "go back to when {event}"),
    "at-event-learned": ("at", "take me back to where you learned that {event}"),
    "at-event-roll": ("at", "roll back to when {event}"),
    "undo-event-never": ("undo", "I never said that {event}, remove it"),
    "at-event-way": ("at", "put things back the way they were when {event}"),
    "undo-event-date": ("undo", "undo what you saved on {date} about {event}"),
    "at-event-date": ("at", "go back to when {event}, on {date}"),
}  # fmt: skip
_POOLS = {  # per source and intent, in turn; "fact" templates need an answer
    ("qa", "undo"): ["undo-update", "undo-fact", "undo-forget", "undo-fact-wrong",
                     "undo-before"],
    ("qa", "at"): ["at-learned", "at-fact", "at-came-up", "at-fact-heard", "at-rewind"],
    ("event", "undo"): ["undo-event", "undo-event-forget", "undo-event-remove",
                        "undo-event-never"],
    ("event", "at"): ["at-event", "at-event-learned", "at-event-roll", "at-event-way"],
}  # fmt: skip
_DATED = {"undo": "undo-event-date", "at": "at-event-date"}  # events with a date

_AUX = r"(?:did|does|do|is|are|was|were|has|have|had|will|would|can|could|should)"
_ADVERBIAL = re.compile(
    rf"(?i)^(?:when|where|why|how(?:\s+(?:long|often|old|many\s+\w+|much\s+\w+))?)"
    rf"\s+{_AUX}\s+(?P<rest>.+)$"
)
_NOMINAL = re.compile(
    rf"(?i)^(?:what|which|who|whose)(?P<noun>(?:\s+(?!{_AUX}\b)[\w'-]+){{0,4}}?)"
    rf"\s+{_AUX}\s+(?P<rest>.+)$"
)
_DATE = re.compile(
    r"\b(?:19|20)\d\d\b|\b(?:January|February|March|April|June|July|August|September"
    r"|October|November|December|Jan|Feb|Mar|Apr|Jun|Jul|Aug|Sep|Sept|Oct|Nov|Dec)\b"
    r"|\b\d{1,2}(?:st|nd|rd|th)?\s+May\b|\bMay\s+\d|\b(?:yesterday|today|tonight"
    r"|tomorrow|weekend|ago|last\s+(?:week|month|year|night))\b|\b(?:Mon|Tues|Wednes"
    r"|Thurs|Fri|Satur|Sun)day\b",
    re.IGNORECASE,
)


@dataclass(frozen=True)
class Query:
    """One rollback request and what it must resolve to.

    Attributes:
        id: Stable id: `<conv>/<anchor index>/<template>`.
        anchor: The anchor it names.
        template: The template id (see `TEMPLATES`).
        intent: The intent the template expresses (`undo` or `at`).
        text: The request.
        gold: The acceptable targets, inclusive (one version for QA anchors).
        date: Whether the request names a date (the date slice).
        topic: The topic the package's parser extracts (what retrieval sees).
        parsed: The intent kind the parser returns.
        overlap: Share of the topic's content words found in the evidence
            turns (QA) or in the best-matching turn of the session (events).
    """

    id: str
    anchor: Anchor
    template: str
    intent: Intent
    text: str
    gold: tuple[int, int]
    date: bool
    topic: str
    parsed: str
    overlap: float

    def hits(self, target: int) -> bool:
        return self.gold[0] <= target <= self.gold[1]

    def distance(self, target: int) -> int:
        """Versions between `target` and the nearest acceptable target."""
        lo, hi = self.gold
        return max(lo - target, target - hi, 0)


def question_clause(question: str) -> str:
    """A question turned into the clause a request would name.

    >>> question_clause("When did Caroline go to the LGBTQ support group?")
    'Caroline go to the LGBTQ support group'
    >>> question_clause("What kind of flooring is Jon looking for?")
    'the kind of flooring Jon looking for'
    >>> question_clause("What is Caroline's identity?")
    "Caroline's identity"
    """
    text = " ".join(question.strip().rstrip("?").split())
    if match := _ADVERBIAL.match(text):
        return match["rest"]
    if match := _NOMINAL.match(text):
        noun = match["noun"].strip()
        return f"the {noun} {match['rest']}" if noun else match["rest"]
    return text[:1].lower() + text[1:]


def _stem(word: str) -> str:
    for suffix in ("ing", "ed", "es", "s"):
        if word.endswith(suffix) and len(word) - len(suffix) >= 3:
            return word[: -len(suffix)]
    return word


def _words(text: str) -> set[str]:
    return {_stem(w) for w in content_words(text)}


def overlap(topic: str, texts: Iterable[str]) -> float:
    """The largest share of `topic`'s content words found in one of `texts`."""
    words = _words(topic)
    if not words:
        return 0.0
    return max((len(words & _words(text)) / len(words) for text in texts), default=0.0)


def _fact(anchor: Anchor) -> str | None:
    """The clause with its answer, when the answer is a short fact (no date)."""
    if anchor.source != "qa" or not anchor.answer:
        return None
    if len(anchor.answer.split()) > 12:
        return None
    return f"{question_clause(anchor.text)}: {anchor.answer}"


def _fill(template: str, anchor: Anchor, fact: str | None) -> str:
    event = anchor.text.rstrip(". ")
    return TEMPLATES[template][1].format(
        clause=question_clause(anchor.text),
        fact=fact,
        event=event,
        date=anchor.date,
    )


def build_queries(
    conv: Conversation,
    *,
    per_intent: int = 1,
    dated_both: bool = False,
    anchors: Sequence[int] | None = None,
) -> list[Query]:
    """The requests for one conversation.

    Each anchor gets `per_intent` phrasings per intent (`undo`, `at`), taken in
    turn from the template pool, starting at the anchor's index, so that every
    template is used about equally often: for a QA item with and without its
    answer (an answer that names a date puts that request in the date slice);
    an event also gets one request naming its session date (date slice), for
    one intent or, with `dated_both`, for both.

    Args:
        conv: The conversation.
        per_intent: Phrasings per intent and anchor (the dated ones come extra).
        dated_both: Dated event requests for both intents, not alternately.
        anchors: Indices into `conv.anchors` to use (default: all).
    """
    by_id = conv.by_id()
    queries: list[Query] = []
    chosen = range(len(conv.anchors)) if anchors is None else anchors
    for index in chosen:
        anchor = conv.anchors[index]
        fact = _fact(anchor)
        if anchor.source == "qa":
            evidence = [by_id[i].content for i in anchor.evidence]
        else:
            evidence = [t.content for t in conv.sessions[anchor.session][1]]
        for intent in ("undo", "at"):
            pool = [
                t
                for t in _POOLS[anchor.source, intent]
                if fact or "{fact}" not in TEMPLATES[t][1]
            ]
            picks = [pool[(index + n) % len(pool)] for n in range(per_intent)]
            if anchor.date and (index % 2 == (intent == "at") or dated_both):
                picks.append(_DATED[intent])
            for template in dict.fromkeys(picks):
                text = _fill(template, anchor, fact)
                parsed = parse(text)
                lo, hi = anchor.versions[0], anchor.versions[-1]
                if anchor.source == "qa":
                    gold = (lo - 1, lo - 1) if intent == "undo" else (hi, hi)
                else:
                    gold = (lo - 1, hi - 1) if intent == "undo" else (lo, hi)
                queries.append(
                    Query(
                        id=f"{conv.sample_id}/{index}/{template}",
                        anchor=anchor,
                        template=template,
                        intent=intent,
                        text=text,
                        gold=gold,
                        date=parsed.window is not None or bool(_DATE.search(text)),
                        topic=parsed.topic,
                        parsed=parsed.kind,
                        overlap=overlap(parsed.topic, evidence),
                    )
                )
    return queries
