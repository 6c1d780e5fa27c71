"""What an undo request asks for: the intent, the topic, and any time window.

    >>> from datetime import datetime, timezone
    >>> now = datetime(2024, 6, 12, 15, 0, tzinfo=timezone.utc)  # a Wednesday
    >>> parse("undo the update about my move to NYC", now=now)
    Intent(kind='undo', topic='my move to NYC', window=None, count=1, asked=True)
    >>> parse("Could you go back to when I still lived in Boston?", now=now)
    Intent(kind='still', topic='I lived in Boston', window=None, count=1, asked=True)
    >>> window = parse("revert yesterday's change to my job", now=now).window
    >>> window.start.isoformat(), window.end.isoformat()
    ('2024-06-11T00:00:00+00:00', '2024-06-12T00:00:00+00:00')

Kinds, the side of a change each one matches, and what it asks for
(DESIGN.md, "Natural-language undo"):

- `undo`: "undo/forget/delete/scrap/get rid of X", "you shouldn't have saved X",
  "I never said X, remove it", or X alone ("the Mars thing was a joke"): the
  change that *introduced* X, undone by itself.
- `restore`: "bring back / put back / restore X", "you deleted X, I want it
  back": the change that *replaced or removed* X, undone by itself.
- `before`: "go back to before X": the whole memory as it was before the change
  that introduced X.
- `at`: "go back to when X", "back to yesterday", "reset everything to the point
  where X came up": the whole memory *at* that change, or at the last commit in
  the window ("undo everything since Monday" is `at` the last commit before
  Monday).
- `still`: "back to when X was still true", "when I still lived in Boston": the
  whole memory just before the change that *replaced* X.
- `redo`: "redo", "undo the undo", "put it back", "restore what you removed".
- `none`: a request that asks for nothing: "ok", "thanks!", "cancel", "wrong",
  "forget it", a question ("what did you change?"). It never changes anything.

The topic is the request without the intent phrase ("undo the update about"),
politeness and times. A topic without `content_words` ("undo that", "undo the
last change") is `""`: the latest commit, inside the window if there is one.

Times become a window of commit times (`search.times`): "yesterday", "last
Tuesday", "the past week", "since May 8", "in 2023" ...
"""

from __future__ import annotations

import contextlib
import json
import re
from dataclasses import dataclass, field, replace
from datetime import datetime, timezone
from typing import Literal

from langgraph_chronomem.search.phrasing import (
    commands,
    corrections,
    framing,
    giving_back,
    going_back,
    held_back,
    how_many,
    kept,
    later,
    naming,
    nothing,
    others,
    redo,
    spelling,
    tokens,
    verdict,
)
from langgraph_chronomem.search.times import NUMBERS, TimeWindow, take_time

__all__ = [
    "Intent",
    "TimeWindow",
    "content_words",
    "first_sentence",
    "last_sentence",
    "parse",
    "units_apart",
]

Kind = Literal["undo", "restore", "before", "at", "still", "redo", "none"]


@dataclass(frozen=True)
class Intent:
    """A parsed request: its kind, what it is about, and when.

    `count` is how many of the latest changes a request without a topic means:
    "undo the last 3 changes" is `Intent("undo", "", count=3)`. `asked` is
    False for a request that does not say exactly what it wants changed now: a
    memory named with no command and nothing said against it ("my peanut
    allergy", "I'm vegan now"), a command put off ("tomorrow, delete X", "once
    I've moved, forget X"), someone else's doing ("my landlord wants to remove
    the carpet"), "the last few changes", or a correction the parser cannot
    follow. Such an undo may be offered, never done alone.

    `named` is the part of the topic in the command's own sentence, when the
    topic runs over several before it ("Good morning. ... If you have Karen down
    in Louisville, remove it"): the search reads the whole topic, the check of
    what a change must hold (`search.held`) reads what the command names.
    """

    kind: Kind
    topic: str
    window: TimeWindow | None = None
    count: int = 1
    asked: bool = True
    named: str = field(default="", compare=False, repr=False)

    @property
    def names(self) -> str:
        """What the command names: `named`, else the topic."""
        return self.named or self.topic


