"""BM25 and BM25F over sentences (Fernández et al., Inf. Retr. 2011, §3.5; Blanco & Zaragoza, SIGIR 2010, §5.1).

BM25 (Fernández et al., Inf. Retr. 2011, §3.5)::

    Σ_{t∈q∩s} idf(t) · (k1+1)·c(t,s) / (k1·((1-b) + b·|s|/avsl) + c(t,s)) · (k3+1)·c(t,q) / (k3+c(t,q))
    idf(t) = log((N - sf(t) + 0.5) / (sf(t) + 0.5))            ("rsj", the paper's; < 0 when sf > N/2)
           = log(1 + (N - sf(t) + 0.5) / (sf(t) + 0.5))        ("lucene", always > 0)

The sum runs over distinct query terms; a repeated term enters through c(t,q) (with k3 = 0 the
query factor is 1, so repeats do not count).

BM25F (Blanco & Zaragoza, SIGIR 2010, §5.1; Robertson & Zaragoza 2009) with three fields per sentence — the sentence,
its context (the ±w sentences around it in its document, s itself excluded) and its
document's title::

    x̃(t,s) = Σ_f w_f · c(t,f_s) / B_f(s),   B_f(s) = (1-b_f) + b_f · len_f(s)/avglen_f
    score  = Σ_{t∈q} idf(t) · (k1+1)·x̃ / (k1+x̃) · (k3+1)·c(t,q) / (k3+c(t,q))

Readings: w_sentence = 1 (Blanco & Zaragoza fix w1 = 1 without loss of generality); every sentence
is a BM25F "document", so avglen_f is the mean of len_f over all sentences (for the title
field: the mean, over sentences, of their document's title length); idf is BM25's, over
sentences. One tied b by default (Blanco & Zaragoza); ``b_sentence``/``b_context``/``b_title``
override it per field (Fernández et al.'s BM25f: its α·x_sentence + (1-α)·x_context weighting is
this function with w_context = (1-α)/α and k1/α, a rank-equivalent reparametrisation).
The k3 query factor is Fernández et al.'s (their BM25f has it); with k3 = 0 it is 1, as in Blanco & Zaragoza.
A field with weight 0 is not used: it neither adds to x̃ nor makes a sentence a candidate, so
BM25F with w_context = w_title = 0 is exactly BM25 with the same k1, b, k3 and idf.

The parameters and term formulas are in :mod:`bm25_formulas`, the explainers in
:mod:`bm25_explain`; this module holds the vectorised scorers, each registered where it is defined.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import TYPE_CHECKING

import numpy as np

from sentret_core.index.neighbours import PerSentence
from sentret_core.models.arrays import ranges
from sentret_core.models.arrays.impacts import around_maxscore, impact_lists
from sentret_core.models.arrays.layout import context_lengths, layout, mean_context_len, mean_title_len, title_lengths
from sentret_core.models.arrays.postings import postings
from sentret_core.models.arrays.ranges import Span
from sentret_core.models.bm25.compiled import Tables, available, compiled_sum, compiled_top_k, tables_of
from sentret_core.models.bm25.explain import BM25F_PARTS, explain_bm25, explain_bm25f
from sentret_core.models.bm25.formulas import (
    BM25FParams,
    BM25Params,
    idf_of,
    length_norm,
    query_factor,
)
from sentret_core.models.bm25.pruning import fields_top_k, listed_fields_top_k, saturated_top_k
from sentret_core.models.bm25.sums import PseudoFrequency, fields_sum, saturated_sum
from sentret_core.models.core.papers import BLANCO_ZARAGOZA_2010, FERNANDEZ_LOSADA_AZZOPARDI_2011, ROBERTSON
from sentret_core.models.core.registry import register
from sentret_core.models.core.spec import zero_without_a_match

if TYPE_CHECKING:
    from sentret_core.index.reader import Index
    from sentret_core.models.core.query import Query

# A query whose longest posting list is longer tries MaxScore first (benchmarks/scale.py queries: the compiled
# top k of every candidate was 2-4× faster than MaxScore up to ~120k postings at 1M sentences and mostly faster
# up to ~230k at 10M; slower above ~250k)
COMPILED_UP_TO = 131_072


def idf(index: Index, variant: str) -> np.ndarray:
    """:func:`idf_of` every term, over sentences."""
    return index.cache.get(
        f"models.bm25.idf/{variant}", lambda: idf_of(index.N, np.asarray(index.sf, dtype=np.float64), variant)
    )


def sentence_k(index: Index, k1: float, b: float) -> PerSentence:
    """k1·B(s) = k1·((1-b) + b·|s|/avsl), computed for the sentences asked for (``.take(ids)``)."""
    lengths = layout(index).sent_len
    return PerSentence(index.N, lambda ids: k1 * length_norm(lengths.take(ids), index.avsl, b))


def pseudo_frequency(index: Index, p: BM25FParams) -> PseudoFrequency:
    """x̃ = Σ_f w_f·c(t,f_s)/B_f(s) at given sentences, B_f(s) = (1-b_f) + b_f·len_f(s)/avglen_f, the fields added in
    order (sentence, context, title), one column at a time (as an (n, 3) product summed by rows would add them,
    bit for bit, with less memory); a field of weight 0 adds nothing and is not read. No array over all N is
    kept but the context lengths. avglen of the sentence field is avsl; of the others, the mean over all
    sentences, computed once. What every query term reads (the lengths' arrays, the means) is looked up here,
    once a query."""
    lay = layout(index)
    weighted: list[tuple[int, Callable[[np.ndarray], np.ndarray], float]] = [(0, lay.sent_len.take, index.avsl)]
    if p.w_context > 0:
        weighted.append((1, context_lengths(index, p.window).take, mean_context_len(index, p.window)))
    if p.w_title > 0:
        titles = title_lengths(index)
        weighted.append((2, lambda rows: titles.take(lay.sent_doc.take(rows)), mean_title_len(index)))
    b, w = p.field_b(), (1.0, p.w_context, p.w_title)

    def factor(field: int, lengths: Callable[[np.ndarray], np.ndarray], mean: float) -> Callable[[np.ndarray],
                                                                                                  np.ndarray]:
        def at(rows: np.ndarray) -> np.ndarray:  # w_f/B_f(s), 0 where B_f(s) = 0
            ratio = lengths(rows) / mean if mean > 0 else np.zeros(len(rows))
            norm = (1.0 - b[field]) + b[field] * ratio  # B_f(s)
            part = np.zeros(len(rows))
            np.divide(1.0, norm, out=part, where=norm > 0)
            part *= w[field]
            return part

        return at

    key = (p.window, p.w_context, p.w_title, *b)
    return PseudoFrequency(key, [(field, factor(field, lengths, mean)) for field, lengths, mean in weighted])


def kernel_tables(index: Index, p: BM25Params) -> Tables:
    """The compiled kernel's K(s), K_min and idf for ``p``, built once per index and setting."""

    def build() -> Tables:
        return tables_of(index, p.k1, p.b, idf(index, p.idf), lambda: sentence_k(index, p.k1, p.b))

    return index.cache.get_lru("models.bm25.kernel", (p.k1, p.b, p.idf), build)


def top_k_bm25(index: Index, q: Query, p: BM25Params, k: int) -> tuple[np.ndarray, np.ndarray, bool] | None:
    """bm25.v1's top k: every candidate scored in one compiled call (:mod:`~sentret_core.models.bm25.compiled`), or
    where a term has more than :data:`COMPILED_UP_TO` postings, MaxScore (:mod:`~sentret_core.models.bm25.pruning`)
    first; None (every candidate scored by numpy) where neither applies."""
    post = postings(index)
    found: tuple[np.ndarray, np.ndarray, bool] | None = None
    if available():
        found = compiled_top_k(post, kernel_tables(index, p), q, p, k, COMPILED_UP_TO)
    if found is None:  # no extension, an input it declines, or a term with many postings
        found = saturated_top_k(index, q, k, term_weights(index, q, p), p.k1, lambda: sentence_k(index, p.k1, p.b))
        if found is None and available():
            found = compiled_top_k(post, kernel_tables(index, p), q, p, k)
    return found


@register(
    "bm25.v1",
    display_name="BM25",
    family="bm25",
    closed=zero_without_a_match,
    top_k=top_k_bm25,
    params=BM25Params,
    explainer=explain_bm25,
    formula=r"\sum_{t\in q\cap s}\log\frac{N-sf(t)+0.5}{sf(t)+0.5}\cdot"
    r"\frac{(k_1+1)\,c(t,s)}{k_1\left((1-b)+b\frac{|s|}{avsl}\right)+c(t,s)}\cdot"
    r"\frac{(k_3+1)\,c(t,q)}{k_3+c(t,q)}",
    paper=f"{FERNANDEZ_LOSADA_AZZOPARDI_2011} §3.5; {ROBERTSON}",
    description="Okapi BM25 with the sentence as the document",
)
def score_bm25(index: Index, q: Query, p: BM25Params) -> tuple[np.ndarray, np.ndarray]:
    post = postings(index)
    found = compiled_sum(post, kernel_tables(index, p), q, p) if available() else None
    if found is None:
        K = sentence_k(index, p.k1, p.b)
        return saturated_sum(post, K, p.k1, q.ids, term_weights(index, q, p), range(len(q.ids)))
    return found


def term_weights(index: Index, q: Query, p: BM25Params | BM25FParams) -> np.ndarray:
    """idf(t)·(k3+1)·c(t,q)/(k3+c(t,q)) of each distinct query term, in the order of ``q.ids``."""
    return idf(index, p.idf).take(q.ids) * query_factor(q.qtf, p.k3)


def top_k_bm25f(index: Index, q: Query, p: BM25FParams, k: int) -> tuple[np.ndarray, np.ndarray, bool] | None:
    """bm25f.v1's top k without scoring every candidate nor building a frequent term's fields: from the impact
    lists of an index that has them (:func:`~sentret_core.models.bm25.pruning.listed_fields_top_k`; before MaxScore
    where the query's unlisted terms are rare and, for several frequent ones, k is large; after it otherwise) or by
    MaxScore; where neither helps, every candidate, scored here with the weights already looked up (``search``
    ranks): range by range of documents, each range's k best kept, when a term is in more than
    :data:`~sentret_core.models.arrays.ranges.RANGE_FROM` sentences (its fields and weights for all of them at
    once were several GB at 75M)."""
    weights, fields, lists = term_weights(index, q, p), pseudo_frequency(index, p), impact_lists(index)

    def listed(first: bool) -> tuple[np.ndarray, np.ndarray, bool] | None:
        if lists is None:
            return None
        return listed_fields_top_k(index, lists, q, k, weights, p.k1, p.window, fields, only_weighted(p),
                                   order_params(p), first)

    found = around_maxscore(listed, lambda: fields_top_k(index, q, k, weights, p.k1, p.window, fields,
                                                         only_weighted(p)))
    if found is not None:
        return found

    def every_candidate(span: Span | None) -> tuple[np.ndarray, np.ndarray]:
        return fields_sum(index, p.window, fields, only_weighted(p), p.k1, q.ids, weights, range(len(q.ids)),
                          span=span)

    ranged = ranges.by_range(index, postings(index), q.ids, k, every_candidate)
    if ranged is not None:
        return ranged
    ids, scores = every_candidate(None)
    return ids, scores, len(ids) > 0


def order_params(p: BM25FParams) -> dict[str, object]:
    """What orders a term's sentences by x̃ (its impact list): the fields' weights, b and the window (not k1,
    idf or k3, which change a contribution but not its order)."""
    return {"w_context": p.w_context, "w_title": p.w_title, "window": p.window, "b": list(p.field_b())}


def only_weighted(p: BM25FParams) -> bool:
    """Whether a field has weight 0: a sentence it alone reaches is then no candidate."""
    return p.w_context == 0 or p.w_title == 0


@register(
    "bm25f.v1",
    display_name="BM25F (sentence, context, title)",
    family="bm25",
    closed=zero_without_a_match,
    top_k=top_k_bm25f,
    params=BM25FParams,
    explainer=explain_bm25f,
    parts=BM25F_PARTS,
    formula=r"\sum_{t\in q} idf(t)\,\frac{(k_1+1)\,\tilde{x}}{k_1+\tilde{x}},\;"
    r"\tilde{x}=\sum_{f}\frac{w_f\,c(t,f_s)}{(1-b_f)+b_f\,len_f(s)/avglen_f}",
    paper=f"{BLANCO_ZARAGOZA_2010}; {ROBERTSON}; {FERNANDEZ_LOSADA_AZZOPARDI_2011} §4.2.3",
    description="BM25 over three weighted fields: the sentence, its ±w surrounding sentences, its document's title",
)
def score_bm25f(index: Index, q: Query, p: BM25FParams) -> tuple[np.ndarray, np.ndarray]:
    return fields_sum(index, p.window, pseudo_frequency(index, p), only_weighted(p), p.k1, q.ids,
                      term_weights(index, q, p), range(len(q.ids)))
