"""A background thread that runs one step of work at a time, whenever poked.

The store's projections (item and change vectors, the full-text index) follow
the log this way: a write commits, pokes, and returns; the follower applies
what was committed in small steps, so a search that needs everything waits at
most one step for the lock a step holds.

    >>> done = []
    >>> def step() -> bool:  # one unit of work; True while more remains
    ...     done.append(len(done))
    ...     return len(done) < 3
    >>> follower = Follower(step, name="demo")
    >>> follower.poke()
    >>> follower.settle()
    True
    >>> done
    [0, 1, 2]
    >>> follower.stop()
"""

from __future__ import annotations

import atexit
import contextlib
import logging
import os
import sys
import threading
import time
import weakref
from collections.abc import Callable, Iterator

from langgraph_chronomem.errors import ChronomemError

__all__ = ["Follower"]

logger = logging.getLogger(__name__)

_running: weakref.WeakSet[Follower] = weakref.WeakSet()
# The nice value of a background follower's thread: the model's own threads,
# made in it, take it too, so a write never waits for the cores it embeds on.
_BACKGROUND_NICE = 10
# How long the pokes must stop (a burst of writes ends) before a background
# follower takes its full step: during a burst it takes only its light one.
_QUIET = 0.25


# How long an exiting process waits for a follower's step to end.
_EXIT_WAIT = 60.0


@atexit.register
def _stop_all() -> None:
    """At exit, let every follower finish the step it is in (a Chroma write cut
    short by the interpreter's exit could damage the index) and stop. Its
    `detached` part too, which `stop` alone does not wait for: a thread still
    inside a model's native code while the interpreter ends aborts the
    process ("terminate called", exit code 134)."""
    for follower in list(_running):
        follower.stop()
        if follower._thread is not None:
            follower._thread.join(_EXIT_WAIT)


class _Stopped(Exception):
    """A step's detached part ended after `stop`: the step goes no further."""


