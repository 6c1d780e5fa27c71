"""A default store's first undo after another process's writes, and every later one.

Scenario (issue 33): a writer process opens a store as users open one (no
`index=`, the default model, SQLite as it comes), writes the synthetic year of
`benchmarks/undo/undo_workload.py` (the target user's scope holds N commits, three
other users' N/4 each) with its background follower running meanwhile, and then
either exits at once after its last write (`exit`: an import that quits, leaving
whatever its follower had not embedded; `close` writes what it embedded during
the burst, for a second at most) or stays up until its follower is idle
(`stay`: an app or LangGraph server that keeps running). `nofollow` is `exit`
with the follower off (`follow_writes=False`): the writes' pace without it, side
by side with the others', and a first undo that must embed everything. Another
process then
opens the same directory and times its first `resolve` on the target scope (the
catch-up it must do, model loads included), then every request of the workload
`--rounds` times (the later undos, p50 and p95).

Each size runs this tree and, with `--before DIR` (a `git worktree` of an older
commit), that tree, interleaved, each writer and reader in its own process, so
the two are measured side by side in one run.

    python benchmarks/undo/undo_catchup.py --quick                   # 1k commits
    git worktree add /tmp/before <commit>
    python benchmarks/undo/undo_catchup.py --before /tmp/before      # 1k and 10k

Targets: at 10k commits every resolve after the first <= 60 ms p50 and <= 150
ms p95; the first after 10k writes by another process <= 2 s.
"""

from __future__ import annotations

import argparse
import json
import os
import shlex
import statistics
import sys
import tempfile
import time
from collections.abc import Sequence
from pathlib import Path
from typing import Any

if __package__ in (None, ""):  # run as a script, maybe for another tree's package
    sys.path.insert(0, str(Path(__file__).resolve().parents[2]))
    from benchmarks.harness.trees import use_package_of_tree

    use_package_of_tree()

from benchmarks.harness.trees import run_in_tree

ROOT = Path(__file__).resolve().parents[2]

__all__ = ["main"]

FIRST_TARGET_S = 2.0
LATER_TARGETS_MS = (60.0, 150.0)  # p50, p95 at 10k commits
SCENARIOS = ("exit", "stay", "nofollow")


def _changes_behind(store: Any) -> int | None:
    """Commits the store's change vectors lack (`None`: no such projection)."""
    for projection in store.stats().projections:
        if projection.name.startswith("chronomem-changes"):
            return int(projection.behind)
    return None


def write(directory: str, size: int, seed: int, scenario: str) -> dict[str, Any]:
    """The writer process: a default store, its follower running as it writes
    (on the embedded Chroma, which one process holds, only when asked for:
    `follow_writes=True`, an app that is the store's only process)."""
    import dataclasses

    import langgraph_chronomem
    from benchmarks.undo.undo_workload import build_history
    from langgraph_chronomem import ChronoStore, ResolverConfig

    fields = {field.name for field in dataclasses.fields(ResolverConfig)}
    follows: dict[str, Any] = (
        {"follow_writes": scenario != "nofollow"} if "follow_writes" in fields else {}
    )
    started = time.perf_counter()
    store = ChronoStore.from_path(
        directory, scope_depth=2, resolver=ResolverConfig(**follows)
    )
    heads = build_history(store, size, seed=seed)
    wrote = time.perf_counter() - started
    behind_at_end = _changes_behind(store)
    if scenario == "stay":
        store.wait_for_index()
    settled = time.perf_counter() - started - wrote
    behind = _changes_behind(store)
    closing = time.perf_counter()
    store.close()
    return {
        "code": langgraph_chronomem.__file__,
        "commits": sum(heads.values()),
        "write_s": wrote,
        "puts_per_s": sum(heads.values()) / wrote,
        "settle_s": settled,
        "close_s": time.perf_counter() - closing,
        "behind_after_writes": behind_at_end,
        "behind_at_close": behind,
        "behind_after_close": _behind_after(directory),
    }


def _behind_after(directory: str) -> int | None:
    """Commits the change vectors lack, read from the log alone (no Chroma
    opened, no model loaded) after the writer closed its store."""
    from langgraph_chronomem.engine.sqlite import SqliteEngine
    from langgraph_chronomem.store import DATABASE_FILE

    engine = SqliteEngine(Path(directory) / DATABASE_FILE)
    try:
        with engine.transaction(write=False) as tx:
            for projection in tx.stats().projections:
                if projection.name.startswith("chronomem-changes"):
                    return int(projection.behind)
    finally:
        engine.close()
    return None


