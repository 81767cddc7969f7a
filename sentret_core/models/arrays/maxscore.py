"""Exact top-k without scoring every candidate: MaxScore (Turtle & Flood 1995) over numpy postings,
for any model whose score of a sentence holding none of some query terms can be bounded.

Order the query terms by how much each can add to a score (rarest first, in effect); score a sample of
candidates exactly to get θ, the k-th best of their scores (a lower bound of the true k-th best); the
longest run of least-important terms for which a bound stays below θ is *non-essential*: a sentence holding
none of the other, essential terms scores below θ and cannot be in the top k. Only the essential terms'
postings then give candidates; the others' counts are looked up for those candidates.

:func:`split` is that procedure. A family supplies its scores at given sentences and its bound: BM25's
and BM25F's (:mod:`~sentret_core.models.bm25.pruning`, a sum of per-term maxima), TF-ISF's
(:mod:`~sentret_core.models.tfisf.pruning`) and the language models' (:mod:`~sentret_core.models.lm.pruning`,
a bound over sentence lengths in log space). Each scores its final candidates with its exhaustive
scorer's own code, so the top k holds the same scores bit for bit.

How the exact top k fits together, with a worked example: docs/topk.md.
"""

from __future__ import annotations

import functools
from collections.abc import Callable
from dataclasses import dataclass
from typing import TYPE_CHECKING

import numpy as np

from sentret_core.models.arrays.vectors import EMPTY_IDS, union

if TYPE_CHECKING:
    from sentret_core.models.arrays.postings import Postings

SLACK = 1e-9  # relative margin on a bound < θ: a bound computed in floating point may round low
SAMPLE = 4096  # candidates scored for θ (at least 4k); shorter queries are not pruned at all
# below this many postings in the longest list, scoring every candidate is faster (benchmarks/scale.py:
# at 1M and 10M sentences, pruning from 16k-64k postings gave the best p50 and p95)
PRUNE_FROM = 32_768
TERMS_KEPT = 65_536  # terms whose bounds (a few numbers each) a model keeps per index, the last used

# (positions of query terms in the query's term array, θ) -> whether every candidate that holds none of the
# *other* terms scores below θ (by a bound of its score, raised by :func:`margin`)
Below = Callable[[np.ndarray, float], bool]
ScoreAt = Callable[[np.ndarray], np.ndarray]  # sorted sentence ids -> their exact scores
# (positions of query terms, sentences or None) -> the exact sum over those terms' contributions for those
# sentences (sorted ids holding any of them, scores); None: every sentence the terms reach
PartialSum = Callable[[np.ndarray, "np.ndarray | None"], tuple[np.ndarray, np.ndarray]]


@dataclass(frozen=True)
class Split:
    """Which query terms every top-k sentence holds one of (``essential``, positions, ascending), the
    others (``rest``), and θ, a lower bound of the k-th best score."""

    essential: np.ndarray
    rest: np.ndarray
    theta: float


def margin(bound: float) -> float:
    """``bound`` raised by :data:`SLACK` of its size, so that rounding never makes it low."""
    return bound + SLACK * abs(bound)


def split(k: int, post: Postings, terms: np.ndarray, importance: Callable[[], np.ndarray], score_at: ScoreAt,
          below: Below) -> Split | None:
    """The essential terms for the top ``k`` (k ≥ 1) of a query of ``terms``, or None when pruning cannot
    help (a short query, short postings, fewer than k candidates in the sample, nothing non-essential).

    ``importance()`` orders the terms (the largest is sampled first and is the last to be non-essential),
    asked for only once pruning may help (most queries end at the postings' sizes); once ``below`` is False
    for a set of terms it must stay False for any set holding it.
    """
    sizes = np.array([post.size(int(t)) for t in terms], dtype=np.int64)
    budget = max(SAMPLE, 4 * k)
    if len(terms) < 2 or sizes.max() <= max(budget, PRUNE_FROM):
        return None  # nothing worth pruning: the exhaustive path is as fast
    order = np.argsort(-importance(), kind="stable")  # the most important first
    sample = _sample(post, terms[order], k, budget)
    if len(sample) < k:  # fewer than k candidates in all
        return None
    scores = score_at(sample)
    theta = float(np.partition(scores, len(sample) - k)[len(sample) - k])
    n_rest = 0
    while n_rest < len(order) - 1 and below(order[len(order) - n_rest - 1 :], theta):
        n_rest += 1
    if n_rest == 0:
        return None
    cut = len(order) - n_rest
    return Split(np.sort(order[:cut]), np.sort(order[cut:]), theta)


