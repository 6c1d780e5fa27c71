"""A synthetic memory history for the undo benchmark: users' profiles over a year.

Each user is one scope `("memories", <user>)` (`scope_depth=2`) whose agent keeps
profile facts (home city, job, diet, partner, allergies, car...), pets, hobbies, a
weekly schedule and episodic notes. Over a year of commits the facts are updated,
items are added and deleted, some commits carry an author and a reason
(`commit_context`), some are batches (a move changes home and commute together),
and a few are rollbacks or reverts, as when the undo tool was used before.

Everything is written through the public store API, one `batch()` per commit, in
time order across users (`commit_context(timestamp=...)` dates each commit), so
commits of different scopes interleave in the log as they would in production.
Choices come from a fixed seed; the dates count back from the moment of the build.

The target user also gets *planted* commits: the facts the benchmark's requests
talk about ("undo the update about my move to New York City"), placed inside each
request's own time window ("yesterday", "last week") so every request has a true
match among thousands of similar commits.
"""

from __future__ import annotations

import random
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from datetime import datetime, timedelta, timezone
from typing import Any

from langgraph.store.base import PutOp

from langgraph_chronomem import ChronoStore
from langgraph_chronomem.errors import VersionError
from langgraph_chronomem.search.intent import parse

__all__ = ["REQUESTS", "TARGET", "Request", "build_history", "scope_of"]

TARGET = "alice"  # the user whose memory the requests are about
OTHERS = ("bob", "carol", "dmitri")  # other scopes in the same store
SPAN = timedelta(days=365)  # how far back the history goes

Value = dict[str, Any]
Write = tuple[str, str, Value | None]  # (sub-namespace, key, value or None to delete)


def scope_of(user: str) -> tuple[str, str]:
    """The scope (one timeline) of a user."""
    return ("memories", user)


CITIES = [
    "Boston",
    "New York City",
    "Lisbon",
    "Berlin",
    "Austin",
    "Seattle",
    "Toronto",
    "Chicago",
    "Denver",
    "London",
    "Barcelona",
    "Oakland",
    "Portland",
    "Montreal",
]
COMPANIES = [
    "Stripe",
    "Acme Robotics",
    "Globex",
    "Initech",
    "a hospital",
    "the city council",
    "a climate startup",
    "Shopify",
    "a design agency",
    "the university",
]
TITLES = [
    "software engineer",
    "staff engineer",
    "product manager",
    "nurse",
    "data analyst",
    "teacher",
    "UX designer",
    "engineering manager",
    "freelance writer",
]
DIETS = [
    "vegetarian",
    "vegan",
    "pescatarian",
    "keto",
    "gluten-free",
    "no restrictions",
    "low sodium",
    "dairy-free",
]
PEOPLE = [
    "Sam",
    "Priya",
    "Jordan",
    "Mateo",
    "Aiko",
    "Fatima",
    "Liam",
    "Noor",
    "Grace",
    "Tomasz",
    "Chen",
    "Ravi",
]
STATUSES = ["dating", "engaged", "married", "long-distance", "separated"]
ALLERGIES = ["peanuts", "shellfish", "pollen", "cats", "penicillin", "lactose", "none"]
CARS = [
    "a used Honda Civic",
    "a Tesla Model 3",
    "a bike, no car",
    "a Subaru Outback",
    "a leased Kia EV6",
]
COFFEE = ["oat flat white", "black coffee", "decaf latte", "green tea", "cortado"]
MUSIC = [
    "jazz",
    "indie rock",
    "Taylor Swift",
    "lo-fi beats",
    "classical piano",
    "techno",
]
TONES = [
    "keep answers short",
    "explain step by step",
    "use metric units",
    "no emojis please",
    "answer in Portuguese when I write in Portuguese",
]
SPECIES = [
    ("dog", ["beagle", "labrador", "corgi", "mutt"]),
    ("cat", ["tabby", "siamese"]),
    ("parrot", ["cockatiel"]),
    ("rabbit", ["lop"]),
]
PET_NAMES = ["Biscuit", "Luna", "Milo", "Pepper", "Mochi", "Olive", "Ziggy", "Kiwi"]
HOBBIES = [
    "rock climbing",
    "sourdough baking",
    "chess",
    "salsa dancing",
    "trail running",
    "pottery",
    "birdwatching",
    "guitar",
    "woodworking",
    "board games",
]
LEVELS = ["beginner", "intermediate", "advanced", "lapsed"]
EVENTS = [
    "yoga class",
    "gym session",
    "team standup",
    "therapy",
    "piano lesson",
    "book club",
    "call with mom",
    "volunteering at the food bank",
]
DAYS = ["Monday", "Tuesday", "Wednesday", "Thursday", "Friday", "Saturday", "Sunday"]
TIMES = ["7am", "8:30am", "noon", "5pm", "6:30pm", "8pm"]
NOTES = [
    "Had dinner with {person} at a {food} place in {city}",
    "{person}'s birthday party is on {day}; wants a gift under $50",
    "Is reading a book about {hobby} and loves it",
    "Flying to {city} next month for a conference",
    "Felt stressed about a deadline at {company}",
    "Asked for a {food} recipe that is {diet}",
    "Recommended a {music} playlist to {person}",
    "Thinking about moving to {city} in a year or two",
    "Went {hobby} with {person} over the weekend",
    "Doctor's appointment moved to {day} at {time}",
]
FOODS = ["Ethiopian", "ramen", "Portuguese", "Thai", "taco", "Georgian", "vegan"]
AUTHORS = ["agent", "memory-consolidator", "profile-sync"]
REASONS = {
    "home": ["user mentioned moving", "user said where they live now"],
    "job": ["user talked about a new job", "user updated their work info"],
    "diet": ["user said they changed their diet", "user corrected a food preference"],
    "partner": ["user talked about their relationship"],
    "pets": ["user talked about their pet", "user adopted a pet"],
    "hobbies": ["user mentioned a hobby"],
    "schedule": ["user changed their weekly schedule", "calendar sync"],
    "notes": ["noted from chat", "episodic memory from today's conversation"],
}
GENERIC_REASONS = [
    "user said so in chat",
    "user corrected the assistant",
    "weekly memory consolidation",
    "inferred from conversation",
]


