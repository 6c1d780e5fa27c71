"""The versioned log: commits, reads at HEAD or at any version, rollback, revert, reset.

Everything here is plain logic over a DB-API cursor and a dialect that supplies the
SQL text, so SQLite and PostgreSQL share it. One `LogTransaction` is one database
transaction: a store `batch()` runs its reads and its commits in the same one.

How the log is laid out: every change to an item is one row of `items`, written by
the commit that made it (`version`) and valid until the commit that replaced it
(`valid_to`, NULL while it is HEAD). A deletion is a row with no value whose
validity is empty (`valid_to = version`), so it shows in history but never in a
read. HEAD is therefore the rows with `valid_to IS NULL`, and the state at
version `v` the rows with `version <= v < valid_to`. A write touches only the
rows it changes; a rollback only the rows written since its target.

`LogTransaction` is the core here (scopes, reads, writes, reset, history) and
four mixins, a module each: `travel.py` (diff, rollback, revert),
`proposals.py` (review), `forgetting.py` (redact, compact) and `tags.py`.
`rows.py` holds what they share, below them all.
"""

from __future__ import annotations

import json
import time
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import replace
from datetime import datetime
from typing import Any

import orjson

from langgraph_chronomem.engine.describe import CHANGE_TEXT_VERSION, change_text
from langgraph_chronomem.engine.forgetting import ForgettingOps
from langgraph_chronomem.engine.proposals import ProposalOps
from langgraph_chronomem.engine.rows import (
    ChangeRow,
    RebuildRequest,
    _index_rows,
    _NewRow,
    _RawChange,
    _Row,
    _Written,
    chunks,
    namespace_from_text,
    namespace_text,
    placed,
    rebuild_requests,
    rebuild_text,
    scope_key,
    scope_of,
    scope_text,
)
from langgraph_chronomem.engine.sql import Cursor, Dialect
from langgraph_chronomem.engine.tags import TagOps
from langgraph_chronomem.engine.travel import TravelOps, by_thread
from langgraph_chronomem.engine.types import (
    Change,
    Commit,
    CommitMeta,
    ItemVersion,
    Namespace,
    Op,
    ProjectionStats,
    ScopeStats,
    StoredItem,
    StoreStats,
    Write,
)
from langgraph_chronomem.engine.values import (
    decode_time,
    decode_value,
    encode_value,
)
from langgraph_chronomem.errors import (
    VersionError,
    VersionNotFound,
    WriteConflictError,
)

__all__ = ["LogTransaction", "by_thread"]

SYSTEM_AUTHOR = "system"
FULL_TEXT = "full-text"  # the descriptor index's name in the projections table
# The `held` label of a proposal made because it brought removed content back.
HELD_RETURNING = "brings back removed content"
# Ops that make a commit even when no item changed: what they undid, or erased,
# is worth a record of its own.
COMMITS_EVEN_EMPTY = ("rollback", "revert", "redact", "approve", "reject")
# The `chronomem_meta` setting naming the commit `source` label whose writes
# land as proposals (`require_review`).
REVIEW_SOURCE = "review_source"
# The setting recording which `change_text` derivation the word index holds.
_CHANGE_TEXT = "change_text"


def _record(written: _Written, meta: CommitMeta) -> Commit:
    """The `Commit` record of a write, its changes decoded."""
    return Commit(
        scope=written.scope,
        version=written.version,
        seq=written.seq,
        parent=written.parent,
        created_at=decode_time(written.created_at),
        author=written.author,
        reason=meta.reason,
        op=written.op,
        changes=tuple(
            Change(namespace_from_text(ns), key, decode_value(old), decode_value(new))
            for ns, key, old, new in written.changes
        ),
        labels=written.labels,
        target=written.target,
    )


