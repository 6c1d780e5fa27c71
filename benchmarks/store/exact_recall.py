"""Recall@10 of semantic search and the undo search against brute force, on sets
built to break approximate indexes.

Issue 10 asks that `store.search(prefix, query=...)` and the undo search return
what an exact search over the scope would. Each set below is written into a
ChronoStore (and, where it applies, LangGraph's `InMemoryStore` with the same
index, as the control); every query's top 10 is compared with a brute-force
cosine, computed here with numpy over the HEAD items under the prefix (for the
undo search: over the scope's change vectors), from the same embeddings.

1. issue: `{"key1": "mmm"}` under `("test", "M")` and N items `{"key1": "no"}`
   under other `("test", ...)` namespaces, `fields=["key1"]`, real embeddings:
   M must come first with score ~1.0 for `("test",)` and `("test", "M")`.
2. identical: one target among thousands of identical vectors in its own
   scope, and a second target alone in a scope next to them.
3. near-duplicates: a few vectors, each with many slightly perturbed copies,
   over 10 scopes; some copies then updated or deleted (stale vectors linger).
4. many users: memory-like facts (real embeddings), 50 users x 200 items,
   20% updated and 5% deleted, searched per user and across all users.
5. undo: `VectorIndex.query_changes` (the undo search's dense stage) against
   brute force over the scope's change vectors, on the stores of sets 2-4;
   and `store.resolve` with only the dense stage must pick set 2's targets.

    python benchmarks/store/exact_recall.py --quick     # smoke test (a few seconds)
    python benchmarks/store/exact_recall.py --out benchmarks/results/exact_recall.md \\
        --json benchmarks/results/exact_recall.json   # full run (a few minutes)

Ties: a hit counts when its brute-force score is within `TIE` of the 10th
best's, so any of many identical vectors tied at the 10th place is right.
Sets 2 and 3 use `NamedVectors`, a deterministic `Embeddings` whose texts name
their vectors, so duplicates are exact; sets 1 and 4 use all-MiniLM-L6-v2
(`default_embeddings()`, offline), memoised so every store and the brute force
see the same vectors.
"""

from __future__ import annotations

import argparse
import json
import random
import re
import shlex
import statistics
import sys
import tempfile
import time
from collections.abc import Callable, Iterable, Mapping, Sequence
from dataclasses import asdict, dataclass, replace
from pathlib import Path
from typing import Any

if __package__ in (None, ""):  # run as `python benchmarks/store/exact_recall.py`
    sys.path.insert(0, str(Path(__file__).resolve().parents[2]))

import numpy as np
from langchain_core.embeddings import Embeddings
from langgraph.store.base import BaseStore, IndexConfig, PutOp
from langgraph.store.memory import InMemoryStore

import langgraph_chronomem
from benchmarks.harness.report import (
    PACKAGES,
    add_output_arguments,
    header,
    load_average,
    machine_info,
    markdown_table,
    progress,
    write_report,
)
from benchmarks.store.indexed_writes import QUERIES, fact
from langgraph_chronomem import ChronoStore
from langgraph_chronomem.engine.rows import scope_key
from langgraph_chronomem.models import default_embeddings
from langgraph_chronomem.search.resolve import ResolverConfig

__all__ = [
    "FULL",
    "QUICK",
    "CachedEmbeddings",
    "NamedVectors",
    "Settings",
    "main",
    "recall_at",
    "run",
]

K = 10
TIE = 1e-6  # float32 vectors (as Chroma keeps them) resolve cosine to ~1e-7
DIMS = 384
CHUNK = 500  # ops per batch when loading
CHRONO = "ChronoStore"
IN_MEMORY = "InMemoryStore"
UNDO = "ChronoStore undo (query_changes)"

Namespace = tuple[str, ...]
Key = tuple[Namespace, str]


@dataclass(frozen=True)
class Settings:
    """How big the sets are.

    Attributes:
        issue_sizes: Items `{"key1": "no"}` next to M (set 1).
        identical: Identical vectors next to the target (set 2).
        bases: Vectors with near-duplicate copies (set 3).
        copies: Copies of each (set 3).
        users: Users of set 4.
        items_per_user: Items per user (set 4).
        scopes_queried: Scopes searched one by one (sets 3-5).
        random_queries: Random query vectors per set (sets 2-3).
        fresh_writes: Puts and deletes each searched right after (set 3).
        seed: Seed of every random choice.
    """

    issue_sizes: tuple[int, ...]
    identical: int
    bases: int
    copies: int
    users: int
    items_per_user: int
    scopes_queried: int
    random_queries: int
    fresh_writes: int
    seed: int = 20240610


