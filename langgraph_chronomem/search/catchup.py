"""How far each collection has followed the log, and bringing it the rest.

Each collection keeps a mark in the log's `projections` table and catches up
by applying the commits after it (`search/project.py` writes their vectors),
so a crash between a commit and its Chroma update only delays the update;
`rebuild` makes both again from nothing. Of several processes on one log,
the one holding the lease in the log embeds the change backlog in the
background; an undo brings its own scope up to the log without waiting for
the others' (`ready_for`).

Locks: a catch-up takes one collection's lock (`Collections.locks`) at a
time, `rebuild` both, the items' first. `CatchUp._undos_lock` guards the count
of undos waiting for the change collection alone (held for the count).
"""

from __future__ import annotations

import contextlib
import logging
import os
import secrets
import threading
import time
from collections.abc import Callable, Iterator, Sequence
from typing import Any

from langgraph_chronomem.engine.feed import ProjectionFeed, ProjectionState
from langgraph_chronomem.engine.protocol import LogEngine
from langgraph_chronomem.engine.rows import namespace_text, scope_key
from langgraph_chronomem.engine.types import Namespace
from langgraph_chronomem.search.embedding import EmbeddingCache, change_text
from langgraph_chronomem.search.exact import KeptVectors
from langgraph_chronomem.search.project import BATCH, Projector
from langgraph_chronomem.search.vector_collections import Collections, lagging, lags

__all__ = ["CatchUp", "Progress"]

# How long a follower's lease on the shared change catch-up lasts unless
# renewed (every step renews it): a process that died holding it delays the
# others' background catch-up this long at most.
_LEASE_SECONDS = 30.0
_WHOLE = 32  # a backlog an undo applies whole, for every scope

logger = logging.getLogger(__name__)

Progress = Callable[[int, int], None]
"""Called as `progress(done, total)` while commits are applied to the collections."""


