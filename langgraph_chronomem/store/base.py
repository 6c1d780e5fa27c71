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

import logging
import shutil
from collections.abc import Callable, Iterable, Mapping
from pathlib import Path
from typing import TYPE_CHECKING, Any, Literal

from langchain_core.embeddings import Embeddings
from langgraph.store.base import (
    NOT_PROVIDED,
    IndexConfig,
    InvalidNamespaceError,
    NotProvided,
    Op,
    PutOp,
    Result,
    SearchOp,
    TTLConfig,
)

from langgraph_chronomem._twins import in_thread, off_loop
from langgraph_chronomem.engine.base import LogTransaction
from langgraph_chronomem.engine.protocol import LogEngine
from langgraph_chronomem.engine.types import Write
from langgraph_chronomem.engine.values import encode_value
from langgraph_chronomem.errors import ConfigError
from langgraph_chronomem.search.chroma import NO_CHROMA
from langgraph_chronomem.search.index import SearchIndex
from langgraph_chronomem.search.vectors import Progress
from langgraph_chronomem.store.branches import Branching
from langgraph_chronomem.store.context import current_meta
from langgraph_chronomem.store.forgetting import Forgetting
from langgraph_chronomem.store.opening import Opening, is_conn_string
from langgraph_chronomem.store.ops import (
    CheckedKeys,
    ReadPlan,
    check_count,
    check_ops,
    check_put,
    run_reads,
)
from langgraph_chronomem.store.review import Review
from langgraph_chronomem.store.sweepers import Sweepers, TTLSweeper
from langgraph_chronomem.store.undo import UndoInWords
from langgraph_chronomem.store.versions import VersionControl

if TYPE_CHECKING:
    pass

__all__ = ["ChronoStore", "is_conn_string"]

logger = logging.getLogger(__name__)