FULL = Settings(
    issue_sizes=(200, 2_000), identical=3_000, bases=5, copies=1_000, users=50,
    items_per_user=200, scopes_queried=10, random_queries=8, fresh_writes=30,
)  # fmt: skip
QUICK = Settings(
    issue_sizes=(200,), identical=300, bases=3, copies=40, users=6,
    items_per_user=15, scopes_queried=2, random_queries=2, fresh_writes=6,
)  # fmt: skip


# -- embeddings -------------------------------------------------------------------

_NAME = re.compile(r"\bvec\d+\b")


class NamedVectors(Embeddings):
    """Deterministic embeddings: every text holds a name `vecN` given out by
    `name(vector)`, and embeds to that vector, wherever the name sits in it (an
    item's field, or a change's text with its key around it).

        >>> vectors = NamedVectors()
        >>> name = vectors.name([3.0, 4.0])
        >>> name, vectors.embed_query(f"k1 {name}")
        ('vec0', [3.0, 4.0])
    """

    def __init__(self) -> None:
        self._vectors: list[list[float]] = []

    def name(self, vector: Sequence[float] | np.ndarray) -> str:
        """A new name for `vector`: texts holding it embed to `vector`."""
        self._vectors.append([float(x) for x in vector])
        return f"vec{len(self._vectors) - 1}"

    def embed_documents(self, texts: list[str]) -> list[list[float]]:
        found = []
        for text in texts:
            match = _NAME.search(text)
            if match is None:
                raise ValueError(f"no vector named in {text!r}")
            found.append(self._vectors[int(match.group()[3:])])
        return found

    def embed_query(self, text: str) -> list[float]:
        return self.embed_documents([text])[0]


class CachedEmbeddings(Embeddings):
    """`inner`, each distinct text embedded once: every store and the brute
    force then compare the very same vectors.

        >>> vectors = NamedVectors()
        >>> cached = CachedEmbeddings(vectors)
        >>> cached.embed_documents([vectors.name([1.0, 0.0])] * 2)
        [[1.0, 0.0], [1.0, 0.0]]
    """

    def __init__(self, inner: Embeddings) -> None:
        self.inner = inner
        self._known: dict[str, list[float]] = {}

    def embed_documents(self, texts: list[str]) -> list[list[float]]:
        missing = [t for t in dict.fromkeys(texts) if t not in self._known]
        if missing:
            self._known.update(
                zip(missing, self.inner.embed_documents(missing), strict=True)
            )
        return [self._known[t] for t in texts]

    def embed_query(self, text: str) -> list[float]:
        return self.embed_documents([text])[0]


def _unit(vector: Any) -> np.ndarray:
    array = np.asarray(vector, dtype=np.float64)
    return array / (np.linalg.norm(array) or 1.0)


# -- brute force and recall -------------------------------------------------------


def recall_at(
    found: Sequence[tuple[Any, float]], truth: Mapping[Any, float], k: int = K
) -> float:
    """The share of the true top `k` that `found` (ids, best first) holds.

    `truth` maps every candidate id to its brute-force score. A hit counts when
    its true score is within `TIE` of the `k`-th best's, so any of several ids
    tied at the `k`-th place is right; an id not in `truth` (not at HEAD, or
    outside the prefix) never counts.

        >>> recall_at([("a", 1.0), ("c", 0.5)], {"a": 1.0, "b": 0.5, "c": 0.5}, k=2)
        1.0
        >>> recall_at([("a", 1.0), ("d", 0.5)], {"a": 1.0, "b": 0.5, "c": 0.4}, k=2)
        0.5
    """
    best = sorted(truth.values(), reverse=True)[:k]
    if not best:
        return 1.0 if not found else 0.0
    floor = best[-1] - TIE
    hits = sum(1 for key, _ in found[:k] if truth.get(key, -np.inf) >= floor)
    return hits / len(best)


