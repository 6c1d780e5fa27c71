"""Where a store's vectors live: an embedded Chroma directory (one process's,
locked), or a Chroma server given by URL, and the error a search raises while
that server is away.

    >>> ChromaServer.parse("http://chroma-host:8000").url
    'http://chroma-host:8000'
"""

from __future__ import annotations

import os
import shutil
import struct
import threading
import uuid
from pathlib import Path
from typing import Any, ClassVar, NamedTuple
from urllib.parse import urlsplit

from langgraph_chronomem.engine.scrub import zero_free_pages, zero_spans
from langgraph_chronomem.errors import ConfigError, StorageError

try:
    import fcntl
except ImportError:  # Windows: no advisory locks, one process is on its honour
    fcntl = None  # type: ignore[assignment]

__all__ = [
    "CHROMA_DIR",
    "CHROMA_TIMEOUT",
    "CHROMA_URL_ENV",
    "NO_CHROMA",
    "ChromaLock",
    "ChromaServer",
    "closed_chroma",
    "embedded_chroma",
    "forget_chroma",
    "scrub_embedded",
    "server_address",
    "unreachable",
]

CHROMA_DIR = "chroma"
NO_CHROMA = (
    "searching by meaning (index=, and the undo search) keeps vectors in Chroma, "
    "and a store on PostgreSQL has no directory for an embedded one: open it "
    "with chroma_url='http://host:8000' or $CHRONOMEM_CHROMA_URL (a Chroma "
    "server, for any number of processes), chroma_client= (a Chroma client of "
    "your own) or chroma_path=DIR (an embedded Chroma, for one process)"
)

CHROMA_URL_ENV = "CHRONOMEM_CHROMA_URL"
"""A Chroma server for stores on PostgreSQL opened with no Chroma argument."""
CHROMA_TIMEOUT = 30.0
"""Seconds a Chroma server may take to answer one call before a search gives up."""


class ChromaServer(NamedTuple):
    """A Chroma server's address, from a URL such as `http://chroma:8000`.

    >>> ChromaServer.parse("http://127.0.0.1:8000")
    ChromaServer(host='127.0.0.1', port=8000, ssl=False)
    >>> ChromaServer.parse("https://vectors.example.com").port
    443
    >>> try:
    ...     ChromaServer.parse("chroma:8000")  # no scheme
    ... except ConfigError as error:
    ...     print(str(error).split(";")[0])
    chroma_url is a Chroma server's http:// or https:// URL, such as http://127.0.0.1:8000
    """

    host: str
    port: int
    ssl: bool

    @classmethod
    def parse(cls, url: str) -> ChromaServer:
        """The address in `url` (`http[s]://host[:port]`; the port defaults to
        8000, `chroma run`'s, over http and to 443 over https).

        Raises:
            ConfigError: If `url` is not such a URL (another scheme, no host, a
                bad port, a path, a query, or credentials).
        """
        wrong = ConfigError(
            "chroma_url is a Chroma server's http:// or https:// URL, such as "
            f"http://127.0.0.1:8000; got {url!r}"
        )
        if not isinstance(url, str):
            raise wrong
        try:
            parts = urlsplit(url.strip())
            port = parts.port
        except ValueError:
            raise wrong from None
        if (
            parts.scheme.lower() not in ("http", "https")
            or not parts.hostname
            or parts.path not in ("", "/")
            or parts.query
            or parts.fragment
            or parts.username is not None
        ):
            raise wrong
        ssl = parts.scheme.lower() == "https"
        return cls(parts.hostname, port or (443 if ssl else 8000), ssl)

    @property
    def url(self) -> str:
        return f"{'https' if self.ssl else 'http'}://{self.host}:{self.port}"

    def connect(self) -> Any:
        """A client of this server, whose calls give up after `CHROMA_TIMEOUT`.

        Raises:
            StorageError: If the server cannot be reached.
        """
        import chromadb
        import httpx
        from chromadb.config import Settings

        try:
            client = chromadb.HttpClient(
                host=self.host,
                port=self.port,
                ssl=self.ssl,
                settings=Settings(anonymized_telemetry=False),
            )
        except (ValueError, httpx.TransportError) as exc:
            # Chroma's own words for a server that is not there are a ValueError
            raise unreachable(self.url, exc) from exc
        # Chroma's HTTP client waits forever by default: a server that stopped
        # answering would hang every search.
        session = getattr(getattr(client, "_server", None), "_session", None)
        if isinstance(session, httpx.Client):
            session.timeout = httpx.Timeout(CHROMA_TIMEOUT, connect=5.0)
        return client


