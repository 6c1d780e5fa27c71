"""The log's SQL on SQLite: the schema steps, JSON filters, the change
index's terms, and the functions its SQL calls. `sqlite.py` holds the engine.

    >>> SqliteDialect().filter_conditions({"city": "Paris"})[1]
    ['$."city"', '$."city"', 'Paris']

Over 600 lines because of `MIGRATIONS`: every schema step since the first,
each kept as it was released, since an older store upgrades through them all.
"""

from __future__ import annotations

import math
import sqlite3
from collections.abc import Mapping, Sequence
from typing import Any

import orjson

from langgraph_chronomem.engine import schema
from langgraph_chronomem.engine.sql import Dialect
from langgraph_chronomem.engine.terms import terms, terms_json
from langgraph_chronomem.engine.values import encode_micros, now_micros
from langgraph_chronomem.errors import InvalidFilterError

__all__ = ["MIGRATIONS", "SqliteDialect", "add_functions"]


def _micros(column: str) -> str:
    """SQL reading a time column's ISO text (`values.encode_time`: UTC, to
    the microsecond) as `values.encode_micros` writes it; NULL stays NULL,
    and a number (a row written in this form already) is kept."""
    return (
        f"CASE WHEN {column} IS NULL OR instr({column}, '-') < 2 "
        f"THEN CAST({column} AS INTEGER) "
        f"ELSE CAST(strftime('%s', {column}) AS INTEGER) * 1000000 "
        f"+ CAST(substr({column}, 21, 6) AS INTEGER) END"
    )


