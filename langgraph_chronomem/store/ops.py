"""LangGraph store ops in, log reads and writes out.

`check_ops` validates a whole batch before anything runs (so a bad op changes
nothing) and turns its `PutOp`s into log writes (`check_put` does one put);
`run_reads` answers the read ops inside an open log transaction, at HEAD or at
one version of one scope. The store and its read-only `as_of` view share both.
"""

from __future__ import annotations

import functools
import math
import re
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from datetime import datetime
from typing import Any, Literal

from langgraph.store.base import (
    NOT_PROVIDED,
    BaseStore,
    GetOp,
    InvalidNamespaceError,
    Item,
    ListNamespacesOp,
    MatchCondition,
    NotProvided,
    Op,
    PutOp,
    Result,
    SearchItem,
    SearchOp,
    validate_op_namespace,
)

from langgraph_chronomem.engine.base import LogTransaction
from langgraph_chronomem.engine.rows import scope_of
from langgraph_chronomem.engine.sql import BranchAt
from langgraph_chronomem.engine.types import Namespace, StoredItem, Write
from langgraph_chronomem.errors import (
    InvalidRequestError,
    InvalidValueError,
    NamespaceError,
    ScopeError,
)
from langgraph_chronomem.search.past import search_as_of
from langgraph_chronomem.search.semantic import search_by_meaning
from langgraph_chronomem.search.vectors import VectorIndex

__all__ = [
    "CheckedKeys",
    "ReadPlan",
    "check_count",
    "check_fields",
    "check_items",
    "check_key",
    "check_labels",
    "check_moment",
    "check_ops",
    "check_put",
    "check_scope",
    "check_text",
    "condition_path",
    "run_reads",
]


def check_scope(namespace: Sequence[str], depth: int) -> Namespace:
    """Validate a scope argument (the scope or a namespace inside it); return the scope.

    Raises:
        InvalidNamespaceError: If it is a string, or a label is empty, not a
            string, not valid Unicode or has a dot.
        ScopeError: If it has fewer labels than `depth`.
    """
    check_labels(namespace)
    namespace = tuple(namespace)
    validate_op_namespace(GetOp(namespace, ""))
    return scope_of(namespace, depth)


def check_labels(namespace: object) -> None:
    """The checks of a namespace that LangGraph's `validate_op_namespace` lacks:
    a namespace is a tuple (or list) of labels, never one string, and each
    label is text that can be stored.

        >>> check_labels("memories/alice")
        Traceback (most recent call last):
        ...
        langgraph_chronomem.errors.NamespaceError: a namespace is a tuple of labels, ("memories", "alice"), not the string 'memories/alice'

    Raises:
        NamespaceError: For a string, or a label that is not valid Unicode
            (a lone surrogate such as '\\ud800'); it is also LangGraph's
            `InvalidNamespaceError`.
    """  # noqa: E501
    if isinstance(namespace, str):
        labels = [label for label in re.split(r"[/.]", namespace) if label]
        shown = ", ".join(f'"{label}"' for label in labels)
        raise NamespaceError(
            "a namespace is a tuple of labels, "
            f"({shown}{',' if len(labels) == 1 else ''}), "
            f"not the string {namespace!r}"
        )
    for label in namespace:  # type: ignore[attr-defined]
        if isinstance(label, str):
            check_text("namespace label", label, NamespaceError)


def check_text(
    what: str, text: str, error: type[Exception] = InvalidRequestError
) -> None:
    """Refuse text that is not valid Unicode: a lone surrogate ('\\ud800'),
    which no database or UTF-8 file can hold, and which Python makes from
    undecodable bytes (`os.fsdecode`, `errors='surrogateescape'`).

        >>> check_text("author", "alice")
        >>> check_text("author", "al\\udce9")
        Traceback (most recent call last):
        ...
        langgraph_chronomem.errors.InvalidRequestError: author 'al\\udce9' is not valid Unicode (a lone surrogate at position 2): decode the bytes it came from as UTF-8 first; nothing was changed

    Raises:
        error: `InvalidRequestError` unless another type is given.
    """  # noqa: E501
    if text.isascii():  # the common case, without encoding
        return
    try:
        text.encode()
    except UnicodeEncodeError as exc:
        raise error(
            f"{what} {text!r} is not valid Unicode (a lone surrogate at position "
            f"{exc.start}): decode the bytes it came from as UTF-8 first; "
            "nothing was changed"
        ) from None


