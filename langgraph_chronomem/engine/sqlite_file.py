"""The SQLite file under the log: opening it (read-write in WAL mode, or read-only)
and what its storage failures mean.

SQLite reports a full disk, a file that is no database or read-only media as
plain `sqlite3` errors whose text is SQLite's own; `storage_error` turns those a
caller can act on into a `StorageError` that names the fix:

    >>> import sqlite3
    >>> from pathlib import Path
    >>> full = sqlite3.OperationalError("database or disk is full")
    >>> print(storage_error(Path("/data/log.sqlite3"), full, wrote=True))
    cannot use /data/log.sqlite3: the disk is full: free some space, then retry \
(SQLite: database or disk is full); the write was rolled back, nothing was written
    >>> bug = sqlite3.OperationalError("no such table: x")
    >>> storage_error(Path("/data/log.sqlite3"), bug, wrote=False) is None
    True
"""

from __future__ import annotations

import os
import sqlite3
import time
from pathlib import Path

from langgraph_chronomem.errors import StorageError

__all__ = ["CACHE_KIB", "connect", "enable_wal", "storage_error"]

# SQLite's page cache per connection, in KiB (its default is 2,000). A scan
# (a filtered search, a rollback's reads) pages through the whole table, and a
# log keeps every version, so at 10k items it no longer fit the default and
# every search read it again from the OS. Pages are allocated as they are read,
# so a small store uses no more than it holds.
CACHE_KIB = 65_536

# SQLite's own text for the storage failures a caller can act on, and the fix.
_FAULTS = {
    "database or disk is full": "the disk is full: free some space, then retry",
    "database is locked": (
        "another process held the write lock longer than busy_timeout: retry, "
        "or open the store with a longer busy_timeout"
    ),
    "file is not a database": (
        "it is not a SQLite database: point from_path at a store's directory, "
        "or move the file aside"
    ),
    "database disk image is malformed": (
        "the file is damaged: restore it from a backup (the sqlite3 shell's "
        ".recover salvages what is left)"
    ),
    "disk I/O error": "the disk reported an I/O error: check the device, then retry",
    "unable to open database file": (
        "it cannot be opened: check that its directory exists and can be written"
    ),
    "attempt to write a readonly database": "it cannot be written",
}
_NOT_WRITABLE = (
    "it is on read-only media or lacks write permission: open it with "
    "read_only=True to read it"
)


def storage_error(
    path: Path, exc: sqlite3.Error, *, wrote: bool
) -> StorageError | None:
    """The `StorageError` for a storage failure of the database at `path`, or
    `None` for any other SQLite error (a bug in a statement, a broken constraint).

    `wrote` says the failure rolled back a write, which the message then says.
    """
    text = str(exc)
    hint = next((fix for fault, fix in _FAULTS.items() if fault in text), None)
    if hint is None:
        return None
    cannot_write = "open" in text or "readonly" in text
    if cannot_write and not os.access(path.parent, os.W_OK):
        hint = _NOT_WRITABLE
    rolled_back = "; the write was rolled back, nothing was written"
    return StorageError(
        f"cannot use {path}: {hint} (SQLite: {exc})" + (rolled_back if wrote else "")
    )


def connect(path: Path, timeout: float, *, read_only: bool) -> sqlite3.Connection:
    """Open the database file. A read-only open never creates or changes a file.

    It uses `mode=ro`, which sees other processes' writes. On read-only media a
    store that was closed cleanly has no `-wal` and `-shm` files and SQLite
    cannot create them; then the file alone holds every commit, and it is opened
    `immutable`.

    Raises:
        StorageError: If there is no database to open read-only, or it has
            writes in its `-wal` file that read-only media keeps SQLite from reading.
    """

    def open_(target: str | Path, *, uri: bool = False) -> sqlite3.Connection:
        return sqlite3.connect(
            target,
            timeout=timeout,
            isolation_level=None,
            check_same_thread=False,
            uri=uri,
        )

    if not read_only:
        return _with_cache(open_(path))
    if not path.is_file():
        raise StorageError(
            f"there is no store at {path.parent}: read_only=True opens an existing "
            "store only"
        )
    address = path.resolve().as_uri()
    conn = open_(f"{address}?mode=ro", uri=True)
    try:
        conn.execute("SELECT count(*) FROM sqlite_master").fetchone()
        return _with_cache(conn)
    except sqlite3.OperationalError:
        conn.close()
    wal = path.with_name(path.name + "-wal")
    if wal.exists() and wal.stat().st_size:
        raise StorageError(
            f"{path} has writes in {wal.name} that SQLite cannot read on read-only "
            "media; open the store once where it can be written (or copy it "
            "there) to fold them in"
        )
    return _with_cache(open_(f"{address}?immutable=1", uri=True))


def _with_cache(conn: sqlite3.Connection) -> sqlite3.Connection:
    """The connection, with a page cache of `CACHE_KIB` (set once it is open:
    on read-only media a pragma before the first read fails)."""
    conn.execute(f"PRAGMA cache_size = -{CACHE_KIB}")
    return conn


def enable_wal(conn: sqlite3.Connection, timeout: float) -> None:
    """Switch to WAL, waiting out other openers.

    Turning a new file to WAL needs an exclusive lock, and SQLite reports "locked"
    at once there instead of using the busy timeout, so two processes creating
    the same store together would fail without this retry.
    """
    deadline = time.monotonic() + timeout
    while True:
        try:
            conn.execute("PRAGMA journal_mode=WAL")
            return
        except sqlite3.OperationalError as exc:
            if "locked" not in str(exc) or time.monotonic() > deadline:
                raise
            time.sleep(0.005)
