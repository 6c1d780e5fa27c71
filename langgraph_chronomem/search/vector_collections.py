"""The two Chroma collections of a log (HEAD items, item changes): their names,
opening or making them, and every call made to Chroma.

Locks that live here (the vector side's other locks: `search/vectors.py`):

- `Collections.locks[name]`, one per collection: held while its Chroma side
  and its mark in the log are written (a catch-up, one scope made ready, a
  rebuild, an erasure), so a search that catches up the items never waits
  for change vectors. Taken before any other lock of the vector side; when
  both are held (`holding`), the items' first.
- `Collections._chroma`: one Chroma call at a time (embedded Chroma read while
  another thread writes fails, "Error finding id"). Held for one call alone,
  never while waiting for another lock: the innermost of all.

    >>> collection_name(CHANGES, "toy")  # as named before logs had names
    'chronomem-changes-03fd904e5d6f'
"""

from __future__ import annotations

import contextlib
import hashlib
import json
import secrets
import threading
import time
from collections.abc import Callable, Iterator, Sequence
from functools import partial
from typing import Any, TypeVar

import chromadb.errors
import httpx

from langgraph_chronomem.engine.describe import CHANGE_TEXT_VERSION
from langgraph_chronomem.engine.feed import VECTOR_LOG, ProjectionFeed, ProjectionState
from langgraph_chronomem.engine.protocol import LogEngine
from langgraph_chronomem.engine.rows import namespace_text
from langgraph_chronomem.engine.types import Namespace
from langgraph_chronomem.search.chroma import server_address, unreachable

__all__ = [
    "CHANGES",
    "ITEMS",
    "Collections",
    "collection_name",
    "collection_names",
    "item_id",
    "lagging",
    "lags",
    "log_name",
]

ITEMS = "chronomem-items"
CHANGES = "chronomem-changes"
_RETIRED = (  # collections of older versions, dropped with their marks
    "chronomem-descriptors",
    ITEMS,
    CHANGES,
)
PAGE = 5000  # vectors read at a time (a sweep, a top-up)
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

T = TypeVar("T")


def item_id(namespace: Namespace, key: str) -> str:
    """The id an item's vectors carry in their metadata (`item`)."""
    return hashlib.sha1(f"{namespace_text(namespace)}\x00{key}".encode()).hexdigest()


def lags(feed: ProjectionFeed, name: str) -> bool:
    """Whether projection `name` has commits, or a rebuild, still to apply."""
    state = feed.state(name)
    return bool(state.rebuild or feed.commit_seqs_after(state.seq, limit=1))


def lagging(engine: LogEngine, names: Sequence[str]) -> bool:
    """Whether any of these projections has commits, or a rebuild, still to
    apply: read in the log alone, with no Chroma open."""
    with engine.transaction(write=False) as tx:
        feed = ProjectionFeed(tx)
        return any(lags(feed, name) for name in names)


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


