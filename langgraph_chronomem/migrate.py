"""Copy a store to another database, history and checkpoints included, and check
the copy: what `chronomem migrate SRC DST` runs.

    >>> import tempfile
    >>> from langgraph_chronomem import ChronoStore
    >>> src, dst = tempfile.mkdtemp(), tempfile.mkdtemp()
    >>> with ChronoStore.from_path(src, scope_depth=2) as store:
    ...     store.put(("memories", "alice"), "city", {"city": "Boston"})
    ...     store.put(("memories", "alice"), "city", {"city": "Paris"})
    >>> report = copy_store(src, dst)
    >>> report.commits, report.items, report.differences
    (2, 2, ())
    >>> with ChronoStore.from_path(dst) as copy:
    ...     [(c.version, c.seq, c.op) for c in copy.log(("memories", "alice"))]
    [(2, 2, 'put'), (1, 1, 'put')]

The log is copied table by table, in batches of commits in `seq` order, each batch
one transaction at the destination: every commit keeps its `seq`, version,
parent, time, author, reason, op and labels, every item row its id, so the
checkpoints' memory stamps (kept beside each checkpoint) and change ids stay
valid; every tag is copied as it is. The destination's own id counters are
moved past the source's. What is derived from the log is not copied but rebuilt:
the full-text change index (FTS5 on SQLite, the term tables on PostgreSQL) batch
by batch, and the vectors when a store with a Chroma opens the copy (they heal
from the log).

A copy killed midway resumes where it stopped when run again: the destination's
last commit says how far it got. A destination that holds anything else is
refused (`DestinationNotEmptyError`) before anything is written. The checkpoints
go through LangGraph's `BaseCheckpointSaver` API (`copy_checkpoints`), so any
saver can receive them. The copy ends with `verify_copy`: `log`, `history` and
`as_of` compared on both sides.

Stop the application's writers while the copy runs: a write to the source meanwhile
is caught by the check (or copied, if it lands before the last batch), never
silently lost, but the copy is then not of one moment.
"""

from __future__ import annotations

import random
import time
from collections.abc import Callable, Iterator
from contextlib import ExitStack
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from langgraph.checkpoint.base import (
    WRITES_IDX_MAP,
    BaseCheckpointSaver,
    CheckpointTuple,
)

from langgraph_chronomem.checkpoint.base import ChronoCheckpointer
from langgraph_chronomem.checkpoint.postgres import dialect_for
from langgraph_chronomem.engine.base import LogTransaction
from langgraph_chronomem.engine.copy import (
    COUNTS,
    check_destination,
    copy_log,
    mark,
    reconcile,
)
from langgraph_chronomem.engine.types import Namespace
from langgraph_chronomem.errors import ConfigError, DestinationNotEmptyError
from langgraph_chronomem.store import ChronoStore
from langgraph_chronomem.store.opening import is_conn_string

__all__ = [
    "DestinationNotEmptyError",
    "Difference",
    "MigrationReport",
    "Progress",
    "copy_checkpoints",
    "copy_store",
    "verify_copy",
]

Progress = Callable[[str, int, "int | None"], None]
"""Told `(phase, done, total)` as a copy advances: phase `commits`,
`checkpoints` or `verify`; `total` is `None` where it is not known up front."""

_CHECKPOINT_STEPS = (
    "SELECT count(*) FROM chronomem_migrations WHERE name LIKE 'checkpoint%'"
)
_AS_OF_SAMPLES = 8
_EVERYTHING = 2**62  # a `search` limit no scope reaches
_MAX_DIFFERENCES = 50


@dataclass(frozen=True)
class Difference:
    """One way the copy does not answer like the source.

    Attributes:
        check: What was compared: `stats`, `log`, `tags`, `history`,
            `as_of` or `checkpoints`.
        where: The scope, item, version or checkpoint compared.
        detail: What differs.
    """

    check: str
    where: str
    detail: str


@dataclass(frozen=True)
class MigrationReport:
    """What `copy_store` did.

    Attributes:
        commits: Commits at the destination once done.
        items: Item versions (log rows) at the destination.
        checkpoints: Checkpoints the source holds (all at the destination).
        copied_commits: Commits this run copied (fewer than `commits` when it
            resumed an interrupted copy).
        copied_checkpoints: Checkpoints this run wrote.
        resumed: Whether this run continued an interrupted copy.
        seconds: How long the copy and the check took.
        verified: Whether `verify_copy` ran.
        differences: What the check found; empty when the copy answers like
            the source.
    """

    commits: int
    items: int
    checkpoints: int
    copied_commits: int
    copied_checkpoints: int
    resumed: bool
    seconds: float
    verified: bool
    differences: tuple[Difference, ...] = field(default=())


