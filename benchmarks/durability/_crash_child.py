"""The workload of `benchmarks/durability/crash_loop.py`, and the child process it
kills.

A child opens the store, says `go` through its pipe, does one phase of work and
says `done` (if it lives that long). The parent kills it with SIGKILL at a random
moment after `go`, then reopens the store and checks it. The phases:

- `put`: indexed single puts;
- `batch`: indexed batches over one or two scopes, with deletes;
- `rollback`: rollbacks, reverts and deletes (the item vectors follow each);
- `reindex`: `store.reindex()`, every projection made again from the log;
- `catchup`: a backlog is written through a store opened without its index
  (its vectors are not made), then the indexed store opens (catching up the
  item vectors) and answers its first undo request (catching up the change
  vectors).

Every write carries a reason that says what it must have committed
(`b12-3 alice=3 bob=2`: batch 3 of run 12 changes 3 items in alice's scope and
2 in bob's), and once it returns its tag is appended to the `acked` file, so the
parent can tell a partial commit or a lost write from the log alone.

While the child is inside a Chroma write (a collection's add, upsert, update or
delete, or a collection made or dropped), byte 0 of the `marker` file is
non-zero; byte 1 says which step of the phase runs (`STEPS`: `reopen` is the catch-up's
indexed open, `close` waits for the vectors still following the log). The parent reads
both after the kill to tell where it landed.

This module imports no pytest, and nothing heavy until a child runs.
"""

from __future__ import annotations

import functools
import hashlib
import logging
import math
import mmap
import os
import random
import re
import time
from collections.abc import Callable, Iterator, Sequence
from contextlib import contextmanager
from multiprocessing.connection import Connection
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from langgraph_chronomem import ChronoStore

__all__ = [
    "DIMS",
    "INDEX",
    "PHASES",
    "SCOPES",
    "STEPS",
    "embed",
    "expected_counts",
    "open_store",
    "run",
    "write_puts",
]

SCOPES: tuple[tuple[str, str], ...] = (
    ("crash", "alice"),
    ("crash", "bob"),
    ("crash", "carol"),
)
KEYS = 40  # per namespace: updates outnumber creates, HEAD stays bounded
DIMS = 256
PHASES = ("put", "batch", "rollback", "reindex", "catchup")
STEPS = {1: "open", 2: "work", 3: "reopen", 4: "resolve", 5: "close"}
_STEP = {name: code for code, name in STEPS.items()}

PUTS = 40  # per `put` phase
BATCHES = 12  # per `batch` phase
REWINDS = 8  # rollbacks, reverts and deletes per `rollback` phase
BACKLOG = 40  # puts written without the index before a `catchup` phase

_TOKEN = re.compile(r"\w+")
_SYLLABLES = [c + v for c in "bdfgklmnprstvz" for v in "aeiou"]


def embed(texts: list[str]) -> list[list[float]]:
    """A deterministic bag-of-words embedding (signed feature hashing).

    Cheap and exact: the same text always gives the same vector, texts sharing
    no words are nearly orthogonal, and every text this workload writes holds a
    word no other text has, so searching an item's own text must find it first
    with a score of 1.0.

        >>> a, b = embed(["quiet harbor", "quiet harbor"])
        >>> a == b and len(a) == DIMS
        True
    """
    vectors = []
    for text in texts:
        vector = [0.0] * DIMS
        for word in _TOKEN.findall(text.lower()):
            digest = hashlib.blake2b(word.encode(), digest_size=8).digest()
            code = int.from_bytes(digest, "little")
            vector[code % DIMS] += 1.0 if code >> 63 else -1.0
        norm = math.sqrt(sum(x * x for x in vector)) or 1.0
        vectors.append([x / norm for x in vector])
    return vectors


INDEX: dict[str, Any] = {"dims": DIMS, "embed": embed, "fields": ["text"]}


