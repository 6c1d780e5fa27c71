"""Several writer processes on one store: ChronoStore against SqliteStore (WAL),
or on PostgreSQL against LangGraph's PostgresStore.

Each round starts `--writers` processes (4) on a fresh store; they open it, wait at
a barrier, then each makes `--puts` (500) single puts as fast as it can. Even puts
write the writer's own key, odd ones a key every writer of its scope fights
over, as `tests/_writer.py`'s `put_many` does. With `--scopes N` writer `w`
writes to scope `w % N` (one scope, the default, is the hardest case for
ChronoStore: its writers queue on the scope's lock). Throughput is all puts
over the wall time from the barrier to the last writer's end. ChronoStore and
LangGraph's `SqliteStore` (WAL, the same `synchronous`, a 30 s busy timeout)
take turns round by round, the first going second in the next round, and the
report gives each round's figures and the median ratio. After every round the
parent checks that no write was lost (and, for ChronoStore, that every scope's
versions are 1..HEAD with HEAD the number of its puts).

With `--postgres [DSN]` the stores are ChronoStore on PostgreSQL
(`from_conn_string`: a pool per process) and LangGraph's `PostgresStore` (one
connection per process, as its `from_conn_string` makes), a fresh database per
round on the server the DSN names, or on a private one started for the run.

    python benchmarks/concurrency/multi_writer.py  # 4 writers x 500 puts, 3 rounds
    python benchmarks/concurrency/multi_writer.py --rounds 1 --puts 100   # smoke test
    python benchmarks/concurrency/multi_writer.py \\
        --out benchmarks/results/multi_writer.md
    python benchmarks/concurrency/multi_writer.py --postgres --writers 8 --scopes 8
"""

from __future__ import annotations

import argparse
import multiprocessing as mp
import shlex
import sqlite3
import statistics
import sys
import tempfile
import time
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from multiprocessing.connection import Connection
from multiprocessing.synchronize import Barrier
from pathlib import Path

if __package__ in (None, ""):  # run as `python benchmarks/concurrency/multi_writer.py`
    sys.path.insert(0, str(Path(__file__).resolve().parents[2]))

import psycopg
from langgraph.store.base import BaseStore
from langgraph.store.postgres import PostgresStore
from langgraph.store.sqlite import SqliteStore
from psycopg.rows import dict_row

from benchmarks.harness.report import (
    Target,
    header,
    load_average,
    machine_info,
    markdown_table,
    write_report,
)
from benchmarks.harness.stores import CHRONO_PG, PG_STORE, Stores
from benchmarks.harness.subjects import CHRONO, SCOPE, SQLITE_WAL
from langgraph_chronomem import ChronoStore

__all__ = ["Round", "main", "run_round", "scope_of"]

BUSY_TIMEOUT = 30.0
TARGET = 0.9  # ChronoStore's throughput over SqliteStore (WAL)'s, at least
# On PostgreSQL: issue 11's goal for a put (<= 1.5x PostgresStore's time).
PG_TARGET = 1 / 1.5  # reported as 0.67x


def open_store(
    kind: str, path: Path | str, synchronous: str
) -> tuple[BaseStore, Callable[[], None]]:
    """The store a writer uses, and what closes it. `path` is the store's
    directory, or for the PostgreSQL kinds a connection string."""
    if kind == CHRONO_PG:
        on_pg = ChronoStore.from_conn_string(str(path), scope_depth=len(SCOPE))
        return on_pg, on_pg.close
    if kind == PG_STORE:
        pg_conn = psycopg.connect(
            str(path), autocommit=True, prepare_threshold=0, row_factory=dict_row
        )
        return PostgresStore(pg_conn), pg_conn.close
    path = Path(path)
    if kind == CHRONO:
        store = ChronoStore.from_path(
            path, scope_depth=len(SCOPE), synchronous=synchronous
        )
        return store, store.close
    conn = sqlite3.connect(
        path / "sqlite.sqlite3",
        timeout=BUSY_TIMEOUT,
        isolation_level=None,
        check_same_thread=False,
    )
    conn.execute("PRAGMA journal_mode=WAL")
    conn.execute(f"PRAGMA synchronous={synchronous}")
    sqlite_store = SqliteStore(conn)
    sqlite_store.setup()
    return sqlite_store, conn.close