Location = str | Path | ChronoStore


def copy_store(
    source: Location,
    dest: Location,
    *,
    batch_size: int = 1000,
    checkpoints: bool = True,
    verify: bool = True,
    progress: Progress | None = None,
) -> MigrationReport:
    """Copy the store at `source` to `dest`, with its whole history and its
    checkpoints, then check the copy (see the module docs).

    `source` and `dest` are store directories, `postgresql://` URLs, or open
    `ChronoStore`s (left open). The destination is created with the source's
    `scope_depth`; a SQLite store can go to PostgreSQL, PostgreSQL to SQLite, or
    SQLite to SQLite. Running it again after an interruption continues the copy;
    after a finished copy it copies nothing and checks again.

        >>> import tempfile
        >>> src = tempfile.mkdtemp()
        >>> with ChronoStore.from_path(src) as store:
        ...     store.put(("notes",), "a", {"t": "hi"})
        >>> dst = tempfile.mkdtemp()
        >>> copy_store(src, dst).copied_commits
        1
        >>> copy_store(src, dst).copied_commits  # done already: only checks
        0

    Args:
        source: The store to copy; it is opened read-only.
        dest: Where to copy it: a new (or empty) store.
        batch_size: Commits per destination transaction.
        checkpoints: Copy the checkpoints too (when the source has any).
        verify: Compare `log`, `history` and `as_of` (and the checkpoints)
            on both sides afterwards; the report lists what differs.
        progress: Told how far the copy has got (see `Progress`).

    Returns:
        The counts, and the differences the check found.

    Raises:
        DestinationNotEmptyError: If `dest` holds other data (nothing is written).
        ConfigError: If `source` and `dest` are the same store, `dest` was
            created with another `scope_depth`, or `batch_size` is not an int
            >= 1.
        StorageError: If either database cannot be opened or used.
    """
    if (
        isinstance(batch_size, bool)
        or not isinstance(batch_size, int)
        or batch_size < 1
    ):
        raise ConfigError(f"batch_size must be an int >= 1, got {batch_size!r}")
    started = time.perf_counter()
    tell = progress or _silent
    with ExitStack() as stack:
        src = _open(stack, source, read_only=True)
        dst = _open(stack, dest, scope_depth=src.scope_depth, same_as=source)
        src_engine, dst_engine = src._engine, dst._engine
        resume, interrupted = check_destination(
            src_engine, dst_engine, checkpoints=_holds_checkpoints(dst)
        )
        savers = _savers(src, dst) if checkpoints else None
        copied = copy_log(
            src_engine,
            dst_engine,
            after=resume,
            batch_size=batch_size,
            progress=lambda done, total: tell("commits", done, total),
        )
        if reconcile(src_engine, dst_engine):
            dst_engine.scrub()  # the earlier run's copies of what was redacted
        written = copy_checkpoints(*savers, progress=tell) if savers else 0
        mark(dst_engine, "done", src_engine)
        differences = (
            _verify(src, dst, savers, samples=_AS_OF_SAMPLES, progress=tell)
            if verify
            else ()
        )
        with dst_engine.transaction(write=False) as tx:
            commits, items = tx.cur.execute(COUNTS).fetchone()
        held = sum(1 for _ in savers[0].list(None)) if savers else 0
    return MigrationReport(
        commits=int(commits),
        items=int(items),
        checkpoints=held,
        copied_commits=copied,
        copied_checkpoints=written,
        resumed=interrupted,
        seconds=round(time.perf_counter() - started, 3),
        verified=verify,
        differences=differences,
    )


