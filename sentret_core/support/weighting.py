"""Weighted entity statistics: each sentence of S_q counts by how strongly it matches the query.

Blanco & Zaragoza, SIGIR 2010, §3.1 (eqs. 9-13), count every sentence of S_q once, so at k = 100
the hundredth sentence, which may share one word with the query, weighs as much as the first. A *weighting* gives the
sentences of S_q = (s_1, …, s_k), in the ranker's order with scores F_1 ≥ … ≥ F_k, weights
w_i ∈ [0, 1]:

* ``none``   w_i = 1: Blanco & Zaragoza's statistics, exactly (:func:`~sentret_core.support.entity_stats.entity_stats`);
* ``rank``   w_i = 1 / log2(i + 1): the rank discount of DCG (Järvelin & Kekäläinen, TOIS 2002);
* ``score``  w_i = (F_i − F_k) / (F_1 − F_k), the first-stage score min-max normalised over S_q
  (any scorer's scale, LMs' negative log-likelihoods too); w_i = 1 when F_1 = F_k.

With W_q = Σ_i w_i and W_qe = Σ_{i : G[s_i,e] = 1} w_i (the weighted |S_q| and |S_qe|):

* frequency   E_FREQ^w(q,e) = W_qe
* rarity      E_RARITY(e)   = log(|S| / Σ_s G[s,e])                  (unchanged: query-independent)
* combination E_COMB^w(q,e) = W_qe · E_RARITY(e)
* KLD         E_KLD^w(q,e)  = P_w(e|θ_q) · log(P_w(e|θ_q) / P(e|θ_S)),  P_w(e|θ_q) = W_qe / W_q,
              with 0 · log 0 = 0 (an entity only in sentences of weight 0 scores 0).

Weights count relative to the largest (w_i / max_j w_j; both weightings above already have w_1 = 1),
so weights that are all equal give Blanco & Zaragoza's statistics bit for bit, and with them its ranking.
``|S_qe|`` as displayed stays the count; eq. 7's ``sum-*``/``avg-*`` aggregate the weighted scores.
Measured in ``benchmarks/entity_weighting.py`` (squad-support and the demo's example queries).
"""

from __future__ import annotations

import numpy as np

from sentret_core.checks import check_str
from sentret_core.errors import SentretError
from sentret_core.index.reader import Index
from sentret_core.support.entity_stats import EntityStats, entity_sf, entity_stats, rarity

NONE, RANK, SCORE = "none", "rank", "score"
ENTITY_WEIGHTINGS = (NONE, RANK, SCORE)


def check_weighting(name: object) -> str:
    """``name`` if a known weighting; else ArgumentTypeError (not a string) or SentretError listing the choices."""
    text = check_str("entity_weighting", name)
    if text not in ENTITY_WEIGHTINGS:
        raise SentretError(f"unknown entity weighting {text!r}; choose one of {', '.join(ENTITY_WEIGHTINGS)}")
    return text


def sentence_weights(scores: np.ndarray, weighting: str) -> np.ndarray:
    """w_i for the sentences of S_q, given their first-stage scores in rank order (best first)."""
    check_weighting(weighting)
    scores = np.asarray(scores, dtype=np.float64)
    if weighting == RANK:
        return 1.0 / np.log2(np.arange(2, len(scores) + 2, dtype=np.float64))
    finite = scores[np.isfinite(scores)]
    if weighting == SCORE and len(finite):
        best, worst = float(finite.max()), float(finite.min())
        if best > worst:  # an infinite score (none registered gives one) weighs as the best or the worst
            return (np.clip(scores, worst, best) - worst) / (best - worst)
    return np.ones(len(scores), dtype=np.float64)


def weighted_entity_stats(index: Index, top: np.ndarray, weights: np.ndarray | None) -> EntityStats:
    """The entity statistics of S_q (``top``, in rank order) with sentence weights (None: unweighted).

    ``weights=None``, or weights all equal, give Blanco & Zaragoza's numbers bit for bit. ``n_top`` stays |S_q|.
    """
    top = np.asarray(top, dtype=np.int64)
    if weights is None:
        return entity_stats(index, top)
    weights = np.asarray(weights, dtype=np.float64)
    if weights.shape != top.shape:
        raise ValueError(f"{len(weights)} weights for {len(top)} sentences")
    if len(weights) and weights.max() > 0:
        weights = weights / weights.max()  # relative to the best: equal weights are exactly ones
    rows = index.G[top]
    per_pair = np.repeat(weights, np.diff(rows.indptr))  # one weight per (sentence, entity) pair
    ids, owner = np.unique(np.asarray(rows.indices), return_inverse=True)
    frequency = np.bincount(owner, weights=per_pair, minlength=len(ids))
    total = float(weights.sum())
    p_query = frequency / total if total > 0 else np.zeros(len(ids))
    p_corpus = entity_sf(index)[ids] / index.N
    ratio = np.divide(p_query, p_corpus, out=np.ones(len(ids)), where=p_query > 0)
    kld = p_query * np.log(ratio)
    rare = rarity(index, ids)
    return EntityStats(ids.astype(np.int64), frequency, rare, frequency * rare, kld, len(top))
