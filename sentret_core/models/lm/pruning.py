"""The language models' exact top k by MaxScore (:mod:`~sentret_core.models.arrays.maxscore`), and from impact
lists (:func:`listed_top_k`, :mod:`~sentret_core.models.arrays.impacts`) where an index has them.

A candidate's score is Σ_t c(t,q)·log p(t|θ_s) with p(t|θ_s) = a(s)·c(t,s) + g(s)·c(t,l(s)) + h(s)·p(t)
(:mod:`~sentret_core.models.lm.scoring`), where a, g and h depend on |s| = n and |l(s)| only, h(s) being
h₀(n) for any candidate (its local text holds a term, so it is not empty). For a candidate of length n
that holds none of a set E of query terms — in s, nor in l(s) when the local model reaches candidates —
each t in E contributes exactly c(t,q)·log(h₀(n)·p(t)), and any other term at most

    c(t,q)·log(h₀(n)·p(t) + a(n)·n·max p(t|s') + g(n)·|l|·max p(t|l'))

with g(n)·|l| = the mixture's weight of p(t|l) and the maxima over the sentences s' of length n holding t
and the local texts l' holding t (a window's ratio is at most its sentences' largest, a mediant: docs/spec.md).
The bound of a set of non-essential terms is the largest such sum over n (+ the largest log p(d|s) with
``importance``); the per-term maxima are read once from the term's postings and kept.

The candidates an essential term reaches are cut to those whose essential parts plus the others' bound reach
θ. Under the document model, the sentences holding an essential term come first and raise θ; the other sentences
of their documents follow only from documents whose p(t|d) can lift such a sentence to θ
(:func:`_documents_reaching`). All are scored by the closed form the exhaustive scorer shares (:func:`log_terms_at`,
:func:`summed`, the terms added in query order), so the top k holds its scores bit for bit.

How the exact top k fits together, with a worked example: docs/topk.md.
"""

from __future__ import annotations

from collections.abc import Callable
from functools import cached_property
from typing import TYPE_CHECKING, Any

import numpy as np

from sentret_core.index.neighbours import neighbourhood
from sentret_core.models.arrays import impacts, maxima, maxscore, ranges
from sentret_core.models.arrays.layout import collection_model, doc_len, layout
from sentret_core.models.arrays.local import DOCUMENT, document_counts, document_sentences, documents_of
from sentret_core.models.arrays.postings import postings
from sentret_core.models.arrays.vectors import EMPTY_IDS, EMPTY_SCORES, locate, union, union_sum
from sentret_core.models.core.spec import TopK
from sentret_core.models.lm.scoring import (
    Variant,
    by_length,
    coefficients,
    known_terms,
    lm_scores,
    lm_scores_at,
    local_text_runs,
    log_pds,
    log_terms_at,
    summed,
    terms_scores_at,
)

if TYPE_CHECKING:
    from sentret_core.index.reader import Index
    from sentret_core.models.core.query import Query

MAXIMA_READILY = maxima.STORED_FROM  # postings up to which a term's maxima are read as soon as they may help


# model name -> its mixture and the map of its parameters to the mixture's (what its impact lists are built from)
LISTABLE: dict[str, tuple[Variant, Callable[[Any], Any] | None]] = {}
VARIANTS = 4  # impact lists per term: for 0-3 other query terms (c(t,q) summed)


