"""The agent-memory data set: users' memory histories and the requests about them.

Written for this project (no third-party data). Each user is one JSON file under
`data/users/`: a plain profile and a list of events, each a commit of one or more
writes in LangMem's layout (`("memories", <user>)`, a UUID key per memory,
`{"content": "User ..."}` values; a later write to the same memory updates it, a
deletion removes it, and a memory made again after a deletion gets a new key, as
LangMem's `manage_memory` does). Every event and every write carries a *story*:
what happened, in plain words, for the people who wrote the requests.

The requests (`data/requests/<user>.json`) were written by someone who saw only
`account(user)`, the stories, never the memory text. Each names the write it is
about (`ref`, e.g. `maya-007.2`) and what it asks for (`kind`):

- `undo`: forget what that write saved (gold: that change; the version before it);
- `restore`: bring back what that write saved, which was later replaced or
  removed (gold: the change that replaced or removed it);
- `before`: go back to before that write (the version before it);
- `at`: go back to when that write happened (its version);
- `still`: go back to when what that write saved still held (the version before
  the change that replaced it);
- `none`: nothing should change (no `ref`);
- `near_miss`: names something never saved that resembles one saved write (`near`)
  in all but one detail ("forget that I moved to Rome" where Milan was saved):
  nothing should change alone; asking is right.

The blind batteries (`battery-a/`, `battery-b/`, each a data root with `users/`,
`requests/` and `splits.json`) add to each request its `style` (`plain`,
`indirect`, `vague`, `long`) and, for a profile write, the `field` it is about;
their users carry `size` (`small`: a new user's 5-20 memories; `large`: 300+
commits) and are split by `splits.json`.
"""

from __future__ import annotations

import json
import uuid
from collections.abc import Iterable, Sequence
from dataclasses import dataclass
from datetime import datetime, timedelta
from pathlib import Path
from typing import Any

from langgraph.store.base import PutOp

from langgraph_chronomem import ChronoStore

__all__ = [
    "DATA",
    "Gold",
    "Request",
    "User",
    "account",
    "gold_of",
    "ingest",
    "load_requests",
    "load_users",
]

DATA = Path(__file__).resolve().parent / "data"
BATTERIES = {
    "a": Path(__file__).resolve().parent / "battery-a",
    "b": Path(__file__).resolve().parent / "battery-b",
    "c": Path(__file__).resolve().parent / "battery-c",
    "d": Path(__file__).resolve().parent / "battery-d",
    "e": Path(__file__).resolve().parent / "battery-e",
}
KINDS = ("undo", "restore", "before", "at", "still", "none", "near_miss")
STYLES = ("plain", "indirect", "vague", "long")
_KEYS = uuid.UUID("6f1d4c1e-7a2b-4c55-9b0e-3d2f1a8c9e77")  # uuid5 namespace of keys


@dataclass(frozen=True)
class Write:
    """One write of an event: a fact's `content`, a `profile` dict, or, with
    neither, the memory's deletion."""

    ref: str
    handle: str
    content: str | None
    story: str
    profile: dict[str, str] | None = None

    @property
    def deletes(self) -> bool:
        return self.content is None and self.profile is None


@dataclass(frozen=True)
class Event:
    """One commit: who wrote it, when, and its writes."""

    id: str
    at: datetime
    author: str
    story: str
    writes: tuple[Write, ...]


@dataclass(frozen=True)
class User:
    """One user's memory history."""

    user: str
    split: str
    profile: str
    events: tuple[Event, ...]
    size: str = "large"

    @property
    def scope(self) -> tuple[str, str]:
        return ("memories", self.user)

    @property
    def today(self) -> datetime:
        """The day the requests are made: the day after the last event."""
        return self.events[-1].at + timedelta(days=1)

    def writes(self) -> dict[str, tuple[int, Write]]:
        """Every write by ref, with the version its event committed."""
        return {
            w.ref: (version, w)
            for version, event in enumerate(self.events, start=1)
            for w in event.writes
        }


def _time(text: str) -> datetime:
    return datetime.fromisoformat(text.replace("Z", "+00:00"))


def load_users(root: Path = DATA, names: Iterable[str] | None = None) -> list[User]:
    """Every user file under `root/users`, by name; a battery's `splits.json`
    gives each user's split."""
    wanted = set(names) if names is not None else None
    splits_file = root / "splits.json"
    splits = json.loads(splits_file.read_text()) if splits_file.exists() else {}
    users = []
    for path in sorted((root / "users").glob("*.json")):
        raw = json.loads(path.read_text())
        if wanted is not None and raw["user"] not in wanted:
            continue
        events = tuple(
            Event(
                e["id"],
                _time(e["at"]),
                e["author"],
                e["story"],
                tuple(
                    Write(
                        f"{e['id']}.{i}",
                        w["memory"],
                        None if w.get("delete") else w.get("content"),
                        w["story"],
                        None if w.get("delete") else w.get("profile"),
                    )
                    for i, w in enumerate(e["writes"], start=1)
                ),
            )
            for e in raw["events"]
        )
        split = splits.get(raw["user"]) or raw["split"]
        users.append(
            User(raw["user"], split, raw["profile"], events, raw.get("size", "large"))
        )
    return users


LAYOUTS = ("manage_memory", "store_manager")


