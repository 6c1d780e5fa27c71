"""`ChronoStore`: a LangGraph `BaseStore` that commits a version on every write.

Swap it in where you use `InMemoryStore` or `SqliteStore`; reads always see HEAD,
and the history is there when you need it:

    >>> import tempfile
    >>> store = ChronoStore.from_path(tempfile.mkdtemp(), scope_depth=2)
    >>> alice = ("memories", "alice")
    >>> store.put(alice, "city", {"city": "Boston"})
    >>> store.put(alice, "city", {"city": "Paris"})
    >>> [c.summary for c in store.log(alice)]
    ['updated memories/alice/city: Boston -> Paris', 'created memories/alice/city: Boston']
    >>> store.rollback(alice, to=1).summary
    'rolled back to v1: updated memories/alice/city: Paris -> Boston'
    >>> store.get(alice, "city").value
    {'city': 'Boston'}
    >>> store.close()
"""

from __future__ import annotations

import asyncio
import concurrent.futures
import logging
import threading
from collections.abc import Iterable, Sequence
from datetime import datetime
from pathlib import Path
from typing import Any, TypeVar

from langgraph.store.base import BaseStore, IndexConfig, Op, Result, TTLConfig

from langgraph_chronomem.context import commit_context, current_meta
from langgraph_chronomem.engine.sqlite import SqliteEngine
from langgraph_chronomem.engine.types import (
    Change,
    Commit,
    CommitMeta,
    ItemVersion,
    RevertConflict,
)
from langgraph_chronomem.errors import ConfigError
from langgraph_chronomem.ops import ReadPlan, check_ops, check_scope, run_reads
from langgraph_chronomem.view import StoreView

__all__ = ["ChronoStore"]

logger = logging.getLogger(__name__)

DATABASE_FILE = "chronomem.sqlite3"
T = TypeVar("T")


