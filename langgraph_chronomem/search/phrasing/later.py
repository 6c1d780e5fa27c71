"""Is the command put off, or in doubt?

A time to come or a condition ("tomorrow, delete X", "once I've moved, forget
X", "do it later") is not asked now; nor is a doubt ("maybe delete X", "I'll
probably want X removed").

    >>> bool(LATER.search("tomorrow, delete my gym note"))
    True
    >>> bool(UNSURE.search("maybe delete it"))
    True
"""

from __future__ import annotations

import re

from langgraph_chronomem.search.phrasing.commands import VERB

__all__ = [
    "LATER",
    "UNSURE",
]

_IF_LATER = (  # a condition or a time to come: "once I've moved", "if I ask you to"
    r"(?:(?:once|as\s+soon\s+as)\s+(?:I|we|you|it|he|she|they|the|my|our)\b[^,.;:!?]*"
    r"|(?<!\bas\s)(?<!\beven\s)if\s+(?:I|we)\b(?!\s+(?:should|ought|shall|must|need"
    r"|want|could|can)\b)[^,.;:!?]*|(?:when|after)\s+(?:I|we)(?:'ve|\s+have|'m|\s+am)?"
    r"\s+(?-i:get|come|move|finish|leave|start|hear|talk|speak|decide|sort|go|see|check"
    r"|confirm|know|retire|graduate|tell)\b[^,.;:!?]*)"  # lower case: not a title
)

_PROVIDED = (  # a condition before the command: "if the wedding is off, undo it"
    r"(?:(?:if(?!\s+you(?:'ve|\s+have)?\s+(?:saved|stored|kept|recorded|noted|got|still"
    r"\s+have|have)\b)|unless|once|provided(?:\s+that)?|assuming|in\s+case|subject\s+to|pending"
    r"|should\s+(?:the|my|our|his|her|their|it|this|that)(?=\s+\w+\s+\w+)"
    r"|after(?=\s+(?!I\b|we\b|\w+ing\b))"
    r"|depending\s+on|at\s+the\s+end\s+of|when\s+(?:the"
    r"|my|our|his|her|their))\s+[^,.;:!?]+)"
)

_SOON = (  # a time to come: "tomorrow", "next week", "later today"
    r"(?:tomorrow(?:\s+(?:morning|afternoon|evening|night))?|at\s+some\s+point|some\s*day"
    r"|one\s+day|sometime|later(?:\s+(?:on|today|tonight|this\s+\w+))?|next\s+(?:week|month"
    r"|year|time|weekend|\w+day)|on\s+(?:mon|tues|wednes|thurs|fri|satur|sun)day"
    r"|in\s+(?:a|an|\d+|one|two|three|a\s+few|a\s+couple"
    r"\s+of)\s+(?:bit|while|days?|weeks?|months?)(?:\s+or\s+so)?|from\s+now\s+on|going\s+forward"
    rf"|in\s+(?:the\s+)?future|{_IF_LATER})"
)

LATER = re.compile(  # a command put off: "tomorrow, delete X", "do it later"
    rf"(?i)(?:(?:^|(?<=[,.;:!?]))\s*(?:{_SOON}\s*[,:]?|{_PROVIDED}\s*[,:]|(?:after|once|when)"
    r"\s+(?:the|my|our)\s+\w+(?:\s+\w+)?\s+(?=you\s+(?:can|could|may|should)\b))"
    rf"\s*(?=(?:(?:please"
    rf"|pls|just|go\s+ahead\s+and|you\s+(?:can|could|may|should)|(?:can|could|would"
    rf"|will)\s+you|I\s+(?:want|need|'d\s+like)\s+you\s+to)\s+)*(?:{VERB}|put|bring|get"
    rf"|change|switch)\b)"
    rf"|\b(?P<object>it|that|this|them|those|these)\s+{_SOON}(?=\s*(?:[,.;:!?]|$))"
    rf"|(?<!\bto\s)(?<!\bback\s)(?<!\bI\s)\b{_IF_LATER}|\bnot\s+now\b"
    r"|\s+if\s+(?:my|the|his|her|their|our|he|she|they|someone|anyone)\b[^,.;!?]*[.!?]*\s*$"
    r"|(?<!\bfor\s)\blater(?:\s+(?:on|today|tonight))?(?=[\s.!?]*$)"
    r"|\b(?P<named>change|update|edit|note|entry|memory|thing|stuff|one)\s+tomorrow"
    r"(?=[\s.!?]*$))"
)

UNSURE = re.compile(  # a wish for later, or a doubt: "I'll probably want X removed"
    r"(?i)\b(?:I'll|I\s+will|I'm\s+going\s+to)\s+(?:probably\s+|maybe\s+|likely\s+)?"
    r"(?:want|need|ask)\b|\beventually\b|\bnot\s+yet\b|\b(?:maybe|perhaps)\b"
    r"|\b(?:might|could)\s+be\s+(?:wrong|off|outdated|out\s+of\s+date)"
    r"|\bnot\s+sure\s+(?:the|that|my|(?:I|we)\s+want)\b|\bnot\s+sure(?=\s*(?:[,.;!?]|$))"
    r"|^\W*(?:(?:hmm+|um+|so|ok(?:ay)?|well)\W+)?should\s+(?:I|we)\b|\bI\s+wonder\s+(?:if|whether)\b|\bcould\s+be\s+worth\b"
    r"|\bprobably\s+should\b|\bidk\b|\bmay\s+want\b|\bmight\s+be\s+worth\b"
    r"|\b(?:it\s+)?(?:would|might|could)\s+be\s+(?:prudent|wise|better|best|worth|a\s+good"
    r"\s+idea)\b|\b(?:several|a\s+handful|a\s+couple|a\s+few|some)\s+of\s+the\b"
    r"|\bawaiting\s+(?:confirmation|approval"
    r"|sign-?off)\b|\b(?:has|have)\s+not\s+(?:yet\s+)?confirmed\b|\bunconfirmed\b"
    r"|\bno\s+action\s+yet\b|\bnot\s+(?:100\s*%|a\s+hundred\s+percent|entirely"
    r"|completely|totally|fully)\s+sure\b|\bgoing\s+back\s+and\s+forth\b"
    r"|\bpart\s+of\s+me\s+(?:thinks|wants|says)\b|\bI'll\s+think\s+about\s+it\b"
    r"|\b(?:quiz[aá]s?|tal\s+vez|no\s+s[eé])\b"  # doubts said in Spanish
    # sarcasm: "oh sure, delete my allergy, what could go wrong"
    r"|\bwhat\s+could\s+(?:possibly\s+)?go\s+wrong\b|\byeah\s+right\b"
    r"|\b(?:great|fine|perfect|brilliant|wonderful|fantastic)\W*\U0001f644\W*$"
    # a command told before, reported: "last week I told you to delete X"
    r"|^\W*(?:last\s+(?:week|month|night|time)|yesterday|earlier(?:\s+today)?|the\s+other"
    r"\s+day|a\s+(?:while|week|month)\s+ago)\s*,?\s+I\s+(?:told|asked)\s+you\s+to\b"
    r"(?![^.!?]*\b(?:still|again|but|yet)\b)"
)
