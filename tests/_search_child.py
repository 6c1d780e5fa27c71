"""A child process for `tests/test_search.py`: commit, then die by SIGKILL before
the Chroma projection has fully caught up.

    python -m tests._search_child <store dir> <kill point> <action>

The child opens the store with an item index, writes a short history, arms one
kill point, and makes one last change (`put`: home becomes `PARIS`; `rollback`:
home goes back from `PARIS` to `BOSTON`). The kill points, in the order the store
reaches them after the SQLite commit:

- `after_commit`: before the write hands its commit to the background follower
  (`SearchIndex.after_commit`).
- `after_delete`: in the follower, the stale vectors are deleted, the new ones
  not yet added (`Projector.add_items`).
- `before_mark`: in the follower, Chroma is up to date, the projection's mark is
  not saved yet (`ProjectionFeed.advance` for the item collection).

Exit code -9 (killed) is the expected outcome; anything else is a failure the
parent reports with this process's stderr. This module imports no pytest.
"""

from __future__ import annotations

import ipaddress
import os
import signal
import socket
import sys
from typing import Any

ALICE = ("memories", "alice")
INDEX = {"fields": ["text"]}
BOSTON = "I live in a small apartment in Boston, Massachusetts"
PARIS = "I moved to Paris, France, near the Eiffel Tower"
CAT = "My cat Tom sleeps on the sofa all day"
KILL_POINTS = ("after_commit", "after_delete", "before_mark")
ACTIONS = ("put", "rollback")


def expected(action: str) -> tuple[int, str, str]:
    """(HEAD version, home's value at HEAD, the value that must never come back)."""
    if action == "put":
        return 3, PARIS, BOSTON
    return 4, BOSTON, PARIS


def _no_network() -> None:
    real = socket.socket.connect

    def connect(self: socket.socket, address: Any) -> Any:
        if not isinstance(address, (str, bytes)):
            host = address[0]
            if (
                host not in ("localhost", "")
                and not ipaddress.ip_address(host).is_loopback
            ):
                raise OSError(f"child tried to connect to {address!r}")
        return real(self, address)

    socket.socket.connect = connect  # type: ignore[method-assign,assignment]


def _die(*_: Any, **__: Any) -> None:
    sys.stdout.flush()
    os.kill(os.getpid(), signal.SIGKILL)


def arm(point: str) -> None:
    """Make the store kill this process at `point`."""
    from langgraph_chronomem.engine.feed import ProjectionFeed
    from langgraph_chronomem.search.index import SearchIndex
    from langgraph_chronomem.search.project import Projector
    from langgraph_chronomem.search.vectors import ITEMS

    if point == "after_commit":
        SearchIndex.after_commit = _die  # type: ignore[method-assign]
    elif point == "after_delete":
        Projector.add_items = _die  # type: ignore[method-assign]
    elif point == "before_mark":
        advance = ProjectionFeed.advance

        def advance_or_die(
            self: ProjectionFeed, name: str, seq: int, *, since: int
        ) -> bool:
            if name.startswith(f"{ITEMS}-"):
                _die()
            return advance(self, name, seq, since=since)

        ProjectionFeed.advance = advance_or_die  # type: ignore[method-assign]
    else:
        raise SystemExit(f"unknown kill point {point!r}")


def main(path: str, point: str, action: str) -> int:
    _no_network()
    from langgraph_chronomem import ChronoStore

    store = ChronoStore.from_path(path, scope_depth=2, index=INDEX)  # type: ignore[arg-type]
    store.put(ALICE, "home", {"text": BOSTON})  # v1
    store.put(ALICE, "pet", {"text": CAT})  # v2
    if action == "rollback":
        store.put(ALICE, "home", {"text": PARIS})  # v3, rolled back below
    store.wait_for_index()  # the kill point must catch the last change only
    arm(point)
    if action == "put":
        store.put(ALICE, "home", {"text": PARIS})  # v3
    elif action == "rollback":
        store.rollback(ALICE, to=2)  # v4
    else:
        raise SystemExit(f"unknown action {action!r}")
    store.wait_for_index()  # the vectors follow in a background thread
    print("survived the kill point", flush=True)
    return 3


if __name__ == "__main__":
    sys.exit(main(*sys.argv[1:]))
