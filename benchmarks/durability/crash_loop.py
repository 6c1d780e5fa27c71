"""Crash loop: kill -9 inside indexed writes, rewinds, reindex and catch-up, then
check that the store opens, its log is whole and its index neither empty nor stale.

    python benchmarks/durability/crash_loop.py  # 200 kills (~10 min on 2 cores)
    python benchmarks/durability/crash_loop.py --quick         # 20 kills (~1 min)
    python benchmarks/durability/crash_loop.py --out benchmarks/results/crash_loop.md \\
        --json benchmarks/results/crash_loop.json

Method: a child process (`benchmarks/durability/_crash_child.py`, forked from a
server that has already imported the package, so a child starts in milliseconds)
opens the store with an index (a deterministic bag-of-words `embed`, `fields=["text"]`)
and does one phase of work: indexed puts, indexed batches, rollbacks / reverts /
deletes, `reindex()`, or a catch-up (a backlog written without the index, then
the indexed open and the first undo request). Once the child says the work has
started, the parent waits a random time drawn uniformly from [0, 1.25 x the
phase's last measured length] and sends SIGKILL. Each phase is first run once to
the end to measure it; a child that finishes before its kill (about one in five)
is checked too, not counted as a kill, and gives the phase's new length, so the
kills keep covering a reindex that grows with the log. The child flags the
moments it spends inside a Chroma write in a shared file, so the report can tell
how many kills landed there. Every 20th kill (`--damage-every`) the parent also
cuts Chroma's database to half its size before reopening, as a torn write would.

After every kill the parent reopens the store with its index and checks:

- child: the child's work, on the store the last kill left, never raised;
- opens: the store opens with its index (a vector folder that cannot be used
  must be moved aside with a warning, and rebuilt);
- log: versions 1..HEAD with no gap and `seq` rising; each change starts from
  the value the log says the item held; a rollback leaves exactly its target's
  state; every batch's commit holds every change it asked for, in every scope
  it touched (no partial commit);
- durability: every write that returned in the child is in the log;
- head: what `search(scope)` lists at HEAD equals a replay of the log;
- index: after the first semantic search, every HEAD item is found first by its
  own text with score ~1.0 (brute force over the log says it must be);
- stats: `stats()` never says the item index has nothing behind while the
  search misses a HEAD item (silently stale or empty);
- non_head: no search (by HEAD texts, and by texts the log holds only in older
  versions) returns a value that is not HEAD's;
- undo: the first undo request after the kill finds the newest change it names.

A store serves a run of kills (`--per-store`), then a fresh one starts, so the
log (and the length of a reindex) stays the size of a working memory.
"""

from __future__ import annotations

import argparse
import json
import logging
import multiprocessing
import os
import random
import shlex
import shutil
import signal
import statistics
import sys
import tempfile
import time
from collections import Counter, defaultdict
from collections.abc import Callable, Mapping, Sequence
from dataclasses import asdict, dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from langgraph.store.base import SearchItem

    from langgraph_chronomem import ChronoStore, Commit

if __package__ in (None, ""):  # run as `python benchmarks/durability/crash_loop.py`
    sys.path.insert(0, str(Path(__file__).resolve().parents[2]))

from benchmarks.durability import _crash_child as child
from benchmarks.harness.report import (
    header,
    load_average,
    machine_info,
    markdown_table,
    progress,
    write_report,
)

__all__ = ["CHECKS", "Kill", "Settings", "check_store", "main", "run"]

CHECKS = (
    "child",
    "opens",
    "log",
    "durability",
    "head",
    "index",
    "stats",
    "non_head",
    "undo",
)
OLD_TEXTS = 40  # texts of non-HEAD versions searched per check
PREFILL = 120  # puts a fresh store starts with
OVERSHOOT = 1.25  # kills are drawn over this much of the phase's last length
GO_TIMEOUT = 120.0  # seconds a child may take to open the store
WORK_TIMEOUT = 600.0  # seconds a child may take for a phase it was not killed in

