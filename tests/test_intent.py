"""`search.intent`: how people and agents phrase undo requests, and what they mean.

Every case is parsed at the same `NOW`, a Wednesday afternoon, so windows are exact.
"""

from __future__ import annotations

from datetime import datetime, timedelta, timezone
from zoneinfo import ZoneInfo

import pytest
from hypothesis import given
from hypothesis import strategies as st

from langgraph_chronomem.search.intent import Intent, TimeWindow, content_words, parse
from langgraph_chronomem.search.phrasing.naming import NAMED

NOW = datetime(2024, 6, 12, 15, 0, tzinfo=timezone.utc)  # Wednesday


def at(
    month: int, day: int, hour: int = 0, minute: int = 0, *, year: int = 2024
) -> datetime:
    return datetime(year, month, day, hour, minute, tzinfo=timezone.utc)


def days(month: int, day: int, count: int = 1, *, year: int = 2024) -> TimeWindow:
    """`count` whole days from `month`/`day`."""
    start = at(month, day, year=year)
    return TimeWindow(start, start + timedelta(days=count))


def hours(start: datetime, end: datetime) -> TimeWindow:
    return TimeWindow(start, end)


YESTERDAY = days(6, 11)
TODAY = days(6, 12)

UNDO = [
    # verbs, and the "the <update> about" filler around the topic
    ("undo the update about my move to NYC", "my move to NYC"),
    ("Undo the change about my job", "my job"),
    ("revert the memory about my sister's birthday", "my sister's birthday"),
    ("forget the fact that I'm vegetarian", "I'm vegetarian"),
    ("forget that I'm vegetarian", "I'm vegetarian"),
    ("forget about my ex", "my ex"),
    ("Forget everything about my ex", "my ex"),
    ("forget everything you know about my ex", "my ex"),
    ("delete the memory about my ex", "my ex"),
    ("remove what you saved about my allergies", "my allergies"),
    ("erase the note regarding my old phone number", "my old phone number"),
    ("drop the fact about my allergy", "my allergy"),
    ("cancel the last update about the dentist appointment", "the dentist appointment"),
    ("roll back the change to my address", "my address"),
    ("rollback the update about my salary", "my salary"),
    ("take back what you learned about my diet", "my diet"),
    ("Take back the thing you saved about my mom", "my mom"),
    ("Forget what I told you about my salary", "my salary"),
    ("forget what I said about my job", "my job"),
    ("Forget what I mentioned earlier about my job", "my job"),
    ("remove the memory that my favorite color is blue", "my favorite color is blue"),
    ("delete the entry saying I'm allergic to nuts", "I'm allergic to nuts"),
    ("undo the update where I said I moved to Berlin", "I moved to Berlin"),
    ("Could you remove the memory where I said I'm a teacher?", "I'm a teacher"),
    ("undo the change you made about my job", "my job"),
    ("undo the change I made about my car", "my car"),
    ("revert the memory about my car that you just saved", "my car"),
    ("undo my last change about the move to NYC", "the move to NYC"),
    ("undo my move to NYC", "my move to NYC"),
    ("forget my address", "my address"),
    # agent phrasings
    ("undo the NYC update", "NYC"),
    ("revert my address change", "address"),
    ("Undo memory: user moved to NYC", "user moved to NYC"),
    ('Undo the update: "User lives in NYC"', "User lives in NYC"),
    ('Remove the fact "user is vegan".', "user is vegan"),
    ("revert 'home_city=NYC'", "home_city=NYC"),
    ("undo latest change to profile.location", "profile.location"),
    (
        "Undo the memory update that says the user moved to NYC.",
        "the user moved to NYC",
    ),
    ("Please revert the stored fact: favorite_color = blue", "favorite_color = blue"),
    ("Undo what you remember about me living in NYC", "me living in NYC"),
    ("forget I ever told you about my ex", "my ex"),
    ("stop remembering my address", "my address"),
    ("don't remember that", ""),
    ("forget I said that", ""),
    (
        "undo the last memory update regarding the user's employer",
        "the user's employer",
    ),
    (
        "Revert the most recent memory write about the user's location",
        "the user's location",
    ),
    # politeness, casing, punctuation
    ("please undo the update about my move to NYC", "my move to NYC"),
    ("Could you please undo the update about my move to NYC?", "my move to NYC"),
    ("undo the change about my job please", "my job"),
    (
        "Can you revert the memory about Alice's phone number, thanks!",
        "Alice's phone number",
    ),
    ("Forget what I told you about Alice\u2019s car", "Alice's car"),
    ("UNDO THE UPDATE ABOUT MY MOVE TO NYC", "MY MOVE TO NYC"),
    ("undo   the update  about   my move to NYC...", "my move to NYC"),
    ("I want you to forget my address", "my address"),
    ("I need you to undo the update about my address", "my address"),
    ("let's undo the change about my job", "my job"),
    ("hey, can you just delete the note about my gym membership", "my gym membership"),
    ("nevermind, undo the thing about my car", "my car"),
    # the topic comes before the command, or there is no command at all
    ("I never said I live in Paris, remove it", "I live in Paris"),
    ("I never said that I live in Paris. Please remove it.", "I live in Paris"),
    ("I didn't say I hate cilantro, forget it", "I hate cilantro"),
    ("I never said I want to drop the class, remove it", "I want to drop the class"),
    ("I never said I live in Paris", "I live in Paris"),
    ("I'm not vegetarian anymore, forget that", "I'm not vegetarian anymore"),
    ("You stored my birthday wrong. Remove it.", "my birthday wrong"),
    ("That's wrong, undo what you saved about my birthday", "my birthday"),
    ("that's not right - undo the memory about my car", "my car"),
    ("that\u2019s not right \u2014 undo the memory about my car", "my car"),
    ("Wrong! Forget what I told you about my salary", "my salary"),
    ("No, that's not true. Delete the fact about my brother", "my brother"),
    ("Actually I moved to Denver, not NYC - undo the NYC update", "NYC"),
    # an empty topic: the latest commit
    ("undo", ""),
    ("Undo!", ""),
    ("undo, please", ""),
    ("can you undo that?", ""),
    ("undo it", ""),
    ("Undo the last update.", ""),
    ("undo the last change", ""),
    ("undo your last memory", ""),
    ("undo the last one", ""),
    ("undo the latest change you made", ""),
    ("undo what you just saved", ""),
    ("revert the most recent update", ""),
    ("scratch that", ""),
    ("that's wrong, undo that", ""),
    ("go back", ""),
    ("take it back", ""),
    ("go back to the previous version", ""),
    ("undo that for me", ""),
    # must not be misread
    ("undo the change about the undo button", "the undo button"),
    ("undo the undo button setting", "the undo button setting"),
    ("remove the reminder to redo my taxes", "the reminder to redo my taxes"),
    ("undo the update about my move back to Boston", "my move back to Boston"),
    ("forget that I still live with my parents", "I still live with my parents"),
    (
        "delete the note saying I was in Boston when it was still snowing",
        "I was in Boston when it was still snowing",
    ),
    ("Forget what I told you about Maynard", "Maynard"),
    ("undo what you saved about what I may do tomorrow", "what I may do tomorrow"),
    ("forget the note about May's birthday party", "May's birthday party"),
    ("undo the update about Mayday Parade tickets", "Mayday Parade tickets"),
    ("undo the note about my Friday yoga class", "my Friday yoga class"),
    ("forget that I march 3 times a week", "I march 3 times a week"),
    ("remove the memory that I work on Mondays", "I work on Mondays"),
    ("undo the change to my June budget", "my June budget"),
    ("forget that I moved the meeting to June", "I moved the meeting to June"),
    ("revert the update about the 2023 tax return", "the 2023 tax return"),
    (
        "delete the memory about my trip to Maynard, Massachusetts",
        "my trip to Maynard, Massachusetts",
    ),
    ("forget my favorite thing is pizza", "my favorite thing is pizza"),
]


