"""Is the command negated or weighed, so not asked for?

"no need to delete X", "I don't think you should remove X", "should I delete
X?", and the same before a verb that is no command ("no point deleting X").

    >>> bool(HELD_BACK.search("no need to "))
    True
    >>> bool(WEIGHED.search("no point deleting it"))
    True
"""

from __future__ import annotations

import re

__all__ = [
    "HELD_BACK",
    "WEIGHED",
]

_WEIGHING = (  # a command weighed, doubted or put off: "I don't think you should"
    r"(?:don't|do\s+not)\s+think\s+(?:you|we|I)\s+(?:should|need\s+to|have\s+to|must)"
    r"|let's\s+not|(?:don't|do\s+not)\s+bother(?:\s+to)?|no\s+(?:point|reason)"
    r"(?:\s+(?:in|to))?|(?:it's|it\s+is)\s+not\s+(?:necessary|needed|worth\s+it)\s+to"
    r"|(?:not\s+sure|unsure)\s+(?:I|we)\s+(?:want|should|need)(?:\s+you)?(?:\s+to)?"
    r"|can't\s+decide\s+(?:whether|if)(?:\s+to)?|would\s+it\s+make\s+sense\s+to"
    r"|do\s+(?:we|I|you)\s+(?:really\s+)?(?:need|have)\s+to|hold\s+off\s+on"
    r"|(?:thinking|thought)\s+(?:about|of)|considering|debating|remind\s+me\s+to"
    r"|(?:weren't|wasn't|were\s+not|was\s+not)\s+supposed\s+to"
    r"|remind\s+me\s+\w+(?:\s+\w+)?\s+to|(?:don't|do\s+not)\s+forget\s+to"
    r"|if\s+you(?!\s+(?:could|would|can|please|don't\s+mind|\w+ed|forgot)\b)(?:\s+ever)?"
    r"|before\s+you|why\s+would\s+(?:I|we|you)\s+(?:ever\s+)?(?:want|need)(?:\s+you)?\s+to"
    r"|(?:retract(?:ed|s)?|withdr[ae]wn?|withdraws?|cancel(?:l?ed|s)?)\s+(?:the|my|his|her"
    r"|their)\s+(?:earlier\s+|previous\s+|last\s+)?request\s+to"
    r"|I'll\s+(?:probably\s+|maybe\s+)?have\s+you"
    r"|(?:declined|refused|rejected|turned\s+down)(?:\s+the\s+(?:offer|suggestion"
    r"|idea))?\s+to|(?:who|why)\s+(?:told|asked)\s+you\s+to"
    r"|(?:was|were)\s+(?:going|gonna)\s+to(?:\s+ask\s+you\s+to)?"
    r"|I'll\s+(?:probably\s+|maybe\s+)?(?:want|ask|need|get)(?:\s+you)?\s+to"
    r"|not\s+convinced\s+(?:you|we|I)\s+should|no\s+rush(?:\s+(?:on|to|with))?"
    r"|what\s+(?:happens|would\s+happen|if)(?:\s+if)?(?:\s+you)?|imagine\s+if(?:\s+you)?"
    r"|(?:are\s+you|would\s+you\s+be)\s+(?:able|allowed)\s+to|(?:wouldn't|would\s+not"
    r"|shouldn't|should\s+not)"
)

HELD_BACK = re.compile(  # what makes a command not asked for: "no need to delete"
    r"(?i)(?:\b(?:don't|do\s+not|didn't|did\s+not|won't|never|not|no\s+need|without"
    r"|can't|cannot|couldn't"
    r"|wasn't|weren't|was\s+not|were\s+not|isn't|aren't|no)(?:\s*,[^,]{1,40},)?"
    r"(?:\s+(?:need|want|ask|asked|asking|have|going|mean|meant|say|saying|telling|told"
    r"|instructing|requesting)"
    r"(?:\s+(?:you|for\s+you))?(?:\s+(?:you|we)\s+should)?)?(?:\s+to)?"
    r"|\b(?:should|shall|must|ought)\s+(?:I|we|you)(?:\s+really)?(?:\s+(?:get|ask|have"
    r"|tell)\s+you\s+to)?"
    r"|\b(?:whether|if)\s+(?:(?:I|we)\s+(?:should|ought\s+to|shall|need\s+to"
    r"|want\s+to)|to)"
    rf"|\b(?:{_WEIGHING}|planning|deciding)(?:\s+(?:ask(?:ing)?|get(?:ting)?|hav(?:e|ing)"
    r"|tell(?:ing)?)(?:\s+you)?(?:\s+to)?)?"
    r"|\b(?:(?:not\s+sure|unsure|undecided)\s+(?:whether|if|about)|(?:whether|if)\s+"
    r"(?:I|we)\s+should)(?:\s+(?!(?:but|so|and|then)\b)[\w']+){0,6}?"
    r"|\b(?:might|may)\s+(?:ask\s+you\s+to|want(?:\s+you)?\s+to|need(?:\s+you)?\s+to)"
    r"|\b(?:what|which(?:\s+ones?)?)\s+to"
    r"|\b(?:don't|do\s+not|never)\s+(?:go|take\s+(?:me|us|it|things|memory)|roll\s+"
    r"(?:it|things)|set\s+(?:it|things)|put\s+(?:it|things|everything))\s+back\s+to"
    r"|\b(?:would|will)\s+it\s+be\s+(?:bad|wrong|wise|smart|better|risky|a\s+(?:bad"
    r"|good)\s+idea)\s+to|\bis\s+it\s+(?:bad|wise|smart|better|a\s+good\s+idea)\s+to"
    r")\s*$"
)

WEIGHED = re.compile(  # the same before a verb that is no command: "no point deleting"
    rf"(?i)\b(?:{_WEIGHING}|(?:not\s+sure|unsure)\s+(?:about|whether|if))\s+"
    r"(?:[\w']+\s+){0,6}?(?:delet|remov|eras"
    r"|forget|forgot|drop|wip|clear|scrap)\w*\b"
)
