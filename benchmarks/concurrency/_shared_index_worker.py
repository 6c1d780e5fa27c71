"""A worker process of `benchmarks/concurrency/shared_index.py`, and the checks it
shares with the parent: one store of its own on the shared PostgreSQL log and Chroma
server.

`shared_index.run_round` spawns `work` and drives it through a pipe:

    worker                                   parent
    open the store, ("ready", tally)    ->
                                        <-   "go"
    `steps` steps, ("wrote", tally)     ->
                                        <-   every (item, text) put, by anyone
    `check_head`, ("done", tally)       ->

Worker `n` owns the scope `("memories", "user<n>")` and the keys `w<n>-...` of
the shared scope `("memories", "shared")`. Each step puts a new item in each,
and now and then updates or deletes an item it owns; right after each write it
searches by meaning for what it wrote (read-your-writes across processes).
Worker 0 can also `reindex` every K steps and `reset` its scope to an earlier
version now and then. Once every worker has written, each checks the final
HEAD with the store it kept open all along (a copy of the vectors read before
another process's reset must still find everything), as the parent then does
with a fresh store. Any failure ends the worker with a `("failed", tally)`
holding the traceback's tail.

Every text holds a random word of its own (`"w0 k3 5c0ffee1d"`), so the
hashed embedding of `testsupport.hashed` ranks an item first, at a score
of 1.0, for its own text, and every other item lower.
"""

from __future__ import annotations

import random
import time
import traceback
from collections.abc import Callable, Iterable, Mapping
from dataclasses import dataclass, field
from multiprocessing.connection import Connection
from typing import Any

from langgraph.store.base import SearchItem

from langgraph_chronomem import ChronoStore
from langgraph_chronomem.errors import ChronomemError
from testsupport.hashed import INDEX

__all__ = [
    "KINDS",
    "Item",
    "Plan",
    "Tally",
    "Violation",
    "check_head",
    "failure",
    "head_items",
    "open_store",
    "work",
]

Namespace = tuple[str, ...]
Item = tuple[Namespace, str]  # (namespace, key)

PREFIX: Namespace = ("memories",)
SHARED: Namespace = ("memories", "shared")
UPDATE_CHANCE = 0.4  # per step
DELETE_CHANCE = 0.25
RESET_CHANCE = 0.15  # worker 0, with resets
RESET_DEPTH = 6  # a reset goes back 1..RESET_DEPTH versions
PAUSE = 0.02  # most seconds between steps: varies how the workers interleave
SCORE_TOLERANCE = 1e-6  # an item's own text scores 1.0 but for float32 rounding
LIMIT = 3  # hits per search
PAGE = 500  # items per listing of HEAD
TAIL = 1500  # characters of a traceback kept

MISSED = "missed own write"
WORKER_CRASH = "worker crash"
WORKER_HANG = "worker hang"
LOST = "lost vector at the end"
ABSENT = "deleted item found"
BEHIND = "projection behind after waiting"
RAW = "raw error (not a ChronomemError)"
LOST_WRITE = "HEAD is not what the workers wrote"
KINDS = (MISSED, WORKER_CRASH, WORKER_HANG, LOST, ABSENT, BEHIND, RAW, LOST_WRITE)


@dataclass(frozen=True)
class Violation:
    """One thing that went wrong: its kind (one of `KINDS`), where, and what."""

    kind: str
    where: str
    detail: str


@dataclass(frozen=True)
class Plan:
    """What worker `number` does; `seed` makes its choices repeatable."""

    url: str
    chroma_url: str
    number: int
    steps: int
    seed: str
    reindex_every: int = 0
    resets: bool = False


@dataclass
class Tally:
    """What a worker (or the parent's check) did and found."""

    writes: int = 0
    searches: int = 0
    resets: int = 0
    reindexes: int = 0
    violations: list[Violation] = field(default_factory=list)
    live: dict[Item, str] = field(default_factory=dict)  # its items at HEAD
    written: list[tuple[Item, str]] = field(default_factory=list)  # every put

    def note(self, kind: str, where: str, detail: str) -> None:
        self.violations.append(Violation(kind, where, detail))


def open_store(url: str, chroma_url: str) -> ChronoStore:
    """The store every process of a round opens: scopes of two labels, the
    hashed embedding, its vectors on the Chroma server at `chroma_url`."""
    index: Any = INDEX
    return ChronoStore.from_conn_string(
        url, scope_depth=2, index=index, chroma_url=chroma_url
    )


def failure(exc: BaseException, where: str) -> Violation:
    """An exception as a violation: a `ChronomemError` is a crash, anything
    else an error the package let through raw (Chroma's, psycopg's, ...)."""
    kind = WORKER_CRASH if isinstance(exc, ChronomemError) else RAW
    return Violation(kind, where, "".join(traceback.format_exception(exc))[-TAIL:])


def head_items(store: ChronoStore, prefix: Namespace = PREFIX) -> dict[Item, str]:
    """Every item at HEAD under `prefix`, with its text, as the log has it."""
    head: dict[Item, str] = {}
    while True:
        page = store.search(prefix, limit=PAGE, offset=len(head))
        head.update({(tuple(i.namespace), i.key): i.value["text"] for i in page})
        if len(page) < PAGE:
            return head


def _shown(hits: Iterable[SearchItem]) -> list[tuple[str, str, Any, float | None]]:
    return [("/".join(h.namespace), h.key, h.value, h.score) for h in hits]


