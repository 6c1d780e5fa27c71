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

from langgraph.store.base import Op, Result

from langgraph_chronomem._twins import off_loop
from langgraph_chronomem.engine.base import LogTransaction
from langgraph_chronomem.engine.types import Namespace
from langgraph_chronomem.store.context import current_meta
from langgraph_chronomem.store.core import StoreCore
from langgraph_chronomem.store.ops import CheckedKeys, ReadPlan, check_ops, run_reads

__all__ = ["BranchView"]


class BranchView(CheckedKeys):
    """Branch `name` of `scope`: `get`, `search` (without `query`),
    `list_namespaces`, `put` and `delete`, each batch one transaction.

    Reads see the scope as it was at the branch's fork under the branch's own
    writes; each batch that writes makes one commit on the branch, labelled
    as any commit (author, reason, and the LangGraph run's thread, run and
    node) and with the branch's name. Reads and writes outside the scope raise
    `ScopeError`; a search by meaning raises it too (it reads HEAD only). TTLs
    are kept but do not run on a branch: a merged item's starts at HEAD.

    Args:
        store: The store whose log holds the branch.
        scope: The scope it branches.
        name: The branch's name.
    """

    def __init__(self, store: StoreCore, scope: Namespace, name: str) -> None:
        self._store = store
        self.scope = scope
        self.name = name

    def __repr__(self) -> str:
        return f"BranchView(scope={self.scope!r}, name={self.name!r})"

    def batch(self, ops: Iterable[Op]) -> list[Result]:
        """Run a batch on the branch: reads (as the branch was before the
        batch), then one commit of its writes.

        Raises:
            BranchNotFound: If the branch was deleted.
            BranchError: If a reset destroyed its fork.
            ScopeError: For a namespace outside the scope, or a search by
                meaning.
            ChronomemError: As `ChronoStore.batch` for bad ops (an invalid
                namespace, value, filter...); nothing is written.
        """
        ops, writes = check_ops(ops, self._store.scope_depth)
        meta = current_meta()

        def run(tx: LogTransaction) -> list[Result]:
            at = tx.branch_at(self.scope, self.name)
            tx.check_whole(self.scope, at.fork)
            results = run_reads(tx, ops, ReadPlan(self.scope, branch=at))
            if writes:
                tx.write_on_branch(self.scope, self.name, writes, meta)
            return results

        if writes:
            self._store._engine.check_writable("write")
            return self._store._write(run)
        with self._store._engine.transaction(write=False) as tx:
            return run(tx)

    async def abatch(self, ops: Iterable[Op]) -> list[Result]:
        """Async `batch`."""
        return await off_loop(self.batch, list(ops))
