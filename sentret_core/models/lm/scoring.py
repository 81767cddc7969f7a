"""The language models' vectorised scoring path, shared by every mixture (formulas: docs/spec.md).

A mixture (:data:`Mixture`) gives p(t|θ_s) as components from c(t,s), |s|, p(t|s), p(t|l) and
p(t); it is linear in them once the sentence is fixed, so

    p(t|θ_s) = a(s)·c(t,s) + g(s)·c(t,l(s)) + h(s)·p(t)

with coefficients a, g, h read off the mixture itself (:func:`coefficients`: the mixture at unit
inputs), computed at a query's candidates alone. Each term then costs a scatter of its postings,
its local counts c(t,l(s)) from those same postings (:mod:`local`: no context or document matrix)
and three multiply-adds. The same mixture gives explain's rows and the distributions
(:mod:`lm_explain`): the formula is written once.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable, Iterator, Sequence
from dataclasses import dataclass
from functools import partial
from typing import TYPE_CHECKING, Any

import numpy as np

from sentret_core.models.arrays.layout import collection_model, context_len, doc_len, layout
from sentret_core.models.arrays.local import (
    DOCUMENT,
    Runs,
    document_counts,
    document_sentences,
    local_runs,
    run_counts,
    window_counts,
)
from sentret_core.models.arrays.postings import postings
from sentret_core.models.arrays.ranges import Span
from sentret_core.models.arrays.vectors import EMPTY_IDS, EMPTY_SCORES, between, gather, run_starts, scatter, union

if TYPE_CHECKING:
    from sentret_core.index.reader import Index
    from sentret_core.models.core.query import Query

Components = list[tuple[str, Any]]
# (params, c(t,s), |s|, p(t|s), p(t|l), p(t)) -> named components summing to p(t|θ_s); linear in
# c(t,s), p(t|s), p(t|l), p(t) for fixed |s|
Mixture = Callable[..., Components]
Counts = Sequence[Callable[[], np.ndarray]]  # per query term: its counts at the scored sentences, when called
Coefficients = tuple[np.ndarray, np.ndarray, np.ndarray]  # a, g, h at the scored sentences


@dataclass(frozen=True)
class Variant:
    """A language model: its mixture, and whether it has a local model (p(t|d) or p(t|c_s))."""

    mixture: Mixture
    local: bool


def safe_div(num: Any, den: np.ndarray) -> np.ndarray:
    """num/den, 0 where den = 0."""
    out = np.zeros(np.broadcast(num, den).shape)
    np.divide(num, den, out=out, where=den > 0)
    return out


def probability(components: Components) -> Any:
    """p(t|θ_s): the sum of a mixture's components."""
    total = components[0][1]
    for _, part in components[1:]:
        total = total + part
    return total


def local_len(index: Index, context: str, window: int, ids: np.ndarray, runs: Runs | None = None) -> np.ndarray:
    """|l(s)| at ``ids``: the length of each sentence's document (from their ``runs``, when given), or of its window
    (s included)."""
    lay = layout(index)
    if context == DOCUMENT:
        if runs is not None and runs.documents is not None:
            return runs.spread(doc_len(index).take(runs.documents))
        return doc_len(index).take(lay.sent_doc.take(ids))
    return context_len(index, window, ids) + lay.sent_len.take(ids)


LOG_PDS_CHUNK = 2**20  # sentences of whole documents per step of log p(d|s): its memory, not the index's


def log_pds(index: Index) -> np.ndarray:
    """log p(d|s) = Σ_{t∈s} c(t,s)·(log p(t|d) − log p(t)) for every sentence (Fernández et al., eq. 5-7),
    computed over runs of whole documents of about :data:`LOG_PDS_CHUNK` sentences."""

    def build() -> np.ndarray:
        out = np.zeros(index.N)
        lay = layout(index)
        doc_end = lay.doc_first.astype(np.int64) + lay.doc_nsent
        d0 = 0
        while d0 < index.D:
            d1 = max(int(np.searchsorted(doc_end, int(lay.doc_first[d0]) + LOG_PDS_CHUNK, side="right")), d0 + 1)
            s0, s1 = int(lay.doc_first[d0]), int(doc_end[d1 - 1])
            out[s0:s1] = _log_pds_of(index, d0, s0, s1)
            d0 = d1
        return out

    return index.cache.get("models.lm.log_pds", build)