def _said_in(value: object) -> str | None:
    """The request inside an agent's JSON: `{"request": ...}`, `{"action":
    "forget", "target": ...}`, at any depth."""
    if not isinstance(value, dict):
        return None
    for key in ("request", "query", "text"):
        if isinstance(value.get(key), str):
            return str(value[key])
    action, target = value.get("action"), value.get("target") or value.get("memory")
    if isinstance(action, str) and isinstance(target, str):
        return f"{action} {target}"
    return next(filter(None, map(_said_in, value.values())), None)


def _asked_of(tool: str, said: str) -> str:
    """What a call of an undo tool asks: its request, or, when that only names a
    memory ("user lives in Austin"), forgetting it."""
    undoing = re.search(r"(?i)undo|delete|forget|remove|erase", tool)
    names = (
        content_words(said)
        and not said.rstrip().endswith("?")
        and not nothing.NOTHING.match(said.strip())
    )
    return (
        f"forget {said}"
        if undoing and names and not commands.COMMAND.search(said)
        else said
    )


_LINE_BREAK = re.compile(r"(?<![.!?;:,\s])[ \t]*\n\s*")


def _plain(text: str) -> str:
    """`text` with typographic quotes and dashes made plain, chat spellings
    ("can u", "dont") written out, and an agent's spellings read as said:
    "delete_memory: X" as "delete X", `undo_memory(request="X")` and
    `{"request": "X"}` as X. A message sent in lines is read as sentences:
    "sales were wild this week\nforget the launch note" asks in its second."""
    text = _LINE_BREAK.sub(". ", text.translate(spelling.PLAIN).strip())
    called = spelling.CALLED.match(text)
    if called:
        text = _asked_of(called["tool"], called["said"])
    elif text.lstrip().startswith("{"):
        with contextlib.suppress(ValueError):
            value = json.loads(text)
            said = _said_in(value)
            tool = (
                value.get("tool") or value.get("name")
                if isinstance(value, dict)
                else None
            )
            text = text if said is None else _asked_of(str(tool or ""), said)
    text = spelling.CALL.sub(lambda m: m[1] or m[2], text)
    text = spelling.BACK_2.sub(r"\1 to ", text)  # "go back 2 when ..."
    text = spelling.MIND_NOT.sub("stop ", spelling.COURTESY.sub("", text))
    return spelling.CHAT_WORD.sub(lambda m: spelling.CHAT[m.group().lower()], text)


def content_words(topic: str) -> list[str]:
    """The words of `topic` that a lexical search should look for, in order.

    Lowercase words without English stopwords, intent filler ("update", "memory",
    "still") or a possessive "'s"; numbers, names and verbs ("moved") stay.

        >>> content_words("I moved to 5 Elm St. -- my sister's NYC update")
        ['moved', '5', 'elm', 'st', 'sister', 'nyc']
        >>> content_words("undo the last change please")
        []

    Args:
        topic: An `Intent.topic`, or any text.

    Returns:
        The content words, repeats included; `[]` if there are none.
    """
    words = (
        w.removesuffix("'s")
        for w in tokens.WORD.findall(topic.translate(spelling.PLAIN).lower())
    )
    return [
        w
        for w in words
        if w not in tokens.STOPWORDS and not (len(w) == 1 and w.isalpha())
    ]


def first_sentence(text: str) -> str:
    """`text` up to the end of its first sentence (a full stop after an
    abbreviation or an initial ends none).

        >>> first_sentence("the note about St. Albert. It was wrong")
        'the note about St. Albert'
    """
    for end in tokens.SENTENCE_END.finditer(text):
        last = text[: end.start()].split()[-1:]
        word = last[0].lower() if last else ""
        stop = end.group().startswith(".")
        if stop and (tokens.ABBREVIATION.fullmatch(f"{word}.") or _initial(word)):
            continue
        return text[: end.start()]
    return text


