"""Async twins: the sync call of a store, checkpointer or tool, run off the event loop.

Every async path of the package goes through `off_loop`, so each carries the
caller's event loop to the worker thread (an `embed` given as `async def` is
awaited there) and the caller's context variables (run labels, `commit_context`).

>>> import asyncio
>>> class Counter:
...     def add(self, n: int) -> int:
...         return n + 1
...     aadd = in_thread(add)
>>> asyncio.run(Counter().aadd(1))
2
>>> def shout(text: str) -> str:
...     return text.upper()
>>> asyncio.run(off_loop(shout, "hi"))
'HI'
"""

from __future__ import annotations

import asyncio
from collections.abc import Callable, Coroutine
from typing import Any, Concatenate, ParamSpec, TypeVar

from langgraph_chronomem.search.index import caller_loop

__all__ = ["in_thread", "off_loop"]

P = ParamSpec("P")
T = TypeVar("T")


async def off_loop(work: Callable[P, T], *args: P.args, **kwargs: P.kwargs) -> T:
    """Run sync work in a worker thread, for an async caller.

    `asyncio.to_thread` copies context variables, so `commit_context` and the
    LangGraph run labels reach the commit; the caller's loop is recorded so an
    embed function given as `async def` can be awaited on it from the thread.
    """
    token = caller_loop.set(asyncio.get_running_loop())
    try:
        return await asyncio.to_thread(work, *args, **kwargs)
    finally:
        caller_loop.reset(token)


def in_thread(
    method: Callable[Concatenate[Any, P], T],
) -> Callable[Concatenate[Any, P], Coroutine[Any, Any, T]]:
    """The async twin of a sync method: the same call, off the event loop.

    The owner (`self`) is left untyped so a subclass's twin may stand for its
    base's (the checkpointer's `aput` for `BaseCheckpointSaver.aput`).
    """

    async def twin(self: Any, /, *args: P.args, **kwargs: P.kwargs) -> T:
        return await off_loop(method, self, *args, **kwargs)

    twin.__name__ = twin.__qualname__ = f"a{method.__name__}"
    twin.__doc__ = f"Async `{method.__name__}`: the same call, run in a worker thread."
    return twin