@pytest.mark.parametrize(("request_", "topic"), UNDO)
def test_undo(request_: str, topic: str) -> None:
    assert parse(request_, now=NOW) == Intent("undo", topic)


# "go back to before X": the whole memory as it was before X (a rollback)
BEFORE = [
    ("undo everything since I moved to NYC", "I moved to NYC"),
    ("revert all changes after I met Tom", "I met Tom"),
    ("go back to before I moved to NYC", "I moved to NYC"),
    ("back to before the update about my job", "my job"),
    ("restore my memory from before the move", "the move"),
    ("Go back to the state before the move", "the move"),
    ("take me back to the version from before my trip", "my trip"),
    ("revert to before I changed jobs", "I changed jobs"),
    ("Roll back the user's memory to before they changed jobs.", "they changed jobs"),
    ("revert to how it was before I told you about my divorce", "my divorce"),
    ("set it back to how it was before my move to Oslo", "my move to Oslo"),
    ("reset everything to before I started the new job", "I started the new job"),
    ("Reset everything to how it stood before I sold the land", "I sold the land"),
    ("put everything back the way it was before the move", "the move"),
    ("can u undo everything back to before i adopted my bun", "i adopted my bun"),
]


@pytest.mark.parametrize(("request_", "topic"), BEFORE)
def test_before(request_: str, topic: str) -> None:
    assert parse(request_, now=NOW) == Intent("before", topic)


# Asking for a change without an undo verb, or with framing around it
FRAMED = [
    ("can you not store my address", "my address"),
    ("I'd prefer you not keep my salary", "my salary"),
    ("you shouldn't have saved that I hate my boss", "I hate my boss"),
    ("scrap the thing about my new bike", "my new bike"),
    ("get rid of the Mars plan", "the Mars plan"),
    ("you don't need to hold onto my old address", "my old address"),
    ("the Mars plan, get rid.", "the Mars plan"),
    ("take out the bit about my sister", "my sister"),
    ("the part about my sister, take that out", "the part about my sister"),
    ("I was kidding about the goat farm lol", "I was kidding about the goat farm lol"),
    ("the Mars thing was a joke, delete it", "the Mars thing was a joke"),
    ("you don't need to keep that my friend moved to Ohio", "my friend moved to Ohio"),
    ("ugh no, the doubles thing is wrong", "the doubles thing is wrong"),
    # the command points back at what came before it
    (
        "that junk from the page i pasted wasnt me. delete whatever it made u save",
        "junk from the page i pasted wasn't me",
    ),
    (
        "u don't need the dog's vet stuff, delete whatever u have on that",
        "you don't need the dog's vet stuff",
    ),
]


@pytest.mark.parametrize(("request_", "topic"), FRAMED)
def test_framed_requests_are_undos(request_: str, topic: str) -> None:
    assert parse(request_, now=NOW) == Intent("undo", topic)


def test_a_memory_named_alone_is_an_undo_not_asked_for() -> None:
    """What an agent may pass the undo tool: offered, never done alone."""
    assert parse("my peanut allergy", now=NOW) == Intent(
        "undo", "my peanut allergy", asked=False
    )


@pytest.mark.parametrize(
    ("request_", "names"),
    [
        ("Evening! Long shift today. Please bring back my bike, the 2021 Trek.",
         "my bike, the 2021 Trek"),
        ("Evening! Long shift. I deleted my bike, can you put it back? The 2021 Trek.",
         "I deleted my bike, , The 2021 Trek"),
        ("You deleted my 2021 Trek. Bring back my bike.", "my 2021 Trek. my bike"),
        ("Evening! Long shift. I never had the 2021 Trek road bike.",
         "I never had the 2021 Trek road bike"),
        ("Evening! Long shift. My bike, the 2021 Trek. That was a joke.",
         "My bike, the 2021 Trek. That was a joke"),
    ],
)  # fmt: skip
def test_what_a_request_names_is_its_asking_sentence_not_the_small_talk_before(
    request_: str, names: str
) -> None:
    """What a change must hold (`search.held`) is read in the give-back's own
    sentence (and the next one when it gives back "it"), or in the sentence
    calling the memory wrong (and the one before when that names nothing
    else); one that names a single thing leaves the whole topic to name it."""
    assert parse(request_).names == names


# Bring back what was removed or replaced: a restore, matched on what it replaced
RESTORE = [
    ("gimme back my old address", "my old address"),
    ("u deleted the cat thing, undo that", "cat"),
    ("you removed my gym, please undo it", "my gym"),
    ("re-add the note about my cat", "my cat"),
    ("undo deleting my cat", "my cat"),
    ("reverse the removal of my dentist", "my dentist"),
    ("can I have my old job title back", "my old job title"),
    ("restore the note about my dog", "my dog"),
    ("bring back the memory about my cat", "my cat"),
    ("restore what you removed about my dog", "my dog"),
    ("put back my old address", "my old address"),
    ("put my old job back", "my old job"),
    ("you deleted my dentist, I want that back", "my dentist"),
    ("need the Mexico City trip stuff back", "the Mexico City trip stuff"),
    ("my old gym, bring it back", "my old gym"),
    ("restore my old address, now it just says Denver", "my old address"),
    ("My job used to be nurse at MGH, now it says barista. Put the old one back",
     "My job used to be nurse at MGH, . the old one"),
    # "go back to" a thing as it was, not to a time: that memory, not all of them
    ("go back to the old answer rules", "the old answer rules"),
    ("go back to my old job", "my old job"),
    ("let's go back to my previous gym schedule", "my previous gym schedule"),
]  # fmt: skip


@pytest.mark.parametrize(("request_", "topic"), RESTORE)
def test_restore(request_: str, topic: str) -> None:
    assert parse(request_, now=NOW) == Intent("restore", topic)


def test_a_wrong_value_put_back_is_an_undo_of_it() -> None:
    assert parse("you got my birthday wrong, put it back", now=NOW) == Intent(
        "undo", "my birthday wrong"
    )


NOTHING = [
    "nice one", "never mind, leave it", "no changes please",
    "leave everything as it is", "don't change anything",
    "", "?", "ok", "OK!", "thanks!", "thank you so much", "cancel", "wrong", "no",
    "never mind", "forget it", "what did you change?", "what do you remember about me?",
    "did you save that?", "that's not right", "ok thanks, that's all for tonight",
    "I didn't say that", "what did u change?", "ok thx", "can u tell me what u saved",
    "wait what did u delete last week", "did you remove my address",
]  # fmt: skip


@pytest.mark.parametrize("request_", NOTHING)
def test_requests_that_name_nothing_ask_for_nothing(request_: str) -> None:
    assert parse(request_, now=NOW).kind == "none"


@pytest.mark.parametrize(
    "request_",
    [
        "thank you so much for remembering my allergy",
        "Thanks for updating my address.",
        "ok thanks, the knee is fine now",
        "Well, all right then. Tess and I thank you.",
        "cheers, the new job is going great",
    ],
)
def test_thanks_that_names_a_memory_asks_for_nothing(request_: str) -> None:
    """Gratitude with no command and no objection is not a request to undo,
    though it names a memory."""
    assert parse(request_, now=NOW).kind == "none"


