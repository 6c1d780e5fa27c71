"""The log's SQL, written once in the subset every supported database speaks.

Each statement is a class attribute or a builder returning a `Statement`; the
transaction's parts (`base.py` assembles them) only execute them, so they hold
no SQL text. Dialects (`sqlite_sql.py`, `postgres_sql.py`) subclass `Dialect`
for what differs: JSON filters and how the full-text index makes its terms.

Over 600 lines because it is every statement the log runs on both databases,
in one place: what a read or a write does is all here, and a dialect holds
only what differs.
"""

from __future__ import annotations

import math
from collections.abc import Callable, Iterable, Mapping, Sequence
from datetime import datetime
from typing import Any, NamedTuple, Protocol

from langgraph_chronomem.engine.values import Stamp, encode_time, now_text
from langgraph_chronomem.errors import InvalidFilterError

__all__ = [
    "BranchAt",
    "Comparison",
    "Cursor",
    "Dialect",
    "Statement",
    "walk_filter",
]


# Per side of a change, the weight of each column's matches (added, new, old,
# context), and BM25's k1 and b: FTS5's `bm25()` weights the engines had.
_SIDE_WEIGHTS = {"new": (1.0, 1.0, 0.0, 0.3), "old": (0.0, 0.0, 1.0, 0.3)}
_K1, _B = 1.2, 0.75


class Statement(NamedTuple):
    """SQL text and its parameters: `cur.execute(*statement)`."""

    sql: str
    params: Sequence[Any] = ()


class Cursor(Protocol):
    """The slice of a DB-API cursor the log uses."""

    @property
    def lastrowid(self) -> int | None: ...
    def execute(self, sql: str, params: Sequence[Any] = ...) -> Any: ...
    def executemany(self, sql: str, rows: Iterable[Sequence[Any]]) -> Any: ...
    def fetchone(self) -> Any: ...
    def fetchall(self) -> list[Any]: ...


Comparison = Callable[[str, str, Any], tuple[str, list[Any]]]
"""A dialect's SQL for one comparison: (dotted key, operator, operand) to a
condition on the stored value and its parameters."""


