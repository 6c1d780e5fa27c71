"""`benchmarks/forgetting/forgetting.py --quick` runs end to end and reports what it
promises: redact and compact timed, and no file left holding the secret."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent


def test_forgetting_quick_times_both_and_finds_no_secret() -> None:
    done = subprocess.run(
        [sys.executable, "benchmarks/forgetting/forgetting.py", "--quick"],
        cwd=ROOT,
        capture_output=True,
        text=True,
        timeout=300,
        check=False,
    )
    assert done.returncode == 0, done.stderr
    rows = [line for line in done.stdout.splitlines() if line.startswith("| 200 ")]
    assert [row.split("|")[2].strip() for row in rows] == ["redact", "compact"]
    assert all(row.rstrip(" |").endswith("no file") for row in rows)
