"""Versions: every write is a commit, and history, diff, as_of, rollback, revert, reset.

The fixture store has `scope_depth=2`: ("memories", user) is one user's timeline.
"""

from __future__ import annotations

from datetime import datetime, timedelta, timezone
from pathlib import Path

import pytest
from langgraph.store.base import PutOp

from langgraph_chronomem import (
    ChronoStore,
    ConfigError,
    InvalidRequestError,
    ReadOnlyError,
    RevertConflict,
    ScopeError,
    VersionError,
    VersionNotFound,
    commit_context,
)

ALICE = ("memories", "alice")
BOB = ("memories", "bob")


def _state(
    store: ChronoStore, scope: tuple[str, ...]
) -> dict[tuple[tuple[str, ...], str], dict]:
    return {(i.namespace, i.key): i.value for i in store.search(scope, limit=1000)}


def test_every_write_is_a_gap_free_version(store: ChronoStore) -> None:
    store.put(ALICE, "city", {"city": "Boston"})
    store.put(ALICE, "city", {"city": "Paris"})
    store.put(ALICE, "pet", {"pet": "cat"})
    store.delete(ALICE, "pet")
    log = store.log(ALICE)
    assert [c.version for c in log] == [4, 3, 2, 1]
    assert [c.op for c in log] == ["delete", "put", "put", "put"]
    assert [c.parent for c in log] == [3, 2, 1, None]
    assert store.head(ALICE) == 4
    seqs = [c.seq for c in reversed(log)]
    assert seqs == sorted(seqs) and len(set(seqs)) == 4


def test_commit_describes_its_changes(store: ChronoStore) -> None:
    store.put(ALICE, "city", {"city": "Boston"})
    with store.commit_context(
        author="agent", reason="user moved", labels={"session": "s1"}
    ):
        store.put(ALICE, "city", {"city": "Paris"})
    commit = store.show(ALICE, 2)
    assert commit.summary == "updated memories/alice/city: Boston -> Paris"
    assert commit.author == "agent" and commit.reason == "user moved"
    assert commit.labels == {"session": "s1"}
    (change,) = commit.changes
    assert (change.namespace, change.key, change.old, change.new) == (
        ALICE,
        "city",
        {"city": "Boston"},
        {"city": "Paris"},
    )
    assert change.kind == "updated"
    assert commit.created_at.tzinfo == timezone.utc


def test_commit_context_nests_and_restores(store: ChronoStore) -> None:
    with commit_context(author="outer", labels={"a": "1"}):
        with commit_context(reason="inner", labels={"b": "2"}):
            store.put(ALICE, "x", {"v": 1})
        store.put(ALICE, "y", {"v": 1})
    store.put(ALICE, "z", {"v": 1})
    third, second, first = store.log(ALICE)
    assert (first.author, first.reason, dict(first.labels)) == (
        "outer",
        "inner",
        {"a": "1", "b": "2"},
    )
    assert (second.author, second.reason, dict(second.labels)) == (
        "outer",
        None,
        {"a": "1"},
    )
    assert (third.author, third.reason) == (None, None)


def test_commit_time_can_be_set_for_imports(store: ChronoStore) -> None:
    when = datetime(2023, 5, 8, 13, 56, tzinfo=timezone.utc)
    with commit_context(timestamp=when):
        store.put(ALICE, "x", {"v": 1})
    assert store.show(ALICE, 1).created_at == when
    assert store.get(ALICE, "x").updated_at == when


def test_one_batch_is_one_commit_per_scope(store: ChronoStore) -> None:
    store.batch(
        [
            PutOp(ALICE, "a", {"v": 1}),
            PutOp((*ALICE, "food"), "b", {"v": 2}),
            PutOp(BOB, "a", {"v": 3}),
            PutOp(ALICE, "a", {"v": 4}),
        ]
    )
    (alice,) = store.log(ALICE)
    (bob,) = store.log(BOB)
    assert alice.op == "batch" and len(alice.changes) == 2
    assert {c.key: c.new for c in alice.changes} == {"a": {"v": 4}, "b": {"v": 2}}
    assert bob.version == 1 and bob.op == "put"


