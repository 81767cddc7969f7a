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
from sentret_core.models.arrays.layout import Targets
from sentret_core.models.arrays.postings import Postings, field_postings
from sentret_core.models.arrays.ranges import Span
from sentret_core.models.arrays.vectors import union_sum
from sentret_core.models.bm25.formulas import saturation

if TYPE_CHECKING:
    from sentret_core.index.reader import Index

Factors = list[tuple[int, np.ndarray]]  # (field, w_f/B_f(s) at some sentences) of each field that carries weight


class PseudoFrequency:
    """BM25F's x̃ = Σ_f w_f·c(t,f_s)/B_f(s) at given sentences: ``x̃(rows, counts)`` with a term's (n, 3) counts
    there (sentence, context, title). The factors w_f/B_f(s) depend on the sentences alone, so a query's terms
    looked up at the same candidates share them (:meth:`factors` once, :meth:`weighted` per term): the same
    numbers, multiplied and added in the same order. ``key`` names what x̃ depends on besides the index and the
    term (the fields' weights and b, the window): a term's x̃ over its whole fields is kept under it."""

    def __init__(self, key: tuple[object, ...], fields: list[tuple[int, Callable[[np.ndarray], np.ndarray]]]) -> None:
        self.key, self._fields = key, fields

    def factors(self, rows: np.ndarray) -> Factors:
        return [(field, factor(rows)) for field, factor in self._fields]

    @staticmethod
    def weighted(factors: Factors, counts: np.ndarray, positions: np.ndarray | None = None) -> np.ndarray:
        """x̃ from ``factors`` (at ``positions`` of the sentences they were taken at, or all of them) and the
        term's counts there, the fields added in order (sentence, context, title)."""
        total: np.ndarray | None = None
        for field, factor in factors:
            part = (factor if positions is None else factor.take(positions)) * counts[:, field]
            total = part if total is None else total + part
        assert total is not None  # the sentence field always counts
        return total

    def __call__(self, rows: np.ndarray, counts: np.ndarray) -> np.ndarray:
        return self.weighted(self.factors(rows), counts)


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
    (``pseudo_frequency``); with ``only_weighted``, a sentence reached only through a field of weight 0 is no
    candidate. Over ``cand``, a term's counts at those sentences alone
    (:meth:`~sentret_core.models.arrays.postings.FieldPostings.found_at`: a frequent term's fields, which are large,
    are not built for them), x̃'s factors taken there once for every term; over ``span`` (whole documents, no
    ``cand``), every candidate of that range; else every sentence the term reaches, its x̃ kept with its fields."""
    fields = field_postings(index, window)
    targets = None if cand is None else Targets(index, cand)
    factors: Factors | None = None
    rows, vals = [], []
    for i in positions:
        term = int(terms[i])
        if targets is not None:
            found, counts = fields.found_at(term, targets)
            if factors is None:
                factors = pseudo_frequency.factors(targets.ids)
            r, x = targets.rows(found), pseudo_frequency.weighted(factors, counts, found)
        elif span is None:
            r, x = fields.weighted(term, pseudo_frequency.key, pseudo_frequency)
        else:
            r, counts = fields.within(term, span)
            x = pseudo_frequency(r, counts)
        if only_weighted:
            keep = x > 0
            r, x = r[keep], x[keep]
        if len(r):
            rows.append(r)
            vals.append(saturation(x, k1, k1, weights[i]))
    return union_sum(rows, vals)
