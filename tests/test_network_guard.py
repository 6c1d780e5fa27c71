import socket

import pytest

from tests.conftest import NetworkAccessError


def test_connecting_to_another_machine_fails_loudly() -> None:
    with (
        pytest.raises(NetworkAccessError),
        socket.create_connection(("203.0.113.1", 80), timeout=1),
    ):
        pass


def test_resolving_a_remote_name_fails_loudly() -> None:
    with pytest.raises(NetworkAccessError):
        socket.getaddrinfo("pypi.org", 443)


def test_loopback_stays_usable() -> None:
    with socket.socket() as server:
        server.bind(("127.0.0.1", 0))
        server.listen()
        with socket.create_connection(server.getsockname(), timeout=1):
            pass
