"""The checkpointer's SQL on PostgreSQL: what differs from SQLite's (`sql.py`).

The tables are LangGraph's `PostgresSaver`'s shapes with one difference: a
checkpoint is one `BYTEA` blob, as `ChronoCheckpointer` serializes it on
SQLite, not split into per-channel blobs. Metadata is `JSONB`. They are named
`chronomem_checkpoints` and `chronomem_checkpoint_writes`, so a database that
already holds `PostgresSaver`'s `checkpoints` keeps them, and both savers can
share it. The engine's migration runner creates them, each step in one
transaction with its record:

    >>> [m.name for m in POSTGRES.MIGRATIONS]
    ['checkpoint_0001_postgres_tables', 'checkpoint_0002_postgres_memory_seq_column']
    >>> POSTGRES.metadata_filter({"source": "loop"})
    (['metadata -> ? = ?::jsonb'], ['source', '"loop"'])

Statements keep the shared `?` placeholders; the engine's cursor turns them
into psycopg's `%s`.
"""

from __future__ import annotations

import base64
from collections.abc import Mapping, Sequence
from typing import Any, cast

import orjson

from langgraph_chronomem.checkpoint.sql import (
    SEQ_KEY,
    SQLITE,
    WRITE_COLUMNS,
    CheckpointSQL,
    PendingWrite,
    Row,
    canonical_json,
    check_key,
    metadata_json,
)
from langgraph_chronomem.engine.protocol import LogEngine
from langgraph_chronomem.engine.schema import Migration
from langgraph_chronomem.engine.sql import Cursor
from langgraph_chronomem.engine.sqlite import SqliteEngine
from langgraph_chronomem.errors import InvalidFilterError

__all__ = ["POSTGRES", "PostgresCheckpointSQL", "dialect_for"]

# Ids and task paths compare by byte, as on SQLite: `checkpoint_id > ?` and
# the order of pending writes (`writes_sort_key`) must not follow the
# database's collation (ICU's en-US on the test server).
MIGRATIONS = [
    Migration(
        "checkpoint_0001_postgres_tables",
        (
            """CREATE TABLE chronomem_checkpoints (
                thread_id TEXT COLLATE "C" NOT NULL,
                checkpoint_ns TEXT COLLATE "C" NOT NULL DEFAULT '',
                checkpoint_id TEXT COLLATE "C" NOT NULL,
                parent_checkpoint_id TEXT COLLATE "C",
                type TEXT,
                checkpoint BYTEA,
                metadata JSONB NOT NULL,
                PRIMARY KEY (thread_id, checkpoint_ns, checkpoint_id)
            )""",
            """CREATE TABLE chronomem_checkpoint_writes (
                thread_id TEXT COLLATE "C" NOT NULL,
                checkpoint_ns TEXT COLLATE "C" NOT NULL DEFAULT '',
                checkpoint_id TEXT COLLATE "C" NOT NULL,
                task_id TEXT COLLATE "C" NOT NULL,
                task_path TEXT COLLATE "C" NOT NULL DEFAULT '',
                idx INTEGER NOT NULL,
                channel TEXT COLLATE "C" NOT NULL,
                type TEXT,
                value BYTEA,
                PRIMARY KEY (thread_id, checkpoint_ns, checkpoint_id, task_id, idx)
            )""",
            # `delete_for_runs` finds a run's checkpoints without a scan; a
            # checkpoint without a run_id costs no index entry.
            """CREATE INDEX chronomem_checkpoints_by_run
                ON chronomem_checkpoints ((metadata ->> 'run_id'))
                WHERE metadata ->> 'run_id' IS NOT NULL""",
            # A thread's memory commits in log order, where `stamp` cuts.
            """CREATE INDEX commits_by_thread
                ON commits ((labels::jsonb ->> 'thread_id'), seq)""",
        ),
    ),
    Migration(
        "checkpoint_0002_postgres_memory_seq_column",
        (
            # As on SQLite: the memory position leaves the user's metadata.
            "ALTER TABLE chronomem_checkpoints ADD COLUMN memory_seq BIGINT",
            f"""UPDATE chronomem_checkpoints SET
                memory_seq = (metadata ->> '{SEQ_KEY}')::bigint,
                metadata = metadata - '{SEQ_KEY}'
                WHERE jsonb_typeof(metadata -> '{SEQ_KEY}') = 'number'""",
        ),
    ),
]

