"""What does the request say of the memory: wrong, right, gone, or to be rid of?

"the Mars thing was a joke" (wrong: undo it), "the allergy note is correct"
(right: keep it), "you dropped my dentist" (gone), "I want X gone" (rid of it),
"I'm not at Acme anymore" (news, no wish said).

    >>> bool(DENIES.search("the Mars thing was a joke"))
    True
    >>> bool(AFFIRMS.search("the allergy note is correct"))
    True
"""

from __future__ import annotations

import re

__all__ = [
    "AFFIRMS",
    "DENIES",
    "GONE",
    "NEWS",
    "OBJECTS",
    "RIDS",
    "WRONG",
]

_DENIAL = (  # "not", "that was a joke": what says a memory is wrong
    r"n't\b|\b(?:not|no|never|nobody|nothing|nor|wrong|mistake[ns]?|incorrect"
    r"|untrue|false|jok(?:e[sd]?|ing)|kidding|sarcas\w*|made\s+up|misheard"
    r"|backwards|outdated|out\s+of\s+date|obsolete|retract(?:ed|s)?|jk|wind-?up"
    r"|winding\s+(?:you\s+)?up|pulling\s+your\s+leg)\b"
)

DENIES = re.compile(rf"(?i){_DENIAL}")

AFFIRMS = re.compile(  # "the allergy note is correct", "you got my job right"
    r"(?i)(?:\b(?:is|are|was|were|got(?:\s+[\w']+){1,3}?)|'s|'re)\s+(?:all\s+|totally\s+"
    r"|completely\s+|still\s+)?(?:correct|right|accurate|fine|ok(?:ay)?|good|great"
    r"|true|valid|spot\s+on|perfect)\b"
)

WRONG = re.compile(
    r"(?i)\b(?:wrong|mistake|mistaken|incorrect|not\s+(?:right|true|correct)|joke"
    r"|joking|kidding|shouldn't|misheard|made\s+up)\b"
)

GONE = re.compile(
    r"(?i)\b(?:removed|deleted|dropped|lost|gone|wiped|erased|disappeared|missing"
    r"|forgot(?:ten)?|replaced|overwrote|overwritten)\b"
)

_RID = (  # an ask to be rid of a memory, with no command
    r"\b(?:fix|correct|forget|lose|bin|chuck"
    r"|get\s+(?:it|that|this|them)\s+(?:out|off)|if\s+you\s+(?:(?:could|would)\s+)?"
    r"(?:deleted|removed|erased|dropped|forgot|wiped)"  # "... if you deleted X"
    r"|(?:want|like|need|get)\s+[^,.!?;]{1,60}?\s+(?:deleted|removed|erased|gone"
    r"|forgotten)|(?:needs?|has|have|ought)\s+to\s+(?:go|be\s+(?:deleted|removed"
    r"|erased|forgotten|dropped))|(?:should|must)\s+be\s+(?:deleted|removed|erased"
    r"|forgotten|dropped)|(?:could|would|can)\s+(?:\w+ly\s+)?(?:disappear|vanish"
    r"|go\s+away))\b"  # "I want X gone", "X has to go", "X could quietly disappear"
)

RIDS = re.compile(rf"(?i){_RID}")

OBJECTS = re.compile(rf"(?i){_DENIAL}|{_RID}")  # a denial, or an ask to be rid of it

NEWS = re.compile(  # "I'm not at Acme anymore": life moved on, no wish said
    r"(?i)^(?!.*\b(?:want|need|like|wish|prefer|rather)\b).*\b(?:any\s*more|no\s+longer)\b"
)
