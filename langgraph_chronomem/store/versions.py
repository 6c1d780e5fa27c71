"""History and time travel: log, show, diff, history, as_of, rollback, revert,
revert_matching and reset, mixed into `ChronoStore`.

`ChronoStore` is a LangGraph `BaseStore` (its batch path and lifecycle live in
`base.py`) with these methods mixed in. Each reads or rewrites one scope's
timeline, and each has an async twin with an `a` prefix:

    >>> import tempfile
    >>> from langgraph_chronomem import ChronoStore
    >>> store = ChronoStore.from_path(tempfile.mkdtemp(), scope_depth=1)
    >>> store.put(("alice",), "city", {"city": "Boston"})
    >>> store.put(("alice",), "city", {"city": "Paris"})
    >>> [change.new for change in store.diff(("alice",), 1, 2)]
    [{'city': 'Paris'}]
    >>> store.close()
"""

from __future__ import annotations

import logging
from collections.abc import Mapping, Sequence
from datetime import datetime
from typing import Any, TypeVar, get_args

from langgraph_chronomem._twins import in_thread
from langgraph_chronomem.engine.types import (
    Change,
    Commit,
    ItemVersion,
    MatchedRevert,
    Namespace,
    Op,
    RevertConflict,
    StoreStats,
    VersionRef,
)
from langgraph_chronomem.errors import InvalidRequestError
from langgraph_chronomem.store.ops import (
    check_count,
    check_fields,
    check_items,
    check_key,
    check_moment,
    check_scope,
    label_filters,
)
from langgraph_chronomem.store.tags import TagControl
from langgraph_chronomem.store.view import StoreView

__all__ = ["VersionControl"]

logger = logging.getLogger(__name__)

T = TypeVar("T")

OPS = get_args(Op)
"""Every op a commit can have, as `log(op=...)` takes them."""


