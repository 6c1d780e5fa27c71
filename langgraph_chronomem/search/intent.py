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

The parser asks a request one question at a time, each answered by the patterns
of one `search.phrasing` module: does it ask for nothing (`nothing`)? which
command does it give (`commands`), and is that held back (`held_back`), put off
(`later`) or someone else's (`others`)? does it ask for something back
(`giving_back`)? is the command corrected (`corrections`)? back to when
(`going_back`)? how many changes (`how_many`)? and what does it name (`naming`,
`kept`, through `search.topic`)?

Over 600 lines because the steps answering those questions are read in the
order `_parse` calls them, each a short function beside the next; the patterns,
words and topics they use live in their own modules already.
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field, replace
from datetime import datetime, timezone
from typing import Literal, NamedTuple

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
    verdict,
)
from langgraph_chronomem.search.plain import plainly
from langgraph_chronomem.search.times import NUMBERS, TimeWindow, take_time
from langgraph_chronomem.search.topic import clean, topic_of
from langgraph_chronomem.search.words import (
    content_words,
    first_sentence,
    last_sentence,
    sentence_starts,
    units_apart,
)

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


def _back(rest: str, window: TimeWindow | None) -> Intent:
    """What follows "go back to": "when X", "before X", "yesterday" or "X"."""
    key = going_back.BACK_KEY.match(rest)
    assert key is not None  # every part of it is optional
    text = clean(rest[key.end() :])
    topic = topic_of(going_back.TRUE.sub("", going_back.STILL.sub("", text)))
    if not key["key"] and not window and going_back.OLD_THING.match(text):
        return Intent("restore", topic)  # "go back to the old answer rules"
    if (key["key"] or "").lower() in ("before", "prior to"):
        gone = giving_back.REMOVED.match(text) or giving_back.REMOVAL.match(text)
        if gone and topic_of(text[gone.end() :]):  # "before you deleted X": X held
            return Intent("still", topic_of(text[gone.end() :]), window)
        if not topic and not window:  # "make it like it was before"
            return Intent("undo", "")
        return Intent("before" if topic else "at", topic, window)
    if topic or window or key["key"]:
        # "when I was renting", not "when I said I was"
        ongoing = going_back.ONGOING.search(text) and not naming.SAID.search(text)
        still = topic and (going_back.STILL.search(text) or ongoing)
        return Intent("still" if still else "at", topic, window)
    return Intent("undo", "")  # "go back to the previous version"


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
    plain = plainly(request)
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
    sentences = [first_sentence(text[start:]) for start in sentence_starts(text)]
    commanding = [
        s
        for s in sentences
        if commands.COMMAND.search(s)
        or giving_back.GIVE_BACK.search(s)
        or len(s.split()) <= 3
    ]
    return ". ".join(commanding) if commanding else " ".join(sentences)


def _not_asked(said_before: str) -> bool:
    """Whether what comes before a command makes it someone else's: "my landlord
    wants to", or words quoted from another ('my friend said "delete ...')."""
    return bool(
        others.OTHERS_DOING.search(said_before) or others.QUOTING.search(said_before)
    )


def _parse(request: str, now: datetime) -> Intent:
    """`request` read one question at a time: does it ask for nothing, which
    command does it give, is it a give-back, is the command taken back or
    corrected, and what does it name."""
    plain = plainly(request)
    polite = framing.POLITE.sub(" ", framing.WISH.sub("don't ", plain))
    text, window = take_time(polite, now)
    none = Intent("none", "", window)
    if _asks_nothing(polite):
        return none
    text = framing.PREFACE.sub("", clean(text), count=1)
    if _only_asks(text, plain):
        return none  # "what did you remove?", "wait what did u delete last week"
    match, held = _the_command(text)
    give, give_held = _the_give_back(text, match)
    if give is not None and (match is None or match.lastgroup not in ("back", "when")):
        return _give_back(text, plain, give, window)
    if match is None:
        return _without_command(text, plain, window, held=held or give_held)
    return _commanded(text, plain, match, window, now)


