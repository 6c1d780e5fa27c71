"""Chroma collections projected from the log: HEAD items, and every item change.

Both are derived data (DESIGN.md, invariant 1). Each keeps a mark in the log's
`projections` table and catches up by reading the commits after it, so a crash
between a commit and its Chroma update only delays the update; `rebuild` makes
both again from nothing. Every query carries its scope or namespace filter
(invariant 5), and every hit is returned with the log row it was made from, for
the caller to check against the log before trusting it (invariant 2). The change
collection holds one vector per log row with a value: the item as that change
left it, so what a change replaced is the vector of the row before it.

    >>> import tempfile, chromadb
    >>> from chromadb.config import Settings
    >>> from langgraph_chronomem.engine import CommitMeta, SqliteEngine, Write
    >>> from langgraph.store.base import ensure_embeddings
    >>> engine = SqliteEngine(tempfile.mkdtemp() + "/log.sqlite3", scope_depth=1)
    >>> with engine.transaction(write=True) as tx:
    ...     _ = tx.commit([Write(("alice",), "city", {"city": "Paris"})], CommitMeta())
    >>> toy = ensure_embeddings(lambda ts: [[float("Paris" in t), 1.0] for t in ts])
    >>> client = chromadb.EphemeralClient(Settings(anonymized_telemetry=False))
    >>> index = VectorIndex(engine, client, toy, "toy", item_fields=["city"])
    >>> index.catch_up()  # commits applied
    1
    >>> [hit.version for hit in index.query_changes(("alice",), [1.0, 1.0], n=5)]
    [1]
    >>> [(hit.namespace, hit.key) for hit in next(index.nearest_items((), [1.0, 1.0]))]
    [(('alice',), 'city')]
"""

from __future__ import annotations

import contextlib
import hashlib
import json
import logging
import os
import secrets
import threading
import time
from collections.abc import Callable, Iterator, Mapping, Sequence
from dataclasses import dataclass, replace
from functools import partial
from typing import Any, Literal, TypeVar

import chromadb.errors
import httpx
import numpy as np
from langchain_core.embeddings import Embeddings
from langgraph.store.base import get_text_at_path, tokenize_path

from langgraph_chronomem.engine.describe import CHANGE_TEXT_VERSION
from langgraph_chronomem.engine.feed import (
    VECTOR_LOG,
    HeadRow,
    ProjectionFeed,
    ProjectionState,
)
from langgraph_chronomem.engine.protocol import LogEngine
from langgraph_chronomem.engine.rows import (
    ChangeRow,
    chunks,
    namespace_from_text,
    namespace_text,
    scope_key,
)
from langgraph_chronomem.engine.types import Namespace
from langgraph_chronomem.search.chroma import server_address, unreachable

__all__ = [
    "DISTANCES",
    "ChangeHit",
    "Distance",
    "ItemHit",
    "ItemTexts",
    "Progress",
    "VectorIndex",
    "collection_name",
    "lagging",
    "log_name",
    "unit",
]

ITEMS = "chronomem-items"
CHANGES = "chronomem-changes"
_RETIRED = (  # collections of older versions, dropped with their marks
    "chronomem-descriptors",
    ITEMS,
    CHANGES,
)
_BATCH = 256  # commits per catch-up step
# How long a follower's lease on the shared change catch-up lasts unless
# renewed (every step renews it): a process that died holding it delays the
# others' background catch-up this long at most.
_LEASE_SECONDS = 30.0
_WHOLE = 32  # a backlog an undo applies whole, for every scope
_AHEAD_MOST = 20_000  # change vectors `embed_ahead` keeps (about 30 MB)
_SWEEP_PAGE = 5000  # vectors read at a time (a sweep, a top-up)
# Chroma's approximate (HNSW) index of a collection: nothing here queries it
# (searches compare every vector of a scope exactly, from a copy kept in
# memory), yet Chroma builds it on every write, holding the GIL, which the
# store's writes wait for. A sparse graph costs a third of the default's to
# build (measured: 0.5 against 1.6 ms a vector).
_HNSW = {"space": "cosine", "ef_construction": 8, "max_neighbors": 4}
# What a Chroma server says when a read races another client's write (seen
# with four processes on one server), and the pauses before trying again.
_RACED = "Error finding id"
_RACE_PAUSES = (0.02, 0.1, 0.5)

logger = logging.getLogger(__name__)
T = TypeVar("T")
_Row = TypeVar("_Row", HeadRow, ChangeRow)  # a log row a collection holds
Distance = Literal["cosine", "l2", "inner_product"]
DISTANCES: tuple[Distance, ...] = ("cosine", "l2", "inner_product")

Progress = Callable[[int, int], None]
"""Called as `progress(done, total)` while commits are applied to the collections."""


@dataclass(frozen=True)
class ItemHit:
    """A HEAD item whose vector matched, and the log row the vector was made from."""

    namespace: Namespace
    key: str
    row_id: int
    score: float


@dataclass(frozen=True)
class ChangeHit:
    """An item change whose new value matched: its log row and commit version."""

    row_id: int
    version: int
    score: float


class ItemTexts:
    """What is embedded of an item: (field label, text) pairs for a value.

    Needs no Chroma, so a write can find its texts (and embed them before its
    transaction) while a Chroma server is down.

        >>> texts = ItemTexts(["text", "tags[*]"])
        >>> texts({"text": "Paris", "tags": ["city", "home"]}, None)
        [('text', 'Paris'), ('tags[*].0', 'city'), ('tags[*].1', 'home')]
        >>> texts({"text": "Paris"}, False), ItemTexts(None)({"text": "Paris"}, None)
        ([], [])

    Args:
        fields: JSON paths embedded by default (`index["fields"]`), `None`
            when items are not indexed.
    """

    def __init__(self, fields: Sequence[str] | None) -> None:
        self.fields = None if fields is None else list(fields)
        self._paths = [(f, tokenize_path(f) if f != "$" else "$") for f in fields or ()]

    def __call__(
        self, value: Mapping[str, Any], index: Sequence[str] | bool | None
    ) -> list[tuple[str, str]]:
        """The pairs for one value. `index` is the put's argument: `None` for
        the default fields, `False` for nothing, or its own field paths."""
        if index is False or self.fields is None:
            return []
        paths = self._paths if index is None else [(f, tokenize_path(f)) for f in index]  # type: ignore[union-attr]
        texts = []
        for field, path in paths:
            found = get_text_at_path(value, path)
            texts += [
                (f"{field}.{i}" if len(found) > 1 else field, t)
                for i, t in enumerate(found)
            ]
        return texts


