"""`ChronoCheckpointer`: LangGraph checkpoints kept in step with memory.

Checkpoints live in the store's own database, next to the versioned memory log
(its SQLite file, or its PostgreSQL database and pool), and every checkpoint
records where memory stood (the store's `seq`, kept beside the checkpoint, so
its metadata reads back as the graph wrote it). When a thread
travels back in time (a replay or a fork from an earlier checkpoint), what the
thread's own runs changed in its memory scope since that checkpoint is undone,
before any replayed node reads it, so the replay sees what the original run saw,
while what the user's other threads wrote meanwhile stays:

    >>> import tempfile
    >>> from langgraph_chronomem import open_chronomem
    >>> from typing_extensions import TypedDict
    >>> from langgraph.graph import START, StateGraph
    >>> class State(TypedDict):
    ...     seen: list
    >>> def recall(state, config, *, store):
    ...     me = ("memories", config["configurable"]["user_id"])
    ...     seen = sorted(item.key for item in store.search(me))
    ...     store.put(me, f"fact{len(seen) + 1}", {"n": len(seen) + 1})
    ...     return {"seen": seen}
    >>> store, checkpointer = open_chronomem(tempfile.mkdtemp(), scope_depth=2)
    >>> graph = (
    ...     StateGraph(State).add_node(recall).add_edge(START, "recall")
    ...     .compile(checkpointer=checkpointer, store=store)
    ... )
    >>> config = {"configurable": {"thread_id": "t1", "user_id": "alice"}}
    >>> graph.invoke({"seen": []}, config)["seen"]
    []
    >>> graph.invoke({"seen": []}, config)["seen"]
    ['fact1']
    >>> history = graph.get_state_history(config)
    >>> turn2 = next(s for s in history if s.next == ("recall",))
    >>> past = turn2.config["configurable"]
    >>> replay = {"configurable": {**config["configurable"], **past}}
    >>> graph.invoke(None, replay)["seen"]  # sees memory as turn 2 did
    ['fact1']
    >>> [(c.op, c.author) for c in store.log(("memories", "alice"))]
    [('put', None), ('revert', 'time-travel'), ('put', None), ('put', None)]
    >>> checkpointer.memory_version(turn2.config)  # alice's memory at that checkpoint
    1
    >>> store.close()

The revert is an ordinary commit, so rolling back to the version before it
undoes it. `on_time_travel="rewind"` rolls the whole scope back instead (other
threads' writes since included), `"keep"` leaves memory alone.
"""

from __future__ import annotations

import json
import logging
import random
import threading
from collections.abc import (
    AsyncIterator,
    Iterator,
    Sequence,
)
from typing import (
    Any,
    cast,
)

from langchain_core.runnables import RunnableConfig
from langgraph.checkpoint.base import (
    WRITES_IDX_MAP,
    BaseCheckpointSaver,
    ChannelVersions,
    Checkpoint,
    CheckpointMetadata,
    CheckpointTuple,
    DeltaChannelHistory,
    PendingWrite,
    get_checkpoint_id,
    get_checkpoint_metadata,
)
from langgraph.checkpoint.serde.base import SerializerProtocol

from langgraph_chronomem._twins import in_thread, off_loop
from langgraph_chronomem.checkpoint import sql as sql
from langgraph_chronomem.checkpoint.memory import (
    RUN_KEY,
    TASK_KEY,
    TIME_TRAVEL_MODES,
    MemoryTravel,
    TimeTravel,
    address,
    check_template,
    checkpoint_config,
)
from langgraph_chronomem.checkpoint.postgres import dialect_for
from langgraph_chronomem.engine.protocol import LogEngine
from langgraph_chronomem.errors import (
    ConfigError,
)
from langgraph_chronomem.namespace import NamespaceTemplate
from langgraph_chronomem.store.base import ChronoStore

__all__ = ["ChronoCheckpointer", "TimeTravel"]

logger = logging.getLogger(__name__)

_PAGE = 100  # checkpoints per read transaction in `list`


