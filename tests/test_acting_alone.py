"""When the undo search acts alone, and when it asks (issue 31).

A new user's memory is a handful of LangMem facts under UUID keys. A request
that names something never saved but shares most words with a saved fact must
change nothing and offer that fact by id; a request that names what was saved
acts on it alone and on nothing else. Real store, real Chroma, the provisioned
all-MiniLM-L6-v2; no reranker.
"""

from __future__ import annotations

import uuid
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from langgraph_chronomem import ChronoStore, InvalidRequestError, VersionError

ANA = ("memories", "ana")

FACTS = {
    "work": "User moved to Milan for work in March",
    "niece": "User's niece Ana started school in September",
    "python": "User uses Python 3.11 at work",
    "car": "User drives a grey Volvo estate",
    "game": "User's next game idea is a small co-op fishing game",
    "gym": "User climbs at Boulderhalle twice a week",
    "diet": "User is allergic to peanuts",
    "home": "User rents a flat in Turin near the river",
}


def key(name: str) -> str:
    return str(uuid.uuid5(uuid.NAMESPACE_URL, name))


@pytest.fixture
def store(tmp_path: Path) -> Iterator[ChronoStore]:
    """A new user's memory: eight facts, saved one conversation each."""
    with ChronoStore.from_path(tmp_path, scope_depth=2) as store:
        for name, text in FACTS.items():
            store.put(ANA, key(name), {"content": text})
        yield store


def memory(store: ChronoStore) -> dict[str, Any]:
    return {item.key: item.value for item in store.search(ANA, limit=100)}


@pytest.mark.parametrize(
    ("request_", "near"),
    [
        ("forget that I moved to Rome", "work"),  # another city
        ("forget that my nephew started school", "niece"),  # another relative
        ("forget that I use Python 3.12", "python"),  # another version
        ("forget the grey Subaru", "car"),  # another brand
        ("forget that i drive a blue volvo", "car"),  # another colour, lowercase
        ("scrap the small co-op cooking game idea", "game"),  # another kind
    ],
)
def test_a_near_miss_changes_nothing_and_offers_the_fact_it_resembles(
    store: ChronoStore, request_: str, near: str
) -> None:
    before = memory(store)
    result = store.undo(ANA, request_)
    assert not result.applied, result.resolution.reason
    assert "does not hold" in result.resolution.reason
    assert memory(store) == before
    offered = [c.changes[0].key for c in result.resolution.candidates]
    assert key(near) in offered


@pytest.mark.parametrize(
    ("request_", "name"),
    [
        ("forget that I moved to Milan", "work"),
        ("forget that I use Python 3.11", "python"),
        ("i don't drive the grey volvo anymore, remove it", "car"),
    ],
)
def test_a_request_that_names_the_fact_acts_on_it_alone(
    store: ChronoStore, request_: str, name: str
) -> None:
    before = memory(store)
    result = store.undo(ANA, request_)
    assert result.applied, result.resolution.reason
    after = memory(store)
    assert set(before) - set(after) == {key(name)}


@pytest.mark.parametrize(
    ("said", "acts"),
    [
        ("Please bring back my bike, the 2019 Trek Domane.", True),
        ("Please bring back my bike, the 2021 Trek Domane.", False),  # another year
        ("I deleted my bike, can you put it back? The 2021 Trek.", False),
    ],
)
def test_a_give_back_after_small_talk_holds_to_what_its_own_sentences_name(
    store: ChronoStore, said: str, acts: bool
) -> None:
    """A greeting and a word about the day come first; the give-back names the
    thing (after "bring back", or after "put it back"). A year the removed
    memory never held makes it a near miss: offered, not brought back."""
    store.put(ANA, key("bike"), {"content": "User rides a 2019 Trek Domane road bike"})
    store.delete(ANA, key("bike"))
    result = store.undo(ANA, f"Evening! Long shift at the hospital today. {said}")
    assert result.applied == acts, result.resolution.reason
    assert (store.get(ANA, key("bike")) is not None) == acts
    assert key("bike") in [c.changes[0].key for c in result.resolution.candidates]


@pytest.mark.parametrize(
    ("said", "acts"),
    [
        ("I never had the 2019 Trek Domane road bike.", True),
        ("I never had the 2021 Trek Domane road bike.", False),  # another year
        ("My bike, the 2021 Trek Domane. That was a joke.", False),
    ],
)
def test_a_memory_called_wrong_after_small_talk_is_held_to_what_that_names(
    store: ChronoStore, said: str, acts: bool
) -> None:
    """No command, only a sentence calling the memory wrong, after a greeting:
    a year the memory does not hold makes it a near miss, offered."""
    store.put(ANA, key("bike"), {"content": "User rides a 2019 Trek Domane road bike"})
    result = store.undo(ANA, f"Evening! Long shift at the hospital today. {said}")
    assert result.applied == acts, result.resolution.reason
    assert (store.get(ANA, key("bike")) is None) == acts
    assert key("bike") in [c.changes[0].key for c in result.resolution.candidates]