def check_count(name: str, number: object) -> None:
    """Validate a count argument such as `limit` or `offset`.

    Raises:
        InvalidRequestError: If it is not an int >= 0 (a bool is not a count).
    """
    if isinstance(number, bool) or not isinstance(number, int) or number < 0:
        raise InvalidRequestError(f"{name} must be an int >= 0, got {number!r}")


def check_moment(name: str, moment: object) -> None:
    """Validate a time bound such as `since`: a `datetime` or `None`.

    Raises:
        InvalidRequestError: For anything else, an ISO string included.
    """
    if moment is not None and not isinstance(moment, datetime):
        raise InvalidRequestError(
            f"{name} must be a datetime (naive means UTC), got {moment!r}; "
            "parse text first, e.g. datetime.fromisoformat('2025-03-01')"
        )


def check_fields(fields: object) -> tuple[str, ...]:
    """Validate the `fields` of a field-level revert: names of a record's fields.

    Raises:
        InvalidRequestError: If it is a string or holds anything but non-empty
            strings (`["diet"]`, not `"diet"`).
    """
    if isinstance(fields, str) or not isinstance(fields, (list, tuple)):
        raise InvalidRequestError(
            f"fields is a list of field names, like ['diet'], got {fields!r}"
        )
    if not all(isinstance(name, str) and name for name in fields):
        raise InvalidRequestError(f"field names are non-empty strings, got {fields!r}")
    return tuple(fields)


def check_key(key: object) -> None:
    """Validate an item key.

    Raises:
        InvalidValueError: If it is not a string (`5` is not the key `"5"`) or
            not valid Unicode.
    """
    if not isinstance(key, str):
        raise InvalidValueError(
            f"keys are strings, got {key!r}: pass str(key) if you mean the text"
        )
    check_text("key", key, InvalidValueError)


def check_items(items: object) -> list[tuple[Namespace, str]]:
    """Validate `(namespace, key)` pairs, as `revert` and `redact` take them.

        >>> check_items([(("memories", "alice"), "home")])
        [(('memories', 'alice'), 'home')]

    Raises:
        InvalidRequestError: If `items` is not a sequence of pairs.
        NamespaceError: For a namespace given as a string, or a bad label.
        InvalidValueError: For a key that is not a string.
    """
    if isinstance(items, (str, bytes)) or not all(
        isinstance(item, (tuple, list)) and len(item) == 2
        for item in items  # type: ignore[attr-defined]
    ):
        raise InvalidRequestError(f"items are (namespace, key) pairs, got {items!r}")
    for namespace, key in items:  # type: ignore[attr-defined]
        check_scope(namespace, 0)
        check_key(key)
    return [(tuple(namespace), key) for namespace, key in items]  # type: ignore[attr-defined]


