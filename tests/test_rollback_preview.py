"""What undo shows before it goes back in time: a rollback's preview (issue 33).

"Go back to when I still lived in Boston" offers to roll the whole scope back,
and the candidate lists what that would change (`Candidate.diff`, the first
`DIFF_SHOWN` items) and how many items it changes (`Candidate.changed`). The
preview must say exactly what acting does, over a history with every case a
diff decides: updates, deletions, items created and deleted since, values
written back as they were (or with their keys in another order), a redacted
version and a proposal still under review. And its cost must follow what it
reads: the rows written since the target, in one statement, not one more read
per 500 items changed. Real SQLite files, real Chroma, the provisioned model.
"""

from __future__ import annotations

import sqlite3
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from langgraph.store.base import PutOp

from langgraph_chronomem import ChronoStore, commit_context
from langgraph_chronomem.engine.types import Change

MAYA = ("memories", "maya")
NOTES = ("memories", "maya", "notes")


def put(store: ChronoStore, key: str, value: dict[str, Any] | None) -> None:
    if value is None:
        store.delete(MAYA, key)
    else:
        store.put(MAYA, key, value)


@pytest.fixture(scope="module")
def maya(tmp_path_factory: pytest.TempPathFactory) -> Iterator[ChronoStore]:
    """v1-v5 set the scene; after v5 (Boston) every kind of change happens."""
    root = tmp_path_factory.mktemp("maya")
    with ChronoStore.from_path(root, scope_depth=2) as store:
        put(store, "home", {"content": "User lives in Boston near Davis Square"})
        put(store, "job", {"content": "User is an ICU nurse", "shift": "night"})
        put(store, "cat", {"content": "User has a tabby cat named Miso"})
        put(store, "diet", {"content": "User eats meat"})
        store.put(NOTES, "n1", {"content": "User likes rainy days"})  # v5
        put(store, "home", {"content": "User moved to New York City"})  # updated
        put(store, "job", {"shift": "night", "content": "User is an ICU nurse"})
        put(store, "cat", None)  # deleted
        put(store, "trip", {"content": "User plans a trip to Osaka"})  # created
        put(store, "gym", {"content": "User boulders twice a week"})
        put(store, "gym", None)  # created and deleted since: no change
        put(store, "diet", {"content": "User went vegetarian"})
        put(store, "diet", {"content": "User eats meat"})  # back as it was
        store.put(NOTES, "n1", {"content": "User likes sunny days"})
        store.put(NOTES, "n2", {"content": "User's sister is Hannah"})
        with commit_context(review=True):  # a proposal: not memory yet
            put(store, "home", {"content": "User lives in Vermont"})
        store.redact(MAYA, items=[(NOTES, "n2")], reason="asked to forget")
        store.redact(MAYA, contains="rainy", reason="asked to forget")  # v5's n1
        yield store


EXPECTED = [  # (namespace, key, at HEAD, at v5, why v5's value is gone): by item
    (MAYA, "cat", None, {"content": "User has a tabby cat named Miso"}, None),
    (
        MAYA,
        "home",
        {"content": "User moved to New York City"},
        {"content": "User lives in Boston near Davis Square"},
        None,
    ),
    (MAYA, "trip", {"content": "User plans a trip to Osaka"}, None, None),
    (NOTES, "n1", {"content": "User likes sunny days"}, None, "redacted"),
]  # not job (keys reordered), gym (created, deleted), diet (written back), n2


def shown(changes: tuple[Change, ...] | list[Change]) -> list[tuple[Any, ...]]:
    assert all(c.old_erased is None for c in changes)  # nothing erased at HEAD
    return [(c.namespace, c.key, c.old, c.new, c.new_erased) for c in changes]


def test_a_rollback_preview_shows_exactly_what_going_back_changes(
    maya: ChronoStore,
) -> None:
    resolution = maya.resolve(MAYA, "go back to when I still lived in Boston")
    best = resolution.best
    assert best is not None
    assert (best.action, best.target) == ("rollback", 5)
    assert shown(best.diff) == EXPECTED
    assert best.changed == len(EXPECTED)
    head = maya.log(MAYA, limit=1)[0].version
    assert shown(maya.diff(MAYA, head, 5)) == EXPECTED  # the same rule as `diff`
    offered = sorted((c.target, c.changed) for c in resolution.candidates)
    assert offered == [(5, 4), (7, 3), (10, 2), (12, 2), (15, 1)]
    for c in resolution.candidates:  # each preview is that rollback's diff
        assert c.diff == tuple(maya.diff(MAYA, head, c.target))


