"""The log's rows as the engine passes them around, and namespaces and scopes as
the rows store them: dot-joined text.

Below `base.py`, so the mixins `LogTransaction` is made of share them without
importing it.
"""

from __future__ import annotations

import functools
import hashlib
import json
import secrets
from collections.abc import Iterable, Iterator, Sequence
from dataclasses import dataclass
from datetime import datetime
from typing import Any, NamedTuple

from langgraph_chronomem.engine.describe import ChangeText
from langgraph_chronomem.engine.types import Erased, Namespace, Op
from langgraph_chronomem.engine.values import Stamp
from langgraph_chronomem.errors import ScopeError

__all__ = [
    "ChangeRow",
    "RebuildRequest",
    "chunks",
    "namespace_from_text",
    "namespace_text",
    "placed",
    "rebuild_requests",
    "rebuild_text",
    "scope_key",
    "scope_of",
    "scope_text",
]

_CHUNK = 500  # keeps every IN (...) list under any driver's parameter limit


def namespace_text(namespace: Namespace) -> str:
    """Namespaces are stored dot-joined; LangGraph forbids dots inside labels."""
    return ".".join(namespace)


def scope_text(scope: Namespace) -> str:
    """Scopes are stored like namespaces; the whole-store scope is ``""``."""
    return ".".join(scope)


def scope_key(scope: Namespace) -> str:
    """One opaque word per scope, for full-text and vector filters.

    >>> scope_key(("memories", "alice"))
    'sf7e917d8240ba3269c70ca30'
    """
    return "s" + hashlib.sha1(scope_text(scope).encode()).hexdigest()[:24]


class RebuildRequest(NamedTuple):
    """A reset's (or a redaction's) request that a projection make a scope
    again. Its ticket tells requests for one scope apart, so a rebuild strikes
    only those it saw: two stores rebuilding at once never strike a newer one
    between them. ("" for a request stored before tickets: schema step
    `0008_rebuild_tickets`.)"""

    scope: Namespace
    ticket: str

    @classmethod
    def new(cls, scope: Namespace) -> RebuildRequest:
        """A request for `scope` with a ticket of its own (random: stores in
        several processes make them)."""
        return cls(scope, secrets.token_hex(8))


def rebuild_requests(text: str) -> list[RebuildRequest]:
    """The requests a projection's `rebuild` column holds.

    >>> rebuild_requests('[{"scope": ["memories", "alice"], "ticket": "7f"}]')
    [RebuildRequest(scope=('memories', 'alice'), ticket='7f')]
    """
    return [
        RebuildRequest(tuple(r["scope"]), r["ticket"])
        if isinstance(r, dict)
        # A scope's labels alone: written by a process of a version before
        # tickets that was running when this one upgraded the database.
        else RebuildRequest(tuple(r), "")
        for r in json.loads(text)
    ]


def rebuild_text(requests: Iterable[RebuildRequest]) -> str:
    """The `rebuild` column's text for `requests`."""
    return json.dumps([{"scope": list(r.scope), "ticket": r.ticket} for r in requests])


def scope_of(namespace: Namespace, depth: int) -> Namespace:
    """The scope a namespace (or a scope given as any namespace inside it) is in.

        >>> scope_of(("memories", "alice", "food"), 2)
        ('memories', 'alice')

    Raises:
        ScopeError: If the namespace is shorter than `depth`.
    """
    if len(namespace) < depth:
        raise ScopeError(
            f"namespace {namespace!r} is shorter than this store's scope_depth="
            f"{depth}; give at least {depth} labels, e.g. ('memories', '<user_id>')"
        )
    return tuple(namespace[:depth])


@functools.lru_cache(maxsize=4096)
def placed(namespace: Namespace, depth: int) -> tuple[Namespace, str]:
    """`scope_of` and `namespace_text` at once, for a write's (tuple) namespace.

        >>> placed(("memories", "alice", "food"), 2)
        (('memories', 'alice'), 'memories.alice.food')

    Cached: every write asks, agents keep writing to the same few namespaces,
    and a cached answer is a dict lookup where the two are Python calls (each
    about 3 µs when the CPU's caches are cold).

    Raises:
        ScopeError: If the namespace is shorter than `depth`.
    """
    return scope_of(namespace, depth), namespace_text(namespace)


def namespace_from_text(text: str) -> Namespace:
    """The inverse of `namespace_text`."""
    return tuple(text.split(".")) if text else ()


def chunks(items: Sequence[Any]) -> Iterator[Sequence[Any]]:
    for start in range(0, len(items), _CHUNK):
        yield items[start : start + _CHUNK]


@dataclass(frozen=True)
class ChangeRow:
    """One item change (one `items` row), where and when it was committed, and
    the words it is found by."""

    row_id: int
    scope: Namespace
    version: int
    created_at: datetime
    text: ChangeText


@dataclass(frozen=True)
class _Row:
    """An `items` row as the restore paths need it."""

    id: int
    namespace: str
    key: str
    version: int
    value: str | None
    created_at: Stamp | None
    updated_at: Stamp | None
    ttl_minutes: float | None
    index_fields: str | None
    erased: Erased | None = None


class _NewRow(NamedTuple):  # a tuple: one per written item, built in the hot path
    """A row to write. `created_at=None` inherits it from the row it replaces."""

    namespace: str
    key: str
    value: str | None
    ttl_minutes: float | None
    created_at: Stamp | None = None
    updated_at: Stamp | None = None
    index_fields: str | None = None


_RawChange = tuple[str, str, "str | None", "str | None"]
"""A change as written: namespace text, key, old and new value as JSON text."""


class _Written(NamedTuple):
    """What `LogTransaction._write` committed: a `Commit` before decoding."""

    scope: Namespace
    version: int
    seq: int
    parent: int | None
    created_at: Stamp  # as stored (`Dialect.now`): decoded only for a `Commit`
    author: str | None
    op: Op
    changes: list[_RawChange]
    labels: dict[str, str]
    target: int | None


def _index_rows(
    rows: Iterable[ChangeRow],
) -> list[tuple[int, str, str, str, str, str]]:
    """Change rows as `Dialect.index_changes` takes them."""
    return [
        (row.row_id, scope_key(row.scope), t.added, t.new, t.old, t.context)
        for row in rows
        for t in (row.text,)
    ]
