"""The checkpointer's SQL in one place: tables, named migrations, queries, and the
reads that take several statements.

The tables follow LangGraph's `SqliteSaver` (checkpoints, and the pending writes
of their tasks), with metadata kept as JSON text so SQLite's JSON functions can
filter on it. They live in the store's own database file, next to the versioned
log, created by the engine's named-migration runner under their own names:

    >>> [m.name for m in MIGRATIONS]  # doctest: +NORMALIZE_WHITESPACE
    ['checkpoint_0001_tables', 'checkpoint_0002_run_index_skips_plain_runs',
     'checkpoint_0003_memory_seq_column']

A checkpoint's memory position (the store's `seq` when it was made) is a column
of its own, `memory_seq`, beside the metadata: the metadata stays as the graph
wrote it.

`ChronoCheckpointer` holds no SQL text: it calls a `CheckpointSQL`'s methods
with a cursor inside one of the engine's transactions. `CheckpointSQL` is the
SQLite dialect; `postgres.py` subclasses it for PostgreSQL, replacing
statement texts and leaving the reads that take several statements here:

    >>> SQLITE.MIGRATIONS is MIGRATIONS
    True

Just over 600 lines because its migrations are kept as released and every
statement the saver runs is here, so a reader finds all of it in one place.
"""

from __future__ import annotations

import json
from collections.abc import Callable, Mapping, Sequence
from typing import Any, cast

from langgraph_chronomem.engine.rows import chunks
from langgraph_chronomem.engine.schema import Migration
from langgraph_chronomem.engine.sql import Cursor, Statement
from langgraph_chronomem.errors import InvalidFilterError, InvalidValueError

__all__ = [
    "MIGRATIONS",
    "SEQ_KEY",
    "SQLITE",
    "CheckpointSQL",
    "PendingWrite",
    "Row",
    "canonical_json",
    "metadata_json",
]

# The metadata key where checkpoints kept their memory position before
# `checkpoint_0003_memory_seq_column` moved it to a column.
SEQ_KEY = "chronomem_seq"

# thread_id, checkpoint_ns, checkpoint_id, parent_checkpoint_id, type, blob,
# metadata, memory_seq
Row = tuple[str, str, str, "str | None", str, bytes, str, "int | None"]
PendingWrite = tuple[str, str, str, bytes]  # task_id, channel, type, value
Loads = Callable[[tuple[str, bytes]], Any]

MIGRATIONS = [
    Migration(
        "checkpoint_0001_tables",
        (
            """CREATE TABLE checkpoints (
                thread_id TEXT NOT NULL,
                checkpoint_ns TEXT NOT NULL DEFAULT '',
                checkpoint_id TEXT NOT NULL,
                parent_checkpoint_id TEXT,
                type TEXT,
                checkpoint BLOB,
                metadata TEXT NOT NULL,
                PRIMARY KEY (thread_id, checkpoint_ns, checkpoint_id)
            )""",
            """CREATE TABLE checkpoint_writes (
                thread_id TEXT NOT NULL,
                checkpoint_ns TEXT NOT NULL DEFAULT '',
                checkpoint_id TEXT NOT NULL,
                task_id TEXT NOT NULL,
                task_path TEXT NOT NULL DEFAULT '',
                idx INTEGER NOT NULL,
                channel TEXT NOT NULL,
                type TEXT,
                value BLOB,
                PRIMARY KEY (thread_id, checkpoint_ns, checkpoint_id, task_id, idx)
            )""",
            # `delete_for_runs` finds a run's checkpoints without a scan.
            """CREATE INDEX checkpoints_by_run
                ON checkpoints (json_extract(metadata, '$.run_id'))""",
            # A thread's memory commits in log order, where `stamp` cuts.
            """CREATE INDEX commits_by_thread
                ON commits (json_extract(labels, '$.thread_id'), seq)""",
        ),
    ),
    Migration(
        "checkpoint_0002_run_index_skips_plain_runs",
        (
            # A checkpoint without a run_id (any run outside LangGraph's server)
            # no longer costs an index page per put; `delete_for_runs`' `IN`
            # implies NOT NULL, so it still finds runs through the index.
            "DROP INDEX checkpoints_by_run",
            """CREATE INDEX checkpoints_by_run
                ON checkpoints (json_extract(metadata, '$.run_id'))
                WHERE json_extract(metadata, '$.run_id') IS NOT NULL""",
        ),
    ),
    Migration(
        "checkpoint_0003_memory_seq_column",
        (
            # The memory position leaves the user's metadata for a column, so
            # metadata reads back exactly as the graph wrote it.
            "ALTER TABLE checkpoints ADD COLUMN memory_seq INTEGER",
            f"""UPDATE checkpoints SET
                memory_seq = json_extract(metadata, '$.{SEQ_KEY}'),
                metadata = json_remove(metadata, '$.{SEQ_KEY}')
                WHERE json_type(metadata, '$.{SEQ_KEY}') = 'integer'""",
        ),
    ),
]

