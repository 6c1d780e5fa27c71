"""Several processes on one PostgreSQL log and one Chroma server: every write
is found by meaning right after it, and by every process at the end.

Each round spawns `--workers` processes (`_shared_index_worker.py`), each with
a ChronoStore of its own on one fresh PostgreSQL database and one Chroma
server. For `--steps` steps each puts an item into its own scope and one into a
shared scope, updates and deletes earlier ones, and right after every write
searches by meaning for what it wrote (read-your-writes across processes).
With `--reindex K` worker 0 rebuilds the index every K steps; with `--resets`
it now and then resets its scope to an earlier version (`store.reset`). Once
all have written, each worker checks the final HEAD with the store it kept
open, then a fresh store waits for the index and checks: no projection behind,
every item at HEAD found first by its own text at a score of 1.0, no deleted
item or old value found, HEAD holding what the workers wrote. What must be
found is read from the log, so the outcome of a reset needs no bookkeeping.

It reports per round and in total the time, writes, searches and violations
by kind: a missed own write, a worker crash or hang (killed after
`--timeout`), a lost vector at the end, a deleted item found, a projection
behind after waiting, an error the package let through raw, HEAD not what was
written. It exits 1 on any violation. The choices are seeded (`--seed`); how
the processes interleave is not.

    python benchmarks/concurrency/shared_index.py --quick  # 1 round, 3 x 12 steps
    python benchmarks/concurrency/shared_index.py  # 3 rounds, 4 workers x 30 steps
    python benchmarks/concurrency/shared_index.py --reindex 10 --resets --seed 7
    python benchmarks/concurrency/shared_index.py --dsn "host=db user=me" \\
        --chroma-url http://127.0.0.1:8000        # servers of your own
"""

from __future__ import annotations

import argparse
import contextlib
import json
import multiprocessing as mp
import shlex
import sys
import tempfile
import time
from collections import Counter
from collections.abc import Iterable, Iterator, Mapping, Sequence
from dataclasses import asdict, dataclass
from multiprocessing.connection import Connection
from multiprocessing.process import BaseProcess
from pathlib import Path

if __package__ in (None, ""):  # run as `python benchmarks/concurrency/shared_index.py`
    sys.path.insert(0, str(Path(__file__).resolve().parents[2]))


from benchmarks.concurrency._shared_index_worker import (
    BEHIND,
    KINDS,
    LOST_WRITE,
    WORKER_CRASH,
    WORKER_HANG,
    Item,
    Plan,
    Tally,
    Violation,
    check_head,
    failure,
    open_store,
    work,
)
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
from benchmarks.harness.stores import Stores
from langgraph_chronomem import ChronoStore
from testsupport.chroma_server import ChromaServer

__all__ = ["FULL", "QUICK", "Round", "Settings", "main", "run_round"]

EXIT_TIMEOUT = 30.0  # seconds a worker may take to close its store and exit
SHOWN = 20  # violations whose details the report shows


@dataclass(frozen=True)
class Settings:
    """A run's size: rounds of `workers` processes x `steps` steps."""

    rounds: int
    workers: int
    steps: int


QUICK = Settings(rounds=1, workers=3, steps=12)
FULL = Settings(rounds=3, workers=4, steps=30)


@dataclass(frozen=True)
class Round:
    """One round: its size, its times, what was done and what went wrong.

    `seconds` runs from spawning the workers to the end of the fresh store's
    check, `write_seconds` from "go" to the last worker's last write;
    `checked` counts the items at HEAD the fresh store checked.
    """

    number: int
    workers: int
    steps: int
    seconds: float
    write_seconds: float
    writes: int
    searches: int
    resets: int
    reindexes: int
    checked: int
    violations: tuple[Violation, ...]


_Worker = tuple[BaseProcess, Connection]