def last_sentence(text: str) -> str:
    """`text` from the start of its last sentence, or of as many last
    sentences as it takes to name two things ("... Nneka!! my cousin.").

        >>> last_sentence("Good morning. If you have Karen in Louisville, ")
        'If you have Karen in Louisville, '
        >>> last_sentence("Her name is Nkechi not Nneka!! my cousin. ")
        'Her name is Nkechi not Nneka!! my cousin. '
    """
    for start in reversed(_starts(text)):
        if len(content_words(text[start:])) >= 2:
            return text[start:]
    return text


def _starts(text: str) -> list[int]:
    """Where each sentence of `text` begins, past the marks that ended the last."""
    starts, at = [], 0
    while at < len(text):
        at += len(text[at:]) - len(text[at:].lstrip(_BETWEEN))
        if at < len(text):
            starts.append(at)
            at += max(len(first_sentence(text[at:])), 1)
    return starts or [0]


_BETWEEN = ".!?;\n\t "  # what ends a sentence and comes before the next


def _initial(word: str) -> bool:
    return len(word) == 1 and word.isalpha()


_UNIT = re.compile(
    r"(?i)^(\d+(?:[.,]\d+)?)(cm|mm|km|m|kg|g|lbs?|ml|l|gb|tb|mb|kb|hz|khz|mhz|ghz"
    r"|k|am|pm|h|hrs?|mins?|s|st|nd|rd|th|mg|mcg|yo|x)$"
)


def units_apart(word: str) -> list[str]:
    """A number run into its unit, apart, as memory may write it: `58cm` is
    `58 cm`; any other word stays whole.

        >>> units_apart("58cm"), units_apart("3pm"), units_apart("8a")
        (['58', 'cm'], ['3', 'pm'], ['8a'])
    """
    found = _UNIT.match(word)
    return [found[1], found[2]] if found else [word]


def _clean(text: str) -> str:
    return re.sub(r"\s+|\(\s*\)", " ", text).strip(" .,!?;:'\"-()")


def _topic(text: str) -> str:
    """`text` without the object of the command ("the last update about"), and
    without what it asks to keep ("my ex, but leave my allergies alone")."""
    clauses = kept.CLAUSE.split(text)
    asked = [c for c in clauses if not kept.KEPT.search(c)]
    if asked and len(asked) < len(clauses):
        text = " ".join(asked)
    text = _clean(corrections.NOT_THIS.sub("", _clean(text), count=1))
    # "the note where I said that I ...": the fillers before what is meant
    for filler in (naming.OBJECT, naming.SAID, naming.OBJECT):
        match = filler.match(text)
        if match:
            text = _clean(f"{match.groupdict().get('mod') or ''} {text[match.end() :]}")
    text = _clean(kept.EXCEPT.sub("", naming.TRAILER.sub("", text)))
    if naming.REFERS_BACK.search(text) and set(content_words(text)) <= naming.LINKS:
        return ""  # "whatever you saved off the back of that": what came before
    return text if content_words(text) or naming.NAMED.search(text) else ""


