"""The design ChronoStore is measured against: a whole-memory snapshot per write.

This is the commit-on-write idea of the ChronoMem paper taken literally: every
write materialises the entire memory as a new version, so a put copies every
item, and a rollback copies an old snapshot forward as the newest version (like
ChronoStore, history is kept rather than truncated). Reads only look at HEAD.
It is deliberately plain: one `snapshots` table keyed by
`(version, namespace, key)` in SQLite, with the same pragmas as the other stores.

    >>> import pathlib, tempfile
    >>> store = NaiveSnapshotStore(pathlib.Path(tempfile.mkdtemp()) / "naive.sqlite3")
    >>> store.put(("notes",), "a", {"text": "hi"})
    >>> store.put(("notes",), "a", {"text": "bye"})
    >>> store.rollback(to=1)
    3
    >>> store.get(("notes",), "a").value
    {'text': 'hi'}
    >>> store.close()

Only what the benchmark needs is there: get, put (and delete), search with an
equality filter, rollback. Listing namespaces raises `NotImplementedError`.
"""

from __future__ import annotations

import asyncio
import sqlite3
import threading
from collections.abc import Iterable, Iterator, Mapping, Sequence
from contextlib import contextmanager
from datetime import datetime, timezone
from pathlib import Path
from typing import Any

import orjson
from langgraph.store.base import (
    BaseStore,
    GetOp,
    Item,
    Op,
    PutOp,
    Result,
    SearchItem,
    SearchOp,
)

__all__ = ["NaiveSnapshotStore"]

_SCHEMA = (
    """CREATE TABLE IF NOT EXISTS versions (
        version INTEGER PRIMARY KEY,
        op TEXT NOT NULL,
        created_at TEXT NOT NULL
    )""",
    # One row per item per version: version v holds the whole memory at v.
    """CREATE TABLE IF NOT EXISTS snapshots (
        version INTEGER NOT NULL,
        namespace TEXT NOT NULL,
        key TEXT NOT NULL,
        value TEXT NOT NULL,
        created_at TEXT NOT NULL,
        updated_at TEXT NOT NULL,
        PRIMARY KEY (version, namespace, key)
    ) WITHOUT ROWID""",
)
_COLUMNS = "namespace, key, value, created_at, updated_at"


def _namespace_text(namespace: Sequence[str]) -> str:
    return ".".join(namespace)


def _now() -> str:
    return datetime.now(timezone.utc).isoformat()


def _fields(row: Sequence[Any]) -> dict[str, Any]:
    """An item's constructor arguments from a `_COLUMNS` row."""
    namespace, key, value, created, updated = row
    return {
        "namespace": tuple(namespace.split(".")),
        "key": key,
        "value": orjson.loads(value),
        "created_at": datetime.fromisoformat(created),
        "updated_at": datetime.fromisoformat(updated),
    }


def _filter_sql(filter: Mapping[str, Any] | None) -> tuple[str, list[Any]]:
    """Equality on top-level fields, the only filter this store understands."""
    sql, params = "", []
    for field, wanted in (filter or {}).items():
        if not isinstance(wanted, (str, int, float)) or isinstance(wanted, bool):
            raise ValueError(f"only equality on str/int/float is supported: {field}")
        sql += " AND json_extract(value, ?) = ?"
        params += [f'$."{field}"', wanted]
    return sql, params


