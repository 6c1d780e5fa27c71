"""Is the command corrected or taken back: "not that one"?

"remove the gym, wait, no, the van" (the van is meant), "..., never mind"
(nothing is), "not the van, the workshop" (the one named second).

    >>> CORRECTED.search("remove the gym, wait, no, the van")["meant"]
    'the van'
"""

from __future__ import annotations

import re

__all__ = [
    "ANCHOR",
    "CORRECTED",
    "NOT_THIS",
    "STAY",
    "THING",
]

CORRECTED = re.compile(  # "remove the gym, wait, no, the van"; "..., never mind"
    r"(?i)\s*(?:[,.;:!?]+|\s-+|\s+but|(?=\s+(?:jk|j/k)[.!]*$)|(?=\s+(?:wait\s+no|(?:er+m?"
    r"|uh+|um+)\s+I\s+mean|no\s+(?:my|the|his|her|our|their)\s)\b))\s*(?:(?P<retract>(?:(?:sorry"
    r"|oops|oh|wait|no|hmm+|actually|nah)[,.!]?\s+)*(?:never\s*mind|nvm|scra(?:tch|p)\s+that"
    r"|ignore\s+(?:that|this|me)"
    r"|on\s+second\s+thoughts?|jk|just\s+kidding|(?:no|nope|nah)[.!]*$"
    r"|forget\s+(?:that\s+)?I\s+said\s+(?:that|it|anything)"
    r"|(?:please\s+)?(?:keep|leave)\s+(?:it|that|them|this)\b(?!\s+(?:out|off|short)))|(?:(?:sorry|oops|wait|no|hmm+"
    r"|actually|nah)[,.!]?\s+)+forget\s+(?:it|that|about\s+it)\b)"
    r"|(?:(?:oh|wait|no|sorry|oops|actually|hmm+|nah|hang\s+on|hold\s+on)[,.!]?\s+)+"
    r"(?:no|wait|hang\s+on|hold\s+on)|(?:(?:wait|no|sorry|oops)[,.!]?\s+)*I\s+meant"
    r"|(?:sorry|no|er+m?|uh+|um+)[,.!]?\s+I\s+mean|no(?=\s+(?:my|the|his|her|our|their)\s)"
    r"|I\s+mean(?=\s+(?:the|my|his|her|our|their)\b"
    r"(?![^,.;!?]*\bone\b))|correction|(?:(?:hmm+|nah|no|wait|sorry|oops)[,.!]?\s+)*"
    r"(?:actually|nah|hmm+|wait)(?=[,.!]?\s+(?:don't|do\s+not|leave|keep|hold\s+off"
    r"|not\s+(?:yet|now)|it's\s+fine|before|after|when|(?:the|my|his|her|our|their)\b)))"
    r"\b[,.!:]?\s*(?P<meant>.*)$"
)

STAY = re.compile(  # what follows a command taken back: "..., actually don't"
    r"(?i)^(?:don't|do\s+not|hold\s+off|not\s+(?:yet|now))\b"
)

ANCHOR = re.compile(r"(?i)^(?:right\s+|just\s+)?(?:when|before|after|while)\b")

THING = re.compile(  # a thing named, not a statement: "the van", "my phone number"
    r"(?i)^(?:the|my|that|this|those|these|his|her|our|their|your)\b"
)

NOT_THIS = re.compile(  # "not the van, the workshop": the one named second
    r"(?i)^(?:no[,.]?\s+)?not\s+(?:the|my|that|this|those|these)\s+[^,;:]{1,40}?"
    r"\s*[,;:]\s*(?=\S)"
)