class ChronoStore(BaseStore):
    """A versioned, drop-in LangGraph store on SQLite.

    Every `batch()` (and so every `put`/`delete`) commits one new version per
    scope it touches; reads see HEAD. A scope is the first `scope_depth` labels of
    a namespace: with `scope_depth=2`, `("memories", "alice")` is one timeline and
    `("memories", "bob")` another, never seeing each other's history.

    Open one with `ChronoStore.from_path`. It is thread-safe, and several
    processes may open the same path.
    """

    supports_ttl = True

    def __init__(self, engine: SqliteEngine, *, ttl: TTLConfig | None = None) -> None:
        """Wrap an open log. Most code wants `ChronoStore.from_path` instead.

        Args:
            engine: The versioned log to store into.
            ttl: LangGraph's TTL settings (`default_ttl` minutes,
                `refresh_on_read`, `sweep_interval_minutes`, `omit_expired`).
        """
        self._engine = engine
        self.ttl_config = ttl
        self._sweeper: threading.Thread | None = None
        self._stop_sweeping = threading.Event()

    @classmethod
    def from_path(
        cls,
        path: str | Path,
        *,
        scope_depth: int | None = None,
        index: IndexConfig | None = None,
        ttl: TTLConfig | None = None,
        synchronous: str = "FULL",
    ) -> ChronoStore:
        """Open (or create) a store in the directory `path`.

            >>> import tempfile
            >>> with ChronoStore.from_path(tempfile.mkdtemp(), scope_depth=1) as store:
            ...     store.put(("alice",), "pet", {"kind": "cat"})
            ...     store.head(("alice",))
            1

        Args:
            path: A directory; it is created if missing and holds the SQLite
                database (`chronomem.sqlite3`, WAL mode).
            scope_depth: How many leading namespace labels make one timeline.
                0 (the default for a new store) makes the whole store one
                timeline. An existing store keeps the depth it was created with.
            index: Semantic search settings. Not supported yet: passing one raises
                rather than being ignored.
            ttl: LangGraph's `TTLConfig`.
            synchronous: SQLite durability, `FULL` (default: a returned write
                survives power loss) or `NORMAL` (survives a crash of the process).

        Raises:
            ConfigError: If `scope_depth` contradicts the stored one, or `index`
                is given.
        """
        if index is not None:
            raise ConfigError(
                "semantic search (index=...) is not available in this version of "
                "ChronoStore; open the store without `index` and use filters"
            )
        directory = Path(path)
        directory.mkdir(parents=True, exist_ok=True)
        engine = SqliteEngine(
            directory / DATABASE_FILE,
            scope_depth=scope_depth,
            omit_expired=bool(ttl and ttl.get("omit_expired")),
            synchronous=synchronous,
        )
        return cls(engine, ttl=ttl)

    @property
    def scope_depth(self) -> int:
        """Leading namespace labels that make one timeline."""
        return self._engine.scope_depth

    # -- the LangGraph contract ----------------------------------------------

    def batch(self, ops: Iterable[Op]) -> list[Result]:
        """Run a batch of ops in one transaction: reads first, then one commit per scope.

        Reads see the state before the batch's writes, as in LangGraph's own stores.

        Raises:
            InvalidNamespaceError: For an invalid namespace (nothing is written).
            ScopeError: For a namespace shorter than `scope_depth`.
            InvalidValueError: For a value that is not a JSON object.
            InvalidFilterError: For a search filter that cannot be run.
        """
        ops, writes = check_ops(ops, self.scope_depth)
        meta = current_meta() if writes else None
        plan = ReadPlan()
        with self._engine.transaction(write=bool(writes)) as tx:
            results = run_reads(tx, ops, plan)
            if writes:
                assert meta is not None
                tx.commit(writes, meta)
                self._refresh(tx, plan)
        if plan.refresh and not writes:
            with self._engine.transaction(write=True) as tx:
                self._refresh(tx, plan)
        return results

    async def abatch(self, ops: Iterable[Op]) -> list[Result]:
        """Async `batch`: the same transaction, run in a worker thread."""
        return await asyncio.to_thread(self.batch, list(ops))

    @staticmethod
    def _refresh(tx: Any, plan: ReadPlan) -> None:
        by_namespace: dict[tuple[str, ...], list[str]] = {}
        for namespace, key in plan.refresh:
            by_namespace.setdefault(namespace, []).append(key)
        for namespace, keys in by_namespace.items():
            tx.refresh_ttl(namespace, keys)

    # -- versions --------------------------------------------------------------

    commit_context = staticmethod(commit_context)

    def head(self, scope: Sequence[str]) -> int:
        """The scope's HEAD version (0 before its first commit)."""
        sc = check_scope(scope, self.scope_depth)
        with self._engine.transaction(write=False) as tx:
            return tx.head(sc)

    def log(
        self,
        scope: Sequence[str],
        *,
        limit: int | None = None,
        since: datetime | None = None,
        until: datetime | None = None,
        author: str | None = None,
    ) -> list[Commit]:
        """The scope's commits, newest first.

        Args:
            scope: The scope, or any namespace inside it.
            limit: At most this many commits.
            since: Only commits made at or after this time (naive means UTC).
            until: Only commits made at or before this time.
            author: Only commits by this author.
        """
        if limit is not None and (not isinstance(limit, int) or limit < 0):
            raise ValueError(f"limit must be an int >= 0, got {limit!r}")
        sc = check_scope(scope, self.scope_depth)
        with self._engine.transaction(write=False) as tx:
            return tx.log(sc, limit=limit, since=since, until=until, author=author)

    def show(self, scope: Sequence[str], version: int) -> Commit:
        """One commit of the scope.

        Raises:
            VersionNotFound: If the scope has no such version.
        """
        sc = check_scope(scope, self.scope_depth)
        with self._engine.transaction(write=False) as tx:
            return tx.show(sc, version)

    def diff(self, scope: Sequence[str], v1: int, v2: int) -> list[Change]:
        """What changed between two versions (0 is the empty state before v1).

            `old` is the value at `v1`, `new` the value at `v2`.

        Raises:
            VersionNotFound: If either version does not exist.
        """
        sc = check_scope(scope, self.scope_depth)
        with self._engine.transaction(write=False) as tx:
            return tx.diff(sc, v1, v2)

    def history(self, namespace: Sequence[str], key: str) -> list[ItemVersion]:
        """Every version of one item, newest first, including its deletions."""
        namespace = tuple(namespace)
        check_scope(namespace, self.scope_depth)
        with self._engine.transaction(write=False) as tx:
            return tx.history(namespace, key)

    def as_of(self, scope: Sequence[str], version: int) -> StoreView:
        """A read-only store showing the scope as it was at `version`.

        Raises:
            VersionNotFound: If the scope has no such version.
        """
        sc = check_scope(scope, self.scope_depth)
        with self._engine.transaction(write=False) as tx:
            tx.check_version(sc, version, allow_zero=True)
        return StoreView(self._engine, sc, version)

    def rollback(
        self,
        scope: Sequence[str],
        to: int,
        *,
        reason: str | None = None,
        author: str | None = None,
    ) -> Commit:
        """Restore the whole scope to its state at version `to`, as a new commit.

        Nothing is lost: the versions after `to` stay in the history, and rolling
        back to the version before this commit redoes them.

        Raises:
            VersionNotFound: If `to` is not a version of the scope (0 is allowed).
            VersionError: If `to` is already HEAD.
        """
        sc = check_scope(scope, self.scope_depth)
        meta = self._meta(author, reason)
        with self._engine.transaction(write=True) as tx:
            return tx.rollback(sc, to, meta)

    def revert(
        self,
        scope: Sequence[str],
        version: int,
        *,
        reason: str | None = None,
        author: str | None = None,
    ) -> Commit | RevertConflict:
        """Undo one commit's changes as a new commit, keeping everything after it.

        Returns:
            The new commit, or a `RevertConflict` (and no change) when a later
            commit changed one of the same items.

        Raises:
            VersionNotFound: If the scope has no such version.
            VersionError: If that commit changed nothing.
        """
        sc = check_scope(scope, self.scope_depth)
        meta = self._meta(author, reason)
        with self._engine.transaction(write=True) as tx:
            return tx.revert(sc, version, meta)

    def reset(self, scope: Sequence[str], to: int) -> int:
        """Destroy every version after `to`: for purging poisoned or private data.

        Unlike `rollback` this cannot be undone. Returns how many versions were
        deleted.
        """
        sc = check_scope(scope, self.scope_depth)
        with self._engine.transaction(write=True) as tx:
            removed = tx.reset(sc, to)
        logger.warning(
            "reset %s to v%d: deleted %d versions", "/".join(sc), to, removed
        )
        return removed

    @staticmethod
    def _meta(author: str | None, reason: str | None) -> CommitMeta:
        with commit_context(author=author, reason=reason):
            return current_meta()

    # -- async twins -----------------------------------------------------------

    async def ahead(self, scope: Sequence[str]) -> int:
        """Async `head`."""
        return await asyncio.to_thread(self.head, scope)

    async def alog(self, scope: Sequence[str], **filters: Any) -> list[Commit]:
        """Async `log`; takes the same keyword filters."""
        return await asyncio.to_thread(lambda: self.log(scope, **filters))

    async def ashow(self, scope: Sequence[str], version: int) -> Commit:
        """Async `show`."""
        return await asyncio.to_thread(self.show, scope, version)

    async def adiff(self, scope: Sequence[str], v1: int, v2: int) -> list[Change]:
        """Async `diff`."""
        return await asyncio.to_thread(self.diff, scope, v1, v2)

    async def ahistory(self, namespace: Sequence[str], key: str) -> list[ItemVersion]:
        """Async `history`."""
        return await asyncio.to_thread(self.history, namespace, key)

    async def aas_of(self, scope: Sequence[str], version: int) -> StoreView:
        """Async `as_of`."""
        return await asyncio.to_thread(self.as_of, scope, version)

    async def arollback(
        self,
        scope: Sequence[str],
        to: int,
        *,
        reason: str | None = None,
        author: str | None = None,
    ) -> Commit:
        """Async `rollback`."""
        return await asyncio.to_thread(
            lambda: self.rollback(scope, to, reason=reason, author=author)
        )

    async def arevert(
        self,
        scope: Sequence[str],
        version: int,
        *,
        reason: str | None = None,
        author: str | None = None,
    ) -> Commit | RevertConflict:
        """Async `revert`."""
        return await asyncio.to_thread(
            lambda: self.revert(scope, version, reason=reason, author=author)
        )

    async def areset(self, scope: Sequence[str], to: int) -> int:
        """Async `reset`."""
        return await asyncio.to_thread(self.reset, scope, to)

    # -- TTL -------------------------------------------------------------------

    def sweep_ttl(self) -> int:
        """Delete every item whose TTL has passed, one `expire` commit per scope.

        Returns the number of items expired.
        """
        with self._engine.transaction(write=True) as tx:
            commits = tx.expire()
        return sum(len(c.changes) for c in commits)

    async def asweep_ttl(self) -> int:
        """Async `sweep_ttl`."""
        return await asyncio.to_thread(self.sweep_ttl)

    def start_ttl_sweeper(
        self, sweep_interval_minutes: float | None = None
    ) -> concurrent.futures.Future[None]:
        """Sweep expired items in a background thread every few minutes.

        The interval is the argument, else `ttl["sweep_interval_minutes"]`, else 5.
        Cancel the returned future (or call `stop_ttl_sweeper`) to stop.
        """
        future: concurrent.futures.Future[None] = concurrent.futures.Future()
        future.add_done_callback(lambda f: f.cancelled() and self._stop_sweeping.set())
        if self._sweeper is not None and self._sweeper.is_alive():
            return future
        interval = float(
            sweep_interval_minutes
            or (self.ttl_config or {}).get("sweep_interval_minutes")
            or 5
        )
        self._stop_sweeping.clear()

        def sweep_until_stopped() -> None:
            while not self._stop_sweeping.wait(interval * 60):
                try:
                    self.sweep_ttl()
                except Exception:
                    logger.exception("TTL sweep failed; retrying next interval")
            if not future.done():
                future.set_result(None)

        self._sweeper = threading.Thread(
            target=sweep_until_stopped, name="chronomem-ttl-sweeper", daemon=True
        )
        self._sweeper.start()
        return future

    def stop_ttl_sweeper(self, timeout: float | None = None) -> bool:
        """Stop the background sweeper; True once it has stopped (or never ran)."""
        if self._sweeper is None:
            return True
        self._stop_sweeping.set()
        self._sweeper.join(timeout)
        stopped = not self._sweeper.is_alive()
        if stopped:
            self._sweeper = None
        return stopped

    # -- lifecycle -------------------------------------------------------------

    def close(self) -> None:
        """Stop the sweeper and close the database."""
        self.stop_ttl_sweeper()
        self._engine.close()

    def __enter__(self) -> ChronoStore:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()
