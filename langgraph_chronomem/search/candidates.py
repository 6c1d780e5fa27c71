"""The undo search's settings, and what it finds: candidates and a resolution.

    >>> from langgraph_chronomem.search.candidates import coverage
    >>> coverage("my move to NYC", "User moved to NYC in May")
    1.0

`PLAN` says, per intent, which side of a change a request names and where its
target lies; `ResolverConfig` holds the knobs; a `Resolution` is what
`Resolver.resolve` returns, its `Candidate`s best first, each with the
`StageScores` every stage gave it.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from typing import Literal

from langgraph_chronomem.engine.describe import describe_change
from langgraph_chronomem.engine.fields import full_text
from langgraph_chronomem.engine.types import Change, Commit, Conflict, Namespace
from langgraph_chronomem.errors import ConfigError
from langgraph_chronomem.search.intent import Intent
from langgraph_chronomem.search.words import content_words

__all__ = [
    "DIFF_SHOWN",
    "MODES",
    "PLAN",
    "Action",
    "Candidate",
    "Mode",
    "Pick",
    "Resolution",
    "ResolverConfig",
    "StageScores",
    "coverage",
    "plan",
    "stem",
    "words_of",
]

DIFF_SHOWN = 50
"""How many of the items acting on a candidate would change it lists (`diff`)."""

Mode = Literal["auto", "revert", "rollback"]
"""How much an undo changes: `revert` only the matched items, `rollback` the
whole scope to a version, `auto` as the request asks (DESIGN.md)."""
Action = Literal["revert", "rollback"]
MODES = ("auto", "revert", "rollback")

# Per intent: which side of a change the request names, how far back the target
# lies from the matched change's version, and the action `auto` takes.
PLAN: dict[str, tuple[str, int, Action]] = {
    "undo": ("new", -1, "revert"),  # "forget that I moved to NYC"
    "restore": ("old", -1, "revert"),  # "bring back my Boston address"
    "before": ("new", -1, "rollback"),  # "go back to before I moved"
    "at": ("new", 0, "rollback"),  # "go back to when I got the dog"
    "still": ("old", -1, "rollback"),  # "back to when I still ate meat"
}


def plan(kind: str, mode: Mode) -> tuple[str, int, Action]:
    """`PLAN[kind]`, its action the one `mode` forces for a request that names
    a change (`undo`, `restore`, `before`) when it is not `auto`.

        >>> plan("undo", "rollback")
        ('new', -1, 'rollback')
    """
    side, offset, action = PLAN[kind]
    if mode != "auto" and kind in ("undo", "restore", "before"):
        action = mode
    return side, offset, action


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
        act_similarity: To act alone, the best candidate must be at least this
            similar to the request (and hold a word of it, and every term it
            names, with no other candidate holding as much: `search.decide`).
            Chosen on blind battery A's tuning half (docs/benchmarks.md).
        act_coverage_rollback: A rollback acts alone only when the matched
            change holds at least this share of the request's words: a scope
            has many versions, and the words must pick one.
        act_on: The intents the resolver may act on alone. "Back to when X
            was still true" is left out: on the tuning split it was right 3
            times in 4 when it acted, and a wrong one rolls the whole memory
            back over every change since (it is offered instead).
        follow_writes: On a store opened without `index=`, embed the item
            changes the undo search reads in a background thread as writes
            land (at a low priority; during a burst it only runs the model,
            and writes the vectors once the writes pause or the store
            closes), so the first undo after a burst finds them ready.
            `None` (the default): yes with a Chroma server or a
            client of yours; not with the embedded Chroma, which serves one
            process: the follower would hold it and lock out another
            process's undo (the `chronomem` command beside a running app).
            `True` to follow there too, in an app that is the store's only
            process. `False` for a store that may never undo: no model
            loads and no Chroma opens until the first undo (or
            `wait_for_index`), which embeds the changes its scope has had
            since; from then on the opened vectors follow writes.
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
    act_similarity: float = 0.3
    act_coverage_rollback: float = 0.5
    act_on: frozenset[str] = frozenset({"undo", "restore", "before", "at"})
    follow_writes: bool | None = None

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
        strange = set(self.act_on) - set(PLAN)
        if strange:
            raise ConfigError(
                f"act_on holds intents among {', '.join(PLAN)}; got {sorted(strange)}"
            )
        object.__setattr__(self, "act_on", frozenset(self.act_on))


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
            all of v12's changes, `"12.2/diet"` only the `diet` field of a
            record it changed. `undo(scope, "12.2")` acts on it by id.
        commit: The commit that made the change.
        changes: The matched item changes (one, or all of a commit).
        target: The version the request points at: before the change (undo,
            restore, "go back to before"), at it ("go back to when"), or the
            last one at which a replaced value held ("when X was still true").
        action: `revert` restores only `changes`' items; `rollback` the whole
            scope to `target`.
        diff: What acting would change at HEAD (old = HEAD now): the first
            `DIFF_SHOWN` items of it, so a request that goes back over a
            100k-item import neither holds nor shows 100k changes.
        conflicts: Items a revert would overwrite: changed again since.
        scores: The score each stage gave.
        changed: How many items acting would change (`diff` lists the first).
        lacking: What the request names that the change does not hold
            (`search.held`): one reason it is not acted on alone.
    """

    id: str
    commit: Commit
    changes: tuple[Change, ...]
    target: int
    action: Action
    diff: tuple[Change, ...]
    conflicts: tuple[Conflict, ...]
    scores: StageScores
    changed: int = 0
    lacking: tuple[str, ...] = ()

    @property
    def summary(self) -> str:
        """The matched changes in words."""
        return "; ".join(describe_change(c) for c in self.changes)

    @property
    def items(self) -> tuple[tuple[Namespace, str], ...]:
        """The (namespace, key) of every item the change touched."""
        return tuple((c.namespace, c.key) for c in self.changes)

    @property
    def fields(self) -> tuple[str, ...]:
        """The fields of a record the candidate is about (`"12.1/diet"`), or
        `()` for whole items."""
        return self.changes[0].fields if len(self.changes) == 1 else ()


@dataclass
class Pick:
    """A change in the making: its log row, and what each stage said."""

    row_id: int
    version: int
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


def coverage(topic: str, text: str) -> float:
    """The share of `topic`'s distinct content words (or their stems) in `text`.

    >>> coverage("my move to NYC", "User moved to NYC in May")
    1.0
    >>> coverage("my peanut allergy", "User is allergic to peanuts")
    0.5
    """
    words = {stem(w) for w in content_words(topic)}
    if not words:
        return 0.0
    found = {stem(w) for w in content_words(text)}
    return len(words & found) / len(words)


def stem(word: str) -> str:
    """A crude stem, enough to meet "moved" with "move" and "peanuts" with "peanut"."""
    for suffix in ("ing", "ed", "es", "s", "e"):
        if len(word) > len(suffix) + 2 and word.endswith(suffix):
            return word[: -len(suffix)]
    return word


def words_of(changes: Sequence[Change]) -> str:
    """The words of changes' old and new values, for matching a request to them."""
    return " ".join(
        f"{full_text(c.old) if c.old is not None else ''} "
        f"{full_text(c.new) if c.new is not None else ''} {c.key}"
        for c in changes
    )
