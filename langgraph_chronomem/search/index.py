"""Everything a store finds by meaning: its embedder, its Chroma side, its resolver.

Built lazily: a store that never searches by meaning never imports Chroma nor
loads a model. LangGraph's `IndexConfig` convention decides what is embedded:

    # the default model
    ChronoStore.from_path("./memory", index={"fields": ["text"]})
    # your own
    ChronoStore.from_path(
        "./memory",
        index={"embed": OpenAIEmbeddings(), "dims": 1536, "fields": ["text"]},
    )

What `embed` may be, and how the settings are kept: `search/settings.py`. Item
changes (for the undo search) are embedded with the same model, HEAD items only
when `index` is given.
"""

from __future__ import annotations

import contextlib
import functools
import logging
import threading
import time
from collections.abc import Callable, Iterator, Mapping, Sequence
from pathlib import Path
from typing import Any, TypeVar

import chromadb.errors
from langchain_core.embeddings import Embeddings
from langgraph.store.base import IndexConfig

from langgraph_chronomem import models
from langgraph_chronomem.engine.base import FULL_TEXT
from langgraph_chronomem.engine.protocol import LogEngine
from langgraph_chronomem.engine.types import Write
from langgraph_chronomem.errors import ChronomemError, ConfigError, StorageError
from langgraph_chronomem.search.chroma import (
    CHROMA_DIR,
    NO_CHROMA,
    ChromaLock,
    ChromaServer,
    closed_chroma,
    embedded_chroma,
    forget_chroma,
    scrub_embedded,
)
from langgraph_chronomem.search.embedding import ItemTexts
from langgraph_chronomem.search.erase import apply_erasures, held
from langgraph_chronomem.search.follow import Follower
from langgraph_chronomem.search.resolve import Resolver, ResolverConfig
from langgraph_chronomem.search.settings import (
    AsyncOnlyEmbeddings,
    IndexSettings,
    caller_loop,
    embedder_name,
    embeddings_for,
)
from langgraph_chronomem.search.vector_collections import (
    collection_names,
    lagging,
    log_name,
)
from langgraph_chronomem.search.vectors import VectorIndex

__all__ = [
    "SearchIndex",
    "caller_loop",
    "load_reranker",
]

logger = logging.getLogger(__name__)
T = TypeVar("T")
# Pauses before opening the collections again, while another store's reindex
# may still be making them.
_REOPEN_PAUSES = (0.0, 0.2, 0.5)


def _remade(exc: chromadb.errors.ChromaError) -> bool:
    """Whether Chroma says a collection is gone, or is being made again by
    another store (its segments not there yet)."""
    return isinstance(exc, chromadb.errors.NotFoundError) or (
        "Missing metadata segment" in str(exc)
    )


_FOLLOW_BATCH = 32  # commits per follower step: what a search may wait for
_BURST_PIECE = 4  # commits read at a time by a follower step during a burst
# Seconds `close` takes at most to write the vectors its follower embedded
# ahead during a burst of writes that ended just before.
_CLOSE_WRITES = 1.0