class CheckedKeys(BaseStore):
    """`BaseStore`'s item methods without its `str(key)`: they turn a key of
    `None`, `5` or a tuple into text before the op is made, so `check_ops`
    could never refuse one. Here every key reaches the checks as given.

        >>> import tempfile
        >>> from langgraph_chronomem import ChronoStore
        >>> with ChronoStore.from_path(tempfile.mkdtemp()) as store:
        ...     store.get(("memories",), 5)
        Traceback (most recent call last):
        ...
        langgraph_chronomem.errors.InvalidValueError: keys are strings, got 5: pass str(key) if you mean the text
    """  # noqa: E501

    def get(
        self,
        namespace: tuple[str, ...],
        key: str,
        *,
        refresh_ttl: bool | None = None,
    ) -> Item | None:
        """`BaseStore.get`; a key that is not a string raises `InvalidValueError`."""
        check_key(key)
        return super().get(namespace, key, refresh_ttl=refresh_ttl)

    async def aget(
        self,
        namespace: tuple[str, ...],
        key: str,
        *,
        refresh_ttl: bool | None = None,
    ) -> Item | None:
        """`BaseStore.aget`; a key that is not a string raises `InvalidValueError`."""
        check_key(key)
        return await super().aget(namespace, key, refresh_ttl=refresh_ttl)

    def delete(self, namespace: tuple[str, ...], key: str) -> None:
        """`BaseStore.delete`; a key that is not a string raises
        `InvalidValueError`, and nothing is deleted."""
        check_key(key)
        super().delete(namespace, key)

    async def adelete(self, namespace: tuple[str, ...], key: str) -> None:
        """`BaseStore.adelete`; a key that is not a string raises
        `InvalidValueError`, and nothing is deleted."""
        check_key(key)
        await super().adelete(namespace, key)

    async def aput(
        self,
        namespace: tuple[str, ...],
        key: str,
        value: Mapping[str, Any],
        index: Literal[False] | list[str] | None = None,
        *,
        ttl: float | NotProvided | None = NOT_PROVIDED,
    ) -> None:
        """`BaseStore.aput`; a key that is not a string raises
        `InvalidValueError`, and nothing is written."""
        check_key(key)
        await super().aput(namespace, key, value, index, ttl=ttl)


def check_ops(ops: Iterable[Op], depth: int) -> tuple[list[Op], list[Write]]:
    """Validate every op of a batch; return the ops and the writes they make.

    Raises:
        InvalidNamespaceError: For LangGraph's namespace rules, a namespace
            given as one string, or a label that is not valid Unicode.
        ScopeError: For a get or put namespace shorter than `depth`.
        InvalidValueError: For a key that is not a string, a put value that is
            not a dict or a bad TTL.
        InvalidRequestError: For a `limit` or `offset` that is not an int >= 0,
            or an unknown `match_type`.
        TypeError: For an object that is not a store op.
    """
    ops = list(ops)
    writes = []
    for op in ops:
        if isinstance(op, PutOp):
            writes.append(
                check_put(
                    op.namespace, op.key, op.value, depth, index=op.index, ttl=op.ttl
                )
            )
            continue
        if isinstance(op, GetOp):
            _check_item(op.namespace, op.key, depth)  # its labels too
            continue
        if not isinstance(op, (SearchOp, ListNamespacesOp)):
            raise TypeError(f"not a store op: {op!r}")
        for namespace in (
            [op.namespace_prefix]
            if isinstance(op, SearchOp)
            else [condition_path(c) for c in op.match_conditions or ()]
        ):
            check_labels(namespace)
        validate_op_namespace(op)
        check_count("limit", op.limit)
        check_count("offset", op.offset)
        if isinstance(op, ListNamespacesOp):
            for condition in op.match_conditions or ():
                if condition.match_type not in ("prefix", "suffix"):
                    raise InvalidRequestError(
                        "match_type is 'prefix' or 'suffix', "
                        f"not {condition.match_type!r}"
                    )
    return ops, writes


def check_put(
    namespace: Namespace,
    key: str,
    value: Mapping[str, Any] | None,
    depth: int,
    *,
    index: Literal[False] | list[str] | None = None,
    ttl: float | None = None,
) -> Write:
    """Validate one put (a `PutOp`'s fields, as `check_ops` does) and return the
    write it makes.

    `ChronoStore.put` calls it directly, without making a `PutOp`: a put is the
    call agents make most.

        >>> write = check_put(("memories", "alice"), "home", {"city": "NYC"}, 2)
        >>> write.namespace, write.key, write.value
        (('memories', 'alice'), 'home', {'city': 'NYC'})
        >>> check_put(("memories",), "home", {"city": "NYC"}, 2)
        Traceback (most recent call last):
        ...
        langgraph_chronomem.errors.ScopeError: ...

    Raises:
        The errors of `check_ops` for a put.
    """
    _check_item(namespace, key, depth)
    if ttl is not None and (
        isinstance(ttl, bool)
        or not isinstance(ttl, (int, float))
        or not math.isfinite(ttl)
        or ttl <= 0
    ):
        raise InvalidValueError(f"ttl is minutes > 0 or None, got {ttl!r}")
    if index not in (None, False) and not (
        isinstance(index, list) and all(isinstance(f, str) for f in index)
    ):
        raise InvalidValueError(
            f"index is None, False or a list of field paths, got {index!r}"
        )
    return Write(tuple(namespace), key, value, ttl, index)