def search_checked(
    store: ChronoStore,
    tally: Tally,
    namespace: Namespace,
    text: str,
    truth: Mapping[Item, str],
    covers: Callable[[Item], bool],
    where: str,
) -> list[SearchItem]:
    """Search by meaning for `text` under `namespace`, and note every hit
    `covers` says `truth` knows about that `truth` does not hold (a deleted
    item, or an old value)."""
    hits = store.search(namespace, query=text, limit=LIMIT)
    tally.searches += 1
    for hit in hits:
        item = (tuple(hit.namespace), hit.key)
        if covers(item) and hit.value != {"text": truth.get(item)}:
            tally.note(
                ABSENT,
                where,
                f"searched {text!r}, found {_shown([hit])}; HEAD holds "
                f"{truth.get(item)!r}",
            )
    return hits


def check_first(
    store: ChronoStore,
    tally: Tally,
    item: Item,
    text: str,
    truth: Mapping[Item, str],
    covers: Callable[[Item], bool],
    kind: str,
    where: str,
) -> None:
    """`text` must find `item` first, holding `text`, at a score of 1.0;
    else note a violation of `kind`."""
    hits = search_checked(store, tally, item[0], text, truth, covers, where)
    top = hits[0] if hits else None
    if (
        top is None
        or (tuple(top.namespace), top.key) != item
        or top.value != {"text": text}
        or abs((top.score or 0.0) - 1.0) > SCORE_TOLERANCE
    ):
        tally.note(kind, where, f"searched {text!r} for {item}, found {_shown(hits)}")


def check_head(
    store: ChronoStore, tally: Tally, written: Iterable[tuple[Item, str]], where: str
) -> dict[Item, str]:
    """Every item at HEAD must be found first by its own text at 1.0, and no
    text `written` that HEAD no longer holds may find anything HEAD lacks.
    Returns HEAD."""
    head = head_items(store)
    for item, text in head.items():
        check_first(store, tally, item, text, head, _everything, LOST, where)
    for item, text in written:
        if head.get(item) != text:
            search_checked(store, tally, item[0], text, head, _everything, where)
    return head


def _everything(item: Item) -> bool:
    return True


class _Steps:
    """A worker's writes and the read-your-writes check after each."""

    def __init__(self, store: ChronoStore, plan: Plan, tally: Tally) -> None:
        self.store, self.plan, self.tally = store, plan, tally
        self.rng = random.Random(plan.seed)
        self.own: Namespace = ("memories", f"user{plan.number}")
        self.mark = f"w{plan.number}"
        self.where = ""

    def mine(self, item: Item) -> bool:
        return item[0] == self.own or item[1].startswith(f"{self.mark}-")

    def run(self, step: int) -> None:
        self.where = f"worker {self.plan.number}, step {step}"
        self.put((self.own, f"k{step}"))
        self.put((SHARED, f"{self.mark}-k{step}"))
        live = sorted(self.tally.live)
        if self.rng.random() < UPDATE_CHANCE:
            self.put(self.rng.choice(live))
        if self.rng.random() < DELETE_CHANCE:
            self.delete(self.rng.choice(live))
        if self.plan.resets and self.rng.random() < RESET_CHANCE:
            self.reset()
        every = self.plan.reindex_every
        if every and (step + 1) % every == 0 and step + 1 < self.plan.steps:
            self.store.reindex()
            self.tally.reindexes += 1
        time.sleep(self.rng.random() * PAUSE)

    def put(self, item: Item) -> None:
        old = self.tally.live.get(item)
        text = f"{self.mark} {item[1]} {self.rng.getrandbits(40):x}"
        self.store.put(item[0], item[1], {"text": text})
        self.tally.writes += 1
        self.tally.live[item] = text
        self.tally.written.append((item, text))
        self.check(item, text, f"{self.where}, put")
        if old is not None:
            self.search(item[0], old, f"{self.where}, old text of an update")

    def delete(self, item: Item) -> None:
        old = self.tally.live.pop(item)
        self.store.delete(item[0], item[1])
        self.tally.writes += 1
        self.search(item[0], old, f"{self.where}, delete")

    def reset(self) -> None:
        head = self.store.head(self.own)
        if head < 2:
            return
        to = max(1, head - self.rng.randint(1, RESET_DEPTH))
        self.store.reset(self.own, to=to)
        self.tally.resets += 1
        live = self.tally.live
        for item in [i for i in live if i[0] == self.own]:
            del live[item]
        live.update(head_items(self.store, self.own))  # what the log says now
        for item, text in live.items():
            if item[0] == self.own:
                self.check(item, text, f"{self.where}, after reset to v{to}")

    def check(self, item: Item, text: str, where: str) -> None:
        truth, covers = self.tally.live, self.mine
        check_first(self.store, self.tally, item, text, truth, covers, MISSED, where)

    def search(self, namespace: Namespace, text: str, where: str) -> None:
        search_checked(
            self.store, self.tally, namespace, text, self.tally.live, self.mine, where
        )


def work(plan: Plan, conn: Connection) -> None:
    """Run worker `plan.number`, driven by the parent at the other end of `conn`."""
    tally = Tally()
    try:
        with open_store(plan.url, plan.chroma_url) as store:
            conn.send(("ready", tally))
            conn.recv()  # "go"
            steps = _Steps(store, plan, tally)
            for step in range(plan.steps):
                steps.run(step)
            conn.send(("wrote", tally))
            where = f"worker {plan.number}'s store, after every worker wrote"
            check_head(store, tally, conn.recv(), where)
            conn.send(("done", tally))
    except Exception as exc:
        tally.violations.append(failure(exc, f"worker {plan.number}"))
        conn.send(("failed", tally))
