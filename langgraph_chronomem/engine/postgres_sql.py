"""The log's SQL on PostgreSQL: the schema, jsonb filters, and the cursor that
runs the shared statements through psycopg. `postgres.py` holds the engine.

    >>> PostgresDialect().filter_conditions({"city": "Paris"})[0]
    ["jsonb_typeof(value::jsonb #> ?) = 'string' AND (value::jsonb #>> ?) = ?"]
"""

from __future__ import annotations

import functools
import math
from collections.abc import Iterable, Mapping, Sequence
from typing import Any

import orjson
import psycopg

from langgraph_chronomem.engine.migrations import Migration
from langgraph_chronomem.engine.sql import Dialect, Statement
from langgraph_chronomem.errors import ConfigError, InvalidFilterError

__all__ = [
    "LOCK_CLASS",
    "MIGRATIONS",
    "Cursor",
    "PostgresDialect",
    "WriteDialect",
    "filter_conditions",
]

# Advisory locks are keyed by two ints: this one says "a chronomem scope" (the
# bytes of "chro"), so an application's own advisory locks never collide with
# ours; the other is the scope's hash. Two scopes sharing a hash only queue.
LOCK_CLASS = 0x6368726F

MIGRATIONS = [
    Migration(
        "0001_postgres_log",
        (
            # Text compared by byte, as in SQLite: namespace ranges (sql._under)
            # and ISO timestamps rely on it, and a database's own collation
            # (ICU's en-US, say) orders punctuation otherwise.
            """CREATE TABLE chronomem_meta (
                name TEXT COLLATE "C" PRIMARY KEY,
                value TEXT NOT NULL
            )""",
            'CREATE TABLE scopes (scope TEXT COLLATE "C" PRIMARY KEY)',
            """CREATE TABLE commits (
                seq BIGINT GENERATED ALWAYS AS IDENTITY PRIMARY KEY,
                scope TEXT COLLATE "C" NOT NULL,
                version INTEGER NOT NULL,
                parent INTEGER,
                created_at TEXT COLLATE "C" NOT NULL,
                author TEXT,
                reason TEXT,
                op TEXT NOT NULL,
                target INTEGER,
                labels TEXT NOT NULL,
                first_id BIGINT,
                last_id BIGINT,
                UNIQUE (scope, version)
            )""",
            # Values stay JSON text, byte for byte what SQLite holds: equal text
            # is an equal value (base.py relies on it) and a copy between the
            # engines changes nothing. Filters cast to jsonb.
            """CREATE TABLE items (
                id BIGINT GENERATED ALWAYS AS IDENTITY PRIMARY KEY,
                scope TEXT COLLATE "C" NOT NULL,
                version INTEGER NOT NULL,
                valid_to INTEGER,
                namespace TEXT COLLATE "C" NOT NULL,
                key TEXT COLLATE "C" NOT NULL,
                value TEXT,
                prev_id BIGINT,
                created_at TEXT COLLATE "C",
                updated_at TEXT COLLATE "C",
                ttl_minutes DOUBLE PRECISION,
                expires_at DOUBLE PRECISION,
                index_fields TEXT
            )""",
            # Writers to one scope queue on its lock, so an item never has two
            # open rows; the database checks it too, as many servers now write.
            """CREATE UNIQUE INDEX items_head ON items (namespace, key)
                WHERE valid_to IS NULL""",
            "CREATE UNIQUE INDEX items_history ON items (namespace, key, version)",
            "CREATE INDEX items_by_version ON items (scope, version)",
            """CREATE INDEX items_expiry ON items (expires_at)
                WHERE valid_to IS NULL AND expires_at IS NOT NULL""",
            """CREATE TABLE projections (
                name TEXT COLLATE "C" PRIMARY KEY,
                seq BIGINT NOT NULL,
                rebuild TEXT NOT NULL
            )""",
            # The texts the undo search finds item changes by (rowid = items.id).
            """CREATE TABLE changes (
                rowid BIGINT PRIMARY KEY,
                scope_key TEXT NOT NULL,
                added TEXT NOT NULL,
                new TEXT NOT NULL,
                old TEXT NOT NULL,
                context TEXT NOT NULL
            )""",
            # A write transaction's HEAD read: wait for the scope's lock (held to
            # the end of the transaction), then read HEAD. A function because
            # under READ COMMITTED a VOLATILE function's each query takes a new
            # snapshot, so HEAD is read after the lock is won, never from a
            # snapshot taken while waiting (which would reuse a version).
            f"""CREATE FUNCTION chronomem_lock_scope(
                scope_name TEXT, timeout_ms INTEGER
            ) RETURNS INTEGER LANGUAGE plpgsql VOLATILE AS $$
            BEGIN
                PERFORM set_config('lock_timeout', timeout_ms || 'ms', true);
                PERFORM pg_advisory_xact_lock({LOCK_CLASS}, hashtext(scope_name));
                RETURN (SELECT coalesce(max(version), 0) FROM commits
                        WHERE scope = scope_name);
            END $$""",
        ),
    ),
]


