"""The store benchmark runs end to end (tiny sizes) and reports every store."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

from benchmarks.subjects import STORES

ROOT = Path(__file__).resolve().parent.parent
QUICK_TINY = "benchmarks/store_ops.py --quick --sizes 100 200 --ops 5 --rollbacks 3"


def test_store_ops_quick_reports_every_store_and_target(tmp_path: Path) -> None:
    report = tmp_path / "ops.json"
    done = subprocess.run(
        [
            sys.executable,
            *QUICK_TINY.split(),
            *("--dir", str(tmp_path), "--json", str(report)),
        ],
        cwd=ROOT,
        capture_output=True,
        text=True,
        timeout=60,
        check=False,
    )
    assert done.returncode == 0, done.stderr
    table = done.stdout
    for store in STORES:
        assert f"| 100 | {store} |" in table
        assert f"| 200 | {store} |" in table
    assert "### Targets" in table
    results = json.loads(report.read_text())["results"]
    assert set(results["200"]) == set(STORES)
    assert results["200"]["ChronoStore"]["rollback"]["n"] == 3
    assert "rollback" not in results["200"]["InMemoryStore"]