class Follower:
    """Calls `step()` in one daemon thread after every `poke()`, again and
    again while it returns True.

    A step that raises is logged, and the follower waits for the next poke
    instead of retrying in a loop: the log is the truth, and the next write,
    search or open catches the projection up. The same failure again (a Chroma
    server that stays down while writes keep poking) is logged once, until a
    step succeeds.

    Args:
        step: One bounded unit of work; returns whether more remains.
        name: The thread's name.
        background: Run the steps at a low priority (on Linux, where a
            thread has a nice value of its own, inherited by the threads it
            starts), and only once the pokes have paused for `_QUIET`
            seconds: during a burst of writes the caller's threads go first.
        light: For a background follower, the step it takes while a burst
            of writes goes on (the pokes come within `_QUIET` of each
            other): work that holds no lock a write waits for for long,
            such as embedding. Without it, nothing runs during a burst.
    """

    def __init__(
        self,
        step: Callable[[], bool],
        *,
        name: str,
        background: bool = False,
        light: Callable[[], bool] | None = None,
    ) -> None:
        self._step = step
        self._light = light
        self._name = name
        self._background = background
        self._wake = threading.Condition()
        self._poked = False
        self._last_poke = 0.0
        self._busy = False
        self._stopped = False
        self._detached = False  # the step is in a part `stop` does not wait for
        self._thread: threading.Thread | None = None
        self._failing: str | None = None  # the failure last logged

    def poke(self) -> None:
        """Ask for steps to run (starts the thread on first use)."""
        with self._wake:
            if self._stopped:
                return
            self._poked = True
            self._last_poke = time.monotonic()
            if self._thread is None:
                self._thread = threading.Thread(
                    target=self._run, name=self._name, daemon=True
                )
                self._thread.start()
                _running.add(self)
            self._wake.notify_all()

    def settle(self, timeout: float | None = None) -> bool:
        """Wait until no step runs or is asked for. Returns False on timeout."""
        with self._wake:
            return self._wake.wait_for(
                lambda: self._stopped or not (self._poked or self._busy), timeout
            )

    @property
    def stopped(self) -> bool:
        """Whether `stop` was called: no step runs again."""
        return self._stopped

    @property
    def failing(self) -> bool:
        """Whether the last step raised: the work it was to do is still undone
        until a poke runs it again (or someone else does it)."""
        return self._failing is not None

    def stop(self) -> None:
        """Finish the step in progress, run no more, and end the thread. A
        step in a `detached` part is not waited for: it ends when that part
        does."""
        with self._wake:
            self._stopped = True
            self._wake.notify_all()
            if self._thread is not threading.current_thread():
                self._wake.wait_for(lambda: self._detached or not self._busy)

    @contextlib.contextmanager
    def detached(self) -> Iterator[None]:
        """Mark a part of a step that `stop` need not wait for (a model load:
        seconds on a busy machine, and nothing to leave half done). If the
        follower was stopped meanwhile, the step ends quietly when the part
        does, before it goes on. Called outside the follower's thread, it
        does nothing.

            >>> follower = Follower(lambda: False, name="demo")
            >>> with follower.detached():
            ...     pass
        """
        mine = threading.current_thread() is self._thread
        if mine:
            with self._wake:
                self._detached = True
        try:
            yield
        finally:
            if mine:
                with self._wake:
                    self._detached = False
                    if self._stopped:
                        raise _Stopped

    def _run(self) -> None:
        if self._background:
            _lower_priority()
        while True:
            with self._wake:
                self._wake.wait_for(lambda: self._poked or self._stopped)
                light = self._wait_for_quiet()
                if self._stopped:
                    self._wake.notify_all()
                    return
                if not light:
                    self._poked = False
                self._busy = True
            try:
                if light:
                    self._light_steps()
                else:
                    while self._step() and not (self._stopped or self._interrupted()):
                        pass
            except _Stopped:
                pass
            except Exception as exc:
                failure = f"{type(exc).__name__}: {exc}"
                typed = isinstance(exc, ChronomemError)  # one line says it all
                logger.log(
                    logging.DEBUG if failure == self._failing else logging.WARNING,
                    "%s: an index lags behind the log; the next write, search or "
                    "open catches it up%s",
                    self._name,
                    f" ({exc})" if typed else "",
                    exc_info=not typed,
                )
                self._failing = failure
            else:
                if self._failing is not None:
                    logger.info("%s: the index follows the log again", self._name)
                self._failing = None
            finally:
                with self._wake:
                    self._busy = False
                    self._wake.notify_all()

    def _wait_for_quiet(self) -> bool:
        """For a background follower: wait (holding `_wake`) until no poke
        came for `_QUIET` seconds, or the follower is stopped. Returns True
        instead, at once, if a burst goes on and there is a light step to
        take meanwhile."""
        while self._background and not self._stopped:
            left = self._last_poke + _QUIET - time.monotonic()
            if left <= 0:
                return False
            if self._light is not None:
                return True
            self._wake.wait(left)
        return False

    def _light_steps(self) -> None:
        """Light steps while the burst goes on and they find work; the full
        step waits for the pause (the follower stays poked for it)."""
        assert self._light is not None  # `_wait_for_quiet` said to take it
        while not self._stopped and self._light():
            with self._wake:
                if time.monotonic() - self._last_poke >= _QUIET:
                    return  # the burst ended: the full step next
        with self._wake:  # no work left for now: wait for the pause
            self._wake.wait_for(
                lambda: self._stopped or time.monotonic() - self._last_poke >= _QUIET,
                max(0.0, self._last_poke + _QUIET - time.monotonic()),
            )

    def _interrupted(self) -> bool:
        """Whether a background follower was poked again within `_QUIET`
        seconds: it goes back to waiting for the burst to end (still
        poked, so `settle` waits for it)."""
        if not self._background:
            return False
        with self._wake:
            if self._poked and time.monotonic() - self._last_poke < _QUIET:
                return True
        return False


def _lower_priority() -> None:
    """Give the calling thread, and the threads it starts from now on, the
    nice value `_BACKGROUND_NICE`. Linux only: elsewhere a nice value is the
    whole process's (and a thread id given as a process id names another
    process)."""
    if sys.platform.startswith("linux"):
        with contextlib.suppress(OSError):  # a sandbox may forbid it
            os.setpriority(os.PRIO_PROCESS, threading.get_native_id(), _BACKGROUND_NICE)