def key_of(writer: int, j: int) -> str:
    """Put `j` of a writer: its own key when even, the shared one when odd."""
    return f"p{writer}-{j}" if j % 2 == 0 else "shared"


def scope_of(writer: int, scopes: int) -> tuple[str, ...]:
    """The scope a writer writes to: `SCOPE` when there is one, else one of
    `scopes` users'.

        >>> scope_of(5, 1), scope_of(5, 4)
        (('memories', 'alice'), ('memories', 'user1'))
    """
    return SCOPE if scopes == 1 else (SCOPE[0], f"user{writer % scopes}")


def writer(
    kind: str,
    path: str,
    synchronous: str,
    number: int,
    puts: int,
    scopes: int,
    start: Barrier,
    report: Connection,
) -> None:
    """One child: open the store, wait for the others, put, report (start, end)."""
    store, close = open_store(kind, path, synchronous)
    scope = scope_of(number, scopes)
    try:
        start.wait(timeout=120)
        began = time.monotonic_ns()  # CLOCK_MONOTONIC: one clock for every process
        for j in range(puts):
            store.put(scope, key_of(number, j), {"writer": number, "j": j})
        report.send((began, time.monotonic_ns()))
    finally:
        close()


@dataclass(frozen=True)
class Round:
    """One store's round: its throughput and what the parent found afterwards."""

    kind: str
    puts: int
    seconds: float
    lost: int

    @property
    def throughput(self) -> float:
        """Puts per second, all writers together."""
        return self.puts / self.seconds


def lost_writes(
    kind: str, path: Path | str, writers: int, puts: int, scopes: int = 1
) -> int:
    """Writes missing from the store after a round (0 when all are there).

    For ChronoStore every put changed the item, so each scope's HEAD must be
    the number of its puts, and its log versions 1..HEAD: a lower HEAD means a
    lost commit, a log shorter than HEAD a version gap.
    """
    store, close = open_store(kind, path, "NORMAL")
    try:
        own = [
            (scope_of(w, scopes), key_of(w, j))
            for w in range(writers)
            for j in range(0, puts, 2)
        ]
        missing = sum(store.get(ns, key) is None for ns, key in own)
        for scope in {scope_of(w, scopes) for w in range(writers)}:
            if puts > 1 and store.get(scope, "shared") is None:
                missing += 1
            if isinstance(store, ChronoStore):
                expected = puts * sum(
                    scope_of(w, scopes) == scope for w in range(writers)
                )
                head = store.head(scope)
                versions = {c.version for c in store.log(scope)}
                missing += expected - head + len(set(range(1, head + 1)) - versions)
        return missing
    finally:
        close()


def run_round(
    kind: str,
    place: Path | str,
    writers: int,
    puts: int,
    synchronous: str,
    scopes: int = 1,
) -> Round:
    """Start the writers on a fresh store and time them from the barrier.

    `place` is a directory to make the store's directory in, or for the
    PostgreSQL kinds the connection string of a fresh database.
    """
    if kind in (CHRONO_PG, PG_STORE):
        path: Path | str = place
    else:
        path = Path(tempfile.mkdtemp(prefix=f"{kind.split()[0]}-", dir=place))
    store, close = open_store(kind, path, synchronous)  # the schema, made once
    if isinstance(store, PostgresStore):
        store.setup()
    close()
    ctx = mp.get_context("spawn")
    start = ctx.Barrier(writers)
    pipes = [ctx.Pipe(duplex=False) for _ in range(writers)]
    children = [
        ctx.Process(
            target=writer,
            args=(kind, str(path), synchronous, n, puts, scopes, start, pipes[n][1]),
        )
        for n in range(writers)
    ]
    for child in children:
        child.start()
    spans = [receive.recv() for receive, _ in pipes]
    for child in children:
        child.join(timeout=120)
        if child.exitcode != 0:
            raise RuntimeError(f"a {kind} writer exited with {child.exitcode}")
    seconds = (max(end for _, end in spans) - min(b for b, _ in spans)) / 1e9
    lost = lost_writes(kind, path, writers, puts, scopes)
    return Round(kind, writers * puts, seconds, lost)


