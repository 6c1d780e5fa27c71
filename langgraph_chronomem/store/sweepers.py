"""The background sweepers: expire what is due (TTL), or compact by a retention
policy, every few minutes, until stopped.

>>> import threading
>>> swept = threading.Event()
>>> sweeper = TTLSweeper(lambda: swept.set() or 0)
>>> future = sweeper.start(interval_minutes=0.001)
>>> swept.wait(5)
True
>>> sweeper.stop(timeout=5)
True
"""

from __future__ import annotations

import asyncio
import concurrent.futures
import logging
import threading
from collections.abc import Callable
from datetime import timedelta
from typing import TYPE_CHECKING

from langgraph.store.base import TTLConfig

from langgraph_chronomem._twins import in_thread
from langgraph_chronomem.engine.types import Compaction
from langgraph_chronomem.errors import InvalidRequestError
from langgraph_chronomem.store.core import StoreCore
from langgraph_chronomem.store.forgetting import check_retention

__all__ = ["Sweepers", "TTLSweeper"]

logger = logging.getLogger(__name__)


class _Run:
    """One sweeper thread: its stop signal and the futures that end with it."""

    def __init__(self) -> None:
        self.stop = threading.Event()
        self.futures: list[concurrent.futures.Future[None]] = []
        self.thread: threading.Thread | None = None


class TTLSweeper:
    """Calls `sweep` in a daemon thread every interval; at most one thread runs.

    Args:
        sweep: Expires (or compacts) what is due; returns how many it removed.
        name: The thread's name.
    """

    def __init__(
        self, sweep: Callable[[], int], name: str = "chronomem-ttl-sweeper"
    ) -> None:
        self._sweep = sweep
        self._name = name
        self._run: _Run | None = None
        self._lock = threading.Lock()

    def start(self, interval_minutes: float) -> concurrent.futures.Future[None]:
        """Start sweeping (if not already); cancel the future to stop.

        The future completes when the thread ends; a second `start` while one
        runs returns another future for the same thread.
        """
        future: concurrent.futures.Future[None] = concurrent.futures.Future()
        with self._lock:
            run = self._run
            if run is None or run.stop.is_set():
                run = self._run = _Run()
                run.thread = threading.Thread(
                    target=self._sweep_until_stopped,
                    args=(run, interval_minutes),
                    name=self._name,
                    daemon=True,
                )
                run.thread.start()
            run.futures.append(future)

        def stop_if_cancelled(done: concurrent.futures.Future[None]) -> None:
            if done.cancelled():
                run.stop.set()

        future.add_done_callback(stop_if_cancelled)
        return future

    def _sweep_until_stopped(self, run: _Run, interval_minutes: float) -> None:
        while not run.stop.wait(interval_minutes * 60):
            try:
                self._sweep()
            except Exception:
                logger.exception("%s failed; retrying next interval", self._name)
        with self._lock:
            futures, run.futures = run.futures, []
        for future in futures:
            if future.set_running_or_notify_cancel():
                future.set_result(None)

    def stop(self, timeout: float | None = None) -> bool:
        """Stop sweeping; True once the thread has ended (or never ran)."""
        with self._lock:
            run = self._run
        if run is None or run.thread is None:
            return True
        run.stop.set()
        run.thread.join(timeout)
        if run.thread.is_alive():
            return False
        with self._lock:
            if self._run is run:
                self._run = None
        return True


