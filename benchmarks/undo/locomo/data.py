"""LoCoMo conversations, read into turns, sessions and rollback anchors.

`locomo10.json` (Maharana et al., ACL 2024; CC BY-NC 4.0, so it is never copied
into this repository: pass its path) holds 10 conversations between two people,
each a series of dated sessions of dialog turns (`"D3:7"` is turn 7 of session
3), QA items that cite the turns holding their answer (`evidence`), and per
session event annotations.

Anchors are the facts a rollback request can name, with the turns (or session)
the fact was said in:

- QA items of category 1 (multi-hop), 2 (temporal) and 4 (single-hop) whose
  evidence, once repaired, lies in one session. Category 3 (open-domain, answers
  need world knowledge) and 5 (adversarial, unanswerable) have no usable
  evidence for a rollback; the ids are those of the official evaluation code.
- Session event annotations ("Caroline attends an LGBTQ support group for the
  first time."), which name a session, not a turn.

Evidence ids are repaired where the intent is plain (`"D8:6; D9:17"` and
`"D9:1 D4:4"` are several ids, `"D:11:26"` is `D11:26`, `"D30:05"` is `D30:5`);
ids that name no turn are dropped, and an item left with none is dropped.
"""

from __future__ import annotations

import json
import re
from collections import Counter
from collections.abc import Sequence
from dataclasses import dataclass, field
from datetime import datetime, timedelta, timezone
from pathlib import Path
from typing import Any, Literal

__all__ = [
    "TUNING",
    "Anchor",
    "Conversation",
    "Turn",
    "load",
]

TUNING = ("conv-26", "conv-30")  # the tuning split; every other conversation is test
QA_CATEGORIES = {1: "multi-hop", 2: "temporal", 4: "single-hop"}
TURN_SPACING = timedelta(seconds=30)  # commit time = session start + 30 s per turn
_SESSION = re.compile(r"session_(\d+)")
_ID = re.compile(r"D:?(\d+):0*(\d+)")


@dataclass(frozen=True)
class Turn:
    """One dialog turn, and the version its commit gets (1 = the first turn)."""

    dia_id: str
    session: int
    speaker: str
    text: str
    image: str | None  # the caption of a shared photo, if any
    at: datetime
    version: int

    def value(self) -> dict[str, str]:
        """What the benchmark stores for this turn."""
        value = {"speaker": self.speaker, "text": self.text}
        if self.image:
            value["image"] = self.image
        return value

    @property
    def content(self) -> str:
        """The turn's words (text and photo caption), for word-overlap counts."""
        return f"{self.text} {self.image or ''}".strip()


@dataclass(frozen=True)
class Anchor:
    """A fact a rollback request can name, and where it was said.

    Attributes:
        conv: The conversation's `sample_id`.
        source: `qa` (a QA item) or `event` (a session event annotation).
        kind: For QA, the category name; for events, `event`.
        text: The question (QA) or the event sentence.
        answer: The QA answer (`None` for events).
        speaker: For events, whose event it is.
        date: For events, the annotated session date as written ("8 May, 2023").
        versions: Versions of the evidence turns (QA) or of every turn of the
            session (events), ascending.
        session: The session the evidence lies in.
    """

    conv: str
    source: Literal["qa", "event"]
    kind: str
    text: str
    answer: str | None
    speaker: str | None
    date: str | None
    versions: tuple[int, ...]
    session: int
    evidence: tuple[str, ...] = ()


@dataclass
class Conversation:
    """One LoCoMo conversation: its turns in order and its anchors."""

    sample_id: str
    speakers: tuple[str, str]
    turns: list[Turn]
    sessions: dict[int, tuple[datetime, list[Turn]]]
    anchors: list[Anchor] = field(default_factory=list)
    dropped: Counter[str] = field(default_factory=Counter)

    @property
    def scope(self) -> tuple[str, str]:
        """The store scope (one timeline) of this conversation."""
        return ("locomo", self.sample_id)

    @property
    def head(self) -> int:
        """The version after every turn is committed."""
        return len(self.turns)

    def by_id(self) -> dict[str, Turn]:
        return {t.dia_id: t for t in self.turns}


def _session_time(text: str) -> datetime:
    """'1:56 pm on 8 May, 2023' -> an aware datetime (taken as UTC)."""
    moment = datetime.strptime(text.strip(), "%I:%M %p on %d %B, %Y")
    return moment.replace(tzinfo=timezone.utc)