def open_store(path: str, *, indexed: bool = True) -> ChronoStore:
    """The crash loop's store at `path`: scopes of two labels, items indexed
    by their `text` (or no index given, for a backlog)."""
    from langgraph_chronomem import ChronoStore

    return ChronoStore.from_path(
        path,
        scope_depth=2,
        index=INDEX if indexed else None,  # type: ignore[arg-type]
    )


def _text(rng: random.Random, scope: Sequence[str], tag: str) -> str:
    words = [
        "".join(rng.choice(_SYLLABLES) for _ in range(rng.randint(2, 3)))
        for _ in range(5)
    ]
    return f"{scope[1]} remembers {' '.join(words)} ({tag})"


def _namespace(rng: random.Random, scope: tuple[str, ...]) -> tuple[str, ...]:
    return (*scope, "notes") if rng.random() < 0.3 else scope


def _reason(tag: str, counts: dict[tuple[str, ...], int]) -> str:
    return " ".join([tag, *(f"{scope[1]}={n}" for scope, n in counts.items())])


def expected_counts(reason: str) -> dict[str, int]:
    """What a reason says its batch changed, by scope label.

    >>> expected_counts("b12-3 alice=3 bob=2")
    {'alice': 3, 'bob': 2}
    """
    counts = {}
    for part in reason.split()[1:]:
        label, _, count = part.partition("=")
        counts[label] = int(count)
    return counts


class _Marker:
    """Two bytes shared with the parent through a file: Chroma-write depth, step."""

    def __init__(self, path: str) -> None:
        fd = os.open(path, os.O_RDWR)
        self._map = mmap.mmap(fd, 2)
        os.close(fd)

    def step(self, name: str) -> None:
        self._map[1] = _STEP[name]

    @contextmanager
    def chroma_write(self) -> Iterator[None]:
        self._map[0] = min(self._map[0] + 1, 255)
        try:
            yield
        finally:
            self._map[0] -= 1


def _instrument(marker: _Marker) -> None:
    """Flag every Chroma write on `marker` (the calls themselves are unchanged)."""
    from chromadb.api.client import Client
    from chromadb.api.models.Collection import Collection

    def flagged(method: Callable[..., Any]) -> Callable[..., Any]:
        @functools.wraps(method)
        def call(*args: Any, **kwargs: Any) -> Any:
            with marker.chroma_write():
                return method(*args, **kwargs)

        return call

    for owner, names in (
        (Collection, ("add", "upsert", "update", "delete")),
        (
            Client,
            ("create_collection", "get_or_create_collection", "delete_collection"),
        ),
    ):
        for name in names:
            setattr(owner, name, flagged(getattr(owner, name)))


class _Acks:
    """Tags of the writes that returned, one a line (the parent reads them)."""

    def __init__(self, path: str) -> None:
        self._file = open(path, "a", buffering=1)  # noqa: SIM115 (lives until killed)

    def ack(self, tag: str) -> None:
        self._file.write(tag + "\n")


def write_puts(
    store: ChronoStore,
    rng: random.Random,
    prefix: str,
    count: int,
    ack: Callable[[str], None] = lambda tag: None,
) -> str:
    """`count` single puts of fresh texts over the scopes, tagged `<prefix>-<j>`;
    the last text written."""
    from langgraph_chronomem import commit_context

    text = ""
    for j in range(count):
        scope = rng.choice(SCOPES)
        tag = f"{prefix}-{j}"
        text = _text(rng, scope, tag)
        with commit_context(reason=_reason(tag, {scope: 1})):
            store.put(_namespace(rng, scope), f"k{rng.randrange(KEYS)}", {"text": text})
        ack(tag)
    return text


