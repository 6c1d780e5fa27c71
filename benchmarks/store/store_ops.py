"""Store operations side by side: put, get, filtered search and rollback.

One run measures, at each memory size, ChronoStore against LangGraph's
`SqliteStore` (configured like-for-like: WAL and the same `synchronous`; and with
its out-of-the-box defaults), LangGraph's `InMemoryStore`, and a naive store that
writes a whole snapshot per write (`benchmarks/harness/naive_snapshot.py`). It then
checks the project's performance targets and prints PASS or FAIL for each.

    python benchmarks/store/store_ops.py                  # 1k, 10k, 100k items (~3 min)
    python benchmarks/store/store_ops.py --quick          # smoke test (~10 s)
    python benchmarks/store/store_ops.py --out benchmarks/results/ops.md --json ops.json
    python benchmarks/store/store_ops.py --postgres --sizes 1000 --ops 300  # PostgreSQL
    python benchmarks/store/store_ops.py --postgres --fsync --quick   # durable server

With `--postgres [DSN]` the stores are ChronoStore on PostgreSQL and LangGraph's
`PostgresStore`, each in its own database on one server (the DSN's, or a
private one started for the run), and the report also gives the round trips
and statements each op sent the server.

Method: every store lives in its own file under one temporary directory on
disk (`--dir` picks its parent) and is preloaded to N items with batched puts
(not timed), then warmed up. Within each timed phase the stores of all sizes
take turns, one op each, in a fresh random order each round, so comparisons
across stores and across sizes see the same machine conditions (and no store
always runs after the same neighbour); every store runs the same op
sequence (fixed seeds), each call timed with `time.perf_counter_ns`. Dirty pages
are flushed (`os.sync`) before each phase. A store that copies its whole memory
per write gets fewer put and rollback ops at large sizes, and a store stops a
phase after `--phase-seconds` once it has run 3 ops; the table shows `n=` where
fewer ops ran than asked.
"""

from __future__ import annotations

import argparse
import contextlib
import gc
import json
import os
import random
import shlex
import sys
import tempfile
import time
from collections.abc import Callable, Iterator, Mapping, Sequence
from dataclasses import asdict, dataclass, replace
from functools import partial
from pathlib import Path
from typing import Any

if __package__ in (None, ""):  # run as `python benchmarks/store/store_ops.py`
    sys.path.insert(0, str(Path(__file__).resolve().parents[2]))

from langgraph.store.base import PutOp

from benchmarks.harness.report import (
    Stats,
    Target,
    add_output_arguments,
    load_average,
    machine_info,
    markdown_table,
    progress,
    render_markdown,
    size_label,
    write_report,
)
from benchmarks.harness.stores import (
    CHRONO_PG,
    PG_STORE,
    Stores,
    Traffic,
    open_postgres_pair,
    pair_databases,
)
from benchmarks.harness.subjects import (
    CHRONO,
    SCOPE,
    SQLITE_WAL,
    Subject,
    open_subjects,
)

__all__ = ["FULL", "QUICK", "Settings", "main", "run"]

CHANGED = 100  # items changed between a rollback's target and HEAD
SEARCH_LIMIT = 10
PHASES = {  # phase -> its column title, in the order phases run
    "put": "put",
    "get": "get",
    "search": f"filtered search (1%, limit {SEARCH_LIMIT})",
    "rollback": f"rollback ({CHANGED} changed)",
}

TOPICS = 10  # items spread over namespaces SCOPE + ("topic0",) ... ("topic9",)
KINDS = 100  # the filtered field has 100 values: a filter selects 1% of items
PRELOAD_CHUNK = 1000
MIN_OPS = 3

Namespace = tuple[str, ...]
Write = tuple[Namespace, str, dict[str, Any]]


@dataclass(frozen=True)
class Settings:
    """How much to measure.

    Attributes:
        sizes: Memory sizes (items preloaded) to measure at.
        ops: Timed puts and gets per store and size.
        searches: Timed filtered searches per store and size.
        rollbacks: Timed rollbacks per store and size.
        warmup: Untimed ops of each kind per store before timing.
        snapshot_rows: Rows a snapshot-per-write store may copy per phase;
            its put and rollback ops are cut to this over the size (min 3).
        phase_seconds: Wall time after which a store stops a phase.
        seed: Seed for every random choice.
        synchronous: SQLite's `synchronous` pragma for every WAL store.
    """

    sizes: tuple[int, ...]
    ops: int
    searches: int
    rollbacks: int
    warmup: int
    snapshot_rows: int
    phase_seconds: float
    seed: int = 20240601
    synchronous: str = "FULL"

    def wanted(self, phase: str) -> int:
        """Timed ops per store asked for in a phase."""
        return {"search": self.searches, "rollback": self.rollbacks}.get(
            phase, self.ops
        )


