"""Two trees side by side: a benchmark's child process runs the package of an
older checkout (a `git worktree`) with this checkout's benchmark code.

Only the package comes from the older tree, so the same workload and requests
run on both, and an older tree laid out before the benchmarks were grouped
still runs. This module imports nothing from the package: a child calls
`use_package_of_tree` before anything imports it.
"""

from __future__ import annotations

import importlib
import json
import os
import subprocess
import sys
from pathlib import Path
from typing import Any

__all__ = ["TREE", "run_in_tree", "use_package_of_tree"]

TREE = "CHRONOMEM_BENCHMARK_TREE"  # the tree whose package a child imports


def use_package_of_tree() -> None:
    """In a child of `run_in_tree`: import `langgraph_chronomem` from the tree
    `$CHRONOMEM_BENCHMARK_TREE` names (unset: as installed), so every later
    import of its modules comes from there too."""
    tree = os.environ.get(TREE)
    if not tree:
        return
    sys.path.insert(0, tree)
    try:
        package = importlib.import_module("langgraph_chronomem")
    finally:
        sys.path.remove(tree)
    found = Path(str(package.__file__)).resolve()
    if not found.is_relative_to(Path(tree).resolve()):
        raise RuntimeError(f"langgraph_chronomem came from {found}, not from {tree}")


def run_in_tree(script: Path, tree: Path, *args: str) -> dict[str, Any]:
    """Run `script` with `args` in a child process that imports the package from
    `tree`, offline, and return the JSON its last line prints: how a benchmark
    times older code beside this."""
    env = {**os.environ, TREE: str(tree), "CHRONOMEM_OFFLINE": "1"}
    done = subprocess.run(
        [sys.executable, str(script), *args],
        env=env,
        capture_output=True,
        text=True,
        check=False,
    )
    if done.returncode != 0:
        raise RuntimeError(f"{args[0]} failed in {tree}:\n{done.stderr[-3000:]}")
    result: dict[str, Any] = json.loads(done.stdout.strip().splitlines()[-1])
    return result