def _gather(
    running: Mapping[int, _Worker],
    expected: str,
    timeout: float,
    tallies: dict[int, Tally],
    violations: list[Violation],
) -> dict[int, _Worker]:
    """Wait for each worker of `running` to report `expected`, keeping its
    tally. Those that report a failure, die or say nothing within `timeout`
    (they are killed) are left out of the answer."""
    deadline = time.monotonic() + timeout
    answered: dict[int, _Worker] = {}
    for n, (proc, conn) in running.items():
        try:
            if not conn.poll(max(0.0, deadline - time.monotonic())):
                proc.kill()
                proc.join()
                violations.append(
                    Violation(
                        WORKER_HANG,
                        f"worker {n}",
                        f"no {expected!r} within {timeout:.0f} s, killed; it had "
                        f"made {tallies[n].writes if n in tallies else 0} writes",
                    )
                )
                continue
            said, tallies[n] = conn.recv()
        except EOFError:
            proc.join(EXIT_TIMEOUT)
            violations.append(
                Violation(
                    WORKER_CRASH,
                    f"worker {n}",
                    f"exited with code {proc.exitcode} before it said {expected!r}"
                    " (its traceback, if any, is on stderr)",
                )
            )
            continue
        if said == expected:
            answered[n] = (proc, conn)
    return answered


def _tell(workers: Mapping[int, _Worker], order: object) -> None:
    for _, conn in workers.values():
        with contextlib.suppress(OSError):  # a dead worker: _gather says so
            conn.send(order)


def _differences(head: Mapping[Item, str], expected: Mapping[Item, str]) -> str:
    wrong = sorted(
        i for i in head.keys() | expected.keys() if head.get(i) != expected.get(i)
    )
    shown = [(item, expected.get(item), head.get(item)) for item in wrong[:5]]
    return f"{len(wrong)} items differ; (item, written, HEAD): {shown}"


def check_fresh(
    url: str,
    chroma_url: str,
    written: Iterable[tuple[Item, str]],
    expected: Mapping[Item, str] | None,
    timeout: float,
) -> tuple[Tally, int]:
    """A store opened after the workers ended waits for its index and checks
    it (`check_head`), and that HEAD is `expected` when that is known.
    Returns its tally and how many items it checked."""
    tally = Tally()
    where = "a fresh store, after every worker ended"
    try:
        with open_store(url, chroma_url) as store:
            if not store.wait_for_index(timeout=timeout):
                tally.note(BEHIND, where, f"wait_for_index gave up after {timeout} s")
            for p in store.stats().projections:
                if p.behind or p.rebuild:
                    tally.note(
                        BEHIND,
                        where,
                        f"{p.name}: {p.behind} commits behind, "
                        f"scopes to rebuild {p.rebuild}",
                    )
            head = check_head(store, tally, written, where)
    except Exception as exc:
        tally.violations.append(failure(exc, where))
        return tally, 0
    if expected is not None and head != expected:
        tally.note(LOST_WRITE, where, _differences(head, expected))
    return tally, len(head)


