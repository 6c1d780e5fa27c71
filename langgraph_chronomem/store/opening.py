"""How a `ChronoStore` is opened: a directory on this machine, a PostgreSQL
connection string, or a pool, each with its vector index beside it.

    >>> import tempfile
    >>> from langgraph_chronomem import ChronoStore
    >>> with ChronoStore.from_path(tempfile.mkdtemp(), scope_depth=1) as store:
    ...     store.put(("alice",), "pet", {"kind": "cat"})
    ...     store.head(("alice",))
    1

The classmethods live in `Opening`, a mixin of `ChronoStore`; their long
docstrings are the reference for every option, which is why they sit apart
from the store's batch path.
"""

from __future__ import annotations

import logging
import os
import re
import shutil
import tempfile
from pathlib import Path
from typing import TYPE_CHECKING, Any

from langgraph.store.base import (
    IndexConfig,
    TTLConfig,
)

from langgraph_chronomem.engine.protocol import LogEngine
from langgraph_chronomem.engine.sqlite import SqliteEngine
from langgraph_chronomem.errors import ConfigError, StorageError
from langgraph_chronomem.search.chroma import CHROMA_URL_ENV, NO_CHROMA, ChromaServer
from langgraph_chronomem.search.index import SearchIndex
from langgraph_chronomem.search.resolve import ResolverConfig

if TYPE_CHECKING:
    import psycopg
    from psycopg_pool import ConnectionPool


if TYPE_CHECKING:
    import psycopg
    from psycopg_pool import ConnectionPool
    from typing_extensions import Self

__all__ = ["DATABASE_FILE", "Opening", "is_conn_string"]

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


class Opening:
    """The ways to open a `ChronoStore`: a mixin, whose classmethods make the store."""

    _temporary: Path | None  # a `:memory:` store's directory, removed on close

    if TYPE_CHECKING:

        def __init__(
            self,
            engine: LogEngine,
            search: SearchIndex,
            *,
            index: IndexConfig | None = None,
            ttl: TTLConfig | None = None,
        ) -> None: ...

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
    ) -> Self:
        """Open (or create) a store in the directory `path`.

            >>> import tempfile
            >>> from langgraph_chronomem import ChronoStore
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
    def _scratch(cls, **options: Any) -> Self:
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
    ) -> Self:
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
    ) -> Self:
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
    ) -> Self:
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
    ) -> Self:
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