def _slug(text: str) -> str:
    return "-".join(text.lower().replace("'", "").split())


@dataclass(frozen=True)
class Request:
    """A benchmark request, and what its target user's history is given to match it.

    Attributes:
        text: What the person says.
        plant: The writes of the commit the request is about (none for requests
            that need no topic, e.g. "redo").
        path: `search` (the full retrieval pipeline) or `shortcut` (no topic or
            redo: no BM25, dense nor rerank).
    """

    text: str
    plant: tuple[Write, ...] = ()
    path: str = "search"


REQUESTS: tuple[Request, ...] = (
    Request(
        "undo the update about my move to New York City",
        (("profile", "home", {"city": "New York City"}),),
    ),
    Request(
        "forget that I adopted a dog named Biscuit",
        (
            (
                "pets",
                "biscuit",
                {"species": "dog", "name": "Biscuit", "breed": "beagle"},
            ),
        ),
    ),
    Request(
        "I never said I was vegetarian, remove it",
        (("profile", "diet", {"diet": "vegetarian"}),),
    ),
    Request(
        "revert the change to my job at Stripe",
        (("profile", "job", {"title": "staff engineer", "company": "Stripe"}),),
    ),
    Request(
        "go back to when I started working at Stripe",
        (("profile", "job", {"title": "software engineer", "company": "Stripe"}),),
    ),
    Request(
        "go back to when I still lived in Boston",
        (("profile", "home", {"city": "Boston"}),),
    ),
    Request(
        "go back to when I was still engaged to Sam",
        (("profile", "partner", {"name": "Sam", "status": "engaged"}),),
    ),
    Request(
        "restore my rock climbing hobby",
        (
            (
                "hobbies",
                "rock-climbing",
                {"hobby": "rock climbing", "level": "beginner"},
            ),
        ),
    ),
    Request(
        "undo yesterday's change to my diet", (("profile", "diet", {"diet": "keto"}),)
    ),
    Request(
        "revert what you saved last week about my yoga class",
        (
            (
                "schedule",
                "yoga-class",
                {"event": "yoga class", "day": "Thursday", "time": "6:30pm"},
            ),
        ),
    ),
    Request(
        "Oops, that's wrong: undo the note about dinner with Priya in Lisbon",
        (
            (
                "notes",
                "note-planted-1",
                {"text": "Had dinner with Priya at a Portuguese place in Lisbon"},
            ),
        ),
    ),
    Request(
        "undo the changes to my gym schedule since Monday",
        (
            (
                "schedule",
                "gym-session",
                {"event": "gym session", "day": "Saturday", "time": "8:30am"},
            ),
        ),
    ),
    Request(
        "please delete the memory that I'm allergic to peanuts",
        (("profile", "allergies", {"allergy": "peanuts"}),),
    ),
    Request(
        "go back to before I told you about my new car",
        (("profile", "car", {"car": "a leased Kia EV6"}),),
    ),
    Request("undo the last change", path="shortcut"),
    Request("go back to how things were 3 days ago", path="shortcut"),
    Request("undo everything you saved this morning", path="shortcut"),
    Request("redo", path="shortcut"),
    Request("undo the undo", path="shortcut"),
)


