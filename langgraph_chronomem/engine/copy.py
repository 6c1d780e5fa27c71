"""Copying the log table by table to another database: the part of
`langgraph_chronomem.migrate` that knows the tables. No LangGraph here.

Commits are copied in `seq` order, a batch per destination transaction, with the
rows they wrote, their ids and seqs kept; each batch's changes are indexed for
the undo search in the same transaction, and the destination's id counters are
moved past the source's (`id_floors` on SQLite, the sequences on PostgreSQL).

    >>> import tempfile, pathlib
    >>> from langgraph_chronomem.engine.sqlite import SqliteEngine
    >>> from langgraph_chronomem.engine.types import CommitMeta, Write
    >>> src = SqliteEngine(pathlib.Path(tempfile.mkdtemp()) / "log.db")
    >>> dst = SqliteEngine(pathlib.Path(tempfile.mkdtemp()) / "log.db")
    >>> with src.transaction(write=True) as tx:
    ...     _ = tx.commit([Write(("notes",), "a", {"t": "hi"})], CommitMeta())
    >>> check_destination(src, dst, checkpoints=False)
    (0, False)
    >>> copy_log(src, dst, after=0, batch_size=100, progress=lambda done, total: None)
    1
    >>> with dst.transaction(write=False) as tx:
    ...     [(c.seq, c.summary) for c in tx.log(())]
    [(1, 'created notes/a: hi')]
    >>> src.close(); dst.close()
"""

from __future__ import annotations

import json
from collections.abc import Callable, Sequence
from datetime import datetime, timezone
from typing import Any

from langgraph_chronomem.engine.base import LogTransaction
from langgraph_chronomem.engine.feed import VECTOR_LOG
from langgraph_chronomem.engine.protocol import LogEngine
from langgraph_chronomem.engine.sql import _ROWS, _ROWS_OF_C, Dialect
from langgraph_chronomem.engine.sqlite import SqliteEngine
from langgraph_chronomem.engine.values import decode_time
from langgraph_chronomem.errors import DestinationNotEmptyError

__all__ = [
    "COUNTS",
    "MARK",
    "check_destination",
    "copy_log",
    "mark",
    "reconcile",
]