def verify_copy(
    source: Location,
    dest: Location,
    *,
    checkpoints: bool = True,
    samples: int = _AS_OF_SAMPLES,
    progress: Progress | None = None,
) -> tuple[Difference, ...]:
    """Whether `dest` answers like `source`; both are only read.

    Compares the scopes and their HEADs, every scope's whole `log` (each
    commit with its changes, seq, time, author, op and labels), the `history`
    of every item, the `as_of` state at HEAD, v1 and `samples` versions drawn
    per scope, and each checkpoint (with its memory stamp and pending writes).

        >>> import tempfile
        >>> src = tempfile.mkdtemp()
        >>> with ChronoStore.from_path(src) as store:
        ...     store.put(("notes",), "a", {"t": "hi"})
        >>> dst = tempfile.mkdtemp()
        >>> ChronoStore.from_path(dst).close()  # an empty store
        >>> [d.check for d in verify_copy(src, dst)]
        ['stats', 'stats', 'log', 'history', 'as_of']

    Args:
        source: The store copied (a directory, a URL or an open `ChronoStore`).
        dest: The copy.
        checkpoints: Compare the checkpoints too.
        samples: Versions per scope whose `as_of` state is compared, besides
            HEAD and v1.
        progress: Told how many scopes have been compared.

    Returns:
        The differences, at most 50; empty when the copy answers like the source.

    Raises:
        ConfigError: If both are the same store.
        StorageError: If either cannot be opened (`dest` must exist).
    """
    with ExitStack() as stack:
        src = _open(stack, source, read_only=True)
        dst = _open(stack, dest, read_only=True, same_as=source)
        savers = None
        if checkpoints and _has_checkpoints(src):
            if not _has_checkpoints(dst):
                return (Difference("checkpoints", "the copy", "has none"),)
            savers = _savers(src, dst)
        return _verify(src, dst, savers, samples=samples, progress=progress or _silent)


def copy_checkpoints(
    source: BaseCheckpointSaver[Any],
    dest: BaseCheckpointSaver[Any],
    *,
    progress: Progress | None = None,
) -> int:
    """Copy every checkpoint and its pending writes from one saver to another,
    through LangGraph's saver API: ids, parents and metadata as they are, and
    between two `ChronoCheckpointer`s the memory stamp kept beside each.
    Returns how many were written; one the destination already holds
    unchanged is skipped, so a second run after an interruption writes only
    the rest.

    Any `BaseCheckpointSaver` works on either side (LangGraph's
    `PostgresSaver` too). A `ChronoCheckpointer` destination stamps a
    checkpoint it is given with its own log, so the source's stamp is put
    back; give it one with `on_time_travel="keep"`, or a checkpoint put after a
    newer one would rewind the destination's memory.

    A task's pending writes keep their order: LangGraph's savers sort them by
    task path, which the API does not return, so each task is given its rank
    in the source's order as its path.

        >>> import tempfile
        >>> from langgraph.checkpoint.base import empty_checkpoint
        >>> from langgraph.checkpoint.memory import InMemorySaver
        >>> from langgraph_chronomem import open_chronomem
        >>> store, checkpointer = open_chronomem(tempfile.mkdtemp(), scope_depth=2)
        >>> config = {"configurable": {"thread_id": "t1"}}
        >>> _ = checkpointer.put(config, empty_checkpoint(), {"source": "input"}, {})
        >>> saver = InMemorySaver()
        >>> copy_checkpoints(checkpointer, saver)
        1
        >>> next(saver.list(None)).metadata
        {'source': 'input'}
        >>> store.close()

    Args:
        source: The checkpointer to read.
        dest: The checkpointer to write.
        progress: Told how many checkpoints have been read.

    Raises:
        ConfigError: For a `ChronoCheckpointer` destination that rewinds memory.
    """
    if isinstance(dest, ChronoCheckpointer) and dest.on_time_travel != "keep":
        raise ConfigError(
            "copying checkpoints into a ChronoCheckpointer that rewinds memory "
            "would roll its memory back at every fork: open it with "
            "on_time_travel='keep' for the copy"
        )
    tell = progress or _silent
    written = 0
    stamps = isinstance(dest, ChronoCheckpointer)  # only it keeps memory stamps
    for seen, found in enumerate(source.list(None), start=1):
        stamp = _stamp(source, found.config) if stamps else None
        copied = dest.get_tuple(found.config)
        if _differs(found, copied) is not None or (
            stamp is not None and _stamp(dest, found.config) != stamp
        ):
            _put(dest, found, stamp)
            written += 1
        tell("checkpoints", seen, None)
    return written


# -- opening ---------------------------------------------------------------------


def _silent(phase: str, done: int, total: int | None) -> None:
    """A `Progress` that shows nothing."""


