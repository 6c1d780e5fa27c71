"""Vectors follow the log in a background thread: writes do not wait for Chroma,
searches still see every write that returned, and the first undo after a burst
embeds only its own scope's changes.

The follower is held back the way it would be in a real store under load: its
model calls (the change vectors it embeds) block, or fail, in its own thread,
while the caller's thread goes on.
"""

from __future__ import annotations

import logging
import threading
import time
from collections.abc import Callable
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path
from typing import Any

import pytest
from langchain_core.embeddings import Embeddings

from langgraph_chronomem import ChronoStore
from langgraph_chronomem.errors import StorageError
from langgraph_chronomem.search.vectors import CHANGES
from tests.test_search import bag_of_words, chroma, named

ALICE = ("memories", "alice")


class HeldBack(Embeddings):
    """Bag-of-words vectors; in the follower's thread, calls wait for `release`
    (or fail, with `fail=True`; in every thread, with `everywhere=True`)."""

    model = "held-back"

    def __init__(self, *, fail: bool = False) -> None:
        self.fail = fail
        self.everywhere = False
        self.release = threading.Event()
        self.follower_calls = 0

    def embed_documents(self, texts: list[str]) -> list[list[float]]:
        if self.everywhere:
            raise RuntimeError("the model is unavailable")
        if threading.current_thread().name.startswith("chronomem-follow"):
            self.follower_calls += 1
            if self.fail:
                raise RuntimeError("the model is unavailable to the follower")
            assert self.release.wait(timeout=60), "never released"
        return [bag_of_words(t) for t in texts]

    def embed_query(self, text: str) -> list[float]:
        return self.embed_documents([text])[0]


class Interrupting(Embeddings):
    """Bag-of-words vectors; the first call that embeds `text` runs `then`
    first, as if another thread's search came in at that moment."""

    model = "interrupting"

    def __init__(self) -> None:
        self.cue: tuple[str, Callable[[], object]] | None = None

    def embed_documents(self, texts: list[str]) -> list[list[float]]:
        if self.cue is not None and self.cue[0] in texts:
            then, self.cue = self.cue[1], None
            then()
        return [bag_of_words(t) for t in texts]

    def embed_query(self, text: str) -> list[float]:
        return self.embed_documents([text])[0]


@pytest.fixture
def client(tmp_path: Path) -> Any:
    return chroma(tmp_path / "chroma")


def fact(n: int) -> str:
    """A fact of its own words (the toy model sees letters only)."""
    return f"fact {chr(97 + n // 26)}{chr(97 + n % 26)} about alice"


def wait_for_log(caplog: pytest.LogCaptureFixture, words: str) -> None:
    """Wait until a record holding `words` was logged (by any thread)."""
    deadline = time.monotonic() + 60
    while not any(words in r.getMessage() for r in caplog.records):
        assert time.monotonic() < deadline, f"nothing logged {words!r}"
        time.sleep(0.01)


def open_store(root: Path, embed: Embeddings, client: Any) -> ChronoStore:
    index = {"fields": ["text"], "embed": embed, "dims": 64}
    return ChronoStore.from_path(root, scope_depth=2, index=index, chroma_client=client)  # type: ignore[arg-type]


def test_writes_return_while_the_follower_is_busy_and_searches_see_them(
    tmp_path: Path, client: Any
) -> None:
    model = HeldBack()
    with open_store(tmp_path, model, client) as store:
        store.put(ALICE, "home", {"text": "I live in Boston"})
        # the follower is now stuck embedding that change; writes go on
        store.put(ALICE, "pet", {"text": "my cat Tom"})
        store.put(ALICE, "home", {"text": "I moved to Paris"})
        assert not store.wait_for_index(timeout=0.2)
        top = store.search(ALICE, query="moved to Paris", limit=2)[0]
        assert (top.key, top.value["text"]) == ("home", "I moved to Paris")
        assert store.search(ALICE, query="cat", limit=5)[0].key == "pet"
        model.release.set()
        assert store.wait_for_index(timeout=60)
        assert all(p.behind == 0 for p in store.stats().projections)


