"""Does the request ask for nothing at all?

A whole request with no wish ("ok", "thanks!", "cancel"), an agent's note that
nothing is to change, a question about what was done ("what did you delete?")
or about what the tool can do, a dismissal ("forget it, doesn't matter"),
thanks, or another ask ("remember that ...", "show me ...").

    >>> bool(NOTHING.match("ok, cancel"))
    True
    >>> bool(ASKS.match("did you delete my address"))
    True
"""

from __future__ import annotations

import re

__all__ = [
    "ASKS",
    "DISMISSAL",
    "GENERIC",
    "NOTHING",
    "NO_ACTION",
    "ONE_CLAUSE",
    "ONE_QUESTION",
    "OTHER_ASK",
    "QUESTION",
    "THANKS",
]

NOTHING = re.compile(  # a whole request that asks for no change
    r"(?i)^(?:(?:never\s*mind|nvm|no|nope|ok(?:ay)?|idc|whatever|good|great|fine|cool"
    r"|thanks)[,.!]?\s*)?(?:just\s+)?"
    r"(?:cancel|stop|abort|never\s*mind|nvm|forget\s+(?:it|about\s+it)|no|nope"
    r"|ok(?:ay)?|k|fine|sure|yes|yeah|yep|cool|great|good|nice(?:\s+one)?|perfect"
    r"|awesome|lovely|all\s+good|wrong|hm+|huh|what|no\s+changes|hi|hello|hey|hiya"
    r"|howdy|yo|good\s+(?:morning|afternoon|evening|night)|(?:hi|hello|hey)\s+there"
    r"|no-?op|noted|sounds\s+good|got\s+it|gotcha|understood|maybe\s+later|later"
    r"|(?:wait\s*,?\s*)?(?:don't|do\s+not)(?:\s+do\s+(?:it|that))?"
    r"|(?:leave|keep)\s+(?:it|that|them|everything|things|it\s+all)(?:\s+(?:alone|be|as\s+"
    r"(?:it\s+is|they\s+are|is)))?|(?:don't|do\s+not)\s+(?:change|touch|undo)\s+"
    r"(?:anything|a\s+thing|it|that))?$"
)

NO_ACTION = re.compile(  # an agent's note that nothing is to change
    r"(?i)\bnothing\s+(?:else\s+)?to\s+do\b(?!\s+with)|\bno\s+(?:memory\s+)?(?:action|change|changes"
    r"|update|updates|undo|redo|rollback"
    r"|roll-?back|revert)\s+(?:is\s+|are\s+)?(?:requested|needed|required|necessary"
    r"|wanted)\b|^no\s+(?:undo|redo|rollback|roll-?back)\b|(?:doesn't|does\s+not|don't"
    r"|do\s+not)\s+(?:require|need)\s+(?:any\s+)?(?:memory\s+)?(?:changes?|action"
    r"|updates?)\b|^(?:the\s+)?(?:undo|redo|rollback|restore)\s+(?:is|was|feature|button"
    r"|function|tool|command)\b|\bnot\s+asking\s+(?:for\s+)?(?:an?\s+)?(?:undo|redo"
    r"|rollback|change)\b|^(?:never\s*mind|nvm)\s+(?:about\s+)?\w+ing\b|\bignore\s+my\s+"
    r"(?:last\s+|previous\s+|earlier\s+)?(?:request|message|ask)\b|\bdid\s*n[o']t\s+ask"
    r"\s+for\s+(?:any\s+)?(?:memory\s+)?(?:change|action|undo)|(?:don't|doesn't|do\s+not"
    r"|does\s+not)\s+want\s+anything\s+(?:removed|deleted|changed|undone|forgotten)"
    r"|\bno\s+changes?\s+(?:today|now|for\s+now|please|thanks)\b|,\s*(?:did|have|has"
    r"|didn't|haven't)\s+(?:you|it)\s*\?\s*$|\bstop\s+(?:deleting|removing|erasing"
    r"|forgetting|undoing|changing)\b|\b(?:wants?|wanted)\s+to\s+know\b|\bnothing\s+to\s+(?:change|undo|remove"
    r"|delete|revert|restore|roll\s*back)\b|\bdifference\s+between\b|(?:don't|do\s+not)"
    r"\s+worry\s+about\s+(?:it|that)\b|^(?:how\s+(?:do"
    r"|does|can|would)|what\s+(?:does|do|is))\s+(?:I|you|we|an?|the)?\s*(?:undo|restore"
    r"|redo|roll\s*back|revert)\w*\b|\bgo\s+back\s+to\s+(?:talking|discussing|chatting|the\s+(?:topic"
    r"|subject|question))\b|\bno\s+(?:action|changes?|undo)\s+(?:was\s+|were\s+)?"
    r"(?:taken|made|performed|applied)\b|^(?:tool\s+)?(?:result|output|response|status)"
    r"\s*:|\b(?:undo|revert|rollback|roll-?back|restore|deletion|removal)\s+(?:was\s+)?"
    r"(?:completed|succeeded|successful|done|applied|failed|finished)\b"
    r"|^(?:this\s+is\s+(?:just\s+)?a\s+)?test(?:ing)?\b(?!\s+results?)"
    r"|^\W*(?:undo|delete|remove|forget|erase|restore|revert)\s+nothing\b"
    r"|^\W*(?:under\s+no\s+circumstances|on\s+no\s+account|in\s+no\s+case)\b"
    r"|^\W*\[?(?:system|tool|log|status)\]?\s*:|^\W*\[(?:tool|system|log)\]"
    r"|^\W*remember\s+when\b"
    r"|^\W*\d{4}-\d{2}-\d{2}[t\s]\d|^\W*(?:info|warn(?:ing)?|error|debug|event|trace)\b"
    r"[\s:]|\b\w+=\w+\s+\w+=\w+|\b(?:it's|it\s+is|that's|that\s+is)\s+(?:ok(?:ay)?|fine"
    r"|alright|all\s+right)\s+(?:that\s+)?you\s+(?:saved|kept|stored|remember(?:ed)?"
    r"|know)\b|^(?:suppose|imagine|hypothetically|what\s+if|say)\b[^.!]*\?\s*$"
    r"|(?:don't|do\s+not)\s+want\s+(?:you\s+)?to\s+(?:\w+\s+){0,2}?(?:anything|any\s+"
    r"(?:changes?|memories))\b|\b(?:never\s*mind|nvm)\s+(?:about\s+)?(?:the|my|that)\s+"
    r"(?:deletion|removal|undo|request|rollback|change)\b|\bnot\s+a\s+request\s+to\b"
    r"|\bno\s+changes?\s+to\s+(?:the\s+|my\s+|your\s+)?memor(?:y|ies)\b"
    r"|\b(?:don't|do\s+not)\s+actually\s+(?:delete|remove|change|undo|forget|erase)\b"
    # said to another assistant: "hey Siri, delete my 7am alarm"
    r"|^\W*(?:(?:hey|ok(?:ay)?|hi)\W+)?(?:siri|alexa|google|cortana|bixby)\b"
)