def lm_top_k(model: str, variant: Variant, as_params: Callable[[Any], Any] | None = None) -> TopK:
    """The registered ``top_k`` of the language model ``model`` (``as_params`` maps its parameters to the
    mixture's): from the impact lists where the query's unlisted terms are rare (:func:`listed_top_k`), else by
    MaxScore, else from the lists, else every candidate."""
    LISTABLE[model] = (variant, as_params)

    def top_k(index: Index, q: Query, p: Any, k: int) -> tuple[np.ndarray, np.ndarray, bool] | None:
        mixture_params, lists = as_params(p) if as_params else p, impacts.impact_lists(index)

        def listed(first: bool) -> tuple[np.ndarray, np.ndarray, bool] | None:
            if lists is None:
                return None
            return listed_top_k(index, lists, q, model, p, mixture_params, variant, k, first)

        found = impacts.around_maxscore(listed, lambda: pruned_top_k(index, q, mixture_params, variant, k))
        if found is None:  # every candidate, range by range: a frequent term's documents can hold most sentences
            found = ranges.by_range(index, postings(index), q.ids, k,
                                    lambda span: lm_scores(index, q, mixture_params, variant, span))
        return found

    return top_k


def pruned_top_k(index: Index, q: Query, p: Any, variant: Variant,
                 k: int) -> tuple[np.ndarray, np.ndarray, bool] | None:
    """The top-k candidates with their exact scores, or None when pruning cannot help (score them all)."""
    use = known_terms(index, q)
    if k == 0:
        return EMPTY_IDS, EMPTY_SCORES, bool(use)
    if len(use) < 2:
        return None
    terms = np.array([t for t, _ in use], dtype=np.int64)
    bounds = Bounds(index, p, variant, use)
    found = maxscore.split(k, postings(index), terms, bounds.importance,
                           lambda sample: lm_scores_at(index, q, p, variant, sample), bounds.below)
    if found is None:
        return None
    essential = terms[found.essential]
    if _by_documents(p, variant):  # the sentences holding a term first: they raise θ for the documents' cut
        held = reached(index, p, variant, essential, in_sentence=True)
        first = _Parts(index, p, variant, use, held, found, bounds)
        theta = maxscore.raised(found.theta, first.lower, k)
        others = document_sentences(index, _documents_reaching(index, p, variant, use, found, bounds, held, theta))
        second = _Parts(index, p, variant, use, others[~locate(held, others)[0]], found, bounds)
        theta = maxscore.raised(theta, np.concatenate([first.lower, second.lower]), k)
        (ids, scores), (more, more_scores) = first.above(theta), second.above(theta)
        ids, scores = union_sum([ids, more], [scores, more_scores])  # disjoint: merged, ids ascending
    else:
        first = _Parts(index, p, variant, use, reached(index, p, variant, essential), found, bounds)
        theta = maxscore.raised(found.theta, first.lower, k)
        ids, scores = first.above(theta)
    return *maxscore.reaching(ids, scores, theta), True