class SearchIndex:
    """A store's semantic side.

    Args:
        engine: The log.
        directory: Where the embedded Chroma keeps its files (`<directory>/chroma`);
            `None` for none (a store on PostgreSQL given no `chroma_path`): then
            only `chroma_client` can hold vectors, and without it searching by
            meaning raises `ConfigError`, while writes leave the vectors to
            catch up from the log when a Chroma is given.
        index: LangGraph's `IndexConfig`; `None` indexes item changes only (for `undo`).
        chroma_client: A Chroma client to use instead of the embedded one, e.g.
            `chromadb.HttpClient(...)` when several processes share the store.
        chroma_server: A Chroma server to connect to instead (on first use,
            and again after a failed attempt, so a store opens while the
            server is down); the client is the index's to close.
        resolver: The undo search's knobs.
    """

    def __init__(
        self,
        engine: LogEngine,
        directory: Path | None,
        *,
        index: IndexConfig | None = None,
        chroma_client: Any = None,
        chroma_server: ChromaServer | None = None,
        resolver: ResolverConfig | None = None,
    ) -> None:
        settings = IndexSettings.of(index)
        self.engine = engine
        self.directory = directory
        self.config = resolver or ResolverConfig()
        settings = settings.settled(engine, given=index is not None)
        self.item_fields = settings.fields
        self.distance = settings.distance
        self._embed = settings.embed
        self._unusable = settings.unusable
        # read on open: `kept_projections` is asked inside a transaction
        self._log = log_name(engine)
        self.item_texts = ItemTexts(self.item_fields)
        self._client = chroma_client
        self._server = chroma_server
        self._owns_client = False
        self._lock = threading.Lock()
        self._embeddings: Embeddings | None = None
        self._vectors: VectorIndex | None = None
        self._chroma_lock: ChromaLock | None = None
        self._resolver: Resolver | None = None
        self._scrubbed = False  # whether `scrub` cleaned the embedded Chroma
        self._follower = Follower(
            self._follow,
            name=f"chronomem-follow-{directory or 'server'}",
            background=True,
            light=functools.partial(self._follow, light=True),
        )

    @property
    def has_chroma(self) -> bool:
        """Whether there is a Chroma to hold vectors: the caller's client, a
        server to connect to, or a directory for the embedded one."""
        return (
            self._client is not None
            or self._server is not None
            or self.directory is not None
        )

    def kept_projections(self) -> tuple[str, ...]:
        """The collections this store's follower keeps up with the log (with
        a Chroma: the change vectors undo searches, and the items for an
        `index=`), made or not: `stats` shows one never made (a Chroma server
        down since the first open) as behind every commit."""
        if not self._follows:
            return ()
        names = collection_names(
            embedder_name(self._embed), self.item_fields, self._log
        )
        return tuple(name for name in names if name is not None)

    def _async_only(self) -> bool:
        """Whether the model answers only on the caller's event loop (an
        `embed` given as an async function); loads no model to tell."""
        if self._embed is None or isinstance(self._embed, str):
            return False
        return isinstance(self.embeddings, AsyncOnlyEmbeddings)

    @property
    def _follows(self) -> bool:
        """Whether the follower keeps vectors up with the log: there is a
        Chroma to hold them and a model this open can embed with."""
        return self.has_chroma and self._unusable is None

    @property
    def _opens_vectors(self) -> bool:
        """Whether the follower opens the vectors itself, when they lag:
        always for an `index=`, else as `_follows_writes` says."""
        return self.indexes_items or self._follows_writes

    @property
    def _follows_writes(self) -> bool:
        """Whether a store without `index=` embeds its changes as writes land
        (`ResolverConfig.follow_writes`; by default, unless its Chroma is the
        embedded one, which one process holds while it has it open)."""
        if self.config.follow_writes is not None:
            return self.config.follow_writes
        return self._client is not None or self._server is not None

    @property
    def indexes_items(self) -> bool:
        """Whether items are embedded for `search(query=...)`."""
        return self.item_fields is not None

    @property
    def embeddings(self) -> Embeddings:
        """The embedding model (loaded on first use)."""
        with self._lock:
            if self._embeddings is None:
                self._embeddings = embeddings_for(self._embed)
            return self._embeddings

    def vectors(self) -> VectorIndex:
        """The Chroma projections (opened on first use).

        Raises:
            ConfigError: If the store's index needs a model this open lacks,
                another process has the embedded Chroma open, or there is no
                Chroma to open (`NO_CHROMA`).
        """
        if self._unusable:
            raise ConfigError(self._unusable)
        if not self.has_chroma:
            raise ConfigError(NO_CHROMA)
        embeddings = self.embeddings
        with self._lock:
            if self._vectors is None:
                self._vectors = self._open_vectors(embeddings)
            return self._vectors

    def _open_vectors(self, embeddings: Embeddings) -> VectorIndex:
        """The projections on the caller's client, a Chroma server, or the
        embedded Chroma.

        An embedded Chroma that cannot be opened or read (what a kill inside a
        Chroma write, or a damaged file, leaves) is moved aside with a warning and
        made again: it is derived data, and the log rebuilds it.
        """

        def projections(client: Any) -> VectorIndex:
            return VectorIndex(
                self.engine,
                client,
                embeddings,
                embedder_name(self._embed),
                item_fields=self.item_fields,
                distance=self.distance,
                log=self._log,
                own_chroma=client is not self._client,
                on_lag=self._follower.poke,
            )

        if self._client is None and self._server is not None:
            self._client, self._owns_client = self._server.connect(), True
        if self._client is not None:
            return projections(self._client)
        assert self.directory is not None  # vectors() checked has_chroma
        path = self.directory / CHROMA_DIR
        if self._chroma_lock is None:  # held already when made again
            self._chroma_lock = ChromaLock.acquire(path)
        try:
            return projections(embedded_chroma(path)).check()
        except ChronomemError:
            raise
        except Exception as exc:  # Chroma's own errors are of many kinds
            aside = path.with_name(f"{CHROMA_DIR}.broken-{time.time_ns()}")
            logger.warning(
                "the vector index at %s cannot be used (%s: %s); moved it to %s "
                "and rebuilding it from the log",
                path, type(exc).__name__, str(exc).splitlines()[0], aside,
            )  # fmt: skip
            path.rename(aside)
            forget_chroma(path)
            return projections(embedded_chroma(path))

    def resolver(self) -> Resolver:
        """The undo search (its reranker loads on first use)."""
        with self._lock:
            if self._resolver is None:
                config = self.config
                self._resolver = Resolver(
                    self.engine,
                    lambda: self._on_vectors(lambda v: v.present(changes=True)),
                    config,
                    functools.cache(functools.partial(load_reranker, config)),
                    models.common_words,
                )
            return self._resolver

    def texts_to_embed(self, writes: Sequence[Write]) -> list[str]:
        """The texts a batch's puts will need vectors for (empty without `index`,
        or without a Chroma: the vectors then catch up when one is given)."""
        if not self.indexes_items or not self.has_chroma:
            return []
        if self._unusable:
            raise ConfigError(self._unusable)
        return [
            text
            for write in writes
            if write.value is not None
            for _, text in self.item_texts(write.value, write.index)
        ]

    def after_commit(self, known: Mapping[str, list[float]]) -> None:
        """Hand a committed write to the follower, which brings the vectors and
        the full-text index up to the log in the background.

        `known` holds the vectors the write computed for its texts. A store
        without `index` embeds its changes (what undo searches) in the
        follower too: the follower opens Chroma and loads the model in its own
        thread, never in the write's.

        The write has committed whatever happens here: a failure (a model or
        Chroma error) is logged, not raised, and the next write, search or open
        catches up, while reads stay correct because every hit is checked
        against HEAD.
        """
        # Read as attributes: every put asks.
        if self._vectors is None and self.item_fields is None:
            if self._follows and self._follows_writes:
                self._follower.poke()
            return
        try:
            vectors = self.vectors()
            if isinstance(self.embeddings, AsyncOnlyEmbeddings):
                # Such a model answers only on the caller's event loop, which
                # the follower has none of: catch up here, in the call's thread.
                vectors.catch_up(changes=False, upto=vectors.last_seq())
                return
            vectors.remember(known)
        except Exception as exc:
            # A Chroma server that is away: the follower says so, once
            away = isinstance(exc, StorageError)
            logger.log(
                logging.DEBUG if away else logging.WARNING,
                "vectors lag behind the log; the next write or search retries",
                exc_info=True,
            )
        self._follower.poke()

    def _follow(self, *, asked: bool = False, light: bool = False) -> bool:
        """The follower's step: a few batches of commits into each collection,
        then the full-text index. Returns whether more may remain.

        A `light` step, taken while a burst of writes goes on, embeds the
        changes ahead and keeps their vectors (`VectorIndex.embed_ahead`):
        writing them to Chroma and the full-text index, which the writes
        would wait for, is left to the step after the burst.

        Chroma is not opened only to find nothing to do: each open of an
        embedded one writes its empty index files again, from memory it
        never fills (see `scrub`); nor, unless `asked` (by `settle`), for a
        store whose change vectors do not follow writes (`follow_writes`).
        The follower's catch-up of the change vectors is shared by the
        processes on the log (a lease: one embeds, the others skip); one
        `asked` does it whatever the lease says."""
        applied = 0
        follows = asked or self._opens_vectors
        if light and not self._lags(follows):
            return False
        if self._vectors is not None or self._lags(follows):
            if self._vectors is None:  # a close meanwhile need not wait for it
                with self._follower.detached():
                    models.load_embeddings(self.embeddings)
            if light:
                ahead = self._on_vectors(
                    lambda vectors: vectors.embed_ahead(
                        batch=_FOLLOW_BATCH, piece=_BURST_PIECE
                    )
                )
                return ahead > 0
            applied = self._on_vectors(
                lambda vectors: vectors.catch_up(
                    steps=1, batch=_FOLLOW_BATCH, shared=not asked
                )
            )
        with self.engine.transaction(write=True) as tx:
            indexed = tx.index_changes(limit=_FOLLOW_BATCH)
        return applied > 0 or indexed == _FOLLOW_BATCH

    @contextlib.contextmanager
    def erasing(self) -> Iterator[Callable[[], bool]]:
        """For changes to the log that erase values (a redaction, a
        compaction): the erased values are taken out of the vector
        collections at the cost of what was erased, by the function this
        yields, called after the changes commit: the erased rows' vectors
        deleted, the few rows whose words read an erased value embedded
        again (`search/erase.py`), every other vector left as it is. It
        returns whether the collections were brought to the log; if not (a
        Chroma server away, a model that cannot be had: logged), the log
        asks for a rebuild of the scope, which the next catch-up makes. The
        collections' locks are held until the block ends, so no catch-up of
        this store makes the scope again first. A store that never made a
        collection opens none.
        """
        vectors = None
        if self.has_chroma and self._made_collections():
            try:
                vectors = self.vectors()
            except (ConfigError, StorageError) as exc:
                logger.warning("the vectors are made again later: %s", exc)

        def bring() -> bool:
            if vectors is None:
                return not self._made_collections()
            try:
                apply_erasures(vectors)
            except Exception:  # Chroma's errors are of many kinds
                logger.warning(
                    "the vectors of the erased values are deleted at the next "
                    "catch-up, by a rebuild of their scope",
                    exc_info=True,
                )
                return False
            return True

        with held(vectors):
            yield bring

    def _made_collections(self) -> bool:
        """Whether this store ever put a vector in Chroma (a collection's
        mark is in the log)."""
        with self.engine.transaction(write=False) as tx:
            return any(name != FULL_TEXT for name in tx.projection_names())

    def scrub(self) -> bool:
        """Leave no byte of an erased value in an embedded Chroma's files:
        close it and clean them (`scrub_embedded`); the next use opens it
        again. Call it after `erasing`. Returns False for a Chroma server or a
        caller's client, whose files are not this store's to rewrite, and
        when the files could not be cleaned: another store of this process
        has them open, or they are in a format this version does not know.
        """
        if not self.has_chroma or not self._made_collections():
            return True
        if self._client is not None or self._server is not None:
            return False
        assert self.directory is not None
        path = self.directory / CHROMA_DIR
        with self._lock:  # no search opens it again while its files are cleaned
            vectors, self._vectors = self._vectors, None
            with held(vectors):  # the follower's step in progress ends first
                if vectors is not None:
                    vectors.client.close()  # its last holder writes its files
            if not closed_chroma(path):
                return False
            self._scrubbed = True  # cleaned again on close: see `close`
            return scrub_embedded(path)

    def settle(self, timeout: float | None = None) -> bool:
        """Wait until every projection undo and search read (the vectors and
        the full-text index) holds every write so far, by this store or
        another sharing its log. Returns False if `timeout` seconds passed
        first.

        The follower is asked to look first: what other processes wrote, or
        what was left when this store opened, is caught up too. A follower
        whose last step failed (a model or Chroma error) is idle with the work
        still undone, and a store whose `embed` is an async function has no
        follower at all (its model answers only on the caller's event loop):
        that work is done here, step by step in the caller's thread, which
        sees the error if it fails (a sync call on such a store: a
        `ConfigError`), rather than reporting an index that lags as caught up.
        """
        deadline = None if timeout is None else time.monotonic() + timeout
        async_only = self._async_only()
        if not (async_only or self.engine.read_only):
            self._follower.poke()
        if not self._follower.settle(timeout):
            return False
        if self._follower.stopped:  # by `close`, maybe with work left over
            raise StorageError(
                "the store was closed while waiting for its index; what the "
                "index lacks is caught up when the store is opened again"
            )
        if (
            self._follower.failing
            or async_only
            or not self._opens_vectors
            or self._lags()  # left to another process's follower (its lease)
        ):
            while self._follow(asked=True):
                if deadline is not None and time.monotonic() > deadline:
                    return False
        return True

    def _lags(self, looked_at: bool = True) -> bool:
        """Whether a collection this store keeps lags behind the log, read in
        the log alone (False, reading nothing, unless `looked_at`)."""
        names = self.kept_projections() if looked_at else ()
        return bool(names) and lagging(self.engine, names)

    def searching(self, read: Callable[[VectorIndex], T]) -> T:
        """`read(vectors)`, with every write that returned applied to the item
        collection first: what a search by meaning reads (read-your-writes, as
        LangGraph's stores give it). Waits for the follower's step in progress,
        then applies the rest itself, up to the newest commit when called: a
        writer that keeps writing never keeps a search waiting. If another
        store's `reindex` takes the collections from Chroma before `read` is
        done, both run again on the collections made anew."""

        def catch_up(vectors: VectorIndex) -> T:
            vectors.present().catch_up(changes=False, upto=vectors.last_seq())
            return read(vectors)

        return self._on_vectors(catch_up)

    def _on_vectors(self, work: Callable[[VectorIndex], T]) -> T:
        """`work(self.vectors())`; again on the collections opened anew if they
        went from Chroma meanwhile (a server restarted on empty data, another
        store's reindex, which may still be making them: a few tries, a
        moment apart); ones that are missing are made again from the log."""
        for pause in _REOPEN_PAUSES:
            vectors = self.vectors()
            try:
                return work(vectors)
            except chromadb.errors.ChromaError as exc:
                if not _remade(exc):
                    raise
                logger.warning(
                    "the vector collections this store had open are gone from "
                    "Chroma (a server restarted on empty data, or another store's "
                    "reindex): opening them again, made anew from the log if missing"
                )
                with self._lock:
                    if self._vectors is vectors:
                        self._vectors = None
                        if self._client is None:  # the embedded client is ours
                            vectors.client.close()
            time.sleep(pause)
        return work(self.vectors())  # the last try, whatever it raises

    def heal(self) -> None:
        """On open: if a crash left the collections behind the log, start the
        follower on it (searches catch up first in any case). A Chroma server
        that is down does not stop the store from opening: the log is the
        truth, and the vectors catch up when it answers. Without `index`,
        only the log is read to tell: the follower opens Chroma and loads the
        model in its own thread."""
        if not self.indexes_items:
            if self._lags(self._follows_writes):
                self._follower.poke()
            return
        if not self.has_chroma:
            return
        try:
            behind = self.vectors().behind()
        except StorageError as exc:
            logger.warning("%s", exc)
            return
        if behind:
            self._follower.poke()

    def close(self) -> None:
        """Stop the resolver's worker thread, and close the embedded Chroma client
        (one given by the caller stays the caller's to close). If this store
        scrubbed the embedded Chroma, its files are cleaned again: a search
        since may have had Chroma write memory that held the erased text."""
        self._follower.stop()
        if self._resolver is not None:
            self._resolver.close()
        if self._vectors is not None:  # what a burst's end left in memory
            try:
                self._vectors.write_ahead(_CLOSE_WRITES)
            except Exception:  # Chroma's errors are of many kinds
                logger.debug("left to the next catch-up", exc_info=True)
        with self._lock:
            vectors, self._vectors = self._vectors, None
            lock, self._chroma_lock = self._chroma_lock, None
        if self._owns_client:
            self._client.close()
            self._client, self._owns_client = None, False
        elif vectors is not None and self._client is None:
            vectors.client.close()
        if self._scrubbed and self.directory is not None:
            path = self.directory / CHROMA_DIR
            if closed_chroma(path):
                scrub_embedded(path)
        if lock is not None:
            lock.release()


def load_reranker(config: ResolverConfig) -> Any | None:
    """The undo search's reranker: the model `config` names, else FlashRank's
    default cross-encoder, else `None` (candidates keep their fused order).

    The offline stand-in is used only when named: it scores with the dense
    stage's own encoder, so it can only repeat that stage (docs/benchmarks.md
    measures it doing worse than no rerank at all).

    Raises:
        ModelUnavailableError: the model `config.reranker` names cannot be had.
    """
    if config.reranker is None:
        return models.default_ranker(config.reranker_cache)
    return models.load_ranker(config.reranker, config.reranker_cache)
