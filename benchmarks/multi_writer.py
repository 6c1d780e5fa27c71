"""Several writer processes on one store: ChronoStore against SqliteStore (WAL).

Each round starts `--writers` processes (4) on a fresh store; they open it, wait at
a barrier, then each makes `--puts` (500) single puts as fast as it can. Even puts
write the writer's own key, odd ones a key every writer fights over, as
`tests/_writer.py`'s `put_many` does. Throughput is all puts over the wall time
from the barrier to the last writer's end. ChronoStore and LangGraph's
`SqliteStore` (WAL, the same `synchronous`, a 30 s busy timeout) take turns
round by round, the first going second in the next round, and the report gives
each round's figures and the median ratio. After every round the parent checks
that no write was lost (and, for ChronoStore, that the versions have no gaps).

    python benchmarks/multi_writer.py                 # 4 writers x 500 puts, 3 rounds
    python benchmarks/multi_writer.py --rounds 1 --puts 100   # smoke test
    python benchmarks/multi_writer.py --out benchmarks/results/multi_writer.md
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

if __package__ in (None, ""):  # run as `python benchmarks/multi_writer.py`
    sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from langgraph.store.base import BaseStore
from langgraph.store.sqlite import SqliteStore

from benchmarks.report import (
    Target,
    header,
    load_average,
    machine_info,
    markdown_table,
    write_report,
)
from benchmarks.subjects import CHRONO, SCOPE, SQLITE_WAL
from langgraph_chronomem import ChronoStore

__all__ = ["Round", "main", "run_round"]

BUSY_TIMEOUT = 30.0
TARGET = 0.9  # ChronoStore's throughput over SqliteStore (WAL)'s, at least


def open_store(
    kind: str, path: Path, synchronous: str
) -> tuple[BaseStore, Callable[[], None]]:
    """The store a writer uses, and what closes it."""
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


def writer(
    kind: str,
    path: str,
    synchronous: str,
    number: int,
    puts: int,
    start: Barrier,
    report: Connection,
) -> None:
    """One child: open the store, wait for the others, put, report (start, end)."""
    store, close = open_store(kind, Path(path), synchronous)
    try:
        start.wait(timeout=120)
        began = time.monotonic_ns()  # CLOCK_MONOTONIC: one clock for every process
        for j in range(puts):
            store.put(SCOPE, key_of(number, j), {"writer": number, "j": j})
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


def lost_writes(kind: str, path: Path, writers: int, puts: int) -> int:
    """Writes missing from the store after a round (0 when all are there).

    For ChronoStore every put changed the item, so HEAD must be the number of
    puts: a lower one means a lost commit or a version gap.
    """
    store, close = open_store(kind, path, "NORMAL")
    try:
        own = [(SCOPE, key_of(w, j)) for w in range(writers) for j in range(0, puts, 2)]
        missing = sum(store.get(ns, key) is None for ns, key in own)
        if puts > 1 and store.get(SCOPE, "shared") is None:
            missing += 1
        if isinstance(store, ChronoStore):
            missing += writers * puts - store.head(SCOPE)
        return missing
    finally:
        close()


def run_round(
    kind: str, root: Path, writers: int, puts: int, synchronous: str
) -> Round:
    """Start the writers on a fresh store and time them from the barrier."""
    path = Path(tempfile.mkdtemp(prefix=f"{kind.split()[0]}-", dir=root))
    _, close = open_store(kind, path, synchronous)  # the schema, made once
    close()
    ctx = mp.get_context("spawn")
    start = ctx.Barrier(writers)
    pipes = [ctx.Pipe(duplex=False) for _ in range(writers)]
    children = [
        ctx.Process(
            target=writer,
            args=(kind, str(path), synchronous, n, puts, start, pipes[n][1]),
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
    return Round(kind, writers * puts, seconds, lost_writes(kind, path, writers, puts))


def render(
    rounds: Sequence[Round],
    target: Target,
    machine: dict[str, str],
    command: str,
    writers: int,
    puts: int,
) -> str:
    """The report: per-round throughputs, the median ratio, the target."""
    by_kind = {k: [r for r in rounds if r.kind == k] for k in (CHRONO, SQLITE_WAL)}
    rows = [
        [
            kind,
            f"{statistics.median(r.throughput for r in done):,.0f}",
            ", ".join(f"{r.throughput:,.0f}" for r in done),
            sum(r.lost for r in done),
        ]
        for kind, done in by_kind.items()
    ]
    lines = [
        *header("Several writer processes", command, machine),
        f"{writers} processes x {puts} puts into one scope {SCOPE!r}; throughput in "
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
    parser.add_argument("--synchronous", choices=("FULL", "NORMAL"), default="FULL")
    parser.add_argument("--dir", type=Path, help="parent of the temporary directory")
    parser.add_argument("--out", type=Path, help="also write the markdown here")
    args = parser.parse_args(argv)
    if min(args.writers, args.puts, args.rounds) < 1:
        parser.error("--writers, --puts and --rounds must be >= 1")
    command = shlex.join(sys.orig_argv if argv is None else ["multi_writer.py", *argv])
    rounds: list[Round] = []
    with tempfile.TemporaryDirectory(prefix="chronomem-mw-", dir=args.dir) as tmp:
        machine = machine_info(Path(tmp))
        for i in range(args.rounds):
            order = (CHRONO, SQLITE_WAL) if i % 2 == 0 else (SQLITE_WAL, CHRONO)
            for kind in order:
                done = run_round(
                    kind, Path(tmp), args.writers, args.puts, args.synchronous
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
            [r for r in rounds if r.kind == CHRONO],
            [r for r in rounds if r.kind == SQLITE_WAL],
            strict=True,
        )
    ]
    ratio = statistics.median(ratios)
    # Target compares "at most", so it holds SqliteStore's lead over ChronoStore.
    target = Target(
        f"ChronoStore throughput >= {TARGET}x {SQLITE_WAL}",
        f"{ratio:.2f}x (rounds: {', '.join(f'{r:.2f}x' for r in ratios)})",
        round(1 / TARGET, 4),
        1 / ratio,
    )
    markdown = render(rounds, target, machine, command, args.writers, args.puts)
    print(markdown)
    if args.out:
        write_report(args.out, markdown)
    lost = sum(r.lost for r in rounds)
    return 1 if lost else 0


if __name__ == "__main__":
    sys.exit(main())
