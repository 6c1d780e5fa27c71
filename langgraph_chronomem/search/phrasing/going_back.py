"""Back to when, or before what?

What follows "go back to": "when X", "before X", "how it was when X"; whether X
is a state that still held ("when I still lived in Boston", "when I was
renting"), or a memory's old value ("go back to my old job").

    >>> BACK_KEY.match("how it was before I moved")["key"]
    'before'
"""

from __future__ import annotations

import re

__all__ = [
    "BACK_KEY",
    "OLD_THING",
    "ONGOING",
    "STILL",
    "TRUE",
]

BACK_KEY = re.compile(
    r"(?i)\s*(?:(?:how|the\s+way)\s+(?:it|they|things|everything|it\s+all)\s+"
    r"(?:was|were|stood|looked|used\s+to\s+be)(?:\s+|\s*$))?"
    r"(?:(?:on\s+)?(?:the|a|their|its|my|your)\s+(?:very\s+|last\s+)?(?:time|point|version"
    r"|state|moment|morning|evening|night|week"
    r"|days?)\s+(?:(?:that\s+)?(?:it|they)\s+(?:was|were)\s+(?:in\s+)?)?)?"
    r"(?:from\s+)?(?:(?:right|just|shortly|exactly|immediately)\s+)?"
    r"(?:(?P<key>when|where|while|before|after|prior\s+to)\b)?"
)

STILL = re.compile(r"(?i)\s*\b(?:still|yet)\b")

ONGOING = re.compile(  # "was renting", "was just regular FOH", "was a student"
    r"(?i)\b(?:was|were)\s+(?:(?:\w+\s+)?\w+ing\b|(?:just|only)\b"
    r"|(?:a|an|the|my|our|his|her|their)\s+(?!\w+ed\b))"
)

TRUE = re.compile(
    r"(?i)\s+(?:was|were|is|are)\s+(?:still\s+)?(?:true|the\s+case|right|correct)$"
)

OLD_THING = re.compile(  # "go back to my old job": that memory as it was, not a time
    r"(?i)(?:the|my|our|his|her|their)\s+(?:old|previous|original|former|earlier"
    r"|usual)\s+(?!(?:version|state|memor(?:y|ies)|one|way|copy|snapshot|backup"
    r"|point|setup|everything|all)s?\b)\w"
)
