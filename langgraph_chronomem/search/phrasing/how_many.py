"""How many changes: the latest, the last few, or everything?

"undo the last 3 changes", "forget everything you know about me", "undo
everything since X" (everything after X: back to before it).

    >>> LAST_FEW.fullmatch("the last 3 changes")["count"]
    '3'
"""

from __future__ import annotations

import re

__all__ = [
    "ALL",
    "EVERYTHING",
    "LAST_FEW",
    "POINTS_BACK",
    "RECENT",
    "SINCE",
    "TRAILING",
]

ALL = re.compile(
    r"(?i)(?:everything|all(?:\s+(?:of\s+)?(?:the|my|your))?(?:\s+(?:memory\s+)?changes)?"
    r"|every\s+(?:single\s+)?change)(?:\s+(?:that\s+)?(?:you(?:'ve|\s+have)?(?:\s+just)?"
    r"\s+)?(?:made|done|saved|did))?"
)

EVERYTHING = re.compile(  # "forget everything you know about me": all of memory
    r"(?i)(?:(?:about\s+)?(?:me|us)|(?:everything|all|it\s+all|all\s+of\s+it|every"
    r"\s+memory|all\s+(?:of\s+)?(?:(?:my|your|the)\s+)?(?:memor(?:y|ies)|notes|changes"
    r"|(?:personal\s+)?(?:data|info(?:rmation)?)|history)|(?:my|your)\s+(?:(?:whole|entire)"
    r"\s+)?(?:memor(?:y|ies)|(?:personal\s+)?data)|the\s+(?:whole|entire)\s+memory)"
    r"(?:\s+(?:that\s+)?(?:you|I)(?:'ve|\s+have)?(?:\s+ever)?\s+(?:know|have|saved"
    r"|stored|remember(?:ed)?|learned|learnt|kept|keep|wrote|told\s+you|said|mentioned"
    r"|shared|gave\s+you))?(?:\s+(?:about|on|of)\s+(?:me|us))?)"
)

LAST_FEW = re.compile(  # "the last 3 changes", "your two latest edits you made"
    r"(?i)(?:(?:the|my|your|these|those)\s+)?(?:(?P<recent>last|latest|previous|past"
    r"|(?:most\s+)?recent)\s+)?(?P<count>\d+|one|two|three|four|five|six|seven|eight|nine"
    r"|ten|(?:a\s+)?(?:couple|few)(?:\s+of)?|several|some(?:\s+of)?|x\d+)(?:(?:\s+the)?\s+(?P<after>most\s+recent"
    r"|latest|last|previous|recent))?(?:\s+(?P<noun>(?:memory\s+)?(?:changes|edits|updates|saves"
    r"|commits|versions|writes|things|entries|memories|notes|steps|ones)|(?P<times>times)))?"
    r"(?:\s+(?:that\s+)?"
    r"(?:you|I)(?:'ve|\s+have)?(?:\s+just)?\s+\w+(?:\s+(?:you|me))?)?"
)

TRAILING = re.compile(r"(?i)(?:\s+(?:lol|lmao|haha|pls|please|thanks|thx|ty|asap))+$")

SINCE = re.compile(  # "undo everything since X": everything after it, so before X
    r"(?i)^(?:everything|all(?:\s+(?:of\s+)?(?:the|my|your))?(?:\s+changes)?"
    r"|(?:all\s+(?:the\s+)?|every\s+|any\s+)?changes?\s+(?:(?:you\s+)?(?:made|saved|did)|that"
    r"\s+were\s+made)"
    r"|every\s+change|(?:whatever|everything|all|anything)\s+(?:(?:that\s+)?(?:you|I)"
    r"(?:'ve|\s+have)?\s+\w+|(?:that\s+)?(?:was|got|has\s+been)\s+\w+))\s+(?:since|after"
    r"|from\s+the\s+(?:point"
    r"|moment|time|day)\s+(?:where|when|that))\s+"
)

RECENT = re.compile(r"(?i)\b(?:last|latest|previous|recent)\b")

POINTS_BACK = re.compile(r"(?i)\b(?:it|that|this|them|those|these)\b")