@pytest.mark.parametrize(
    "request_",
    [
        "remember that I moved to Denver",
        "please keep my allergy on file",
        "save that my cat is called Miso",
        "update my address to 5 Elm St",
        "show me my Osaka trip",
        "remind me about my trip to Osaka",
        "hang on to my allergy note",
    ],
)
def test_a_command_that_is_not_an_undo_asks_for_nothing(request_: str) -> None:
    """Keeping, saving, updating or showing a memory is not undoing it."""
    assert parse(request_, now=NOW).kind == "none"


@pytest.mark.parametrize(
    "request_",
    [
        "please dont remove the cat",
        "never delete my allergy info",
        "dont touch the gym note",
        "the allergy note is correct",
        "you got my job right",
        "the Osaka trip is fine, leave it",
        "leave the Osaka trip alone",
    ],
)
def test_asking_that_a_memory_stay_asks_for_nothing(request_: str) -> None:
    """Keep it, don't remove it, it's right: not an undo of the memory named."""
    assert parse(request_, now=NOW).kind == "none"


@pytest.mark.parametrize(
    "request_",
    [
        "my job is right but the address is wrong",
        "the vegan thing isnt true anymore",
        "leave out the part about my ex",
    ],
)
def test_an_objection_beside_an_affirmation_is_still_an_undo(request_: str) -> None:
    assert parse(request_, now=NOW).kind == "undo"


@pytest.mark.parametrize(
    ("request_", "kind"),
    [
        ("could you possibly erase what I said about Tom", "undo"),
        ("When we moved to NYC you saved my address wrong, fix it", "undo"),
        ("I would appreciate it if you deleted the entry about my surgery", "undo"),
        ("I'd rather you forgot about the bakery idea", "undo"),
        ("why did you save that i'm vegan?? i'm not", "undo"),
        ("Would you mind restoring what you had on my grandson's hobbies?", "restore"),
        ("I'd like the details of my old job back, please", "restore"),
        ("Could you please reinstate the note on my allotment?", "restore"),
        ("why did you delete my cat?", "none"),
    ],
)
def test_polite_and_roundabout_requests(request_: str, kind: str) -> None:
    """The long way round people ask: a conditional, a question then an
    objection, "would you mind", "I'd like X back"."""
    assert parse(request_, now=NOW).kind == kind


@pytest.mark.parametrize(
    "request_",
    [
        "no need to delete the van note",
        "I don't want you to remove my allergy",
        "should you remove the gym note?",
        "I'm not sure whether to remove the Osaka trip",
        "I'm thinking about deleting the gym note",
        "I wonder whether I should remove the cat",
        "I might ask you to remove the van later",
        "would it be bad to delete the van note?",
        "don't put the old address back",
        "I don't think you should remove my peanut allergy",
        "Let's not delete the gym note",
        "Don't bother deleting the gym note",
        "No point deleting the gym note",
        "I never asked you to delete my old address",
        "You weren't supposed to delete my old address",
        "Remind me to delete the van note tomorrow",
        "Would it make sense to delete my old address?",
        "I never told you to delete that",
        "I'd rather you not delete my old address",
        "User is not sure whether the allergy note should be removed",
        "I can't decide whether to keep my gym note or delete it",
    ],
)
def test_a_command_held_back_is_not_asked_for(request_: str) -> None:
    """A command that is negated, weighed or put off is not asked for."""
    intent = parse(request_, now=NOW)
    assert intent.kind == "none" or not intent.asked


@pytest.mark.parametrize(
    "request_",
    [
        "I'm not sure why you saved my address so delete it",
        "I'm thinking about deleting the gym note, so delete it",
        "I would rather you didn't keep track of my weight. Please take that out",
        "Would it be too much trouble to delete my old address?",
        "not sure if you can do this but forget my ex's phone number",
        "If you want to delete the gym note, go ahead",
        "You should really delete my old address",
        "I think we should delete my old address",
        "delete_memory: user's favorite color is blue",
        "My address is out of date",
        "I want the gym note gone",
        "The user asked that you remove her phone number.",  # relayed, not another's
        "User says: 'please forget my maiden name'",
    ],
)
def test_a_command_after_a_hesitation_is_still_asked_for(request_: str) -> None:
    intent = parse(request_, now=NOW)
    assert intent.kind == "undo" and intent.asked


@pytest.mark.parametrize(
    "request_",
    [
        "my wife deleted the van photos",
        "I'm vegan now",
        "I moved to Denver last month",
        "It's a glorious morning here; the hens are out",
    ],
)
def test_a_statement_that_names_a_memory_is_not_asked_for(request_: str) -> None:
    """News, or a memory named in passing, with no command and nothing said
    against a memory: an undo that may be offered, never done alone."""
    intent = parse(request_, now=NOW)
    assert intent.kind == "undo" and not intent.asked


@pytest.mark.parametrize(
    "request_",
    [
        "forget everything",
        "forget everything you know about me",
        "wipe my memory",
        "undo everything",
        "erase all memories about me",
        "delete all my data",
        "forget everything I ever told you",
        "undo it all",
        "forget about me",
    ],
)
def test_forgetting_everything_is_going_back_before_every_change(
    request_: str,
) -> None:
    assert parse(request_, now=NOW) == Intent("before", "")


@pytest.mark.parametrize(
    ("request_", "count"),
    [
        ("undo the last 3 changes", 3),
        ("undo your last two edits", 2),
        ("roll back 3 changes", 3),
        ("revert the previous couple of updates", 2),
        ("undo the last 3 changes you just made", 3),
        ("revert the three most recent edits", 3),
        ("go back two steps", 2),
        ("undo the last change", 1),
        ("revert the previous 2 ones", 2),
    ],
)
def test_the_last_few_changes_are_counted(request_: str, count: int) -> None:
    assert parse(request_, now=NOW) == Intent("undo", "", count=count)


def test_a_vague_count_is_not_asked_for_exactly() -> None:
    """ "the last few changes" does not say how many: offered, never done alone."""
    assert parse("undo the last few changes", now=NOW) == Intent(
        "undo", "", count=3, asked=False
    )


@pytest.mark.parametrize(
    "request_",
    [
        "This may seem silly but undo the last change",
        "my bad, undo that",
        "undo the most recent",
        "put everything back the way it was",
    ],
)
def test_a_preamble_does_not_hide_the_latest_change(request_: str) -> None:
    assert parse(request_, now=NOW) == Intent("undo", "")


def test_the_last_edit_to_a_thing_named_before_is_that_things() -> None:
    assert parse("the van thing - can you undo your last edit to it?", now=NOW) == (
        Intent("undo", "van")
    )


def test_this_may_is_not_a_month() -> None:
    assert parse("This may sound odd, but undo the last change", now=NOW).window is None


def test_changing_it_back_is_undoing_the_latest_change() -> None:
    assert parse("change it back to how it was", now=NOW) == Intent("undo", "")
    assert parse("change my address back to what it was", now=NOW) == Intent(
        "restore", "my address"
    )


def test_a_bare_number_stays_a_change_id() -> None:
    assert parse("undo 3", now=NOW) == Intent("undo", "3")


@pytest.mark.parametrize(
    ("request_", "meant"),
    [
        ("remove the gym, wait, no, the cat", Intent("undo", "the cat")),
        ("delete the gym note, sorry, I meant the cat", Intent("undo", "the cat")),
        ("delete the gym note, never mind the van one", Intent("undo", "gym")),
        ("delete my address, I mean the old one",
         Intent("undo", "my address, I mean the old one")),
        ("remove the gym, make it quick", Intent("undo", "the gym, make it quick")),
        ("delete the gym note - sorry, I meant the cat note", Intent("undo", "cat")),
        ("delete the cat, no wait, restore the gym", Intent("restore", "the gym")),
        ("not the gym, the cat: remove it", Intent("undo", "the cat")),
        ("remove the workshop, actually no, keep it", Intent("none", "")),
        ("undo the Osaka thing. never mind, leave it", Intent("none", "")),
        ("Undo that - wait, no, it was right", Intent("none", "")),
        ("Delete the van note - actually no, don't", Intent("none", "")),
        ("delete the gym thing, never mind", Intent("none", "")),
        ("remove the note about the wait list, no rush",
         Intent("undo", "the wait list, no rush")),
    ],
)  # fmt: skip
def test_a_correction_in_the_request_wins(request_: str, meant: Intent) -> None:
    """People correct themselves mid-request: what follows the correction is meant."""
    assert parse(request_, now=NOW) == meant


