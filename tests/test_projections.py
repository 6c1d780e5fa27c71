"""The vector projections heal: a crash, a damaged folder or a second process never
leaves a store that cannot open or that quietly answers from an empty index.

Real child processes are killed with SIGKILL inside `reindex`; a real Chroma
folder is damaged; a real second process holds the embedded index.
"""

from __future__ import annotations

import logging
import os
import signal
import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path

import pytest

from langgraph_chronomem import ChronoStore
from langgraph_chronomem.errors import ConfigError
from tests import _projection_child as child

REPO = Path(__file__).resolve().parent.parent
ENV = {
    **os.environ,
    "PYTHONPATH": os.pathsep.join(
        filter(None, [str(REPO), os.environ.get("PYTHONPATH")])
    ),
}


def open_store(root: Path) -> ChronoStore:
    return ChronoStore.from_path(root, scope_depth=2, index=child.INDEX)  # type: ignore[arg-type]


def spawn(*args: str) -> subprocess.Popen[str]:
    return subprocess.Popen(
        [sys.executable, "-m", "tests._projection_child", *args],
        cwd=REPO,
        env=ENV,
        stdin=subprocess.PIPE,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
    )


def assert_searches_every_item(store: ChronoStore) -> None:
    """Every HEAD item is found by meaning, as itself, first."""
    for i in (0, 1, 150, child.COMMITS - 1):
        found = store.search(child.ALICE, query=child.text(i), limit=50)
        assert f"k{i}" in {item.key for item in found if item.score > 0.999}


@pytest.mark.parametrize("point", child.KILL_POINTS)
def test_a_kill_inside_reindex_leaves_the_index_behind_not_empty(
    tmp_path: Path, point: str
) -> None:
    proc = spawn(str(tmp_path), "reindex", point)
    _, err = proc.communicate(timeout=300)
    assert proc.returncode == -signal.SIGKILL, err
    with open_store(tmp_path) as store:  # a search catches the items up first
        assert_searches_every_item(store)
        assert all(
            p.behind == 0 for p in store.stats().projections if "items" in p.name
        )


def test_a_damaged_vector_folder_is_moved_aside_and_rebuilt(
    tmp_path: Path, caplog: pytest.LogCaptureFixture
) -> None:
    with open_store(tmp_path) as store:
        for i in range(child.COMMITS):
            store.put(child.ALICE, f"k{i}", {"text": child.text(i)})
    (tmp_path / "chroma" / "chroma.sqlite3").write_bytes(os.urandom(4096))
    with caplog.at_level(logging.WARNING), open_store(tmp_path) as store:
        assert_searches_every_item(store)
        assert store.get(child.ALICE, "k7") is not None
    assert "rebuilding it from the log" in caplog.text
    assert [p.name for p in tmp_path.iterdir() if p.name.startswith("chroma.broken-")]


@pytest.fixture
def held(tmp_path: Path) -> Iterator[subprocess.Popen[str]]:
    """Another process with the store's embedded index open."""
    proc = spawn(str(tmp_path), "hold")
    assert proc.stdout is not None and proc.stdout.readline().strip() == "ready"
    yield proc
    proc.kill()
    proc.wait()
    for pipe in (proc.stdin, proc.stdout, proc.stderr):
        if pipe is not None:
            pipe.close()


def test_a_second_process_is_refused_the_embedded_index_with_the_way_that_works(
    tmp_path: Path, held: subprocess.Popen[str]
) -> None:
    with pytest.raises(ConfigError, match=r"chroma run --path .*chroma_url="):
        open_store(tmp_path)
    # plain reads of the log need no vectors, and still work
    with ChronoStore.from_path(tmp_path) as store:
        assert store.head(child.ALICE) == 0
    assert held.stdin is not None
    held.stdin.close()
    assert held.wait(timeout=60) == 0
    with open_store(tmp_path) as store:  # the holder is gone: the index is free
        store.put(child.ALICE, "k1", {"text": child.text(1)})
        assert store.search(child.ALICE, query=child.text(1), limit=1)[0].key == "k1"


def test_stores_of_one_process_share_the_embedded_index(tmp_path: Path) -> None:
    with open_store(tmp_path) as first, open_store(tmp_path) as second:
        first.put(child.ALICE, "k1", {"text": child.text(1)})
        assert second.search(child.ALICE, query=child.text(1), limit=1)[0].key == "k1"
    with open_store(tmp_path) as again:  # both closed: nothing is left held
        assert again.search(child.ALICE, query=child.text(1), limit=1)[0].key == "k1"
