"""Branches: branch, branches, on_branch, merge and delete_branch, mixed into
`ChronoStore`; `log`, `diff` and `as_of` take `branch=` (versions.py).

A branch of a scope starts at a version and costs only its own changes; a
graph runs on it through `on_branch`, and HEAD sees nothing of it until
`merge`, one commit, three-way (design.md, "Branches"):

    >>> import tempfile
    >>> from langgraph_chronomem import ChronoStore, MergeConflictError
    >>> store = ChronoStore.from_path(tempfile.mkdtemp(), scope_depth=1)
    >>> store.put(("alice",), "me", {"diet": "meat", "city": "Rome"})
    >>> _ = store.branch(("alice",), "trial")
    >>> store.on_branch(("alice",), "trial").put(
    ...     ("alice",), "me", {"diet": "vegan", "city": "Rome"})
    >>> store.put(("alice",), "me", {"diet": "fish", "city": "Oslo"})
    >>> try:
    ...     store.merge(("alice",), "trial")
    ... except MergeConflictError as error:
    ...     [(c.field, c.base, c.ours, c.theirs) for c in error.conflicts]
    [('diet', 'meat', 'vegan', 'fish')]
    >>> store.merge(("alice",), "trial", resolve="ours").changes[0].new
    {'diet': 'vegan', 'city': 'Oslo'}
    >>> store.close()
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

from langgraph_chronomem._twins import in_thread
from langgraph_chronomem.engine.branches import Resolve
from langgraph_chronomem.engine.types import Branch, Commit, Namespace, VersionRef
from langgraph_chronomem.engine.values import encode_value
from langgraph_chronomem.errors import InvalidRequestError, InvalidValueError
from langgraph_chronomem.store.branch_view import BranchView
from langgraph_chronomem.store.core import StoreCore
from langgraph_chronomem.store.ops import check_key, check_scope

__all__ = ["Branching"]


class Branching(StoreCore):
    """The methods that make, merge and delete branches. A mixin for
    `ChronoStore`; each has an async twin with an `a` prefix."""

    def branch(
        self, scope: Sequence[str], name: str, at: VersionRef | None = None
    ) -> Branch:
        """Make branch `name` of the scope at version `at` (a number or a
        tag's name; HEAD by default). It costs one row until written.

        Raises:
            BranchError: For a name that is not one word of letters, digits,
                `-` and `_` (at most 64), or one the scope has.
            VersionNotFound: For an `at` the scope does not have.
        """
        sc = check_scope(scope, self.scope_depth)
        return self._write(
            lambda tx: tx.create_branch(
                sc, name, at=None if at is None else tx.version_of(sc, at)
            )
        )

    def branches(self, scope: Sequence[str]) -> list[Branch]:
        """The scope's branches, by name."""
        sc = check_scope(scope, self.scope_depth)
        with self._engine.transaction(write=False) as tx:
            return tx.branches(sc)

    def on_branch(self, scope: Sequence[str], name: str) -> BranchView:
        """A LangGraph store that reads and writes branch `name` of the scope:
        `builder.compile(store=store.on_branch(scope, name))` runs a graph on
        it (`BranchView`).

        Raises:
            BranchNotFound: If the scope has no branch of that name.
            BranchError: If a reset destroyed its fork.
        """
        sc = check_scope(scope, self.scope_depth)
        with self._engine.transaction(write=False) as tx:
            tx.branch_at(sc, name)
        return BranchView(self, sc, name)

    def merge(
        self,
        scope: Sequence[str],
        name: str,
        *,
        resolve: Resolve = None,
        force: bool = False,
        author: str | None = None,
        reason: str | None = None,
    ) -> Commit:
        """Merge what branch `name` changed since its fork (or its last merge)
        into HEAD as one commit (op `merge`, labelled with the branch's name).

        Per item the branch changed, three-way between the base (the branch
        at its fork or last merge), ours (the branch) and theirs (HEAD): a
        side that left it as the base had it gives way; records (dicts of
        several fields) merge field by field. The branch stays; merging it
        again takes only what came after.

        Args:
            scope: The scope.
            name: The branch.
            resolve: How to settle conflicts: `"ours"` (the branch's side),
                `"theirs"` (HEAD's), or `{(namespace, key): value}`, the value
                each conflicting item is to hold (`None`: deleted).
            force: The branch's side wins every conflict `resolve` leaves.
            author: Who (recorded on the commit).
            reason: Why (recorded on the commit).

        Raises:
            MergeConflictError: For conflicts neither `resolve` nor `force`
                settles; its `conflicts` name each item, field and the base,
                ours and theirs values. Nothing is written.
            BranchNotFound: If the scope has no branch of that name.
            VersionError: If the branch has no commit since its last merge.
            InvalidRequestError: For a `resolve` that is none of these.
            InvalidValueError: For a value in `resolve` the log cannot hold.
        """
        sc = check_scope(scope, self.scope_depth)
        settle = _check_resolve(resolve)
        meta = self._meta(author, reason)
        return self._write(
            lambda tx: tx.merge(sc, name, meta, resolve=settle, force=force)
        )

    def delete_branch(self, scope: Sequence[str], name: str) -> None:
        """Delete branch `name` and everything written on it; HEAD keeps what
        was merged.

        Raises:
            BranchNotFound: If the scope has no branch of that name.
        """
        sc = check_scope(scope, self.scope_depth)
        self._write(lambda tx: tx.delete_branch(sc, name))

    abranch = in_thread(branch)
    abranches = in_thread(branches)
    amerge = in_thread(merge)
    adelete_branch = in_thread(delete_branch)


def _check_resolve(resolve: object) -> Resolve:
    """`resolve` as `merge` takes it, its items' namespaces as tuples.

    Raises:
        InvalidRequestError: For none of `"ours"`, `"theirs"`, a mapping
            from (namespace, key) pairs, or `None`.
        InvalidValueError: For a value that is neither a JSON object nor `None`.
    """
    if resolve is None or resolve in ("ours", "theirs"):
        return resolve
    if not isinstance(resolve, Mapping):
        raise InvalidRequestError(
            "resolve is 'ours', 'theirs' or {(namespace, key): value}; "
            f"got {resolve!r}"
        )
    settled: dict[tuple[Namespace, str], Any] = {}
    for item, value in resolve.items():
        if not isinstance(item, tuple) or len(item) != 2:
            raise InvalidRequestError(
                f"resolve's keys are (namespace, key) pairs, got {item!r}"
            )
        namespace, key = item
        check_scope(namespace, 0)
        check_key(key)
        if value is not None:
            if not isinstance(value, Mapping):
                raise InvalidValueError(
                    f"a value in resolve is a dict or None, got {value!r}"
                )
            encode_value(value)
        settled[(tuple(namespace), key)] = value
    return settled
