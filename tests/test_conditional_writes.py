"""Conditional writes: `put_if` writes only if the item is still as it was read.

Two agents editing one memory must not overwrite each other silently: a write
conditioned on the version or value it read fails with a typed
`WriteConflictError` when another write came first, and changes nothing.
Four real processes race on one counter through `put_if`: every increment
that succeeded is counted, none is lost, and the rest are typed conflicts.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
import textwrap
from pathlib import Path
from typing import Any

import pytest

from langgraph_chronomem import ChronoStore, InvalidRequestError
from langgraph_chronomem.errors import WriteConflictError

ALICE = ("memories", "alice")


def test_a_write_on_the_value_it_read_succeeds_once(store: ChronoStore) -> None:
    store.put(ALICE, "plan", {"text": "Lisbon"})
    store.put_if(ALICE, "plan", {"text": "Porto"}, if_value={"text": "Lisbon"})
    with pytest.raises(WriteConflictError, match="no longer holds the value"):
        store.put_if(ALICE, "plan", {"text": "Faro"}, if_value={"text": "Lisbon"})
    assert store.get(ALICE, "plan").value == {"text": "Porto"}
    assert store.head(ALICE) == 2  # the refused write made no commit


def test_a_write_on_the_version_it_read(store: ChronoStore) -> None:
    store.put(ALICE, "plan", {"text": "Lisbon"})
    store.put(ALICE, "other", {"text": "x"})
    (seen,) = store.history(ALICE, "plan")
    store.put_if(ALICE, "plan", {"text": "Porto"}, if_version=seen.version)
    with pytest.raises(WriteConflictError, match="expected at v1 but is at v3"):
        store.put_if(ALICE, "plan", None, if_version=seen.version)
    assert store.get(ALICE, "plan").value == {"text": "Porto"}


def test_version_zero_means_it_must_not_exist(store: ChronoStore) -> None:
    store.put_if(ALICE, "new", {"v": 1}, if_version=0)
    with pytest.raises(WriteConflictError):
        store.put_if(ALICE, "new", {"v": 2}, if_version=0)
    store.put_if(ALICE, "new", None, if_value={"v": 1})  # a conditional delete
    assert store.get(ALICE, "new") is None


async def test_the_async_twin(store: ChronoStore) -> None:
    await store.aput_if(ALICE, "a", {"v": 1}, if_value=None)
    with pytest.raises(WriteConflictError):
        await store.aput_if(ALICE, "a", {"v": 2}, if_value=None)


@pytest.mark.parametrize("bad", [-1, "3", 1.5, True])
def test_a_bad_version_is_a_typed_error(store: ChronoStore, bad: Any) -> None:
    with pytest.raises(InvalidRequestError):
        store.put_if(ALICE, "a", {"v": 1}, if_version=bad)
    assert store.head(ALICE) == 0


RACER = textwrap.dedent(
    """
    import json, sys
    from langgraph_chronomem import ChronoStore
    from langgraph_chronomem.errors import WriteConflictError

    won = lost = 0
    with ChronoStore.from_path(sys.argv[1], scope_depth=2) as store:
        for _ in range(int(sys.argv[2])):
            seen = store.get(("memories", "alice"), "counter").value
            try:
                store.put_if(
                    ("memories", "alice"), "counter", {"n": seen["n"] + 1},
                    if_value=seen,
                )
                won += 1
            except WriteConflictError:
                lost += 1
    print(json.dumps({"won": won, "lost": lost}))
    """
)


def test_four_processes_racing_lose_no_increment(tmp_path: Path) -> None:
    path = tmp_path / "memory"
    with ChronoStore.from_path(path, scope_depth=2) as store:
        store.put(ALICE, "counter", {"n": 0})
    env = {**os.environ, "PYTHONPATH": os.pathsep.join(sys.path)}
    racers = [
        subprocess.Popen(
            [sys.executable, "-c", RACER, str(path), "40"],
            env=env,
            stdout=subprocess.PIPE,
            stderr=subprocess.PIPE,
            text=True,
        )
        for _ in range(4)
    ]
    results = []
    for racer in racers:
        out, err = racer.communicate(timeout=300)
        assert racer.returncode == 0, err
        results.append(json.loads(out))
    won = sum(r["won"] for r in results)
    assert sum(r["won"] + r["lost"] for r in results) == 160
    with ChronoStore.from_path(path, scope_depth=2) as store:
        assert store.get(ALICE, "counter").value == {"n": won}  # none lost
        assert store.head(ALICE) == won + 1  # one commit per increment
