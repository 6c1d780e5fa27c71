"""A private PostgreSQL 15 server for the test session, and a fresh database per test.

The server is this session's own: `initdb` into a temp directory, a free local
port, its unix socket in that directory, stopped and deleted at the end, also
when the run is stopped (Ctrl-C, or SIGTERM, which `conftest.py` turns into the
same interrupt) or the interpreter exits without a teardown. Nothing needs to
run beforehand; only Debian's `postgresql-15` package must be installed
(`apt-get install postgresql-15`). Missing binaries fail the tests that need them
with that instruction, never skip them.

    with PostgresServer() as server:
        with psycopg.connect(server.create_database("demo")) as conn:
            conn.execute("SELECT 1").fetchone()  # (1,)

The server refuses to run as root, so when the tests do (as in CI containers)
`initdb` and `postgres` run as the `postgres` user the package creates, through
`runuser`, in a directory handed to that user.

Its default collation is ICU's `en-US`, which ignores punctuation when it sorts:
SQL that relies on byte order (namespace ranges) must say `COLLATE "C"`, and a
test on this server fails when it does not.
"""

from __future__ import annotations

import atexit
import contextlib
import itertools
import os
import pwd
import shutil
import signal
import socket
import subprocess
import tempfile
import threading
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import psycopg
import pytest
from psycopg_pool import ConnectionPool

__all__ = ["PlanLog", "PostgresServer", "explained_pool", "pg_database", "pg_server"]

BIN_DIR = Path(os.environ.get("CHRONOMEM_PG_BIN", "/usr/lib/postgresql/15/bin"))
SERVER_USER = "postgres"  # the account Debian's package creates
SUPERUSER = "chronomem"  # the database role the tests connect as


class PostgresServer:
    """A throwaway PostgreSQL server; `start()` it (or use `with`), then `stop()`.

    Args:
        bin_dir: Where `initdb`, `pg_ctl` and `postgres` are.
        durable: Keep `fsync` on. Off by default: these tests check transactions,
            not power loss, and fsync on a shared CI disk only slows them down.

    Raises:
        RuntimeError: On `start()`, if the binaries are missing (the message says
            what to install), or the server cannot be made or started (the
            message holds its log); on `restart()`, if it cannot be stopped
            or started again.
    """

    def __init__(self, bin_dir: Path = BIN_DIR, *, durable: bool = False) -> None:
        self.bin_dir = bin_dir
        self.durable = durable
        self.root: Path | None = None
        self.port = 0
        self._names = itertools.count(1)

    @property
    def data(self) -> Path:
        assert self.root is not None, "start() the server first"
        return self.root / "data"

    @property
    def log(self) -> Path:
        assert self.root is not None, "start() the server first"
        return self.root / "server.log"

    def conninfo(self, dbname: str = "postgres") -> str:
        """A libpq connection string for `dbname`, over the unix socket."""
        assert self.root is not None, "start() the server first"
        return f"host={self.root} port={self.port} user={SUPERUSER} dbname={dbname}"

    def start(self) -> PostgresServer:
        missing = [
            name
            for name in ("initdb", "pg_ctl", "postgres")
            if not (self.bin_dir / name).is_file()
        ]
        if missing:
            raise RuntimeError(
                f"PostgreSQL 15 is not installed ({', '.join(missing)} missing in "
                f"{self.bin_dir}): run `apt-get install postgresql-15`, or point "
                "CHRONOMEM_PG_BIN at a directory holding its binaries"
            )
        self.root = Path(tempfile.mkdtemp(prefix="chronomem-pg-"))
        atexit.register(self.stop)  # when no teardown runs (an interrupted setup)
        try:
            self._hand_over(self.root)
            self.port = _free_port()
            self._run(
                "initdb",
                "-D", str(self.data),
                "-U", SUPERUSER,
                "--auth=trust",
                "--encoding=UTF8",
                "--locale=C.UTF-8",
                "--locale-provider=icu",
                "--icu-locale=en-US",
            )  # fmt: skip
            self._pg_ctl_start()
        except BaseException:  # an interrupt too: `with` would not call __exit__
            self.stop()
            raise
        return self

    def _pg_ctl_start(self) -> None:
        options = [
            f"-p {self.port}",
            f"-k {self.root}",
            "-c listen_addresses=127.0.0.1",
            "-c max_connections=100",
        ]
        if not self.durable:
            options += ["-c fsync=off", "-c full_page_writes=off"]
        self._run(
            "pg_ctl", "start", "-w", "-t", "60",
            "-D", str(self.data),
            "-l", str(self.log),
            "-o", " ".join(options),
        )  # fmt: skip

    def restart(self, *, down: float = 0.0) -> None:
        """Stop the server as an operator's restart does (`pg_ctl stop -m
        fast`: every session is ended and its open transaction rolled back),
        stay down `down` seconds, and start it again on the same data and
        port. Clients see their connections drop, then the server return."""
        self._run("pg_ctl", "stop", "-w", "-m", "fast", "-D", str(self.data))
        time.sleep(down)
        self._pg_ctl_start()

    def stop(self) -> None:
        """Stop the server (fast shutdown) and delete its directory.

        A second Ctrl-C or SIGTERM waits until both are done, so stopping
        twice leaves nothing behind either.
        """
        if self.root is None:
            return
        with _interrupts_held():
            atexit.unregister(self.stop)
            try:
                if (self.data / "postmaster.pid").exists():
                    self._run(
                        "pg_ctl", "stop", "-w", "-m", "fast", "-D", str(self.data)
                    )  # fmt: skip
            finally:
                shutil.rmtree(self.root, ignore_errors=True)
                self.root = None

    def create_database(self, prefix: str = "test") -> str:
        """A new empty database; returns its connection string."""
        name = f"{prefix}_{next(self._names)}"
        with psycopg.connect(self.conninfo(), autocommit=True) as conn:
            conn.execute(f'CREATE DATABASE "{name}"')
        return self.conninfo(name)

    def __enter__(self) -> PostgresServer:
        return self.start()

    def __exit__(self, *exc: object) -> None:
        self.stop()

    def _hand_over(self, path: Path) -> None:
        """Give `path` to the account the server runs as (root may not run it)."""
        if os.geteuid() != 0:
            return
        try:
            account = pwd.getpwnam(SERVER_USER)
        except KeyError:
            raise RuntimeError(
                "PostgreSQL refuses to run as root and there is no "
                f"{SERVER_USER!r} user to run it as: install postgresql-15 "
                "(its package creates the user) or run the tests as another user"
            ) from None
        os.chown(path, account.pw_uid, account.pw_gid)

    def _run(self, program: str, *args: str) -> None:
        command = [str(self.bin_dir / program), *args]
        if os.geteuid() == 0:
            command = ["runuser", "-u", SERVER_USER, "--", *command]
        done = subprocess.run(
            command, capture_output=True, text=True, timeout=120, check=False
        )
        if done.returncode != 0:
            server_log = self.log.read_text() if self.log.exists() else ""
            raise RuntimeError(
                f"{program} failed ({done.returncode}):\n{done.stdout}{done.stderr}"
                f"{server_log}"
            )