COLUMNS = (
    "thread_id, checkpoint_ns, checkpoint_id, parent_checkpoint_id, type, "
    "checkpoint, metadata, memory_seq"
)
WRITE_COLUMNS = (
    "thread_id, checkpoint_ns, checkpoint_id, task_id, task_path, idx, channel, "
    "type, value"
)


def canonical_json(value: Any) -> str:
    """JSON as metadata is stored: sorted keys, no spaces, no NaN.

    SQLite's `json_extract` returns objects and arrays in this minified form, so
    equal values compare equal as text.

    Raises:
        TypeError, ValueError: For a value JSON cannot hold.
    """
    return json.dumps(
        value,
        sort_keys=True,
        separators=(",", ":"),
        ensure_ascii=False,
        allow_nan=False,
    )


def metadata_json(metadata: Mapping[str, Any]) -> str:
    """Checkpoint metadata as stored (`canonical_json`).

    Raises:
        InvalidValueError: If it is not JSON.
    """
    try:
        return canonical_json(metadata)
    except (TypeError, ValueError) as error:
        raise InvalidValueError(f"checkpoint metadata must be JSON: {error}") from error


def check_key(key: str) -> str:
    """A top-level metadata key a filter may name.

    Raises:
        InvalidFilterError: For an empty key, or one with quotes or control
            characters.
    """
    if (
        not isinstance(key, str)
        or not key
        or '"' in key
        or any(ord(c) < 32 for c in key)
    ):
        raise InvalidFilterError(
            f"invalid metadata filter key {key!r}: use a non-empty key without "
            "quotes or control characters, e.g. 'source'"
        )
    return key


