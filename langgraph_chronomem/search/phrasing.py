"""How people phrase undo requests: the words and patterns `search.intent` reads.

Everything here is vocabulary, no logic: the commands ("forget", "get rid of",
"go back to"), the politeness and framing around them, what holds a command back
("no need to", "tomorrow,", "my landlord wants to"), and what asks for nothing
("thanks!", "what did you change?"). `search.intent.parse` decides with them.

A command starts a clause: at the start or after punctuation, or failing that
after "and/so/just/to/you" ("I want you to forget ..."):

    >>> bool(COMMAND.search("could you get rid of the gym note"))
    True
"""

from __future__ import annotations

import re

__all__ = [
    "AFFIRMS",
    "ALL",
    "ANCHOR",
    "AND",
    "ASKS",
    "BACK_2",
    "BACK_KEY",
    "CALL",
    "CALLED",
    "CHAT",
    "CHAT_WORD",
    "CLAUSE",
    "CLAUSES",
    "COMMAND",
    "CORRECTED",
    "COURTESY",
    "DENIES",
    "DISMISSAL",
    "EVERYTHING",
    "EXCEPT",
    "GENERIC",
    "GIVE_BACK",
    "GONE",
    "HELD_BACK",
    "IN_WHAT_IS_SAID",
    "JUST_THIS",
    "KEEPS",
    "KEEP_IT",
    "KEPT",
    "LAST_FEW",
    "LATER",
    "LINKS",
    "MIND_NOT",
    "NAMED",
    "NEWS",
    "NOTHING",
    "NOT_THIS",
    "NOW_SAYS",
    "NO_ACTION",
    "OBJECT",
    "OBJECTS",
    "OBJECT_PRONOUN",
    "OLD_THING",
    "ONE_CLAUSE",
    "ONE_QUESTION",
    "ONGOING",
    "OTHERS_DOING",
    "OTHER_ASK",
    "PLAIN",
    "POINTS_BACK",
    "POLITE",
    "PREFACE",
    "PRONOUN",
    "QUESTION",
    "QUOTING",
    "RECENT",
    "REFERS_BACK",
    "REMOVAL",
    "REMOVED",
    "REPLACING",
    "RIDS",
    "SAID",
    "SINCE",
    "STAY",
    "STILL",
    "STOPWORDS",
    "THANKS",
    "THING",
    "TRAILER",
    "TRAILING",
    "TRUE",
    "UNDONE",
    "UNDO_WRONG",
    "UNSURE",
    "WEIGHED",
    "WISH",
    "WORD",
    "WRONG",
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

_KEEPING = r"(?:remember|keep|save|store|know|hang\s+on\s*to|hold\s+on\s*to)"

WISH = re.compile(  # "I'd prefer you didn't keep X" asks as "don't keep X" does
    r"(?i)\b(?:I'd|I\s+would)\s+(?:prefer|rather)\s+(?:if\s+)?(?:you|it)\s+(?:didn't"
    rf"|did\s+not|wouldn't|would\s+not)\s+(?=(?!keep\s+track){_KEEPING}\b)"
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

_DAY = r"(?:on\s+)?the\s+(?:very\s+)?(?:day|time|moment|morning|evening|night|week)\b"

_WHOM = (
    r"(?:me|us|it(?:\s+all)?|all(?:\s+of\s+it)?|things|everything|yourself|itself"
    r"|(?:(?:my|the|your|(?:the\s+)?\w+'s)\s+)?(?:(?:whole|entire)\s+)?memor(?:y|ies)"
    r"(?:\s+of\s+me)?)"
)

_VERB = (
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
    rf"{_KEEPING}|you\s+shouldn't\s+have\s+(?:saved|stored|kept|remembered|noted|added"
    r"|written(?:\s+down)?|recorded)|shouldn't\s+be\s+(?:saved|stored|in\s+there)"
    r"|(?:take|change|set|roll|go)\s+(?:it|that|this|me|us|things)\s+back)"
)

COMMAND = re.compile(rf"(?i)\b(?:{_VERB})\b")  # any command, anywhere

_EMOJI = "[\U0001f300-\U0001faff\u2600-\u27bf]"

CLAUSES = [
    re.compile(rf"(?i)(?:^|[,.;:!?]\s*|\s-+\s*|{_EMOJI}\s*)(?:like\s+)?(?:{_VERB})\b"),
    re.compile(
        rf"(?i)\b(?:and|but|so|then|just|now|to|let's|yeah|yep|yes|nah|ok|okay|oh|ah"
        r"|lol|omg|ugh|argh|welp|btw|fyi|alright|we\s+should|bestie|bro|bruh|dude|girl"
        r"|ngl|lowkey|highkey|fr|istg|porfa|oye|yaar|bhai|um+|uh+|erm?|(?:so|um+|uh+)\s+like"
        r"|(?:the\s+)?(?:assistant|bot)|you(?:\s+(?:can|could|may|might|should|must))?"
        r"(?:\s+(?:really|probably|just|definitely|like))?)"
        rf"\s+(?:{_VERB})\b"
    ),
    # one word of address before the command, in any language: "Biko, take
    # out ...", "Abeg remove ...", "... again. Anyway forget ..."
    re.compile(rf"(?i)(?:^|[.!?;]\s+)\W*[^\W\d_]+,?\s+(?:{_VERB})\b"),
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

ALL = re.compile(
    r"(?i)(?:everything|all(?:\s+(?:of\s+)?(?:the|my|your))?(?:\s+(?:memory\s+)?changes)?"
    r"|every\s+(?:single\s+)?change)(?:\s+(?:that\s+)?(?:you(?:'ve|\s+have)?(?:\s+just)?"
    r"\s+)?(?:made|done|saved|did))?"
)

_DET = r"(?:the|that|this|these|those|my|your|an?|all(?:\s+of)?(?:\s+the)?)"

_NOUN = (
    r"(?:update|change|edit|memor(?:y|ies)|note|fact|thing|info(?:rmation)?|entry"
    r"|entries|save|record|commit|version|state|one|step|bit|stuff|write)s?"
)

_DID = (
    r"(?:saved|stored|learned|learnt|remember(?:ed)?|know|knew|wrote(?:\s+down)?|noted"
    r"|recorded|added|made|did|changed|updated|have|kept|got|heard|removed|deleted"
    r"|undid|forgot|reverted|dropped|said|told\s+you|mentioned)"
    r"(?:\s+(?:earlier|before|recently))?"
)

_I_SAID = (
    r"I\s+(?:just\s+|ever\s+)?(?:said|told\s+you|mentioned)(?:\s+(?:earlier|before))?"
)

_YOU_DID = rf"you\s+(?:just\s+)?(?:have\s+)?{_DID}"

OBJECT = re.compile(  # "the last NYC update you made about", "what I told you about"
    rf"(?i)(?:(?:{_DET}\s+)*(?:(?:last|latest|most\s+recent|recent|previous|wrong"
    r"|bad|incorrect|false|stored|saved)\s+)*"
    rf"(?P<mod>(?:(?!{_NOUN}\b|{_DET}\b)[\w'-]+\s+){{1,2}}?)?(?:{_NOUN}\s+)*{_NOUN}"
    rf"(?:\s+(?:that\s+|which\s+)?(?:(?:you|I)\s+)?(?:just\s+)?{_DID})?"
    rf"|(?:what|everything|anything|whatever)\s+(?:that\s+)?(?:{_YOU_DID}|{_I_SAID})"
    r"|what\s+(?:happened|changed))"
    r"(?:\s+(?:about|regarding|concerning|on|of|for|to|with|where|(?:that|which)"
    r"(?:\s+says)?|saying|says|stating|when)\b|\s*[:=]|\s*$|(?=\s*[,.;!?\"']))"
    r"|(?:(?:every|any)thing\s+)?(?:about|regarding|concerning)\b|that\b"
)

SAID = re.compile(rf"(?i)(?:{_I_SAID}|{_YOU_DID})(?:\s+that)?\b")

TRAILER = re.compile(rf"(?i)\s+(?:that\s+|which\s+)?(?:{_YOU_DID}|{_I_SAID})$")

STOPWORDS = frozenset(
    """a about again also am an and are as at ate back be been being but by can could
    did do does earlier for from had has have he her here him his how i i'd i'll
    i'm i've if in into is it its just last latest me mine my myself now of on or
    our previous recent she so than that the their them then there these they this
    those time to too us very was we were what when where which while who will with
    would yet you you're you've your yours
    change changed changes delete deleted edit entry fact facts forget info know
    learned memories memory mentioned note notes please redo remember remembered
    remove removed revert reverted said save saved say still stored thank thanks
    thing things told true undid undo update updated updates version
    wrong got get shouldn't should joke joking kidding sarcastic sarcasm
    hypothetical hypothetically anymore actually really mistake mistaken incorrect
    correct right ok okay came come up point whole bit part stuff
    anything something ever assistant agent saving storing keep kept lol haha
    pls plz thx ty btw ugh tbh idk omg honestly seriously literally basically
    anyway need know all bye goodbye cheers nothing else done good great cool
    awesome perfect fine tonight ll re ve whatever made rather asap immediately
    permanently completely entirely totally forever away yeah yep yes hmm most
    real quick quickly maybe perhaps onward onwards disregard ah oh meh eh uh erm
    um umm nah lmao instead sir madam bestie rn ngl lowkey highkey istg porfa oye
    yaar bhai wala wali""".split()  # noqa: SIM905 - a word list reads better as words
)

WORD = re.compile(r"[^\W_]+(?:'[^\W_]+)?")
SENTENCE_END = re.compile(r"[.!?;]+(?=\s|$)|\n")
ABBREVIATION = re.compile(  # its full stop ends no sentence: "St. Albert"
    r"(?i)\b(st|dr|mr|mrs|ms|mt|ft|jr|sr|prof|no|vs|etc|approx)\."
)

EXCEPT = re.compile(  # "the gym, not the cat", "the diet (not the allergy!)"
    r"(?i)\s*(?:(?:[,;]\s*)?(?:apart\s+from|except(?:\s+for)?|other\s+than|besides)\s+"
    r"(?:the|my|his|her|our|their|that|this)\s+[^,.;!?()]{1,40}|[,;]\s*(?:but\s+)?not\s+"
    r"(?:the|my|his|her|our|their|that|this)\s+"
    r"[^,.;!?()]{1,40}|\(\s*not\s+[^()]{1,40}\)?)[!.]*\s*$"
)

KEPT = re.compile(  # a clause asking to keep a memory: "but leave my allergies alone"
    r"(?i)^(?:(?:but|and|though|however)\s+)?(?:please\s+)?(?:(?:leave|keep)\b(?!\s+(?:it"
    r"|that|them|this)?\s*(?:out|off)\b)|(?:don't|do\s+not)\s+(?:touch|delete|remove"
    r"|change|forget)\b)|\b(?:note|one|memory|entry|bit|part|thing|record)\b[^,.;]*\b(?:is"
    r"|are)\s+(?:\w+\s+)?(?:harmless|fine|ok(?:ay)?|correct|right|true|accurate)$"
)

KEEP_IT = re.compile(  # "..., but keep it"; not "I'd rather you didn't keep that"
    r"(?i)(?<!n't\s)(?<!not\s)(?<!never\s)\b(?:keep|leave)\s+(?:it|that|them|this)\b"
    r"(?!\s+(?:out|off)\b)"
)

CLAUSE = re.compile(r"(?i)\s*(?:[,.;:!?]+|\s-+|\s+but(?=\s))\s*")

REFERS_BACK = re.compile(r"(?i)\b(?:it|that|this|them|those|these)$")

# Words that only tie a topic to something named before it.
LINKS = frozenset(
    """off because due following based related relating connected linked arising
    out around surrounding behind everything""".split()  # noqa: SIM905
)

NAMED = re.compile(  # "my back", "the joke": a thing named only in filler words
    r"(?i)\b(?:the|my|your|his|her|our|their|that|this)\s+(?:back|jokes?)\b"
)

GIVE_BACK = re.compile(  # "put my old job back", "I need those notes again"
    r"(?i)\b(?:(?:change|set|turn|switch|put)\s+(?P<was>[^,.!?;]{1,60}?)\s+back\s+(?:to\s+)?"
    r"(?:what|how|the\s+way)\s+(?:it|they)\s+(?:was|were|used\s+to\s+be)(?:\s+before)?$"
    r"|(?:change|set|turn|switch|put|revert|reset)\s+(?P<field>(?!(?:it|that|this|them|me"
    r"|us|things|everything|memory|memories|yourself)\b)[^,.!?;]{1,60}?)\s+(?:back\s+to"
    r"|to(?=\s+(?:the|my|its|their|his|her)\s+(?:old|previous|original|earlier|former"
    r"|prior)\b))\s+(?P<value>(?!(?:what|how|the\s+way"
    r"|when|before|after|the\s+(?:time|point|day|version))\b)[^,.!?;]{1,60})|(?:i\s+)?(?:want|need|'d\s+like|would\s+like)\s+(?:it|that|this|them"
    r"|those|him|her)\s+back|(?<!\bI\s)(?<!\bwe\s)(?:put|putting|bring|bringing|get"
    r"|getting|add|give\s+me"
    r"|gimme)\s+"
    r"(?:(?P<obj>[^,.!?;]{1,60}?)\s+)?"
    r"back\b(?!\s+(?:to|when)\b)(?:\s+in(?:\s+there)?)?|(?:can|could|may)\s+I\s+"
    r"(?:have|get)\s+(?P<had>[^,.!?;]{1,60}?)\s+back\b(?!\s+(?:to|when)\b)"
    r"|(?:want|need|'d\s+like|would\s+like)\s+(?P<wanted>[^,.!?;]{1,60}?)\s+"
    r"(?:back|again)\b"
    r"(?!\s+(?:to|when)\b))"
)

REMOVED = re.compile(  # "you deleted ...": what a restore brings back follows
    r"(?i)(?<!\bif )(?<!rather )\byou(?:'ve|\s+have)?\s+(?:just\s+)?(?:deleted|removed"
    r"|dropped|wiped|erased"
    r"|cleared|took\s+out|took\s+off|got\s+rid\s+of|forgot|lost|threw\s+out)\b"
)

NOW_SAYS = re.compile(  # "now it's all X": what a restore replaces, not brings back
    r"(?i)(?:^|(?<=[.;:!?,])|\bbut\s)\s*(?:and\s+|but\s+)?now\s+(?:it(?:'s|s|\s+is"
    r"|\s+(?:just\s+|only\s+)?says)|you(?:'ve|\s+have)?\s+(?:just\s+)?(?:got|have"
    r"|put|changed\s+it\s+to)|there(?:'s|\s+is)|all\s+(?:it|you)\s+(?:says?|have)"
    r"|they(?:'re|\s+are)|the\s+note\s+(?:just\s+)?says)\b[^.;:!?]*"
)

PRONOUN = re.compile(  # not "that" before a clause: "remove that I work Mondays"
    r"(?i)^(?:(?:any|all)\s+of\s+)?(?:it|that|this|them|those|these|the\s+same)\b"
    r"(?!\s+(?:I|I'm|my|we|we're|our|he|he's|she|she's|they|they're|their|you"
    r"|your|his|her)\b)"
)

REMOVAL = re.compile(  # "undo deleting X", "reverse the removal of X": a restore
    r"(?i)^(?:(?:the|that|your|my)\s+)?(?:deleting|removing|erasing|forgetting"
    r"|dropping|wiping|deletion\s+of|removal\s+of)\s+"
)

SINCE = re.compile(  # "undo everything since X": everything after it, so before X
    r"(?i)^(?:everything|all(?:\s+(?:of\s+)?(?:the|my|your))?(?:\s+changes)?"
    r"|(?:all\s+(?:the\s+)?|every\s+|any\s+)?changes?\s+(?:(?:you\s+)?(?:made|saved|did)|that"
    r"\s+were\s+made)"
    r"|every\s+change|(?:whatever|everything|all|anything)\s+(?:(?:that\s+)?(?:you|I)"
    r"(?:'ve|\s+have)?\s+\w+|(?:that\s+)?(?:was|got|has\s+been)\s+\w+))\s+(?:since|after"
    r"|from\s+the\s+(?:point"
    r"|moment|time|day)\s+(?:where|when|that))\s+"
)

REPLACING = re.compile(  # "undo the change that replaced X": a restore of X
    r"(?i)^(?:(?:the|that|your)\s+)?(?:change|update|edit|write)\s+(?:that|which)\s+"
    r"(?:replaced|overwrote|removed|deleted|changed|erased)\s+"
)

DISMISSAL = re.compile(  # "forget it, doesn't matter": asks for nothing
    r"(?i)(?:forget\s+(?:about\s+)?it|cancel\s+(?:that|this|the|my)\s+(?:\w+\s+)?request)\b"
    r"(?!\s+(?:all|was|is)\b|')"
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

GENERIC = re.compile(  # "can you undo things?": a question about what the tool can do
    r"(?i)^(?:(?:a|an|any)\s+)?(?:specific|certain|particular|given|earlier|older|past"
    r"|previous)\s+(?:date|time|day|point|version|moment|state)s?$"
    r"|^(?:(?:deleted|removed|old|past|lost)\s+)?(?:things|stuff|anything|memories"
    r"|(?:things|stuff|what)\s+you\s+(?:know"
    r"|remember|store|save))$"
)

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

IN_WHAT_IS_SAID = re.compile(r"(?i)\s+that\s+(?:I|we|my|our)\b")

RECENT = re.compile(r"(?i)\b(?:last|latest|previous|recent)\b")

POINTS_BACK = re.compile(r"(?i)\b(?:it|that|this|them|those|these)\b")

OBJECT_PRONOUN = re.compile(r"(?i)\s(?:it|that|this|them)\s")  # "take that out"

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

QUESTION = re.compile(
    r"(?i)(?:\?\s*$|^(?:what|which|who|when|where|why|how|did|do|does|is|are|was"
    r"|were|have|has|can|could|would|will|should)\b)"
)

ASKS = re.compile(  # a question about what was done: "did you delete X?"
    r"(?i)^(?:(?:what|which|who|when|where|why|how)(?:\s+\w+)?\s+)?(?:did|do|does"
    r"|have|has|had|is|are|was|were)\s+(?:you|I|it|that|this|there)\b"
)

ONE_QUESTION = re.compile(r"[^.!?]*\?+")

ONE_CLAUSE = re.compile(r"[^.!?;,:]*")  # "what did u delete last week", unmarked

OLD_THING = re.compile(  # "go back to my old job": that memory as it was, not a time
    r"(?i)(?:the|my|our|his|her|their)\s+(?:old|previous|original|former|earlier"
    r"|usual)\s+(?!(?:version|state|memor(?:y|ies)|one|way|copy|snapshot|backup"
    r"|point|setup|everything|all)s?\b)\w"
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

_DENIAL = (  # "not", "that was a joke": what says a memory is wrong
    r"n't\b|\b(?:not|no|never|nobody|nothing|nor|wrong|mistake[ns]?|incorrect"
    r"|untrue|false|jok(?:e[sd]?|ing)|kidding|sarcas\w*|made\s+up|misheard"
    r"|backwards|outdated|out\s+of\s+date|obsolete|retract(?:ed|s)?|jk|wind-?up"
    r"|winding\s+(?:you\s+)?up|pulling\s+your\s+leg)\b"
)

DENIES = re.compile(rf"(?i){_DENIAL}")

_RID = (  # an ask to be rid of a memory, with no command
    r"\b(?:fix|correct|forget|lose|bin|chuck"
    r"|get\s+(?:it|that|this|them)\s+(?:out|off)|if\s+you\s+(?:(?:could|would)\s+)?"
    r"(?:deleted|removed|erased|dropped|forgot|wiped)"  # "... if you deleted X"
    r"|(?:want|like|need|get)\s+[^,.!?;]{1,60}?\s+(?:deleted|removed|erased|gone"
    r"|forgotten)|(?:needs?|has|have|ought)\s+to\s+(?:go|be\s+(?:deleted|removed"
    r"|erased|forgotten|dropped))|(?:should|must)\s+be\s+(?:deleted|removed|erased"
    r"|forgotten|dropped)|(?:could|would|can)\s+(?:\w+ly\s+)?(?:disappear|vanish"
    r"|go\s+away))\b"  # "I want X gone", "X has to go", "X could quietly disappear"
)

NEWS = re.compile(  # "I'm not at Acme anymore": life moved on, no wish said
    r"(?i)^(?!.*\b(?:want|need|like|wish|prefer|rather)\b).*\b(?:any\s*more|no\s+longer)\b"
)

RIDS = re.compile(rf"(?i){_RID}")

OBJECTS = re.compile(rf"(?i){_DENIAL}|{_RID}")  # a denial, or an ask to be rid of it

KEEPS = re.compile(  # "please don't remove the cat": asks that nothing change
    r"(?i)\b(?:rather|prefer)\s+(?:if\s+)?you\s+(?:didn't|did\s+not|wouldn't|would\s+not)"
    r"\s+(?:forget|delete|remove|erase|drop|undo|revert)\b|\b(?:don't|do\s+not|not|never|can't"
    r"|cannot|no(?:\s+need\s+to)?)\s+(?:(?:you\s+)?(?:ever"
    r"|dare|go)\s+)?(?:(?:saying|asking(?:\s+you)?)(?:\s+to)?\s+)?"
    r"(?:remove|delete"
    r"|forget|touch|change|undo|drop|erase|wipe|lose|clear|scrap|ditch|bin|revert"
    r"|reset|rewind|roll\s*(?:\w+\s+)?back|go(?:ing)?\s+back|restore|re-?do|modify|edit"
    r"|alter|(?:put|bring)"
    r"\s+(?:it\s+)?back|(?:go\s+)?(?:erasing|deleting|removing|forgetting)"
    r"|get\s+rid\s+of|take\s+(?:out|off)|throw\s+(?:out|away))\b"
)

AFFIRMS = re.compile(  # "the allergy note is correct", "you got my job right"
    r"(?i)(?:\b(?:is|are|was|were|got(?:\s+[\w']+){1,3}?)|'s|'re)\s+(?:all\s+|totally\s+"
    r"|completely\s+|still\s+)?(?:correct|right|accurate|fine|ok(?:ay)?|good|great"
    r"|true|valid|spot\s+on|perfect)\b"
)

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

EVERYTHING = re.compile(  # "forget everything you know about me": all of memory
    r"(?i)(?:(?:about\s+)?(?:me|us)|(?:everything|all|it\s+all|all\s+of\s+it|every"
    r"\s+memory|all\s+(?:of\s+)?(?:(?:my|your|the)\s+)?(?:memor(?:y|ies)|notes|changes"
    r"|(?:personal\s+)?(?:data|info(?:rmation)?)|history)|(?:my|your)\s+(?:(?:whole|entire)"
    r"\s+)?(?:memor(?:y|ies)|(?:personal\s+)?data)|the\s+(?:whole|entire)\s+memory)"
    r"(?:\s+(?:that\s+)?(?:you|I)(?:'ve|\s+have)?(?:\s+ever)?\s+(?:know|have|saved"
    r"|stored|remember(?:ed)?|learned|learnt|kept|keep|wrote|told\s+you|said|mentioned"
    r"|shared|gave\s+you))?(?:\s+(?:about|on|of)\s+(?:me|us))?)"
)

LAST_FEW = re.compile(  # "the last 3 changes", "your two latest edits you made"
    r"(?i)(?:(?:the|my|your|these|those)\s+)?(?:(?P<recent>last|latest|previous|past"
    r"|(?:most\s+)?recent)\s+)?(?P<count>\d+|one|two|three|four|five|six|seven|eight|nine"
    r"|ten|(?:a\s+)?(?:couple|few)(?:\s+of)?|several|some(?:\s+of)?|x\d+)(?:(?:\s+the)?\s+(?P<after>most\s+recent"
    r"|latest|last|previous|recent))?(?:\s+(?P<noun>(?:memory\s+)?(?:changes|edits|updates|saves"
    r"|commits|versions|writes|things|entries|memories|notes|steps|ones)|(?P<times>times)))?"
    r"(?:\s+(?:that\s+)?"
    r"(?:you|I)(?:'ve|\s+have)?(?:\s+just)?\s+\w+(?:\s+(?:you|me))?)?"
)

TRAILING = re.compile(r"(?i)(?:\s+(?:lol|lmao|haha|pls|please|thanks|thx|ty|asap))+$")

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

AND = re.compile(r"(?i)\s*(?:and|then|&)?\s*")

THING = re.compile(  # a thing named, not a statement: "the van", "my phone number"
    r"(?i)^(?:the|my|that|this|those|these|his|her|our|their|your)\b"
)

NOT_THIS = re.compile(  # "not the van, the workshop": the one named second
    r"(?i)^(?:no[,.]?\s+)?not\s+(?:the|my|that|this|those|these)\s+[^,;:]{1,40}?"
    r"\s*[,;:]\s*(?=\S)"
)

GONE = re.compile(
    r"(?i)\b(?:removed|deleted|dropped|lost|gone|wiped|erased|disappeared|missing"
    r"|forgot(?:ten)?|replaced|overwrote|overwritten)\b"
)

WRONG = re.compile(
    r"(?i)\b(?:wrong|mistake|mistaken|incorrect|not\s+(?:right|true|correct)|joke"
    r"|joking|kidding|shouldn't|misheard|made\s+up)\b"
)

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
    rf"|will)\s+you|I\s+(?:want|need|'d\s+like)\s+you\s+to)\s+)*(?:{_VERB}|put|bring|get"
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

JUST_THIS = re.compile(  # "no need to delete the cat, just the dog": the one named
    r"(?i)[,;:-]\s*(?:but\s+)?(?:just|only)\s+(?P<thing>(?:the|my|that|this|those"
    r"|these|his|her|our|their)\b[^,.;!?]+)[.!]*$"
)
