"""Checkpointer operations side by side: ChronoCheckpointer against SqliteSaver,
or on PostgreSQL against PostgresSaver.

One run measures `put`, `put_writes`, `get_tuple` (the thread's latest, a
checkpoint named by id, and one a replaying graph run opens) and `list` on
`ChronoCheckpointer` and LangGraph's `SqliteSaver`, at two checkpoint sizes
(~2 KB and ~20 KB serialized), and checks the project's target: `get_tuple`
(latest and by id) <= 1.2x SqliteSaver's at 2 KB. With `--postgres` both run on
one PostgreSQL server instead, against LangGraph's `PostgresSaver`, and the
target adds `put` and `put_writes` (issues 11 and 33: <= 1.2x PostgresSaver's).

    python benchmarks/store/checkpoint_ops.py --quick     # smoke test (~10 s)
    python benchmarks/store/checkpoint_ops.py             # 20 threads x 100 checkpoints
    python benchmarks/store/checkpoint_ops.py --quick --postgres   # a private server
    python benchmarks/store/checkpoint_ops.py --quick --postgres --fsync   # durable
    python benchmarks/store/checkpoint_ops.py --postgres "host=db user=bench"
    python benchmarks/store/checkpoint_ops.py \\
        --out benchmarks/results/checkpoint_ops.md \\
        --json benchmarks/results/checkpoint_ops.json

Method: each saver has its own file under one temporary directory on disk
(`--dir` picks its parent), both in WAL mode with the same `synchronous`.
SqliteSaver is connected as `SqliteSaver.from_conn_string` connects it; the
ChronoCheckpointer shares a `ChronoStore`'s file, as `open_chronomem` opens it.
Both are preloaded (not timed, `synchronous=NORMAL`, then reopened with the
measured setting) with the same threads of chained checkpoints, each followed
by two tasks' writes, as a graph run leaves them; then warmed up. In each timed
phase the savers of both sizes take turns op by op, in a fresh random order
each round (`store_ops.run_phase`), every one running the same ops from fixed
seeds.

On PostgreSQL (`--postgres [DSN]`; with no DSN a private server is started for
the run, `benchmarks/harness/stores.py`) each saver has its own database on the one
server: the ChronoCheckpointer as `open_chronomem(url)` opens it (its store's
pool), `PostgresSaver` as its `from_conn_string` connects (one connection,
prepared statements), after its `setup()`.
"""

from __future__ import annotations

import argparse
import json
import random
import shlex
import sqlite3
import sys
import tempfile
import time
from collections.abc import Callable, Iterator, Mapping, Sequence
from contextlib import ExitStack, contextmanager
from dataclasses import asdict, dataclass, replace
from functools import partial
from pathlib import Path
from typing import Any

if __package__ in (None, ""):  # run as `python benchmarks/store/checkpoint_ops.py`
    sys.path.insert(0, str(Path(__file__).resolve().parents[2]))

from langchain_core.runnables import RunnableConfig
from langgraph._internal._constants import CONFIG_KEY_RUNTIME
from langgraph.checkpoint.base import BaseCheckpointSaver, Checkpoint, empty_checkpoint
from langgraph.checkpoint.base.id import uuid6
from langgraph.checkpoint.postgres import PostgresSaver
from langgraph.checkpoint.serde.jsonplus import JsonPlusSerializer
from langgraph.checkpoint.sqlite import SqliteSaver
from langgraph.runtime import Runtime
from psycopg.conninfo import make_conninfo

import benchmarks.store.store_ops as store_ops
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
    write_report,
)
from benchmarks.harness.stores import Stores
from benchmarks.harness.subjects import Subject
from langgraph_chronomem import ChronoCheckpointer, ChronoStore, open_chronomem

__all__ = ["FULL", "QUICK", "Settings", "main", "run"]

CHRONO = "ChronoCheckpointer"
SQLITE = "SqliteSaver"
POSTGRES = "PostgresSaver"
LIST_LIMIT = 10
TASKS = 2  # tasks whose writes follow every preloaded checkpoint
GET_LIMIT = 1.2  # issue 10: get_tuple <= 1.2x SqliteSaver's at 2 KB (issue 11: and
TARGET_SIZE = 2_048  # put and get_tuple <= 1.2x PostgresSaver's; issue 33: put_writes)
# A replay's check is time travel's own; on PostgreSQL `put` and `put_writes`
# are targets too.
TARGET_PHASES = {
    SQLITE: ("get latest", "get by id"),
    POSTGRES: ("get latest", "get by id", "put", "put_writes"),
}