def test_the_first_undo_embeds_its_own_scope_only(
    tmp_path: Path, client: Any, caplog: pytest.LogCaptureFixture
) -> None:
    model = HeldBack(fail=True)  # the follower never gets a change vector made
    users = [("memories", f"user{i}") for i in range(4)]
    with open_store(tmp_path, model, client) as store:
        for n in range(10):
            for user in users:
                store.put(user, f"note{n}", {"text": f"{user[1]} note number {n}"})
        store.put(ALICE, "home", {"text": "I moved to Paris"})
        wait_for_log(caplog, "lags behind")  # the follower tried, and failed
        resolution = store.resolve(ALICE, "undo my move to Paris")
        assert resolution.best is not None and resolution.best.commit.version == 1
        changes = client.get_collection(named(client, CHANGES))
        scopes = {m["scope"] for m in changes.get(include=["metadatas"])["metadatas"]}
        assert len(scopes) == 1 and changes.count() == 1
        # once the model answers the follower again, every scope catches up
        model.fail = False
        model.release.set()
        store.put(ALICE, "pet", {"text": "my cat Tom"})
        assert store.wait_for_index(timeout=60)
        assert changes.count() == 10 * len(users) + 2
        assert all(p.behind == 0 for p in store.stats().projections)


def test_waiting_for_the_index_does_what_the_failed_follower_left(
    tmp_path: Path, client: Any, caplog: pytest.LogCaptureFixture
) -> None:
    """`wait_for_index` never calls an index that lags caught up: after the
    follower's step failed, the catch-up runs in the caller's thread, and an
    error that stops it there is raised."""
    model = HeldBack(fail=True)
    with open_store(tmp_path, model, client) as store:
        for n in range(40):  # more than one step's worth of commits
            store.put(ALICE, f"k{n}", {"text": fact(n)})
        wait_for_log(caplog, "lags behind")
        assert not store.wait_for_index(timeout=0)  # one step, then out of time
        assert store.wait_for_index(timeout=60)
        assert client.get_collection(named(client, CHANGES)).count() == 40
        assert all(p.behind == 0 for p in store.stats().projections)
        model.everywhere = True
        store.put(ALICE, "pet", {"text": "my cat Tom"}, index=False)
        with pytest.raises(RuntimeError, match="unavailable"):
            store.wait_for_index(timeout=60)
        model.everywhere = False
        assert store.wait_for_index(timeout=60)
        assert all(p.behind == 0 for p in store.stats().projections)


@pytest.mark.parametrize("remake", ["reset", "reindex"])
def test_a_search_while_vectors_are_made_again_keeps_no_half_copy(
    tmp_path: Path, client: Any, remake: str
) -> None:
    """A reset makes the scope's item vectors again, `reindex` all of them. A
    search reading the vectors while they are half made (here: from inside the
    rebuild's own embedding) may miss some that once, but must not keep that
    copy as current: later searches see every item."""
    model = Interrupting()
    bob = ("memories", "bob")
    with open_store(tmp_path, model, client) as store:
        for n in range(3):
            store.put(ALICE, f"k{n}", {"text": fact(n)})
        store.put(ALICE, "k9", {"text": fact(9)})
        store.put(bob, "b", {"text": fact(20)})
        assert store.wait_for_index(timeout=60)
        vectors = store._search.vectors()
        model.cue = (fact(0), lambda: list(vectors.nearest_items((), bag_of_words(""))))
        if remake == "reset":
            store.reset(ALICE, to=3)  # k9 goes; k0..k2 are made again
        else:
            store.delete(ALICE, "k9")
            store.reindex()
        assert store.wait_for_index(timeout=60)
        assert model.cue is None  # the search came in mid-rebuild
        hits = store.search(("memories",), query=fact(0), limit=10)
        assert {(h.namespace[1], h.key) for h in hits} == {
            ("alice", "k0"),
            ("alice", "k1"),
            ("alice", "k2"),
            ("bob", "b"),
        }