def _open(
    stack: ExitStack,
    location: Location,
    *,
    scope_depth: int | None = None,
    read_only: bool = False,
    same_as: Location | None = None,
) -> ChronoStore:
    """The store at `location` (closed with `stack`), or the one given."""
    if same_as is not None and _same(location, same_as):
        raise ConfigError(
            f"the source and the destination are the same store ({location}): "
            "copy to a new directory or another database"
        )
    if isinstance(location, ChronoStore):
        if scope_depth is not None and location.scope_depth != scope_depth:
            raise ConfigError(
                f"the destination has scope_depth={location.scope_depth}, the "
                f"source {scope_depth}: a copy keeps the source's timelines"
            )
        return location
    store = ChronoStore.from_path(
        location, scope_depth=scope_depth, read_only=read_only
    )
    stack.callback(store.close)
    return store


def _same(a: Location, b: Location) -> bool:
    if isinstance(a, ChronoStore) or isinstance(b, ChronoStore):
        return a is b
    if is_conn_string(a) or is_conn_string(b):
        return str(a) == str(b)
    return Path(a).resolve() == Path(b).resolve()


def _has_checkpoints(store: ChronoStore) -> bool:
    """Whether the store's database has the checkpointer's tables."""
    with store._engine.transaction(write=False) as tx:
        return bool(tx.cur.execute(_CHECKPOINT_STEPS).fetchone()[0])


def _holds_checkpoints(store: ChronoStore) -> bool:
    """Whether the store's database holds any checkpoint."""
    if not _has_checkpoints(store):
        return False
    with store._engine.transaction(write=False) as tx:
        found = tx.cur.execute(dialect_for(store._engine).ANY_CHECKPOINT)
        return bool(found.fetchone()[0])


def _savers(
    src: ChronoStore, dst: ChronoStore
) -> tuple[ChronoCheckpointer, ChronoCheckpointer] | None:
    """Checkpointers on both stores, if the source has checkpoints; neither
    rewinds memory. Opened before anything is copied: a destination that
    cannot hold them fails the copy up front."""
    if not _has_checkpoints(src):
        return None
    dest = ChronoCheckpointer(dst, on_time_travel="keep")
    return ChronoCheckpointer(src, on_time_travel="keep"), dest


# -- the checkpoints -------------------------------------------------------------


def _differs(a: CheckpointTuple, b: CheckpointTuple | None) -> str | None:
    """What differs between a checkpoint and its copy, if anything."""
    if b is None:
        return "missing"
    for name in ("checkpoint", "metadata", "parent_config", "pending_writes"):
        if getattr(a, name) != getattr(b, name):
            return f"its {name} differs"
    return None


def _stamp(saver: BaseCheckpointSaver[Any], config: Any) -> int | None:
    """A checkpoint's memory stamp, where the saver keeps one."""
    return saver._stamp(config) if isinstance(saver, ChronoCheckpointer) else None


def _put(
    dest: BaseCheckpointSaver[Any], found: CheckpointTuple, stamp: int | None
) -> None:
    """Write one checkpoint and its pending writes to `dest` as the source holds
    them (writes first: a checkpoint present means its writes are too), and
    its memory `stamp`, if any, to a `ChronoCheckpointer`."""
    own = found.config
    tasks: dict[str, list[tuple[str, Any]]] = {}
    for task_id, channel, value in found.pending_writes or ():
        tasks.setdefault(task_id, []).append((channel, value))
    for rank, (task_id, writes) in enumerate(tasks.items()):
        path = f"{rank:06d}"  # keeps the source's order (see copy_checkpoints)
        special = [w for w in writes if w[0] in WRITES_IDX_MAP]
        regular = [w for w in writes if w[0] not in WRITES_IDX_MAP]
        for part in (special, regular):
            if part:
                dest.put_writes(own, part, task_id, path)
    configurable = own["configurable"]
    parent = (found.parent_config or {}).get("configurable", {}).get("checkpoint_id")
    config: Any = {
        "configurable": {
            "thread_id": configurable["thread_id"],
            "checkpoint_ns": configurable.get("checkpoint_ns", ""),
            **({"checkpoint_id": parent} if parent else {}),
        }
    }
    checkpoint = found.checkpoint
    dest.put(config, checkpoint, found.metadata, checkpoint["channel_versions"])
    if isinstance(dest, ChronoCheckpointer) and stamp is not None:
        dest._restamp(own, stamp)


