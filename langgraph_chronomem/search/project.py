"""Log rows into the collections: the vectors of the items and changes some
commits made (or of a whole scope, made again), upserted, and the vectors
they replace deleted, never leaving a search a moment when an item has none.

The caller holds the collection's lock (`Collections.locks`); nothing here
moves a mark (`search/catchup.py` does). Several stores on one log may apply
the same commits at once: every step is one each may repeat.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from functools import partial
from typing import Any, TypeVar

from langgraph_chronomem.engine.feed import HeadRow, ProjectionFeed
from langgraph_chronomem.engine.protocol import LogEngine
from langgraph_chronomem.engine.rows import (
    ChangeRow,
    chunks,
    namespace_from_text,
    namespace_text,
    scope_key,
)
from langgraph_chronomem.engine.types import Namespace
from langgraph_chronomem.search.embedding import EmbeddingCache, ItemTexts, change_text
from langgraph_chronomem.search.exact import KeptVectors
from langgraph_chronomem.search.vector_collections import PAGE, Collections, item_id

__all__ = ["BATCH", "Projector"]

BATCH = 256  # commits per catch-up step, and vectors per upsert
_Row = TypeVar("_Row", HeadRow, ChangeRow)  # a log row a collection holds


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


class Projector:
    """Writes log rows' vectors into a log's collections.

    Args:
        engine: The log.
        collections: The collections written.
        cache: The model, and the vectors computed before their catch-up.
        item_texts: What is embedded of an item.
        kept: The copies searches read, dropped where a scope is made again.
    """

    def __init__(
        self,
        engine: LogEngine,
        collections: Collections,
        cache: EmbeddingCache,
        item_texts: ItemTexts,
        kept: KeptVectors,
    ) -> None:
        self.engine = engine
        self.collections = collections
        self.cache = cache
        self.item_texts = item_texts
        self.kept = kept
        self.ahead: set[int] = set()  # change rows added before their commits' turn
        self._swept = False  # whether the item collection was swept since open

    # -- items ----------------------------------------------------------------

    def apply_items(
        self, *, scope: Namespace | None = None, after: int = 0, upto: int = 0
    ) -> None:
        """Make `scope`'s item vectors again, or apply the commits
        `after < seq <= upto` to the item collection."""
        items = self.collections.items
        assert items is not None
        if scope is not None:

            def head() -> list[HeadRow]:
                with self.engine.transaction(write=False) as tx:
                    return ProjectionFeed(tx).scope_head(scope)

            drop = partial(self.kept.drop, items=True)
            self._remake(items, scope, head, self.add_items, drop)
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
        self.add_items(rows)
        # A reset landing between the drop's last look at HEAD and its delete
        # brought an older row back, and another store's rebuild of its scope
        # gave it a vector the delete took: add it again, and have every
        # store read its copy anew (a copy read meanwhile lacks it for good).
        added = _add_unseen(head_now, self.add_items, rows)
        if any(row.row_id < newest[(row.namespace, row.key)] for row in added):
            with self.engine.transaction(write=True) as tx:
                ProjectionFeed(tx).remade(items.name)

    def sweep_items_once(self) -> None:
        """Delete every item vector whose row is no longer at HEAD: once per
        open, when a catch-up first reaches the log's end. A catch-up drops
        the vectors of the items its commits changed, but a crash between a
        commit and that delete, or a catch-up of another store that added a
        row's vector after the one that replaced it had dropped the old ones,
        leaves one nothing else would take away. HEAD is read after the
        vectors are listed; a row a reset brings back between that read and
        the delete gets its vector again."""
        items = self.collections.items
        assert items is not None
        if self._swept:
            return
        found = self.collections.read_all(items, include=("metadatas",))
        listed = list(zip(found["ids"], found["metadatas"], strict=True))
        keys = list({(namespace_from_text(m["ns"]), m["key"]) for _, m in listed})

        def head_now() -> list[HeadRow]:
            with self.engine.transaction(write=False) as tx:
                return ProjectionFeed(tx).head_rows(keys)

        head = {row.row_id for row in head_now()}
        stale = [(id_, meta["row"]) for id_, meta in listed if meta["row"] not in head]
        if stale:
            for start in range(0, len(stale), PAGE):
                part = [id_ for id_, _ in stale[start : start + PAGE]]
                self.collections.call(partial(items.delete, ids=part))
            gone = {row for _, row in stale}
            back = [row for row in head_now() if row.row_id in gone]
            if back:
                self.add_items(back)
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
        items = self.collections.items
        assert items is not None
        call = self.collections.call
        upto = {item_id(ns, key): row for (ns, key), row in newest.items()}
        found: list[tuple[str, Mapping[str, Any]]] = []
        for chunk in chunks(list(upto)):  # see `Collections.read_all`
            where = {"item": {"$in": list(chunk)}}
            page = call(partial(items.get, where=where, include=["metadatas"]))
            found += zip(page["ids"], page["metadatas"], strict=True)
        kept = head | {row.row_id for row in head_now()}
        stale = [
            id_
            for id_, meta in found
            if meta["row"] not in kept and meta["row"] <= upto[meta["item"]]
        ]
        for chunk in chunks(stale):
            call(partial(items.delete, ids=list(chunk)))

    def add_items(self, rows: Sequence[HeadRow]) -> None:
        """Upsert these HEAD rows' item vectors (one per embedded field)."""
        items = self.collections.items
        assert items is not None
        ids, texts, metadatas = [], [], []
        added: dict[int, list[str]] = {}
        for row in sorted(rows, key=lambda r: r.row_id):  # see `KeptVectors._top_up`
            for label, text in self.item_texts(row.value, row.index):
                ids.append(f"{row.row_id}:{label}")
                added.setdefault(row.row_id, []).append(ids[-1])
                texts.append(text)
                metadatas.append(
                    {
                        "scope": scope_key(row.scope),
                        "item": item_id(row.namespace, row.key),
                        "row": row.row_id,
                        "key": row.key,
                        "ns": namespace_text(row.namespace),
                        **{f"l{i}": label for i, label in enumerate(row.namespace)},
                    }
                )
        for start in range(0, len(ids), BATCH):
            part = slice(start, start + BATCH)
            vectors = self.cache.embed(texts[part])
            self.collections.call(
                partial(
                    items.upsert,
                    ids=ids[part],
                    embeddings=vectors,
                    metadatas=metadatas[part],
                )
            )
        self._drop_erased(items, added)

    # -- changes --------------------------------------------------------------

    def apply_changes(
        self, *, scope: Namespace | None = None, after: int = 0, upto: int = 0
    ) -> None:
        """Make `scope`'s change vectors again, or apply the commits
        `after < seq <= upto` to the change collection (but the rows added
        ahead, `add_changes_ahead`)."""
        if scope is not None:

            def described() -> list[ChangeRow]:
                with self.engine.transaction(write=False) as tx:
                    return [row for row in tx.change_rows(scope=scope) if row.text.new]

            changes = self.collections.changes
            drop = partial(self.kept.drop, scope=scope)
            self._remake(changes, scope, described, self.add_changes, drop)
            return
        rows = self.change_rows(after, upto)
        if self.ahead:  # skip what `add_changes_ahead` added already
            ahead = self.ahead.intersection(row.row_id for row in rows)
            self.ahead -= ahead
            rows = [row for row in rows if row.row_id not in ahead]
        self.add_changes([row for row in rows if row.text.new])

    def change_rows(
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

    def add_changes_ahead(self, rows: Sequence[ChangeRow]) -> None:
        """`add_changes`, before their commits' turn: skipped when a catch-up
        reaches those commits."""
        self.add_changes(rows)
        self.ahead.update(row.row_id for row in rows)

    def add_changes(self, rows: Sequence[ChangeRow]) -> None:
        """Upsert these change rows' vectors (each row's, as it left the item)."""
        changes = self.collections.changes
        rows = sorted(rows, key=lambda r: r.row_id)  # see `KeptVectors._top_up`
        for start in range(0, len(rows), BATCH):
            part = rows[start : start + BATCH]
            vectors = self.cache.embed([change_text(row) for row in part])
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
            self.collections.call(
                partial(
                    changes.upsert, ids=ids, embeddings=vectors, metadatas=metadatas
                )
            )
        self._drop_erased(changes, {row.row_id: [str(row.row_id)] for row in rows})

    # -- both -----------------------------------------------------------------

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
            self.collections.call(lambda: collection.delete(ids=gone))

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
        call = self.collections.call
        rows = read()
        add(rows)
        drop_copies()  # the rows made again can be older than a copy's
        where = {"scope": scope_key(scope)}
        found = call(lambda: collection.get(where=where, include=["metadatas"]))
        seen = list(rows) + list(read())
        kept = {row.row_id for row in seen}
        stale = [
            id_
            for id_, meta in zip(found["ids"], found["metadatas"], strict=True)
            if meta["row"] not in kept
        ]
        if stale:
            call(lambda: collection.delete(ids=stale))
        _add_unseen(read, add, seen)
        drop_copies()