def _log_pds_of(index: Index, d0: int, s0: int, s1: int) -> np.ndarray:
    """log p(d|s) of the sentences ``s0:s1``, the whole documents from ``d0`` on."""
    X = index.X
    lo, hi = int(X.indptr[s0]), int(X.indptr[s1])
    if hi == lo:
        return np.zeros(s1 - s0)
    lay = layout(index)
    V = np.int64(index.V)
    s_rows = np.repeat(np.arange(s1 - s0, dtype=np.int64), np.diff(X.indptr[s0 : s1 + 1]).astype(np.int64))
    cols = np.asarray(X.indices[lo:hi], dtype=np.int64)
    c = np.asarray(X.data[lo:hi], dtype=np.float64)
    docs = lay.sent_doc[s0:s1].astype(np.int64)
    keys = docs.take(s_rows) * V + cols  # (document, term) of every posting
    order = np.argsort(keys, kind="stable")
    sorted_keys = keys.take(order)
    starts = run_starts(sorted_keys)
    c_td = np.add.reduceat(c.take(order), starts)[np.searchsorted(sorted_keys.take(starts), keys)]
    p_td = c_td / doc_len(index).take(docs.take(s_rows))
    p_t = collection_model(index)[cols]
    return np.bincount(s_rows, weights=c * (np.log(p_td) - np.log(p_t)), minlength=s1 - s0)


