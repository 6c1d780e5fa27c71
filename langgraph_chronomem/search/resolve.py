"""From a natural-language request to the version it means, with no side effect.

    request -> intent -> candidates (BM25 and dense, in parallel, both scoped)
            -> Reciprocal Rank Fusion -> FlashRank rerank of the top K
            -> act when the best is clearly ahead, else offer the candidates

Every candidate carries the score each stage gave it, so a wrong pick can be
explained. The retrieval unit is the commit descriptor, never a snapshot.
"""

from __future__ import annotations

import concurrent.futures
import contextvars
from collections.abc import Callable, Sequence
from dataclasses import dataclass, replace
from datetime import datetime
from typing import Any

from langgraph_chronomem.engine.base import LogTransaction
from langgraph_chronomem.engine.describe import descriptor, render_value
from langgraph_chronomem.engine.sqlite import SqliteEngine
from langgraph_chronomem.engine.types import Change, Commit, Namespace
from langgraph_chronomem.errors import ConfigError
from langgraph_chronomem.search.intent import Intent, content_words, parse
from langgraph_chronomem.search.lexical import bm25
from langgraph_chronomem.search.vectors import VectorIndex

__all__ = [
    "Candidate",
    "Resolution",
    "Resolver",
    "ResolverConfig",
    "StageScores",
    "rrf",
]


@dataclass(frozen=True)
class ResolverConfig:
    """Knobs of the undo search; the defaults are measured in docs/benchmarks.md.

    Attributes:
        rrf_k: Reciprocal Rank Fusion's k0: `score = sum(w / (k0 + rank))`.
        rrf_weights: The weights `w` of BM25's and the dense ranking, in that order.
        depth: How many candidates each retriever (BM25, dense) returns.
        rerank_top: How many fused candidates FlashRank reranks (0: no rerank).
        reranker: FlashRank model name. `None`: FlashRank's default
            cross-encoder when it can be had (downloaded, or in its cache),
            else no rerank; the offline stand-in, `models.PAIR_SCORER`, only
            runs when named here.
        reranker_cache: FlashRank's model cache directory.
        margin: How far the best candidate must lead the next distinct target
            for the resolver to act on its own: in rerank score, or without a
            rerank in dense similarity (with BM25 alone: in RRF score, as a
            share of the highest possible).
        retrievers: Which first stages run: `bm25`, `dense`, or both (fused).
        act_similarity: Below this dense similarity, a best match that shares
            no word with the request is offered, not acted on.
        min_similarity: Below this dense similarity, and with no shared word, a
            request matches nothing.
    """

    rrf_k: int = 60
    rrf_weights: tuple[float, float] = (1.0, 0.25)
    depth: int = 50
    rerank_top: int = 20
    reranker: str | None = None
    reranker_cache: str | None = None
    margin: float = 0.05
    min_similarity: float = 0.25
    act_similarity: float = 0.3
    retrievers: frozenset[str] = frozenset({"bm25", "dense"})

    def __post_init__(self) -> None:
        unknown = self.retrievers - {"bm25", "dense"}
        if unknown or not self.retrievers:
            raise ConfigError(
                f"retrievers are 'bm25' and/or 'dense', got {sorted(self.retrievers)}"
            )
        weights = tuple(self.rrf_weights)
        if len(weights) != 2 or min(weights) < 0 or not sum(weights) > 0:
            raise ConfigError(
                "rrf_weights are two non-negative numbers (BM25, dense), not both 0; "
                f"got {self.rrf_weights!r}"
            )
        object.__setattr__(self, "rrf_weights", tuple(float(w) for w in weights))


@dataclass(frozen=True)
class StageScores:
    """What each stage thought of a candidate (ranks start at 1; None: not found)."""

    bm25_rank: int | None = None
    dense_rank: int | None = None
    dense_score: float | None = None
    rrf: float = 0.0
    rerank: float | None = None


