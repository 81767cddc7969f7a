"""Exact top-k without scoring every candidate: MaxScore (Turtle & Flood 1995) over numpy postings.

For a score that is a sum over query terms of non-negative contributions, each bounded by
``ub_t``: order the terms by ``ub_t``; score a sample of candidates exactly to get θ, the k-th
best of their scores (a lower bound of the true k-th best); the longest run of smallest-bound
terms with ``Σ ub_t < θ`` is *non-essential* — a sentence holding none of the others scores
below θ and cannot be in the top k. So only the postings of the essential terms are candidates;
the non-essential terms' counts are looked up for those candidates.

Scores are those of the exhaustive scorer bit for bit: contributions are computed by the same
formula and summed by :func:`~sentret_core.models.arrays.vectors.union_sum` in query-term order, so
every candidate's sum adds the same numbers in the same order (:mod:`~sentret_core.models.bm25.sums`, the
exhaustive scorers' own). :func:`max_score` is the procedure; BM25 (:func:`saturated_top_k`) and BM25F
(:func:`fields_top_k`) give it their sums.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import TYPE_CHECKING

import numpy as np

from sentret_core.models.arrays.postings import Postings, postings
from sentret_core.models.arrays.vectors import EMPTY_IDS, EMPTY_SCORES, union
from sentret_core.models.bm25.sums import fields_sum, saturated_sum

if TYPE_CHECKING:
    from sentret_core.index.reader import Index
    from sentret_core.models.core.query import Query

SLACK = 1e-9  # relative margin on Σ ub_t < θ: a bound summed in floating point may round low
SAMPLE = 4096  # candidates scored for θ (at least 4k); shorter queries are not pruned at all
# below this many postings in the longest list, scoring every candidate is faster (benchmarks/scale.py:
# at 1M and 10M sentences, pruning from 16k-64k postings gave the best p50 and p95)
PRUNE_FROM = 32_768

# (positions of query terms, sentences or None) -> the exact sum over those terms' contributions for those
# sentences (sorted ids holding any of them, scores); None: every sentence the terms reach
PartialSum = Callable[[np.ndarray, "np.ndarray | None"], tuple[np.ndarray, np.ndarray]]


def max_score(
    k: int, weights: np.ndarray, k1: float, post: Postings, terms: np.ndarray, partial: PartialSum
) -> tuple[np.ndarray, np.ndarray, bool] | None:
    """The top-k candidates with their exact scores, for query ``terms`` whose contributions
    ``w_t·(k1+1)·x/(k+x)`` are summed by ``partial``; None when pruning cannot help (score them all).
    ``k`` ≥ 1. Bound: a contribution is at most ``w_t·(k1+1)`` when ``w_t > 0`` and at most 0 when
    ``w_t ≤ 0`` (rsj idf, sf > N/2)."""
    sizes = np.array([post.size(int(t)) for t in terms], dtype=np.int64)
    budget = max(SAMPLE, 4 * k)
    if len(weights) < 2 or sizes.max() <= max(budget, PRUNE_FROM) or not np.all(np.isfinite(weights)):
        return None  # nothing worth pruning: the exhaustive path is as fast
    ub = np.maximum(weights, 0.0) * (k1 + 1.0)
    every = np.arange(len(terms))
    order = np.argsort(-ub, kind="stable")  # largest bound first
    sample = _sample(post, terms[order], k, budget)
    if len(sample) < k:  # fewer than k candidates in all
        return None
    theta = np.partition(partial(every, sample)[1], len(sample) - k)[len(sample) - k]
    n_rest = int(np.count_nonzero(np.cumsum(ub[order[::-1]]) * (1.0 + SLACK) < theta))  # a prefix: cumsum grows
    if n_rest == 0:
        return None
    rest = float(np.sum(ub[order[len(order) - n_rest :]]))
    essential = np.sort(order[: len(order) - n_rest])  # all with a positive bound: θ > 0
    cand, part = partial(essential, None)
    cand = cand[(part + rest) * (1.0 + SLACK) >= theta]  # the others cannot reach θ
    ids, scores = partial(every, cand)
    return ids, scores, True


def saturated_top_k(
    index: Index, q: Query, k: int, weights: np.ndarray, k1: float, sentence_k: Callable[[], np.ndarray]
) -> tuple[np.ndarray, np.ndarray, bool] | None:
    """The top-k candidates, with their exact scores, of ``Σ_t w_t·(k1+1)·c(t,s)/(K(s)+c(t,s))``
    (MaxScore): BM25's, with ``weights`` its w_t = idf·query factor per term of ``q.ids`` and
    ``sentence_k()`` its K(s) = k1·B(s) per sentence. None: nothing worth pruning, score them all."""
    post = postings(index)
    if k == 0:
        return EMPTY_IDS, EMPTY_SCORES, any(post.size(int(t)) for t in q.ids)
    return max_score(k, weights, k1, post, q.ids,
                     lambda positions, cand: saturated_sum(post, sentence_k(), k1, q.ids, weights, positions, cand))


def fields_top_k(
    index: Index, q: Query, k: int, weights: np.ndarray, k1: float, window: int, field_weights: np.ndarray,
    only_weighted: bool,
) -> tuple[np.ndarray, np.ndarray, bool] | None:
    """BM25F's top k (MaxScore), its sum as :func:`~sentret_core.models.bm25.sums.fields_sum` says. The
    essential terms (the rarer: the larger idf) have their fields built; a non-essential term's counts are
    looked up for the candidates only, so a frequent term's fields, the costly part of a query, are never
    built whole."""
    if k == 0:
        return None

    def partial(positions: np.ndarray, cand: np.ndarray | None) -> tuple[np.ndarray, np.ndarray]:
        return fields_sum(index, window, field_weights, only_weighted, k1, q.ids, weights, positions, cand)

    return max_score(k, weights, k1, postings(index), q.ids, partial)


def _sample(post: Postings, terms: np.ndarray, k: int, budget: int) -> np.ndarray:
    """Candidates to take θ from: the sentence postings of the given terms in turn (largest bound first)
    while they fit in ``budget``, and at least k of them when there are."""
    sample = EMPTY_IDS
    for t in terms:
        room = max(budget - len(sample), k - len(sample))
        if room <= 0:
            break
        rows = post.raw(int(t))[0]
        sample = union([sample, np.asarray(rows[:room], dtype=np.int32)])
    return sample