@pytest.mark.parametrize(
    ("request_", "meant"),
    [
        ("Tomorrow, delete the gym note", Intent("undo", "gym", asked=False)),
        ("once I move out, delete my old address",
         Intent("undo", "my old address", asked=False)),
        ("When I get back from Spain, forget the hotel booking",
         Intent("undo", "the hotel booking", asked=False)),
        ("delete it later", Intent("undo", "", asked=False)),
        ("remove that once I've moved", Intent("undo", "", asked=False)),
        ("In a few days, please remove the trip",
         Intent("undo", "the trip", asked=False)),
        ("from now on, forget where I work",
         Intent("undo", "where I work", asked=False)),
    ],
)  # fmt: skip
def test_a_command_put_off_is_offered_not_done_now(
    request_: str, meant: Intent
) -> None:
    """The tool cannot wait: a command for later names its memory, but acting on
    it now is not what was asked."""
    assert parse(request_, now=NOW) == meant


@pytest.mark.parametrize(
    ("request_", "meant"),
    [
        ("forget that I am moving next month",
         Intent("undo", "I am moving next month")),
        ("Next week I start my new job. Delete the old job.",
         Intent("undo", "the old job")),
        ("bring back: User is reading Tomorrow, and Tomorrow, and Tomorrow",
         Intent("restore", "User is reading Tomorrow, and Tomorrow, and Tomorrow")),
        ("save it for later", Intent("none", "")),
    ],
)  # fmt: skip
def test_a_time_to_come_inside_the_memory_is_no_command_put_off(
    request_: str, meant: Intent
) -> None:
    assert parse(request_, now=NOW) == meant


@pytest.mark.parametrize(
    ("request_", "meant"),
    [
        ("no need to delete the gym note, just the van one", Intent("undo", "van")),
        ("don't remove the cat, just the dog", Intent("undo", "the dog")),
        ("please do not delete my address, only the old phone number",
         Intent("undo", "the old phone number")),
    ],
)  # fmt: skip
def test_a_command_held_back_for_one_memory_asks_for_the_other(
    request_: str, meant: Intent
) -> None:
    assert parse(request_, now=NOW) == meant


@pytest.mark.parametrize(
    ("request_", "topic"),
    [
        ("Re Kirsty. 'Absolute delight' was sarcasm. Delete whatever you saved off "
         "the back of that.", "Re Kirsty. 'Absolute delight' was sarcasm"),
        ("The Madrid plan was a daydream. Remove anything you stored because of it.",
         "The Madrid plan was a daydream"),
        ("forget everything related to that", ""),
    ],
)  # fmt: skip
def test_what_was_saved_off_the_back_of_that_is_what_came_before(
    request_: str, topic: str
) -> None:
    assert parse(request_, now=NOW) == Intent("undo", topic)


@pytest.mark.parametrize(
    "request_",
    [
        "delete the gym thing -- actually no, leave it",
        "forget my address. jk keep it",
        "scrap the Bali trip... actually hold off, it might still happen",
        "undo the last change? no wait don't",
        "remove the cat, hmm, actually don't",
        "scrap the Rome thing. Actually scrap that, leave it.",
        "forget the wedding. Sorry, ignore that, I'm tired",
        "remove my job title. on second thoughts, don't",
        "wipe the Bali trip. hmm no, not yet",
    ],
)
def test_a_command_taken_back_later_in_the_message_asks_for_nothing(
    request_: str,
) -> None:
    assert parse(request_, now=NOW) == Intent("none", "")


@pytest.mark.parametrize(
    "request_",
    [
        "ah forget it, doesn't matter",
        "forget about it, it's fine",
        "just forget it lol",
        "meh, forget about it",
        "nah cancel that request",
        "can you undo things?",
        "is it possible to delete stuff you remember?",
        "The user confirmed the Tokyo trip is still on; no changes needed.",
        "User asked whether their address was deleted. No action requested.",
        "don't you dare forget my anniversary",
        "please don't roll back my memory",
        "what happens if you forget my allergy?",
        "haha imagine if you forgot my name",
        "no rush on deleting the gym thing, I'll let you know",
        "I wouldn't delete the allergy thing if I were you",
        "note that I no longer eat meat",
        "let's go back to talking about the holiday",
    ],
)
def test_dismissals_questions_and_notes_ask_for_nothing(request_: str) -> None:
    assert parse(request_, now=NOW) == Intent("none", "")


@pytest.mark.parametrize(
    "request_",
    [
        "I'm going to delete my Facebook account",
        "my landlord wants to remove the carpet",
        "I need to forget about my ex and move on",
        "My doctor told me to forget about sugar entirely lol",
        "my boss asked me to delete the client files",
    ],
)
def test_a_verb_about_someone_elses_doing_is_not_asked_of_the_memory(
    request_: str,
) -> None:
    intent = parse(request_, now=NOW)
    assert intent.kind == "none" or not intent.asked


@pytest.mark.parametrize(
    ("request_", "meant"),
    [
        ("Can you just nix the note about the Qantas points",
         Intent("undo", "the Qantas points")),
        ("lose the bit about my tattoo", Intent("undo", "my tattoo")),
        ("The thing about me hating my boss. Yeah delete that.",
         Intent("undo", "me hating my boss")),
        ("nah yeah delete the Bali trip", Intent("undo", "the Bali trip")),
        ("remvoe the thing about my knee injury", Intent("undo", "my knee injury")),
        ("undelete the peanut allergy", Intent("restore", "the peanut allergy")),
        ("coach is Marcy. not Darcy. lose the wrong name",
         Intent("undo", "the wrong name")),
    ],
)  # fmt: skip
def test_more_ways_to_say_it(request_: str, meant: Intent) -> None:
    assert parse(request_, now=NOW) == meant


@pytest.mark.parametrize(
    ("request_", "meant"),
    [
        ('undo_memory(request="revert the last 2 changes")',
         Intent("undo", "", count=2)),
        ('undo_memory(request="roll back to before the user mentioned the layoff")',
         Intent("before", "the user mentioned the layoff")),
        ('{"tool": "undo_memory", "args": {"request": "redo"}}', Intent("redo", "")),
        ('{"action": "forget", "target": "user\'s home address in Leeds"}',
         Intent("undo", "user's home address in Leeds")),
    ],
)  # fmt: skip
def test_an_agents_call_written_out_is_read_as_its_request(
    request_: str, meant: Intent
) -> None:
    assert parse(request_, now=NOW) == meant