PHASES = {  # phase -> column title, in the order the phases run
    "get latest": "get_tuple (latest)",
    "get by id": "get_tuple (by id)",
    "replay": "get_tuple (replay opens)",
    "list": f"list (limit {LIST_LIMIT})",
    "put_writes": f"put_writes ({TASKS} writes)",
    "put": "put",
}

Address = tuple[str, str]  # (thread_id, checkpoint_id)


@dataclass(frozen=True)
class Settings:
    """How much to measure.

    Attributes:
        sizes: Serialized checkpoint sizes to measure at, in bytes (about).
        threads: Threads preloaded per saver and size.
        checkpoints: Checkpoints per preloaded thread.
        ops: Timed ops per saver, size and phase.
        warmup: Untimed reads of each kind per saver before timing.
        phase_seconds: Wall time after which a saver stops a phase (min 3 ops).
        seed: Seed for every random choice.
        synchronous: SQLite's `synchronous` pragma for both savers while timed.
    """

    sizes: tuple[int, ...]
    threads: int
    checkpoints: int
    ops: int
    warmup: int
    phase_seconds: float
    seed: int = 20240601
    synchronous: str = "FULL"


FULL = Settings(
    sizes=(2_048, 20_480), threads=20, checkpoints=100, ops=300, warmup=20,
    phase_seconds=30.0,
)  # fmt: skip
QUICK = Settings(
    sizes=(2_048, 20_480), threads=3, checkpoints=100, ops=50, warmup=5,
    phase_seconds=3.0,
)  # fmt: skip


# -- the workload ---------------------------------------------------------------

SYLLABLES = [f"{a}{b}" for a in "bcdfghklmnprstvz" for b in "aeiou"]
TEXT = " ".join(random.Random(0).choices(SYLLABLES, k=22_000))  # 66 KB to cut from
MESSAGE = 150  # characters per message


def checkpoint(checkpoint_id: str, step: int, size: int) -> Checkpoint:
    """A checkpoint whose `messages` channel makes it about `size` bytes serialized."""
    body = size - 300  # ~300 B of structure besides
    start = random.Random(checkpoint_id).randrange(len(TEXT) - body)
    text = TEXT[start : start + body]
    messages = [text[i : i + MESSAGE] for i in range(0, len(text), MESSAGE)]
    version = f"{step:032}.0"
    return {
        **empty_checkpoint(),
        "id": checkpoint_id,
        "channel_values": {"messages": messages, "step": step},
        "channel_versions": {"messages": version, "step": version},
        "versions_seen": {"agent": {"messages": version}},
    }


def writes(step: int) -> list[tuple[str, Any]]:
    """One task's writes: a message and a counter."""
    return [("messages", f"reply at step {step}: " + "ok " * 40), ("step", step)]


def config(thread_id: str, checkpoint_id: str | None = None) -> RunnableConfig:
    """The config naming a thread, and a checkpoint in it when given."""
    configurable: dict[str, Any] = {"thread_id": thread_id, "checkpoint_ns": ""}
    if checkpoint_id is not None:
        configurable["checkpoint_id"] = checkpoint_id
    return {"configurable": configurable}


def replay(thread_id: str, checkpoint_id: str) -> RunnableConfig:
    """The config a graph run replaying from a past checkpoint reads it with: the
    run's `Runtime` under LangGraph's key, and the user whose memory it uses."""
    configurable = {
        **config(thread_id, checkpoint_id)["configurable"],
        CONFIG_KEY_RUNTIME: Runtime(),
        "user_id": "bench-user",
    }
    return {"configurable": configurable}


def put(
    saver: BaseCheckpointSaver[Any],
    thread_id: str,
    parent_id: str | None,
    checkpoint_id: str,
    step: int,
    size: int,
) -> Callable[[], object]:
    """The `put` of a checkpoint (built now) as a graph's loop makes it: after its
    parent, with metadata, and with the channels the step changed (both: a
    `PostgresSaver` stores only those channels' values)."""
    made = checkpoint(checkpoint_id, step, size)
    return partial(
        saver.put,
        config(thread_id, parent_id),
        made,
        {"source": "loop", "step": step, "parents": {}},
        made["channel_versions"],
    )


