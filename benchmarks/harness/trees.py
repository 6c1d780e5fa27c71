"""Two trees side by side: a benchmark's child process runs the package of an
older checkout (a `git worktree`) with this checkout's benchmark code.

Only the package comes from the older tree, so the same workload and requests
run on both, and an older tree laid out before the benchmarks were grouped
still runs. This module imports nothing from the package: a child calls
`use_package_of_tree` before anything imports it.

`run_in_tree` starts a fresh process a call. `TreeProcess` imports a tree's
package once and runs each call in a fresh fork of itself (`serve`): a process
as new as a started one but for its imports, which are most of a small call's
cost (about 2 s of CPU each).
"""

from __future__ import annotations

import importlib
import json
import os
import subprocess
import sys
import tempfile
import traceback
from collections.abc import Callable, Sequence
from pathlib import Path
from types import TracebackType
from typing import Any

__all__ = [
    "SERVE",
    "TREE",
    "TreeProcess",
    "run_in_tree",
    "serve",
    "use_package_of_tree",
]

TREE = "CHRONOMEM_BENCHMARK_TREE"  # the tree whose package a child imports
SERVE = "_serve"  # the argument that starts a script's `serve` loop


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


def _environment(tree: Path) -> dict[str, str]:
    return {**os.environ, TREE: str(tree), "CHRONOMEM_OFFLINE": "1"}


def run_in_tree(script: Path, tree: Path, *args: str) -> dict[str, Any]:
    """Run `script` with `args` in a child process that imports the package from
    `tree`, offline, and return the JSON its last line prints: how a benchmark
    times older code beside this."""
    done = subprocess.run(
        [sys.executable, str(script), *args],
        env=_environment(tree),
        capture_output=True,
        text=True,
        check=False,
    )
    if done.returncode != 0:
        raise RuntimeError(f"{args[0]} failed in {tree}:\n{done.stderr[-3000:]}")
    result: dict[str, Any] = json.loads(done.stdout.strip().splitlines()[-1])
    return result


class TreeProcess:
    """`script SERVE` running for `tree`: each `call` runs in a fresh fork of it.

    Start one per tree before timing anything: their imports run meanwhile.
    """

    def __init__(self, script: Path, tree: Path) -> None:
        self.tree = tree
        # its stderr, read if it ends; closed by `close`
        self._errors = tempfile.TemporaryFile(mode="w+")  # noqa: SIM115
        self._process = subprocess.Popen(
            [sys.executable, str(script), SERVE],
            env=_environment(tree),
            stdin=subprocess.PIPE,
            stdout=subprocess.PIPE,
            stderr=self._errors,
            text=True,
        )

    def call(self, *args: str) -> dict[str, Any]:
        """What the script's `run(args)` returned, in a fresh fork."""
        stdin, stdout = self._process.stdin, self._process.stdout
        assert stdin is not None and stdout is not None
        try:
            stdin.write(json.dumps(args) + "\n")
            stdin.flush()
        except BrokenPipeError:
            pass  # it ended; the empty answer below says why
        line = stdout.readline()
        if not line:
            self._errors.seek(0)
            why = self._errors.read()[-3000:]
            raise RuntimeError(f"{args[0]} failed in {self.tree}: it ended:\n{why}")
        answer: dict[str, Any] = json.loads(line)
        if "error" in answer:
            raise RuntimeError(f"{args[0]} failed in {self.tree}:\n{answer['error']}")
        result: dict[str, Any] = answer["result"]
        return result

    def close(self) -> None:
        """End the loop (its stdin closes) and wait for the process."""
        if self._process.stdin is not None:
            self._process.stdin.close()
        self._process.wait(timeout=60)
        self._errors.close()

    def __enter__(self) -> TreeProcess:
        return self

    def __exit__(
        self,
        kind: type[BaseException] | None,
        error: BaseException | None,
        trace: TracebackType | None,
    ) -> None:
        self.close()


def serve(run: Callable[[Sequence[str]], dict[str, Any]]) -> None:
    """A script's loop under `TreeProcess`: for each call (a JSON list of
    arguments on stdin), fork; the fork answers `run(args)` and exits, and its
    answer goes back on stdout as one JSON line."""
    for line in sys.stdin:
        reading, writing = os.pipe()
        child = os.fork()
        if child == 0:  # the fork: the imports done, nothing else
            os.close(reading)
            answer: dict[str, Any]
            try:
                answer = {"result": run(json.loads(line))}
            except BaseException:  # the parent raises it, with this trace
                answer = {"error": traceback.format_exc()}
            with os.fdopen(writing, "w") as back:
                json.dump(answer, back)
            os._exit(0)
        os.close(writing)
        with os.fdopen(reading) as back:
            text = back.read()
        _, status = os.waitpid(child, 0)
        sys.stdout.write((text or json.dumps({"error": f"fork died: {status}"})) + "\n")
        sys.stdout.flush()
