"""A branch of one scope as a LangGraph store, as `ChronoStore.on_branch`
returns it: reads see the branch, writes commit to it, and HEAD sees none of
it until `merge`.

It is a `BaseStore`, so a graph compiled with it runs on the branch:

    >>> from langgraph_chronomem import ChronoStore
    >>> import tempfile
    >>> store = ChronoStore.from_path(tempfile.mkdtemp(), scope_depth=2)
    >>> me = ("memories", "alice")
    >>> store.put(me, "city", {"city": "Boston"})
    >>> _ = store.branch(me, "move")
    >>> trial = store.on_branch(me, "move")
    >>> trial.put(me, "city", {"city": "Paris"})
    >>> trial.get(me, "city").value, store.get(me, "city").value
    ({'city': 'Paris'}, {'city': 'Boston'})
    >>> store.merge(me, "move").summary
    'merged a branch at its v2: updated memories/alice/city: Boston -> Paris'
    >>> store.close()
"""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import replace
from functools import partial

from langgraph.store.base import Op, Result

from langgraph_chronomem.engine.base import LogTransaction
from langgraph_chronomem.engine.types import CommitMeta, Namespace, Write
from langgraph_chronomem.store.context import current_meta
from langgraph_chronomem.store.core import StoreCore
from langgraph_chronomem.store.embedded_reads import EmbeddedReads
from langgraph_chronomem.store.ops import CheckedKeys, ReadPlan, check_ops, run_reads

__all__ = ["BranchView"]


class BranchView(CheckedKeys):
    """Branch `name` of `scope`: `get`, `search`, `list_namespaces`, `put`
    and `delete`, each batch one transaction.

    Reads see the scope as it was at the branch's fork under the branch's own
    writes; each batch that writes makes one commit on the branch, labelled
    as any commit (author, reason, and the LangGraph run's thread, run and
    node) and with the branch's name. Reads and writes outside the scope raise
    `ScopeError`. `search(prefix, query=...)` ranks the branch's state as the
    store, holding that state at HEAD, would rank it (`search/past.py`): the
    vectors HEAD holds of rows the branch shares are reused, the texts of
    the branch's own rows embedded once and kept; nothing of a branch goes
    to Chroma. TTLs are kept but do not run on a branch: a merged item's
    starts at HEAD.

    Args:
        store: The store whose log holds the branch.
        scope: The scope it branches.
        name: The branch's name.
    """

    def __init__(self, store: StoreCore, scope: Namespace, name: str) -> None:
        self._store = store
        self.scope = scope
        self.name = name
        self._reads = EmbeddedReads(store._engine, store._search)

    def __repr__(self) -> str:
        return f"BranchView(scope={self.scope!r}, name={self.name!r})"

    def batch(self, ops: Iterable[Op]) -> list[Result]:
        """Run a batch on the branch: reads (as the branch was before the
        batch), then one commit of its writes.

        Raises:
            BranchNotFound: If the branch was deleted.
            BranchError: If a reset destroyed its fork.
            ScopeError: For a namespace outside the scope.
            ChronomemError: As `ChronoStore.batch` for bad ops (an invalid
                namespace, value, filter...) and searches by meaning (no
                Chroma, a read-only store); nothing is written.
        """
        checked, writes, queries = self._checked(ops)
        run = partial(self._run, checked, writes, current_meta())
        return self._reads.run(queries, ReadPlan(self.scope), run)

    async def abatch(self, ops: Iterable[Op]) -> list[Result]:
        """Async `batch`: embeds with the model's async API, then runs in a
        worker thread."""
        checked, writes, queries = self._checked(ops)
        run = partial(self._run, checked, writes, current_meta())
        return await self._reads.arun(queries, ReadPlan(self.scope), run)

    def _checked(
        self, ops: Iterable[Op]
    ) -> tuple[list[Op], list[Write], dict[int, str]]:
        """The ops, checked; their writes; the queries of their searches by
        meaning."""
        checked, writes = check_ops(ops, self._store.scope_depth)
        if writes:
            self._store._engine.check_writable("write")
        return checked, writes, self._reads.queries(checked)

    def _run(
        self, ops: list[Op], writes: list[Write], meta: CommitMeta, plan: ReadPlan
    ) -> list[Result]:
        """One transaction: the reads, then the commit of the writes."""

        def run(tx: LogTransaction) -> list[Result]:
            at = tx.branch_at(self.scope, self.name)
            tx.check_whole(self.scope, at.fork)
            results = run_reads(tx, ops, replace(plan, branch=at))
            if writes:
                tx.write_on_branch(self.scope, self.name, writes, meta)
            return results

        if writes:
            return self._store._write(run)
        with self._store._engine.transaction(write=False) as tx:
            return run(tx)
