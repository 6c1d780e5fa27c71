"""Which command does it give: undo, restore, go back, or redo?

`COMMAND` finds one anywhere; a command the parser acts on starts a clause
(`CLAUSES`): at the start or after punctuation, or failing that after
"and/so/just/to/you" ("I want you to forget ..."). Its named group says which:
`undo` ("forget X", "get rid of X"), `restore` ("bring back X"), `back` ("go
back to when X"), `when` ("when I still had the flat, ..."), `redo`.

    >>> bool(COMMAND.search("could you get rid of the gym note"))
    True
    >>> CLAUSES[0].search("ok, bring back my old job").lastgroup
    'restore'
"""

from __future__ import annotations

import re

__all__ = [
    "AND",
    "CLAUSES",
    "COMMAND",
    "KEEPING",
    "VERB",
]

_WHOM = (
    r"(?:me|us|it(?:\s+all)?|all(?:\s+of\s+it)?|things|everything|yourself|itself"
    r"|(?:(?:my|the|your|(?:the\s+)?\w+'s)\s+)?(?:(?:whole|entire)\s+)?memor(?:y|ies)"
    r"(?:\s+of\s+me)?)"
)

_DAY = r"(?:on\s+)?the\s+(?:very\s+)?(?:day|time|moment|morning|evening|night|week)\b"

KEEPING = r"(?:remember|keep|save|store|know|hang\s+on\s*to|hold\s+on\s*to)"

VERB = (
    r"(?P<redo>re-?do|re-?apply)"
    r"|(?P<back>(?:(?:go|get|take|bring|roll|turn|set|jump|revert|restore|undo"
    r"|reset|put|move)\s*"
    rf"(?:{_WHOM}\s+)?)?back(?:\s+{_WHOM})?(?:\s*,\s*(?:if\s+you\s+(?:would|could|can"
    r"|don't\s+mind)|if\s+possible|please)\s*,)?\s+to"
    r"|(?:revert|return|reset|rewind|restore|roll\s*back|wind\s+(?:it\s+|things\s+)?back)"
    r"(?:\s+(?:(?:my|the|your|all(?:\s+(?:my|the|your))?)\s+)?(?:(?:entire|whole)\s+)?"
    r"(?:memory|memories|state"
    r"|version)|\s+yourself"
    r"|\s+(?:everything|things|it\s+all|all(?:\s+of\s+it)?))?\s+to"
    r"|restore(?:\s+\w+){0,3}?\s+from(?=\s+(?:when|before|after)\b)"
    rf"|(?:put|set|get|bring|turn|go)\s+(?:{_WHOM}\s+)?back\s+(?:to\s+)?(?:the\s+way"
    rf"|how)\s+(?:it|they|things|everything)\s+(?:was|were)(?=\s+(?:when|before)\b|\s+{_DAY})"
    rf"|return\s+(?:{_WHOM}\s+)?(?:back\s+)?(?:to\s+)?(?:the\s+way|how)\s+(?:it|they"
    rf"|things|everything)\s+(?:was|were)(?=\s+(?:when|before)\b|\s+{_DAY})"
    rf"|(?:put|set|get|make|have)\s+(?:{_WHOM}\s+)?(?:back\s+)?(?:to\s+)?(?:just\s+)?"
    r"(?:like|as|how)\s+(?:it|they|things|everything)\s+(?:was|were)"
    rf"(?=\s+(?:right\s+|just\s+)?(?:when|before|after)\b|\s+{_DAY}|\s*[.!?]*\s*$)"
    rf"|(?:put|set|get|make|have)\s+(?:{_WHOM}\s+)?(?:back\s+)?(?:just\s+)?(?:like|as)"
    r"(?=\s+(?:right\s+|just\s+)?(?:before|after|when)\b)"
    rf"|(?:I\s+(?:want|need|would\s+like)|I'd\s+like)\s+{_WHOM}\s+(?:back\s+)?(?:to\s+be\s+)?"
    r"(?:exactly\s+|just\s+)?(?:the\s+way|how|like|as)(?:\s+(?:it|they)\s+(?:was|were))?"
    rf"(?=\s+(?:right\s+|just\s+)?(?:when|before|after)\b|\s+{_DAY})"
    r"|back\s+(?=when\b)|to\s+(?=(?:the\s+(?:time|days?)\s+)?when\b))"
    r"|(?P<when>(?=(?:the\s+(?:time|days?)\s+)?when\b))"
    r"|(?P<restore>restore|restoring|recover|reinstate|reinstating|re-?add|re-?save"
    r"|un-?delete|un-?remove|un-?forget|(?:bring|put|get)(?:\s+(?:it|that|this|them))?"
    r"\s+back)"
    r"|(?P<undo>undo|revert|reverse|forget|cancel|drop|discard|remove|delete|erase"
    r"|fix|correct|deleting|removing|forgetting|erasing|dropping|wiping"
    r"|scratch|scrap|ditch|bin|chuck|trash|toss|wipe|purge|nuke|unlearn|unsave"
    r"|unremember|clear|reset|scrub|disregard|ignore|lose|nix|turf|axe|zap"
    r"|delet|delte|remvoe|remoev|forgett|fogret|kill|rm|expunge|excise|eliminate"
    r"|(?:(?:I\s+(?:hereby\s+|formally\s+)?)?(?:request|require|demand)(?:s|ed)?\s+)?"
    r"(?:the\s+)?(?:immediate\s+)?(?:removal|deletion|erasure)\s+of|let\s+go\s+of"
    r"|stop\s+(?:storing|saving|keeping|tracking|remembering)"
    r"|retract|roll\s*back|take\s+back|go\s+back|get\s+rid(?:\s+of)?|throw\s+(?:out|away)"
    r"|take\s+(?:out|off)|leave\s+out|cross\s+(?:out|off)|strike|clear\s+(?:out|away)"
    r"|take\s+(?:it|that|this|them)\s+(?:out|off)|take(?=\s+[^,.!?;]{1,60}?\s+(?:off|out"
    r"\s+of)\s+(?:my|your|the)\s+(?:profile|memory|memories|list|notes|records?|file)\b)"
    r"|take(?=\s+[^,.!?;]{1,40}?\s+(?:out|off)\s*(?:[.!?;]|$))"  # "take Kate out."
    r"|stop\s+remembering|(?:don't|do\s+not|not|no\s+need\s+to)(?:\s+need\s+to)?\s+"
    rf"{KEEPING}|you\s+shouldn't\s+have\s+(?:saved|stored|kept|remembered|noted|added"
    r"|written(?:\s+down)?|recorded)|shouldn't\s+be\s+(?:saved|stored|in\s+there)"
    r"|(?:take|change|set|roll|go)\s+(?:it|that|this|me|us|things)\s+back)"
)

