"""Indexed writes side by side, and the first undo after a burst of unsearched writes.

Three parts, all with one embeddings object (all-MiniLM-L6-v2, offline):

1. Indexed `put`: ChronoStore with `index={"dims": 384, "embed": E, "fields":
   ["text"]}` against LangGraph's `SqliteStore` with its sqlite-vec index (WAL and
   the same `synchronous`), both preloaded to N items in `("memories", user)`
   namespaces, and, as the floor, `E.embed_documents([text])` alone on the same
   texts. Median, p95 and the ratio to SqliteStore.
2. Semantic search on the same stores: `search(namespace, query=..., limit=10)`
   in one user's namespace and across all users, plus the first search after a
   burst of unsearched puts (which, in a store whose vectors follow the log,
   waits for them).
3. First undo after N unsearched writes: a fresh indexed ChronoStore gets N
   single puts across 20 users, then the first undo a user makes
   (`resolve` + `apply(dry_run=True)`, which is what `undo(..., dry_run=True)`
   runs) and a second one, timed; 3 fresh stores per size, p50 reported.

    python benchmarks/store/indexed_writes.py --quick     # smoke test (~40 s)
    python benchmarks/store/indexed_writes.py             # 1k and 10k
    python benchmarks/store/indexed_writes.py \\
        --out benchmarks/results/indexed_writes.md \\
        --json benchmarks/results/indexed_writes.json

Method: every store lives in its own directory under one temporary directory on
disk (`--dir` picks its parent). Parts 1 and 2 preload with batched puts (not
timed), warm up (puts and searches, untimed), then all stores of all sizes and
the floor take turns op by op, in a fresh random order each round
(`store_ops.run_phase`), every one running the same ops from fixed seeds.
ChronoStore's put returns before its vectors are written: its follower thread
writes them, which on a small machine would run during the next lanes' timed
ops (they would pay for it, and ChronoStore's put would measure below the
embedding of its own text). So after its warm-up and after each of its timed
ops, untimed, it waits for the follower to catch up (`wait_for_index`, the
subject's `quiesce`). That leaves no backlog for the first search, so each
store first runs a burst of `burst` puts (untimed, the same writes in both
stores) right before its own first search, with nothing in between; the floor
lane has no burst.
SqliteStore loads sqlite-vec, so it is connected through `pysqlite3` when
Python's `sqlite3` cannot load extensions (its SQLite version is in the
machine list). Part 3 times every write and the undo calls with
`time.perf_counter_ns`; nothing searches the store between its writes and the
first undo.
"""

from __future__ import annotations

import argparse
import json
import random
import shlex
import shutil
import sqlite3
import statistics
import sys
import tempfile
import time
from collections.abc import Callable, Mapping, Sequence
from dataclasses import asdict, dataclass, field, replace
from functools import partial
from pathlib import Path
from types import ModuleType
from typing import Any

if __package__ in (None, ""):  # run as `python benchmarks/store/indexed_writes.py`
    sys.path.insert(0, str(Path(__file__).resolve().parents[2]))

from langchain_core.embeddings import Embeddings
from langgraph.store.base import IndexConfig, PutOp
from langgraph.store.sqlite import SqliteStore

import benchmarks.store.store_ops as store_ops
import langgraph_chronomem
from benchmarks.harness.report import (
    PACKAGES,
    Stats,
    Target,
    add_output_arguments,
    header,
    load_average,
    machine_info,
    markdown_table,
    progress,
    reranker_description,
    size_label,
    write_report,
)
from benchmarks.harness.subjects import CHRONO, Subject
from langgraph_chronomem import ChronoStore
from langgraph_chronomem.models import default_embeddings
from langgraph_chronomem.search.resolve import ResolverConfig

__all__ = ["FULL", "QUICK", "Settings", "main", "run"]

SQLITE_VEC = "SqliteStore (sqlite-vec)"
FLOOR = "embedding alone"
LANES = (CHRONO, SQLITE_VEC, FLOOR)  # row order
BENCH_PACKAGES = (
    *PACKAGES,
    "chromadb",
    "onnxruntime",
    "sqlite-vec",
    "pysqlite3-binary",
)