class PlanLog:
    """What the server logged from a mark on: with `explained_pool`, the plan of
    every statement run since (`auto_explain`), each after a `Query Text: `."""

    def __init__(self, server: PostgresServer) -> None:
        self.server = server
        self.mark()

    def mark(self) -> None:
        """Start here: what the server logged before is not read."""
        self._start = self.server.log.stat().st_size

    def read(self) -> str:
        """Everything logged since the mark."""
        with self.server.log.open() as log:
            log.seek(self._start)
            return log.read()


@contextlib.contextmanager
def explained_pool(
    server: PostgresServer, url: str, *, nested: bool = False
) -> Iterator[tuple[ConnectionPool[Any], PlanLog]]:
    """A one-connection autocommit pool on `url` (a database of `server`) whose
    every statement the server logs with its plan (`auto_explain`), also the
    statements a function runs when `nested`; and that log, read from the
    pool's opening on. The pool is closed on leaving.

        with explained_pool(pg_server, url) as (pool, plans):
            with ChronoStore.from_pool(pool) as store:
                store.get(("users",), "a")
        assert "Query Text: " in plans.read()
    """

    def explaining(conn: psycopg.Connection[Any]) -> None:
        conn.execute("LOAD 'auto_explain'")
        conn.execute("SET auto_explain.log_min_duration = 0")
        if nested:
            conn.execute("SET auto_explain.log_nested_statements = on")

    plans = PlanLog(server)
    pool: ConnectionPool[Any] = ConnectionPool(
        url,
        min_size=1,
        max_size=1,
        kwargs={"autocommit": True},
        configure=explaining,
        open=True,
    )
    try:
        yield pool, plans
    finally:
        pool.close()


@contextlib.contextmanager
def _interrupts_held() -> Iterator[None]:
    """Hold SIGINT and SIGTERM back (delivered on leaving) in the main thread."""
    held = {signal.SIGINT, signal.SIGTERM}
    if threading.current_thread() is not threading.main_thread():
        yield
        return
    before = signal.pthread_sigmask(signal.SIG_BLOCK, held)
    try:
        yield
    finally:
        signal.pthread_sigmask(signal.SIG_SETMASK, before)


def _free_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return int(sock.getsockname()[1])


@pytest.fixture(scope="session")
def pg_server() -> Iterator[PostgresServer]:
    """The session's PostgreSQL server; fails (never skips) when it cannot start."""
    with PostgresServer() as server:
        yield server


@pytest.fixture
def pg_database(pg_server: PostgresServer) -> str:
    """A fresh database on the session's server, as a connection string."""
    return pg_server.create_database()
