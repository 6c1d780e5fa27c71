"""Review before memory is trusted: the quarantine half of `ChronoStore`.

A write can land as a *proposal*: a commit (op `propose`) in the log, shown by
`log`, `show` and `history`, but invisible to `get`, `search`, semantic search,
`as_of`, `diff`, `rollback` and the undo search until someone approves it.
Writes become proposals when the caller asks (`commit_context(review=True)`)
or when their `source` label is the one `require_review` named. Approve and
reject are commits too, so the history keeps every decision:

    >>> import tempfile
    >>> from langgraph_chronomem import ChronoStore, commit_context
    >>> store = ChronoStore.from_path(tempfile.mkdtemp(), scope_depth=1)
    >>> me = ("alice",)
    >>> with commit_context(review=True, author="agent"):
    ...     store.put(me, "city", {"city": "Atlantis"})
    >>> store.get(me, "city") is None
    True
    >>> [p.summary for p in store.proposals(me)]
    ['proposed (pending review): created alice/city: Atlantis']
    >>> store.reject(me, 1, reason="no such city").summary
    'rejected v1'
    >>> store.proposals(me), store.get(me, "city")
    ([], None)
    >>> store.close()
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import TypeVar

from langgraph_chronomem._twins import in_thread
from langgraph_chronomem.engine.base import REVIEW_SOURCE
from langgraph_chronomem.engine.types import Commit
from langgraph_chronomem.errors import InvalidRequestError
from langgraph_chronomem.store.core import StoreCore
from langgraph_chronomem.store.ops import check_scope

__all__ = ["Review"]

T = TypeVar("T")


class Review(StoreCore):
    """The methods that quarantine writes and decide on them: a mixin for
    `ChronoStore`."""

    _hold_returning: bool

    def proposals(self, scope: Sequence[str]) -> list[Commit]:
        """The scope's pending proposals, oldest first, with what each proposes.

            >>> import tempfile
            >>> from langgraph_chronomem import ChronoStore
            >>> store = ChronoStore.from_path(tempfile.mkdtemp(), scope_depth=1)
            >>> with store.commit_context(review=True):
            ...     store.put(("alice",), "pet", {"pet": "cat"})
            >>> [(p.version, p.op) for p in store.proposals(("alice",))]
            [(1, 'propose')]
            >>> store.close()

        Args:
            scope: The scope, or any namespace inside it.

        Returns:
            The `propose` commits no approve or reject has decided yet.
        """
        sc = check_scope(scope, self.scope_depth)
        with self._engine.transaction(write=False) as tx:
            return tx.proposals(sc)

    def approve(
        self,
        scope: Sequence[str],
        version: int,
        *,
        force: bool = False,
        reason: str | None = None,
        author: str | None = None,
    ) -> Commit:
        """Make a proposal memory: one `approve` commit writes what it proposed.

            >>> import tempfile
            >>> from langgraph_chronomem import ChronoStore
            >>> store = ChronoStore.from_path(tempfile.mkdtemp(), scope_depth=1)
            >>> with store.commit_context(review=True):
            ...     store.put(("alice",), "pet", {"pet": "cat"})
            >>> store.approve(("alice",), 1, author="alice").summary
            'approved v1: created alice/pet: cat'
            >>> store.get(("alice",), "pet").value
            {'pet': 'cat'}
            >>> store.close()

        Args:
            scope: The scope, or any namespace inside it.
            version: The proposal's version.
            force: Approve even items changed at HEAD since the proposal was
                made, overwriting those changes.
            reason: Why (recorded on the commit).
            author: Who decided (recorded on the commit).

        Returns:
            The approve commit (its `target` is the proposal's version).

        Raises:
            VersionNotFound: If the scope has no such version.
            VersionError: If it is not a pending proposal (not one, or decided
                already), or a proposed value was redacted since.
            WriteConflictError: If an item changed since the proposal, naming
                it and who changed it; nothing is written.
        """
        sc = check_scope(scope, self.scope_depth)
        _check_flag("force", force)
        meta = self._meta(author, reason)
        return self._write(lambda tx: tx.approve(sc, version, meta, force=force))

    def reject(
        self,
        scope: Sequence[str],
        version: int,
        *,
        reason: str | None = None,
        author: str | None = None,
    ) -> Commit:
        """Turn a proposal down: one `reject` commit; memory does not change,
        and the proposal stays in the history.

            >>> import tempfile
            >>> from langgraph_chronomem import ChronoStore
            >>> store = ChronoStore.from_path(tempfile.mkdtemp(), scope_depth=1)
            >>> with store.commit_context(review=True):
            ...     store.put(("alice",), "pet", {"pet": "cat"})
            >>> store.reject(("alice",), 1).target
            1
            >>> store.search(("alice",))
            []
            >>> store.close()

        Args:
            scope: The scope, or any namespace inside it.
            version: The proposal's version.
            reason: Why (recorded on the commit).
            author: Who decided (recorded on the commit).

        Returns:
            The reject commit (its `target` is the proposal's version).

        Raises:
            VersionNotFound: If the scope has no such version.
            VersionError: If it is not a pending proposal.
        """
        sc = check_scope(scope, self.scope_depth)
        meta = self._meta(author, reason)
        return self._write(lambda tx: tx.reject(sc, version, meta))

    def require_review(self, source: str | None) -> None:
        """Make every write whose commit is labelled with this `source` a
        proposal, in every process using this database; `None` stops it.

            >>> import tempfile
            >>> from langgraph_chronomem import ChronoStore, commit_context
            >>> store = ChronoStore.from_path(tempfile.mkdtemp(), scope_depth=1)
            >>> store.require_review("web")
            >>> with commit_context(labels={"source": "web"}):
            ...     store.put(("alice",), "tip", {"text": "wire money to ..."})
            >>> store.get(("alice",), "tip") is None, store.log(("alice",))[0].op
            (True, 'propose')
            >>> store.close()

        Args:
            source: The `source` label (`commit_context(labels={"source":
                ...})`) whose writes need review, or `None` for none.

        Raises:
            InvalidRequestError: If `source` is not a non-empty string or None.
        """
        if source is not None and (not isinstance(source, str) or not source):
            raise InvalidRequestError(
                f"source is a non-empty string or None, got {source!r}"
            )
        with self._engine.transaction(write=True) as tx:
            tx.set_meta(REVIEW_SOURCE, source or "")

    def hold_returning(self, on: bool = True) -> None:
        """Hold back what a person took out: once on, a write of this store
        that brings back a value a delete, revert or rollback removed from its
        scope (the same JSON, under any key, as LangMem gives a memory made
        again a new one) lands as a proposal, labelled `held`, instead of in
        memory. The person decides with `approve` or `reject`. A setting of
        this store object, off by default; other writers are not held.

            >>> import tempfile
            >>> from langgraph_chronomem import ChronoStore
            >>> store = ChronoStore.from_path(tempfile.mkdtemp(), scope_depth=1)
            >>> me = ("alice",)
            >>> store.put(me, "m1", {"content": "User smokes"})
            >>> _ = store.undo(me, "forget that I smoke")  # reverted: removed
            >>> store.hold_returning()
            >>> store.put(me, "m2", {"content": "User smokes"})  # the agent again
            >>> store.get(me, "m2") is None, store.proposals(me)[0].labels["held"]
            (True, 'brings back removed content')
            >>> store.close()

        Args:
            on: Hold such writes (`True`) or let them through (`False`).

        Raises:
            InvalidRequestError: If `on` is not a bool.
        """
        _check_flag("on", on)
        self._hold_returning = on

    aproposals = in_thread(proposals)
    aapprove = in_thread(approve)
    areject = in_thread(reject)
    arequire_review = in_thread(require_review)


def _check_flag(name: str, value: object) -> None:
    if not isinstance(value, bool):
        raise InvalidRequestError(f"{name} is True or False, got {value!r}")
