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
import os
import re
import shutil
import tempfile
from collections.abc import Callable, Iterable, Mapping
from datetime import timedelta
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
from langgraph_chronomem.engine.sqlite import SqliteEngine
from langgraph_chronomem.engine.types import Write
from langgraph_chronomem.engine.values import encode_value
from langgraph_chronomem.errors import ConfigError, InvalidRequestError, StorageError
from langgraph_chronomem.search.chroma import CHROMA_URL_ENV, NO_CHROMA, ChromaServer
from langgraph_chronomem.search.index import SearchIndex
from langgraph_chronomem.search.resolve import ResolverConfig
from langgraph_chronomem.store.context import current_meta
from langgraph_chronomem.store.ops import (
    CheckedKeys,
    ReadPlan,
    check_count,
    check_ops,
    check_put,
    run_reads,
)
from langgraph_chronomem.store.review import Review
from langgraph_chronomem.store.ttl import TTLSweeper
from langgraph_chronomem.store.versions import VersionControl, check_retention

if TYPE_CHECKING:
    import psycopg
    from psycopg_pool import ConnectionPool

__all__ = ["ChronoStore", "is_conn_string"]

logger = logging.getLogger(__name__)

DATABASE_FILE = "chronomem.sqlite3"
MEMORY = ":memory:"
"""Where a path or connection string goes: a temporary store, removed on close."""
CONN_SCHEMES = ("postgresql://", "postgres://")
"""How a PostgreSQL connection string given where a path goes starts."""
# libpq's keyword form ("host=db dbname=memories"): its first keyword.
_CONNINFO = re.compile(
    r"\s*(host|hostaddr|port|dbname|user|password|passfile|service|sslmode"
    r"|connect_timeout|application_name|options|target_session_attrs)\s*=",
    re.IGNORECASE,
)


def is_conn_string(location: str | Path) -> bool:
    """Whether `location` is a PostgreSQL connection string (a URL, or libpq's
    `key=value` form) rather than a store directory.

    >>> is_conn_string("postgresql://app@db/memories"), is_conn_string("./memory")
    (True, False)
    >>> is_conn_string("host=db-host dbname=memories user=app")
    True
    """
    if not isinstance(location, str):
        return False
    return location.lower().startswith(CONN_SCHEMES) or bool(_CONNINFO.match(location))


