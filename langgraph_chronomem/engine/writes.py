"""Writing the log: the one place versions are made in Python.

`commit` and `write` turn a batch's writes into one commit per scope touched,
and `_write` makes each version: it closes the rows it replaces and inserts
the new ones and the commit. PostgreSQL runs the same steps server-side, in
one round trip (`chronomem_write`, postgres_sql.py), for all but proposals.
Time travel, review and forgetting commit through `_commit` and `_write` too.
"""

from __future__ import annotations

import json
import time
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import replace
from typing import Any

import orjson

from langgraph_chronomem.engine.core import TransactionCore
from langgraph_chronomem.engine.rows import (
    _NewRow,
    _RawChange,
    _Written,
    namespace_from_text,
    namespace_text,
    placed,
    scope_text,
)
from langgraph_chronomem.engine.sql import BranchAt
from langgraph_chronomem.engine.types import (
    Change,
    Commit,
    CommitMeta,
    Namespace,
    Op,
    Write,
)
from langgraph_chronomem.engine.values import decode_time, decode_value, encode_value
from langgraph_chronomem.errors import WriteConflictError

__all__ = ["COMMITS_EVEN_EMPTY", "REVIEW_SOURCE", "SYSTEM_AUTHOR", "WriteOps"]

SYSTEM_AUTHOR = "system"
# The `held` label of a proposal made because it brought removed content back.
HELD_RETURNING = "brings back removed content"
# Ops that make a commit even when no item changed: what they undid, or erased,
# is worth a record of its own.
COMMITS_EVEN_EMPTY = ("rollback", "revert", "redact", "approve", "reject", "merge")
# The `chronomem_meta` setting naming the commit `source` label whose writes
# land as proposals (`require_review`).
REVIEW_SOURCE = "review_source"


class WriteOps(TransactionCore):
    """The writes of a transaction: commit, write, expect, expire.

    A mixin for `LogTransaction`.
    """

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

    def _write_all(
        self,
        writes: Sequence[Write],
        meta: CommitMeta,
        *,
        branch: BranchAt | None = None,
    ) -> list[_Written]:
        """The commits of `commit` and `write`; on `branch` (whose scope every
        write is in), commits to it, never proposals: a branch is the place
        for changes nobody reads yet."""
        by_scope: dict[Namespace, dict[tuple[str, str], _NewRow]] = {}
        ops: dict[Namespace, Op] = {}
        proposing = (
            branch is None
            and bool(meta.review or meta.labels)
            and self._needs_review(meta)
        )
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
            if (
                meta.hold_returning
                and branch is None
                and op != "propose"
                and self._returns(scope, rows)
            ):
                op = "propose"
                said = replace(meta, labels={**meta.labels, "held": HELD_RETURNING})
            done = self._write(scope, op, list(rows.values()), said, branch=branch)
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
        branch: BranchAt | None = None,
    ) -> _Written | None:
        """Write `rows` as the scope's next version; the one place versions are
        made, but for PostgreSQL's server-side `chronomem_write` (schema step
        0003 in postgres_sql.py), which does the same steps in one round trip:
        change both together (tests/test_engines_agree.py compares the rows).

        A proposal (op `propose`) writes its rows with an empty validity, as a
        deletion's, and leaves the rows they would replace live: no read sees
        it, and `prev_id` still says what it would replace. On a `branch`
        (design.md, "Branches"), every row goes under the branch's mount with
        an empty validity too, replaces the branch's row of its item or the
        base's at the fork, and closes nothing."""
        cur, sql = self.cur, self.sql
        sc = scope_text(scope) if branch is None else branch.scope_text
        proposing = op == "propose"
        parent = cur.execute(sql.HEAD, (sc,)).fetchone()[0]  # 0: no commit yet
        if branch is not None:
            parent = max(parent, branch.fork)
        task = _task_of(meta.labels) if meta.labels else None
        version = parent + 1
        at = meta.timestamp
        stamp = sql.now() if at is None else sql.encode_time(at)
        first_id = last_id = None
        changes: list[_RawChange] = []
        for row in rows:
            value = row.value
            if branch is None:
                live = cur.execute(sql.LIVE_ROW, (row.namespace, row.key)).fetchone()
            else:
                live = self._branch_row(branch, row.namespace, row.key)
            if live is None:
                if value is None:
                    continue  # deleting what is not there changes nothing
                prev_id = prev_value = prev_created = None
            else:
                prev_id, prev_value, prev_created, _ = live
            if task and self._ran_before(task, row, live, proposing=proposing):
                continue  # a task run again (resumed, retried) wrote this already
            if prev_id is not None and not proposing and branch is None:
                cur.execute(sql.CLOSE_ROW, (version, prev_id))
            ttl = row.ttl_minutes
            empty = value is None or proposing or branch is not None
            valid_to = version if empty else None
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
                    row.namespace if branch is None else branch.mounted(row.namespace),
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
        if not parent and branch is None:
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


def _task_of(labels: Mapping[str, Any]) -> tuple[str, str] | None:
    """The LangGraph task a commit's labels name (thread id, task id), if any."""
    thread, task = labels.get("thread_id"), labels.get("task_id")
    return (thread, task) if thread and task else None