MIGRATIONS = [
    schema.Migration(
        "0001_versioned_log",
        (
            """CREATE TABLE chronomem_meta (
                name TEXT PRIMARY KEY,
                value TEXT NOT NULL
            )""",
            # HEAD version per scope: the row writers serialise on.
            """CREATE TABLE scopes (
                scope TEXT PRIMARY KEY,
                head INTEGER NOT NULL
            )""",
            """CREATE TABLE commits (
                seq INTEGER PRIMARY KEY AUTOINCREMENT,
                scope TEXT NOT NULL,
                version INTEGER NOT NULL,
                parent INTEGER,
                created_at TEXT NOT NULL,
                author TEXT,
                reason TEXT,
                op TEXT NOT NULL,
                target INTEGER,
                summary TEXT NOT NULL,
                labels TEXT NOT NULL,
                UNIQUE (scope, version)
            )""",
            # One row per item change; see engine/base.py for how validity works.
            # AUTOINCREMENT: a reset must never hand a deleted row's id to a new
            # row, or a lagging vector made from the old row would vouch for it.
            """CREATE TABLE items (
                id INTEGER PRIMARY KEY AUTOINCREMENT,
                scope TEXT NOT NULL,
                version INTEGER NOT NULL,
                valid_to INTEGER,
                namespace TEXT NOT NULL,
                key TEXT NOT NULL,
                value TEXT,
                prev_id INTEGER,
                created_at TEXT,
                updated_at TEXT,
                ttl_minutes REAL,
                expires_at REAL,
                index_fields TEXT
            )""",
            # HEAD: at most one open row per item, enforced by the database.
            """CREATE UNIQUE INDEX items_head ON items (namespace, key)
                WHERE valid_to IS NULL""",
            "CREATE UNIQUE INDEX items_history ON items (namespace, key, version)",
            "CREATE INDEX items_by_version ON items (scope, version)",
            """CREATE INDEX items_expiry ON items (expires_at)
                WHERE valid_to IS NULL AND expires_at IS NOT NULL""",
            # How far each derived index (e.g. a Chroma collection) has read the
            # log, and the scopes a reset asks it to rebuild.
            """CREATE TABLE projections (
                name TEXT PRIMARY KEY,
                seq INTEGER NOT NULL,
                rebuild TEXT NOT NULL
            )""",
            # Commit descriptors for BM25, rowid = commits.seq: a projection that
            # catches up before every search (LogTransaction.index_changes).
            """CREATE VIRTUAL TABLE descriptors USING fts5(
                scope_key, text, tokenize = 'porter unicode61'
            )""",
        ),
    ),
    schema.Migration(
        "0002_change_index",
        (
            # The undo search finds item changes, not whole commits: one row per
            # `items` row (rowid = items.id), what it introduced apart from what
            # it replaced. A projection like the one it replaces; it starts over.
            "DROP TABLE descriptors",
            """CREATE VIRTUAL TABLE changes USING fts5(
                scope_key, added, new, old, context, tokenize = 'porter unicode61'
            )""",
            "DELETE FROM projections WHERE name = 'full-text'",
        ),
    ),
    schema.Migration(
        "0003_lean_writes",
        (
            # One index finds an item's rows, HEAD (`valid_to IS NULL`) and
            # history alike: a write closes one entry and adds its neighbour,
            # one page, where `items_head` and `items_history` dirtied two.
            # Writes hold SQLite's write lock while they close and insert, so
            # an item never has two open rows without a unique index to say so.
            "CREATE INDEX items_key ON items (namespace, key, valid_to)",
            "DROP INDEX items_head",
            "DROP INDEX items_history",
            # HEAD is the scope's highest commit version (one index probe), not
            # a row every commit rewrites; a summary is rendered from the
            # commit's changes when read, not stored.
            "ALTER TABLE scopes DROP COLUMN head",
            "ALTER TABLE commits DROP COLUMN summary",
        ),
    ),
    schema.Migration(
        "0004_row_ranges",
        (
            # A commit records the ids of the first and last `items` row it
            # wrote, so its rows are a range of the primary key: the
            # `(scope, version)` index, a page per write, goes.
            """CREATE TABLE commits_next (
                seq INTEGER PRIMARY KEY,
                scope TEXT NOT NULL,
                version INTEGER NOT NULL,
                parent INTEGER,
                created_at TEXT NOT NULL,
                author TEXT,
                reason TEXT,
                op TEXT NOT NULL,
                target INTEGER,
                labels TEXT NOT NULL,
                first_id INTEGER,
                last_id INTEGER,
                UNIQUE (scope, version)
            )""",
            """INSERT INTO commits_next SELECT c.seq, c.scope, c.version, c.parent,
                c.created_at, c.author, c.reason, c.op, c.target, c.labels,
                r.first_id, r.last_id
                FROM commits AS c LEFT JOIN (
                    SELECT scope, version, min(id) AS first_id, max(id) AS last_id
                    FROM items GROUP BY scope, version
                ) AS r ON r.scope = c.scope AND r.version = c.version""",
            # Without AUTOINCREMENT, whose `sqlite_sequence` row every write
            # rewrote (another page): the insert takes one past the highest id,
            # and past `id_floors`, the highest given before the last reset
            # (here: AUTOINCREMENT's own counters), so a vector or mark made
            # from a removed row never vouches for a new one.
            """CREATE TABLE id_floors (
                name TEXT PRIMARY KEY,
                id INTEGER NOT NULL
            )""",
            """INSERT INTO id_floors (name, id)
                SELECT name, seq FROM sqlite_sequence
                WHERE name IN ('items', 'commits')""",
            """CREATE TABLE items_next (
                id INTEGER PRIMARY KEY,
                scope TEXT NOT NULL,
                version INTEGER NOT NULL,
                valid_to INTEGER,
                namespace TEXT NOT NULL,
                key TEXT NOT NULL,
                value TEXT,
                prev_id INTEGER,
                created_at TEXT,
                updated_at TEXT,
                ttl_minutes REAL,
                expires_at REAL,
                index_fields TEXT
            )""",
            """INSERT INTO items_next SELECT id, scope, version, valid_to, namespace,
                key, value, prev_id, created_at, updated_at, ttl_minutes, expires_at,
                index_fields FROM items""",
            "DROP INDEX items_by_version",
            "DROP TABLE items",
            "ALTER TABLE items_next RENAME TO items",
            "CREATE INDEX items_key ON items (namespace, key, valid_to)",
            """CREATE INDEX items_expiry ON items (expires_at)
                WHERE valid_to IS NULL AND expires_at IS NOT NULL""",
            "DROP TABLE commits",
            "ALTER TABLE commits_next RENAME TO commits",
        ),
        rebuilds=("items", "commits"),
    ),
    schema.Migration(
        "0005_scoped_change_search",
        (
            # BM25 with each scope's own statistics, as on PostgreSQL: FTS5
            # counts documents and lengths over the whole file, so one user's
            # memories moved another's ranking. Each change keeps its length in
            # terms and each of its terms how often it occurs per column
            # (`engine/terms.py` makes them). The index starts over.
            "DROP TABLE changes",
            "DELETE FROM projections WHERE name = 'full-text'",
            """CREATE TABLE changes (
                rowid INTEGER PRIMARY KEY,
                scope_key TEXT NOT NULL,
                added TEXT NOT NULL,
                new TEXT NOT NULL,
                old TEXT NOT NULL,
                context TEXT NOT NULL,
                length INTEGER NOT NULL
            )""",
            "CREATE INDEX changes_by_scope ON changes (scope_key, length)",
            """CREATE TABLE change_terms (
                scope_key TEXT NOT NULL,
                term TEXT NOT NULL,
                rowid INTEGER NOT NULL,
                added INTEGER NOT NULL,
                new INTEGER NOT NULL,
                old INTEGER NOT NULL,
                context INTEGER NOT NULL,
                PRIMARY KEY (scope_key, term, rowid)
            ) WITHOUT ROWID""",
            "CREATE INDEX change_terms_by_row ON change_terms (rowid)",
            """CREATE TRIGGER change_terms_go AFTER DELETE ON changes BEGIN
                DELETE FROM change_terms WHERE rowid = old.rowid;
            END""",
        ),
    ),
    schema.Migration(
        "0006_erased_values",
        (
            # The log rows whose value was erased (set to NULL) and why:
            # `redacted` by the redact commit `seq`, or `compacted` (no commit).
            """CREATE TABLE erased (
                id INTEGER PRIMARY KEY,
                seq INTEGER,
                why TEXT NOT NULL
            )""",
        ),
    ),
    schema.Migration(
        "0007_projection_remakes",
        (
            # How many times a scope of each projection was made again (after
            # a reset or a redaction): another process's copy of its vectors,
            # read before, may lack what came back, and reads it anew.
            "ALTER TABLE projections ADD COLUMN remade INTEGER NOT NULL DEFAULT 0",
        ),
    ),
    schema.Migration(
        "0008_rebuild_tickets",
        (
            # A rebuild request is {"scope": [...], "ticket": "..."}, no longer
            # the scope's labels alone (`rows.RebuildRequest`): a version before
            # it would read a ticketed request as a scope named "scope". Those
            # stored before keep an empty ticket, struck by count as they were.
            """UPDATE projections SET rebuild = (
                SELECT json_group_array(
                    json_object('scope', json(r.value), 'ticket', ''))
                FROM json_each(projections.rebuild) AS r
            ) WHERE json_array_length(rebuild) > 0""",
        ),
    ),
    schema.Migration(
        "0009_tags",
        (
            # Names for versions (engine/tags.py); `seq` is the tagged commit's.
            """CREATE TABLE tags (
                scope TEXT NOT NULL,
                name TEXT NOT NULL,
                version INTEGER NOT NULL,
                seq INTEGER NOT NULL,
                created_at TEXT NOT NULL,
                PRIMARY KEY (scope, name)
            )""",
        ),
    ),
    schema.Migration(
        "0010_lean_change_index",
        (
            # The change index keeps only what BM25 reads, at a third of the
            # bytes: a change's texts are rendered from the log when one is
            # shown (`LogTransaction.indexed_text`), each row names its scope
            # by a number (`_scope_number`) instead of 25 characters, and the
            # index of term rows by change goes: a change keeps its distinct
            # terms, which its deletion removes by primary key. The index
            # starts over.
            "DROP TABLE changes",
            "DROP TABLE change_terms",
            "DELETE FROM projections WHERE name = 'full-text'",
            """CREATE TABLE changes (
                rowid INTEGER PRIMARY KEY,
                scope_key INTEGER NOT NULL,
                length INTEGER NOT NULL,
                terms TEXT NOT NULL
            )""",
            "CREATE INDEX changes_by_scope ON changes (scope_key, length)",
            """CREATE TABLE change_terms (
                scope_key INTEGER NOT NULL,
                term TEXT NOT NULL,
                rowid INTEGER NOT NULL,
                added INTEGER NOT NULL,
                new INTEGER NOT NULL,
                old INTEGER NOT NULL,
                context INTEGER NOT NULL,
                PRIMARY KEY (scope_key, term, rowid)
            ) WITHOUT ROWID""",
            """CREATE TRIGGER change_terms_go AFTER DELETE ON changes BEGIN
                DELETE FROM change_terms WHERE scope_key = old.scope_key
                    AND term IN (SELECT value FROM json_each(
                        '["' || replace(old.terms, ' ', '","') || '"]'))
                    AND rowid = old.rowid;
            END""",
        ),
    ),
    schema.Migration(
        "0011_integer_times",
        (
            # Times as microseconds since the epoch (`values.encode_micros`),
            # 8 bytes where the ISO text took 32: three a commit, a quarter
            # of what a commit of a small item wrote. Both tables are made
            # anew for the column types (TEXT would store the numbers as
            # text); `_micros` converts what they held. A process of a
            # version before, still running, would write text times that
            # sort after every number: its writes fail instead.
            """CREATE TABLE items_next (
                id INTEGER PRIMARY KEY,
                scope TEXT NOT NULL,
                version INTEGER NOT NULL,
                valid_to INTEGER,
                namespace TEXT NOT NULL,
                key TEXT NOT NULL,
                value TEXT,
                prev_id INTEGER,
                created_at INTEGER CHECK (typeof(created_at) <> 'text'),
                updated_at INTEGER CHECK (typeof(updated_at) <> 'text'),
                ttl_minutes REAL,
                expires_at REAL,
                index_fields TEXT
            )""",
            f"""INSERT INTO items_next SELECT id, scope, version, valid_to,
                namespace, key, value, prev_id, {_micros("created_at")},
                {_micros("updated_at")}, ttl_minutes, expires_at, index_fields
                FROM items""",
            "DROP TABLE items",
            "ALTER TABLE items_next RENAME TO items",
            "CREATE INDEX items_key ON items (namespace, key, valid_to)",
            """CREATE INDEX items_expiry ON items (expires_at)
                WHERE valid_to IS NULL AND expires_at IS NOT NULL""",
            """CREATE TABLE commits_next (
                seq INTEGER PRIMARY KEY,
                scope TEXT NOT NULL,
                version INTEGER NOT NULL,
                parent INTEGER,
                created_at INTEGER NOT NULL CHECK (typeof(created_at) <> 'text'),
                author TEXT,
                reason TEXT,
                op TEXT NOT NULL,
                target INTEGER,
                labels TEXT NOT NULL,
                first_id INTEGER,
                last_id INTEGER,
                UNIQUE (scope, version)
            )""",
            f"""INSERT INTO commits_next SELECT seq, scope, version, parent,
                {_micros("created_at")}, author, reason, op, target, labels,
                first_id, last_id FROM commits""",
            "DROP TABLE commits",
            "ALTER TABLE commits_next RENAME TO commits",
        ),
        rebuilds=("items", "commits"),
    ),
    schema.Migration(
        "0012_branches",
        (
            # A branch's fork and last merge; its commits and rows are in
            # `commits` and `items` under its mount (design.md, "Branches").
            # A deleted branch's id (its mount) is never given again: ids
            # come past `id_floors`, as the log's (`0004_row_ranges`).
            """CREATE TABLE branches (
                id INTEGER PRIMARY KEY,
                scope TEXT NOT NULL,
                name TEXT NOT NULL,
                fork INTEGER NOT NULL,
                fork_seq INTEGER NOT NULL,
                merged INTEGER NOT NULL,
                created_at INTEGER NOT NULL,
                UNIQUE (scope, name)
            )""",
        ),
    ),
]

