"""What a retention policy gives back: `compact` on a store with many versions.

One user's memory in LangMem's layout (`("memories", user)`, UUID keys,
`{"content": ...}` values of about 150 characters) where every item is
updated many times, in commits of a few writes each, as a background memory
manager makes them. The change index the undo search reads is built first, as
in any store that was ever asked to undo. Then `compact(keep_last=N)`, and:

- the file before and after, both rewritten by `VACUUM` (like for like);
- how long `compact` took, the `VACUUM` included;
- that it kept what it must: each item's first version, its HEAD and its last
  N, the same HEAD as before, every commit in `log`; and that `as_of` a
  compacted version raises `CompactedError` while `as_of(whole_from)` reads.

    python benchmarks/forgetting/compaction.py  # 1,000 items x 100 versions
    python benchmarks/forgetting/compaction.py --quick        # 100 items x 20 versions
"""

from __future__ import annotations

import argparse
import json
import random
import shutil
import sqlite3
import sys
import tempfile
import time
import uuid
from collections.abc import Sequence
from pathlib import Path
from typing import Any

if __package__ in (None, ""):  # run as a script: make `benchmarks` importable
    sys.path.insert(0, str(Path(__file__).resolve().parents[2]))

from langgraph.store.base import PutOp

from benchmarks.harness.report import (
    add_output_arguments,
    header,
    machine_info,
    progress,
)
from benchmarks.harness.report import write_report as write
from langgraph_chronomem import ChronoStore, CompactedError
from langgraph_chronomem.store import DATABASE_FILE

USER = ("memories", "user")
WORDS = [
    "mentioned",
    "their",
    "sister",
    "visits",
    "in",
    "spring",
    "and",
    "they",
    "plan",
    "a",
    "trip",
    "to",
    "the",
    "coast",
    "with",
    "the",
    "kids",
    "while",
    "the",
    "garden",
    "needs",
    "work",
]


def content(rng: random.Random) -> dict[str, str]:
    """A memory of about 150 characters."""
    return {"content": "User " + " ".join(rng.choices(WORDS, k=26))}


def build(root: Path, items: int, versions: int, per_commit: int) -> ChronoStore:
    """`items` memories, each written `versions` times, `per_commit` writes a commit."""
    rng = random.Random(7)
    keys = [str(uuid.UUID(int=rng.getrandbits(128))) for _ in range(items)]
    store = ChronoStore.from_path(root, scope_depth=2)
    writes = [key for _ in range(versions) for key in keys]
    for start in range(0, len(writes), per_commit):
        store.batch(
            [
                PutOp(USER, key, content(rng))
                for key in writes[start : start + per_commit]
            ]
        )
    with store._engine.transaction(write=True) as tx:  # what an undo search builds
        tx.index_changes()
    return store


def file_size(root: Path) -> int:
    return (root / DATABASE_FILE).stat().st_size


def run(
    items: int, versions: int, keep_last: int, per_commit: int, parent: Path | None
) -> dict[str, Any]:
    root = Path(tempfile.mkdtemp(prefix="compaction-", dir=parent))
    try:
        progress(f"writing {items} items x {versions} versions")
        started = time.perf_counter()
        store = build(root, items, versions, per_commit)
        written = time.perf_counter() - started
        head = {i.key: i.value for i in store.search(USER, limit=items + 1)}
        commits = store.head(USER)
        store.close()
        with sqlite3.connect(root / DATABASE_FILE) as conn:  # like for like
            conn.execute("VACUUM")
        before = file_size(root)

        progress(f"compacting to the last {keep_last} per item")
        store = ChronoStore.from_path(root)
        started = time.perf_counter()
        done = store.compact(USER, keep_last=keep_last)
        seconds = time.perf_counter() - started
        after = file_size(root)

        whole = done.whole_from[USER]
        kept_per_item = min(versions, keep_last + 1)
        checks = {
            "versions erased": len(done.versions) == items * (versions - kept_per_item),
            "HEAD unchanged": {
                i.key: i.value for i in store.search(USER, limit=items + 1)
            }
            == head,
            "every commit in log": len(store.log(USER)) == commits,
            "first version and last N kept": all(
                [v.version for v in store.history(USER, key) if v.erased is None]
                == sorted(
                    {h.version for h in store.history(USER, key)[:keep_last]}
                    | {store.history(USER, key)[-1].version},
                    reverse=True,
                )
                for key in list(head)[:20]
            ),
            "as_of(whole_from) reads": len(
                store.as_of(USER, whole).search(USER, limit=items + 1)
            )
            == items,
        }
        try:
            store.as_of(USER, whole - 1)
            checks["as_of a compacted version refuses"] = False
        except CompactedError:
            checks["as_of a compacted version refuses"] = True
        store.close()
        return {
            "items": items,
            "versions per item": versions,
            "item versions": items * versions,
            "commits": commits,
            "keep_last": keep_last,
            "writing (s)": round(written, 1),
            "file before (MiB)": round(before / 2**20, 2),
            "file after (MiB)": round(after / 2**20, 2),
            "after / before": round(after / before, 3),
            "compact (s)": round(seconds, 2),
            "versions erased": len(done.versions),
            "whole from": whole,
            "checks": checks,
        }
    finally:
        shutil.rmtree(root, ignore_errors=True)


def main(argv: Sequence[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--items", type=int, default=1000)
    parser.add_argument("--versions", type=int, default=100, help="per item")
    parser.add_argument("--keep-last", type=int, default=5)
    parser.add_argument("--per-commit", type=int, default=10, help="writes per commit")
    parser.add_argument("--quick", action="store_true", help="100 items x 20 versions")
    add_output_arguments(parser)
    args = parser.parse_args(argv)
    if args.quick:
        args.items, args.versions = 100, 20
    machine = machine_info(args.dir or Path(tempfile.gettempdir()))
    result = run(args.items, args.versions, args.keep_last, args.per_commit, args.dir)
    command = "python benchmarks/forgetting/compaction.py" + (
        " --quick" if args.quick else ""
    )
    lines = header("Compaction", command, machine)
    lines += ["| measure | value |", "|---|---:|"]
    lines += [f"| {k} | {v} |" for k, v in result.items() if k != "checks"]
    lines += ["", "Checks:", ""]
    lines += [
        f"- {name}: {'yes' if ok else 'NO'}" for name, ok in result["checks"].items()
    ]
    text = "\n".join(lines) + "\n"
    print(text)
    if args.out:
        write(args.out, text)
    if args.json:
        write(args.json, json.dumps(result, indent=2))
    return 0 if all(result["checks"].values()) else 1


if __name__ == "__main__":
    sys.exit(main())