def embedded_chroma(path: Path) -> Any:
    import chromadb
    from chromadb.config import Settings

    return chromadb.PersistentClient(
        path=str(path), settings=Settings(anonymized_telemetry=False)
    )


# The start of an HNSW segment's header.bin, as Chroma's hnswlib persists it
# (version 1): version, level-0 offset, capacity, element count, element size,
# then where in an element its label and its vector are.
_HNSW_HEADER = struct.Struct("<iQQQQQQ")
# Its files sized by capacity, and the bytes each element takes in them
# (None: the element size in the header).
_HNSW_ARRAYS = (("data_level0.bin", None), ("length.bin", 4))
_DELETED = 0x01  # hnswlib's mark, in the third byte of an element's level-0 links


def scrub_embedded(path: Path) -> bool:
    """Leave no byte of a deleted vector, nor of what Chroma's memory held, in
    the files of an embedded Chroma that no client has open, at the cost of
    what Chroma dropped rather than of all it holds. Returns False if a
    segment's files are not in the format known here: they are left as they
    are.

    What keeps what was deleted or never written:

    - the SQLite file's queue of writes (each with its vector) and its free
      space: the writes Chroma applied and purged from that queue, the rows
      of deleted vectors. The queue is written again with each vector's last
      write alone and every free page filled with zeros, with SQLite's
      `secure_delete` on, in place of a `VACUUM`;
    - the folder of a dropped collection's HNSW segment (Chroma leaves it):
      deleted;
    - a live segment's arrays: a deleted vector stays in them, marked
      deleted (searches here never read Chroma's HNSW index: they compare
      every vector of a scope exactly), and past the element count they hold
      whatever the process's memory held, written from buffers never filled
      (measured: metadata strings, timestamps, and once in four redactions
      the erased text). Both are zeroed.
    """
    import sqlite3

    conn = sqlite3.connect(path / "chroma.sqlite3", timeout=30, isolation_level=None)
    try:
        live = {str(row[0]) for row in conn.execute("SELECT id FROM segments")}
        _zero_free_space(conn)
    finally:
        conn.close()
    known = True
    for folder in path.iterdir():
        if not folder.is_dir() or not _is_uuid(folder.name):
            continue
        if folder.name not in live:
            shutil.rmtree(folder)
        elif not _zero_unused(folder):
            known = False
    return known


def _zero_free_space(conn: Any) -> None:
    """Overwrite every byte of Chroma's SQLite file that no row holds, and
    every write of its queue that a later one of the same vector replaced:
    the queue written again with `secure_delete` on (a page of it keeps
    purged writes in its free space), then the free pages zeroed
    (`zero_free_pages`), and the write-ahead log emptied into the file."""
    conn.execute("PRAGMA secure_delete = ON")
    conn.execute("BEGIN IMMEDIATE")
    try:
        # Only each vector's last write: an earlier one is replaced by it
        # (a deletion, an upsert), applied or not.
        last = {
            (row[3], row[4]): row  # (topic, id), in seq_id order
            for row in conn.execute("SELECT * FROM embeddings_queue ORDER BY seq_id")
        }
        conn.execute("DELETE FROM embeddings_queue")
        if last:
            queue = sorted(last.values())
            marks = ", ".join("?" * len(queue[0]))
            conn.executemany(f"INSERT INTO embeddings_queue VALUES ({marks})", queue)
        conn.execute("COMMIT")
    except BaseException:
        conn.execute("ROLLBACK")
        raise
    zero_free_pages(conn)
    conn.execute("PRAGMA wal_checkpoint(TRUNCATE)")


def _is_uuid(name: str) -> bool:
    try:
        uuid.UUID(name)
    except ValueError:
        return False
    return True