MARK = "migration"  # the destination's meta row saying a copy is under way or done
_COMMITS = (
    "seq, scope, version, parent, created_at, author, reason, op, target, labels, "
    "first_id, last_id"
)
_ITEMS = (
    "id, scope, version, valid_to, namespace, key, value, prev_id, created_at, "
    "updated_at, ttl_minutes, expires_at, index_fields"
)
_SELECT_COMMITS = f"SELECT {_COMMITS} FROM commits WHERE seq > ? ORDER BY seq LIMIT ?"
_SELECT_COMMIT = f"SELECT {_COMMITS} FROM commits WHERE seq = ?"
_SELECT_ITEMS = (
    f"SELECT {', '.join('i.' + c for c in _ITEMS.split(', '))} FROM {_ROWS} "
    f"WHERE {_ROWS_OF_C} AND c.seq > ? AND c.seq <= ? ORDER BY i.id"
)
# The columns of a row a later commit can still change: its end of validity
# (a replacement, a reset reopening it), its expiry (a TTL refresh), and its
# value (erased by a redaction).
_MUTABLE = (
    "SELECT id, valid_to, expires_at, value, index_fields FROM items "
    "WHERE id > ? AND id <= ? ORDER BY id"
)
_SET_MUTABLE = (
    "UPDATE items SET valid_to = ?, expires_at = ?, value = ?, index_fields = ? "
    "WHERE id = ?"
)
# What else a redaction rewrites: the record of erased values, commit reasons
# and labels.
_ERASED = "SELECT id, seq, why FROM erased WHERE id > ? AND id <= ? ORDER BY id"
_TEXTS = (
    "SELECT seq, reason, labels FROM commits WHERE seq > ? AND seq <= ? ORDER BY seq"
)
_ROWS_OF_SEQ = (
    f"SELECT i.id FROM {_ROWS} WHERE {_ROWS_OF_C} AND c.seq = ? ORDER BY i.id"
)
_LAST_COMMIT = "SELECT coalesce(max(seq), 0) FROM commits"
_TEXT_COLUMNS = tuple(
    _COMMITS.split(", ").index(column) for column in ("reason", "labels")
)
# The columns holding times, which each engine stores its own way
# (`Dialect.encode_time`).
_COMMIT_TIMES = (_COMMITS.split(", ").index("created_at"),)
_ITEM_TIMES = tuple(
    _ITEMS.split(", ").index(column) for column in ("created_at", "updated_at")
)
COUNTS = "SELECT (SELECT count(*) FROM commits), (SELECT count(*) FROM items)"
_LAST_ID = "SELECT coalesce(max(id), 0) FROM items"
_META = "SELECT name, value FROM chronomem_meta ORDER BY name"
# Tags are few, and a later run's `tag`/`untag` may change any: every run
# copies them whole.
_TAG_COLUMNS = "scope, name, version, seq, created_at"
_TAGS = f"SELECT {_TAG_COLUMNS} FROM tags ORDER BY scope, name"
_INSERT_TAG = f"INSERT INTO tags ({_TAG_COLUMNS}) VALUES (?, ?, ?, ?, ?)"
# Branches likewise (a merge moves `merged`), with their ids: a branch's id is
# its mount, which its rows' namespaces hold.
_BRANCH_COLUMNS = "id, scope, name, fork, fork_seq, merged, created_at"
_BRANCHES = f"SELECT {_BRANCH_COLUMNS} FROM branches ORDER BY id"
_BRANCH_TIMES = (_BRANCH_COLUMNS.split(", ").index("created_at"),)
# The highest id each table has given, deleted rows included (a reset), so the
# copy never hands one out again: SQLite keeps it in `id_floors`, PostgreSQL in
# the column's sequence.
_SQLITE_FLOOR = "SELECT coalesce(max(id), 0) FROM id_floors WHERE name = ?"
_SQLITE_KEEP_FLOOR = (
    "INSERT INTO id_floors (name, id) VALUES (?, ?) "
    "ON CONFLICT (name) DO UPDATE SET id = max(id, excluded.id)"
)
_PG_FLOOR = (
    "SELECT coalesce(pg_sequence_last_value(pg_get_serial_sequence(?, ?)::regclass), 0)"
)
# `setval` is not undone by a rollback; it only ever moves the counter up.
_PG_KEEP_FLOOR = (
    "SELECT setval(s, greatest(?, coalesce(pg_sequence_last_value(s), 0))) "
    "FROM (SELECT pg_get_serial_sequence(?, ?)::regclass AS s) AS q"
)
_ID_COLUMNS = {"items": "id", "commits": "seq", "branches": "id"}


def check_destination(
    src: LogEngine, dst: LogEngine, *, checkpoints: bool
) -> tuple[int, bool]:
    """The seq to continue after (0 for a fresh copy), and whether an earlier
    copy was interrupted. `checkpoints` says whether `dst` holds any.

    Raises:
        DestinationNotEmptyError: If `dst` holds data that is not an earlier
            copy of `src`.
    """
    with dst.transaction(write=False) as tx:
        mark = tx.meta(MARK)
        commits, items = tx.cur.execute(COUNTS).fetchone()
        last = int(tx.cur.execute(tx.sql.LAST_SEQ).fetchone()[0])
        ours = tx.cur.execute(_SELECT_COMMIT, (last,)).fetchone()
    if mark is None:
        if commits or items or checkpoints:
            what = f"{commits} commits" if commits else "checkpoints"
            raise DestinationNotEmptyError(
                f"the destination already holds {what} of another store; copy "
                "into a new directory or an empty database"
            )
        return 0, False
    interrupted = json.loads(mark)["state"] != "done"
    if not last:
        return 0, interrupted
    with src.transaction(write=False) as tx:
        theirs = tx.cur.execute(_SELECT_COMMIT, (last,)).fetchone()
    if theirs is None or _but_texts(theirs) != _but_texts(ours):
        raise DestinationNotEmptyError(
            f"the destination holds a copy whose commit seq {last} the source does "
            "not have (the source was reset, or the copy was written to since): "
            "copy into a new directory or an empty database"
        )
    return last, interrupted


