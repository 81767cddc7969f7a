"""The language models' vectorised scoring path, shared by every mixture (formulas: docs/spec.md).

A mixture (:data:`Mixture`) gives p(t|θ_s) as components from c(t,s), |s|, p(t|s), p(t|l) and
p(t); it is linear in them once the sentence is fixed, so

    p(t|θ_s) = a(s)·c(t,s) + g(s)·c(t,l(s)) + h(s)·p(t)

with coefficients a, g, h read off the mixture itself (:func:`coefficients`: the mixture at unit
inputs), once per parameter setting for every sentence. A query gathers them at its candidates;
each term then costs a scatter of its postings and three multiply-adds. The same mixture gives
explain's rows and the distributions (:mod:`lm_explain`): the formula is written once.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

import numpy as np

from sentret_core.index.neighbours import expand_ranges
from sentret_core.models.arrays.layout import collection_model, context_len, doc_len, layout, sentence_doc_matrix
from sentret_core.models.arrays.postings import context_postings, doc_postings, postings
from sentret_core.models.arrays.vectors import EMPTY_IDS, EMPTY_SCORES, gather, union

if TYPE_CHECKING:
    from sentret_core.index.reader import Index
    from sentret_core.models.core.query import Query

Components = list[tuple[str, Any]]
# (params, c(t,s), |s|, p(t|s), p(t|l), p(t)) -> named components summing to p(t|θ_s); linear in
# c(t,s), p(t|s), p(t|l), p(t) for fixed |s|
Mixture = Callable[..., Components]


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


def local_len(index: Index, context: str, window: int) -> np.ndarray:
    """|l(s)|: the length of every sentence's document, or of its window (s included)."""
    if context == "document":
        return index.cache.get("models.lm.doclen_s", lambda: doc_len(index)[layout(index).sent_doc])
    return index.cache.get(f"models.lm.windowlen/{window}", lambda: context_len(index, window) + layout(index).sent_len)


def log_pds(index: Index) -> np.ndarray:
    """log p(d|s) = Σ_{t∈s} c(t,s)·(log p(t|d) − log p(t)) for every sentence (Fernández et al., eq. 5-7)."""

    def build() -> np.ndarray:
        X = index.X
        lay = layout(index)
        if X.nnz == 0:
            return np.zeros(index.N)
        Xd = (sentence_doc_matrix(index) @ X).tocsr()
        Xd.sort_indices()
        V = np.int64(index.V)
        d_rows = np.repeat(np.arange(Xd.shape[0], dtype=np.int64), np.diff(Xd.indptr))
        d_keys = d_rows * V + Xd.indices
        s_rows = np.repeat(np.arange(index.N, dtype=np.int64), np.diff(X.indptr))
        cols = np.asarray(X.indices, dtype=np.int64)
        s_keys = lay.sent_doc[s_rows].astype(np.int64) * V + cols
        c_td = np.asarray(Xd.data, dtype=np.float64)[np.searchsorted(d_keys, s_keys)]
        p_td = c_td / doc_len(index)[lay.sent_doc[s_rows]]
        p_t = collection_model(index)[cols]
        c = np.asarray(X.data, dtype=np.float64)
        return np.bincount(s_rows, weights=c * (np.log(p_td) - np.log(p_t)), minlength=index.N)

    return index.cache.get("models.lm.log_pds", build)


