"""Turning stored values and timestamps into text and back.

Values are JSON objects encoded with orjson, the encoder LangGraph's own stores
use, so a `datetime` or `UUID` inside a value is stored the same way. Unlike
plain orjson, a non-finite float is refused instead of silently becoming `null`:

    >>> encode_value({"score": 0.5})
    '{"score":0.5}'
    >>> encode_value({"score": float("nan")})  # doctest: +ELLIPSIS
    Traceback (most recent call last):
    ...
    langgraph_chronomem.errors.InvalidValueError: value for 'score' holds nan, ...
"""

from __future__ import annotations

import math
import time
from collections.abc import Mapping
from datetime import datetime, timedelta, timezone
from typing import Any, TypeAlias

import orjson

from langgraph_chronomem.errors import InvalidValueError

__all__ = [
    "MAX_DEPTH",
    "Stamp",
    "decode_time",
    "decode_value",
    "encode_micros",
    "encode_time",
    "encode_value",
    "now_micros",
    "now_text",
    "utc",
]

Stamp: TypeAlias = "str | int"
"""A time as the log stores it: ISO text (`encode_time`, PostgreSQL) or
microseconds since the Unix epoch (`encode_micros`, SQLite)."""

MAX_DEPTH = 254
"""How deeply objects and lists may nest in a value: orjson's limit."""


def _check_finite(value: Any, where: str) -> None:
    if isinstance(value, float) and not math.isfinite(value):
        raise InvalidValueError(
            f"value for {where!r} holds {value}, which JSON cannot store"
        )
    if isinstance(value, Mapping):
        for name, inner in value.items():
            _check_finite(inner, f"{where}.{name}" if where else str(name))
    elif isinstance(value, (list, tuple)):
        for index, inner in enumerate(value):
            _check_finite(inner, f"{where}[{index}]")


def encode_value(value: Any) -> str:
    """Encode an item value as JSON text.

    Raises:
        InvalidValueError: If `value` is not a mapping with string keys whose
            contents JSON can hold, or nests deeper than `MAX_DEPTH`.
    """
    if type(value) is not dict:  # the usual case skips the ABC check and the copy
        if not isinstance(value, Mapping):
            raise InvalidValueError(
                "an item value must be a dict (a JSON object), got "
                f"{type(value).__name__}"
            )
        value = dict(value)
    try:
        text = orjson.dumps(value)
    except TypeError as exc:  # orjson.JSONEncodeError
        if "Recursion limit" in str(exc):
            raise InvalidValueError(
                f"value nests deeper than the {MAX_DEPTH} levels JSON encoding "
                "allows; flatten it, e.g. keep the deep part as a list of paths"
            ) from exc
        raise InvalidValueError(f"value cannot be stored as JSON: {exc}") from exc
    # orjson writes NaN and the infinities as null, so only a value whose text
    # holds a null can hide one; its depth is bounded now that it encoded.
    if b"null" in text:
        _check_finite(value, "")
    return text.decode()


def decode_value(text: str | bytes | None) -> dict[str, Any] | None:
    """Decode JSON text from the log; `None` (a deletion) stays `None`."""
    return None if text is None else orjson.loads(text)


def utc(moment: datetime) -> datetime:
    """The same moment in UTC; a naive datetime is taken to be UTC already."""
    if moment.tzinfo is None:
        return moment.replace(tzinfo=timezone.utc)
    return moment.astimezone(timezone.utc)


def encode_time(moment: datetime) -> str:
    """Fixed-width ISO text in UTC, so text order is time order."""
    return utc(moment).isoformat(timespec="microseconds")


_SECOND = (0, "")  # the last second `now_text` formatted, and its text


def now_text() -> str:
    """`encode_time(datetime.now(timezone.utc))` for a write, without making a
    `datetime`: the second is formatted once a second and the microseconds
    added. Every put stamps its rows, and the datetime code, cold after the
    database's work, cost a put about as much as one of its statements.

        >>> text = now_text()
        >>> encode_time(decode_time(text)) == text
        True
    """
    global _SECOND
    seconds, micros = divmod(time.time_ns() // 1000, 1_000_000)
    second, text = _SECOND
    if second != seconds:
        text = time.strftime("%Y-%m-%dT%H:%M:%S", time.gmtime(seconds))
        _SECOND = (seconds, text)
    return f"{text}.{micros:06d}+00:00"


_UTC = timezone.utc
_EPOCH = datetime(1970, 1, 1, tzinfo=_UTC)
_MICROSECOND = timedelta(microseconds=1)


def encode_micros(moment: datetime) -> int:
    """Microseconds since the Unix epoch: 8 bytes in a SQLite row where the
    ISO text takes 32, ordered as time is too.

        >>> encode_micros(datetime(2026, 1, 2, 3, 4, 5, 678901, timezone.utc))
        1767323045678901
    """
    return (utc(moment) - _EPOCH) // _MICROSECOND


def now_micros() -> int:
    """`encode_micros(datetime.now(timezone.utc))` for a write."""
    return time.time_ns() // 1000


# The UTC date and time of each second since the epoch that `decode_time` met
# lately: the rows a read returns were mostly written in the same few seconds,
# and `gmtime` costs a read twice what making the `datetime` does. A dict, not
# `lru_cache`, whose call costs as much again; emptied when full.
_SECONDS: dict[int, tuple[int, int, int, int, int, int]] = {}
_MAX_SECONDS = 4096


def _fields(seconds: int) -> tuple[int, int, int, int, int, int]:
    if len(_SECONDS) >= _MAX_SECONDS:
        _SECONDS.clear()
    year, month, day, hour, minute, second = time.gmtime(seconds)[:6]
    fields = _SECONDS[seconds] = (year, month, day, hour, minute, second)
    return fields


def decode_time(stored: Stamp) -> datetime:
    """Read back what `encode_time` or `encode_micros` wrote, as an aware
    datetime in UTC.

        >>> decode_time(1767323045678901)
        datetime.datetime(2026, 1, 2, 3, 4, 5, 678901, tzinfo=datetime.timezone.utc)
        >>> decode_time("2026-01-02T03:04:05.678901+00:00") == _
        True
    """
    if type(stored) is int:
        seconds, micros = divmod(stored, 1_000_000)
        fields = _SECONDS.get(seconds) or _fields(seconds)
        year, month, day, hour, minute, second = fields
        return datetime(year, month, day, hour, minute, second, micros, _UTC)
    return datetime.fromisoformat(stored)  # type: ignore[arg-type]