Namespace = tuple[str, ...]
State = dict[tuple[Namespace, str], dict[str, Any]]


@dataclass(frozen=True)
class Settings:
    """How much to crash.

    Attributes:
        kills: SIGKILLs that must land inside the work.
        per_store: Kills a store takes before a fresh one starts.
        damage_every: After every this many kills, the killed child's Chroma
            database is also cut to half its size (a torn Chroma write; 0: never).
        phases: The phases to kill (`_crash_child.PHASES`), in equal shares.
        seed: Seed of every random choice (phases, delays, workload).
    """

    kills: int
    per_store: int
    damage_every: int = 20
    phases: tuple[str, ...] = child.PHASES
    seed: int = 20240601


FULL = Settings(kills=200, per_store=25)
QUICK = Settings(kills=20, per_store=10, damage_every=10)


@dataclass
class Kill:
    """One child killed (or, `killed=False`, finished before its kill) and checked."""

    run: int
    phase: str
    delay_s: float
    killed: bool
    step: str  # the child's step when it died (`child.STEPS`)
    in_chroma_write: bool
    damaged: bool = False  # Chroma's database cut to half after the kill
    moved_aside: bool = False
    items_behind_at_open: int | None = None
    failures: dict[str, str] = field(default_factory=dict)
    check_s: float = 0.0


# -- checking a store ---------------------------------------------------------


class _Warnings(logging.Handler):
    """Collects the package's warnings while a store opens."""

    def __init__(self) -> None:
        super().__init__(logging.WARNING)
        self.messages: list[str] = []

    def emit(self, record: logging.LogRecord) -> None:
        self.messages.append(record.getMessage())


def _replay(
    scope: Namespace, commits: Sequence[Commit], fail: Callable[[str, str], None]
) -> State:
    """The scope's HEAD state from its log (oldest commit first), checking the
    log's own consistency on the way."""
    versions = [c.version for c in commits]
    if versions != list(range(1, len(commits) + 1)):
        fail("log", f"{scope[1]}: versions {versions[:3]}... not 1..{len(commits)}")
    seqs = [c.seq for c in commits]
    if seqs != sorted(set(seqs)):
        fail("log", f"{scope[1]}: seq does not rise with version")
    state: State = {}
    states = [dict(state)]
    for commit in commits:
        for change in commit.changes:
            item = (tuple(change.namespace), change.key)
            if state.get(item) != change.old:
                fail("log", f"{scope[1]} v{commit.version}: {item} did not hold `old`")
            if change.new is None:
                state.pop(item, None)
            else:
                state[item] = change.new
        states.append(dict(state))
        target = commit.target
        if commit.op == "rollback" and target is not None and state != states[target]:
            fail("log", f"{scope[1]} v{commit.version}: rollback != state at v{target}")
    return state


def _check_commits(
    logs: Mapping[Namespace, Sequence[Commit]],
    acked: set[str],
    fail: Callable[[str, str], None],
) -> None:
    """Every batch whole in every scope it touched; every returned write logged."""
    scopes_of: dict[str, set[str]] = defaultdict(set)
    expected_of: dict[str, set[str]] = {}
    for scope, commits in logs.items():
        for commit in commits:
            if not commit.reason:
                continue
            tag = commit.reason.split()[0]
            if scope[1] in scopes_of[tag]:
                fail("log", f"{tag} committed twice in {scope[1]}")
            scopes_of[tag].add(scope[1])
            counts = child.expected_counts(commit.reason)
            if counts:
                expected_of[tag] = set(counts)
                if len(commit.changes) != counts.get(scope[1]):
                    fail(
                        "log",
                        f"partial commit {tag} in {scope[1]}: {len(commit.changes)} "
                        f"changes of {counts.get(scope[1])}",
                    )
    for tag, expected in expected_of.items():
        if scopes_of[tag] != expected:
            fail("log", f"partial batch {tag}: in {sorted(scopes_of[tag])} only")
    lost = sorted(acked - set(scopes_of))
    if lost:
        fail("durability", f"{len(lost)} returned writes not in the log: {lost[:3]}")


