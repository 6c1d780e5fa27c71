"""Does it ask for something back, and what was taken?

"put my old job back", "I need those notes again", "you deleted X" (what a
restore brings back follows), "now it says Y" (what it replaces), "undo
deleting X", "undo the change that replaced X".

    >>> GIVE_BACK.search("put my old job back")["obj"]
    'my old job'
"""

from __future__ import annotations

import re

__all__ = [
    "GIVE_BACK",
    "IN_WHAT_IS_SAID",
    "NOW_SAYS",
    "REMOVAL",
    "REMOVED",
    "REPLACING",
]

GIVE_BACK = re.compile(  # "put my old job back", "I need those notes again"
    r"(?i)\b(?:(?:change|set|turn|switch|put)\s+(?P<was>[^,.!?;]{1,60}?)\s+back\s+(?:to\s+)?"
    r"(?:what|how|the\s+way)\s+(?:it|they)\s+(?:was|were|used\s+to\s+be)(?:\s+before)?$"
    r"|(?:change|set|turn|switch|put|revert|reset)\s+(?P<field>(?!(?:it|that|this|them|me"
    r"|us|things|everything|memory|memories|yourself)\b)[^,.!?;]{1,60}?)\s+(?:back\s+to"
    r"|to(?=\s+(?:the|my|its|their|his|her)\s+(?:old|previous|original|earlier|former"
    r"|prior)\b))\s+(?P<value>(?!(?:what|how|the\s+way"
    r"|when|before|after|the\s+(?:time|point|day|version))\b)[^,.!?;]{1,60})|(?:i\s+)?(?:want|need|'d\s+like|would\s+like)\s+(?:it|that|this|them"
    r"|those|him|her)\s+back|(?<!\bI\s)(?<!\bwe\s)(?:put|putting|bring|bringing|get"
    r"|getting|add|give\s+me"
    r"|gimme)\s+"
    r"(?:(?P<obj>[^,.!?;]{1,60}?)\s+)?"
    r"back\b(?!\s+(?:to|when)\b)(?:\s+in(?:\s+there)?)?|(?:can|could|may)\s+I\s+"
    r"(?:have|get)\s+(?P<had>[^,.!?;]{1,60}?)\s+back\b(?!\s+(?:to|when)\b)"
    r"|(?:want|need|'d\s+like|would\s+like)\s+(?P<wanted>[^,.!?;]{1,60}?)\s+"
    r"(?:back|again)\b"
    r"(?!\s+(?:to|when)\b))"
)

REMOVED = re.compile(  # "you deleted ...": what a restore brings back follows
    r"(?i)(?<!\bif )(?<!rather )\byou(?:'ve|\s+have)?\s+(?:just\s+)?(?:deleted|removed"
    r"|dropped|wiped|erased"
    r"|cleared|took\s+out|took\s+off|got\s+rid\s+of|forgot|lost|threw\s+out)\b"
)

NOW_SAYS = re.compile(  # "now it's all X": what a restore replaces, not brings back
    r"(?i)(?:^|(?<=[.;:!?,])|\bbut\s)\s*(?:and\s+|but\s+)?now\s+(?:it(?:'s|s|\s+is"
    r"|\s+(?:just\s+|only\s+)?says)|you(?:'ve|\s+have)?\s+(?:just\s+)?(?:got|have"
    r"|put|changed\s+it\s+to)|there(?:'s|\s+is)|all\s+(?:it|you)\s+(?:says?|have)"
    r"|they(?:'re|\s+are)|the\s+note\s+(?:just\s+)?says)\b[^.;:!?]*"
)

REMOVAL = re.compile(  # "undo deleting X", "reverse the removal of X": a restore
    r"(?i)^(?:(?:the|that|your|my)\s+)?(?:deleting|removing|erasing|forgetting"
    r"|dropping|wiping|deletion\s+of|removal\s+of)\s+"
)

REPLACING = re.compile(  # "undo the change that replaced X": a restore of X
    r"(?i)^(?:(?:the|that|your)\s+)?(?:change|update|edit|write)\s+(?:that|which)\s+"
    r"(?:replaced|overwrote|removed|deleted|changed|erased)\s+"
)

IN_WHAT_IS_SAID = re.compile(r"(?i)\s+that\s+(?:I|we|my|our)\b")
