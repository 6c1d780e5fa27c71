"""Durability and concurrency: commits are whole, versions gap-free, no write lost.

These tests use real SQLite files and real OS processes and threads, no mocks:

- a writer killed with SIGKILL over and over leaves only whole commits, and the
  store it leaves behind reads exactly like a plain-Python replay of its commits;
- several processes, several threads sharing one store, several threads with a
  store each, and many concurrent `aput`s all land every write as its own
  version, in a gap-free history that says who wrote what.

The child-process writers live in `tests/_writer.py`.
"""

from __future__ import annotations

import asyncio
import contextlib
import itertools
import multiprocessing
import random
import signal
import sqlite3
import threading
import time
import traceback
from collections import Counter
from collections.abc import Iterator, Sequence
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path
from typing import Any

import pytest
from langgraph.store.base import BaseStore, PutOp

from langgraph_chronomem import ChronoStore, Commit
from langgraph_chronomem.store import DATABASE_FILE
from tests import _writer
from tests._writer import NOTES, OTHER_SCOPE, SCOPE, reason, step

Namespace = tuple[str, ...]
Value = dict[str, Any]
State = dict[tuple[Namespace, str], Value]

KILLS = 24
"""How many times the crash test kills its writer."""


# -- helpers -------------------------------------------------------------------


def read_all(reader: BaseStore, scope: Namespace) -> State:
    """Every item under `scope` (nested namespaces included), by address."""
    items = reader.search(scope, limit=10_000)
    assert len(items) < 10_000, "raise the limit: the state did not fit"
    return {(item.namespace, item.key): item.value for item in items}


def changes_of(commit: Commit) -> dict[tuple[Namespace, str], tuple[Any, Any]]:
    """A commit's changes as {address: (old, new)}, asserting no item repeats."""
    changes = {(c.namespace, c.key): (c.old, c.new) for c in commit.changes}
    assert len(changes) == len(commit.changes), f"v{commit.version} repeats an item"
    return changes


def assert_gap_free(commits: Sequence[Commit], head: int) -> None:
    """`log()` lists exactly versions HEAD..1, each on top of the one before,
    with `seq` strictly increasing along the versions."""
    assert [c.version for c in commits] == list(range(head, 0, -1))
    for commit in commits:
        assert commit.parent == (commit.version - 1 or None), commit
    seqs = [c.seq for c in reversed(commits)]
    assert all(a < b for a, b in itertools.pairwise(seqs)), (
        f"seq not increasing: {seqs}"
    )


def integrity(path: Path) -> list[tuple[str, ...]]:
    """SQLite's own verdict on the database file."""
    conn = sqlite3.connect(path / DATABASE_FILE)
    try:
        return conn.execute("PRAGMA integrity_check").fetchall()
    finally:
        conn.close()


def _in(namespace: Namespace, scope: Namespace) -> bool:
    return namespace[: len(scope)] == scope


class Replay:
    """What the crash workload's store must hold, replayed in plain Python.

    `world[i]` is the content of both scopes right after commit `i` of `SCOPE`
    (`step(i)`), and `other_heads[i]` the HEAD of `OTHER_SCOPE` at that moment.
    """

    def __init__(self) -> None:
        self.world: list[State] = [{}]
        self.other_heads: list[int] = [0]

    def extend_to(self, version: int) -> None:
        """Replay steps up to `version`."""
        while len(self.world) <= version:
            i = len(self.world)
            before = self.world[-1]
            planned = step(i)
            after = dict(before)
            if planned.kind == "batch":
                for w in planned.writes:
                    if w.value is None:
                        after.pop((w.namespace, w.key), None)
                    else:
                        after[(w.namespace, w.key)] = w.value
            elif planned.kind == "rollback":
                assert planned.target is not None
                after = {a: v for a, v in before.items() if not _in(a[0], SCOPE)}
                after.update(
                    (a, v)
                    for a, v in self.world[planned.target].items()
                    if _in(a[0], SCOPE)
                )
            else:
                assert planned.target is not None
                undone = self.world[planned.target - 1]
                for w in step(planned.target).writes:
                    address = (w.namespace, w.key)
                    if address in undone:
                        after[address] = undone[address]
                    else:
                        after.pop(address, None)
            wrote_other = any(_in(w.namespace, OTHER_SCOPE) for w in planned.writes)
            self.world.append(after)
            self.other_heads.append(self.other_heads[-1] + wrote_other)

    def state(self, version: int, scope: Namespace = SCOPE) -> State:
        """`scope`'s content after commit `version` of `SCOPE`."""
        return {a: v for a, v in self.world[version].items() if _in(a[0], scope)}

    def changes(
        self, version: int, scope: Namespace = SCOPE
    ) -> dict[tuple[Namespace, str], tuple[Any, Any]]:
        """What commit `version` of `SCOPE` changed in `scope`: {address: (old, new)}.

        Every put of the workload writes a value no earlier step wrote, so the
        changes of a commit are exactly the items whose value differs.
        """
        before, after = self.state(version - 1, scope), self.state(version, scope)
        return {
            a: (before.get(a), after.get(a))
            for a in before.keys() | after.keys()
            if before.get(a) != after.get(a)
        }

    def other_steps(self, head: int) -> list[int]:
        """The steps up to `head` that committed to `OTHER_SCOPE`, in order."""
        return [
            i
            for i in range(1, head + 1)
            if self.other_heads[i] > self.other_heads[i - 1]
        ]