def test_the_previews_of_one_undo_read_the_log_once(maya: ChronoStore) -> None:
    """Five rollback candidates: before, each read the rows since its target
    (and then every changed item's rows again by id); now one statement reads
    the rows since the earliest for all five."""
    request = "go back to when I still lived in Boston"
    ran = statements(maya, lambda: maya.resolve(MAYA, request))
    assert sum("GROUP BY i.namespace, i.key" in sql for sql in ran) == 1
    by_id = "e.id = items.id) FROM items WHERE id IN"  # rows read again by id
    assert not [sql for sql in ran if by_id in sql]


def test_acting_on_the_preview_changes_what_it_showed(tmp_path: Path) -> None:
    with ChronoStore.from_path(tmp_path, scope_depth=2) as store:
        put(store, "home", {"content": "User lives in Boston"})
        put(store, "cat", {"content": "User has a cat named Miso"})
        put(store, "home", {"content": "User moved to New York City"})
        put(store, "cat", None)
        put(store, "trip", {"content": "User plans a trip to Osaka"})
        best = store.resolve(MAYA, "go back to when I still lived in Boston").best
        assert best is not None and best.action == "rollback"
        before = {item.key: item.value for item in store.search(MAYA)}
        store.rollback(MAYA, to=best.target)
        after = {item.key: item.value for item in store.search(MAYA)}
    assert best.changed == 3
    assert [(c.key, c.old, c.new) for c in best.diff] == [
        (key, before.get(key), after.get(key))
        for key in sorted(before.keys() | after.keys())
        if before.get(key) != after.get(key)
    ]


def statements(store: ChronoStore, run: Any) -> list[str]:
    """The SQL statements `run()` executes on the store's connection."""
    conn: sqlite3.Connection = store._engine.conn  # type: ignore[attr-defined]
    seen: list[str] = []
    conn.set_trace_callback(seen.append)
    try:
        run()
    finally:
        conn.set_trace_callback(None)
    return seen


@pytest.mark.parametrize("changed", [20, 1_200])
def test_a_preview_reads_the_log_in_statements_that_do_not_grow_with_it(
    tmp_path: Path, changed: int
) -> None:
    """Before, a diff read its rows again by id, 500 at a time: the statements
    grew with the items changed (1,200 items: 3 more)."""
    with ChronoStore.from_path(tmp_path, scope_depth=2) as store:
        put(store, "home", {"content": "User lives in Boston"})
        with commit_context(reason="import"):  # one commit
            store.batch(
                [
                    PutOp(NOTES, f"n{i}", {"content": f"note {i}"})
                    for i in range(changed)
                ]
            )
        head = store.log(MAYA, limit=1)[0].version
        diff: list[Change] = []
        ran = statements(store, lambda: diff.extend(store.diff(MAYA, head, 1)))
    assert len(diff) == changed
    assert len(ran) == 5  # BEGIN, both versions checked, the rows, COMMIT


@pytest.mark.parametrize("changed", [20, 1_200])
def test_a_rollback_reads_the_rows_since_its_target_in_one_statement(
    tmp_path: Path, changed: int
) -> None:
    """Before, a rollback found the rows since its target, then read them
    again by id, 500 at a time: 1,200 items changed took 3 more reads."""
    with ChronoStore.from_path(tmp_path, scope_depth=2) as store:
        put(store, "home", {"content": "User lives in Boston"})
        with commit_context(reason="import"):  # one commit
            store.batch(
                [
                    PutOp(NOTES, f"n{i}", {"content": f"note {i}"})
                    for i in range(changed)
                ]
                + [PutOp(MAYA, "home", {"content": "User moved to Lisbon"})]
            )
        ran = statements(store, lambda: store.rollback(MAYA, to=1))
        after = {(item.namespace, item.key): item.value for item in store.search(())}
    assert after == {(MAYA, "home"): {"content": "User lives in Boston"}}
    assert sum("GROUP BY i.namespace, i.key" in sql for sql in ran) == 1
    by_id = "e.id = items.id) FROM items WHERE id IN"  # rows read again by id
    assert not [sql for sql in ran if by_id in sql]