@dataclass
class Profile:
    """One user's memory as the generator believes it is, and how it changes next."""

    user: str
    rng: random.Random
    items: dict[tuple[str, str], Value] = field(default_factory=dict)
    notes: int = 0

    def _pick(self, sub: str) -> str | None:
        keys = [k for s, k in self.items if s == sub]
        return self.rng.choice(keys) if keys else None

    def _fact(self, key: str) -> Value:
        rng = self.rng
        makers: dict[str, Callable[[], Value]] = {
            "home": lambda: {"city": rng.choice(CITIES)},
            "job": lambda: {
                "title": rng.choice(TITLES),
                "company": rng.choice(COMPANIES),
            },
            "diet": lambda: {"diet": rng.choice(DIETS)},
            "partner": lambda: {
                "name": rng.choice(PEOPLE),
                "status": rng.choice(STATUSES),
            },
            "allergies": lambda: {"allergy": rng.choice(ALLERGIES)},
            "car": lambda: {"car": rng.choice(CARS)},
            "coffee": lambda: {"order": rng.choice(COFFEE)},
            "music": lambda: {"favorite": rng.choice(MUSIC)},
            "tone": lambda: {"preference": rng.choice(TONES)},
            "commute": lambda: {
                "mode": rng.choice(["subway", "bike", "car", "walk", "bus"])
            },
            "languages": lambda: {
                "languages": rng.sample(
                    ["English", "Portuguese", "Spanish", "German", "Mandarin", "Hindi"],
                    2,
                )
            },
        }
        return makers[key]()

    def _pet(self) -> Write:
        species, breeds = self.rng.choice(SPECIES)
        name = self.rng.choice(PET_NAMES)
        value = {"species": species, "name": name, "breed": self.rng.choice(breeds)}
        return "pets", name.lower(), value

    def _hobby(self) -> Write:
        hobby = self.rng.choice(HOBBIES)
        return (
            "hobbies",
            _slug(hobby),
            {"hobby": hobby, "level": self.rng.choice(LEVELS)},
        )

    def _event(self) -> Write:
        event = self.rng.choice(EVENTS)
        value = {
            "event": event,
            "day": self.rng.choice(DAYS),
            "time": self.rng.choice(TIMES),
        }
        return "schedule", _slug(event), value

    def _note(self) -> Write:
        rng = self.rng
        text = rng.choice(NOTES).format(
            person=rng.choice(PEOPLE),
            food=rng.choice(FOODS),
            city=rng.choice(CITIES),
            day=rng.choice(DAYS),
            hobby=rng.choice(HOBBIES),
            company=rng.choice(COMPANIES),
            diet=rng.choice(DIETS),
            music=rng.choice(MUSIC),
            time=rng.choice(TIMES),
        )
        self.notes += 1
        return "notes", f"note-{self.notes}", {"text": text}

    def _delete(self, sub: str) -> list[Write]:
        key = self._pick(sub)
        return [] if key is None else [(sub, key, None)]

    def next_change(self) -> tuple[str, Any]:
        """`("writes", [Write...])`, `("rollback", back)` or `("revert", back)`."""
        rng, roll = self.rng, self.rng.random()
        facts = [
            "home",
            "job",
            "diet",
            "partner",
            "allergies",
            "car",
            "coffee",
            "music",
            "tone",
            "commute",
            "languages",
        ]
        if roll < 0.30:
            key = rng.choice(facts)
            return "writes", [("profile", key, self._fact(key))]
        if roll < 0.52:
            return "writes", [self._note()]
        if roll < 0.56:
            return "writes", self._delete("notes")
        if roll < 0.64:
            return "writes", [self._event()]
        if roll < 0.67:
            return "writes", self._delete("schedule")
        if roll < 0.72:
            return "writes", [self._pet()]
        if roll < 0.73:
            return "writes", self._delete("pets")
        if roll < 0.78:
            return "writes", [self._hobby()]
        if roll < 0.80:
            return "writes", self._delete("hobbies")
        if roll < 0.82:
            return "writes", self._delete("profile")
        if roll < 0.98:  # a life event or a consolidation: several writes in one commit
            kind = rng.random()
            writes: list[Write]
            if kind < 0.3:
                writes = [
                    ("profile", "home", self._fact("home")),
                    ("profile", "commute", self._fact("commute")),
                ]
            elif kind < 0.5:
                writes = [("profile", "job", self._fact("job")), self._event()]
            elif kind < 0.65:
                writes = [self._pet(), self._event()]
            else:
                writes = [("profile", k, self._fact(k)) for k in rng.sample(facts, 3)]
            return "writes", writes
        if roll < 0.995:
            return "rollback", rng.randint(1, 3)
        return "revert", rng.randint(1, 5)

    def apply(self, writes: Sequence[Write]) -> None:
        """Remember what a commit wrote."""
        for sub, key, value in writes:
            if value is None:
                self.items.pop((sub, key), None)
            else:
                self.items[sub, key] = value

    def reload(self, store: ChronoStore) -> None:
        """Read the user's memory back after a rollback or revert changed it."""
        found = store.search(scope_of(self.user), limit=1_000_000)
        self.items = {(item.namespace[2], item.key): item.value for item in found}


