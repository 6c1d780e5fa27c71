"""The terms a text is indexed under for the undo search's BM25.

Text is split as SQLite's FTS5 `unicode61` tokenizer and PostgreSQL's
`chronomem_terms` split it (runs of letters and digits, lowercased, accents
dropped), and each run is stemmed by the original Porter algorithm, from the
same Snowball code PostgreSQL's `porter` dictionary runs, so both engines index
and search the same terms.

    >>> terms("Moved to New-York; isn't running")
    ('move', 'to', 'new', 'york', 'isn', 't', 'run')
    >>> terms("Café")
    ('cafe',)
"""

from __future__ import annotations

import functools
import json
import re
import unicodedata

import Stemmer

__all__ = ["terms", "terms_json"]

_RUN = re.compile(r"[^\W_]+")


@functools.lru_cache(maxsize=1)
def _stemmer() -> Stemmer.Stemmer:
    return Stemmer.Stemmer("porter")


@functools.lru_cache(maxsize=16384)
def terms(text: str) -> tuple[str, ...]:
    """The stemmed terms of `text`, in order, repeats included. Cached: an
    update's old value is the previous change's new one, and paths and
    authors repeat."""
    plain = text.lower()
    if not plain.isascii():
        plain = "".join(
            ch
            for ch in unicodedata.normalize("NFD", plain)
            if not unicodedata.combining(ch)
        )
    return tuple(_stemmer().stemWords(_RUN.findall(plain)))


def terms_json(text: str | None) -> str | None:
    """`terms(text)` as a JSON array: SQLite's `chronomem_terms(text)`, read
    with `json_each` as PostgreSQL reads its set-returning twin."""
    return None if text is None else json.dumps(list(terms(text)))
