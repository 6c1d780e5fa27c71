"""Is it an undo of an undo: a redo?

"undo the undo", "that undo was a mistake, reverse it", "you shouldn't have
undone that".

    >>> bool(UNDONE.fullmatch("the last undo"))
    True
    >>> bool(UNDO_WRONG.match("that undo was wrong"))
    True
"""

from __future__ import annotations

import re

__all__ = [
    "UNDONE",
    "UNDO_WRONG",
]

UNDO_WRONG = re.compile(  # "that undo was a mistake, reverse it": a redo
    r"(?i)^\s*(?:(?:user|customer)\s+says:\s*)?(?:(?:that|the|your|this)\s+(?:last\s+)?"
    r"(?:undo|rollback|roll-back|revert)\s+(?:was|is)\s+(?:a\s+)?(?:wrong|mistake|mistaken"
    r"|incorrect|bad)|(?:you\s+)?(?:shouldn't|should\s+not)\s+have\s+(?:undone|reverted"
    r"|rolled\s+(?:it\s+|that\s+)?back)(?:\s+(?:that|it|this))?)"
)

UNDONE = re.compile(  # "undo [the last] undo [you just did]" is a redo
    r"(?i)(?:(?:the|that|this|my|your)\s+)?(?:(?:last|latest|previous)\s+)?"
    r"(?:undo|rollback|roll-back|revert)(?:\s+(?:that\s+)?you\s+(?:just\s+)?did)?"
)