def _check_item(namespace: Namespace, key: str, depth: int) -> None:
    """The checks of an op that names one item: its key, a namespace, a scope."""
    check_key(key)
    try:
        _item_scope(namespace, depth)
    except TypeError:  # a label no dict can hold (a list): say what is wrong
        _item_scope.__wrapped__(namespace, depth)


@functools.lru_cache(maxsize=4096)
def _item_scope(namespace: Namespace, depth: int) -> Namespace:
    """The scope of an item's namespace, checked by LangGraph's label rules.

    Cached: every put and get asks, agents keep writing to the same few
    namespaces, and a cached answer is a dict lookup where the checks are
    several Python calls (each about 3 µs when the CPU's caches are cold).
    """
    if not namespace:
        raise InvalidNamespaceError("Namespace cannot be empty.")
    check_labels(namespace)
    validate_op_namespace(GetOp(tuple(namespace), ""))
    return scope_of(namespace, depth)


def condition_path(condition: MatchCondition) -> Sequence[str]:
    """A match condition's labels. One string that can be a label is that one
    label, as LangGraph's own tests write a suffix; any other string is left
    for `check_labels` to refuse:

        >>> condition_path(MatchCondition("suffix", "public"))
        ('public',)
        >>> condition_path(MatchCondition("prefix", "memories/alice"))
        'memories/alice'
    """
    path = condition.path
    if isinstance(path, str) and path and not re.search(r"[/.]", path):
        return (path,)
    return path


def _matches(condition: MatchCondition, namespace: Namespace) -> bool:
    """Label-by-label match; `*` matches any one label."""
    path = tuple(condition_path(condition))
    if len(namespace) < len(path):
        return False
    labels = (
        namespace[: len(path)]
        if condition.match_type == "prefix"
        else namespace[len(namespace) - len(path) :]
    )
    return all(p in ("*", label) for p, label in zip(path, labels, strict=True))


def _fixed_prefix(conditions: Sequence[MatchCondition]) -> Namespace:
    """The labels every match starts with: a prefix condition up to its first `*`."""
    for condition in conditions:
        if condition.match_type == "prefix":
            fixed = []
            for label in condition_path(condition):
                if label == "*":
                    break
                fixed.append(label)
            return tuple(fixed)
    return ()


@dataclass
class ReadPlan:
    """Where reads look: HEAD (`version=None`), one version of one scope, or
    a branch of it (`branch`, where the scope's version is not read).

    `queries` holds the embedded `query` of each semantic search op (by op
    position) and `vectors` the index to search them in; `embedded`, the
    vectors of past rows' texts the view embedded for this batch.
    """

    scope: Namespace | None = None
    version: int | None = None
    branch: BranchAt | None = None
    vectors: VectorIndex | None = None
    queries: dict[int, list[float]] = field(default_factory=dict)
    embedded: dict[str, list[float]] = field(default_factory=dict)
    refresh: list[tuple[Namespace, str]] = field(default_factory=list)

    def within(self, namespace: Namespace, *, prefix: bool) -> Namespace:
        """Check a namespace against the view's scope; return what to query.

        A search prefix shorter than the scope narrows to the scope itself.
        """
        if self.scope is None:
            return namespace
        shared = min(len(namespace), len(self.scope))
        if namespace[:shared] != self.scope[:shared] or (
            not prefix and len(namespace) < len(self.scope)
        ):
            raise ScopeError(
                f"{namespace!r} is outside the scope {self.scope!r} this view reads"
            )
        return namespace if len(namespace) >= len(self.scope) else self.scope


def _to_item(stored: StoredItem) -> Item:
    return Item(
        value=stored.value,
        key=stored.key,
        namespace=stored.namespace,
        created_at=stored.created_at,
        updated_at=stored.updated_at,
    )


