"""A request's words and sentences: what a word search looks for, where a
sentence ends, a number run into its unit.

    >>> content_words("forget my sister's NYC move")
    ['sister', 'nyc', 'move']
"""

from __future__ import annotations

import re

from langgraph_chronomem.search.phrasing import spelling, tokens

__all__ = [
    "content_words",
    "first_sentence",
    "last_sentence",
    "sentence_starts",
    "units_apart",
]


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
    for start in reversed(sentence_starts(text)):
        if len(content_words(text[start:])) >= 2:
            return text[start:]
    return text


def sentence_starts(text: str) -> list[int]:
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