def check_crashed_store(path: Path, replay: Replay, rng: random.Random) -> int:
    """Reopen the store a killed writer left behind and compare it with the replay.

    Returns HEAD of `SCOPE`.
    """
    with ChronoStore.from_path(path, scope_depth=2) as store:
        head = store.head(SCOPE)
        replay.extend_to(head)

        commits = store.log(SCOPE)
        assert_gap_free(commits, head)
        for commit in commits:
            planned = step(commit.version)
            solo = planned.kind == "batch" and len(planned.writes) == 1
            assert commit.reason == reason(commit.version), commit
            assert commit.op == ("put" if solo else planned.kind), commit
            assert commit.target == planned.target, commit
            assert changes_of(commit) == replay.changes(commit.version), commit

        assert read_all(store, SCOPE) == replay.state(head)
        sample = {
            0,
            head,
            max(head - 1, 0),
            *rng.sample(range(head + 1), min(head + 1, 5)),
        }
        for version in sorted(sample):
            assert read_all(store.as_of(SCOPE, version), SCOPE) == replay.state(
                version
            ), f"as_of v{version} of HEAD v{head}"
        for namespace, key in ((SCOPE, "k0"), (NOTES, "n0")):
            history = store.history(namespace, key)
            changed = [
                v for v in range(head, 0, -1) if (namespace, key) in replay.changes(v)
            ]
            assert [h.version for h in history] == changed
            assert [h.value for h in history] == [
                replay.state(v).get((namespace, key)) for v in changed
            ]

        # The second scope was written in the same transactions: it holds
        # exactly the commits of the steps that reached HEAD, and no others.
        other_head = store.head(OTHER_SCOPE)
        assert other_head == replay.other_heads[head]
        other_commits = store.log(OTHER_SCOPE)
        assert_gap_free(other_commits, other_head)
        assert [c.reason for c in reversed(other_commits)] == [
            reason(i) for i in replay.other_steps(head)
        ]
        assert read_all(store, OTHER_SCOPE) == replay.state(head, OTHER_SCOPE)
        # `seq` is global: the second scope's commit of step i sits between the
        # main scope's commits i and i + 1.
        seqs = {c.version: c.seq for c in commits}
        for commit, i in zip(
            reversed(other_commits), replay.other_steps(head), strict=True
        ):
            assert seqs[i] < commit.seq < seqs.get(i + 1, commit.seq + 1), commit
        for i in replay.other_steps(head)[-2:]:
            view = store.as_of(OTHER_SCOPE, replay.other_heads[i])
            assert read_all(view, OTHER_SCOPE) == replay.state(i, OTHER_SCOPE)
    assert integrity(path) == [("ok",)]
    return head


# -- 1. crash atomicity --------------------------------------------------------


