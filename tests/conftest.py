"""Shared fixtures, and a guard that fails any test reaching for the network.

The project must run offline (models come from PyPI packages, see
`langgraph_chronomem.models`), so a connection to anything but this machine is a
bug: it raises `NetworkAccessError` instead of hanging or silently succeeding.
"""

from __future__ import annotations

import ipaddress
import os
import signal
import socket
from collections.abc import AsyncIterator, Iterator
from pathlib import Path
from typing import Any

import pytest

from langgraph_chronomem import ChronoStore

os.environ.setdefault("HF_HUB_OFFLINE", "1")
os.environ.setdefault("ANONYMIZED_TELEMETRY", "False")
# ONNX Runtime's native telemetry uploads in the background; it reads this at import.
os.environ.setdefault("ORT_DISABLE_TELEMETRY", "1")
# Models come from `python -m langgraph_chronomem.models provision`, never a download.
os.environ.setdefault("CHRONOMEM_OFFLINE", "1")


def _interrupt(signum: int, frame: object) -> None:
    raise KeyboardInterrupt(f"stopped by signal {signal.Signals(signum).name}")


# SIGTERM (a CI timeout, `kill`) ends Python at once, skipping every teardown, so a
# test PostgreSQL server (testsupport/pg.py) kept running and temp directories stayed.
# As an interrupt, pytest stops the run the way Ctrl-C does and tears down.
if signal.getsignal(signal.SIGTERM) is signal.SIG_DFL:
    signal.signal(signal.SIGTERM, _interrupt)


class NetworkAccessError(RuntimeError):
    """A test tried to reach another machine."""


_real_connect = socket.socket.connect
_real_connect_ex = socket.socket.connect_ex
_real_getaddrinfo = socket.getaddrinfo
_LOCAL_NAMES = {"localhost", "127.0.0.1", "::1", "", None}


def _is_local(address: Any) -> bool:
    if isinstance(address, (str, bytes)):  # AF_UNIX path
        return True
    host = address[0]
    if host in _LOCAL_NAMES:
        return True
    try:
        return ipaddress.ip_address(host).is_loopback
    except ValueError:
        return False


def _guard(real):  # type: ignore[no-untyped-def]
    def connect(self: socket.socket, address: Any) -> Any:
        if not _is_local(address):
            raise NetworkAccessError(f"test tried to connect to {address!r}")
        return real(self, address)

    return connect


def _guarded_getaddrinfo(host: Any, *args: Any, **kwargs: Any) -> Any:
    if host not in _LOCAL_NAMES and not _is_local((host,)):
        raise NetworkAccessError(f"test tried to resolve {host!r}")
    return _real_getaddrinfo(host, *args, **kwargs)


socket.socket.connect = _guard(_real_connect)  # type: ignore[method-assign]
socket.socket.connect_ex = _guard(_real_connect_ex)  # type: ignore[method-assign]
socket.getaddrinfo = _guarded_getaddrinfo


@pytest.fixture
def store_path(tmp_path: Path) -> Path:
    return tmp_path / "memory"


@pytest.fixture
def store(store_path: Path) -> Iterator[ChronoStore]:
    """A store with one timeline per user: scopes are ("memories", user)."""
    with ChronoStore.from_path(store_path, scope_depth=2) as opened:
        yield opened


@pytest.fixture
async def astore(store_path: Path) -> AsyncIterator[ChronoStore]:
    with ChronoStore.from_path(store_path, scope_depth=2) as opened:
        yield opened
