"""Random histories against a plain-Python model of versioned memory.

A hypothesis state machine runs puts, deletes, multi-op batches (several writes to
one key, deletes of missing keys, reads mixed in, both scopes in one batch),
rollbacks, reverts, resets (some followed by reopening the store) and invalid
version requests against a `ChronoStore` with `scope_depth=2`, and against
`ScopeModel`: a list of full snapshots, one per version. After every step it checks
HEAD, every read at HEAD, `as_of` at (a sample of) every version, `diff`,
`history`, `log`/`show` and that the two scopes never see each other.

The model follows the decided semantics (docs/design.md, "Semantics" and "Decided
while building"):

- one batch is one commit per scope it changed; writes to one item collapse to
  the last; deleting a missing item changes nothing; no change, no version; a put
  of the value already there is still a version (and a change in the log);
- `rollback(to=v)` writes, as one new version (even an empty one), the items that
  differ at `v` from HEAD, each exactly as it was at `v`, `created_at` and
  `updated_at` included, so that afterwards every read returns what `as_of(v)`
  returns (docs/design.md, "Decided while building"). An item whose value is the
  same but whose timestamps differ is rewritten too, as a change with equal
  old and new values (like a put of an equal value);
- `revert(v)` puts back, with their old timestamps, the items commit `v` wrote,
  three-way: an item that already holds its old value is left alone, and one
  that no longer holds what `v` wrote is a conflict (then `RevertConflict`,
  nothing written); a revert with nothing left to change is a `VersionError`;
- `reset(to=v)` forgets every version after `v`.

Timestamps are modelled too: every step commits under `commit_context(timestamp=...)`
with its own clock tick, so the model knows each item's `created_at` (kept across
updates of a live item, new after a delete) and `updated_at`.
"""

from __future__ import annotations

import random
import shutil
import tempfile
from dataclasses import dataclass, field
from datetime import datetime, timedelta, timezone
from typing import Any

import pytest
from hypothesis import HealthCheck, event, settings
from hypothesis import strategies as st
from hypothesis.stateful import RuleBasedStateMachine, invariant, rule
from langgraph.store.base import GetOp, ListNamespacesOp, PutOp, SearchOp

from langgraph_chronomem import (
    Change,
    ChronoStore,
    Commit,
    RevertConflict,
    ScopeError,
    VersionError,
    VersionNotFound,
    commit_context,
)

Namespace = tuple[str, ...]
ItemId = tuple[Namespace, str]

# "ali" is a string prefix of "alice": a scope filter that compared text
# prefixes instead of labels would leak one into the other.
SCOPES: tuple[Namespace, ...] = (("memories", "alice"), ("memories", "ali"))
NAMESPACES: dict[Namespace, tuple[Namespace, ...]] = {
    scope: (scope, (*scope, "food"), (*scope, "food", "fruit")) for scope in SCOPES
}
ALL_NAMESPACES = tuple(ns for scope in SCOPES for ns in NAMESPACES[scope])
KEYS = ("a", "b", "c")
VALUES = ({"v": 0}, {"v": 1}, {"v": 1, "tags": ["x"]})
ITEMS: dict[Namespace, tuple[ItemId, ...]] = {
    scope: tuple((ns, key) for ns in NAMESPACES[scope] for key in KEYS)
    for scope in SCOPES
}
BIG = 10_000
EPOCH = datetime(2024, 1, 1, tzinfo=timezone.utc)
AS_OF_SAMPLE = 10  # versions read with as_of per scope and step (all when fewer)
DIFF_SAMPLE = 8  # random version pairs diffed per scope and step


def scope_of(namespace: Namespace) -> Namespace:
    return namespace[:2]


# -- the model --------------------------------------------------------------------


@dataclass(frozen=True)
class Entry:
    """One live item: its value and timestamps."""

    value: dict[str, Any]
    created: datetime
    updated: datetime


@dataclass(frozen=True)
class ModelCommit:
    version: int
    order: int  # global creation order: seq must follow it, across scopes
    op: str
    target: int | None
    at: datetime
    # every item the commit wrote: (value before, entry after; None = deleted)
    writes: dict[ItemId, tuple[dict[str, Any] | None, Entry | None]]

    def changes(self) -> list[Change]:
        return sorted(
            (
                Change(ns, key, old, None if new is None else new.value)
                for (ns, key), (old, new) in self.writes.items()
            ),
            key=_change_key,
        )