_COMPARATORS = {
    "$eq": "=",
    "$ne": "!=",
    "$gt": ">",
    "$gte": ">=",
    "$lt": "<",
    "$lte": "<=",
}
_NUMBER = "json_type(value, ?) IN ('integer', 'real')"


def _json_path(key: str) -> str:
    """`a.b` -> `$."a"."b"`: a bound parameter, so a key is never SQL."""
    parts = key.split(".")
    for part in parts:
        if not part or '"' in part or any(ord(ch) < 32 for ch in part):
            raise InvalidFilterError(
                f"Invalid filter key {key!r}: use dot-separated field names "
                "without quotes or control characters, e.g. 'profile.city'"
            )
    return "$" + "".join(f'."{part}"' for part in parts)


def _number(operand: float) -> float:
    """A number operand as SQLite can compare it, like LangGraph's `SqliteStore`.

    An int past SQLite's 64 bits compares as the nearest float (an infinity
    beyond floats), so `{"$lt": 10**100}` matches every number. (NaN never
    gets here: `walk_filter` makes a comparison with it match nothing.)
    """
    if isinstance(operand, int) and not -(2**63) <= operand < 2**63:
        try:
            return float(operand)
        except OverflowError:
            return math.inf if operand > 0 else -math.inf
    return operand