def listed_top_k(index: Index, found: impacts.ImpactLists, q: Query, model: str, p: Any, mixture_params: Any,
                 variant: Variant, k: int, first: bool) -> tuple[np.ndarray, np.ndarray, bool] | None:
    """The top k from the index's impact lists ``found``, those of the query's listed terms
    (:mod:`~sentret_core.models.arrays.impacts`), each with c(t,q) = 1, when Q, the c(t,q) of the query's other
    terms summed, is below :data:`VARIANTS`; None otherwise, and unless
    :func:`~sentret_core.models.arrays.impacts.goes_first` is ``first``.

    A sentence that one listed term f reaches and no other query term does scores Σ_{t≠f} c(t,q)·log(h₀(n)·p(t))
    + [f's part, with log p(d|s)] (:class:`Bounds`): key_Q(s) + Σ_{t≠f} c(t,q)·log p(t), with key_Q(s) = [f's
    part] + Q·log h₀(|s|), the key f's list of variant Q is ordered by.
    """
    lists = found.of(model, p.to_dict())
    if lists is None:
        return None
    use = known_terms(index, q)
    rows = [found.row(t) for t, _ in use]
    listed = [i for i, row in enumerate(rows) if row is not None]
    others_qf = sum(qf for _, qf in use) - 1.0
    if not listed or any(use[i][1] != 1.0 for i in listed) or others_qf != int(others_qf) \
            or others_qf >= lists.shape[1]:
        return None
    unlisted = [use[i] for i, row in enumerate(rows) if row is None]
    if impacts.goes_first([postings(index).size(int(t)) for t, _ in unlisted], lists.shape[2]) != first:
        return None
    entries = [lists[rows[i], int(others_qf)] for i in listed]
    log_h0 = np.log(by_length(index, mixture_params, variant)[2])
    log_p = {t: float(np.log(collection_model(index)[t])) for t, _ in use}
    total = sum(qf * log_p[t] for t, qf in use)

    def bound(depth: int) -> float:
        keys = []
        for i, term_list in zip(listed, entries):
            last = term_list[depth - 1 : depth].astype(np.int64)
            own = terms_scores_at(index, mixture_params, variant, [use[i]], last)[0]
            n = layout(index).sent_len.take(last)
            keys.append(float(own + others_qf * log_h0[n][0] + (total - log_p[use[i][0]])))
        return maxscore.margin(max(keys))

    listed_terms = [int(use[i][0]) for i in listed]
    shared = impacts.shared_documents(index, [documents_of(index, postings(index).raw(t)[0]) for t in listed_terms])
    if not (variant.local and mixture_params.local_weighted()):  # a candidate holds a query term in its sentence
        shared = shared[_holding_any(index, listed_terms, shared)]
    base = union([reached(index, mixture_params, variant, np.array([t for t, _ in unlisted], dtype=np.int64)),
                  shared])
    return impacts.listed_top_k(k, base, entries,
                                lambda cand: (cand, lm_scores_at(index, q, mixture_params, variant, cand)), bound)


def _holding_any(index: Index, terms: list[int], ids: np.ndarray) -> np.ndarray:
    """Which of ``ids`` (sorted) hold one of ``terms`` in the sentence itself (a mask)."""
    held = np.zeros(len(ids), dtype=bool)
    for term in terms:
        held |= locate(postings(index).raw(term)[0], ids)[0]
    return held


class _Parts:
    """The essential terms' parts at candidates ``cand`` and the bounds they give: ``lower``, the candidates'
    lowest possible scores (the others absent; lowered by the margin), to raise θ by; :meth:`above`, the
    candidates that can reach θ with their exact scores: where the essential parts and the others' bound reach θ,
    the others' parts are added (read for fewer sentences), all in query order."""

    def __init__(self, index: Index, p: Any, variant: Variant, use: list[tuple[int, float]], cand: np.ndarray,
                 found: maxscore.Split, bounds: Bounds) -> None:
        self.index, self.p, self.variant, self.use, self.cand, self.found = index, p, variant, use, cand, found
        runs = local_text_runs(index, p, variant, cand)
        self.coefs = coefficients(index, p, variant, cand, runs)
        self.essential = list(log_terms_at(index, p, variant, use, cand, self.coefs, found.essential, runs))
        lengths = layout(index).sent_len.take(cand).astype(np.intp)
        known = np.sum(self.essential, axis=0)
        if getattr(p, "importance", False):
            known += log_pds(index).take(cand)
        self.upper = known + bounds.rest(found.rest).take(lengths)
        self.lower = maxscore.lowered(known + bounds.absent[found.rest].sum(axis=0).take(lengths))

    def above(self, theta: float) -> tuple[np.ndarray, np.ndarray]:
        index, p, variant, use, found = self.index, self.p, self.variant, self.use, self.found
        keep = self.upper + maxscore.SLACK * np.abs(self.upper) >= theta
        ids = self.cand[keep]
        parts = dict(zip(found.essential.tolist(), (part[keep] for part in self.essential)))
        coefs = (self.coefs[0][keep], self.coefs[1][keep], self.coefs[2][keep])
        parts.update(zip(found.rest.tolist(), log_terms_at(index, p, variant, use, ids, coefs, found.rest)))
        return ids, summed(index, p, ids, (parts[i] for i in range(len(use))))