def _asks_nothing(polite: str) -> bool:
    """Whether the whole request asks for no change ("ok", "thanks!"), or is an
    agent's note that nothing is to change."""
    return bool(
        nothing.NOTHING.match(clean(polite)) or nothing.NO_ACTION.search(polite)
    )


def _only_asks(text: str, plain: str) -> bool:
    """Whether the request is one question about what was done ("what did you
    remove?"), marked or not ("wait what did u delete last week")."""
    return bool(
        nothing.ASKS.match(text)
        and (
            nothing.ONE_QUESTION.fullmatch(plain.strip())
            or nothing.ONE_CLAUSE.fullmatch(plain.strip())
        )
    )


def _the_command(text: str) -> tuple[re.Match[str] | None, bool]:
    """The command asked for, past any held back ("no need to delete X, ..."),
    and whether one was held back. Of two chained by "and", the second:
    "disregard and remove the same" asks for the last verb's object."""
    match, held = _command(text), False
    while match is not None and _held_back(text, match):
        match, held = _command(text, match.end()), True
    if match is not None:
        chained = _command(text, match.end())
        if chained is not None and commands.AND.fullmatch(
            text[match.end() : chained.start()]
        ):
            match = chained
    return match, held


def _the_give_back(
    text: str, command: re.Match[str] | None
) -> tuple[re.Match[str] | None, bool]:
    """The ask for something back ("put my old job back"), if one is asked, and
    whether one was held back ("don't put it back"). One inside what a command
    names is none: "forget that I want to bring back my old hobby"."""
    give = giving_back.GIVE_BACK.search(text)
    if give and held_back.HELD_BACK.search(text[: give.start()]):
        return None, True
    if (
        give
        and command is not None
        and giving_back.IN_WHAT_IS_SAID.match(text[command.end() :])
    ):
        return None, False
    return give, False


def _commanded(
    text: str,
    plain: str,
    command: re.Match[str],
    window: TimeWindow | None,
    now: datetime,
) -> Intent:
    """A request with a command: nothing if it is dismissed ("ah, forget it,
    doesn't matter") or asks what the tool can do ("can you undo things?"),
    else what the command asks once any correction is followed."""
    rest = text[command.end() :]
    verb = command.start(command.lastgroup or 0)
    dismissed = nothing.DISMISSAL.match(text, verb) and not topic_of(
        text[: command.start()]
    )
    if dismissed or _about_the_tool(plain, rest):
        return Intent("none", "", window)
    # "my landlord wants to remove the carpet": not asked of the memory
    unsure = _not_asked(text[:verb])
    corrected = _corrected(rest, command, window, now)
    if isinstance(corrected, Intent):
        return corrected
    rest, unsure = corrected.rest, unsure or not corrected.understood
    if command.lastgroup in ("back", "when"):
        back = _back(rest, window)
        return replace(back, asked=back.asked and not unsure)
    return _undo_named(text, command, rest, window, asked=not unsure)


class _Correction(NamedTuple):
    """What of a command stands after a correction: the `rest` of it, and
    whether the correction was `understood`."""

    rest: str
    understood: bool = True