# -- the SQL ---------------------------------------------------------------------


def _path(key: str) -> list[str]:
    """`a.b` -> `["a", "b"]`, a `text[]` parameter, so a key is never SQL.

    Refuses what the SQLite engine refuses, so a filter means one thing on both.
    """
    parts = key.split(".")
    for part in parts:
        if not part or '"' in part or any(ord(ch) < 32 for ch in part):
            raise InvalidFilterError(
                f"invalid filter key {key!r}: use dot-separated field names "
                "without quotes or control characters, e.g. 'profile.city'"
            )
    return parts


_FIELD = "(value::jsonb #> ?)"
_TYPE = f"jsonb_typeof{_FIELD}"
# A number field as `numeric` (exact, however large), NULL for any other type.
_NUMBER = f"(CASE WHEN {_TYPE} = 'number' THEN (value::jsonb #>> ?)::numeric END)"
_COMPARATORS = {"$gt": ">", "$gte": ">=", "$lt": "<", "$lte": "<="}


def _equals(key: str, operand: Any) -> tuple[str, list[Any]]:
    """Equality that respects JSON types: `1` never equals `true` or `"1"`."""
    path = _path(key)
    if operand is None:  # like LangGraph's stores: a missing field counts as null
        return f"coalesce({_TYPE}, 'null') = 'null'", [path]
    if isinstance(operand, bool):
        return f"{_FIELD} = ?::jsonb", [path, "true" if operand else "false"]
    if isinstance(operand, (int, float)):
        return f"{_NUMBER} = ?", [path, path, _number(key, operand)]
    if isinstance(operand, str):
        return f"{_TYPE} = 'string' AND (value::jsonb #>> ?) = ?", [
            path,
            path,
            operand,
        ]
    if isinstance(operand, (list, tuple, Mapping)):
        return f"{_TYPE} IN ('array', 'object') AND {_FIELD} = ?::jsonb", [
            path,
            path,
            orjson.dumps(operand).decode(),
        ]
    raise InvalidFilterError(f"cannot compare {key!r} with {operand!r}")


def _number(key: str, operand: float) -> float:
    if isinstance(operand, float) and math.isnan(operand):
        raise InvalidFilterError(
            f"the filter on {key!r} compares with NaN, which matches nothing; "
            "to find items whose field is missing or null, filter on None"
        )
    return operand


def _comparison(key: str, op: str, operand: Any) -> tuple[str, list[Any]]:
    """One `field op operand` condition, with the SQLite engine's semantics:
    `$ne` never matches a missing or null field (unless comparing with None),
    and the orderings compare numbers with numbers and strings with strings,
    strings by code point."""
    if op == "$eq":
        return _equals(key, operand)
    if op == "$ne":
        path = _path(key)
        if operand is None:
            return f"{_TYPE} <> 'null'", [path]
        sql, params = _equals(key, operand)
        return f"{_TYPE} <> 'null' AND NOT coalesce({sql}, false)", [path, *params]
    if op not in _COMPARATORS:
        raise InvalidFilterError(
            f"unsupported filter operator {op!r} on {key!r}; "
            f"use one of $eq, $ne, {', '.join(_COMPARATORS)}"
        )
    sign, path = _COMPARATORS[op], _path(key)
    if isinstance(operand, (int, float)) and not isinstance(operand, bool):
        return f"{_NUMBER} {sign} ?", [path, path, _number(key, operand)]
    if isinstance(operand, str):
        return (
            f"{_TYPE} = 'string' AND (value::jsonb #>> ?) COLLATE \"C\" {sign} ?",
            [path, path, operand],
        )
    raise InvalidFilterError(
        f"{op} on {key!r} needs a number or a string, got {operand!r}"
    )