def _by_documents(p: Any, variant: Variant) -> bool:
    """Whether the local model is the document and carries weight: a sentence of a document holding a query
    term is then a candidate."""
    return bool(variant.local and p.local_weighted() and p.context == DOCUMENT)


def _documents_reaching(index: Index, p: Any, variant: Variant, use: list[tuple[int, float]],
                        found: maxscore.Split, bounds: Bounds, held: np.ndarray, theta: float) -> np.ndarray:
    """The documents (sorted) holding an essential term where a sentence holding none itself may reach θ.

    Such a sentence of length n in d scores Σ_essential c(t,q)·log(h₀(n)·p(t) + w(n)·p(t|d)) + [the others'
    parts], at most Σ_essential c(t,q)·log(max h₀·p(t) + max w·p(t|d)) + the others' bound over every n
    [+ the largest log p(d|s)]. At 75M, top 4000 of ``w12 w26 w284``: 248k of 2.97M documents (12.7M
    candidates to 3.8M)."""
    _, w_pl, h0 = by_length(index, p, variant)
    docs = documents_of(index, held)
    total = np.full(len(docs), float(bounds.rest(found.rest).max()))
    if getattr(p, "importance", False):
        total += _largest_log_pds(index)
    ratio = np.empty(len(docs))
    for i in found.essential.tolist():
        term, qf = use[i]
        holding, counts = document_counts(index, *postings(index).raw(term))
        ratio[:] = 0.0
        ratio[np.searchsorted(docs, holding)] = counts
        ratio /= doc_len(index).take(docs)
        ratio *= float(w_pl.max())
        ratio += float(h0.max()) * float(collection_model(index)[term])
        total += qf * np.log(ratio)
    return docs[total + maxscore.SLACK * np.abs(total) >= theta]


class Bounds:
    """For the query terms ``use`` (term, c(t,q)): each one's ``importance`` (the most it can add, by p(t|s)
    and p(t|l) ≤ 1) and whether a candidate holding none of the terms but those at given positions scores
    below θ (:meth:`below`) — first by that crude bound, free, then by the terms' own maxima
    (:func:`term_maxima`), read for a term of many postings only when they can make the difference."""

    def __init__(self, index: Index, p: Any, variant: Variant, use: list[tuple[int, float]]) -> None:
        self.index, self.p, self.variant = index, p, variant
        self.terms = np.array([t for t, _ in use], dtype=np.int64)
        self.qf = np.array([f for _, f in use])
        self.large = [postings(index).size(int(t)) > MAXIMA_READILY for t in self.terms]
        self.tight: dict[int, np.ndarray] = {}  # position -> present - absent with the term's own maxima

    # each computed at its first use: most queries end before (their postings are short)
    @cached_property
    def absent(self) -> np.ndarray:
        return _absent(self.index, self.p, self.variant, self.terms, self.qf)

    @cached_property
    def crude(self) -> np.ndarray:
        ones = np.ones(len(self.terms))
        return _present(self.index, self.p, self.variant, self.terms, self.qf, ones[:, None], ones) - self.absent

    def importance(self) -> np.ndarray:
        return self.crude.max(axis=1)

    def below(self, positions: np.ndarray, theta: float) -> bool:
        rest = positions.tolist()
        if self._bound([self.crude[i] for i in rest]) < theta:
            return True
        if self._bound([0.0 * self.crude[i] if self.large[i] else self._gain(i) for i in rest]) >= theta:
            return False  # even if the large terms added nothing: their maxima cannot help
        return self._bound([self._gain(i) for i in rest]) < theta

    def rest(self, positions: np.ndarray) -> np.ndarray:
        """The bound of the parts of the terms at ``positions`` for each sentence length (the tightest known)."""
        total = np.zeros(self.absent.shape[1])
        for i in positions.tolist():
            gain = np.minimum(self.crude[i], self.tight[i]) if i in self.tight else self.crude[i]
            total += self.absent[i] + gain
        return total

    def _gain(self, i: int) -> np.ndarray:
        if i not in self.tight:
            s_max, l_max = term_maxima(self.index, int(self.terms[i]), self.p.context if self.variant.local else "")
            present = _present(self.index, self.p, self.variant, self.terms[i : i + 1], self.qf[i : i + 1],
                               s_max[None, :], np.array([l_max]))
            self.tight[i] = present[0] - self.absent[i]
        return self.tight[i]

    def _bound(self, gains: list[np.ndarray]) -> float:
        best = float((self.absent.sum(axis=0) + sum(gains)).max())
        if getattr(self.p, "importance", False):
            best += _largest_log_pds(self.index)
        return maxscore.margin(best)


