"""A child process for `tests/test_undo_catchup.py`: one of several stores on
a shared log (a SQLite file) and a Chroma server, whose followers catch the
change vectors up in the background.

    python -m tests._catchup_child <store dir> <chroma url> <go file>

It prints `ready` once imported, waits for the go file (so the parent starts
every child's catch-up at once), opens the store (its follower starts on the
backlog it finds), waits until `stats` says the change vectors hold every
commit, and prints how many change rows this process embedded.
This module imports no pytest.
"""

from __future__ import annotations

import sys
import time
from pathlib import Path
from typing import Any


def slow_embed(texts: list[str]) -> list[list[float]]:
    """Letter counts, a few milliseconds a call: a step takes a while, as
    a real model's does, so the children's catch-ups overlap."""
    time.sleep(0.02)
    return [[float(t.count(ch)) + 0.01 for ch in "abcdefghijklmnop"] for t in texts]


INDEX = {"dims": 16, "embed": slow_embed, "fields": ["text"]}


def main(path: str, url: str, go: str) -> int:
    from langgraph_chronomem import ChronoStore
    from langgraph_chronomem.search.project import Projector
    from langgraph_chronomem.search.vectors import CHANGES
    from tests._catchup_child import INDEX  # the parent's embedder, not __main__'s

    embedded = [0]
    add = Projector.add_changes

    def counting(self: Projector, rows: Any) -> None:
        embedded[0] += len(rows)
        add(self, rows)

    Projector.add_changes = counting  # type: ignore[method-assign]
    print("ready", flush=True)
    deadline = time.monotonic() + 120
    while not Path(go).exists():
        time.sleep(0.01)
    with ChronoStore.from_path(path, index=INDEX, chroma_url=url) as store:  # type: ignore[arg-type]
        while any(
            p.behind for p in store.stats().projections if p.name.startswith(CHANGES)
        ):
            if time.monotonic() > deadline:
                print("the change vectors never caught up", file=sys.stderr)
                return 3
            time.sleep(0.05)
    print(embedded[0], flush=True)
    return 0


if __name__ == "__main__":
    raise SystemExit(main(*sys.argv[1:]))
