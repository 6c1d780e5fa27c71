"""A test that holds the session's PostgreSQL server until it is stopped, for
tests/test_interrupted_run.py: it writes the server's directory to
`$CHRONOMEM_PG_CHILD_READY` and waits to be interrupted.

Not collected by default (no `test_` prefix); run as `pytest tests/_pg_child.py`.
"""

from __future__ import annotations

import os
import time
from pathlib import Path

from testsupport.pg import PostgresServer, pg_server  # noqa: F401  (fixture)


def test_hold_the_server(pg_server: PostgresServer) -> None:  # noqa: F811
    pg_server.create_database()
    assert pg_server.root is not None
    Path(os.environ["CHRONOMEM_PG_CHILD_READY"]).write_text(str(pg_server.root))
    time.sleep(120)
