"""Whether a change holds what a request says: the undo search acts alone only then.

"Forget that I moved to Rome" must not remove "User moved to Milan for work",
though the two share most words. Each *term* of the request (its content words,
less the words any request about memory uses) is looked for in the matched
change, on the side the request names, and in the item's path words. A term is
**held** by form (the same Porter stem: `moved` / `move`; a clipped word of five
letters or more: `physio` / `physiotherapy`) or by a known variant (`NYC` /
`New York City`, `mum` / `mother`, `three` / `3`, `grey` / `gray`).
Never by meaning: in the embedding's space `sold` is nearer `bought` (0.77)
than `job` is to `work`, and `tennis` as near `badminton` as `evenings` to
`night`; a word held by meaning would let exactly the near miss through.

A term the change does not hold is a reason to ask, not act, when it is

- **specific**: a number or version (`3.12`), a name (capitalised past the
  first word: `Rome`, `Subaru`), a word of a closed class people tell apart
  (relatives, colours, days, months, diets, pets, languages, levels, sides), or
  a rare word (outside the embedding model's vocabulary: `Athlone`, `ramen`);
- **a substitution**: it stands where the change has another word, beside
  the same word ("a small co-op *cooking* game" against "a small co-op
  *fishing* game", "lives in *wellington*" against "lives in *Christchurch*"):
  a paraphrase ("moved to" / "relocated to") asks too, as it should be cheap;
- **an insertion**: it stands between two words the change holds side by side
  ("the Intercity *bus* from Thrissur" against "the Intercity from Thrissur").

Any other word the change lacks ("kidding", "quitting") says how, not what:
it is left out. A request with no term names nothing and never acts.

    >>> said = Said.of("forget that I moved to Rome")
    >>> [(t.word, t.specific) for t in said.terms]
    [('moved', False), ('rome', True)]
    >>> missing(said, "User moved to Milan for work")
    ['Rome']
    >>> missing(Said.of("forget that I moved to NYC"), "User moved to New York City")
    []
    >>> missing(Said.of("forget that I use Python 3.12"), "User uses Python 3.11")
    ['12']
    >>> missing(Said.of("scrap the co-op cooking game"), "Idea: a co-op fishing game")
    ['cooking']
    >>> missing(Said.of("I was kidding about the goats"), "User plans a goat farm")
    []
"""

from __future__ import annotations

import functools
import re
from collections.abc import Sequence
from dataclasses import dataclass

from langgraph_chronomem.engine.terms import terms
from langgraph_chronomem.search.phrasing.spelling import PLAIN
from langgraph_chronomem.search.phrasing.tokens import ABBREVIATION, STOPWORDS, WORD
from langgraph_chronomem.search.words import content_words, first_sentence, units_apart

__all__ = ["Said", "Term", "holds", "missing", "reasons"]