def _write_batches(
    store: ChronoStore, rng: random.Random, run_id: int, ack: Callable[[str], None]
) -> None:
    from langgraph.store.base import PutOp

    from langgraph_chronomem import commit_context

    for j in range(BATCHES):
        tag = f"b{run_id}-{j}"
        ops: list[PutOp] = []
        counts: dict[tuple[str, ...], int] = {}
        for scope in rng.sample(SCOPES, rng.randint(1, 2)):
            keys = rng.sample(range(KEYS), 8)
            puts, deletes = keys[: rng.randint(2, 6)], keys[6:]
            namespace = _namespace(rng, scope)
            ops += [
                PutOp(namespace, f"k{k}", {"text": _text(rng, scope, f"{tag}-{k}")})
                for k in puts
            ]
            existing = [k for k in deletes if store.get(namespace, f"k{k}") is not None]
            ops += [PutOp(namespace, f"k{k}", None) for k in existing]
            counts[scope] = len(puts) + len(existing)
        with commit_context(reason=_reason(tag, counts)):
            store.batch(ops)
        ack(tag)


def _rewind(
    store: ChronoStore, rng: random.Random, run_id: int, ack: Callable[[str], None]
) -> None:
    """Rollbacks, reverts and deletes; a rewind the store refuses (a revert
    that conflicts, nothing to delete) commits nothing and is acked as such."""
    from langgraph_chronomem import RevertConflict, commit_context
    from langgraph_chronomem.errors import ChronomemError

    for j in range(REWINDS):
        scope = rng.choice(SCOPES)
        tag = f"r{run_id}-{j}"
        head = store.head(scope)
        kind = rng.choice(("rollback", "rollback", "revert", "delete"))
        try:
            if kind == "rollback" and head >= 2:
                store.rollback(
                    scope, to=rng.randint(max(1, head - 8), head - 1), reason=tag
                )
            elif kind == "revert" and head >= 1:
                made = store.revert(
                    scope, rng.randint(max(1, head - 8), head), reason=tag
                )
                if isinstance(made, RevertConflict):
                    tag = f"{tag} none"
            else:
                namespace = _namespace(rng, scope)
                key = f"k{rng.randrange(KEYS)}"
                if store.get(namespace, key) is None:
                    tag = f"{tag} none"
                else:
                    with commit_context(reason=_reason(tag, {scope: 1})):
                        store.delete(namespace, key)
        except ChronomemError:
            tag = f"{tag} none"
        ack(tag)


def run(
    path: str,
    phase: str,
    run_id: int,
    marker_path: str,
    acked_path: str,
    conn: Connection,
) -> None:
    """One child: do `phase` on the store at `path` until done or killed.

    Sends `("go", 0.0)` when the work to be killed starts and `("done",
    seconds since go)` when it ends.
    """
    # said once by the parent; every catch-up child would say it again
    logging.getLogger("langgraph_chronomem.models").addFilter(
        lambda record: "with no cross-encoder rerank" not in record.getMessage()
    )
    marker = _Marker(marker_path)
    _instrument(marker)
    acks = _Acks(acked_path)
    rng = random.Random(run_id)
    if phase == "catchup":
        marker.step("open")
        backlog = open_store(path, indexed=False)
        request = "forget that " + write_puts(
            backlog, rng, f"c{run_id}", BACKLOG, acks.ack
        )
        backlog.close()
        marker.step("reopen")
        conn.send(("go", 0.0))
        start = time.perf_counter()
        store = open_store(path)  # catches the item vectors up
        marker.step("resolve")
        store.resolve(rng.choice(SCOPES), request)  # and the change vectors
    else:
        marker.step("open")
        store = open_store(path)
        marker.step("work")
        conn.send(("go", 0.0))
        start = time.perf_counter()
        if phase == "put":
            write_puts(store, rng, f"p{run_id}", PUTS, acks.ack)
        elif phase == "batch":
            _write_batches(store, rng, run_id, acks.ack)
        elif phase == "rollback":
            _rewind(store, rng, run_id, acks.ack)
        elif phase == "reindex":
            store.reindex()
        else:
            raise ValueError(f"unknown phase {phase!r}; one of {PHASES}")
    marker.step("close")
    store.close()  # waits for the vectors still following the log
    conn.send(("done", time.perf_counter() - start))
