"""The background TTL sweeper: expire what is due, every few minutes, until stopped.

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


class TTLSweeper:
    """Calls `sweep` in a daemon thread every interval; at most one thread runs.

    Args:
        sweep: Expires what is due; returns how many items it expired.
    """

    def __init__(self, sweep: Callable[[], int]) -> None:
        self._sweep = sweep
        self._thread: threading.Thread | None = None
        self._stop = threading.Event()

    def start(self, interval_minutes: float) -> concurrent.futures.Future[None]:
        """Start sweeping (if not already); cancel the future to stop."""
        future: concurrent.futures.Future[None] = concurrent.futures.Future()

        def stop_if_cancelled(done: concurrent.futures.Future[None]) -> None:
            if done.cancelled():
                self._stop.set()

        future.add_done_callback(stop_if_cancelled)
        if self._thread is not None and self._thread.is_alive():
            return future
        self._stop.clear()

        def sweep_until_stopped() -> None:
            while not self._stop.wait(interval_minutes * 60):
                try:
                    self._sweep()
                except Exception:
                    logger.exception("TTL sweep failed; retrying next interval")
            if not future.done():
                future.set_result(None)

        self._thread = threading.Thread(
            target=sweep_until_stopped, name="chronomem-ttl-sweeper", daemon=True
        )
        self._thread.start()
        return future

    def stop(self, timeout: float | None = None) -> bool:
        """Stop sweeping; True once the thread has ended (or never ran)."""
        if self._thread is None:
            return True
        self._stop.set()
        self._thread.join(timeout)
        if self._thread.is_alive():
            return False
        self._thread = None
        return True