def _to_search_item(stored: StoredItem, score: float | None = None) -> SearchItem:
    return SearchItem(
        stored.namespace,
        stored.key,
        stored.value,
        stored.created_at,
        stored.updated_at,
        score,
    )


def _search(
    tx: LogTransaction, op: SearchOp, index: int, plan: ReadPlan
) -> list[tuple[StoredItem, float | None]]:
    prefix = plan.within(tuple(op.namespace_prefix), prefix=True)
    if index in plan.queries and plan.vectors is not None:
        if plan.version is not None or plan.branch is not None:
            assert plan.scope is not None  # a view's plan names it
            return list(
                search_as_of(
                    tx,
                    plan.vectors.kept,
                    plan.vectors.item_texts,
                    plan.vectors.past,
                    plan.embedded,
                    scope=plan.scope,
                    version=plan.version,
                    branch=plan.branch,
                    prefix=prefix,
                    vector=plan.queries[index],
                    filter=op.filter,
                    limit=op.limit,
                    offset=op.offset,
                )
            )
        return list(
            search_by_meaning(
                tx,
                plan.vectors,
                prefix,
                plan.queries[index],
                filter=op.filter,
                limit=op.limit,
                offset=op.offset,
            )
        )
    found = tx.search(
        prefix,
        filter=op.filter,
        limit=op.limit,
        offset=op.offset,
        scope=plan.scope,
        version=plan.version,
        branch=plan.branch,
    )
    return [(item, None) for item in found]


def run_reads(tx: LogTransaction, ops: Sequence[Op], plan: ReadPlan) -> list[Result]:
    """Answer the read ops of a batch (puts get `None`), in the order given.

    Items returned by ops with `refresh_ttl` that have a TTL are collected in
    `plan.refresh` for the caller to refresh.
    """
    results: list[Result] = [None] * len(ops)
    gets: dict[Namespace, list[int]] = {}
    for index, op in enumerate(ops):
        if isinstance(op, GetOp):
            gets.setdefault(plan.within(op.namespace, prefix=False), []).append(index)
    for namespace, indexes in gets.items():
        keys = [ops[i].key for i in indexes]  # type: ignore[union-attr]
        found = tx.get(namespace, keys, version=plan.version, branch=plan.branch)
        for index in indexes:
            op = ops[index]
            stored = found.get(op.key)  # type: ignore[union-attr]
            results[index] = None if stored is None else _to_item(stored)
            if stored and stored.ttl_minutes is not None and op.refresh_ttl:  # type: ignore[union-attr]
                plan.refresh.append((namespace, stored.key))
    for index, op in enumerate(ops):
        if isinstance(op, SearchOp):
            found_items = _search(tx, op, index, plan)
            results[index] = [_to_search_item(s, score) for s, score in found_items]
            if op.refresh_ttl:
                plan.refresh += [
                    (s.namespace, s.key)
                    for s, _ in found_items
                    if s.ttl_minutes is not None
                ]
        elif isinstance(op, ListNamespacesOp):
            results[index] = _list_namespaces(tx, op, plan)
    return results


def _list_namespaces(
    tx: LogTransaction, op: ListNamespacesOp, plan: ReadPlan
) -> list[Namespace]:
    conditions = tuple(op.match_conditions or ())
    namespaces = [
        ns
        for ns in tx.namespaces(
            _fixed_prefix(conditions),
            scope=plan.scope,
            version=plan.version,
            branch=plan.branch,
        )
        if all(_matches(c, ns) for c in conditions)
    ]
    if op.max_depth is not None:
        namespaces = list({ns[: op.max_depth] for ns in namespaces})
    return sorted(namespaces)[op.offset : op.offset + op.limit]


def label_filters(**given: Any) -> dict[str, str]:
    """The filters given (not None), each checked to be a non-empty string.

    Raises:
        InvalidRequestError: For a filter that is not one.
    """
    for name, value in given.items():
        if value is not None and (not isinstance(value, str) or not value):
            raise InvalidRequestError(f"{name} is a non-empty string, got {value!r}")
    return {name: value for name, value in given.items() if value is not None}