def _back(rest: str, window: TimeWindow | None) -> Intent:
    """What follows "go back to": "when X", "before X", "yesterday" or "X"."""
    key = going_back.BACK_KEY.match(rest)
    assert key is not None  # every part of it is optional
    text = _clean(rest[key.end() :])
    topic = _topic(going_back.TRUE.sub("", going_back.STILL.sub("", text)))
    if not key["key"] and not window and going_back.OLD_THING.match(text):
        return Intent("restore", topic)  # "go back to the old answer rules"
    if (key["key"] or "").lower() in ("before", "prior to"):
        gone = giving_back.REMOVED.match(text) or giving_back.REMOVAL.match(text)
        if gone and _topic(text[gone.end() :]):  # "before you deleted X": X held
            return Intent("still", _topic(text[gone.end() :]), window)
        if not topic and not window:  # "make it like it was before"
            return Intent("undo", "")
        return Intent("before" if topic else "at", topic, window)
    if topic or window or key["key"]:
        # "when I was renting", not "when I said I was"
        ongoing = going_back.ONGOING.search(text) and not naming.SAID.search(text)
        still = topic and (going_back.STILL.search(text) or ongoing)
        return Intent("still" if still else "at", topic, window)
    return Intent("undo", "")  # "go back to the previous version"


_UNDO_OF: tuple[tuple[re.Pattern[str], Kind], ...] = (
    (giving_back.REMOVAL, "restore"),
    (giving_back.REPLACING, "restore"),
    (how_many.SINCE, "before"),
)


def parse(request: str, *, now: datetime | None = None) -> Intent:
    """Parse an undo request.

        >>> parse("I never said I live in Paris, remove it")
        Intent(kind='undo', topic='I live in Paris', window=None, count=1, asked=True)
        >>> parse("Please undo the last change.")
        Intent(kind='undo', topic='', window=None, count=1, asked=True)
        >>> parse("put it back")
        Intent(kind='redo', topic='', window=None, count=1, asked=True)
        >>> parse("thanks!")
        Intent(kind='none', topic='', window=None, count=1, asked=True)

    Args:
        request: What the person or agent said, e.g. "undo the update about NYC".
        now: The moment relative times count from, in the timezone where days
            begin (default: now, UTC; a naive time is taken as UTC).

    Returns:
        The intent. A request with no command is an `undo` of its text if it
        names something, and `none` if it names nothing or only asks a question
        ("what did you change?").
    """
    now = now or datetime.now(timezone.utc)
    now = now if now.tzinfo else now.replace(tzinfo=timezone.utc)
    plain = _plain(request)
    # "tomorrow, delete X" is read as "delete X", put off; "maybe delete X", doubted
    said_now = later.LATER.sub(lambda m: f" {m['object'] or m['named'] or ''} ", plain)
    intent = _parse(said_now, now)
    # put off in the command's own sentence (not "... I'll give you the number
    # later"); in doubt anywhere ("...; customer has not confirmed")
    put_off = later.LATER.search(_asking(plain))
    if intent.kind != "none" and (put_off or later.UNSURE.search(plain)):
        return replace(intent, asked=False)
    return intent


def _asking(text: str) -> str:
    """The sentences of `text` that hold a command, and any too short to hold
    one ("Later."): where a command is put off, not a sentence that says
    something else ("I'll give you the number later")."""
    sentences = [first_sentence(text[start:]) for start in _starts(text)]
    kept = [
        s
        for s in sentences
        if commands.COMMAND.search(s)
        or giving_back.GIVE_BACK.search(s)
        or len(s.split()) <= 3
    ]
    return ". ".join(kept) if kept else " ".join(sentences)


def _not_asked(said_before: str) -> bool:
    """Whether what comes before a command makes it someone else's: "my landlord
    wants to", or words quoted from another ('my friend said "delete ...')."""
    return bool(
        others.OTHERS_DOING.search(said_before) or others.QUOTING.search(said_before)
    )


