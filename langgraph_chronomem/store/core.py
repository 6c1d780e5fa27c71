"""What every part of `ChronoStore` stands on: the open log, its search side, and
the one way a change is written (then the vectors told).

`ChronoStore` is assembled from mixins, one per job (`versions`, `forgetting`,
`undo`, `review`, `tags`, `sweepers`, `opening`); each derives from `StoreCore`
so that each sees, and type-checks against, the same few internals:

    >>> import tempfile
    >>> from langgraph_chronomem import ChronoStore
    >>> with ChronoStore.from_path(tempfile.mkdtemp(), scope_depth=2) as store:
    ...     isinstance(store, StoreCore), store.scope_depth
    (True, 2)
"""

from __future__ import annotations

from collections.abc import Callable
from typing import TypeVar

from langgraph_chronomem.engine.base import LogTransaction
from langgraph_chronomem.engine.protocol import LogEngine
from langgraph_chronomem.engine.types import CommitMeta
from langgraph_chronomem.search.index import SearchIndex
from langgraph_chronomem.store.context import commit_context, current_meta

__all__ = ["StoreCore"]

T = TypeVar("T")


class StoreCore:
    """The internals `ChronoStore`'s mixins share; `ChronoStore.__init__` sets
    `_engine` and `_search`."""

    _engine: LogEngine
    _search: SearchIndex

    @property
    def scope_depth(self) -> int:
        """Leading namespace labels that make one timeline."""
        return self._engine.scope_depth

    commit_context = staticmethod(commit_context)

    def _write(
        self, change: Callable[[LogTransaction], T], *, dry_run: bool = False
    ) -> T:
        """Run a change to the log, then bring the item vectors up to date.

        A dry run runs it in a transaction that is rolled back.
        """
        with self._engine.transaction(write=True, dry_run=dry_run) as tx:
            result = change(tx)
        if not dry_run:
            self._search.after_commit({})
        return result

    @staticmethod
    def _meta(author: str | None, reason: str | None) -> CommitMeta:
        with commit_context(author=author, reason=reason):
            return current_meta()