def unit(vector: Sequence[float]) -> np.ndarray:
    """`vector` scaled to length 1 (a zero vector stays as it is), as float32.

    >>> unit([3.0, 4.0]).tolist()
    [0.6000000238418579, 0.800000011920929]
    """
    array = np.asarray(vector, dtype=np.float32)
    norm = float(np.linalg.norm(array))
    return array / norm if norm else array


def _item_id(namespace: Namespace, key: str) -> str:
    return hashlib.sha1(f"{namespace_text(namespace)}\x00{key}".encode()).hexdigest()


def _lags(feed: ProjectionFeed, name: str) -> bool:
    """Whether projection `name` has commits, or a rebuild, still to apply."""
    state = feed.state(name)
    return bool(state.rebuild or feed.commit_seqs_after(state.seq, limit=1))


def lagging(engine: LogEngine, names: Sequence[str]) -> bool:
    """Whether any of these projections has commits, or a rebuild, still to
    apply: read in the log alone, with no Chroma open."""
    with engine.transaction(write=False) as tx:
        feed = ProjectionFeed(tx)
        return any(_lags(feed, name) for name in names)


def log_name(engine: LogEngine) -> str | None:
    """This log's name among the logs whose vectors share a Chroma: a random
    one, recorded in the log the first time it is asked for (the first of
    racing stores wins). `None` for a read-only log that has none yet: its
    collections keep the names of before logs had one."""
    with engine.transaction(write=False) as tx:
        name = tx.meta(VECTOR_LOG)
    if name is not None or engine.read_only:
        return name
    with engine.transaction(write=True) as tx:
        return tx.first_meta(VECTOR_LOG, secrets.token_hex(8))


def collection_name(
    kind: str,
    embedder: str,
    fields: Sequence[str] | None = None,
    *,
    text: int | None = None,
    log: str | None = None,
) -> str:
    """The collection of `kind` of this `log` (`log_name`) for this embedder
    (and, for items, these fields; for changes, this `text` derivation): a
    store opened with another model or other fields, or another log sharing
    the Chroma, gets collections of its own, never another's vectors.

        >>> collection_name(CHANGES, "toy")  # as named before logs had names
        'chronomem-changes-03fd904e5d6f'
        >>> collection_name(CHANGES, "toy", log="5f2a") != collection_name(
        ...     CHANGES, "toy", log="9c41")
        True
    """
    made_of: list[Any] = [embedder, None if fields is None else list(fields)]
    if text is not None:
        made_of.append(text)
    if log is not None:
        made_of.insert(0, log)
    identity = json.dumps(made_of)
    return f"{kind}-{hashlib.sha256(identity.encode()).hexdigest()[:12]}"


def collection_names(
    embedder: str, item_fields: Sequence[str] | None, log: str | None
) -> tuple[str | None, str]:
    """The names of a log's item collection (`None` when items are not
    embedded) and change collection: `collection_name` of each, as made now."""
    changes = collection_name(CHANGES, embedder, text=CHANGE_TEXT_VERSION, log=log)
    if item_fields is None:
        return None, changes
    return collection_name(ITEMS, embedder, item_fields, log=log), changes


@dataclass(frozen=True)
class _Kept:
    """Vectors kept in memory for exact search: their log rows, what else each
    needs (`tags`: versions for changes, namespaces and keys for items), the
    unit vectors, one per row of `matrix`, and their lengths (`norms`)."""

    last_row: int
    rows: np.ndarray
    tags: tuple[np.ndarray, ...]
    matrix: np.ndarray
    norms: np.ndarray
    mark: ProjectionState | None = None  # the collection's mark when topped up
    early: frozenset[str] = frozenset()  # ids kept of rows above `last_row`

    def emptied(self) -> _Kept:
        """Nothing kept, with tags of the same types."""
        return _Kept.empty(*(tag.dtype.type for tag in self.tags))

    @staticmethod
    def empty(*tags: type) -> _Kept:
        """Nothing kept yet, with tags of these types (`int`, `str`)."""
        return _Kept(
            0,
            np.zeros(0, dtype=np.int64),
            tuple(np.zeros(0, dtype=kind) for kind in tags),
            np.zeros((0, 0), dtype=np.float32),
            np.zeros(0, dtype=np.float32),
        )

    def extend(
        self, rows: Sequence[int], tags: Sequence[Sequence[Any]], vectors: Any
    ) -> _Kept:
        added = np.asarray(vectors, dtype=np.float32)
        norms = np.linalg.norm(added, axis=1)
        added /= np.maximum(norms, 1e-12)[:, None]
        matrix = np.vstack([self.matrix, added]) if len(self.rows) else added
        return _Kept(
            max(self.last_row, *rows),
            np.concatenate([self.rows, np.asarray(rows, dtype=np.int64)]),
            tuple(
                np.concatenate([kept, np.asarray(new, dtype=kept.dtype.type)])
                for kept, new in zip(self.tags, tags, strict=True)
            ),
            matrix,
            np.concatenate([self.norms, norms]),
        )


def _embedded(row: ChangeRow) -> str:
    """The text a change's vector is made of: what it left, in its context."""
    return f"{row.text.new} {row.text.context}"