DIMS = 384
USERS = tuple(f"user{u:02d}" for u in range(20))
TARGET_USER = USERS[0]
SEARCH_LIMIT = 10
PRELOAD_CHUNK = 500
PUT_LIMIT = 1.5  # issue 10: indexed put <= 1.5x SqliteStore's indexed put
UNDO_LIMIT_S = 2.0  # issue 10: first undo after 10k unsearched writes <= 2 s p50
UNDO_TARGET_SIZE = 10_000
# How long ChronoStore's follower may take to catch up before the run fails. The
# longest wait is after loading 10k items: ~4 ms an item on a quiet 2-core machine.
QUIESCE_TIMEOUT_S = 600.0

PHASES = {  # phase -> column title, in the order the phases run
    "put": "put",
    "first search": "first search after a burst",
    "search user": f"search, one user (limit {SEARCH_LIMIT})",
    "search all": f"search, all users (limit {SEARCH_LIMIT})",
}

Namespace = tuple[str, ...]
Write = tuple[Namespace, str, dict[str, Any]]


@dataclass(frozen=True)
class Settings:
    """How much to measure.

    Attributes:
        sizes: Items preloaded (parts 1-2) and writes before the undo (part 3).
        ops: Timed puts per store and size.
        searches: Timed searches per store, size and kind.
        burst: Untimed puts a store gets right before its first search, whose
            catch-up that search times.
        warmup: Untimed puts and searches per store before timing.
        repeats: Fresh stores per size in part 3.
        phase_seconds: Wall time after which a lane stops a phase (min 3 ops).
        seed: Seed for every random choice.
        synchronous: SQLite's `synchronous` pragma for both stores.
    """

    sizes: tuple[int, ...]
    ops: int
    searches: int
    burst: int
    warmup: int
    repeats: int
    phase_seconds: float
    seed: int = 20240601
    synchronous: str = "FULL"


FULL = Settings(
    sizes=(1_000, 10_000), ops=300, searches=100, burst=300, warmup=10,
    repeats=3, phase_seconds=120.0,
)  # fmt: skip
QUICK = Settings(
    sizes=(200,), ops=20, searches=10, burst=30, warmup=3, repeats=2,
    phase_seconds=10.0,
)  # fmt: skip


# -- the workload ---------------------------------------------------------------

FACTS = (
    "User's favourite {food} place is {place}",
    "User has a {pet} called {name}",
    "User lives in {city}",
    "User works as a {job} in {city}",
    "User's sister {name} has her birthday on {month} {day}",
    "User prefers {drink} in the {daytime}",
    "User is learning {language} on {weekday}s",
    "User plays {sport} with {name} on {weekday}s",
    "User is allergic to {allergen}",
    "User's dentist appointment is on {weekday} at {hour}",
)
SLOTS: dict[str, tuple[str, ...]] = {
    "food": ("ramen", "pizza", "sushi", "taco", "curry", "dumpling"),
    "place": ("the corner bistro", "Luigi's", "Sakura", "the night market"),
    "pet": ("dog", "parrot", "hamster", "rabbit", "tortoise"),
    "name": ("Rex", "Maya", "Jonas", "Priya", "Olek", "Ines", "Tomas"),
    "city": ("Boston", "Lisbon", "Osaka", "Denver", "Leeds", "Porto"),
    "job": ("nurse", "teacher", "data analyst", "carpenter", "pilot"),
    "month": ("March", "June", "August", "October", "December"),
    "day": tuple(str(d) for d in range(1, 29)),
    "drink": ("green tea", "espresso", "oat latte", "sparkling water"),
    "daytime": ("morning", "afternoon", "evening"),
    "language": ("Spanish", "Japanese", "Portuguese", "German"),
    "weekday": ("Monday", "Tuesday", "Wednesday", "Friday", "Saturday"),
    "sport": ("tennis", "badminton", "squash", "chess"),
    "allergen": ("peanuts", "shellfish", "pollen", "penicillin"),
    "hour": ("9am", "11am", "2pm", "4pm"),
}
QUERIES = (
    "what pets does the user have",
    "where does the user live",
    "what does the user like to eat",
    "when is the dentist appointment",
    "what is the user allergic to",
    "which sports does the user play",
    "what language is the user learning",
    "what does the user drink in the morning",
)
# Part 3 plants two writes in the target user's scope and asks to undo them.
PLANTED = (
    ("kitten", "User adopted a kitten named Miso", "undo the note about the kitten"),
    (
        "salsa",
        "User signed up for salsa dancing classes on Thursdays",
        "forget that I signed up for salsa classes",
    ),
)


