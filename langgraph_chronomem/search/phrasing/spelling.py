"""What did they type, in the spellings the other patterns expect?

Typographic quotes and dashes, chat spellings ("can u forgt my address"), a
courtesy "if" that sets no condition, and an agent's call written out
(`delete_memory: X`, `undo_memory(request="X")`).

    >>> CHAT_WORD.sub(lambda m: CHAT[m.group().lower()], "can u forgt my address")
    'can you forget my address'
"""

from __future__ import annotations

import re

__all__ = [
    "BACK_2",
    "CALL",
    "CALLED",
    "CHAT",
    "CHAT_WORD",
    "COURTESY",
    "MIND_NOT",
    "PLAIN",
]

PLAIN = str.maketrans("\u2018\u2019\u201c\u201d\u2013\u2014", "''\"\"--")

CHAT = {  # how people type to an assistant, and what the patterns expect
    "u": "you", "ya": "you", "ur": "your", "pls": "please", "plz": "please",
    "plese": "please", "pleas": "please", "pleeze": "please", "forgt": "forget",
    "frget": "forget", "foget": "forget", "memmory": "memory", "memroy": "memory",
    "thx": "thanks", "abt": "about", "cuz": "because", "coz": "because",
    "dont": "don't", "didnt": "didn't",
    "doesnt": "doesn't", "wasnt": "wasn't", "isnt": "isn't", "arent": "aren't",
    "werent": "weren't", "cant": "can't", "couldnt": "couldn't",
    "shouldnt": "shouldn't", "wouldnt": "wouldn't", "im": "I'm", "ive": "I've",
    "youre": "you're", "youve": "you've", "thats": "that's", "whats": "what's",
    "tmrw": "tomorrow", "tmr": "tomorrow", "tmw": "tomorrow",
}  # fmt: skip

CHAT_WORD = re.compile(r"(?i)\b(?:" + "|".join(CHAT) + r")\b(?!')")

COURTESY = re.compile(  # "If you don't mind, ...": an "if" that sets no condition
    r"(?i)^\W*if\s+(?:(?:it's|it\s+is|that's|that\s+is)\s+not\s+too\s+much\s+(?:trouble"
    r"|bother)|you\s+(?:don't|do\s+not)\s+mind|possible|you\s+(?:would|could)\s+be\s+so"
    r"\s+kind|you\s+please)\s*[,:-]?\s*"
)

MIND_NOT = re.compile(  # "would you mind terribly not keeping X": stop keeping it
    r"(?i)\b(?:would|do)\s+you\s+mind(?:\s+(?:terribly|awfully|too\s+much))?\s+not\s+"
    r"(?=(?:keep|stor|sav|remember|track)ing\b)"
)

CALL = re.compile(  # an agent's spelling: "delete_memory: ...", "memory_delete(...)"
    r"(?i)^\s*(?:(delete|remove|forget|erase|undo)_(?:memory|memories|item|note)"
    r"|memory_(delete|remove|forget|erase|undo))\b\(?"
)

CALLED = re.compile(  # an agent's call written out: undo_memory(request="...")
    r"""(?is)^\s*(?P<tool>\w*memor(?:y|ies)\w*)\s*\(\s*(?:\w+\s*=\s*)?(["'])(?P<said>.*)\2"""
    r"\s*\)\s*$"
)

BACK_2 = re.compile(r"(?i)\b(back)\s+2\s+(?=(?:when|before|after|how|the\s+way)\b)")
