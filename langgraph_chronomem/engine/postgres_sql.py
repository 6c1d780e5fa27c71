"""The log's SQL on PostgreSQL: the schema, jsonb filters, and the cursor that
runs the shared statements through psycopg. `postgres.py` holds the engine.

Over 600 lines because its schema steps are kept as released (each database
upgraded by them must read them again the same), and two of them define the
write function `chronomem_write`, the server's copy of `writes.py`.

    >>> PostgresDialect().filter_conditions({"city": "Paris"})[1]
    ['{"city":"Paris"}', 'city', 'city', 'Paris']
"""

from __future__ import annotations

import functools
import math
import select
from collections.abc import Callable, Iterable, Mapping, Sequence
from typing import Any

import orjson
import psycopg

from langgraph_chronomem.engine.schema import Migration
from langgraph_chronomem.engine.sql import Dialect
from langgraph_chronomem.errors import InvalidFilterError

__all__ = [
    "LOCK_CLASS",
    "MIGRATIONS",
    "PostgresCursor",
    "PostgresDialect",
    "WriteDialect",
]

# Advisory locks are keyed by two ints: this one says "a chronomem scope" (the
# bytes of "chro"), so an application's own advisory locks never collide with
# ours; the other is the scope's hash. Two scopes sharing a hash only queue.
LOCK_CLASS = 0x6368726F

# `LogTransaction._write` (writes.py), the one place versions are made, as the
# server runs it: created by schema step 0003, replaced by 0004 (this text)
# and by 0011 and 0012 (`_lean_write_function`). tests/test_engines_agree.py runs the
# same writes through both and compares every row they leave.
_WRITE_FUNCTION = f"""chronomem_write(
                scope_name TEXT, timeout_ms INTEGER, op_name TEXT, stamp TEXT,
                now_s DOUBLE PRECISION, author_name TEXT, reason_text TEXT,
                target_version INTEGER, labels_text TEXT, keep_empty BOOLEAN,
                rows_json TEXT,
                OUT new_version INTEGER, OUT new_seq BIGINT,
                OUT written INTEGER[], OUT replaced TEXT[]
            ) LANGUAGE plpgsql VOLATILE AS $$
            DECLARE
                parent INTEGER;
                r RECORD;
                n INTEGER := 0;
                live_id BIGINT;
                live_value TEXT;
                live_created TEXT;
                task TEXT := labels_text::jsonb ->> 'task_id';
                thread TEXT := labels_text::jsonb ->> 'thread_id';
                row_id BIGINT;
                first_row BIGINT;
                last_row BIGINT;
            BEGIN
                PERFORM set_config('lock_timeout', timeout_ms || 'ms', true);
                PERFORM pg_advisory_xact_lock({LOCK_CLASS}, hashtext(scope_name));
                SELECT coalesce(max(c.version), 0) INTO parent
                FROM commits AS c WHERE c.scope = scope_name;
                new_version := parent + 1;
                written := '{{}}';
                replaced := '{{}}';
                FOR r IN SELECT * FROM json_to_recordset(rows_json::json)
                    AS x (ns TEXT, k TEXT, v TEXT, ttl DOUBLE PRECISION,
                        created TEXT, updated TEXT, fields TEXT)
                LOOP
                    n := n + 1;
                    IF task IS NOT NULL AND thread IS NOT NULL AND EXISTS (
                        SELECT 1 FROM items AS it JOIN commits AS c
                        ON c.scope = it.scope AND c.version = it.version
                        WHERE it.namespace = r.ns AND it.key = r.k
                            AND it.valid_to IS NULL AND it.value = r.v
                            AND c.labels::jsonb ->> 'task_id' = task
                            AND c.labels::jsonb ->> 'thread_id' = thread
                    ) THEN
                        CONTINUE;  -- a task run again wrote this already
                    END IF;
                    UPDATE items AS it SET valid_to = new_version
                    WHERE it.namespace = r.ns AND it.key = r.k
                        AND it.valid_to IS NULL
                    RETURNING it.id, it.value, it.created_at
                    INTO live_id, live_value, live_created;
                    IF live_id IS NULL AND r.v IS NULL THEN
                        CONTINUE;  -- deleting what is not there changes nothing
                    END IF;
                    INSERT INTO items (scope, version, valid_to, namespace, key,
                        value, prev_id, created_at, updated_at, ttl_minutes,
                        expires_at, index_fields)
                    VALUES (scope_name, new_version,
                        CASE WHEN r.v IS NULL THEN new_version END,
                        r.ns, r.k, r.v, live_id,
                        CASE WHEN r.v IS NOT NULL
                            THEN coalesce(r.created, live_created, stamp) END,
                        CASE WHEN r.v IS NOT NULL
                            THEN coalesce(r.updated, stamp) END,
                        r.ttl,
                        CASE WHEN r.v IS NOT NULL THEN now_s + r.ttl * 60 END,
                        r.fields)
                    RETURNING id INTO row_id;
                    first_row := coalesce(first_row, row_id);
                    last_row := row_id;
                    written := array_append(written, n);
                    replaced := array_append(replaced, live_value);
                END LOOP;
                IF cardinality(written) = 0 AND NOT keep_empty THEN
                    new_version := NULL;
                    RETURN;
                END IF;
                INSERT INTO commits (scope, version, parent, created_at, author,
                    reason, op, target, labels, first_id, last_id)
                VALUES (scope_name, new_version, nullif(parent, 0), stamp,
                    author_name, reason_text, op_name, target_version,
                    labels_text, first_row, last_row)
                RETURNING seq INTO new_seq;
                IF parent = 0 THEN
                    INSERT INTO scopes (scope) VALUES (scope_name)
                    ON CONFLICT (scope) DO NOTHING;
                END IF;
            END $$"""


