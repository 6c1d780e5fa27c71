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
`search.decide`.
"""

from __future__ import annotations

import concurrent.futures
import contextvars
import re
import threading
from collections import OrderedDict
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, replace
from datetime import datetime
from typing import Any

import numpy as np

from langgraph_chronomem.engine.base import LogTransaction
from langgraph_chronomem.engine.describe import change_text
from langgraph_chronomem.engine.fields import changed_fields, field_text
from langgraph_chronomem.engine.protocol import LogEngine
from langgraph_chronomem.engine.types import Change, Commit, Namespace
from langgraph_chronomem.errors import CompactedError, InvalidRequestError
from langgraph_chronomem.search.candidates import (
    DIFF_SHOWN,
    MODES,
    PLAN,
    Action,
    Candidate,
    Mode,
    Resolution,
    ResolverConfig,
    StageScores,
    coverage,
    words_of,
)
from langgraph_chronomem.search.decide import (
    Complaint,
    offered,
    sure,
    sure_of_planted,
)
from langgraph_chronomem.search.held import Said, missing
from langgraph_chronomem.search.intent import Intent, parse
from langgraph_chronomem.search.lexical import bm25
from langgraph_chronomem.search.suspect import (
    Planted,
    about_injected,
    imitates,
    named_kind,
    planted,
)
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
# The commits an undo makes.
_UNDOS = ("rollback", "revert")
# "undo the last 3 ...": a count, never a change id, whatever the parser made of it
_COUNTED = re.compile(r"(?i)\b(?:last|latest|previous|recent|past|steps)\b")
# "I want the original one back": of the matched memory's versions, its first
_ORIGINAL = re.compile(
    r"(?i)\b(?:original(?:ly)?|very\s+first|first\s+(?:version|one|note|entry)"
    r"|(?:how|what)\s+(?:it|I)\s+(?:was|had\s+it|said)\s+at\s+first)\b"
)


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
        self._vectors: OrderedDict[str, np.ndarray] = OrderedDict()  # texts'
        self._vectors_lock = threading.Lock()
        self._pool = concurrent.futures.ThreadPoolExecutor(
            1, thread_name_prefix="chronomem-dense"
        )

    def _embed(self, texts: Sequence[str]) -> list[np.ndarray]:
        """Unit vectors of `texts`, the last `_KEPT` embedded kept: a record's
        field texts come up request after request."""
        with self._vectors_lock:
            new = [t for t in dict.fromkeys(texts) if t not in self._vectors]
        found = self.vectors().embeddings.embed_documents(new) if new else []
        with self._vectors_lock:
            for text, vector in zip(new, found, strict=True):
                self._vectors[text] = unit(vector)
            vectors = [self._vectors[t] for t in texts]
            for text in texts:
                self._vectors.move_to_end(text)
            while len(self._vectors) > _KEPT:
                self._vectors.popitem(last=False)
        return vectors

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
                return self._by_id(tx, scope, base, ref, mode)
            if intent.kind == "redo":
                return self._redo(tx, scope, base)
            if not intent.topic:
                return self._latest(tx, scope, base, mode)
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
                picks, complaint = _planted_first(tx, picks, named_kind(base.request))
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
    ) -> list[_Pick]:
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
        query: np.ndarray | None,
        complaint: Complaint | None = None,
    ) -> Resolution:
        """Turn the best picks into candidates, and decide whether to act alone.

        What acting would change is worked out for the `k` returned only: for a
        rollback thousands of versions back it is the costly part. A complaint
        about a planted memory keeps its order (a rerank of the request's words
        against the memory's is what fails there) and has its own rule.
        """
        kind = base.intent.kind
        side, offset, action = PLAN[kind]
        if mode != "auto" and kind in ("undo", "restore", "before"):
            action = mode
        ranker = (
            self.load_ranker() if self.config.rerank_top and not complaint else None
        )
        wanted = max(k, self.config.rerank_top) if ranker is not None else k
        changes: list[tuple[Candidate, str, str]] = []  # with words, context
        for pick in picks:
            if len(changes) == wanted:
                break
            target = pick.version + offset
            if action == "rollback" and any(c.target == target for c, *_ in changes):
                continue
            commits = tx.log(scope, version=pick.version)
            change = _change_of(tx, commits[0], pick.row_id) if commits else None
            if change is None or change.old_erased or change.new_erased:
                continue  # gone from the log, or its content erased since
            text = change_text(change, tx.scope_depth)
            words = f"{text.new if side == 'new' else text.old} {text.context}"
            scores = replace(pick.scores, coverage=coverage(base.intent.topic, words))
            change_id = f"{pick.version}.{commits[0].changes.index(change) + 1}"
            candidate = Candidate(
                change_id, commits[0], (change,), target, action, (), (), scores
            )  # fmt: skip
            changes.append((candidate, words, text.context))
        found, texts = self._by_field(changes, side, base.intent.topic, query)
        if ranker is not None:
            passages = [texts[c.id] for c in found]  # what the rerank reads
            found = self._rerank(ranker, base.intent.topic, found, passages)
        if kind == "restore" and _ORIGINAL.search(base.request):
            found = _earliest_first(found)
        suspects: set[str] = set()
        if complaint is None:
            found, suspects = _real_first(found, texts, base.request)
        named = Said.of(base.intent.names, self.common_words(), base.request)
        rollbacks = [c.target for c in found[:k] if c.action == "rollback"]
        previews = tx.previews(scope, base.head, rollbacks, DIFF_SHOWN)
        candidates = [
            replace(
                self._effect(tx, scope, base.head, c, previews),
                lacking=tuple(missing(named, texts[c.id])),
            )
            for c in found[:k]
        ]
        if not candidates:
            return replace(base, reason="nothing matched")
        if complaint is None:
            decided, reason = sure(self.config, candidates)
        else:
            decided, reason = sure_of_planted(complaint, candidates[0])
        why_not = decided and offered(
            self.config,
            base.intent,
            candidates,
            texts,
            lambda texts: self.vectors().embeddings.embed_documents(texts),
            by_words=complaint is None,
            named=bool(named),
        )
        if why_not:
            decided, reason = False, why_not
        if decided and candidates[0].id in suspects:
            decided = False
            reason = (
                "the best match reads as planted, not learned (a run of keywords "
                "or text for the assistant): confirmed first"
            )
        return replace(
            base, candidates=tuple(candidates), decided=decided, reason=reason
        )

    def _by_field(
        self,
        changes: list[tuple[Candidate, str, str]],
        side: str,
        topic: str,
        query: np.ndarray | None,
    ) -> tuple[list[Candidate], dict[str, str]]:
        """The candidates, each change to a record (`engine.fields`) as the
        request names it, with each candidate's matched words by id.

        A change to a record comes first as its field the request means: the
        one its words name ("forget that I'm vegetarian": the profile's
        `diet`), or the one nearest in meaning when they name none (if it is
        `act_similarity` near), and then whole (when it changed several
        fields); as a whole when the words name several of its fields
        ("forget my cat Miso"). Reverting one field keeps what the record's
        other fields became since.
        """
        fields = [self._record_fields(c, side) for c, *_ in changes]
        said = {
            (i, name): f"{field_text(_side_of(c, side), (name,))} {context}"
            for i, ((c, _, context), names) in enumerate(
                zip(changes, fields, strict=True)
            )
            for name in names
        }
        named = {
            i: [n for n in names if coverage(topic, said[i, n])]
            for i, names in enumerate(fields)
        }
        # a field's own nearness is needed where the change's vector is not
        # the field's: a change to several fields, or the side it replaced
        weigh = [
            (i, n)
            for i, names in enumerate(fields)
            if len(named[i]) < 2 and (len(names) > 1 or side == "old")
            for n in named[i] or names
        ]
        near: dict[tuple[int, str], float] = {}
        if weigh and query is not None:
            vectors = self._embed([said[k] for k in weigh])
            near = {
                k: float(np.dot(query, v)) for k, v in zip(weigh, vectors, strict=True)
            }
        found, texts = [], {}
        for i, ((candidate, words, _), names) in enumerate(
            zip(changes, fields, strict=True)
        ):
            if not names or len(named[i]) > 1:
                found.append(candidate)
                texts[candidate.id] = words
                continue
            name = max(named[i] or names, key=lambda n: near.get((i, n), 0.0))
            if not named[i] and near.get((i, name), 0.0) < self.config.act_similarity:
                found.append(candidate)  # no field is what it means: the whole
                texts[candidate.id] = words
                continue
            one = replace(
                candidate,
                id=f"{candidate.id}/{name}",
                changes=(replace(candidate.changes[0], fields=(name,)),),
                scores=replace(
                    candidate.scores,
                    coverage=coverage(topic, said[i, name]),
                    dense_score=near.get((i, name), candidate.scores.dense_score),
                ),
            )
            found.append(one)
            texts[one.id] = said[i, name]
            if len(names) > 1:
                found.append(candidate)
                texts[candidate.id] = words
        return found, texts

    @staticmethod
    def _record_fields(candidate: Candidate, side: str) -> tuple[str, ...]:
        """The fields a candidate's change set, changed or dropped, when it is a
        revert of a change to a record that still stands; else `()`."""
        change = candidate.changes[0]
        if candidate.action != "revert" or change.new is None:
            return ()
        if _side_of(candidate, side) is None:
            return ()
        return changed_fields(change.old, change.new)

    @staticmethod
    def _effect(
        tx: LogTransaction,
        scope: Namespace,
        head: int,
        candidate: Candidate,
        previews: Mapping[int, tuple[tuple[Change, ...], int]] | None = None,
    ) -> Candidate:
        """The candidate with what acting on it would change at HEAD: how many
        items, and the first `DIFF_SHOWN` of them. A rollback's comes from
        `previews` (`LogTransaction.previews`, which reads the rows since the
        earliest of several targets once), or is read for it alone."""
        if candidate.action == "revert":
            diff, conflicts = tx.revert_effect(
                scope,
                candidate.commit.version,
                items=candidate.items,
                fields=candidate.fields,
            )
            shown = diff[:DIFF_SHOWN]
            return replace(
                candidate, diff=shown, conflicts=conflicts, changed=len(diff)
            )
        target = candidate.target
        try:
            tx.check_whole(scope, target)
        except CompactedError:  # cannot be gone back to: acting changes nothing
            return candidate
        if previews is None or target not in previews:
            previews = tx.previews(scope, head, [target], DIFF_SHOWN)
        shown, changed = previews[target]
        return replace(candidate, diff=shown, conflicts=(), changed=changed)

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
        """A change named by its id ("12.2", "12" for the whole commit, or
        "12.2/diet" for one field of a record it changed)."""
        version, position, field = int(ref[1]), ref[2], ref[3]
        commits = tx.log(scope, version=version) if 1 <= version <= base.head else []
        absent = replace(base, reason=f"this memory has no change {ref[0]}")
        if not commits or not commits[0].changes:
            return absent
        commit = commits[0]
        changes = commit.changes
        if position is not None:
            if not 1 <= int(position) <= len(changes):
                return absent
            changes = (changes[int(position) - 1],)
        if field is not None:
            change = changes[0]
            if field not in changed_fields(change.old, change.new):
                return absent
            changes = (replace(change, fields=(field,)),)
        kind = base.intent.kind if base.intent.kind in PLAN else "undo"
        _, offset, action = PLAN[kind]
        if mode != "auto" and kind in ("undo", "restore", "before"):
            action = mode
        change_id = f"{version}.{position}" if position else str(version)
        change_id += f"/{field}" if field else ""
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
        if (kind, count, window) == ("undo", 1, None) and commits[0].op in _UNDOS:
            return self._after_an_undo(tx, scope, base, commits[0])
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

    def _after_an_undo(
        self, tx: LogTransaction, scope: Namespace, base: Resolution, undo: Commit
    ) -> Resolution:
        """ "Undo the last thing" right after an undo: redoing it would bring
        back what the person just asked to forget, and in a chat they most
        likely mean the last fact they gave. Both are offered: the undo
        itself, and the newest change that was no undo."""
        offered = [self._redo(tx, scope, base).candidates[0]]
        saved = tx.log(scope, limit=1, not_ops=(*_UNDOS, "propose", "reject"))
        if saved and saved[0].changes:
            last = saved[0]
            change = Candidate(
                str(last.version), last, last.changes, last.version - 1, "revert",
                (), (), StageScores(),
            )  # fmt: skip
            offered.append(self._effect(tx, scope, base.head, change))
        reason = (
            f"the latest change (v{undo.version}) is itself an undo: undo it "
            "(bring back what it removed), or the last change before it?"
        )
        return replace(base, candidates=tuple(offered), reason=reason)

    def _redo(
        self, tx: LogTransaction, scope: Namespace, base: Resolution
    ) -> Resolution:
        """Redo = undo the last undo (a rollback or a revert): revert it, so what
        came after it stays."""
        undos = [c for op in _UNDOS for c in tx.log(scope, op=op, limit=1)]
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
        elif topic and not coverage(topic, words_of(last.changes)):
            decided = False  # "redo my CV with bullet points": not that undo
            reason = f"the last undo (v{last.version}) did not touch {topic!r}"
        return replace(base, candidates=(candidate,), decided=decided, reason=reason)


def _planted_first(
    tx: LogTransaction, picks: list[_Pick], named: Planted | None
) -> tuple[list[_Pick], Complaint]:
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
    return [*first, *rest], Complaint(named, tuple(found.values()))


def _real_first(
    found: list[Candidate], texts: Mapping[str, str], request: str
) -> tuple[list[Candidate], set[str]]:
    """`found` with each memory that reads as planted (`suspect.planted`) or as
    made of the request's own words (`suspect.imitates`) after every other
    that holds as much of the request: stored text never outranks what it
    imitates. Also the ids of those suspects, never acted on alone."""
    suspects = {
        c.id for c in found if planted(texts[c.id]) or imitates(texts[c.id], request)
    }
    real = [c.scores.coverage for c in found if c.id not in suspects]
    outranked = {
        c.id
        for c in found
        if c.id in suspects and any(held >= c.scores.coverage for held in real)
    }
    return sorted(found, key=lambda c: c.id in outranked), suspects


def _side_of(candidate: Candidate, side: str) -> Any:
    """The value a candidate's change introduced (`new`) or replaced (`old`)."""
    change = candidate.changes[0]
    return change.new if side == "new" else change.old


def _change_of(tx: LogTransaction, commit: Commit, row_id: int) -> Change | None:
    """The change of `commit` that log row `row_id` holds."""
    ids = tx.row_ids_of(commit.scope, commit.version)
    if row_id not in ids:
        return None
    return commit.changes[ids.index(row_id)]