# Words any request about memory may use, naming no memory.
_GENERIC = frozenset(
    """user users detail details record records profile list lists mine
    told tell telling said saying says wrote written write writing noted
    talked talk talking asked ask mention mentioning added add adding
    put putting keep keeping drop dropping take taking scrap scrapping
    bin erase erasing wipe wipe wiping clear clearing fix fixing
    anymore longer false lie lied fake made confused mixed mixup
    one ones guy lady person people someone thing out off up down away
    not don't doesn't isn't wasn't aren't won't can't didn't never no
    want wanted like""".split()  # noqa: SIM905
)
# Closed classes whose members people tell apart: one named for another is
# another memory.
_CLASSES = frozenset(
    """mother mom mum mommy mummy mama ma father dad daddy papa pa parent parents
    sister sis brother bro sibling siblings son sons daughter daughters child
    children kid kids baby twin twins niece nieces nephew nephews aunt auntie
    uncle cousin cousins grandmother grandma granny gran nan nana grandfather
    grandpa grandad granddaughter grandson grandchild grandchildren grandkids
    wife husband hubby spouse partner boyfriend girlfriend fiance fiancee ex
    stepmother stepfather stepson stepdaughter stepbrother stepsister
    father-in-law mother-in-law in-law in-laws godmother godfather godson
    goddaughter friend colleague coworker boss manager neighbour neighbor
    red orange yellow green blue purple violet pink brown black white grey gray
    silver gold golden beige navy maroon teal turquoise cream charcoal graphite
    obsidian ivory olive khaki mint lilac lavender burgundy crimson scarlet amber
    bronze copper sage aqua coral peach magenta indigo tan taupe mustard ochre
    emerald jade cobalt azure cyan fuchsia plum rose ruby sapphire slate
    champagne chocolate caramel hazel walnut oak
    monday tuesday wednesday thursday friday saturday sunday weekday weekend
    january february march april june july august september october
    november december spring summer autumn winter
    vegan vegetarian pescatarian keto paleo halal kosher carnivore
    dog dogs puppy cat cats kitten rabbit hamster guinea parrot budgie fish
    horse pony tortoise turtle snake lizard chicken chickens goat goats
    english french german spanish italian portuguese dutch polish russian
    ukrainian greek turkish arabic hebrew persian hindi urdu bengali tamil
    chinese mandarin cantonese japanese korean vietnamese thai indonesian
    swahili yoruba igbo hausa swedish norwegian danish finnish czech irish
    beginner novice intermediate advanced fluent native junior senior lead
    principal chief deputy
    left right upper lower north south east west northern southern eastern western
    first second third fourth fifth last""".split()  # noqa: SIM905
)
_NUMBERS = {
    word: str(n)
    for n, word in enumerate(
        """zero one two three four five six seven eight nine ten eleven twelve
        thirteen fourteen fifteen sixteen seventeen eighteen nineteen
        twenty""".split()  # noqa: SIM905
    )
}
# Spellings of one thing: each group holds the same.
_VARIANTS = tuple(
    frozenset(group.split("|"))
    for group in (
        "nyc|new york|new york city",
        "la|los angeles",
        "sf|san francisco",
        "dc|washington dc",
        "uk|united kingdom|britain|great britain",
        "us|usa|united states|america",
        "uae|united arab emirates",
        "mom|mum|mother|mommy|mummy|mama|ma",
        "dad|father|daddy|papa|pa",
        "grandma|grandmother|granny|gran|nan|nana",
        "grandpa|grandfather|grandad|granddad",
        "kid|kids|child|children",
        "bf|boyfriend",
        "gf|girlfriend",
        "hubby|husband",
        "wifey|wife",
        "bro|brother",
        "sis|sister",
        "grey|gray",
        "colour|color",
        "favourite|favorite",
        "neighbour|neighbor",
        "centre|center",
        "fiance|fiancee",
        "tv|television",
        "pc|computer",
        "phd|doctorate",
        "gp|doctor",
        "st|street",
        "rd|road",
        "ave|avenue",
        "apt|apartment",
    )
)


# A word this long is held by a longer word it begins ("physio", "admin").
_CLIPPED = 5
# Read past when aligning a request with a change: "my *ward*", "the *ward*".
_DETERMINERS = frozenset(
    """the a an my your his her their our its this that these those""".split()  # noqa: SIM905
)
# Words that tie a term to its neighbours: "moved *to* Rome", "lives *in* Lyon".
_ANCHORS = frozenset(
    """to in at on from for with of by near about into over under after before
    since until via per""".split()  # noqa: SIM905
)
_DATE_WORDS = re.compile(
    r"(?i)\b(?:january|february|march|april|may|june|july|august|september"
    r"|october|november|december|monday|tuesday|wednesday|thursday|friday"
    r"|saturday|sunday)s?\b"
)


@dataclass(frozen=True)
class Term:
    """A word of a request that may name what it is about.

    Attributes:
        word: The word, lowercased.
        said: The word as the request wrote it ("Sophie").
        specific: A number, a name, a closed-class word or a rare word: a
            reason to ask wherever it stands, when the change does not hold it.
    """

    word: str
    said: str
    specific: bool