@dataclass(frozen=True)
class Workload:
    """The threads preloaded and the timed ops, drawn once for both savers.

    Attributes:
        threads: Each thread's checkpoint ids, oldest first.
        task_ids: The preloaded tasks of each checkpoint.
        latest: Per op, the thread whose latest checkpoint is read.
        by_id: Per op, a preloaded checkpoint to read by id.
        new_tasks: Per op, (thread, its last preloaded checkpoint, a new task id).
        puts: Per op, (thread, parent id, new checkpoint id, step); each thread's
            new checkpoints chain on from its last preloaded one.
    """

    threads: dict[str, list[str]]
    task_ids: dict[str, list[str]]
    latest: list[str]
    by_id: list[Address]
    new_tasks: list[tuple[str, str, str]]
    puts: list[tuple[str, str, str, int]]


def draw_workload(settings: Settings) -> Workload:
    """Checkpoint ids are uuid6 (time-ordered), as LangGraph makes them."""
    rng = random.Random(settings.seed)
    threads = {
        f"thread-{t:03d}": [
            str(uuid6(clock_seq=-2)) for _ in range(settings.checkpoints)
        ]
        for t in range(settings.threads)
    }
    names = list(threads)
    task_ids = {
        cid: [f"task-{rng.getrandbits(64):016x}" for _ in range(TASKS)]
        for ids in threads.values()
        for cid in ids
    }
    heads = {name: ids[-1] for name, ids in threads.items()}
    puts = []
    for i in range(settings.ops):
        name = names[i % len(names)]
        new_id = str(uuid6(clock_seq=-2))
        puts.append((name, heads[name], new_id, settings.checkpoints + i))
        heads[name] = new_id
    return Workload(
        threads=threads,
        task_ids=task_ids,
        latest=[rng.choice(names) for _ in range(settings.ops)],
        by_id=[
            (name, rng.choice(threads[name]))
            for name in (rng.choice(names) for _ in range(settings.ops))
        ],
        new_tasks=[
            (name, threads[name][-1], f"new-{i}")
            for i, name in enumerate(rng.choice(names) for _ in range(settings.ops))
        ],
        puts=puts,
    )


def preload(saver: BaseCheckpointSaver[Any], workload: Workload, size: int) -> None:
    """Every thread's chain of checkpoints, each followed by its tasks' writes."""
    for thread_id, ids in workload.threads.items():
        for step, checkpoint_id in enumerate(ids):
            parent_id = ids[step - 1] if step else None
            put(saver, thread_id, parent_id, checkpoint_id, step, size)()
            for task_id in workload.task_ids[checkpoint_id]:
                saver.put_writes(
                    config(thread_id, checkpoint_id), writes(step), task_id
                )


def warm_up(saver: BaseCheckpointSaver[Any], workload: Workload, count: int) -> None:
    """Untimed reads of every kind."""
    for i in range(count):
        thread_id, checkpoint_id = workload.by_id[i % len(workload.by_id)]
        saver.get_tuple(config(thread_id))
        saver.get_tuple(config(thread_id, checkpoint_id))
        list(saver.list(config(thread_id), limit=LIST_LIMIT))


# -- the savers -----------------------------------------------------------------


@contextmanager
def open_saver(
    name: str, directory: Path, synchronous: str, stores: Stores, *, build: bool
) -> Iterator[BaseCheckpointSaver[Any]]:
    """One saver on its file in `directory` (WAL, `synchronous` as given), or on
    PostgreSQL its database for this directory (made anew when `build`)."""
    if stores.dsn is None and name == CHRONO:
        store, chrono = open_chronomem(
            directory / "chrono", scope_depth=2, synchronous=synchronous
        )
    elif stores.dsn is not None:
        database = f"{name}_{directory.name}".lower()
        url = (
            stores.database(database)
            if build
            else make_conninfo(stores.dsn, dbname=database)
        )
        if name == POSTGRES:
            with PostgresSaver.from_conn_string(url) as postgres_saver:
                if build:
                    postgres_saver.setup()
                yield postgres_saver
            return
        # What `open_chronomem(url)` opens; `url` is a libpq key=value string,
        # which only `from_conn_string` takes.
        store = ChronoStore.from_conn_string(url, scope_depth=2)
        chrono = ChronoCheckpointer(store)
    if name == CHRONO:
        try:
            yield chrono
        finally:
            store.close()
        return
    conn = sqlite3.connect(directory / "sqlite-saver.sqlite3", check_same_thread=False)
    try:
        saver = SqliteSaver(conn)
        saver.setup()  # switches the file to WAL
        conn.execute(f"PRAGMA synchronous={synchronous}")
        yield saver
    finally:
        conn.close()


