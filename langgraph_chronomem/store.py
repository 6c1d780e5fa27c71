"""`ChronoStore`: a LangGraph `BaseStore` that commits a version on every write.

Swap it in where you use `InMemoryStore` or `SqliteStore`; reads always see HEAD,
and the history is there when you need it:

    >>> import tempfile
    >>> store = ChronoStore.from_path(tempfile.mkdtemp(), scope_depth=2)
    >>> alice = ("memories", "alice")
    >>> store.put(alice, "city", {"city": "Boston"})
    >>> store.put(alice, "city", {"city": "Paris"})
    >>> for commit in store.log(alice):
    ...     print(commit.version, commit.summary)
    2 updated memories/alice/city: Boston -> Paris
    1 created memories/alice/city: Boston
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
from collections.abc import Callable, Coroutine, Iterable, Sequence
from datetime import datetime
from pathlib import Path
from typing import Any, Concatenate, ParamSpec, TypeVar

from langgraph.store.base import BaseStore, IndexConfig, Op, Result, SearchOp, TTLConfig

from langgraph_chronomem.context import commit_context, current_meta
from langgraph_chronomem.engine.base import LogTransaction
from langgraph_chronomem.engine.sqlite import SqliteEngine
from langgraph_chronomem.engine.types import (
    Change,
    Commit,
    CommitMeta,
    ItemVersion,
    RevertConflict,
    StoreStats,
    Write,
)
from langgraph_chronomem.engine.values import encode_value
from langgraph_chronomem.errors import ConfigError, StorageError
from langgraph_chronomem.ops import (
    ReadPlan,
    check_count,
    check_key,
    check_moment,
    check_ops,
    check_scope,
    run_reads,
)
from langgraph_chronomem.search.index import SearchIndex, caller_loop
from langgraph_chronomem.search.resolve import Mode, Resolution, ResolverConfig
from langgraph_chronomem.search.vectors import Progress
from langgraph_chronomem.ttl import TTLSweeper
from langgraph_chronomem.undo import UndoResult, apply_undo
from langgraph_chronomem.view import StoreView

__all__ = ["ChronoStore"]

logger = logging.getLogger(__name__)

DATABASE_FILE = "chronomem.sqlite3"
P = ParamSpec("P")
T = TypeVar("T")


async def _off_loop(work: Callable[P, T], *args: P.args, **kwargs: P.kwargs) -> T:
    """Run sync work in a worker thread, for an async caller.

    `asyncio.to_thread` copies context variables, so `commit_context` and the
    LangGraph run labels reach the commit; the caller's loop is recorded so an
    embed function given as `async def` can be awaited on it from the thread.
    """
    token = caller_loop.set(asyncio.get_running_loop())
    try:
        return await asyncio.to_thread(work, *args, **kwargs)
    finally:
        caller_loop.reset(token)


def _in_thread(
    method: Callable[Concatenate[ChronoStore, P], T],
) -> Callable[Concatenate[ChronoStore, P], Coroutine[Any, Any, T]]:
    """The async twin of a sync method: the same call, off the event loop."""

    async def twin(store: ChronoStore, /, *args: P.args, **kwargs: P.kwargs) -> T:
        return await _off_loop(method, store, *args, **kwargs)

    twin.__name__ = twin.__qualname__ = f"a{method.__name__}"
    twin.__doc__ = f"Async `{method.__name__}`: the same call, run in a worker thread."
    return twin


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

    def __init__(
        self,
        engine: SqliteEngine,
        search: SearchIndex,
        *,
        index: IndexConfig | None = None,
        ttl: TTLConfig | None = None,
    ) -> None:
        """Wrap an open log and its search side. Most code wants `from_path`."""
        self._engine = engine
        self._search = search
        self.index_config = index
        self.ttl_config = ttl
        self._sweeper = TTLSweeper(self.sweep_ttl)

    @classmethod
    def from_path(
        cls,
        path: str | Path,
        *,
        scope_depth: int | None = None,
        index: IndexConfig | None = None,
        ttl: TTLConfig | None = None,
        synchronous: str = "FULL",
        chroma_client: Any = None,
        resolver: ResolverConfig | None = None,
        read_only: bool = False,
    ) -> ChronoStore:
        """Open (or create) a store in the directory `path`.

            >>> import tempfile
            >>> with ChronoStore.from_path(tempfile.mkdtemp(), scope_depth=1) as store:
            ...     store.put(("alice",), "pet", {"kind": "cat"})
            ...     store.head(("alice",))
            1

        Args:
            path: A directory; it is created if missing and holds the SQLite
                database (`chronomem.sqlite3`, WAL mode) and the embedded Chroma
                data (`chroma/`).
            scope_depth: How many leading namespace labels make one timeline.
                0 (the default for a new store) makes the whole store one
                timeline. An existing store keeps the depth it was created with.
            index: LangGraph's `IndexConfig` for semantic `search(query=...)`:
                `fields` to embed and optionally `embed` (default: all-MiniLM-L6-v2).
                Without it, item changes are still embedded for `undo`.
            ttl: LangGraph's `TTLConfig`.
            synchronous: SQLite durability, `FULL` (default: a returned write
                survives power loss) or `NORMAL` (survives a crash of the process).
            chroma_client: A Chroma client to use instead of the embedded one,
                e.g. `chromadb.HttpClient(...)` when several processes share a store.
            resolver: Knobs of the natural-language undo search.
            read_only: Open an existing store for reading only, e.g. for an
                audit on read-only media: `get`, `search` without `query`,
                `list_namespaces`, `log`, `show`, `diff`, `history`, `as_of` and
                `stats` work; writes, undo and searching by meaning (its vector
                index writes files even to read) raise `ReadOnlyError`.

        Raises:
            ConfigError: If `scope_depth` contradicts the stored one, a setting
                is malformed, `index` is given with `read_only`, or a newer
                langgraph-chronomem upgraded the store (the message names the
                version to install).
            StorageError: If `path` is a file, or its database cannot be opened
                (not a database, damaged, read-only media without `read_only`).
        """
        if read_only and index is not None:
            raise ConfigError(
                "a read_only store writes nothing, and the vector index that "
                "index= asks for writes its own files: leave index out (search "
                "without query= still works)"
            )
        directory = _store_directory(path, create=not read_only)
        engine = SqliteEngine(
            directory / DATABASE_FILE,
            scope_depth=scope_depth,
            omit_expired=bool(ttl and ttl.get("omit_expired")),
            synchronous=synchronous,
            read_only=read_only,
        )
        try:
            search = SearchIndex(
                engine,
                directory,
                index=index,
                chroma_client=chroma_client,
                resolver=resolver,
            )
            store = cls(engine, search, index=index, ttl=ttl)
            if not read_only:
                search.heal()
        except BaseException:
            engine.close()
            raise
        return store

    @property
    def scope_depth(self) -> int:
        """Leading namespace labels that make one timeline."""
        return self._engine.scope_depth

    # -- the LangGraph contract ----------------------------------------------

    def batch(self, ops: Iterable[Op]) -> list[Result]:
        """Run a batch of ops in one transaction: reads, then one commit per scope.

        Reads see the state before the batch's writes, as in LangGraph's own stores.
        With `index`, the batch's texts and queries are embedded before the
        transaction opens, so a slow model never holds the database lock.

        Raises:
            InvalidNamespaceError: For an invalid namespace (nothing is written).
            ScopeError: For a namespace shorter than `scope_depth`.
            InvalidValueError: For a value that is not a JSON object.
            InvalidFilterError: For a search filter that cannot be run.
            InvalidRequestError: For a `limit` or `offset` that is not an int >= 0.
            ReadOnlyError: For a write, or a search by meaning, on a store
                opened with `read_only=True`.
            StorageError: If the store is closed, or storage fails (a full
                disk); nothing is written.
        """
        ops, writes = check_ops(ops, self.scope_depth)
        texts, queries = self._to_embed(ops, writes)
        known = {}
        if texts or queries:
            distinct = list(dict.fromkeys([*texts, *queries.values()]))
            computed = self._search.embeddings.embed_documents(distinct)
            known = dict(zip(distinct, computed, strict=True))
        return self._run(ops, writes, known, {i: known[q] for i, q in queries.items()})

    async def abatch(self, ops: Iterable[Op]) -> list[Result]:
        """Async `batch`: embeds with the model's async API, then runs the same
        transaction in a worker thread."""
        ops, writes = check_ops(ops, self.scope_depth)
        texts, queries = self._to_embed(ops, writes)
        known = {}
        if texts or queries:
            distinct = list(dict.fromkeys([*texts, *queries.values()]))
            computed = await self._search.embeddings.aembed_documents(distinct)
            known = dict(zip(distinct, computed, strict=True))
        chosen = {i: known[q] for i, q in queries.items()}
        return await _off_loop(self._run, ops, writes, known, chosen)

    def _to_embed(
        self, ops: list[Op], writes: list[Write]
    ) -> tuple[list[str], dict[int, str]]:
        """Texts the batch's puts need embedded, and its semantic queries by op.

        A read-only store refuses both here, before any model or index is
        touched. So is a value the log could not store: the texts are found by
        walking values in Python, which a deep value overflows, so each is
        encoded here first (orjson: microseconds, against an embedding's
        milliseconds).
        """
        if writes:
            self._engine.check_writable("write")
        if not self._search.indexes_items:
            return [], {}
        queries = {
            i: op.query
            for i, op in enumerate(ops)
            if isinstance(op, SearchOp) and op.query
        }
        if queries:
            self._engine.check_writable("search by meaning")
        for write in writes:
            if write.value is not None:
                encode_value(write.value)
        return self._search.texts_to_embed(writes), queries

    def _run(
        self,
        ops: list[Op],
        writes: list[Write],
        known: dict[str, list[float]],
        queries: dict[int, list[float]],
    ) -> list[Result]:
        meta = current_meta() if writes else None
        vectors = self._search.vectors() if queries else None
        plan = ReadPlan(vectors=vectors, queries=queries)
        with self._engine.transaction(write=bool(writes)) as tx:
            results = run_reads(tx, ops, plan)
            if writes:
                assert meta is not None
                committed = tx.commit(writes, meta)
                _refresh(tx, plan)
        if plan.refresh and not writes:
            with self._engine.transaction(write=True) as tx:
                _refresh(tx, plan)
        if writes and committed:
            self._search.after_commit(known)
        return results

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
        op: str | None = None,
    ) -> list[Commit]:
        """The scope's commits, newest first.

        Args:
            scope: The scope, or any namespace inside it.
            limit: At most this many commits.
            since: Only commits made at or after this time (naive means UTC).
            until: Only commits made at or before this time.
            author: Only commits by this author.
            op: Only commits of this op (`put`, `rollback`, `expire`…).

        `since` and `until` take `datetime`s only, as LangGraph's APIs do: parse
        text first (`datetime.fromisoformat`), so "yesterday" is never guessed at.

        Raises:
            InvalidRequestError: For a `limit` that is not an int >= 0, or a
                `since` or `until` that is not a `datetime`.
        """
        if limit is not None:
            check_count("limit", limit)
        check_moment("since", since)
        check_moment("until", until)
        sc = check_scope(scope, self.scope_depth)
        with self._engine.transaction(write=False) as tx:
            return tx.log(
                sc, limit=limit, since=since, until=until, author=author, op=op
            )

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
        """Every version of one item, newest first, including its deletions.

        Raises:
            InvalidValueError: If `key` is not a string.
        """
        namespace = tuple(namespace)
        check_scope(namespace, self.scope_depth)
        check_key(key)
        with self._engine.transaction(write=False) as tx:
            return tx.history(namespace, key)

    def as_of(self, scope: Sequence[str], version: int) -> StoreView:
        """A read-only store showing the scope as it was at `version`.

        The view raises `VersionNotFound` once a `reset` destroys that version.

        Raises:
            VersionNotFound: If the scope has no such version.
        """
        sc = check_scope(scope, self.scope_depth)
        with self._engine.transaction(write=False) as tx:
            tx.check_version(sc, version, allow_zero=True)
            seq = tx.commit_seq(sc, version)
        return StoreView(self._engine, sc, version, commit_seq=seq)

    def rollback(
        self,
        scope: Sequence[str],
        to: int,
        *,
        reason: str | None = None,
        author: str | None = None,
        dry_run: bool = False,
    ) -> Commit:
        """Restore the whole scope to its state at version `to`, as a new commit.

        Nothing is lost: the versions after `to` stay in the history, and rolling
        back to the version before this commit redoes them. With `dry_run`, the
        rollback is made and thrown away: the commit it would be, and no change.

        Raises:
            VersionNotFound: If `to` is not a version of the scope (0 is allowed).
            VersionError: If `to` is already HEAD.
        """
        sc = check_scope(scope, self.scope_depth)
        meta = self._meta(author, reason)
        return self._write(lambda tx: tx.rollback(sc, to, meta), rehearse=dry_run)

    def revert(
        self,
        scope: Sequence[str],
        version: int,
        *,
        items: Sequence[tuple[Sequence[str], str]] | None = None,
        force: bool = False,
        reason: str | None = None,
        author: str | None = None,
        dry_run: bool = False,
    ) -> Commit | RevertConflict:
        """Undo one commit's changes as a new commit, keeping everything after it.

        Three-way: an item is a conflict only if it no longer holds what the
        commit wrote (a later write that came back to the same value is not).

            >>> import tempfile
            >>> store = ChronoStore.from_path(tempfile.mkdtemp(), scope_depth=1)
            >>> store.put(("alice",), "city", {"city": "Boston"})
            >>> store.put(("alice",), "city", {"city": "Paris"})
            >>> store.put(("alice",), "city", {"city": "Rome"})
            >>> print(store.revert(("alice",), 2))  # doctest: +NORMALIZE_WHITESPACE
            cannot revert v2: alice/city (changed again in v3); keep it as it is,
            revert anyway with force=True, or roll back to v1
            >>> store.revert(("alice",), 3).summary
            'reverted v3: updated alice/city: Rome -> Paris'
            >>> store.close()

        Args:
            scope: The scope.
            version: The commit to undo.
            items: Only these (namespace, key) items of the commit.
            force: Restore conflicting items too, overwriting their later values.
            reason: Why (recorded on the commit).
            author: Who (recorded on the commit).
            dry_run: Make the revert and throw it away.

        Returns:
            The new commit, or a `RevertConflict` (and no change).

        Raises:
            VersionNotFound: If the scope has no such version.
            VersionError: If that commit changed nothing (or not `items`), or its
                changes are already undone.
        """
        sc = check_scope(scope, self.scope_depth)
        meta = self._meta(author, reason)
        wanted = None if items is None else [(tuple(ns), key) for ns, key in items]
        return self._write(
            lambda tx: tx.revert(sc, version, meta, items=wanted, force=force),
            rehearse=dry_run,
        )

    def reset(self, scope: Sequence[str], to: int) -> int:
        """Destroy every version after `to`: for purging poisoned or private data.

        Unlike `rollback` this cannot be undone. Returns how many versions were
        deleted.
        """
        sc = check_scope(scope, self.scope_depth)
        removed = self._write(lambda tx: tx.reset(sc, to))
        logger.warning(
            "reset %s to v%d: deleted %d versions", "/".join(sc), to, removed
        )
        return removed

    def _write(
        self, change: Callable[[LogTransaction], T], *, rehearse: bool = False
    ) -> T:
        """Run a change to the log, then bring the item vectors up to date.

        A rehearsal runs it in a transaction that is rolled back: a dry run.
        """
        with self._engine.transaction(write=True, rehearse=rehearse) as tx:
            result = change(tx)
        if not rehearse:
            self._search.after_commit({})
        return result

    def stats(self) -> StoreStats:
        """Every scope's HEAD, commits and items, and how far each index has read.

        >>> import tempfile
        >>> store = ChronoStore.from_path(tempfile.mkdtemp(), scope_depth=1)
        >>> store.put(("alice",), "city", {"city": "Paris"})
        >>> [(s.scope, s.head, s.items) for s in store.stats().scopes]
        [(('alice',), 1, 1)]
        >>> store.close()
        """
        with self._engine.transaction(write=False) as tx:
            return tx.stats()

    @staticmethod
    def _meta(author: str | None, reason: str | None) -> CommitMeta:
        with commit_context(author=author, reason=reason):
            return current_meta()

    # -- meaning ---------------------------------------------------------------

    def resolve(
        self,
        scope: Sequence[str],
        request: str,
        *,
        k: int = 5,
        mode: Mode = "auto",
        now: datetime | None = None,
    ) -> Resolution:
        """Which change a natural-language request means; changes nothing.

            >>> import tempfile
            >>> store = ChronoStore.from_path(tempfile.mkdtemp(), scope_depth=2)
            >>> alice = ("memories", "alice")
            >>> store.put(alice, "home", {"city": "Boston"})
            >>> store.put(alice, "home", {"city": "New York City"})
            >>> best = store.resolve(alice, "forget that I moved to New York").best
            >>> best.id, best.action, best.summary
            ('2.1', 'revert', 'updated memories/alice/home: Boston -> New York City')
            >>> store.close()

        Args:
            scope: The scope (or any namespace inside it); only its commits count.
            request: E.g. "undo the update about my move to NYC", "go back to when
                I still lived in Boston", "redo", or a change id like "2.1".
            k: How many candidates to return (1..100).
            mode: `auto` (default) undoes just the matched change when the request
                names a change ("forget X") and moves the whole scope in time
                when it asks to ("go back to when X"); `revert` and `rollback`
                force one or the other for requests that name a change.
            now: The moment relative times ("last week") count from, in the
                timezone where the person's days begin (default: now, UTC).

        Returns:
            The candidates, best first, each with its id, the matched change, the
            action and version it points at, what acting would change at HEAD and
            every stage's score; `decided` says whether the rule to act alone
            holds.

        Raises:
            InvalidRequestError: For an empty request, a bad `k` or `mode`.
            ReadOnlyError: On a store opened with `read_only=True`: the search
                indexes it reads catch up with the log first, which writes.
        """
        sc = check_scope(scope, self.scope_depth)
        self._engine.check_writable("resolve undo requests")
        return self._search.resolver().resolve(sc, request, k=k, mode=mode, now=now)

    def undo(
        self,
        scope: Sequence[str],
        request: str,
        *,
        mode: Mode = "auto",
        dry_run: bool = False,
        force: bool = False,
        author: str | None = None,
    ) -> UndoResult:
        """Resolve a request and apply it when the resolver is sure.

        Args:
            scope: The scope (or any namespace inside it).
            request: What to undo, in words, or a change id ("12.2") from `resolve`.
            mode: `auto`, `revert` or `rollback`, as in `resolve`.
            dry_run: Report what would change, change nothing.
            force: Revert items even if they were changed again since.
            author: Who asked (recorded on the commit).

        Returns:
            What changed, in words and as data, and the version that redoes it —
            or, when nothing matched or the resolver was not sure, the
            candidates and no change.

        Raises:
            InvalidRequestError: For an empty request or an unknown mode.
        """
        resolution = self.resolve(scope, request, mode=mode)
        return self.apply(
            scope, resolution, dry_run=dry_run, force=force, author=author
        )

    def apply(
        self,
        scope: Sequence[str],
        resolution: Resolution,
        *,
        choice: int | None = None,
        dry_run: bool = False,
        force: bool = False,
        author: str | None = None,
    ) -> UndoResult:
        """Apply a resolution: its decided best candidate, or the one a person chose.

        Nothing is applied if HEAD moved since the resolution was made.

        Args:
            scope: The scope the resolution was made in.
            resolution: What `resolve` returned.
            choice: A position in `resolution.candidates`, applied even when the
                resolver did not decide; `None` applies only a decided best.
            dry_run: Report what would change, change nothing.
            force: Revert items even if they were changed again since.
            author: Who chose (recorded on the commit).

        Raises:
            InvalidRequestError: If `choice` names no candidate.
        """
        sc = check_scope(scope, self.scope_depth)
        meta = self._meta(author, f"undo: {resolution.request}")
        result = apply_undo(
            self._engine,
            sc,
            resolution,
            dry_run=dry_run,
            meta=meta,
            choice=choice,
            force=force,
        )
        if result.applied:
            self._search.after_commit({})
        return result

    def reindex(self, progress: Progress | None = None) -> int:
        """Rebuild every derived index (full text, Chroma) from the log.

        Returns how many commits were indexed. `progress`, if given, is called
        as `progress(done, total)` while the vectors are rebuilt, the slow part:

            >>> import tempfile
            >>> store = ChronoStore.from_path(tempfile.mkdtemp())
            >>> store.put(("notes",), "a", {"text": "hello"})
            >>> store.put(("notes",), "b", {"text": "world"})
            >>> store.reindex(progress=lambda done, total: print(f"{done}/{total}"))
            0/2
            2/2
            2
            >>> store.close()
        """
        with self._engine.transaction(write=True) as tx:
            tx.reindex_changes()
        return self._search.vectors().rebuild(progress)

    # -- async twins -----------------------------------------------------------

    ahead = _in_thread(head)
    alog = _in_thread(log)
    ashow = _in_thread(show)
    adiff = _in_thread(diff)
    ahistory = _in_thread(history)
    aas_of = _in_thread(as_of)
    arollback = _in_thread(rollback)
    arevert = _in_thread(revert)
    areset = _in_thread(reset)
    aresolve = _in_thread(resolve)
    aundo = _in_thread(undo)
    aapply = _in_thread(apply)
    astats = _in_thread(stats)
    areindex = _in_thread(reindex)

    # -- TTL -------------------------------------------------------------------

    def sweep_ttl(self) -> int:
        """Delete every item whose TTL has passed, one `expire` commit per scope.

        Returns the number of items expired.
        """
        commits = self._write(lambda tx: tx.expire())
        return sum(len(c.changes) for c in commits)

    asweep_ttl = _in_thread(sweep_ttl)

    def start_ttl_sweeper(
        self, sweep_interval_minutes: float | None = None
    ) -> concurrent.futures.Future[None]:
        """Sweep expired items in a background thread every few minutes.

        The interval is the argument, else `ttl["sweep_interval_minutes"]`, else 5.
        Cancel the returned future (or call `stop_ttl_sweeper`) to stop.
        """
        configured = (self.ttl_config or {}).get("sweep_interval_minutes")
        return self._sweeper.start(float(sweep_interval_minutes or configured or 5))

    def stop_ttl_sweeper(self, timeout: float | None = None) -> bool:
        """Stop the background sweeper; True once it has stopped (or never ran)."""
        return self._sweeper.stop(timeout)

    # -- lifecycle -------------------------------------------------------------

    def close(self) -> None:
        """Stop the sweeper and the resolver, and close the database."""
        self.stop_ttl_sweeper()
        self._search.close()
        self._engine.close()

    def __enter__(self) -> ChronoStore:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()


def _store_directory(path: str | Path, *, create: bool) -> Path:
    """The absolute store directory (Chroma keys its clients by path), made if
    missing and `create`.

    Raises:
        StorageError: If `path` is a file, or the directory cannot be made.
    """
    directory = Path(path).resolve()
    if directory.exists() and not directory.is_dir():
        hint = (
            f"; pass its directory, {directory.parent}"
            if directory.name == DATABASE_FILE
            else ""
        )
        raise StorageError(
            f"{directory} is a file; a store is a directory that holds "
            f"{DATABASE_FILE}{hint}"
        )
    if create:
        try:
            directory.mkdir(parents=True, exist_ok=True)
        except OSError as exc:
            raise StorageError(
                f"cannot create the store directory {directory}: {exc.strerror}"
            ) from exc
    return directory


def _refresh(tx: LogTransaction, plan: ReadPlan) -> None:
    """Restart the TTL clock of the items the batch read (no version is made)."""
    by_namespace: dict[tuple[str, ...], list[str]] = {}
    for namespace, key in plan.refresh:
        by_namespace.setdefault(namespace, []).append(key)
    for namespace, keys in by_namespace.items():
        tx.refresh_ttl(namespace, keys)
