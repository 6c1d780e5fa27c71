"""What a search of the vectors hands back: hits with the log row each vector
was made from (for the caller to check against the log, DESIGN.md invariant
2), and how scores are given.

    >>> ChangeHit(row_id=7, version=3, score=0.9).version
    3
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from typing import Literal

import numpy as np

from langgraph_chronomem.engine.types import Namespace

__all__ = ["DISTANCES", "ChangeHit", "Distance", "ItemHit", "unit"]

Distance = Literal["cosine", "l2", "inner_product"]
DISTANCES: tuple[Distance, ...] = ("cosine", "l2", "inner_product")


@dataclass(frozen=True)
class ItemHit:
    """A HEAD item whose vector matched, and the log row the vector was made from."""

    namespace: Namespace
    key: str
    row_id: int
    score: float


@dataclass(frozen=True)
class ChangeHit:
    """An item change whose new value matched: its log row and commit version."""

    row_id: int
    version: int
    score: float


def unit(vector: Sequence[float]) -> np.ndarray:
    """`vector` scaled to length 1 (a zero vector stays as it is), as float32.

    >>> unit([3.0, 4.0]).tolist()
    [0.6000000238418579, 0.800000011920929]
    """
    array = np.asarray(vector, dtype=np.float32)
    norm = float(np.linalg.norm(array))
    return array / norm if norm else array