@dataclass
class ScopeModel:
    """One scope's timeline: `states[v]` is the full state at version v."""

    states: list[dict[ItemId, Entry]] = field(default_factory=lambda: [{}])
    commits: list[ModelCommit] = field(default_factory=list)

    @property
    def head(self) -> int:
        return len(self.commits)

    def state(self, version: int | None = None) -> dict[ItemId, Entry]:
        return self.states[self.head if version is None else version]

    def commit(
        self,
        rows: dict[ItemId, Entry | None],
        *,
        op: str,
        at: datetime,
        order: int,
        target: int | None = None,
        even_if_empty: bool = False,
    ) -> ModelCommit | None:
        """Write `rows` (None = delete) as the next version, if anything changed."""
        state = dict(self.state())
        writes: dict[ItemId, tuple[dict[str, Any] | None, Entry | None]] = {}
        for item, new in rows.items():
            old = state.get(item)
            if new is None:
                if old is None:
                    continue  # deleting what is not there changes nothing
                del state[item]
            else:
                state[item] = new
            writes[item] = (None if old is None else old.value, new)
        if not writes and not even_if_empty:
            return None
        commit = ModelCommit(self.head + 1, order, op, target, at, writes)
        self.commits.append(commit)
        self.states.append(state)
        return commit

    def put_rows(
        self, writes: dict[ItemId, dict[str, Any] | None], at: datetime
    ) -> dict[ItemId, Entry | None]:
        """Rows for ordinary writes: `created` survives updates of a live item."""
        rows: dict[ItemId, Entry | None] = {}
        for item, value in writes.items():
            if value is None:
                rows[item] = None
                continue
            live = self.state().get(item)
            rows[item] = Entry(value, at if live is None else live.created, at)
        return rows

    def rollback_rows(self, to: int) -> dict[ItemId, Entry | None]:
        """Items that differ at `to` from HEAD, as they were at `to`.

        "Differ" includes the timestamps: afterwards every read returns what
        `as_of(to)` returns (docs/design.md, "Decided while building"), so an item
        with the same value but another `created_at`/`updated_at` is rewritten too.
        """
        then, now = self.state(to), self.state()
        rows: dict[ItemId, Entry | None] = {}
        for item in sorted({*then, *now}):
            if item not in then:
                rows[item] = None
            elif then[item] != now.get(item):
                rows[item] = then[item]
        return rows

    def revert_plan(
        self, version: int
    ) -> tuple[dict[ItemId, Entry | None], dict[ItemId, tuple[int, ...]]]:
        """What reverting `version` restores, and the items that conflict."""
        before, now = self.state(version - 1), self.state()
        rows: dict[ItemId, Entry | None] = {}
        conflicts = {}
        for item, (_, wrote) in self.commits[version - 1].writes.items():
            old = before.get(item)
            held = now[item].value if item in now else None
            if held == (None if old is None else old.value):
                continue  # already as it was before the commit
            if held != (None if wrote is None else wrote.value):
                conflicts[item] = tuple(
                    c.version for c in self.commits[version:] if item in c.writes
                )
            rows[item] = old
        return rows, conflicts

    def reset(self, to: int) -> None:
        del self.commits[to:]
        del self.states[to + 1 :]

    def diff(self, v1: int, v2: int) -> list[Change]:
        a, b = self.state(v1), self.state(v2)
        changes = []
        for item in {*a, *b}:
            old = a[item].value if item in a else None
            new = b[item].value if item in b else None
            if old != new:
                changes.append(Change(item[0], item[1], old, new))
        return sorted(changes, key=_change_key)

    def history(self, item: ItemId) -> list[tuple[Any, ...]]:
        rows = []
        for commit in reversed(self.commits):
            if item in commit.writes:
                new = commit.writes[item][1]
                rows.append(
                    (
                        commit.version,
                        commit.op,
                        commit.at,
                        None if new is None else new.value,
                        None if new is None else new.created,
                        None if new is None else new.updated,
                    )
                )
        return rows


def _change_key(change: Change) -> ItemId:
    return (change.namespace, change.key)


def _sorted_changes(changes: Any) -> list[Change]:
    return sorted(changes, key=_change_key)


def _expected_state(state: dict[ItemId, Entry]) -> dict[ItemId, tuple[Any, ...]]:
    return {item: (e.value, e.created, e.updated) for item, e in state.items()}