def stored(write: Write, layout: str) -> dict[str, Any] | None:
    """A memory's value as LangMem writes it: `manage_memory` stores
    `{"content": ...}`; the background `create_memory_store_manager` wraps it as
    `{"kind": "Memory", "content": {"content": ...}}`. A profile is its dict of
    fields, wrapped by the manager as `{"kind": "Profile", "content": {...}}`."""
    if write.deletes:
        return None
    if write.profile is not None:
        fields = dict(write.profile)
        return (
            fields
            if layout == "manage_memory"
            else {"kind": "Profile", "content": fields}
        )
    value = {"content": write.content}
    return value if layout == "manage_memory" else {"kind": "Memory", "content": value}


def ingest(
    store: ChronoStore, user: User, layout: str = "manage_memory"
) -> dict[str, tuple[int, str]]:
    """Write `user`'s history, one `batch` per event, its values in `layout`;
    return each write's (version, key).

    Raises:
        AssertionError: If an event did not make exactly one commit holding
            each of its writes (a data error, such as deleting what is absent).
    """
    generation: dict[str, int] = {}
    live: set[str] = set()
    keys: dict[str, tuple[int, str]] = {}
    for version, event in enumerate(user.events, start=1):
        ops = []
        for w in event.writes:
            if w.handle not in live:
                assert not w.deletes, f"{w.ref} deletes a missing memory"
                generation[w.handle] = generation.get(w.handle, 0) + 1
            key = str(
                uuid.uuid5(_KEYS, f"{user.user}/{w.handle}/{generation[w.handle]}")
            )
            ops.append(PutOp(user.scope, key, stored(w, layout)))
            (live.discard if w.deletes else live.add)(w.handle)
            keys[w.ref] = (version, key)
        with ChronoStore.commit_context(author=event.author, timestamp=event.at):
            store.batch(ops)
        assert store.head(user.scope) == version, f"{event.id} made no commit"
    return keys


def account(user: User) -> str:
    """The plain account of `user`'s life that request writers see: the profile
    and every event's and write's story, with what later became of each write.
    No memory text."""
    writes, profile = user.writes(), fields_changed(user)
    fate: dict[str, str] = {}
    last: dict[str, str] = {}
    for ref, (_, w) in writes.items():
        if w.handle in last:
            fate[last[w.handle]] = (
                f"later removed at {ref}" if w.deletes else f"later changed at {ref}"
            )
        last[w.handle] = ref
        if w.deletes:
            del last[w.handle]
    lines = [
        f"# {user.user} (the requests are made on {user.today:%A %d %B %Y})",
        "",
        user.profile,
        "",
    ]
    for event in user.events:
        lines.append(f"{event.id} ({event.at:%a %d %b %Y}): {event.story}")
        for w in event.writes:
            what = "a removal" if w.deletes else fate.get(w.ref, "still true today")
            if w.ref in profile:
                named = ", ".join(sorted(profile[w.ref])) or "none"
                what = f"profile fields changed: {named}] [{what}"
            lines.append(f"  {w.ref}: {w.story} [{what}]")
    return "\n".join(lines)


@dataclass(frozen=True)
class Request:
    """One request as written, and the write it is about."""

    id: str
    user: str
    text: str
    kind: str
    ref: str | None
    style: str | None = None
    field: str | None = None
    near: str | None = None


@dataclass(frozen=True)
class Gold:
    """What a request must resolve to.

    Attributes:
        change: The gold change as (version, key), or `None` (nothing to change).
        target: The version a whole-scope rollback would restore.
        fields: For a profile write, the fields of the item the request is
            about (empty: the whole item).
    """

    change: tuple[int, str] | None
    target: int | None
    fields: frozenset[str] = frozenset()


def load_requests(
    folder: Path = DATA / "requests", users: Sequence[User] = ()
) -> list[Request]:
    """The requests in `folder` about `users` (all users when empty)."""
    names = {u.user for u in users}
    requests = []
    for path in sorted(folder.glob("*.json")):
        for raw in json.loads(path.read_text()):
            user = raw["id"].split("-")[0]
            if names and user not in names:
                continue
            assert raw["kind"] in KINDS, raw
            assert raw.get("style") in (None, *STYLES), raw
            requests.append(
                Request(
                    raw["id"],
                    user,
                    raw["text"],
                    raw["kind"],
                    raw.get("ref"),
                    raw.get("style"),
                    raw.get("field"),
                    raw.get("near"),
                )
            )
    return requests


def fields_changed(user: User) -> dict[str, frozenset[str]]:
    """For each profile write, the fields it set, changed or dropped."""
    held: dict[str, dict[str, str]] = {}
    changed = {}
    for event in user.events:
        for w in event.writes:
            before = held.pop(w.handle, {})
            if w.profile is None:
                continue
            names = before.keys() | w.profile.keys()
            changed[w.ref] = frozenset(
                n for n in names if before.get(n) != w.profile.get(n)
            )
            held[w.handle] = w.profile
    return changed


def gold_of(request: Request, keys: dict[str, tuple[int, str]], user: User) -> Gold:
    """The change and version `request` must resolve to. For a profile write,
    the change that replaced it is the next one to change the same fields."""
    if request.kind in ("none", "near_miss"):
        return Gold(None, None)
    assert request.ref in keys, f"{request.id}: unknown ref {request.ref}"
    version, key = keys[request.ref]
    profile = fields_changed(user)
    fields = frozenset(
        [request.field] if request.field else profile.get(request.ref, ())
    )
    if request.kind in ("undo", "before"):
        return Gold((version, key), version - 1, fields)
    if request.kind == "at":
        return Gold((version, key), version, fields)
    later = sorted(
        v
        for ref, (v, k) in keys.items()
        if k == key
        and v > version
        and (not fields or ref not in profile or fields & profile[ref])
    )
    assert later, f"{request.id}: {request.ref} was never replaced or removed"
    return Gold((later[0], key), later[0] - 1, fields)
