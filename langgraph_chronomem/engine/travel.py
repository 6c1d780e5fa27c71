"""Time travel: what changed between versions, and commits that undo changes.

`diff` compares the scope at two versions; `rollback` brings the whole scope
back to one, `revert` undoes one commit's changes, `revert_matching` and
`revert_thread` those of every commit a test picks (a source's, a thread's).
Each undo is a new commit, so history only grows; `revert` and
`revert_matching` report the items other writers changed since as conflicts.
"""

from __future__ import annotations

import json
from collections.abc import Callable, Iterator, Mapping, Sequence
from dataclasses import replace
from typing import Any, NamedTuple

from langgraph_chronomem.engine.core import TransactionCore
from langgraph_chronomem.engine.fields import (
    changed_fields,
    field_values,
    with_fields,
)
from langgraph_chronomem.engine.rows import (
    _NewRow,
    _Row,
    namespace_from_text,
    namespace_text,
    scope_text,
)
from langgraph_chronomem.engine.types import (
    Change,
    Commit,
    CommitMeta,
    Conflict,
    Erased,
    MatchedRevert,
    Namespace,
    RevertConflict,
)
from langgraph_chronomem.engine.values import decode_value, encode_value
from langgraph_chronomem.errors import CompactedError, VersionError

__all__ = ["TravelOps", "by_thread"]