class _Token(tuple[str, str]):
    """A word of a text as the alignment reads it: its stem, and its kind:
    `content`, `anchor` (a preposition), `skip` (an article or possessive, read
    past) or `other` (any other small word, or a number: it ties nothing)."""

    @property
    def stem(self) -> str:
        return self[0]

    @property
    def kind(self) -> str:
        return self[1]


@dataclass(frozen=True)
class Said:
    """What a request says, as the held check reads it: its terms, its words
    in order (for the alignment), and the dates it gives."""

    terms: tuple[Term, ...]
    tokens: tuple[_Token, ...]
    dates: tuple[str, ...] = ()

    @classmethod
    def of(
        cls, topic: str, common: frozenset[str] | None = None, request: str = ""
    ) -> Said:
        """What `topic` says, in its first sentence (what follows is most
        often why: "delete my CR-V. I traded it in on Monday"). `common` holds
        the ordinary words (without it, no word counts as rare). Dates in
        `request` that the topic lost to a time window ("the wedding in
        January") are terms too (`missing` weighs them only against a change
        that names a date)."""
        topic = first_sentence(topic)
        capitalised = _capitalised(topic)
        written = {w.lower().removesuffix("'s"): w for w in WORD.findall(topic)}
        found: dict[str, Term] = {}
        for word in content_words(topic):
            if word in _GENERIC or word in found:
                continue
            specific = (
                any(ch.isdigit() for ch in word)
                or word in _NUMBERS
                or word in _CLASSES
                or word in capitalised
                or (common is not None and len(word) > 2 and not _common(word, common))
            )
            found[word] = Term(
                word, written.get(word, word).removesuffix("'s"), specific
            )
        dates = {
            d.lower().removesuffix("s")
            for d in _DATE_WORDS.findall(_around(topic, request))
        } - set(found)
        return cls(tuple(found.values()), _tokens(topic), tuple(sorted(dates)))

    def __bool__(self) -> bool:
        return bool(self.terms)


def _around(topic: str, request: str) -> str:
    """What `request` says from where `topic` starts to its sentence's end (its
    dates are the topic's: "the wedding in January"), or `""`."""
    words = WORD.findall(topic)[:2]
    start = request.find(words[0]) if words else -1
    while start >= 0:
        sentence = first_sentence(request[start:])
        if all(w in sentence for w in words):
            return sentence
        start = request.find(words[0], start + 1)
    return ""


def _tokens(text: str) -> tuple[_Token, ...]:
    tokens = []
    for word in WORD.findall(text.translate(PLAIN).lower()):
        word = word.removesuffix("'s")
        kind = (
            "anchor"
            if word in _ANCHORS
            else "skip"
            if word in _DETERMINERS or (len(word) == 1 and word.isalpha())
            else "other"
            if word in STOPWORDS or word.isdigit()
            else "content"
        )
        tokens += [_Token((stem, kind)) for stem in terms(word)]
    return tuple(tokens)


def _capitalised(topic: str) -> set[str]:
    """Words written with a capital past the first of their sentence, lowercased:
    names, as people write them ("I", shouted words and first words are not)."""
    names = set()
    plain = ABBREVIATION.sub(r"\1", topic.translate(PLAIN))
    for sentence in re.split(r"[.!?;:\n]+", plain):
        for i, word in enumerate(WORD.findall(sentence)):
            if i and word[:1].isupper() and not word.isupper() and word != "I":
                names.add(word.lower().removesuffix("'s"))
            elif i and word.isupper() and len(word) > 1 and word not in ("I'M", "OK"):
                names.add(word.lower())  # an initialism: "NYC", "PSV"
    return names


def _common(word: str, common: frozenset[str]) -> bool:
    """Whether `word`, or a plain form of it, is an ordinary word."""
    forms = [word, *(word[: -len(end)] for end in ("s", "es", "ed", "ing", "ly"))]
    forms += [stem + "e" for stem in forms[3:5]]  # "quoted" -> "quote"
    return any(len(form) > 1 and form in common for form in forms)


def missing(said: Said, text: str) -> list[str]:
    """The request's terms `text` does not hold, when each is a reason to ask
    (specific, or a substitution; module docstring), as the request wrote them."""
    return [word for word, _ in reasons(said, text)]