def serialized_size(size: int) -> int:
    """The bytes a checkpoint of nominal `size` takes once serialized."""
    _, blob = JsonPlusSerializer().dumps_typed(checkpoint(str(uuid6()), 1, size))
    return len(blob)


# -- timing ---------------------------------------------------------------------

Prepare = Callable[[Subject, int], Callable[[], object]]
Savers = Mapping[tuple[int, str], BaseCheckpointSaver[Any]]


def phase_ops(workload: Workload, savers: Savers, phase: str) -> Prepare:
    """For op `i` of a phase, the call to time on a subject's saver."""

    def call(subject: Subject, i: int) -> Callable[[], object]:
        saver = savers[subject.id]
        if phase == "get latest":
            return partial(saver.get_tuple, config(workload.latest[i]))
        if phase == "get by id":
            return partial(saver.get_tuple, config(*workload.by_id[i]))
        if phase == "replay":
            return partial(saver.get_tuple, replay(*workload.by_id[i]))
        if phase == "list":
            listed = config(workload.latest[i])
            return lambda: list(saver.list(listed, limit=LIST_LIMIT))
        if phase == "put_writes":
            thread_id, checkpoint_id, task_id = workload.new_tasks[i]
            return partial(
                saver.put_writes, config(thread_id, checkpoint_id), writes(i), task_id
            )
        thread_id, parent_id, checkpoint_id, step = workload.puts[i]
        return put(saver, thread_id, parent_id, checkpoint_id, step, subject.size)

    return call


Results = dict[int, dict[str, dict[str, Stats]]]


def run(
    settings: Settings, root: Path, log: Callable[[str], None], stores: Stores
) -> Results:
    """Every phase for both savers at every size, all interleaved: on SQLite,
    or on the PostgreSQL server of `stores`."""
    workload = draw_workload(settings)
    savers_run = (CHRONO, SQLITE if stores.dsn is None else POSTGRES)  # row order
    results: Results = {
        size: {name: {} for name in savers_run} for size in settings.sizes
    }
    turns = store_ops.Settings(
        sizes=settings.sizes,
        ops=settings.ops,
        searches=settings.ops,
        rollbacks=1,
        warmup=settings.warmup,
        snapshot_rows=0,
        phase_seconds=settings.phase_seconds,
    )
    lanes = [(size, name) for size in settings.sizes for name in savers_run]
    for size, name in lanes:
        directory = root / str(size)
        directory.mkdir(exist_ok=True)
        started = time.perf_counter()
        with open_saver(name, directory, "NORMAL", stores, build=True) as saver:
            preload(saver, workload, size)
        log(f"{name} @ {size} B: loaded in {time.perf_counter() - started:.1f}s")
    with ExitStack() as stack:
        savers = {
            (size, name): stack.enter_context(
                open_saver(
                    name, root / str(size), settings.synchronous, stores, build=False
                )
            )
            for size, name in lanes
        }
        # run_phase takes turns between Subjects; these carry no store, only an id.
        subjects = [
            Subject(name, size, store=None, close=lambda: None)  # type: ignore[arg-type]
            for size, name in lanes
        ]
        for saver in savers.values():
            warm_up(saver, workload, settings.warmup)
        for phase in PHASES:
            started = time.perf_counter()
            samples = store_ops.run_phase(
                subjects, phase, phase_ops(workload, savers, phase), turns
            )
            log(f"{phase}: {time.perf_counter() - started:.1f}s")
            for (size, name), taken in samples.items():
                if taken:
                    results[size][name][phase] = Stats.of(taken)
    return results


# -- targets and the report -----------------------------------------------------


def baseline(results: Results) -> str:
    """The LangGraph saver measured: SqliteSaver, or PostgresSaver."""
    return next(name for by in results.values() for name in by if name != CHRONO)


def ratio(results: Results, size: int, phase: str) -> float | None:
    """ChronoCheckpointer's median over the baseline's, for one phase and size."""
    chrono = results[size][CHRONO].get(phase)
    other = results[size][baseline(results)].get(phase)
    if chrono is None or other is None or not other.median_us:
        return None
    return chrono.median_us / other.median_us


