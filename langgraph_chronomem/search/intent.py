"""What an undo request asks for: the intent, the topic, and any time window.

    >>> parse("undo the update about my move to NYC")
    Intent(kind='undo', topic='my move to NYC', window=None)
    >>> parse("go back to when I still lived in Boston").kind
    'still'
    >>> parse("redo").kind
    'redo'

Kinds, and the version each one targets (DESIGN.md, "Natural-language undo"):

- `undo`: "undo/revert/forget X" — the version *before* the commit that matches X.
- `at`: "go back to when X" — the version *at* the commit that matches X.
- `still`: "back to when X was still true" — the last version at which the item
  that matches X still held that value.
- `redo`: undo the last rollback.

Times in the request ("yesterday", "last Tuesday", "3 days ago", "on May 8",
"since 2024-05-01") become a window of commit times that narrows the
candidates; they are removed from the topic.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from datetime import date, datetime, time, timedelta, timezone
from typing import Literal

__all__ = ["Intent", "TimeWindow", "parse"]

Kind = Literal["undo", "at", "still", "redo"]

_WEEKDAYS = ["monday", "tuesday", "wednesday", "thursday", "friday", "saturday", "sunday"]
_MONTHS = [
    "january", "february", "march", "april", "may", "june",
    "july", "august", "september", "october", "november", "december",
]  # fmt: skip
_MONTH = r"(?P<month>" + "|".join(m[:3] + r"[a-z]*" for m in _MONTHS) + r")"


@dataclass(frozen=True)
class TimeWindow:
    """Commit times from `start` (inclusive) to `end` (exclusive), in UTC."""

    start: datetime | None
    end: datetime | None

    def __contains__(self, moment: datetime) -> bool:
        return (self.start is None or moment >= self.start) and (
            self.end is None or moment < self.end
        )


@dataclass(frozen=True)
class Intent:
    """A parsed request: its kind, what it is about, and when."""

    kind: Kind
    topic: str
    window: TimeWindow | None = None


_REDO = re.compile(
    r"^\s*(?:please\s+)?(?:redo\b|undo\s+(?:the|that|my|your)?\s*(?:last\s+)?(?:undo|rollback)\b"
    r"|put\s+(?:it|that)\s+back\b|restore\s+what\s+you\s+(?:undid|removed)\b)",
    re.I,
)
_STILL = re.compile(
    r"\b(?:to\s+)?(?:when|while|the\s+time)\s+(?P<topic>.*?\b(?:still|yet)\b.*)$"
    r"|\b(?:when|while)\s+(?P<topic2>.+?)\s+(?:was|were)\s+still\s+(?:true|the\s+case|right)\b",
    re.I,
)
_AT = re.compile(
    r"\b(?:go|going|roll|take\s+(?:me|it|us)|bring\s+(?:me|it|us)|get|revert|restore)?\s*"
    r"back\s+to\s+(?:the\s+(?:time|point|version|moment)\s+)?(?:when|where|after)\s+(?P<topic>.+)$",
    re.I,
)
_BEFORE = re.compile(
    r"\bback\s+to\s+(?:the\s+(?:time|point|version)\s+)?before\s+(?P<topic>.+)$", re.I
)
_UNDO = re.compile(
    r"^\s*(?:please\s+)?(?:can\s+you\s+|could\s+you\s+)?"
    r"(?:undo|revert|forget|cancel|drop|discard|remove|delete|roll\s*back|take\s+back|unlearn)\b"
    r"\s*(?:(?:the|that|my|your|this|what\s+you\s+(?:learned|saved|stored|remembered))\s+)*"
    r"(?:(?:last|latest|recent|wrong|bad|incorrect)\s+)*"
    r"(?:(?:update|change|edit|memory|memories|note|fact|thing|bit|part|entry)s?\b\s*)?"
    r"(?:(?:about|regarding|on|of|for|where|that|saying|when)\s+)?(?P<topic>.*)$",
    re.I,
)


def _day_start(day: date) -> datetime:
    return datetime.combine(day, time.min, tzinfo=timezone.utc)


def _resolve_day(month: str, day: str, year: str | None, today: date) -> date:
    number = next(i for i, m in enumerate(_MONTHS, 1) if m.startswith(month[:3].lower()))
    guess = date(int(year) if year else today.year, number, int(day))
    if not year and guess > today:  # "on May 8" said in January means last May
        guess = guess.replace(year=guess.year - 1)
    return guess


_TIME_PATTERNS: list[tuple[re.Pattern[str], str]] = [
    (re.compile(r"\b(?:from\s+|on\s+)?today(?:'s)?\b", re.I), "today"),
    (re.compile(r"\b(?:from\s+|on\s+)?yesterday(?:'s)?\b", re.I), "yesterday"),
    (re.compile(r"\b(?:from\s+)?(?P<n>\d+|a|an|one|two|three)\s+(?P<unit>day|week|month)s?\s+ago\b", re.I), "ago"),
    (re.compile(r"\b(?:from\s+|on\s+)?last\s+(?P<weekday>" + "|".join(_WEEKDAYS) + r")\b", re.I), "weekday"),
    (re.compile(r"\b(?:from\s+|during\s+)?(?:last|past|previous)\s+(?P<unit>week|month)\b", re.I), "last"),
    (re.compile(r"\b(?:from\s+)?(?:this|earlier\s+this)\s+(?P<unit>week|month)\b", re.I), "this"),
    (re.compile(r"\b(?P<rel>on|since|after|before|from)\s+(?P<iso>\d{4}-\d{2}-\d{2})\b", re.I), "iso"),
    (
        re.compile(
            r"\b(?P<rel>on|since|after|before|from)\s+" + _MONTH
            + r"\s+(?P<day>\d{1,2})(?:st|nd|rd|th)?(?:,?\s+(?P<year>\d{4}))?\b",
            re.I,
        ),
        "date",
    ),
]  # fmt: skip

_WORD_NUMBERS = {"a": 1, "an": 1, "one": 1, "two": 2, "three": 3}


def _window(kind: str, match: re.Match[str], now: datetime) -> TimeWindow:
    today = now.date()
    if kind == "today":
        return TimeWindow(_day_start(today), None)
    if kind == "yesterday":
        return TimeWindow(_day_start(today - timedelta(days=1)), _day_start(today))
    if kind == "ago":
        n = match["n"].lower()
        count = _WORD_NUMBERS[n] if n in _WORD_NUMBERS else int(n)
        days = count * {"day": 1, "week": 7, "month": 30}[match["unit"].lower()]
        day = today - timedelta(days=days)
        slack = max(1, days // 7)  # "3 weeks ago" is not to the day
        return TimeWindow(_day_start(day - timedelta(days=slack)), _day_start(day + timedelta(days=slack + 1)))
    if kind == "weekday":
        target = _WEEKDAYS.index(match["weekday"].lower())
        back = (today.weekday() - target) % 7 or 7
        day = today - timedelta(days=back)
        return TimeWindow(_day_start(day), _day_start(day + timedelta(days=1)))
    if kind in ("last", "this"):
        span = 7 if match["unit"].lower() == "week" else 30
        if kind == "this":
            return TimeWindow(_day_start(today - timedelta(days=span)), None)
        return TimeWindow(_day_start(today - timedelta(days=2 * span)), _day_start(today - timedelta(days=span - 1)))
    if kind == "iso":
        day = date.fromisoformat(match["iso"])
    else:
        day = _resolve_day(match["month"], match["day"], match["year"], today)
    rel = match["rel"].lower()
    if rel in ("since", "after", "from"):
        return TimeWindow(_day_start(day + timedelta(days=rel == "after")), None)
    if rel == "before":
        return TimeWindow(None, _day_start(day))
    return TimeWindow(_day_start(day), _day_start(day + timedelta(days=1)))


def _take_time(text: str, now: datetime) -> tuple[str, TimeWindow | None]:
    for pattern, kind in _TIME_PATTERNS:
        match = pattern.search(text)
        if match:
            rest = (text[: match.start()] + " " + text[match.end() :]).strip()
            return rest, _window(kind, match, now)
    return text, None


def _clean(topic: str) -> str:
    return re.sub(r"\s+", " ", topic).strip(" .,!?;:'\"")


def parse(request: str, *, now: datetime | None = None) -> Intent:
    """Parse an undo request.

    Args:
        request: What the person or agent said, e.g. "undo the update about NYC".
        now: The moment relative times are counted from (default: now, UTC).

    Returns:
        The intent. A request that names no intent is an `undo` of its whole
        text; an `undo` with an empty topic ("undo the last change") means the
        latest commit.
    """
    now = now or datetime.now(timezone.utc)
    if _REDO.search(request):
        return Intent("redo", "")
    text, window = _take_time(request, now)
    for kind, pattern in (("still", _STILL), ("undo", _BEFORE), ("at", _AT), ("undo", _UNDO)):
        match = pattern.search(text)
        if match:
            topic = next(g for g in match.groups() if g is not None) if match.groups() else ""
            if kind == "undo" or _clean(topic):
                return Intent(kind, _clean(topic), window)  # type: ignore[arg-type]
    return Intent("undo", _clean(text), window)
