"""Memory kept in step with checkpoints: the memory position each checkpoint
records, and what time travel (a replay or a fork from a past checkpoint) does
to the thread's memory scope.

    >>> import tempfile
    >>> from langgraph.checkpoint.base import empty_checkpoint
    >>> from langgraph_chronomem import open_chronomem
    >>> store, checkpointer = open_chronomem(tempfile.mkdtemp(), scope_depth=2)
    >>> store.put(("memories", "alice"), "city", {"city": "Boston"})
    >>> config = {"configurable": {"thread_id": "t1", "user_id": "alice"}}
    >>> saved = checkpointer.put(config, empty_checkpoint(), {}, {})
    >>> checkpointer.memory_version(saved)
    1
    >>> store.close()
"""

from __future__ import annotations

import json
import logging
from collections.abc import (
    Mapping,
    Sequence,
)
from dataclasses import dataclass
from typing import (
    Any,
    Literal,
    get_args,
)

from langchain_core.runnables import RunnableConfig
from langgraph.checkpoint.base import (
    get_checkpoint_id,
)
from langgraph.runtime import Runtime

from langgraph_chronomem._twins import in_thread
from langgraph_chronomem.checkpoint import sql as sql
from langgraph_chronomem.engine.base import LogTransaction, by_thread
from langgraph_chronomem.engine.protocol import LogEngine
from langgraph_chronomem.engine.rows import scope_text
from langgraph_chronomem.engine.types import Commit, Namespace
from langgraph_chronomem.errors import (
    CompactedError,
    ConfigError,
    ScopeError,
    VersionError,
    VersionNotFound,
)
from langgraph_chronomem.namespace import NamespaceTemplate
from langgraph_chronomem.store.base import ChronoStore
from langgraph_chronomem.store.context import commit_context
from langgraph_chronomem.store.ops import check_scope

__all__ = ["MemoryTravel", "TimeTravel", "Travel", "address", "check_template"]

logger = logging.getLogger(__name__)

TimeTravel = Literal["revert", "rewind", "keep"]
TIME_TRAVEL_MODES = get_args(TimeTravel)
TIME_TRAVEL_AUTHOR = "time-travel"
# LangGraph's run config keys (CONFIG_KEY_RUNTIME, CONFIG_KEY_TASK_ID): a
# `get_tuple` with the run's `Runtime` but outside any task is a graph run opening
# that checkpoint; `get_state` has no runtime, and a node's config has a task.
RUN_KEY = "__pregel_runtime"
TASK_KEY = "__pregel_task_id"


def checkpoint_config(thread_id: str, ns: str, checkpoint_id: str) -> RunnableConfig:
    return {
        "configurable": {
            "thread_id": thread_id,
            "checkpoint_ns": ns,
            "checkpoint_id": checkpoint_id,
        }
    }


def address(config: RunnableConfig) -> tuple[str, str, str | None]:
    """(thread_id, checkpoint_ns, checkpoint_id or None) of a config."""
    configurable = config.get("configurable") or {}
    if configurable.get("thread_id") is None:
        raise ConfigError(
            "a checkpointer config needs configurable.thread_id, e.g. "
            "{'configurable': {'thread_id': 't1'}}"
        )
    return (
        str(configurable["thread_id"]),
        configurable.get("checkpoint_ns") or "",
        get_checkpoint_id(config),
    )


@dataclass(frozen=True)
class Travel:
    """Where time travel takes a thread's memory: its scope, the checkpoint's
    memory position (`seq`), for a whole-scope rewind its version there,
    whether memory itself moves (`restore`), and the pending proposals made
    since, which the travel rejects."""

    scope: Namespace
    seq: int
    version: int | None = None
    restore: bool = True
    proposals: tuple[int, ...] = ()


def check_template(template: NamespaceTemplate, depth: int, *, rewind: bool) -> None:
    """Refuse a memory namespace that names no scope, or (`rewind`) whose
    whole-scope rewinds would reach other timelines."""
    outside = [key for key, index in template.keys.items() if index >= depth]
    if rewind and outside:
        raise ScopeError(
            f"{{{outside[0]}}} in memory_namespace={template.template} lies outside "
            f"the store's scope (scope_depth={depth}), so a time-travel rewind "
            "would roll back every user's memory; open the store with scope_depth="
            f"{template.keys[outside[0]] + 1}, or pass on_time_travel='revert'"
        )
    if len(template.template) < depth:
        raise ScopeError(
            f"memory_namespace={template.template} is shorter than the store's "
            f"scope_depth={depth}; give at least {depth} labels"
        )


