"""A writer-searcher that runs in a child process for `tests/test_chroma_server.py`.

Worker `n` opens its own store on the shared PostgreSQL log and Chroma server and,
step by step, puts an item to its own scope and one to the shared scope, updates
and deletes earlier ones, and searches by meaning for each write right after it
(read-your-writes across processes). Worker 0 also runs `reindex` midway. The
final state is a function of the parameters alone (`final_items`), so the test
knows what a fresh store must find.
"""

from __future__ import annotations

from multiprocessing.synchronize import Barrier
from typing import Any

from langgraph_chronomem import ChronoStore
from tests.test_exact_search import INDEX

Namespace = tuple[str, ...]
SHARED: Namespace = ("memories", "shared")


def own(n: int) -> Namespace:
    return ("memories", f"user{n}")


def text(n: int, step: int, rev: int = 0) -> str:
    """Words of their own, so the hashed embedding ranks the item first."""
    return f"p{n} s{step} r{rev} note"


def writes(n: int, steps: int) -> list[tuple[Namespace, str, str | None]]:
    """Worker `n`'s writes in order: (namespace, key, text or None to delete)."""
    done: list[tuple[Namespace, str, str | None]] = []
    for step in range(steps):
        done.append((own(n), f"k{step}", text(n, step)))
        done.append((SHARED, f"p{n}-k{step}", text(n, step, 1)))
        if step % 3 == 2:  # update an earlier own item
            done.append((own(n), f"k{step - 2}", text(n, step, 2)))
        if step % 4 == 3:  # delete an earlier shared item
            done.append((SHARED, f"p{n}-k{step - 3}", None))
    return done


def final_items(n: int, steps: int) -> dict[tuple[Namespace, str], str | None]:
    """What worker `n` leaves: each item's last text, None if deleted."""
    return {(ns, key): value for ns, key, value in writes(n, steps)}


def write_and_search(
    url: str, chroma_url: str, n: int, steps: int, start: Barrier
) -> None:
    """Run worker `n`. Raises AssertionError (the exit code says so, the
    traceback goes to stderr) on the first search that misses its own write."""
    index: Any = INDEX
    with ChronoStore.from_conn_string(
        url, scope_depth=2, index=index, chroma_url=chroma_url
    ) as store:
        start.wait(60)
        for i, (namespace, key, value) in enumerate(writes(n, steps)):
            if value is None:
                store.delete(namespace, key)
                continue
            store.put(namespace, key, {"text": value})
            found = store.search(namespace, query=value, limit=3)
            assert found and (found[0].key, found[0].value) == (key, {"text": value}), (
                f"worker {n}, write {i}: searched {value!r}, found "
                f"{[(f.key, f.value, f.score) for f in found]}"
            )
            if n == 0 and i == len(writes(n, steps)) // 2:
                store.reindex()