COMMAND = re.compile(rf"(?i)\b(?:{VERB})\b")  # any command, anywhere

_EMOJI = "[\U0001f300-\U0001faff\u2600-\u27bf]"

CLAUSES = [
    re.compile(rf"(?i)(?:^|[,.;:!?]\s*|\s-+\s*|{_EMOJI}\s*)(?:like\s+)?(?:{VERB})\b"),
    re.compile(
        rf"(?i)\b(?:and|but|so|then|just|now|to|let's|yeah|yep|yes|nah|ok|okay|oh|ah"
        r"|lol|omg|ugh|argh|welp|btw|fyi|alright|we\s+should|bestie|bro|bruh|dude|girl"
        r"|ngl|lowkey|highkey|fr|istg|porfa|oye|yaar|bhai|um+|uh+|erm?|(?:so|um+|uh+)\s+like"
        r"|(?:the\s+)?(?:assistant|bot)|you(?:\s+(?:can|could|may|might|should|must))?"
        r"(?:\s+(?:really|probably|just|definitely|like))?)"
        rf"\s+(?:{VERB})\b"
    ),
    # one word of address before the command, in any language: "Biko, take
    # out ...", "Abeg remove ...", "... again. Anyway forget ..."
    re.compile(rf"(?i)(?:^|[.!?;]\s+)\W*[^\W\d_]+,?\s+(?:{VERB})\b"),
]

AND = re.compile(r"(?i)\s*(?:and|then|&)?\s*")