def walk_filter(
    filter: Mapping[str, Any], compare: Comparison, parent: str = ""
) -> tuple[list[str], list[Any]]:
    """SQL conditions for a LangGraph search filter, each from `compare`.

    `{"city": "Paris"}` is equality, `{"age": {"$gte": 18}}` a comparison, and a
    nested mapping without operators (`{"profile": {"city": "Paris"}}`) matches
    fields inside the object, like `InMemoryStore` does. Conditions are ANDed.
    What differs between databases is only `compare`:

        >>> walk_filter({"age": {"$gte": 18}}, lambda k, op, x: (f"{k} {op} ?", [x]))
        (['age $gte ?'], [18])

    Raises:
        InvalidFilterError: For a key that is not a field name (`$or`
            included), operators mixed with fields, or whatever `compare`
            refuses (an unknown operator, an operand no value can match).
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
            inner, inner_params = walk_filter(cond, compare, key)
            conditions += inner
            params += inner_params
            continue
        else:
            pairs = [("$eq", cond)]
        for op, operand in pairs:
            if isinstance(operand, float) and math.isnan(operand):
                # NaN equals and orders with nothing (and no JSON value is
                # NaN): no match, as in LangGraph's stores, once `compare` has
                # checked the key and the operator.
                compare(key, op, 0.0)
                conditions.append("1 = 0")
                continue
            sql, args = compare(key, op, operand)
            conditions.append(sql)
            params += args
    return conditions, params


def _visible(
    scope: str | None, version: int | None, live_after: float | None
) -> tuple[str, list[Any]]:
    """Rows visible at HEAD (optionally unexpired) or at `version` of `scope`."""
    if version is None:
        if live_after is None:
            return "valid_to IS NULL", []
        return "valid_to IS NULL AND (expires_at IS NULL OR expires_at > ?)", [
            live_after
        ]
    # An erased version keeps its place in time with no value: not there.
    sql = "version <= ? AND (valid_to IS NULL OR valid_to > ?) AND value IS NOT NULL"
    if scope is None:
        return sql, [version, version]
    return "scope = ? AND " + sql, [scope, version, version]


def _under(prefix: str) -> tuple[str, list[Any]]:
    """The namespace itself or any namespace below it, as one index range.

    `.` separates labels and `/` is the character after it, so `a.b` and all its
    descendants sort in `[a.b, a.b/)`; the second test drops the siblings in that
    range whose next character sorts before `.` (`a.b-x`). A single range lets
    the planner stay on one index instead of reading every version of `a.b`.
    """
    if not prefix:
        return "", []
    return "namespace >= ? AND namespace < ? AND (namespace = ? OR namespace > ?)", [
        prefix,
        prefix + "/",
        prefix,
        prefix + ".",
    ]


def _where(*parts: tuple[str, list[Any]]) -> tuple[str, list[Any]]:
    sql = " AND ".join(p[0] for p in parts if p[0])
    return sql, [param for p in parts for param in p[1]]


def _marks(values: Sequence[Any]) -> str:
    return ",".join("?" * len(values))


def _row_fields(row: str) -> str:
    """The columns of the `items` row named `row` that `rows._Row` holds, in
    its order, with why its value was erased."""
    return (
        f"{row}.id, {row}.namespace, {row}.key, {row}.version, {row}.value, "
        f"{row}.created_at, {row}.updated_at, {row}.ttl_minutes, "
        f"{row}.index_fields, (SELECT e.why FROM erased AS e WHERE e.id = {row}.id)"
    )


# The `items` rows `i` that commits `c` wrote: the id range each records, read by
# primary key. The range holds only its rows where one writer at a time takes ids
# (SQLite); the scope and version keep it exact where concurrent commits
# interleave them, written (`+ 0`, `|| ''`) so that SQLite builds no index for
# them on every run. CROSS JOIN makes it walk the commits first, as meant,
# instead of every item to look its commit up.
_ROWS = "commits AS c CROSS JOIN items AS i"
_ROWS_OF_C = (
    "i.id BETWEEN c.first_id AND c.last_id "
    "AND i.version + 0 = c.version AND i.scope || '' = c.scope"
)
# Why the value a row `i` wrote, or the one it replaced, was erased (or NULL).
_ERASED_NEW = "(SELECT e.why FROM erased AS e WHERE e.id = i.id)"
_ERASED_OLD = "(SELECT e.why FROM erased AS e WHERE e.id = i.prev_id)"
# Rows of commits `c` that stand for memory state: not a proposal's, which waits
# for review (its rows are in the log for `log`, `show` and `history` only).
_NOT_PROPOSED = "c.op <> 'propose'"
# An item change with what it replaced, and the commit's author, reason and op.
_CHANGE_ROWS = (
    "SELECT i.id, c.scope, c.version, c.created_at, i.namespace, i.key, i.value, "
    "p.value, c.author, c.reason, c.op"
)


class BranchAt(NamedTuple):
    """Where a read on a branch looks, as the log stores it: the base scope at
    the fork, with the branch's own rows up to `version` over it.

    A branch's rows live under its mount, a namespace root no LangGraph
    namespace can have (an empty label, then the branch's id):

        >>> at = BranchAt("memories.alice", ".7", fork=3, version=5)
        >>> at.scope_text, at.mounted("memories.alice.food")
        ('.7.memories.alice', '.7.memories.alice.food')
        >>> at.unmounted(".7.memories.alice.food")
        'memories.alice.food'
    """

    scope: str
    mount: str
    fork: int
    version: int

    @property
    def scope_text(self) -> str:
        """The branch's own scope: its commits' and rows' `scope`."""
        return self.mounted(self.scope)

    def mounted(self, namespace: str) -> str:
        """Where the branch keeps a namespace (given as text)."""
        return f"{self.mount}.{namespace}" if namespace else self.mount

    def unmounted(self, namespace: str) -> str:
        """A namespace as read (text): the branch's own without its mount."""
        if namespace == self.mount:
            return ""
        if namespace.startswith(self.mount + "."):
            return namespace[len(self.mount) + 1 :]
        return namespace


def _branch_sides(at: BranchAt) -> tuple[tuple[str, list[Any]], tuple[str, list[Any]]]:
    """The rows a read on a branch sees: the base scope's at the fork that no
    branch row (up to `at.version`) replaced, and the branch's own newest row
    of each item up to `at.version`; a row without a value is a deletion."""
    base = (
        "scope = ? AND version <= ? AND (valid_to IS NULL OR valid_to > ?) "
        "AND value IS NOT NULL AND NOT EXISTS (SELECT 1 FROM items AS o "
        "WHERE o.namespace = CAST(? AS TEXT) || items.namespace "
        "AND o.key = items.key AND o.version <= ?)",
        [at.scope, at.fork, at.fork, at.mount + ".", at.version],
    )
    own = (
        "scope = ? AND version <= ? AND value IS NOT NULL AND NOT EXISTS "
        "(SELECT 1 FROM items AS o WHERE o.namespace = items.namespace "
        "AND o.key = items.key AND o.version > items.version AND o.version <= ?)",
        [at.scope_text, at.version, at.version],
    )
    return base, own


# What a read returns of an item (`reads._stored` reads it).
_ITEM_READ = (
    "SELECT namespace, key, value, created_at, updated_at, ttl_minutes, id FROM items"
)


def _among_items(pairs: Sequence[tuple[str, str]]) -> tuple[str, list[str]]:
    """A condition on `items` rows: one of these (namespace, key) items."""
    rows = ", ".join("(?, ?)" for _ in pairs)
    return f"(namespace, key) IN (VALUES {rows})", [p for pair in pairs for p in pair]


class Dialect:
    """The log's SQL in the portable subset, with `?` placeholders.

    A database adds what is its own: how a filter's comparison is written
    (`compare`) and the full-text index over item changes.
    """

    INSERT_CHANGE: str
    DELETE_CHANGES_AFTER: str
    CLEAR_CHANGES: str

    @staticmethod
    def now() -> Stamp:
        """A write's time as the log stores it, ordered as time is: ISO text
        (`values.now_text`) unless a dialect stores it shorter.
        `values.decode_time` reads either form."""
        return now_text()

    @staticmethod
    def encode_time(moment: datetime) -> Stamp:
        """`moment` as the log stores a time (see `now`)."""
        return encode_time(moment)

    PROJECTION = "SELECT seq, rebuild, remade FROM projections WHERE name = ?"
    SAVE_PROJECTION = (
        "INSERT INTO projections (seq, rebuild, name) VALUES (?, ?, ?) "
        "ON CONFLICT (name) DO UPDATE "
        "SET seq = excluded.seq, rebuild = excluded.rebuild"
    )
    # A catch-up moves the mark alone: the scopes to rebuild are a reset's to
    # add and a rebuild's to remove, each reading them with `_FOR_UPDATE`. And
    # only from where it read it: another store may have moved it meanwhile,
    # or reset it to make the projection anew.
    ADVANCE_PROJECTION = (
        "INSERT INTO projections (seq, rebuild, name) VALUES (?, '[]', ?) "
        "ON CONFLICT (name) DO UPDATE SET seq = excluded.seq "
        "WHERE projections.seq = ? RETURNING seq"
    )
    FIRST_PROJECTION = (
        "INSERT INTO projections (seq, rebuild, name) VALUES (0, '[]', ?) "
        "ON CONFLICT (name) DO NOTHING"
    )
    SET_REBUILD = "UPDATE projections SET rebuild = ? WHERE name = ?"
    REBUILT = "UPDATE projections SET rebuild = ?, remade = remade + 1 WHERE name = ?"
    REMADE = "UPDATE projections SET remade = remade + 1 WHERE name = ?"
    ALL_PROJECTIONS = "SELECT name, seq, rebuild FROM projections ORDER BY name"
    # A write transaction on SQLite holds the whole database already.
    PROJECTION_FOR_UPDATE = PROJECTION
    ALL_PROJECTIONS_FOR_UPDATE = ALL_PROJECTIONS
    FORGET_PROJECTION = "DELETE FROM projections WHERE name = ?"
    SEQS_AFTER = "SELECT seq FROM commits WHERE seq > ? ORDER BY seq LIMIT ?"
    LAST_SEQ = "SELECT COALESCE(MAX(seq), 0) FROM commits"
    LAST_ROW_UPTO = (
        "SELECT last_id FROM commits WHERE seq <= ? AND last_id IS NOT NULL "
        "ORDER BY seq DESC LIMIT 1"
    )
    CHANGED_ITEMS = (
        f"SELECT DISTINCT i.namespace, i.key FROM {_ROWS} "
        f"WHERE {_ROWS_OF_C} AND c.seq > ? AND c.seq <= ?"
    )
    SCOPE_HEAD = (
        "SELECT i.id, i.scope, i.namespace, i.key, i.value, i.index_fields "
        f"FROM {_ROWS} WHERE {_ROWS_OF_C} AND c.scope = ? AND i.valid_to IS NULL"
    )

    @staticmethod
    def compare(key: str, op: str, operand: Any) -> tuple[str, list[Any]]:
        """The database's SQL for one comparison (a `Comparison`)."""
        raise NotImplementedError

    def filter_conditions(
        self, filter: Mapping[str, Any]
    ) -> tuple[list[str], list[Any]]:
        """SQL conditions (and their parameters) for a LangGraph search filter:
        `walk_filter` reads it, the dialect's `compare` writes each comparison.

        Raises:
            InvalidFilterError: For an unknown operator, a key that is not a
                field name (`$or` included), or an operand no value can match.
        """
        return walk_filter(filter, self.compare)

    def row_links(self, ids: Sequence[int], *, following: bool) -> Statement:
        """(id, version, prev_id) of rows by id, or of the rows that replaced them
        (found among their item's rows, by index: `prev_id` has none)."""
        if following:
            return Statement(
                "SELECT n.id, n.version, n.prev_id FROM items AS p JOIN items AS n "
                "ON n.namespace = p.namespace AND n.key = p.key AND n.prev_id = p.id "
                f"WHERE p.id IN ({_marks(ids)}) ORDER BY n.id",
                tuple(ids),
            )
        return Statement(
            f"SELECT id, version, prev_id FROM items WHERE id IN ({_marks(ids)})",
            tuple(ids),
        )

    # A commit label's value equals `?`: the label named as `label_key` gives it.
    LABEL_EQUALS: str

    def label_key(self, name: str) -> str:
        """A label's name as `LABEL_EQUALS` takes it."""
        raise NotImplementedError

    # The request's words and their terms, one row per (word, term): `?` is
    # the words as `words_param` passes them.
    REQUEST_TERMS: str

    def index_changes(
        self, rows: Sequence[tuple[int, str, str, str, str, str]]
    ) -> list[tuple[str, Sequence[Sequence[Any]]]]:
        """The statements, each with its rows of parameters, that add item
        changes (row id, scope key, added, new, old, context) to the change
        index: here `INSERT_CHANGE`, which makes the terms itself."""
        return [(self.INSERT_CHANGE, rows)]

    def words_param(self, words: Sequence[str]) -> Any:
        """The request's words as `REQUEST_TERMS` takes them."""
        raise NotImplementedError

    def scope_param(self, scope_key: str) -> Any:
        """A scope's word (`rows.scope_key`) as the change index's `scope_key`
        columns hold it: the word itself, unless a dialect stores it shorter."""
        return scope_key

    def search_changes(
        self,
        scope_key: str,
        words: Sequence[str],
        *,
        side: str,
        limit: int,
        since: Stamp | None,
        until: Stamp | None,
    ) -> Statement:
        """BM25 over one scope's item changes, on one side: any of `words`.

        Returns (row id, version, score) rows, best (lowest) score first.
        `side="new"` searches what changes introduced (`added`, `new`),
        `"old"` what they replaced; both also search `context` (paths,
        authors, reasons) at a third of the weight.

        FTS5's `bm25()`, with the scope's own statistics: per word `w` and
        change `D`, `idf(w) * f * (k1 + 1) / (f + k1 * (1 - b + b * |D| /
        avgdl))`, where `f` is the weighted count of `w` in the side's
        columns, `idf(w) = ln((N - n(w) + 0.5) / (n(w) + 0.5))` (1e-6 if not
        positive), `n(w)` the scope's changes holding `w` on that side, `N`
        and `avgdl` the number and mean length in terms of the scope's
        changes; negated, so lower is better as in SQLite. Counting in the
        scope keeps one user's memories from weighing on another's ranking,
        and a search reads one scope's rows. A word of several terms
        (`isn't`) is counted where all its terms are, as often as the rarest.
        """
        added, new, old, context = _SIDE_WEIGHTS[side]
        window, window_params = "", []
        if since is not None:
            window += " AND c.created_at >= ?"
            window_params.append(since)
        if until is not None:
            window += " AND c.created_at < ?"
            window_params.append(until)
        # The joins run in the order written (`CROSS JOIN`, which SQLite does not
        # reorder): from the request's few terms into the scope's term index,
        # and from the scored changes to their items, never the other way.
        dated = (
            " CROSS JOIN commits AS c WHERE i.id = s.rowid AND c.scope = i.scope "
            f"AND c.version = i.version{window}"
            if window
            else " WHERE i.id = s.rowid"
        )
        sql = (
            "WITH q AS (SELECT word, term, count(*) OVER (PARTITION BY word) "
            f"AS terms FROM ({self.REQUEST_TERMS}) AS r), "
            "docs AS (SELECT CAST(count(*) AS DOUBLE PRECISION) AS n, "
            "CAST(avg(length) AS DOUBLE PRECISION) AS avgdl "
            "FROM changes WHERE scope_key = ?), "
            f"hits AS (SELECT t.rowid, q.word, {added} * min(t.added) + "
            f"{new} * min(t.new) + {old} * min(t.old) + {context} * min(t.context) "
            "AS f FROM q CROSS JOIN change_terms AS t WHERE t.scope_key = ? "
            "AND t.term = q.term GROUP BY t.rowid, q.word, q.terms "
            "HAVING count(*) = q.terms), "
            "matched AS (SELECT * FROM hits WHERE f > 0), "
            "idf AS (SELECT m.word, ln((d.n - count(*) + 0.5) / (count(*) + 0.5)) "
            "AS idf FROM matched AS m CROSS JOIN docs AS d GROUP BY m.word, d.n), "
            "scored AS (SELECT m.rowid, -sum(CASE WHEN idf.idf > 0 THEN idf.idf "
            f"ELSE 1e-6 END * m.f * {_K1 + 1} / (m.f + {_K1} * "
            f"({1 - _B} + {_B} * ch.length / d.avgdl))) AS score "
            "FROM matched AS m CROSS JOIN idf CROSS JOIN changes AS ch "
            "CROSS JOIN docs AS d WHERE idf.word = m.word AND ch.rowid = m.rowid "
            "GROUP BY m.rowid) "
            "SELECT i.id, i.version, s.score FROM scored AS s "
            f"CROSS JOIN items AS i{dated} ORDER BY s.score, i.id LIMIT ?"
        )
        key = self.scope_param(scope_key)
        return Statement(
            sql, (self.words_param(words), key, key, *window_params, limit)
        )

    HEAD = "SELECT coalesce(max(version), 0) FROM commits WHERE scope = ?"
    META = "SELECT value FROM chronomem_meta WHERE name = ?"
    SET_META = (
        "INSERT INTO chronomem_meta (name, value) VALUES (?, ?) "
        "ON CONFLICT (name) DO UPDATE SET value = excluded.value"
    )
    FIRST_META = (
        "INSERT INTO chronomem_meta (name, value) VALUES (?, ?) "
        "ON CONFLICT (name) DO NOTHING"
    )
    SCOPE_STATS = (
        "SELECT s.scope, "
        "(SELECT coalesce(max(version), 0) FROM commits AS c "
        "WHERE c.scope = s.scope), "
        "(SELECT COUNT(*) FROM commits AS c WHERE c.scope = s.scope), "
        "(SELECT MAX(created_at) FROM commits AS c WHERE c.scope = s.scope), "
        f"(SELECT COUNT(*) FROM {_ROWS} WHERE {_ROWS_OF_C} "
        "AND c.scope = s.scope AND i.valid_to IS NULL), "
        f"(SELECT COUNT(*) FROM {_ROWS} WHERE {_ROWS_OF_C} AND c.scope = s.scope) "
        "FROM scopes AS s ORDER BY s.scope"
    )
    COMMITS_AFTER = "SELECT COUNT(*) FROM commits WHERE seq > ?"
    COMMIT_SEQ = "SELECT seq FROM commits WHERE scope = ? AND version = ?"
    # Tags (engine/tags.py), each with the seq of the commit now at its version
    # (NULL: none), which differs from its own once a reset destroyed that one.
    TAGS = (
        "SELECT t.name, t.version, t.seq, t.created_at, c.seq FROM tags AS t "
        "LEFT JOIN commits AS c ON c.scope = t.scope AND c.version = t.version "
        "WHERE t.scope = ?"
    )
    TAG = TAGS + " AND t.name = ?"
    TAGS += " ORDER BY t.version, t.name"
    SAVE_TAG = (
        "INSERT INTO tags (scope, name, version, seq, created_at) "
        "VALUES (?, ?, ?, ?, ?) ON CONFLICT (scope, name) DO UPDATE SET "
        "version = excluded.version, seq = excluded.seq, "
        "created_at = excluded.created_at"
    )
    DELETE_TAG = "DELETE FROM tags WHERE scope = ? AND name = ?"
    ADD_SCOPE = "INSERT INTO scopes (scope) VALUES (?) ON CONFLICT (scope) DO NOTHING"
    # A SELECT and an UPDATE by id: cheaper than one UPDATE ... RETURNING in
    # SQLite 3.40 (measured: 15 us against 35 us per put).
    LIVE_ROW = (
        "SELECT id, value, created_at, version FROM items "
        "WHERE namespace = ? AND key = ? AND valid_to IS NULL"
    )
    CLOSE_ROW = "UPDATE items SET valid_to = ? WHERE id = ?"
    ROW_LABELS = (
        "SELECT c.labels FROM items AS i JOIN commits AS c "
        "ON c.scope = i.scope AND c.version = i.version WHERE i.id = ?"
    )
    # An item's latest proposed row, and the labels of the proposal that wrote it.
    LAST_PROPOSED = (
        "SELECT i.value, c.labels FROM items AS i JOIN commits AS c "
        "ON c.scope = i.scope AND c.version = i.version "
        "WHERE i.namespace = ? AND i.key = ? AND c.op = 'propose' "
        "ORDER BY i.id DESC LIMIT 1"
    )
    INSERT_ITEM = (
        "INSERT INTO items (scope, version, valid_to, namespace, key, value, prev_id, "
        "created_at, updated_at, ttl_minutes, expires_at, index_fields) "
        "VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)"
    )
    # Its seq is the cursor's `lastrowid` (RETURNING costs more than the insert);
    # `first_id` and `last_id` are the ids of the first and last `items` row it
    # wrote (NULL for none), so its rows are found without an index of their own.
    INSERT_COMMIT = (
        "INSERT INTO commits (scope, version, parent, created_at, author, reason, op, "
        "target, labels, first_id, last_id) VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)"
    )
    # Per item written in (lo, hi]: the row its first write replaced (all NULL
    # for none), then its last row, in item order. An item's rows get higher
    # ids as its versions grow.
    ITEM_ENDS_IN_RANGE = (
        f"SELECT {_row_fields('p')}, {_row_fields('h')} FROM (SELECT min(i.id) "
        f"AS first_id, max(i.id) AS last_id FROM {_ROWS} WHERE {_ROWS_OF_C} "
        f"AND c.scope = ? AND c.version > ? AND c.version <= ? AND {_NOT_PROPOSED} "
        "GROUP BY i.namespace, i.key) AS g "
        "JOIN items AS f ON f.id = g.first_id JOIN items AS h ON h.id = g.last_id "
        "LEFT JOIN items AS p ON p.id = f.prev_id ORDER BY f.namespace, f.key"
    )
    CHANGES_IN_RANGE = (
        f"SELECT i.version, i.namespace, i.key, i.value, p.value, {_ERASED_NEW}, "
        f"{_ERASED_OLD} FROM {_ROWS} LEFT JOIN items AS p ON p.id = i.prev_id "
        f"WHERE {_ROWS_OF_C} "
        "AND c.scope = ? AND c.version BETWEEN ? AND ? ORDER BY i.version, i.id"
    )
    # Every item change of the commits with seq in (after, upto]: the row, the
    # value it replaced, and the commit's author, reason and op.
    CHANGE_ROWS_BETWEEN = (
        f"{_CHANGE_ROWS} FROM {_ROWS} "
        f"LEFT JOIN items AS p ON p.id = i.prev_id WHERE {_ROWS_OF_C} "
        f"AND c.seq > ? AND c.seq <= ? AND {_NOT_PROPOSED} ORDER BY i.id"
    )
    SCOPE_CHANGE_ROWS = (
        f"{_CHANGE_ROWS} FROM {_ROWS} "
        f"LEFT JOIN items AS p ON p.id = i.prev_id WHERE {_ROWS_OF_C} "
        f"AND c.scope = ? AND c.seq > ? AND {_NOT_PROPOSED} ORDER BY i.id"
    )
    COMMIT_OP = "SELECT op FROM commits WHERE scope = ? AND version = ?"
    # Whether a value was once removed from a scope by a delete, a revert or a
    # rollback: one of their rows replaced a row holding it. Reads only the
    # rows such commits wrote.
    REMOVED_BEFORE = (
        f"SELECT 1 FROM {_ROWS} JOIN items AS r ON r.id = i.prev_id "
        f"WHERE {_ROWS_OF_C} AND c.scope = ? "
        "AND c.op IN ('delete', 'revert', 'rollback') AND r.value = ? LIMIT 1"
    )
    # The scope's proposals that no approve or reject has decided, oldest first.
    PENDING = (
        "SELECT p.version FROM commits AS p WHERE p.scope = ? AND p.op = 'propose' "
        "AND NOT EXISTS (SELECT 1 FROM commits AS d WHERE d.scope = p.scope "
        "AND d.op IN ('approve', 'reject') AND d.target = p.version) "
        "ORDER BY p.version"
    )
    # Who decided a proposal, if anyone did: the decision's op and version.
    DECISION = (
        "SELECT op, version FROM commits WHERE scope = ? "
        "AND op IN ('approve', 'reject') AND target = ?"
    )
    # What a commit wrote to each item, what that replaced, and the item at HEAD.
    REVERT_PLAN = (
        f"SELECT i.namespace, i.key, i.value, i.prev_id, h.value, h.id FROM {_ROWS} "
        "LEFT JOIN items AS h ON h.namespace = i.namespace AND h.key = i.key "
        f"AND h.valid_to IS NULL WHERE {_ROWS_OF_C} "
        "AND c.scope = ? AND c.version = ? ORDER BY i.id"
    )
    VERSIONS_BETWEEN = (
        "SELECT version FROM commits WHERE scope = ? AND created_at >= ? "
        "AND created_at < ?"
    )
    COMMIT_ROWS = (
        f"SELECT i.id FROM {_ROWS} WHERE {_ROWS_OF_C} "
        "AND c.scope = ? AND c.version = ? ORDER BY i.id"
    )
    # Every item change committed to a scope after a seq, oldest first, with
    # its commit's labels: what a thread's revert since a checkpoint reads.
    CHANGES_AFTER_SEQ = (
        "SELECT i.namespace, i.key, i.id, i.prev_id, c.version, c.author, c.labels "
        f"FROM {_ROWS} WHERE {_ROWS_OF_C} AND c.scope = ? AND c.seq > ? "
        f"AND {_NOT_PROPOSED} ORDER BY c.seq, i.id"
    )
    LATER_WRITES = (
        "SELECT i.version, c.author FROM items AS i JOIN commits AS c "
        "ON c.scope = i.scope AND c.version = i.version "
        "WHERE i.namespace = ? AND i.key = ? AND i.version > ? "
        f"AND {_NOT_PROPOSED} ORDER BY i.version"
    )
    HISTORY = (
        "SELECT i.version, c.seq, c.op, c.author, c.created_at, i.value, i.created_at, "
        f"i.updated_at, {_ERASED_NEW}, c.labels "
        "FROM items AS i JOIN commits AS c "
        "ON c.scope = ? AND c.version = i.version "
        "WHERE i.namespace = ? AND i.key = ? ORDER BY i.version DESC"
    )
    EXPIRED = (
        "SELECT scope, namespace, key FROM items WHERE valid_to IS NULL "
        "AND expires_at IS NOT NULL AND expires_at <= ? ORDER BY id"
    )
    # The rows of a scope's commits after a version: what a reset removes.
    ROWS_AFTER = (
        f"SELECT i.id FROM {_ROWS} WHERE {_ROWS_OF_C} AND c.scope = ? AND c.version > ?"
    )
    PREV_IDS_AFTER = (
        f"SELECT i.prev_id FROM {_ROWS} WHERE {_ROWS_OF_C} "
        "AND c.scope = ? AND c.version > ? AND i.prev_id IS NOT NULL"
    )
    DELETE_ERASED_AFTER = f"DELETE FROM erased WHERE id IN ({ROWS_AFTER})"
    DELETE_ITEMS_AFTER = f"DELETE FROM items WHERE id IN ({ROWS_AFTER})"
    # What `redact` reads, erases and records: the scope's values, in table
    # order (a scan, not a walk of `items_key` with a lookup per row), or
    # only those that may hold a text, where the dialect can tell
    # (`VALUES_MAYBE_HOLDING`: the scope, then the text).
    VALUES_IN_SCOPE = (
        "SELECT id, namespace, key, version, value, valid_to FROM items "
        "WHERE scope = ? AND value IS NOT NULL"
    )
    VALUES_MAYBE_HOLDING: str | None = None

    def commit_texts(self, scope: str, versions: Sequence[int]) -> Statement:
        """The reasons and labels of these commits of a scope."""
        return Statement(
            "SELECT seq, version, reason, labels FROM commits "
            f"WHERE scope = ? AND version IN ({_marks(versions)})",
            (scope, *versions),
        )

    SET_REASON = "UPDATE commits SET reason = ? WHERE seq = ?"
    SET_LABELS = "UPDATE commits SET labels = ? WHERE seq = ?"
    # What `compact` reads: each version with a value, and when it was made.
    VERSIONS_IN_SCOPE = (
        "SELECT i.id, i.namespace, i.key, i.version, i.valid_to, c.created_at "
        "FROM items AS i JOIN commits AS c ON c.scope = i.scope "
        "AND c.version = i.version WHERE i.scope = ? AND i.value IS NOT NULL "
        f"AND {_NOT_PROPOSED} ORDER BY i.namespace, i.key, i.version"
    )
    # The versions `[version, valid_to)` each compacted row of a scope was
    # visible at.
    COMPACTED_SPANS = (
        "SELECT i.version, i.valid_to FROM erased AS e JOIN items AS i "
        "ON i.id = e.id WHERE e.why = 'compacted' AND i.scope = ? "
        "ORDER BY i.version"
    )
    ERASE_VALUE = "UPDATE items SET value = NULL, index_fields = NULL WHERE id = ?"
    RECORD_ERASURE = "INSERT INTO erased (id, seq, why) VALUES (?, ?, ?)"
    DELETE_COMMITS_AFTER = "DELETE FROM commits WHERE scope = ? AND version > ?"
    # Before a reset deletes rows: keep the ids it frees from ever being given
    # again. `None` where ids come from a sequence, which never reuses one.
    KEEP_ID_FLOORS: str | None = None

    def head_rows(self, pairs: Sequence[tuple[str, str]]) -> Statement:
        """HEAD rows of the given (namespace, key) items, with their ids."""
        among, params = _among_items(pairs)
        return Statement(
            "SELECT id, scope, namespace, key, value, index_fields FROM items "
            f"WHERE valid_to IS NULL AND {among}",
            params,
        )

    def item_ends(self, scope: str, since: Sequence[int], hi: int) -> Statement:
        """`ITEM_ENDS_IN_RANGE` for several versions `since` at once, with what
        a diff reads of the rows: one pass over the rows of (min(since), hi].

        Per item written in that range, in item order: its namespace and key,
        its last row's value and erasure, then for each version `t` of `since`
        the first row after `t` (NULL: not written since `t`) and the id, value
        and erasure of the row that first one replaced."""
        firsts = ", ".join(
            f"min(CASE WHEN c.version > ? THEN i.id END) AS f{k}"
            for k in range(len(since))
        )
        ends = "".join(
            f", g.f{k}, p{k}.id, p{k}.value, "
            f"(SELECT e.why FROM erased AS e WHERE e.id = p{k}.id)"
            for k in range(len(since))
        )
        joins = "".join(
            f" LEFT JOIN items AS f{k} ON f{k}.id = g.f{k} "
            f"LEFT JOIN items AS p{k} ON p{k}.id = f{k}.prev_id"
            for k in range(len(since))
        )
        return Statement(
            "SELECT h.namespace, h.key, h.value, "
            f"(SELECT e.why FROM erased AS e WHERE e.id = h.id){ends} "
            f"FROM (SELECT max(i.id) AS last_id, {firsts} FROM {_ROWS} "
            f"WHERE {_ROWS_OF_C} AND c.scope = ? AND c.version > ? "
            f"AND c.version <= ? AND {_NOT_PROPOSED} GROUP BY i.namespace, i.key) "
            f"AS g JOIN items AS h ON h.id = g.last_id{joins} "
            "ORDER BY h.namespace, h.key",
            [*since, scope, min(since), hi],
        )

    def newest_rows(self, pairs: Sequence[tuple[str, str]]) -> Statement:
        """The newest log row of each given (namespace, key) item, HEAD or not."""
        among, params = _among_items(pairs)
        return Statement(
            f"SELECT namespace, key, max(id) FROM items WHERE {among} "
            "GROUP BY namespace, key",
            params,
        )

    def change_rows_of(self, ids: Sequence[int]) -> Statement:
        """The rows of `CHANGE_ROWS_BETWEEN`, for these log rows."""
        return Statement(
            f"{_CHANGE_ROWS} FROM items AS i JOIN commits AS c "
            "ON c.scope = i.scope AND c.version = i.version "
            "LEFT JOIN items AS p ON p.id = i.prev_id "
            f"WHERE i.id IN ({_marks(ids)}) AND {_NOT_PROPOSED} ORDER BY i.id",
            tuple(ids),
        )

    def holding_values(self, ids: Sequence[int]) -> Statement:
        """Which of these log rows still hold a value: not erased by a
        redaction or a compaction, nor removed by a reset."""
        return Statement(
            f"SELECT id FROM items WHERE id IN ({_marks(ids)}) AND value IS NOT NULL",
            tuple(ids),
        )

    def indexed(self, ids: Sequence[int]) -> Statement:
        """Which of these log rows the change index holds."""
        return Statement(
            f"SELECT rowid FROM changes WHERE rowid IN ({_marks(ids)})", tuple(ids)
        )

    def delete_changes(self, ids: Sequence[int]) -> Statement:
        """Take these log rows out of the change index."""
        return Statement(f"DELETE FROM changes WHERE rowid IN ({_marks(ids)})", ids)

    def items_by_id(self, ids: Sequence[int]) -> Statement:
        return Statement(
            f"SELECT {_row_fields('items')} FROM items WHERE id IN ({_marks(ids)})",
            ids,
        )

    def reopen(self, ids: Sequence[int], to: int) -> Statement:
        return Statement(
            "UPDATE items SET valid_to = NULL WHERE version <= ? "
            f"AND value IS NOT NULL AND id IN ({_marks(ids)})",
            (to, *ids),
        )

    # Branches (engine/branches.py).
    BRANCHES = (
        "SELECT id, name, fork, fork_seq, merged, created_at FROM branches "
        "WHERE scope = ?"
    )
    BRANCH = BRANCHES + " AND name = ?"
    BRANCHES += " ORDER BY name"
    ADD_BRANCH = (
        "INSERT INTO branches (scope, name, fork, fork_seq, merged, created_at) "
        "VALUES (?, ?, ?, ?, ?, ?)"
    )
    # Before a branch is deleted: keep its id from being given again. `None`
    # where ids come from a sequence, which never reuses one.
    KEEP_BRANCH_FLOOR: str | None = None
    BRANCH_MERGED = "UPDATE branches SET merged = ? WHERE id = ?"
    DELETE_BRANCH = "DELETE FROM branches WHERE id = ?"
    # An item's row on a branch: its newest row there (no value: deleted
    # there), else the base scope's row at the fork.
    BRANCH_ROW = (
        "SELECT id, value, created_at, version FROM items "
        "WHERE namespace = ? AND key = ? ORDER BY version DESC LIMIT 1"
    )
    BASE_ROW = (
        "SELECT id, value, created_at, version FROM items WHERE namespace = ? "
        "AND key = ? AND version <= ? AND (valid_to IS NULL OR valid_to > ?) "
        "AND value IS NOT NULL"
    )
    # The items a scope's commits after a version wrote (a merge's, a diff's).
    ITEMS_WRITTEN_AFTER = (
        f"SELECT DISTINCT i.namespace, i.key FROM {_ROWS} WHERE {_ROWS_OF_C} "
        f"AND c.scope = ? AND c.version > ? AND {_NOT_PROPOSED}"
    )

    def select_items_on_branch(
        self, *, namespace: str, keys: Sequence[str], at: BranchAt
    ) -> Statement:
        """`select_items` on a branch (namespaces come back mounted)."""
        (base, base_params), (own, own_params) = _branch_sides(at)
        marks = _marks(keys)
        return Statement(
            f"{_ITEM_READ} WHERE namespace = ? AND key IN ({marks}) AND {base} "
            f"UNION ALL {_ITEM_READ} WHERE namespace = ? AND key IN ({marks}) "
            f"AND {own}",
            (namespace, *keys, *base_params, at.mounted(namespace), *keys, *own_params),
        )

    def search_items_on_branch(
        self,
        *,
        prefix: str,
        filter: Mapping[str, Any] | None,
        limit: int,
        offset: int,
        at: BranchAt,
    ) -> Statement:
        """`search_items` on a branch (namespaces come back mounted)."""
        conditions, filter_params = self.filter_conditions(filter or {})
        filtered = (" AND ".join(conditions), filter_params)
        base, own = _branch_sides(at)
        base_where, base_params = _where(base, _under(prefix), filtered)
        own_where, own_params = _where(own, _under(at.mounted(prefix)), filtered)
        return Statement(
            f"{_ITEM_READ} WHERE {base_where} UNION ALL {_ITEM_READ} "
            f"WHERE {own_where} ORDER BY updated_at DESC, id DESC LIMIT ? OFFSET ?",
            (*base_params, *own_params, limit, offset),
        )

    def select_namespaces_on_branch(self, *, prefix: str, at: BranchAt) -> Statement:
        """`select_namespaces` on a branch (namespaces come back mounted)."""
        base, own = _branch_sides(at)
        base_where, base_params = _where(base, _under(prefix))
        own_where, own_params = _where(own, _under(at.mounted(prefix)))
        return Statement(
            f"SELECT namespace FROM items WHERE {base_where} "
            f"UNION SELECT namespace FROM items WHERE {own_where}",
            (*base_params, *own_params),
        )

    REFRESH_TTL = "UPDATE items SET expires_at = ? + ttl_minutes * 60 WHERE {rows}"

    def refresh_ttl(self, namespace: str, keys: Sequence[str], now: float) -> Statement:
        rows = (
            "valid_to IS NULL AND ttl_minutes IS NOT NULL "
            f"AND namespace = ? AND key IN ({_marks(keys)})"
        )
        return Statement(self.REFRESH_TTL.format(rows=rows), (now, namespace, *keys))

    def select_commits(
        self,
        scope: str,
        *,
        version: int | None,
        limit: int | None,
        since: Stamp | None,
        until: Stamp | None,
        author: str | None,
        op: str | None = None,
        labels: Mapping[str, str] | None = None,
        not_ops: Sequence[str] = (),
    ) -> Statement:
        where: list[str] = ["scope = ?"]
        params: list[Any] = [scope]
        if not_ops:
            where.append(f"op NOT IN ({_marks(not_ops)})")
            params += not_ops
        for sql, value in (
            ("version = ?", version),
            ("created_at >= ?", since),
            ("created_at <= ?", until),
            ("author = ?", author),
            ("op = ?", op),
        ):
            if value is not None:
                where.append(sql)
                params.append(value)
        for name, value in (labels or {}).items():
            where.append(self.LABEL_EQUALS)
            params += [self.label_key(name), value]
        sql = (
            "SELECT seq, version, parent, created_at, author, reason, op, target, "
            f"labels FROM commits WHERE {' AND '.join(where)} "
            "ORDER BY version DESC"
        )
        if limit is not None:
            sql += " LIMIT ?"
            params.append(limit)
        return Statement(sql, params)

    def select_items(
        self,
        *,
        namespace: str,
        keys: Sequence[str],
        version: int | None,
        live_after: float | None,
    ) -> Statement:
        visible, params = _visible(None, version, live_after)
        return Statement(
            f"{_ITEM_READ} WHERE namespace = ? AND key IN ({_marks(keys)}) "
            f"AND {visible}",
            (namespace, *keys, *params),
        )

    def search_items(
        self,
        *,
        prefix: str,
        filter: Mapping[str, Any] | None,
        limit: int,
        offset: int,
        scope: str | None,
        version: int | None,
        live_after: float | None,
        among: Sequence[tuple[str, str]] | None = None,
    ) -> Statement:
        conditions, filter_params = self.filter_conditions(filter or {})
        if among is not None:
            pairs = ", ".join("(?, ?)" for _ in among) or "(NULL, NULL)"
            conditions.append(f"(namespace, key) IN (VALUES {pairs})")
            filter_params += [part for pair in among for part in pair]
        where, params = _where(
            _visible(scope, version, live_after),
            _under(prefix),
            (" AND ".join(conditions), filter_params),
        )
        return Statement(
            f"{_ITEM_READ} WHERE {where} "
            "ORDER BY updated_at DESC, id DESC LIMIT ? OFFSET ?",
            (*params, limit, offset),
        )

    def select_namespaces(
        self,
        *,
        prefix: str,
        scope: str | None,
        version: int | None,
        live_after: float | None,
    ) -> Statement:
        where, params = _where(_visible(scope, version, live_after), _under(prefix))
        return Statement(f"SELECT DISTINCT namespace FROM items WHERE {where}", params)