DISMISSAL = re.compile(  # "forget it, doesn't matter": asks for nothing
    r"(?i)(?:forget\s+(?:about\s+)?it|cancel\s+(?:that|this|the|my)\s+(?:\w+\s+)?request)\b"
    r"(?!\s+(?:all|was|is)\b|')"
)

ASKS = re.compile(  # a question about what was done: "did you delete X?"
    r"(?i)^(?:(?:what|which|who|when|where|why|how)(?:\s+\w+)?\s+)?(?:did|do|does"
    r"|have|has|had|is|are|was|were)\s+(?:you|I|it|that|this|there)\b"
)

ONE_QUESTION = re.compile(r"[^.!?]*\?+")

ONE_CLAUSE = re.compile(r"[^.!?;,:]*")  # "what did u delete last week", unmarked

QUESTION = re.compile(
    r"(?i)(?:\?\s*$|^(?:what|which|who|when|where|why|how|did|do|does|is|are|was"
    r"|were|have|has|can|could|would|will|should)\b)"
)

GENERIC = re.compile(  # "can you undo things?": a question about what the tool can do
    r"(?i)^(?:(?:a|an|any)\s+)?(?:specific|certain|particular|given|earlier|older|past"
    r"|previous)\s+(?:date|time|day|point|version|moment|state)s?$"
    r"|^(?:(?:deleted|removed|old|past|lost)\s+)?(?:things|stuff|anything|memories"
    r"|(?:things|stuff|what)\s+you\s+(?:know"
    r"|remember|store|save))$"
)

THANKS = re.compile(
    r"(?i)\b(?:thank|thanks|thx|ty|cheers|appreciated?|grateful|gracias|merci|danke"
    r"|good\s+job|well\s+done|nice\s+work|great\s+job"
    r"|grazie|obrigad[oa]|arigato)\b"
)

OTHER_ASK = re.compile(  # not an undo: "remember that ...", "show me ..."
    r"(?i)^(?:remember|save|note|add|keep|store|record|write|update|change|set|tell"
    r"|show|remind|list|find|look|search|give|make|put\s+down|hang\s+on\s*to"
    r"|hold\s+on\s*to"
    r"|leave(?![^,.!?;]*\bout\b))\b"  # "leave X out" is an undo
)