def test_a_writer_killed_mid_commit_leaves_only_whole_commits(tmp_path: Path) -> None:
    """kill -9 at any moment loses at most the commit in flight, never half of one.

    Protects invariant 3 (DESIGN.md): after a crash every scope holds each commit
    whole or not at all, versions stay gap-free, `as_of` reads of the past are
    intact, a batch spanning two scopes lands in both or neither, and a new
    writer simply carries on from HEAD. The writer is killed `KILLS` times at
    random moments (fixed seed), a few of them while it is still opening (and,
    the first time, creating) the store.
    """
    ctx = multiprocessing.get_context("forkserver")  # children start in ms, not s
    ctx.set_forkserver_preload(["tests._writer"])
    rng = random.Random(20240509)
    path = tmp_path / "memory"
    replay = Replay()
    heads = [0]
    for kill in range(KILLS):
        receiver, sender = ctx.Pipe(duplex=False)
        writer = ctx.Process(
            target=_writer.write_forever, args=(str(path), sender), daemon=True
        )
        writer.start()
        sender.close()
        while_opening = kill % 7 == 0
        if while_opening:
            time.sleep(rng.uniform(0.0, 0.02))
        else:
            assert receiver.poll(30), "the writer never opened the store"
            assert receiver.recv() == heads[-1] + 1, "the writer did not resume at HEAD"
            time.sleep(rng.uniform(0.02, 0.35))
        writer.kill()
        writer.join(10)
        receiver.close()
        assert writer.exitcode == -signal.SIGKILL, (
            f"the writer stopped by itself (exit code {writer.exitcode}) before "
            "it was killed; its traceback is in the captured stderr"
        )
        head = check_crashed_store(path, replay, rng)
        assert head >= heads[-1], "a committed version disappeared"
        heads.append(head)
    assert heads[-1] >= 100, f"too few commits to mean much: {heads}"
    progressed = sum(a < b for a, b in itertools.pairwise(heads))
    assert progressed >= KILLS // 2, f"most writers wrote nothing: {heads}"


# -- 2. several processes ------------------------------------------------------

PROCESSES = 4
PUTS = 50


def test_processes_writing_one_scope_at_once_lose_no_write(tmp_path: Path) -> None:
    """Writers in separate processes never overwrite or skip each other's commits.

    Four processes open one store at the same moment and `put` into the same
    scope at once, half of it to one shared key. Every put becomes its own
    version, versions are gap-free with `seq` rising, each commit carries its
    process's author, each process's writes keep their order, and the shared
    key's history is one unbroken chain (each commit's `old` is the previous
    commit's `new`: no lost update).
    """
    ctx = multiprocessing.get_context("spawn")
    path = tmp_path / "memory"
    ChronoStore.from_path(path, scope_depth=2).close()  # see the next test
    scope = ("memories", "team")
    start = ctx.Barrier(PROCESSES)
    writers = [
        ctx.Process(
            target=_writer.put_many,
            args=(str(path), scope, n, PUTS, start),
            daemon=True,
        )
        for n in range(PROCESSES)
    ]
    for writer in writers:
        writer.start()
    for writer in writers:
        writer.join(90)
    assert [w.exitcode for w in writers] == [0] * PROCESSES, (
        "a writer failed; its traceback is in the captured stderr"
    )

    with ChronoStore.from_path(path, scope_depth=2) as store:
        head = store.head(scope)
        assert head == PROCESSES * PUTS
        commits = store.log(scope)
        assert_gap_free(commits, head)
        assert Counter(c.author for c in commits) == {
            f"proc-{n}": PUTS for n in range(PROCESSES)
        }
        last_j = dict.fromkeys(range(PROCESSES), -1)
        shared_value: Value | None = None
        for commit in reversed(commits):
            [change] = commit.changes
            assert change.new is not None
            n, j = change.new["writer"], change.new["j"]
            assert commit.author == f"proc-{n}"
            assert change.key == (f"p{n}-{j}" if j % 2 == 0 else "shared")
            assert j == last_j[n] + 1, f"proc-{n} wrote j={j} after j={last_j[n]}"
            last_j[n] = j
            if change.key == "shared":
                assert change.old == shared_value, f"update lost before {commit}"
                shared_value = change.new
        assert shared_value is not None
        expected: State = {
            (scope, f"p{n}-{j}"): {"writer": n, "j": j}
            for n in range(PROCESSES)
            for j in range(0, PUTS, 2)
        }
        expected[(scope, "shared")] = shared_value
        assert read_all(store, scope) == expected
        history = store.history(scope, "shared")
        assert len(history) == PROCESSES * PUTS // 2
        assert history[0].value == shared_value
    assert integrity(path) == [("ok",)]


OPEN_RACES = 200
OPENERS = 3


def _where_raised(error: BaseException) -> str:
    """`file:line: source` of the frame that raised `error`."""
    frame = traceback.extract_tb(error.__traceback__)[-1]
    return f"{Path(frame.filename).name}:{frame.lineno}: {frame.line}"


