"""From a natural-language request to the change it means, with no side effect.

    request -> intent -> item changes (BM25 and dense, in parallel, both scoped)
            -> Reciprocal Rank Fusion -> FlashRank rerank of the top K
            -> act when a calibrated rule is sure, else offer the candidates

The unit is one change to one item, never a snapshot and never a whole commit:
a memory manager's batch of ten changes is ten candidates. Each change is found
by what it introduced ("undo my move to NYC", "go back to when I got the dog")
or by what it replaced ("bring back my Boston address", "back to when I still
ate meat"), so the update *after* the one a person means, which shows the
meant value as its "before", cannot outrank it. Every candidate carries the
score each stage gave it, so a wrong pick can be explained. What a search
returns is defined in `search.candidates`; when it acts alone, in
`search.decide`. The steps this module calls have their own: a request that
names no topic (`search.topicless`), a record's field the request names
(`search.record_fields`), the order beyond the scores (`search.order`), and
what acting on a candidate changes (`search.effect`).
"""

from __future__ import annotations

import concurrent.futures
import contextvars
import re
from collections.abc import Callable, Mapping, Sequence
from dataclasses import replace
from datetime import datetime
from typing import Any

import numpy as np

from langgraph_chronomem.engine.base import LogTransaction
from langgraph_chronomem.engine.describe import change_text
from langgraph_chronomem.engine.protocol import LogEngine
from langgraph_chronomem.engine.types import Change, Commit, Namespace
from langgraph_chronomem.errors import InvalidRequestError
from langgraph_chronomem.search.candidates import (
    DIFF_SHOWN,
    MODES,
    PLAN,
    Action,
    Candidate,
    Mode,
    Pick,
    Resolution,
    ResolverConfig,
    StageScores,
    coverage,
    plan,
)
from langgraph_chronomem.search.decide import (
    Complaint,
    offered,
    sure,
    sure_of_planted,
)
from langgraph_chronomem.search.effect import effect
from langgraph_chronomem.search.embedding import Recent
from langgraph_chronomem.search.held import Said, missing
from langgraph_chronomem.search.intent import Intent, parse
from langgraph_chronomem.search.lexical import bm25
from langgraph_chronomem.search.order import original_first, planted_first, real_first
from langgraph_chronomem.search.record_fields import by_field
from langgraph_chronomem.search.suspect import about_injected, named_kind
from langgraph_chronomem.search.topicless import by_id, latest, redo
from langgraph_chronomem.search.vectors import VectorIndex, unit

__all__ = [
    "Action",
    "Candidate",
    "Mode",
    "Resolution",
    "Resolver",
    "ResolverConfig",
    "StageScores",
    "rrf",
]

# How much deeper the dense side looks for a request about a planted memory.
_WIDER = 10
_CHANGE_ID = re.compile(
    r"(?i)^(?:change\s+|commit\s+)?[#v]?(\d+)(?:\.(\d+)(?:/([^\s/]+))?)?$"
)
# How many texts' vectors a resolver keeps (`Resolver._embed`).
_KEPT = 4096
# "undo the last 3 ...": a count, never a change id, whatever the parser made of it
_COUNTED = re.compile(r"(?i)\b(?:last|latest|previous|recent|past|steps)\b")


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


def validate(request: Any, k: Any, mode: Any) -> None:
    """Check `resolve`'s arguments.

    Raises:
        InvalidRequestError: For a request that is not a non-empty string, a `k`
            that is not a positive int, or an unknown mode.
    """
    if not isinstance(request, str) or not request.strip():
        raise InvalidRequestError(
            f"an undo request is a non-empty string, e.g. 'undo my move to NYC', "
            f"or a change id like '12.2'; got {request!r}"
        )
    if isinstance(k, bool) or not isinstance(k, int) or not 1 <= k <= 100:
        raise InvalidRequestError(f"k is how many candidates (1..100), got {k!r}")
    if mode not in MODES:
        raise InvalidRequestError(f"mode is one of {', '.join(MODES)}; got {mode!r}")