# -- the check -------------------------------------------------------------------


def _verify(
    src: ChronoStore,
    dst: ChronoStore,
    savers: tuple[ChronoCheckpointer, ChronoCheckpointer] | None,
    *,
    samples: int,
    progress: Progress,
) -> tuple[Difference, ...]:
    found: list[Difference] = []
    with (
        src._engine.transaction(write=False) as theirs,
        dst._engine.transaction(write=False) as ours,
    ):
        mine, other = theirs.stats(), ours.stats()
        if mine.last_seq != other.last_seq:
            found.append(
                Difference(
                    "stats",
                    "the store",
                    f"last seq {mine.last_seq} in the source, {other.last_seq} "
                    "in the copy",
                )
            )
        heads = {s.scope: s for s in mine.scopes}
        copied = {s.scope: s for s in other.scopes}
        for scope in sorted(heads.keys() | copied.keys()):
            if heads.get(scope) != copied.get(scope):
                found.append(
                    Difference(
                        "stats",
                        _scope(scope),
                        f"{heads.get(scope)} in the source, {copied.get(scope)} "
                        "in the copy",
                    )
                )
        for done, scope in enumerate(sorted(heads), start=1):
            found += _compare_scope(theirs, ours, scope, heads[scope].head, samples)
            progress("verify", done, len(heads))
            if len(found) >= _MAX_DIFFERENCES:
                break
    if savers is not None and len(found) < _MAX_DIFFERENCES:
        found += _compare_checkpoints(*savers)
    return tuple(found[:_MAX_DIFFERENCES])


def _scope(scope: Namespace) -> str:
    return "/".join(scope) or "the store"


def _compare_scope(
    theirs: LogTransaction,
    ours: LogTransaction,
    scope: Namespace,
    head: int,
    samples: int,
) -> Iterator[Difference]:
    """The differences in one scope's log, item histories and `as_of` states."""
    where = _scope(scope)
    if theirs.tags(scope) != ours.tags(scope):
        yield Difference("tags", where, "its tags differ")
    log = theirs.log(scope)
    copy = {c.version: c for c in ours.log(scope)}
    for commit in log:
        if copy.get(commit.version) != commit:
            got = copy.get(commit.version)
            yield Difference(
                "log",
                f"{where} v{commit.version}",
                "missing" if got is None else _first_field(commit, got),
            )
    items = dict.fromkeys(
        (change.namespace, change.key) for commit in log for change in commit.changes
    )
    for namespace, key in items:
        if theirs.history(namespace, key) != ours.history(namespace, key):
            yield Difference(
                "history", "/".join((*namespace, key)), "its versions differ"
            )
    draw = random.Random(where)  # the same versions on every run
    versions = {head, 1, *(draw.randint(1, head) for _ in range(samples))}
    for version in sorted(v for v in versions if v >= 1):
        state = theirs.search(scope, scope=scope, version=version, limit=_EVERYTHING)
        if state != ours.search(scope, scope=scope, version=version, limit=_EVERYTHING):
            yield Difference("as_of", f"{where} v{version}", "the items differ")


def _first_field(a: Any, b: Any) -> str:
    """The first field two records differ in, both values shown."""
    for name in a.__dataclass_fields__:
        if getattr(a, name) != getattr(b, name):
            theirs, ours = getattr(a, name), getattr(b, name)
            return f"{name}: {theirs!r} in the source, {ours!r} in the copy"
    return "differs"


def _compare_checkpoints(
    source: BaseCheckpointSaver[Any], dest: BaseCheckpointSaver[Any]
) -> list[Difference]:
    found = []
    count = 0
    for checkpoint in source.list(None):
        count += 1
        problem = _differs(checkpoint, dest.get_tuple(checkpoint.config))
        if problem is not None:
            configurable = checkpoint.config["configurable"]
            found.append(
                Difference(
                    "checkpoints",
                    f"thread {configurable['thread_id']} checkpoint "
                    f"{configurable['checkpoint_id']}",
                    problem,
                )
            )
    held = sum(1 for _ in dest.list(None))
    if held != count:
        found.append(
            Difference(
                "checkpoints",
                "the store",
                f"{count} in the source, {held} in the copy",
            )
        )
    return found
