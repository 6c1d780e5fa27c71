"""Acting on a resolved request: roll back or revert, and say what happened in words.

`ChronoStore.undo` resolves the request (`search/resolve.py`) and hands the
resolution here. Nothing is applied unless the resolver decided (or a person
chose), and the HEAD the resolution was made against must still be HEAD: a
memory that changed meanwhile is resolved again rather than changed blindly.
Undoing one change is surgical: only its items move (DESIGN.md).
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, replace
from datetime import datetime
from typing import Literal

from langgraph_chronomem._twins import in_thread
from langgraph_chronomem.engine.base import LogTransaction
from langgraph_chronomem.engine.describe import describe_change
from langgraph_chronomem.engine.protocol import LogEngine
from langgraph_chronomem.engine.rows import namespace_from_text
from langgraph_chronomem.engine.types import (
    Change,
    Commit,
    CommitMeta,
    Namespace,
    RevertConflict,
)
from langgraph_chronomem.errors import InvalidRequestError, VersionError
from langgraph_chronomem.search.resolve import Candidate, Mode, Resolution
from langgraph_chronomem.store.core import StoreCore
from langgraph_chronomem.store.ops import check_scope, check_text

__all__ = ["UndoInWords", "UndoMode", "UndoResult", "apply_undo"]

UndoMode = Literal["rollback", "revert"]
"""What an undo did: restore items (`revert`) or the whole scope (`rollback`)."""


@dataclass(frozen=True)
class UndoResult:
    """What an undo did (or, with `dry_run`, would do), or why it did nothing.

    Attributes:
        applied: Whether memory changed.
        message: What happened, in words, with how to redo it.
        resolution: The ranked candidates and the reason for the decision.
        commit: The new rollback or revert commit, if one was made.
        changes: Item by item, HEAD before the undo (`old`) and after (`new`).
        redo: `rollback(scope, to=redo)` brings back what this undo removed.
        conflict: Why a revert could not apply, if it could not.
        action: What was (or, in a dry run, would be) done: `rollback` or
            `revert`; `None` when there was nothing to do.
        target: The version rolled back to, or the commit reverted.
        candidate: The candidate acted on (or that would have been).
    """

    applied: bool
    message: str
    resolution: Resolution
    commit: Commit | None = None
    changes: tuple[Change, ...] = ()
    redo: int | None = None
    conflict: RevertConflict | None = None
    action: UndoMode | None = None
    target: int | None = None
    candidate: Candidate | None = None

    @property
    def restored(self) -> tuple[Change, ...]:
        """Items the undo brings back."""
        return tuple(c for c in self.changes if c.kind == "created")

    @property
    def removed(self) -> tuple[Change, ...]:
        """Items the undo removes."""
        return tuple(c for c in self.changes if c.kind == "deleted")

    @property
    def changed(self) -> tuple[Change, ...]:
        """Items the undo gives another value."""
        return tuple(c for c in self.changes if c.kind == "updated")


def _listing(changes: tuple[Change, ...]) -> str:
    return "; ".join(describe_change(c) for c in changes) or "no item changes"


def _choices(resolution: Resolution) -> str:
    return " | ".join(f"{c.id} ({c.summary})" for c in resolution.candidates)


def apply_undo(
    engine: LogEngine,
    scope: Namespace,
    resolution: Resolution,
    *,
    dry_run: bool,
    meta: CommitMeta,
    choice: int | None = None,
    force: bool = False,
    branch: str | None = None,
) -> UndoResult:
    """Apply the resolver's decision, if it made one, or the candidate a person chose.

    A candidate's `action` says what happens: `revert` restores only its items
    to their value before the change (three-way: an item changed again since is
    a conflict, and nothing applies unless `force`); `rollback` restores the
    whole scope to its `target`. A dry run does the real work in a transaction
    it then rolls back, so it reports exactly what applying would: the same
    changes, or the same conflict. `choice` is a position in
    `resolution.candidates`, applied whether or not the resolver decided.
    On `branch` (a resolution of `resolve(..., branch=)`), a revert commits
    on the branch and HEAD is untouched; a rollback is refused there.

    Raises:
        InvalidRequestError: If `choice` names no candidate.
    """
    best = resolution.best
    if choice is not None:
        count = len(resolution.candidates)
        if isinstance(choice, bool) or not isinstance(choice, int):
            raise InvalidRequestError(
                f"choice is a candidate's position, got {choice!r}"
            )
        if not 0 <= choice < count:
            raise InvalidRequestError(
                f"there is no candidate {choice}; there are {count}"
                + (f" (0..{count - 1})" if count else "")
            )
        best = resolution.candidates[choice]
    elif best is None:
        return UndoResult(False, resolution.reason or "nothing matched", resolution)
    elif not resolution.decided:
        message = (
            f"not sure which change you mean ({resolution.reason}); "
            f"candidates: {_choices(resolution)}"
        )
        return UndoResult(False, message, resolution)
    assert best is not None
    revert = best.action == "revert"
    if branch is not None and not revert:
        message = (
            f"a branch goes back one change at a time: ask to undo the change "
            f"({best.id}: {best.summary}) rather than to go back to a moment"
        )
        return UndoResult(False, message, resolution, candidate=best)
    if not revert and best.target == resolution.head:
        message = f"memory is already as it was at v{best.target}"
        return UndoResult(False, message, resolution, candidate=best)
    target = best.commit.version if revert else best.target
    with engine.transaction(write=True, dry_run=dry_run) as tx:
        own = scope if branch is None else branch_scope(tx, scope, branch)
        if tx.head_seq(own) != resolution.head_seq:
            message = (
                "memory changed while the request was being resolved "
                f"(HEAD was v{resolution.head}, is now v{tx.head(own)}); ask again"
            )
            return UndoResult(False, message, resolution, candidate=best)
        try:
            if revert and branch is not None:
                outcome = tx.revert_on_branch(
                    scope,
                    branch,
                    best.commit.version,
                    meta,
                    items=best.items,
                    fields=best.fields,
                    force=force,
                )
            elif revert:
                outcome = tx.revert(
                    scope,
                    best.commit.version,
                    meta,
                    items=best.items,
                    fields=best.fields,
                    force=force,
                )
            else:
                outcome = tx.rollback(scope, best.target, meta)
        except VersionError as exc:  # its changes are already undone
            return UndoResult(
                False, f"nothing to change: {exc}", resolution, candidate=best
            )
    action: UndoMode = "revert" if revert else "rollback"
    if isinstance(outcome, RevertConflict):
        return UndoResult(
            False,
            str(outcome),
            resolution,
            conflict=outcome,
            action=action,
            target=target,
            candidate=best,
        )
    if dry_run:
        verb = f"revert {best.id}" if revert else f"roll back to v{target}"
        message = f"would {verb}: {_listing(outcome.changes)}"
        return UndoResult(
            False,
            message,
            resolution,
            changes=outcome.changes,
            action=action,
            target=target,
            candidate=best,
        )
    return UndoResult(
        True,
        _said(outcome, best, resolution, on_branch=branch is not None),
        resolution,
        outcome,
        outcome.changes,
        resolution.head if branch is None else None,
        action=action,
        target=target,
        candidate=best,
    )


def _said(
    commit: Commit, best: Candidate, resolution: Resolution, *, on_branch: bool
) -> str:
    kind = resolution.intent.kind
    if kind == "redo":
        what = f"redid what v{best.commit.version} undid"
    elif best.action == "revert":
        what = f"undid change {best.id} ({best.summary})"
    else:
        what = f"went back to v{best.target} (matched change {best.id}: {best.summary})"
    how = f"rolled back to v{best.target}" if commit.op == "rollback" else "reverted"
    redo = (
        f"undo change {commit.version} on the branch"
        if on_branch
        else f"roll back to v{resolution.head}"
    )
    return (
        f"{what}: {how} as v{commit.version}: {_listing(commit.changes)}. "
        f"To redo, {redo}."
    )


def branch_scope(tx: LogTransaction, scope: Namespace, name: str) -> Namespace:
    """The scope branch `name`'s own commits are kept in (design.md,
    "Branches"): what the undo search reads for it.

    Raises:
        BranchNotFound: If the scope has no branch of that name.
    """
    return namespace_from_text(tx.branch_at(scope, name).scope_text)


def on_branch(resolution: Resolution, scope: Namespace) -> Resolution:
    """A resolution made in a branch's own scope, as the branch is read:
    namespaces without the branch's mount, and what a rollback would change
    left out (a branch is not rolled back; such a candidate is offered,
    never acted on)."""

    def ns(namespace: Namespace) -> Namespace:
        return namespace[2:]

    def changes(found: tuple[Change, ...]) -> tuple[Change, ...]:
        return tuple(replace(c, namespace=ns(c.namespace)) for c in found)

    candidates = []
    for c in resolution.candidates:
        rollback = c.action == "rollback"
        candidates.append(
            replace(
                c,
                commit=replace(
                    c.commit, scope=scope, changes=changes(c.commit.changes)
                ),
                changes=changes(c.changes),
                diff=() if rollback else changes(c.diff),
                changed=0 if rollback else c.changed,
                conflicts=tuple(
                    replace(x, namespace=ns(x.namespace)) for x in c.conflicts
                ),
            )
        )
    best = candidates[0] if candidates else None
    if resolution.decided and best is not None and best.action == "rollback":
        return replace(
            resolution,
            candidates=tuple(candidates),
            decided=False,
            reason="a branch goes back one change at a time; which change?",
        )
    return replace(resolution, candidates=tuple(candidates))


class UndoInWords(StoreCore):
    """`resolve`, `undo` and `apply`: undo in words, a mixin for `ChronoStore`."""

    def resolve(
        self,
        scope: Sequence[str],
        request: str,
        *,
        k: int = 5,
        mode: Mode = "auto",
        now: datetime | None = None,
        branch: str | None = None,
    ) -> Resolution:
        """Which change a natural-language request means; changes nothing.

            >>> import tempfile
            >>> from langgraph_chronomem import ChronoStore
            >>> store = ChronoStore.from_path(tempfile.mkdtemp(), scope_depth=2)
            >>> alice = ("memories", "alice")
            >>> store.put(alice, "home", {"city": "Boston"})
            >>> store.put(alice, "home", {"city": "New York City"})
            >>> best = store.resolve(alice, "forget that I moved to New York").best
            >>> best.id, best.action, best.summary
            ('2.1', 'revert', 'updated memories/alice/home: Boston -> New York City')
            >>> store.close()

        Args:
            scope: The scope (or any namespace inside it); only its commits count.
            request: E.g. "undo the update about my move to NYC", "go back to when
                I still lived in Boston", "redo", or a change id like "2.1".
            k: How many candidates to return (1..100).
            mode: `auto` (default) undoes just the matched change when the request
                names a change ("forget X") and moves the whole scope in time
                when it asks to ("go back to when X"); `revert` and `rollback`
                force one or the other for requests that name a change.
            now: The moment relative times ("last week") count from, in the
                timezone where the person's days begin (default: now, UTC).
            branch: Resolve among the changes branch `name` made since its
                fork (what `log(scope, branch=name)` lists), as reverts: a
                branch goes back one change at a time, so a request to go
                back to a moment is offered, never decided, and `mode` is
                `auto` or `revert`.

        Returns:
            The candidates, best first, each with its id, the matched change, the
            action and version it points at, what acting would change at HEAD and
            every stage's score; `decided` says whether the rule to act alone
            holds.

        Raises:
            InvalidRequestError: For an empty request, a bad `k` or `mode`
                (`rollback` on a branch).
            ReadOnlyError: On a store opened with `read_only=True`: the search
                indexes it reads catch up with the log first, which writes.
            BranchNotFound: If the scope has no such branch.
        """
        sc = check_scope(scope, self.scope_depth)
        if isinstance(request, str):
            check_text("an undo request", request)
        self._engine.check_writable("resolve undo requests")
        if branch is None:
            resolver = self._search.resolver()
            return resolver.resolve(sc, request, k=k, mode=mode, now=now)
        if mode == "rollback":
            raise InvalidRequestError(
                "a branch goes back one change at a time: mode is 'auto' or "
                "'revert' there"
            )
        with self._engine.transaction(write=False) as tx:
            own = branch_scope(tx, sc, branch)
        resolver = self._search.resolver()
        found = resolver.resolve(own, request, k=k, mode="revert", now=now)
        return on_branch(found, sc)

    def undo(
        self,
        scope: Sequence[str],
        request: str,
        *,
        mode: Mode = "auto",
        dry_run: bool = False,
        force: bool = False,
        author: str | None = None,
        branch: str | None = None,
    ) -> UndoResult:
        """Resolve a request and apply it when the resolver is sure.

        Args:
            scope: The scope (or any namespace inside it).
            request: What to undo, in words, or a change id ("12.2") from `resolve`.
            mode: `auto`, `revert` or `rollback`, as in `resolve`.
            dry_run: Report what would change, change nothing.
            force: Revert items even if they were changed again since.
            author: Who asked (recorded on the commit).
            branch: Undo on branch `name`: among its own changes, as a
                revert committed on the branch; HEAD is untouched (`resolve`).

        Returns:
            What changed, in words and as data, and the version that redoes it —
            or, when nothing matched or the resolver was not sure, the
            candidates and no change.

        Raises:
            InvalidRequestError: For an empty request or an unknown mode.
            BranchNotFound: If the scope has no such branch.
        """
        resolution = self.resolve(scope, request, mode=mode, branch=branch)
        return self.apply(
            scope,
            resolution,
            dry_run=dry_run,
            force=force,
            author=author,
            branch=branch,
        )

    def apply(
        self,
        scope: Sequence[str],
        resolution: Resolution,
        *,
        choice: int | None = None,
        dry_run: bool = False,
        force: bool = False,
        author: str | None = None,
        branch: str | None = None,
    ) -> UndoResult:
        """Apply a resolution: its decided best candidate, or the one a person chose.

        Nothing is applied if HEAD moved since the resolution was made.

        Args:
            scope: The scope the resolution was made in.
            resolution: What `resolve` returned.
            choice: A position in `resolution.candidates`, applied even when the
                resolver did not decide; `None` applies only a decided best.
            dry_run: Report what would change, change nothing.
            force: Revert items even if they were changed again since.
            author: Who chose (recorded on the commit).
            branch: The branch the resolution was made on
                (`resolve(..., branch=)`); the revert commits there.

        Raises:
            InvalidRequestError: If `choice` names no candidate.
            BranchNotFound: If the scope has no such branch.
        """
        sc = check_scope(scope, self.scope_depth)
        meta = self._meta(author, f"undo: {resolution.request}")
        result = apply_undo(
            self._engine,
            sc,
            resolution,
            dry_run=dry_run,
            meta=meta,
            choice=choice,
            force=force,
            branch=branch,
        )
        if result.applied:
            self._search.after_commit({})
        return result

    aresolve = in_thread(resolve)
    aundo = in_thread(undo)
    aapply = in_thread(apply)
