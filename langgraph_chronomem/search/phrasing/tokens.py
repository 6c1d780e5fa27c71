"""Which words and sentences does a request have?

The words a search looks for (`WORD` less `STOPWORDS`) and where a sentence
ends ("the note about St. Albert. It was wrong": not after "St.").

    >>> [w for w in WORD.findall("forget my sister's nyc move") if w not in STOPWORDS]
    ["sister's", 'nyc', 'move']
"""

from __future__ import annotations

import re

__all__ = [
    "ABBREVIATION",
    "SENTENCE_END",
    "STOPWORDS",
    "WORD",
]

WORD = re.compile(r"[^\W_]+(?:'[^\W_]+)?")

STOPWORDS = frozenset(
    """a about again also am an and are as at ate back be been being but by can could
    did do does earlier for from had has have he her here him his how i i'd i'll
    i'm i've if in into is it its just last latest me mine my myself now of on or
    our previous recent she so than that the their them then there these they this
    those time to too us very was we were what when where which while who will with
    would yet you you're you've your yours
    change changed changes delete deleted edit entry fact facts forget info know
    learned memories memory mentioned note notes please redo remember remembered
    remove removed revert reverted said save saved say still stored thank thanks
    thing things told true undid undo update updated updates version
    wrong got get shouldn't should joke joking kidding sarcastic sarcasm
    hypothetical hypothetically anymore actually really mistake mistaken incorrect
    correct right ok okay came come up point whole bit part stuff
    anything something ever assistant agent saving storing keep kept lol haha
    pls plz thx ty btw ugh tbh idk omg honestly seriously literally basically
    anyway need know all bye goodbye cheers nothing else done good great cool
    awesome perfect fine tonight ll re ve whatever made rather asap immediately
    permanently completely entirely totally forever away yeah yep yes hmm most
    real quick quickly maybe perhaps onward onwards disregard ah oh meh eh uh erm
    um umm nah lmao instead sir madam bestie rn ngl lowkey highkey istg porfa oye
    yaar bhai wala wali""".split()  # noqa: SIM905 - a word list reads better as words
)

SENTENCE_END = re.compile(r"[.!?;]+(?=\s|$)|\n")

ABBREVIATION = re.compile(  # its full stop ends no sentence: "St. Albert"
    r"(?i)\b(st|dr|mr|mrs|ms|mt|ft|jr|sr|prof|no|vs|etc|approx)\."
)