def read(directory: str, rounds: int) -> dict[str, Any]:
    """The other process: its first undo on the target scope, then the rest."""
    from benchmarks.undo.undo_workload import REQUESTS, TARGET, scope_of
    from langgraph_chronomem import ChronoStore

    scope = scope_of(TARGET)
    started = time.perf_counter()
    store = ChronoStore.from_path(directory)
    opened = time.perf_counter()
    store.resolve(scope, REQUESTS[0].text)
    first = time.perf_counter() - opened
    later = []
    for _ in range(rounds):
        for request in REQUESTS:
            began = time.perf_counter_ns()
            store.resolve(scope, request.text)
            later.append((time.perf_counter_ns() - began) / 1e6)
    store.close()
    later.sort()
    return {
        "open_s": opened - started,
        "first_s": first,
        "later_n": len(later),
        "later_p50_ms": statistics.median(later),
        "later_p95_ms": later[min(len(later) - 1, int(0.95 * len(later)))],
    }


def _child(tree: Path, *args: str) -> dict[str, Any]:
    return run_in_tree(Path(__file__).resolve(), tree, *args)


def _machine() -> str:
    import platform

    cpu = "unknown"
    with open("/proc/cpuinfo") as info:
        for line in info:
            if line.startswith("model name"):
                cpu = line.split(":", 1)[1].strip()
                break
    load = ", ".join(f"{x:.2f}" for x in os.getloadavg())
    return (
        f"nproc {os.cpu_count()}, {cpu}, Python {platform.python_version()}, "
        f"load average at start {load}"
    )


def main(argv: Sequence[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--quick", action="store_true", help="1k commits, 2 rounds")
    parser.add_argument("--sizes", type=int, nargs="+", help="target-scope commits")
    parser.add_argument("--rounds", type=int, help="rounds of later undos")
    parser.add_argument("--seed", type=int, default=20240601)
    parser.add_argument("--scenarios", nargs="+", choices=SCENARIOS)
    parser.add_argument("--before", type=Path, help="an older tree to compare")
    parser.add_argument("--dir", type=Path, help="parent of the store directories")
    args = parser.parse_args(argv)
    sizes = args.sizes or ([1_000] if args.quick else [1_000, 10_000])
    rounds = args.rounds or (2 if args.quick else 5)
    scenarios = args.scenarios or list(SCENARIOS)
    trees = [("after", ROOT)] + ([("before", args.before)] if args.before else [])
    print(f"Command: `python {shlex.join(sys.argv)}`\n\nMachine: {_machine()}\n")
    print(
        "| commits (target + others) | writer | code | puts/s | backlog after "
        "writes -> before close -> after | first undo, other process | later "
        "undos p50 / p95 |"
    )
    print("|---|---|---|---|---|---|---|")
    with tempfile.TemporaryDirectory(dir=args.dir) as parent:
        for size in sizes:
            for scenario in scenarios:
                for label, tree in trees:  # interleaved: same load for both
                    directory = Path(parent) / f"{label}-{scenario}-{size}"
                    wrote = _child(
                        tree, "_write", str(directory), str(size), str(args.seed),
                        scenario,
                    )  # fmt: skip
                    got = _child(tree, "_read", str(directory), str(rounds))
                    backlog = (
                        f"{wrote['behind_after_writes']} -> {wrote['behind_at_close']}"
                        f" -> {wrote['behind_after_close']}"
                    )
                    print(
                        f"| {size} + {wrote['commits'] - size} | {scenario} "
                        f"(writes {wrote['write_s']:.0f} s, waits "
                        f"{wrote['settle_s']:.1f} s, closes in "
                        f"{wrote['close_s']:.1f} s) | {label} | "
                        f"{wrote['puts_per_s']:.0f} | {backlog} | "
                        f"{got['first_s']:.2f} s | {got['later_p50_ms']:.0f} / "
                        f"{got['later_p95_ms']:.0f} ms (n={got['later_n']}) |",
                        flush=True,
                    )
    print(
        f"\nTargets at 10k: first undo <= {FIRST_TARGET_S:.0f} s; later p50 <= "
        f"{LATER_TARGETS_MS[0]:.0f} ms, p95 <= {LATER_TARGETS_MS[1]:.0f} ms."
    )
    return 0


if __name__ == "__main__":
    if len(sys.argv) > 1 and sys.argv[1] == "_write":
        _, _, where, commits, seed, scenario = sys.argv
        print(json.dumps(write(where, int(commits), int(seed), scenario)))
    elif len(sys.argv) > 1 and sys.argv[1] == "_read":
        print(json.dumps(read(sys.argv[2], int(sys.argv[3]))))
    else:
        sys.exit(main())