class MemoryTravel:
    """The checkpointer's memory side: a mixin for `ChronoCheckpointer`."""

    store: ChronoStore
    memory_namespace: NamespaceTemplate
    on_time_travel: TimeTravel
    _engine: LogEngine
    _sql: sql.CheckpointSQL

    def memory_version(
        self, config: RunnableConfig, scope: Sequence[str] | None = None
    ) -> int:
        """The version a memory scope had at a checkpoint (0 before its first commit).

            >>> import tempfile
            >>> from langgraph_chronomem import open_chronomem
            >>> store, checkpointer = open_chronomem(tempfile.mkdtemp(), scope_depth=2)
            >>> store.put(("memories", "alice"), "city", {"city": "Boston"})
            >>> config = {"configurable": {"thread_id": "t1", "user_id": "alice"}}
            >>> from langgraph.checkpoint.base import empty_checkpoint
            >>> saved = checkpointer.put(config, empty_checkpoint(), {}, {})
            >>> store.put(("memories", "alice"), "city", {"city": "Paris"})
            >>> checkpointer.memory_version(saved), store.head(("memories", "alice"))
            (1, 2)
            >>> store.close()

        Args:
            config: The checkpoint (its `checkpoint_id`, else the thread's latest).
            scope: The scope, or any namespace inside it; by default the thread's
                memory (`memory_namespace` filled as for a rewind).

        Raises:
            VersionNotFound: If there is no such checkpoint.
            VersionError: If the checkpoint records no memory position (another
                saver wrote it).
            ConfigError: If the template needs a value that nothing provides.
        """
        thread_id, ns, checkpoint_id = address(config)
        with self._engine.transaction(write=False) as tx:
            row = self._sql.row(tx.cur, thread_id, ns, checkpoint_id)
        if row is None:
            where = f" in namespace {ns!r}" if ns else ""
            raise VersionNotFound(
                f"thread {thread_id!r} has no checkpoint "
                f"{checkpoint_id or '(none yet)'}{where}"
            )
        metadata = json.loads(row[6])
        stamp = row[7]
        if stamp is None:
            raise VersionError(
                f"checkpoint {row[2]} records no memory position; "
                "it was not written by a ChronoCheckpointer"
            )
        depth = self.store.scope_depth
        sc = (
            self._scope(config, metadata)
            if scope is None
            else check_scope(scope, depth)
        )
        with self._engine.transaction(write=False) as tx:
            return self._sql.version_at(tx.cur, scope_text(sc), stamp)

    def _stamp(self, config: RunnableConfig) -> int | None:
        """The memory position stored with a checkpoint; `None` for none, or
        no such checkpoint (for `copy_checkpoints`, which carries it over)."""
        thread_id, ns, checkpoint_id = address(config)
        with self._engine.transaction(write=False) as tx:
            row = self._sql.row(tx.cur, thread_id, ns, checkpoint_id)
        return None if row is None else row[7]

    def _restamp(self, config: RunnableConfig, seq: int | None) -> None:
        """Set a stored checkpoint's memory position (see `_stamp`)."""
        thread_id, ns, checkpoint_id = address(config)
        with self._engine.transaction(write=True) as tx:
            tx.cur.execute(self._sql.SET_STAMP, (seq, thread_id, ns, checkpoint_id))

    def _scope(self, config: RunnableConfig, metadata: Mapping[str, Any]) -> Namespace:
        """The thread's memory scope: the template filled from the run config.

        A value missing there comes from the graph's context, else from the
        checkpoint's metadata, which records the run's `configurable` strings.
        """
        runtime = (config.get("configurable") or {}).get(RUN_KEY)
        context = runtime.context if isinstance(runtime, Runtime) else None
        values = {k: v for k, v in metadata.items() if isinstance(v, str)}
        for key in self.memory_namespace.keys:
            if isinstance(context, Mapping):
                found = context.get(key)
            else:
                found = getattr(context, key, None)
            if found is not None:
                values[key] = found
        return check_scope(
            self.memory_namespace(config, values), self.store.scope_depth
        )

    def _fork_rewind(
        self,
        tx: LogTransaction,
        config: RunnableConfig,
        thread_id: str,
        parent_id: str | None,
    ) -> Travel | None:
        """The rewind a root checkpoint put after `parent_id`, which is not its
        thread's latest, needs: none when memory already reads the same."""
        parent = self._sql.row(tx.cur, thread_id, "", parent_id)
        if parent is None:
            return None
        return self._rewind_target(tx, config, parent, json.loads(parent[6]))

    def _rewind_target(
        self,
        tx: LogTransaction,
        config: RunnableConfig,
        row: sql.Row,
        metadata: Mapping[str, Any],
    ) -> Travel | None:
        """Where the thread's memory goes for a checkpoint (its `row`, and its
        decoded `metadata`), read in the caller's transaction; `None` when
        memory already reads the same."""
        thread_id, checkpoint_id, stamp = row[0], row[2], row[7]
        if stamp is None:
            logger.warning(
                "checkpoint %s has no memory position: memory not rewound",
                checkpoint_id,
            )
            return None
        try:
            scope = self._scope(config, metadata)
        except ConfigError as exc:  # runs that name no memory: the graph goes on
            logger.warning("checkpoint %s: memory not rewound: %s", checkpoint_id, exc)
            return None
        # Proposals made since by what the travel undoes (this thread's runs,
        # or with `rewind` anyone) would wait for a review of a past that the
        # thread no longer has: the travel rejects them.
        stale = tuple(
            p.version
            for p in tx.proposals(scope)
            if p.seq > stamp
            and (
                self.on_time_travel == "rewind"
                or p.labels.get("thread_id") == thread_id
            )
        )
        try:
            if self.on_time_travel == "revert":
                plan = tx.matching_revert_plan(scope, by_thread(thread_id), stamp)
                restore = bool(plan.restore)
                target = None
            else:
                target = self._sql.version_at(tx.cur, scope_text(scope), stamp)
                head = tx.head(scope)
                restore = head != target and bool(tx.diff(scope, target, head))
                if restore:
                    tx.check_whole(scope, target)
        except CompactedError as exc:  # the graph goes on; its memory cannot
            logger.warning("checkpoint %s: memory not rewound: %s", checkpoint_id, exc)
            return None
        if not (restore or stale):
            return None
        return Travel(scope, stamp, target, restore, stale)

    def _rewind(self, thread_id: str, checkpoint_id: str, travel: Travel) -> None:
        """Take the thread's memory back to the checkpoint, as a commit labelled
        with the thread and checkpoint: this thread's changes since reverted,
        or (`rewind`) the whole scope rolled back to its version there. The
        pending proposals those changes include are rejected, one commit each:
        the replay proposes again what it still means to."""
        labels = {"thread_id": thread_id, "checkpoint_id": checkpoint_id}
        reason = f"time travel: thread {thread_id} back to checkpoint {checkpoint_id}"
        commit: Commit | None = None
        with commit_context(labels=labels):
            if travel.restore and travel.version is not None:
                commit = self.store.rollback(
                    travel.scope,
                    travel.version,
                    author=TIME_TRAVEL_AUTHOR,
                    reason=reason,
                )
            elif travel.restore:
                commit = self.store._revert_thread(
                    travel.scope,
                    thread_id,
                    travel.seq,
                    author=TIME_TRAVEL_AUTHOR,
                    reason=f"{reason}: its own changes since undone",
                )
            for version in travel.proposals:
                try:
                    self.store.reject(
                        travel.scope,
                        version,
                        author=TIME_TRAVEL_AUTHOR,
                        reason=f"{reason}: proposed by a run it went back before",
                    )
                except VersionError:  # someone decided it meanwhile
                    continue
        if commit is not None:
            logger.info("time travel on thread %s: %s", thread_id, commit.summary)

    amemory_version = in_thread(memory_version)