class Resolver:
    """Resolves requests against one store's log and vector index.

    Args:
        engine: The log.
        vectors: The store's vector index (dense side).
        config: The knobs.
        load_ranker: Returns a FlashRank `Ranker`, or `None` for no rerank
            (called on first use).
        common_words: Returns the ordinary words (`search.held`), or `None`
            when none are known (called on first use).
    """

    def __init__(
        self,
        engine: LogEngine,
        vectors: Callable[[], VectorIndex],
        config: ResolverConfig,
        load_ranker: Callable[[], Any | None],
        common_words: Callable[[], frozenset[str] | None] = lambda: None,
    ) -> None:
        self.engine = engine
        self.vectors = vectors
        self.config = config
        self.load_ranker = load_ranker
        self.common_words = common_words
        self._vectors: Recent[str, np.ndarray] = Recent(_KEPT)  # texts'
        self._pool = concurrent.futures.ThreadPoolExecutor(
            1, thread_name_prefix="chronomem-dense"
        )

    def _embed(self, texts: Sequence[str]) -> list[np.ndarray]:
        """Unit vectors of `texts`, the last `_KEPT` embedded kept: a record's
        field texts come up request after request."""
        kept = {t: self._vectors.get(t) for t in dict.fromkeys(texts)}
        new = [t for t, vector in kept.items() if vector is None]
        found = self.vectors().embeddings.embed_documents(new) if new else []
        made = {t: unit(v) for t, v in zip(new, found, strict=True)}
        self._vectors.keep(made)
        vectors = {t: v for t, v in kept.items() if v is not None} | made
        return [vectors[t] for t in texts]

    def close(self) -> None:
        """Stop the worker thread."""
        self._pool.shutdown(wait=True)

    def resolve(
        self,
        scope: Namespace,
        request: str,
        *,
        k: int = 5,
        mode: Mode = "auto",
        now: datetime | None = None,
    ) -> Resolution:
        """Rank the changes `request` may mean in `scope`; change nothing.

        Args:
            scope: The scope (its commits are the only candidates).
            request: What was asked, e.g. "undo the update about my move to NYC",
                or a change id, "12.2".
            k: How many candidates to return.
            mode: `auto`, `revert` or `rollback` (see `Mode`).
            now: The moment relative times count from (default: now).

        Raises:
            InvalidRequestError: For an empty request, a bad `k` or `mode`.
        """
        validate(request, k, mode)
        intent = parse(request, now=now)
        with self.engine.transaction(write=True) as tx:
            tx.index_changes()
            base = Resolution(request, intent, tx.head(scope), tx.head_seq(scope))
        if base.head == 0:
            return replace(base, reason="this memory has no history yet")
        ref = _CHANGE_ID.match(request.strip()) or (
            None if _COUNTED.search(request) else _CHANGE_ID.match(intent.topic)
        )
        if intent.kind == "none" and not ref:
            return self._named_only(scope, base, k, mode)
        with self.engine.transaction(write=False) as tx:
            if ref:
                return by_id(tx, scope, base, ref, mode)
            if intent.kind == "redo":
                return redo(tx, scope, base)
            if not intent.topic:
                return latest(tx, scope, base, mode)
        return self._search(scope, base, k, mode)

    def _named_only(
        self, scope: Namespace, base: Resolution, k: int, mode: Mode
    ) -> Resolution:
        """A request that reads as asking for no change, offered the memories it
        names when it names two things or more: one in words this search does
        not read as a command ("Pakitanggal po yung coding day ko na Thursday")
        still gets the changes it is about, and nothing is acted on."""
        nothing = replace(base, reason="the request names no change to undo")
        if len(Said.of(base.request, self.common_words()).terms) < 2:
            return nothing
        found = self._search(
            scope,
            replace(base, intent=Intent("undo", base.request, asked=False)),
            k,
            mode,
        )
        if not found.candidates:
            return nothing
        return replace(
            found,
            intent=base.intent,
            decided=False,
            reason="the request does not read as asking for a change; the "
            "changes its words name are listed",
        )

    # -- retrieval -------------------------------------------------------------

    def _search(
        self, scope: Namespace, base: Resolution, k: int, mode: Mode
    ) -> Resolution:
        intent, use = base.intent, self.config.retrievers
        side = PLAN[intent.kind][0]
        # "that junk from the page I pasted": its words describe where the
        # memory came from, not what it says, so look wider and put the
        # memories that read as planted first.
        injected = side == "new" and about_injected(base.request)
        depth = self.config.depth * (_WIDER if injected else 1)
        # The dense side embeds while BM25 runs (each takes the log's lock only
        # for its own short reads), in this call's context: an async caller's
        # loop travels with it.
        dense = None
        if "dense" in use:
            context = contextvars.copy_context()
            dense = self._pool.submit(
                context.run, self._dense, scope, intent, side, depth
            )
        lexical: list[list[int]] = [[], []]
        if "bm25" in use:
            with self.engine.transaction(write=False) as tx:
                for i, window in enumerate((None, intent.window)):
                    if i == 0 or window is not None:
                        hits = bm25(
                            tx, scope, intent.topic, n=self.config.depth, side=side,
                            window=window,
                        )  # fmt: skip
                        lexical[i] = [h.row_id for h in hits]
        query, similar = dense.result() if dense else (None, [])
        with self.engine.transaction(write=False) as tx:
            picks = self._fuse(tx, scope, intent, lexical, similar, query, side)
            complaint = None
            if injected:
                picks, complaint = planted_first(tx, picks, named_kind(base.request))
            if not picks:
                return replace(
                    base,
                    reason=f"nothing in this memory's history matches {intent.topic!r}",
                )
            return self._decide(tx, scope, base, picks, k, mode, query, complaint)

    def _dense(
        self, scope: Namespace, intent: Intent, side: str, depth: int
    ) -> tuple[np.ndarray, list[int]]:
        """The request's vector, and the `depth` change rows nearest it on `side`."""
        index = self.vectors()
        query = unit(index.embeddings.embed_query(intent.topic))
        index.ready_for(scope)
        hits = index.query_changes(scope, query.tolist(), n=depth)
        rows = [hit.row_id for hit in hits]
        if side == "old" and rows:  # a state matched: the change that replaced it
            with self.engine.transaction(write=False) as tx:
                following = {
                    prev: row for row, _, prev in tx.row_links(rows, following=True)
                }
            rows = [following[r] for r in rows if r in following]
        return query, rows

    def _fuse(
        self,
        tx: LogTransaction,
        scope: Namespace,
        intent: Intent,
        lexical: list[list[int]],
        similar: list[int],
        query: np.ndarray | None,
        side: str,
    ) -> list[Pick]:
        """Both rankings, the dense one re-scored with the contrast, fused.
        Whatever the request, the nearest changes in meaning come back: an
        agent offered the closest memories can ask which one, where "nothing
        matches" reads as "I don't remember that".

        A time in the request ("last week") is a preference, not a filter: the
        changes made then are ranked once more, among themselves, so a date the
        person meant as the day something happened (not the day it was saved)
        cannot hide the change.
        """
        words, windowed = lexical
        pool = list(dict.fromkeys([*words, *windowed, *similar]))
        links = {row: (version, prev) for row, version, prev in tx.row_links(pool)}
        dense_scores = (
            self._contrast(scope, query, side, links) if query is not None else {}
        )
        dense = sorted(dense_scores, key=lambda r: -dense_scores[r])
        rankings, weights = [words, dense], self._weights(tx, intent, side, words)
        if intent.window is not None:
            window = intent.window
            during = tx.versions_between(scope, window.start, window.end)
            if side == "old":  # the states' rows: keep changes made in the window
                windowed = [r for r in words if r in links and links[r][0] in during]
            rankings += [windowed, [r for r in dense if links[r][0] in during]]
            weights += weights[:2]
        fused = rrf(rankings, self.config.rrf_k, weights)
        picks = []
        for row in sorted(fused, key=lambda r: -fused[r]):
            if row not in links:
                continue  # a vector for a row a reset removed
            scores = StageScores(
                bm25_rank=words.index(row) + 1 if row in words else None,
                dense_rank=dense.index(row) + 1 if row in dense else None,
                dense_score=dense_scores.get(row),
                rrf=fused[row],
            )
            picks.append(Pick(row, links[row][0], scores))
        return picks

    def _weights(
        self, tx: LogTransaction, intent: Intent, side: str, words: list[int]
    ) -> list[float]:
        """The RRF weights for this request: the dense side counts for more when
        the word search's best hit holds few of the request's words (a
        paraphrase), and for less when it holds them all."""
        lexical, dense = self.config.rrf_weights
        if "dense" not in self.config.retrievers:
            return [1.0, 0.0]
        if not self.config.adaptive or not words:
            return [lexical, dense]
        text = tx.indexed_text(words[0])
        held = (
            coverage(intent.topic, " ".join(text if side == "new" else text[1:]))
            if text
            else 0.0
        )
        return [lexical, max(dense, lexical * (1.0 - held))]

    def _contrast(
        self,
        scope: Namespace,
        query: np.ndarray,
        side: str,
        links: dict[int, tuple[int, int | None]],
    ) -> dict[int, float]:
        """Each change's similarity to the request on the side it names, less what
        the other side has over it: an undo of "NYC" prefers the change that
        wrote NYC to the one that later replaced it."""
        rows = [*links, *(prev for _, prev in links.values() if prev is not None)]
        vectors = self.vectors().change_vectors(scope, rows)
        sims = {row: float(np.dot(query, v)) for row, v in vectors.items()}
        scores = {}
        for row, (_, prev) in links.items():
            new, old = sims.get(row), sims.get(prev) if prev is not None else None
            named, other = (new, old) if side == "new" else (old, new)
            if named is None:
                continue
            scores[row] = named - self.config.contrast * max(
                0.0, (other or 0.0) - named
            )
        return scores

    # -- deciding --------------------------------------------------------------

    def _decide(
        self,
        tx: LogTransaction,
        scope: Namespace,
        base: Resolution,
        picks: list[Pick],
        k: int,
        mode: Mode,
        query: np.ndarray | None,
        complaint: Complaint | None = None,
    ) -> Resolution:
        """Turn the best picks into candidates, and decide whether to act alone.

        What acting would change is worked out for the `k` returned only: for a
        rollback thousands of versions back it is the costly part. A complaint
        about a planted memory keeps its order (a rerank of the request's words
        against the memory's is what fails there) and has its own rule.
        """
        ranker = (
            self.load_ranker() if self.config.rerank_top and not complaint else None
        )
        wanted = max(k, self.config.rerank_top) if ranker is not None else k
        side, _, _ = plan(base.intent.kind, mode)
        found, texts = by_field(
            _changes_of(tx, scope, base, picks, wanted, mode),
            side,
            base.intent.topic,
            query,
            embed=self._embed,
            act_similarity=self.config.act_similarity,
        )
        found, suspects = self._order(base, found, texts, ranker, complaint)
        named = Said.of(base.intent.names, self.common_words(), base.request)
        candidates = _with_effects(tx, scope, base.head, found[:k], named, texts)
        if not candidates:
            return replace(base, reason="nothing matched")
        decided, reason = self._verdict(
            base.intent, candidates, texts, complaint, suspects, named=bool(named)
        )
        return replace(
            base, candidates=tuple(candidates), decided=decided, reason=reason
        )

    def _order(
        self,
        base: Resolution,
        found: list[Candidate],
        texts: Mapping[str, str],
        ranker: Any | None,
        complaint: Complaint | None,
    ) -> tuple[list[Candidate], set[str]]:
        """`found` in the order offered: reranked, the earliest first for "bring
        back the original", and what reads as planted or imitating after the
        real memories (unless the request complains of a planted one); with the
        ids of those suspects."""
        if ranker is not None:
            passages = [texts[c.id] for c in found]  # what the rerank reads
            found = self._rerank(ranker, base.intent.topic, found, passages)
        if base.intent.kind == "restore":
            found = original_first(found, base.request)
        if complaint is not None:
            return found, set()
        return real_first(found, texts, base.request)

    def _verdict(
        self,
        intent: Intent,
        candidates: list[Candidate],
        texts: Mapping[str, str],
        complaint: Complaint | None,
        suspects: set[str],
        *,
        named: bool,
    ) -> tuple[bool, str]:
        """Whether to act alone on the best candidate, and why (`search.decide`):
        never on a suspect, which is confirmed first."""
        if complaint is None:
            decided, reason = sure(self.config, candidates)
        else:
            decided, reason = sure_of_planted(complaint, candidates[0])
        why_not = decided and offered(
            self.config,
            intent,
            candidates,
            texts,
            lambda texts: self.vectors().embeddings.embed_documents(texts),
            by_words=complaint is None,
            named=named,
        )
        if why_not:
            return False, why_not
        if decided and candidates[0].id in suspects:
            return False, (
                "the best match reads as planted, not learned (a run of keywords "
                "or text for the assistant): confirmed first"
            )
        return decided, reason

    def _rerank(
        self, ranker: Any, topic: str, found: list[Candidate], texts: list[str]
    ) -> list[Candidate]:
        """Reorder the candidates by FlashRank's score of request and text."""
        from flashrank import RerankRequest

        passages = [{"id": i, "text": text} for i, text in enumerate(texts)]
        results = ranker.rerank(RerankRequest(query=topic, passages=passages))
        return [
            replace(
                found[r["id"]],
                scores=replace(found[r["id"]].scores, rerank=float(r["score"])),
            )
            for r in results
        ]