def _inverse(lengths: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """1/length (0 for an empty text) and 1.0 where the text is empty (its ML model is p(t))."""
    return safe_div(1.0, lengths), (lengths <= 0).astype(np.float64)


def coefficients(index: Index, p: Any, variant: Variant, ids: np.ndarray, runs: Runs | None = None) -> Coefficients:
    """(a, g, h) at the sentences ``ids`` for these parameters.

    With p(t|s) = c(t,s)/|s| (p(t) for an empty sentence) and likewise p(t|l), the mixture's
    value at a unit c(t,s), p(t|s), p(t|l) or p(t) is the weight of that input. What depends on
    |s| alone is tabulated once per setting over the lengths (:func:`by_length`), the rest is
    computed at the candidates: nothing of size N is kept per parameter setting. ``runs``: the candidates' local
    texts (:func:`local_text_runs`), when the caller has them.
    """
    lay = layout(index)
    n_s = lay.sent_len.take(ids).astype(np.intp)
    a, w_pl, h0 = (column.take(n_s) for column in by_length(index, p, variant))
    inv_l: Any = 0.0
    empty_l: Any = 0.0
    if variant.local:
        inv_l, empty_l = _inverse(local_len(index, p.context, getattr(p, "window", 1), ids, runs))
    return a, w_pl * inv_l, h0 + w_pl * empty_l


def by_length(index: Index, p: Any, variant: Variant) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """a, the weight of p(t|l) and h without its local part, for every sentence length 0..max |s|."""

    def build() -> tuple[np.ndarray, np.ndarray, np.ndarray]:
        lengths = layout(index).sent_len
        n_s = np.arange(int(lengths.max()) + 1 if len(lengths) else 1, dtype=np.float64)
        inv_s, empty_s = _inverse(n_s)

        def weight(c_s: float = 0.0, p_s: float = 0.0, p_l: float = 0.0, p_c: float = 0.0) -> Any:
            return probability(variant.mixture(p, c_s, n_s, p_s, p_l, p_c))

        w_ps, zero = weight(p_s=1.0), np.zeros(len(n_s))
        a = zero + (weight(c_s=1.0) + w_ps * inv_s)
        return a, zero + weight(p_l=1.0), zero + (weight(p_c=1.0) + w_ps * empty_s)

    return index.cache.get_lru("models.lm.by_length", (variant.mixture, p), build)


def lm_scores(
    index: Index, q: Query, p: Any, variant: Variant, span: Span | None = None
) -> tuple[np.ndarray, np.ndarray]:
    """Σ_{t∈q} c(t,q)·log p(t|θ_s) [+ log p(d|s)] over the candidates (see :mod:`lm`): the sentences
    holding a query term, and those whose local text holds one when the local model carries weight; with
    ``span`` (whole documents), the candidates of that range of sentences only (a sentence's local text is in
    its document)."""
    post = postings(index)
    use = known_terms(index, q)
    sent = [post(t) if span is None else between(*post(t), *span) for t, _ in use]
    reach = variant.local and p.local_weighted()
    local: Counts = []
    if variant.local and p.context == DOCUMENT:
        # a document is a run of sentences: its counts are found once and repeated over its sentences
        per_doc = [document_counts(index, r, c) for r, c in sent]
        doc_ids = union([d for d, _ in per_doc])
        cand = document_sentences(index, doc_ids) if reach else union([r for r, _ in sent])
        doc_of = (np.repeat(np.arange(len(doc_ids)), layout(index).doc_nsent.take(doc_ids)) if reach
                  else np.searchsorted(doc_ids, layout(index).sent_doc.take(cand)))
        local = [partial(_spread, doc_ids, d, c, doc_of) for d, c in per_doc]
    elif variant.local:
        around = [window_counts(index, post, t, p.window, span) for t, _ in use]
        cand = union([r for r, _ in (around if reach else sent)])
        if reach:  # every sentence the window reaches is a candidate
            local = [partial(scatter, cand, r, c) for r, c in around]
        else:
            local = [partial(gather, r, c, cand) for r, c in around]
    else:
        cand = union([r for r, _ in sent])
    if len(cand) == 0:
        return EMPTY_IDS, EMPTY_SCORES
    in_sentence = [partial(scatter, cand, r, c) for r, c in sent]
    return cand, _scores(index, p, variant, use, cand, in_sentence, local)


def _spread(doc_ids: np.ndarray, docs: np.ndarray, counts: np.ndarray, doc_of: np.ndarray) -> np.ndarray:
    """c(t,d) of each candidate's document: ``counts`` at ``docs`` (of ``doc_ids``), taken at ``doc_of``."""
    return scatter(doc_ids, docs, counts).take(doc_of)


def lm_scores_at(index: Index, q: Query, p: Any, variant: Variant, ids: np.ndarray) -> np.ndarray:
    """Σ_{t∈q} c(t,q)·log p(t|θ_s) [+ log p(d|s)] at the given sentences, candidates or not.

    The model's closed form for any sentence, vectorised over ``ids``: with c(t,s) and c(t,l(s))
    gathered (0 where absent), p(t|θ_s) = a·c(t,s) + g·c(t,l) + h·p(t) as in :func:`lm_scores`,
    so a candidate's score is that scorer's bit for bit (a gathered 0 adds +0.0) and a sentence
    without a query term in s or l scores Σ c(t,q)·log(h(s)·p(t)): finite, the smoothing mass
    never being 0.
    """
    return terms_scores_at(index, p, variant, known_terms(index, q), ids)


def terms_scores_at(index: Index, p: Any, variant: Variant, use: list[tuple[int, float]],
                    ids: np.ndarray) -> np.ndarray:
    """:func:`lm_scores_at` of the query terms ``use`` (term, c(t,q))."""
    ids = np.asarray(ids, dtype=np.int64)
    if len(ids) == 0:
        return np.zeros(0)
    runs = local_text_runs(index, p, variant, ids)
    coefs = coefficients(index, p, variant, ids, runs)
    return summed(index, p, ids, log_terms_at(index, p, variant, use, ids, coefs, range(len(use)), runs))


def local_text_runs(index: Index, p: Any, variant: Variant, ids: np.ndarray) -> Runs | None:
    """The local texts of ``ids`` as runs (:func:`~sentret_core.models.arrays.local.local_runs`), for a model
    with a local model; None otherwise."""
    return local_runs(index, p.context, getattr(p, "window", 1), ids) if variant.local else None


def log_terms_at(index: Index, p: Any, variant: Variant, use: list[tuple[int, float]], ids: np.ndarray,
                 coefs: Coefficients, positions: Iterable[int], runs: Runs | None = None) -> Iterator[np.ndarray]:
    """c(t,q)·log p(t|θ_s) at ``ids`` (:func:`coefficients` there: ``coefs``; their local texts' ``runs``, when the
    caller has them) of the query terms at ``positions``, one term at a time, their counts gathered from the
    postings: the terms of :func:`lm_scores_at`."""
    post = postings(index)
    if runs is None:
        runs = local_text_runs(index, p, variant, ids)
    for i in positions:
        t, qf = use[i]
        in_local = run_counts(post, t, runs) if runs is not None else None
        # the postings in their stored dtypes: only the hits convert
        yield _log_term(coefs, float(collection_model(index)[t]), qf, gather(*post.raw(t), ids), in_local)


def summed(index: Index, p: Any, ids: np.ndarray, parts: Iterable[np.ndarray]) -> np.ndarray:
    """The query terms' parts at ``ids`` added in query order [+ log p(d|s)]: a score."""
    total = np.zeros(len(ids))
    for part in parts:
        total += part
    if getattr(p, "importance", False):
        total += log_pds(index).take(ids)
    return total


def known_terms(index: Index, q: Query) -> list[tuple[int, float]]:
    """The query's terms seen in the collection, with c(t,q): an unseen one is skipped (docs/spec.md)."""
    pc_all = collection_model(index)
    return [(t, qf) for t, qf in zip(q.ids, q.qtf) if pc_all[t] > 0]


def _log_term(coefs: Coefficients, p_t: float, qf: float, in_sentence: np.ndarray,
              in_local: np.ndarray | None) -> np.ndarray:
    """c(t,q)·log(a·c(t,s) + g·c(t,l(s)) + h·p(t)), the order of operations every scoring path shares."""
    a, g, h = coefs
    prob = h * p_t
    prob += in_sentence * a
    if in_local is not None:
        prob += in_local * g
    with np.errstate(divide="ignore"):
        logp = np.log(prob, out=prob)
    return logp if qf == 1.0 else qf * logp


def _scores(index: Index, p: Any, variant: Variant, use: list[tuple[int, float]], ids: np.ndarray,
            in_sentence: Counts, in_local: Counts) -> np.ndarray:
    """Σ c(t,q)·log(a·c(t,s) + g·c(t,l(s)) + h·p(t)) [+ log p(d|s)] at ``ids``; each term's c(t,s) and
    c(t,l(s)) at ``ids`` come from its callables, made one term at a time (a few vectors of len(ids) at once)."""
    coefs = coefficients(index, p, variant, ids)
    pc_all = collection_model(index)
    parts = (_log_term(coefs, float(pc_all[t]), qf, in_sentence[i](), in_local[i]() if variant.local else None)
             for i, (t, qf) in enumerate(use))
    return summed(index, p, ids, parts)


def closed_form(variant: Variant, as_params: Callable[[Any], Any] | None = None) -> Callable[..., np.ndarray]:
    """The registered ``closed`` scorer of a language model (``as_params`` maps its parameters to
    the mixture's, as 3MMPDS's to 3MM's)."""

    def closed(index: Index, q: Query, p: Any, ids: np.ndarray) -> np.ndarray:
        return lm_scores_at(index, q, as_params(p) if as_params else p, variant, ids)

    return closed