@pytest.mark.parametrize(
    ("request_", "meant"),
    [
        ("no no no bring it back", Intent("redo", "")),
        ("I didn't mean for you to delete that, put it back", Intent("redo", "")),
        ("Re-apply the change you just rolled back",
         Intent("redo", "the change you just rolled back")),
        ("switch my job back to nurse", Intent("restore", "my job nurse")),
        ("undo the change that replaced my London address",
         Intent("restore", "my London address")),
        ("forget that I want to bring back my old hobby of painting",
         Intent("undo", "I want to bring back my old hobby of painting")),
        ("everything after I told you about the cancer diagnosis, undo it",
         Intent("before", "the cancer diagnosis")),
        ("nuke it all. everything. fresh start.", Intent("before", "")),
        ("undo x2", Intent("undo", "", count=2)),
        ("revert the most recent 3 memory updates", Intent("undo", "", count=3)),
        ("the 'night owl' thing -- delete it, I'm a morning person now",
         Intent("undo", "night owl")),
        ("hi there", Intent("none", "")),
        ("hang onto my old address for now", Intent("none", "")),
        ("undo the last 2 changes. actually no, they're fine", Intent("none", "")),
    ],
)  # fmt: skip
def test_redo_restore_and_whole_memory_said_other_ways(
    request_: str, meant: Intent
) -> None:
    assert parse(request_, now=NOW) == meant


@pytest.mark.parametrize(
    ("request_", "meant"),
    [
        ("wait, no, delete the gym, not the cat", Intent("undo", "the gym")),
        ("please remove the diet preference (not the allergy!)",
         Intent("undo", "the diet preference")),
        ("undo the gym change. no hang on, the swimming one",
         Intent("undo", "swimming")),
        ("restore my old email, I mean my old phone number",
         Intent("restore", "my old phone number")),
        ("go back to before the Paris thing -- wait, before the London thing",
         Intent("before", "London")),
        ("Ref my earlier msg about the loan -- kindly disregard and remove the same.",
         Intent("undo", "Ref my earlier msg about the loan -- disregard")),
        ("forget the paris half marathon, not doing it anymore",
         Intent("undo", "the paris half marathon, not doing it anymore")),
    ],
)  # fmt: skip
def test_what_the_person_rules_out_leaves_the_topic(
    request_: str, meant: Intent
) -> None:
    assert parse(request_, now=NOW) == meant


@pytest.mark.parametrize(
    ("request_", "window"),
    [
        ("delete the restaurant rec from the weekend", days(6, 8, 2)),
        ("undo what you saved last weekend", days(6, 8, 2)),
    ],
)
def test_the_weekend_is_the_last_one(request_: str, window: TimeWindow) -> None:
    assert parse(request_, now=NOW).window == window


def test_since_the_weekend_goes_back_to_before_it() -> None:
    """It raised IndexError: "the weekend" has no "last"/"this" of its own."""
    memory_before = TimeWindow(None, days(6, 8, 2).start)
    assert parse("wipe everything since the weekend", now=NOW) == Intent(
        "at", "", memory_before
    )


@pytest.mark.parametrize(
    "request_",
    [
        "please do not, under any circumstances, revert my medical history",
        "Agent log: user declined the offer to undo the address update.",
        "Don't go back to when I lived in Boston, that's old news.",
        "I wasn't asking you to delete my salary",
        "No delete my daughter name please!",
        "restore my old email. actually forget it, the new one is fine",
        "no redo please",
        "What's the difference between undo and restore?",
        "Tool note: nothing to revert.",
        "Undo is a great feature",
        "No undo needed; the user confirmed the current memory is correct.",
        "[agent] user request does not require memory changes",
        "If you delete my allergy info I will be very upset",
        "Before you undo anything, ask me first.",
        "undo? no.",
        "Why would I want to undo that?",
        "idc just leave it",
        "I want you to remember that I'm diabetic",
        "I didn't say to remove it, did I?",
        "Actually, wait - don't restore the old email.",
        "Don't roll anything back, it's fine.",
        "Don't you go erasing my notes about the well pump.",
        "I changed my mind, don't redo it.",
        "I'm not saying delete it, I'm saying check it.",
        "no no no keep the dog's name",
        "Nope, I'm not going back to before the move.",
        "About the salary thing. Don't worry about it.",
        "cancel the undo request",
        "never mind about deleting my phone number",
        "ignore my last request to delete the wedding note",
        "I'd rather you didn't forget the thing about my mom",
        "Tool call skipped: user did not ask for any memory change.",
        "I asked you to forget my ex last week, did you?",
        "Noted.",
        "good, keep everything as it is",
        "please stop deleting things",
        "my daughter wanted to know if you remember her name haha",
        "Scratch that, don't remove the recipe.",
        "User retracted the request to forget the travel plans.",
        "Do not modify memory.",
        "wait dont",
        "User says: 'thanks'. Nothing to do.",
        "ill tell u later what to remove",
        "Is it possible to restore deleted memories?",
        # a sixth review's kinds: tool results, tests, capability questions,
        # retractions in other words
        "can you roll back memory to a specific date?",
        "go back to yesterday. hmm no, forget I said that",
        "The customer only wanted to confirm their saved address; no action taken.",
        "Tool result: undo completed successfully.",
        "Testing 1 2 3, ignore this",
        "Cancel that. I don't want to roll anything back.",
        "Assistant, note to self: the user said never mind about the deletion.",
        "delete my old address, but keep it until I've moved",
        # a seventh review's kinds: nothing as the object, log lines, approval,
        # hypotheticals, retractions at the end
        "Delete nothing.",
        "Undo nothing, I was just testing.",
        "2026-06-09T14:02:11Z INFO memory.undo id=88 status=ok",
        "WARN: undo requested but no matching memory found",
        "it's ok that you saved my address, i don't mind",
        "Suppose I wanted you to forget my ex, how would I do that?",
        "Can you undo things? How does that work?",
        "remove the note about my knee jk",
        "Restore my old number. Oh wait, no, the new one is right.",
        # an eighth review's kinds
        "Under no circumstances should my pension details be erased.",
        "System: rollback to checkpoint 17 completed.",
        "remember when you forgot my birthday lol",
        # a ninth review's kinds
        "For the avoidance of doubt, this is not a request to delete anything.",
        "QA check only, no changes to memory please.",
        "why would I ever want you to forget my wedding date??",
        "the song goes 'forget about the past'",
        "can you bring back deleted memories?",
        "can't undo what happened with my dad",
        "bring back the old address... nah it's fine as is",
        "next week remind me to have you delete the old insurance policy",
        "whatever you do, keep my blood type",
        "hey Siri, delete my 7am alarm",  # said to another assistant
        "I know I said forget my dad's diagnosis earlier, but keep it, he wants you "
        "to know",
        "all good, keep everything",
    ],
)
def test_more_requests_that_ask_for_nothing(request_: str) -> None:
    assert parse(request_, now=NOW).kind == "none"


