"""What a request names: its words without the object of the command ("the
last update about"), the fillers before what is meant, and what it asks to keep.

    >>> topic_of("the last update about my move to NYC")
    'my move to NYC'
    >>> topic_of("my ex, but leave my allergies alone")
    'my ex'
"""

from __future__ import annotations

import re

from langgraph_chronomem.search.phrasing import corrections, kept, naming
from langgraph_chronomem.search.words import content_words

__all__ = ["clean", "topic_of"]


def clean(text: str) -> str:
    """`text` with each run of spaces and each empty bracket made one space, and
    the punctuation around it gone.

        >>> clean("  the  gym note (  )!! ")
        'the gym note'
    """
    return re.sub(r"\s+|\(\s*\)", " ", text).strip(" .,!?;:'\"-()")


def topic_of(text: str) -> str:
    """`text` without the object of the command ("the last update about"), and
    without what it asks to keep ("my ex, but leave my allergies alone")."""
    clauses = kept.CLAUSE.split(text)
    asked = [c for c in clauses if not kept.KEPT.search(c)]
    if asked and len(asked) < len(clauses):
        text = " ".join(asked)
    text = clean(corrections.NOT_THIS.sub("", clean(text), count=1))
    # "the note where I said that I ...": the fillers before what is meant
    for filler in (naming.OBJECT, naming.SAID, naming.OBJECT):
        match = filler.match(text)
        if match:
            text = clean(f"{match.groupdict().get('mod') or ''} {text[match.end() :]}")
    text = clean(kept.EXCEPT.sub("", naming.TRAILER.sub("", text)))
    if naming.REFERS_BACK.search(text) and set(content_words(text)) <= naming.LINKS:
        return ""  # "whatever you saved off the back of that": what came before
    return text if content_words(text) or naming.NAMED.search(text) else ""
