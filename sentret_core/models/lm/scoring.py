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

from collections.abc import Callable
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

import numpy as np

from sentret_core.models.arrays.layout import collection_model, context_len, doc_len, layout
from sentret_core.models.arrays.local import DOCUMENT, local_ranges, range_counts, reached
from sentret_core.models.arrays.postings import postings
from sentret_core.models.arrays.vectors import EMPTY_IDS, EMPTY_SCORES, gather, run_starts, scatter, union

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


def local_len(index: Index, context: str, window: int, ids: np.ndarray) -> np.ndarray:
    """|l(s)| at ``ids``: the length of each sentence's document, or of its window (s included)."""
    lay = layout(index)
    if context == DOCUMENT:
        return doc_len(index).take(lay.sent_doc.take(ids))
    return context_len(index, window).take(ids) + lay.sent_len.take(ids)


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


def coefficients(index: Index, p: Any, variant: Variant, ids: np.ndarray) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """(a, g, h) at the sentences ``ids`` for these parameters.

    With p(t|s) = c(t,s)/|s| (p(t) for an empty sentence) and likewise p(t|l), the mixture's
    value at a unit c(t,s), p(t|s), p(t|l) or p(t) is the weight of that input. Computed at the
    candidates alone, per query: nothing of size N is kept per parameter setting.
    """
    n_s = layout(index).sent_len.take(ids)
    inv_s, empty_s = _inverse(n_s)
    inv_l: Any = 0.0
    empty_l: Any = 0.0
    if variant.local:
        inv_l, empty_l = _inverse(local_len(index, p.context, getattr(p, "window", 1), ids))

    def weight(c_s: float = 0.0, p_s: float = 0.0, p_l: float = 0.0, p_c: float = 0.0) -> Any:
        return probability(variant.mixture(p, c_s, n_s, p_s, p_l, p_c))

    w_ps, w_pl = weight(p_s=1.0), weight(p_l=1.0)
    full = np.zeros(len(ids))
    return (
        full + (weight(c_s=1.0) + w_ps * inv_s),
        full + w_pl * inv_l,
        full + (weight(p_c=1.0) + w_ps * empty_s + w_pl * empty_l),
    )


def lm_scores(index: Index, q: Query, p: Any, variant: Variant) -> tuple[np.ndarray, np.ndarray]:
    """Σ_{t∈q} c(t,q)·log p(t|θ_s) [+ log p(d|s)] over the candidates (see :mod:`lm`): the sentences
    holding a query term, and those whose local text holds one when the local model carries weight."""
    post = postings(index)
    use = _known_terms(index, q)
    sent = [post(t) for t, _ in use]
    if variant.local and p.local_weighted():
        context, window = p.context, getattr(p, "window", 1)
        cand = union([reached(index, context, window, r) for r, _ in sent])
    else:
        cand = union([r for r, _ in sent])
    if len(cand) == 0:
        return EMPTY_IDS, EMPTY_SCORES
    return cand, _scores(index, p, variant, use, cand, [scatter(cand, r, c) for r, c in sent])


def lm_scores_at(index: Index, q: Query, p: Any, variant: Variant, ids: np.ndarray) -> np.ndarray:
    """Σ_{t∈q} c(t,q)·log p(t|θ_s) [+ log p(d|s)] at the given sentences, candidates or not.

    The model's closed form for any sentence, vectorised over ``ids``: with c(t,s) and c(t,l(s))
    gathered (0 where absent), p(t|θ_s) = a·c(t,s) + g·c(t,l) + h·p(t) as in :func:`lm_scores`,
    so a candidate's score is that scorer's bit for bit (a gathered 0 adds +0.0) and a sentence
    without a query term in s or l scores Σ c(t,q)·log(h(s)·p(t)): finite, the smoothing mass
    never being 0.
    """
    ids = np.asarray(ids, dtype=np.int64)
    if len(ids) == 0:
        return np.zeros(0)
    post = postings(index)
    use = _known_terms(index, q)
    return _scores(index, p, variant, use, ids, [gather(*post(t), ids) for t, _ in use])


def _known_terms(index: Index, q: Query) -> list[tuple[int, float]]:
    """The query's terms seen in the collection, with c(t,q): an unseen one is skipped (docs/spec.md)."""
    pc_all = collection_model(index)
    return [(t, qf) for t, qf in zip(q.ids, q.qtf) if pc_all[t] > 0]


def _scores(index: Index, p: Any, variant: Variant, use: list[tuple[int, float]], ids: np.ndarray,
            in_sentence: list[np.ndarray]) -> np.ndarray:
    """Σ c(t,q)·log(a·c(t,s) + g·c(t,l(s)) + h·p(t)) [+ log p(d|s)] at ``ids``, with c(t,s) given."""
    a, g, h = coefficients(index, p, variant, ids)
    pc_all = collection_model(index)
    post = postings(index)
    if variant.local:
        lo, hi = local_ranges(index, p.context, getattr(p, "window", 1), ids)
    total = np.zeros(len(ids))
    with np.errstate(divide="ignore"):
        for (t, qf), c_s in zip(use, in_sentence):
            prob = h * float(pc_all[t])
            prob += c_s * a
            if variant.local:
                prob += range_counts(post, t, lo, hi) * g
            logp = np.log(prob, out=prob)
            total += logp if qf == 1.0 else qf * logp
    if getattr(p, "importance", False):
        total += log_pds(index).take(ids)
    return total


def closed_form(variant: Variant, as_params: Callable[[Any], Any] | None = None) -> Callable[..., np.ndarray]:
    """The registered ``closed`` scorer of a language model (``as_params`` maps its parameters to
    the mixture's, as 3MMPDS's to 3MM's)."""

    def closed(index: Index, q: Query, p: Any, ids: np.ndarray) -> np.ndarray:
        return lm_scores_at(index, q, as_params(p) if as_params else p, variant, ids)

    return closed