FULL = Settings(
    sizes=(1_000, 10_000, 100_000),
    ops=300,
    searches=100,
    rollbacks=30,
    warmup=20,
    snapshot_rows=300_000,
    phase_seconds=30.0,
)
QUICK = Settings(
    sizes=(1_000, 10_000),
    ops=50,
    searches=20,
    rollbacks=5,
    warmup=5,
    snapshot_rows=100_000,
    phase_seconds=5.0,
)


# -- the workload ---------------------------------------------------------------


def memory(index: int, revision: int = 0) -> Write:
    """Item `index` of the memory: its namespace, key and (revised) value."""
    value = {
        "text": f"memory {index} (rev {revision}): the user mentioned topic "
        f"{index % 97} on day {index % 365}",
        "kind": f"k{index % KINDS}",
        "n": index,
    }
    return (*SCOPE, f"topic{index % TOPICS}"), f"m{index}", value


@dataclass(frozen=True)
class Workload:
    """The ops of one memory size, drawn once so every store runs the same ones."""

    puts: list[Write]
    gets: list[tuple[Namespace, str]]
    filters: list[dict[str, str]]
    changes: list[list[Write]]


def draw_workload(size: int, settings: Settings) -> Workload:
    """Puts alternate between updating a random item and adding a new one."""
    rng = random.Random(f"{settings.seed}-{size}")
    puts = [
        memory(rng.randrange(size), revision=1) if i % 2 == 0 else memory(size + i)
        for i in range(settings.ops)
    ]
    gets = [memory(rng.randrange(size))[:2] for _ in range(settings.ops)]
    filters = [{"kind": f"k{rng.randrange(KINDS)}"} for _ in range(settings.searches)]
    changes = [
        [memory(i, revision=2 + r) for i in rng.sample(range(size), min(CHANGED, size))]
        for r in range(settings.rollbacks)
    ]
    return Workload(puts, gets, filters, changes)


def preload(subject: Subject) -> None:
    """Fill the store with items 0..size-1 using batched puts.

    A snapshot-per-write store is loaded in one batch, so it starts from one
    snapshot instead of size/1000 ever larger ones.
    """
    size = subject.size
    chunk = size if subject.snapshot_per_write else PRELOAD_CHUNK
    for start in range(0, size, chunk):
        end = min(start + chunk, size)
        subject.store.batch([PutOp(*memory(i)) for i in range(start, end)])


def warm_up(subject: Subject, count: int) -> None:
    """Untimed gets, searches and puts; the puts add keys no timed op uses."""
    puts = 1 if subject.snapshot_per_write else count
    for i in range(count):
        subject.store.get(*memory(i % subject.size)[:2])
        subject.store.search(SCOPE, filter={"kind": f"k{i}"}, limit=SEARCH_LIMIT)
    for i in range(puts):
        namespace, _, value = memory(i)
        subject.store.put(namespace, f"warm{i}", value)


# -- timing ---------------------------------------------------------------------

Prepare = Callable[[Subject, int], Callable[[], object]]


def phase_ops(workloads: Mapping[int, Workload], phase: str) -> Prepare:
    """For op `i` of a phase: do any untimed setup, return the call to time."""

    def put(subject: Subject, i: int) -> Callable[[], object]:
        return partial(subject.store.put, *workloads[subject.size].puts[i])

    def get(subject: Subject, i: int) -> Callable[[], object]:
        return partial(subject.store.get, *workloads[subject.size].gets[i])

    def search(subject: Subject, i: int) -> Callable[[], object]:
        wanted = workloads[subject.size].filters[i]
        return partial(subject.store.search, SCOPE, filter=wanted, limit=SEARCH_LIMIT)

    def rollback(subject: Subject, i: int) -> Callable[[], object]:
        assert subject.mark is not None
        undo = subject.mark()
        changes = workloads[subject.size].changes[i]
        subject.store.batch([PutOp(*write) for write in changes])
        return undo

    return {"put": put, "get": get, "search": search, "rollback": rollback}[phase]