class VersionControl(TagControl):
    """The methods that read and rewind a store's timelines, and name their
    versions (`TagControl`).

    A mixin for `ChronoStore`, which opens the log (`_engine`) and its search
    side (`_search`) these methods work on. Wherever a method takes a
    version, a tag's name does too.
    """

    def head(self, scope: Sequence[str]) -> int:
        """The scope's HEAD version (0 before its first commit)."""
        sc = check_scope(scope, self.scope_depth)
        with self._engine.transaction(write=False) as tx:
            return tx.head(sc)

    def log(
        self,
        scope: Sequence[str],
        *,
        limit: int | None = None,
        since: datetime | None = None,
        until: datetime | None = None,
        author: str | None = None,
        op: str | None = None,
        source: str | None = None,
        trust: str | None = None,
        run_id: str | None = None,
        thread_id: str | None = None,
        node: str | None = None,
        branch: str | None = None,
    ) -> list[Commit]:
        """The scope's commits, newest first; with `branch`, that branch's own
        (those before its fork are the scope's).

        Args:
            scope: The scope, or any namespace inside it.
            limit: At most this many commits.
            since: Only commits made at or after this time (naive means UTC).
            until: Only commits made at or before this time.
            author: Only commits by this author.
            op: Only commits of this op (`put`, `rollback`, `expire`…).
            source: Only commits labelled with this source
                (`commit_context(labels={"source": ...})`).
            trust: Only commits labelled with this trust level
                (`commit_context(labels={"trust": "low"})`).
            run_id: Only commits of this LangGraph run.
            thread_id: Only commits of this thread's runs.
            node: Only commits made by this graph node.
            branch: The branch whose commits to list (`ChronoStore.branch`).

        `since` and `until` take `datetime`s only, as LangGraph's APIs do: parse
        text first (`datetime.fromisoformat`), so "yesterday" is never guessed at.

        Raises:
            InvalidRequestError: For a `limit` that is not an int >= 0, a
                `since` or `until` that is not a `datetime`, or an `op` that
                is not one (the message names those there are).
        """
        if limit is not None:
            check_count("limit", limit)
        if op is not None and op not in OPS:
            raise InvalidRequestError(f"op is one of {', '.join(OPS)}; got {op!r}")
        check_moment("since", since)
        check_moment("until", until)
        sc = check_scope(scope, self.scope_depth)
        labels = label_filters(
            source=source, trust=trust, run_id=run_id, thread_id=thread_id, node=node
        )
        with self._engine.transaction(write=False) as tx:
            if branch is not None:
                return tx.branch_log(
                    sc, branch, limit=limit, since=since, until=until,
                    author=author, op=op, labels=labels,
                )  # fmt: skip
            return tx.log(
                sc, limit=limit, since=since, until=until, author=author, op=op,
                labels=labels,
            )  # fmt: skip

    def show(self, scope: Sequence[str], version: VersionRef) -> Commit:
        """One commit of the scope, by its version or a tag's name.

        Raises:
            VersionNotFound: If the scope has no such version or tag.
        """
        sc = check_scope(scope, self.scope_depth)
        with self._engine.transaction(write=False) as tx:
            return tx.show(sc, tx.version_of(sc, version))

    def diff(
        self,
        scope: Sequence[str],
        v1: VersionRef | None = None,
        v2: VersionRef | None = None,
        *,
        branch: str | None = None,
    ) -> list[Change]:
        """What changed between two versions (0 is the empty state before v1),
        each a number or a tag's name; or, with `branch` and no versions, what
        differs between HEAD and the branch.

            `old` is the value at `v1` (HEAD), `new` the value at `v2` (the
            branch's head).

        Raises:
            VersionNotFound: If either version (or tag) does not exist.
            InvalidRequestError: For versions with `branch`, or a version
                missing without it.
            BranchNotFound: If the scope has no such branch.
        """
        sc = check_scope(scope, self.scope_depth)
        given = [v for v in (v1, v2) if v is not None]
        if len(given) != (0 if branch is not None else 2):
            raise InvalidRequestError(
                "diff takes two versions (diff(scope, 1, 3)) or a branch alone "
                "(diff(scope, branch='trial'): HEAD against the branch)"
            )
        with self._engine.transaction(write=False) as tx:
            if branch is not None:
                return tx.branch_diff(sc, branch)
            return tx.diff(sc, *(tx.version_of(sc, v) for v in given))

    def history(self, namespace: Sequence[str], key: str) -> list[ItemVersion]:
        """Every version of one item, newest first, including its deletions.

        Raises:
            InvalidValueError: If `key` is not a string.
        """
        check_scope(namespace, self.scope_depth)
        namespace = tuple(namespace)
        check_key(key)
        with self._engine.transaction(write=False) as tx:
            return tx.history(namespace, key)

    def as_of(
        self, scope: Sequence[str], version: VersionRef, *, branch: str | None = None
    ) -> StoreView:
        """A read-only store showing the scope as it was at `version` (a number
        or a tag's name); with `branch`, the branch at its version `version`.

        The view raises `VersionNotFound` once a `reset` destroys that version.

        Raises:
            VersionNotFound: If the scope (or branch) has no such version or tag.
            CompactedError: If `compact` erased values the scope held then.
            BranchNotFound: If the scope has no such branch.
        """
        sc = check_scope(scope, self.scope_depth)
        if branch is not None:
            with self._engine.transaction(write=False) as tx:
                on = tx.branch_at(sc, branch, tx.version_of(sc, version))
                tx.check_whole(sc, min(on.fork, on.version))
            return StoreView(
                self._engine,
                sc,
                on.version,
                commit_seq=0,
                search=self._search,
                branch=branch,
            )
        with self._engine.transaction(write=False) as tx:
            at = tx.version_of(sc, version)
            tx.check_version(sc, at, allow_zero=True)
            tx.check_whole(sc, at)
            seq = tx.commit_seq(sc, at)
        return StoreView(self._engine, sc, at, commit_seq=seq, search=self._search)

    def rollback(
        self,
        scope: Sequence[str],
        to: VersionRef,
        *,
        reason: str | None = None,
        author: str | None = None,
        dry_run: bool = False,
    ) -> Commit:
        """Restore the whole scope to its state at version `to` (a number or a
        tag's name), as a new commit.

        Nothing is lost: the versions after `to` stay in the history, and rolling
        back to the version before this commit redoes them. With `dry_run`, the
        rollback is made and thrown away: the commit it would be, and no change.

        Raises:
            VersionNotFound: If `to` is not a version (or tag) of the scope (0
                is allowed).
            VersionError: If `to` is already HEAD.
        """
        sc = check_scope(scope, self.scope_depth)
        meta = self._meta(author, reason)
        return self._write(
            lambda tx: tx.rollback(sc, tx.version_of(sc, to), meta), dry_run=dry_run
        )

    def _revert_thread(
        self,
        scope: Namespace,
        thread_id: str,
        after_seq: int,
        *,
        author: str | None = None,
        reason: str | None = None,
    ) -> Commit | None:
        """Undo what `thread_id`'s runs changed in `scope` after commit
        `after_seq`, leaving other writers' changes (`LogTransaction.revert_thread`):
        what time travel does by default. `None` when nothing changes."""
        meta = self._meta(author, reason)
        return self._write(
            lambda tx: tx.revert_thread(scope, thread_id, after_seq, meta)
        )

    def revert(
        self,
        scope: Sequence[str],
        version: VersionRef,
        *,
        items: Sequence[tuple[Sequence[str], str]] | None = None,
        fields: Sequence[str] = (),
        force: bool = False,
        reason: str | None = None,
        author: str | None = None,
        dry_run: bool = False,
    ) -> Commit | RevertConflict:
        """Undo one commit's changes as a new commit, keeping everything after it.

        Three-way: an item is a conflict only if it no longer holds what the
        commit wrote (a later write that came back to the same value is not).
        With `fields`, only those fields of each item go back, compared field
        by field, and the item's other fields keep what they hold now:

            >>> import tempfile
            >>> from langgraph_chronomem import ChronoStore
            >>> store = ChronoStore.from_path(tempfile.mkdtemp(), scope_depth=1)
            >>> store.put(("alice",), "city", {"city": "Boston"})
            >>> store.put(("alice",), "city", {"city": "Paris"})
            >>> store.put(("alice",), "city", {"city": "Rome"})
            >>> print(store.revert(("alice",), 2))  # doctest: +NORMALIZE_WHITESPACE
            cannot revert v2: alice/city (changed again in v3); keep it as it is,
            revert anyway with force=True, or roll back to v1
            >>> store.revert(("alice",), 3).summary
            'reverted v3: updated alice/city: Rome -> Paris'
            >>> store.put(("alice",), "me", {"likes": "ramen", "diet": "vegan"})
            >>> store.put(("alice",), "me", {"likes": "pho", "diet": "vegan"})
            >>> store.revert(("alice",), 5, fields=["diet"]).summary
            'reverted v5: updated alice/me: diet: vegan -> (removed)'
            >>> store.get(("alice",), "me").value
            {'likes': 'pho'}
            >>> store.close()

        Args:
            scope: The scope.
            version: The commit to undo (its version, or a tag's name).
            items: Only these (namespace, key) items of the commit.
            fields: Only these fields of a record value (`engine.fields`):
                top-level keys, read inside LangMem's envelope.
            force: Restore conflicting items too, overwriting their later values.
            reason: Why (recorded on the commit).
            author: Who (recorded on the commit).
            dry_run: Make the revert and throw it away.

        Returns:
            The new commit, or a `RevertConflict` (and no change).

        Raises:
            VersionNotFound: If the scope has no such version.
            VersionError: If that commit changed nothing (or not `items`), or its
                changes are already undone.
        """
        sc = check_scope(scope, self.scope_depth)
        named = check_fields(fields)
        meta = self._meta(author, reason)
        wanted = None if items is None else check_items(items)
        return self._write(
            lambda tx: tx.revert(
                sc,
                tx.version_of(sc, version),
                meta,
                items=wanted,
                fields=named,
                force=force,
            ),
            dry_run=dry_run,
        )

    def revert_matching(
        self,
        scope: Sequence[str],
        *,
        run_id: str | None = None,
        thread_id: str | None = None,
        node: str | None = None,
        source: str | None = None,
        trust: str | None = None,
        written_by: str | None = None,
        force: bool = False,
        dry_run: bool = False,
        reason: str | None = None,
        author: str | None = None,
    ) -> MatchedRevert:
        """Undo everything one run, thread, node, source or author wrote to the
        scope, as one commit that keeps every other change.

        Commits match on the labels every commit carries (`run_id`,
        `thread_id`, `node` from the LangGraph run that made it; `source` from
        `commit_context(labels={"source": ...})`) and on their author; every
        filter given must hold. An item another writer changed since is a
        conflict, named with who changed it: the revert then writes nothing
        unless `force`. Try it with `dry_run` first.

            >>> import tempfile
            >>> from langgraph_chronomem import ChronoStore, commit_context
            >>> store = ChronoStore.from_path(tempfile.mkdtemp(), scope_depth=1)
            >>> me = ("alice",)
            >>> store.put(me, "city", {"city": "Boston"})
            >>> with commit_context(labels={"source": "tool:web_search"}):
            ...     store.put(me, "city", {"city": "Atlantis"})
            ...     store.put(me, "tip", {"text": "wire money to ..."})
            >>> store.put(me, "pet", {"pet": "cat"})
            >>> print(store.revert_matching(me, source="tool:web_search", dry_run=True))
            reverting v2, v3 would change 2 item(s)
            >>> done = store.revert_matching(me, source="tool:web_search")
            >>> sorted((i.key, i.value) for i in store.search(me))
            [('city', {'city': 'Boston'}), ('pet', {'pet': 'cat'})]
            >>> store.close()

        Args:
            scope: The scope (or any namespace inside it).
            run_id: Commits of this LangGraph run.
            thread_id: Commits of this thread's runs.
            node: Commits made by this graph node.
            source: Commits labelled with this source.
            trust: Commits labelled with this trust level.
            written_by: Commits by this author.
            force: Revert items changed since by others too (their later
                values are overwritten).
            dry_run: Report what would change, and change nothing.
            reason: Why (recorded on the revert commit).
            author: Who reverts (recorded on the revert commit).

        Returns:
            The matching versions, what changes, the conflicts, and the
            commit (`None` when nothing was written).

        Raises:
            InvalidRequestError: If no filter is given, or one is not a string.
        """
        given = label_filters(
            run_id=run_id, thread_id=thread_id, node=node, source=source, trust=trust
        )
        label_filters(written_by=written_by)
        if not given and written_by is None:
            raise InvalidRequestError(
                "name what to revert: run_id, thread_id, node, source, trust or "
                "written_by"
            )

        def matches(labels: Mapping[str, Any], who: str | None) -> bool:
            return all(labels.get(k) == v for k, v in given.items()) and (
                written_by is None or who == written_by
            )

        sc = check_scope(scope, self.scope_depth)
        meta = self._meta(author, reason)
        return self._write(
            lambda tx: tx.revert_matching(
                sc, matches, meta, force=force, dry_run=dry_run
            )
        )

    def reset(self, scope: Sequence[str], to: VersionRef) -> int:
        """Destroy every version after `to` (a number or a tag's name): for
        purging poisoned or private data.

        Unlike `rollback` this cannot be undone. Returns how many versions were
        deleted. Tags on destroyed versions stay, marked `destroyed`: using
        one raises `VersionNotFound` until it is moved or removed.
        """
        sc = check_scope(scope, self.scope_depth)
        removed = self._write(lambda tx: tx.reset(sc, tx.version_of(sc, to)))
        logger.warning("reset %s to %s: deleted %d versions", "/".join(sc), to, removed)
        return removed

    def stats(self) -> StoreStats:
        """Every scope's HEAD, commits and items, and how far each index has read.

        >>> import tempfile
        >>> from langgraph_chronomem import ChronoStore
        >>> store = ChronoStore.from_path(tempfile.mkdtemp(), scope_depth=1)
        >>> store.put(("alice",), "city", {"city": "Paris"})
        >>> [(s.scope, s.head, s.items) for s in store.stats().scopes]
        [(('alice',), 1, 1)]
        >>> store.close()
        """
        with self._engine.transaction(write=False) as tx:
            return tx.stats(kept=self._search.kept_projections())

    # -- meaning ---------------------------------------------------------------

    # -- async twins -----------------------------------------------------------

    ahead = in_thread(head)
    alog = in_thread(log)
    ashow = in_thread(show)
    adiff = in_thread(diff)
    ahistory = in_thread(history)
    aas_of = in_thread(as_of)
    arollback = in_thread(rollback)
    arevert = in_thread(revert)
    arevert_matching = in_thread(revert_matching)
    areset = in_thread(reset)
    astats = in_thread(stats)