@pytest.mark.parametrize(
    "request_",
    [
        "if the wedding gets cancelled, undo the wedding stuff",
        "undo the address change tomorrow",
        "undo a few things",
        "Subject to my client's approval, delete the note on the settlement offer.",
        "Pending user confirmation: undo the move to Austin.",
        "FYI I'm not at Acme anymore.",
        "after my meeting, remove the note about the merger",
        "Later, could you delete the bit about my surgery?",
        "At the end of my shift, remove the note about bed 4",
        "tmrw u can delete the concert thing",
        "thinking about having you forget my old job... not yet though",
        "undo some of the recent changes",
        "undo a couple things maybe",
        "Don't do it yet, but eventually I'll want the Boston address removed",
        "I'm not sure, but I think the note about my dosage might be wrong",
        "I'll probably want the Tokyo trip removed after the 15th",
        "after the wedding you can forget the seating plan",
        "when the divorce is final, remove my husband's number",
        "tomorrow morning bring back my old address",
        "at some point forget the note about the lawsuit",
        "I'm not sure the thing about my cousin is right",
        "my son keeps asking you to forget his curfew lol",
        "The principal wants to remove the after-school tutoring note.",
        "In case I change jobs, I'll have you delete the office address.",
        # a sixth review's kinds: others' wishes, words quoted from others, doubt
        "My mom asked that you remove her phone number.",
        "my therapist thinks I should have you forget the stuff about my ex",
        "my son says you should delete his girlfriend's name",
        "my daughter wants me to have you forget her old nickname",
        "my partner thinks you should restore the old grocery list",
        "I told my sister to forget about the loan",
        'my friend said "just delete all your memories" lol',
        "should I have you forget my ex's number?",
        "I wonder if you should forget my diet info",
        "Could be worth removing my old job title, not sure",
        "probably should forget my ex's birthday, idk",
        "in a week or so, remove my vacation dates",
        # a seventh review's kinds
        "my boyfriend wants me to make you forget about my ex",
        "My brother reckons you ought to bring back my old mobile number.",
        "Agent note: user may want the salary memory removed; awaiting confirmation.",
        "Next week I want you to delete my travel plans.",
        "My sister keeps saying 'just forget about him' but I can't.",
        "the thing about me being fired... not sure I want that saved",
        # an eighth review's kinds
        "After harvest, wipe the notes on the grain contract.",
        "Should the biopsy come back clear, please remove the cancer scare.",
        "Mum wants you to remove her phone number",
        "my therapist suggested having you forget the breakup details",
        "Possibly it would be prudent to expunge the note about my security clearance.",
        "delete several of the things you saved recently",
        "roll back a handful of the latest edits",
        "delete my salary if my boss asks",
        "on monday bring back my old work schedule",
        "if the new number doesn't work, put my old one back",
        "might be worth going back to when I still lived in Leeds",
        # a ninth review's kinds: doubts, sarcasm, reports, relays not confirmed
        "not 100% sure my allergy note is right",
        "hmm should I have you delete my address?",
        "quizás delete the thing about my ex? no sé",
        "oh yeah totally forget my allergy, what could go wrong",
        "sure, go ahead, delete my kids' names, that'd be great \U0001f644",
        "last week I told you to delete my address",
        "Agent note: customer's son has requested deletion of her diagnosis; "
        "customer has not confirmed.",
        "Agent note: customer is considering asking to remove their address; "
        "no action yet.",
        "part of me thinks you should forget my ex, I'll think about it",
        "you deleted my address last week, thanks for that",
        "remove the bit about Jenna er I mean Jessica",  # a repair not followed
    ],
)
def test_more_requests_that_are_offered_not_done(request_: str) -> None:
    intent = parse(request_, now=NOW)
    assert intent.kind == "none" or not intent.asked


@pytest.mark.parametrize(
    ("request_", "meant"),
    [
        ("Undo every change made in the past week.",
         Intent("at", "", TimeWindow(None, at(6, 5)))),
        ("The vegetarian thing got removed by mistake. Restore it.",
         Intent("restore", "The vegetarian thing got removed by mistake")),
        ("Revert to the state prior to the salary update", Intent("before", "salary")),
        ("put everything back the way it was on May 30", Intent("at", "", days(5, 30))),
        ("un-forget my wifi password", Intent("restore", "my wifi password")),
        ("That undo was a mistake. Reverse it.", Intent("redo", "")),
        ("Kill the reminder about the dentist",
         Intent("undo", "the reminder about the dentist")),
        ("rm the dentist appt memory", Intent("undo", "dentist appt")),
        ("undo 3 times", Intent("undo", "", count=3)),
        ("undo ur last 4 changes lol", Intent("undo", "", count=4)),
        ("Would you mind putting back my old email address?",
         Intent("restore", "my old email address")),
        ("yo put it back", Intent("redo", "")),
        ("Please revert the entire memory to the state it was in before I described "
         "the boiler replacement project.",
         Intent("before", "I described the boiler replacement project")),
        ("That care homes directory page -- you've kept keyword junk from it. Nothing "
         "to do with me. Bin it.",
         Intent("undo", "care homes directory page -- you've kept keyword junk from "
                "it. Nothing to do with me")),
        ("Revert all memory changes made after May 30.",
         Intent("at", "", TimeWindow(None, at(5, 31)))),
        ("take back your last three updates, they were all wrong",
         Intent("undo", "", count=3)),
        ("Please return all memories to their state before I mentioned my pregnancy.",
         Intent("before", "my pregnancy")),
        ("Undo everything from the point where I mentioned Greg onward",
         Intent("before", "Greg onward")),
        ("you replaced my gym schedule with something wrong, bring the old one back",
         Intent("restore",
                "you replaced my gym schedule with something wrong, the old one")),
        # a sixth review's kinds
        ("Revert my contact email to the old gmail one",
         Intent("restore", "my contact email the old gmail one")),
        ("wipe everything you learned since I told you about my pregnancy",
         Intent("before", "my pregnancy")),
        ("Wait, I didn't mean that. Put it back please.", Intent("redo", "")),
        ("pls go back 2 when i still had the corolla",
         Intent("still", "i had the corolla")),
        ("make memory how it was on March 1",
         Intent("at", "", TimeWindow(at(3, 1), at(3, 2)))),
        ("Set memory back to the way it was on May 3rd.",
         Intent("at", "", TimeWindow(at(5, 3), at(5, 4)))),
        ("revert memory to last Tuesday at 5pm",
         Intent("at", "", TimeWindow(at(6, 11), at(6, 12)))),
        ('undo_memory(topic="user lives in Austin")',
         Intent("undo", "user lives in Austin")),
        ('{"tool": "undo_memory", "args": {"query": "user prefers vegan meals"}}',
         Intent("undo", "user prefers vegan meals")),
        ('undo_memory(request="thanks")', Intent("none", "")),
        ("forget my 5pm meeting", Intent("undo", "my 5pm meeting")),
        ("Don't forget to delete my old address.", Intent("undo", "my old address")),
        ("plese delet the memmory about my diabetis", Intent("undo", "my diabetis")),
        ("if you saved my password, delete it", Intent("undo", "my password")),
        # "the day X": a moment to go back to
        ("put things back how they were the day i said yes to the hotel job",
         Intent("at", "yes to the hotel job")),
        ("Please set the memory as it was on the day I moved to the flat by the river",
         Intent("at", "I moved to the flat by the river")),
        ("I would like the memory exactly as on the day the medal came for my honey.",
         Intent("at", "the medal came for my honey")),
        ("you shouldn't have undone that, bring it back", Intent("redo", "")),
        ("User says: the rollback was wrong, please reverse it.", Intent("redo", "")),
        ("roll back all changes made since I brought up the lawsuit",
         Intent("before", "I brought up the lawsuit")),
        ("roll the whole memory back to before the accident stuff",
         Intent("before", "accident")),
        # a ninth review's voices: vocatives, courtesy, legal, relays, repairs
        ("bestie delete the crush thing rn", Intent("undo", "the crush thing rn")),
        ("lowkey forget i said i like anime", Intent("undo", "i like anime")),
        ("yaar please undo the Goa trip wali memory",
         Intent("undo", "the Goa trip wali memory")),
        ("hey um can you like delete the the thing i said about my boss",
         Intent("undo", "my boss")),
        ("um so like delete the uh the thing about my knee no my ankle",
         Intent("undo", "my ankle")),
        ("delete my address wait no my work address",
         Intent("undo", "my work address")),
        ("If it's not too much trouble, could you remove my maiden name?",
         Intent("undo", "my maiden name")),
        ("Would you mind terribly not keeping the note about my surgery?",
         Intent("undo", "my surgery")),
        ("It would be lovely if you could let go of what you saved about my weight.",
         Intent("undo", "my weight")),
        ("Pursuant to my right to erasure under Article 17 GDPR, I request deletion of "
         "the information concerning my medical diagnosis.",
         Intent("undo", "my medical diagnosis")),
        ("Ticket #4471: customer asks that the assistant remove the note about her "
         "miscarriage.", Intent("undo", "her miscarriage")),
        ("bestie undo the last 2 things u saved", Intent("undo", "", count=2)),
        # what is asked to stay is no part of the topic
        ("delete the part about my ex, but leave my allergies alone",
         Intent("undo", "the part about my ex")),
        ("forget my ex but keep my allergies", Intent("undo", "my ex")),
        ("The note about my shoe size is harmless, leave it. The one about my HIV "
         "status, remove.", Intent("undo", "my HIV status")),
    ],
)  # fmt: skip
def test_more_ways_to_say_which_change(request_: str, meant: Intent) -> None:
    assert parse(request_, now=NOW) == meant