def fact(rng: random.Random) -> str:
    """One short memory-like text."""
    template = rng.choice(FACTS)
    return template.format(**{slot: rng.choice(v) for slot, v in SLOTS.items()})


def memory(index: int, seed: int, revision: int = 0) -> Write:
    """Item `index`: its namespace (one of 20 users), key and (revised) value."""
    rng = random.Random(f"{seed}-{index}-{revision}")
    return ("memories", USERS[index % len(USERS)]), f"m{index}", {"text": fact(rng)}


@dataclass(frozen=True)
class Workload:
    """The ops of one memory size, drawn once so every lane runs the same."""

    puts: list[Write]
    searches: list[tuple[Namespace, str]]
    burst: list[Write]


def draw_workload(size: int, settings: Settings) -> Workload:
    """Puts, timed and in the burst, alternate between updating a random item
    and adding a new one; the burst's new keys come after the timed puts'."""
    rng = random.Random(f"{settings.seed}-{size}")
    puts = [
        memory(rng.randrange(size), settings.seed, revision=1)
        if i % 2 == 0
        else memory(size + i, settings.seed)
        for i in range(settings.ops)
    ]
    searches: list[tuple[Namespace, str]] = [
        (("memories", rng.choice(USERS)), rng.choice(QUERIES))
        for _ in range(settings.searches)
    ]
    burst = [
        memory(rng.randrange(size), settings.seed, revision=2)
        if j % 2 == 0
        else memory(size + settings.ops + j, settings.seed)
        for j in range(settings.burst)
    ]
    return Workload(puts, searches, burst)


# -- the stores -----------------------------------------------------------------


def index_config(embeddings: Embeddings) -> IndexConfig:
    """The index both stores get: the same embeddings object, the `text` field."""
    return {"dims": DIMS, "embed": embeddings, "fields": ["text"]}


def sqlite_with_extensions() -> ModuleType | None:
    """A `sqlite3` module whose connections can load sqlite-vec, if there is one."""
    if hasattr(sqlite3.Connection, "enable_load_extension"):
        return sqlite3
    try:
        import pysqlite3.dbapi2 as module
    except ImportError:
        return None
    found: ModuleType = module
    return found


def _sqlite_vec_module() -> ModuleType:
    module = sqlite_with_extensions()
    if module is None:
        sys.exit(
            "SqliteStore's vector index needs a sqlite3 that loads extensions: "
            "pip install pysqlite3-binary"
        )
    return module


def open_chrono(
    directory: Path, size: int, settings: Settings, e: Embeddings
) -> Subject:
    """ChronoStore as it comes, with the index; its quiesce waits for the
    follower thread that writes the vectors after a put has returned."""
    store = ChronoStore.from_path(
        directory / "chrono",
        scope_depth=2,
        index=index_config(e),
        synchronous=settings.synchronous,
    )

    def quiesce() -> None:
        if not store.wait_for_index(timeout=QUIESCE_TIMEOUT_S):
            raise TimeoutError(
                f"{CHRONO}'s index did not catch up in {QUIESCE_TIMEOUT_S:g} s"
            )

    return Subject(CHRONO, size, store, store.close, quiesce=quiesce)


def open_sqlite_vec(
    directory: Path, size: int, settings: Settings, e: Embeddings
) -> Subject:
    """SqliteStore with its sqlite-vec index; WAL, ChronoStore's `synchronous`."""
    conn = _sqlite_vec_module().connect(
        str(directory / "sqlite-vec.sqlite3"),
        check_same_thread=False,
        isolation_level=None,
    )
    conn.execute("PRAGMA journal_mode=WAL")
    conn.execute(f"PRAGMA synchronous={settings.synchronous}")
    store = SqliteStore(conn, index=index_config(e))
    store.setup()
    return Subject(SQLITE_VEC, size, store, conn.close)


def open_floor(
    directory: Path, size: int, settings: Settings, e: Embeddings
) -> Subject:
    """The floor lane: no store, its ops call the embeddings alone."""
    return Subject(FLOOR, size, store=None, close=lambda: None)  # type: ignore[arg-type]


