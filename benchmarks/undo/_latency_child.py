"""The process of one tree that `undo_latency.py --before` starts
(`benchmarks.harness.trees.TreeProcess`): each call, in a fresh fork of it,
builds the store (`_build DIR SIZE SEED`) or times every request on a copy of
it (`_time DIR ROUNDS START`).

It imports the package from the tree it is run for, and from this checkout
only the workload, so an older tree's package runs the same requests as this
one's.
"""

from __future__ import annotations

import sys
import time
from collections.abc import Sequence
from pathlib import Path
from typing import Any

if __package__ in (None, ""):  # run as a script, for the tree `run_in_tree` names
    sys.path.insert(0, str(Path(__file__).resolve().parents[2]))
    from benchmarks.harness.trees import use_package_of_tree

    use_package_of_tree()

from benchmarks.harness.trees import SERVE, serve
from benchmarks.undo.undo_workload import REQUESTS, TARGET, build_history, scope_of
from langgraph_chronomem import ChronoStore

__all__ = ["child_build", "child_time", "run"]


def child_build(directory: str, size: int, seed: int) -> dict[str, Any]:
    """Write the history, index and embed every change."""
    with ChronoStore.from_path(directory, scope_depth=2, synchronous="NORMAL") as store:
        heads = build_history(store, size, seed=seed)
    with ChronoStore.from_path(directory) as store:
        with store._engine.transaction(write=True) as tx:
            tx.index_changes()
        store._search.vectors().catch_up(items=False)
    return {"heads": heads}


def _outcome(resolution: Any) -> list[Any]:
    """What a resolve decided and would preview: compared between the trees."""
    return [
        resolution.decided,
        [
            [
                c.id,
                c.action,
                c.target,
                c.changed,
                [[*d.namespace, d.key] for d in c.diff],
            ]
            for c in resolution.candidates
        ],
    ]


def child_time(directory: str, rounds: int, start: int) -> dict[str, Any]:
    """Warm every request up once, then time it `rounds` times (the list
    rotated to begin at `start`)."""
    scope = scope_of(TARGET)
    with ChronoStore.from_path(directory) as store:
        outcomes = [_outcome(store.resolve(scope, r.text)) for r in REQUESTS]
        taken: dict[int, list[float]] = {}
        cpu: dict[int, list[float]] = {}
        for round_ in range(rounds):
            count = len(REQUESTS)
            for i in [(start + round_ + j) % count for j in range(count)]:
                cpu_began, began = time.process_time_ns(), time.perf_counter_ns()
                store.resolve(scope, REQUESTS[i].text)
                ended, cpu_ended = time.perf_counter_ns(), time.process_time_ns()
                taken.setdefault(i, []).append((ended - began) / 1e6)
                cpu.setdefault(i, []).append((cpu_ended - cpu_began) / 1e6)
    return {"ms": taken, "cpu_ms": cpu, "outcomes": outcomes}


def run(args: Sequence[str]) -> dict[str, Any]:
    """One call: `_build DIR SIZE SEED` or `_time DIR ROUNDS START`."""
    mode, where, first, second = args
    if mode == "_build":
        return child_build(where, int(first), int(second))
    return child_time(where, int(first), int(second))


if __name__ == "__main__" and sys.argv[1:] == [SERVE]:
    serve(run)