def test_an_undo_after_but_is_a_command() -> None:
    assert parse("keep the gym but drop the cat", now=NOW) == Intent("undo", "the cat")


def test_thanks_with_an_objection_is_still_an_undo() -> None:
    assert parse("thanks, but I'm allergic to cashews, not peanuts", now=NOW) == (
        Intent("undo", "but I'm allergic to cashews, not peanuts")
    )


AT_AND_STILL = [
    ("go back to when I lived in Boston", "at", "I lived in Boston"),
    ("put things back the way they were when I was vegan", "at", "I was vegan"),
    ("take me back to when I worked at Google", "at", "I worked at Google"),
    ("Roll back to when my address was 5 Elm St.", "at", "my address was 5 Elm St"),
    ("revert to when I was vegan", "at", "I was vegan"),
    ("restore my memory to when I had a dog", "at", "I had a dog"),
    ("Restore the memory from when I was vegan", "at", "I was vegan"),
    ("back to the version where my job was teacher", "at", "my job was teacher"),
    ("I want to go back to when I lived in Boston", "at", "I lived in Boston"),
    ("bring me back to after I got the promotion", "at", "I got the promotion"),
    ("when I lived in Boston", "at", "I lived in Boston"),
    ("go back to when I still lived in Boston", "still", "I lived in Boston"),
    ("when I still lived in Boston", "still", "I lived in Boston"),
    ("back to when my job was still teacher", "still", "my job was teacher"),
    ("go back to when living in Boston was still true", "still", "living in Boston"),
    ("Take me back to when I was still married, please.", "still", "I was married"),
    ("back to the days when I still had a cat", "still", "I had a cat"),
    ("go back to when I wasn't vegan yet", "still", "I wasn't vegan"),
    (
        "reset everything to the point where the new job came up",
        "at",
        "the new job came up",
    ),
    ("Back when I still biked to work", "still", "I biked to work"),
    # an ongoing state ("was renting") held until it changed, as "still" says
    ("back when I was renting the flat", "still", "I was renting the flat"),
    (
        "Could you take your memory of me back to the day I got the job?",
        "at",
        "I got the job",
    ),
    (
        "can u roll everything back to how it was the day i got my diagnosis",
        "at",
        "i got my diagnosis",
    ),
]


@pytest.mark.parametrize(("request_", "kind", "topic"), AT_AND_STILL)
def test_at_and_still(request_: str, kind: str, topic: str) -> None:
    assert parse(request_, now=NOW) == Intent(kind, topic)  # type: ignore[arg-type]


REDO = [
    "redo",
    "Redo that",
    "oops, redo please",
    "undo the undo",
    "undo that undo",
    "undo your last undo",
    "undo the rollback you just did",
    "revert the revert",
    "cancel the rollback",
    "put it back",
    "put that back, please",
    "bring it back",
    "never mind, put it back",
    "restore what you removed",
    "restore what you just undid",
    "restore it",
]


@pytest.mark.parametrize("request_", REDO)
def test_redo(request_: str) -> None:
    assert parse(request_, now=NOW) == Intent("redo", "")


def test_redo_keeps_a_topic() -> None:
    assert parse("redo the change about my job", now=NOW) == Intent("redo", "my job")


TIMES = [
    # days and parts of days
    ("undo what you learned today about my diet", "my diet", TODAY),
    ("undo today's update", "", TODAY),
    ("revert the change from earlier today", "", TODAY),
    ("undo what you saved this morning", "", hours(at(6, 12), at(6, 12, 12))),
    ("undo this afternoon's change", "", hours(at(6, 12, 12), at(6, 12, 18))),
    ("undo what happened this evening", "", hours(at(6, 12, 18), at(6, 13))),
    ("undo the memory from tonight", "", hours(at(6, 12, 18), at(6, 13, 6))),
    ("undo the change to my address from yesterday", "my address", YESTERDAY),
    ("revert yesterday's update about my job", "my job", YESTERDAY),
    ("revert the update you made yesterday about my job", "my job", YESTERDAY),
    ("undo what you saved last night", "", hours(at(6, 11, 18), at(6, 12, 6))),
    ("undo yesterday morning's change", "", hours(at(6, 11), at(6, 11, 12))),
    ("revert the change from the day before yesterday", "", days(6, 10)),
    ("I saved money last month, forget it", "I saved money", days(5, 1, 31)),
    # ago, in digits and words: a day either side, more for longer ago
    (
        "undo the update about my move to NYC from 3 days ago",
        "my move to NYC",
        days(6, 8, 3),
    ),
    ("revert the change three days ago", "", days(6, 8, 3)),
    ("undo what you saved a couple of days ago", "", days(6, 9, 3)),
    ("forget what I told you a week ago about my car", "my car", days(6, 4, 3)),
    ("undo the update from 2 weeks ago", "", days(5, 27, 5)),
    ("revert the memory from a month ago", "", days(5, 9, 9)),
    ("undo that change from an hour ago", "", hours(at(6, 12, 13), at(6, 12, 15))),
    ("undo what you saved 10 minutes ago", "", hours(at(6, 12, 14, 40), NOW)),
    ("undo what you saved a few minutes ago", "", hours(at(6, 12, 14, 54), NOW)),
    # weekdays: the latest one before today
    ("undo the change from last Tuesday", "", days(6, 11)),
    ("revert what you saved last Monday about my job", "my job", days(6, 10)),
    ("undo last Wednesday's update", "", days(6, 5)),
    ("undo the update on Friday", "", days(6, 7)),
    ("undo Monday's change", "", days(6, 10)),
    ("undo the update on Wednesday", "", days(6, 5)),
    ("undo the updates since last Monday", "", TimeWindow(at(6, 10), None)),
    # calendar weeks, months and years; "past" and "last <n>" count back from now
    ("undo the change from last week", "", days(6, 3, 7)),
    ("undo last week's update about my job", "my job", days(6, 3, 7)),
    ("delete the memories about my ex from last week", "my ex", days(6, 3, 7)),
    ("revert what you saved this week", "", days(6, 10, 7)),
    ("undo the update about my car from earlier this week", "my car", days(6, 10, 7)),
    ("undo what you learned in the past week", "", days(6, 5, 8)),
    ("undo the changes from the last 3 days", "", days(6, 9, 4)),
    ("undo what you stored in the last 2 hours", "", hours(at(6, 12, 13), at(6, 13))),
    ("undo changes from the past 24 hours", "", hours(at(6, 11, 15), at(6, 13))),
    ("undo what you learned over the past 2 days", "", days(6, 10, 3)),
    ("revert last month's update", "", days(5, 1, 31)),
    ("revert what you saved this month about rent", "rent", days(6, 1, 30)),
    ("undo the change from last year", "", days(1, 1, 365, year=2023)),
    # ISO dates and times
    ("undo the update on 2024-05-08", "", days(5, 8)),
    ("revert the change from 2024-05-08", "", days(5, 8)),
    ("undo the 2024-05-08 change about my job", "my job", days(5, 8)),
    ("revert the changes since 2024-05-08", "", TimeWindow(at(5, 8), None)),
    ("undo the updates after 2024-05-08", "", TimeWindow(at(5, 9), None)),
    ("undo the last change before 2024-05-08", "", TimeWindow(None, at(5, 8))),
    ("undo the last update until 2024-05-08", "", TimeWindow(None, at(5, 9))),
    (
        "undo the change at 2024-05-08T10:30Z",
        "",
        hours(at(5, 8, 10, 30), at(5, 8, 10, 31)),
    ),
    # month names, full and short; a date without a year is the latest one
    ("undo the update on May 8", "", days(5, 8)),
    ("undo the update on May 8th, 2023", "", days(5, 8, year=2023)),
    (
        "revert what you saved since Jan 3 about my job",
        "my job",
        TimeWindow(at(1, 3), None),
    ),
    ("undo the last change before Sept. 1", "", TimeWindow(None, at(9, 1, year=2023))),
    ("undo the update after March 3rd", "", TimeWindow(at(3, 4), None)),
    ("undo the change on 8 May", "", days(5, 8)),
    ("undo the change on the 8th of May", "", days(5, 8)),
    ("undo the update on December 25", "", days(12, 25, year=2023)),
    ("undo the update about my job in May", "my job", days(5, 1, 31)),
    ("undo the update from May", "", days(5, 1, 31)),
    ("undo what you saved in June", "", days(6, 1, 30)),
    ("undo what you saved in December", "", days(12, 1, 31, year=2023)),
    ("undo the update in May 2023", "", days(5, 1, 31, year=2023)),
    ("undo the last change before May", "", TimeWindow(None, at(5, 1))),
    ("undo the update in 2023 about my taxes", "my taxes", days(1, 1, 365, year=2023)),
]


