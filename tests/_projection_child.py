"""A child process for `tests/test_projections.py`: die inside `reindex`, or hold
a store's embedded vector index open while the parent tries to open it too.

    python -m tests._projection_child <store dir> reindex <kill point>
    python -m tests._projection_child <store dir> hold

`reindex` writes `COMMITS` commits, then starts a reindex and dies by SIGKILL at
the kill point:

- `made_anew`: the item collection was just made again, empty;
- `first_batch`: one batch of commits is back in it, the rest not.

`hold` opens the store, prints `ready`, and keeps it open until stdin closes.
This module imports no pytest.
"""

from __future__ import annotations

import os
import signal
import sys
from typing import Any

ALICE = ("memories", "alice")
COMMITS = 300
KILL_POINTS = ("made_anew", "first_batch")


def toy_embed(texts: list[str]) -> list[list[float]]:
    """A deterministic embedding (letter counts), so no model is loaded."""
    return [[float(t.count(ch)) + 0.01 for ch in "abcdefghijklmnop"] for t in texts]


INDEX = {"dims": 16, "embed": toy_embed, "fields": ["text"]}


def text(i: int) -> str:
    return f"note {i}: " + "abcdefghijklmnop"[i % 16] * (1 + i % 7)


def _die(*_: Any, **__: Any) -> None:
    sys.stdout.flush()
    os.kill(os.getpid(), signal.SIGKILL)


def arm(point: str) -> None:
    from langgraph_chronomem.search.project import Projector
    from langgraph_chronomem.search.vector_collections import Collections

    if point == "made_anew":
        make = Collections.make

        def make_or_die(self: Collections, name: str, *, anew: bool = False) -> Any:
            made = make(self, name, anew=anew)
            if anew and name.startswith("chronomem-items-"):
                _die()
            return made

        Collections.make = make_or_die  # type: ignore[method-assign]
    elif point == "first_batch":
        add = Projector.add_items
        calls = []

        def add_or_die(self: Projector, rows: Any) -> None:
            calls.append(1)
            if len(calls) == 2:
                _die()
            add(self, rows)

        Projector.add_items = add_or_die  # type: ignore[method-assign]
    else:
        raise SystemExit(f"unknown kill point {point!r}")


def main(path: str, action: str, point: str = "") -> int:
    from langgraph_chronomem import ChronoStore
    from tests._projection_child import INDEX  # the parent's embedder, not __main__'s

    store = ChronoStore.from_path(path, scope_depth=2, index=INDEX)  # type: ignore[arg-type]
    if action == "hold":
        print("ready", flush=True)
        sys.stdin.read()
        store.close()
        return 0
    for i in range(COMMITS):
        store.put(ALICE, f"k{i}", {"text": text(i)})
    arm(point)
    store.reindex()
    print("survived the kill point", file=sys.stderr)
    return 3


if __name__ == "__main__":
    raise SystemExit(main(*sys.argv[1:]))