class ChronoStore(CheckedKeys, VersionControl, Review):
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
    rollback and undo methods come from `VersionControl` (`versions.py`).
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
        chroma_url: str | None = None,
        resolver: ResolverConfig | None = None,
        read_only: bool = False,
        parents: bool = False,
    ) -> ChronoStore:
        """Open (or create) a store in the directory `path`.

            >>> import tempfile
            >>> with ChronoStore.from_path(tempfile.mkdtemp(), scope_depth=1) as store:
            ...     store.put(("alice",), "pet", {"kind": "cat"})
            ...     store.head(("alice",))
            1

        A directory that does not exist yet becomes a new store, and the
        `langgraph_chronomem.store` logger says so (at INFO); its parent
        directory must exist, as a SQLite file's must, so a typo in the path
        fails instead of making a store nobody will find. `":memory:"` makes a
        temporary store, deleted with its directory on `close()`, as
        `SqliteStore.from_conn_string(":memory:")` is:

            >>> with ChronoStore.from_path(":memory:") as scratch:
            ...     scratch.put(("notes",), "n", {"text": "hi"})
            ...     scratch.get(("notes",), "n").value
            {'text': 'hi'}

        Args:
            path: A directory; it is created if missing and holds the SQLite
                database (`chronomem.sqlite3`, WAL mode) and the embedded Chroma
                data (`chroma/`). `":memory:"`: a temporary store. A
                `postgresql://` URL opens the store on that database instead,
                as `from_conn_string` does.
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
            chroma_url: A Chroma server (`chroma run`) to keep the vectors in
                instead of the embedded one, as a URL (`http://host:8000`); the
                store connects on first use and closes the connection.
            resolver: Knobs of the natural-language undo search.
            read_only: Open an existing store for reading only, e.g. for an
                audit on read-only media: `get`, `search` without `query`,
                `list_namespaces`, `log`, `show`, `diff`, `history`, `as_of` and
                `stats` work; writes, undo and searching by meaning (its vector
                index writes files even to read) raise `ReadOnlyError`.
            parents: Create the directory's missing parents too (`mkdir -p`).

        Raises:
            ConfigError: If `scope_depth` contradicts the stored one, a setting
                is malformed (`chroma_url` not an http(s) URL, both
                `chroma_client` and `chroma_url`), `index` is given with
                `read_only`, or a newer
                langgraph-chronomem upgraded the store (the message names the
                version to install); for a URL, as `from_conn_string`, and if
                `synchronous` is given (a server's durability is its own).
            StorageError: If `path` is a file, its parent does not exist
                (without `parents`), its `chronomem.sqlite3` is another
                application's database (nothing is written to it), or the
                database cannot be opened (not a database, damaged, read-only
                media without `read_only`).
        """
        if str(path) == MEMORY:
            return cls._scratch(
                scope_depth=scope_depth,
                index=index,
                ttl=ttl,
                synchronous=synchronous,
                chroma_client=chroma_client,
                chroma_url=chroma_url,
                resolver=resolver,
                read_only=read_only,
            )
        if is_conn_string(path):
            if synchronous.upper() != "FULL":
                raise ConfigError(
                    "synchronous is SQLite's durability setting; a PostgreSQL "
                    "server's is its own (synchronous_commit): leave it out"
                )
            return cls.from_conn_string(
                str(path),
                scope_depth=scope_depth,
                index=index,
                ttl=ttl,
                chroma_client=chroma_client,
                chroma_url=chroma_url,
                resolver=resolver,
                read_only=read_only,
            )
        _check_read_only(index, read_only=read_only)
        server = _chroma_server(chroma_client, chroma_url, None, environ=False)
        directory = _store_directory(path, create=not read_only, parents=parents)
        new = not (directory / DATABASE_FILE).exists()
        engine = SqliteEngine(
            directory / DATABASE_FILE,
            scope_depth=scope_depth,
            synchronous=synchronous,
            read_only=read_only,
        )
        store = cls._around(
            engine, directory, index, ttl, chroma_client, server, resolver
        )
        if new:
            logger.info("created a new store in %s", directory)
        return store

    @classmethod
    def _scratch(cls, **options: Any) -> ChronoStore:
        """A store in a new temporary directory, removed on `close()`."""
        directory = Path(tempfile.mkdtemp(prefix="chronomem-memory-"))
        try:
            store = cls.from_path(directory, **options)
        except BaseException:
            shutil.rmtree(directory, ignore_errors=True)
            raise
        store._temporary = directory
        return store

    @classmethod
    def from_conn_string(
        cls,
        conn_string: str,
        *,
        scope_depth: int | None = None,
        index: IndexConfig | None = None,
        ttl: TTLConfig | None = None,
        chroma_client: Any = None,
        chroma_url: str | None = None,
        chroma_path: str | Path | None = None,
        resolver: ResolverConfig | None = None,
        read_only: bool = False,
        max_connections: int = 10,
    ) -> ChronoStore:
        """Open (or create) a store in a PostgreSQL database.

        Where LangGraph's `PostgresStore.from_conn_string(...)` is used as a
        context manager, this is too (`with ChronoStore.from_conn_string(uri)
        as store:`); it also works as a plain call, closed with `close()`. The
        schema is created or upgraded on open, so there is no `setup()` to call.
        The store opens its own connection pool and closes it; to share a pool
        (with `PostgresStore`, or another store), use `from_pool`.

        `":memory:"` makes a temporary store, as `from_path(":memory:")` does.
        A SQLite file (`"memory.db"`, `"sqlite:///memory.db"`, what
        `SqliteStore.from_conn_string` takes) is refused with a `ConfigError`
        that names `from_path`: a store on this machine is a directory that
        holds its database and its vector index side by side.

            with ChronoStore.from_conn_string(
                "postgresql://app@db-host/memories", scope_depth=2
            ) as store:
                store.put(("memories", "alice"), "city", {"city": "Paris"})

        Searching by meaning (`index=`) keeps its vectors in Chroma, which a
        database server does not hold: give `chroma_url=` (a Chroma server,
        which any number of processes share; or set `CHRONOMEM_CHROMA_URL`, as
        a `langgraph.json` deployment does), `chroma_client=` (a client you
        made, e.g. `chromadb.HttpClient(...)`) or `chroma_path=` (an embedded
        Chroma in that directory, for one process). The log stays the truth:
        while the Chroma server is down, writes still commit and reads work,
        `search(query=...)` raises a `StorageError` that says so, and the
        vectors catch up when it answers again.

            with ChronoStore.from_conn_string(
                "postgresql://app@db-host/memories",
                index={"fields": ["text"]},
                chroma_url="http://chroma-host:8000",
            ) as store:
                store.search(("memories", "alice"), query="where do I live?")

        Args:
            conn_string: A libpq connection string or URL
                (`postgresql://user:password@host:5432/dbname`).
            scope_depth: As in `from_path`.
            index: As in `from_path`; needs a Chroma: `chroma_url`,
                `chroma_client`, `chroma_path` or `$CHRONOMEM_CHROMA_URL`.
            ttl: LangGraph's `TTLConfig`.
            chroma_client: The Chroma client that holds the vectors.
            chroma_url: The Chroma server that holds the vectors, as a URL
                (`http://host:8000`); default `$CHRONOMEM_CHROMA_URL` when
                no Chroma argument is given.
            chroma_path: A directory for an embedded Chroma instead (its files
                go in `chroma/` inside it); one process only.
            resolver: Knobs of the natural-language undo search.
            read_only: As in `from_path`: nothing is created, migrated or written.
            max_connections: The most connections the store's pool opens.

        Raises:
            ConfigError: As `from_path`; if `conn_string` is a SQLite file
                (use `from_path`); and if `index` is given without a
                Chroma, with more than one of `chroma_client`, `chroma_url`
                and `chroma_path`, or `chroma_url` (or the variable) is not an
                http(s) URL.
            StorageError: If the server cannot be reached.
            ImportError: If psycopg is not installed
                (`pip install 'langgraph-chronomem[postgres]'`).
        """
        local = _sqlite_target(conn_string)
        if local == MEMORY:
            if chroma_path is not None:
                raise ConfigError(
                    "a :memory: store keeps its vectors in its own temporary "
                    "directory: leave chroma_path out"
                )
            return cls._scratch(
                scope_depth=scope_depth,
                index=index,
                ttl=ttl,
                chroma_client=chroma_client,
                chroma_url=chroma_url,
                resolver=resolver,
                read_only=read_only,
            )
        if local is not None:
            directory = str(Path(local).with_suffix(""))
            raise ConfigError(
                f"{conn_string!r} is a SQLite file, not a PostgreSQL connection "
                "string; a ChronoStore on this machine is a directory (its "
                "database and vector index side by side): open it with "
                f"ChronoStore.from_path({directory!r}), or pass ':memory:' for "
                "a temporary store"
            )
        return cls._on_postgres(
            conn_string,
            scope_depth=scope_depth,
            index=index,
            ttl=ttl,
            chroma_client=chroma_client,
            chroma_url=chroma_url,
            chroma_path=chroma_path,
            resolver=resolver,
            read_only=read_only,
            max_connections=max_connections,
        )

    @classmethod
    def from_pool(
        cls,
        conn: psycopg.Connection[Any] | ConnectionPool[Any],
        *,
        scope_depth: int | None = None,
        index: IndexConfig | None = None,
        ttl: TTLConfig | None = None,
        chroma_client: Any = None,
        chroma_url: str | None = None,
        chroma_path: str | Path | None = None,
        resolver: ResolverConfig | None = None,
        read_only: bool = False,
    ) -> ChronoStore:
        """Open (or create) a store on a psycopg connection or pool you own.

        The connections need `autocommit=True`, as `PostgresStore`'s do; any
        row factory works, so one pool can serve both stores. Closing the store
        leaves `conn` open. A pool survives connections the server drops (a
        restart, a killed backend); a single connection serves one call at a
        time and cannot be replaced.

            pool = ConnectionPool(uri, kwargs={"autocommit": True})
            store = ChronoStore.from_pool(pool, scope_depth=2)

        Args:
            conn: A `psycopg.Connection` or a `psycopg_pool.ConnectionPool`.
            scope_depth: As in `from_path`.
            index: As in `from_conn_string`.
            ttl: LangGraph's `TTLConfig`.
            chroma_client: As in `from_conn_string`.
            chroma_url: As in `from_conn_string`.
            chroma_path: As in `from_conn_string`.
            resolver: Knobs of the natural-language undo search.
            read_only: As in `from_path`.

        Raises:
            ConfigError: As `from_conn_string`, and for a connection not in
                autocommit mode.
            StorageError: If the server cannot be reached.
        """
        return cls._on_postgres(
            conn,
            scope_depth=scope_depth,
            index=index,
            ttl=ttl,
            chroma_client=chroma_client,
            chroma_url=chroma_url,
            chroma_path=chroma_path,
            resolver=resolver,
            read_only=read_only,
        )

    @classmethod
    def _on_postgres(
        cls,
        conn: str | psycopg.Connection[Any] | ConnectionPool[Any],
        *,
        scope_depth: int | None,
        index: IndexConfig | None,
        ttl: TTLConfig | None,
        chroma_client: Any,
        chroma_url: str | None,
        chroma_path: str | Path | None,
        resolver: ResolverConfig | None,
        read_only: bool,
        max_connections: int = 10,
    ) -> ChronoStore:
        _check_read_only(index, read_only=read_only)
        server = _chroma_server(chroma_client, chroma_url, chroma_path, environ=True)
        if (
            index is not None
            and chroma_client is None
            and server is None
            and chroma_path is None
        ):
            raise ConfigError(NO_CHROMA)
        from langgraph_chronomem.engine import PostgresEngine

        engine = PostgresEngine(
            conn,
            scope_depth=scope_depth,
            max_connections=max_connections,
            read_only=read_only,
        )
        try:
            directory = (
                None
                if chroma_path is None
                else _store_directory(chroma_path, create=not read_only, parents=True)
            )
        except BaseException:
            engine.close()
            raise
        return cls._around(
            engine, directory, index, ttl, chroma_client, server, resolver
        )

    @classmethod
    def _around(
        cls,
        engine: LogEngine,
        directory: Path | None,
        index: IndexConfig | None,
        ttl: TTLConfig | None,
        chroma_client: Any,
        chroma_server: ChromaServer | None,
        resolver: ResolverConfig | None,
    ) -> ChronoStore:
        """The store on an engine just opened (closed again if this fails)."""
        try:
            search = SearchIndex(
                engine,
                directory,
                index=index,
                chroma_client=chroma_client,
                chroma_server=chroma_server,
                resolver=resolver,
            )
            store = cls(engine, search, index=index, ttl=ttl)
            if not engine.read_only:
                search.heal()
        except BaseException:
            engine.close()
            raise
        return store

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

    # -- TTL -------------------------------------------------------------------
    #
    # `SqliteStore` names these without a prefix; `AsyncSqliteStore` uses the
    # same names for coroutines. One object serving both, this store keeps the
    # names for the sync methods and gives the async ones the `a` prefix of
    # every other async method (`aget`, `aput`...).

    def sweep_ttl(self) -> int:
        """Delete every item whose TTL has passed, one `expire` commit per scope.

        Returns the number of items expired. From async code, `await
        store.asweep_ttl()`, or use `AsyncChronoStore`, whose `sweep_ttl` is
        a coroutine, as `AsyncSqliteStore`'s is.
        """
        return self._expire_due()

    def _expire_due(self) -> int:
        commits = self._write(lambda tx: tx.expire())
        return sum(len(c.changes) for c in commits)

    asweep_ttl = in_thread(sweep_ttl)

    def start_ttl_sweeper(
        self, sweep_interval_minutes: float | None = None
    ) -> concurrent.futures.Future[None]:
        """Sweep expired items in a background thread every few minutes.

        The interval is the argument, else `ttl["sweep_interval_minutes"]`, else 5.
        Cancel the returned future (or call `stop_ttl_sweeper`) to stop; it
        completes when the sweeper stops. At most one sweeper runs: starting
        it again returns another future for the same thread.

        Args:
            sweep_interval_minutes: Minutes between sweeps.
        """
        return self._start_sweeper(sweep_interval_minutes)

    def _start_sweeper(
        self, sweep_interval_minutes: float | None
    ) -> concurrent.futures.Future[None]:
        configured = (self.ttl_config or {}).get("sweep_interval_minutes")
        return self._sweeper.start(float(sweep_interval_minutes or configured or 5))

    async def astart_ttl_sweeper(
        self, sweep_interval_minutes: float | None = None
    ) -> asyncio.Task[None]:
        """Async `start_ttl_sweeper`: what `AsyncSqliteStore.start_ttl_sweeper` is.

        Returns a task, as `AsyncSqliteStore` does, that ends when the sweeper
        stops: cancel it (or await `astop_ttl_sweeper()`) to stop sweeping. The
        sweeps run in the same background thread as `start_ttl_sweeper`'s, so
        a busy event loop never delays them; the task ends with its loop.

            >>> import asyncio, tempfile
            >>> async def main():
            ...     async with ChronoStore.from_path(tempfile.mkdtemp()) as store:
            ...         task = await store.astart_ttl_sweeper(sweep_interval_minutes=1)
            ...         stopped = await store.astop_ttl_sweeper()
            ...         await task
            ...         return stopped, task.done()
            >>> asyncio.run(main())
            (True, True)

        Args:
            sweep_interval_minutes: Minutes between sweeps.
        """
        sweeper = self._start_sweeper(sweep_interval_minutes)

        async def sweeping() -> None:
            await asyncio.wrap_future(sweeper)

        task = asyncio.create_task(sweeping(), name="chronomem-ttl-sweeper")
        task.add_done_callback(lambda _: sweeper.cancel())  # cancelled: stop it
        return task

    def stop_ttl_sweeper(self, timeout: float | None = None) -> bool:
        """Stop the background sweeper; True once it has stopped (or never ran).

        Args:
            timeout: Seconds to wait for the sweeper thread; `None` waits until
                it ends.
        """
        return self._sweeper.stop(timeout)

    astop_ttl_sweeper = in_thread(stop_ttl_sweeper)

    def start_compactor(
        self,
        *,
        keep_last: int | None = None,
        keep_within: timedelta | None = None,
        interval_minutes: float = 24 * 60,
    ) -> concurrent.futures.Future[None]:
        """Keep history bounded in the background: `compact` every scope by
        this retention policy every `interval_minutes` (a day by default), in
        a daemon thread, until `stop_compactor` (or the future is cancelled).
        One compactor runs at a time, with the policy it was started with:
        stop it to start it with another.

            >>> import tempfile
            >>> from datetime import timedelta
            >>> store = ChronoStore.from_path(tempfile.mkdtemp())
            >>> running = store.start_compactor(keep_within=timedelta(days=90))
            >>> store.stop_compactor(timeout=5)
            True
            >>> store.close()

        Args:
            keep_last: Keep each item's newest versions, this many.
            keep_within: Keep the versions committed this recently.
            interval_minutes: Minutes between compactions.

        Raises:
            InvalidRequestError: For a policy `compact` refuses, or an interval
                that is not a positive number.
        """
        check_retention(keep_last, keep_within)
        if isinstance(interval_minutes, bool) or not (
            isinstance(interval_minutes, (int, float)) and interval_minutes > 0
        ):
            raise InvalidRequestError(
                f"interval_minutes is a positive number, got {interval_minutes!r}"
            )
        if self._compactor is None:
            self._compactor = TTLSweeper(
                lambda: len(
                    self.compact(keep_last=keep_last, keep_within=keep_within).versions
                ),
                name="chronomem-compactor",
            )
        return self._compactor.start(float(interval_minutes))

    def stop_compactor(self, timeout: float | None = None) -> bool:
        """Stop the background compactor; True once it has stopped (or never
        ran). A later `start_compactor` may give another policy."""
        compactor = self._compactor
        if compactor is None:
            return True
        stopped = compactor.stop(timeout)
        if stopped:
            self._compactor = None
        return stopped

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