def test_deleting_a_missing_item_makes_no_version(store: ChronoStore) -> None:
    store.delete(ALICE, "never-there")
    assert store.head(ALICE) == 0
    store.put(ALICE, "a", {"v": 1})
    store.put(ALICE, "a", {"v": 1})
    assert store.head(ALICE) == 2, "rewriting a value is still a version"


def test_scopes_are_separate_timelines(store: ChronoStore) -> None:
    store.put(ALICE, "city", {"city": "Boston"})
    store.put(BOB, "city", {"city": "Rome"})
    store.put(BOB, "city", {"city": "Oslo"})
    assert store.head(ALICE) == 1 and store.head(BOB) == 2
    store.rollback(ALICE, to=0)
    assert store.get(BOB, "city").value == {"city": "Oslo"}
    assert [c.summary for c in store.log(ALICE)][
        -1
    ] == "created memories/alice/city: Boston"
    assert all(c.scope == BOB for c in store.log(BOB))


def test_scope_may_be_given_as_any_namespace_inside_it(store: ChronoStore) -> None:
    store.put((*ALICE, "food"), "likes", {"v": "pasta"})
    assert store.head((*ALICE, "food")) == store.head(ALICE) == 1


def test_log_filters(store: ChronoStore) -> None:
    old = datetime(2024, 1, 1, tzinfo=timezone.utc)
    with commit_context(author="importer", timestamp=old):
        store.put(ALICE, "a", {"v": 1})
    with commit_context(author="agent"):
        store.put(ALICE, "b", {"v": 2})
        store.put(ALICE, "c", {"v": 3})
    assert [c.version for c in store.log(ALICE, limit=2)] == [3, 2]
    assert [c.version for c in store.log(ALICE, author="importer")] == [1]
    assert [c.version for c in store.log(ALICE, until=old + timedelta(days=1))] == [1]
    assert [c.version for c in store.log(ALICE, since=old + timedelta(days=1))] == [
        3,
        2,
    ]


def test_log_refuses_an_op_that_is_none(store: ChronoStore) -> None:
    """An unknown op is a typo, not a filter that matches nothing."""
    store.put(ALICE, "a", {"v": 1})
    with pytest.raises(
        InvalidRequestError, match=r"op is one of put, delete, .*'bogus'"
    ):
        store.log(ALICE, op="bogus")
    assert [c.op for c in store.log(ALICE, op="put")] == ["put"]


def test_history_lists_every_version_of_an_item(store: ChronoStore) -> None:
    store.put(ALICE, "city", {"city": "Boston"})
    store.put(ALICE, "other", {"v": 1})
    store.put(ALICE, "city", {"city": "Paris"})
    store.delete(ALICE, "city")
    store.put(ALICE, "city", {"city": "Oslo"})
    history = store.history(ALICE, "city")
    assert [(h.version, h.value) for h in history] == [
        (5, {"city": "Oslo"}),
        (4, None),
        (3, {"city": "Paris"}),
        (1, {"city": "Boston"}),
    ]
    assert history[1].deleted and history[1].op == "delete"


def test_diff_between_versions(store: ChronoStore) -> None:
    store.put(ALICE, "city", {"city": "Boston"})
    store.put(ALICE, "pet", {"pet": "cat"})
    store.put(ALICE, "city", {"city": "Paris"})
    store.put(ALICE, "city", {"city": "Boston"})
    forward = {c.key: (c.old, c.new) for c in store.diff(ALICE, 1, 3)}
    assert forward == {
        "city": ({"city": "Boston"}, {"city": "Paris"}),
        "pet": (None, {"pet": "cat"}),
    }
    backward = {c.key: (c.old, c.new) for c in store.diff(ALICE, 3, 1)}
    assert backward == {
        "city": ({"city": "Paris"}, {"city": "Boston"}),
        "pet": ({"pet": "cat"}, None),
    }
    assert [c.key for c in store.diff(ALICE, 1, 4)] == ["pet"], (
        "a value changed back is no difference"
    )
    assert store.diff(ALICE, 2, 2) == []