def render(
    rounds: Sequence[Round],
    target: Target,
    machine: dict[str, str],
    command: str,
    writers: int,
    puts: int,
    scopes: int = 1,
) -> str:
    """The report: per-round throughputs, the median ratio, the target."""
    by_kind: dict[str, list[Round]] = {}
    for done in rounds:
        by_kind.setdefault(done.kind, []).append(done)
    rows = [
        [
            kind,
            f"{statistics.median(r.throughput for r in done):,.0f}",
            ", ".join(f"{r.throughput:,.0f}" for r in done),
            sum(r.lost for r in done),
        ]
        for kind, done in by_kind.items()
    ]
    into = (
        f"one scope {SCOPE!r}"
        if scopes == 1
        else f"{scopes} scopes (writer w into scope w % {scopes})"
    )
    lines = [
        *header("Several writer processes", command, machine),
        f"{writers} processes x {puts} puts into {into}; throughput in "
        "puts per second, all writers together, from the barrier to the last end.",
        "",
        *markdown_table(
            ["store", "median", "per round", "lost writes"], rows, align="lrrr"
        ),
        "",
        *markdown_table(
            ["target", "measured", "result"],
            [[target.name, target.measured, target.verdict]],
        ),
    ]
    return "\n".join(lines) + "\n"


def main(argv: Sequence[str] | None = None) -> int:
    """Run the rounds; print the markdown report (progress to stderr)."""
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--writers", type=int, default=4)
    parser.add_argument("--puts", type=int, default=500, help="puts per writer")
    parser.add_argument("--rounds", type=int, default=3, help="rounds per store")
    parser.add_argument("--scopes", type=int, default=1, help="scopes written to")
    parser.add_argument("--synchronous", choices=("FULL", "NORMAL"), default="FULL")
    parser.add_argument(
        "--postgres",
        nargs="?",
        const="",
        metavar="DSN",
        help="ChronoStore and PostgresStore on PostgreSQL: the server the libpq "
        "DSN names (its user creates databases), or without one a private "
        "server started for the run",
    )
    parser.add_argument("--dir", type=Path, help="parent of the temporary directory")
    parser.add_argument("--out", type=Path, help="also write the markdown here")
    args = parser.parse_args(argv)
    if min(args.writers, args.puts, args.rounds, args.scopes) < 1:
        parser.error("--writers, --puts, --rounds and --scopes must be >= 1")
    if args.scopes > args.writers:
        parser.error("--scopes must be at most --writers")
    command = shlex.join(sys.orig_argv if argv is None else ["multi_writer.py", *argv])
    rounds: list[Round] = []
    chrono, baseline = (
        (CHRONO, SQLITE_WAL)
        if args.postgres is None
        else (
            CHRONO_PG,
            PG_STORE,
        )
    )
    with (
        tempfile.TemporaryDirectory(prefix="chronomem-mw-", dir=args.dir) as tmp,
        Stores(postgres=args.postgres) as stores,
    ):
        machine = machine_info(Path(tmp))
        for i in range(args.rounds):
            order = (chrono, baseline) if i % 2 == 0 else (baseline, chrono)
            for kind in order:
                place = (
                    Path(tmp)
                    if args.postgres is None
                    else stores.database(f"mw_{i}_{kind.split()[0].lower()}")
                )
                done = run_round(
                    kind,
                    place,
                    args.writers,
                    args.puts,
                    args.synchronous,
                    args.scopes,
                )
                print(
                    f"round {i + 1} {kind}: {done.throughput:,.0f} puts/s, "
                    f"{done.lost} lost",
                    file=sys.stderr,
                    flush=True,
                )
                rounds.append(done)
    machine["load average at end"] = load_average()
    ratios = [
        c.throughput / s.throughput
        for c, s in zip(
            [r for r in rounds if r.kind == chrono],
            [r for r in rounds if r.kind == baseline],
            strict=True,
        )
    ]
    ratio = statistics.median(ratios)
    least = TARGET if args.postgres is None else PG_TARGET
    # Target compares "at most", so it holds the baseline's lead over ChronoStore.
    target = Target(
        f"{chrono} throughput >= {least:.2g}x {baseline}",
        f"{ratio:.2f}x (rounds: {', '.join(f'{r:.2f}x' for r in ratios)})",
        round(1 / least, 4),
        1 / ratio,
    )
    markdown = render(
        rounds, target, machine, command, args.writers, args.puts, args.scopes
    )
    print(markdown)
    if args.out:
        write_report(args.out, markdown)
    lost = sum(r.lost for r in rounds)
    return 1 if lost else 0


if __name__ == "__main__":
    sys.exit(main())