def _parse(request: str, now: datetime) -> Intent:
    plain = _plain(request)
    polite = framing.POLITE.sub(" ", framing.WISH.sub("don't ", plain))
    text, window = take_time(polite, now)
    text = _clean(text)
    none = Intent("none", "", window)
    if nothing.NOTHING.match(_clean(polite)) or nothing.NO_ACTION.search(polite):
        return none
    text = framing.PREFACE.sub("", text, count=1)
    if nothing.ASKS.match(text) and (
        nothing.ONE_QUESTION.fullmatch(plain.strip())
        or nothing.ONE_CLAUSE.fullmatch(plain.strip())
    ):
        return none  # "what did you remove?", "wait what did u delete last week"
    match, held = _command(text), False
    while match is not None and _held_back(text, match):  # "no need to delete X"
        match, held = _command(text, match.end()), True
    if match is not None:  # "disregard and remove the same": the last verb's object
        chained = _command(text, match.end())
        if chained is not None and commands.AND.fullmatch(
            text[match.end() : chained.start()]
        ):
            match = chained
    give = giving_back.GIVE_BACK.search(text)
    if give and held_back.HELD_BACK.search(text[: give.start()]):
        give, held = None, True  # "don't put it back"
    if (
        give
        and match is not None
        and giving_back.IN_WHAT_IS_SAID.match(text[match.end() :])
    ):
        give = None  # "forget that I want to bring back my old hobby"
    if give and (match is None or match.lastgroup not in ("back", "when")):
        after = corrections.CORRECTED.search(text, give.end())
        if after and (
            after["retract"]
            or corrections.STAY.match(after["meant"])
            or verdict.AFFIRMS.search(after["meant"])
        ):
            return none  # "bring back the old address... nah, it's fine as is"
        if _about_the_tool(plain, text[give.end() :]):
            return none  # "can you bring back deleted memories?"
        given = _give_back(text, give, window)
        # "my partner thinks you should restore X": not asked of the memory
        return replace(
            given, asked=given.asked and not _not_asked(text[: give.start()])
        )
    if match is None:
        # "no need to delete the cat, just the dog"
        just = kept.JUST_THIS.search(text)
        if just and (held or kept.KEEPS.search(text)):
            return Intent("undo", _topic(just["thing"]), window)
        return none if held else _without_command(text, plain, window)
    rest = text[match.end() :]
    if nothing.DISMISSAL.match(text, match.start(match.lastgroup or 0)) and not _topic(
        text[: match.start()]
    ):
        return none  # "ah, forget it, doesn't matter"
    if _about_the_tool(plain, rest):
        return none  # "can you undo things?"
    # "my landlord wants to remove the carpet": not asked of the memory
    unsure = _not_asked(text[: match.start(match.lastgroup or 0)])
    corrected = corrections.CORRECTED.search(rest)
    if corrected:  # "remove the gym, wait, no, the van"; "..., actually no, keep it"
        meant = _clean(corrected["meant"])
        if _command(meant) or giving_back.GIVE_BACK.search(meant):
            return _parse(meant, now)
        if (  # "never mind the van one", but not "..., forget it, the new one is fine"
            corrected["retract"]
            and corrections.THING.match(meant)
            and not verdict.AFFIRMS.search(meant)
        ):
            rest = rest[: corrected.start()]
        elif (
            corrected["retract"]
            or not _topic(meant)
            or nothing.NOTHING.match(meant)
            or corrections.STAY.match(meant)
            or nothing.OTHER_ASK.match(meant)
            or verdict.AFFIRMS.search(meant)
            or verdict.DENIES.search(meant)
        ):
            return none  # "..., never mind, it's fine"; "..., wait, no, it was right"
        elif corrections.THING.match(meant) or (
            match.lastgroup in ("back", "when") and corrections.ANCHOR.match(meant)
        ):
            rest = meant  # "the van"; "go back to before X, wait, before Y"
        else:  # "..., wait no, vegan": a correction not understood: offer, never act
            unsure = True
    if match.lastgroup in ("back", "when"):
        back = _back(rest, window)
        return replace(back, asked=back.asked and not unsure)
    before = _topic(text[: match.start()])
    named = naming.PRONOUN.match(_clean(rest)) or naming.OBJECT_PRONOUN.search(
        match.group()
    )
    # "the Lisbon trip - delete. Not happening.": the command ends its
    # sentence, so what it undoes came before it
    ended = re.match(r"\s*[.!?;]", rest)
    topic = "" if before and (named or ended) else _topic(first_sentence(rest))
    if (
        not topic
        and how_many.RECENT.search(rest)
        and not how_many.POINTS_BACK.search(rest)
    ):
        before = ""  # "this may seem silly, but undo the last change" (not "... to it")
    if (
        match.lastgroup == "redo"
        or redo.UNDONE.fullmatch(_clean(rest))
        or (not topic and redo.UNDO_WRONG.match(text[: match.start()]))
    ):
        redo_topic = topic if match.lastgroup == "redo" else ""
        return Intent("redo", redo_topic, window, asked=not unsure)
    if match.lastgroup == "restore":
        topic = _topic(giving_back.NOW_SAYS.sub(" ", rest))
        before = _topic(giving_back.NOW_SAYS.sub(" ", text[: match.start()]))
        if topic:
            return Intent("restore", topic, window, asked=not unsure)
        if before:  # "my old address, put it back"; "you got X wrong, put it back"
            said = text[: match.start()]
            wrong = verdict.WRONG.search(said) and not verdict.GONE.search(said)
            return Intent(
                "undo" if wrong else "restore", before, window, asked=not unsure
            )
        return Intent("at" if window else "redo", "", window)
    if window and window.start and how_many.ALL.fullmatch(_clean(rest)):
        return Intent("at", "", TimeWindow(None, window.start))
    if match.lastgroup == "undo":
        first = re.split(r"[.;!?,]", _clean(rest), maxsplit=1)[0]  # "nuke it all. ok."
        if how_many.EVERYTHING.fullmatch(_clean(first)):
            return Intent("before", "", window)  # before every change: forget it all
        first = how_many.TRAILING.sub("", first)  # "your last 4 changes lol"
        # "the last 2? they're both wrong"
        few = how_many.LAST_FEW.fullmatch(_clean(first))
        times = few and (few["count"].lower().startswith("x") or few["times"])
        if few and (few["recent"] or few["after"] or few["noun"] or times):
            vague = few["count"].lower().removeprefix("a ").split()[0] in (
                "few",
                "several",
                "some",
            )
            count = _count(few["count"])
            return Intent("undo", "", window, count=count, asked=not vague)
    if not topic and before and giving_back.REMOVED.search(text[: match.start()]):
        return Intent(
            "restore", before, window, asked=not unsure
        )  # "you deleted X, undo that"
    # "everything after X, undo it": the thing named before the command
    named_by = _clean(rest if topic else text[: match.start()])
    for pattern, kind in _UNDO_OF:
        found = pattern.match(named_by)
        if found and _topic(named_by[found.end() :]):
            return Intent(
                kind, _topic(named_by[found.end() :]), window, asked=not unsure
            )
    if topic:
        return Intent("undo", topic, window, asked=not unsure)
    # what the command names lies in the sentences just before it
    just_before = _topic(last_sentence(text[: match.start()]))
    return Intent("undo", before, window, asked=not unsure, named=just_before)