def _equals(key: str, operand: Any) -> tuple[str, list[Any]]:
    """Equality that respects JSON types: `1` never equals `true` or `"1"`."""
    path = _json_path(key)
    if operand is None:  # like LangGraph's stores: a missing field counts as null
        return "json_extract(value, ?) IS NULL", [path]
    if isinstance(operand, bool):
        return "json_type(value, ?) = ?", [path, "true" if operand else "false"]
    if isinstance(operand, (int, float)):
        number = _number(operand)
        return f"{_NUMBER} AND json_extract(value, ?) = ?", [path, path, number]
    if isinstance(operand, str):
        return "json_type(value, ?) = 'text' AND json_extract(value, ?) = ?", [
            path,
            path,
            operand,
        ]
    if isinstance(operand, (list, tuple, Mapping)):
        return (
            "json_type(value, ?) IN ('array', 'object') AND json_extract(value, ?) = ?",
            [path, path, orjson.dumps(operand).decode()],
        )
    raise InvalidFilterError(f"cannot compare {key!r} with {operand!r}")


def _comparison(key: str, op: str, operand: Any) -> tuple[str, list[Any]]:
    """One filter comparison on the JSON value at `key`.

    `$ne` matches fields that are present, not null, and different, as
    `SqliteStore` and `PostgresStore` do; `$gt` and friends compare numbers with
    numbers and strings with strings only.
    """
    if op == "$eq":
        return _equals(key, operand)
    if op == "$ne":
        if operand is None:
            return "json_extract(value, ?) IS NOT NULL", [_json_path(key)]
        sql, params = _equals(key, operand)
        return f"json_type(value, ?) != 'null' AND NOT ({sql})", [
            _json_path(key),
            *params,
        ]
    if op not in _COMPARATORS:
        raise InvalidFilterError(
            f"unsupported filter operator {op!r} on {key!r}; "
            f"use one of {', '.join(_COMPARATORS)}"
        )
    sign, path = _COMPARATORS[op], _json_path(key)
    if isinstance(operand, (int, float)) and not isinstance(operand, bool):
        number = _number(operand)
        return f"{_NUMBER} AND json_extract(value, ?) {sign} ?", [path, path, number]
    if isinstance(operand, str):
        return (
            f"json_type(value, ?) = 'text' AND json_extract(value, ?) {sign} ?",
            [path, path, operand],
        )
    raise InvalidFilterError(
        f"{op} on {key!r} needs a number or a string, got {operand!r}"
    )


