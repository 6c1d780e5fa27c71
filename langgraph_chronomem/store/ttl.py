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

import concurrent.futures
import logging
import threading
from collections.abc import Callable

__all__ = ["TTLSweeper"]

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