def _inverse_lengths(index: Index, key: str, lengths: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """1/length (0 for an empty text) and 1.0 where the text is empty (its ML model is p(t))."""
    return index.cache.get(key, lambda: (safe_div(1.0, lengths), (lengths <= 0).astype(np.float64)))


def coefficients(index: Index, p: Any, variant: Variant) -> np.ndarray:
    """N×3: (a, g, h) of every sentence for these parameters (the last few settings are kept).

    With p(t|s) = c(t,s)/|s| (p(t) for an empty sentence) and likewise p(t|l), the mixture's
    value at a unit c(t,s), p(t|s), p(t|l) or p(t) is the weight of that input.
    """

    def build() -> np.ndarray:
        n_s = layout(index).sent_len
        inv_s, empty_s = _inverse_lengths(index, "models.lm.inv_s", n_s)
        inv_l: Any = 0.0
        empty_l: Any = 0.0
        if variant.local:
            window = getattr(p, "window", 1)
            inv_l, empty_l = _inverse_lengths(
                index, f"models.lm.inv_l/{p.context}/{window}", local_len(index, p.context, window)
            )

        def weight(c_s: float = 0.0, p_s: float = 0.0, p_l: float = 0.0, p_c: float = 0.0) -> Any:
            return probability(variant.mixture(p, c_s, n_s, p_s, p_l, p_c))

        w_ps, w_pl = weight(p_s=1.0), weight(p_l=1.0)
        out = np.empty((index.N, 3))
        out[:, 0] = weight(c_s=1.0) + w_ps * inv_s
        out[:, 1] = w_pl * inv_l
        out[:, 2] = weight(p_c=1.0) + w_ps * empty_s + w_pl * empty_l
        return out

    return index.cache.get_lru("models.lm.coefficients", (variant.mixture, p), build)


def lm_scores(index: Index, q: Query, p: Any, variant: Variant) -> tuple[np.ndarray, np.ndarray]:
    """Σ_{t∈q} c(t,q)·log p(t|θ_s) [+ log p(d|s)] over the candidates (see :mod:`lm`)."""
    lay = layout(index)
    post = postings(index)
    pc_all = collection_model(index)
    use = [(t, qf) for t, qf in zip(q.ids, q.qtf) if pc_all[t] > 0]
    if not use:
        return EMPTY_IDS, EMPTY_SCORES
    local = variant.local
    window = getattr(p, "window", 1)
    by_doc = local and p.context == "document"
    reach = local and p.local_weighted()
    sent = [post(t) for t, _ in use]
    if by_doc:
        # candidates: every sentence of a document containing a query term (documents are
        # contiguous runs of sentences, so these come out sorted and distinct)
        docs = doc_postings(index)
        dterm = [docs(t) for t, _ in use]
        doc_ids = union([d for d, _ in dterm])
        if reach:
            first = lay.doc_first.take(doc_ids)
            nsent = lay.doc_nsent.take(doc_ids)
            cand = expand_ranges(first, first + nsent).astype(np.int32)
        else:
            cand = union([r for r, _ in sent])
            cand_doc = np.searchsorted(doc_ids, lay.sent_doc.take(cand))
    elif local:
        ctx = context_postings(index, window, include_self=True)
        cterm = [ctx(t) for t, _ in use]
        cand = union([r for r, _ in (cterm if reach else sent)])
    else:
        cand = union([r for r, _ in sent])
    n = len(cand)
    if n == 0:
        return EMPTY_IDS, EMPTY_SCORES
    agh = coefficients(index, p, variant).take(cand, axis=0)
    a, g, h = agh[:, 0], agh[:, 1], agh[:, 2]
    total = np.zeros(n)
    with np.errstate(divide="ignore"):
        for i, (t, qf) in enumerate(use):
            prob = h * float(pc_all[t])
            r, c = sent[i]
            pos = np.searchsorted(cand, r)
            prob[pos] += c * a.take(pos)
            if local:
                if by_doc:
                    d, dc = dterm[i]
                    per_doc = np.zeros(len(doc_ids))
                    per_doc[np.searchsorted(doc_ids, d)] = dc
                    prob += (np.repeat(per_doc, nsent) if reach else per_doc.take(cand_doc)) * g
                elif reach:
                    r, c = cterm[i]
                    pos = np.searchsorted(cand, r)
                    prob[pos] += c * g.take(pos)
                else:  # the window reaches sentences that are not candidates
                    prob += gather(*cterm[i], cand) * g
            logp = np.log(prob, out=prob)
            total += logp if qf == 1.0 else qf * logp
    if getattr(p, "importance", False):
        total += log_pds(index)[cand]
    return cand, total


def lm_scores_at(index: Index, q: Query, p: Any, variant: Variant, ids: np.ndarray) -> np.ndarray:
    """Σ_{t∈q} c(t,q)·log p(t|θ_s) [+ log p(d|s)] at the given sentences, candidates or not.

    The model's closed form for any sentence, vectorised over ``ids``: with c(t,s) and c(t,l(s))
    gathered (0 where absent), p(t|θ_s) = a·c(t,s) + g·c(t,l) + h·p(t) in the order of
    :func:`lm_scores`, so a candidate's score is that scorer's bit for bit (a gathered 0 adds
    +0.0) and a sentence without a query term in s or l scores Σ c(t,q)·log(h(s)·p(t)): finite,
    the smoothing mass never being 0.
    """
    ids = np.asarray(ids, dtype=np.int64)
    pc_all = collection_model(index)
    use = [(t, qf) for t, qf in zip(q.ids, q.qtf) if pc_all[t] > 0]
    total = np.zeros(len(ids))
    if len(ids) == 0:
        return total
    agh = coefficients(index, p, variant).take(ids, axis=0)
    a, g, h = agh[:, 0], agh[:, 1], agh[:, 2]
    post = postings(index)
    if variant.local and p.context == "document":
        local, where = doc_postings(index), layout(index).sent_doc.take(ids)
    elif variant.local:
        local, where = context_postings(index, getattr(p, "window", 1), include_self=True), ids
    with np.errstate(divide="ignore"):
        for t, qf in use:
            prob = h * float(pc_all[t])
            prob += gather(*post(t), ids) * a
            if variant.local:
                prob += gather(*local(t), where) * g
            logp = np.log(prob, out=prob)
            total += logp if qf == 1.0 else qf * logp
    if getattr(p, "importance", False):
        total += log_pds(index)[ids]
    return total


def closed_form(variant: Variant, as_params: Callable[[Any], Any] | None = None) -> Callable[..., np.ndarray]:
    """The registered ``closed`` scorer of a language model (``as_params`` maps its parameters to
    the mixture's, as 3MMPDS's to 3MM's)."""

    def closed(index: Index, q: Query, p: Any, ids: np.ndarray) -> np.ndarray:
        return lm_scores_at(index, q, as_params(p) if as_params else p, variant, ids)

    return closed