@dataclass(frozen=True)
class Candidate:
    """A version the request may mean.

    Attributes:
        target: The version an undo would restore.
        commit: The commit the request matched.
        summary: That commit's summary.
        diff: What restoring `target` would change at HEAD (old = HEAD now).
        scores: The score each stage gave.
    """

    target: int
    commit: Commit
    summary: str
    diff: tuple[Change, ...]
    scores: StageScores


@dataclass(frozen=True)
class Resolution:
    """The outcome of resolving a request. `decided` means: act on `best`.

    `head` and `head_seq` identify the HEAD it was resolved against.
    """

    request: str
    intent: Intent
    head: int
    head_seq: int = 0
    candidates: tuple[Candidate, ...] = ()
    decided: bool = False
    reason: str = ""

    @property
    def best(self) -> Candidate | None:
        """The top candidate, if any."""
        return self.candidates[0] if self.candidates else None


def rrf(
    rankings: Sequence[Sequence[int]],
    k: int = 60,
    weights: Sequence[float] | None = None,
) -> dict[int, float]:
    """Reciprocal Rank Fusion of ranked lists of ids, each list with its weight.

    >>> rrf([[3, 1], [1, 2]], k=60)
    {3: 0.01639344262295082, 1: 0.03252247488101534, 2: 0.016129032258064516}
    >>> rrf([[3, 1], [1, 2]], k=60, weights=[2.0, 1.0])[3]
    0.03278688524590164
    """
    fused: dict[int, float] = {}
    for ranking, weight in zip(rankings, weights or [1.0] * len(rankings), strict=True):
        for rank, item in enumerate(ranking, start=1):
            fused[item] = fused.get(item, 0.0) + weight / (k + rank)
    return fused


def _words_in(words: Sequence[str], value: Any) -> int:
    text = render_value(value).lower() if value is not None else ""
    return sum(word in text for word in words)


def _named_change(commit: Commit, topic: str) -> tuple[Change | None, bool]:
    """The change of `commit` the topic names, and whether it names its old value.

    "Boston" in "back to when I lived in Boston" names the old side of
    "home: Boston -> NYC" and the new side of "created home: Boston".
    """
    words = content_words(topic)

    def affinity(change: Change) -> int:
        return max(_words_in(words, change.new), _words_in(words, change.old))

    change = max(commit.changes, key=affinity, default=None)
    if change is None:
        return None, False
    return change, _words_in(words, change.old) > _words_in(words, change.new)


def _at_target(commit: Commit, topic: str) -> int:
    """ "Go back to when X": the version at the commit, or just before it when the
    commit is the one that changed X away."""
    _, names_old = _named_change(commit, topic)
    return commit.version - 1 if names_old else commit.version


def _still_target(
    tx: LogTransaction, scope: Namespace, commit: Commit, topic: str
) -> int:
    """The last version at which the value the topic names still held.

    If the commit *set* the value ("created home: Boston"), that is the version
    before the item next changed (HEAD if it never did); if the commit changed
    the value *away* ("Boston -> NYC"), it is the version before the commit.
    """
    change, names_old = _named_change(commit, topic)
    if change is None or names_old:
        return commit.version - 1
    later = [
        h.version
        for h in tx.history(change.namespace, change.key)
        if h.version > commit.version
    ]
    return min(later) - 1 if later else tx.head(scope)