class Heads:
    """The HEAD items a set wrote, as written here: key -> text embedded."""

    def __init__(self, embeddings: Embeddings) -> None:
        self.embeddings = embeddings
        self.texts: dict[Key, str] = {}

    def write(self, stores: Iterable[BaseStore], ops: Sequence[PutOp]) -> None:
        """Apply `ops` (a value `None` deletes) to every store and to the record.

        InMemoryStore gets them one at a time, as `put` gives them: its `batch`
        raises `ValueError` ("Number of embeddings (2) does not match number of
        indices (201)") when two items of one batch share a text.
        """
        for store in stores:
            step = CHUNK if isinstance(store, ChronoStore) else 1
            for start in range(0, len(ops), step):
                store.batch(ops[start : start + step])
        for op in ops:
            key = (op.namespace, op.key)
            if op.value is None:
                self.texts.pop(key, None)
            else:
                self.texts[key] = next(iter(op.value.values()))

    def scores(self, prefix: Namespace, query: str) -> dict[Key, float]:
        """Brute force: the cosine of every HEAD item under `prefix` to `query`."""
        keys = [k for k in self.texts if k[0][: len(prefix)] == prefix]
        if not keys:
            return {}
        vectors = self.embeddings.embed_documents([self.texts[k] for k in keys])
        matrix = np.asarray(vectors, dtype=np.float64)
        matrix /= np.maximum(np.linalg.norm(matrix, axis=1), 1e-12)[:, None]
        scores = matrix @ _unit(self.embeddings.embed_query(query))
        return dict(zip(keys, scores.tolist(), strict=True))


@dataclass(frozen=True)
class Query:
    """One query's outcome against brute force."""

    set: str
    store: str
    prefix: Namespace
    query: str
    recall: float
    score_error: float  # largest |score - brute force| over the hits
    ms: float
    hits: int
    first: str  # the best hit, as namespace/key or a row id
    first_score: float  # the score the store gave it


def _ms(start: int) -> float:
    return (time.perf_counter_ns() - start) / 1e6


def search_query(
    name: str,
    store_name: str,
    store: BaseStore,
    heads: Heads,
    prefix: Namespace,
    query: str,
    label: str,
) -> Query:
    """`store.search(prefix, query=...)`'s top 10 against brute force."""
    start = time.perf_counter_ns()
    items = store.search(prefix, query=query, limit=K)
    ms = _ms(start)
    truth = heads.scores(prefix, query)
    found = [((tuple(i.namespace), i.key), i.score or 0.0) for i in items]
    error = max(
        (abs(score - truth.get(key, np.inf)) for key, score in found), default=0.0
    )
    first = "/".join([*found[0][0][0], found[0][0][1]]) if found else "-"
    return Query(
        name,
        store_name,
        prefix,
        label,
        recall_at(found, truth),
        error,
        ms,
        len(found),
        first,
        found[0][1] if found else float("nan"),
    )


def change_vectors(store: ChronoStore, scope: Namespace) -> tuple[dict[int, Any], int]:
    """The scope's change vectors as its Chroma collection holds them (row id ->
    vector), after a catch-up; and how many of the log's changes with a value
    have none there (0 when the projection is complete)."""
    index = store._search.vectors()
    index.catch_up(items=False)
    held = index.changes.get(
        where={"scope": scope_key(scope)}, include=["embeddings", "metadatas"]
    )
    vectors = {
        int(meta["row"]): vector
        for meta, vector in zip(held["metadatas"], held["embeddings"], strict=True)
    }
    with store._engine.transaction(write=False) as tx:
        logged = {row.row_id for row in tx.change_rows(scope=scope) if row.text.new}
    return vectors, len(logged - set(vectors)) + len(set(vectors) - logged)