OPENERS = (open_chrono, open_sqlite_vec, open_floor)


def preload(subject: Subject, settings: Settings) -> None:
    """Fill a store with items 0..size-1 in batches (the floor has nothing to fill)."""
    if subject.name == FLOOR:
        return
    for start in range(0, subject.size, PRELOAD_CHUNK):
        end = min(start + PRELOAD_CHUNK, subject.size)
        subject.store.batch(
            [PutOp(*memory(i, settings.seed)) for i in range(start, end)]
        )


def warm_up(subject: Subject, e: Embeddings, settings: Settings) -> None:
    """Untimed puts (keys no timed op uses), then searches that see them all,
    then any background work the load left (so the first timed puts don't run
    beside it)."""
    for i in range(settings.warmup):
        namespace, _, value = memory(i, settings.seed, revision=9)
        if subject.name == FLOOR:
            e.embed_documents([value["text"]])
            e.embed_documents([QUERIES[i % len(QUERIES)]])
            continue
        subject.store.put(namespace, f"warm{i}", value)
    if subject.name != FLOOR:
        for i in range(settings.warmup):
            subject.store.search(
                ("memories", USERS[i % len(USERS)]),
                query=QUERIES[i % len(QUERIES)],
                limit=SEARCH_LIMIT,
            )
    if subject.quiesce is not None:
        subject.quiesce()


# -- parts 1 and 2: puts and searches, interleaved --------------------------------

Prepare = Callable[[Subject, int], Callable[[], object]]


def phase_ops(workloads: Mapping[int, Workload], phase: str, e: Embeddings) -> Prepare:
    """For op `i` of a phase, the call to time; the floor lane embeds the text.

    A store's first search comes right after its burst, run here as untimed
    setup: `run_phase` calls no quiesce between the two, and no other lane's
    op runs between them either. Were all bursts run before the phase, a
    follower would work its backlog off during the other lanes' bursts.
    """

    def call(subject: Subject, i: int) -> Callable[[], object]:
        workload = workloads[subject.size]
        if phase == "put":
            namespace, key, value = workload.puts[i]
            if subject.name == FLOOR:
                return partial(e.embed_documents, [value["text"]])
            return partial(subject.store.put, namespace, key, value)
        namespace, query = workload.searches[i]
        if subject.name == FLOOR:
            return partial(e.embed_documents, [query])
        if phase == "first search":
            for write in workload.burst:
                subject.store.put(*write)
        where = namespace if phase != "search all" else ("memories",)
        return partial(subject.store.search, where, query=query, limit=SEARCH_LIMIT)

    return call


Results = dict[int, dict[str, dict[str, Stats]]]


def run_side_by_side(
    settings: Settings, root: Path, e: Embeddings, log: Callable[[str], None]
) -> Results:
    """Parts 1 and 2: every lane of every size takes turns, op by op."""
    workloads = {size: draw_workload(size, settings) for size in settings.sizes}
    results: Results = {size: {lane: {} for lane in LANES} for size in settings.sizes}
    turns = store_ops.Settings(
        sizes=settings.sizes,
        ops=settings.ops,
        searches=settings.searches,
        rollbacks=1,
        warmup=settings.warmup,
        snapshot_rows=0,
        phase_seconds=settings.phase_seconds,
    )
    subjects: list[Subject] = []
    try:
        for size in settings.sizes:
            directory = root / f"side-{size}"
            directory.mkdir()
            for opener in OPENERS:
                subject = opener(directory, size, settings, e)
                subjects.append(subject)
                started = time.perf_counter()
                preload(subject, settings)
                warm_up(subject, e, settings)
                took = time.perf_counter() - started
                log(f"{subject.name} @ {size_label(size)}: loaded in {took:.1f}s")
        for phase in PHASES:
            started = time.perf_counter()
            plan = replace(turns, searches=1) if phase == "first search" else turns
            kind = "put" if phase == "put" else "search"
            samples = store_ops.run_phase(
                subjects, kind, phase_ops(workloads, phase, e), plan
            )
            log(f"{phase}: {time.perf_counter() - started:.1f}s")
            for (size, lane), taken in samples.items():
                if taken:
                    results[size][lane][phase] = Stats.of(taken)
    finally:
        for subject in subjects:
            subject.close()
    return results


