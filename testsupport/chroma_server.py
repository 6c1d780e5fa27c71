"""A private Chroma server for the tests: `chroma run` on a free local port.

The server is the test session's own: the `chroma` command of the installed
chromadb package, its data in a temp directory, listening on 127.0.0.1 only, and
stopped (and deleted) at the end. It can be stopped and started again on the same
data and port, as a restart in production would, for the fault tests. A server
that does not come up fails the test with its log, never skips it.

    with ChromaServer() as server:
        client = chromadb.HttpClient(host="127.0.0.1", port=server.port)
        server.stop()   # down: calls are refused at once
        server.start()  # up again, same data, same port
"""

from __future__ import annotations

import shutil
import subprocess
import sys
import tempfile
import time
import urllib.error
import urllib.request
from collections.abc import Iterator
from pathlib import Path

import pytest

from testsupport.pg import _free_port

__all__ = ["ChromaServer", "chroma_server"]

CHROMA = Path(sys.executable).with_name("chroma")  # the venv's `chroma` command
HOST = "127.0.0.1"
_DIRECT = urllib.request.build_opener(urllib.request.ProxyHandler({}))  # no proxy


class ChromaServer:
    """A `chroma run` process; `start()` it (or use `with`), `stop()` and
    `start()` it again to restart it on the same data and port, `close()` to end.

    Raises:
        RuntimeError: On `start()`, if the server does not answer its heartbeat
            within `timeout` seconds (the message holds its log).
    """

    def __init__(self, *, timeout: float = 60.0) -> None:
        self.timeout = timeout
        self.root = Path(tempfile.mkdtemp(prefix="chronomem-chroma-"))
        self.port = _free_port()
        self._proc: subprocess.Popen[bytes] | None = None

    @property
    def url(self) -> str:
        """Where the server listens, as `chroma_url=` takes it."""
        return f"http://{HOST}:{self.port}"

    @property
    def pid(self) -> int:
        """The running server's process id (to freeze it with SIGSTOP)."""
        assert self._proc is not None, "start() the server first"
        return self._proc.pid

    @property
    def log(self) -> Path:
        return self.root / "server.log"

    def start(self) -> ChromaServer:
        """Start the server (again) and wait until it answers."""
        assert self._proc is None, "already running"
        with self.log.open("ab") as log:
            self._proc = subprocess.Popen(
                [str(CHROMA), "run", "--path", str(self.root / "data"),
                 "--host", HOST, "--port", str(self.port)],
                stdout=log,
                stderr=subprocess.STDOUT,
                stdin=subprocess.DEVNULL,
            )  # fmt: skip
        deadline = time.monotonic() + self.timeout
        while not self._answers():
            if self._proc.poll() is not None or time.monotonic() > deadline:
                self.stop()
                raise RuntimeError(
                    f"`chroma run` did not come up on port {self.port}:\n"
                    f"{self.log.read_text(errors='replace')}"
                )
            time.sleep(0.05)
        return self

    def stop(self) -> None:
        """Stop the server (SIGTERM, then SIGKILL); its data stays."""
        proc, self._proc = self._proc, None
        if proc is None:
            return
        proc.terminate()
        try:
            proc.wait(timeout=20)
        except subprocess.TimeoutExpired:
            proc.kill()
            proc.wait()

    def close(self) -> None:
        """Stop the server and delete its data."""
        self.stop()
        shutil.rmtree(self.root, ignore_errors=True)

    def _answers(self) -> bool:
        try:
            with _DIRECT.open(f"{self.url}/api/v2/heartbeat", timeout=1) as reply:
                return bool(reply.status == 200)
        except (urllib.error.URLError, OSError):
            return False

    def __enter__(self) -> ChromaServer:
        return self.start()

    def __exit__(self, *exc: object) -> None:
        self.close()


@pytest.fixture
def chroma_server() -> Iterator[ChromaServer]:
    """A Chroma server of the test's own (the fault tests stop and restart it)."""
    with ChromaServer() as server:
        yield server