def _corrected(
    rest: str, command: re.Match[str], window: TimeWindow | None, now: datetime
) -> Intent | _Correction:
    """`rest`, what follows the command, once a correction in it is followed:
    "remove the gym, wait, no, the van" names the van; "..., actually no, keep
    it" and "..., never mind, it's fine" ask for nothing; "..., wait no, go
    back to before X" asks that instead. A correction not understood ("...,
    wait no, vegan") leaves the command offered, never done alone."""
    corrected = corrections.CORRECTED.search(rest)
    if not corrected:
        return _Correction(rest)
    meant = clean(corrected["meant"])
    if _command(meant) or giving_back.GIVE_BACK.search(meant):
        return _parse(meant, now)
    if (  # "never mind the van one", but not "..., forget it, the new one is fine"
        corrected["retract"]
        and corrections.THING.match(meant)
        and not verdict.AFFIRMS.search(meant)
    ):
        return _Correction(rest[: corrected.start()])
    if (
        corrected["retract"]
        or not topic_of(meant)
        or nothing.NOTHING.match(meant)
        or corrections.STAY.match(meant)
        or nothing.OTHER_ASK.match(meant)
        or verdict.AFFIRMS.search(meant)
        or verdict.DENIES.search(meant)
    ):
        return Intent("none", "", window)  # "..., wait, no, it was right"
    if corrections.THING.match(meant) or (
        command.lastgroup in ("back", "when") and corrections.ANCHOR.match(meant)
    ):
        return _Correction(meant)  # "the van"; "go back to before X, wait, before Y"
    return _Correction(rest, understood=False)


def _undo_named(
    text: str,
    command: re.Match[str],
    rest: str,
    window: TimeWindow | None,
    *,
    asked: bool,
) -> Intent:
    """What an undo, restore or redo command names: after it ("forget my old
    job"), or before it ("the Lisbon trip - delete."), or the latest changes
    ("undo the last 3 changes")."""
    topic, before = _named_by(text, command, rest)
    if (
        command.lastgroup == "redo"
        or redo.UNDONE.fullmatch(clean(rest))
        or (not topic and redo.UNDO_WRONG.match(text[: command.start()]))
    ):
        redo_topic = topic if command.lastgroup == "redo" else ""
        return Intent("redo", redo_topic, window, asked=asked)
    if command.lastgroup == "restore":
        return _restore(text, command, rest, window, asked=asked)
    counted = _how_many(command, rest, window)
    if counted is not None:
        return counted
    return _undo_of(text, command, rest, topic, before, window, asked=asked)


def _named_by(text: str, command: re.Match[str], rest: str) -> tuple[str, str]:
    """The topic a command names after it, and the one named before it."""
    before = topic_of(text[: command.start()])
    named = naming.PRONOUN.match(clean(rest)) or naming.OBJECT_PRONOUN.search(
        command.group()
    )
    # "the Lisbon trip - delete. Not happening.": the command ends its
    # sentence, so what it undoes came before it
    ended = re.match(r"\s*[.!?;]", rest)
    topic = "" if before and (named or ended) else topic_of(first_sentence(rest))
    if (
        not topic
        and how_many.RECENT.search(rest)
        and not how_many.POINTS_BACK.search(rest)
    ):
        before = ""  # "this may seem silly, but undo the last change" (not "... to it")
    return topic, before


def _restore(
    text: str,
    command: re.Match[str],
    rest: str,
    window: TimeWindow | None,
    *,
    asked: bool,
) -> Intent:
    """A restore command ("bring back my old address"): a restore of what it
    names, an undo of what it calls wrong ("you got X wrong, put it back"), or
    with nothing named a redo."""
    topic = topic_of(giving_back.NOW_SAYS.sub(" ", rest))
    before = topic_of(giving_back.NOW_SAYS.sub(" ", text[: command.start()]))
    if topic:
        return Intent("restore", topic, window, asked=asked)
    if before:  # "my old address, put it back"; "you got X wrong, put it back"
        said = text[: command.start()]
        wrong = verdict.WRONG.search(said) and not verdict.GONE.search(said)
        return Intent("undo" if wrong else "restore", before, window, asked=asked)
    return Intent("at" if window else "redo", "", window)


