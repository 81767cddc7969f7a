"""BM25's and BM25F's exact top k by MaxScore (:func:`~sentret_core.models.arrays.maxscore.additive_top_k`).

Their score is a sum over query terms of contributions ``w_t·(k1+1)·x/(k+x)``, each at most
``ub_t = w_t·(k1+1)`` (0 when ``w_t ≤ 0``: rsj idf, sf > N/2) and at least ``min(w_t, 0)·(k1+1)``.

Scores are those of the exhaustive scorer bit for bit: contributions are computed by the same
formula and summed by :func:`~sentret_core.models.arrays.vectors.union_sum` in query-term order, so
every candidate's sum adds the same numbers in the same order (:mod:`~sentret_core.models.bm25.sums`, the
exhaustive scorers' own). BM25 (:func:`saturated_top_k`) and BM25F (:func:`fields_top_k`) give
:func:`max_score` their sums.

How the exact top k fits together, with a worked example: docs/topk.md.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import TYPE_CHECKING

import numpy as np

from sentret_core.index.neighbours import Column
from sentret_core.models.arrays import impacts, maxscore
from sentret_core.models.arrays.local import documents_of
from sentret_core.models.arrays.postings import Postings, field_postings, postings, title_postings
from sentret_core.models.arrays.vectors import EMPTY_IDS, EMPTY_SCORES, union
from sentret_core.models.bm25.formulas import saturation
from sentret_core.models.bm25.sums import PseudoFrequency, fields_sum, saturated_sum

if TYPE_CHECKING:
    from sentret_core.index.reader import Index
    from sentret_core.models.core.query import Query


# k from which several frequent terms' lists go before MaxScore (their shared documents are read whatever k is): at
# 10M, BM25F's top 10 and top 1000 p95 were 42 and 45 ms lists first, 13 and 34 ms MaxScore first; its top 4000 was
# faster from the lists for all 6 such queries timed at 10M and 4 at 75M (warm: 15-211 ms against 16-490 ms)
SEVERAL_FIRST_FROM = 2048
# ... and while their shared documents are estimated to hold this many sentences at most (impacts.shared_estimate):
# scoring them all then costs more than MaxScore. Top 4000 at 75M, 10 such queries: lists first took 0.2-1.8 s,
# MaxScore first 0.1-1.2 s, this rule 0.1-0.9 s (MaxScore for the 3 of 0.9-1.8M estimated sentences; at 10M
# every such query but one was estimated below it)
SHARED_FIRST_UP_TO = 600_000


def max_score(
    k: int, weights: np.ndarray, k1: float, post: Postings, terms: np.ndarray, partial: maxscore.PartialSum
) -> tuple[np.ndarray, np.ndarray, bool] | None:
    """The top-k candidates with their exact scores, for query ``terms`` whose contributions
    ``w_t·(k1+1)·x/(k+x)`` are summed by ``partial``; None when pruning cannot help (score them all).
    ``k`` ≥ 1."""
    if not np.all(np.isfinite(weights)):
        return None
    # w_t·(k1+1)·x/(k+x) lies between 0 and w_t·(k1+1), whatever the sign of w_t
    return maxscore.additive_top_k(k, lambda: np.maximum(weights, 0.0) * (k1 + 1.0), post, terms, partial,
                                   lambda: np.minimum(weights, 0.0) * (k1 + 1.0))


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


def listed_fields_top_k(
    index: Index, found: impacts.ImpactLists, q: Query, k: int, weights: np.ndarray, k1: float, window: int,
    pseudo_frequency: PseudoFrequency, only_weighted: bool, params: dict[str, object], first: bool,
) -> tuple[np.ndarray, np.ndarray, bool] | None:
    """BM25F's top k from the index's impact lists ``found``, those of the query's listed terms of positive weight
    (:mod:`~sentret_core.models.arrays.impacts`; lists built for the fields' weights, b and window of ``params``),
    keyed by x̃: a term's contribution grows with x̃. A listed term of weight ≤ 0 adds at most 0 and is not read.
    A sentence that no unlisted term reaches, in a document holding one read term only (in a sentence or the
    title), past the entries read, scores at most that term's contribution at its last one. None without lists
    for these parameters or a read term; and unless ``first`` says whether this query's lists go before MaxScore
    (:func:`~sentret_core.models.arrays.impacts.goes_first`, and for several read terms a k of
    :data:`SEVERAL_FIRST_FROM` or more) or after."""
    lists = found.of("bm25f.v1", params)
    if lists is None:
        return None
    rows = [found.row(int(t)) for t in q.ids]
    read = [i for i, row in enumerate(rows) if row is not None and weights[i] > 0]
    unlisted = [i for i, row in enumerate(rows) if row is None]
    goes = impacts.goes_first([postings(index).size(int(q.ids[i])) for i in unlisted], lists.shape[2])
    several_first = k >= SEVERAL_FIRST_FROM and impacts.shared_estimate(index, q.ids[read]) <= SHARED_FIRST_UP_TO
    if not read or (goes and (len(read) == 1 or several_first)) != first:
        return None
    fields, entries = field_postings(index, window), [lists[rows[i], 0] for i in read]

    def partial(positions: list[int] | range, cand: np.ndarray | None) -> tuple[np.ndarray, np.ndarray]:
        return fields_sum(index, window, pseudo_frequency, only_weighted, k1, q.ids, weights, positions, cand)

    def bound(depth: int) -> float:
        return maxscore.margin(max(
            float(np.sum(saturation(pseudo_frequency(*fields.at(int(q.ids[i]), listed[depth - 1 : depth])), k1, k1,
                                    weights[i])))
            for i, listed in zip(read, entries)
        ))

    titles = title_postings(index)
    shared = impacts.shared_documents(index, [
        union([documents_of(index, postings(index).raw(int(q.ids[i]))[0]),
               np.asarray(titles(int(q.ids[i]))[0], dtype=np.int64)])
        for i in read
    ]) if len(read) > 1 else EMPTY_IDS
    base = union([partial(unlisted, None)[0], shared])
    return impacts.listed_top_k(k, base, entries, lambda cand: partial(range(len(q.ids)), cand), bound)
