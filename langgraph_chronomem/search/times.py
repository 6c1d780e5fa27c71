"""Time phrases in a request, as a window of commit times.

    >>> from datetime import datetime, timezone
    >>> now = datetime(2024, 6, 12, 15, 0, tzinfo=timezone.utc)  # a Wednesday
    >>> rest, window = take_time("revert yesterday's change to my job", now)
    >>> rest.split()
    ['revert', 'change', 'to', 'my', 'job']
    >>> window.start.isoformat(), window.end.isoformat()
    ('2024-06-11T00:00:00+00:00', '2024-06-12T00:00:00+00:00')

Read: "today", "earlier today", "this morning/afternoon/evening", "tonight",
"yesterday('s)", "yesterday morning", "last night", "the day before yesterday", "last
Tuesday", "on Friday", "this/last week, month or year", "the past week", "the last 3
days", "3 days ago", "a couple of weeks ago", "an hour ago", "2024-05-08",
"2024-05-08T10:30Z", "May 8", "Sept. 1st, 2023", "the 8th of May", "in May", "last
June", "in May 2023", "in 2023", "the weekend", "last weekend". "on/from/in" a time
mean all of it, "since" from its start, "after" from its end, "before" up to its
start, "until/as of" up to its end. Month names, bare weekdays and years count only
after such a word (or "back to", "last") or with "'s", so "what I may do", "Maynard"
and "my Friday class" stay in the topic. Days begin in the timezone of `now`.
"""

from __future__ import annotations

import re
from collections.abc import Callable
from dataclasses import dataclass
from datetime import date, datetime, timedelta, timezone

__all__ = ["NUMBERS", "TimeWindow", "take_time"]


@dataclass(frozen=True)
class TimeWindow:
    """Commit times from `start` (inclusive) to `end` (exclusive), in UTC."""

    start: datetime | None
    end: datetime | None

    def __contains__(self, moment: datetime) -> bool:
        return (self.start is None or moment >= self.start) and (
            self.end is None or moment < self.end
        )


# Time phrases. Each turns its match into a span of commit times (start, end).

Span = tuple[datetime, datetime]
_WEEKDAYS = ("monday", "tuesday", "wednesday", "thursday", "friday", "saturday",
             "sunday")  # fmt: skip
_MONTHS = ("jan", "feb", "mar", "apr", "may", "jun", "jul", "aug", "sep", "oct",
           "nov", "dec")  # fmt: skip
_MONTH = (
    r"(?P<month>jan(?:uary)?|feb(?:ruary)?|mar(?:ch)?|apr(?:il)?|may|june?|july?"
    r"|aug(?:ust)?|sep(?:t(?:ember)?)?|oct(?:ober)?|nov(?:ember)?|dec(?:ember)?)\b"
)
_DAY = r"(?P<day>[12]\d|3[01]|0?[1-9])(?:st|nd|rd|th)?"
_YEAR = r"(?P<year>(?:19|20)\d\d)"
_OF_YEAR = rf"(?:,?\s+{_YEAR}|\s+(?P<last_year>last\s+year))"  # "May last year"
NUMBERS = {"a": 1, "an": 1, "one": 1, "two": 2, "three": 3, "four": 4, "five": 5,
           "six": 6, "seven": 7, "eight": 8, "nine": 9, "ten": 10, "couple": 2,
           "few": 3, "several": 3, "some": 3}  # fmt: skip
_COUNT = r"\d+|(?:a\s+)?(?:couple(?:\s+of)?|few)|" + "|".join(NUMBERS)
_UNIT = r"(?:minute|hour|day|week|month|year)s?"
_HOURS = {"minute": 1 / 60, "hour": 1, "day": 24, "week": 7 * 24, "month": 30 * 24,
          "year": 365 * 24}  # fmt: skip
_DAY_PARTS = {"morning": (0, 12), "afternoon": (12, 18), "evening": (18, 24),
              "night": (18, 30)}  # fmt: skip
_REL = r"on|in|during|over|within|from|of|since|after|before|prior\s+to|until|as\s+of"


def _midnight(day: date, now: datetime) -> datetime:
    local = datetime(day.year, day.month, day.day, tzinfo=now.tzinfo)
    return local.astimezone(timezone.utc)