class ChronoStore(
    Opening,
    CheckedKeys,
    VersionControl,
    Forgetting,
    UndoInWords,
    Review,
    Sweepers,
    Branching,
):
    """A versioned, drop-in LangGraph store on SQLite or PostgreSQL.

    Every `batch()` (and so every `put`/`delete`) commits one new version per
    scope it touches; reads see HEAD. A scope is the first `scope_depth` labels of
    a namespace: with `scope_depth=2`, `("memories", "alice")` is one timeline and
    `("memories", "bob")` another, never seeing each other's history.

    Open one with `ChronoStore.from_path` (a directory on this machine), or
    `from_conn_string` / `from_pool` (a PostgreSQL database that several
    servers share). It is thread-safe, and several processes may open the same
    store. One object serves sync and async code,
    as `BaseStore` does: the async methods carry an `a` prefix (`aput`, `alog`,
    `asweep_ttl`...), and `async with` closes it as `with` does. The history,
    rollback and undo methods come from the mixins beside it (`versions.py`,
    `forgetting.py`, `undo.py`, `review.py`, `tags.py`).
    """

    supports_ttl = True

    def __init__(
        self,
        engine: LogEngine,
        search: SearchIndex,
        *,
        index: IndexConfig | None = None,
        ttl: TTLConfig | None = None,
    ) -> None:
        """Wrap an open log and its search side. Most code wants `from_path` or
        `from_conn_string`."""
        self._engine = engine
        self._search = search
        self.index_config = index
        self.ttl_config = ttl
        engine.omit_expired = bool((ttl or {}).get("omit_expired"))
        self._sweeper = TTLSweeper(self._expire_due)
        self._hold_returning = False  # see `hold_returning`
        self._compactor: TTLSweeper | None = None
        self._temporary: Path | None = None  # a `:memory:` store's directory

    # -- the LangGraph contract ----------------------------------------------

    @property
    def embeddings(self) -> Embeddings | None:
        """The model `search(query=...)` embeds with, as LangGraph's stores expose it.

        `None` when items are not indexed (no `index`, as in `SqliteStore` and
        `PostgresStore`); item changes are then still embedded for `undo`, by
        the default model. A store reopened without `index` that was created
        with one keeps its index (see `from_path`), and so its embeddings.

            >>> import tempfile
            >>> def embed(texts):
            ...     return [[1.0, float(len(text))] for text in texts]
            >>> store = ChronoStore.from_path(
            ...     tempfile.mkdtemp(), index={"dims": 2, "embed": embed}
            ... )
            >>> store.embeddings.embed_query("hi")
            [1.0, 2.0]
            >>> store.close()
            >>> with ChronoStore.from_path(tempfile.mkdtemp()) as plain:
            ...     print(plain.embeddings)
            None
        """
        return self._search.embeddings if self._search.indexes_items else None

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
        return self._embed_and_run(ops, writes)

    def put(
        self,
        namespace: tuple[str, ...],
        key: str,
        value: Mapping[str, Any],
        index: Literal[False] | list[str] | None = None,
        *,
        ttl: float | NotProvided | None = NOT_PROVIDED,
    ) -> None:
        """`BaseStore.put`, in fewer steps: a put is the call agents make most,
        so its one op goes from its checks straight to embedding (if any) and
        its transaction. `batch([PutOp(...)])` does the same work through more
        calls, and each Python call costs a put about 3 µs when the CPU's
        caches are cold, as they are between an agent's other work (see
        "Python calls" in docs/benchmarks.md).

        Args:
            namespace: Where the item lives; its first `scope_depth` labels
                are its scope.
            key: The item's key within the namespace.
            value: A JSON object; `None` deletes the item.
            index: Fields to embed: `None` for the store's default, `False`
                for none, or a list of field paths.
            ttl: Minutes the item lives; `None` forever; left out, the store's
                `default_ttl`.

        Raises:
            InvalidNamespaceError: For an invalid namespace, or one whose root
                label is `"langgraph"` (nothing is written).
            The errors of `batch`.
        """
        if namespace and namespace[0] == "langgraph":  # as BaseStore.put says
            raise InvalidNamespaceError(
                f'Root label for namespace cannot be "langgraph". Got: {namespace}'
            )
        if isinstance(ttl, NotProvided):
            ttl = (self.ttl_config or {}).get("default_ttl")
        write = check_put(  # labels, key, value, TTL
            namespace, key, value, self._engine.scope_depth, index=index, ttl=ttl
        )
        if self._search.item_fields is not None:  # it indexes items
            op = PutOp(namespace, key, value, index=index, ttl=ttl)
            self._embed_and_run([op], [write])
            return
        # Made outside the write lock, which other writers wait for.
        meta = current_meta(hold_returning=self._hold_returning)
        with self._engine.transaction(write=True) as tx:
            committed = tx.write([write], meta)
        if committed:
            self._search.after_commit({})

    def _embed_and_run(
        self,
        ops: list[Op],
        writes: list[Write],
        *,
        expect: Callable[[LogTransaction], None] | None = None,
    ) -> list[Result]:
        """`batch` after its checks: embed what it needs, then one transaction
        (`expect`, if given, runs first in it)."""
        texts, queries = self._to_embed(ops, writes)
        known = {}
        if texts or queries:
            distinct = list(dict.fromkeys([*texts, *queries.values()]))
            computed = self._search.embeddings.embed_documents(distinct)
            known = dict(zip(distinct, computed, strict=True))
        chosen = {i: known[q] for i, q in queries.items()}
        return self._run(ops, writes, known, chosen, expect=expect)

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
        return await off_loop(self._run, ops, writes, known, chosen)

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
            if not self._search.has_chroma:
                raise ConfigError(NO_CHROMA)
        for write in writes:
            if write.value is not None:
                encode_value(write.value)
        return self._search.texts_to_embed(writes), queries

    def put_if(
        self,
        namespace: tuple[str, ...],
        key: str,
        value: dict[str, Any] | None,
        *,
        if_version: int | None = None,
        if_value: Any = ...,
        index: Literal[False] | list[str] | None = None,
        ttl: float | NotProvided | None = NOT_PROVIDED,
    ) -> None:
        """`put` (or, with `value=None`, delete) only if the item is still as
        the caller last saw it, so two agents editing one memory never
        overwrite each other silently.

        `if_version` is the scope version in which the item last changed, as
        `history` lists it (0: it must not exist); `if_value` the value it
        must hold (`None`: absent). The check and the write are one
        transaction.

            >>> import tempfile
            >>> store = ChronoStore.from_path(tempfile.mkdtemp(), scope_depth=1)
            >>> store.put(("alice",), "n", {"n": 1})
            >>> store.put_if(("alice",), "n", {"n": 2}, if_value={"n": 1})
            >>> store.put_if(("alice",), "n", {"n": 3}, if_value={"n": 1})
            Traceback (most recent call last):
            ...
            langgraph_chronomem.errors.WriteConflictError: alice/n no longer holds the value expected (it holds {"n": 2}): another write came first; nothing was written
            >>> store.close()

        Raises:
            WriteConflictError: If the item changed since; nothing is written.
            InvalidRequestError: If `if_version` is not an int >= 0.
            The errors of `batch`.
        """  # noqa: E501
        if if_version is not None:
            check_count("if_version", if_version)
        ttl_minutes = (  # as `BaseStore.put` reads it
            (self.ttl_config or {}).get("default_ttl")
            if isinstance(ttl, NotProvided)
            else ttl
        )
        op = PutOp(namespace, key, value, index=index, ttl=ttl_minutes)
        ops, writes = check_ops([op], self.scope_depth)
        self._embed_and_run(
            ops,
            writes,
            expect=lambda tx: tx.expect(
                writes[0].namespace, key, version=if_version, value=if_value
            ),
        )

    aput_if = in_thread(put_if)

    def _run(
        self,
        ops: list[Op],
        writes: list[Write],
        known: dict[str, list[float]],
        queries: dict[int, list[float]],
        *,
        expect: Callable[[LogTransaction], None] | None = None,
    ) -> list[Result]:
        if not queries:
            return self._run_with(ops, writes, known, None, expect)
        # The reads come before the writes, in one transaction: if reading the
        # vectors fails, nothing was written, and it may all run again.
        return self._search.searching(
            lambda vectors: self._run_with(
                ops, writes, known, ReadPlan(vectors=vectors, queries=queries), expect
            )
        )

    def _run_with(
        self,
        ops: list[Op],
        writes: list[Write],
        known: dict[str, list[float]],
        plan: ReadPlan | None,
        expect: Callable[[LogTransaction], None] | None,
    ) -> list[Result]:
        meta = current_meta(hold_returning=self._hold_returning) if writes else None
        if plan is None and len(writes) < len(ops):  # some op reads, by filter
            plan = ReadPlan(vectors=None, queries={})
        # Read on each call, as LangGraph's stores read it: a ttl_config
        # changed after the store opened applies from the next read.
        self._engine.omit_expired = bool((self.ttl_config or {}).get("omit_expired"))
        with self._engine.transaction(write=bool(writes)) as tx:
            if expect is not None:
                expect(tx)
            results: list[Result] = (
                [None] * len(ops) if plan is None else run_reads(tx, ops, plan)
            )
            if writes:
                assert meta is not None
                committed = tx.write(writes, meta)
                if plan is not None:
                    _refresh(tx, plan)
        if plan is not None and plan.refresh and not writes:
            with self._engine.transaction(write=True) as tx:
                _refresh(tx, plan)
        if writes and committed:
            self._search.after_commit(known)
        return results

    def reindex(self, progress: Progress | None = None) -> int:
        """Rebuild every derived index (full text, Chroma) from the log.

        Returns how many commits were indexed. `progress`, if given, is called
        as `progress(done, total)` while the vectors are rebuilt, the slow part:

            >>> import tempfile
            >>> from langgraph_chronomem import ChronoStore
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

    def wait_for_index(self, timeout: float | None = None) -> bool:
        """Wait until the vectors and the full-text index have caught up with
        every write so far. Returns False if `timeout` seconds passed first.
        If the background thread's last step failed (a model or Chroma error,
        logged), the rest of the catch-up runs in the calling thread, within
        the same `timeout`, and an error that stops it again is raised here,
        not hidden. With an `embed` given as an async function there is no
        background thread: `await_for_index` does the catch-up, and the sync
        call raises `ConfigError` if anything is left to embed.

        Writes return before their vectors are made: a background thread
        follows the log, and a search by meaning catches up with every write
        that returned before it runs, so no caller needs this for correct
        results. It is for the moments that want the index whole: before a
        backup of the store's directory, before timing a search, or in a test
        that looks into Chroma.

            >>> import tempfile
            >>> from langgraph_chronomem import ChronoStore
            >>> index = {"fields": ["text"]}
            >>> store = ChronoStore.from_path(tempfile.mkdtemp(), index=index)
            >>> store.put(("notes",), "a", {"text": "hello"})
            >>> store.wait_for_index(timeout=60)
            True
            >>> store.close()

        Raises:
            StorageError: If the store is closed, or closed while this waits
                (what its index lacks then is caught up when it opens again).
        """
        self._engine.check_open()  # a closed store's index is not whole: say so
        return self._search.settle(timeout)

    areindex = in_thread(reindex)
    await_for_index = in_thread(wait_for_index)

    # -- lifecycle -------------------------------------------------------------

    def setup(self) -> None:
        """Nothing to do: opening a store creates or upgrades its database.

        Here so that code written for `SqliteStore` and `PostgresStore`, which
        call `setup()` once before use, runs unchanged.
        """

    def close(self) -> None:
        """Stop the sweeper, the compactor and the resolver, and close the
        database; a `:memory:` store's directory is deleted."""
        self._sweeper.stop()
        self.stop_compactor()
        self._search.close()
        self._engine.close()
        if self._temporary is not None:
            shutil.rmtree(self._temporary, ignore_errors=True)

    def __enter__(self) -> ChronoStore:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()

    async def __aenter__(self) -> ChronoStore:
        return self

    async def __aexit__(self, *exc: object) -> None:
        await off_loop(self.close)


def _refresh(tx: LogTransaction, plan: ReadPlan) -> None:
    """Restart the TTL clock of the items the batch read (no version is made)."""
    by_namespace: dict[tuple[str, ...], list[str]] = {}
    for namespace, key in plan.refresh:
        by_namespace.setdefault(namespace, []).append(key)
    for namespace, keys in by_namespace.items():
        tx.refresh_ttl(namespace, keys)