def copy_log(
    src: LogEngine,
    dst: LogEngine,
    *,
    after: int,
    batch_size: int,
    progress: Callable[[int, int], None],
) -> int:
    """Copy the commits after seq `after` and their rows, a batch per
    destination transaction, indexing each batch's changes in it, then every
    tag. Returns how many commits were copied; tells `progress` (commits at
    `dst`, of how many)."""
    with src.transaction(write=False) as tx:
        total = int(tx.cur.execute(COUNTS).fetchone()[0])
        meta = [tuple(row) for row in tx.cur.execute(_META).fetchall()]
        floors = {table: _floor(src, tx, table) for table in _ID_COLUMNS}
    with dst.transaction(write=False) as tx:
        done = int(tx.cur.execute(COUNTS).fetchone()[0])
    mark(dst, "copying", src, meta=meta)
    progress(done, total)
    copied = 0
    while True:
        with src.transaction(write=False) as tx:
            commits = tx.cur.execute(_SELECT_COMMITS, (after, batch_size)).fetchall()
            if not commits:
                break
            last = commits[-1][0]
            items = tx.cur.execute(_SELECT_ITEMS, (after, last)).fetchall()
        with dst.transaction(write=True) as tx:
            for scope in dict.fromkeys(row[1] for row in commits):
                if not scope.startswith("."):  # a branch's: not in `scopes`
                    tx.cur.execute(tx.sql.ADD_SCOPE, (scope,))
            tx.cur.executemany(
                _insert(dst, "items", _ITEMS), _timed(items, _ITEM_TIMES, tx.sql)
            )
            tx.cur.executemany(
                _insert(dst, "commits", _COMMITS),
                _timed(commits, _COMMIT_TIMES, tx.sql),
            )
            last_id = int(tx.cur.execute(_LAST_ID).fetchone()[0])
            _keep_floor(dst, tx, "items", last_id)
            _keep_floor(dst, tx, "commits", last)
            tx.index_changes()
        after, copied = last, copied + len(commits)
        progress(done + copied, max(total, done + copied))
    with src.transaction(write=False) as tx:
        tags = [tuple(row) for row in tx.cur.execute(_TAGS).fetchall()]
        branches = tx.cur.execute(_BRANCHES).fetchall()
    with dst.transaction(write=True) as tx:
        for table, floor in floors.items():
            _keep_floor(dst, tx, table, floor)
        tx.cur.execute("DELETE FROM tags")
        tx.cur.executemany(_INSERT_TAG, tags)
        tx.cur.execute("DELETE FROM branches")
        tx.cur.executemany(
            _insert(dst, "branches", _BRANCH_COLUMNS),
            _timed(branches, _BRANCH_TIMES, tx.sql),
        )
        if branches:
            _keep_floor(dst, tx, "branches", max(row[0] for row in branches))
    return copied


def _insert(engine: LogEngine, table: str, columns: str) -> str:
    """An INSERT keeping the source's ids: PostgreSQL's identity columns take
    them only when told to."""
    override = "" if isinstance(engine, SqliteEngine) else " OVERRIDING SYSTEM VALUE"
    marks = ", ".join("?" * len(columns.split(", ")))
    return f"INSERT INTO {table} ({columns}){override} VALUES ({marks})"


def _floor(engine: LogEngine, tx: LogTransaction, table: str) -> int:
    """The highest id `table` has given, deleted rows included."""
    if isinstance(engine, SqliteEngine):
        row = tx.cur.execute(_SQLITE_FLOOR, (table,)).fetchone()
    else:
        row = tx.cur.execute(_PG_FLOOR, (table, _ID_COLUMNS[table])).fetchone()
    return int(row[0])


def _keep_floor(engine: LogEngine, tx: LogTransaction, table: str, floor: int) -> None:
    """Make the destination's next id in `table` come after `floor`."""
    if floor < 1:
        return
    if isinstance(engine, SqliteEngine):
        tx.cur.execute(_SQLITE_KEEP_FLOOR, (table, floor))
    else:
        tx.cur.execute(_PG_KEEP_FLOOR, (floor, table, _ID_COLUMNS[table]))