def _race_to_open(path: Path, openers: int) -> list[BaseException]:
    """`openers` threads open a store at `path` at the same moment, each with its
    own `ChronoStore`, and read from it; return what they raised."""
    start = threading.Barrier(openers)

    def open_and_read() -> None:
        start.wait(timeout=30)
        with ChronoStore.from_path(path, scope_depth=2) as store:
            assert store.head(("memories", "team")) == 0

    with ThreadPoolExecutor(openers) as pool:
        futures = [pool.submit(open_and_read) for _ in range(openers)]
        errors = [future.exception(timeout=60) for future in futures]
    return [error for error in errors if error is not None]


def test_opening_a_new_store_from_several_places_at_once_succeeds(
    tmp_path: Path,
) -> None:
    """Several openers racing to create the same new store all get a working store.

    Apps start several workers at once, each calling `ChronoStore.from_path` on
    a path that does not exist yet ("several processes may open the same
    path"). None of them may fail: creating the database, switching it to WAL
    and migrating it must wait for the others (the busy timeout) instead of
    raising `database is locked`. The race is narrow, so it is run
    `OPEN_RACES` times, each with `OPENERS` separate stores (separate SQLite
    connections, as in separate processes) opening at the same moment.
    """
    for race in range(OPEN_RACES):
        path = tmp_path / f"memory-{race}"
        errors = _race_to_open(path, OPENERS)
        assert not errors, f"race {race} of {OPEN_RACES}: " + "; ".join(
            f"{type(e).__name__}: {e} at {_where_raised(e)}" for e in errors
        )


# -- 3 and 4. threads ------------------------------------------------------------

THREADS = 4
BATCHES = 50
READERS = 2


def _thread_writes(store: ChronoStore, scope: Namespace, writer: int) -> None:
    """`BATCHES` batches, each a new item `w<writer>-<j>` plus an update of
    `latest-<writer>` to the same `j`, so a reader can tell a torn batch."""
    with store.commit_context(author=f"thread-{writer}"):
        for j in range(BATCHES):
            value = {"writer": writer, "j": j}
            store.batch(
                [
                    PutOp(scope, f"w{writer}-{j}", value),
                    PutOp(scope, f"latest-{writer}", value),
                ]
            )


def _assert_consistent(state: State, scope: Namespace) -> int:
    """A state of the thread workload shows whole batches only; return how many."""
    newest: dict[int, int] = {}
    written = 0
    for (namespace, key), value in state.items():
        assert namespace == scope
        if key.startswith("w"):
            written += 1
            newest[value["writer"]] = max(newest.get(value["writer"], -1), value["j"])
    for writer in range(THREADS):
        latest = state.get((scope, f"latest-{writer}"))
        assert (latest and latest["j"]) == newest.get(writer), (
            f"torn batch: latest-{writer}={latest}, newest item j={newest.get(writer)}"
        )
    return written


def _thread_reads(store: ChronoStore, scope: Namespace, done: threading.Event) -> int:
    """Read while the writers write; return how many rounds of reads ran.

    HEAD never goes back, HEAD reads and `as_of` reads only ever show whole
    batches, the state at version `v` holds exactly `v` batches, and `log`
    shows consecutive versions.
    """
    rounds, last_head = 0, 0
    while not done.is_set() or rounds == 0:
        head = store.head(scope)
        assert head >= last_head, f"HEAD went back from v{last_head} to v{head}"
        last_head = head
        at_version = read_all(store.as_of(scope, head), scope)
        assert _assert_consistent(at_version, scope) == head
        at_head = _assert_consistent(read_all(store, scope), scope)
        assert at_head >= head
        versions = [c.version for c in store.log(scope, limit=3)]
        if at_head:
            assert versions[0] >= at_head
            newest = versions[0]
            assert versions == list(range(newest, max(newest - 3, 0), -1))
        rounds += 1
    return rounds


