"""Whose command is it: the person's, or someone else's they tell of?

"my landlord wants to remove the carpet", 'my friend said "just delete it"':
what comes before the verb makes it not asked of the memory.

    >>> bool(OTHERS_DOING.search("my landlord wants to "))
    True
"""

from __future__ import annotations

import re

__all__ = [
    "OTHERS_DOING",
    "QUOTING",
]

OTHERS_DOING = re.compile(  # "my landlord wants to remove the carpet", "I'm going to"
    r"(?i)(?:\b(?:I|we|he|she|they)(?:'m|'re|\s+am|\s+are|\s+is)?|\b(?:my|our|his|her"
    r"|their|the)\s+[\w']+(?:\s+[\w']+)?)\s+(?:(?:really|just|probably|still)\s+)?(?:going"
    r"|gonna|need|needs|have|has|got|plan|plans|planning|trying|try|tried|decided"
    r"|wants|told\s+me|asked\s+me|wants\s+me|needs\s+me|used)\s+(?:to\s+)?$"
    r"|\b(?:he|she|they|we)(?:'d|'ll|\s+would|\s+will)\s+$"
    r"|\bI\s+(?:told|asked)\s+(?:my\s+|our\s+|the\s+)?(?!you\b)[\w']+(?:\s+[\w']+)?"
    r"\s+to\s*$|\b(?:my|our|his|her|their|the)\s+(?!user\b|customer\b|client\b)[\w']+"
    r"(?:\s+[\w']+)?\s+(?:keeps\s+asking|asked|asks|wants|wanted|told|tells|says|said"
    r"|thinks|thought|suggests|suggested|insists|reckons|believes|feels)\s+(?:that\s+)?"
    r"(?:(?:you|I|me|we)\s+)?(?:(?:should|to|must|need\s+to|have\s+to|ought\s+to)\s+)?"
    r"(?:have\s+you\s+|get\s+you\s+to\s+|make\s+you\s+)?$"
    r"|\b(?:mum|mom|mother|dad|father|grandma|grandpa|nan|gran|wife|husband|partner|boss"
    r"|doctor|therapist|lawyer|son|daughter|sister|brother)\s+(?:keeps\s+asking|asked|asks"
    r"|wants|wanted|says|said|thinks|suggests|suggested)\s+(?:that\s+)?(?:(?:you|me|I)\s+)?"
    r"(?:(?:should|to|must|ought\s+to)\s+)?(?:have\s+you\s+|get\s+you\s+to\s+)?$"
    r"|\b(?:suggest(?:s|ed)?|recommend(?:s|ed)?)\s+having\s+you\s+$"
)

QUOTING = re.compile(  # 'my friend said "just delete ...': a command only quoted
    r"(?i)\b(?<!user\s)(?<!customer\s)(?<!client\s)(?:said|says|saying|yell(?:s|ed|ing)?"
    r"|shout(?:s|ed|ing)?|scream(?:s|ed|ing)?|wrote|writes|told\s+\w+|goes|go|sings?"
    r"|sang|texted|texts|posted|tweeted)\s*[:,]?\s*"
    r"(?:\"[^\"]*|'[^']*)$"
)
