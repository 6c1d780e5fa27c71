"""TTL: LangGraph's TTLConfig is honoured; an expiry is a commit, a refresh is not."""

from __future__ import annotations

import asyncio
import time
from pathlib import Path

import pytest

from langgraph_chronomem import ChronoStore, StorageError

ALICE = ("memories", "alice")
SECONDS = 1 / 60  # TTLs are in minutes


def _expiry(store: ChronoStore, key: str) -> float:
    """Read the stored expiry straight from the log (it is not part of `Item`)."""
    with store._engine.transaction(write=False) as tx:
        (expires,) = tx.cur.execute(
            "SELECT expires_at FROM items WHERE key = ? AND valid_to IS NULL", (key,)
        ).fetchone()
    return expires


def test_expired_items_are_swept_as_a_system_commit(store_path: Path) -> None:
    with ChronoStore.from_path(store_path, scope_depth=2) as store:
        store.put(ALICE, "short", {"v": 1}, ttl=0.05 * SECONDS)
        store.put(ALICE, "long", {"v": 2}, ttl=60)
        store.put(ALICE, "forever", {"v": 3})
        time.sleep(0.1)
        assert store.sweep_ttl() == 1
        commit = store.log(ALICE)[0]
        assert (commit.op, commit.author, commit.version) == ("expire", "system", 4)
        assert commit.summary == "expired memories/alice/short"
        assert sorted(i.key for i in store.search(ALICE)) == ["forever", "long"]
        assert store.sweep_ttl() == 0, "nothing left to expire, so no new commit"
        assert store.head(ALICE) == 4
        store.rollback(ALICE, to=3)
        assert store.get(ALICE, "short").value == {"v": 1}, "an expiry can be undone"


def test_default_ttl_applies_to_puts(store_path: Path) -> None:
    with ChronoStore.from_path(
        store_path, scope_depth=2, ttl={"default_ttl": 5}
    ) as store:
        before = time.time()
        store.put(ALICE, "a", {"v": 1})
        assert before + 5 * 60 <= _expiry(store, "a") <= time.time() + 5 * 60


def test_refresh_on_read_moves_the_expiry_without_a_version(store_path: Path) -> None:
    with ChronoStore.from_path(
        store_path, scope_depth=2, ttl={"default_ttl": 5}
    ) as store:
        store.put(ALICE, "a", {"v": 1})
        first = _expiry(store, "a")
        time.sleep(0.02)
        store.get(ALICE, "a")
        after_get = _expiry(store, "a")
        time.sleep(0.02)
        store.search(ALICE)
        after_search = _expiry(store, "a")
        assert first < after_get < after_search
        store.get(ALICE, "a", refresh_ttl=False)
        assert _expiry(store, "a") == after_search
        assert store.head(ALICE) == 1


def test_refresh_on_read_can_be_turned_off(store_path: Path) -> None:
    ttl = {"default_ttl": 5, "refresh_on_read": False}
    with ChronoStore.from_path(store_path, scope_depth=2, ttl=ttl) as store:
        store.put(ALICE, "a", {"v": 1})
        first = _expiry(store, "a")
        time.sleep(0.02)
        store.get(ALICE, "a")
        assert _expiry(store, "a") == first


def test_omit_expired_hides_items_before_the_sweep(store_path: Path) -> None:
    ttl = {"omit_expired": True}
    with ChronoStore.from_path(store_path, scope_depth=2, ttl=ttl) as store:
        store.put(ALICE, "short", {"v": 1}, ttl=0.05 * SECONDS)
        store.put(ALICE, "kept", {"v": 2})
        time.sleep(0.1)
        assert store.get(ALICE, "short") is None
        assert [i.key for i in store.search(ALICE)] == ["kept"]
        assert store.head(ALICE) == 2, "hidden, not yet expired: no commit"


def test_background_sweeper_expires_and_stops(store_path: Path) -> None:
    with ChronoStore.from_path(
        store_path, scope_depth=2, ttl={"sweep_interval_minutes": 1}
    ) as store:
        store.put(ALICE, "short", {"v": 1}, ttl=0.05 * SECONDS)
        store.start_ttl_sweeper(sweep_interval_minutes=0.1 * SECONDS)
        deadline = time.time() + 5
        while store.head(ALICE) == 1 and time.time() < deadline:
            time.sleep(0.02)  # poll the version: a get would refresh the TTL
        assert store.get(ALICE, "short") is None
        assert store.stop_ttl_sweeper(timeout=5)
        assert store.log(ALICE)[0].op == "expire"


async def test_async_sweeper_twins_return_tasks_that_end_with_it(
    store_path: Path,
) -> None:
    """What code written for AsyncSqliteStore awaits, under the `a` names."""
    async with ChronoStore.from_path(store_path, scope_depth=2) as store:
        await store.aput(ALICE, "short", {"v": 1}, ttl=0.05 * SECONDS)
        first = await store.astart_ttl_sweeper(sweep_interval_minutes=0.1 * SECONDS)
        again = await store.astart_ttl_sweeper()
        assert isinstance(first, asyncio.Task) and not first.done()
        while await store.ahead(ALICE) == 1:
            await asyncio.sleep(0.02)
        assert await store.asweep_ttl() == 0
        assert await store.astop_ttl_sweeper(timeout=5) is True
        await asyncio.wait_for(asyncio.gather(first, again), 5)


async def test_cancelling_the_sweeper_task_stops_the_sweeps(store_path: Path) -> None:
    async with ChronoStore.from_path(store_path, scope_depth=2) as store:
        task = await store.astart_ttl_sweeper(sweep_interval_minutes=0.1 * SECONDS)
        task.cancel()
        with pytest.raises(asyncio.CancelledError):
            await task
        await store.aput(ALICE, "short", {"v": 1}, ttl=0.05 * SECONDS)
        await asyncio.sleep(0.3)
        assert await store.ahead(ALICE) == 1, "no sweep after the cancel"


async def test_async_with_closes_the_store(store_path: Path) -> None:
    async with ChronoStore.from_path(store_path, scope_depth=2) as store:
        await store.aput(ALICE, "a", {"v": 1})
    with pytest.raises(StorageError):
        await store.aget(ALICE, "a")