def _how_many(
    command: re.Match[str], rest: str, window: TimeWindow | None
) -> Intent | None:
    """A command that counts changes rather than naming one: "undo everything
    since Monday", "forget everything", "undo the last 3 changes"."""
    if window and window.start and how_many.ALL.fullmatch(clean(rest)):
        return Intent("at", "", TimeWindow(None, window.start))
    if command.lastgroup != "undo":
        return None
    first = re.split(r"[.;!?,]", clean(rest), maxsplit=1)[0]  # "nuke it all. ok."
    if how_many.EVERYTHING.fullmatch(clean(first)):
        return Intent("before", "", window)  # before every change: forget it all
    first = how_many.TRAILING.sub("", first)  # "your last 4 changes lol"
    # "the last 2? they're both wrong"
    few = how_many.LAST_FEW.fullmatch(clean(first))
    times = few and (few["count"].lower().startswith("x") or few["times"])
    if few and (few["recent"] or few["after"] or few["noun"] or times):
        vague = few["count"].lower().removeprefix("a ").split()[0] in (
            "few",
            "several",
            "some",
        )
        return Intent("undo", "", window, count=_count(few["count"]), asked=not vague)
    return None


# what an undo of a change names: "undo deleting X" restores X
_UNDO_OF: tuple[tuple[re.Pattern[str], Kind], ...] = (
    (giving_back.REMOVAL, "restore"),
    (giving_back.REPLACING, "restore"),
    (how_many.SINCE, "before"),
)


def _undo_of(
    text: str,
    command: re.Match[str],
    rest: str,
    topic: str,
    before: str,
    window: TimeWindow | None,
    *,
    asked: bool,
) -> Intent:
    """An undo of what the command names, or a restore or a go-back when what
    it names is a removal or everything since: "you deleted X, undo that",
    "undo the change that replaced X", "everything after X, undo it"."""
    said_before = text[: command.start()]
    if not topic and before and giving_back.REMOVED.search(said_before):
        return Intent("restore", before, window, asked=asked)
    named_by = clean(rest if topic else said_before)
    for pattern, kind in _UNDO_OF:
        found = pattern.match(named_by)
        if found and topic_of(named_by[found.end() :]):
            return Intent(kind, topic_of(named_by[found.end() :]), window, asked=asked)
    if topic:
        return Intent("undo", topic, window, asked=asked)
    # what the command names lies in the sentences just before it
    just_before = topic_of(last_sentence(said_before))
    return Intent("undo", before, window, asked=asked, named=just_before)