def test_as_of_reads_the_past_and_is_read_only(store: ChronoStore) -> None:
    store.put(ALICE, "city", {"city": "Boston"})
    store.put((*ALICE, "food"), "likes", {"v": "pasta"})
    store.put(ALICE, "city", {"city": "Paris"})
    store.delete((*ALICE, "food"), "likes")
    past = store.as_of(ALICE, 2)
    assert past.get(ALICE, "city").value == {"city": "Boston"}
    assert past.get((*ALICE, "food"), "likes").value == {"v": "pasta"}
    assert sorted(i.key for i in past.search(("memories",))) == ["city", "likes"]
    assert past.list_namespaces() == [ALICE, (*ALICE, "food")]
    assert store.as_of(ALICE, 0).search(ALICE) == []
    with pytest.raises(ReadOnlyError):
        past.put(ALICE, "city", {"city": "Rome"})
    with pytest.raises(ScopeError):
        past.get(BOB, "city")
    assert store.get(ALICE, "city").value == {"city": "Paris"}


async def test_as_of_async(astore: ChronoStore) -> None:
    await astore.aput(ALICE, "city", {"city": "Boston"})
    await astore.aput(ALICE, "city", {"city": "Paris"})
    past = await astore.aas_of(ALICE, 1)
    assert (await past.aget(ALICE, "city")).value == {"city": "Boston"}


def test_rollback_restores_the_whole_scope_as_a_new_commit(store: ChronoStore) -> None:
    store.put(ALICE, "city", {"city": "Boston"})
    store.put(ALICE, "job", {"job": "chef"})
    at_v2 = _state(store, ALICE)
    items_v2 = {(i.namespace, i.key): i for i in store.search(ALICE)}
    store.put(ALICE, "city", {"city": "NYC"})
    store.put(ALICE, "pet", {"pet": "dog"})
    store.delete(ALICE, "job")
    commit = store.rollback(ALICE, to=2, reason="undo the move", author="alice")
    assert commit.version == 6 and commit.op == "rollback" and commit.target == 2
    assert commit.reason == "undo the move" and commit.author == "alice"
    assert _state(store, ALICE) == at_v2
    restored = {(i.namespace, i.key): i for i in store.search(ALICE)}
    assert {k: (i.created_at, i.updated_at) for k, i in restored.items()} == {
        k: (i.created_at, i.updated_at) for k, i in items_v2.items()
    }, "rolled-back items are exactly as they were at the target"
    assert {c.kind for c in commit.changes} == {"updated", "deleted", "created"}
    assert store.head(ALICE) == 6 and len(store.log(ALICE)) == 6, "nothing is lost"
    redo = store.rollback(ALICE, to=5)
    assert _state(store, ALICE) == {
        (ALICE, "city"): {"city": "NYC"},
        (ALICE, "pet"): {"pet": "dog"},
    }
    assert redo.version == 7


def test_rollback_to_zero_empties_the_scope(store: ChronoStore) -> None:
    store.put(ALICE, "a", {"v": 1})
    store.put((*ALICE, "x"), "b", {"v": 1})
    store.rollback(ALICE, to=0)
    assert _state(store, ALICE) == {}
    assert store.list_namespaces(prefix=ALICE) == []


def test_revert_undoes_one_commit_and_keeps_later_ones(store: ChronoStore) -> None:
    store.put(ALICE, "city", {"city": "Boston"})
    store.put(ALICE, "city", {"city": "NYC"})
    store.put(ALICE, "pet", {"pet": "dog"})
    commit = store.revert(ALICE, 2, reason="wrong city")
    assert not isinstance(commit, RevertConflict)
    assert commit.op == "revert" and commit.target == 2
    assert _state(store, ALICE) == {
        (ALICE, "city"): {"city": "Boston"},
        (ALICE, "pet"): {"pet": "dog"},
    }
    undo_create = store.revert(ALICE, 3)
    assert not isinstance(undo_create, RevertConflict)
    assert store.get(ALICE, "pet") is None