def _items_behind(store: ChronoStore) -> tuple[int, bool]:
    """What `stats()` says the item projection still has to do: commits, and
    whether a rebuild of some scope is pending."""
    for projection in store.stats().projections:
        if "items" in projection.name:
            return projection.behind, bool(projection.rebuild)
    return 0, False


def _check_index(
    store: ChronoStore,
    head: State,
    old_texts: Sequence[str],
    fail: Callable[[str, str], None],
) -> None:
    """Every HEAD item found first by its own text; nothing but HEAD returned."""
    missing: list[tuple[Namespace, str]] = []
    wrong: list[tuple[Namespace, str]] = []

    def search(namespace: Namespace, text: str, limit: int) -> list[SearchItem]:
        hits = store.search(namespace, query=text, limit=limit)
        wrong.extend(
            (tuple(hit.namespace), hit.key)
            for hit in hits
            if head.get((tuple(hit.namespace), hit.key)) != hit.value
        )
        return hits

    for (namespace, key), value in sorted(head.items()):
        hits = search(namespace, value["text"], 2)
        first = hits[0] if hits else None
        if (
            first is None
            or (tuple(first.namespace), first.key) != (namespace, key)
            or (first.score or 0.0) < 0.999
        ):
            missing.append((namespace, key))
    for text in old_texts:
        search(child.SCOPES[0][:1], text, 5)
    behind, rebuild = _items_behind(store)
    if missing:
        fail("index", f"{len(missing)} of {len(head)} HEAD items not found first")
        if not behind and not rebuild:
            fail("stats", f"nothing behind, yet {len(missing)} HEAD items missing")
    if wrong:
        fail("non_head", f"{len(wrong)} hits not at HEAD, e.g. {wrong[0]}")


def _check_undo(
    store: ChronoStore,
    logs: Mapping[Namespace, Sequence[Commit]],
    head: State,
    rng: random.Random,
    fail: Callable[[str, str], None],
) -> None:
    """The first undo request finds the newest change it names."""
    scope = rng.choice(child.SCOPES)
    for commit in reversed(logs[scope]):
        texts = [
            c.new["text"]
            for c in commit.changes
            if c.new is not None and head.get((tuple(c.namespace), c.key)) == c.new
        ]
        if commit.op in ("put", "batch") and texts:
            break
    else:
        return
    found = store.resolve(scope, f"forget that {texts[0]}")
    if commit.version not in {c.commit.version for c in found.candidates}:
        fail("undo", f"{scope[1]} v{commit.version} not among the candidates")


def _raised(exc: Exception) -> str:
    return f"raised {type(exc).__name__}: {(str(exc).splitlines() or [''])[0]}"


def _check_head(
    store: ChronoStore, head: State, fail: Callable[[str, str], None]
) -> None:
    """What the store lists at HEAD is what the log says."""
    listed = {
        (tuple(item.namespace), item.key): item.value
        for scope in child.SCOPES
        for item in store.search(scope, limit=100_000)
    }
    differ = sum(listed.get(item) != head.get(item) for item in listed.keys() | head)
    if differ:
        fail("head", f"{differ} items differ from the log's replay")