def _about_the_tool(plain: str, rest: str) -> bool:
    """Whether a question asks what the tool can do ("can you undo things?",
    "can you bring back deleted memories?"), `rest` being what follows its verb."""
    return "?" in plain and bool(
        nothing.GENERIC.fullmatch(clean(rest.split("?", 1)[0]))
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


def _without_command(
    text: str, plain: str, window: TimeWindow | None, *, held: bool
) -> Intent:
    """A request with no undo command: an undo of what it names if it says
    the memory is wrong ("the Mars thing was a joke") or asks to be rid of it
    ("bin the gym stuff"), a restore if it says something was removed ("you
    dropped my dentist"), and nothing if it only asks, thanks, asks for
    something else, asks that a memory stay, or `held` back its command. A
    memory only named, or news ("my peanut allergy", "I'm vegan now"), is an
    undo not `asked` for; the one named after a command held back, an undo:
    "no need to delete the cat, just the dog"."""
    just = kept.JUST_THIS.search(text)
    if just and (held or kept.KEEPS.search(text)):
        return Intent("undo", topic_of(just["thing"]), window)
    removed = giving_back.REMOVED.search(text)
    topic = topic_of(giving_back.REMOVED.sub(" ", text) if removed else text)
    if held or not topic:
        return Intent("none", "", window)
    if removed:  # "you deleted my address, thanks for that": no wish said
        return Intent("restore", topic, window, asked=not nothing.THANKS.search(plain))
    asks = nothing.QUESTION.search(clean(plain)) or plain.rstrip().endswith("?")
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
    asked = bool(objects) and not news
    return Intent("undo", topic, window, asked=asked, named=_objected(text, topic))


def _objected(text: str, topic: str) -> str:
    """What the sentence that calls a memory wrong names, when the topic runs
    over sentences before it: "Evening! Long shift. I never had the 2021 Trek"
    names the Trek, not the evening. A sentence that names less than two
    things besides calling it wrong is read with the one before: "My bike, the
    2021 Trek. That was a joke". Else `""`: the topic names it."""
    said = [*verdict.OBJECTS.finditer(text)]
    if not said:
        return ""
    wrong = said[-1]
    starts = [0, *sentence_starts(text)]
    start = max(s for s in starts if s <= wrong.start())
    end = wrong.end() + len(first_sentence(text[wrong.end() :]))
    if len(content_words(text[start : wrong.start()] + text[wrong.end() : end])) < 2:
        start = max(s for s in starts if s < start) if start else 0
    named = topic_of(text[start:end])
    return named if named != topic else ""


def _command(text: str, start: int = 0) -> re.Match[str] | None:
    """The first command in `text`. A sentence that opens with "when" goes back
    to then ("when I still had the flat, go back to that") unless another
    command follows ("when I pasted that page, remove what it saved")."""
    match = next(filter(None, (c.search(text, start) for c in commands.CLAUSES)), None)
    if match is None or match.lastgroup != "when":
        return match
    following = _command(text, match.end() + 1)
    if following is not None and following.lastgroup != "back":
        return following
    return match


def _give_back(
    text: str, plain: str, give: re.Match[str], window: TimeWindow | None
) -> Intent:
    """An ask for something back ("put my old job back"), unless taken back
    after ("bring back the old address... nah, it's fine as is") or a question
    about the tool ("can you bring back deleted memories?"); not asked when
    someone else wants it ("my partner thinks you should restore X")."""
    after = corrections.CORRECTED.search(text, give.end())
    if after and (
        after["retract"]
        or corrections.STAY.match(after["meant"])
        or verdict.AFFIRMS.search(after["meant"])
    ):
        return Intent("none", "", window)
    if _about_the_tool(plain, text[give.end() :]):
        return Intent("none", "", window)
    given = _what_comes_back(text, give, window)
    return replace(given, asked=given.asked and not _not_asked(text[: give.start()]))


def _what_comes_back(
    text: str, give: re.Match[str], window: TimeWindow | None
) -> Intent:
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
    topic = topic_of(giving_back.NOW_SAYS.sub(" ", giving_back.REMOVED.sub(" ", rest)))
    was = give["was"]
    if was is not None and (not topic or how_many.EVERYTHING.fullmatch(clean(was))):
        return Intent(
            "at" if window else "undo", "", window
        )  # "change it back to how it was"
    if not topic:
        return Intent("at" if window else "redo", "", window)
    said = text[: give.start()]
    wrong = verdict.WRONG.search(said) and not verdict.GONE.search(
        said
    )  # not "removed by mistake"
    kind: Kind = "undo" if wrong else "restore"
    return Intent(kind, topic, window, named=_named_with(text, give, named, topic))


def _named_with(text: str, give: re.Match[str], named: str, topic: str) -> str:
    """What the give-back's own sentence names, when the topic runs over
    sentences before it and that sentence names two things or more: "Good
    evening. ... Kindly bring back my car, the 2012 Corolla" names "my car, the
    2012 Corolla", not "Good evening". One that gives back "her" or "it" names
    it in the next sentence too: "... can you bring her back? Flor, the nurse
    in Santa Fe". Else `""`: the topic names it."""
    start = max(s for s in [0, *sentence_starts(text)] if s <= give.start())
    after = text[give.end() :]
    own = f"{text[start : give.start()]} {named} {first_sentence(after)}"
    if not named:
        following = after[len(first_sentence(after)) :].lstrip(".!?;\n\t ")
        own = f"{own}, {first_sentence(following)}"
    own = topic_of(giving_back.NOW_SAYS.sub(" ", giving_back.REMOVED.sub(" ", own)))
    return own if own != topic and len(content_words(own)) >= 2 else ""