class NaiveSnapshotStore(BaseStore):
    """A LangGraph store that copies the whole memory on every write.

    Args:
        path: The SQLite database file (created if missing).
        synchronous: SQLite's `synchronous` pragma, as for ChronoStore.
    """

    def __init__(self, path: str | Path, *, synchronous: str = "FULL") -> None:
        self._lock = threading.Lock()
        self.conn = sqlite3.connect(path, isolation_level=None, check_same_thread=False)
        self.conn.execute("PRAGMA journal_mode=WAL")
        self.conn.execute(f"PRAGMA synchronous={synchronous}")
        for statement in _SCHEMA:
            self.conn.execute(statement)

    @contextmanager
    def _transaction(self, *, write: bool) -> Iterator[sqlite3.Cursor]:
        with self._lock:
            self.conn.execute("BEGIN IMMEDIATE" if write else "BEGIN")
            try:
                yield self.conn.cursor()
            except BaseException:
                self.conn.execute("ROLLBACK")
                raise
            self.conn.execute("COMMIT")

    def head(self) -> int:
        """The newest version (0 before the first write)."""
        with self._transaction(write=False) as cur:
            return self._head(cur)

    @staticmethod
    def _head(cur: sqlite3.Cursor) -> int:
        (head,) = cur.execute(
            "SELECT coalesce(max(version), 0) FROM versions"
        ).fetchone()
        return int(head)

    def batch(self, ops: Iterable[Op]) -> list[Result]:
        """Answer the reads at HEAD, then write one new snapshot for all the puts."""
        ops = list(ops)
        puts = [op for op in ops if isinstance(op, PutOp)]
        with self._transaction(write=bool(puts)) as cur:
            head = self._head(cur)
            results = [self._read(cur, head, op) for op in ops]
            if puts:
                self._commit(cur, head, puts)
        return results

    async def abatch(self, ops: Iterable[Op]) -> list[Result]:
        """Async `batch`, run in a worker thread."""
        return await asyncio.to_thread(self.batch, list(ops))

    def rollback(self, to: int) -> int:
        """Copy the snapshot at `to` forward as a new version; return that version."""
        with self._transaction(write=True) as cur:
            head = self._head(cur)
            if not 0 <= to <= head:
                raise KeyError(f"no version {to}; versions are 0..{head}")
            return self._new_version(cur, "rollback", head + 1, source=to)

    def _read(self, cur: sqlite3.Cursor, head: int, op: Op) -> Result:
        if isinstance(op, PutOp):
            return None
        if isinstance(op, GetOp):
            row = cur.execute(
                f"SELECT {_COLUMNS} FROM snapshots "
                "WHERE version = ? AND namespace = ? AND key = ?",
                (head, _namespace_text(op.namespace), op.key),
            ).fetchone()
            return None if row is None else Item(**_fields(row))
        if isinstance(op, SearchOp):
            return self._search(cur, head, op)
        raise NotImplementedError(f"{type(op).__name__} is not part of this baseline")

    @staticmethod
    def _search(cur: sqlite3.Cursor, head: int, op: SearchOp) -> list[SearchItem]:
        prefix = _namespace_text(op.namespace_prefix)
        # Every namespace below `a.b` sorts between `a.b.` and `a.b/`.
        filter_sql, filter_params = _filter_sql(op.filter)
        rows = cur.execute(
            f"SELECT {_COLUMNS} FROM snapshots WHERE version = ? "
            "AND (? = '' OR namespace = ? OR (namespace > ? AND namespace < ?))"
            f"{filter_sql} ORDER BY updated_at DESC LIMIT ? OFFSET ?",
            (
                head,
                prefix,
                prefix,
                prefix + ".",
                prefix + "/",
                *filter_params,
                op.limit,
                op.offset,
            ),
        ).fetchall()
        return [SearchItem(**_fields(row)) for row in rows]

    def _commit(self, cur: sqlite3.Cursor, head: int, puts: Sequence[PutOp]) -> None:
        """Materialise HEAD as a new version, then apply the puts to it."""
        version = self._new_version(cur, "write", head + 1, source=head)
        now = _now()
        for op in puts:
            ns = _namespace_text(op.namespace)
            if op.value is None:
                cur.execute(
                    "DELETE FROM snapshots "
                    "WHERE version = ? AND namespace = ? AND key = ?",
                    (version, ns, op.key),
                )
                continue
            cur.execute(
                f"INSERT INTO snapshots (version, {_COLUMNS}) "
                "VALUES (?, ?, ?, ?, ?, ?) "
                "ON CONFLICT (version, namespace, key) DO UPDATE "
                "SET value = excluded.value, updated_at = excluded.updated_at",
                (version, ns, op.key, orjson.dumps(dict(op.value)).decode(), now, now),
            )

    @staticmethod
    def _new_version(cur: sqlite3.Cursor, op: str, version: int, *, source: int) -> int:
        """Add `version`, holding a full copy of the snapshot at `source`."""
        cur.execute(
            "INSERT INTO versions (version, op, created_at) VALUES (?, ?, ?)",
            (version, op, _now()),
        )
        cur.execute(
            f"INSERT INTO snapshots (version, {_COLUMNS}) "
            f"SELECT ?, {_COLUMNS} FROM snapshots WHERE version = ?",
            (version, source),
        )
        return version

    def close(self) -> None:
        """Close the database."""
        with self._lock:
            self.conn.close()