def run_round(
    url: str,
    chroma_url: str,
    *,
    workers: int,
    steps: int,
    seed: int = 0,
    reindex_every: int = 0,
    resets: bool = False,
    timeout: float = 300.0,
    number: int = 0,
) -> Round:
    """One round on the empty database at `url` and the Chroma server at
    `chroma_url` (which holds no other log's collections for this embedding).

        done = run_round(url, chroma.url, workers=3, steps=12, reindex_every=6)
        assert not done.violations, done.violations

    Args:
        url: The database, as `ChronoStore.from_conn_string` takes it.
        chroma_url: The Chroma server.
        workers: Processes spawned.
        steps: Steps per worker (each puts two items and may update,
            delete, reset and reindex).
        seed: With `number`, seeds every worker's choices.
        reindex_every: Worker 0 reindexes after every this many steps (not
            after the last); 0 never.
        resets: Worker 0 resets its scope to an earlier version now and then.
        timeout: Seconds each phase (open, write, check) may take before a
            silent worker counts as hung and is killed.
        number: The round's number, for the report and the seeds.
    """
    began = time.monotonic()
    ChronoStore.from_conn_string(url, scope_depth=2).close()  # the schema, once
    ctx = mp.get_context("spawn")
    running: dict[int, _Worker] = {}
    for n in range(workers):
        plan = Plan(
            url,
            chroma_url,
            n,
            steps,
            seed=f"{seed}-{number}-{n}",
            reindex_every=reindex_every if n == 0 else 0,
            resets=resets and n == 0,
        )
        ours, theirs = ctx.Pipe()
        child = ctx.Process(target=work, args=(plan, theirs), daemon=True)
        child.start()
        theirs.close()  # ours alone: a dead worker reads as EOF
        running[n] = (child, ours)
    tallies: dict[int, Tally] = {}
    violations: list[Violation] = []
    ready = _gather(running, "ready", timeout, tallies, violations)
    _tell(ready, "go")
    go = time.monotonic()
    wrote = _gather(ready, "wrote", timeout, tallies, violations)
    write_seconds = time.monotonic() - go
    written = [w for tally in tallies.values() for w in tally.written]
    _tell(wrote, written)
    _gather(wrote, "done", timeout, tallies, violations)
    for n, (proc, conn) in running.items():
        proc.join(EXIT_TIMEOUT)
        if proc.is_alive():
            proc.kill()
            proc.join()
            violations.append(
                Violation(WORKER_HANG, f"worker {n}", "did not exit: killed")
            )
        conn.close()
    # Every worker wrote to the end: HEAD must be what they left.
    expected = (
        {item: text for tally in tallies.values() for item, text in tally.live.items()}
        if len(wrote) == workers
        else None
    )
    fresh, checked = check_fresh(url, chroma_url, written, expected, timeout)
    done = [*tallies.values(), fresh]
    for tally in done:
        violations += tally.violations
    return Round(
        number,
        workers,
        steps,
        seconds=time.monotonic() - began,
        write_seconds=write_seconds,
        writes=sum(t.writes for t in done),
        searches=sum(t.searches for t in done),
        resets=sum(t.resets for t in done),
        reindexes=sum(t.reindexes for t in done),
        checked=checked,
        violations=tuple(violations),
    )


@contextlib.contextmanager
def chroma_at(url: str | None) -> Iterator[str]:
    """The Chroma server at `url`, or without one a private one for the block."""
    if url:
        yield url
        return
    with ChromaServer() as server:
        yield server.url


def render(
    rounds: Sequence[Round],
    args: argparse.Namespace,
    machine: Mapping[str, str],
    command: str,
) -> str:
    """The report: the rounds, violations by kind, the first violations' details."""
    reindex = f"every {args.reindex} steps" if args.reindex else "never"
    rows: list[list[object]] = [
        [
            r.number + 1,
            f"{r.seconds:.1f}",
            f"{r.write_seconds:.1f}",
            r.writes,
            r.searches,
            r.resets,
            r.reindexes,
            r.checked,
            len(r.violations),
        ]
        for r in rounds
    ]
    rows.append(
        [
            "total",
            f"{sum(r.seconds for r in rounds):.1f}",
            f"{sum(r.write_seconds for r in rounds):.1f}",
            *(
                sum(getattr(r, name) for r in rounds)
                for name in ("writes", "searches", "resets", "reindexes", "checked")
            ),
            sum(len(r.violations) for r in rounds),
        ]
    )
    kinds = [Counter(v.kind for v in r.violations) for r in rounds]
    lines = [
        *header(
            "Several processes on one PostgreSQL log and one Chroma server",
            command,
            machine,
        ),
        f"{args.workers} worker processes x {args.steps} steps a round, seed "
        f"{args.seed}; worker 0 reindexes {reindex}"
        + (" and resets its scope now and then." if args.resets else "."),
        "Seconds: the round, from spawning the workers to the end of the fresh "
        "store's check; writing: from go to the last worker's last write. "
        "Searches: by meaning, the end checks' included. Checked: items at HEAD "
        "the fresh store searched for.",
        "",
        *markdown_table(
            [
                "round",
                "seconds",
                "writing s",
                "writes",
                "searches",
                "resets",
                "reindexes",
                "checked",
                "violations",
            ],
            rows,
        ),
        "",
        *markdown_table(
            ["violation", *(f"round {r.number + 1}" for r in rounds), "total"],
            [
                [kind, *(k[kind] for k in kinds), sum(k[kind] for k in kinds)]
                for kind in KINDS
            ],
        ),
    ]
    shown = [(r, v) for r in rounds for v in r.violations][:SHOWN]
    if shown:
        lines += ["", "### Violations", ""]
        for r, v in shown:
            lines += [f"Round {r.number + 1}, {v.kind}, {v.where}:", "", "```"]
            lines += [v.detail, "```", ""]
    return "\n".join(lines) + "\n"