class ChronoCheckpointer(MemoryTravel, BaseCheckpointSaver[str]):
    """A LangGraph checkpointer that shares the `ChronoStore`'s database and lock.

    Args:
        store: The store whose database holds the checkpoints.
        memory_namespace: The thread's memory, as a namespace template filled
            from the run config's `configurable` (else the graph's context, else
            the checkpoint's metadata), like LangMem's `NamespaceTemplate`. Its
            scope is what time travel rewinds.
        on_time_travel: What a replay or fork from a past checkpoint does to
            the thread's memory scope. `"revert"` (the default) undoes what
            this thread's own runs changed there since the checkpoint, in one
            commit: other threads' writes (the user's other conversations)
            stay. `"rewind"` rolls the whole scope back to its version at the
            checkpoint, other threads' writes since included. Either way the
            pending proposals (writes awaiting review) made since by what is
            undone are rejected. `"keep"` leaves memory alone.
        serde: How checkpoints and writes are encoded (LangGraph's
            `JsonPlusSerializer` by default).

    Raises:
        ConfigError: For something other than a `ChronoStore`, an unknown
            `on_time_travel`, or a malformed template.
        ScopeError: Unless `"keep"`, for a template shorter than the store's
            scope; with `"rewind"`, when a template placeholder lies outside
            the store's scope (a rewind would reach other users' memory).
    """

    def __init__(
        self,
        store: ChronoStore,
        *,
        memory_namespace: Sequence[str] | NamespaceTemplate = ("memories", "{user_id}"),
        on_time_travel: TimeTravel = "revert",
        serde: SerializerProtocol | None = None,
    ) -> None:
        super().__init__(serde=serde)
        if not isinstance(store, ChronoStore):
            raise ConfigError(f"ChronoCheckpointer needs a ChronoStore, got {store!r}")
        if on_time_travel not in TIME_TRAVEL_MODES:
            raise ConfigError(
                f"on_time_travel must be one of {', '.join(TIME_TRAVEL_MODES)}, "
                f"not {on_time_travel!r}"
            )
        template = (
            memory_namespace
            if isinstance(memory_namespace, NamespaceTemplate)
            else NamespaceTemplate(memory_namespace)
        )
        if on_time_travel != "keep":
            check_template(
                template, store.scope_depth, rewind=on_time_travel == "rewind"
            )
        self.store = store
        self.memory_namespace = template
        self.on_time_travel = on_time_travel
        self._engine: LogEngine = store._engine
        self._sql = dialect_for(self._engine)
        # thread_id -> the past checkpoint a run opened and `get_tuple` rewound
        # for: the run's first put from there must not rewind a second time.
        self._rewound: dict[str, str] = {}
        self._rewound_lock = threading.Lock()
        self._engine.migrate(self._sql.MIGRATIONS)

    # -- reading ---------------------------------------------------------------

    def _tuple(
        self,
        row: sql.Row,
        writes: Sequence[Sequence[Any]],
        metadata: dict[str, Any] | None = None,
    ) -> CheckpointTuple:
        """The tuple of a checkpoint row; `metadata` when already decoded."""
        thread_id, ns, checkpoint_id, parent_id, kind, blob, text = row[:7]
        return CheckpointTuple(
            config=checkpoint_config(thread_id, ns, checkpoint_id),
            checkpoint=self.serde.loads_typed((kind, blob)),
            metadata=cast(
                CheckpointMetadata, json.loads(text) if metadata is None else metadata
            ),
            parent_config=checkpoint_config(thread_id, ns, parent_id)
            if parent_id
            else None,
            pending_writes=[
                (task_id, channel, self.serde.loads_typed((write_kind, value)))
                for task_id, channel, write_kind, value in writes
            ],
        )

    def setup(self) -> None:
        """Nothing to do: the checkpoint tables were made with the store.

        Here so that code written for `SqliteSaver` and `PostgresSaver`, which
        call `setup()` once before use, runs unchanged; async code written for
        `AsyncSqliteSaver` or `AsyncPostgresSaver` awaits `asetup()`.
        """

    async def asetup(self) -> None:
        """Nothing to do, awaited (`setup`)."""

    def get_tuple(self, config: RunnableConfig) -> CheckpointTuple | None:
        """The checkpoint `config` names by `checkpoint_id`, else the thread's latest.

        Pending writes come in `writes_sort_key` order. When a graph run opens
        a root checkpoint that is not its thread's latest (a replay or a fork
        from the past), the thread's memory is rewound here, before any node
        of the run starts: LangGraph saves the fork's checkpoint in the
        background, too late to rewind from `put`.
        """
        thread_id, ns, checkpoint_id = address(config)
        configurable = config.get("configurable") or {}
        # Only a run opening a named checkpoint may travel back in time, so only
        # it looks further than the checkpoint; `get_state` and the rest do not.
        opens_run = (
            self._rewinds(ns, checkpoint_id)
            and RUN_KEY in configurable
            and TASK_KEY not in configurable
        )
        metadata = rewind = None
        with self._engine.transaction(write=False) as tx:
            row = self._sql.row(tx.cur, thread_id, ns, checkpoint_id)
            if row is None:
                return None
            writes = self._sql.writes(tx.cur, row)
            travels = opens_run and self._sql.latest_id(tx.cur, thread_id, ns) != row[2]
            if travels:
                metadata = json.loads(row[6])
                rewind = self._rewind_target(tx, config, row, metadata)
        found = self._tuple(row, writes, metadata)
        if travels:
            if rewind is not None:
                self._rewind(thread_id, row[2], rewind)
            with self._rewound_lock:
                self._rewound[thread_id] = row[2]
        return found

    def get_iter(self, config: RunnableConfig) -> Iterator[CheckpointTuple]:
        """`get_tuple`'s checkpoint as an iterator of none or one.

        The sync form of `aget_iter`, which LangGraph's server calls to read a
        thread's state; it finds it overridden, so it uses this one instead of
        its own fallback.
        """
        found = self.get_tuple(config)
        return iter(() if found is None else (found,))

    async def aget_iter(self, config: RunnableConfig) -> AsyncIterator[CheckpointTuple]:
        """Async `get_iter`: awaited, it returns the iterator (as LangGraph's
        server awaits it), its checkpoint already read."""
        found = await self.aget_tuple(config)

        async def one() -> AsyncIterator[CheckpointTuple]:
            if found is not None:
                yield found

        return one()

    def _rewinds(self, ns: str, checkpoint_id: str | None) -> bool:
        """Whether going to `checkpoint_id` may rewind memory: root namespace only."""
        return self.on_time_travel != "keep" and ns == "" and bool(checkpoint_id)

    def list(
        self,
        config: RunnableConfig | None,
        *,
        filter: dict[str, Any] | None = None,
        before: RunnableConfig | None = None,
        limit: int | None = None,
    ) -> Iterator[CheckpointTuple]:
        """Checkpoints matching `config`, `filter` and `before`, newest first.

        `filter` matches top-level metadata keys by equal JSON values. Reads a
        page at a time and holds no lock between items, so the loop body may
        write checkpoints or memory.

        Raises:
            InvalidFilterError: For an unsafe metadata key or a non-JSON value.
        """
        configurable = (config or {}).get("configurable") or {}
        thread_id = configurable.get("thread_id")
        where: dict[str, Any] = {
            "thread_id": None if thread_id is None else str(thread_id),
            "checkpoint_ns": configurable.get("checkpoint_ns"),
            "checkpoint_id": get_checkpoint_id(config) if config else None,
            "filter": filter,
            "before": get_checkpoint_id(before) if before else None,
        }
        self._sql.list_page(**where, after_key=None, limit=1)  # a bad filter fails now
        return self._pages(where, limit)

    def _pages(
        self, where: dict[str, Any], limit: int | None
    ) -> Iterator[CheckpointTuple]:
        after_key: tuple[str, str, str] | None = None
        left = limit
        while left is None or left > 0:
            size = _PAGE if left is None else min(_PAGE, left)
            page = self._sql.list_page(**where, after_key=after_key, limit=size)
            with self._engine.transaction(write=False) as tx:
                rows = tx.cur.execute(*page).fetchall()
                writes = [self._sql.writes(tx.cur, r) for r in rows]
            for row, row_writes in zip(rows, writes, strict=True):
                yield self._tuple(row, row_writes)
            if len(rows) < size:
                return
            after_key = (rows[-1][2], rows[-1][0], rows[-1][1])
            left = None if left is None else left - len(rows)

    def get_delta_channel_history(
        self, *, config: RunnableConfig, channels: Sequence[str]
    ) -> dict[str, DeltaChannelHistory]:
        """Per channel: the writes along the parent chain, oldest first, and the seed.

        The contract of `BaseCheckpointSaver.get_delta_channel_history` (writes
        in `writes_sort_key` order within a checkpoint, the target's own writes
        left out, `seed` omitted when no ancestor stored a value), read in one
        transaction instead of one `get_tuple` per ancestor.
        """
        if not channels:
            return {}
        thread_id, ns, checkpoint_id = address(config)
        chains: dict[str, list[str]] = {}
        seeds: dict[str, Any] = {}
        rows: dict[str, list[tuple[str, str, str, bytes]]] = {}
        with self._engine.transaction(write=False) as tx:
            target = checkpoint_id or self._sql.latest_id(tx.cur, thread_id, ns)
            if target is not None:
                loads = self.serde.loads_typed
                chains, seeds = self._sql.walk(
                    tx.cur, loads, thread_id, ns, target, channels
                )
            for channel, chain in chains.items():
                rows[channel] = self._sql.channel_writes(
                    tx.cur, thread_id, ns, channel, chain
                )
        history: dict[str, DeltaChannelHistory] = {}
        for channel in channels:
            by_checkpoint: dict[str, list[PendingWrite]] = {}
            for cid, task_id, kind, value in rows.get(channel, []):
                write = (task_id, channel, self.serde.loads_typed((kind, value)))
                by_checkpoint.setdefault(cid, []).append(write)
            oldest_first = reversed(chains.get(channel, []))
            entry: DeltaChannelHistory = {
                "writes": [
                    w for cid in oldest_first for w in by_checkpoint.get(cid, [])
                ]
            }
            if channel in seeds:
                entry["seed"] = seeds[channel]
            history[channel] = entry
        return history

    # -- writing ---------------------------------------------------------------

    def put(
        self,
        config: RunnableConfig,
        checkpoint: Checkpoint,
        metadata: CheckpointMetadata,
        new_versions: ChannelVersions,
    ) -> RunnableConfig:
        """Store a checkpoint with all its metadata and its memory position.

        The memory position, kept beside the checkpoint (not in its metadata),
        is the last memory commit before the checkpoint's tasks ran. A root
        checkpoint whose parent is not its thread's latest (`update_state` on
        the past, a fork) first rewinds the thread's memory to the parent's
        version, unless the run did already.

        Raises:
            InvalidValueError: If the metadata is not JSON.
        """
        thread_id, ns, parent_id = address(config)
        meta: dict[str, Any] = dict(get_checkpoint_metadata(config, metadata))
        kind, blob = self.serde.dumps_typed(checkpoint)
        columns = (thread_id, ns, checkpoint["id"], parent_id, kind, blob)
        forks = self._rewinds(ns, parent_id)
        if forks:
            with self._rewound_lock:
                if self._rewound.get(thread_id) == parent_id:  # the run rewound
                    del self._rewound[thread_id]
                    forks = False
        rewind = None
        with self._engine.transaction(write=True) as tx:
            # The graph loop's put: one statement, the whole transaction.
            _, newer = self._sql.put(
                tx.cur, columns, meta, unless_newer=forks, alone=True
            )
        if forks and newer:  # the parent is not the thread's latest: nothing saved
            with self._engine.transaction(write=True) as tx:
                seq, newer = self._sql.put(tx.cur, columns, meta, unless_newer=True)
                if newer:
                    rewind = self._fork_rewind(tx, config, thread_id, parent_id)
                    if rewind is None:
                        self._sql.save(tx.cur, columns, meta, seq)
        if rewind is not None:  # memory first: the checkpoint's stamp follows it
            assert parent_id is not None
            sql.metadata_json(meta)  # bad metadata changes nothing, memory too
            self._rewind(thread_id, parent_id, rewind)
            with self._engine.transaction(write=True) as tx:
                self._sql.put(tx.cur, columns, meta, unless_newer=False)
        return checkpoint_config(thread_id, ns, checkpoint["id"])

    def put_writes(
        self,
        config: RunnableConfig,
        writes: Sequence[tuple[str, Any]],
        task_id: str,
        task_path: str = "",
    ) -> None:
        """Store a task's intermediate writes against a checkpoint."""
        thread_id, ns, checkpoint_id = address(config)
        special = all(channel in WRITES_IDX_MAP for channel, _ in writes)
        rows = [
            (
                *(thread_id, ns, checkpoint_id, task_id, task_path),
                *(WRITES_IDX_MAP.get(channel, idx), channel),
                *self.serde.dumps_typed(value),
            )
            for idx, (channel, value) in enumerate(writes)
        ]
        with self._engine.transaction(write=True) as tx:
            self._sql.put_writes(tx.cur, rows, replace=special)

    def delete_thread(self, thread_id: str) -> None:
        """Delete a thread's checkpoints and writes (its memory stays)."""
        with self._engine.transaction(write=True) as tx:
            self._sql.delete_thread(tx.cur, str(thread_id))

    def delete_for_runs(self, run_ids: Sequence[str]) -> None:
        """Delete the checkpoints and writes of these runs (`metadata["run_id"]`)."""
        with self._engine.transaction(write=True) as tx:
            self._sql.delete_runs(tx.cur, [str(run_id) for run_id in run_ids])

    def copy_thread(self, source_thread_id: str, target_thread_id: str) -> None:
        """Copy a thread's checkpoints and writes, whole parent chains, to another."""
        ids = (str(source_thread_id), str(target_thread_id))
        with self._engine.transaction(write=True) as tx:
            self._sql.copy_thread(tx.cur, *ids)

    def prune(
        self, thread_ids: Sequence[str], *, strategy: str = "keep_latest"
    ) -> None:
        """Drop old checkpoints: `"keep_latest"` per namespace, or `"delete"` them all.

        `"keep_latest"` also keeps the ancestors (and their writes) that the
        latest checkpoint's delta channels are rebuilt from, so pruning never
        empties a `DeltaChannel`.

        Raises:
            ValueError: For another strategy.
        """
        if strategy not in ("keep_latest", "delete"):
            raise ValueError(
                f"strategy must be 'keep_latest' or 'delete', not {strategy!r}"
            )
        with self._engine.transaction(write=True) as tx:
            for thread_id in map(str, thread_ids):
                if strategy == "keep_latest":
                    self._sql.keep_latest(tx.cur, self.serde.loads_typed, thread_id)
                else:
                    self._sql.delete_thread(tx.cur, thread_id)

    def get_next_version(self, current: str | None, channel: None) -> str:
        """The next channel version: a zero-padded counter and a random tiebreak,
        as LangGraph's own savers make them."""
        number = 0 if current is None else int(str(current).split(".")[0])
        return f"{number + 1:032}.{random.random():016}"

    # -- async twins -------------------------------------------------------------

    aget_tuple = in_thread(get_tuple)
    aget_delta_channel_history = in_thread(get_delta_channel_history)
    aput = in_thread(put)
    aput_writes = in_thread(put_writes)
    adelete_thread = in_thread(delete_thread)
    adelete_for_runs = in_thread(delete_for_runs)
    acopy_thread = in_thread(copy_thread)
    aprune = in_thread(prune)

    async def alist(
        self,
        config: RunnableConfig | None,
        *,
        filter: dict[str, Any] | None = None,
        before: RunnableConfig | None = None,
        limit: int | None = None,
    ) -> AsyncIterator[CheckpointTuple]:
        """Async `list`: each step of the same iterator, run in a worker thread."""
        found = await off_loop(
            self.list, config, filter=filter, before=before, limit=limit
        )
        done = object()
        while (item := await off_loop(next, found, done)) is not done:
            yield cast(CheckpointTuple, item)