_UPDATE = (
    "parent_checkpoint_id = EXCLUDED.parent_checkpoint_id, type = EXCLUDED.type, "
    "checkpoint = EXCLUDED.checkpoint, metadata = EXCLUDED.metadata, "
    "memory_seq = EXCLUDED.memory_seq"
)
_UPDATE_WRITE = (
    "task_path = EXCLUDED.task_path, channel = EXCLUDED.channel, "
    "type = EXCLUDED.type, value = EXCLUDED.value"
)
_KEY = "(thread_id, checkpoint_ns, checkpoint_id)"
# Where a checkpoint stands (see `CheckpointSQL.STAMP`), over the parameters `p`.
_PARAMS = (
    "p AS (SELECT ?::text AS thread_id, ?::text AS ns, "
    "?::text AS checkpoint_id, ?::text AS parent_id)"
)
_SEQ = (
    "COALESCE(("
    "SELECT MIN(c.seq) - 1 FROM commits AS c "
    "WHERE (c.labels::jsonb ->> 'thread_id') = p.thread_id "
    "AND (c.labels::jsonb ->> 'checkpoint_id') COLLATE \"C\" >= p.checkpoint_id "
    "AND c.seq > COALESCE(("
    "SELECT k.memory_seq FROM {checkpoints} AS k "
    "WHERE k.thread_id = p.thread_id AND k.checkpoint_ns = p.ns "
    "AND k.checkpoint_id = p.parent_id"
    "), 0)"
    "), (SELECT COALESCE(MAX(seq), 0) FROM commits))"
)
_NEWER = (
    "COALESCE((SELECT MAX(k.checkpoint_id) FROM {checkpoints} AS k "
    "WHERE k.thread_id = p.thread_id AND k.checkpoint_ns = p.ns) "
    "> p.parent_id, false)"
)
_WRITE_KEY = "(thread_id, checkpoint_ns, checkpoint_id, task_id, idx)"
_WRITE_FIELDS = WRITE_COLUMNS.split(", ")


def _base64(value: bytes | None) -> str | None:
    return None if value is None else base64.b64encode(value).decode()