def _evidence(raw: list[Any], known: dict[str, Turn]) -> tuple[list[str], int, int]:
    """Repaired evidence ids that name turns; and counts of repaired and dropped ids."""
    found, repaired, dropped = [], 0, 0
    for item in raw:
        parts = [p for p in re.split(r"[;,\s]+", str(item)) if p]
        for part in parts:
            match = _ID.fullmatch(part)
            dia_id = f"D{match[1]}:{match[2]}" if match else part
            if dia_id in known:
                repaired += dia_id != part or len(parts) > 1
                if dia_id not in found:
                    found.append(dia_id)
            else:
                dropped += 1
    return found, repaired, dropped


def _conversation(sample: dict[str, Any], max_sessions: int | None) -> Conversation:
    raw = sample["conversation"]
    numbers = sorted(int(m[1]) for k in raw if (m := _SESSION.fullmatch(k)) and raw[k])
    turns: list[Turn] = []
    sessions: dict[int, tuple[datetime, list[Turn]]] = {}
    for number in numbers:
        start = _session_time(raw[f"session_{number}_date_time"])
        these = []
        for i, turn in enumerate(raw[f"session_{number}"]):
            made = Turn(
                dia_id=turn["dia_id"],
                session=number,
                speaker=turn["speaker"],
                text=turn["text"],
                image=turn.get("blip_caption") or None,
                at=start + i * TURN_SPACING,
                version=len(turns) + 1,
            )
            turns.append(made)
            these.append(made)
        sessions[number] = (start, these)
    conv = Conversation(
        sample["sample_id"], (raw["speaker_a"], raw["speaker_b"]), turns, sessions
    )
    known = conv.by_id()
    for qa in sample.get("qa", []):
        category = qa.get("category")
        if category not in QA_CATEGORIES:
            conv.dropped[f"qa category {category}"] += 1
            continue
        ids, repaired, bad = _evidence(qa.get("evidence") or [], known)
        conv.dropped["evidence ids repaired"] += repaired
        conv.dropped["evidence ids naming no turn"] += bad
        if not ids:
            conv.dropped["qa with no usable evidence"] += 1
            continue
        if len({known[i].session for i in ids}) > 1:
            conv.dropped["qa with evidence in several sessions"] += 1
            continue
        conv.anchors.append(
            Anchor(
                conv=conv.sample_id,
                source="qa",
                kind=QA_CATEGORIES[category],
                text=qa["question"].strip(),
                answer=str(qa.get("answer", "")).strip() or None,
                speaker=None,
                date=None,
                versions=tuple(sorted(known[i].version for i in ids)),
                session=known[ids[0]].session,
                evidence=tuple(ids),
            )
        )
    for key, events in sample.get("event_summary", {}).items():
        number = int(key.rsplit("_", 1)[1])
        if number not in sessions:
            conv.dropped["events of an empty session"] += 1
            continue
        for speaker in conv.speakers:
            for text in events.get(speaker) or []:
                conv.anchors.append(
                    Anchor(
                        conv=conv.sample_id,
                        source="event",
                        kind="event",
                        text=text.strip(),
                        answer=None,
                        speaker=speaker,
                        date=events.get("date"),
                        versions=tuple(t.version for t in sessions[number][1]),
                        session=number,
                    )
                )
    if max_sessions is not None:  # versions count from the start: cutting keeps them
        kept = set(numbers[:max_sessions])
        conv.turns = [t for t in conv.turns if t.session in kept]
        conv.sessions = {n: s for n, s in conv.sessions.items() if n in kept}
        conv.anchors = [a for a in conv.anchors if a.session in kept]
    return conv


def load(
    path: str | Path,
    only: Sequence[str] | None = None,
    *,
    max_sessions: int | None = None,
) -> list[Conversation]:
    """The conversations of `locomo10.json`, in file order.

    Args:
        path: The file.
        only: These conversation ids only.
        max_sessions: Keep only the first sessions of each conversation (and the
            anchors inside them): a small but real conversation, for smoke tests.
    """
    samples = json.loads(Path(path).read_text())
    return [
        _conversation(sample, max_sessions)
        for sample in samples
        if only is None or sample["sample_id"] in only
    ]