def test_revert_reports_a_conflict_and_changes_nothing(store: ChronoStore) -> None:
    store.put(ALICE, "city", {"city": "Boston"})
    store.put(ALICE, "city", {"city": "NYC"})
    store.put(ALICE, "city", {"city": "Paris"})
    result = store.revert(ALICE, 2)
    assert isinstance(result, RevertConflict)
    (conflict,) = result.conflicts
    assert (conflict.key, conflict.later_versions) == ("city", (3,))
    assert "v3" in str(result)
    assert store.head(ALICE) == 3 and store.get(ALICE, "city").value == {
        "city": "Paris"
    }


def test_reset_destroys_later_versions(store: ChronoStore) -> None:
    store.put(ALICE, "city", {"city": "Boston"})
    store.put(ALICE, "secret", {"ssn": "123"})
    store.put(ALICE, "city", {"city": "Paris"})
    assert store.reset(ALICE, to=1) == 2
    assert store.head(ALICE) == 1
    assert _state(store, ALICE) == {(ALICE, "city"): {"city": "Boston"}}
    assert store.history(ALICE, "secret") == []
    assert all("123" not in c.summary for c in store.log(ALICE))
    store.put(ALICE, "pet", {"pet": "cat"})
    assert [c.version for c in store.log(ALICE)] == [2, 1]


def test_reset_is_invisible_to_other_scopes(store: ChronoStore) -> None:
    store.put(ALICE, "a", {"v": 1})
    store.put(BOB, "a", {"v": 1})
    store.put(BOB, "a", {"v": 2})
    store.reset(ALICE, to=0)
    assert store.head(BOB) == 2 and store.get(BOB, "a").value == {"v": 2}


@pytest.mark.parametrize(
    ("call", "error"),
    [
        (lambda s: s.rollback(ALICE, to=3), VersionNotFound),
        (lambda s: s.rollback(ALICE, to=-1), VersionNotFound),
        (lambda s: s.rollback(ALICE, to=2), VersionError),
        (lambda s: s.rollback(ALICE, to="1"), VersionError),
        (lambda s: s.revert(ALICE, 0), VersionNotFound),
        (lambda s: s.revert(ALICE, 9), VersionNotFound),
        (lambda s: s.reset(ALICE, to=5), VersionNotFound),
        (lambda s: s.show(ALICE, 3), VersionNotFound),
        (lambda s: s.diff(ALICE, 0, 3), VersionNotFound),
        (lambda s: s.as_of(ALICE, 3), VersionNotFound),
        (lambda s: s.rollback(("memories",), to=1), ScopeError),
        (lambda s: s.log("memories/alice"), ScopeError),
        (lambda s: s.history(("memories",), "k"), ScopeError),
        (lambda s: s.put(("memories",), "k", {"v": 1}), ScopeError),
    ],
)
def test_bad_version_and_scope_arguments_raise_and_change_nothing(
    store: ChronoStore, call, error: type[Exception]
) -> None:
    store.put(ALICE, "a", {"v": 1})
    store.put(ALICE, "a", {"v": 2})
    with pytest.raises(error):
        call(store)
    assert store.head(ALICE) == 2 and store.get(ALICE, "a").value == {"v": 2}


def test_version_not_found_is_a_key_error_with_a_readable_message(
    store: ChronoStore,
) -> None:
    with pytest.raises(KeyError) as caught:
        store.show(ALICE, 1)
    assert (
        str(caught.value)
        == "memories/alice has no version 1; its versions are none yet (HEAD is 0)"
    )


def test_reopening_keeps_history_and_scope_depth(store_path: Path) -> None:
    with ChronoStore.from_path(store_path, scope_depth=2) as first:
        first.put(ALICE, "a", {"v": 1})
    with ChronoStore.from_path(store_path) as again:
        assert again.scope_depth == 2
        assert again.get(ALICE, "a").value == {"v": 1}
        assert again.head(ALICE) == 1
    with pytest.raises(ConfigError, match="scope_depth=2"):
        ChronoStore.from_path(store_path, scope_depth=1)
