"""The stores under test, opened side by side at every memory size.

Each opener returns a `Subject`: the store, how to close it, and, for stores
that have one, how to roll back. Every store gets its own file in the given
directory; the WAL stores share one `synchronous` setting.
"""

from __future__ import annotations

import sqlite3
from collections.abc import Callable, Iterator, Sequence
from contextlib import contextmanager
from dataclasses import dataclass, replace
from functools import partial
from pathlib import Path

from langgraph.store.base import BaseStore
from langgraph.store.memory import InMemoryStore
from langgraph.store.sqlite import SqliteStore

from benchmarks.harness.naive_snapshot import NaiveSnapshotStore
from langgraph_chronomem import ChronoStore

__all__ = [
    "CHRONO",
    "CHRONO_TWIN",
    "IN_MEMORY",
    "NAIVE",
    "SCOPE",
    "SQLITE_DEFAULT",
    "SQLITE_WAL",
    "STORES",
    "Subject",
    "open_subjects",
]

CHRONO = "ChronoStore"
CHRONO_TWIN = "ChronoStore (twin)"  # `store_ops.py --twin`: the method's own noise
SQLITE_WAL = "SqliteStore (WAL)"
SQLITE_DEFAULT = "SqliteStore (defaults)"
IN_MEMORY = "InMemoryStore"
NAIVE = "Naive snapshot-per-write"
STORES = (CHRONO, SQLITE_WAL, SQLITE_DEFAULT, IN_MEMORY, NAIVE)  # row order

SCOPE = ("memories", "alice")  # one timeline holding the whole memory


@dataclass
class Subject:
    """One store under test, at one memory size.

    Attributes:
        name: Its row label.
        size: The memory size it is measured at.
        store: The LangGraph store.
        close: Releases it.
        mark: Returns a call that rolls the memory back to now; `None` for a
            store without rollback.
        snapshot_per_write: Copies its whole memory per write, so it gets
            fewer put and rollback ops at large sizes.
        quiesce: Lets the store finish background work a timed op started
            (a follower thread's index writes); the harness calls it untimed
            after each of this store's ops, so that work does not run during
            (and count in) the next stores' timed ops. `None` for a store
            that does all its work before an op returns.
    """

    name: str
    size: int
    store: BaseStore
    close: Callable[[], None]
    mark: Callable[[], Callable[[], object]] | None = None
    snapshot_per_write: bool = False
    quiesce: Callable[[], None] | None = None

    @property
    def id(self) -> tuple[int, str]:
        """Unique among the subjects of one run: (size, name)."""
        return self.size, self.name


def open_chrono(directory: Path, size: int, synchronous: str) -> Subject:
    """ChronoStore as it comes (WAL; synchronous=FULL unless told otherwise)."""
    store = ChronoStore.from_path(
        directory / "chrono", scope_depth=len(SCOPE), synchronous=synchronous
    )

    def mark() -> Callable[[], object]:
        return partial(store.rollback, SCOPE, to=store.head(SCOPE))

    return Subject(CHRONO, size, store, store.close, mark)


def open_chrono_twin(directory: Path, size: int, synchronous: str) -> Subject:
    """A second ChronoStore, the same as the first: what separates the two is
    the measuring method's own noise and bias."""
    (directory / "twin").mkdir()
    return replace(open_chrono(directory / "twin", size, synchronous), name=CHRONO_TWIN)


def _open_sqlite(
    directory: Path, size: int, synchronous: str, *, like_for_like: bool
) -> Subject:
    """LangGraph's SqliteStore on a file, connected as `from_conn_string` does.

    `like_for_like` switches it to ChronoStore's pragmas: WAL and `synchronous`;
    otherwise it keeps SQLite's defaults (rollback journal, synchronous=FULL).
    """
    name = SQLITE_WAL if like_for_like else SQLITE_DEFAULT
    conn = sqlite3.connect(
        directory / f"sqlite-{'wal' if like_for_like else 'default'}.sqlite3",
        check_same_thread=False,
        isolation_level=None,
    )
    if like_for_like:
        conn.execute("PRAGMA journal_mode=WAL")
        conn.execute(f"PRAGMA synchronous={synchronous}")
    store = SqliteStore(conn)
    store.setup()
    return Subject(name, size, store, conn.close)


def open_in_memory(directory: Path, size: int, synchronous: str) -> Subject:
    """LangGraph's InMemoryStore (nothing on disk)."""
    return Subject(IN_MEMORY, size, InMemoryStore(), lambda: None)


def open_naive(directory: Path, size: int, synchronous: str) -> Subject:
    """The snapshot-per-write baseline, with ChronoStore's pragmas."""
    store = NaiveSnapshotStore(directory / "naive.sqlite3", synchronous=synchronous)

    def mark() -> Callable[[], object]:
        return partial(store.rollback, store.head())

    return Subject(NAIVE, size, store, store.close, mark, snapshot_per_write=True)


OPENERS: tuple[Callable[[Path, int, str], Subject], ...] = (
    open_chrono,
    partial(_open_sqlite, like_for_like=True),
    partial(_open_sqlite, like_for_like=False),
    open_in_memory,
    open_naive,
)


@contextmanager
def open_subjects(
    root: Path, sizes: Sequence[int], synchronous: str, *, twin: bool = False
) -> Iterator[list[Subject]]:
    """Every store at every size, each in its own file below `root`; with
    `twin`, a second ChronoStore beside the first."""
    openers = (OPENERS[0], open_chrono_twin, *OPENERS[1:]) if twin else OPENERS
    subjects: list[Subject] = []
    try:
        for size in sizes:
            directory = root / str(size)
            directory.mkdir()
            subjects += [opener(directory, size, synchronous) for opener in openers]
        yield subjects
    finally:
        for subject in subjects:
            subject.close()