def _about_the_tool(plain: str, rest: str) -> bool:
    """Whether a question asks what the tool can do ("can you undo things?",
    "can you bring back deleted memories?"), `rest` being what follows its verb."""
    return "?" in plain and bool(
        nothing.GENERIC.fullmatch(_clean(rest.split("?", 1)[0]))
    )


def _held_back(text: str, command: re.Match[str]) -> bool:
    """Whether what comes before `command`'s verb negates, weighs or puts it off."""
    return bool(
        held_back.HELD_BACK.search(text[: command.start(command.lastgroup or 0)])
    )


def _count(word: str) -> int:
    """ "3", "three", "a couple of", "x3" as a number."""
    word = re.sub(r"(?i)^a\s+|\s+of$|^x(?=\d)", "", word).lower()
    return int(word) if word.isdigit() else NUMBERS[word]


def _without_command(text: str, plain: str, window: TimeWindow | None) -> Intent:
    """A request with no undo command: an undo of what it names if it says
    the memory is wrong ("the Mars thing was a joke") or asks to be rid of it
    ("bin the gym stuff"), a restore if it says something was removed ("you
    dropped my dentist"), and nothing if it only asks, thanks, asks for
    something else, or asks that a memory stay. A memory only named, or news
    ("my peanut allergy", "I'm vegan now"), is an undo not `asked` for."""
    removed = giving_back.REMOVED.search(text)
    topic = _topic(giving_back.REMOVED.sub(" ", text) if removed else text)
    if not topic:
        return Intent("none", "", window)
    if removed:  # "you deleted my address, thanks for that": no wish said
        return Intent("restore", topic, window, asked=not nothing.THANKS.search(plain))
    asks = nothing.QUESTION.search(_clean(plain)) or plain.rstrip().endswith("?")
    denied = verdict.DENIES.search(plain.rpartition("?")[2])  # "...?? I'm not"
    objects = verdict.OBJECTS.search(plain)
    if objects and others.QUOTING.search(plain[: objects.start()]):
        return Intent("none", "", window)  # "the song goes 'forget about the past'"
    if (
        (asks and not denied)
        or (nothing.THANKS.search(plain) and not objects)
        # "note that I'm not" is no other ask
        or (nothing.OTHER_ASK.match(text) and not verdict.RIDS.search(plain))
        or kept.KEEPS.search(plain)  # "please don't remove the cat"
        or kept.KEEP_IT.search(plain)  # "I know I said forget X, but keep it"
        or held_back.WEIGHED.search(plain)  # "no point deleting the gym note"
        # "it's right"
        or (verdict.AFFIRMS.search(plain) and not verdict.DENIES.search(plain))
    ):
        return Intent("none", "", window)
    # "I'm not at Acme anymore": news, unless it asks to be rid of it
    news = verdict.NEWS.search(plain) and not verdict.RIDS.search(plain)
    return Intent("undo", topic, window, asked=bool(objects) and not news)