def _read_state(items: Any) -> dict[ItemId, tuple[Any, ...]]:
    found = {}
    for item in items:
        assert (item.namespace, item.key) not in found, f"listed twice: {item}"
        found[(item.namespace, item.key)] = (
            item.value,
            item.created_at,
            item.updated_at,
        )
    return found


# -- strategies -------------------------------------------------------------------

scopes = st.sampled_from(SCOPES)
namespaces = st.sampled_from(ALL_NAMESPACES)
keys = st.sampled_from(KEYS)
values = st.sampled_from(VALUES)
write_specs = st.tuples(
    st.sampled_from(("put", "put", "delete", "get")),
    namespaces,
    keys,
    values,
)


# request -> (error, store method, its version arguments given HEAD and a version
# after HEAD); the invalid_version rule checks each raises and changes nothing
INVALID_REQUESTS: dict[str, tuple[type[Exception], str, Any]] = {
    "rollback to HEAD": (VersionError, "rollback", lambda head, after: (head,)),
    "rollback after HEAD": (VersionNotFound, "rollback", lambda head, after: (after,)),
    "rollback to -1": (VersionNotFound, "rollback", lambda head, after: (-1,)),
    "revert v0": (VersionNotFound, "revert", lambda head, after: (0,)),
    "revert after HEAD": (VersionNotFound, "revert", lambda head, after: (after,)),
    "reset after HEAD": (VersionNotFound, "reset", lambda head, after: (after,)),
    "as_of after HEAD": (VersionNotFound, "as_of", lambda head, after: (after,)),
    "diff after HEAD": (VersionNotFound, "diff", lambda head, after: (0, after)),
    "diff from -1": (VersionNotFound, "diff", lambda head, after: (-1, head)),
    "show v0": (VersionNotFound, "show", lambda head, after: (0,)),
    "show after HEAD": (VersionNotFound, "show", lambda head, after: (after,)),
}


# -- the machine ------------------------------------------------------------------


