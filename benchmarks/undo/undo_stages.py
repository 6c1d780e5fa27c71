"""Timing shims for the undo search's stages, installed at run time by the benchmark.

`ChronoStore.resolve` runs the stages of `search/resolve.py` in two threads: the
caller's (intent, full-text catch-up, BM25, fusion, rerank, decision) and the
resolver's worker (query embedding, Chroma catch-up check and query), which runs
while BM25 does. To time each stage without changing the package, `install`
replaces the functions and methods the resolver calls with wrappers that time
them and puts the originals back on `uninstall`: the very code `resolve` runs, in
its own order and threads, with a perf counter around each piece.

Every span records *exclusive* time (its own, minus the spans nested in it), so
the caller's stages add up to the call's wall time; the worker's stages run
concurrently with BM25, and only `dense wait` (the caller blocked on the worker)
is on the caller's critical path. Shims cost a few µs per resolve; the benchmark
also times `resolve` with none installed.
"""

from __future__ import annotations

import concurrent.futures
import threading
import time
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from typing import Any

from langgraph_chronomem import ChronoStore
from langgraph_chronomem.engine.base import LogTransaction
from langgraph_chronomem.engine.travel import TravelOps
from langgraph_chronomem.search import resolve as resolve_module
from langgraph_chronomem.search import topicless
from langgraph_chronomem.search.catchup import CatchUp
from langgraph_chronomem.search.resolve import Resolver
from langgraph_chronomem.search.vectors import VectorIndex

__all__ = ["CALLER", "STAGES", "WORKER", "StageClock", "install"]

CALLER = {  # stage -> what it is; the caller's thread, in the order resolve runs them
    "intent": "intent parse (`search.intent.parse`)",
    "fts catch-up": "word index catch-up check: write txn, `index_changes()` + HEAD",
    "bm25": "BM25 over item changes (the term index, each side and the time window)",
    "dense wait": "waiting for the dense worker after BM25 returned",
    "rrf + load commits": "contrast vectors (kept in memory), RRF (`Resolver._fuse`)",
    "rerank": "FlashRank rerank of the top K (`Resolver._rerank`)",
    "decide: effects": "what acting on each candidate changes: rollback previews "
    "(`TravelOps.previews`, one read for all), revert effects (`search.effect`)",
    "decide: rest": "loading candidate commits, the rule to act",
    "shortcut": "`topicless.latest` / `redo`: requests with no topic, or redo",
    "txn + glue": "read transactions' BEGIN/COMMIT, lock waits, glue code",
}
WORKER = {
    "dense: query embedding": "embedding the topic (all-MiniLM-L6-v2, ONNX)",
    "dense: catch-up check": "Chroma change catch-up check (write txn + marks)",
    "dense: chroma query": "exact search over the scope's vectors (kept from Chroma)",
    "dense: glue": "the rest of `Resolver._dense`",
}
STAGES = {**CALLER, **WORKER}


class StageClock:
    """Exclusive time per stage for the request being timed, across threads."""

    def __init__(self) -> None:
        self._local = threading.local()
        self._lock = threading.Lock()
        self.current: dict[str, int] | None = None

    def start(self) -> None:
        """Start collecting for one request."""
        with self._lock:
            self.current = {}

    def stop(self) -> dict[str, int]:
        """The nanoseconds spent per stage since `start`."""
        with self._lock:
            taken, self.current = self.current or {}, None
        return taken

    @contextmanager
    def span(self, name: str) -> Iterator[None]:
        stack = self._local.__dict__.setdefault("stack", [])
        frame = [0]  # time of nested spans
        stack.append(frame)
        started = time.perf_counter_ns()
        try:
            yield
        finally:
            elapsed = time.perf_counter_ns() - started
            stack.pop()
            if stack:
                stack[-1][0] += elapsed
            with self._lock:
                if self.current is not None:
                    own = elapsed - frame[0]
                    self.current[name] = self.current.get(name, 0) + own

    def wrap(self, name: str, function: Callable[..., Any]) -> Callable[..., Any]:
        def timed(*args: Any, **kwargs: Any) -> Any:
            with self.span(name):
                return function(*args, **kwargs)

        return timed