def _changes_of(
    tx: LogTransaction,
    scope: Namespace,
    base: Resolution,
    picks: list[Pick],
    wanted: int,
    mode: Mode,
) -> list[tuple[Candidate, str, str]]:
    """The first `wanted` picks as candidates, each with the words it matched on
    the side the request names and its context: one per rollback target, none
    for a change gone from the log or its content erased since."""
    side, offset, action = plan(base.intent.kind, mode)
    changes: list[tuple[Candidate, str, str]] = []
    for pick in picks:
        if len(changes) == wanted:
            break
        target = pick.version + offset
        if action == "rollback" and any(c.target == target for c, *_ in changes):
            continue
        commits = tx.log(scope, version=pick.version)
        change = _change_of(tx, commits[0], pick.row_id) if commits else None
        if change is None or change.old_erased or change.new_erased:
            continue
        text = change_text(change, tx.scope_depth)
        words = f"{text.new if side == 'new' else text.old} {text.context}"
        scores = replace(pick.scores, coverage=coverage(base.intent.topic, words))
        change_id = f"{pick.version}.{commits[0].changes.index(change) + 1}"
        candidate = Candidate(
            change_id, commits[0], (change,), target, action, (), (), scores
        )  # fmt: skip
        changes.append((candidate, words, text.context))
    return changes


def _with_effects(
    tx: LogTransaction,
    scope: Namespace,
    head: int,
    found: list[Candidate],
    named: Said,
    texts: Mapping[str, str],
) -> list[Candidate]:
    """`found`, each with what acting on it would change (the rollbacks' read
    together) and the terms of the request its text lacks."""
    rollbacks = [c.target for c in found if c.action == "rollback"]
    previews = tx.previews(scope, head, rollbacks, DIFF_SHOWN)
    return [
        replace(
            effect(tx, scope, head, c, previews),
            lacking=tuple(missing(named, texts[c.id])),
        )
        for c in found
    ]


def _change_of(tx: LogTransaction, commit: Commit, row_id: int) -> Change | None:
    """The change of `commit` that log row `row_id` holds."""
    ids = tx.row_ids_of(commit.scope, commit.version)
    if row_id not in ids:
        return None
    return commit.changes[ids.index(row_id)]