class CatchUp:
    """Brings a log's collections up to the log, and keeps their marks.

    Args:
        engine: The log.
        collections: The collections caught up.
        cache: The vectors computed before their catch-up.
        kept: The copies searches read, told each collection's mark.
        projector: What writes the commits' vectors.
        on_lag: Called when `ready_for` caught up one scope alone, leaving
            other scopes' commits to embed.
    """

    def __init__(
        self,
        engine: LogEngine,
        collections: Collections,
        cache: EmbeddingCache,
        kept: KeptVectors,
        projector: Projector,
        on_lag: Callable[[], None] | None,
    ) -> None:
        self.engine = engine
        self.collections = collections
        self.cache = cache
        self.kept = kept
        self.projector = projector
        self.on_lag = on_lag
        # By scope key: the seq up to which `ready_for` embedded the scope's
        # changes, and the collection's mark then.
        self._scope_marks: dict[str, tuple[int, int]] = {}
        self._undos_lock = threading.Lock()
        self._undos = 0  # undos waiting for the change collection
        self._owner = f"{os.getpid()}-{secrets.token_hex(4)}"  # leases' holder

    def catch_up(
        self,
        *,
        items: bool = True,
        changes: bool = True,
        steps: int | None = None,
        batch: int = BATCH,
        upto: int | None = None,
        progress: Progress | None = None,
        shared: bool = True,
    ) -> int:
        """Apply the commits the collections have not seen. Returns how many
        (the most of any one collection; a batch another store's catch-up
        saved first counts too: the follower goes on while there is progress).

        Args:
            items: Catch up the item collection (if items are indexed).
            changes: Catch up the change collection.
            steps: At most this many batches per collection (default: all), so
                a background follower never holds a collection's lock long.
                Such a catch-up of the change collection is shared by every
                store on the log: it goes on only under a lease in the log
                (`ProjectionFeed.lease`), so of several processes' followers
                one embeds the backlog while the others skip it (unless
                `shared` is False: a caller that waits for the whole log).
            batch: Commits per batch.
            upto: Stop at this commit `seq` (default: the log's end, read
                again after every batch, which a busy writer keeps moving).
            progress: Called as `progress(done, total)` after every batch, in
                commits applied over all the collections caught up.
            shared: Whether a bounded catch-up of the changes takes the lease.
        """
        collections = self.collections
        appliers = {}
        if items and collections.items is not None:
            appliers[collections.items.name] = self.projector.apply_items
        # A bounded catch-up (the follower's) leaves the change collection
        # to an undo waiting for it: its lock is not handed over in turn.
        if changes and not (steps is not None and self._undos):
            appliers[collections.changes.name] = self.projector.apply_changes
        advance = None
        if progress is not None:
            advance = self._tally(list(appliers), progress)
        applied = 0
        for name, apply in appliers.items():
            leased = shared and steps is not None and name == collections.changes.name
            if leased and not self._lease(name):
                continue  # another process's follower embeds this backlog
            with collections.locks[name]:
                done = self._catch_up(name, apply, steps, batch, upto, advance)
            if leased and not done:  # caught up: another may go on later
                with self.engine.transaction(write=True) as tx:
                    ProjectionFeed(tx).release(name, self._owner)
            applied = max(applied, done)
        return applied

    def _lease(self, name: str) -> bool:
        """Take or renew this store's lease on `name`'s background catch-up;
        whether it holds it. Read first: a lease held by another costs no
        write, nor one of this store's with more than half its time left (a
        write commits to disk, and during a burst the writes wait for it)."""
        with self.engine.transaction(write=False) as tx:
            feed = ProjectionFeed(tx)
            if feed.leased_to_another(name, self._owner):
                return False
            if feed.lease_left(name, self._owner) > _LEASE_SECONDS / 2:
                return True
        with self.engine.transaction(write=True) as tx:
            return ProjectionFeed(tx).lease(name, self._owner, seconds=_LEASE_SECONDS)

    def _tally(self, names: Sequence[str], progress: Progress) -> Callable[[int], None]:
        """A counter of applied commits that reports to `progress`, starting at 0."""
        with self.engine.transaction(write=False) as tx:
            feed = ProjectionFeed(tx)
            total = sum(feed.count_after(feed.state(name).seq) for name in names)
        done = 0
        progress(done, total)

        def advance(count: int) -> None:
            nonlocal done
            done += count
            progress(done, total)

        return advance

    def behind(self) -> bool:
        """Whether a collection has commits (or a rebuild) still to apply."""
        return lagging(self.engine, [c.name for c in self.collections.all()])

    def _catch_up(
        self,
        name: str,
        apply: Any,
        steps: int | None,
        batch: int,
        upto: int | None,
        advance: Callable[[int], None] | None,
    ) -> int:
        """Apply `name`'s rebuilds, then up to `steps` batches of commits.
        The caller holds the collection's lock."""
        items = self.collections.items
        is_items = items is not None and name == items.name
        remembered = self.cache.generation
        state = self._state(name)
        for scope in state.rebuild:
            self._rebuild_scope(name, apply, scope, state.tickets(scope))
        seq, remade = state.seq, state.remade
        applied = 0
        while steps is None or steps > 0:
            # In a write transaction, as the change index reads them: on
            # PostgreSQL a commit holding a lower seq can become visible after
            # a higher one, and a mark moved past it would skip it for good;
            # there the read waits for the commits in flight before its seqs.
            with self.engine.transaction(write=True) as tx:
                feed = ProjectionFeed(tx)
                seqs = feed.commit_seqs_after(seq, limit=batch)
                remade = feed.state(name).remade  # by this store or another
                if is_items:
                    self.kept.cap_items(feed.last_row_upto(seq))
            if upto is not None:
                seqs = [seq for seq in seqs if seq <= upto]
            if not seqs:
                if name == self.collections.changes.name:
                    self.cache.forget_embedded_ahead(remembered)
                if is_items:
                    self.cache.forget_remembered(remembered)
                    self.projector.sweep_items_once()
                break
            apply(after=seq, upto=seqs[-1])
            with self.engine.transaction(write=True) as tx:
                feed = ProjectionFeed(tx)
                moved = feed.advance(name, seqs[-1], since=seq)
                # If not, another store moved the mark meanwhile (it caught up,
                # or reset it for a reindex): its mark stands, and this goes on
                # from there, still up to `upto` (a search's own writes).
                mark = seqs[-1] if moved else feed.state(name).seq
            steps = None if steps is None else steps - 1
            if mark > seq:  # by this store or, meanwhile, another: progress
                applied += len(seqs)
                if advance is not None:
                    advance(len(seqs))
            seq = mark
        self.kept.marks[name] = ProjectionState(seq, remade=remade)
        return applied

    def last_seq(self) -> int:
        """The log's newest commit `seq`: what a catch-up must reach to hold
        every write made so far."""
        with self.engine.transaction(write=False) as tx:
            return ProjectionFeed(tx).last_seq()

    def _state(self, name: str) -> ProjectionState:
        with self.engine.transaction(write=False) as tx:
            return ProjectionFeed(tx).state(name)

    def _rebuild_scope(
        self, name: str, apply: Any, scope: Namespace, tickets: Sequence[str]
    ) -> None:
        """Make `scope`'s vectors in `name` again, for the requests with these
        `tickets`, and strike them from the mark."""
        apply(scope=scope)
        with self.engine.transaction(write=True) as tx:
            ProjectionFeed(tx).rebuilt(name, scope, tickets)

    def ready_for(self, scope: Namespace) -> int:
        """Bring `scope`'s change vectors up to the log, and no other scope's.
        Returns how many of its changes were embedded here.

        The undo search calls this: after a burst of writes the background
        follower may still be working through other scopes' commits, and one
        scope's request should not wait for them. A backlog of at most
        `_WHOLE` commits is applied whole (the mark moves, and `stats` says
        so); a longer one for this scope alone, reading only its commits
        after what is embedded: the collection's mark, or the scope's own
        mark from an earlier call, never its history. Within a scope commits
        land in seq order on both engines (its writers take turns), so none
        can appear below the scope's HEAD as read. The rows added here are
        skipped when the follower reaches their commits. A follower step
        waiting to start lets this go first (`_undos`).
        """
        name = self.collections.changes.name
        key = scope_key(scope)
        head, since = self._scope_marks.get(key, (0, 0))
        with self.engine.transaction(write=False) as tx:
            feed = ProjectionFeed(tx)
            state = feed.state(name)
            if not lags(feed, name):
                self.kept.marks[name] = state  # another process may move it
                return 0
            if since <= state.seq and not state.rebuild and tx.head_seq(scope) <= head:
                return 0  # nothing new in the scope since this last caught it up
            whole = not state.rebuild and feed.count_after(state.seq) <= _WHOLE
        with self._undo_waiting():
            if whole:
                return self.catch_up(items=False, upto=self.last_seq())
            return self._ready_scope(name, scope, key)

    @contextlib.contextmanager
    def _undo_waiting(self) -> Iterator[None]:
        """Count an undo waiting for the change collection, while it waits
        and works: the follower starts no step meanwhile."""
        with self._undos_lock:
            self._undos += 1
        try:
            yield
        finally:
            with self._undos_lock:
                self._undos -= 1

    def _ready_scope(self, name: str, scope: Namespace, key: str) -> int:
        """`ready_for`'s catch-up of one scope alone."""
        with self.collections.locks[name]:
            state = self._state(name)
            if scope in state.rebuild:
                tickets = state.tickets(scope)
                apply = self.projector.apply_changes
                self._rebuild_scope(name, apply, scope, tickets)
            # The scope's own mark holds while the collection's has not gone
            # back (made anew, by any store) since it was taken.
            head, since = self._scope_marks.get(key, (0, 0))
            after = max(state.seq, head) if since <= state.seq else state.seq
            kept = self.kept.scope_rows(scope)
            with self.engine.transaction(write=False) as tx:
                described = tx.change_rows(scope=scope, after=after)
                head = tx.head_seq(scope)
            known = kept if described else set()
            rows = [r for r in described if r.text.new and r.row_id not in known]
            self.projector.add_changes_ahead(rows)
            self._scope_marks[key] = (head, state.seq)
            self.kept.unmark(scope)  # rows were added without moving the mark
        if rows:
            logger.info(
                "embedded %d changes of %s for the undo search alone; the "
                "background follower embeds the other scopes' commits",
                len(rows), namespace_text(scope),
            )  # fmt: skip
        if self.on_lag is not None:
            self.on_lag()
        return len(rows)

    def embed_ahead(self, *, batch: int, piece: int) -> int:
        """Embed the changes of the next `batch` commits past what the change
        collection holds (and past what this did before), and keep their
        vectors in memory for the catch-up that writes them to Chroma and
        moves the mark. Returns how many commits it embedded (0: none left,
        or `AHEAD_MOST` vectors kept already).

        For a follower while writes land: the model runs without Python's
        global lock, which a Chroma write holds for its whole length (about
        a millisecond a vector, the writes' threads waiting); the log is read
        `piece` commits a transaction, each holding the log's lock, which the
        writes wait for, only briefly; and nothing is written, to the log or
        to Chroma. The catch-up at the pause then costs no model time. Like
        the follower's catch-up, it is left to the process holding the lease
        on it, if another does.
        """
        name = self.collections.changes.name
        start = self.cache.ahead_from()
        if start is None:
            return 0
        if not self._lease(name):
            return 0
        with self.engine.transaction(write=False) as tx:
            feed = ProjectionFeed(tx)
            start = max(start, feed.state(name).seq)
            seqs = feed.commit_seqs_after(start, limit=batch)
        if not seqs:
            return 0
        rows = self.projector.change_rows(start, seqs[-1], piece=piece)
        texts = dict.fromkeys(change_text(row) for row in rows if row.text.new)
        self.cache.embed_ahead(texts, seqs[-1])
        return len(seqs)

    def write_ahead(self, seconds: float) -> int:
        """Write to Chroma what `embed_ahead` embedded, moving the mark, for
        about `seconds` at most (one batch may run over): for a store that
        closes right after a burst of writes, whose vectors would otherwise
        be lost with the process. Returns how many commits were written.
        No model runs but for a change `embed_ahead` did not reach."""
        deadline = time.monotonic() + seconds
        written = 0
        while self.cache.has_ahead and time.monotonic() < deadline:
            done = self.catch_up(
                items=False,
                steps=1,
                batch=BATCH,
                upto=self.cache.ahead_seq,
                shared=False,
            )
            if not done:
                break
            written += done
        return written

    def rebuild(self, progress: Progress | None = None) -> int:
        """Drop both collections and make them again from the log.

        `progress` is called as in `catch_up`.
        """
        with self.collections.holding():
            self.collections.make_anew()
            self.kept.drop_all()  # nothing is there until catch-up says so
            self.projector.ahead.clear()
            self._scope_marks.clear()
        applied = self.catch_up(progress=progress)
        # A search during the catch-up kept what it found then, under a mark
        # the catch-up ends on again (the same newest commit): read anew.
        self.kept.drop(items=True, changes=True)
        return applied
