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
score each stage gave it, so a wrong pick can be explained.
"""

from __future__ import annotations

import concurrent.futures
import contextvars
import re
from collections.abc import Callable, Sequence
from dataclasses import dataclass, replace
from datetime import datetime
from typing import Any, Literal, NamedTuple

import numpy as np

from langgraph_chronomem.engine.base import LogTransaction
from langgraph_chronomem.engine.describe import (
    change_text,
    describe_change,
    full_text,
)
from langgraph_chronomem.engine.protocol import LogEngine
from langgraph_chronomem.engine.types import Change, Commit, Conflict, Namespace
from langgraph_chronomem.errors import (
    CompactedError,
    ConfigError,
    InvalidRequestError,
)
from langgraph_chronomem.search.intent import Intent, content_words, parse
from langgraph_chronomem.search.lexical import bm25
from langgraph_chronomem.search.suspect import (
    Planted,
    about_injected,
    named_kind,
    planted,
)
from langgraph_chronomem.search.vectors import VectorIndex

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

Mode = Literal["auto", "revert", "rollback"]
"""How much an undo changes: `revert` only the matched items, `rollback` the
whole scope to a version, `auto` as the request asks (DESIGN.md)."""
Action = Literal["revert", "rollback"]
MODES = ("auto", "revert", "rollback")

# Per intent: which side of a change the request names, how far back the target
# lies from the matched change's version, and the action `auto` takes.
_PLAN: dict[str, tuple[str, int, Action]] = {
    "undo": ("new", -1, "revert"),  # "forget that I moved to NYC"
    "restore": ("old", -1, "revert"),  # "bring back my Boston address"
    "before": ("new", -1, "rollback"),  # "go back to before I moved"
    "at": ("new", 0, "rollback"),  # "go back to when I got the dog"
    "still": ("old", -1, "rollback"),  # "back to when I still ate meat"
}
# "my niece is called Sophie", "her name is Nkechi, not Nneka"
_NAMED_AS = re.compile(r"(?i)\b(?:called|named|name\s+is|name's)\s+([^\W\d_]{2,})")
_NOT_NAMED = re.compile(r"(?i)\b(?:not|isn't|is\s+not|wasn't)\s+([^\W\d_]{2,})")
# The thing a request names (its head, up to four words) before what it is for,
# about, at ...: "the bank loan for the workshop", "Morag's operation on her
# wrist", "tomás's new job".
_AFTER_HEAD = (
    r"(?:for|about|at|in|on|from|with|to|near|by|over|under|that|which|while|who"
    r"|before|after|during|since)"
)
_HEADS = (
    re.compile(
        r"(?i)^(?:the|my|our|his|her|their|your|that|this|those|these)\s+"
        rf"((?:[\w'-]+\s+){{0,3}}?[\w'-]+)\s+{_AFTER_HEAD}\s+\S"
    ),
    re.compile(  # a possessive, not "there's" or "it's"
        r"(?i)^(?:[\w.-]+\s+){0,2}?"
        r"(?!(?:there|here|it|that|what|who|where|how|he|she|let)'s)[\w-]+'s\s+"
        rf"((?:[\w-]+\s+){{0,3}}?[\w-]+)(?=\s+{_AFTER_HEAD}\b|\s*[,.;:!?]|\s*$)"
    ),
)
# Heads that name a memory, a saying or a change, not what it is about: "the
# bit about my sister", "my remark about Bake Off", "my move to NYC" (the
# change to the memory is the move).
_GENERIC_HEADS = frozenset(
    """bit bits part piece thing things stuff detail details info information note
    notes entry entries line lines one ones business matter remark remarks comment
    comments confession joke mention story question news update updates fact facts
    number whole lot pile load list rest half move moving switch switching change
    changes transfer shift swap""".split()  # noqa: SIM905 - a word list reads better as words
)
# How much closer in meaning a request must be to its best match with its head
# than without it, when the match does not say every word of the head.
_HEAD_ADDS = 0.05
# How much deeper the dense side looks for a request about a planted memory.
_WIDER = 10
_CHANGE_ID = re.compile(r"(?i)^(?:change\s+|commit\s+)?[#v]?(\d+)(?:\.(\d+))?$")
# "undo the last 3 ...": a count, never a change id, whatever the parser made of it
_COUNTED = re.compile(r"(?i)\b(?:last|latest|previous|recent|past|steps)\b")
# "I want the original one back": of the matched memory's versions, its first
_ORIGINAL = re.compile(
    r"(?i)\b(?:original(?:ly)?|very\s+first|first\s+(?:version|one|note|entry)"
    r"|(?:how|what)\s+(?:it|I)\s+(?:was|had\s+it|said)\s+at\s+first)\b"
)


@dataclass(frozen=True)
class ResolverConfig:
    """Knobs of the undo search; the defaults are measured in docs/benchmarks.md.

    Attributes:
        rrf_k: Reciprocal Rank Fusion's k0: `score = sum(w / (k0 + rank))`.
        rrf_weights: The weights `w` of BM25's and the dense ranking, in that order.
        depth: How many candidates each retriever (BM25, dense) returns.
        contrast: How much a change loses in the dense ranking when the request
            is nearer the side it does not name (what it replaced, for an undo).
        adaptive: Raise the dense weight, up to BM25's, as the word search's
            best hit holds fewer of the request's words.
        rerank_top: How many fused candidates FlashRank reranks (0: no rerank).
        reranker: FlashRank model name. `None`: FlashRank's default
            cross-encoder when it can be had (downloaded, or in its cache),
            else no rerank; the offline stand-in, `models.PAIR_SCORER`, only
            runs when named here.
        reranker_cache: FlashRank's model cache directory.
        retrievers: Which first stages run: `bm25`, `dense`, or both (fused).
        min_similarity: Below this dense similarity, and with no shared word, a
            request matches nothing.
        act_similarity: To act alone, both retrievers must rank the best
            candidate first, it must be at least this similar to the request ...
        act_score: ... and its similarity plus `act_lead` times its lead over
            the next candidate's must reach this. Chosen on the agent-memory
            tuning split for precision >= 0.95 (docs/benchmarks.md).
        act_lead: See `act_score`.
        act_score_rollback: `act_score` for a candidate that rolls the whole
            scope back: a wrong one costs every change since, not one item.
        act_coverage_rollback: A rollback acts alone only when the matched
            change holds at least this share of the request's words: a scope
            has many versions, and the words must pick one.
        margin: Whatever the similarity, a best candidate that leads the next
            by less than this is a tie, offered and never acted on.
        act_on: The intents the resolver may act on alone. "Back to when X
            was still true" is left out: on the tuning split it was right 3
            times in 4 when it acted, and a wrong one rolls the whole memory
            back over every change since (it is offered instead).
        act_words: A request naming what it means in fewer distinct words
            than this acts alone only if no other memory among the candidates
            holds them too: "forget that I smoke" may act, "put the van note
            back" is offered when several memories mention a van.
    """

    rrf_k: int = 60
    rrf_weights: tuple[float, float] = (1.0, 0.25)
    depth: int = 50
    contrast: float = 1.0
    adaptive: bool = True
    rerank_top: int = 20
    reranker: str | None = None
    reranker_cache: str | None = None
    retrievers: frozenset[str] = frozenset({"bm25", "dense"})
    min_similarity: float = 0.25
    act_similarity: float = 0.35
    act_score: float = 0.45
    act_lead: float = 2.0
    act_score_rollback: float = 0.7
    act_coverage_rollback: float = 0.5
    margin: float = 0.02
    act_on: frozenset[str] = frozenset({"undo", "restore", "before", "at"})
    act_words: int = 2

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
        strange = set(self.act_on) - set(_PLAN)
        if strange:
            raise ConfigError(
                f"act_on holds intents among {', '.join(_PLAN)}; got {sorted(strange)}"
            )
        object.__setattr__(self, "act_on", frozenset(self.act_on))
        words = self.act_words
        if isinstance(words, bool) or not isinstance(words, int) or words < 0:
            raise ConfigError(f"act_words is an int >= 0, got {words!r}")


@dataclass(frozen=True)
class StageScores:
    """What each stage thought of a candidate (ranks start at 1; None: not found).

    `coverage` is the share of the request's content words the matched side of
    the change holds; `dense_score` the dense similarity after the contrast.
    """

    bm25_rank: int | None = None
    dense_rank: int | None = None
    dense_score: float | None = None
    rrf: float = 0.0
    rerank: float | None = None
    coverage: float = 0.0


@dataclass(frozen=True)
class Candidate:
    """A change the request may mean, and what acting on it would do.

    Attributes:
        id: The change's id: `"12.2"` is the second item change of v12, `"12"`
            all of v12's changes. `undo(scope, "12.2")` acts on it by id.
        commit: The commit that made the change.
        changes: The matched item changes (one, or all of a commit).
        target: The version the request points at: before the change (undo,
            restore, "go back to before"), at it ("go back to when"), or the
            last one at which a replaced value held ("when X was still true").
        action: `revert` restores only `changes`' items; `rollback` the whole
            scope to `target`.
        diff: What acting would change at HEAD (old = HEAD now).
        conflicts: Items a revert would overwrite: changed again since.
        scores: The score each stage gave.
    """

    id: str
    commit: Commit
    changes: tuple[Change, ...]
    target: int
    action: Action
    diff: tuple[Change, ...]
    conflicts: tuple[Conflict, ...]
    scores: StageScores

    @property
    def summary(self) -> str:
        """The matched changes in words."""
        return "; ".join(describe_change(c) for c in self.changes)

    @property
    def items(self) -> tuple[tuple[Namespace, str], ...]:
        """The (namespace, key) of every item the change touched."""
        return tuple((c.namespace, c.key) for c in self.changes)


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


def coverage(topic: str, text: str) -> float:
    """The share of `topic`'s distinct content words (or their stems) in `text`.

    >>> coverage("my move to NYC", "User moved to NYC in May")
    1.0
    >>> coverage("my peanut allergy", "User is allergic to peanuts")
    0.5
    """
    words = {_stem(w) for w in content_words(topic)}
    if not words:
        return 0.0
    found = {_stem(w) for w in content_words(text)}
    return len(words & found) / len(words)


def _stem(word: str) -> str:
    """A crude stem, enough to meet "moved" with "move" and "peanuts" with "peanut"."""
    for suffix in ("ing", "ed", "es", "s", "e"):
        if len(word) > len(suffix) + 2 and word.endswith(suffix):
            return word[: -len(suffix)]
    return word


def _earliest_first(found: list[Candidate]) -> list[Candidate]:
    """`found` with the earliest change to the best match's memory first: the
    one that replaced its first value, for "bring back the original"."""
    if not found:
        return found
    same = [c for c in found if set(c.items) == set(found[0].items)]
    earliest = min(same, key=lambda c: c.commit.version)
    return [earliest, *(c for c in found if c is not earliest)]


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


@dataclass
class _Pick:
    """A change in the making: its log row, and what each stage said."""

    row_id: int
    version: int
    scores: StageScores


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
        engine: LogEngine,
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
            return replace(base, reason="the request names no change to undo")
        with self.engine.transaction(write=False) as tx:
            if ref:
                return self._by_id(tx, scope, base, ref, mode)
            if intent.kind == "redo":
                return self._redo(tx, scope, base)
            if not intent.topic:
                return self._latest(tx, scope, base, mode)
        return self._search(scope, base, k, mode)

    # -- retrieval -------------------------------------------------------------

    def _search(
        self, scope: Namespace, base: Resolution, k: int, mode: Mode
    ) -> Resolution:
        intent, use = base.intent, self.config.retrievers
        side = _PLAN[intent.kind][0]
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
            picks = self._fuse(
                tx, scope, intent, lexical, similar, query, side, weak=injected
            )
            complaint = None
            if injected:
                picks, complaint = _planted_first(tx, picks, named_kind(base.request))
            if not picks:
                return replace(
                    base,
                    reason=f"nothing in this memory's history matches {intent.topic!r}",
                )
            return self._decide(tx, scope, base, picks, k, mode, complaint)

    def _dense(
        self, scope: Namespace, intent: Intent, side: str, depth: int
    ) -> tuple[np.ndarray, list[int]]:
        """The request's vector, and the `depth` change rows nearest it on `side`."""
        index = self.vectors()
        query = _unit(index.embeddings.embed_query(intent.topic))
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
        *,
        weak: bool = False,
    ) -> list[_Pick]:
        """Both rankings, the dense one re-scored with the contrast, fused;
        none when no word matches and nothing is close in meaning, unless
        `weak` matches are wanted.

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
        if (
            not weak
            and not words
            and not windowed
            and (
                not dense_scores
                or max(dense_scores.values()) < self.config.min_similarity
            )
        ):
            return []
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
            picks.append(_Pick(row, links[row][0], scores))
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
        picks: list[_Pick],
        k: int,
        mode: Mode,
        complaint: _Complaint | None = None,
    ) -> Resolution:
        """Turn the best picks into candidates, and decide whether to act alone.

        What acting would change is worked out for the `k` returned only: for a
        rollback thousands of versions back it is the costly part. A complaint
        about a planted memory keeps its order (a rerank of the request's words
        against the memory's is what fails there) and has its own rule.
        """
        kind = base.intent.kind
        side, offset, action = _PLAN[kind]
        if mode != "auto" and kind in ("undo", "restore", "before"):
            action = mode
        ranker = (
            self.load_ranker() if self.config.rerank_top and not complaint else None
        )
        wanted = max(k, self.config.rerank_top) if ranker is not None else k
        found: list[Candidate] = []
        texts: dict[str, str] = {}  # each candidate's matched side, as words
        for pick in picks:
            if len(found) == wanted:
                break
            target = pick.version + offset
            if action == "rollback" and any(c.target == target for c in found):
                continue
            commits = tx.log(scope, version=pick.version)
            change = _change_of(tx, commits[0], pick.row_id) if commits else None
            if change is None or change.old_erased or change.new_erased:
                continue  # gone from the log, or its content erased since
            text = change_text(change, tx.scope_depth)
            words = f"{text.new if side == 'new' else text.old} {text.context}"
            scores = replace(pick.scores, coverage=coverage(base.intent.topic, words))
            change_id = f"{pick.version}.{commits[0].changes.index(change) + 1}"
            texts[change_id] = words
            found.append(
                Candidate(
                    change_id,
                    commits[0],
                    (change,),
                    target,
                    action,
                    (),
                    (),
                    scores,
                )
            )
        if ranker is not None:
            passages = [texts[c.id] for c in found]  # what the rerank reads
            found = self._rerank(ranker, base.intent.topic, found, passages)
        if kind == "restore" and _ORIGINAL.search(base.request):
            found = _earliest_first(found)
        candidates = [self._effect(tx, scope, base.head, c) for c in found[:k]]
        if not candidates:
            return replace(base, reason="nothing matched")
        if complaint is None:
            decided, reason = self._sure(candidates)
        else:
            decided, reason = _sure_of_planted(complaint, candidates[0])
        offered = (
            self._offered(
                scope, base.intent, candidates, texts, few_words=complaint is None
            )
            if decided
            else None
        )
        if offered:
            decided, reason = False, offered
        return replace(
            base, candidates=tuple(candidates), decided=decided, reason=reason
        )

    def _offered(
        self,
        scope: Namespace,
        intent: Intent,
        candidates: Sequence[Candidate],
        texts: dict[str, str],
        *,
        few_words: bool = True,
    ) -> str | None:
        """Why a sure match is offered rather than acted on, if it is: what
        the request asks for, and (with `few_words`) whether its few words
        pick one memory and the thing it names is the one the memory is about;
        a complaint about a planted memory is picked by the memory's shape, not
        by its words. `texts` holds each candidate's matched words."""
        if not intent.asked:
            return "the request names a memory, not clearly asking to change it now"
        if intent.kind not in self.config.act_on:
            what = (
                "going back to when something was still true"
                if intent.kind == "still"
                else f"a {intent.kind!r} request"
            )
            return f"{what} is confirmed first (ResolverConfig.act_on)"
        words = len(set(content_words(intent.topic)))
        best, *others = candidates
        if (
            few_words
            and words < self.config.act_words
            and any(
                not set(c.items) & set(best.items)
                and c.scores.coverage >= best.scores.coverage
                for c in others
            )
        ):
            return (
                f"the request names what it means in {words} word(s), and other "
                "memories hold them too (ResolverConfig.act_words)"
            )
        other = _another_name(intent.topic, _words_of(best.changes))
        if other:
            return (
                f"the request calls it {other!r}, a name the best match does not hold"
            )
        head = _head_of(intent.topic) if few_words else None
        if head is not None and coverage(head.words, texts[best.id]) < 1:
            # Does the thing named make the request any nearer the memory, or
            # is the match all in what it is for ("the bank loan for the
            # workshop" is no nearer the workshop's memory than "the workshop")?
            topic, text = intent.topic.strip(), texts[best.id]
            without = topic[: head.start] + topic[head.end :]
            embed = self.vectors().embeddings.embed_documents
            whole, rest, held = (_unit(v) for v in embed([topic, without, text]))
            if float(np.dot(whole, held) - np.dot(rest, held)) < _HEAD_ADDS:
                return (
                    f"the request is about {head.words!r}, which the best match "
                    "neither says nor means: it matched what that is for"
                )
        return None

    def _sure(self, candidates: Sequence[Candidate]) -> tuple[bool, str]:
        """The calibrated rule for acting alone (docs/benchmarks.md measures it):
        acting changes something, both retrievers rank the best first, it is
        close in meaning, and it leads the next clearly; a whole-scope
        rollback also holds at least half of the request's words.

        When the runner-up is another change of the same memory, the request's
        words must pick the version: the best must hold more of them. A revert
        whose items were changed again since may be decided: applying it
        changes nothing and reports the conflict (`apply_undo`).
        """
        config, best = self.config, candidates[0]
        if not best.diff and not best.conflicts:
            # Already undone, or the request meant another change: offer them.
            return False, "acting on the best match would change nothing"
        first = best.scores
        if "dense" not in config.retrievers or "bm25" not in config.retrievers:
            return False, "acting alone needs both searches to agree"
        runner_up = candidates[1] if len(candidates) > 1 else None
        second = runner_up.scores if runner_up is not None else None
        versions_tie = (
            runner_up is not None
            and bool(set(runner_up.items) & set(best.items))
            and runner_up.scores.coverage >= first.coverage
        )
        similarity = first.dense_score or 0.0
        lead = similarity - ((second.dense_score or 0.0) if second else 0.0)
        score = similarity + config.act_lead * lead
        rollback = best.action == "rollback"
        needed = config.act_score_rollback if rollback else config.act_score
        checks = [
            (
                first.bm25_rank == 1,
                "the word search finds no word of the request in it"
                if first.bm25_rank is None
                else "the word search ranks another change first",
            ),
            (first.dense_rank == 1, "the meaning search ranks another change first"),
            (
                similarity >= config.act_similarity,
                f"the best match is only {similarity:.2f} similar, "
                f"{config.act_similarity} to act",
            ),
            (
                lead >= config.margin,
                f"the two best matches are too close to call: {lead:.3f} apart, "
                f"{config.margin} to act",
            ),
            (
                score >= needed,
                f"the best match does not lead clearly: similarity {similarity:.2f} "
                f"+ {config.act_lead:g} x lead {lead:.2f} = {score:.2f}, {needed} "
                "to act",
            ),
            (
                not versions_tie,
                "the request names a memory but not which of its changes",
            ),
            (
                not rollback or first.coverage >= config.act_coverage_rollback,
                f"a rollback of the whole memory needs the request's words to pick "
                f"the version: the best match holds {first.coverage:.0%} of them, "
                f"{config.act_coverage_rollback:.0%} to act",
            ),
        ]
        failed = [why for ok, why in checks if not ok]
        if failed:
            return False, failed[0]
        return True, f"sure: first in both searches, leads the next by {lead:.2f}"

    @staticmethod
    def _effect(
        tx: LogTransaction, scope: Namespace, head: int, candidate: Candidate
    ) -> Candidate:
        """The candidate with what acting on it would change at HEAD."""
        if candidate.action == "revert":
            diff, conflicts = tx.revert_effect(
                scope, candidate.commit.version, items=candidate.items
            )
            return replace(candidate, diff=diff, conflicts=conflicts)
        target = candidate.target
        try:
            tx.check_whole(scope, target)
        except CompactedError:  # cannot be gone back to: acting changes nothing
            return candidate
        diff = tuple(tx.diff(scope, head, target)) if target != head else ()
        return replace(candidate, diff=diff)

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

    # -- requests that name no topic -------------------------------------------

    def _by_id(
        self,
        tx: LogTransaction,
        scope: Namespace,
        base: Resolution,
        ref: re.Match[str],
        mode: Mode,
    ) -> Resolution:
        """A change named by its id ("12.2", or "12" for the whole commit)."""
        version, position = int(ref[1]), ref[2]
        commits = tx.log(scope, version=version) if 1 <= version <= base.head else []
        if not commits or not commits[0].changes:
            return replace(base, reason=f"this memory has no change {ref[0]}")
        commit = commits[0]
        changes = commit.changes
        if position is not None:
            if not 1 <= int(position) <= len(changes):
                return replace(base, reason=f"this memory has no change {ref[0]}")
            changes = (changes[int(position) - 1],)
        kind = base.intent.kind if base.intent.kind in _PLAN else "undo"
        _, offset, action = _PLAN[kind]
        if mode != "auto" and kind in ("undo", "restore", "before"):
            action = mode
        change_id = f"{version}.{position}" if position else str(version)
        candidate = self._effect(tx, scope, base.head, Candidate(
            change_id, commit, changes, version + offset, action, (), (),
            StageScores(),
        ))  # fmt: skip
        return replace(
            base, candidates=(candidate,), decided=True, reason=f"change {change_id}"
        )

    def _latest(
        self, tx: LogTransaction, scope: Namespace, base: Resolution, mode: Mode
    ) -> Resolution:
        """No topic: the newest commit that changed memory ("undo the last
        change"), the newest `count` ("undo the last 3 changes": back to before
        them), or all of them ("forget everything": offered, never done alone),
        in the window if there is one (a proposal, or its rejection, changed none).
        """
        intent = base.intent
        window, kind, count = intent.window, intent.kind, intent.count
        everything = kind == "before"
        skip = ("propose", "reject")
        if kind == "at" and window is not None and window.end is not None:
            # "back to how it was on May 1": as it stood then, changed that day or not
            ended = tx.log(scope, until=window.end, limit=2, not_ops=skip)
            commits = [c for c in ended if c.created_at < window.end][:1]
        else:
            commits = tx.log(
                scope,
                since=window.start if window else None,
                limit=None if window or everything else min(count, base.head),
                not_ops=skip,
            )
            commits = [c for c in commits if window is None or c.created_at in window]
        if not commits:
            return replace(base, reason="no change in that time")
        commit = commits[-1] if everything else commits[: max(count, 1)][-1]
        several = everything or count > 1
        action: Action = (
            "rollback" if kind == "at" or several or mode == "rollback" else "revert"
        )
        target = commit.version if kind == "at" else commit.version - 1
        if action == "revert" and not commit.changes:
            action = "rollback"
        candidate = self._effect(tx, scope, base.head, Candidate(
            str(commit.version), commit, commit.changes, target, action, (), (),
            StageScores(),
        ))  # fmt: skip
        found = replace(base, candidates=(candidate,))
        if not candidate.diff and not candidate.conflicts:  # a redaction, say
            reason = f"undoing the latest change (v{commit.version}) changes nothing"
            return replace(found, reason=reason)
        since = f"going back to before v{commit.version} undoes every change since"
        if everything:
            return replace(found, reason=f"{since}: confirmed first")
        if len(commits) < count or (several and commit.version == 1):
            reason = f"asked for the last {count} changes; there are {len(commits)}"
            return replace(found, reason=f"{reason}: {since}, confirmed first")
        if several and window is not None and commits[0].version != base.head:
            return replace(found, reason=f"{since}, not only those: confirmed first")
        if not intent.asked:  # "the last few changes"
            return replace(found, reason="the request does not say how many changes")
        said = f"the last {count} changes" if several else "the latest change"
        return replace(found, decided=True, reason=said)

    def _redo(
        self, tx: LogTransaction, scope: Namespace, base: Resolution
    ) -> Resolution:
        """Redo = undo the last undo (a rollback or a revert): revert it, so what
        came after it stays."""
        undos = [
            c for op in ("rollback", "revert") for c in tx.log(scope, op=op, limit=1)
        ]
        if not undos:
            return replace(base, reason="there is no rollback or revert to redo")
        last = max(undos, key=lambda c: c.version)
        action: Action = "revert" if last.changes else "rollback"
        candidate = self._effect(tx, scope, base.head, Candidate(
            str(last.version), last, last.changes, last.version - 1, action, (), (),
            StageScores(),
        ))  # fmt: skip
        reason = f"redo: undo v{last.version} ({last.op})"
        topic, decided = base.intent.topic, base.intent.asked
        if not decided:
            reason = "the request names a redo, not clearly asking for it now"
        elif topic and not coverage(topic, _words_of(last.changes)):
            decided = False  # "redo my CV with bullet points": not that undo
            reason = f"the last undo (v{last.version}) did not touch {topic!r}"
        return replace(base, candidates=(candidate,), decided=decided, reason=reason)


def _another_name(topic: str, text: str) -> str | None:
    """A name the request gives ("my niece is called Sophie") that the matched
    memory does not hold, when the request corrects no name the memory holds
    ("her name is Nkechi, not Nneka" is a correction, and acts)."""
    held = {_stem(w) for w in content_words(text)}
    given = [
        m
        for m in _NAMED_AS.findall(topic)
        if content_words(m) and _stem(m.lower()) not in held
    ]
    denied = [m for m in _NOT_NAMED.findall(topic) if _stem(m.lower()) in held]
    return given[0] if given and not denied else None


class _Head(NamedTuple):
    """The thing a request names: its content words, and where it stands."""

    words: str
    start: int
    end: int


def _head_of(topic: str) -> _Head | None:
    """The thing `topic` names before what it is for or about, when that is
    more than a word for a memory: "the bank loan for the workshop" names
    "bank loan", "the bit about my sister" names nothing of its own.

    >>> _head_of("the bank loan for the workshop").words
    'bank loan'
    >>> _head_of("Morag's operation on her wrist").words
    'operation'
    >>> _head_of("the bit about my sister") is None
    True
    """
    topic = topic.strip()
    found = next(filter(None, (pattern.match(topic) for pattern in _HEADS)), None)
    if not found:
        return None
    words = [w for w in content_words(found.group(1)) if w not in _GENERIC_HEADS]
    return _Head(" ".join(words), *found.span(1)) if words else None


def _words_of(changes: Sequence[Change]) -> str:
    """The words of changes' old and new values, for matching a request to them."""
    return " ".join(
        f"{full_text(c.old) if c.old is not None else ''} "
        f"{full_text(c.new) if c.new is not None else ''} {c.key}"
        for c in changes
    )


def _unit(vector: Sequence[float]) -> np.ndarray:
    array = np.asarray(vector, dtype=np.float32)
    norm = float(np.linalg.norm(array))
    return array / norm if norm else array


@dataclass(frozen=True)
class _Complaint:
    """A request about a planted memory: the kind it names, if one, and the
    kinds of the picks that read as planted."""

    named: Planted | None
    kinds: tuple[Planted, ...]


def _planted_first(
    tx: LogTransaction, picks: list[_Pick], named: Planted | None
) -> tuple[list[_Pick], _Complaint]:
    """The picks whose new value reads as planted (`suspect.planted`) first,
    those of the kind the request names before the others.

    Within each, the one whose commit best matches the request comes first: a
    pasted page's planted text is saved beside what the page really said
    ("the handball parents doc" names the kiosk duty saved with its keywords).
    """
    position: dict[int, int] = {}
    for i, pick in enumerate(picks):
        position.setdefault(pick.version, i)
    found: dict[int, Planted] = {}
    for pick in picks:
        text = tx.indexed_text(pick.row_id)
        kind = planted(text[0]) if text is not None else None
        if kind is not None:
            found[pick.row_id] = kind
    first = sorted(
        (p for p in picks if p.row_id in found),
        key=lambda p: (found[p.row_id] != named, position[p.version]),
    )
    rest = [p for p in picks if p.row_id not in found]
    return [*first, *rest], _Complaint(named, tuple(found.values()))


def _sure_of_planted(complaint: _Complaint, best: Candidate) -> tuple[bool, str]:
    """Act alone on a complaint about a planted memory only when it names the
    kind ("keyword soup", "hidden instructions") and one memory reads so."""
    if best.action != "revert":
        return False, "going back in time over a planted memory is confirmed first"
    if complaint.named is None:
        return False, (
            "the request is about something pasted, but not whether keywords or "
            "instructions: more than one memory may be meant"
        )
    kind = planted(full_text(best.changes[0].new))
    if kind != complaint.named:
        return False, f"no memory that reads as planted {complaint.named} was found"
    if complaint.kinds.count(kind) > 1:
        return False, f"several memories read as planted {kind}"
    if not best.diff and not best.conflicts:
        return False, "acting on the best match would change nothing"
    return (
        True,
        f"sure: the one memory that reads as planted {kind}, as the request says",
    )


def _change_of(tx: LogTransaction, commit: Commit, row_id: int) -> Change | None:
    """The change of `commit` that log row `row_id` holds."""
    ids = tx.row_ids_of(commit.scope, commit.version)
    if row_id not in ids:
        return None
    return commit.changes[ids.index(row_id)]