def _absent(index: Index, p: Any, variant: Variant, terms: np.ndarray, qf: np.ndarray) -> np.ndarray:
    """c(t,q)·log(h₀(n)·p(t)) per term (rows) and sentence length n (columns)."""
    h0 = by_length(index, p, variant)[2]
    with np.errstate(divide="ignore"):
        return qf[:, None] * np.log(h0[None, :] * collection_model(index)[terms][:, None])


def _present(index: Index, p: Any, variant: Variant, terms: np.ndarray, qf: np.ndarray, s_max: np.ndarray,
             l_max: np.ndarray) -> np.ndarray:
    """The bound of c(t,q)·log p(t|θ_s) per term and length n, given the largest p(t|s) of each length
    (``s_max``, terms × lengths, or one column for all) and the largest p(t|l) (``l_max``)."""
    a, w_pl, h0 = by_length(index, p, variant)
    n = np.arange(len(a), dtype=np.float64)
    s_part = (a * n)[None, :] * s_max
    l_part = w_pl[None, :] * l_max[:, None] if variant.local else 0.0
    with np.errstate(divide="ignore"):
        return qf[:, None] * np.log(h0[None, :] * collection_model(index)[terms][:, None] + s_part + l_part)


def term_maxima(index: Index, term: int, context: str) -> tuple[np.ndarray, float]:
    """The largest p(t|s) over the sentences of each length that hold ``term`` (0 where none does), and the
    largest p(t|l) over the local texts holding it: a document's exactly, a window's by the mediant bound
    (its sentences' largest p(t|s)); 0 without a local model (``context`` empty)."""

    def build() -> tuple[np.ndarray, float]:
        largest = maxima.largest_by_length(index, term)
        s_max = largest / np.maximum(np.arange(len(largest)), 1)  # a sentence holding a term has a length
        if context == DOCUMENT:
            return s_max, maxima.largest_document_ratio(index, term)
        return s_max, float(s_max.max(initial=0.0)) if context else 0.0

    return index.cache.get_lru("models.lm.term_maxima", (term, context), build, maxscore.TERMS_KEPT)


def _largest_log_pds(index: Index) -> float:
    """The largest log p(d|s) of any sentence (at least 0: a bound)."""
    return index.cache.get("models.lm.log_pds_max", lambda: float(log_pds(index).max(initial=0.0)))


def reached(index: Index, p: Any, variant: Variant, terms: np.ndarray, in_sentence: bool = False) -> np.ndarray:
    """The candidates ``terms`` give: the sentences holding one, and, when the local model carries weight (and
    not ``in_sentence``), the sentences whose window or document holds one (sorted)."""
    post = postings(index)
    rows = [post.raw(int(t))[0] for t in terms]
    if in_sentence or not (variant.local and p.local_weighted()):
        return union([np.asarray(r, dtype=np.int32) for r in rows])
    if p.context == DOCUMENT:
        return document_sentences(index, union([documents_of(index, r) for r in rows]))
    lay = layout(index)
    return union([neighbourhood(lay.first, lay.end, r, p.window).astype(np.int32) for r in rows])