class LogTransaction(TravelOps, ProposalOps, ForgettingOps, TagOps):
    """The log's operations inside one open database transaction.

    Args:
        cur: A cursor inside an open transaction (a write transaction for anything
            that commits).
        dialect: The SQL for this database.
        scope_depth: How many leading namespace labels make a scope.
        omit_expired: Hide items whose TTL has passed from reads at HEAD.
    """

    def __init__(
        self, cur: Cursor, dialect: Dialect, scope_depth: int, *, omit_expired: bool
    ) -> None:
        self.cur = cur
        self.sql = dialect
        self.scope_depth = scope_depth
        self.omit_expired = omit_expired

    # -- scopes ---------------------------------------------------------------

    def scope_of(self, namespace: Namespace) -> Namespace:
        """The scope a namespace is in; see `scope_of`."""
        return scope_of(namespace, self.scope_depth)

    def head(self, scope: Namespace) -> int:
        """The scope's HEAD version; 0 before its first commit."""
        head: int = self.cur.execute(self.sql.HEAD, (scope_text(scope),)).fetchone()[0]
        return head

    def stats(self, kept: Sequence[str] = ()) -> StoreStats:
        """Every scope's numbers, and how far each projection has read the log;
        those named in `kept` and never made yet have read nothing."""
        scopes = tuple(
            ScopeStats(
                namespace_from_text(sc),
                head,
                commits,
                items,
                versions,
                None if last is None else decode_time(last),
            )
            for sc, head, commits, last, items, versions in self.cur.execute(
                self.sql.SCOPE_STATS
            ).fetchall()
        )
        (last_seq,) = self.cur.execute(self.sql.LAST_SEQ).fetchone()
        projections = tuple(
            ProjectionStats(
                name,
                seq,
                self.cur.execute(self.sql.COMMITS_AFTER, (seq,)).fetchone()[0],
                tuple(dict.fromkeys(r.scope for r in rebuild_requests(rebuild))),
            )
            for name, seq, rebuild in self.cur.execute(
                self.sql.ALL_PROJECTIONS
            ).fetchall()
        )
        made = {p.name for p in projections}
        unmade = sorted(name for name in kept if name not in made)
        if unmade:
            (count,) = self.cur.execute(self.sql.COMMITS_AFTER, (0,)).fetchone()
            projections += tuple(ProjectionStats(n, 0, count, ()) for n in unmade)
        return StoreStats(scopes, last_seq, projections)

    def projection_names(self) -> list[str]:
        """The projections that have read the log: `stats()`'s, without
        counting every scope's items."""
        return [row[0] for row in self.cur.execute(self.sql.ALL_PROJECTIONS)]

    def meta(self, name: str) -> str | None:
        """A store-wide setting (`scope_depth`, the index settings…), if set."""
        row = self.cur.execute(self.sql.META, (name,)).fetchone()
        return None if row is None else str(row[0])

    def set_meta(self, name: str, value: str) -> None:
        """Record a store-wide setting. Needs a write transaction."""
        self.cur.execute(self.sql.SET_META, (name, value))

    def first_meta(self, name: str, value: str) -> str:
        """Record a store-wide setting unless one is recorded, by this or a
        racing writer; returns the one that stands. Needs a write transaction."""
        self.cur.execute(self.sql.FIRST_META, (name, value))
        stored = self.meta(name)
        assert stored is not None  # recorded, by this transaction or another
        return stored

    def head_seq(self, scope: Namespace) -> int:
        """The `seq` of the scope's HEAD commit (0 before its first commit).

        Unlike the version number, it is never reused after a reset, so it tells
        whether HEAD is still the commit something was computed against.
        """
        return self.commit_seq(scope, self.head(scope))

    def commit_seq(self, scope: Namespace, version: int) -> int:
        """The `seq` of the scope's commit at `version`; 0 for version 0 or a
        version the scope does not have (any more)."""
        row = self.cur.execute(
            self.sql.COMMIT_SEQ, (scope_text(scope), version)
        ).fetchone()
        return row[0] if row else 0

    def _op_of(self, scope: Namespace, version: int) -> str | None:
        """The op of the scope's commit at `version`, if it has one."""
        row = self.cur.execute(
            self.sql.COMMIT_OP, (scope_text(scope), version)
        ).fetchone()
        return None if row is None else str(row[0])

    def check_version(self, scope: Namespace, version: int, *, allow_zero: bool) -> int:
        """Validate a version number against the scope's history; return HEAD."""
        if isinstance(version, bool) or not isinstance(version, int):
            raise VersionError(f"a version is an int, got {version!r}")
        head = self.head(scope)
        lowest = 0 if allow_zero else 1
        if not lowest <= version <= head:
            where = "/".join(scope) or "the store"
            raise VersionNotFound(
                f"{where} has no version {version}; its versions are "
                + (f"{lowest}..{head}" if head else "none yet (HEAD is 0)")
            )
        return head

    # -- reads ----------------------------------------------------------------

    def _live_after(self, version: int | None) -> float | None:
        return time.time() if self.omit_expired and version is None else None

    def get(
        self, namespace: Namespace, keys: Sequence[str], *, version: int | None = None
    ) -> dict[str, StoredItem]:
        """Items of one namespace by key, at HEAD or at `version` of its scope."""
        found: dict[str, StoredItem] = {}
        for chunk in chunks(list(dict.fromkeys(keys))):
            statement = self.sql.select_items(
                namespace=namespace_text(namespace),
                keys=chunk,
                version=version,
                live_after=self._live_after(version),
            )
            for row in self.cur.execute(*statement):
                item = _stored(row)
                found[item.key] = item
        return found

    def search(
        self,
        prefix: Namespace,
        *,
        filter: Mapping[str, Any] | None = None,
        limit: int = 10,
        offset: int = 0,
        scope: Namespace | None = None,
        version: int | None = None,
        among: Sequence[tuple[Namespace, str]] | None = None,
    ) -> list[StoredItem]:
        """Items under a namespace prefix, newest update first.

        With `version`, reads the state of `scope` at that version; with `among`,
        only those (namespace, key) items.
        """
        statement = self.sql.search_items(
            prefix=namespace_text(prefix),
            filter=filter,
            limit=limit,
            offset=offset,
            scope=None if scope is None else scope_text(scope),
            version=version,
            live_after=self._live_after(version),
            among=None if among is None else [(namespace_text(n), k) for n, k in among],
        )
        return [_stored(row) for row in self.cur.execute(*statement)]

    def namespaces(
        self,
        prefix: Namespace = (),
        *,
        scope: Namespace | None = None,
        version: int | None = None,
    ) -> list[Namespace]:
        """Every namespace holding an item, under a fixed prefix."""
        statement = self.sql.select_namespaces(
            prefix=namespace_text(prefix),
            scope=None if scope is None else scope_text(scope),
            version=version,
            live_after=self._live_after(version),
        )
        return [namespace_from_text(row[0]) for row in self.cur.execute(*statement)]

    def refresh_ttl(self, namespace: Namespace, keys: Sequence[str]) -> None:
        """Restart the TTL clock of the given live items. Writes no version."""
        now = time.time()
        for chunk in chunks(list(dict.fromkeys(keys))):
            self.cur.execute(
                *self.sql.refresh_ttl(namespace_text(namespace), chunk, now)
            )

    # -- writing commits ------------------------------------------------------

    def commit(self, writes: Sequence[Write], meta: CommitMeta) -> list[Commit]:
        """Commit writes: one commit per scope touched, in order of first touch.

        Several writes to one item collapse into one change (the last wins). A
        delete of an item that does not exist changes nothing, and a scope whose
        writes changed nothing gets no commit.
        """
        return [_record(written, meta) for written in self._write_all(writes, meta)]

    def write(self, writes: Sequence[Write], meta: CommitMeta) -> int:
        """Commit writes exactly as `commit` does; return only how many commits
        were made, without building their `Commit` records (decoding every
        change back from JSON). `ChronoStore.batch` needs no more.

            >>> import tempfile, pathlib
            >>> from langgraph_chronomem.engine.sqlite import SqliteEngine
            >>> engine = SqliteEngine(pathlib.Path(tempfile.mkdtemp()) / "log.db")
            >>> with engine.transaction(write=True) as tx:
            ...     tx.write([Write(("notes",), "a", {"t": "hi"})], CommitMeta())
            1
            >>> engine.close()
        """
        return len(self._write_all(writes, meta))

    def _write_all(self, writes: Sequence[Write], meta: CommitMeta) -> list[_Written]:
        by_scope: dict[Namespace, dict[tuple[str, str], _NewRow]] = {}
        ops: dict[Namespace, Op] = {}
        proposing = bool(meta.review or meta.labels) and self._needs_review(meta)
        depth = self.scope_depth
        for write in writes:
            namespace, key, index = write.namespace, write.key, write.index
            scope, ns = placed(namespace, depth)
            value = None if write.value is None else encode_value(write.value)
            rows = by_scope.setdefault(scope, {})
            rows[(ns, key)] = _NewRow(
                ns,
                key,
                value,
                write.ttl_minutes,
                index_fields=None if index is None else json.dumps(index),
            )
            if proposing:
                ops[scope] = "propose"
            elif scope in ops:
                ops[scope] = "batch"
            else:
                ops[scope] = "put" if value is not None else "delete"
        if len(by_scope) > 1:
            self._lock_in_order(by_scope)
        written = []
        for scope, rows in by_scope.items():
            op, said = ops[scope], meta
            if meta.hold_returning and op != "propose" and self._returns(scope, rows):
                op = "propose"
                said = replace(meta, labels={**meta.labels, "held": HELD_RETURNING})
            done = self._write(scope, op, list(rows.values()), said)
            if done is not None:
                written.append(done)
        return written

    def _returns(
        self, scope: Namespace, rows: Mapping[tuple[str, str], _NewRow]
    ) -> bool:
        """Whether a write brings back a value a delete, revert or rollback
        removed from the scope (text-equal: the same JSON)."""
        sc = scope_text(scope)
        return any(
            self.cur.execute(self.sql.REMOVED_BEFORE, (sc, row.value)).fetchone()
            for row in rows.values()
            if row.value is not None
        )

    def _needs_review(self, meta: CommitMeta) -> bool:
        """Whether writes with this metadata land as proposals: the caller
        asked (`commit_context(review=True)`), or their `source` label is the
        one `require_review` named. The setting is read only for writes that
        carry a source, so others cost no extra statement."""
        source = meta.labels.get("source")
        return meta.review or (bool(source) and self.meta(REVIEW_SOURCE) == source)

    def _lock_in_order(self, scopes: Iterable[Namespace]) -> None:
        """Before committing to several scopes, take their locks (a write
        transaction's HEAD read takes one) in one order, sorted: two batches
        touching the same scopes in opposite orders then queue instead of
        deadlocking. The commits still follow the order of first touch."""
        ordered = sorted(scopes)
        if len(ordered) > 1:
            for scope in ordered:
                self.head(scope)

    def _commit(
        self,
        scope: Namespace,
        op: Op,
        rows: Sequence[_NewRow],
        meta: CommitMeta,
        *,
        target: int | None = None,
    ) -> Commit | None:
        """`_write`, and the `Commit` it made."""
        written = self._write(scope, op, rows, meta, target=target)
        return None if written is None else _record(written, meta)

    def _write(
        self,
        scope: Namespace,
        op: Op,
        rows: Sequence[_NewRow],
        meta: CommitMeta,
        *,
        target: int | None = None,
    ) -> _Written | None:
        """Write `rows` as the scope's next version; the one place versions are
        made, but for PostgreSQL's server-side `chronomem_write` (schema step
        0003 in postgres_sql.py), which does the same steps in one round trip:
        change both together.

        A proposal (op `propose`) writes its rows with an empty validity, as a
        deletion's, and leaves the rows they would replace live: no read sees
        it, and `prev_id` still says what it would replace."""
        cur, sql = self.cur, self.sql
        sc = scope_text(scope)
        proposing = op == "propose"
        parent = cur.execute(sql.HEAD, (sc,)).fetchone()[0]  # 0: no commit yet
        task = _task_of(meta.labels) if meta.labels else None
        version = parent + 1
        at = meta.timestamp
        stamp = sql.now() if at is None else sql.encode_time(at)
        first_id = last_id = None
        changes: list[_RawChange] = []
        for row in rows:
            value = row.value
            live = cur.execute(sql.LIVE_ROW, (row.namespace, row.key)).fetchone()
            if live is None:
                if value is None:
                    continue  # deleting what is not there changes nothing
                prev_id = prev_value = prev_created = None
            else:
                prev_id, prev_value, prev_created, _ = live
            if task and self._ran_before(task, row, live, proposing=proposing):
                continue  # a task run again (resumed, retried) wrote this already
            if prev_id is not None and not proposing:
                cur.execute(sql.CLOSE_ROW, (version, prev_id))
            ttl = row.ttl_minutes
            valid_to = version if value is None or proposing else None
            if value is None:
                created = updated = expires = None
            else:
                created = row.created_at or prev_created or stamp
                updated = row.updated_at or stamp
                expires = (
                    None
                    if ttl is None or valid_to is not None
                    else time.time() + ttl * 60
                )
            cur.execute(
                sql.INSERT_ITEM,
                (
                    sc,
                    version,
                    valid_to,
                    row.namespace,
                    row.key,
                    value,
                    prev_id,
                    created,
                    updated,
                    ttl,
                    expires,
                    row.index_fields,
                ),
            )
            last_id = cur.lastrowid  # the dialect's cursor, not what execute returns
            if first_id is None:
                first_id = last_id
            changes.append((row.namespace, row.key, prev_value, value))
        if not changes and op not in COMMITS_EVEN_EMPTY:
            return None
        labels = dict(meta.labels)
        author = SYSTEM_AUTHOR if op == "expire" else meta.author
        cur.execute(
            sql.INSERT_COMMIT,
            (
                sc,
                version,
                parent or None,
                stamp,
                author,
                meta.reason,
                op,
                target,
                orjson.dumps(labels, option=orjson.OPT_SORT_KEYS).decode()
                if labels
                else "{}",
                first_id,
                last_id,
            ),
        )
        seq = cur.lastrowid
        assert seq is not None
        if not parent:
            cur.execute(sql.ADD_SCOPE, (sc,))
        return _Written(
            scope,
            version,
            seq,
            parent or None,
            stamp,
            author,
            op,
            changes,
            labels,
            target,
        )

    def expect(
        self,
        namespace: Namespace,
        key: str,
        *,
        version: int | None = None,
        value: Any = ...,
    ) -> None:
        """Check that an item still is as a caller saw it: last changed at
        scope version `version` (0: it does not exist) and holding `value`
        (`None`: absent); `...` checks nothing. In a write transaction the
        scope's writers wait until it ends, so the write that follows sees
        the same item.

        Raises:
            WriteConflictError: If it is not.
        """
        self.head(self.scope_of(namespace))  # takes the scope's lock to write
        found = self.cur.execute(
            self.sql.LIVE_ROW, (namespace_text(namespace), key)
        ).fetchone()
        now_version, now = (found[3], decode_value(found[1])) if found else (0, None)
        path = "/".join((*namespace, key))
        if version is not None and version != now_version:
            raise WriteConflictError(
                f"{path} was expected at v{version} but is at v{now_version}: "
                "another write came first; nothing was written"
            )
        if value is not ... and value != now:
            raise WriteConflictError(
                f"{path} no longer holds the value expected (it holds "
                f"{json.dumps(now)}): another write came first; nothing was written"
            )

    def _ran_before(
        self,
        task: tuple[str, str],
        row: _NewRow,
        live: Sequence[Any] | None,
        *,
        proposing: bool,
    ) -> bool:
        """Whether `task` (thread id, task id) wrote this row already: the
        item's live row, or for a proposal its latest proposed row, holds
        the same value and came from the same task."""
        if proposing:
            found = self.cur.execute(
                self.sql.LAST_PROPOSED, (row.namespace, row.key)
            ).fetchone()
            return (
                found is not None
                and found[0] == row.value
                and _task_of(json.loads(found[1])) == task
            )
        return (
            live is not None
            and live[1] == row.value
            and self._task_wrote(live[0], task)
        )

    def _task_wrote(self, row_id: int, task: tuple[str, str]) -> bool:
        """Whether the commit that wrote log row `row_id` came from `task`
        (thread id, task id)."""
        found = self.cur.execute(self.sql.ROW_LABELS, (row_id,)).fetchone()
        return found is not None and _task_of(json.loads(found[0])) == task

    # -- reset and expiry -----------------------------------------------------

    def reset(self, scope: Namespace, to: int) -> int:
        """Delete every version after `to` for good. Returns how many were removed.

        Raises:
            CompactedError: If values the scope held at `to` were compacted.
        """
        self.hold_change_index()  # before the scope's lock
        head = self.check_version(scope, to, allow_zero=True)
        self.check_whole(scope, to)
        sc = scope_text(scope)
        if self.sql.KEEP_ID_FLOORS is not None:
            self.cur.execute(self.sql.KEEP_ID_FLOORS)
        reopen = [r[0] for r in self.cur.execute(self.sql.PREV_IDS_AFTER, (sc, to))]
        self.cur.execute(self.sql.DELETE_CHANGES_AFTER, (sc, to))
        self.cur.execute(self.sql.DELETE_ERASED_AFTER, (sc, to))
        self.cur.execute(self.sql.DELETE_ITEMS_AFTER, (sc, to))
        self.cur.execute(self.sql.DELETE_COMMITS_AFTER, (sc, to))
        for chunk in chunks(reopen):
            self.cur.execute(*self.sql.reopen(chunk, to))
        if self._compacted_spans(scope):
            self._record_compacted_spans(scope)  # some compacted rows went
        self._rebuild_projections(scope)
        return head - to

    def _rebuild_projections(self, scope: Namespace) -> None:
        """Ask every vector projection to make the scope again from the log, for
        a change to the past (a reset, a redaction) that catching up would miss.
        The full-text index is kept right by the change itself."""
        projections = self.cur.execute(self.sql.ALL_PROJECTIONS_FOR_UPDATE).fetchall()
        for name, _, rebuild in projections:
            if name == FULL_TEXT:
                continue
            # Added even if the scope is there: a rebuild in progress may have
            # read the scope before this change, and strikes only what it saw.
            requests = [*rebuild_requests(rebuild), RebuildRequest.new(scope)]
            self.cur.execute(self.sql.SET_REBUILD, (rebuild_text(requests), name))

    def expire(self) -> list[Commit]:
        """Delete every item whose TTL has passed: one `expire` commit per scope."""
        by_scope: dict[Namespace, list[_NewRow]] = {}
        for sc, ns, key in self.cur.execute(
            self.sql.EXPIRED, (time.time(),)
        ).fetchall():
            by_scope.setdefault(namespace_from_text(sc), []).append(
                _NewRow(ns, key, None, None)
            )
        self._lock_in_order(by_scope)
        commits = []
        for scope, rows in by_scope.items():
            commit = self._commit(scope, "expire", rows, CommitMeta())
            if commit is not None:
                commits.append(commit)
        return commits

    # -- history --------------------------------------------------------------

    def search_changes(
        self,
        scope: Namespace,
        words: Sequence[str],
        *,
        side: str = "new",
        limit: int,
        since: datetime | None = None,
        until: datetime | None = None,
    ) -> list[tuple[int, int, float]]:
        """BM25 over the scope's item changes: (row id, version, score), best first.

        `side="new"` matches what changes introduced, `"old"` what they
        replaced. Lower scores are better (SQLite's bm25 sign convention). Sees
        the changes `index_changes` has indexed: call it first.
        """
        if not words:
            return []
        statement = self.sql.search_changes(
            scope_key(scope),
            words,
            side=side,
            limit=limit,
            since=None if since is None else self.sql.encode_time(since),
            until=None if until is None else self.sql.encode_time(until),
        )
        return [
            (row_id, version, score)
            for row_id, version, score in self.cur.execute(*statement)
        ]

    def log(
        self,
        scope: Namespace,
        *,
        version: int | None = None,
        limit: int | None = None,
        since: datetime | None = None,
        until: datetime | None = None,
        author: str | None = None,
        op: str | None = None,
        labels: Mapping[str, str] | None = None,
        not_ops: Sequence[str] = (),
    ) -> list[Commit]:
        """Commits of a scope, newest first, with their changes; `labels`:
        only those carrying each of these labels with these values; `not_ops`:
        none of these ops."""
        sc = scope_text(scope)
        statement = self.sql.select_commits(
            sc,
            version=version,
            limit=limit,
            since=None if since is None else self.sql.encode_time(since),
            until=None if until is None else self.sql.encode_time(until),
            author=author,
            op=op,
            labels=labels,
            not_ops=not_ops,
        )
        return self._with_changes(scope, self.cur.execute(*statement).fetchall())

    def _with_changes(
        self, scope: Namespace, heads: Sequence[Sequence[Any]]
    ) -> list[Commit]:
        """Commit rows of one scope (newest first) with their changes attached."""
        if not heads:
            return []
        changes: dict[int, list[Change]] = {}
        lo, hi = heads[-1][1], heads[0][1]
        for ver, ns, key, new, old, new_erased, old_erased in self.cur.execute(
            self.sql.CHANGES_IN_RANGE, (scope_text(scope), lo, hi)
        ):
            changes.setdefault(ver, []).append(
                Change(
                    namespace_from_text(ns),
                    key,
                    decode_value(old),
                    decode_value(new),
                    old_erased,
                    new_erased,
                )
            )
        return [
            Commit(
                scope=scope,
                version=ver,
                seq=seq,
                parent=parent,
                created_at=decode_time(created),
                author=who,
                reason=why,
                op=op,
                changes=tuple(changes.get(ver, ())),
                labels=json.loads(labels),
                target=target,
            )
            for (
                seq,
                ver,
                parent,
                created,
                who,
                why,
                op,
                target,
                labels,
            ) in heads
        ]

    def row_links(
        self, ids: Sequence[int], *, following: bool = False
    ) -> list[tuple[int, int, int | None]]:
        """(row id, version, id of the row it replaced) for these log rows, or with
        `following`, for the rows that replaced them."""
        return [
            (row_id, version, prev_id)
            for chunk in chunks(list(dict.fromkeys(ids)))
            for row_id, version, prev_id in self.cur.execute(
                *self.sql.row_links(chunk, following=following)
            )
        ]

    def _rows_by_id(self, ids: Sequence[int]) -> dict[int, _Row]:
        rows = {}
        for chunk in chunks(ids):
            for rid, *rest in self.cur.execute(*self.sql.items_by_id(chunk)):
                rows[rid] = _Row(rid, *rest)
        return rows

    def versions_between(
        self, scope: Namespace, since: datetime | None, until: datetime | None
    ) -> set[int]:
        """The versions of the scope committed in `[since, until)`."""
        low = self.sql.encode_time(since or datetime.min)
        high = self.sql.encode_time(until or datetime.max)
        return {
            row[0]
            for row in self.cur.execute(
                self.sql.VERSIONS_BETWEEN, (scope_text(scope), low, high)
            )
        }

    def indexed_text(self, row_id: int) -> tuple[str, str, str] | None:
        """The (new, old, context) text the change index reads for a log row,
        rendered from the log (the index keeps only terms); `None` for a row
        it never reads (a proposal's, or none)."""
        rows = self.change_rows_of([row_id])
        if not rows:
            return None
        text = rows[0].text
        return text.new, text.old, text.context

    def row_ids_of(self, scope: Namespace, version: int) -> list[int]:
        """The log rows a commit wrote, in the order of its `changes`."""
        return [
            row[0]
            for row in self.cur.execute(
                self.sql.COMMIT_ROWS, (scope_text(scope), version)
            )
        ]

    def change_rows(
        self, *, after: int = 0, upto: int = 0, scope: Namespace | None = None
    ) -> list[ChangeRow]:
        """Item changes with their texts: of the commits with `after < seq <=
        upto`, or of `scope`'s commits after `after` (0: every one); oldest
        first."""
        if scope is not None:
            rows = self.cur.execute(
                self.sql.SCOPE_CHANGE_ROWS, (scope_text(scope), after)
            )
        else:
            rows = self.cur.execute(self.sql.CHANGE_ROWS_BETWEEN, (after, upto))
        return self._change_rows(rows)

    def change_rows_of(self, ids: Sequence[int]) -> list[ChangeRow]:
        """These log rows' changes with their texts, as the log reads now
        (proposals' rows have none)."""
        return [
            row
            for chunk in chunks(list(ids))
            for row in self._change_rows(
                self.cur.execute(*self.sql.change_rows_of(chunk))
            )
        ]

    def _change_rows(self, rows: Iterable[Sequence[Any]]) -> list[ChangeRow]:
        """`ChangeRow`s of the rows the change-row statements select."""
        found = []
        for row_id, sc, version, created, ns, key, new, old, author, reason, op in rows:
            change = Change(
                namespace_from_text(ns), key, decode_value(old), decode_value(new)
            )
            if op in ("rollback", "revert"):  # its reason is the request that made
                reason = None  # it: left out, so the same words find the change
            text = change_text(change, self.scope_depth, author=author, reason=reason)
            found.append(
                ChangeRow(
                    row_id, namespace_from_text(sc), version, decode_time(created), text
                )
            )
        return found

    def index_changes(self, *, batch: int = 500, limit: int | None = None) -> int:
        """Bring the full-text change index up to the log. Returns commits added.

        The index is a projection with a mark like any other: writes skip it (it
        would double a put's pages), and searches call this first, so BM25 always
        sees every change. Needs a write transaction. An index made from an
        earlier derivation of the text (`CHANGE_TEXT_VERSION`) is made again.

        Args:
            batch: Commits read at a time.
            limit: Stop after this many commits (default: at the log's end), so
                a background caller holds the write lock the store's puts and
                reads wait for only briefly; the next call goes on from there.
        """
        self.cur.execute(self.sql.FIRST_PROJECTION, (FULL_TEXT,))
        seq = self.hold_change_index()
        if self.meta(_CHANGE_TEXT) != str(CHANGE_TEXT_VERSION):
            self._clear_changes()
            self.set_meta(_CHANGE_TEXT, str(CHANGE_TEXT_VERSION))
            seq = 0
        added = 0
        while limit is None or added < limit:
            step = batch if limit is None else min(batch, limit - added)
            seqs = [r[0] for r in self.cur.execute(self.sql.SEQS_AFTER, (seq, step))]
            if not seqs:
                break
            rows = _index_rows(self.change_rows(after=seq, upto=seqs[-1]))
            for statement, params in self.sql.index_changes(rows):
                self.cur.executemany(statement, params)
            seq, added = seqs[-1], added + len(seqs)
            self.cur.execute(self.sql.SAVE_PROJECTION, (seq, "[]", FULL_TEXT))
        return added

    def reindex_changes(self) -> int:
        """Rebuild the full-text change index from the log."""
        self.hold_change_index()
        self._clear_changes()
        return self.index_changes()

    def hold_change_index(self) -> int:
        """The change index's mark, its row held until the transaction ends:
        whatever changes the index (a catch-up, a reindex, a reset, a
        redaction, a compaction) in another process waits here for this one,
        not halfway through (two adding the same rows, or one deleting rows
        the other adds, deadlock on PostgreSQL). Taken before any scope's
        lock, as a catch-up waits for the writers holding one. 0 (and nothing
        held) before the index was first made."""
        row = self.cur.execute(self.sql.PROJECTION_FOR_UPDATE, (FULL_TEXT,)).fetchone()
        return 0 if row is None else int(row[0])

    def _clear_changes(self) -> None:
        self.cur.execute(self.sql.CLEAR_CHANGES)
        self.cur.execute(self.sql.SAVE_PROJECTION, (0, "[]", FULL_TEXT))

    def show(self, scope: Namespace, version: int) -> Commit:
        """One commit."""
        self.check_version(scope, version, allow_zero=False)
        return self.log(scope, version=version)[0]

    def history(self, namespace: Namespace, key: str) -> list[ItemVersion]:
        """Every version of one item, newest first, deletions included."""
        scope = self.scope_of(namespace)
        rows = self.cur.execute(
            self.sql.HISTORY, (scope_text(scope), namespace_text(namespace), key)
        )
        return [
            ItemVersion(
                namespace=namespace,
                key=key,
                version=ver,
                seq=seq,
                op=op,
                author=who,
                committed_at=decode_time(committed),
                value=decode_value(value),
                created_at=None if created is None else decode_time(created),
                updated_at=None if updated is None else decode_time(updated),
                erased=erased,
                labels=json.loads(labels),
            )
            for (
                ver,
                seq,
                op,
                who,
                committed,
                value,
                created,
                updated,
                erased,
                labels,
            ) in rows
        ]


def _stored(row: Sequence[Any]) -> StoredItem:
    """A read's row (namespace, key, value, created, updated, ttl, id) as an item."""
    ns, key, value, created, updated, ttl, row_id = row
    created_at = decode_time(created)
    return StoredItem(
        namespace_from_text(ns),
        key,
        decode_value(value),  # type: ignore[arg-type]
        created_at,
        # An item read as first written: one datetime (immutable) for both.
        created_at if updated == created else decode_time(updated),
        ttl,
        row_id,
    )


def _task_of(labels: Mapping[str, Any]) -> tuple[str, str] | None:
    """The LangGraph task a commit's labels name (thread id, task id), if any."""
    thread, task = labels.get("thread_id"), labels.get("task_id")
    return (thread, task) if thread and task else None
