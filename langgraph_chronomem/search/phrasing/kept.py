"""What does the request ask to keep?

"please don't remove the cat", "forget my ex, but leave my allergies alone",
"the gym, not the cat", "no need to delete the cat, just the dog" (the one
named is the dog).

    >>> [c for c in CLAUSE.split("forget my ex, but leave my allergies alone")
    ...  if not KEPT.search(c)]
    ['forget my ex']
"""

from __future__ import annotations

import re

__all__ = [
    "CLAUSE",
    "EXCEPT",
    "JUST_THIS",
    "KEEPS",
    "KEEP_IT",
    "KEPT",
]

CLAUSE = re.compile(r"(?i)\s*(?:[,.;:!?]+|\s-+|\s+but(?=\s))\s*")

KEPT = re.compile(  # a clause asking to keep a memory: "but leave my allergies alone"
    r"(?i)^(?:(?:but|and|though|however)\s+)?(?:please\s+)?(?:(?:leave|keep)\b(?!\s+(?:it"
    r"|that|them|this)?\s*(?:out|off)\b)|(?:don't|do\s+not)\s+(?:touch|delete|remove"
    r"|change|forget)\b)|\b(?:note|one|memory|entry|bit|part|thing|record)\b[^,.;]*\b(?:is"
    r"|are)\s+(?:\w+\s+)?(?:harmless|fine|ok(?:ay)?|correct|right|true|accurate)$"
)

EXCEPT = re.compile(  # "the gym, not the cat", "the diet (not the allergy!)"
    r"(?i)\s*(?:(?:[,;]\s*)?(?:apart\s+from|except(?:\s+for)?|other\s+than|besides)\s+"
    r"(?:the|my|his|her|our|their|that|this)\s+[^,.;!?()]{1,40}|[,;]\s*(?:but\s+)?not\s+"
    r"(?:the|my|his|her|our|their|that|this)\s+"
    r"[^,.;!?()]{1,40}|\(\s*not\s+[^()]{1,40}\)?)[!.]*\s*$"
)

KEEPS = re.compile(  # "please don't remove the cat": asks that nothing change
    r"(?i)\b(?:rather|prefer)\s+(?:if\s+)?you\s+(?:didn't|did\s+not|wouldn't|would\s+not)"
    r"\s+(?:forget|delete|remove|erase|drop|undo|revert)\b|\b(?:don't|do\s+not|not|never|can't"
    r"|cannot|no(?:\s+need\s+to)?)\s+(?:(?:you\s+)?(?:ever"
    r"|dare|go)\s+)?(?:(?:saying|asking(?:\s+you)?)(?:\s+to)?\s+)?"
    r"(?:remove|delete"
    r"|forget|touch|change|undo|drop|erase|wipe|lose|clear|scrap|ditch|bin|revert"
    r"|reset|rewind|roll\s*(?:\w+\s+)?back|go(?:ing)?\s+back|restore|re-?do|modify|edit"
    r"|alter|(?:put|bring)"
    r"\s+(?:it\s+)?back|(?:go\s+)?(?:erasing|deleting|removing|forgetting)"
    r"|get\s+rid\s+of|take\s+(?:out|off)|throw\s+(?:out|away))\b"
)

KEEP_IT = re.compile(  # "..., but keep it"; not "I'd rather you didn't keep that"
    r"(?i)(?<!n't\s)(?<!not\s)(?<!never\s)\b(?:keep|leave)\s+(?:it|that|them|this)\b"
    r"(?!\s+(?:out|off)\b)"
)

JUST_THIS = re.compile(  # "no need to delete the cat, just the dog": the one named
    r"(?i)[,;:-]\s*(?:but\s+)?(?:just|only)\s+(?P<thing>(?:the|my|that|this|those"
    r"|these|his|her|our|their)\b[^,.;!?]+)[.!]*$"
)