@pytest.mark.parametrize("sharing", ["one store for all threads", "a store per thread"])
def test_threads_writing_one_scope_at_once_lose_no_write(
    tmp_path: Path, sharing: str
) -> None:
    """Threads writing one scope, through one store or a store each, lose nothing.

    `ChronoStore` promises to be thread-safe, and separate instances on one path
    (separate SQLite connections, like separate processes) serialise their
    writers. Four threads commit 50 two-item batches each while two threads
    read: every batch becomes exactly one version, versions are gap-free with
    `seq` rising, authors are right, no thread raises, and no reader ever sees
    HEAD go back or half a batch, at HEAD or through `as_of`. With a store per
    thread, all of them open the database at the same moment.
    """
    path = tmp_path / "memory"
    ChronoStore.from_path(path, scope_depth=2).close()  # see the test above
    scope = ("memories", "team")
    start = threading.Barrier(THREADS + READERS)
    done = threading.Event()
    common = (
        ChronoStore.from_path(path, scope_depth=2)
        if sharing == "one store for all threads"
        else None
    )

    @contextlib.contextmanager
    def opened() -> Iterator[ChronoStore]:
        start.wait(timeout=30)
        if common is not None:
            yield common
        else:
            with ChronoStore.from_path(path, scope_depth=2) as own:
                yield own

    def write(writer: int) -> None:
        with opened() as store:
            _thread_writes(store, scope, writer)

    def read() -> int:
        with opened() as store:
            return _thread_reads(store, scope, done)

    with ThreadPoolExecutor(THREADS + READERS) as pool:
        writes = [pool.submit(write, n) for n in range(THREADS)]
        reads = [pool.submit(read) for _ in range(READERS)]
        try:
            for future in writes:
                future.result(timeout=120)
        finally:
            done.set()
        assert all(future.result(timeout=60) > 0 for future in reads)

    with contextlib.ExitStack() as stack:
        store = common or ChronoStore.from_path(path, scope_depth=2)
        stack.callback(store.close)
        head = store.head(scope)
        assert head == THREADS * BATCHES
        commits = store.log(scope)
        assert_gap_free(commits, head)
        assert Counter(c.author for c in commits) == {
            f"thread-{n}": BATCHES for n in range(THREADS)
        }
        latest: dict[int, Value | None] = dict.fromkeys(range(THREADS))
        for commit in reversed(commits):
            changes = changes_of(commit)
            assert len(changes) == 2, commit
            assert commit.author is not None
            writer = int(commit.author.removeprefix("thread-"))
            before = latest[writer]
            value = {"writer": writer, "j": 0 if before is None else before["j"] + 1}
            assert changes == {
                (scope, f"w{writer}-{value['j']}"): (None, value),
                (scope, f"latest-{writer}"): (before, value),
            }, f"v{commit.version}"
            latest[writer] = value
        state = read_all(store, scope)
        assert _assert_consistent(state, scope) == head
        assert len(state) == head + THREADS
    assert integrity(path) == [("ok",)]


# -- 5. async ------------------------------------------------------------------

APUTS = 100


async def test_concurrent_aputs_each_commit_their_own_version(
    astore: ChronoStore,
) -> None:
    """Concurrent `aput`s to one key are never merged or dropped.

    An agent graph may fire many writes at once with `asyncio.gather`. Each
    `aput` must be its own version, in a gap-free history where
    `history(ns, key)` lists every value written (not just the last), each
    commit carries the author its own task set with `commit_context` (the
    context does not leak between concurrent tasks), and HEAD is the newest
    version's value. Reads running alongside only ever see a value some task
    wrote.
    """
    namespace = ("memories", "alice")

    async def put(n: int) -> None:
        with astore.commit_context(author=f"task-{n}"):
            await astore.aput(namespace, "mood", {"n": n})

    async def get() -> None:
        item = await astore.aget(namespace, "mood")
        assert item is None or item.value["n"] in range(APUTS)

    await asyncio.gather(
        *(put(n) for n in range(APUTS)), *(get() for _ in range(APUTS // 5))
    )

    assert await astore.ahead(namespace) == APUTS
    commits = await astore.alog(namespace)
    assert_gap_free(commits, APUTS)
    history = await astore.ahistory(namespace, "mood")
    assert [h.version for h in history] == list(range(APUTS, 0, -1))
    written = []
    for version in history:
        assert version.value is not None
        assert version.author == f"task-{version.value['n']}"
        written.append(version.value["n"])
    assert sorted(written) == list(range(APUTS))
    previous = None
    for commit in reversed(commits):
        [change] = commit.changes
        assert change.old == previous, f"v{commit.version} lost an update"
        previous = change.new
    item = await astore.aget(namespace, "mood")
    assert item is not None and item.value == history[0].value