def _zero_unused(segment: Path) -> bool:
    """Zero the vectors of an HNSW segment's deleted elements, and what its
    arrays hold past their element count (a new segment's are written for
    its whole capacity). Returns False if its files are not as version 1
    writes them."""
    import numpy as np

    header = segment / "header.bin"
    if not header.exists():
        return True  # nothing persisted yet
    raw = header.read_bytes()
    if len(raw) < _HNSW_HEADER.size:
        return False
    version, level0, capacity, count, size, label, data = _HNSW_HEADER.unpack_from(raw)
    arrays = [(segment / name, width or size) for name, width in _HNSW_ARRAYS]
    if (
        version != 1
        or count > capacity
        or not level0 + 4 <= data <= label <= size
        or not all(
            file.exists() and count * width <= file.stat().st_size <= capacity * width
            for file, width in arrays
        )
    ):
        return False
    # Only what holds bytes still: what an earlier scrub zeroed is left.
    if count:
        mapped = np.memmap(arrays[0][0], dtype=np.uint8, mode="r")
        elements = mapped[: count * size].reshape(count, size)
        deleted = np.flatnonzero(elements[:, level0 + 2] & _DELETED)
        deleted = deleted[elements[deleted, data:label].any(axis=1)]
        del elements, mapped
        vectors = [(int(n) * size + data, label - data) for n in deleted]
        zero_spans(arrays[0][0], vectors)
    for file, width in arrays:
        if file.stat().st_size > count * width:
            unused = np.memmap(file, dtype=np.uint8, mode="r", offset=count * width)
            if unused.any():
                zero_spans(file, [(count * width, len(unused))])
            del unused
    return True


def forget_chroma(path: Path) -> None:
    """Drop Chroma's cached client system for `path`: it caches one per path in
    the process, a broken one too, and would hand it out again."""
    from chromadb.api.shared_system_client import SharedSystemClient

    SharedSystemClient._identifier_to_system.pop(str(path), None)


def closed_chroma(path: Path) -> bool:
    """Whether no client of this process has the embedded Chroma at `path`
    open (its last `close` stops it, and it has written its files)."""
    from chromadb.api.shared_system_client import SharedSystemClient

    return str(path) not in SharedSystemClient._identifier_to_system


class ChromaLock:
    """An embedded Chroma directory is one process's: held by every store of
    this process that opened it, refused to any other process.

    Embedded Chroma is not built for several writer processes (measured: 45x
    slower writes, then a crash or a hang on the next search), so a second
    process gets an error naming the way that works, a Chroma server.
    """

    _held: ClassVar[dict[Path, tuple[int, int]]] = {}  # path -> (fd, holders)
    _guard = threading.Lock()

    def __init__(self, path: Path) -> None:
        self.path = path

    @classmethod
    def acquire(cls, path: Path) -> ChromaLock:
        """Hold `path` for this process.

        Raises:
            ConfigError: If another process holds it.
        """
        key = path.resolve()
        with cls._guard:
            fd, holders = cls._held.get(key, (-1, 0))
            if not holders and fcntl is not None:
                key.parent.mkdir(parents=True, exist_ok=True)
                fd = os.open(key.with_name(f"{key.name}.lock"), os.O_RDWR | os.O_CREAT)
                try:
                    fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
                except BlockingIOError:
                    os.close(fd)
                    raise ConfigError(
                        f"another process has this store's embedded vector index "
                        f"({key}) open, and embedded Chroma serves one process. To "
                        "share the store, run a Chroma server (`chroma run --path "
                        f"{key}`) and open the store in every process with "
                        "chroma_url='http://host:8000'"
                    ) from None
            cls._held[key] = (fd, holders + 1)
        return cls(key)

    def release(self) -> None:
        """Let go; the last holder in the process unlocks the directory."""
        with self._guard:
            fd, holders = self._held.pop(self.path)
            if holders > 1:
                self._held[self.path] = (fd, holders - 1)
            elif fd >= 0:
                os.close(fd)  # closing the descriptor drops the lock


def server_address(client: Any) -> str:
    """Where a Chroma server client connects (`http://host:port`), or `"?"`."""
    try:
        settings = client.get_settings()
        host, port = settings.chroma_server_host, settings.chroma_server_http_port
        scheme = "https" if settings.chroma_server_ssl_enabled else "http"
    except Exception:  # a client of another kind: no address to name
        return "?"
    return f"{scheme}://{host}:{port}"


def unreachable(where: str, exc: BaseException) -> StorageError:
    """The error a search by meaning raises while the Chroma server at `where`
    is away."""
    words = str(exc).strip()
    cause = words.splitlines()[0] if words else type(exc).__name__
    return StorageError(
        f"searching by meaning is unavailable: the Chroma server at {where} "
        f"cannot be reached ({cause}). Writes still commit to the log and their "
        "vectors catch up when it answers again; search without query= still works"
    )