def _check_read_only(index: IndexConfig | None, *, read_only: bool) -> None:
    if read_only and index is not None:
        raise ConfigError(
            "a read_only store writes nothing, and the vector index that "
            "index= asks for writes its own files: leave index out (search "
            "without query= still works)"
        )


def _chroma_server(
    client: Any, url: str | None, path: str | Path | None, *, environ: bool
) -> ChromaServer | None:
    """The Chroma server `url` names; with `environ` and no Chroma argument at
    all, the one `$CHRONOMEM_CHROMA_URL` names.

    Raises:
        ConfigError: If more than one Chroma is given, or the URL is malformed.
    """
    given = [
        name
        for name, value in (
            ("chroma_client", client),
            ("chroma_url", url),
            ("chroma_path", path),
        )
        if value is not None
    ]
    if len(given) > 1:
        raise ConfigError(
            f"give one Chroma, not both {' and '.join(given)}: chroma_url or "
            "chroma_client for a Chroma server, chroma_path for an embedded one"
        )
    if not given and environ:
        url = os.environ.get(CHROMA_URL_ENV) or None
        if url is not None:
            try:
                return ChromaServer.parse(url)
            except ConfigError as exc:
                raise ConfigError(f"${CHROMA_URL_ENV}: {exc}") from None
    return None if url is None else ChromaServer.parse(url)