def undo_queries(
    name: str, store: ChronoStore, scope: Namespace, queries: Mapping[str, str]
) -> tuple[list[Query], int, int]:
    """`query_changes(scope, ...)`'s top 10 against brute force over the
    scope's change vectors; how many vectors the scope has; and the
    projection's missing or extra rows."""
    vectors, mismatched = change_vectors(store, scope)
    rows = list(vectors)
    matrix = np.asarray([vectors[r] for r in rows], dtype=np.float64)
    matrix /= np.maximum(np.linalg.norm(matrix, axis=1), 1e-12)[:, None]
    index = store._search.vectors()
    results = []
    for label, text in queries.items():
        query = store._search.embeddings.embed_query(text)
        start = time.perf_counter_ns()
        hits = index.query_changes(scope, query, n=K)
        ms = _ms(start)
        truth = dict(zip(rows, (matrix @ _unit(query)).tolist(), strict=True))
        found = [(hit.row_id, hit.score) for hit in hits]
        error = max(
            (abs(score - truth.get(row, np.inf)) for row, score in found), default=0.0
        )
        results.append(
            Query(
                name,
                UNDO,
                scope,
                label,
                recall_at(found, truth),
                error,
                ms,
                len(found),
                f"row {found[0][0]}" if found else "-",
                found[0][1] if found else float("nan"),
            )
        )
    return results, len(rows), mismatched


# -- the sets ---------------------------------------------------------------------


@dataclass(frozen=True)
class Check:
    """A pass/fail fact the issue asks for."""

    name: str
    measured: str
    passed: bool


@dataclass
class Measured:
    """Everything one run found."""

    queries: list[Query]
    checks: list[Check]
    items: dict[str, int]  # set -> HEAD items (undo sets: change vectors)
    seconds: dict[str, float]  # set -> wall time, writes included


def open_chrono(
    directory: Path, embeddings: Embeddings, field: str, depth: int = 2, **kw: Any
) -> ChronoStore:
    """A fresh indexed ChronoStore embedding `field`."""
    return ChronoStore.from_path(
        directory, scope_depth=depth, index=index_config(embeddings, field), **kw
    )


def index_config(embeddings: Embeddings, field: str) -> IndexConfig:
    """The index every store of a set gets: one embeddings object, one field."""
    return {"dims": DIMS, "embed": embeddings, "fields": [field]}


def _rank(results: Sequence[Query], store: str, prefix: Namespace) -> Query:
    (query,) = [q for q in results if q.store == store and q.prefix == prefix]
    return query


def issue_set(
    directory: Path, embeddings: Embeddings, settings: Settings, out: Measured
) -> None:
    """Set 1: M among N items `{"key1": "no"}`, at scope depth 0 and 2."""
    for size in settings.issue_sizes:
        for depth in (0, 2):
            name = f"issue: M among {size:,} 'no' (scope_depth={depth})"
            heads = Heads(embeddings)
            control = InMemoryStore(index=index_config(embeddings, "key1"))
            with open_chrono(
                directory / f"issue-{size}-{depth}", embeddings, "key1", depth
            ) as store:
                ops = [PutOp(("test", "M"), "m", {"key1": "mmm"})]
                ops += [
                    PutOp(("test", f"n{i}"), "n", {"key1": "no"}) for i in range(size)
                ]
                heads.write([store, control], ops)
                for prefix in [("test",), ("test", "M")]:
                    for store_name, s in [(CHRONO, store), (IN_MEMORY, control)]:
                        out.queries.append(
                            search_query(
                                name, store_name, s, heads, prefix, "mmm", "mmm"
                            )
                        )
                    out.queries.append(
                        search_query(name, CHRONO, store, heads, prefix, "no", "no")
                    )
            for prefix in [("test",), ("test", "M")]:
                mine = [q for q in out.queries if q.set == name and q.query == "mmm"]
                got = _rank(mine, CHRONO, prefix)
                out.checks.append(
                    Check(
                        f"{name}: search({prefix}, 'mmm') returns M first, score ~1.0",
                        f"first {got.first}, score {got.first_score:.6f}",
                        got.first == "test/M/m" and abs(got.first_score - 1.0) < 1e-4,
                    )
                )
            out.items[name] = len(heads.texts)


def _noisy(rng: np.random.Generator, base: np.ndarray, sigma: float) -> np.ndarray:
    noise = rng.standard_normal(len(base))
    return _unit(base + sigma * noise / np.linalg.norm(noise))


