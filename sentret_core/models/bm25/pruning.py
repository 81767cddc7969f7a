"""BM25's and BM25F's exact top k by MaxScore (:func:`~sentret_core.models.arrays.maxscore.additive_top_k`).

Their score is a sum over query terms of non-negative contributions ``w_t·(k1+1)·x/(k+x)``, each at most
``ub_t = w_t·(k1+1)`` (0 when ``w_t ≤ 0``: rsj idf, sf > N/2).

Scores are those of the exhaustive scorer bit for bit: contributions are computed by the same
formula and summed by :func:`~sentret_core.models.arrays.vectors.union_sum` in query-term order, so
every candidate's sum adds the same numbers in the same order (:mod:`~sentret_core.models.bm25.sums`, the
exhaustive scorers' own). BM25 (:func:`saturated_top_k`) and BM25F (:func:`fields_top_k`) give
:func:`max_score` their sums.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import TYPE_CHECKING

import numpy as np

from sentret_core.index.neighbours import Column
from sentret_core.models.arrays import maxscore
from sentret_core.models.arrays.postings import Postings, postings
from sentret_core.models.arrays.vectors import EMPTY_IDS, EMPTY_SCORES
from sentret_core.models.bm25.sums import PseudoFrequency, fields_sum, saturated_sum

if TYPE_CHECKING:
    from sentret_core.index.reader import Index
    from sentret_core.models.core.query import Query


def max_score(
    k: int, weights: np.ndarray, k1: float, post: Postings, terms: np.ndarray, partial: maxscore.PartialSum
) -> tuple[np.ndarray, np.ndarray, bool] | None:
    """The top-k candidates with their exact scores, for query ``terms`` whose contributions
    ``w_t·(k1+1)·x/(k+x)`` are summed by ``partial``; None when pruning cannot help (score them all).
    ``k`` ≥ 1."""
    if not np.all(np.isfinite(weights)):
        return None
    return maxscore.additive_top_k(k, lambda: np.maximum(weights, 0.0) * (k1 + 1.0), post, terms, partial)


def saturated_top_k(
    index: Index, q: Query, k: int, weights: np.ndarray, k1: float, sentence_k: Callable[[], Column]
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
    index: Index, q: Query, k: int, weights: np.ndarray, k1: float, window: int, pseudo_frequency: PseudoFrequency,
    only_weighted: bool,
) -> tuple[np.ndarray, np.ndarray, bool] | None:
    """BM25F's top k (MaxScore), its sum as :func:`~sentret_core.models.bm25.sums.fields_sum` says. The
    essential terms (the rarer: the larger idf) have their fields built; a non-essential term's counts are
    looked up for the candidates only, so a frequent term's fields, the costly part of a query, are never
    built whole."""
    if k == 0:
        return None

    def partial(positions: np.ndarray, cand: np.ndarray | None) -> tuple[np.ndarray, np.ndarray]:
        return fields_sum(index, window, pseudo_frequency, only_weighted, k1, q.ids, weights, positions, cand)

    return max_score(k, weights, k1, postings(index), q.ids, partial)