def op_count(subject: Subject, phase: str, settings: Settings) -> int:
    """How many ops a store runs in a phase; 0 when it cannot run it at all."""
    if phase == "rollback" and subject.mark is None:
        return 0
    wanted = settings.wanted(phase)
    if subject.snapshot_per_write and phase in ("put", "rollback"):
        return max(MIN_OPS, min(wanted, settings.snapshot_rows // subject.size))
    return wanted


def run_phase(
    subjects: Sequence[Subject], phase: str, prepare: Prepare, settings: Settings
) -> dict[tuple[int, str], list[int]]:
    """Time op 0, 1, 2... on every subject in turn; return nanoseconds by subject.

    Each round takes the subjects in a fresh random order (seeded), so every
    subject follows every other equally often. An op runs faster right after
    an op of the same code (its Python and SQLite paths still in the CPU's
    caches): rotating a fixed order would leave each subject behind the same
    neighbour in all but one round of n, and in one measured run two
    identical ChronoStores differed by 8% on put for that alone. A subject
    whose phase has taken `settings.phase_seconds` (setup included) stops
    once it has run `MIN_OPS` ops.

    A subject with `quiesce` has it called after each of its ops, outside the
    timed interval and outside its budget: the background work the op started
    then runs before the next subject's op, not during it (where another
    store would pay for it and this one look cheaper than it is), and how
    long that work takes does not change how many ops the subject gets.
    """
    counts = {s.id: op_count(s, phase, settings) for s in subjects}
    samples: dict[tuple[int, str], list[int]] = {s.id: [] for s in subjects}
    spent = dict.fromkeys(samples, 0)
    budget = int(settings.phase_seconds * 1e9)
    order = list(subjects)
    shuffler = random.Random(f"{settings.seed}-{phase}")
    settle()
    for i in range(max(counts.values(), default=0)):
        shuffler.shuffle(order)
        for subject in order:
            key = subject.id
            if i >= counts[key] or (i >= MIN_OPS and spent[key] > budget):
                continue
            started = time.perf_counter_ns()
            call = prepare(subject, i)
            before = time.perf_counter_ns()
            call()
            after = time.perf_counter_ns()
            samples[key].append(after - before)
            spent[key] += after - started
            if subject.quiesce is not None:
                subject.quiesce()
    return samples


def settle() -> None:
    """Flush dirty pages and garbage before timing, so no store pays for another's."""
    os.sync()
    gc.collect()


Results = dict[int, dict[str, dict[str, Stats]]]
Opener = Callable[
    [Path, Sequence[int], str], contextlib.AbstractContextManager[list[Subject]]
]
Meters = dict[tuple[int, str], Traffic]
"""What each store sent its server, by (size, store); PostgreSQL stores only."""
PerOp = dict[tuple[int, str], dict[str, tuple[float, float]]]
"""Round trips and statements per op, by (size, store) and phase."""


def run(
    settings: Settings,
    root: Path,
    log: Callable[[str], None],
    opener: Opener = open_subjects,
    meters: Meters | None = None,
    loaded: Callable[[], object] | None = None,
) -> tuple[Results, PerOp]:
    """Every phase for every store at every size, all stores interleaved, and
    the round trips and statements per op of the stores in `meters`;
    `loaded`, if given, runs once every store is loaded.

    Stores of all sizes take turns within each phase, so a comparison across
    sizes is made under the same machine conditions as one across stores.
    """
    workloads = {size: draw_workload(size, settings) for size in settings.sizes}
    results: Results = {size: {} for size in settings.sizes}
    per_op: PerOp = {}
    meters = {} if meters is None else meters
    with opener(root, settings.sizes, settings.synchronous) as subjects:
        for subject in subjects:
            results[subject.size][subject.name] = {}
            started = time.perf_counter()
            preload(subject)
            warm_up(subject, settings.warmup)
            took = time.perf_counter() - started
            log(f"{subject.name} @ {subject.size}: loaded in {took:.1f}s")
        if loaded is not None:
            loaded()
        for phase in PHASES:
            before = {k: (t.round_trips, t.statements) for k, t in meters.items()}
            started = time.perf_counter()
            samples = run_phase(subjects, phase, phase_ops(workloads, phase), settings)
            log(f"{phase}: {time.perf_counter() - started:.1f}s")
            for (size, name), taken in samples.items():
                if taken:
                    results[size][name][phase] = Stats.of(taken)
                meter = meters.get((size, name))
                # A rollback's untimed setup (a batch) would count as its own.
                if meter is not None and taken and phase != "rollback":
                    trips, statements = before[size, name]
                    per_op.setdefault((size, name), {})[phase] = (
                        (meter.round_trips - trips) / len(taken),
                        (meter.statements - statements) / len(taken),
                    )
    return results, per_op


@contextlib.contextmanager
def postgres_opener(
    dsn: str, *, durable: bool = False
) -> Iterator[tuple[Opener, Meters, Stores]]:
    """An `Opener` of ChronoStore and `PostgresStore` on PostgreSQL (a private
    server for `dsn=""`, with `fsync` on when `durable`), the meters it fills
    as it opens them, and the server's `Stores`."""
    meters: Meters = {}

    @contextlib.contextmanager
    def opener(
        root: Path, sizes: Sequence[int], synchronous: str
    ) -> Iterator[list[Subject]]:
        subjects: list[Subject] = []
        try:
            for size in sizes:
                pair, traffic = open_postgres_pair(stores, size)
                subjects += pair
                meters.update({(size, name): t for name, t in traffic.items()})
            yield subjects
        finally:
            for subject in subjects:
                subject.close()

    with Stores(postgres=dsn, durable=durable) as stores:
        yield opener, meters, stores


# Where `benchmarks/harness/subjects.py` puts the two stores the file sizes compare.
STORE_FILES = {CHRONO: "chrono", SQLITE_WAL: "sqlite-wal.sqlite3*"}

DiskUsage = dict[int, dict[str, int]]


def disk_usage(root: Path, sizes: Sequence[int]) -> DiskUsage:
    """Bytes on disk per store and size, once `run` has closed the stores (which
    checkpoints their WAL into the database file)."""

    def size_of(path: Path) -> int:
        files = [path] if path.is_file() else list(path.rglob("*"))
        return sum(f.stat().st_size for f in files if f.is_file())

    return {
        size: {
            store: sum(size_of(p) for p in (root / str(size)).glob(pattern))
            for store, pattern in STORE_FILES.items()
        }
        for size in sizes
    }


def disk_table(usage: DiskUsage) -> str:
    """The file sizes as markdown, ChronoStore's over SqliteStore (WAL)'s."""
    rows = [
        [
            size_label(size),
            *(f"{by_store[store] / 2**20:.1f}" for store in STORE_FILES),
            f"{by_store[CHRONO] / max(by_store[SQLITE_WAL], 1):.1f}x",
        ]
        for size, by_store in usage.items()
    ]
    return "\n".join(
        [
            "### On disk after the run",
            "",
            "MiB per store: the database file once closed (closing checkpoints the "
            "WAL). ChronoStore keeps every version of every item and every commit.",
            "",
            *markdown_table(
                ["items", *(f"{store} MiB" for store in STORE_FILES), "x"], rows
            ),
            "",
        ]
    )


# -- targets --------------------------------------------------------------------


def _median(results: Results, size: int, store: str, phase: str) -> float | None:
    found = results[size].get(store, {}).get(phase)
    return None if found is None else found.median_us


def _ratio(a: float | None, b: float | None) -> float | None:
    return None if a is None or not b else a / b


def vs_sqlite(
    results: Results,
    phase: str,
    limit: float,
    store: str = CHRONO,
    baseline: str = SQLITE_WAL,
) -> Target:
    """ChronoStore's median over SqliteStore (WAL)'s (or `store`'s over
    `baseline`'s) at each size; the worst counts."""
    ratios = {
        size: _ratio(
            _median(results, size, store, phase),
            _median(results, size, baseline, phase),
        )
        for size in results
    }
    known = [r for r in ratios.values() if r is not None]
    return Target(
        f"{store} {phase} <= {limit}x {baseline}",
        ", ".join(
            f"{size_label(s)}: {r:.2f}x" for s, r in ratios.items() if r is not None
        ),
        limit,
        max(known) if known else None,
    )


def across_sizes(results: Results, phase: str, limit: float, what: str) -> Target:
    """ChronoStore's median at the largest size over its median at the smallest."""
    small, large = min(results), max(results)
    ratio = _ratio(
        _median(results, large, CHRONO, phase), _median(results, small, CHRONO, phase)
    )
    name = (
        f"ChronoStore {what} at {size_label(large)} <= {limit}x at {size_label(small)}"
    )
    if small == large or ratio is None:
        return Target(name, "needs two sizes", limit, None)
    return Target(name, f"{ratio:.2f}x", limit, ratio)


def evaluate_postgres(results: Results) -> list[Target]:
    """The targets for ChronoStore on PostgreSQL, against `PostgresStore`:
    issue 33's put and filtered search <= 1.2x (issue 11 asked put <= 1.5x),
    and issue 11's get <= 1.2x."""
    return [
        vs_sqlite(results, phase, 1.2, CHRONO_PG, PG_STORE)
        for phase in ("put", "get", "search")
    ]


def traffic_table(per_op: PerOp) -> str:
    """Round trips and statements per op, as markdown."""
    phases = [p for p in PHASES if p != "rollback"]
    rows = [
        [
            size_label(size),
            name,
            *(
                "{:.1f} / {:.1f}".format(*by_phase[p]) if p in by_phase else "N/A"
                for p in phases
            ),
        ]
        for (size, name), by_phase in per_op.items()
    ]
    return "\n".join(
        [
            "### Round trips / statements per op",
            "",
            "A round trip is a wait for the server's answer; a pipeline sends "
            "several statements in one.",
            "",
            *markdown_table(["items", "store", *(PHASES[p] for p in phases)], rows),
            "",
        ]
    )


def evaluate(results: Results) -> list[Target]:
    """The project's targets for ChronoStore."""
    return [
        vs_sqlite(results, "put", 1.5),
        vs_sqlite(results, "get", 1.2),
        across_sizes(results, "put", 1.3, "put"),
        across_sizes(results, "rollback", 1.5, f"rollback of {CHANGED} changed items"),
    ]


# -- command line ---------------------------------------------------------------


def parse_args(argv: Sequence[str] | None) -> tuple[Settings, argparse.Namespace]:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument(
        "--quick", action="store_true", help="smoke test: small sizes, few ops"
    )
    parser.add_argument("--sizes", type=int, nargs="+", help="memory sizes to measure")
    parser.add_argument("--ops", type=int, help="timed puts and gets per store")
    parser.add_argument("--searches", type=int, help="timed searches per store")
    parser.add_argument("--rollbacks", type=int, help="timed rollbacks per store")
    parser.add_argument(
        "--phase-seconds", type=float, help="time limit per store and phase"
    )
    parser.add_argument("--seed", type=int, help="random seed")
    parser.add_argument(
        "--synchronous",
        choices=("FULL", "NORMAL"),
        help="SQLite synchronous pragma of the WAL stores (default FULL)",
    )
    parser.add_argument(
        "--postgres",
        nargs="?",
        const="",
        metavar="DSN",
        help="measure ChronoStore and PostgresStore on PostgreSQL: the server "
        "the libpq DSN names (its user creates databases), or without one a "
        "private server started for the run",
    )
    parser.add_argument(
        "--fsync",
        action="store_true",
        help="with --postgres and no DSN: start the private server with fsync "
        "on, as a production server runs (the tests' servers run without it)",
    )
    parser.add_argument(
        "--twin",
        action="store_true",
        help="also measure a second, identical ChronoStore: how far apart the "
        "two come out is the method's own noise",
    )
    add_output_arguments(parser)
    args = parser.parse_args(argv)
    if args.twin and args.postgres is not None:
        parser.error("--twin measures the SQLite stores; leave out --postgres")
    if args.fsync and args.postgres != "":
        parser.error("--fsync starts a private server: give --postgres without a DSN")
    settings = QUICK if args.quick else FULL
    overrides = {
        "sizes": tuple(sorted(set(args.sizes))) if args.sizes else None,
        "ops": args.ops,
        "searches": args.searches,
        "rollbacks": args.rollbacks,
        "phase_seconds": args.phase_seconds,
        "seed": args.seed,
        "synchronous": args.synchronous,
    }
    settings = replace(
        settings, **{k: v for k, v in overrides.items() if v is not None}
    )
    if min(settings.sizes) < 1 or min(map(settings.wanted, PHASES)) < 1:
        parser.error("sizes, --ops, --searches and --rollbacks must be >= 1")
    return settings, args


def notes(settings: Settings) -> list[str]:
    """What the report's columns measure, in words."""
    return [
        f"Each store holds N items in one scope {SCOPE!r}, spread over {TOPICS} "
        "namespaces below it. ChronoStore, SqliteStore (WAL) and the naive store "
        f"run in WAL mode with synchronous={settings.synchronous}; SqliteStore "
        "(defaults) is connected as `SqliteStore.from_conn_string` does (rollback "
        "journal, synchronous=FULL). Every store has its own file (InMemoryStore "
        "none); all stores of all sizes take turns op by op, so they share the "
        "machine's conditions.",
        "put: one `put`, alternately updating a random item and adding a new one. "
        "get: one `get` of a random item. filtered search: "
        f"`search(scope, filter={{'kind': ...}}, limit={SEARCH_LIMIT})`, where the "
        f"filter matches 1% of items. rollback: `rollback(scope, to=v)` with {CHANGED} "
        "random items changed (in one batch, untimed) since v; the naive store "
        "copies snapshot v forward. The naive store gets fewer put and rollback ops "
        "at large sizes because every one of them copies the whole memory.",
    ]


def postgres_notes(settings: Settings) -> list[str]:
    """What the `--postgres` report's columns measure, in words."""
    return [
        f"Each store holds N items in one scope {SCOPE!r}, spread over {TOPICS} "
        "namespaces below it, in its own database on one PostgreSQL server. "
        f"{CHRONO_PG} is `ChronoStore.from_pool` on a pool like the one "
        f"`from_conn_string` opens; {PG_STORE} is LangGraph's, on one connection "
        "as its `from_conn_string` makes (autocommit, no prepared statements). "
        "Once loaded, both databases are analyzed, as autovacuum would have by "
        "then. The stores take turns op by op.",
        notes(settings)[1],
    ]


def to_json(
    results: Results,
    targets: Sequence[Target],
    settings: Settings,
    machine: Mapping[str, str],
    command: str,
    disk: DiskUsage,
) -> str:
    """Everything the markdown shows, as JSON."""
    return json.dumps(
        {
            "command": command,
            "machine": machine,
            "settings": asdict(settings),
            "results": {
                str(size): {
                    store: {phase: asdict(stats) for phase, stats in phases.items()}
                    for store, phases in by_store.items()
                }
                for size, by_store in results.items()
            },
            "targets": [asdict(t) | {"passed": t.passed} for t in targets],
            "disk_bytes": {str(size): by_store for size, by_store in disk.items()},
        },
        indent=2,
    )


def main(argv: Sequence[str] | None = None) -> int:
    """Run the benchmark; print the markdown report to stdout (progress to stderr)."""
    settings, args = parse_args(argv)
    command = shlex.join(sys.orig_argv if argv is None else ["store_ops.py", *argv])

    log = progress

    with tempfile.TemporaryDirectory(prefix="chronomem-bench-", dir=args.dir) as tmp:
        machine = machine_info(Path(tmp))
        log(f"measuring in {tmp}")
        if args.postgres is None:
            subjects: Opener = partial(open_subjects, twin=args.twin)
            results, per_op = run(settings, Path(tmp), log, subjects)
            usage = disk_usage(Path(tmp), settings.sizes)
        else:
            with postgres_opener(args.postgres, durable=args.fsync) as (
                opener,
                meters,
                stores,
            ):
                machine["postgresql"] = stores.server_version()
                machine["postgresql fsync"] = "on" if args.fsync else "off"

                def analyze() -> None:  # as autovacuum would by now
                    for size in settings.sizes:
                        for name in pair_databases(size):
                            stores.analyze(name)

                results, per_op = run(
                    settings, Path(tmp), log, opener, meters, loaded=analyze
                )
            usage = {}
    machine["load average at end"] = load_average()
    on_postgres = args.postgres is not None
    targets = evaluate_postgres(results) if on_postgres else evaluate(results)
    markdown = render_markdown(
        results,
        targets,
        columns=PHASES,
        requested={phase: settings.wanted(phase) for phase in PHASES},
        baseline=PG_STORE if on_postgres else SQLITE_WAL,
        machine=machine,
        command=command,
        notes=postgres_notes(settings) if on_postgres else notes(settings),
    )
    markdown += "\n" + (traffic_table(per_op) if on_postgres else disk_table(usage))
    print(markdown)
    if args.out:
        write_report(args.out, markdown)
    if args.json:
        report = to_json(results, targets, settings, machine, command, usage)
        write_report(args.json, report)
    return 0


if __name__ == "__main__":
    sys.exit(main())
