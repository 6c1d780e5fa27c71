"""The process of one tree that `undo_latency.py --before` starts: build the
store, or time every request on a copy of it, and print the result as JSON.

It imports the package from the tree it is run for
(`benchmarks.harness.trees`), and from this checkout only the workload, so an
older tree's package runs the same requests as this one's.

    python benchmarks/undo/_latency_child.py _build DIR SIZE SEED
    python benchmarks/undo/_latency_child.py _time DIR ROUNDS START
"""

from __future__ import annotations

import json
import sys
import time
from pathlib import Path
from typing import Any

if __package__ in (None, ""):  # run as a script, for the tree `run_in_tree` names
    sys.path.insert(0, str(Path(__file__).resolve().parents[2]))
    from benchmarks.harness.trees import use_package_of_tree

    use_package_of_tree()

from benchmarks.undo.undo_workload import REQUESTS, TARGET, build_history, scope_of
from langgraph_chronomem import ChronoStore

__all__ = ["child_build", "child_time"]


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


if __name__ == "__main__":
    mode, where, first, second = sys.argv[1:]
    if mode == "_build":
        print(json.dumps(child_build(where, int(first), int(second))))
    else:
        print(json.dumps(child_time(where, int(first), int(second))))