class Sweepers(StoreCore):
    """`ChronoStore`'s TTL sweeps and background compaction: a mixin.

    `SqliteStore` names the TTL methods without a prefix; `AsyncSqliteStore`
    uses the same names for coroutines. One object serving both, this store
    keeps the names for the sync methods and gives the async ones the `a`
    prefix of every other async method (`aget`, `aput`...).
    """

    ttl_config: TTLConfig | None
    _sweeper: TTLSweeper
    _compactor: TTLSweeper | None

    if TYPE_CHECKING:  # `Forgetting`'s, which the compactor runs

        def compact(
            self, *, keep_last: int | None = None, keep_within: timedelta | None = None
        ) -> Compaction: ...

    def sweep_ttl(self) -> int:
        """Delete every item whose TTL has passed, one `expire` commit per scope.

        Returns the number of items expired. From async code, `await
        store.asweep_ttl()`, or use `AsyncChronoStore`, whose `sweep_ttl` is
        a coroutine, as `AsyncSqliteStore`'s is.
        """
        return self._expire_due()

    def _expire_due(self) -> int:
        commits = self._write(lambda tx: tx.expire())
        return sum(len(c.changes) for c in commits)

    asweep_ttl = in_thread(sweep_ttl)

    def start_ttl_sweeper(
        self, sweep_interval_minutes: float | None = None
    ) -> concurrent.futures.Future[None]:
        """Sweep expired items in a background thread every few minutes.

        The interval is the argument, else `ttl["sweep_interval_minutes"]`, else 5.
        Cancel the returned future (or call `stop_ttl_sweeper`) to stop; it
        completes when the sweeper stops. At most one sweeper runs: starting
        it again returns another future for the same thread.

        Args:
            sweep_interval_minutes: Minutes between sweeps.
        """
        return self._start_sweeper(sweep_interval_minutes)

    def _start_sweeper(
        self, sweep_interval_minutes: float | None
    ) -> concurrent.futures.Future[None]:
        configured = (self.ttl_config or {}).get("sweep_interval_minutes")
        return self._sweeper.start(float(sweep_interval_minutes or configured or 5))

    async def astart_ttl_sweeper(
        self, sweep_interval_minutes: float | None = None
    ) -> asyncio.Task[None]:
        """Async `start_ttl_sweeper`: what `AsyncSqliteStore.start_ttl_sweeper` is.

        Returns a task, as `AsyncSqliteStore` does, that ends when the sweeper
        stops: cancel it (or await `astop_ttl_sweeper()`) to stop sweeping. The
        sweeps run in the same background thread as `start_ttl_sweeper`'s, so
        a busy event loop never delays them; the task ends with its loop.

            >>> import asyncio, tempfile
            >>> from langgraph_chronomem import ChronoStore
            >>> async def main():
            ...     async with ChronoStore.from_path(tempfile.mkdtemp()) as store:
            ...         task = await store.astart_ttl_sweeper(sweep_interval_minutes=1)
            ...         stopped = await store.astop_ttl_sweeper()
            ...         await task
            ...         return stopped, task.done()
            >>> asyncio.run(main())
            (True, True)

        Args:
            sweep_interval_minutes: Minutes between sweeps.
        """
        sweeper = self._start_sweeper(sweep_interval_minutes)

        async def sweeping() -> None:
            await asyncio.wrap_future(sweeper)

        task = asyncio.create_task(sweeping(), name="chronomem-ttl-sweeper")
        task.add_done_callback(lambda _: sweeper.cancel())  # cancelled: stop it
        return task

    def stop_ttl_sweeper(self, timeout: float | None = None) -> bool:
        """Stop the background sweeper; True once it has stopped (or never ran).

        Args:
            timeout: Seconds to wait for the sweeper thread; `None` waits until
                it ends.
        """
        return self._sweeper.stop(timeout)

    astop_ttl_sweeper = in_thread(stop_ttl_sweeper)

    def start_compactor(
        self,
        *,
        keep_last: int | None = None,
        keep_within: timedelta | None = None,
        interval_minutes: float = 24 * 60,
    ) -> concurrent.futures.Future[None]:
        """Keep history bounded in the background: `compact` every scope by
        this retention policy every `interval_minutes` (a day by default), in
        a daemon thread, until `stop_compactor` (or the future is cancelled).
        One compactor runs at a time, with the policy it was started with:
        stop it to start it with another.

            >>> import tempfile
            >>> from langgraph_chronomem import ChronoStore
            >>> from datetime import timedelta
            >>> store = ChronoStore.from_path(tempfile.mkdtemp())
            >>> running = store.start_compactor(keep_within=timedelta(days=90))
            >>> store.stop_compactor(timeout=5)
            True
            >>> store.close()

        Args:
            keep_last: Keep each item's newest versions, this many.
            keep_within: Keep the versions committed this recently.
            interval_minutes: Minutes between compactions.

        Raises:
            InvalidRequestError: For a policy `compact` refuses, or an interval
                that is not a positive number.
        """
        check_retention(keep_last, keep_within)
        if isinstance(interval_minutes, bool) or not (
            isinstance(interval_minutes, (int, float)) and interval_minutes > 0
        ):
            raise InvalidRequestError(
                f"interval_minutes is a positive number, got {interval_minutes!r}"
            )
        if self._compactor is None:
            self._compactor = TTLSweeper(
                lambda: len(
                    self.compact(keep_last=keep_last, keep_within=keep_within).versions
                ),
                name="chronomem-compactor",
            )
        return self._compactor.start(float(interval_minutes))

    def stop_compactor(self, timeout: float | None = None) -> bool:
        """Stop the background compactor; True once it has stopped (or never
        ran). A later `start_compactor` may give another policy."""
        compactor = self._compactor
        if compactor is None:
            return True
        stopped = compactor.stop(timeout)
        if stopped:
            self._compactor = None
        return stopped