class PostgresCheckpointSQL(CheckpointSQL):
    """The checkpointer's statements on PostgreSQL (>= 14).

    Metadata is read back as JSON text (`metadata::text`), so a checkpoint row
    is the same `Row` on both databases (and then its pending writes).
    """

    MIGRATIONS = MIGRATIONS
    TABLE = "chronomem_checkpoints"
    WRITES_TABLE = "chronomem_checkpoint_writes"
    # A row carries its pending writes, in `writes_sort_key` order, as an
    # array of (task_id, channel, type, value) arrays: a read is one round trip.
    SELECT = (
        "SELECT thread_id, checkpoint_ns, checkpoint_id, parent_checkpoint_id, "
        "type, checkpoint, metadata::text, memory_seq, (SELECT array_agg(array["
        "convert_to(w.task_id, 'UTF8'), convert_to(w.channel, 'UTF8'), "
        "convert_to(w.type, 'UTF8'), w.value] "
        "ORDER BY w.task_path, w.task_id, w.idx) FROM {writes} AS w "
        "WHERE w.thread_id = c.thread_id AND w.checkpoint_ns = c.checkpoint_ns "
        "AND w.checkpoint_id = c.checkpoint_id) FROM {checkpoints} AS c"
    )
    UPSERT = (
        "INSERT INTO {checkpoints} ({columns}) "
        "VALUES (?, ?, ?, ?, ?, ?, ?::jsonb, ?) "
        f"ON CONFLICT {_KEY} DO UPDATE SET {_UPDATE}"
    )
    REPLACE_WRITE = (
        "INSERT INTO {writes} ({write_columns}) VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?) "
        f"ON CONFLICT {_WRITE_KEY} DO UPDATE SET {_UPDATE_WRITE}"
    )
    KEEP_WRITE = (
        "INSERT INTO {writes} ({write_columns}) VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?) "
        "ON CONFLICT DO NOTHING"
    )
    # A task's writes in one statement: one JSON array of rows, values in
    # base64 (psycopg took ~0.2 ms to send nine column arrays, 1.3x
    # PostgresSaver's whole `put_writes`).
    PUT_WRITES = (
        "INSERT INTO {writes} ({write_columns}) SELECT w.thread_id, "
        "w.checkpoint_ns, w.checkpoint_id, w.task_id, w.task_path, w.idx, "
        "w.channel, w.type, decode(w.value, 'base64') FROM json_to_recordset(?::json) "
        "AS w (thread_id text, checkpoint_ns text, checkpoint_id text, task_id text, "
        "task_path text, idx integer, channel text, type text, value text) "
        "ON CONFLICT "
    )
    # PostgreSQL computes a recursive query's rows before returning any, so a
    # re-put id that closes the chain into a loop stops it here (`CYCLE`).
    ANCESTORS = (
        "WITH RECURSIVE chain(checkpoint_id, parent_checkpoint_id, type, "
        "checkpoint) AS ("
        "SELECT checkpoint_id, parent_checkpoint_id, type, checkpoint "
        "FROM {checkpoints} "
        "WHERE thread_id = ? AND checkpoint_ns = ? AND checkpoint_id = ? "
        "UNION ALL "
        "SELECT c.checkpoint_id, c.parent_checkpoint_id, c.type, c.checkpoint "
        "FROM chain JOIN {checkpoints} AS c "
        "ON c.checkpoint_id = chain.parent_checkpoint_id "
        "WHERE c.thread_id = ? AND c.checkpoint_ns = ?"
        ") CYCLE checkpoint_id SET looped USING path "
        "SELECT checkpoint_id, type, checkpoint FROM chain "
        "ORDER BY cardinality(path)"
    )
    COPY_THREAD = (
        "INSERT INTO {checkpoints} ({columns}) SELECT ?::text, checkpoint_ns, "
        "checkpoint_id, parent_checkpoint_id, type, checkpoint, metadata, memory_seq "
        f"FROM {{checkpoints}} WHERE thread_id = ? "
        f"ON CONFLICT {_KEY} DO UPDATE SET {_UPDATE}",
        "INSERT INTO {writes} ({write_columns}) SELECT ?::text, checkpoint_ns, "
        "checkpoint_id, task_id, task_path, idx, channel, type, value "
        f"FROM {{writes}} WHERE thread_id = ? "
        f"ON CONFLICT {_WRITE_KEY} DO UPDATE SET {_UPDATE_WRITE}",
    )
    RUN_ID = "(metadata ->> 'run_id')"
    # As on SQLite (see there). The four parameters are named once in `p`, as
    # psycopg has no numbered placeholders; a newer checkpoint is found from the
    # namespace's latest id, one index probe.
    STAMP = f"WITH {_PARAMS} SELECT {_SEQ}, {_NEWER} FROM p"
    # `stamp` and `save` in one statement, one round trip: the stamp is
    # computed in SQL. The last parameter is `unless_newer`.
    PUT = (
        f"WITH {_PARAMS}, s AS (SELECT {_SEQ} AS seq, {_NEWER} AS newer FROM p), "
        "saved AS (INSERT INTO {checkpoints} ({columns}) "
        "SELECT p.thread_id, p.ns, p.checkpoint_id, p.parent_id, ?, ?, "
        "?::jsonb, s.seq FROM p, s "
        "WHERE NOT (s.newer AND ?::boolean) "
        f"ON CONFLICT {_KEY} DO UPDATE SET {_UPDATE}) "
        "SELECT seq, newer FROM s"
    )

    def put(
        self,
        cur: Cursor,
        columns: Sequence[Any],
        metadata: Mapping[str, Any],
        *,
        unless_newer: bool,
        alone: bool = False,
    ) -> tuple[int, bool]:
        """`CheckpointSQL.put` in one statement; `alone`, sent without `BEGIN`
        and `COMMIT` (`Cursor.alone`): one round trip.

        Raises:
            InvalidValueError: If the metadata is not JSON (nothing is written).
        """
        params = (*columns, metadata_json(metadata), unless_newer)
        run = cur.alone if alone else cur.execute  # type: ignore[attr-defined]
        seq, newer = run(self.PUT, params).fetchone()
        return int(seq), bool(newer)

    def put_writes(
        self, cur: Cursor, rows: Sequence[Sequence[Any]], *, replace: bool
    ) -> None:
        """`CheckpointSQL.put_writes` in one statement sent alone (no `BEGIN`
        or `COMMIT`): one round trip. Rows with the same key keep the last
        (`replace`) or the first, as the statements one by one would."""
        unique: dict[tuple[Any, ...], Sequence[Any]] = {}
        for row in rows:
            key = (*row[:4], row[5])  # thread, namespace, checkpoint, task, idx
            if replace or key not in unique:
                unique[key] = row
        if not unique:
            return
        encoded = orjson.dumps(
            [
                dict(zip(_WRITE_FIELDS, (*row[:8], _base64(row[8])), strict=True))
                for row in unique.values()
            ]
        ).decode()
        action = (
            f"{_WRITE_KEY} DO UPDATE SET {_UPDATE_WRITE}" if replace else ("DO NOTHING")
        )
        cur.alone(self.PUT_WRITES + action, (encoded,))  # type: ignore[attr-defined]

    def writes(self, cur: Cursor, row: Row) -> list[PendingWrite]:
        """The pending writes the row was read with (see `SELECT`)."""
        return [
            (task_id.decode(), channel.decode(), kind.decode(), value)
            for task_id, channel, kind, value in cast("tuple[Any, ...]", row)[8] or ()
        ]

    def metadata_filter(self, filter: Mapping[str, Any]) -> tuple[list[str], list[Any]]:
        """Conditions on top-level metadata keys: `jsonb` equality, which
        respects JSON types (`true` never equals `1`, `1` equals `1.0`); `None`
        also matches a missing key.

        Raises:
            InvalidFilterError: For an unsafe key or a value that is not JSON.
        """
        conditions: list[str] = []
        params: list[Any] = []
        for key, value in filter.items():
            check_key(key)
            if value is None:
                conditions.append(
                    "COALESCE(jsonb_typeof(metadata -> ?), 'null') = 'null'"
                )
                params.append(key)
                continue
            if not isinstance(value, (bool, int, float, str, list, tuple, Mapping)):
                raise InvalidFilterError(f"cannot filter metadata {key!r} by {value!r}")
            try:
                operand = canonical_json(value)
            except (TypeError, ValueError) as error:
                raise InvalidFilterError(
                    f"cannot filter metadata {key!r} by {value!r}: {error}"
                ) from error
            conditions.append("metadata -> ? = ?::jsonb")
            params += [key, operand]
        return conditions, params


POSTGRES = PostgresCheckpointSQL()


def dialect_for(engine: LogEngine) -> CheckpointSQL:
    """The checkpointer's SQL for the database an engine runs on."""
    return SQLITE if isinstance(engine, SqliteEngine) else POSTGRES
