"""The model-based test (tests/test_properties.py) on PostgreSQL.

The same state machine, the same `ScopeModel`, the same checks after every step;
only the store differs: `ChronoStore.from_conn_string` on a fresh database of the
private server (testsupport/pg.py) per example, and "reopen" opens a new pool on it.
Fewer examples than on SQLite (12 of 100, ~50 s here): each one creates a
database, and a step costs round trips to the server.
"""

from __future__ import annotations

from hypothesis import HealthCheck, settings
from hypothesis.stateful import run_state_machine_as_test

from langgraph_chronomem import ChronoStore
from tests.test_postgres_store import _url
from tests.test_properties import ChronoStoreMachine
from testsupport.pg import PostgresServer, pg_server  # noqa: F401  (fixture)


def test_random_histories_match_the_model_on_postgres(
    pg_server: PostgresServer,  # noqa: F811
) -> None:
    class OnPostgres(ChronoStoreMachine):
        def __init__(self) -> None:
            self.url = _url(pg_server.create_database("props"))
            super().__init__()

        def _open(self) -> ChronoStore:
            return ChronoStore.from_conn_string(self.url, scope_depth=2)

    run_state_machine_as_test(
        OnPostgres,
        settings=settings(
            max_examples=12,
            stateful_step_count=50,
            deadline=None,
            derandomize=True,
            database=None,
            suppress_health_check=[HealthCheck.too_slow],
        ),
    )