def filter_conditions(
    filter: Mapping[str, Any], parent: str = ""
) -> tuple[list[str], list[Any]]:
    """SQL conditions for a LangGraph search filter, on the JSON text cast to jsonb.

    The same filters as the SQLite engine's, with the same meaning:

        >>> filter_conditions({"age": {"$gte": 18}})[1]
        [['age'], ['age'], 18]

    Raises:
        InvalidFilterError: For an unknown operator, a key that is not a field
            name (`$or` included), or an operand no value can match.
    """
    conditions: list[str] = []
    params: list[Any] = []
    for name, cond in filter.items():
        if not isinstance(name, str):
            raise InvalidFilterError(f"filter keys are strings, got {name!r}")
        if name.startswith("$"):
            raise InvalidFilterError(
                f"{name!r} is not a field: a filter ANDs conditions on fields, "
                "e.g. {'price': {'$lt': 10}}, and has no $or or $and (nor do "
                "LangGraph's stores); run one search per alternative"
            )
        key = f"{parent}.{name}" if parent else name
        operators = isinstance(cond, Mapping) and [
            k for k in cond if str(k).startswith("$")
        ]
        if isinstance(cond, Mapping) and operators:
            if len(operators) != len(cond):
                raise InvalidFilterError(
                    f"filter for {key!r} mixes operators and fields: {dict(cond)!r}"
                )
            pairs = list(cond.items())
        elif isinstance(cond, Mapping) and cond:
            inner, inner_params = filter_conditions(cond, key)
            conditions += inner
            params += inner_params
            continue
        else:
            pairs = [("$eq", cond)]
        for op, operand in pairs:
            sql, args = _comparison(key, op, operand)
            conditions.append(sql)
            params += args
    return conditions, params


class PostgresDialect(Dialect):
    """The log's SQL for PostgreSQL (>= 14): jsonb filters; no change search yet.

    Statements keep the shared `?` placeholders; the engine's cursor turns them
    into psycopg's `%s`.
    """

    INSERT_CHANGE = (
        "INSERT INTO changes (rowid, scope_key, added, new, old, context) "
        "VALUES (?, ?, ?, ?, ?, ?)"
    )
    CLEAR_CHANGES = "DELETE FROM changes"
    CHANGE_TEXT = "SELECT new, old, context FROM changes WHERE rowid = ?"
    DELETE_CHANGES_AFTER = (
        "DELETE FROM changes WHERE rowid IN "
        "(SELECT id FROM items WHERE scope = ? AND version > ?)"
    )
    # The cursor reads the new id and seq back as its `lastrowid`.
    INSERT_ITEM = Dialect.INSERT_ITEM + " RETURNING id"
    INSERT_COMMIT = Dialect.INSERT_COMMIT + " RETURNING seq"
    FIRST_META = (
        "INSERT INTO chronomem_meta (name, value) VALUES (?, ?) "
        "ON CONFLICT (name) DO NOTHING"
    )

    def filter_conditions(
        self, filter: Mapping[str, Any]
    ) -> tuple[list[str], list[Any]]:
        return filter_conditions(filter)

    def search_changes(
        self,
        scope_key: str,
        words: Sequence[str],
        *,
        side: str,
        limit: int,
        since: str | None,
        until: str | None,
    ) -> Statement:
        """Not yet on PostgreSQL: the undo search's BM25 stage.

        Raises:
            ConfigError: Always, naming what works instead.
        """
        raise ConfigError(
            "searching changes by words (the undo search) is not yet on "
            "PostgreSQL: undo by version (rollback, revert) works; for undo "
            "requests in words use a SQLite store for now"
        )


class WriteDialect(PostgresDialect):
    """A write transaction's SQL: reading a scope's HEAD takes its lock."""

    def __init__(self, lock_timeout_ms: int) -> None:
        self.HEAD = f"SELECT chronomem_lock_scope(?, {int(lock_timeout_ms)})"


@functools.lru_cache(maxsize=2048)
def psycopg_sql(sql: str) -> str:
    """Shared SQL (`?` placeholders) as psycopg writes it (`%s`)."""
    return sql.replace("%", "%%").replace("?", "%s")


class Cursor:
    """A psycopg cursor behind the DB-API slice the log uses (`sql.Cursor`)."""

    def __init__(self, cur: psycopg.Cursor[Any]) -> None:
        self._cur = cur

    @property
    def lastrowid(self) -> int | None:
        """The id an `INSERT ... RETURNING id` (or `seq`) just made."""
        row = self._cur.fetchone()
        return None if row is None else int(row[0])

    def execute(self, sql: str, params: Sequence[Any] = ()) -> psycopg.Cursor[Any]:
        return self._cur.execute(psycopg_sql(sql), params)

    def executemany(self, sql: str, rows: Iterable[Sequence[Any]]) -> None:
        self._cur.executemany(psycopg_sql(sql), rows)

    def fetchone(self) -> Any:
        return self._cur.fetchone()

    def fetchall(self) -> list[Any]:
        return self._cur.fetchall()