def _timed(
    rows: Sequence[Sequence[Any]], columns: Sequence[int], to: Dialect
) -> list[tuple[Any, ...]]:
    """Rows with the times in `columns` as `to`'s engine stores them."""
    return [
        tuple(
            to.encode_time(decode_time(v)) if i in columns and v is not None else v
            for i, v in enumerate(row)
        )
        for row in rows
    ]


def _but_texts(commit: Sequence[Any]) -> tuple[Any, ...]:
    """A commit row without its reason and labels, which a redaction may
    rewrite, and with its time read (each engine stores it its own way)."""
    return tuple(
        decode_time(v) if i in _COMMIT_TIMES else v
        for i, v in enumerate(commit)
        if i not in _TEXT_COLUMNS
    )


def reconcile(src: LogEngine, dst: LogEngine, chunk: int = 50_000) -> bool:
    """Bring what later commits change of copied rows up to the source's: a
    commit between two runs of a resumed copy closes, refreshes or (a
    redaction) erases rows and rewrites reasons and labels an earlier run
    copied, and the record of erased values is copied here for every run.
    Rows whose text changed are indexed again for the undo search. Returns
    whether an earlier run's copy of a value, reason or label was erased: its
    old bytes are still in the destination's file until it is scrubbed."""
    erasing = False
    with dst.transaction(write=False) as tx:
        top = int(tx.cur.execute(_LAST_ID).fetchone()[0])
        last = int(tx.cur.execute(_LAST_COMMIT).fetchone()[0])
    for low in range(0, top, chunk):
        window = (low, low + chunk)
        with src.transaction(write=False) as tx:
            theirs = {row[0]: tuple(row) for row in tx.cur.execute(_MUTABLE, window)}
            erased = [tuple(row) for row in tx.cur.execute(_ERASED, window)]
        with dst.transaction(write=False) as tx:
            stale = [
                (*theirs[row[0]][1:], row[0])
                for row in tx.cur.execute(_MUTABLE, window)
                if row[0] in theirs and theirs[row[0]] != tuple(row)
            ]
            known = {tuple(row) for row in tx.cur.execute(_ERASED, window)}
        erased = [row for row in erased if row not in known]
        erasing = erasing or any(row[2] is None for row in stale)  # its value
        if stale or erased:
            with dst.transaction(write=True) as tx:
                tx.cur.executemany(_SET_MUTABLE, stale)
                tx.cur.executemany(tx.sql.RECORD_ERASURE, erased)
                tx.index_again([row[-1] for row in stale] + [row[0] for row in erased])
    for low in range(0, last, chunk):
        window = (low, low + chunk)
        with src.transaction(write=False) as tx:
            theirs = {row[0]: tuple(row[1:]) for row in tx.cur.execute(_TEXTS, window)}
        with dst.transaction(write=False) as tx:
            rewritten = [
                (*theirs[row[0]], row[0])
                for row in tx.cur.execute(_TEXTS, window)
                if row[0] in theirs and theirs[row[0]] != tuple(row[1:])
            ]
        erasing = erasing or bool(rewritten)
        if rewritten:
            with dst.transaction(write=True) as tx:
                tx.cur.executemany(
                    tx.sql.SET_REASON, [(reason, seq) for reason, _, seq in rewritten]
                )
                tx.cur.executemany(
                    tx.sql.SET_LABELS, [(labels, seq) for _, labels, seq in rewritten]
                )
                rows = [
                    row[0]
                    for *_, seq in rewritten
                    for row in tx.cur.execute(_ROWS_OF_SEQ, (seq,)).fetchall()
                ]
                tx.index_again(rows)
    return erasing


def mark(
    engine: LogEngine,
    state: str,
    source: LogEngine,
    *,
    meta: Sequence[tuple[str, str]] = (),
) -> None:
    """Record at the destination that a copy is under way (with the source's
    settings) or done, and where from (no password)."""
    # PostgresEngine.where: host, port and database, never the password.
    where = source.path if isinstance(source, SqliteEngine) else source.where  # type: ignore[attr-defined]
    with engine.transaction(write=True) as tx:
        for name, value in meta:
            if name not in (MARK, VECTOR_LOG):
                tx.set_meta(name, value)
        tx.set_meta(
            MARK,
            json.dumps({
                "source": str(where),
                "state": state,
                "at": datetime.now(timezone.utc).isoformat(),
            }),
        )  # fmt: skip