@pytest.mark.parametrize(("request_", "topic", "window"), TIMES)
def test_times(request_: str, topic: str, window: TimeWindow) -> None:
    assert parse(request_, now=NOW) == Intent("undo", topic, window)


GOING_BACK_TO_A_TIME = [
    # Undoing everything in a window goes back to the version just before it.
    ("undo everything since Monday", TimeWindow(None, at(6, 10))),
    ("revert all changes from today", TimeWindow(None, at(6, 12))),
    ("undo everything you saved yesterday", TimeWindow(None, at(6, 11))),
    (
        "revert everything since 2024-05-08T10:30:00+02:00",
        TimeWindow(None, at(5, 8, 8, 30)),
    ),
    # Going back to a time is the version at the last commit of that time.
    ("go back to yesterday", YESTERDAY),
    ("back to before yesterday", TimeWindow(None, at(6, 11))),
    ("roll back to last week's version", days(6, 3, 7)),
    ("roll back my memory to last Tuesday", days(6, 11)),
    ("rollback to 2024-05-01", days(5, 1)),
    ("restore my memories from yesterday", YESTERDAY),
    ("restore the version from May 8", days(5, 8)),
    ("restore my memory from the 1st of May", days(5, 1)),
    ("go back to May 8th", days(5, 8)),
    ("go back to May", days(5, 1, 31)),
    ("go back to before May 8", TimeWindow(None, at(5, 8))),
    ("take me back to how things were as of 2024-05-08", TimeWindow(None, at(5, 9))),
    ("Restore memory state as of 2024-05-01.", TimeWindow(None, at(5, 2))),
    ("Set my memory back to how it was yesterday", YESTERDAY),
]


@pytest.mark.parametrize(("request_", "window"), GOING_BACK_TO_A_TIME)
def test_going_back_to_a_time(request_: str, window: TimeWindow) -> None:
    assert parse(request_, now=NOW) == Intent("at", "", window)


def test_a_time_and_a_topic_together() -> None:
    assert parse("go back to when I lived in Boston, before last week", now=NOW) == (
        Intent("at", "I lived in Boston", TimeWindow(None, at(6, 3)))
    )


def test_days_begin_in_the_timezone_of_now() -> None:
    new_york = NOW.replace(hour=1).astimezone(ZoneInfo("America/New_York"))  # 9pm
    assert new_york.day == 11
    assert parse("undo yesterday's change", now=new_york).window == TimeWindow(
        at(6, 10, 4), at(6, 11, 4)
    )


def test_a_naive_now_is_utc() -> None:
    naive = NOW.replace(tzinfo=None)
    assert parse("undo yesterday's change", now=naive).window == YESTERDAY


def test_now_defaults_to_the_current_time() -> None:
    window = parse("undo today's change").window
    assert window is not None and window.start is not None
    assert window.start <= datetime.now(timezone.utc) < window.start + timedelta(days=1)


@pytest.mark.parametrize(
    "request_",
    [
        "undo the update on Feb 30",
        "undo the change on 2024-13-45",
        "undo what I did 99999999999 years ago",
        "undo what I did 10000 years ago",
    ],
)
def test_impossible_dates_are_no_window(request_: str) -> None:
    assert parse(request_, now=NOW).window is None


def test_window_membership() -> None:
    assert at(6, 11, 23) in YESTERDAY
    assert at(6, 12) not in YESTERDAY
    assert at(1, 1) in TimeWindow(None, at(5, 1))
    assert at(5, 1) not in TimeWindow(None, at(5, 1))
    assert at(5, 1) in TimeWindow(at(5, 1), None)


@pytest.mark.parametrize(
    ("topic", "words"),
    [
        ("my move to NYC", ["move", "nyc"]),
        ("I moved to 5 Elm St.", ["moved", "5", "elm", "st"]),
        ("my sister's birthday", ["sister", "birthday"]),
        ("Alice\u2019s phone number", ["alice", "phone", "number"]),
        ("I'm vegetarian", ["vegetarian"]),
        ("I don't eat meat", ["don't", "eat", "meat"]),
        ("the update about my job", ["job"]),
        ("when I still lived in Boston", ["lived", "boston"]),
        ("home_city=NYC", ["home", "city", "nyc"]),
        ("I moved to Z\u00fcrich in May", ["moved", "z\u00fcrich", "may"]),
        ("Please undo the last change", []),
        ("that", []),
        ("", []),
        ("the job, the job", ["job", "job"]),
    ],
)
def test_content_words(topic: str, words: list[str]) -> None:
    assert content_words(topic) == words


@pytest.mark.parametrize(("request_", "topic"), UNDO)
def test_a_topic_is_empty_exactly_when_it_has_no_content_words(
    request_: str, topic: str
) -> None:
    assert bool(parse(request_, now=NOW).topic) == bool(content_words(topic))


# Words of every request above, shuffled into new ones.
WORDS = sorted(
    {
        word
        for request_ in [case[0] for case in UNDO + AT_AND_STILL + TIMES] + REDO
        for word in request_.split()
    }
)


@given(
    st.one_of(
        st.text(max_size=200),
        st.lists(st.sampled_from(WORDS), max_size=30).map(" ".join),
    )
)
def test_any_text_parses(request_: str) -> None:
    intent = parse(request_, now=NOW)
    assert intent.kind in ("undo", "restore", "before", "at", "still", "redo", "none")
    # A topic has content words, or names a thing only in filler words ("my back").
    named = content_words(intent.topic) or NAMED.search(intent.topic)
    assert bool(intent.topic) == bool(named)
    assert intent.topic == intent.topic.strip()
    window = intent.window
    if window is not None:
        assert window.start is not None or window.end is not None
        if window.start is not None and window.end is not None:
            assert window.start < window.end