def check_store(
    path: Path, acked_path: Path, rng: random.Random
) -> tuple[dict[str, str], bool, int | None]:
    """Reopen the store at `path` and run every check.

    Returns the failed checks (check -> what failed), whether the vector index
    was moved aside, and how many commits `stats()` said the item index was
    behind right after opening.
    """
    failures: dict[str, str] = {}

    def fail(check: str, message: str) -> None:
        failures.setdefault(check, message)

    acked = {
        line.strip()
        for line in acked_path.read_text().splitlines()
        if line.strip() and not line.endswith(" none")
    }
    broken = set(path.glob("chroma.broken-*"))
    warnings = _Warnings()
    package_logger = logging.getLogger("langgraph_chronomem")
    package_logger.addHandler(warnings)
    try:
        store = child.open_store(str(path))
    except Exception as exc:  # the store must always open: any error is a finding
        fail("opens", _raised(exc))
        return failures, False, None
    finally:
        package_logger.removeHandler(warnings)
    moved = bool(set(path.glob("chroma.broken-*")) - broken)
    if moved and not any("moved it to" in m for m in warnings.messages):
        fail("opens", "the vector index was moved aside without a warning")
    with store:
        behind, _ = _items_behind(store)
        try:
            logs: dict[Namespace, list[Commit]] = {
                s: list(reversed(store.log(s))) for s in child.SCOPES
            }
            head: State = {}
            for scope, commits in logs.items():
                head |= _replay(scope, commits, fail)
        except Exception as exc:  # reading the log must never fail
            fail("log", _raised(exc))
            return failures, moved, behind
        heads = {v["text"] for v in head.values()}
        old = sorted(
            {
                c.new["text"]
                for commits in logs.values()
                for commit in commits
                for c in commit.changes
                if c.new is not None and c.new["text"] not in heads
            }
        )
        checks: dict[str, Callable[[], None]] = {
            "log": lambda: _check_commits(logs, acked, fail),
            "head": lambda: _check_head(store, head, fail),
            "index": lambda: _check_index(
                store, head, rng.sample(old, min(OLD_TEXTS, len(old))), fail
            ),
            "undo": lambda: _check_undo(store, logs, head, rng, fail),
        }
        for check, run_check in checks.items():
            try:
                run_check()
            except Exception as exc:  # a store that raises fails the check
                fail(check, _raised(exc))
    return failures, moved, behind


# -- the loop -----------------------------------------------------------------


class _Children:
    """Starts children from a fork server that has imported the package once."""

    def __init__(self) -> None:
        self.context = multiprocessing.get_context("forkserver")
        self.context.set_forkserver_preload(
            ["benchmarks.durability._crash_child", "langgraph_chronomem", "chromadb"]
        )

    def start(
        self, path: Path, phase: str, run_id: int, marker: Path, acked: Path
    ) -> tuple[Any, Any]:
        marker.write_bytes(b"\0\0")
        receive, send = self.context.Pipe(duplex=False)
        process = self.context.Process(
            target=child.run,
            args=(str(path), phase, run_id, str(marker), str(acked), send),
            daemon=True,
        )
        process.start()
        send.close()
        return process, receive


class _ChildFailed(Exception):
    """The child's own work failed: it raised, hung, or said something else."""


def _await(receive: Any, process: Any, what: str, timeout: float) -> float:
    """The child's next message, which must be `what`; its number.

    Raises:
        _ChildFailed: If it does not come.
    """
    if not receive.poll(timeout):
        process.kill()
        process.join()
        raise _ChildFailed(f"sent no {what!r} in {timeout:.0f} s")
    try:
        said, value = receive.recv()
    except EOFError:
        process.join()
        raise _ChildFailed(
            f"exited {process.exitcode} before {what!r} (its traceback is on stderr)"
        ) from None
    if said != what:
        raise _ChildFailed(f"said {said!r}, expected {what!r}")
    return float(value)


@dataclass(frozen=True)
class _Outcome:
    """How a child ended: killed (in which step, inside a Chroma write or
    not), or finished after `elapsed` seconds of work, or failed (`error`)."""

    killed: bool
    elapsed: float = 0.0
    step: str = "done"
    in_chroma_write: bool = False
    error: str | None = None


def _run_child(
    children: _Children,
    path: Path,
    phase: str,
    run_id: int,
    delay: float | None,
) -> _Outcome:
    """Run one child and kill it `delay` seconds after it starts its work
    (`None`: let it finish)."""
    marker = path.parent / f"{path.name}.marker"
    process, receive = children.start(
        path, phase, run_id, marker, path.parent / f"{path.name}.acked"
    )
    try:
        _await(receive, process, "go", GO_TIMEOUT)
        if delay is not None and not receive.poll(delay):
            os.kill(process.pid, signal.SIGKILL)
            process.join()
            if process.exitcode == -signal.SIGKILL:
                flags = marker.read_bytes()
                step = child.STEPS.get(flags[1], "?")
                return _Outcome(True, step=step, in_chroma_write=bool(flags[0]))
        elapsed = _await(receive, process, "done", WORK_TIMEOUT)
        process.join()
        return _Outcome(False, elapsed)
    except _ChildFailed as exc:
        return _Outcome(False, step="failed", error=str(exc))
    finally:
        receive.close()


