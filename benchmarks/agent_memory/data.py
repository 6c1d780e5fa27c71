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
- `none`: nothing should change (no `ref`).
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
KINDS = ("undo", "restore", "before", "at", "still", "none")
_KEYS = uuid.UUID("6f1d4c1e-7a2b-4c55-9b0e-3d2f1a8c9e77")  # uuid5 namespace of keys


@dataclass(frozen=True)
class Write:
    """One write of an event: `content=None` deletes the memory."""

    ref: str
    handle: str
    content: str | None
    story: str


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
    """Every user file under `root/users`, by name."""
    wanted = set(names) if names is not None else None
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
                        None if w.get("delete") else w["content"],
                        w["story"],
                    )
                    for i, w in enumerate(e["writes"], start=1)
                ),
            )
            for e in raw["events"]
        )
        users.append(User(raw["user"], raw["split"], raw["profile"], events))
    return users


LAYOUTS = ("manage_memory", "store_manager")


def stored(content: str, layout: str) -> dict[str, Any]:
    """A memory's value as LangMem writes it: `manage_memory` stores
    `{"content": ...}`; the background `create_memory_store_manager` wraps it as
    `{"kind": "Memory", "content": {"content": ...}}`."""
    value = {"content": content}
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
                assert w.content is not None, f"{w.ref} deletes a missing memory"
                generation[w.handle] = generation.get(w.handle, 0) + 1
            key = str(
                uuid.uuid5(_KEYS, f"{user.user}/{w.handle}/{generation[w.handle]}")
            )
            value = None if w.content is None else stored(w.content, layout)
            ops.append(PutOp(user.scope, key, value))
            (live.discard if w.content is None else live.add)(w.handle)
            keys[w.ref] = (version, key)
        with ChronoStore.commit_context(author=event.author, timestamp=event.at):
            store.batch(ops)
        assert store.head(user.scope) == version, f"{event.id} made no commit"
    return keys


def account(user: User) -> str:
    """The plain account of `user`'s life that request writers see: the profile
    and every event's and write's story, with what later became of each write.
    No memory text."""
    writes = user.writes()
    fate: dict[str, str] = {}
    last: dict[str, str] = {}
    for ref, (_, w) in writes.items():
        if w.handle in last:
            fate[last[w.handle]] = (
                f"later removed at {ref}"
                if w.content is None
                else f"later changed at {ref}"
            )
        last[w.handle] = ref
        if w.content is None:
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
            what = (
                "a removal"
                if w.content is None
                else fate.get(w.ref, "still true today")
            )
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


@dataclass(frozen=True)
class Gold:
    """What a request must resolve to.

    Attributes:
        change: The gold change as (version, key), or `None` (nothing to change).
        target: The version a whole-scope rollback would restore.
    """

    change: tuple[int, str] | None
    target: int | None


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
            requests.append(
                Request(raw["id"], user, raw["text"], raw["kind"], raw.get("ref"))
            )
    return requests


def gold_of(request: Request, keys: dict[str, tuple[int, str]], user: User) -> Gold:
    """The change and version `request` must resolve to."""
    if request.kind == "none":
        return Gold(None, None)
    assert request.ref in keys, f"{request.id}: unknown ref {request.ref}"
    version, key = keys[request.ref]
    if request.kind in ("undo", "before"):
        return Gold((version, key), version - 1)
    if request.kind == "at":
        return Gold((version, key), version)
    later = sorted(v for ref, (v, k) in keys.items() if k == key and v > version)
    assert later, f"{request.id}: {request.ref} was never replaced or removed"
    return Gold((later[0], key), later[0] - 1)