def identical_set(
    directory: Path, settings: Settings, out: Measured
) -> tuple[ChronoStore, dict[str, Any]]:
    """Set 2: alice holds `identical` copies of one vector and a target near
    them; bob holds a second target alone; carol holds as many copies again.

    Returns the store (open, for the undo set) and what the undo set asks.
    """
    name = f"identical: 1 target among {settings.identical:,} identical vectors"
    rng = np.random.default_rng(settings.seed)
    vectors = NamedVectors()
    base = _unit(rng.standard_normal(DIMS))
    dup = vectors.name(base)
    target = vectors.name(_noisy(rng, base, 0.2))
    alone = vectors.name(_noisy(rng, base, 0.2))
    queries = {
        "target": target,
        "bob's target": alone,
        "the duplicate": dup,
        "between": vectors.name(_unit(base) + _unit(vectors.embed_query(target))),
        **{
            f"random {i}": vectors.name(rng.standard_normal(DIMS))
            for i in range(settings.random_queries)
        },
        **{
            f"near the duplicate {i}": vectors.name(_noisy(rng, base, 0.05))
            for i in range(settings.random_queries)
        },
    }
    alice, bob, carol = (
        ("memories", "alice"),
        ("memories", "bob"),
        ("memories", "carol"),
    )
    resolver = ResolverConfig(retrievers=frozenset({"dense"}), rerank_top=0)
    store = open_chrono(directory / "identical", vectors, "text", resolver=resolver)
    control = InMemoryStore(index=index_config(vectors, "text"))
    heads = Heads(vectors)
    copies = [
        PutOp(scope, f"dup{i}", {"text": dup})
        for scope in (alice, carol)
        for i in range(settings.identical)
    ]
    heads.write([store, control], copies)
    heads.write([store, control], [PutOp(alice, "target", {"text": target})])
    target_version = store.head(alice)
    heads.write([store, control], [PutOp(bob, "target", {"text": alone})])
    prefixes: list[Namespace] = [alice, bob, ("memories",), ()]
    for label, text in queries.items():
        for prefix in prefixes:
            for store_name, s in [(CHRONO, store), (IN_MEMORY, control)]:
                out.queries.append(
                    search_query(name, store_name, s, heads, prefix, text, label)
                )
    for label, prefix, want in [
        ("target", alice, "memories/alice/target"),
        ("target", ("memories",), "memories/alice/target"),
        ("bob's target", bob, "memories/bob/target"),
        ("bob's target", (), "memories/bob/target"),
    ]:
        (got,) = [
            q
            for q in out.queries
            if q.set == name
            and q.store == CHRONO
            and q.query == label
            and q.prefix == prefix
        ]
        out.checks.append(
            Check(
                f"{name}: search({prefix}, {label}) returns it first",
                f"first {got.first}",
                got.first == want,
            )
        )
    out.items[name] = len(heads.texts)
    return store, {
        "queries": queries,
        "target": target,
        "target_version": target_version,
        "alone": alone,
        "scopes": (alice, bob, carol),
    }