def evaluate(results: Results) -> list[Target]:
    """The project's target at 2 KB: both `get_tuple` kinds (and `put` against
    PostgresSaver); the worst counts."""
    other = baseline(results)
    phases = TARGET_PHASES[other]
    kinds = "get_tuple" if len(phases) == 2 else "get_tuple, put and put_writes"
    name = f"{CHRONO} {kinds} <= {GET_LIMIT}x {other} at {kb(TARGET_SIZE)}"
    if TARGET_SIZE not in results:
        return [Target(name, f"needs --sizes {TARGET_SIZE}", GET_LIMIT, None)]
    ratios = {phase: ratio(results, TARGET_SIZE, phase) for phase in phases}
    gets = {p: r for p, r in ratios.items() if r is not None}
    return [
        Target(
            name,
            ", ".join(f"{PHASES[p]}: {r:.2f}x" for p, r in gets.items()),
            GET_LIMIT,
            max(gets.values()) if gets else None,
        )
    ]


def kb(size: int) -> str:
    """`2048` -> `2 KB`."""
    return f"{size / 1024:g} KB"


def _cell(stats: Stats | None, requested: int) -> str:
    if stats is None:
        return "N/A"
    cell = f"{stats.median_us:,.1f} / {stats.p95_us:,.1f}"
    return cell + (f" (n={stats.n})" if stats.n < requested else "")


def render(
    results: Results,
    targets: Sequence[Target],
    settings: Settings,
    machine: Mapping[str, str],
    command: str,
) -> str:
    """The report: command, machine, method, latencies, ratios, targets."""
    latency = markdown_table(
        ["checkpoint", "saver", *PHASES.values()],
        [
            [kb(size), name, *(_cell(by[name].get(p), settings.ops) for p in PHASES)]
            for size, by in results.items()
            for name in by
        ],
        align="ll",
    )
    ratios = markdown_table(
        ["checkpoint", *PHASES.values()],
        [
            [kb(size), *(f"{r:.2f}x" if r else "N/A" for r in row)]
            for size in results
            for row in [[ratio(results, size, p) for p in PHASES]]
        ],
    )
    checks = markdown_table(
        ["target", "measured", "limit", "result"],
        [[t.name, t.measured, f"{t.limit}x", t.verdict] for t in targets],
        align="llrl",
    )
    lines = [
        *header("Checkpointer operations", command, machine),
        *(line for note in notes(settings, baseline(results)) for line in (note, "")),
        "Latency per op in µs, median / p95 (`n=` where fewer ran than asked):",
        "",
        *latency,
        "",
        f"{CHRONO}'s median over {baseline(results)}'s:",
        "",
        *ratios,
        "",
        "### Targets",
        "",
        *checks,
    ]
    return "\n".join(lines) + "\n"


def notes(settings: Settings, other: str) -> list[str]:
    """What the report's columns measure, in words."""
    blobs = ", ".join(f"{kb(s)}: {serialized_size(s):,} B" for s in settings.sizes)
    where = (
        f"{CHRONO} shares a ChronoStore's file (WAL); {SQLITE} is connected as "
        "`SqliteSaver.from_conn_string` does (it switches to WAL itself); both with "
        f"synchronous={settings.synchronous}, in separate files on one file system."
        if other == SQLITE
        else f"Each saver has its own database on one PostgreSQL server: {CHRONO} "
        "as `open_chronomem(url)` opens it (the ChronoStore's pool; each op one "
        f"transaction), {POSTGRES} as `PostgresSaver.from_conn_string` connects "
        "(one connection, autocommit, prepared statements; it keeps channel values "
        "in `checkpoint_blobs`, and a put sends the channels the step changed)."
    )
    return [
        f"Each saver holds {settings.threads} threads of {settings.checkpoints} "
        f"chained checkpoints, each followed by {TASKS} tasks' writes; checkpoints "
        f"serialize to {blobs} (a `messages` channel of text). {where} "
        "Savers of both sizes take turns op by op.",
        "get_tuple (latest): `get_tuple` of a thread, no `checkpoint_id`. get_tuple "
        "(by id): one of the thread's checkpoints by `checkpoint_id`. get_tuple "
        "(replay opens): the same, read as a graph run replaying from it reads it "
        f"(with the run's `Runtime`); {CHRONO} then checks whether the user's "
        "memory must be rewound to that checkpoint (here it need not: the user "
        f"wrote none), {other} reads it as before. list: "
        f"`list(thread, limit={LIST_LIMIT})`, read to the end. put_writes: a new "
        f"task's {len(writes(0))} writes on a thread's latest checkpoint. put: a new "
        "checkpoint after its thread's latest, as a graph's loop puts it (one "
        "durable commit each).",
    ]