class Collections:
    """A log's collections on one Chroma client, opened (or made) on creation:
    those of older versions dropped, those named before logs had names moved
    to their names (see `VectorIndex` for the arguments).

    `changes` and `items` (`None` when items are not embedded) are the open
    collections; `make(anew=True)` replaces them.
    """

    def __init__(
        self,
        engine: LogEngine,
        client: Any,
        embedder: str,
        item_fields: Sequence[str] | None,
        *,
        log: str | None,
        own_chroma: bool,
    ) -> None:
        self.engine = engine
        self.client = client
        self.embedder = embedder
        self.item_fields = None if item_fields is None else list(item_fields)
        self._chroma = threading.Lock()
        listed = {c.name for c in self.call(client.list_collections)}
        # and the change vectors of an earlier `change_text` (1 was unnumbered)
        earlier = [None, *range(2, CHANGE_TEXT_VERSION)]
        older = {
            collection_name(CHANGES, embedder, text=t, log=name)
            for t in earlier
            for name in {None, log}
        }
        retired = listed & {*_RETIRED, *older}
        for name in retired:
            self.call(partial(client.delete_collection, name))
        with engine.transaction(write=bool(retired)) as tx:
            for name in retired:
                ProjectionFeed(tx).forget(name)
        items, changes = collection_names(embedder, item_fields, log)
        if log is not None:
            unnamed = collection_names(embedder, item_fields, None)
            for old, new in zip(unnamed, (items, changes), strict=True):
                if old is not None and new is not None:
                    self._name_own(old, new, listed, rename=own_chroma)
        self.changes = self.make(changes)
        self.items = None if items is None else self.make(items)
        self.locks = {c.name: threading.Lock() for c in self.all()}

    def all(self) -> list[Any]:
        """The open collections: the items' (if any) first, then the changes'."""
        return [self.changes] if self.items is None else [self.items, self.changes]

    @contextlib.contextmanager
    def holding(self) -> Iterator[None]:
        """Hold every collection's lock, the items' first: no catch-up of this
        store writes a collection, or reads its rebuild requests, meanwhile."""
        with contextlib.ExitStack() as held:
            for collection in self.all():
                held.enter_context(self.locks[collection.name])
            yield

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
            collection = self.call(
                lambda: self.client.get_collection(old, embedding_function=None)
            )
            self.call(partial(collection.modify, name=new))
        elif old in listed and used:
            with contextlib.suppress(chromadb.errors.NotFoundError):
                self.call(partial(self.client.delete_collection, old))
        if used or renamed:
            with self.engine.transaction(write=True) as tx:
                ProjectionFeed(tx).forget(old)

    def make(self, name: str, *, anew: bool = False) -> Any:
        """Open a collection, or make it (`anew`: again) from nothing.

        One made anew is deleted first, then its mark reset in the log, then
        it is made: a crash at any point leaves it missing (made again on the
        next open) or visibly behind. Another store's catch-up that read the
        old mark cannot save one over the reset (compare and set), and one
        that read the reset mark writes into the new collection, or fails on
        the deleted one and opens the new one.
        """
        client = self.client
        names = self.call(lambda: {c.name for c in client.list_collections()})
        if not anew and name in names:
            return self.call(
                lambda: client.get_collection(name, embedding_function=None)
            )
        if anew:
            with contextlib.suppress(chromadb.errors.NotFoundError):
                self.call(partial(client.delete_collection, name))
        with self.engine.transaction(write=True) as tx:
            ProjectionFeed(tx).save(name, ProjectionState(0))
        return self.call(
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

    def make_anew(self) -> None:
        """Drop both collections and make them again, empty, their marks reset.
        The caller holds every collection's lock (`holding`)."""
        self.changes = self.make(self.changes.name, anew=True)
        if self.items is not None:
            self.items = self.make(self.items.name, anew=True)

    def check(self) -> None:
        """Read each collection once, so a damaged one fails here, on open.

        Raises:
            Exception: Whatever Chroma raises for a collection it cannot read.
        """
        for collection in self.all():
            self.call(collection.count)
            self.call(partial(collection.get, limit=1, include=["embeddings"]))

    def call(self, call: Callable[[], T]) -> T:
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

    def read_all(
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
            page = self.call(
                partial(
                    collection.get,
                    where=where,
                    include=list(include),
                    limit=PAGE,
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
            if len(page["ids"]) < PAGE:
                return found

    def ids_of_rows(self, collection: Any, rows: Sequence[int]) -> list[str]:
        """The ids of `collection`'s vectors made from these log rows (found
        by the row their metadata names), in one read: a `chunks` of rows."""
        where = {"row": {"$in": list(rows)}}
        found = self.call(partial(collection.get, where=where, include=[]))
        ids: list[str] = found["ids"]
        return ids

    def delete(self, collection: Any, ids: Sequence[str]) -> None:
        """Delete these vectors, as many a call as Chroma takes (measured: 5,000
        deletions took 1.3 s in calls of 500, 0.86 s in one call)."""
        size = self.client.get_max_batch_size()
        for start in range(0, len(ids), size):
            self.call(partial(collection.delete, ids=list(ids[start : start + size])))