# A scope's HEAD read as the scope's writers run it, after its lock: down
# the index of (scope, version) to its first row.
_HEAD_AFTER_LOCK = """SELECT c.version INTO parent FROM commits AS c
                WHERE c.scope = scope_name ORDER BY c.version DESC LIMIT 1;
                parent := coalesce(parent, 0);"""
# What the functions that write plan with: no sequential scan. PostgreSQL
# plans by the tables' statistics, and on a store analyzed while it held few
# commits (a new store, loaded in batches) a session's cached plan for the
# HEAD read scanned every commit of the table at each write, until
# autovacuum analyzed it again: 28 us a put after 300 puts and growing (the
# order and limit alone did not change that plan). Every statement they run
# has an index that answers it.
_INDEXES_ONLY = "SET enable_seqscan = off"


# `chronomem_write` as schema step 0011 makes it: the steps of 0004, with
# fewer statements for the server to start (each costs a put 5-10 us of
# server time): the lock and its timeout are one statement, the labels are
# parsed once, and the check for a task that ran before is a statement only
# when the labels name a task. (One statement for the whole write, with
# CTEs, measured slower: 267 us of server time a put against 220.)
def _lean_write_function(is_task: str) -> str:
    """`chronomem_write` as 0011 made it, `is_task` telling when labels name a task."""
    return f"""chronomem_write(
                scope_name TEXT, timeout_ms INTEGER, op_name TEXT, stamp TEXT,
                now_s DOUBLE PRECISION, author_name TEXT, reason_text TEXT,
                target_version INTEGER, labels_text TEXT, keep_empty BOOLEAN,
                rows_json TEXT,
                OUT new_version INTEGER, OUT new_seq BIGINT,
                OUT written INTEGER[], OUT replaced TEXT[]
            ) LANGUAGE plpgsql VOLATILE {_INDEXES_ONLY} AS $$
            DECLARE
                parent INTEGER;
                r RECORD;
                n INTEGER := 0;
                live_id BIGINT;
                live_value TEXT;
                live_created TEXT;
                labels JSONB := labels_text::jsonb;
                task TEXT := labels ->> 'task_id';
                thread TEXT := labels ->> 'thread_id';
                row_id BIGINT;
                first_row BIGINT;
                last_row BIGINT;
            BEGIN
                PERFORM set_config('lock_timeout', timeout_ms || 'ms', true),
                    pg_advisory_xact_lock({LOCK_CLASS}, hashtext(scope_name));
                {_HEAD_AFTER_LOCK}
                new_version := parent + 1;
                written := '{{}}';
                replaced := '{{}}';
                FOR r IN SELECT * FROM json_to_recordset(rows_json::json)
                    AS x (ns TEXT, k TEXT, v TEXT, ttl DOUBLE PRECISION,
                        created TEXT, updated TEXT, fields TEXT)
                LOOP
                    n := n + 1;
                    IF {is_task} THEN
                        IF EXISTS (
                            SELECT 1 FROM items AS it JOIN commits AS c
                            ON c.scope = it.scope AND c.version = it.version
                            WHERE it.namespace = r.ns AND it.key = r.k
                                AND it.valid_to IS NULL AND it.value = r.v
                                AND c.labels::jsonb ->> 'task_id' = task
                                AND c.labels::jsonb ->> 'thread_id' = thread
                        ) THEN
                            CONTINUE;  -- a task run again wrote this already
                        END IF;
                    END IF;
                    UPDATE items AS it SET valid_to = new_version
                    WHERE it.namespace = r.ns AND it.key = r.k
                        AND it.valid_to IS NULL
                    RETURNING it.id, it.value, it.created_at
                    INTO live_id, live_value, live_created;
                    IF live_id IS NULL AND r.v IS NULL THEN
                        CONTINUE;  -- deleting what is not there changes nothing
                    END IF;
                    INSERT INTO items (scope, version, valid_to, namespace, key,
                        value, prev_id, created_at, updated_at, ttl_minutes,
                        expires_at, index_fields)
                    VALUES (scope_name, new_version,
                        CASE WHEN r.v IS NULL THEN new_version END,
                        r.ns, r.k, r.v, live_id,
                        CASE WHEN r.v IS NOT NULL
                            THEN coalesce(r.created, live_created, stamp) END,
                        CASE WHEN r.v IS NOT NULL
                            THEN coalesce(r.updated, stamp) END,
                        r.ttl,
                        CASE WHEN r.v IS NOT NULL THEN now_s + r.ttl * 60 END,
                        r.fields)
                    RETURNING id INTO row_id;
                    first_row := coalesce(first_row, row_id);
                    last_row := row_id;
                    written := array_append(written, n);
                    replaced := array_append(replaced, live_value);
                END LOOP;
                IF cardinality(written) = 0 AND NOT keep_empty THEN
                    new_version := NULL;
                    RETURN;
                END IF;
                INSERT INTO commits (scope, version, parent, created_at, author,
                    reason, op, target, labels, first_id, last_id)
                VALUES (scope_name, new_version, nullif(parent, 0), stamp,
                    author_name, reason_text, op_name, target_version,
                    labels_text, first_row, last_row)
                RETURNING seq INTO new_seq;
                IF parent = 0 THEN
                    INSERT INTO scopes (scope) VALUES (scope_name)
                    ON CONFLICT (scope) DO NOTHING;
                END IF;
            END $$"""


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
            # is an equal value (writes.py relies on it) and a copy between the
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
    Migration(
        "0002_change_search",
        (
            # BM25 as SQLite's FTS5 computes it (`search_changes`), over terms
            # PostgreSQL makes: text split as FTS5's `unicode61` splits it (runs
            # of letters and digits, lowercased, accents dropped), each run
            # stemmed by snowball's `porter`, the algorithm FTS5's `porter`
            # implements. Not the `english` configuration: its parser keeps
            # `new-york`, e-mails and paths whole, its stemmer is Porter2 and
            # it drops stopwords a request may name ("off", "before", "not").
            """CREATE TEXT SEARCH DICTIONARY chronomem_porter (
                TEMPLATE = snowball, Language = porter
            )""",
            r"""CREATE FUNCTION chronomem_terms(body TEXT) RETURNS SETOF TEXT
            LANGUAGE sql STABLE STRICT AS $$
                SELECT coalesce((ts_lexize('chronomem_porter', token))[1], token)
                FROM regexp_split_to_table(regexp_replace(
                    normalize(lower(body), NFD), '[\u0300-\u036f]', '', 'g'
                ), '[^[:alnum:]]+') AS token
                WHERE token <> ''
            $$""",
            # The change index starts over (`index_changes` refills it): each
            # change keeps its length in terms (what FTS5 counts: every column,
            # the scope's word included) and each of its terms how often it
            # occurs per column, so a search reads a term's document frequency
            # and every score's parts from one index range per term.
            "DELETE FROM changes",
            "DELETE FROM projections WHERE name = 'full-text'",
            "ALTER TABLE changes ADD COLUMN length INTEGER NOT NULL",
            "CREATE INDEX changes_by_scope ON changes (scope_key) INCLUDE (length)",
            """CREATE TABLE change_terms (
                scope_key TEXT COLLATE "C" NOT NULL,
                term TEXT COLLATE "C" NOT NULL,
                rowid BIGINT NOT NULL REFERENCES changes (rowid) ON DELETE CASCADE,
                added INTEGER NOT NULL,
                new INTEGER NOT NULL,
                old INTEGER NOT NULL,
                context INTEGER NOT NULL,
                PRIMARY KEY (scope_key, term, rowid)
            )""",
            "CREATE INDEX change_terms_by_row ON change_terms (rowid)",
            # One change into the index; a change already there is left as it
            # is, so two servers catching up at once both succeed.
            """CREATE FUNCTION chronomem_index_change(
                row_id BIGINT, key TEXT, added_text TEXT, new_text TEXT,
                old_text TEXT, context_text TEXT
            ) RETURNS VOID LANGUAGE plpgsql VOLATILE AS $$
            BEGIN
                INSERT INTO changes (rowid, scope_key, added, new, old, context, length)
                VALUES (row_id, key, added_text, new_text, old_text, context_text,
                        1 + (SELECT count(*) FROM chronomem_terms(concat_ws(' ',
                            added_text, new_text, old_text, context_text))))
                ON CONFLICT (rowid) DO NOTHING;
                IF NOT FOUND THEN
                    RETURN;
                END IF;
                INSERT INTO change_terms
                    (scope_key, term, rowid, added, new, old, context)
                SELECT key, term, row_id, count(*) FILTER (WHERE col = 1),
                       count(*) FILTER (WHERE col = 2),
                       count(*) FILTER (WHERE col = 3),
                       count(*) FILTER (WHERE col = 4)
                FROM (VALUES (1, added_text), (2, new_text), (3, old_text),
                             (4, context_text)) AS c (col, body),
                     chronomem_terms(c.body) AS term
                GROUP BY term;
            END $$""",
            # The commits after `after` that no commit still in flight precedes.
            # A seq is taken at INSERT and seen at COMMIT, so a writer holding
            # seq 7 can commit after the writer of seq 8: a reader of "seq >
            # mark" that saw 8 and moved its mark would never see 7. Every
            # writer holds its scope's advisory lock from before it takes a seq
            # until it ends, so: note the last seq taken, wait until every
            # writer holding a lock then has ended, and read up to that seq
            # with a fresh snapshot. Under REPEATABLE READ the snapshot is the
            # transaction's and waiting cannot help: the plain read.
            f"""CREATE FUNCTION chronomem_seqs_after(
                after BIGINT, lim INTEGER, timeout_ms INTEGER
            ) RETURNS SETOF BIGINT LANGUAGE plpgsql VOLATILE AS $$
            DECLARE
                upto BIGINT;
                writers TEXT[];
                deadline TIMESTAMPTZ :=
                    clock_timestamp() + timeout_ms * interval '1 millisecond';
            BEGIN
                IF current_setting('transaction_isolation') = 'read committed' THEN
                    upto := coalesce(pg_sequence_last_value(
                        pg_get_serial_sequence('commits', 'seq')::regclass), 0);
                    SELECT array_agg(virtualtransaction) INTO writers
                    FROM pg_locks
                    WHERE locktype = 'advisory' AND classid = {LOCK_CLASS}
                        AND objsubid = 2 AND granted AND pid <> pg_backend_pid()
                        AND database = (SELECT oid FROM pg_database
                                        WHERE datname = current_database());
                    WHILE writers IS NOT NULL AND EXISTS (
                        SELECT FROM pg_locks
                        WHERE virtualtransaction = ANY (writers)
                            AND locktype = 'advisory' AND classid = {LOCK_CLASS}
                    ) LOOP
                        IF clock_timestamp() > deadline THEN
                            RAISE EXCEPTION 'commits in flight for over % ms',
                                timeout_ms USING ERRCODE = 'lock_not_available';
                        END IF;
                        PERFORM pg_sleep(0.001);
                    END LOOP;
                END IF;
                RETURN QUERY SELECT seq FROM commits
                    WHERE seq > after AND (upto IS NULL OR seq <= upto)
                    ORDER BY seq LIMIT lim;
            END $$""",
        ),
    ),
    Migration(
        "0003_write_function",
        (
            # A commit in one round trip: `LogTransaction._write` (writes.py), the
            # one place versions are made, as the server runs it. Statement by
            # statement, a put waited for the server five times (the scope's
            # lock and HEAD, its live row, closing it, the new row, the commit).
            # The rows come as one JSON array of objects (psycopg takes ~15x
            # longer to send seven arrays); it returns the new version and seq
            # (NULL when nothing changed and `keep_empty` is false), the
            # positions of the rows it wrote and the values they replaced.
            # Every query runs after the lock is won, each with a new snapshot
            # under READ COMMITTED (see `chronomem_lock_scope`).
            "CREATE FUNCTION " + _WRITE_FUNCTION,
        ),
    ),
    Migration(
        "0004_task_writes_once",
        (
            # A write of a LangGraph task that runs again (resumed after an
            # interrupt, retried, re-run after a crash) that finds the value
            # this task already wrote at HEAD changes nothing, as on SQLite
            # (`LogTransaction._write`).
            "CREATE OR REPLACE FUNCTION " + _WRITE_FUNCTION,
        ),
    ),
    Migration(
        "0005_erased_values",
        (
            # As on SQLite (schema step 0006 there).
            """CREATE TABLE erased (
                id BIGINT PRIMARY KEY,
                seq BIGINT,
                why TEXT NOT NULL
            )""",
        ),
    ),
    Migration(
        "0006_projection_remakes",
        # As on SQLite (schema step 0007 there).
        ("ALTER TABLE projections ADD COLUMN remade BIGINT NOT NULL DEFAULT 0",),
    ),
    Migration(
        "0007_rebuild_tickets",
        (
            # As on SQLite (schema step 0008 there).
            """UPDATE projections SET rebuild = (
                SELECT json_agg(json_build_object('scope', r.value, 'ticket', ''))
                FROM json_array_elements(projections.rebuild::json) AS r (value)
            )::text WHERE rebuild::jsonb <> '[]'::jsonb""",
        ),
    ),
    Migration(
        "0008_tags",
        (
            # As on SQLite (schema step 0009 there).
            """CREATE TABLE tags (
                scope TEXT COLLATE "C" NOT NULL,
                name TEXT COLLATE "C" NOT NULL,
                version INTEGER NOT NULL,
                seq BIGINT NOT NULL,
                created_at TEXT COLLATE "C" NOT NULL,
                PRIMARY KEY (scope, name)
            )""",
        ),
    ),
    Migration(
        "0009_head_values_index",
        (
            # A filtered search at HEAD parsed every HEAD row's JSON text under
            # the prefix (20 ms at 10k items, 3x PostgresStore's scan of its
            # jsonb). An equality filter also asks for containment
            # (`_contains`), which this index answers; only the rows it finds
            # are parsed and checked exactly. Only HEAD rows: the index costs
            # a put one entry, and reads of a past version do not use it.
            """CREATE INDEX items_head_values ON items
                USING gin ((value::jsonb) jsonb_path_ops) WHERE valid_to IS NULL""",
        ),
    ),
    Migration(
        "0010_head_values_in_place",
        (
            # A put adds its entries to the index itself, not to the list of
            # pending ones GIN keeps by default, which every search read
            # whole until a vacuum: after loading 10k items, a search took
            # 2-8 ms where the index alone answers in 0.5 ms.
            "ALTER INDEX items_head_values SET (fastupdate = off)",
            "SELECT gin_clean_pending_list('items_head_values')",
        ),
    ),
    Migration(
        "0011_lean_writes",
        (
            # The scope's HEAD read through its index (`_INDEXES_ONLY`), and
            # fewer statements a write (`_lean_write_function`); the rows
            # written are the same.
            "CREATE OR REPLACE FUNCTION "
            + _lean_write_function("task IS NOT NULL AND thread IS NOT NULL"),
            f"""CREATE OR REPLACE FUNCTION chronomem_lock_scope(
                scope_name TEXT, timeout_ms INTEGER
            ) RETURNS INTEGER LANGUAGE plpgsql VOLATILE {_INDEXES_ONLY} AS $$
            DECLARE
                parent INTEGER;
            BEGIN
                PERFORM set_config('lock_timeout', timeout_ms || 'ms', true),
                    pg_advisory_xact_lock({LOCK_CLASS}, hashtext(scope_name));
                {_HEAD_AFTER_LOCK}
                RETURN parent;
            END $$""",
        ),
    ),
    Migration(
        "0012_tasks_need_both_ids",
        (
            # A task is a run's thread and task id, both non-empty, as
            # `writes._task_of` has it: labels with an empty thread_id named
            # a task here and not on SQLite, so a value written again was
            # skipped here and committed there.
            "CREATE OR REPLACE FUNCTION "
            + _lean_write_function("task <> '' AND thread <> ''"),
        ),
    ),
    Migration(
        "0013_branches",
        (
            # A branch's fork and last merge; its commits and rows are in
            # `commits` and `items` under its mount (design.md, "Branches").
            """CREATE TABLE branches (
                id BIGINT GENERATED ALWAYS AS IDENTITY PRIMARY KEY,
                scope TEXT COLLATE "C" NOT NULL,
                name TEXT COLLATE "C" NOT NULL,
                fork INTEGER NOT NULL,
                fork_seq BIGINT NOT NULL,
                merged INTEGER NOT NULL,
                created_at TEXT COLLATE "C" NOT NULL,
                UNIQUE (scope, name)
            )""",
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
                f"Invalid filter key {key!r}: use dot-separated field names "
                "without quotes or control characters, e.g. 'profile.city'"
            )
    return parts


def _field(path: list[str], *, as_text: bool = False) -> str:
    """The value's field at `path`, one `->` a part (`->>` last, if `as_text`).

    A part is an object key, never a list position, as SQLite's `json_extract`
    reads `$.tags.0`; `#>` would read the "0" of `tags.0` as a position:

        >>> _field(["tags", "0"], as_text=True)
        '(value::jsonb -> ?::text ->> ?::text)'
    """
    steps = ["->"] * (len(path) - 1) + ["->>" if as_text else "->"]
    return "(value::jsonb" + "".join(f" {step} ?::text" for step in steps) + ")"


def _type(path: list[str]) -> str:
    return f"jsonb_typeof{_field(path)}"


def _number(path: list[str]) -> str:
    """A number field as `numeric` (exact, however large), NULL for any other type."""
    text = _field(path, as_text=True)
    return f"(CASE WHEN {_type(path)} = 'number' THEN {text}::numeric END)"


_COMPARATORS = {"$gt": ">", "$gte": ">=", "$lt": "<", "$lte": "<="}


def _equals(key: str, operand: Any) -> tuple[str, list[Any]]:
    """Equality that respects JSON types: `1` never equals `true` or `"1"`."""
    path = _path(key)
    if operand is None:  # like LangGraph's stores: a missing field counts as null
        return f"coalesce({_type(path)}, 'null') = 'null'", path
    if isinstance(operand, bool):
        return f"{_field(path)} = ?::jsonb", [*path, "true" if operand else "false"]
    if isinstance(operand, (int, float)):
        return f"{_number(path)} = ?", [*path, *path, operand]
    if isinstance(operand, str):
        text = _field(path, as_text=True)
        return f"{_type(path)} = 'string' AND {text} = ?", [*path, *path, operand]
    if isinstance(operand, (list, tuple, Mapping)):
        return f"{_type(path)} IN ('array', 'object') AND {_field(path)} = ?::jsonb", [
            *path,
            *path,
            orjson.dumps(operand).decode(),
        ]
    raise InvalidFilterError(f"cannot compare {key!r} with {operand!r}")


# Statements holding it are planned for their values each time (`PostgresCursor`):
# a prepared statement's generic plan cannot tell a selective filter on one
# big scope from a selective prefix among many, and read HEAD's rows under
# the prefix one by one (18 ms at 10k items, where the index took 0.5 ms).
_CONTAINS = "value::jsonb @> ?::jsonb"


def _contains(key: str, operand: Any) -> tuple[str, list[Any]] | None:
    """A condition every value whose field `key` equals `operand` meets, which
    the index `items_head_values` answers: the value contains
    `{"a": {"b": operand}}`. None where equality does not imply it: a null
    operand (a missing field matches), an operand JSON cannot carry (NaN, a
    huge int)."""
    path = _path(key)
    if operand is None or (isinstance(operand, float) and not math.isfinite(operand)):
        return None
    nested: Any = operand
    for part in reversed(path):
        nested = {part: nested}
    try:
        text = orjson.dumps(nested).decode()
    except TypeError:  # an int past 64 bits
        return None
    return _CONTAINS, [text]


def _comparison(key: str, op: str, operand: Any) -> tuple[str, list[Any]]:
    """One `field op operand` condition, with the SQLite engine's semantics:
    `$ne` never matches a missing or null field (unless comparing with None),
    and the orderings compare numbers with numbers and strings with strings,
    strings by code point. Equality also asks for containment (`_contains`),
    so the index of HEAD values finds the rows:

        >>> _comparison("city", "$eq", "Paris")[0].split(" AND ")[0]
        'value::jsonb @> ?::jsonb'
    """
    if op == "$eq":
        exact, params = _equals(key, operand)
        contained = _contains(key, operand)
        if contained is None:
            return exact, params
        return f"{contained[0]} AND {exact}", [*contained[1], *params]
    if op == "$ne":
        path = _path(key)
        if operand is None:
            return f"{_type(path)} <> 'null'", path
        sql, params = _equals(key, operand)
        return f"{_type(path)} <> 'null' AND NOT coalesce({sql}, false)", [
            *path,
            *params,
        ]
    if op not in _COMPARATORS:
        raise InvalidFilterError(
            f"unsupported filter operator {op!r} on {key!r}; "
            f"use one of $eq, $ne, {', '.join(_COMPARATORS)}"
        )
    sign, path = _COMPARATORS[op], _path(key)
    if isinstance(operand, (int, float)) and not isinstance(operand, bool):
        return f"{_number(path)} {sign} ?", [*path, *path, operand]
    if isinstance(operand, str):
        text = _field(path, as_text=True)
        return (
            f"{_type(path)} = 'string' AND {text} COLLATE \"C\" {sign} ?",
            [*path, *path, operand],
        )
    raise InvalidFilterError(
        f"{op} on {key!r} needs a number or a string, got {operand!r}"
    )


class PostgresDialect(Dialect):
    """The log's SQL for PostgreSQL (>= 14): jsonb filters, and the terms of
    item changes made by the server (`chronomem_terms`).

    Statements keep the shared `?` placeholders; the engine's cursor turns them
    into psycopg's `%s`. Filters mean what they mean on SQLite, on the JSON
    text cast to jsonb:

        >>> PostgresDialect().filter_conditions({"age": {"$gte": 18}})[1]
        ['age', 'age', 18]
    """

    compare = staticmethod(_comparison)
    INSERT_CHANGE = "SELECT chronomem_index_change(?, ?, ?, ?, ?, ?)"
    CLEAR_CHANGES = "DELETE FROM changes"
    CHANGE_TEXT = "SELECT new, old, context FROM changes WHERE rowid = ?"
    DELETE_CHANGES_AFTER = (
        "DELETE FROM changes WHERE rowid IN "
        "(SELECT id FROM items WHERE scope = ? AND version > ?)"
    )
    # The cursor reads the new id and seq back as its `lastrowid`.
    INSERT_ITEM = Dialect.INSERT_ITEM + " RETURNING id"
    INSERT_COMMIT = Dialect.INSERT_COMMIT + " RETURNING seq"
    PROJECTION_FOR_UPDATE = Dialect.PROJECTION + " FOR UPDATE"
    ALL_PROJECTIONS_FOR_UPDATE = Dialect.ALL_PROJECTIONS + " FOR UPDATE"
    # Writers to different scopes run at once, and `chronomem_write` takes its
    # rows' ids before its seq: a commit after the mark can hold rows below
    # the last one up to it. So also below every later commit's first row.
    # (A writer still in flight got its ids after the catch-up's wait began,
    # above every row of a commit up to the mark.)
    LAST_ROW_UPTO = (
        "SELECT LEAST("
        "(SELECT last_id FROM commits WHERE seq <= m.seq AND last_id IS NOT NULL "
        "ORDER BY seq DESC LIMIT 1), "
        "(SELECT min(first_id) - 1 FROM commits WHERE seq > m.seq)) "
        "FROM (SELECT ?::bigint AS seq) AS m"
    )

    LABEL_EQUALS = "(labels::jsonb ->> ?) = ?"

    # Only rows no one else holds: a row another transaction has locked is
    # being replaced by a writer or refreshed by another reader, so waiting
    # for it gains nothing, and readers that locked rows in different orders
    # would deadlock.
    REFRESH_TTL = (
        "UPDATE items SET expires_at = ? + ttl_minutes * 60 WHERE id IN "
        "(SELECT id FROM items WHERE {rows} FOR UPDATE SKIP LOCKED)"
    )

    def label_key(self, name: str) -> str:
        """The key itself."""
        return name

    REQUEST_TERMS = (
        "SELECT w.n AS word, t.term FROM unnest(?::text[]) WITH ORDINALITY "
        "AS w (text, n), chronomem_terms(w.text) AS t (term)"
    )

    def words_param(self, words: Sequence[str]) -> Any:
        """A `text[]`.

        >>> PostgresDialect().search_changes(
        ...     "s1", ["moved"], side="old", limit=5, since=None, until=None
        ... ).params
        (['moved'], 's1', 's1', 5)
        """
        return list(words)


class WriteDialect(PostgresDialect):
    """A write transaction's SQL: reading a scope's HEAD takes its lock, a
    commit is one call of `chronomem_write`, and a catch-up waits for the
    commits in flight before the ones it reads."""

    def __init__(self, lock_timeout_ms: int) -> None:
        self.HEAD = f"SELECT chronomem_lock_scope(?, {int(lock_timeout_ms)})"
        # (scope, op, stamp, now, author, reason, target, labels, keep_empty,
        # the rows as JSON: `write_rows`).
        self.WRITE = (
            f"SELECT * FROM chronomem_write(?, {int(lock_timeout_ms)}, ?, ?, ?, "
            "?, ?, ?, ?, ?, ?)"
        )
        # A projection catching up (the change index) reads only commits no
        # commit in flight precedes (`chronomem_seqs_after`).
        self.SEQS_AFTER = (
            f"SELECT chronomem_seqs_after(?, ?, {int(lock_timeout_ms)}) AS seq"
        )


@functools.lru_cache(maxsize=2048)
def psycopg_sql(sql: str) -> str:
    """Shared SQL (`?` placeholders) as psycopg writes it (`%s`)."""
    return sql.replace("%", "%%").replace("?", "%s")


class PostgresCursor:
    """A psycopg cursor behind the DB-API slice the log uses (`sql.Cursor`).

    Given `begin`, it opens the transaction when the first statement comes,
    sending both in one round trip (a pipeline: the server's answer to `BEGIN`
    is not waited for alone). If they find the connection dead (a restarted
    server, a killed backend), nothing was committed: given `reconnect`, it
    sends them again on the cursor that returns, up to `RETRIES` times in all.
    `alone` sends a statement that is the whole transaction, without `BEGIN`:
    the server commits it as it ends.
    """

    RETRIES = 3

    def __init__(
        self,
        cur: psycopg.Cursor[Any],
        begin: str | None = None,
        *,
        reconnect: Callable[[], psycopg.Cursor[Any]] | None = None,
    ) -> None:
        self._cur = cur
        self._begin = begin
        self._reconnect = reconnect
        self.state = "new" if begin else "open"
        """`new` (nothing sent), `open` (in a transaction), `alone` (sending a
        statement that commits itself) or `ended` (it did)."""

    @property
    def raw(self) -> psycopg.Cursor[Any]:
        """The psycopg cursor."""
        return self._cur

    @property
    def lastrowid(self) -> int | None:
        """The id an `INSERT ... RETURNING id` (or `seq`) just made."""
        row = self._cur.fetchone()
        return None if row is None else int(row[0])

    def _open(self, sql: str | None = None, params: Sequence[Any] = ()) -> None:
        """Begin the transaction, if not yet, with `sql` (shared SQL) when given."""
        if self.state == "ended":
            raise RuntimeError(
                "this transaction ended with its one statement (`alone`): "
                "nothing may follow it"
            )
        if self._begin is None or self.state == "open":
            if sql is not None:
                self._send(sql, params)
            return
        for attempt in range(self.RETRIES):
            try:
                if sql is None:
                    self._cur.execute(self._begin)
                else:
                    with self._cur.connection.pipeline():
                        self._cur.execute(self._begin)
                        self._send(sql, params)
                break
            except psycopg.OperationalError:
                last = attempt + 1 == self.RETRIES
                if self._reconnect is None or not self._cur.connection.closed or last:
                    raise
                self._cur = self._reconnect()
        self.state = "open"

    def _send(self, sql: str, params: Sequence[Any]) -> None:
        """Send shared SQL, prepared as psycopg decides, except a filter the
        index of HEAD values answers (`_CONTAINS`)."""
        prepare = False if _CONTAINS in sql else None
        self._cur.execute(psycopg_sql(sql), params, prepare=prepare)

    def execute(self, sql: str, params: Sequence[Any] = ()) -> psycopg.Cursor[Any]:
        self._open(sql, params)
        return self._cur

    def alone(self, sql: str, params: Sequence[Any] = ()) -> psycopg.Cursor[Any]:
        """Run `sql` as the whole transaction, committed by the server as it
        ends, if nothing was sent yet and the connection has not heard from
        the server since (its farewell, when it ended the connection: then
        `BEGIN` goes first, with its retries). Later statements raise.
        """
        if self.state != "new" or _spoken(self._cur.connection):
            self._open()
            return self._cur.execute(psycopg_sql(sql), params)
        self.state = "alone"
        self._cur.execute(psycopg_sql(sql), params)
        self.state = "ended"
        return self._cur

    def executemany(self, sql: str, rows: Iterable[Sequence[Any]]) -> None:
        self._open()
        self._cur.executemany(psycopg_sql(sql), rows)

    def fetchone(self) -> Any:
        return self._cur.fetchone()

    def fetchall(self) -> list[Any]:
        return self._cur.fetchall()


def _spoken(conn: psycopg.Connection[Any]) -> bool:
    """Whether an idle connection has something to read: the last words of a
    server that ended it, or the end of its socket. Asks the kernel only."""
    if conn.closed:
        return True
    if hasattr(select, "poll"):  # select() cannot watch a descriptor past 1023
        poller = select.poll()
        poller.register(conn.fileno(), select.POLLIN)
        return bool(poller.poll(0))
    readable, _, _ = select.select([conn.fileno()], [], [], 0)  # Windows
    return bool(readable)