def lowered(bound: np.ndarray) -> np.ndarray:
    """``bound`` (a bound from below) lowered by :data:`SLACK` of its size: :func:`margin` the other way."""
    return bound - SLACK * np.abs(bound)


def raised(theta: float, lower: np.ndarray, k: int) -> float:
    """θ, or the k-th largest of ``lower`` (bounds from below of distinct candidates' scores) if that is higher:
    k candidates score at least that much, so the k-th best score does too. The sample's θ is a k-th best of a
    few thousand sentences; the essential terms' parts over all their candidates usually lift it well above."""
    above = lower[lower > theta]  # the k-th largest is above θ only if k of them are: partition those alone
    if len(above) < k:
        return theta
    return float(np.partition(above, len(above) - k)[len(above) - k])


def _sample(post: Postings, terms: np.ndarray, k: int, budget: int) -> np.ndarray:
    """Candidates to take θ from: the sentence postings of the given terms in turn (the most important
    first) while they fit in ``budget``, and at least k of them when there are."""
    sample = EMPTY_IDS
    for t in terms:
        room = max(budget - len(sample), k - len(sample))
        if room <= 0:
            break
        rows = post.raw(int(t))[0]
        sample = union([sample, np.asarray(rows[:room], dtype=np.int32)])
    return sample


def additive_top_k(k: int, bounds: Callable[[], np.ndarray], post: Postings, terms: np.ndarray,
                   partial: PartialSum, floors: Callable[[], np.ndarray] | None = None,
                   ) -> tuple[np.ndarray, np.ndarray, bool] | None:
    """The top-k candidates with their exact scores for a score that is a sum over ``terms`` of contributions,
    each at most ``bounds()`` and at least ``floors()`` (0 when not given) (BM25, BM25F, TF-ISF), summed by
    ``partial``; None when pruning cannot help (score them all). ``k`` ≥ 1. A sentence holding none of the
    essential terms scores at most the sum of the others' bounds, and a candidate whose essential part plus that
    sum stays below θ is dropped before the others' counts are looked up; θ is first :func:`raised` by the
    candidates' essential parts plus the others' floors."""
    every = np.arange(len(terms))
    ub = functools.cache(bounds)  # computed once, and only where pruning may help
    found = split(k, post, terms, ub, lambda sample: partial(every, sample)[1],
                  lambda positions, theta: margin(float(np.sum(ub()[positions]))) < theta)
    if found is None:
        return None
    rest = float(np.sum(ub()[found.rest]))
    cand, part = partial(found.essential, None)  # every essential term has a positive bound: θ > 0
    lower = part + (float(np.sum(floors()[found.rest])) if floors is not None else 0.0)
    theta = raised(found.theta, lowered(lower), k)
    cand = cand[(part + rest) * (1.0 + SLACK) >= theta]  # the others cannot reach θ
    ids, scores = reaching(*partial(every, cand), theta)
    return ids, scores, True


def reaching(ids: np.ndarray, scores: np.ndarray, theta: float) -> tuple[np.ndarray, np.ndarray]:
    """The candidates whose exact score reaches θ: the k-th best does (θ is a lower bound of it), so those below
    are not in the top k, and the top k is then chosen among a few thousand, not millions."""
    keep = scores >= theta
    return ids[keep], scores[keep]