def main(argv: Sequence[str] | None = None) -> int:
    """Run the rounds; print the markdown report (progress to stderr)."""
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--rounds", type=int, help=f"default {FULL.rounds}")
    parser.add_argument("--workers", type=int, help=f"default {FULL.workers}")
    parser.add_argument("--steps", type=int, help=f"per worker, default {FULL.steps}")
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument(
        "--reindex", type=int, default=0, metavar="K",
        help="worker 0 reindexes every K steps",
    )  # fmt: skip
    parser.add_argument(
        "--resets", action="store_true",
        help="worker 0 resets its scope to an earlier version now and then",
    )  # fmt: skip
    parser.add_argument(
        "--timeout", type=float, default=300.0,
        help="seconds a phase may take before a silent worker is killed as hung",
    )  # fmt: skip
    parser.add_argument(
        "--dsn",
        help="a PostgreSQL server's libpq DSN (its user creates a database per "
        "round); without one a private server is started for the run",
    )
    parser.add_argument(
        "--chroma-url",
        help="a Chroma server holding no other log's collections for this "
        "embedding; without one a private server is started for each round",
    )
    parser.add_argument(
        "--quick",
        action="store_true",
        help=f"{QUICK.rounds} round of {QUICK.workers} workers x {QUICK.steps} steps",
    )
    add_output_arguments(parser)
    args = parser.parse_args(argv)
    settings = QUICK if args.quick else FULL
    for name in ("rounds", "workers", "steps"):
        if getattr(args, name) is None:
            setattr(args, name, getattr(settings, name))
    if min(args.rounds, args.workers, args.steps) < 1 or args.reindex < 0:
        parser.error("--rounds, --workers and --steps must be >= 1, --reindex >= 0")
    command = shlex.join(sys.orig_argv if argv is None else ["shared_index.py", *argv])
    if args.dir:
        tempfile.tempdir = str(args.dir)  # where the private servers keep their data
    machine = machine_info(
        Path(tempfile.gettempdir()), (*PACKAGES, "chromadb", "psycopg")
    )
    rounds: list[Round] = []
    with Stores(postgres=args.dsn or "") as stores:
        assert stores.dsn is not None
        machine["postgresql"] = stores.server_version() + (
            "" if args.dsn else " (a private server, fsync off)"
        )
        machine["chroma"] = args.chroma_url or "a private `chroma run` each round"
        for i in range(args.rounds):
            url = stores.database(f"chronomem_shared_index_{i}")
            with chroma_at(args.chroma_url) as chroma_url:
                done = run_round(
                    url,
                    chroma_url,
                    workers=args.workers,
                    steps=args.steps,
                    seed=args.seed,
                    reindex_every=args.reindex,
                    resets=args.resets,
                    timeout=args.timeout,
                    number=i,
                )
            progress(
                f"round {i + 1}: {done.seconds:.1f} s, {done.writes} writes, "
                f"{done.searches} searches, {len(done.violations)} violations"
            )
            rounds.append(done)
    machine["load average at end"] = load_average()
    markdown = render(rounds, args, machine, command)
    print(markdown)
    if args.out:
        write_report(args.out, markdown)
    if args.json:
        kinds = Counter(v.kind for r in rounds for v in r.violations)
        write_report(
            args.json,
            json.dumps(
                {
                    "command": command,
                    "machine": machine,
                    "rounds": [asdict(r) for r in rounds],
                    "violations": {kind: kinds[kind] for kind in KINDS},
                },
                indent=2,
            ),
        )
    return 1 if any(r.violations for r in rounds) else 0


if __name__ == "__main__":
    sys.exit(main())