class TravelOps(TransactionCore):
    """The operations that compare versions and undo changes: diff,
    rollback, revert and its variants.

    A mixin for `LogTransaction`, whose reads and `_commit` these methods use.
    """

    def _rows_since(
        self, scope: Namespace, lo: int, hi: int
    ) -> list[tuple[_Row | None, _Row]]:
        """For each item written in versions (lo, hi]: (its row at lo, its row at hi).

        The row at `lo` is `None` when the item did not exist then; the row at
        `hi` has `value=None` when it does not exist at `hi`. Cost: the rows
        written in (lo, hi], never the size of the scope, in one statement.
        """
        pairs = []
        for row in self.cur.execute(
            self.sql.ITEM_ENDS_IN_RANGE, (scope_text(scope), lo, hi)
        ):
            old = None if row[0] is None else _Row(*row[:10])
            if old is not None and old.value is None and old.erased is None:
                old = None  # a deletion: the item did not exist at `lo`
            pairs.append((old, _Row(*row[10:])))
        return pairs

    def diff(self, scope: Namespace, v1: int, v2: int) -> list[Change]:
        """What differs between the scope at `v1` and at `v2` (old = at v1)."""
        return list(self.changes_between(scope, v1, v2))

    def changes_between(self, scope: Namespace, v1: int, v2: int) -> Iterator[Change]:
        """`diff`, one change at a time: a caller that shows only the first few
        of a large diff never holds the rest. The versions are checked at once;
        iterate inside the transaction."""
        self.check_version(scope, v1, allow_zero=True)
        self.check_version(scope, v2, allow_zero=True)
        return self._changes_between(scope, v1, v2)

    def _changes_between(self, scope: Namespace, v1: int, v2: int) -> Iterator[Change]:
        lo, hi = sorted((v1, v2))
        for _, namespace, key, old, was, new, now in self._differing(scope, [lo], hi):
            sides = [(old, was), (new, now)]
            if v1 > v2:
                sides.reverse()
            (old, was), (new, now) = sides
            yield Change(namespace_from_text(namespace), key, old, new, was, now)

    def previews(
        self, scope: Namespace, head: int, targets: Sequence[int], shown: int
    ) -> dict[int, tuple[tuple[Change, ...], int]]:
        """What `rollback` to each of `targets` would change at `head` (old =
        at `head`): its first `shown` changes, in `diff`'s order, and how many
        there are.

        One read of the rows written since the earliest target serves them
        all, and changes past the first `shown` are counted, not kept: undo
        previews five rollbacks thousands of versions back this way."""
        wanted = list(dict.fromkeys(targets))
        if not wanted:
            return {}
        for version in (head, *wanted):
            self.check_version(scope, version, allow_zero=True)
        kept: dict[int, list[Change]] = {target: [] for target in wanted}
        counts = dict.fromkeys(wanted, 0)
        for k, namespace, key, at, was, now, why in self._differing(
            scope, wanted, head
        ):
            target = wanted[k]
            counts[target] += 1
            if len(kept[target]) < shown:
                kept[target].append(
                    Change(namespace_from_text(namespace), key, now, at, why, was)
                )
        return {target: (tuple(kept[target]), counts[target]) for target in wanted}

    def _differing(
        self, scope: Namespace, since: Sequence[int], hi: int
    ) -> Iterator[tuple[int, str, str, Any, Erased | None, Any, Erased | None]]:
        """Per item whose value or erasure differs between the scope at a
        version of `since` and at `hi`, in item order: (that version's index in
        `since`, namespace text, key, the value and erasure at it, those at
        `hi`). One statement reads the rows of both ends; values are decoded
        only where their JSON texts differ."""
        count = len(since)
        rows = self.cur.execute(
            *self.sql.item_ends(scope_text(scope), since, hi)
        ).fetchall()
        for namespace, key, value, now, *ends in rows:
            for k in range(count):
                first, lo_id, lo_value, was = ends[4 * k : 4 * k + 4]
                if first is None:
                    continue  # not written since that version
                if lo_id is not None and lo_value is None and was is None:
                    lo_id = None  # a deletion: the item did not exist then
                if lo_id is not None and lo_value == value and was == now:
                    continue  # the same JSON text: equal without decoding
                old = decode_value(lo_value) if lo_id is not None else None
                new = decode_value(value)
                if old != new or was or now:
                    yield k, namespace, key, old, was, new, now

    def rollback(self, scope: Namespace, to: int, meta: CommitMeta) -> Commit:
        """Restore the scope to its state at `to`, as a new commit."""
        head = self.check_version(scope, to, allow_zero=True)
        if to == head:
            raise VersionError(f"v{to} is already HEAD; there is nothing to roll back")
        restore = []
        for at_to, at_head in self._rows_since(scope, to, head):
            if at_to is None:
                if at_head.value is not None:
                    restore.append(_NewRow(at_head.namespace, at_head.key, None, None))
            elif _state(at_to) != _state(at_head):
                restore.append(_restored(at_to))
        commit = self._commit(scope, "rollback", restore, meta, target=to)
        assert commit is not None
        return commit

    def revert(
        self,
        scope: Namespace,
        version: int,
        meta: CommitMeta,
        *,
        items: Sequence[tuple[Namespace, str]] | None = None,
        fields: Sequence[str] = (),
        force: bool = False,
    ) -> Commit | RevertConflict:
        """Undo one commit's changes (or only those to `items`, or only those
        `fields` of them) as a new commit.

        Three-way: an item conflicts only when its value at HEAD differs from
        what the commit wrote (with `fields`, only when one of those fields
        does); then nothing is applied, unless `force`, which restores it all
        the same. Items that already hold their old value are left alone.
        """
        restore, _, conflicts = self._plan_revert(scope, version, items, fields)
        if conflicts and not force:
            return RevertConflict(scope, version, conflicts)
        if not restore:
            raise VersionError(f"v{version}'s changes are already undone at HEAD")
        commit = self._commit(scope, "revert", restore, meta, target=version)
        assert commit is not None
        return commit

    def revert_thread(
        self, scope: Namespace, thread_id: str, after_seq: int, meta: CommitMeta
    ) -> Commit | None:
        """Undo what commits labelled with `thread_id` changed in the scope
        after commit `after_seq`, as one new commit; `None` if that changes
        nothing. Other writers' changes stay: an item another thread (or a
        person) wrote after the thread goes back to that write's value, and
        an item it wrote over the thread's is left alone."""
        plan = self.matching_revert_plan(scope, by_thread(thread_id), after_seq)
        if not plan.restore:
            return None
        return self._commit(scope, "revert", plan.restore, meta)

    def revert_matching(
        self,
        scope: Namespace,
        matches: Callable[[Mapping[str, Any], str | None], bool],
        meta: CommitMeta,
        *,
        force: bool = False,
        dry_run: bool = False,
    ) -> MatchedRevert:
        """Undo every change of the scope's commits that `matches(labels,
        author)`, as one commit (`matching_revert_plan` says how). Nothing is
        written for a dry run, when nothing would change, or when other
        writers changed an item since and not `force`."""
        plan = self.matching_revert_plan(scope, matches, force=force)
        done = MatchedRevert(scope, plan.versions, plan.changes, plan.conflicts)
        if dry_run or not plan.restore or (plan.conflicts and not force):
            return done
        return replace(done, commit=self._commit(scope, "revert", plan.restore, meta))

    def matching_revert_plan(
        self,
        scope: Namespace,
        matches: Callable[[Mapping[str, Any], str | None], bool],
        after_seq: int = 0,
        *,
        force: bool = False,
    ) -> _RevertPlan:
        """What undoing every change of the scope's commits after `after_seq`
        that `matches(labels, author)` would write and change.

        Per item they changed, the value that comes back is the last one
        another writer gave it since their first change, else the one before
        it. An item another writer changed after their last change is a
        conflict, left as it is unless `force` (which brings back the value
        from before their first change)."""
        history: dict[tuple[str, str], list[_Step]] = {}
        for ns, key, row_id, prev_id, version, author, labels in self.cur.execute(
            self.sql.CHANGES_AFTER_SEQ, (scope_text(scope), after_seq)
        ):
            mine = matches(json.loads(labels), author)
            step = _Step(row_id, prev_id, version, author, mine)
            history.setdefault((ns, key), []).append(step)
        ends: dict[tuple[str, str], tuple[int | None, int]] = {}
        later: dict[tuple[str, str], list[_Step]] = {}
        matched: set[int] = set()
        for item, steps in history.items():
            firsts = [i for i, step in enumerate(steps) if step.mine]
            if not firsts:
                continue
            matched.update(steps[i].version for i in firsts)
            tail = steps[firsts[0] :]
            if firsts[-1] + 1 < len(steps):  # another writer changed it since
                later[item] = steps[firsts[-1] + 1 :]
                ends[item] = (tail[0].prev_id, steps[-1].row_id)
                continue
            others = [step.row_id for step in tail if not step.mine]
            ends[item] = (others[-1] if others else tail[0].prev_id, steps[-1].row_id)
        rows = self._rows_by_id(
            [row_id for pair in ends.values() for row_id in pair if row_id is not None]
        )
        restore, changed, conflicts = [], [], []
        for (ns, key), (stays_id, head_id) in ends.items():
            stays = rows.get(stays_id) if stays_id is not None else None
            old = None if stays is None else decode_value(stays.value)
            held = decode_value(rows[head_id].value)
            if old == held:
                continue  # as it was before the matching commits: undone already
            namespace = namespace_from_text(ns)
            since = later.get((ns, key))
            if since:
                conflicts.append(
                    Conflict(
                        namespace,
                        key,
                        tuple(step.version for step in since),
                        None,
                        held,
                        old,
                        tuple(step.author for step in since),
                    )
                )
                if not force:
                    continue
            changed.append(Change(namespace, key, held, old))
            restore.append(_back_to(ns, key, stays))
        return _RevertPlan(
            tuple(sorted(matched)), restore, tuple(changed), tuple(conflicts)
        )

    def revert_effect(
        self,
        scope: Namespace,
        version: int,
        *,
        items: Sequence[tuple[Namespace, str]] | None = None,
        fields: Sequence[str] = (),
    ) -> tuple[tuple[Change, ...], tuple[Conflict, ...]]:
        """What `revert` would change at HEAD (old = HEAD now), and the conflicts
        it would report; writes nothing."""
        _, changes, conflicts = self._plan_revert(scope, version, items, fields)
        return changes, conflicts

    def _plan_revert(
        self,
        scope: Namespace,
        version: int,
        items: Sequence[tuple[Namespace, str]] | None,
        fields: Sequence[str] = (),
    ) -> tuple[list[_NewRow], tuple[Change, ...], tuple[Conflict, ...]]:
        """The rows a revert writes, what they change at HEAD, and the conflicts.

        For a branch's own scope (`branch_of_mount`), what they change on the
        branch: its namespaces mounted, as its rows hold them."""
        self.check_version(scope, version, allow_zero=False)
        if self._op_of(scope, version) == "propose":
            raise VersionError(
                f"v{version} is a proposal: nothing it holds is in memory to "
                f"revert; approve or reject it instead"
            )
        plan = self.cur.execute(
            self.sql.REVERT_PLAN, (scope_text(scope), version)
        ).fetchall()
        branch = self.branch_of_mount(scope)
        if branch is not None:  # what each item holds on the branch, not at HEAD
            plan = [
                (
                    ns,
                    key,
                    wrote,
                    prev_id,
                    *_live(self._branch_row(branch, branch.unmounted(ns), key)),
                )
                for ns, key, wrote, prev_id, _, _ in plan
            ]
        if not plan:
            raise VersionError(
                f"v{version} changed nothing; there is nothing to revert"
            )
        if items is not None:
            wanted = {(namespace_text(ns), key) for ns, key in items}
            missing = wanted - {(ns, key) for ns, key, *_ in plan}
            if missing:
                ns, key = sorted(missing)[0]
                raise VersionError(
                    f"v{version} did not change {ns.replace('.', '/')}/{key}"
                )
            plan = [row for row in plan if (row[0], row[1]) in wanted]
        before = self._rows_by_id([r[3] for r in plan if r[3] is not None])
        heads = self._rows_by_id([r[5] for r in plan if fields and r[5] is not None])
        restore, changes, conflicts = [], [], []
        for ns, key, wrote, prev_id, now, head_id in plan:
            prev = before.get(prev_id) if prev_id is not None else None
            old = None if prev is None else decode_value(prev.value)
            held, written = decode_value(now), decode_value(wrote)
            # what decides: the whole value, or only `fields` of it
            seen, meant, was = held, written, old
            if fields:
                untouched = set(fields) - set(changed_fields(old, written))
                if untouched:
                    raise VersionError(
                        f"v{version} did not change {', '.join(sorted(untouched))} "
                        f"of {ns.replace('.', '/')}/{key}"
                    )
                seen, meant, was = (
                    field_values(v, fields) for v in (held, written, old)
                )
            if seen == was:
                continue  # already as it was before the commit
            if fields:  # only these fields go back; the rest stays as it is now
                old = with_fields(held, old, fields)
                row = _merged(ns, key, old, heads.get(head_id))
            else:
                row = _back_to(ns, key, prev)
            namespace = namespace_from_text(ns)
            if seen != meant:
                later = self.cur.execute(
                    self.sql.LATER_WRITES, (ns, key, version)
                ).fetchall()
                conflicts.append(
                    Conflict(
                        namespace,
                        key,
                        tuple(row[0] for row in later),
                        meant,
                        seen,
                        old,
                        tuple(row[1] for row in later),
                        tuple(fields),
                    )
                )
            changes.append(Change(namespace, key, held, old, fields=tuple(fields)))
            restore.append(row)
        return restore, tuple(changes), tuple(conflicts)


