"""The undo search's change vectors are embedded during a burst of writes, not
only after it (issue 33): the first undo after a burst, in this process or the
next, finds little left to embed.

During a burst the follower runs the model (which holds no lock a write waits
for) and keeps the vectors in memory; the Chroma writes and the mark moves,
which the writes would wait for, come at the pause, or when the store closes
right after the burst. Real SQLite files and the embedded Chroma; bag-of-words
vectors stand in for the model, counted by the thread that asks for them.
"""

from __future__ import annotations

import threading
import time
from pathlib import Path
from typing import Any

from langchain_core.embeddings import Embeddings

from langgraph_chronomem import ChronoStore
from langgraph_chronomem.search.follow import Follower
from langgraph_chronomem.search.resolve import ResolverConfig
from langgraph_chronomem.search.vectors import CHANGES
from tests.test_follow import fact
from tests.test_search import bag_of_words

ALICE = ("memories", "alice")


class Counting(Embeddings):
    """Bag-of-words vectors, a millisecond a text as a small model's take; the
    texts the follower's thread embeds are counted."""

    model = "counting"

    def __init__(self) -> None:
        self.by_follower: list[str] = []

    def embed_documents(self, texts: list[str]) -> list[list[float]]:
        if threading.current_thread().name.startswith("chronomem-follow"):
            self.by_follower += texts
        time.sleep(0.001 * len(texts))
        return [bag_of_words(t) for t in texts]

    def embed_query(self, text: str) -> list[float]:
        return self.embed_documents([text])[0]


def open_store(root: Path, model: Counting) -> ChronoStore:
    return ChronoStore.from_path(
        root,
        scope_depth=2,
        index={"embed": model, "dims": 64, "fields": []},  # type: ignore[typeddict-item]
        resolver=ResolverConfig(follow_writes=True),
    )


def changes_behind(store: ChronoStore) -> int:
    (changes,) = (p for p in store.stats().projections if p.name.startswith(CHANGES))
    return changes.behind


def burst(store: ChronoStore, model: Counting, *, at_least: int) -> int:
    """Put without pausing until the follower has embedded `at_least` texts
    (600 puts at most, each of its own words); returns how many were made."""
    n = 0
    while len(model.by_follower) < at_least and n < 600:
        store.put(ALICE, f"k{n % 40}", {"text": fact(n)})
        n += 1
    return n


def test_a_burst_of_writes_is_embedded_while_it_lasts_and_written_at_the_pause(
    tmp_path: Path,
) -> None:
    """The code before embedded nothing until the writes paused for 0.25 s."""
    model = Counting()
    with open_store(tmp_path, model) as store:
        puts = burst(store, model, at_least=20)
        assert len(model.by_follower) >= 20  # before: 0, the burst never paused
        # nothing was written meanwhile: the mark never moved
        assert changes_behind(store) == puts
        assert store.wait_for_index(timeout=120)
        assert changes_behind(store) == 0
        # what was embedded during the burst was not embedded again
        changes = [t for t in model.by_follower if "fact" in t]
        assert len(changes) == len(set(changes)) == puts
        resolution = store.resolve(ALICE, f"undo the {fact(puts - 1)}")
        assert resolution.best is not None
        assert resolution.best.commit.version == puts


def test_a_store_closed_right_after_a_burst_keeps_what_it_embedded(
    tmp_path: Path,
) -> None:
    """Closing writes the vectors embedded during the burst to Chroma (within
    a second), so the next process's first undo does not embed them again;
    the code before left every commit of the burst to it."""
    model = Counting()
    store = open_store(tmp_path, model)
    puts = burst(store, model, at_least=30)
    embedded = len(model.by_follower)
    began = time.monotonic()
    store.close()
    assert time.monotonic() - began < 5.0
    again = Counting()
    with ChronoStore.from_path(
        tmp_path,
        index={"embed": again, "dims": 64, "fields": []},  # type: ignore[typeddict-item]
    ) as reopened:
        left = changes_behind(reopened)
        assert left <= puts - embedded < puts  # before: puts, every commit
        resolution = reopened.resolve(ALICE, f"undo the {fact(3)}")
        assert resolution.best is not None and resolution.best.commit.version == 4


def test_a_background_follower_takes_light_steps_during_a_burst() -> None:
    """With a light step, a background follower works through a burst of
    pokes with it, and takes its full step only once they pause."""
    light: list[float] = []
    full: list[float] = []

    def step(record: list[float]) -> Any:
        def run() -> bool:
            record.append(time.monotonic())
            return False

        return run

    follower = Follower(
        step(full), name="chronomem-follow-light", background=True, light=step(light)
    )
    end = time.monotonic() + 1.0
    while time.monotonic() < end:
        follower.poke()
        time.sleep(0.01)
    last_poke = time.monotonic()
    assert light and full == []  # before: no step at all during the burst
    assert follower.settle(timeout=10)
    assert len(full) == 1 and full[0] >= last_poke + 0.2
    follower.stop()
