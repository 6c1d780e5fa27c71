"""Bad input gets a clear, typed error and changes nothing."""

from __future__ import annotations

import re
import uuid
from datetime import datetime, timezone
from typing import Any

import pytest
from langgraph.store.base import PutOp

from langgraph_chronomem import ChronoStore, InvalidValueError
from langgraph_chronomem.errors import ConfigError
from langgraph_chronomem.search.resolve import ResolverConfig

ALICE = ("memories", "alice")


@pytest.mark.parametrize(
    "value",
    [
        "just text",
        ["a", "list"],
        42,
        {"score": float("nan")},
        {"nested": {"deep": [1.0, float("inf")]}},
        {1: "int key"},
        {"obj": object()},
    ],
    ids=lambda value: re.sub(r" at 0x[0-9a-f]+", "", repr(value)),  # same id per worker
)
def test_values_that_are_not_json_objects_are_refused(
    store: ChronoStore, value: Any
) -> None:
    store.put(ALICE, "kept", {"v": 1})
    with pytest.raises(InvalidValueError):
        store.batch([PutOp(ALICE, "other", {"v": 2}), PutOp(ALICE, "bad", value)])
    assert store.head(ALICE) == 1
    assert [i.key for i in store.search(ALICE)] == ["kept"]


def test_error_names_where_the_bad_float_is(store: ChronoStore) -> None:
    with pytest.raises(InvalidValueError, match=r"nested\.deep\[1\]"):
        store.put(ALICE, "bad", {"nested": {"deep": [1.0, float("inf")]}})


def test_dates_and_uuids_are_stored_like_langgraphs_own_stores(
    store: ChronoStore,
) -> None:
    when = datetime(2024, 2, 29, 12, 0, tzinfo=timezone.utc)
    ident = uuid.UUID("12345678-1234-5678-1234-567812345678")
    store.put(ALICE, "a", {"when": when, "id": ident})
    assert store.get(ALICE, "a").value == {
        "when": "2024-02-29T12:00:00+00:00",
        "id": "12345678-1234-5678-1234-567812345678",
    }


@pytest.mark.parametrize("ttl", [0, -5, float("nan"), "10", True])
def test_bad_ttl_is_refused(store: ChronoStore, ttl: Any) -> None:
    with pytest.raises(InvalidValueError):
        store.batch([PutOp(ALICE, "a", {"v": 1}, ttl=ttl)])
    assert store.head(ALICE) == 0


def test_non_string_key_is_refused(store: ChronoStore) -> None:
    with pytest.raises(InvalidValueError):
        store.batch([PutOp(ALICE, 7, {"v": 1})])  # type: ignore[arg-type]
    assert store.head(ALICE) == 0


@pytest.mark.parametrize("page", [{"limit": -1}, {"offset": -3}, {"limit": 2.5}])
def test_bad_paging_is_refused(store: ChronoStore, page: dict[str, Any]) -> None:
    with pytest.raises(ValueError):
        store.search(ALICE, **page)


def test_unknown_op_is_refused(store: ChronoStore) -> None:
    with pytest.raises(TypeError, match="not a store op"):
        store.batch([("put", ALICE, "a")])  # type: ignore[list-item]


@pytest.mark.parametrize(
    "knobs",
    [
        {"retrievers": frozenset()},
        {"retrievers": frozenset({"bm25", "splade"})},
        {"rrf_weights": (1.0,)},
        {"rrf_weights": (1.0, -0.5)},
        {"rrf_weights": (0.0, 0.0)},
    ],
)
def test_bad_resolver_knobs_are_refused(knobs: dict[str, Any]) -> None:
    with pytest.raises(ConfigError):
        ResolverConfig(**knobs)


def test_rrf_weights_from_json_become_a_tuple() -> None:
    assert ResolverConfig(rrf_weights=[1, 0.5]).rrf_weights == (1.0, 0.5)  # type: ignore[arg-type]
