"""Forgetting: erase values from the history (`redact`) and drop old versions by
a retention policy (`compact`), with every copy of an erased text scrubbed from
the files:

    >>> import tempfile
    >>> from langgraph_chronomem import ChronoStore
    >>> store = ChronoStore.from_path(tempfile.mkdtemp(), scope_depth=1)
    >>> store.put(("alice",), "card", {"text": "card 4111 1111 1111 1111"})
    >>> store.redact(("alice",), contains="4111").versions
    ((('alice',), 'card', 1),)
    >>> store.history(("alice",), "card")[0].value is None
    True
    >>> store.close()
"""

from __future__ import annotations

import contextlib
import logging
from collections.abc import Callable, Iterator, Sequence
from contextlib import contextmanager
from dataclasses import replace
from datetime import datetime, timedelta, timezone
from functools import partial
from typing import TYPE_CHECKING, TypeVar

from langgraph_chronomem._twins import in_thread
from langgraph_chronomem.engine.base import LogTransaction
from langgraph_chronomem.engine.terms import terms
from langgraph_chronomem.engine.types import (
    Compaction,
    Redaction,
    StoreStats,
)
from langgraph_chronomem.errors import InvalidRequestError
from langgraph_chronomem.store.core import StoreCore
from langgraph_chronomem.store.ops import (
    check_count,
    check_items,
    check_scope,
    label_filters,
)

__all__ = ["Forgetting", "Phases", "check_retention"]

logger = logging.getLogger(__name__)

T = TypeVar("T")

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


class Forgetting(StoreCore):
    """The methods that take values out of the history: a mixin for `ChronoStore`."""

    if TYPE_CHECKING:  # `VersionControl`'s, which lists the scopes to compact

        def stats(self) -> StoreStats: ...

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
        label_filters(key=key, contains=contains, source=source)
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

    aredact = in_thread(redact)
    acompact = in_thread(compact)


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
