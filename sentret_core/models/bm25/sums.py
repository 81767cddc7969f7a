"""The sums BM25 and BM25F add up, written once for their exhaustive scorers and their MaxScore path
(:mod:`~sentret_core.models.bm25.pruning`): the contributions by one formula, summed by
:func:`~sentret_core.models.arrays.vectors.union_sum` in query-term order, so that a pruned top k holds the
exhaustive scores bit for bit.

Each sums the query terms at ``positions`` (indices into ``terms`` and ``weights``) over every sentence
one of them reaches (``cand`` None), or over the sentences ``cand`` (sorted) only.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable
from typing import TYPE_CHECKING

import numpy as np

from sentret_core.index.neighbours import Column
from sentret_core.models.arrays.postings import Postings, field_postings
from sentret_core.models.arrays.ranges import Span
from sentret_core.models.arrays.vectors import union_sum
from sentret_core.models.bm25.formulas import saturation

if TYPE_CHECKING:
    from sentret_core.index.reader import Index

# (sentence rows, a term's (n, 3) counts there in the sentence, context and title) -> BM25F's x̃ at those rows
PseudoFrequency = Callable[[np.ndarray, np.ndarray], np.ndarray]


def saturated_sum(
    post: Postings, K: Column, k1: float, terms: np.ndarray, weights: np.ndarray, positions: Iterable[int],
    cand: np.ndarray | None = None,
) -> tuple[np.ndarray, np.ndarray]:
    """BM25's ``Σ_t w_t·(k1+1)·c(t,s)/(K(s)+c(t,s))``, K(s) = k1·B(s) per sentence."""
    rows, vals = [], []
    for i in positions:
        term = int(terms[i])
        r, c = post(term) if cand is None else post.lookup(term, cand)
        if len(r):
            rows.append(r)
            vals.append(saturation(c, K.take(r), k1, weights[i]))
    return union_sum(rows, vals)


def fields_sum(
    index: Index, window: int, pseudo_frequency: PseudoFrequency, only_weighted: bool, k1: float, terms: np.ndarray,
    weights: np.ndarray, positions: Iterable[int], cand: np.ndarray | None = None, span: Span | None = None,
) -> tuple[np.ndarray, np.ndarray]:
    """BM25F's ``Σ_t w_t·(k1+1)·x̃/(k1+x̃)``, x̃ over the sentence, ±``window`` context and title fields
    (``pseudo_frequency``: the term's rows and counts -> x̃ there); with ``only_weighted``, a sentence reached only
    through a field of weight 0 is no candidate. Over ``cand``, a term's counts at those sentences alone
    (:meth:`~sentret_core.models.arrays.postings.FieldPostings.at`: a frequent term's fields, which are large,
    are not built for them); over ``span`` (whole documents, no ``cand``), every candidate of that range."""
    fields = field_postings(index, window)
    rows, vals = [], []
    for i in positions:
        term = int(terms[i])
        if cand is not None:
            r, counts = fields.at(term, cand)
        else:
            r, counts = fields(term) if span is None else fields.within(term, span)
        x = pseudo_frequency(r, counts)
        if only_weighted:
            keep = x > 0
            r, x = r[keep], x[keep]
        if len(r):
            rows.append(r)
            vals.append(saturation(x, k1, k1, weights[i]))
    return union_sum(rows, vals)