def _in_worker() -> bool:
    return threading.current_thread().name.startswith("chronomem-dense")


class _TimedFuture:
    def __init__(
        self, future: concurrent.futures.Future[Any], clock: StageClock
    ) -> None:
        self._future, self._clock = future, clock

    def result(self, timeout: float | None = None) -> Any:
        with self._clock.span("dense wait"):
            return self._future.result(timeout)


class _TimedPool:
    """The resolver's one-thread pool, with `dense wait` timed on `result()`."""

    def __init__(
        self, pool: concurrent.futures.ThreadPoolExecutor, clock: StageClock
    ) -> None:
        self.pool, self._clock = pool, clock

    def submit(self, fn: Callable[..., Any], *args: Any) -> _TimedFuture:
        return _TimedFuture(self.pool.submit(fn, *args), self._clock)

    def shutdown(self, wait: bool = True) -> None:
        self.pool.shutdown(wait=wait)


def install(stores: list[ChronoStore], clock: StageClock) -> Callable[[], None]:
    """Put timing shims on the resolver's stages (and each store's engine, pool and
    embedder); returns the call that takes them all off again.

    The stores' resolvers and vector indexes must already exist (warm them up).
    """
    undo: list[Callable[[], None]] = []

    def patch(owner: Any, attribute: str, make: Callable[[Any], Any]) -> None:
        original = (
            owner.__dict__[attribute]
            if isinstance(owner, type)
            else getattr(owner, attribute)
        )
        had_own = not isinstance(owner, type) and attribute in vars(owner)
        setattr(owner, attribute, make(original))

        def restore() -> None:
            if isinstance(owner, type) or had_own:
                setattr(owner, attribute, original)
            else:
                delattr(owner, attribute)

        undo.append(restore)

    span = clock.wrap
    patch(Resolver, "resolve", lambda f: span("txn + glue", f))
    patch(resolve_module, "parse", lambda f: span("intent", f))
    patch(resolve_module, "bm25", lambda f: span("bm25", f))
    patch(Resolver, "_fuse", lambda f: span("rrf + load commits", f))
    patch(Resolver, "_rerank", lambda f: span("rerank", f))
    patch(Resolver, "_decide", lambda f: span("decide: rest", f))
    patch(resolve_module, "latest", lambda f: span("shortcut", f))
    for module in (resolve_module, topicless):  # a redo, also one after an undo
        patch(module, "redo", lambda f: span("shortcut", f))
    patch(Resolver, "_dense", lambda f: span("dense: glue", f))
    patch(CatchUp, "catch_up", lambda f: span("dense: catch-up check", f))
    patch(VectorIndex, "query_changes", lambda f: span("dense: chroma query", f))

    for module in (resolve_module, topicless):  # both call `search.effect`
        patch(module, "effect", lambda f: span("decide: effects", f))
    patch(TravelOps, "previews", lambda f: span("decide: effects", f))

    for store in stores:
        search = store._search  # the benchmark reaches into the store on purpose
        resolver, vectors = search.resolver(), search.vectors()
        patch(resolver, "_pool", lambda pool: _TimedPool(pool, clock))
        embeddings = vectors.embeddings
        patch(embeddings, "embed_query", lambda f: span("dense: query embedding", f))
        patch(store._engine, "transaction", lambda f: _timed_transaction(f, clock))

    def uninstall() -> None:
        while undo:
            undo.pop()()

    return uninstall


def _timed_transaction(
    transaction: Callable[..., Any], clock: StageClock
) -> Callable[..., Any]:
    """The caller's write transaction in `resolve` is the full-text catch-up; its read
    transactions' own cost (BEGIN, COMMIT, waiting for the lock) is `txn + glue`."""

    @contextmanager
    def timed(*, write: bool) -> Iterator[LogTransaction]:
        if _in_worker():  # inside `dense: catch-up check` already
            with transaction(write=write) as tx:
                yield tx
            return
        span = clock.span("fts catch-up" if write else "txn + glue")
        with span, transaction(write=write) as tx:
            yield tx

    return timed