# -- part 3: the first undo after a burst of writes -------------------------------


@dataclass
class UndoRun:
    """One fresh store: its writes, then the first and the second undo.

    Times in ms. `first`/`second` are `resolve` + `apply(dry_run=True)`, which is
    what `undo(..., dry_run=True)` does; `found` says whether the resolver's best
    candidate was the planted write the request is about.
    """

    size: int
    writes_s: float
    write_ms: Stats
    resolve_ms: list[float] = field(default_factory=list)
    apply_ms: list[float] = field(default_factory=list)
    found: list[bool] = field(default_factory=list)
    decided: list[bool] = field(default_factory=list)

    @property
    def undo_ms(self) -> list[float]:
        """Each undo's total: resolve + apply."""
        return [r + a for r, a in zip(self.resolve_ms, self.apply_ms, strict=True)]


def burst(size: int, seed: int) -> list[tuple[Write, str | None]]:
    """`size` writes across 20 users, half updates, with the planted ones inside.

    Each write comes with the name of the planted fact it is, if it is one.
    """
    rng = random.Random(f"{seed}-burst-{size}")
    keys: dict[str, int] = dict.fromkeys(USERS, 0)
    at = {int(size * 0.5): PLANTED[0], int(size * 0.7): PLANTED[1]}
    writes: list[tuple[Write, str | None]] = []
    for j in range(size):
        if j in at:
            name, text, _ = at[j]
            namespace = ("memories", TARGET_USER)
            writes.append(((namespace, f"planted-{name}", {"text": text}), name))
            continue
        user = rng.choice(USERS)
        if keys[user] and rng.random() < 0.5:
            key = f"m{rng.randrange(keys[user])}"
        else:
            key, keys[user] = f"m{keys[user]}", keys[user] + 1
        writes.append(((("memories", user), key, {"text": fact(rng)}), None))
    return writes


def undo_run(directory: Path, size: int, settings: Settings, e: Embeddings) -> UndoRun:
    """A fresh indexed store, `size` single puts, then two undos (dry run)."""
    scope = ("memories", TARGET_USER)
    store = ChronoStore.from_path(
        directory,
        scope_depth=2,
        index=index_config(e),
        synchronous=settings.synchronous,
    )
    try:
        planted: dict[str, int] = {}
        taken: list[int] = []
        store_ops.settle()
        started = time.perf_counter()
        for write, name in burst(size, settings.seed):
            before = time.perf_counter_ns()
            store.put(*write)
            taken.append(time.perf_counter_ns() - before)
            if name is not None:
                planted[name] = store.head(scope)
        run = UndoRun(size, time.perf_counter() - started, Stats.of(taken))
        for name, _, request in PLANTED:
            before = time.perf_counter_ns()
            resolution = store.resolve(scope, request)
            resolved = time.perf_counter_ns()
            store.apply(scope, resolution, dry_run=True)
            applied = time.perf_counter_ns()
            run.resolve_ms.append((resolved - before) / 1e6)
            run.apply_ms.append((applied - resolved) / 1e6)
            best = resolution.best
            run.found.append(best is not None and best.commit.version == planted[name])
            run.decided.append(resolution.decided)
    finally:
        store.close()
    return run


def run_undo(
    settings: Settings, root: Path, e: Embeddings, log: Callable[[str], None]
) -> list[UndoRun]:
    """Part 3: `repeats` rounds, each a fresh store per size."""
    runs: list[UndoRun] = []
    for repeat in range(settings.repeats):
        for size in settings.sizes:
            directory = root / f"undo-{size}-{repeat}"
            run = undo_run(directory, size, settings, e)
            shutil.rmtree(directory, ignore_errors=True)
            runs.append(run)
            log(
                f"undo @ {size_label(size)} #{repeat + 1}: writes {run.writes_s:.1f}s, "
                f"first undo {run.undo_ms[0]:,.0f} ms, second {run.undo_ms[1]:,.0f} ms"
            )
    return runs


# -- the whole run ----------------------------------------------------------------


@dataclass
class Measured:
    """Everything one run measured."""

    side_by_side: Results
    undo: list[UndoRun]
    model_load_s: float


