"""Erased bytes out of a SQLite file, at the cost of what was erased.

`VACUUM` rewrites the whole file to leave nothing but live rows: its cost is
the file's size. A redaction made with SQLite's `secure_delete` on has zeroed
in place every cell it rewrote or deleted; what is left is the free pages
(`zero_free_pages`) and, now and then, a copy an older write left in a page's
free space (a row that grew moved within its page). `holding` reads the file
for the erased texts, so a caller can rewrite it only when one is still there.

    >>> import sqlite3, tempfile, pathlib
    >>> path = pathlib.Path(tempfile.mkdtemp()) / "demo.sqlite3"
    >>> conn = sqlite3.connect(path, isolation_level=None)
    >>> _ = conn.execute("PRAGMA secure_delete = OFF")  # most builds' default
    >>> _ = conn.execute("CREATE TABLE notes (text TEXT)")
    >>> _ = conn.execute("INSERT INTO notes VALUES (?)", ("Zorbanite " * 2000,))
    >>> _ = conn.execute("DELETE FROM notes")  # its pages freed, not zeroed
    >>> path.read_bytes().count(b"Zorbanite")
    1995
    >>> zero_free_pages(conn)
    >>> path.read_bytes().count(b"Zorbanite")  # the start of the row, in its page
    363
    >>> holding(path, ["Zorbanite", "Lyon"])  # so the file is rewritten
    ['Zorbanite']
    >>> conn.close()
"""

from __future__ import annotations

import mmap
import os
from collections.abc import Sequence
from pathlib import Path
from typing import Any

__all__ = ["holding", "zero_free_pages", "zero_spans"]

_ZEROS = "chronomem_zeros"  # the scratch table whose row of zeros fills the pages


def zero_free_pages(conn: Any) -> None:
    """Overwrite every free page of the connection's database with zeros, in
    one transaction: a row of zeros as large as the free space takes the
    pages (SQLite reuses free pages before it grows the file), and is
    dropped again with `secure_delete` on. Costs what is free, not the file.
    The caller empties the write-ahead log into the file after."""
    before = conn.execute("PRAGMA secure_delete").fetchone()[0]
    conn.execute("PRAGMA secure_delete = ON")
    try:
        conn.execute("BEGIN IMMEDIATE")
        try:
            (free,) = conn.execute("PRAGMA freelist_count").fetchone()
            (page,) = conn.execute("PRAGMA page_size").fetchone()
            if free:
                conn.execute(f"CREATE TABLE {_ZEROS} (zeros BLOB)")
                conn.execute(
                    f"INSERT INTO {_ZEROS} VALUES (zeroblob(?))", (free * page,)
                )
                conn.execute(f"DROP TABLE {_ZEROS}")
            conn.execute("COMMIT")
        except BaseException:
            conn.execute("ROLLBACK")
            raise
    finally:
        conn.execute(f"PRAGMA secure_delete = {int(before)}")


def holding(path: Path, texts: Sequence[str]) -> list[str]:
    """Which of `texts` the file's bytes hold (UTF-8, as written)."""
    if not path.exists() or not path.stat().st_size:
        return []
    with (
        path.open("rb") as file,
        mmap.mmap(file.fileno(), 0, access=mmap.ACCESS_READ) as data,
    ):
        return [text for text in texts if data.find(text.encode()) >= 0]


_BLOCK = bytes(1 << 20)
# Up to this many spans, each write is made durable alone (`RWF_DSYNC`, about
# 0.4 ms each); past it, the file is synced once.
_SYNCED_ALONE = 64


def zero_spans(path: Path, spans: Sequence[tuple[int, int]]) -> None:
    """Overwrite these `(offset, length)` spans of a file with zeros, on disk
    before this returns. A few spans are each made durable alone, where the
    system can (`RWF_DSYNC`): an `fsync` also writes out whatever else of the
    file waits in the page cache, a cost that can grow with the file
    (measured: 80 ms for a 100k-vector file just copied).

        >>> import tempfile
        >>> path = Path(tempfile.mkdtemp()) / "demo.bin"
        >>> _ = path.write_bytes(b"keep Zorbanite keep")
        >>> zero_spans(path, [(5, 9)])
        >>> path.read_bytes()
        b'keep \\x00\\x00\\x00\\x00\\x00\\x00\\x00\\x00\\x00 keep'
    """
    dsync: int = getattr(os, "RWF_DSYNC", 0)
    alone = bool(dsync) and len(spans) <= _SYNCED_ALONE
    fd = os.open(path, os.O_WRONLY)
    try:
        for offset, length in spans:
            while length > 0:
                block = memoryview(_BLOCK)[: min(length, len(_BLOCK))]
                if alone:
                    written = os.pwritev(fd, [block], offset, dsync)
                else:
                    written = os.pwrite(fd, block, offset)
                offset, length = offset + written, length - written
        if not alone:
            os.fsync(fd)
    finally:
        os.close(fd)