class SqliteDialect(Dialect):
    """The log's SQL for SQLite (>= 3.35): JSON filters, and the terms of item
    changes made in Python (`chronomem_terms`, registered on each connection).

    >>> SqliteDialect().filter_conditions({"age": {"$gte": 18}})[0]
    ["json_type(value, ?) IN ('integer', 'real') AND json_extract(value, ?) >= ?"]
    """

    compare = staticmethod(_comparison)
    now = staticmethod(now_micros)
    encode_time = staticmethod(encode_micros)

    INSERT_CHANGE = (
        "INSERT INTO changes (rowid, scope_key, length, terms) VALUES (?, ?, ?, ?)"
    )
    INSERT_CHANGE_TERM = (
        "INSERT INTO change_terms (scope_key, term, rowid, added, new, old, context) "
        "VALUES (?, ?, ?, ?, ?, ?, ?)"
    )

    def index_changes(
        self, rows: Sequence[tuple[int, str, str, str, str, str]]
    ) -> list[tuple[str, Sequence[Sequence[Any]]]]:
        """What PostgreSQL's `chronomem_index_change` does, with the terms made
        here (`engine/terms.py`): each change with its scope's number, its
        length in terms (the scope's word included) and its distinct terms
        (space-separated: a term is letters and digits), and each of those
        with how often it occurs per column, in key order (B-tree inserts in
        order are the cheap ones).

            >>> (_, changes), (_, found) = SqliteDialect().index_changes(
            ...     [(7, "s1", "", "Moved to Oslo", "", "")]
            ... )
            >>> changes
            [(7, 1, 4, 'move to oslo')]
            >>> found[0]
            (1, 'move', 7, 0, 1, 0, 0)
        """
        changes, found = [], []
        for row_id, key, *columns in rows:
            number = self.scope_param(key)
            counts: dict[str, list[int]] = {}
            length = 1
            for column, text in enumerate(columns):
                words = terms(text)
                length += len(words)
                for term in words:
                    counts.setdefault(term, [0, 0, 0, 0])[column] += 1
            changes.append((row_id, number, length, " ".join(counts)))
            found += [(number, term, row_id, *n) for term, n in counts.items()]
        found.sort()
        return [(self.INSERT_CHANGE, changes), (self.INSERT_CHANGE_TERM, found)]

    def scope_param(self, scope_key: str) -> int:
        """The scope's number (`_scope_number`)."""
        return _scope_number(scope_key)

    # Read in C, not decoded in Python: the values whose JSON text holds the
    # text in any ASCII case, and every value that is not plain ASCII
    # (Unicode folding may make ASCII of it) or holds an escape (it may stand
    # for any character). `forgetting._raw_finds` says which texts this
    # finds wherever `redact` would.
    VALUES_MAYBE_HOLDING = (
        Dialect.VALUES_IN_SCOPE + " AND (instr(lower(value), ?) > 0 "
        "OR instr(value, char(92)) > 0 "
        "OR length(value) < length(CAST(value AS BLOB)))"
    )
    CLEAR_CHANGES = "DELETE FROM changes"
    DELETE_CHANGES_AFTER = f"DELETE FROM changes WHERE rowid IN ({Dialect.ROWS_AFTER})"
    # Ids are one past the highest given, reset or not (see `0004_row_ranges`).
    INSERT_ITEM = (
        "INSERT INTO items (id, scope, version, valid_to, namespace, key, value, "
        "prev_id, created_at, updated_at, ttl_minutes, expires_at, index_fields) "
        "VALUES (max(coalesce((SELECT max(id) FROM items), 0), coalesce((SELECT id "
        "FROM id_floors WHERE name = 'items'), 0)) + 1, ?, ?, ?, ?, ?, ?, ?, ?, ?, "
        "?, ?, ?)"
    )
    ADD_BRANCH = (
        "INSERT INTO branches (id, scope, name, fork, fork_seq, merged, created_at) "
        "VALUES (max(coalesce((SELECT max(id) FROM branches), 0), coalesce((SELECT "
        "id FROM id_floors WHERE name = 'branches'), 0)) + 1, ?, ?, ?, ?, ?, ?)"
    )
    KEEP_BRANCH_FLOOR = (
        "INSERT INTO id_floors (name, id) VALUES "
        "('branches', coalesce((SELECT max(id) FROM branches), 0)) "
        "ON CONFLICT (name) DO UPDATE SET id = max(id, excluded.id)"
    )
    INSERT_COMMIT = (
        "INSERT INTO commits (seq, scope, version, parent, created_at, author, "
        "reason, op, target, labels, first_id, last_id) "
        "VALUES (max(coalesce((SELECT max(seq) FROM commits), 0), coalesce((SELECT "
        "id FROM id_floors WHERE name = 'commits'), 0)) + 1, ?, ?, ?, ?, ?, ?, ?, "
        "?, ?, ?, ?)"
    )
    KEEP_ID_FLOORS = (
        "INSERT INTO id_floors (name, id) VALUES "
        "('items', coalesce((SELECT max(id) FROM items), 0)), "
        "('commits', coalesce((SELECT max(seq) FROM commits), 0)) "
        "ON CONFLICT (name) DO UPDATE SET id = max(id, excluded.id)"
    )

    LABEL_EQUALS = "json_extract(labels, ?) = ?"

    def label_key(self, name: str) -> str:
        """A JSON path: `'$."source"'`."""
        return _json_path(name)

    REQUEST_TERMS = (
        "SELECT w.key AS word, t.value AS term FROM json_each(?) AS w, "
        "json_each(chronomem_terms(w.value)) AS t"
    )

    def words_param(self, words: Sequence[str]) -> Any:
        """A JSON array.

        >>> SqliteDialect().search_changes(
        ...     "s1", ["moved"], side="old", limit=5, since=None, until=None
        ... ).params
        ('["moved"]', 1, 1, 5)
        """
        return orjson.dumps(list(words)).decode()


def _scope_number(scope_key: str) -> int:
    """A scope's word (`rows.scope_key`: "s" and 24 hex digits of a hash) as
    the change index stores it: its first 63 bits, 8 bytes a row where the
    word takes 25. Still a hash, like the word: two scopes share a number
    about as often as two of their words share 16 of 24 digits.

    >>> _scope_number("sf7e917d8240ba3269c70ca30")
    8640463577172124454
    """
    return int(scope_key[1:17], 16) & (2**63 - 1)


def add_functions(conn: sqlite3.Connection) -> None:
    """The functions the change index's SQL calls: `chronomem_terms`, and `ln`
    where SQLite was built without its math functions."""
    conn.create_function("chronomem_terms", 1, terms_json, deterministic=True)
    try:
        conn.execute("SELECT ln(1)")
    except sqlite3.OperationalError:
        conn.create_function("ln", 1, math.log, deterministic=True)