def run(settings: Settings, root: Path, log: Callable[[str], None]) -> Measured:
    """Load the embedding model once, then parts 1-2 and part 3."""
    started = time.perf_counter()
    e = default_embeddings()
    e.embed_documents(["warm up"])
    model_load_s = time.perf_counter() - started
    log(f"embedding model loaded in {model_load_s:.1f}s")
    side = run_side_by_side(settings, root, e, log)
    return Measured(side, run_undo(settings, root, e, log), model_load_s)


# -- targets --------------------------------------------------------------------


def _median_ms(results: Results, size: int, lane: str, phase: str) -> float | None:
    found = results[size].get(lane, {}).get(phase)
    return None if found is None else found.median_us / 1000


def _over(a: float | None, b: float | None) -> float | None:
    return None if a is None or not b else a / b


def _p50(values: Sequence[float]) -> float | None:
    return statistics.median(values) if values else None


def first_undo_p50_s(runs: Sequence[UndoRun], size: int) -> float | None:
    """The p50 over fresh stores of the first undo's time, in seconds."""
    p50 = _p50([r.undo_ms[0] for r in runs if r.size == size])
    return None if p50 is None else p50 / 1000


def evaluate(measured: Measured) -> list[Target]:
    """Issue 10's targets for indexed writes and the first undo."""
    results = measured.side_by_side
    ratios = {
        size: _over(
            _median_ms(results, size, CHRONO, "put"),
            _median_ms(results, size, SQLITE_VEC, "put"),
        )
        for size in results
    }
    known = {s: r for s, r in ratios.items() if r is not None}
    undo_s = first_undo_p50_s(measured.undo, UNDO_TARGET_SIZE)
    return [
        Target(
            f"ChronoStore indexed put <= {PUT_LIMIT}x {SQLITE_VEC}",
            ", ".join(f"{size_label(s)}: {r:.2f}x" for s, r in known.items()),
            PUT_LIMIT,
            max(known.values()) if known else None,
        ),
        Target(
            f"first undo after {size_label(UNDO_TARGET_SIZE)} unsearched writes "
            f"<= {UNDO_LIMIT_S:g} s p50",
            "not measured" if undo_s is None else f"{undo_s:.2f} s",
            UNDO_LIMIT_S,
            undo_s,
        ),
    ]


# -- the report -----------------------------------------------------------------


def _ms(value: float) -> str:
    return f"{value:.1f}" if value < 100 else f"{value:,.0f}"


def _cell(stats: Stats | None, requested: int) -> str:
    if stats is None:
        return "n/a"
    if stats.n == 1:
        return _ms(stats.median_us / 1000)
    cell = f"{_ms(stats.median_us / 1000)} / {_ms(stats.p95_us / 1000)}"
    return cell + (f" (n={stats.n})" if stats.n < requested else "")


def _x(value: float | None) -> str:
    return "n/a" if value is None else f"{value:.2f}x"


def side_by_side_table(results: Results, settings: Settings) -> list[str]:
    """Parts 1-2: one row per size and lane, ms median / p95 per phase."""
    requested = {
        "put": settings.ops,
        "first search": 1,
        "search user": settings.searches,
        "search all": settings.searches,
    }
    rows = []
    for size, by_lane in results.items():
        for lane, by_phase in by_lane.items():
            put = _median_ms(results, size, lane, "put")
            rows.append(
                [
                    size_label(size),
                    lane,
                    *(_cell(by_phase.get(p), requested[p]) for p in PHASES),
                    _x(_over(put, _median_ms(results, size, SQLITE_VEC, "put"))),
                    _x(_over(put, _median_ms(results, size, FLOOR, "put"))),
                ]
            )
    columns = ["items", "lane", *PHASES.values(), "put x SqliteStore", "put x embed"]
    return markdown_table(columns, rows, align="ll")