class ChronoStoreMachine(RuleBasedStateMachine):
    """ChronoStore (scope_depth=2, two scopes) against `ScopeModel`s."""

    def __init__(self) -> None:
        super().__init__()
        self.path = tempfile.mkdtemp(prefix="chronomem-props-")
        self.store = self._open()
        self.model = {scope: ScopeModel() for scope in SCOPES}
        self.clock = 0  # one tick per step: the commit time every step uses
        self.order = 0  # commits made so far, across scopes

    def _open(self) -> ChronoStore:
        # durability is not under test here; NORMAL skips an fsync per commit
        return ChronoStore.from_path(self.path, scope_depth=2, synchronous="NORMAL")

    def teardown(self) -> None:
        self.store.close()
        shutil.rmtree(self.path, ignore_errors=True)

    def _tick(self) -> datetime:
        self.clock += 1
        return EPOCH + timedelta(seconds=self.clock)

    def _commit(
        self, scope: Namespace, rows: dict[ItemId, Entry | None], **how: Any
    ) -> ModelCommit | None:
        """Apply a commit to the model; it takes the next global order if made."""
        commit = self.model[scope].commit(rows, order=self.order + 1, **how)
        if commit is not None:
            self.order += 1
        return commit

    def _write(self, ops: list[Any]) -> list[Any]:
        """Run a batch at the next tick and apply its writes to the model."""
        at = self._tick()
        before = {scope: dict(self.model[scope].state()) for scope in SCOPES}
        # what the model expects, per scope in order of first touch
        collapsed: dict[Namespace, dict[ItemId, Any]] = {}
        counts: dict[Namespace, list[PutOp]] = {}
        for op in ops:
            if isinstance(op, PutOp):
                scope = scope_of(op.namespace)
                collapsed.setdefault(scope, {})[(op.namespace, op.key)] = op.value
                counts.setdefault(scope, []).append(op)
        with commit_context(timestamp=at):
            results = self.store.batch(ops)
        for scope, writes in collapsed.items():
            puts = counts[scope]
            if len(puts) > 1:
                op_name = "batch"
            else:
                op_name = "put" if puts[0].value is not None else "delete"
            rows = self.model[scope].put_rows(writes, at)
            self._commit(scope, rows, op=op_name, at=at)
        # reads in a batch see the state before its writes
        seen = {}
        for scope in SCOPES:
            seen.update(_expected_state(before[scope]))
        for op, result in zip(ops, results, strict=True):
            if isinstance(op, GetOp):
                item = (op.namespace, op.key)
                expected = {item: seen[item]} if item in seen else {}
                assert _read_state([result] if result else []) == expected, op
            elif isinstance(op, SearchOp):
                prefix = op.namespace_prefix
                expected = {
                    i: e for i, e in seen.items() if i[0][: len(prefix)] == prefix
                }
                assert _read_state(result) == expected, op
            else:
                assert result is None
        return results

    # -- writes -----------------------------------------------------------------

    @rule(namespace=namespaces, key=keys, value=values)
    def put(self, namespace: Namespace, key: str, value: dict[str, Any]) -> None:
        at = self._tick()
        with commit_context(timestamp=at):
            self.store.put(namespace, key, dict(value))
        scope = scope_of(namespace)
        rows = self.model[scope].put_rows({(namespace, key): dict(value)}, at)
        assert self._commit(scope, rows, op="put", at=at)

    @rule(namespace=namespaces, key=keys)
    def delete(self, namespace: Namespace, key: str) -> None:
        at = self._tick()
        with commit_context(timestamp=at):
            self.store.delete(namespace, key)
        scope = scope_of(namespace)
        rows = self.model[scope].put_rows({(namespace, key): None}, at)
        self._commit(scope, rows, op="delete", at=at)

    @rule(
        specs=st.lists(write_specs, min_size=1, max_size=8),
        search_scope=st.none() | scopes | st.just(("memories",)),
    )
    def batch(
        self,
        specs: list[tuple[str, Namespace, str, dict[str, Any]]],
        search_scope: Namespace | None,
    ) -> None:
        ops: list[Any] = []
        for kind, namespace, key, value in specs:
            if kind == "get":
                ops.append(GetOp(namespace, key))
            else:
                ops.append(
                    PutOp(namespace, key, dict(value) if kind == "put" else None)
                )
        if search_scope is not None:
            ops.insert(len(ops) // 2, SearchOp(search_scope, limit=BIG))
        self._write(ops)

    # -- time travel --------------------------------------------------------------

    def _scope_with_versions(self, data: st.DataObject) -> Namespace:
        """A scope that has commits, when there is one."""
        having = [scope for scope in SCOPES if self.model[scope].head] or SCOPES
        return data.draw(st.sampled_from(having), label="scope")

    @rule(data=st.data())
    def rollback(self, data: st.DataObject) -> None:
        scope = self._scope_with_versions(data)
        model = self.model[scope]
        if model.head == 0:  # nothing to roll back: v0 is HEAD
            with pytest.raises(VersionError):
                self.store.rollback(scope, to=0)
            return
        # any version, but the last few (the usual "undo that") more often
        to = data.draw(
            st.integers(0, model.head - 1)
            | st.integers(max(0, model.head - 3), model.head - 1),
            label="to",
        )
        at = self._tick()
        with commit_context(timestamp=at):
            commit = self.store.rollback(scope, to=to)
        expected = self._commit(
            scope,
            model.rollback_rows(to),
            op="rollback",
            at=at,
            target=to,
            even_if_empty=True,
        )
        assert expected is not None
        event(f"rollback: {'empty' if not expected.writes else 'restores'}")
        self._check_commit(scope, commit, expected)

    @rule(data=st.data())
    def revert(self, data: st.DataObject) -> None:
        scope = self._scope_with_versions(data)
        model = self.model[scope]
        if model.head == 0:
            with pytest.raises(VersionNotFound):
                self.store.revert(scope, 1)
            return
        # any version, but HEAD (which applies) and empty commits (which raise)
        # more often than chance would pick them
        empty = [c.version for c in model.commits if not c.writes]
        version = data.draw(
            st.integers(1, model.head)
            | st.just(model.head)
            | st.sampled_from(empty or [model.head]),
            label="version",
        )
        at = self._tick()
        rows, conflicts = model.revert_plan(version)
        if not rows:
            event("revert: nothing left to change")
            with pytest.raises(VersionError), commit_context(timestamp=at):
                self.store.revert(scope, version)
            return
        with commit_context(timestamp=at):
            result = self.store.revert(scope, version)
        if conflicts:
            event("revert: conflict")
            assert isinstance(result, RevertConflict), result
            assert (result.scope, result.version) == (scope, version)
            assert {
                (c.namespace, c.key): c.later_versions for c in result.conflicts
            } == conflicts
            assert len(result.conflicts) == len(conflicts)
            return
        event("revert: applied")
        assert isinstance(result, Commit), result
        expected = self._commit(scope, rows, op="revert", at=at, target=version)
        assert expected is not None
        self._check_commit(scope, result, expected)

    @rule(scope=scopes, reopen=st.booleans(), data=st.data())
    def reset(self, scope: Namespace, reopen: bool, data: st.DataObject) -> None:
        """Reset, then maybe reopen the file: a new connection sees the same log.

        (Reopening is a flag here rather than a rule of its own: as an argumentless
        rule hypothesis picked it for a third of all steps.)
        """
        model = self.model[scope]
        # anywhere, or (more often than chance) just a few versions back
        to = data.draw(
            st.integers(0, model.head)
            | st.integers(max(0, model.head - 2), model.head),
            label="to",
        )
        event(f"reset: {'to HEAD' if to == model.head else 'drops versions'}")
        removed = self.store.reset(scope, to=to)
        assert removed == model.head - to
        model.reset(to)
        if reopen:
            self.store.close()
            self.store = self._open()

    @rule(
        scope=scopes,
        request=st.sampled_from(sorted(INVALID_REQUESTS)),
        beyond=st.integers(1, 3),
    )
    def invalid_version(self, scope: Namespace, request: str, beyond: int) -> None:
        """A version the scope lacks (or HEAD, for rollback) raises, changes nothing."""
        error, method, versions = INVALID_REQUESTS[request]
        args = versions(self.model[scope].head, self.model[scope].head + beyond)
        with pytest.raises(error), commit_context(timestamp=self._tick()):
            getattr(self.store, method)(scope, *args)

    # -- checks -----------------------------------------------------------------

    def _check_commit(
        self, scope: Namespace, commit: Commit, expected: ModelCommit
    ) -> None:
        assert isinstance(commit, Commit), commit
        assert commit.scope == scope
        assert commit.version == expected.version
        assert commit.parent == (expected.version - 1 or None)
        assert commit.op == expected.op, (commit, expected)
        assert commit.target == expected.target
        assert commit.created_at == expected.at
        assert _sorted_changes(commit.changes) == expected.changes(), (
            f"{'/'.join(scope)} v{commit.version}"
        )

    def _rng(self, scope: Namespace) -> random.Random:
        return random.Random(f"{self.clock}/{'/'.join(scope)}")

    def _versions_to_read(self, scope: Namespace) -> list[int]:
        head = self.model[scope].head
        if head + 1 <= AS_OF_SAMPLE:
            return list(range(head + 1))
        sample = set(self._rng(scope).sample(range(head + 1), AS_OF_SAMPLE - 3))
        return sorted(sample | {0, head - 1, head})

    @invariant()
    def heads_and_logs_match(self) -> None:
        orders = []
        for scope in SCOPES:
            model = self.model[scope]
            assert self.store.head(scope) == model.head
            log = self.store.log(scope)
            # gap-free, newest first
            assert [c.version for c in log] == list(range(model.head, 0, -1))
            for commit, expected in zip(reversed(log), model.commits, strict=True):
                self._check_commit(scope, commit, expected)
                orders.append((commit.seq, expected.order))
            if model.head:
                self._check_commit(
                    scope, self.store.show(scope, model.head), model.commits[-1]
                )
        # seq is global and follows commit order across both scopes
        orders.sort()
        assert [o for _, o in orders] == sorted(o for _, o in orders)
        assert len({seq for seq, _ in orders}) == len(orders)

    @invariant()
    def head_reads_match(self) -> None:
        everything = {}
        for scope in SCOPES:
            expected = _expected_state(self.model[scope].state())
            everything.update(expected)
            found = self.store.search(scope, limit=BIG)
            assert _read_state(found) == expected
            updated = [item.updated_at for item in found]
            assert updated == sorted(updated, reverse=True), "newest update first"
            got = self.store.batch([GetOp(ns, key) for ns, key in ITEMS[scope]])
            assert _read_state(i for i in got if i is not None) == expected
            assert self.store.list_namespaces(prefix=scope, limit=BIG) == sorted(
                {ns for ns, _ in expected}
            )
            for namespace in NAMESPACES[scope]:
                below = {
                    item: e
                    for item, e in expected.items()
                    if item[0][: len(namespace)] == namespace
                }
                assert _read_state(self.store.search(namespace, limit=BIG)) == below
        assert _read_state(self.store.search(("memories",), limit=BIG)) == everything

    @invariant()
    def past_reads_match(self) -> None:
        for scope in SCOPES:
            model = self.model[scope]
            other = next(s for s in SCOPES if s != scope)
            for version in self._versions_to_read(scope):
                expected = _expected_state(model.state(version))
                view = self.store.as_of(scope, version)
                results = view.batch(
                    [
                        SearchOp(scope, limit=BIG),
                        # a prefix wider than the scope still reads only the scope
                        SearchOp(("memories",), limit=BIG),
                        ListNamespacesOp(limit=BIG),
                        *(GetOp(ns, key) for ns, key in ITEMS[scope]),
                    ]
                )
                in_scope, wide, listed, *got = results
                assert _read_state(in_scope) == expected, f"as_of v{version}"
                assert _read_state(wide) == expected, f"as_of v{version} (wide)"
                assert listed == sorted({ns for ns, _ in expected})
                assert _read_state(i for i in got if i is not None) == expected
            with pytest.raises(ScopeError):
                self.store.as_of(scope, model.head).get(other, "a")

    @invariant()
    def diffs_match(self) -> None:
        for scope in SCOPES:
            model = self.model[scope]
            head = model.head
            pairs = {(0, head), (head, 0), (head, head)}
            pairs |= {(v - 1, v) for v in range(max(1, head - 2), head + 1)}
            rng = self._rng(scope)
            pairs |= {
                (rng.randint(0, head), rng.randint(0, head)) for _ in range(DIFF_SAMPLE)
            }
            for v1, v2 in sorted(pairs):
                got = _sorted_changes(self.store.diff(scope, v1, v2))
                assert got == model.diff(v1, v2), f"diff {'/'.join(scope)} {v1}..{v2}"

    @invariant()
    def histories_match(self) -> None:
        for scope in SCOPES:
            model = self.model[scope]
            for namespace, key in ITEMS[scope]:
                got = [
                    (
                        h.version,
                        h.op,
                        h.committed_at,
                        h.value,
                        h.created_at,
                        h.updated_at,
                    )
                    for h in self.store.history(namespace, key)
                ]
                assert got == model.history((namespace, key)), (
                    f"history of {'/'.join(namespace)}/{key}"
                )


# About 25 s when green. Deterministic: derandomize + no example database, and the
# model picks every commit's timestamp. A failure shrinks for a few minutes.
ChronoStoreMachine.TestCase.settings = settings(
    max_examples=100,
    stateful_step_count=50,
    deadline=None,
    derandomize=True,
    database=None,
    suppress_health_check=[HealthCheck.too_slow],
)
TestChronoStoreMachine = ChronoStoreMachine.TestCase


def test_rollback_restores_timestamps_of_items_whose_value_came_back(
    store: ChronoStore,
) -> None:
    """The smallest history the machine above shrinks to, and its twin.

    `a` is rewritten with an equal value, `b` deleted and re-created with an equal
    value. Rolling back to v1 must make every read return what `as_of(1)`
    returns, timestamps (and so the search order) included.
    """
    alice = ("memories", "alice")
    with commit_context(timestamp=EPOCH + timedelta(seconds=1)):
        store.batch([PutOp(alice, "a", {"v": 0}), PutOp(alice, "b", {"v": 0})])
    with commit_context(timestamp=EPOCH + timedelta(seconds=2)):
        store.put(alice, "a", {"v": 0})
    with commit_context(timestamp=EPOCH + timedelta(seconds=3)):
        store.delete(alice, "b")
    with commit_context(timestamp=EPOCH + timedelta(seconds=4)):
        store.put(alice, "b", {"v": 0})

    store.rollback(alice, to=1)

    then = store.as_of(alice, 1)
    for key in ("a", "b"):
        before, after = then.get(alice, key), store.get(alice, key)
        assert before is not None and after is not None
        assert (after.value, after.created_at, after.updated_at) == (
            before.value,
            before.created_at,
            before.updated_at,
        ), key
    assert [i.key for i in store.search(alice)] == [i.key for i in then.search(alice)]