def _plant_time(request: Request, now: datetime, rng: random.Random) -> datetime:
    """A moment inside the request's time window, else within the last 60 days."""
    window = parse(request.text, now=now).window
    if window is None:
        return now - timedelta(days=rng.uniform(5, 60))
    start = window.start or (window.end or now) - timedelta(days=2)
    end = min(window.end or now, now - timedelta(minutes=5))
    return start + (end - start) * rng.uniform(0.3, 0.7)


def _timeline(
    commits: dict[str, int], now: datetime, rng: random.Random
) -> list[tuple[datetime, str, Request | None]]:
    """When each commit happens, and for planted ones which request it serves."""
    events: list[tuple[datetime, str, Request | None]] = []
    planted = [r for r in REQUESTS if r.plant]
    for user, count in commits.items():
        mine = planted if user == TARGET else []
        for _ in range(count - len(mine)):
            events.append((now - SPAN * rng.random() ** 1.5, user, None))
        for request in mine:
            events.append((_plant_time(request, now, rng), user, request))
    events.sort(key=lambda event: event[0])
    return events


def _commit(
    store: ChronoStore,
    profile: Profile,
    change: tuple[str, Any],
    meta: dict[str, Any],
) -> bool:
    """Make one change as one commit; False when it changed nothing."""
    scope = scope_of(profile.user)
    kind, arg = change
    with store.commit_context(**meta):
        if kind == "writes":
            if not arg:
                return False
            head = store.head(scope)
            store.batch([PutOp((*scope, sub), key, value) for sub, key, value in arg])
            profile.apply(arg)
            return store.head(scope) > head
        head = store.head(scope)
        if head - arg < 1:
            return False
        try:
            if kind == "rollback":
                store.rollback(scope, to=head - arg, reason="undo requested by user")
            else:
                store.revert(scope, head - arg, reason="user said that was wrong")
        except VersionError:
            return False
        profile.reload(store)
        return store.head(scope) > head


def build_history(
    store: ChronoStore,
    commits: int,
    *,
    seed: int,
    now: datetime | None = None,
    progress: Callable[[int, int], None] | None = None,
) -> dict[str, int]:
    """Write `commits` commits to the target user and a quarter as many to each other.

    Returns the HEAD version of every user's scope (the target's is `commits`).
    """
    now = now or datetime.now(timezone.utc)
    rng = random.Random(f"{seed}-{commits}")
    counts = {TARGET: commits, **{user: max(commits // 4, 1) for user in OTHERS}}
    profiles = {u: Profile(u, random.Random(f"{seed}-{commits}-{u}")) for u in counts}
    timeline = _timeline(counts, now, rng)
    for done, (moment, user, request) in enumerate(timeline, start=1):
        profile = profiles[user]
        meta: dict[str, Any] = {"timestamp": moment}
        for _attempt in range(20):
            change = (
                ("writes", list(request.plant)) if request else profile.next_change()
            )
            if rng.random() < 0.4:
                area = change[1][0][0] if change[0] == "writes" and change[1] else ""
                key = change[1][0][1] if area == "profile" else area
                meta |= {
                    "author": rng.choice([*AUTHORS, user]),
                    "reason": rng.choice(REASONS.get(key, GENERIC_REASONS)),
                }
            if _commit(store, profile, change, meta):
                break
        else:
            raise RuntimeError(f"could not make a commit for {user} at {moment}")
        if progress and done % 1000 == 0:
            progress(done, len(timeline))
    return {user: store.head(scope_of(user)) for user in counts}