def _command(text: str, start: int = 0) -> re.Match[str] | None:
    """The first command in `text`. A sentence that opens with "when" goes back
    to then ("when I still had the flat, go back to that") unless another
    command follows ("when I pasted that page, remove what it saved")."""
    match = next(filter(None, (c.search(text, start) for c in commands.CLAUSES)), None)
    if match is None or match.lastgroup != "when":
        return match
    later = _command(text, match.end() + 1)
    return later if later is not None and later.lastgroup != "back" else match


def _give_back(text: str, give: re.Match[str], window: TimeWindow | None) -> Intent:
    """ "Put my old job back", "you deleted X, I want it back": a restore of X, or
    an undo when X is called wrong ("you got X wrong, put it back")."""
    named = give["was"] or give["obj"] or give["wanted"] or give["had"] or ""
    if give["field"]:  # "switch my job back to nurse": the old value names it too
        named = f"{give['field']} {give['value']}"
    if naming.PRONOUN.match(named) or named.lower() in ("him", "her"):
        named = ""
    if not named and redo.UNDO_WRONG.match(text[: give.start()]):
        return Intent(
            "redo", "", window
        )  # "you shouldn't have undone that, bring it back"
    rest = text[: give.start()] + " " + named + " " + text[give.end() :]
    topic = _topic(giving_back.NOW_SAYS.sub(" ", giving_back.REMOVED.sub(" ", rest)))
    was = give["was"]
    if was is not None and (not topic or how_many.EVERYTHING.fullmatch(_clean(was))):
        return Intent(
            "at" if window else "undo", "", window
        )  # "change it back to how it was"
    if not topic:
        return Intent("at" if window else "redo", "", window)
    said = text[: give.start()]
    wrong = verdict.WRONG.search(said) and not verdict.GONE.search(
        said
    )  # not "removed by mistake"
    return Intent("undo" if wrong else "restore", topic, window)
