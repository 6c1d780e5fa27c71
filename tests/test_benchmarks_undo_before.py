"""`undo_latency.py --before` times two trees side by side on one store.

A harness check, not a score: given this very tree as the "older" one, both
resolve every request alike and every request is timed in each tree's process.
"""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

from benchmarks.undo.undo_workload import REQUESTS

ROOT = Path(__file__).resolve().parent.parent


def test_two_trees_are_timed_side_by_side_and_checked_alike(tmp_path: Path) -> None:
    done = subprocess.run(
        [
            sys.executable,
            "benchmarks/undo/undo_latency.py",
            *("--sizes", "40", "--rounds", "1", "--before", str(ROOT)),
            *("--dir", str(tmp_path)),
        ],
        cwd=ROOT,
        capture_output=True,
        text=True,
        timeout=180,
        check=False,
    )
    assert done.returncode == 0, done.stderr
    table = done.stdout
    assert "## Undo latency, two trees" in table
    assert "Both trees resolved every request alike: yes." in table
    assert "| requests (ms, p50 / p95; one request: p50 / max) | after | before |" in (
        table
    )
    searches = [r for r in REQUESTS if r.path == "search"]
    for request in searches:
        assert f'| "{request.text}" |' in table
    assert "| search requests, process CPU |" in table
    assert table.count(" / ") >= 2 * (4 + len(searches))