def near_duplicate_set(
    directory: Path, settings: Settings, out: Measured
) -> tuple[ChronoStore, dict[str, str], list[Namespace]]:
    """Set 3: `bases` vectors, `copies` perturbed copies of each over 10 scopes
    (cosine 0.98-0.9998 to their base); then 10% of the copies updated to
    other copies and 5% deleted, so stale vectors linger in the index. Last,
    `fresh_writes` single puts (a new copy) and deletes, each followed at once
    by a search with the vector written or deleted (read-your-writes)."""
    name = f"near-duplicates: {settings.bases} x {settings.copies:,} perturbed copies"
    rng = np.random.default_rng(settings.seed + 1)
    pick = random.Random(settings.seed + 1)
    vectors = NamedVectors()
    bases = [_unit(rng.standard_normal(DIMS)) for _ in range(settings.bases)]
    scopes = [("memories", f"u{j}") for j in range(10)]
    store = open_chrono(directory / "near", vectors, "text")
    control = InMemoryStore(index=index_config(vectors, "text"))
    heads = Heads(vectors)

    def copy_of(base: np.ndarray) -> str:
        return vectors.name(_noisy(rng, base, float(rng.uniform(0.02, 0.2))))

    ops = [
        PutOp(scopes[i % len(scopes)], f"b{b}c{i}", {"text": copy_of(base)})
        for b, base in enumerate(bases)
        for i in range(settings.copies)
    ]
    heads.write([store, control], ops)
    keys = list(heads.texts)
    changed = pick.sample(keys, len(keys) * 15 // 100)
    heads.write(
        [store, control],
        [
            PutOp(
                ns, key, None if i % 3 == 0 else {"text": copy_of(pick.choice(bases))}
            )
            for i, (ns, key) in enumerate(changed)
        ],
    )
    kept = pick.sample(sorted(heads.texts), settings.random_queries)
    queries = {
        **{f"base {b}": vectors.name(base) for b, base in enumerate(bases)},
        **{
            f"near base {b}": vectors.name(_noisy(rng, base, 0.01))
            for b, base in enumerate(bases)
        },
        **{f"an item's own ({'/'.join(k[0])}/{k[1]})": heads.texts[k] for k in kept},
        **{
            f"random {i}": vectors.name(rng.standard_normal(DIMS))
            for i in range(settings.random_queries)
        },
    }
    prefixes = [(), ("memories",), *pick.sample(scopes, settings.scopes_queried)]
    for label, text in queries.items():
        for prefix in prefixes:
            for store_name, s in [(CHRONO, store), (IN_MEMORY, control)]:
                out.queries.append(
                    search_query(name, store_name, s, heads, prefix, text, label)
                )
    out.items[name] = len(heads.texts)
    fresh = f"fresh writes: {settings.fresh_writes} puts or deletes, searched at once"
    firsts = []
    for round_ in range(settings.fresh_writes):
        scope = pick.choice(scopes)
        if round_ % 3 == 2:  # the deleted item must not come back
            key = pick.choice(sorted(k for ns, k in heads.texts if ns == scope))
            text = heads.texts[scope, key]
            heads.write([store, control], [PutOp(scope, key, None)])
            label = f"{'/'.join(scope)}/{key} deleted"
        else:
            key = f"fresh{round_}"
            text = vectors.name(_noisy(rng, pick.choice(bases), 0.01))
            heads.write([store, control], [PutOp(scope, key, {"text": text})])
            label = f"{'/'.join(scope)}/{key} put"
        for prefix in [scope, ()]:
            for store_name, s in [(CHRONO, store), (IN_MEMORY, control)]:
                query = search_query(fresh, store_name, s, heads, prefix, text, label)
                out.queries.append(query)
                if store_name == CHRONO and label.endswith("put"):
                    firsts.append(query.first == label.removesuffix(" put"))
    out.items[fresh] = len(heads.texts)
    out.checks.append(
        Check(
            f"{fresh}: each new item is the first hit of a search right after its put",
            f"{sum(firsts)}/{len(firsts)} searches",
            all(firsts),
        )
    )
    return store, queries, prefixes[2:]


def many_users_set(
    directory: Path, embeddings: Embeddings, settings: Settings, out: Measured
) -> tuple[ChronoStore, list[Namespace]]:
    """Set 4: `users` x `items_per_user` facts, then 20% updated, 5% deleted."""
    name = f"many users: {settings.users} x {settings.items_per_user} facts"
    rng = random.Random(settings.seed + 2)
    users: list[Namespace] = [
        ("memories", f"user{u:02d}") for u in range(settings.users)
    ]
    store = open_chrono(directory / "users", embeddings, "text")
    control = InMemoryStore(index=index_config(embeddings, "text"))
    heads = Heads(embeddings)
    heads.write(
        [store, control],
        [
            PutOp(user, f"m{i}", {"text": fact(rng)})
            for user in users
            for i in range(settings.items_per_user)
        ],
    )
    keys = list(heads.texts)
    changed = rng.sample(keys, len(keys) // 4)
    heads.write(
        [store, control],
        [
            PutOp(ns, key, None if i % 5 == 0 else {"text": fact(rng)})
            for i, (ns, key) in enumerate(changed)
        ],
    )
    queried = rng.sample(users, settings.scopes_queried)
    for query in QUERIES:
        for prefix in [("memories",), *queried]:
            for store_name, s in [(CHRONO, store), (IN_MEMORY, control)]:
                out.queries.append(
                    search_query(name, store_name, s, heads, prefix, query, query)
                )
    out.items[name] = len(heads.texts)
    return store, queried


def undo_sets(
    identical: tuple[ChronoStore, dict[str, Any]],
    near: tuple[ChronoStore, dict[str, str], list[Namespace]],
    users: tuple[ChronoStore, list[Namespace]],
    settings: Settings,
    out: Measured,
) -> None:
    """Set 5: the undo search's dense stage on the stores of sets 2-4."""
    store, asked = identical
    plan: list[tuple[str, ChronoStore, Namespace, Mapping[str, str]]] = [
        (
            f"undo, identical: target among {settings.identical:,}",
            store,
            s,
            asked["queries"],
        )
        for s in asked["scopes"]
    ]
    near_store, near_queries, near_scopes = near
    plan += [
        ("undo, near-duplicates (stale rows too)", near_store, s, near_queries)
        for s in near_scopes
    ]
    user_store, user_scopes = users
    plan += [
        (
            "undo, many users (real embeddings)",
            user_store,
            s,
            dict(zip(QUERIES, QUERIES, strict=True)),
        )
        for s in user_scopes
    ]
    for name, s, scope, queries in plan:
        results, rows, mismatched = undo_queries(name, s, scope, queries)
        out.queries += results
        out.items[name] = out.items.get(name, 0) + rows
        if mismatched:
            out.checks.append(
                Check(
                    f"{name}: the scope's change vectors match the log",
                    f"{mismatched} rows missing or extra in {scope}",
                    False,
                )
            )
    alice, bob, _ = asked["scopes"]
    for scope, text, want in [
        (alice, asked["target"], asked["target_version"]),
        (bob, asked["alone"], 1),
    ]:
        resolution = store.resolve(scope, f"undo {text}")
        best = resolution.best
        got = best.commit.version if best else None
        out.checks.append(
            Check(
                f"undo, identical: resolve({scope}) with the dense stage alone picks "
                "the target's commit",
                f"best v{got}, target v{want}",
                got == want,
            )
        )


def run(settings: Settings, directory: Path, log: Callable[[str], None]) -> Measured:
    """Build every set under `directory` and compare every query with brute force."""
    out = Measured([], [], {}, {})
    start = time.perf_counter()
    real = CachedEmbeddings(default_embeddings())
    real.embed_query("warm up")
    log(f"model loaded in {time.perf_counter() - start:.1f} s")

    def timed(label: str, build: Callable[[], Any]) -> Any:
        began = time.perf_counter()
        built = build()
        out.seconds[label] = time.perf_counter() - began
        log(f"{label}: {out.seconds[label]:.1f} s")
        return built

    timed("issue", lambda: issue_set(directory, real, settings, out))
    identical = timed("identical", lambda: identical_set(directory, settings, out))
    near = timed(
        "near-duplicates", lambda: near_duplicate_set(directory, settings, out)
    )
    users = timed("many users", lambda: many_users_set(directory, real, settings, out))
    try:
        timed("undo", lambda: undo_sets(identical, near, users, settings, out))
    finally:
        for store in (identical[0], near[0], users[0]):
            store.close()
    return out


# -- the report -------------------------------------------------------------------


def summary(measured: Measured) -> list[dict[str, Any]]:
    """One row per set and store: recall@10 (worst, mean), score error, latency."""
    rows = []
    groups: dict[tuple[str, str], list[Query]] = {}
    for query in measured.queries:
        groups.setdefault((query.set, query.store), []).append(query)
    for (name, store), queries in groups.items():
        recalls = [q.recall for q in queries]
        rows.append(
            {
                "set": name,
                "store": store,
                "vectors": measured.items[name],
                "queries": len(queries),
                "recall_min": min(recalls),
                "recall_mean": statistics.fmean(recalls),
                "score_error_max": max(q.score_error for q in queries),
                "ms_p50": statistics.median(q.ms for q in queries),
            }
        )
    return rows


def _prefix(prefix: Namespace) -> str:
    return repr(tuple(prefix))


def render(measured: Measured, machine: Mapping[str, str], command: str) -> str:
    """The markdown report."""
    rows = summary(measured)
    misses = [q for q in measured.queries if q.recall < 1.0]
    issue = [q for q in measured.queries if q.set.startswith("issue")]
    lines = [
        *header("Exact search recall", command, machine),
        f"recall@{K}: the share of a brute-force top {K} (numpy cosine over the "
        "HEAD items under the prefix, or, for the undo rows, over the scope's "
        "change vectors as its Chroma collection holds them, checked against "
        f"the log) that the search returns in its top {K}. A hit tied with the "
        f"{K}th best (within {TIE:g}) counts. Real embeddings: all-MiniLM-L6-v2 "
        "(`default_embeddings()`), each text embedded once and shared by every "
        "store and the brute force; the identical and near-duplicate sets name "
        "their vectors exactly (`NamedVectors`). InMemoryStore: LangGraph's, "
        "with the same index and the same writes, as the control. Model "
        f"loading and writes took {sum(measured.seconds.values()):.0f} s in all "
        "(not in any figure).",
        "",
        "### recall@10 per set",
        "",
        "vectors: HEAD items of the set (undo rows: change vectors of the "
        "scopes queried). score error: largest |score - brute force| over the "
        "hits. ms: search latency p50 (one query).",
        "",
        *markdown_table(
            [
                "set",
                "store",
                "vectors",
                "queries",
                "recall@10 min",
                "mean",
                "score error",
                "ms p50",
            ],
            [
                [
                    r["set"],
                    r["store"],
                    f"{r['vectors']:,}",
                    r["queries"],
                    f"{r['recall_min']:.3f}",
                    f"{r['recall_mean']:.3f}",
                    f"{r['score_error_max']:.1e}",
                    f"{r['ms_p50']:.1f}",
                ]
                for r in rows
            ],
            align="ll",
        ),
        "",
        "### The issue's case: `{'key1': 'mmm'}` under `('test', 'M')`",
        "",
        *markdown_table(
            ["set", "prefix", "query", "store", "first hit", "its score", "recall@10"],
            [
                [
                    q.set.removeprefix("issue: "),
                    _prefix(q.prefix),
                    q.query,
                    q.store,
                    q.first,
                    f"{q.first_score:.6f}",
                    f"{q.recall:.3f}",
                ]
                for q in issue
            ],
            align="llllll",
        ),
        "",
        "### Checks",
        "",
        *markdown_table(
            ["check", "measured", "result"],
            [
                [c.name, c.measured, "PASS" if c.passed else "FAIL"]
                for c in measured.checks
            ],
            align="lll",
        ),
        "",
        "### Queries below recall 1.0",
        "",
    ]
    if misses:
        lines += markdown_table(
            ["set", "store", "prefix", "query", "recall@10", "hits"],
            [
                [q.set, q.store, _prefix(q.prefix), q.query, f"{q.recall:.2f}", q.hits]
                for q in misses
            ],
            align="llll",
        )
    else:
        lines.append(f"None: every one of {len(measured.queries)} queries scored 1.0.")
    return "\n".join(lines) + "\n"


def to_json(
    measured: Measured,
    settings: Settings,
    machine: Mapping[str, str],
    command: str,
) -> str:
    """Everything the markdown shows, and every query, as JSON."""
    recalls = [q.recall for q in measured.queries]
    return json.dumps(
        {
            "command": command,
            "machine": machine,
            "settings": asdict(settings),
            "seconds": measured.seconds,
            "recall_min": min(recalls),
            "summary": summary(measured),
            "checks": [asdict(c) for c in measured.checks],
            "queries": [asdict(q) for q in measured.queries],
        },
        indent=2,
    )


# -- command line -----------------------------------------------------------------


def parse_args(argv: Sequence[str] | None) -> tuple[Settings, argparse.Namespace]:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--quick", action="store_true", help="smoke test: small sets")
    parser.add_argument("--seed", type=int, help="random seed")
    add_output_arguments(parser)
    args = parser.parse_args(argv)
    settings = QUICK if args.quick else FULL
    if args.seed is not None:
        settings = replace(settings, seed=args.seed)
    return settings, args


def main(argv: Sequence[str] | None = None) -> int:
    """Run the benchmark; print the markdown report to stdout (progress to stderr)."""
    settings, args = parse_args(argv)
    command = shlex.join(sys.orig_argv if argv is None else ["exact_recall.py", *argv])

    log = progress

    with tempfile.TemporaryDirectory(prefix="chronomem-recall-", dir=args.dir) as tmp:
        info = machine_info(Path(tmp), (*PACKAGES, "chromadb", "onnxruntime", "numpy"))
        info["langgraph_chronomem from"] = str(
            Path(langgraph_chronomem.__file__).parent
        )
        measured = run(settings, Path(tmp), log)
    info["load average at end"] = load_average()
    markdown = render(measured, info, command)
    print(markdown)
    if args.out:
        write_report(args.out, markdown)
    if args.json:
        write_report(args.json, to_json(measured, settings, info, command))
    return 0


if __name__ == "__main__":
    sys.exit(main())
