"""Writers that run in child processes for `tests/test_durability.py`.

The crash workload is deterministic: commit ``i`` of scope `SCOPE` is `step(i)`, a
function of ``i`` alone. A writer that is killed and restarted reads HEAD and
carries on with ``step(HEAD + 1)``, and the test replays steps 1..HEAD in plain
Python to know what the store must hold. Every step makes exactly one version of
`SCOPE`: batches always change something there, rollbacks always commit, and
reverts only ever target a commit nothing later touched, so they never conflict.

This module imports no pytest, so child processes start fast and stay plain.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from multiprocessing.connection import Connection
from multiprocessing.synchronize import Barrier
from typing import Any, Literal

from langgraph.store.base import PutOp

from langgraph_chronomem import ChronoStore, Commit, RevertConflict, commit_context

__all__ = [
    "AUTHOR",
    "NOTES",
    "OTHER_SCOPE",
    "SCOPE",
    "Step",
    "Write",
    "apply_step",
    "put_many",
    "reason",
    "step",
    "write_forever",
]

Namespace = tuple[str, ...]
Value = dict[str, Any]

SCOPE: Namespace = ("mem", "a")
"""The crash workload's main timeline (the store is opened with `scope_depth=2`)."""
NOTES: Namespace = ("mem", "a", "notes")
"""A namespace nested inside `SCOPE`: same timeline, different namespace."""
OTHER_SCOPE: Namespace = ("mem", "b")
"""A second timeline, written in the same `batch()` calls as `SCOPE`."""
AUTHOR = "crash-writer"
KEYS = 12


@dataclass(frozen=True)
class Write:
    """One op of a batch step: a put, or a delete when `value` is None."""

    namespace: Namespace
    key: str
    value: Value | None


@dataclass(frozen=True)
class Step:
    """What commit `i` of `SCOPE` does.

    Attributes:
        kind: `batch` (one `store.batch` of `writes`), `rollback` (to `target`)
            or `revert` (of version `target`).
        writes: The batch's puts and deletes, in order (the last write to an
            item wins).
        target: The version a rollback restores or a revert undoes.
    """

    kind: Literal["batch", "rollback", "revert"]
    writes: tuple[Write, ...] = ()
    target: int | None = None


def _value(i: int, key: str, size: int) -> Value:
    return {"i": i, "key": key, "text": "x" * size}


def step(i: int) -> Step:
    """The deterministic commit `i` (>= 1) of `SCOPE`.

    In every block of ten versions: 3 puts a fresh `solo-<i>` item alone, 6
    reverts that put (4 and 5 never touch it, so the revert cannot conflict),
    9 rolls back to 5, and every 20th version rolls back to half its number.
    The rest are batches of 2-7 writes: puts of shared keys (some several pages
    long), a delete that may hit an item put earlier in the same batch or one
    that does not exist, a put in a nested namespace, and every fourth one a put
    into `OTHER_SCOPE`, which makes that batch two commits in one transaction.
    """
    if i < 1:
        raise ValueError(f"versions start at 1, got {i}")
    if i % 20 == 0:
        return Step("rollback", target=i // 2)
    if i % 10 == 9:
        return Step("rollback", target=i - 4)
    if i % 10 == 6:
        return Step("revert", target=i - 3)
    if i % 10 == 3:
        return Step("batch", (Write(SCOPE, f"solo-{i}", {"i": i}),))
    writes = []
    for j in range(2 + i % 4):
        key = f"k{(i * 7 + j * 5) % KEYS}"
        size = 6000 if (i + j) % 13 == 0 else (i * 31 + j * 17) % 400
        writes.append(Write(SCOPE, key, _value(i, key, size)))
    if i % 3 == 0:
        writes.append(Write(SCOPE, f"k{(i * 5) % KEYS}", None))
    if i % 2 == 0:
        writes.append(Write(NOTES, f"n{i % 5}", _value(i, f"n{i % 5}", 20)))
    if i % 8 == 5:
        writes.append(Write(NOTES, f"n{i % 3}", None))
    if i % 4 == 1:
        writes.append(Write(OTHER_SCOPE, f"b{i % 6}", _value(i, f"b{i % 6}", 50)))
    return Step("batch", tuple(writes))


def reason(i: int) -> str:
    """The commit reason that ties commit `i` to its step."""
    return f"step {i}"


def apply_step(store: ChronoStore, i: int) -> None:
    """Make commit `i` of `SCOPE` (and, for some batches, one of `OTHER_SCOPE`).

    Raises:
        AssertionError: If the store made a different version than `i`, or a
            revert conflicted (the workload is built so that it never does).
    """
    planned = step(i)
    made: Commit | RevertConflict | None = None
    if planned.kind == "batch":
        with commit_context(author=AUTHOR, reason=reason(i)):
            store.batch([PutOp(w.namespace, w.key, w.value) for w in planned.writes])
    elif planned.kind == "rollback":
        assert planned.target is not None
        made = store.rollback(SCOPE, to=planned.target, reason=reason(i), author=AUTHOR)
    else:
        assert planned.target is not None
        made = store.revert(SCOPE, planned.target, reason=reason(i), author=AUTHOR)
    if isinstance(made, RevertConflict):
        raise AssertionError(f"step {i}: unexpected {made}")
    if made is not None and made.version != i:
        raise AssertionError(f"step {i} made version {made.version}")


def write_forever(path: str, ready: Connection) -> None:
    """Open the store at `path` and commit `step(HEAD + 1)`, ... until killed.

    Sends the first version it is about to write through `ready` once the store
    is open, so the parent knows the kill will land among the writes.
    """
    store = ChronoStore.from_path(path, scope_depth=2)
    i = store.head(SCOPE) + 1
    ready.send(i)
    while True:
        apply_step(store, i)
        i += 1


def put_many(
    path: str,
    scope: Sequence[str],
    writer: int,
    count: int,
    start: Barrier,
) -> None:
    """One of several processes putting `count` items into the same scope.

    All writers open the store at the same moment, then start writing at the
    same moment. Even puts write the writer's own key
    `p<writer>-<j>`, odd ones the key `shared` that every writer fights over;
    each value says who wrote it and when (`{"writer": n, "j": j}`).
    """
    namespace = tuple(scope)
    start.wait(timeout=60)
    with ChronoStore.from_path(path, scope_depth=2) as store:
        start.wait(timeout=60)
        with store.commit_context(author=f"proc-{writer}"):
            for j in range(count):
                key = f"p{writer}-{j}" if j % 2 == 0 else "shared"
                store.put(namespace, key, {"writer": writer, "j": j})
