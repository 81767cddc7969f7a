"""TF-ISF's exact top k by MaxScore (:func:`~sentret_core.models.arrays.maxscore.additive_top_k`).

R(s|q) = Σ_{t∈q∩s} log(c(t,q)+1)·log(c(t,s)+1)·isf(t) adds a non-negative part per query term (isf > 0:
sf ≤ N), at most log(c(t,q)+1)·log(max_s c(t,s)+1)·isf(t), the largest count read once from the term's
postings. The partial sums are :func:`~sentret_core.models.tfisf.sums.tfisf_scores`' own, so the top k
holds its scores bit for bit. tfisf.v1 and idfdoc.v1 register it; tfmix's counts mix in the neighbours.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

import numpy as np

from sentret_core.models.arrays import maxima, maxscore
from sentret_core.models.arrays.postings import postings
from sentret_core.models.arrays.vectors import EMPTY_IDS, EMPTY_SCORES
from sentret_core.models.core.spec import TopK
from sentret_core.models.tfisf.formulas import isf, term_score
from sentret_core.models.tfisf.sums import tfisf_scores

if TYPE_CHECKING:
    from sentret_core.index.reader import Index
    from sentret_core.models.core.query import Query


def tfisf_top_k(doc_level: bool) -> TopK:
    """The registered ``top_k`` of TF-ISF (``doc_level``: idfdoc's df and D)."""

    def top_k(index: Index, q: Query, p: Any, k: int) -> tuple[np.ndarray, np.ndarray, bool] | None:
        post = postings(index)
        if k == 0:
            return EMPTY_IDS, EMPTY_SCORES, any(post.size(int(t)) for t in q.ids)
        weights = isf(index, doc_level)

        def bounds() -> np.ndarray:  # read only where pruning may help
            return np.array([term_score(qf, weights[t], largest_count(index, int(t))) for t, qf in zip(q.ids, q.qtf)])

        def partial(positions: np.ndarray, cand: np.ndarray | None) -> tuple[np.ndarray, np.ndarray]:
            return tfisf_scores(index, q, doc_level=doc_level, positions=positions.tolist(), cand=cand)

        return maxscore.additive_top_k(k, bounds, post, q.ids, partial)

    return top_k


def largest_count(index: Index, term: int) -> float:
    """max_s c(t,s) over the term's postings (0 for a term without any): stored with the impact lists for a
    frequent term (:mod:`~sentret_core.models.arrays.maxima`), else read from its counts."""

    def build() -> float:
        kept = maxima.stored(index, term)
        return float(kept[0].max(initial=0)) if kept is not None else float(postings(index).raw(term)[1].max(initial=0))

    return index.cache.get_lru("models.tfisf.largest_count", term, build, maxscore.TERMS_KEPT)