def _sqlite_target(conn_string: str) -> str | None:
    """The SQLite file a connection string names (`MEMORY` for an in-memory
    database), or `None` for what may be PostgreSQL's.

    libpq's strings are URLs of its own schemes or hold `key=value` pairs;
    text that is neither is a path, as `SqliteStore.from_conn_string` takes.

        >>> _sqlite_target("memory.db"), _sqlite_target("sqlite:///data/m.db")
        ('memory.db', 'data/m.db')
        >>> _sqlite_target(":memory:"), _sqlite_target("host=db dbname=m")
        (':memory:', None)
    """
    if isinstance(conn_string, os.PathLike):  # a path is never PostgreSQL's
        conn_string = os.fspath(conn_string)
    if not isinstance(conn_string, str):
        return None
    match = re.match(r"sqlite(?:\+\w+)?://(/?)(.*)", conn_string, re.IGNORECASE)
    if match is not None:
        path = match.group(2).split("?")[0]
        return MEMORY if path in ("", MEMORY) else path
    if is_conn_string(conn_string):
        return None
    text = conn_string.strip()
    return None if not text or "=" in text else text


def _store_directory(path: str | Path, *, create: bool, parents: bool) -> Path:
    """The absolute store directory (Chroma keys its clients by path), made if
    missing and `create` (and its parents too if `parents`).

    Raises:
        StorageError: If `path` is a file, its parent is missing and not
            `parents`, or the directory cannot be made.
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
    if create and not parents and not directory.parent.is_dir():
        raise StorageError(
            f"cannot create the store {directory}: its parent directory "
            f"{directory.parent} does not exist (a typo in the path?); create "
            "it first, or pass parents=True to create it with the store"
        )
    if create:
        try:
            directory.mkdir(parents=parents, exist_ok=True)
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
