"""History, rollback and undo: the version-control half of `ChronoStore`.

`ChronoStore` is a LangGraph `BaseStore` (its batch path, TTL and lifecycle live
in `store.py`) with these methods mixed in. Each reads or rewrites one scope's
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

import contextlib
import logging
from collections.abc import Callable, Iterator, Mapping, Sequence
from contextlib import contextmanager
from dataclasses import replace
from datetime import datetime, timedelta, timezone
from functools import partial
from typing import Any, TypeVar, get_args

from langgraph_chronomem._twins import in_thread
from langgraph_chronomem.engine.base import LogTransaction
from langgraph_chronomem.engine.protocol import LogEngine
from langgraph_chronomem.engine.terms import terms
from langgraph_chronomem.engine.types import (
    Change,
    Commit,
    CommitMeta,
    Compaction,
    ItemVersion,
    MatchedRevert,
    Namespace,
    Op,
    Redaction,
    RevertConflict,
    StoreStats,
    VersionRef,
)
from langgraph_chronomem.errors import InvalidRequestError
from langgraph_chronomem.search.index import SearchIndex
from langgraph_chronomem.search.resolve import Mode, Resolution
from langgraph_chronomem.search.vectors import Progress
from langgraph_chronomem.store.context import commit_context, current_meta
from langgraph_chronomem.store.ops import (
    check_count,
    check_fields,
    check_items,
    check_key,
    check_moment,
    check_scope,
    check_text,
)
from langgraph_chronomem.store.tags import TagControl
from langgraph_chronomem.store.undo import UndoResult, apply_undo
from langgraph_chronomem.store.view import StoreView

__all__ = ["VersionControl", "check_retention"]

logger = logging.getLogger(__name__)

T = TypeVar("T")

OPS = get_args(Op)
"""Every op a commit can have, as `log(op=...)` takes them."""

Phases = Callable[[str, int, "int | None"], None]
"""Told `(phase, done, total)` as `redact` or `compact` advances: phase
`erase` (per scope), `vectors` (the erased values' vectors deleted, the
changes that read them embedded again) or `vacuum` (the files scrubbed);
`total` is `None` until a phase's size is known, and a phase ends with
`done == total`."""


@contextmanager
def _phase(tell: Phases | None, name: str) -> Iterator[None]:
    """Tell `name` as started (its size unknown) and, if it ends, as done."""
    if tell is not None:
        tell(name, 0, None)
    yield
    if tell is not None:
        tell(name, 1, 1)


class VersionControl(TagControl):
    """The methods that read and rewind a store's timelines, and name their
    versions (`TagControl`).

    A mixin for `ChronoStore`, which opens the log (`_engine`) and its search
    side (`_search`) these methods work on. Wherever a method takes a
    version, a tag's name does too.
    """

    _engine: LogEngine
    _search: SearchIndex

    @property
    def scope_depth(self) -> int:
        """Leading namespace labels that make one timeline."""
        return self._engine.scope_depth

    commit_context = staticmethod(commit_context)

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
    ) -> list[Commit]:
        """The scope's commits, newest first.

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
        labels = _label_filters(
            source=source, trust=trust, run_id=run_id, thread_id=thread_id, node=node
        )
        with self._engine.transaction(write=False) as tx:
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
        self, scope: Sequence[str], v1: VersionRef, v2: VersionRef
    ) -> list[Change]:
        """What changed between two versions (0 is the empty state before v1),
        each a number or a tag's name.

            `old` is the value at `v1`, `new` the value at `v2`.

        Raises:
            VersionNotFound: If either version (or tag) does not exist.
        """
        sc = check_scope(scope, self.scope_depth)
        with self._engine.transaction(write=False) as tx:
            return tx.diff(sc, tx.version_of(sc, v1), tx.version_of(sc, v2))

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

    def as_of(self, scope: Sequence[str], version: VersionRef) -> StoreView:
        """A read-only store showing the scope as it was at `version` (a number
        or a tag's name).

        The view raises `VersionNotFound` once a `reset` destroys that version.

        Raises:
            VersionNotFound: If the scope has no such version or tag.
            CompactedError: If `compact` erased values the scope held then.
        """
        sc = check_scope(scope, self.scope_depth)
        with self._engine.transaction(write=False) as tx:
            at = tx.version_of(sc, version)
            tx.check_version(sc, at, allow_zero=True)
            tx.check_whole(sc, at)
            seq = tx.commit_seq(sc, at)
        return StoreView(self._engine, sc, at, commit_seq=seq)

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
        given = _label_filters(
            run_id=run_id, thread_id=thread_id, node=node, source=source, trust=trust
        )
        _label_filters(written_by=written_by)
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

    def redact(
        self,
        scope: Sequence[str],
        *,
        items: Sequence[tuple[Sequence[str], str]] | None = None,
        key: str | None = None,
        contains: str | None = None,
        source: str | None = None,
        dry_run: bool = False,
        scrub: bool = True,
        reason: str | None = None,
        author: str | None = None,
        progress: Phases | None = None,
    ) -> Redaction:
        """Forget content for real: erase every version of it from the history.

        `reset` destroys whole versions and everything written after them;
        `redact` erases only the matching versions of the matching items, in
        the log, the change index and the vectors, and keeps every other
        version, later commit and HEAD as they are. An item whose current
        value matches is deleted, by one `redact` commit that records who did
        it and why; the commits that wrote the erased versions stay as an
        audit skeleton, their erased values shown as redacted. Nothing brings
        the content back: a rollback or revert to a version that held it
        restores the item as absent. Unlike every other change, this one
        cannot be undone.

            >>> import tempfile
            >>> from langgraph_chronomem import ChronoStore
            >>> store = ChronoStore.from_path(tempfile.mkdtemp(), scope_depth=1)
            >>> me = ("alice",)
            >>> store.put(me, "health", {"text": "diagnosed with diabetes"})
            >>> store.put(me, "health", {"text": "diabetes under control"})
            >>> store.put(me, "city", {"text": "lives in Paris"})
            >>> print(store.redact(me, contains="diabetes", dry_run=True))
            would redact 2 version(s) of 1 item(s), 1 removed at HEAD
            >>> print(store.redact(me, contains="diabetes", reason="user asked"))
            v4 redacted 2 version(s) of 1 item(s), 1 removed at HEAD
            >>> [(v.version, v.erased) for v in store.history(me, "health")]
            [(4, None), (2, 'redacted'), (1, 'redacted')]
            >>> [item.key for item in store.search(me)]
            ['city']
            >>> store.close()

        Args:
            scope: The scope (or any namespace inside it).
            items: Only these items, as (namespace, key): every version.
            key: Only items whose key matches this glob (`"contact-*"`).
            contains: Only versions whose value holds this text in any of its
                strings, ignoring case. Commit reasons that hold it are
                erased too.
            source: Only versions written by commits labelled with this source
                (`commit_context(labels={"source": ...})`).
            dry_run: Report what would be erased, and change nothing.
            scrub: Also overwrite every leftover copy: on SQLite the free
                pages are zeroed, the write-ahead log emptied and the file read
                for the erased text, rewritten (`VACUUM`) only if a copy is
                still there; on PostgreSQL the log's tables are rewritten
                (`VACUUM FULL`); an embedded Chroma's files are cleaned in
                place (its queue, free pages, deleted vectors). Done even when
                nothing matched, for an earlier redaction whose scrub was held
                back; `scrubbed` says whether it was done in full. Without it,
                the content is gone from every read path and its vectors are
                deleted, but free pages and Chroma's internal queue may keep
                old bytes. Either way only the erased versions' vectors go,
                and only the changes that read them are embedded again.
            reason: Why (recorded on the redact commit).
            author: Who redacts (recorded on the redact commit).
            progress: Told each phase as it starts and ends (see `Phases`).

        Returns:
            What was (or would be) erased, and the redact commit.

        Raises:
            InvalidRequestError: If no criterion is given, or one is malformed.
        """
        sc = check_scope(scope, self.scope_depth)
        _label_filters(key=key, contains=contains, source=source)
        wanted = None if items is None else check_items(items)
        if wanted is None and key is None and contains is None and source is None:
            raise InvalidRequestError(
                "name what to redact: items, key, contains or source"
            )
        meta = self._meta(author, reason)
        redact = partial(
            LogTransaction.redact,
            scope=sc,
            meta=meta,
            items=wanted,
            key=key,
            contains=contains,
            source=source,
            dry_run=dry_run,
        )
        if dry_run:
            return self._write(redact, dry_run=True)
        with self._search.erasing() as bring:
            with _phase(progress, "erase"):
                done, erased = self._write_erasing(redact)
            with _phase(progress, "vectors"):
                vectors = bring()
        self._search.after_commit({})
        if done.commit is not None:
            logger.info("redact %s: %s", "/".join(sc), done)
            terms.cache_clear()  # it keeps words of the texts it has seen
        # Even when nothing matched: an earlier redaction's scrub may have
        # been held back by a reader.
        with _phase(progress if scrub else None, "vacuum"):
            scrubbed = scrub and self._scrub(erased)
        return replace(done, scrubbed=scrubbed and vectors)

    def compact(
        self,
        scope: Sequence[str] | None = None,
        *,
        keep_last: int | None = None,
        keep_within: timedelta | None = None,
        dry_run: bool = False,
        vacuum: bool = True,
        progress: Phases | None = None,
    ) -> Compaction:
        """Keep history bounded: erase the versions a retention policy drops.

        Per item, it keeps the first version, HEAD, the last `keep_last`
        versions and those newer than `keep_within`; every other version's
        value is erased, and the space returned (`vacuum`). HEAD and every
        read of it are unchanged, and so is the log: every commit stays, its
        erased values shown as compacted. `as_of` a version that needs an
        erased value, and `rollback` or `revert` that would bring one back,
        raise `CompactedError`, naming the oldest version they can use.

            >>> import tempfile
            >>> from langgraph_chronomem import ChronoStore
            >>> store = ChronoStore.from_path(tempfile.mkdtemp(), scope_depth=1)
            >>> me = ("alice",)
            >>> for city in ["Boston", "Paris", "Rome", "Oslo", "Lima"]:
            ...     store.put(me, "city", {"city": city})
            >>> done = store.compact(keep_last=2)
            >>> print(done, done.whole_from)
            compacted 2 version(s) of 1 item(s) in 1 scope(s) {('alice',): 4}
            >>> [(v.version, v.erased) for v in store.history(me, "city")]
            [(5, None), (4, None), (3, 'compacted'), (2, 'compacted'), (1, None)]
            >>> store.as_of(me, 2)  # doctest: +ELLIPSIS
            Traceback (most recent call last):
            ...
            langgraph_chronomem.errors.CompactedError: v2 of alice was compacted: ...
            >>> store.as_of(me, 4).get(me, "city").value
            {'city': 'Oslo'}
            >>> store.close()

        Args:
            scope: One scope (or a namespace inside it); `None`: every scope.
            keep_last: Keep each item's newest versions, this many.
            keep_within: Keep the versions committed this recently.
            dry_run: Report what would be erased, and change nothing.
            vacuum: Rewrite the database file to return the space (SQLite's
                `VACUUM`, PostgreSQL's `VACUUM FULL`); without it the space is
                reused by later writes.
            progress: Told how many scopes are done (phase `erase`), then
                each later phase as it starts and ends (see `Phases`).

        Returns:
            The versions erased, and per scope the oldest version still whole.

        Raises:
            InvalidRequestError: If neither `keep_last` nor `keep_within` is
                given, or one is not a positive int or duration.
        """
        check_retention(keep_last, keep_within)
        after = (
            None if keep_within is None else datetime.now(timezone.utc) - keep_within
        )
        if scope is None:
            scopes = [s.scope for s in self.stats().scopes]
        else:
            scopes = [check_scope(scope, self.scope_depth)]
        found = Compaction((), dry_run=dry_run)
        tell = progress or (lambda phase, done, total: None)
        tell("erase", 0, len(scopes))
        with contextlib.ExitStack() as erasing:
            bring = None if dry_run else erasing.enter_context(self._search.erasing())
            # A transaction per scope: no scope waits for another's.
            for number, sc in enumerate(scopes, start=1):
                compact = partial(
                    LogTransaction.compact,
                    scope=sc,
                    keep_last=keep_last,
                    keep_after=after,
                    dry_run=dry_run,
                )
                if bring is None:
                    done = self._write(compact, dry_run=True)
                else:
                    done, _ = self._write_erasing(compact)
                found = replace(
                    found,
                    versions=found.versions + done.versions,
                    whole_from={**found.whole_from, **done.whole_from},
                )
                tell("erase", number, len(scopes))
            if bring is None or not found.versions:
                return found
            with _phase(progress, "vectors"):
                bring()
        logger.info("compact: %s", found)
        with _phase(progress if vacuum else None, "vacuum"):
            vacuumed = vacuum and self._scrub()
        return replace(found, vacuumed=vacuumed)

    def _write_erasing(
        self, change: Callable[[LogTransaction], T]
    ) -> tuple[T, tuple[str, ...]]:
        """Run a change that erases values from the log (`redact`,
        `compact`), inside `SearchIndex.erasing`: its vectors are taken out
        there, so the follower is told of its commit only after that.
        Returns its result, and the texts a redaction erased (for `_scrub`
        to check the file against)."""
        with self._engine.transaction(write=True) as tx:
            tx.erased_texts = ()
            result = change(tx)
            return result, tx.erased_texts

    def _scrub(self, erased: Sequence[str] = ()) -> bool:
        """Leave no copy of erased values in any file: Chroma's, the log's
        (checked against the texts `erased` where given, so the log's file is
        rewritten only if one is still there). Whether both were cleaned in
        full."""
        vectors = self._search.scrub()
        return self._engine.scrub(erased) and vectors

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

    @staticmethod
    def _meta(author: str | None, reason: str | None) -> CommitMeta:
        with commit_context(author=author, reason=reason):
            return current_meta()

    # -- meaning ---------------------------------------------------------------

    def resolve(
        self,
        scope: Sequence[str],
        request: str,
        *,
        k: int = 5,
        mode: Mode = "auto",
        now: datetime | None = None,
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

        Returns:
            The candidates, best first, each with its id, the matched change, the
            action and version it points at, what acting would change at HEAD and
            every stage's score; `decided` says whether the rule to act alone
            holds.

        Raises:
            InvalidRequestError: For an empty request, a bad `k` or `mode`.
            ReadOnlyError: On a store opened with `read_only=True`: the search
                indexes it reads catch up with the log first, which writes.
        """
        sc = check_scope(scope, self.scope_depth)
        if isinstance(request, str):
            check_text("an undo request", request)
        self._engine.check_writable("resolve undo requests")
        return self._search.resolver().resolve(sc, request, k=k, mode=mode, now=now)

    def undo(
        self,
        scope: Sequence[str],
        request: str,
        *,
        mode: Mode = "auto",
        dry_run: bool = False,
        force: bool = False,
        author: str | None = None,
    ) -> UndoResult:
        """Resolve a request and apply it when the resolver is sure.

        Args:
            scope: The scope (or any namespace inside it).
            request: What to undo, in words, or a change id ("12.2") from `resolve`.
            mode: `auto`, `revert` or `rollback`, as in `resolve`.
            dry_run: Report what would change, change nothing.
            force: Revert items even if they were changed again since.
            author: Who asked (recorded on the commit).

        Returns:
            What changed, in words and as data, and the version that redoes it —
            or, when nothing matched or the resolver was not sure, the
            candidates and no change.

        Raises:
            InvalidRequestError: For an empty request or an unknown mode.
        """
        resolution = self.resolve(scope, request, mode=mode)
        return self.apply(
            scope, resolution, dry_run=dry_run, force=force, author=author
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

        Raises:
            InvalidRequestError: If `choice` names no candidate.
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
        )
        if result.applied:
            self._search.after_commit({})
        return result

    def reindex(self, progress: Progress | None = None) -> int:
        """Rebuild every derived index (full text, Chroma) from the log.

        Returns how many commits were indexed. `progress`, if given, is called
        as `progress(done, total)` while the vectors are rebuilt, the slow part:

            >>> import tempfile
            >>> from langgraph_chronomem import ChronoStore
            >>> store = ChronoStore.from_path(tempfile.mkdtemp())
            >>> store.put(("notes",), "a", {"text": "hello"})
            >>> store.put(("notes",), "b", {"text": "world"})
            >>> store.reindex(progress=lambda done, total: print(f"{done}/{total}"))
            0/2
            2/2
            2
            >>> store.close()
        """
        with self._engine.transaction(write=True) as tx:
            tx.reindex_changes()
        return self._search.vectors().rebuild(progress)

    def wait_for_index(self, timeout: float | None = None) -> bool:
        """Wait until the vectors and the full-text index have caught up with
        every write so far. Returns False if `timeout` seconds passed first.
        If the background thread's last step failed (a model or Chroma error,
        logged), the rest of the catch-up runs in the calling thread, within
        the same `timeout`, and an error that stops it again is raised here,
        not hidden. With an `embed` given as an async function there is no
        background thread: `await_for_index` does the catch-up, and the sync
        call raises `ConfigError` if anything is left to embed.

        Writes return before their vectors are made: a background thread
        follows the log, and a search by meaning catches up with every write
        that returned before it runs, so no caller needs this for correct
        results. It is for the moments that want the index whole: before a
        backup of the store's directory, before timing a search, or in a test
        that looks into Chroma.

            >>> import tempfile
            >>> from langgraph_chronomem import ChronoStore
            >>> index = {"fields": ["text"]}
            >>> store = ChronoStore.from_path(tempfile.mkdtemp(), index=index)
            >>> store.put(("notes",), "a", {"text": "hello"})
            >>> store.wait_for_index(timeout=60)
            True
            >>> store.close()

        Raises:
            StorageError: If the store is closed, or closed while this waits
                (what its index lacks then is caught up when it opens again).
        """
        self._engine.check_open()  # a closed store's index is not whole: say so
        return self._search.settle(timeout)

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
    aredact = in_thread(redact)
    acompact = in_thread(compact)
    aresolve = in_thread(resolve)
    aundo = in_thread(undo)
    aapply = in_thread(apply)
    astats = in_thread(stats)
    areindex = in_thread(reindex)
    await_for_index = in_thread(wait_for_index)


def check_retention(keep_last: object, keep_within: object) -> None:
    """Validate a retention policy: what `compact` keeps.

    Raises:
        InvalidRequestError: If neither is given, or one is not a positive int
            or a positive `timedelta`.
    """
    if keep_last is None and keep_within is None:
        raise InvalidRequestError("say what to keep: keep_last or keep_within")
    if keep_last is not None:
        check_count("keep_last", keep_last)
        if keep_last < 1:  # type: ignore[operator]  # an int: checked above
            raise InvalidRequestError(f"keep_last is at least 1, got {keep_last}")
    if keep_within is not None and (
        not isinstance(keep_within, timedelta) or keep_within <= timedelta(0)
    ):
        raise InvalidRequestError(
            f"keep_within is a positive timedelta, got {keep_within!r}"
        )


def _label_filters(**given: Any) -> dict[str, str]:
    """The filters given (not None), each checked to be a non-empty string.

    Raises:
        InvalidRequestError: For a filter that is not one.
    """
    for name, value in given.items():
        if value is not None and (not isinstance(value, str) or not value):
            raise InvalidRequestError(f"{name} is a non-empty string, got {value!r}")
    return {name: value for name, value in given.items() if value is not None}