def _live(row: tuple[Any, ...] | None) -> tuple[Any, Any]:
    """(value, id) of an item's live row on a branch; `(None, None)` if absent."""
    return (None, None) if row is None else (row[1], row[0])


def _state(row: _Row) -> tuple[Any, ...]:
    """What a read shows of a row: its value and both timestamps."""
    return decode_value(row.value), row.created_at, row.updated_at


def by_thread(thread_id: str) -> Callable[[Mapping[str, Any], str | None], bool]:
    """A `matching_revert_plan` test: commits a run of this thread made."""
    return lambda labels, _author: labels.get("thread_id") == thread_id


class _Step(NamedTuple):
    """One change to an item, as a revert of matching commits reads it."""

    row_id: int
    prev_id: int | None
    version: int
    author: str | None
    mine: bool


class _RevertPlan(NamedTuple):
    """What undoing the changes of matching commits would do: the versions
    that matched, the rows it writes, what they change at HEAD (old = HEAD
    now), and the items changed again since by other writers."""

    versions: tuple[int, ...]
    restore: list[_NewRow]
    changes: tuple[Change, ...]
    conflicts: tuple[Conflict, ...]


def _back_to(namespace: str, key: str, row: _Row | None) -> _NewRow:
    """The row that brings an item back to `row`, what a revert restores:
    its deletion when `row` is `None` (the item did not exist) or a deletion,
    else `_restored(row)` (a redacted one comes back absent, a compacted one
    refuses)."""
    if row is None or (row.value is None and row.erased is None):
        return _NewRow(namespace, key, None, None)
    return _restored(row)


def _merged(
    namespace: str, key: str, value: dict[str, Any] | None, head: _Row | None
) -> _NewRow:
    """The row that gives an item `value` (some of its fields put back), keeping
    the rest of what its HEAD row holds: when it was created, its TTL and its
    indexed fields."""
    if value is None:
        return _NewRow(namespace, key, None, None)
    ttl, index_fields = (head.ttl_minutes, head.index_fields) if head else (None, None)
    return _NewRow(namespace, key, encode_value(value), ttl, None, None, index_fields)


def _restored(row: _Row) -> _NewRow:
    """A row that brings back `row` exactly as it was, timestamps included
    (a redacted one: as absent).

    Raises:
        CompactedError: If its value was compacted away.
    """
    if row.erased == "compacted":
        raise CompactedError(
            f"{row.namespace.replace('.', '/')}/{row.key} at v{row.version} was "
            "compacted: its value is gone and cannot be brought back"
        )
    return _NewRow(
        row.namespace,
        row.key,
        row.value,
        row.ttl_minutes,
        row.created_at,
        row.updated_at,
        row.index_fields,
    )
