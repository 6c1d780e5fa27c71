"""A deterministic embedding from word hashes: texts that share words are near,
and identical texts identical, with no model. The tests of exact search and the
shared-index benchmark rank by it.

    >>> hashed("w1 w2") == hashed("w1 w2")
    True
"""

from __future__ import annotations

import hashlib

import numpy as np
from langchain_core.embeddings import Embeddings

__all__ = ["DIMS", "INDEX", "WORDS", "Hashed", "embed", "hashed"]

DIMS = 16
WORDS = [f"w{i}" for i in range(12)]  # a small vocabulary: many near-duplicates


def hashed(text: str) -> list[float]:
    """A deterministic embedding: a sum of one pseudo-random vector per word."""
    total = np.zeros(DIMS)
    for word in text.split():
        seed = int.from_bytes(hashlib.sha256(word.encode()).digest()[:8], "big")
        total += np.random.default_rng(seed).standard_normal(DIMS)
    return [float(x) for x in total]


def embed(texts: list[str]) -> list[list[float]]:
    return [hashed(t) for t in texts]


INDEX = {"dims": DIMS, "embed": embed, "fields": ["text"]}


class Hashed(Embeddings):
    def embed_documents(self, texts: list[str]) -> list[list[float]]:
        return embed(texts)

    def embed_query(self, text: str) -> list[float]:
        return hashed(text)