def _days(day: date, now: datetime, count: int = 1) -> Span:
    return _midnight(day, now), _midnight(day + timedelta(days=count), now)


def _months(year: int, month: int, count: int, now: datetime) -> Span:
    first = year * 12 + month - 1  # counting months lets month 0 be last December
    start, end = (date(i // 12, i % 12 + 1, 1) for i in (first, first + count))
    return _midnight(start, now), _midnight(end, now)


def _amount(match: re.Match[str], now: datetime) -> Span:
    """'3 days ago', give or take; 'the past 3 days', up to now."""
    words = (match["n"] or "1").lower().split()
    word = words[-1 - (words[-1] == "of")]  # "a couple of"
    count = int(word) if word.isdigit() else NUMBERS[word]
    delta = timedelta(hours=count * _HOURS[match["unit"].lower().rstrip("s")])
    tomorrow = _midnight(now.date() + timedelta(days=1), now)
    if match["unit"].lower().startswith(("minute", "hour")):
        return (now - 2 * delta, now) if match["ago"] else (now - delta, tomorrow)
    if not match["ago"]:
        return _midnight((now - delta).date(), now), tomorrow
    slack = max(1, delta.days // 7)  # "3 weeks ago" is not to the day
    return _days(now.date() - timedelta(days=delta.days + slack), now, 2 * slack + 1)


def _calendar(match: re.Match[str], now: datetime) -> Span:
    today, back = now.date(), int(match["which"].lower() != "this")
    unit = match["unit"].lower()
    if unit == "week":
        return _days(today - timedelta(days=today.weekday() + 7 * back), now, 7)
    if unit == "month":
        return _months(today.year, today.month - back, 1, now)
    return _months(today.year - back, 1, 12, now)


def _weekday(match: re.Match[str], now: datetime) -> Span:
    today = now.date()  # "on Tuesday" said on a Tuesday is a week ago
    back = (today.weekday() - _WEEKDAYS.index(match["weekday"].lower())) % 7 or 7
    return _days(today - timedelta(days=back), now)


def _day_part(match: re.Match[str], now: datetime) -> Span:
    back = 2 if match["before"] else 0 if match["today"] or match["this"] else 1
    midnight = _midnight(now.date() - timedelta(days=back), now)
    first, last = _DAY_PARTS[match["part"].lower()] if match["part"] else (0, 24)
    return midnight + timedelta(hours=first), midnight + timedelta(hours=last)


def _weekend(match: re.Match[str], now: datetime) -> Span:
    """The latest weekend begun, this one if today is in it ("last weekend"
    said on a Sunday is the one before)."""
    today = now.date()
    back = today.weekday() - 5  # days since Saturday, if it is the weekend
    if back < 0 or (match.groupdict().get("which") or "").lower() == "last":
        back = today.weekday() + 2
    return _days(today - timedelta(days=back), now, 2)


def _date(match: re.Match[str], now: datetime) -> Span | None:
    """A day, month or year: the latest that has begun, unless the year is said
    ("last June", said in June, is a year ago)."""
    named = match.groupdict()
    month = _MONTHS.index(named["month"][:3].lower()) + 1 if named.get("month") else 1
    said = named.get("year") or named.get("last_year")
    year = int(named["year"]) if named.get("year") else now.year - bool(said)
    try:
        first = date(year, month, int(named.get("day") or 1))
        this_month = (first.year, first.month) == (now.year, now.month)
        last = named.get("which") == "last" and this_month  # "last June" said in June
        if not said and (first > now.date() or last):  # or "May 8" said in January
            first = first.replace(year=year - 1)
    except ValueError:  # "Feb 30"
        return None
    if named.get("day"):
        return _days(first, now)
    return _months(first.year, first.month, 1 if named.get("month") else 12, now)


def _iso(match: re.Match[str], now: datetime) -> Span | None:
    try:
        moment = datetime.fromisoformat(match["iso"].upper().replace("Z", "+00:00"))
    except ValueError:
        return None
    if len(match["iso"]) == 10:
        return _days(moment.date(), now)
    start = moment.replace(tzinfo=moment.tzinfo or now.tzinfo).astimezone(timezone.utc)
    return start, start + timedelta(minutes=1)


_WEEKDAY = r"(?P<weekday>" + "|".join(_WEEKDAYS) + r")"
_PART = r"(?P<part>morning|afternoon|evening|night)"
# (phrase, its span, whether it needs "on/since/...", "back to" or "'s" to count)
_TIMES: list[tuple[str, Callable[[re.Match[str], datetime], Span | None], bool]] = [
    (r"(?P<iso>\d{4}-\d\d-\d\d(?:[T ]\d\d:\d\d(?::\d\d)?(?:Z|[+-]\d\d:\d\d)?)?)",
     _iso, False),
    (rf"{_MONTH}\.?\s+{_DAY}{_OF_YEAR}?", _date, True),
    (rf"(?:the\s+)?{_DAY}\s+(?:of\s+)?{_MONTH}{_OF_YEAR}?", _date, True),
    (rf"(?P<which>last|past)\s+{_MONTH}(?!'s)", _date, False),  # not "this may"
    (rf"{_MONTH}{_OF_YEAR}?(?!'s)", _date, True),  # "May's party": a name
    (_YEAR, _date, True),
    (rf"(?:the\s+(?:past|last)\s+|past\s+|last\s+(?=(?:{_COUNT})\s+{_UNIT})"
     rf"|(?=(?:{_COUNT})\s+{_UNIT}\s+ago\b))(?:(?P<n>{_COUNT})\s+)?"
     rf"(?P<unit>{_UNIT})(?:\s+(?P<ago>ago))?", _amount, False),
    (r"(?:earlier\s+)?(?P<which>last|previous|this)\s+(?P<unit>week|month|year)",
     _calendar, False),
    (rf"(?:last|previous)\s+{_WEEKDAY}", _weekday, False),
    (r"(?P<which>last|this|past)\s+weekend", _weekend, False),
    (r"the\s+weekend", _weekend, True),
    (_WEEKDAY, _weekday, True),
    (rf"(?:(?P<this>this\s+|to)|yesterday\s+|last\s+){_PART}|(?:earlier\s+)?"
     r"(?P<today>today)|(?P<before>(?:the\s+)?day\s+before\s+)?yesterday",
     _day_part, False),
]  # fmt: skip
_TIME_PATTERNS = [
    (re.compile(rf"(?i)\b(?:(?P<rel>{_REL})\s+|(?P<to>(?<=\bback to )))?(?:{phrase})"
                r"(?P<poss>'s)?\b"), span, anchored)
    for phrase, span, anchored in _TIMES
]  # fmt: skip


def _window(rel: str | None, start: datetime, end: datetime) -> TimeWindow:
    bounds = {"since": (start, None), "after": (end, None), "before": (None, start),
              "prior to": (None, start), "until": (None, end),
              "as of": (None, end)}  # fmt: skip
    return TimeWindow(*bounds.get(" ".join((rel or "").lower().split()), (start, end)))


_CLOCK = re.compile(  # an hour ending the phrase: "last Tuesday at 5pm."
    r"(?i)\s*(?:(?:at|around|by)\s+)?(?:\d{1,2}(?:[:.]\d{2})?\s*(?:am|pm|a\.m\.|p\.m\.)"
    r"|noon|midnight)(?=\s*(?:[,;!?]|\.(?!\w)|$))"
)


def take_time(text: str, now: datetime) -> tuple[str, TimeWindow | None]:
    """`text` without its first time phrase, and that phrase's window (`None`
    if it has none); "Feb 30" is no time and leaves `text` as it is."""
    for pattern, span_of, anchored in _TIME_PATTERNS:
        for match in pattern.finditer(text):
            if anchored and not (match["rel"] or match["poss"] or match["to"] == ""):
                continue
            try:
                span = span_of(match, now)
            except OverflowError:  # "99999999999 years ago": before any date
                span = None
            if span is None:  # "Feb 30": not a date, and no weaker reading either
                return text, None
            # "last Tuesday at 5pm": the day is the window; its hour goes with it
            clock = _CLOCK.match(text, match.end())
            end = clock.end() if clock else match.end()
            rest = text[: match.start()] + " " + text[end:]
            return rest, _window(match["rel"], *span)
    return text, None