class Resolver:
    """Resolves requests against one store's log and vector index.

    Args:
        engine: The log.
        vectors: The store's vector index (dense side).
        config: The knobs.
        load_ranker: Returns a FlashRank `Ranker`, or `None` for no rerank
            (called on first use).
    """

    def __init__(
        self,
        engine: SqliteEngine,
        vectors: Callable[[], VectorIndex],
        config: ResolverConfig,
        load_ranker: Callable[[], Any | None],
    ) -> None:
        self.engine = engine
        self.vectors = vectors
        self.config = config
        self.load_ranker = load_ranker
        self._pool = concurrent.futures.ThreadPoolExecutor(
            1, thread_name_prefix="chronomem-dense"
        )

    def close(self) -> None:
        """Stop the worker thread."""
        self._pool.shutdown(wait=True)

    def resolve(
        self, scope: Namespace, request: str, *, k: int = 5, now: datetime | None = None
    ) -> Resolution:
        """Rank the versions `request` may mean in `scope`; change nothing.

        Args:
            scope: The scope (its commits are the only candidates).
            request: What was asked, e.g. "undo the update about my move to NYC".
            k: How many candidates to return.
            now: The moment relative times count from (default: now).
        """
        intent = parse(request, now=now)
        with self.engine.transaction(write=True) as tx:
            tx.index_descriptors()
            base = Resolution(request, intent, tx.head(scope), tx.head_seq(scope))
        if base.head == 0:
            return replace(base, reason="this memory has no history yet")
        if intent.kind == "redo" or not content_words(intent.topic):
            with self.engine.transaction(write=False) as tx:
                if intent.kind == "redo":
                    return self._redo(tx, scope, base)
                return self._latest(tx, scope, base)
        # The dense side embeds while BM25 runs (each takes the log's lock only
        # for its own short reads), in this call's context: an async caller's
        # loop travels with it.
        use = self.config.retrievers
        dense = None
        if "dense" in use:
            context = contextvars.copy_context()
            dense = self._pool.submit(context.run, self._dense, scope, intent)
        lexical = []
        if "bm25" in use:
            with self.engine.transaction(write=False) as tx:
                lexical = bm25(
                    tx, scope, intent.topic, n=self.config.depth, window=intent.window
                )
        similar = dense.result() if dense else []
        if not lexical and (not similar or similar[0][1] < self.config.min_similarity):
            return replace(
                base,
                reason=f"nothing in this memory's history matches {intent.topic!r}",
            )
        with self.engine.transaction(write=False) as tx:
            ranked = self._fuse(
                tx,
                scope,
                intent.topic,
                [h.version for h in lexical],
                similar,
            )
            return self._decide(tx, scope, base, ranked, k, retrieved=True)

    def _dense(self, scope: Namespace, intent: Intent) -> list[tuple[int, float]]:
        index = self.vectors()
        vector = index.embeddings.embed_query(intent.topic)
        index.catch_up(self.engine, items=False)
        hits = index.query_descriptors(
            scope, vector, n=self.config.depth, window=intent.window
        )
        return [(hit.version, hit.score) for hit in hits]

    def _fuse(
        self,
        tx: LogTransaction,
        scope: Namespace,
        topic: str,
        lexical: list[int],
        similar: list[tuple[int, float]],
    ) -> list[tuple[Commit, StageScores]]:
        dense = [version for version, _ in similar]
        similarity = dict(similar)
        fused = rrf([lexical, dense], self.config.rrf_k, self.config.rrf_weights)
        head = tx.head(scope)
        order = sorted((v for v in fused if 1 <= v <= head), key=lambda v: -fused[v])
        top = order[: self.config.rerank_top or self.config.depth]
        scored = []
        for version in top:  # a dense hit for a version a reset removed is dropped here
            commits = tx.log(scope, version=version)
            if commits:
                scores = StageScores(
                    bm25_rank=lexical.index(version) + 1
                    if version in lexical
                    else None,
                    dense_rank=dense.index(version) + 1 if version in dense else None,
                    dense_score=similarity.get(version),
                    rrf=fused[version],
                )
                scored.append((commits[0], scores))
        return self._rerank(topic, scored) if self.config.rerank_top else scored

    def _rerank(
        self, topic: str, scored: list[tuple[Commit, StageScores]]
    ) -> list[tuple[Commit, StageScores]]:
        if not scored:
            return scored
        ranker = self.load_ranker()
        if ranker is None:
            return scored
        from flashrank import RerankRequest

        passages = [{"id": i, "text": descriptor(c)} for i, (c, _) in enumerate(scored)]
        results = ranker.rerank(RerankRequest(query=topic, passages=passages))
        reranked = []
        for result in results:
            commit, scores = scored[result["id"]]
            reranked.append((commit, replace(scores, rerank=float(result["score"]))))
        return reranked

    def _decide(
        self,
        tx: LogTransaction,
        scope: Namespace,
        base: Resolution,
        ranked: list[tuple[Commit, StageScores]],
        k: int,
        *,
        retrieved: bool = False,
    ) -> Resolution:
        """Keep one candidate per target, and decide whether the best is clear.

        A retrieved best must lead the next by `margin`, and either share a word
        with the request or be at least `act_similarity` similar to it: a near
        neighbour in meaning alone is offered, never acted on.
        """
        candidates: list[Candidate] = []
        for commit, scores in ranked:
            target = self._target(tx, scope, base.intent, commit)
            if any(c.target == target for c in candidates):
                continue
            diff = (
                tuple(tx.diff(scope, base.head, target)) if target != base.head else ()
            )
            candidates.append(Candidate(target, commit, commit.summary, diff, scores))
            if len(candidates) == k:
                break
        if not candidates:
            return replace(base, reason="nothing matched")
        first = candidates[0].scores
        second = candidates[1].scores if len(candidates) > 1 else None
        lead = self._lead(first, second) if second else float("inf")
        decided = second is None or lead >= self.config.margin
        reason = (
            "only one match"
            if second is None
            else f"best match leads the next by {lead:.3f}"
            if decided
            else "the two best matches are too close to call "
            f"({lead:.3f} < {self.config.margin})"
        )
        similarity = first.dense_score or 0.0
        unsure = first.bm25_rank is None and similarity < self.config.act_similarity
        if decided and retrieved and unsure:
            decided = False
            reason = (
                "the best match shares no word with the request and is only "
                f"{similarity:.2f} similar ({self.config.act_similarity} to act)"
            )
        return replace(
            base, candidates=tuple(candidates), decided=decided, reason=reason
        )

    def _lead(self, first: StageScores, second: StageScores) -> float:
        """How far the best candidate leads the next, on the scale of `margin`.

        The rerank's scores when there was one; else the dense similarities (RRF
        ranks cannot tell a tie from a clear win); with BM25 alone, the RRF
        scores as shares of the highest possible, `sum(w) / (k + 1)`.
        """
        if first.rerank is not None and second.rerank is not None:
            return first.rerank - second.rerank
        if "dense" in self.config.retrievers:
            return (first.dense_score or 0.0) - (second.dense_score or 0.0)
        top = sum(self.config.rrf_weights) / (self.config.rrf_k + 1)
        return (first.rrf - second.rrf) / top

    def _target(
        self, tx: LogTransaction, scope: Namespace, intent: Intent, commit: Commit
    ) -> int:
        if intent.kind == "at":
            return _at_target(commit, intent.topic)
        if intent.kind == "still":
            return _still_target(tx, scope, commit, intent.topic)
        return commit.version - 1

    def _latest(
        self, tx: LogTransaction, scope: Namespace, base: Resolution
    ) -> Resolution:
        """No topic ("undo the last change"): the newest commit, in any window."""
        window = base.intent.window
        commits = tx.log(
            scope, since=window.start if window else None, limit=None if window else 1
        )
        commits = [c for c in commits if window is None or c.created_at in window]
        if not commits:
            return replace(base, reason="no change in that time")
        ranked = [(commits[0], StageScores())]
        return self._decide(tx, scope, base, ranked, 1)

    def _redo(
        self, tx: LogTransaction, scope: Namespace, base: Resolution
    ) -> Resolution:
        """Redo = undo the last undo (a rollback or a revert): back to the version
        it was made on; applying it reverts that commit when later ones exist."""
        undos = [
            c for op in ("rollback", "revert") for c in tx.log(scope, op=op, limit=1)
        ]
        if not undos:
            return replace(base, reason="there is no rollback or revert to redo")
        last = max(undos, key=lambda c: c.version)
        target = last.version - 1
        diff = tuple(tx.diff(scope, base.head, target))
        candidate = Candidate(target, last, last.summary, diff, StageScores())
        reason = f"redo: undo v{last.version} ({last.op})"
        return replace(base, candidates=(candidate,), decided=True, reason=reason)
