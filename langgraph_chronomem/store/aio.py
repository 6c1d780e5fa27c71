"""`AsyncChronoStore`: `ChronoStore` for code written against LangGraph's async
stores, whose TTL methods are coroutines.

`AsyncSqliteStore` and `AsyncPostgresStore` name their coroutines `sweep_ttl`,
`start_ttl_sweeper`, `stop_ttl_sweeper` and `setup`, the names `SqliteStore`
gives plain methods. `ChronoStore` serves sync and async code with one object,
so there those names are sync and their coroutines carry the `a` prefix
(`asweep_ttl`...); `AsyncChronoStore` is the same store with LangGraph's async
names, so code that awaits them runs unchanged:

    >>> import asyncio
    >>> async def main():
    ...     async with AsyncChronoStore.from_conn_string(":memory:") as store:
    ...         await store.setup()
    ...         await store.aput(("memories", "bob"), "pet", {"kind": "dog"})
    ...         sweeper = await store.start_ttl_sweeper()
    ...         expired = await store.sweep_ttl()
    ...         stopped = await store.stop_ttl_sweeper()
    ...         await sweeper
    ...         return expired, stopped
    >>> asyncio.run(main())
    (0, True)
"""

from __future__ import annotations

import asyncio

from langgraph_chronomem.store.base import ChronoStore

__all__ = ["AsyncChronoStore"]


class AsyncChronoStore(ChronoStore):
    """A `ChronoStore` whose `setup` and TTL methods are coroutines, as on
    `AsyncSqliteStore` and `AsyncPostgresStore`.

    Open it as `ChronoStore` (`from_path`, `from_conn_string`, `from_pool`),
    with `async with` as LangGraph's async stores are; everything else is
    `ChronoStore`'s, the `a`-prefixed coroutines included. The sweeps run in a
    background thread, as `ChronoStore`'s do, so a busy event loop never
    delays them.
    """

    # A coroutine where `ChronoStore` has a plain method, by design: these are
    # LangGraph's async names, which `ChronoStore` cannot take for coroutines
    # without breaking its sync callers.

    async def setup(self) -> None:  # type: ignore[override]
        """Nothing to do: opening the store created or upgraded its database."""

    async def sweep_ttl(self) -> int:  # type: ignore[override]
        """Delete every item whose TTL has passed; return how many
        (`ChronoStore.sweep_ttl`, awaited)."""
        return await self.asweep_ttl()

    async def start_ttl_sweeper(  # type: ignore[override]
        self, sweep_interval_minutes: float | None = None
    ) -> asyncio.Task[None]:
        """Sweep expired items every few minutes until stopped; the task ends
        when the sweeper stops (`ChronoStore.astart_ttl_sweeper`).

        Args:
            sweep_interval_minutes: Minutes between sweeps; default
                `ttl["sweep_interval_minutes"]`, else 5.
        """
        return await self.astart_ttl_sweeper(sweep_interval_minutes)

    async def stop_ttl_sweeper(  # type: ignore[override]
        self, timeout: float | None = None
    ) -> bool:
        """Stop the sweeper; True once it has stopped (or never ran).

        Args:
            timeout: Seconds to wait for it; `None` waits until it ends.
        """
        return await self.astop_ttl_sweeper(timeout)
