"""Scoring resolutions against gold targets, and averaging with intervals.

Per request (`score`), from the top candidates' targets and matched commits:

- `r1`: the best candidate's target is a gold target (Recall@1);
- `r5`: a gold target is among the top 5 candidates' targets (Recall@5);
- `scope2`: the best target is within 2 versions of a gold target (Scope@2);
- `anchor1`: the best candidate's matched commit is an evidence turn (a turn of
  the event's session), whatever target the intent made of it: a retrieval hit;
- `intent`: the parser read the intent the request expresses (undo / go back).

A request that resolves to nothing scores 0 everywhere but `intent`.

Averages are micro (over requests) with a 95% bootstrap interval that
resamples conversations (the unit the data was sampled in), plus the mean of the
per-conversation averages.
"""

from __future__ import annotations

import math
import random
from collections.abc import Callable, Mapping, Sequence
from typing import Any

__all__ = [
    "METRICS",
    "aggregate",
    "latest_baseline",
    "random_baseline",
    "score",
]

METRICS = ("r1", "r5", "scope2", "anchor1", "intent")
Record = Mapping[str, Any]


def _hits(gold: Sequence[int], target: int) -> bool:
    return gold[0] <= target <= gold[1]


def _distance(gold: Sequence[int], target: int) -> int:
    return max(gold[0] - target, target - gold[1], 0)


def score(
    gold: Sequence[int],
    evidence: Sequence[int],
    targets: Sequence[int],
    matched: Sequence[int],
    intent_ok: bool,
) -> dict[str, float]:
    """Metrics of one request.

    Args:
        gold: Acceptable targets `(lo, hi)`, inclusive.
        evidence: Versions whose match counts as an anchor hit.
        targets: The candidates' targets, best first.
        matched: The candidates' matched commit versions, best first.
        intent_ok: Whether the parsed intent is the expressed one.
    """
    best = targets[0] if targets else None
    return {
        "r1": float(best is not None and _hits(gold, best)),
        "r5": float(any(_hits(gold, t) for t in targets[:5])),
        "scope2": float(best is not None and _distance(gold, best) <= 2),
        "anchor1": float(bool(matched) and matched[0] in evidence),
        "intent": float(intent_ok),
    }


def random_baseline(
    gold: Sequence[int], evidence: Sequence[int], head: int
) -> dict[str, float]:
    """Expected metrics of a uniform random pick among versions 0..head.

    Recall@5 draws five distinct targets; `anchor1` draws a commit among 1..head.
    """
    versions = head + 1
    good = gold[1] - gold[0] + 1
    near = min(head, gold[1] + 2) - max(0, gold[0] - 2) + 1
    miss5 = math.comb(versions - good, 5) / math.comb(versions, 5)
    return {
        "r1": good / versions,
        "r5": 1.0 - miss5,
        "scope2": near / versions,
        "anchor1": len(evidence) / head,
        "intent": float("nan"),
    }


def latest_baseline(
    gold: Sequence[int], evidence: Sequence[int], head: int, intent: str
) -> dict[str, float]:
    """Always the latest commits: undo the last one(s), or stay at HEAD."""
    top = head - 1 if intent == "undo" else head
    return score(
        gold,
        evidence,
        [top - i for i in range(5)],
        [head - i for i in range(5)],
        True,
    ) | {"intent": float("nan")}


def _mean(values: Sequence[float]) -> float:
    values = [v for v in values if not math.isnan(v)]
    return sum(values) / len(values) if values else float("nan")


def aggregate(
    records: Sequence[Record],
    metric_of: Callable[[Record], Mapping[str, float]],
    *,
    bootstrap: int = 2000,
    seed: int = 0,
) -> dict[str, Any]:
    """Micro and per-conversation averages of every metric, with 95% intervals.

    Args:
        records: Per-request records, each with a `conv`.
        metric_of: The metrics of one record (a system's, or a baseline's).
        bootstrap: Resamples of the conversations for the intervals (0: none).
        seed: The resampling seed.

    Returns:
        `{"n": ..., "convs": ..., "<metric>": micro, "<metric>_macro": mean of
        per-conversation averages, "<metric>_ci": [lo, hi]}`.
    """
    by_conv: dict[str, list[Mapping[str, float]]] = {}
    for record in records:
        by_conv.setdefault(record["conv"], []).append(metric_of(record))
    result: dict[str, Any] = {"n": len(records), "convs": len(by_conv)}
    if not records:
        return result
    convs = sorted(by_conv)
    # per conversation: (sum, count) of each metric, for fast resampling
    sums = {
        c: {m: (sum(x[m] for x in rows if not math.isnan(x[m])),
                sum(not math.isnan(x[m]) for x in rows)) for m in METRICS}
        for c, rows in by_conv.items()
    }  # fmt: skip
    rng = random.Random(seed)
    draws = [[rng.choice(convs) for _ in convs] for _ in range(bootstrap)]
    for m in METRICS:
        total = sum(sums[c][m][0] for c in convs)
        count = sum(sums[c][m][1] for c in convs)
        result[m] = total / count if count else float("nan")
        result[f"{m}_macro"] = _mean(
            [sums[c][m][0] / sums[c][m][1] for c in convs if sums[c][m][1]]
        )
        if bootstrap and count:
            stats = sorted(
                sum(sums[c][m][0] for c in draw)
                / max(1, sum(sums[c][m][1] for c in draw))
                for draw in draws
            )
            result[f"{m}_ci"] = [
                stats[int(0.025 * (len(stats) - 1))],
                stats[int(0.975 * (len(stats) - 1))],
            ]
    return result