def _add_unseen(
    read: Callable[[], Sequence[_Row]],
    add: Callable[[Sequence[_Row]], None],
    rows: Sequence[_Row],
) -> list[_Row]:
    """Add (and return) the rows `read` finds now that `rows`, read before a
    delete of vectors, lacked: a vector another store added for one of them
    meanwhile can have gone with the delete, and its row was in the log by
    then."""
    seen = {row.row_id for row in rows}
    unseen = [row for row in read() if row.row_id not in seen]
    add(unseen)
    return unseen


class VectorIndex:
    """The store's Chroma side: one collection of HEAD items, one of item changes.

    Args:
        client: A Chroma client: `PersistentClient` for one process,
            `HttpClient` (a Chroma server) when several processes share a store.
        embeddings: What turns text into vectors (the store's `index["embed"]`, or
            the default all-MiniLM-L6-v2).
        embedder: A name for the embedding model. A collection made with another
            model is dropped and rebuilt, never mixed.
        item_fields: JSON paths embedded for items (`index["fields"]`), or `None`
            when items are not indexed (changes always are).
        distance: How item scores are given (`index["distance_type"]`).
        log: The log's name among the logs sharing the Chroma (`log_name`),
            carried by its collections' names; `None` for the names of before.
        own_chroma: Whether the Chroma holds this log's vectors alone (an
            embedded one in the store's directory): collections of before
            logs had names are then renamed, not made again from the log.
        on_lag: Called when `ready_for` caught up one scope alone, leaving
            other scopes' commits to embed: the store's follower takes them.
    """

    def __init__(
        self,
        engine: LogEngine,
        client: Any,
        embeddings: Embeddings,
        embedder: str,
        *,
        item_fields: Sequence[str] | None = None,
        distance: Distance = "cosine",
        log: str | None = None,
        own_chroma: bool = False,
        on_lag: Callable[[], None] | None = None,
    ) -> None:
        self.engine = engine
        self.on_lag = on_lag
        self.distance = distance
        self.client = client
        self.embeddings = embeddings
        self.embedder = embedder
        self.item_fields = None if item_fields is None else list(item_fields)
        # Chroma calls, one at a time: embedded Chroma read while another
        # thread writes fails ("Error finding id"). Held for one call alone,
        # never while waiting for another lock.
        self._chroma = threading.Lock()
        self.item_texts = ItemTexts(item_fields)
        # The copies kept for exact search. Readers hold the log's lock when they
        # take it, and its holders never wait for the log: never the other way.
        self._kept_lock = threading.Lock()
        self._kept: dict[str, _Kept] = {}  # scope key -> its change vectors
        self._kept_items = _Kept.empty(str, str)  # item vectors: (namespace, key)
        self._marks: dict[str, ProjectionState] = {}  # as last caught up
        # The last log row of a commit the item collection has applied (see
        # `_top_up`); read by catch-up, as searches read the copy inside a
        # transaction of the log and may not open another. 0 until then.
        self._item_cap = 0
        self._counted: int | None = None  # the item count `present` read
        listed = {c.name for c in self._call(client.list_collections)}
        # and the change vectors of an earlier `change_text` (1 was unnumbered)
        earlier = [None, *range(2, CHANGE_TEXT_VERSION)]
        older = {
            collection_name(CHANGES, embedder, text=t, log=name)
            for t in earlier
            for name in {None, log}
        }
        retired = listed & {*_RETIRED, *older}
        for name in retired:
            self._call(partial(client.delete_collection, name))
        with engine.transaction(write=bool(retired)) as tx:
            for name in retired:
                ProjectionFeed(tx).forget(name)
        items, changes = collection_names(embedder, item_fields, log)
        if log is not None:
            unnamed = collection_names(embedder, item_fields, None)
            for old, new in zip(unnamed, (items, changes), strict=True):
                if old is not None and new is not None:
                    self._name_own(old, new, listed, rename=own_chroma)
        self.changes = self._collection(changes)
        self.items = None if items is None else self._collection(items)
        # One lock per collection, held while its Chroma side is written: a
        # search that catches up the items never waits for change vectors.
        self._locks = {c.name: threading.Lock() for c in self._collections()}
        # Vectors writes computed before they committed, kept until a catch-up
        # has applied their commits: (generation remembered, vector) by text.
        self._pending_lock = threading.Lock()
        self._pending: dict[str, tuple[int, np.ndarray]] = {}
        self._generation = 0
        # Change vectors `embed_ahead` computed, by text, as `_pending`, and
        # the commit seq it embedded up to.
        self._early: dict[str, tuple[int, np.ndarray]] = {}
        self._early_seq = 0
        self._ahead: set[int] = set()  # change rows added before their commits' turn
        # By scope key: the seq up to which `ready_for` embedded the scope's
        # changes, and the collection's mark then.
        self._scope_marks: dict[str, tuple[int, int]] = {}
        self._undos = 0  # undos waiting for the change collection
        self._owner = f"{os.getpid()}-{secrets.token_hex(4)}"  # leases' holder
        self._swept = False  # whether the item collection was swept since open

    def _name_own(self, old: str, new: str, listed: set[str], *, rename: bool) -> None:
        """Move this log's collection `old`, named before logs had names, to
        its name `new`. In a Chroma of its own it is renamed, its mark with
        it; in a shared one it may hold other logs' vectors under the same
        ids, so it is dropped if this log used it, and `new` made from the log.

        Each step can be repeated: the mark is copied before the rename and
        forgotten after it, so a crash in between redoes the rest next time.
        """
        with self.engine.transaction(write=False) as tx:
            state = ProjectionFeed(tx).state(old)
            marked = ProjectionFeed(tx).state(new) != ProjectionState(0)
        used = state != ProjectionState(0)
        renamed = rename and old in listed and new not in listed
        if renamed:
            if not marked:
                with self.engine.transaction(write=True) as tx:
                    ProjectionFeed(tx).save(new, state)
            collection = self._call(
                lambda: self.client.get_collection(old, embedding_function=None)
            )
            self._call(partial(collection.modify, name=new))
        elif old in listed and used:
            with contextlib.suppress(chromadb.errors.NotFoundError):
                self._call(partial(self.client.delete_collection, old))
        if used or renamed:
            with self.engine.transaction(write=True) as tx:
                ProjectionFeed(tx).forget(old)

    def _collection(self, name: str, *, anew: bool = False) -> Any:
        """Open a collection, or make it (`anew`: again) from nothing.

        One made anew is deleted first, then its mark reset in the log, then
        it is made: a crash at any point leaves it missing (made again on the
        next open) or visibly behind. Another store's catch-up that read the
        old mark cannot save one over the reset (compare and set), and one
        that read the reset mark writes into the new collection, or fails on
        the deleted one and opens the new one.
        """
        client = self.client
        names = self._call(lambda: {c.name for c in client.list_collections()})
        if not anew and name in names:
            return self._call(
                lambda: client.get_collection(name, embedding_function=None)
            )
        if anew:
            with contextlib.suppress(chromadb.errors.NotFoundError):
                self._call(partial(client.delete_collection, name))
        with self.engine.transaction(write=True) as tx:
            ProjectionFeed(tx).save(name, ProjectionState(0))
        return self._call(
            lambda: client.get_or_create_collection(
                name,
                embedding_function=None,
                metadata={
                    "embedder": self.embedder,
                    "fields": json.dumps(self.item_fields),
                },
                configuration={"hnsw": _HNSW},
            )
        )

    def check(self) -> VectorIndex:
        """Read each collection once, so a damaged one fails here, on open.

        Raises:
            Exception: Whatever Chroma raises for a collection it cannot read.
        """
        for collection in self._collections():
            self._call(collection.count)
            self._call(partial(collection.get, limit=1, include=["embeddings"]))
        return self

    def present(self, *, changes: bool = False) -> VectorIndex:
        """Ask Chroma for the collection a search reads (items; `changes` for
        the undo search's), so one gone since it was opened (a server restarted
        on empty data, a rebuild by another store) fails here, where it can be
        made again.

        Raises:
            chromadb.errors.NotFoundError: If it is gone.
        """
        read = self.changes if changes or self.items is None else self.items
        count = self._call(read.count)
        if read is self.items:  # the search that follows needs no other count
            self._counted = count
        return self

    def _call(self, call: Callable[[], T]) -> T:
        """Make one Chroma call, when no other thread is making one; again,
        after a pause, if it raced another client's write (`_RACED`: every
        call made here reads, or writes what it would write again).

        Raises:
            StorageError: If the client is a Chroma server's and it cannot be
                reached (down, restarting, or not answering in time).
        """
        with self._chroma:
            try:
                for pause in _RACE_PAUSES:
                    try:
                        return call()
                    except chromadb.errors.InternalError as exc:
                        if _RACED not in str(exc):
                            raise
                    time.sleep(pause)
                return call()  # the last try, whatever it raises
            except httpx.TransportError as exc:
                raise unreachable(server_address(self.client), exc) from exc

    def _collections(self) -> list[Any]:
        return [self.changes] if self.items is None else [self.items, self.changes]

    # -- what gets embedded ---------------------------------------------------

    def embed(self, texts: Sequence[str]) -> list[list[float]]:
        """Vectors for `texts`, reusing those writes computed (`remember`)
        and those `embed_ahead` did (each used once)."""
        with self._pending_lock:
            known = {
                t: self._pending[t][1].tolist() for t in texts if t in self._pending
            }
            for text in texts:
                if text in self._early and text not in known:
                    known[text] = self._early.pop(text)[1].tolist()
        missing = list(dict.fromkeys(t for t in texts if t not in known))
        if missing:
            known.update(
                zip(missing, self.embeddings.embed_documents(missing), strict=True)
            )
        return [list(known[t]) for t in texts]

    def remember(self, known: Mapping[str, list[float]]) -> None:
        """Keep the vectors a write computed before it committed, for the
        catch-up that applies its commit: nothing is embedded twice."""
        if not known:
            return
        with self._pending_lock:
            self._generation += 1
            for text, vector in known.items():
                # float32: a quarter of a list of floats' size, while it waits
                self._pending[text] = (
                    self._generation,
                    np.asarray(vector, dtype=np.float32),
                )

    # -- catching up with the log ---------------------------------------------

    def catch_up(
        self,
        *,
        items: bool = True,
        changes: bool = True,
        steps: int | None = None,
        batch: int = _BATCH,
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
        appliers = {}
        if items and self.items is not None:
            appliers[self.items.name] = self._apply_items
        # A bounded catch-up (the follower's) leaves the change collection
        # to an undo waiting for it: its lock is not handed over in turn.
        if changes and not (steps is not None and self._undos):
            appliers[self.changes.name] = self._apply_changes
        advance = None
        if progress is not None:
            advance = self._tally(list(appliers), progress)
        applied = 0
        for name, apply in appliers.items():
            leased = shared and steps is not None and name == self.changes.name
            if leased and not self._lease(name):
                continue  # another process's follower embeds this backlog
            with self._locks[name]:
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
        return lagging(self.engine, [c.name for c in self._collections()])

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
        with self._pending_lock:
            remembered = self._generation
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
                if self.items is not None and name == self.items.name:
                    self._item_cap = feed.last_row_upto(seq)
            if upto is not None:
                seqs = [seq for seq in seqs if seq <= upto]
            if not seqs:
                if name == self.changes.name:
                    self._forget_pending(remembered, early=True)
                if self.items is not None and name == self.items.name:
                    self._forget_pending(remembered)
                    if not self._swept:
                        self._sweep_items()
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
        self._marks[name] = ProjectionState(seq, remade=remade)
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

    def _forget_pending(self, remembered: int, *, early: bool = False) -> None:
        """Drop vectors remembered (`early`: embedded ahead) before a
        catch-up that found nothing left: their commits are applied (or their
        items written again since)."""
        with self._pending_lock:
            kept = self._early if early else self._pending
            kept = {
                text: entry for text, entry in kept.items() if entry[0] > remembered
            }
            if early:
                self._early = kept
            else:
                self._pending = kept

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
        name = self.changes.name
        key = scope_key(scope)
        head, since = self._scope_marks.get(key, (0, 0))
        with self.engine.transaction(write=False) as tx:
            feed = ProjectionFeed(tx)
            state = feed.state(name)
            if not _lags(feed, name):
                self._marks[name] = state  # another process may move it
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
        with self._pending_lock:
            self._undos += 1
        try:
            yield
        finally:
            with self._pending_lock:
                self._undos -= 1

    def _ready_scope(self, name: str, scope: Namespace, key: str) -> int:
        """`ready_for`'s catch-up of one scope alone."""
        with self._locks[name]:
            state = self._state(name)
            if scope in state.rebuild:
                tickets = state.tickets(scope)
                self._rebuild_scope(name, self._apply_changes, scope, tickets)
            # The scope's own mark holds while the collection's has not gone
            # back (made anew, by any store) since it was taken.
            head, since = self._scope_marks.get(key, (0, 0))
            after = max(state.seq, head) if since <= state.seq else state.seq
            kept = self._scope_vectors(scope)
            with self.engine.transaction(write=False) as tx:
                described = tx.change_rows(scope=scope, after=after)
                head = tx.head_seq(scope)
            known = set(kept.rows.tolist()) if described else set()
            rows = [r for r in described if r.text.new and r.row_id not in known]
            self._add_changes(rows)
            self._ahead.update(row.row_id for row in rows)
            self._scope_marks[key] = (head, state.seq)
            with self._kept_lock:  # rows were added without moving the mark
                if key in self._kept:
                    self._kept[key] = replace(self._kept[key], mark=None)
        if rows:
            logger.info(
                "embedded %d changes of %s for the undo search alone; the "
                "background follower embeds the other scopes' commits",
                len(rows), namespace_text(scope),
            )  # fmt: skip
        if self.on_lag is not None:
            self.on_lag()
        return len(rows)

    def _apply_items(
        self, *, scope: Namespace | None = None, after: int = 0, upto: int = 0
    ) -> None:
        items = self.items
        assert items is not None
        if scope is not None:

            def head() -> list[HeadRow]:
                with self.engine.transaction(write=False) as tx:
                    return ProjectionFeed(tx).scope_head(scope)

            drop = partial(self._drop_copies, items=True)
            self._remake(items, scope, head, self._add_items, drop)
            return
        with self.engine.transaction(write=False) as tx:
            feed = ProjectionFeed(tx)
            changed = feed.changed_items(after, upto)
            rows = feed.head_rows(changed)
            newest = feed.newest_rows(changed)
        if not changed:
            return

        def head_now() -> list[HeadRow]:
            with self.engine.transaction(write=False) as tx:
                return ProjectionFeed(tx).head_rows(changed)

        self._drop_stale(newest, {row.row_id for row in rows}, head_now)
        self._add_items(rows)
        # A reset landing between the drop's last look at HEAD and its delete
        # brought an older row back, and another store's rebuild of its scope
        # gave it a vector the delete took: add it again, and have every
        # store read its copy anew (a copy read meanwhile lacks it for good).
        added = _add_unseen(head_now, self._add_items, rows)
        if any(row.row_id < newest[(row.namespace, row.key)] for row in added):
            with self.engine.transaction(write=True) as tx:
                ProjectionFeed(tx).remade(items.name)

    def _remake(
        self,
        collection: Any,
        scope: Namespace,
        read: Callable[[], Sequence[_Row]],
        add: Callable[[Sequence[_Row]], None],
        drop_copies: Callable[[], None],
    ) -> None:
        """Make `scope`'s vectors in `collection` again from the rows `read`
        takes from the log: add them, then delete every other vector of the
        scope. Never the other way round: with several stores rebuilding one
        scope for a reset, a search between one's delete and its adds found
        none of the scope (the resetting process's own search, too).

        What to delete is decided on the log read again after listing the
        vectors, so a newer row's vector another store added meanwhile (its
        row in the log by then) stays; one a reset brings back between that
        read and the delete is added again at the end."""
        rows = read()
        add(rows)
        drop_copies()  # the rows made again can be older than a copy's
        where = {"scope": scope_key(scope)}
        found = self._call(lambda: collection.get(where=where, include=["metadatas"]))
        seen = list(rows) + list(read())
        kept = {row.row_id for row in seen}
        stale = [
            id_
            for id_, meta in zip(found["ids"], found["metadatas"], strict=True)
            if meta["row"] not in kept
        ]
        if stale:
            self._call(lambda: collection.delete(ids=stale))
        _add_unseen(read, add, seen)
        drop_copies()

    def _sweep_items(self) -> None:
        """Delete every item vector whose row is no longer at HEAD: once per
        open, when a catch-up first reaches the log's end. A catch-up drops
        the vectors of the items its commits changed, but a crash between a
        commit and that delete, or a catch-up of another store that added a
        row's vector after the one that replaced it had dropped the old ones,
        leaves one nothing else would take away. HEAD is read after the
        vectors are listed; a row a reset brings back between that read and
        the delete gets its vector again."""
        items = self.items
        assert items is not None
        found = self._read_all(items, include=("metadatas",))
        listed = list(zip(found["ids"], found["metadatas"], strict=True))
        keys = list({(namespace_from_text(m["ns"]), m["key"]) for _, m in listed})

        def head_now() -> list[HeadRow]:
            with self.engine.transaction(write=False) as tx:
                return ProjectionFeed(tx).head_rows(keys)

        head = {row.row_id for row in head_now()}
        stale = [(id_, meta["row"]) for id_, meta in listed if meta["row"] not in head]
        if stale:
            for start in range(0, len(stale), _SWEEP_PAGE):
                part = [id_ for id_, _ in stale[start : start + _SWEEP_PAGE]]
                self._call(partial(items.delete, ids=part))
            gone = {row for _, row in stale}
            back = [row for row in head_now() if row.row_id in gone]
            if back:
                self._add_items(back)
                with self.engine.transaction(write=True) as tx:
                    ProjectionFeed(tx).remade(items.name)
        self._swept = True

    def _drop_stale(
        self,
        newest: Mapping[tuple[Namespace, str], int],
        head: set[int],
        head_now: Callable[[], Sequence[HeadRow]],
    ) -> None:
        """Delete the item vectors of rows no longer at HEAD, up to each item's
        newest row as the log was read (`newest`). A HEAD row's are upserted
        again, so a store catching up the same commits in another process
        never leaves a search a moment when the item has no vector; and a
        newer row's were added by a store that read the log later. HEAD is
        read again (`head_now`) right before the delete: a reset since the
        catch-up's read may have brought one of the rows back, and another
        store's rebuild given it its vector again."""
        items = self.items
        assert items is not None
        upto = {_item_id(ns, key): row for (ns, key), row in newest.items()}
        found: list[tuple[str, Mapping[str, Any]]] = []
        for chunk in chunks(list(upto)):  # see `_read_all`
            where = {"item": {"$in": list(chunk)}}
            page = self._call(partial(items.get, where=where, include=["metadatas"]))
            found += zip(page["ids"], page["metadatas"], strict=True)
        kept = head | {row.row_id for row in head_now()}
        stale = [
            id_
            for id_, meta in found
            if meta["row"] not in kept and meta["row"] <= upto[meta["item"]]
        ]
        for chunk in chunks(stale):
            self._call(partial(items.delete, ids=list(chunk)))

    def _add_items(self, rows: Sequence[HeadRow]) -> None:
        items = self.items
        assert items is not None
        ids, texts, metadatas = [], [], []
        added: dict[int, list[str]] = {}
        for row in sorted(rows, key=lambda r: r.row_id):  # see `_top_up`
            for label, text in self.item_texts(row.value, row.index):
                ids.append(f"{row.row_id}:{label}")
                added.setdefault(row.row_id, []).append(ids[-1])
                texts.append(text)
                metadatas.append(
                    {
                        "scope": scope_key(row.scope),
                        "item": _item_id(row.namespace, row.key),
                        "row": row.row_id,
                        "key": row.key,
                        "ns": namespace_text(row.namespace),
                        **{f"l{i}": label for i, label in enumerate(row.namespace)},
                    }
                )
        for start in range(0, len(ids), _BATCH):
            part = slice(start, start + _BATCH)
            vectors = self.embed(texts[part])
            self._call(
                partial(
                    items.upsert,
                    ids=ids[part],
                    embeddings=vectors,
                    metadatas=metadatas[part],
                )
            )
        self._drop_erased(items, added)

    def _apply_changes(
        self, *, scope: Namespace | None = None, after: int = 0, upto: int = 0
    ) -> None:
        if scope is not None:

            def described() -> list[ChangeRow]:
                with self.engine.transaction(write=False) as tx:
                    return [row for row in tx.change_rows(scope=scope) if row.text.new]

            drop = partial(self._drop_copies, scope=scope)
            self._remake(self.changes, scope, described, self._add_changes, drop)
            return
        rows = self._change_rows(after, upto)
        if self._ahead:  # skip what `ready_for` added already
            ahead = self._ahead.intersection(row.row_id for row in rows)
            self._ahead -= ahead
            rows = [row for row in rows if row.row_id not in ahead]
        self._add_changes([row for row in rows if row.text.new])

    def _change_rows(
        self, after: int, upto: int, *, piece: int | None = None
    ) -> list[ChangeRow]:
        """The change rows of the commits `after < seq <= upto`, read `piece`
        commits a transaction (default: all in one)."""
        rows: list[ChangeRow] = []
        while after < upto:
            with self.engine.transaction(write=False) as tx:
                end = upto
                if piece is not None:
                    seqs = ProjectionFeed(tx).commit_seqs_after(after, limit=piece)
                    end = min([upto, *seqs[-1:]])
                rows += tx.change_rows(after=after, upto=end)
            after = end
        return rows

    def embed_ahead(self, *, batch: int, piece: int) -> int:
        """Embed the changes of the next `batch` commits past what the change
        collection holds (and past what this did before), and keep their
        vectors in memory for the catch-up that writes them to Chroma and
        moves the mark. Returns how many commits it embedded (0: none left,
        or `_AHEAD_MOST` vectors kept already).

        For a follower while writes land: the model runs without Python's
        global lock, which a Chroma write holds for its whole length (about
        a millisecond a vector, the writes' threads waiting); the log is read
        `piece` commits a transaction, each holding the log's lock, which the
        writes wait for, only briefly; and nothing is written, to the log or
        to Chroma. The catch-up at the pause then costs no model time. Like
        the follower's catch-up, it is left to the process holding the lease
        on it, if another does.
        """
        name = self.changes.name
        with self._pending_lock:
            if len(self._early) >= _AHEAD_MOST:
                return 0
            start = self._early_seq
        if not self._lease(name):
            return 0
        with self.engine.transaction(write=False) as tx:
            feed = ProjectionFeed(tx)
            start = max(start, feed.state(name).seq)
            seqs = feed.commit_seqs_after(start, limit=batch)
        if not seqs:
            return 0
        rows = self._change_rows(start, seqs[-1], piece=piece)
        texts = dict.fromkeys(_embedded(row) for row in rows if row.text.new)
        with self._pending_lock:
            missing = [t for t in texts if t not in self._early]
        vectors = self.embeddings.embed_documents(missing) if missing else []
        with self._pending_lock:
            self._generation += 1
            for text, vector in zip(missing, vectors, strict=True):
                self._early[text] = (
                    self._generation,
                    np.asarray(vector, dtype=np.float32),
                )
            self._early_seq = max(self._early_seq, seqs[-1])
        return len(seqs)

    def write_ahead(self, seconds: float) -> int:
        """Write to Chroma what `embed_ahead` embedded, moving the mark, for
        about `seconds` at most (one batch may run over): for a store that
        closes right after a burst of writes, whose vectors would otherwise
        be lost with the process. Returns how many commits were written.
        No model runs but for a change `embed_ahead` did not reach."""
        deadline = time.monotonic() + seconds
        written = 0
        while self._early and time.monotonic() < deadline:
            done = self.catch_up(
                items=False, steps=1, batch=_BATCH, upto=self._early_seq, shared=False
            )
            if not done:
                break
            written += done
        return written

    def _add_changes(self, rows: Sequence[ChangeRow]) -> None:
        changes = self.changes
        rows = sorted(rows, key=lambda r: r.row_id)  # see `_top_up`
        for start in range(0, len(rows), _BATCH):
            part = rows[start : start + _BATCH]
            vectors = self.embed([_embedded(row) for row in part])
            metadatas = [
                {
                    "scope": scope_key(row.scope),
                    "row": row.row_id,
                    "version": row.version,
                    "at": row.created_at.timestamp(),
                }
                for row in part
            ]
            ids = [str(row.row_id) for row in part]
            self._call(
                partial(
                    changes.upsert, ids=ids, embeddings=vectors, metadatas=metadatas
                )
            )
        self._drop_erased(changes, {row.row_id: [str(row.row_id)] for row in rows})

    def _drop_erased(self, collection: Any, added: Mapping[int, list[str]]) -> None:
        """Delete the vectors just added (`added`: their ids by log row) whose
        rows no longer hold a value: a redaction, or a reset, that landed
        after they were read. Its rebuild of the scope may be over already
        (another store's), and nothing else would take them away: an erased
        text would stay in Chroma, and found."""
        if not added:
            return
        with self.engine.transaction(write=False) as tx:
            held = ProjectionFeed(tx).holding_values(list(added))
        gone = [id_ for row, ids in added.items() if row not in held for id_ in ids]
        if gone:
            self._call(lambda: collection.delete(ids=gone))

    def rebuild(self, progress: Progress | None = None) -> int:
        """Drop both collections and make them again from the log.

        `progress` is called as in `catch_up`.
        """
        with contextlib.ExitStack() as held:
            for collection in self._collections():
                held.enter_context(self._locks[collection.name])
            self.changes = self._collection(self.changes.name, anew=True)
            if self.items is not None:
                self.items = self._collection(self.items.name, anew=True)
            with self._kept_lock:
                self._item_cap = 0  # nothing is there until catch-up says so
            self._drop_copies(items=True, changes=True)
            self._ahead.clear()
            self._scope_marks.clear()
        applied = self.catch_up(progress=progress)
        # A search during the catch-up kept what it found then, under a mark
        # the catch-up ends on again (the same newest commit): read anew.
        self._drop_copies(items=True, changes=True)
        return applied

    def _drop_copies(
        self,
        *,
        items: bool = False,
        changes: bool = False,
        scope: Namespace | None = None,
    ) -> None:
        """Forget the in-memory copies of vectors (the item copy, every
        scope's change copy, or one scope's): the next search reads them
        from Chroma again."""
        with self._kept_lock:
            if items:
                self._kept_items = _Kept.empty(str, str)
            if changes:
                self._kept.clear()
            if scope is not None:
                self._kept.pop(scope_key(scope), None)

    # -- queries --------------------------------------------------------------

    def nearest_items(
        self, prefix: Namespace, vector: Sequence[float], *, chunk: int = 64
    ) -> Iterator[list[ItemHit]]:
        """Item vectors under `prefix`, nearest first, in chunks: one hit per log
        row (its best field), with the row it was made from.

        Exact: every item vector under the prefix is compared (one matrix product
        over a copy kept in memory and topped up from Chroma), so no approximate
        index can drop a near-duplicate or another user's vector crowd one out.
        Vectors of rows no longer at HEAD may linger in the copy; callers check
        every hit against the log (invariant 2) and read on to the next chunk.
        """
        kept = self._item_vectors()
        if not len(kept.rows):
            return
        namespaces, keys = kept.tags
        order = np.arange(len(kept.rows))
        if prefix:
            text = namespace_text(prefix)
            under = (namespaces == text) | np.char.startswith(namespaces, text + ".")
            order = order[under]
        scores = self._scores(kept, order, vector)
        ranked = np.argsort(-scores, kind="stable")
        seen: set[int] = set()
        hits: list[ItemHit] = []
        for i, score in zip(order[ranked], scores[ranked].tolist(), strict=True):
            row = int(kept.rows[i])
            if row in seen:  # another field of the same row, less near
                continue
            seen.add(row)
            namespace = tuple(str(namespaces[i]).split("."))
            hits.append(ItemHit(namespace, str(keys[i]), row, score))
            if len(hits) == chunk:
                yield hits
                hits = []
        if hits:
            yield hits

    def _scores(
        self, kept: _Kept, order: np.ndarray, vector: Sequence[float]
    ) -> np.ndarray:
        """The `order` vectors' scores against `vector`, higher is nearer, in the
        index's `distance_type`, as `PostgresStore` scores: cosine similarity,
        minus the L2 distance, or the inner product."""
        query = np.asarray(vector, dtype=np.float32)
        length = float(np.linalg.norm(query)) or 1.0
        cosine: np.ndarray = kept.matrix[order] @ (query / length)
        if self.distance == "cosine":
            return cosine
        inner: np.ndarray = cosine * kept.norms[order] * length
        if self.distance == "inner_product":
            return inner
        squared = kept.norms[order] ** 2 + length**2 - 2 * inner
        distance: np.ndarray = np.sqrt(np.maximum(squared, 0.0))
        return -distance

    def query_changes(
        self, scope: Namespace, vector: Sequence[float], *, n: int
    ) -> list[ChangeHit]:
        """The `n` item changes of `scope` whose new values are nearest, best first.

        Exact: every vector of the scope is compared (one matrix product over a
        copy kept in memory and topped up from Chroma), so no approximate index
        can drop a near-duplicate, and no other scope's vectors are looked at.
        """
        kept = self._scope_vectors(scope)
        if not len(kept.rows) or n <= 0:
            return []
        scores = kept.matrix @ unit(vector)
        best = np.argsort(-scores, kind="stable")[:n]
        return [
            ChangeHit(int(kept.rows[i]), int(kept.tags[0][i]), float(scores[i]))
            for i in best
        ]

    def change_vectors(
        self, scope: Namespace, row_ids: Sequence[int]
    ) -> dict[int, np.ndarray]:
        """The unit vectors of these log rows of `scope` (rows without a value
        have none)."""
        kept = self._scope_vectors(scope)
        found = np.nonzero(np.isin(kept.rows, np.asarray(row_ids, dtype=np.int64)))
        return {int(kept.rows[i]): kept.matrix[i] for i in found[0]}

    def _scope_vectors(self, scope: Namespace) -> _Kept:
        """The scope's change vectors, topped up with the rows added since."""
        key = scope_key(scope)
        with self._kept_lock:
            kept = self._top_up(
                self.changes,
                self._kept.get(key) or _Kept.empty(int),
                self._marks.get(self.changes.name),
                {"scope": key},
                lambda meta: (meta["version"],),
            )
            self._kept[key] = kept
            return kept

    def _item_vectors(self) -> _Kept:
        """Every item vector, topped up with the rows added since."""
        if self.items is None:
            return _Kept.empty(str, str)
        with self._kept_lock:
            kept = self._kept_items
            count, self._counted = self._counted, None
            if count is None:
                count = self._call(self.items.count)
            if len(kept.rows) > 2 * count + 1000:
                kept = _Kept.empty(str, str)  # mostly rows no longer at HEAD: read anew
            self._kept_items = self._top_up(
                self.items,
                kept,
                self._marks.get(self.items.name),
                None,
                lambda meta: (meta["ns"], meta["key"]),
                cap=self._item_cap,
            )
            return self._kept_items

    def _read_all(
        self,
        collection: Any,
        where: dict[str, Any] | None = None,
        include: Sequence[str] = ("embeddings", "metadatas"),
    ) -> dict[str, list[Any]]:
        """The ids, and what `include` names, of the vectors `where` selects
        (default: all), read a page at a time: Chroma reads one page's vectors
        with one SQL variable per id, and SQLite allows 32,766 (a scope of 40k
        changes failed in one read). A vector met twice, on two pages a
        concurrent write shifted, counts once.
        """
        found: dict[str, list[Any]] = {"ids": [], **{part: [] for part in include}}
        seen: set[str] = set()
        offset = 0
        while True:
            page = self._call(
                partial(
                    collection.get,
                    where=where,
                    include=list(include),
                    limit=_SWEEP_PAGE,
                    offset=offset,
                )
            )
            for i, id_ in enumerate(page["ids"]):
                if id_ not in seen:
                    seen.add(id_)
                    found["ids"].append(id_)
                    for part in include:
                        found[part].append(page[part][i])
            offset += len(page["ids"])
            if len(page["ids"]) < _SWEEP_PAGE:
                return found

    def _top_up(
        self,
        collection: Any,
        kept: _Kept,
        mark: ProjectionState | None,
        where: dict[str, Any] | None,
        tags: Callable[[Mapping[str, Any]], tuple[Any, ...]],
        *,
        cap: int | None = None,
    ) -> _Kept:
        """`kept` with the collection's vectors of rows after its last one.

        Catch-up adds a batch's rows in row order, so "rows after the last one
        kept" is what is new, even read while a catch-up is adding more; nothing
        is new while the collection's mark has not moved since the last top-up;
        a projection made again from older rows, or a scope of it (by any
        store: the mark's `remade` moved), empties what was kept first.

        `cap` (the item collection's): a catch-up writes each changed item's
        HEAD row, which may belong to a commit after its batch, so a row of the
        next batch can land below one already read. The rows up to `cap` (the
        last row of a commit the collection had applied when it was read) are
        all there; those above it are read again next time (`early` keeps
        them from being kept twice).
        """
        if mark is not None and kept.mark == mark:
            return kept
        if mark and kept.mark and kept.mark.remade != mark.remade:
            kept = kept.emptied()  # a scope was made again since (another store's)
        newer: dict[str, Any] = {"row": {"$gt": kept.last_row}}
        condition = {"$and": [where, newer]} if where else newer
        found = self._read_all(collection, condition)
        fresh = [i for i, id_ in enumerate(found["ids"]) if id_ not in kept.early]
        if fresh:
            metas = [found["metadatas"][i] for i in fresh]
            kept = kept.extend(
                [m["row"] for m in metas],
                list(zip(*(tags(m) for m in metas), strict=True)),
                [found["embeddings"][i] for i in fresh],
            )
        if cap is not None:  # what was read above `cap` is read again next time
            rows = zip(found["ids"], found["metadatas"], strict=True)
            kept = replace(
                kept,
                last_row=min(kept.last_row, cap),
                early=frozenset(id_ for id_, meta in rows if meta["row"] > cap),
            )
        return replace(kept, mark=mark)