def undo_table(runs: Sequence[UndoRun]) -> list[str]:
    """Part 3: p50 over fresh stores (every run's figure in brackets)."""

    def cell(values: Sequence[float], unit: float = 1.0) -> str:
        p50 = _p50(values)
        if p50 is None:
            return "n/a"
        each = ", ".join(_ms(v / unit) for v in values)
        return f"**{_ms(p50 / unit)}** ({each})" if len(values) > 1 else _ms(p50)

    rows = []
    for size in sorted({r.size for r in runs}):
        mine = [r for r in runs if r.size == size]
        found = [sum(r.found) for r in mine]
        rows.append(
            [
                size_label(size),
                len(mine),
                cell([r.writes_s for r in mine]),
                cell([r.write_ms.median_us / 1000 for r in mine]),
                cell([r.write_ms.p95_us / 1000 for r in mine]),
                cell([r.undo_ms[0] for r in mine]),
                cell([r.resolve_ms[0] for r in mine]),
                cell([r.undo_ms[1] for r in mine]),
                f"{sum(found)}/{2 * len(mine)}",
            ]
        )
    columns = [
        "writes",
        "stores",
        "writes took (s)",
        "put p50 (ms)",
        "put p95 (ms)",
        "first undo (ms)",
        "of which resolve (ms)",
        "second undo (ms)",
        "best = planted",
    ]
    return markdown_table(columns, rows, align="l")


def render(
    measured: Measured,
    targets: Sequence[Target],
    settings: Settings,
    machine: Mapping[str, str],
    command: str,
) -> str:
    """The markdown report."""
    lines = [
        *header("Indexed writes and the first undo", command, machine),
        f"Embeddings: one `default_embeddings()` object (all-MiniLM-L6-v2, ONNX) "
        f"shared by every store and the floor; loading it took "
        f"{measured.model_load_s:.1f} s (not in any figure). Undo reranker: "
        f"{reranker_description(ResolverConfig())}.",
        "",
        "### Indexed put and semantic search, side by side",
        "",
        f"Each store holds N items (`{{'text': ...}}`, short memory-like facts) in "
        f"`('memories', user)` namespaces of {len(USERS)} users, loaded in batches "
        f"of {PRELOAD_CHUNK} and warmed up ({settings.warmup} puts and searches, "
        "untimed). ChronoStore: `from_path(dir, scope_depth=2, index={'dims': 384, "
        "'embed': E, 'fields': ['text']})`. SqliteStore: LangGraph's, with "
        f"`index=` the same dict and `setup()`, WAL and synchronous="
        f"{settings.synchronous} like ChronoStore. {FLOOR}: "
        "`E.embed_documents([text])` on the same text, the floor of any indexed "
        "put (and of a search's query embedding). All lanes of all sizes take "
        "turns op by op.",
        "",
        "put: one `put`, alternately updating a random item and adding a new one. "
        "ChronoStore's put returns before its follower thread writes the "
        "vectors; after each of its ops and its warm-up the harness waits, "
        "untimed, for that thread to catch up, so its work does not land in the "
        "other lanes' timed ops. first search after a burst: each store gets "
        f"{settings.burst} puts (untimed, half updates, nothing waited for), then "
        "at once the first `search(('memories', user), query=...)`, which waits "
        "for any vectors still to be written; the floor embeds the query alone. "
        "search, one user: `search(('memories', user), "
        f"query=..., limit={SEARCH_LIMIT})`; all users: the same over "
        "`('memories',)`.",
        "",
        "Latency per op in ms, median / p95 (`n=` where fewer ops ran than "
        "asked). `x`: put median over SqliteStore's / over the embedding's.",
        "",
        *side_by_side_table(measured.side_by_side, settings),
        "",
        "### The first undo after a burst of unsearched writes",
        "",
        f"A fresh indexed ChronoStore (as above) gets N single `put`s across "
        f"{len(USERS)} users' scopes (half updates), nothing searched, two of "
        f"them planted in `('memories', '{TARGET_USER}')`. Then the first undo "
        f"in that scope, `{PLANTED[0][2]!r}`, and a second, `{PLANTED[1][2]!r}`, "
        "each timed as `resolve(scope, request)` + `apply(scope, resolution, "
        "dry_run=True)`, which is what `undo(scope, request, dry_run=True)` "
        f"runs. {settings.repeats} fresh stores per size: **p50** (each "
        "store's figure). best = planted: how often the best candidate was the "
        "planted write asked about.",
        "",
        *undo_table(measured.undo),
        "",
        "### Targets",
        "",
        *markdown_table(
            ["target", "measured", "limit", "result"],
            [
                [
                    t.name,
                    t.measured,
                    f"{t.limit:g}" + ("x" if "put" in t.name else " s"),
                    t.verdict,
                ]
                for t in targets
            ],
            align="llrl",
        ),
    ]
    return "\n".join(lines) + "\n"