def _tear(path: Path) -> None:
    """Cut the store's Chroma database to half its size, as a torn write would."""
    database = path / "chroma" / "chroma.sqlite3"
    os.truncate(database, database.stat().st_size // 2)


def _fresh_store(root: Path, number: int, rng: random.Random) -> Path:
    path = root / f"store-{number}"
    (root / f"{path.name}.acked").write_text("")
    with child.open_store(str(path)) as store:
        child.write_puts(store, rng, f"f{number}", PREFILL)
    return path


def run(
    settings: Settings, root: Path, log: Callable[[str], None]
) -> tuple[list[Kill], dict[str, list[float]]]:
    """Kill `settings.kills` children inside their work and check after each.

    Returns every kill (and every child that finished first), and each phase's
    measured lengths in seconds.
    """
    rng = random.Random(settings.seed)
    children = _Children()
    lengths: dict[str, list[float]] = {phase: [] for phase in settings.phases}
    kills: list[Kill] = []
    stores, run_id = 0, 0
    path = _fresh_store(root, stores, rng)
    for phase in settings.phases:  # measure each phase once, to the end
        outcome = _run_child(children, path, phase, run_id, None)
        if outcome.error:
            raise RuntimeError(f"the {phase} child, not killed, {outcome.error}")
        lengths[phase].append(outcome.elapsed)
        run_id += 1
    log(
        "phase lengths (s): " + ", ".join(f"{p} {v[0]:.2f}" for p, v in lengths.items())
    )
    in_store, store_failed = 0, False
    killed: Counter[str] = Counter()
    while sum(killed.values()) < settings.kills:
        if in_store >= settings.per_store:
            if not store_failed:
                shutil.rmtree(path)
            stores += 1
            path = _fresh_store(root, stores, rng)
            in_store, store_failed = 0, False
        fewest = min(killed[p] for p in settings.phases)
        phase = rng.choice([p for p in settings.phases if killed[p] == fewest])
        delay = rng.uniform(0.0, OVERSHOOT * lengths[phase][-1])
        outcome = _run_child(children, path, phase, run_id, delay)
        if not outcome.killed and not outcome.error:
            lengths[phase].append(outcome.elapsed)
        damaged = (
            outcome.killed
            and settings.damage_every > 0
            and (sum(killed.values()) + 1) % settings.damage_every == 0
        )
        if damaged:
            _tear(path)
        before = root / "before-open"  # what the kill left, kept if a check fails
        shutil.rmtree(before, ignore_errors=True)
        shutil.copytree(path, before)
        shutil.copy(path.parent / f"{path.name}.acked", root / "before-open.acked")
        started = time.perf_counter()
        failures, moved, behind = check_store(
            path, path.parent / f"{path.name}.acked", rng
        )
        if outcome.error:
            failures = {"child": outcome.error, **failures}
        kills.append(
            Kill(
                run_id, phase, delay, outcome.killed, outcome.step,
                outcome.in_chroma_write, damaged, moved, behind, failures,
                time.perf_counter() - started,
            )
        )  # fmt: skip
        if outcome.killed:
            killed[phase] += 1
            in_store += 1
        log(
            f"{sum(killed.values()):4d} {phase:8s} "
            f"{'killed' if outcome.killed else 'not killed':10s} at {delay:5.2f}s "
            f"in {outcome.step}{' (chroma write)' if outcome.in_chroma_write else ''}"
            f"{' + torn' if damaged else ''}{', moved aside' if moved else ''}"
            + (f" FAILED {failures}" if failures else "")
        )
        if failures:
            before.rename(root / f"run-{run_id}-before-open")
            (root / "before-open.acked").rename(
                root / f"run-{run_id}-before-open.acked"
            )
            log(f"     the store as the kill left it: {root}/run-{run_id}-before-open")
        store_failed = store_failed or bool(failures)
        if "opens" in failures:  # nothing more can be learnt from this store
            in_store = settings.per_store
        run_id += 1
    return kills, lengths


# -- the report -----------------------------------------------------------------


def summarise(kills: Sequence[Kill]) -> dict[str, Any]:
    """Kills per phase, where they landed, how the store came back; failures
    per check."""
    landed = [k for k in kills if k.killed]
    by_phase: dict[str, dict[str, Any]] = {}
    for phase in sorted({k.phase for k in kills}, key=child.PHASES.index):
        mine = [k for k in landed if k.phase == phase]
        by_phase[phase] = {
            "kills": len(mine),
            "steps": dict(Counter(k.step for k in mine)),
            "in_chroma_write": sum(k.in_chroma_write for k in mine),
            "damaged": sum(k.damaged for k in mine),
            "moved_aside": sum(k.moved_aside for k in mine),
            "behind_at_open": sum(bool(k.items_behind_at_open) for k in mine),
            "finished_first": sum(k.step == "done" for k in kills if k.phase == phase),
            "failed": sum(bool(k.failures) for k in kills if k.phase == phase),
        }
    return {
        "kills": len(landed),
        "checked": len(kills),
        "by_phase": by_phase,
        "failures": {
            check: sum(check in k.failures for k in kills) for check in CHECKS
        },
        "moved_aside_undamaged": sum(k.moved_aside and not k.damaged for k in kills),
        "check_s_median": statistics.median(k.check_s for k in kills),
    }


COLUMNS = {  # summary figure -> column title
    "kills": "kills",
    "in_chroma_write": "in a Chroma write",
    "behind_at_open": "index behind at open",
    "damaged": "+ torn",
    "moved_aside": "moved aside",
    "finished_first": "finished first",
    "failed": "children that failed a check",
}


def render(
    summary: Mapping[str, Any],
    kills: Sequence[Kill],
    lengths: Mapping[str, Sequence[float]],
    settings: Settings,
    machine: Mapping[str, str],
    command: str,
    seconds: float,
) -> str:
    """The markdown report."""
    phases = summary["by_phase"]
    rows = [
        [
            phase,
            f"{statistics.median(lengths[phase]):.2f} / {max(lengths[phase]):.2f}",
            ", ".join(f"{step} {n}" for step, n in sorted(figures["steps"].items())),
            *(figures[column] for column in COLUMNS),
        ]
        for phase, figures in phases.items()
    ]
    rows.append(["all", "", "", *(sum(f[c] for f in phases.values()) for c in COLUMNS)])
    failed = [k for k in kills if k.failures]
    lines = [
        *header("Crash loop", command, machine),
        f"{summary['kills']} SIGKILLs landed inside the work ({summary['checked']} "
        f"children checked, a fresh store every {settings.per_store} kills), in "
        f"{seconds / 60:.1f} min; the check after a kill took "
        f"{summary['check_s_median']:.2f} s (median).",
        "",
        *markdown_table(
            ["phase", "length (s)", "killed in", *COLUMNS.values()], [*rows]
        ),
        "",
        "Length: the phase run to the end, median / max; each kill is drawn "
        f"uniformly over {OVERSHOOT} x its last length. Killed in: the child's "
        "step (`reopen`: the catch-up's indexed open; `close`: waiting for the "
        "vectors still following the log). Index behind at open: `stats()` "
        "showed the item index behind right after the reopen (visibly behind, "
        f"caught up by the search). + torn: every {settings.damage_every}th "
        "kill, Chroma's database was also cut to half its size before the "
        "reopen. Moved aside: the reopen moved the vector index aside with a "
        "warning and rebuilt it from the log "
        f"({summary['moved_aside_undamaged']} times without a torn file).",
        "",
        *markdown_table(
            ["check", "failures"],
            [[check, count] for check, count in summary["failures"].items()],
        ),
        "",
    ]
    if failed:
        lines += ["Failures:", ""]
        lines += [
            f"- run {k.run} ({k.phase}, {'killed' if k.killed else 'not killed'} in "
            f"{k.step}{', Chroma write' if k.in_chroma_write else ''}"
            f"{', torn' if k.damaged else ''}): "
            + "; ".join(f"{check}: {what}" for check, what in k.failures.items())
            for k in failed[:20]
        ]
        lines.append("")
    return "\n".join(lines)


def parse_args(argv: Sequence[str] | None) -> tuple[Settings, argparse.Namespace]:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--quick", action="store_true", help="20 kills (~1 min)")
    parser.add_argument("--kills", type=int, help="kills that must land in the work")
    parser.add_argument("--per-store", type=int, help="kills before a fresh store")
    parser.add_argument(
        "--damage-every", type=int, help="tear Chroma's database every N kills"
    )
    parser.add_argument(
        "--phases", nargs="+", choices=child.PHASES, help="only these phases"
    )
    parser.add_argument("--seed", type=int, help="random seed")
    parser.add_argument("--dir", type=Path, help="parent of the temporary directory")
    parser.add_argument("--keep", action="store_true", help="keep the stores")
    parser.add_argument("--out", type=Path, help="also write the markdown here")
    parser.add_argument("--json", type=Path, help="also write the results as JSON here")
    args = parser.parse_args(argv)
    settings = QUICK if args.quick else FULL
    overrides = {
        "kills": args.kills,
        "per_store": args.per_store,
        "damage_every": args.damage_every,
        "phases": tuple(dict.fromkeys(args.phases)) if args.phases else None,
        "seed": args.seed,
    }
    settings = Settings(**(asdict(settings) | {
        k: v for k, v in overrides.items() if v is not None
    }))  # fmt: skip
    if settings.kills < 1 or settings.per_store < 1 or settings.damage_every < 0:
        parser.error("--kills and --per-store must be >= 1, --damage-every >= 0")
    return settings, args


def main(argv: Sequence[str] | None = None) -> int:
    """Run the loop; print the markdown report to stdout (progress to stderr).

    Exits 1 if any check failed after any kill.
    """
    settings, args = parse_args(argv)
    command = shlex.join(sys.orig_argv if argv is None else ["crash_loop.py", *argv])
    os.environ.setdefault("CHRONOMEM_OFFLINE", "1")
    logging.basicConfig(format="%(levelname)s %(name)s: %(message)s")
    seen: set[str] = set()

    def once(record: logging.LogRecord) -> bool:
        """Each warning once: the store is reopened hundreds of times."""
        first = record.getMessage()[:60]
        return first not in seen and not seen.add(first)  # type: ignore[func-returns-value]

    logging.getLogger().handlers[0].addFilter(once)

    log = progress

    root = Path(tempfile.mkdtemp(prefix="chronomem-crash-", dir=args.dir))
    machine = machine_info(root)
    log(f"crashing in {root}")
    started = time.perf_counter()
    kills, lengths = run(settings, root, log)
    seconds = time.perf_counter() - started
    machine["load average at end"] = load_average()
    failed = any(k.failures for k in kills)
    if failed or args.keep:
        log(f"stores kept in {root}")
    else:
        shutil.rmtree(root)
    summary = summarise(kills)
    markdown = render(summary, kills, lengths, settings, machine, command, seconds)
    print(markdown)
    if args.out:
        write_report(args.out, markdown)
    if args.json:
        write_report(
            args.json,
            json.dumps(
                {
                    "command": command,
                    "machine": machine,
                    "settings": asdict(settings),
                    "seconds": seconds,
                    "lengths_s": lengths,
                    "summary": summary,
                    "kills": [asdict(k) for k in kills],
                },
                indent=2,
            ),
        )
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main())