class CheckpointSQL:
    """The checkpointer's statements and multi-statement reads, on SQLite.

    A dialect for another database subclasses it and replaces the statement
    texts (class attributes) and `metadata_filter`; the methods that run them
    stay here, one copy for every database.
    """

    MIGRATIONS: Sequence[Migration] = MIGRATIONS
    TABLE = "checkpoints"
    WRITES_TABLE = "checkpoint_writes"
    SELECT = "SELECT {columns} FROM {checkpoints}"  # a `Row` per checkpoint

    def __init__(self) -> None:
        # The statements below name tables and column lists as `{checkpoints}`,
        # `{writes}`, `{columns}`..., which each dialect's names fill in here.
        names = {
            "checkpoints": self.TABLE,
            "writes": self.WRITES_TABLE,
            "columns": COLUMNS,
            "write_columns": WRITE_COLUMNS,
        }
        for name in dir(self):
            text = getattr(self, name)
            if not name.isupper() or name in ("TABLE", "WRITES_TABLE"):
                continue
            if isinstance(text, str):
                setattr(self, name, text.format(**names))
            elif isinstance(text, tuple):
                setattr(self, name, tuple(part.format(**names) for part in text))
        self.CHECKPOINT = (
            f"{self.SELECT} "
            "WHERE thread_id = ? AND checkpoint_ns = ? AND checkpoint_id = ?"
        )
        self.LATEST = (
            f"{self.SELECT} WHERE thread_id = ? AND checkpoint_ns = ? "
            "ORDER BY checkpoint_id DESC LIMIT 1"
        )

    # -- checkpoints ----------------------------------------------------------

    LATEST_ID = (
        "SELECT MAX(checkpoint_id) FROM {checkpoints} "
        "WHERE thread_id = ? AND checkpoint_ns = ?"
    )
    LATEST_PER_NAMESPACE = (
        "SELECT checkpoint_ns, MAX(checkpoint_id) FROM {checkpoints} "
        "WHERE thread_id = ? GROUP BY checkpoint_ns"
    )
    UPSERT = (
        "INSERT OR REPLACE INTO {checkpoints} ({columns}) "
        "VALUES (?, ?, ?, ?, ?, ?, ?, ?)"
    )
    # For `chronomem migrate`: whether any checkpoint is stored, and a copied
    # checkpoint's memory position put back as the source holds it.
    ANY_CHECKPOINT = "SELECT EXISTS (SELECT 1 FROM {checkpoints})"
    SET_STAMP = (
        "UPDATE {checkpoints} SET memory_seq = ? "
        "WHERE thread_id = ? AND checkpoint_ns = ? AND checkpoint_id = ?"
    )

    # The parent chain of one checkpoint, target first, then nearest ancestor
    # first. `CROSS JOIN` keeps `chain` outside, so each step is one primary-key
    # lookup. A re-put id can close the chain into a loop: `walk` stops on a
    # repeated id, and SQLite computes recursive rows only as they are read.
    ANCESTORS = (
        "WITH RECURSIVE chain(checkpoint_id, parent_checkpoint_id, type, "
        "checkpoint) AS ("
        "SELECT checkpoint_id, parent_checkpoint_id, type, checkpoint "
        "FROM {checkpoints} "
        "WHERE thread_id = ? AND checkpoint_ns = ? AND checkpoint_id = ? "
        "UNION ALL "
        "SELECT c.checkpoint_id, c.parent_checkpoint_id, c.type, c.checkpoint "
        "FROM chain CROSS JOIN {checkpoints} AS c "
        "ON c.checkpoint_id = chain.parent_checkpoint_id "
        "WHERE c.thread_id = ? AND c.checkpoint_ns = ?"
        ") SELECT checkpoint_id, type, checkpoint FROM chain"
    )

    def row(
        self, cur: Cursor, thread_id: str, ns: str, checkpoint_id: str | None
    ) -> Row | None:
        """One checkpoint row: the one named, else the latest of the namespace."""
        if checkpoint_id:
            found = cur.execute(
                self.CHECKPOINT, (thread_id, ns, checkpoint_id)
            ).fetchone()
        else:
            found = cur.execute(self.LATEST, (thread_id, ns)).fetchone()
        return cast("Row | None", found)

    def save(
        self,
        cur: Cursor,
        columns: Sequence[Any],
        metadata: Mapping[str, Any],
        seq: int,
    ) -> None:
        """Write a checkpoint row: `columns` up to the metadata, then the
        metadata and its memory position `seq`.

        Raises:
            InvalidValueError: If the metadata is not JSON (nothing is written).
        """
        cur.execute(self.UPSERT, (*columns, metadata_json(metadata), seq))

    def latest_id(self, cur: Cursor, thread_id: str, ns: str) -> str | None:
        """The id of the namespace's latest checkpoint (ids are time-ordered)."""
        found = cur.execute(self.LATEST_ID, (thread_id, ns)).fetchone()
        return cast("str | None", found[0])

    # -- pending writes -------------------------------------------------------

    # In `writes_sort_key` order, (task_path, task_id, idx): SQLite compares
    # TEXT byte by byte, and UTF-8 byte order is code point order, as in Python.
    WRITES = (
        "SELECT task_id, channel, type, value FROM {writes} "
        "WHERE thread_id = ? AND checkpoint_ns = ? AND checkpoint_id = ? "
        "ORDER BY task_path, task_id, idx"
    )
    # Special channels (errors, interrupts…) replace; a retried task's regular
    # writes keep the first copy, as in LangGraph's savers.
    REPLACE_WRITE = (
        "INSERT OR REPLACE INTO {writes} ({write_columns}) "
        "VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?)"
    )
    KEEP_WRITE = REPLACE_WRITE.replace("OR REPLACE", "OR IGNORE")

    def put_writes(
        self, cur: Cursor, rows: Sequence[Sequence[Any]], *, replace: bool
    ) -> None:
        """Store a task's writes (rows of `WRITE_COLUMNS`), the transaction's
        only statements: `replace` (special channels) overwrites an existing
        write, else the first copy stays."""
        cur.executemany(self.REPLACE_WRITE if replace else self.KEEP_WRITE, rows)

    def writes(self, cur: Cursor, row: Row) -> list[PendingWrite]:
        """The pending writes of a checkpoint row, in `writes_sort_key` order."""
        return cast("list[PendingWrite]", cur.execute(self.WRITES, row[:3]).fetchall())

    def channel_writes(
        self,
        cur: Cursor,
        thread_id: str,
        ns: str,
        channel: str,
        checkpoint_ids: Sequence[str],
    ) -> list[tuple[str, str, str, bytes]]:
        """One channel's writes at the given checkpoints: (checkpoint_id,
        task_id, type, value), each checkpoint's in `writes_sort_key` order."""
        found = []
        for chunk in chunks(checkpoint_ids):
            found += cur.execute(
                f"SELECT checkpoint_id, task_id, type, value FROM {self.WRITES_TABLE} "
                "WHERE thread_id = ? AND checkpoint_ns = ? AND channel = ? "
                f"AND checkpoint_id IN ({','.join('?' * len(chunk))}) "
                "ORDER BY task_path, task_id, idx",
                (thread_id, ns, channel, *chunk),
            ).fetchall()
        return found

    def walk(
        self,
        cur: Cursor,
        loads: Loads,
        thread_id: str,
        ns: str,
        target: str,
        channels: Sequence[str],
    ) -> tuple[dict[str, list[str]], dict[str, Any]]:
        """Walk `target`'s parents, per channel, to the nearest stored value.

        Returns each channel's ancestors visited (nearest first; the one
        holding the value included) and the values found (the seeds). Each
        ancestor is decoded once, whatever the number of channels.
        """
        chains: dict[str, list[str]] = {channel: [] for channel in channels}
        seeds: dict[str, Any] = {}
        active = set(channels)
        walked: set[str] = set()
        rows = cur.execute(self.ANCESTORS, (thread_id, ns, target, thread_id, ns))
        for checkpoint_id, kind, blob in rows:
            if not walked:  # the target itself: its writes are still pending
                walked.add(checkpoint_id)
                continue
            if not active or checkpoint_id in walked:
                break
            walked.add(checkpoint_id)
            for channel in active:
                chains[channel].append(checkpoint_id)
            values = loads((kind, blob)).get("channel_values") or {}
            for channel in [c for c in active if c in values]:
                seeds[channel] = values[channel]
                active.discard(channel)
        return chains, seeds

    # -- whole threads --------------------------------------------------------

    DELETE_THREAD = (
        "DELETE FROM {checkpoints} WHERE thread_id = ?",
        "DELETE FROM {writes} WHERE thread_id = ?",
    )
    COPY_THREAD = (
        "INSERT OR REPLACE INTO {checkpoints} ({columns}) SELECT ?, checkpoint_ns, "
        "checkpoint_id, parent_checkpoint_id, type, checkpoint, metadata, "
        "memory_seq FROM {checkpoints} WHERE thread_id = ?",
        "INSERT OR REPLACE INTO {writes} ({write_columns}) SELECT ?, "
        "checkpoint_ns, checkpoint_id, task_id, task_path, idx, channel, type, "
        "value FROM {writes} WHERE thread_id = ?",
    )
    RUN_ID = "json_extract(metadata, '$.run_id')"  # what `checkpoints_by_run` holds

    def delete_runs(self, cur: Cursor, run_ids: Sequence[str]) -> None:
        """Delete the checkpoints of these runs (`metadata.run_id`) and their
        writes."""
        for chunk in chunks(run_ids):
            runs = f"{self.RUN_ID} IN ({','.join('?' * len(chunk))})"
            cur.execute(
                f"DELETE FROM {self.WRITES_TABLE} WHERE (thread_id, checkpoint_ns, "
                "checkpoint_id) IN (SELECT thread_id, checkpoint_ns, checkpoint_id "
                f"FROM {self.TABLE} WHERE {runs})",
                tuple(chunk),
            )
            cur.execute(f"DELETE FROM {self.TABLE} WHERE {runs}", tuple(chunk))

    def delete_thread(self, cur: Cursor, thread_id: str) -> None:
        """Delete a thread's checkpoints and writes."""
        for statement in self.DELETE_THREAD:
            cur.execute(statement, (thread_id,))

    def copy_thread(self, cur: Cursor, source: str, target: str) -> None:
        """Copy a thread's checkpoints and writes to another thread id."""
        for statement in self.COPY_THREAD:
            cur.execute(statement, (target, source))

    def keep_latest(self, cur: Cursor, loads: Loads, thread_id: str) -> None:
        """Keep each namespace's latest checkpoint, and what its delta channels
        need.

        A `DeltaChannel` that has not snapshotted at the latest checkpoint
        (`counters_since_delta_snapshot`) is rebuilt from its ancestors' writes
        back to the nearest stored value, so those ancestors and their writes
        stay.
        """
        latest_per_ns = cur.execute(self.LATEST_PER_NAMESPACE, (thread_id,))
        for ns, latest in latest_per_ns.fetchall():
            metadata = json.loads(
                cur.execute(self.CHECKPOINT, (thread_id, ns, latest)).fetchone()[6]
            )
            pending = list(metadata.get("counters_since_delta_snapshot") or {})
            chains, _ = self.walk(cur, loads, thread_id, ns, latest, pending)
            keep = list(
                dict.fromkeys(
                    [latest, *(c for chain in chains.values() for c in chain)]
                )
            )
            where = (
                "thread_id = ? AND checkpoint_ns = ? "
                f"AND checkpoint_id NOT IN ({','.join('?' * len(keep))})"
            )
            for table in (self.TABLE, self.WRITES_TABLE):
                cur.execute(
                    f"DELETE FROM {table} WHERE {where}", (thread_id, ns, *keep)
                )

    # -- memory positions -----------------------------------------------------

    # Where checkpoint ?3 of thread ?1, namespace ?2, put after parent ?4,
    # stands: its stamp, the last memory commit before its tasks wrote, is just
    # before the first commit by a task of the thread that ran from ?3 or a
    # later checkpoint (ids are time-ordered uuid6, so that commit came after
    # the checkpoint was made, even when LangGraph saved the checkpoint later),
    # else the last commit; none can precede the parent's stamp. And whether
    # the namespace holds a checkpoint newer than the parent (the put forks the
    # thread's past).
    STAMP = (
        "SELECT COALESCE(("
        "SELECT MIN(seq) - 1 FROM commits "
        "WHERE json_extract(labels, '$.thread_id') = ?1 "
        "AND json_extract(labels, '$.checkpoint_id') >= ?3 "
        "AND seq > COALESCE(("
        "SELECT memory_seq FROM {checkpoints} "
        "WHERE thread_id = ?1 AND checkpoint_ns = ?2 AND checkpoint_id = ?4"
        "), 0)"
        "), (SELECT COALESCE(MAX(seq), 0) FROM commits)), "
        "EXISTS (SELECT 1 FROM {checkpoints} "
        "WHERE thread_id = ?1 AND checkpoint_ns = ?2 AND checkpoint_id > ?4)"
    )
    # Versions grow with seq inside a scope: this reads only versions after `seq`.
    VERSION_AT = (
        "SELECT version FROM commits WHERE scope = ? AND seq <= ? "
        "ORDER BY version DESC LIMIT 1"
    )

    def stamp(
        self,
        cur: Cursor,
        thread_id: str,
        ns: str,
        checkpoint_id: str,
        parent_id: str | None,
    ) -> tuple[int, bool]:
        """Where a checkpoint about to be put stands: its memory stamp, and
        whether its namespace already holds a checkpoint newer than its parent.

        The stamp is the last memory commit before the checkpoint's tasks
        wrote. LangGraph saves checkpoints in the background, so a node may
        have written memory before its checkpoint is put. Its commits carry the
        thread and the checkpoint they ran from, and the cut falls just before
        the first one from this checkpoint or a later one, after the parent's
        stamp.
        """
        seq, newer = cur.execute(
            self.STAMP, (thread_id, ns, checkpoint_id, parent_id)
        ).fetchone()
        return int(seq), bool(newer)

    def put(
        self,
        cur: Cursor,
        columns: Sequence[Any],
        metadata: Mapping[str, Any],
        *,
        unless_newer: bool,
        alone: bool = False,
    ) -> tuple[int, bool]:
        """`stamp` a checkpoint and `save` it with its stamp; with
        `unless_newer`, not when its namespace holds a checkpoint newer than
        its parent (a fork, which the caller may rewind first). `columns` are
        `save`'s. Returns `stamp`'s answer. `alone`: the put is the whole
        transaction (a database that can send it as one statement does).

        Raises:
            InvalidValueError: If the metadata is not JSON (nothing is written).
        """
        seq, newer = self.stamp(cur, *columns[:4])
        if not (unless_newer and newer):
            self.save(cur, columns, metadata, seq)
        return seq, newer

    def version_at(self, cur: Cursor, scope: str, seq: int) -> int:
        """The version a scope (as stored text) had after commit `seq`; 0
        before any."""
        found = cur.execute(self.VERSION_AT, (scope, seq)).fetchone()
        return int(found[0]) if found else 0

    # -- list -----------------------------------------------------------------

    def metadata_filter(self, filter: Mapping[str, Any]) -> tuple[list[str], list[Any]]:
        """SQL conditions matching metadata whose top-level keys equal the values.

        Equality respects JSON types, like `==` on the decoded metadata except
        that `True` never matches `1`; `None` also matches a missing key:

            >>> SQLITE.metadata_filter({"source": "loop"})[0]
            ["json_type(metadata, ?) IN ('text') AND json_extract(metadata, ?) = ?"]

        Raises:
            InvalidFilterError: For an unsafe key or a value that is not JSON.
        """
        conditions: list[str] = []
        params: list[Any] = []
        for key, value in filter.items():
            path = f'$."{check_key(key)}"'  # a bound parameter, never SQL
            if value is None:
                conditions.append("COALESCE(json_type(metadata, ?), 'null') = 'null'")
                params.append(path)
                continue
            if isinstance(value, bool):
                conditions.append("json_type(metadata, ?) = ?")
                params += [path, "true" if value else "false"]
                continue
            operand: Any = value
            if isinstance(value, (int, float)):
                kinds = "'integer', 'real'"
            elif isinstance(value, str):
                kinds = "'text'"
            elif isinstance(value, (list, tuple, Mapping)):
                kinds, operand = "'array', 'object'", canonical_json(value)
            else:
                raise InvalidFilterError(f"cannot filter metadata {key!r} by {value!r}")
            conditions.append(
                f"json_type(metadata, ?) IN ({kinds}) AND json_extract(metadata, ?) = ?"
            )
            params += [path, path, operand]
        return conditions, params

    def list_page(
        self,
        *,
        thread_id: str | None,
        checkpoint_ns: str | None,
        checkpoint_id: str | None,
        filter: Mapping[str, Any] | None,
        before: str | None,
        after_key: Sequence[str] | None,
        limit: int,
    ) -> Statement:
        """One page of `list`, newest first.

        `after_key` is the previous page's last row as (checkpoint_id,
        thread_id, checkpoint_ns); this page continues below it.
        """
        conditions: list[str] = []
        params: list[Any] = []
        for column, value in (
            ("thread_id", thread_id),
            ("checkpoint_ns", checkpoint_ns),
            ("checkpoint_id", checkpoint_id),
        ):
            if value is not None:
                conditions.append(f"{column} = ?")
                params.append(value)
        if filter:
            more, more_params = self.metadata_filter(filter)
            conditions += more
            params += more_params
        if before is not None:
            conditions.append("checkpoint_id < ?")
            params.append(before)
        if after_key is not None:
            conditions.append("(checkpoint_id, thread_id, checkpoint_ns) < (?, ?, ?)")
            params += list(after_key)
        where = f"WHERE {' AND '.join(conditions)} " if conditions else ""
        return Statement(
            f"{self.SELECT} {where}"
            "ORDER BY checkpoint_id DESC, thread_id DESC, checkpoint_ns DESC "
            "LIMIT ?",
            (*params, limit),
        )


SQLITE = CheckpointSQL()