def to_json(
    results: Results,
    targets: Sequence[Target],
    settings: Settings,
    machine: Mapping[str, str],
    command: str,
) -> str:
    """Everything the markdown shows, as JSON."""
    return json.dumps(
        {
            "command": command,
            "machine": machine,
            "settings": asdict(settings),
            "results": {
                str(size): {
                    name: {phase: asdict(stats) for phase, stats in phases.items()}
                    for name, phases in by_saver.items()
                }
                for size, by_saver in results.items()
            },
            "ratios": {
                str(size): {phase: ratio(results, size, phase) for phase in PHASES}
                for size in results
            },
            "targets": [asdict(t) | {"passed": t.passed} for t in targets],
        },
        indent=2,
    )


# -- command line ---------------------------------------------------------------


def parse_args(argv: Sequence[str] | None) -> tuple[Settings, argparse.Namespace]:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--quick", action="store_true", help="smoke test: 3 threads")
    parser.add_argument(
        "--sizes", type=int, nargs="+", help="checkpoint sizes in bytes (about)"
    )
    parser.add_argument("--threads", type=int, help="threads preloaded per saver")
    parser.add_argument("--checkpoints", type=int, help="checkpoints per thread")
    parser.add_argument("--ops", type=int, help="timed ops per saver and phase")
    parser.add_argument(
        "--phase-seconds", type=float, help="time limit per saver and phase"
    )
    parser.add_argument("--seed", type=int, help="random seed")
    parser.add_argument(
        "--synchronous",
        choices=("FULL", "NORMAL"),
        help="SQLite synchronous pragma of both savers (default FULL)",
    )
    parser.add_argument(
        "--postgres", nargs="?", const="", metavar="DSN",
        help="on PostgreSQL, against PostgresSaver: the server of DSN (its user "
        "creates databases), or with no DSN a private one started for the run",
    )  # fmt: skip
    parser.add_argument(
        "--fsync", action="store_true",
        help="with --postgres and no DSN: start the private server with fsync on, "
        "as a production server runs (the tests' servers run without it)",
    )  # fmt: skip
    add_output_arguments(parser)
    args = parser.parse_args(argv)
    if args.fsync and args.postgres != "":
        parser.error("--fsync starts a private server: give --postgres without a DSN")
    overrides = {
        "sizes": tuple(sorted(set(args.sizes))) if args.sizes else None,
        "threads": args.threads,
        "checkpoints": args.checkpoints,
        "ops": args.ops,
        "phase_seconds": args.phase_seconds,
        "seed": args.seed,
        "synchronous": args.synchronous,
    }
    settings = replace(
        QUICK if args.quick else FULL,
        **{k: v for k, v in overrides.items() if v is not None},
    )
    if not 512 <= min(settings.sizes) <= max(settings.sizes) <= 65_536:
        parser.error("--sizes must be between 512 and 65536 bytes")
    if min(settings.threads, settings.checkpoints, settings.ops) < 1:
        parser.error("--threads, --checkpoints and --ops must be >= 1")
    return settings, args


def main(argv: Sequence[str] | None = None) -> int:
    """Run the benchmark; print the markdown report to stdout (progress to stderr)."""
    settings, args = parse_args(argv)
    command = shlex.join(
        sys.orig_argv if argv is None else ["checkpoint_ops.py", *argv]
    )

    log = progress

    with (
        tempfile.TemporaryDirectory(prefix="chronomem-bench-", dir=args.dir) as tmp,
        Stores(args.postgres, durable=args.fsync) as stores,
    ):
        on_postgres = ("langgraph-checkpoint-postgres", "psycopg")
        machine = machine_info(
            Path(tmp), PACKAGES if stores.dsn is None else (*PACKAGES, *on_postgres)
        )
        if stores.dsn is not None:
            machine["postgresql"] = stores.server_version()
            machine["postgresql fsync"] = "on" if args.fsync else "off"
        log(f"measuring in {tmp} ({stores.engine})")
        results = run(settings, Path(tmp), log, stores)
    machine["load average at end"] = load_average()
    targets = evaluate(results)
    markdown = render(results, targets, settings, machine, command)
    print(markdown)
    if args.out:
        write_report(args.out, markdown)
    if args.json:
        write_report(args.json, to_json(results, targets, settings, machine, command))
    return 0


if __name__ == "__main__":
    sys.exit(main())
