"""What is only politeness or framing around the command?

"please", "would you mind", "I'd prefer you didn't keep X" (asked as "don't
keep X"), and complaints before it ("No, that's wrong. ...").

    >>> POLITE.sub(" ", "could you please delete my address").split()
    ['delete', 'my', 'address']
"""

from __future__ import annotations

import re

from langgraph_chronomem.search.phrasing.commands import KEEPING

__all__ = [
    "POLITE",
    "PREFACE",
    "WISH",
]

POLITE = re.compile(
    r"(?i)\b(?:please|pls|kindly|possibly|(?:would|do)\s+you\s+mind|^mind(?=\s+\w+ing\b)"
    r"|(?:and\s+)?(?:don't|do\s+not)\s+forget\s+to(?=\s+(?:delete|remove|erase|undo|drop))"
    r"|(?:can|could|would|will)\s+you|(?:can|could|shall)\s+we"
    r"|(?:is|would)\s+it\s+(?:be\s+)?possible\s+(?:for\s+you\s+)?to"
    r"|^I\s+(?:want|need|'d\s+like|would\s+like)\s+you\s+to"
    r"|(?:it\s+would|it'd|I\s+would|I'd)\s+be\s+(?:\w+\s+){0,2}?(?:lovely|great|grateful"
    r"|wonderful|nice|helpful|appreciated)\s+if\s+you\s+(?:could|would)"
    r"|(?:and\s+)?(?:thanks|thank\s+you)(?:\s+(?:so|very)\s+much)?)\b"
)

WISH = re.compile(  # "I'd prefer you didn't keep X" asks as "don't keep X" does
    r"(?i)\b(?:I'd|I\s+would)\s+(?:prefer|rather)\s+(?:if\s+)?(?:you|it)\s+(?:didn't"
    rf"|did\s+not|wouldn't|would\s+not)\s+(?=(?!keep\s+track){KEEPING}\b)"
)

PREFACE = re.compile(  # complaints before the request: "No, that's wrong. ..."
    r"(?i)^(?:[\s,.!;:-]*(?:hey|ok(?:ay)?|oops|sorry|um+|hmm+|ugh|wait|well|actually|my\s+bad"
    r"|ah|oh|meh|eh|uh|erm+|lol|nah|yeah|yep|yea|so|alright|yo|scra(?:tch|p)\s+that(?=\s*[,.!;:-])"
    r"|I(?:'ve|\s+have)?\s+changed"
    r"\s+my\s+mind|nope|no(?=\s*[,.!]|\s+(?:no|wait|put|bring|undo|get|keep|leave)\b)|never\s*mind|wrong"
    r"|you\s+got\s+(?:it|that)\s+wrong|I\s+(?:didn't|did\s+not|never)\s+(?:mean|want"
    r"|ask)\s+(?:for\s+)?you\s+to\s+(?:delete|remove|forget|drop|erase|wipe|undo|revert"
    r"|change)\s+(?:that|it|this|them)|I\s+(?:didn't|did\s+not)\s+mean\s+(?:that|it|this)"
    r"(?=\s*[,.!;:-])|(?:that|this|it)(?:'s|\s+is|\s+was)\s+(?:not\s+)?"
    r"(?:wrong|right|true|correct|incorrect|a\s+mistake))\b)*[\s,.!;:-]*"
    r"(?:I\s+(?:never|didn't|did\s+not)\s+(?:say|said|tell\s+you|told\s+you"
    r"|mention(?:ed)?)(?:\s+that)?\b(?!\s+to\b)"  # not "I never told you to"
    r"|if\s+you(?:'ve|\s+have)?\s+(?:saved|stored|kept|recorded|noted|got|still\s+have"
    r"|have)\b)?"  # "if you saved my password, delete it": what is, not what may be
)