def test_close_waits_for_the_step_in_progress_and_reopening_catches_up(
    tmp_path: Path, client: Any, caplog: pytest.LogCaptureFixture
) -> None:
    model = HeldBack()
    store = open_store(tmp_path, model, client)
    for n in range(40):
        store.put(ALICE, f"k{n}", {"text": fact(n)})
    threading.Timer(0.3, model.release.set).start()
    store.close()  # returns once the follower's step ends, with work left over
    answering = HeldBack()
    answering.release.set()
    with (
        caplog.at_level(logging.WARNING),
        open_store(tmp_path, answering, client) as again,
    ):
        found = again.search(ALICE, query=fact(39), limit=1)
        assert found[0].key == "k39" and found[0].score == pytest.approx(1.0)
        assert again.wait_for_index(timeout=60)
        assert all(p.behind == 0 for p in again.stats().projections)
    assert not [r for r in caplog.records if r.levelno >= logging.WARNING]


def test_a_wait_for_the_index_that_close_cuts_short_says_so(
    tmp_path: Path, client: Any
) -> None:
    """A `wait_for_index` in another thread when the store is closed raises:
    the index is not whole, and what it lacks waits for the next open."""
    model = HeldBack()
    store = open_store(tmp_path, model, client)
    for n in range(40):
        store.put(ALICE, f"k{n}", {"text": fact(n)})
    with ThreadPoolExecutor(1) as pool:
        waiting = pool.submit(store.wait_for_index, 60)
        time.sleep(0.3)  # it waits for the follower, which the model holds back
        assert not waiting.done()
        threading.Timer(0.3, model.release.set).start()
        store.close()
        with pytest.raises(StorageError, match="closed"):
            waiting.result()


def test_a_search_never_waits_on_a_writer_that_keeps_writing(
    tmp_path: Path, client: Any
) -> None:
    """A search catches up to the writes made before it, not to a moving end:
    with another thread putting without pause, it still returns."""
    model = HeldBack()
    model.release.set()
    with open_store(tmp_path, model, client) as store:
        stop = threading.Event()

        def keep_writing() -> None:
            n = 0
            while not stop.is_set():
                store.put(("memories", "bob"), f"k{n % 50}", {"text": fact(n % 500)})
                n += 1

        writer = threading.Thread(target=keep_writing)
        store.put(ALICE, "home", {"text": "I moved to Paris"})
        writer.start()
        try:
            found: list[Any] = []
            searcher = threading.Thread(
                target=lambda: found.extend(
                    store.search(ALICE, query="moved to Paris", limit=1)
                    for _ in range(5)
                )
            )
            searcher.start()
            searcher.join(timeout=60)
            assert not searcher.is_alive(), "a search chased the writer's commits"
        finally:
            stop.set()
            writer.join()
        assert [hits[0].key for hits in found] == ["home"] * 5


def test_a_background_follower_waits_for_a_burst_of_writes_to_end() -> None:
    """A store's follower takes no step while writes keep poking it (its
    transactions and model would slow them on a busy machine), and catches
    up once they pause; `settle` waits for that step."""
    from langgraph_chronomem.search.follow import Follower

    steps: list[float] = []

    def step() -> bool:
        steps.append(time.monotonic())
        return False

    follower = Follower(step, name="chronomem-follow-burst", background=True)
    end = time.monotonic() + 1.0
    while time.monotonic() < end:
        follower.poke()
        time.sleep(0.01)
    last_poke = time.monotonic()
    assert steps == []  # the code before stepped all through the burst
    assert follower.settle(timeout=10)
    assert len(steps) == 1 and steps[0] >= last_poke + 0.2
    follower.stop()