def to_json(
    measured: Measured,
    targets: Sequence[Target],
    settings: Settings,
    machine: Mapping[str, str],
    command: str,
) -> str:
    """Everything the markdown shows, as JSON (times in µs for stats, ms for undo)."""
    return json.dumps(
        {
            "command": command,
            "machine": machine,
            "settings": asdict(settings),
            "model_load_s": measured.model_load_s,
            "side_by_side": {
                str(size): {
                    lane: {phase: asdict(stats) for phase, stats in phases.items()}
                    for lane, phases in by_lane.items()
                }
                for size, by_lane in measured.side_by_side.items()
            },
            "undo": [asdict(r) | {"undo_ms": r.undo_ms} for r in measured.undo],
            "targets": [asdict(t) | {"passed": t.passed} for t in targets],
        },
        indent=2,
    )


# -- command line ---------------------------------------------------------------


def parse_args(argv: Sequence[str] | None) -> tuple[Settings, argparse.Namespace]:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument(
        "--quick", action="store_true", help="smoke test: 200 items, few ops"
    )
    parser.add_argument(
        "--sizes", type=int, nargs="+", help="items preloaded and writes before undo"
    )
    parser.add_argument("--ops", type=int, help="timed puts per store")
    parser.add_argument("--searches", type=int, help="timed searches per store")
    parser.add_argument(
        "--burst", type=int, help="untimed puts per store before its first search"
    )
    parser.add_argument("--repeats", type=int, help="fresh stores per size (undo)")
    parser.add_argument(
        "--phase-seconds", type=float, help="time limit per lane and phase"
    )
    parser.add_argument("--seed", type=int, help="random seed")
    parser.add_argument(
        "--synchronous",
        choices=("FULL", "NORMAL"),
        help="SQLite synchronous pragma of both stores (default FULL)",
    )
    add_output_arguments(parser)
    args = parser.parse_args(argv)
    settings = QUICK if args.quick else FULL
    overrides = {
        "sizes": tuple(sorted(set(args.sizes))) if args.sizes else None,
        "ops": args.ops,
        "searches": args.searches,
        "burst": args.burst,
        "repeats": args.repeats,
        "phase_seconds": args.phase_seconds,
        "seed": args.seed,
        "synchronous": args.synchronous,
    }
    settings = replace(
        settings, **{k: v for k, v in overrides.items() if v is not None}
    )
    if min(settings.sizes) < 10:
        parser.error("sizes must be >= 10 (two planted writes sit inside the burst)")
    if min(settings.ops, settings.searches, settings.burst, settings.repeats) < 1:
        parser.error("--ops, --searches, --burst and --repeats must be >= 1")
    return settings, args


def machine(directory: Path) -> dict[str, str]:
    """`machine_info`, plus the package measured and SqliteStore's SQLite."""
    info = machine_info(directory, BENCH_PACKAGES)
    info["langgraph_chronomem from"] = str(Path(langgraph_chronomem.__file__).parent)
    info["sqlite (SqliteStore, sqlite-vec)"] = _sqlite_vec_module().sqlite_version
    return info


def main(argv: Sequence[str] | None = None) -> int:
    """Run the benchmark; print the markdown report to stdout (progress to stderr)."""
    settings, args = parse_args(argv)
    command = shlex.join(
        sys.orig_argv if argv is None else ["indexed_writes.py", *argv]
    )

    log = progress

    with tempfile.TemporaryDirectory(prefix="chronomem-bench-", dir=args.dir) as tmp:
        info = machine(Path(tmp))
        log(f"measuring in {tmp}")
        measured = run(settings, Path(tmp), log)
    info["load average at end"] = load_average()
    targets = evaluate(measured)
    markdown = render(measured, targets, settings, info, command)
    print(markdown)
    if args.out:
        write_report(args.out, markdown)
    if args.json:
        write_report(args.json, to_json(measured, targets, settings, info, command))
    return 0


if __name__ == "__main__":
    sys.exit(main())
