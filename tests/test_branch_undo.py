"""Undo in words on a branch (`store.undo(scope, request, branch=name)`), on
SQLite and PostgreSQL: it resolves among the branch's own changes, reverts on
the branch only (HEAD untouched), and its revert is itself undone there; a
near miss is offered, not acted on.
"""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from langgraph_chronomem import ChronoStore
from langgraph_chronomem.errors import BranchNotFound, InvalidRequestError
from testsupport.pg import PostgresServer, pg_server  # noqa: F401  (fixture)

ME = ("memories", "alice")


@pytest.fixture(params=["sqlite", "postgres"])
def store(request: pytest.FixtureRequest, tmp_path: Path) -> Iterator[ChronoStore]:
    """A store with one timeline per user, a home on HEAD and a branch that
    moved to New York and wrote a wrong job, on each engine."""
    if request.param == "sqlite":
        opened = ChronoStore.from_path(tmp_path / "s", scope_depth=2)
    else:
        server: PostgresServer = request.getfixturevalue("pg_server")
        opened = ChronoStore.from_conn_string(
            server.create_database(), scope_depth=2, chroma_path=tmp_path / "chroma"
        )
    with opened:
        opened.put(ME, "home", {"city": "Boston"})
        opened.branch(ME, "trial")
        trial = opened.on_branch(ME, "trial")
        trial.put(ME, "home", {"city": "New York City"})
        trial.put(ME, "job", {"title": "astronaut at NASA"})  # the wrong one
        yield opened


def items(reader: Any) -> dict[str, Any]:
    return {i.key: i.value for i in reader.search(ME, limit=100)}


def test_a_wrong_memory_on_a_branch_is_undone_in_words_there(
    store: ChronoStore,
) -> None:
    head, at_head = store.head(ME), items(store)
    trial = store.on_branch(ME, "trial")
    done = store.undo(ME, "forget that I am an astronaut", branch="trial")
    assert done.applied, done.message
    assert done.candidate is not None and done.candidate.id == "3.1"
    assert done.message.startswith("undid change 3.1 (created memories/alice/job")
    assert [(c.namespace, c.key, c.new) for c in done.changes] == [(ME, "job", None)]
    assert items(trial) == {"home": {"city": "New York City"}}
    assert (store.head(ME), items(store)) == (head, at_head)  # HEAD untouched
    revert = store.log(ME, branch="trial")[0]
    assert (revert.version, revert.op, revert.target) == (4, "revert", 3)
    assert revert.labels["branch"] == "trial"
    # the revert is a change of the branch like any other: undone in turn
    again = store.undo(ME, f"undo change {revert.version}", branch="trial")
    assert again.applied, again.message
    assert items(trial)["job"] == {"title": "astronaut at NASA"}
    assert (store.head(ME), items(store)) == (head, at_head)


def test_a_near_miss_on_a_branch_is_offered_not_acted_on(store: ChronoStore) -> None:
    before = items(store.on_branch(ME, "trial"))
    offered = store.undo(ME, "forget that I moved to Chicago", branch="trial")
    assert not offered.applied and not offered.resolution.decided
    best = offered.resolution.candidates[0]
    assert best.summary == "updated memories/alice/home: Boston -> New York City"
    assert [(c.namespace, c.key, c.new) for c in best.diff] == [
        (ME, "home", {"city": "Boston"})
    ]
    assert items(store.on_branch(ME, "trial")) == before
    # a person picks it: applied on the branch
    chosen = store.apply(ME, offered.resolution, choice=0, branch="trial")
    assert chosen.applied
    assert items(store.on_branch(ME, "trial"))["home"] == {"city": "Boston"}


def test_going_back_to_a_moment_is_offered_on_a_branch_never_applied(
    store: ChronoStore,
) -> None:
    before = items(store.on_branch(ME, "trial"))
    asked = store.resolve(ME, "go back to when I lived in Boston", branch="trial")
    assert not asked.decided
    rollbacks = [c for c in asked.candidates if c.action == "rollback"]
    assert rollbacks
    for candidate in rollbacks:
        chosen = store.apply(
            ME, asked, choice=asked.candidates.index(candidate), branch="trial"
        )
        assert not chosen.applied and "one change at a time" in chosen.message
    assert items(store.on_branch(ME, "trial")) == before
    with pytest.raises(InvalidRequestError, match="one change at a time"):
        store.resolve(ME, "undo my move", branch="trial", mode="rollback")
    with pytest.raises(BranchNotFound):
        store.undo(ME, "undo my move", branch="nope")
