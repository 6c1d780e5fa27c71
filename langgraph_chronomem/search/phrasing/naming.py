"""Which memory does the request name?

The words around what is named that name nothing ("the last NYC update you
made about", "what I told you about"), pronouns that point back ("remove
that"), and the few names made only of such words ("my back", "the joke").

    >>> text = "the last update about my move"
    >>> text[OBJECT.match(text).end() :]
    ' my move'
"""

from __future__ import annotations

import re

__all__ = [
    "LINKS",
    "NAMED",
    "OBJECT",
    "OBJECT_PRONOUN",
    "PRONOUN",
    "REFERS_BACK",
    "SAID",
    "TRAILER",
]

_DET = r"(?:the|that|this|these|those|my|your|an?|all(?:\s+of)?(?:\s+the)?)"

_NOUN = (
    r"(?:update|change|edit|memor(?:y|ies)|note|fact|thing|info(?:rmation)?|entry"
    r"|entries|save|record|commit|version|state|one|step|bit|stuff|write)s?"
)

_DID = (
    r"(?:saved|stored|learned|learnt|remember(?:ed)?|know|knew|wrote(?:\s+down)?|noted"
    r"|recorded|added|made|did|changed|updated|have|kept|got|heard|removed|deleted"
    r"|undid|forgot|reverted|dropped|said|told\s+you|mentioned)"
    r"(?:\s+(?:earlier|before|recently))?"
)

_I_SAID = (
    r"I\s+(?:just\s+|ever\s+)?(?:said|told\s+you|mentioned)(?:\s+(?:earlier|before))?"
)

_YOU_DID = rf"you\s+(?:just\s+)?(?:have\s+)?{_DID}"

OBJECT = re.compile(  # "the last NYC update you made about", "what I told you about"
    rf"(?i)(?:(?:{_DET}\s+)*(?:(?:last|latest|most\s+recent|recent|previous|wrong"
    r"|bad|incorrect|false|stored|saved)\s+)*"
    rf"(?P<mod>(?:(?!{_NOUN}\b|{_DET}\b)[\w'-]+\s+){{1,2}}?)?(?:{_NOUN}\s+)*{_NOUN}"
    rf"(?:\s+(?:that\s+|which\s+)?(?:(?:you|I)\s+)?(?:just\s+)?{_DID})?"
    rf"|(?:what|everything|anything|whatever)\s+(?:that\s+)?(?:{_YOU_DID}|{_I_SAID})"
    r"|what\s+(?:happened|changed))"
    r"(?:\s+(?:about|regarding|concerning|on|of|for|to|with|where|(?:that|which)"
    r"(?:\s+says)?|saying|says|stating|when)\b|\s*[:=]|\s*$|(?=\s*[,.;!?\"']))"
    r"|(?:(?:every|any)thing\s+)?(?:about|regarding|concerning)\b|that\b"
)

SAID = re.compile(rf"(?i)(?:{_I_SAID}|{_YOU_DID})(?:\s+that)?\b")

TRAILER = re.compile(rf"(?i)\s+(?:that\s+|which\s+)?(?:{_YOU_DID}|{_I_SAID})$")

REFERS_BACK = re.compile(r"(?i)\b(?:it|that|this|them|those|these)$")

# Words that only tie a topic to something named before it.
LINKS = frozenset(
    """off because due following based related relating connected linked arising
    out around surrounding behind everything""".split()  # noqa: SIM905
)

NAMED = re.compile(  # "my back", "the joke": a thing named only in filler words
    r"(?i)\b(?:the|my|your|his|her|our|their|that|this)\s+(?:back|jokes?)\b"
)

PRONOUN = re.compile(  # not "that" before a clause: "remove that I work Mondays"
    r"(?i)^(?:(?:any|all)\s+of\s+)?(?:it|that|this|them|those|these|the\s+same)\b"
    r"(?!\s+(?:I|I'm|my|we|we're|our|he|he's|she|she's|they|they're|their|you"
    r"|your|his|her)\b)"
)

OBJECT_PRONOUN = re.compile(r"(?i)\s(?:it|that|this|them)\s")  # "take that out"
