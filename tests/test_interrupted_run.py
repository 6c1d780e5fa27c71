"""A test run stopped midway (Ctrl-C, or SIGTERM from a CI timeout or `kill`)
leaves no PostgreSQL server running and no temporary directory behind.

A real pytest run of `tests/_pg_child.py` starts the session's server
(`testsupport/pg.py`), then is sent the signal while its test holds the server.
"""

from __future__ import annotations

import os
import shutil
import signal
import subprocess
import sys
import tempfile
import time
from collections.abc import Iterator
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parent.parent


@pytest.fixture
def scratch() -> Iterator[Path]:
    """The child's TMPDIR: a fresh directory the server's account can enter
    (pytest's own temp folders are private to this user)."""
    path = Path(tempfile.mkdtemp(prefix="chronomem-interrupt-"))
    path.chmod(0o755)
    yield path
    for pid in _processes_under(path):  # what a failing run left: end it here
        os.kill(pid, signal.SIGKILL)
    shutil.rmtree(path, ignore_errors=True)


def _processes_under(path: Path) -> list[int]:
    """The live processes whose command line names `path` (a server's -D)."""
    found = []
    for proc in Path("/proc").glob("[0-9]*"):
        try:
            cmdline = (proc / "cmdline").read_bytes()
        except OSError:  # ended meanwhile
            continue
        if os.fsencode(path) in cmdline:
            found.append(int(proc.name))
    return found


@pytest.mark.parametrize("sig", [signal.SIGINT, signal.SIGTERM], ids=lambda s: s.name)
@pytest.mark.parametrize("when", ["while-starting", "while-testing"])
def test_a_stopped_run_stops_its_server_and_deletes_its_directory(
    sig: signal.Signals, when: str, scratch: Path, tmp_path: Path
) -> None:
    """The signal goes to the run's process group, as Ctrl-C in a terminal and
    most CI timeouts send it: either while `initdb` makes the server or while a
    test uses it."""
    ready = tmp_path / "ready"
    env = {**os.environ, "TMPDIR": str(scratch), "CHRONOMEM_PG_CHILD_READY": str(ready)}
    command = [sys.executable, "-m", "pytest", "tests/_pg_child.py", "-q"]
    child = subprocess.Popen(
        [*command, "-p", "no:cacheprovider"],
        cwd=ROOT,
        env=env,
        stdout=subprocess.PIPE,
        stderr=subprocess.STDOUT,
        text=True,
        start_new_session=True,
    )
    started = ready if when == "while-testing" else None
    try:
        deadline = time.monotonic() + 120
        while child.poll() is None and not (
            started.exists() if started else any(scratch.glob("chronomem-pg-*"))
        ):
            assert time.monotonic() < deadline, f"nothing started in 120 s ({when})"
            time.sleep(0.02)
        assert child.poll() is None, child.communicate()[0]
        if started:
            assert _processes_under(scratch), "the test holds a running server"
        os.killpg(child.pid, sig)
        out, _ = child.communicate(timeout=60)
    finally:
        if child.poll() is None:
            os.killpg(child.pid, signal.SIGKILL)
            child.wait()
    assert child.returncode != 0, out  # stopped, not run to the end
    assert _processes_under(scratch) == []
    assert list(scratch.iterdir()) == [], out
