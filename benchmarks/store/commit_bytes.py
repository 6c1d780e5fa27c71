"""Bytes on disk per commit: ChronoStore against LangGraph's SqliteStore.

Both stores get the same puts, one commit each: N new items, then N updates
of random ones (store_ops.py's items). Each file's write-ahead log is then
checkpointed into it and its size divided by the commits; SQLite's `dbstat`
table splits ChronoStore's bytes by table and index. Measured before any undo
and again after the change index an undo search makes (`index_changes`),
which is counted apart. Bytes do not depend on the machine's load.

    python benchmarks/store/commit_bytes.py               # 10k items, 20k commits
    python benchmarks/store/commit_bytes.py --quick       # 1k items (~5 s)
    python benchmarks/store/commit_bytes.py --quick --tables  # and where they go
"""

from __future__ import annotations

import argparse
import os
import random
import sqlite3
import sys
import tempfile
from collections.abc import Sequence
from pathlib import Path

if __package__ in (None, ""):  # run as `python benchmarks/store/commit_bytes.py`
    sys.path.insert(0, str(Path(__file__).resolve().parents[2]))

from langgraph.store.sqlite import SqliteStore

from benchmarks.store.store_ops import memory
from langgraph_chronomem import ChronoStore
from langgraph_chronomem.engine.sqlite import SqliteEngine
from langgraph_chronomem.store import DATABASE_FILE

__all__ = ["main", "measure"]

INDEX_TABLES = ("changes", "change_terms", "changes_by_scope", "change_terms_by_row")


def _checkpointed(conn: sqlite3.Connection, path: Path) -> tuple[int, dict[str, int]]:
    """The file's size once its WAL is checkpointed, and bytes per table."""
    conn.execute("PRAGMA wal_checkpoint(TRUNCATE)")
    tables = dict(conn.execute("SELECT name, sum(pgsize) FROM dbstat GROUP BY name"))
    return os.path.getsize(path), tables


def measure(
    items: int, root: Path, tables: dict[str, float] | None = None
) -> dict[str, float]:
    """Bytes per commit after `items` new items and `items` updates; fills
    `tables`, if given, with ChronoStore's bytes per commit by table and
    index (what `dbstat` counts, free pages aside)."""
    chrono = ChronoStore.from_path(root / "chrono", scope_depth=2)
    conn = sqlite3.connect(root / "sqlite.sqlite3", isolation_level=None)
    conn.execute("PRAGMA journal_mode=WAL")
    sqlite = SqliteStore(conn)
    sqlite.setup()
    rng = random.Random(20240601)
    writes = [memory(i) for i in range(items)] + [
        memory(rng.randrange(items), revision=1 + i) for i in range(items)
    ]
    for namespace, key, value in writes:
        chrono.put(namespace, key, value)
        sqlite.put(namespace, key, value)
    commits = len(writes)
    engine = chrono._engine
    assert isinstance(engine, SqliteEngine)
    path = root / "chrono" / DATABASE_FILE
    with engine.transaction(write=True) as tx:
        tx.index_changes()
    with engine._lock:
        total, split = _checkpointed(engine.conn, path)
    index = sum(split.get(name, 0) for name in INDEX_TABLES)
    if tables is not None:
        tables.update({name: size / commits for name, size in split.items()})
    baseline, _ = _checkpointed(conn, root / "sqlite.sqlite3")
    chrono.close()
    conn.close()
    return {
        "ChronoStore log": (total - index) / commits,
        "ChronoStore change index": index / commits,
        "ChronoStore after an undo": total / commits,
        "SqliteStore (WAL)": baseline / commits,
    }


def main(argv: Sequence[str] | None = None) -> int:
    """Print bytes per commit as a markdown table."""
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--quick", action="store_true", help="1k items")
    parser.add_argument("--items", type=int, help="items (default 10,000)")
    parser.add_argument(
        "--tables",
        action="store_true",
        help="also split ChronoStore's bytes by table and index",
    )
    args = parser.parse_args(argv)
    items = args.items or (1_000 if args.quick else 10_000)
    tables: dict[str, float] = {}
    with tempfile.TemporaryDirectory(prefix="chronomem-bytes-") as tmp:
        figures = measure(items, Path(tmp), tables)
    print(f"{items} items, {2 * items} commits (puts then updates), bytes per commit\n")
    print("| store | bytes per commit |\n|---|---:|")
    for name, value in figures.items():
        print(f"| {name} | {value:.0f} |")
    if args.tables:
        # Tables of one page (4 KiB) hold nothing that grows with commits.
        grown = {n: v for n, v in tables.items() if v * 2 * items > 4096}
        print("\n| ChronoStore table or index | bytes per commit |\n|---|---:|")
        for name, value in sorted(grown.items(), key=lambda t: -t[1]):
            print(f"| {name} | {value:.1f} |")
    return 0


if __name__ == "__main__":
    sys.exit(main())
