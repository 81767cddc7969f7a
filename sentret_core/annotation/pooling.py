"""TREC-style pooling with a recorded seed, and adjudication of several grades into one."""

from __future__ import annotations

import math
import random
from collections import Counter
from collections.abc import Mapping, Sequence
from fractions import Fraction

from sentret_core.annotation.auth import as_id
from sentret_core.errors import SentretError


def pool(ranked: Mapping[str, Sequence[int]], depth: int, seed: int) -> list[int]:
    """TREC-style pool: the union of every model's top ``depth`` sentence ids, shuffled.

    The union is sorted before the shuffle, so the order depends only on the ids and
    ``seed`` (``random.Random(seed)``), not on the models' order; model names are dropped.
    """
    if isinstance(depth, bool) or not isinstance(depth, int) or depth < 1:
        raise SentretError(f"pool depth must be an integer in [1, ∞); got {depth!r}")
    union = {
        as_id(sid, "a sentence id") for ranking in ranked.values() for sid in ranking[:depth]
    }
    ordered = sorted(union)
    random.Random(seed).shuffle(ordered)
    return ordered


def adjudicate(grades: Sequence[int], rule: str) -> int:
    """One grade from several: ``majority`` (ties go to the lower grade) or ``mean``
    (rounded half up, computed exactly)."""
    if not grades:
        raise SentretError("cannot adjudicate an item without grades")
    if rule == "majority":
        counts = Counter(grades)
        top = max(counts.values())
        return min(grade for grade, count in counts.items() if count == top)
    if rule == "mean":
        return math.floor(Fraction(sum(grades), len(grades)) + Fraction(1, 2))
    raise SentretError(f"unknown adjudication rule {rule!r}; choose majority or mean")