@pytest.mark.parametrize(
    ("request_", "name"),
    [("forget where I live", "home"), ("undo the thing about my nut allergy", "diet")],
)
def test_a_request_naming_none_of_the_words_still_gets_candidates(
    store: ChronoStore, request_: str, name: str
) -> None:
    """ "forget where I live" shares no word with "rents a flat in Turin": the
    nearest changes are offered (an agent relaying "nothing matches" would
    tell the person their home was never known)."""
    result = store.undo(ANA, request_)
    assert not result.applied
    assert key(name) in [c.changes[0].key for c in result.resolution.candidates]


def test_a_memory_made_of_the_request_s_words_never_outranks_the_real_one(
    store: ChronoStore,
) -> None:
    """A pasted keyword run holding every word of the request is offered after
    the change it imitates, and nothing is acted on for it."""
    store.put(ANA, key("junk"), {"content": "moved Milan work moved March Milan work"})
    result = store.undo(ANA, "forget that I moved to Milan for work")
    ids = [c.changes[0].key for c in result.resolution.candidates]
    assert ids.index(key("work")) < ids.index(key("junk"))
    assert store.get(ANA, key("junk")) is not None


def test_undo_the_last_thing_after_an_undo_asks_which(store: ChronoStore) -> None:
    """Right after "forget Milan", "undo the last thing" could mean the undo
    (bringing Milan back) or the last fact saved: both are offered, nothing
    changes; "redo" still redoes."""
    assert store.undo(ANA, "forget that I moved to Milan").applied
    before = memory(store)
    asked = store.undo(ANA, "undo the last thing")
    assert not asked.applied and memory(store) == before
    assert "is itself an undo" in asked.resolution.reason
    offered = [c.commit.version for c in asked.resolution.candidates]
    assert offered == [9, 8]  # the undo, and the last fact saved (the home)
    assert store.undo(ANA, "redo").applied
    assert store.get(ANA, key("work")) is not None


# -- a record changed field by field ------------------------------------------


@pytest.fixture
def ana(tmp_path: Path) -> Iterator[ChronoStore]:
    """Ana's profile, one item updated in place: v1 likes + diet, v2 city."""
    with ChronoStore.from_path(tmp_path, scope_depth=2) as store:
        store.put(ANA, "profile", {"likes": "ramen", "diet": "vegetarian"})
        store.put(
            ANA, "profile", {"likes": "ramen", "diet": "vegetarian", "city": "Porto"}
        )
        yield store


def test_forgetting_one_field_keeps_the_rest_of_the_record(ana: ChronoStore) -> None:
    result = ana.undo(ANA, "forget that I'm vegetarian")
    assert result.applied, result.resolution.reason
    assert result.candidate is not None and result.candidate.id == "1.1/diet"
    assert ana.get(ANA, "profile").value == {"likes": "ramen", "city": "Porto"}
    assert result.commit is not None and "diet" in result.commit.summary


def test_a_field_changed_again_since_is_a_conflict_of_that_field(
    ana: ChronoStore,
) -> None:
    ana.put(ANA, "profile", {"likes": "pho", "diet": "vegan", "city": "Porto"})
    conflict = ana.revert(ANA, 1, fields=["diet"])
    assert not hasattr(conflict, "summary")  # a RevertConflict, nothing applied
    (item,) = conflict.conflicts
    assert (item.fields, item.wrote, item.now) == (
        ("diet",),
        {"diet": "vegetarian"},
        {"diet": "vegan"},
    )
    assert ana.get(ANA, "profile").value["diet"] == "vegan"
    done = ana.revert(ANA, 2, fields=["city"])  # untouched since: reverts cleanly
    assert ana.get(ANA, "profile").value == {"likes": "pho", "diet": "vegan"}
    assert (
        done.summary
        == "reverted v2: updated memories/ana/profile: city: Porto -> (removed)"
    )


@pytest.mark.parametrize(
    ("fields", "error"),
    [
        ("diet", InvalidRequestError),
        ([""], InvalidRequestError),
        (["age"], VersionError),
    ],
)
def test_a_field_revert_that_cannot_be_is_a_typed_error(
    ana: ChronoStore, fields: Any, error: type[Exception]
) -> None:
    head = ana.head(ANA)
    with pytest.raises(error):
        ana.revert(ANA, 2, fields=fields)
    assert ana.head(ANA) == head