def holds(text: str, words: str) -> bool:
    """Whether `text` holds every content word of `words` (by form or variant).

    >>> holds("a navy Surly Cross-Check (58 cm)", "58cm frame")
    False
    >>> holds("a navy Surly Cross-Check (58 cm)", "58cm surly")
    True
    """
    held = _forms(text)
    return all(_held(word, held) for word in content_words(words))


def reasons(said: Said, text: str) -> list[tuple[str, str]]:
    """`missing`, each term with why: `date`, `specific`, `substitution` or
    `insertion`."""
    held = _forms(text)
    tokens = _tokens(text)
    found = []
    if _DATE_WORDS.search(text):  # a change that names a date: it must be this one
        found += [(d, "date") for d in said.dates if not _held(d, held)]
    for term in said.terms:
        if _held(term.word, held):
            continue
        if term.specific:
            found.append((term.said, "specific"))
        elif _substitutes(term.word, said.tokens, tokens):
            found.append((term.said, "substitution"))
        elif _inserted(term.word, said.tokens, tokens):
            found.append((term.said, "insertion"))
    return found


def _substitutes(word: str, said: Sequence[_Token], text: Sequence[_Token]) -> bool:
    """Whether `word` stands in the request where `text` has another content
    word, the request holds nowhere, beside the same word: "a co-op *cooking*
    game" against "a co-op *fishing* game". Only articles and possessives are
    read past; any other small word breaks the tie."""
    stems = set(terms(word))
    own = {t.stem for t in said}
    for i, token in enumerate(said):
        if token.stem not in stems:
            continue
        for step in (-1, 1):
            neighbour = _next(said, i, step)
            if neighbour is None or neighbour.kind not in ("content", "anchor"):
                continue
            for j, there in enumerate(text):
                if there.stem != neighbour.stem:
                    continue
                other = _next(text, j, -step)
                if other and other.kind == "content" and other.stem not in own:
                    return True
    return False


def _inserted(word: str, said: Sequence[_Token], text: Sequence[_Token]) -> bool:
    """Whether `word` stands in the request between two words that `text`
    holds side by side: a detail the change never held ("the Intercity *bus*
    from Thrissur" against "the Intercity from Thrissur")."""
    stems = set(terms(word))
    for i, token in enumerate(said):
        if token.stem not in stems:
            continue
        before, after = _next(said, i, -1), _next(said, i, 1)
        if before is None or after is None:
            continue
        if any(
            there.stem == before.stem
            and (following := _next(text, j, 1)) is not None
            and following.stem == after.stem
            for j, there in enumerate(text)
        ):
            return True
    return False


def _next(tokens: Sequence[_Token], i: int, step: int) -> _Token | None:
    """The nearest token to `i` in direction `step`, past articles."""
    j = i + step
    while 0 <= j < len(tokens):
        if tokens[j].kind != "skip":
            return tokens[j]
        j += step
    return None


def _held(word: str, held: frozenset[str]) -> bool:
    word = _NUMBERS.get(word, word)
    if set(terms(word)) & held or any(
        word in group and group & held for group in _VARIANTS
    ):
        return True
    clipped = len(word) >= _CLIPPED and not word.isdigit()  # "physio"
    if clipped and any(stem.startswith(word) for stem in held):
        return True
    parts = units_apart(word)  # "58cm" is held by "58 cm"
    return len(parts) > 1 and all(_held(part, held) for part in parts)


@functools.lru_cache(maxsize=4096)
def _forms(text: str) -> frozenset[str]:
    """What `text` holds, as stems, number words as digits, and the variants
    it spells (phrases included: "new york city" holds `nyc`)."""
    plain = " ".join(WORD.findall(text.translate(PLAIN).lower()))
    stems = set(terms(plain))
    stems |= {_NUMBERS[w] for w in plain.split() if w in _NUMBERS}
    padded = f" {plain} "
    for group in _VARIANTS:
        if any(f" {spelling} " in padded for spelling in group):
            stems |= group
    return frozenset(stems)
