"""TF-ISF's exact top k by MaxScore (:func:`~sentret_core.models.arrays.maxscore.additive_top_k`).

R(s|q) = Σ_{t∈q∩s} log(c(t,q)+1)·log(c(t,s)+1)·isf(t) adds a non-negative part per query term (isf > 0:
sf ≤ N), at most log(c(t,q)+1)·log(max_s c(t,s)+1)·isf(t), the largest count read once from the term's
postings (or stored with the impact lists, :mod:`~sentret_core.models.arrays.maxima`). The partial sums are
:func:`~sentret_core.models.tfisf.sums.tfisf_scores`' own, so the top k holds its scores bit for bit. tfisf.v1 and
idfdoc.v1 register it; tfmix's counts mix in the neighbours. Where the index has impact lists, a query with one
frequent term reads the first entries of its list instead (:func:`listed_top_k`).

How the exact top k fits together, with a worked example: docs/topk.md.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

import numpy as np

from sentret_core.models.arrays import impacts, maxima, maxscore
from sentret_core.models.arrays.postings import postings
from sentret_core.models.arrays.vectors import EMPTY_IDS, EMPTY_SCORES, union
from sentret_core.models.core.spec import TopK
from sentret_core.models.tfisf.formulas import isf, term_score
from sentret_core.models.tfisf.sums import tfisf_scores

if TYPE_CHECKING:
    from sentret_core.index.reader import Index
    from sentret_core.models.core.query import Query

LISTS = "tfisf.v1"  # the model whose impact lists TF-ISF and idfdoc read: keyed by c(t,s), they serve both


def tfisf_top_k(doc_level: bool) -> TopK:
    """The registered ``top_k`` of TF-ISF (``doc_level``: idfdoc's df and D): from the impact lists where the
    query's one frequent term goes with rare ones (:func:`listed_top_k`), else by MaxScore, else from the lists."""

    def top_k(index: Index, q: Query, p: Any, k: int) -> tuple[np.ndarray, np.ndarray, bool] | None:
        post = postings(index)
        if k == 0:
            return EMPTY_IDS, EMPTY_SCORES, any(post.size(int(t)) for t in q.ids)
        weights = isf(index, doc_level)
        lists = impacts.impact_lists(index)

        def bounds() -> np.ndarray:  # read only where pruning may help
            return np.array([term_score(qf, weights[t], largest_count(index, int(t))) for t, qf in zip(q.ids, q.qtf)])

        def partial(positions: np.ndarray, cand: np.ndarray | None) -> tuple[np.ndarray, np.ndarray]:
            return tfisf_scores(index, q, doc_level=doc_level, positions=positions.tolist(), cand=cand)

        def listed(first: bool) -> tuple[np.ndarray, np.ndarray, bool] | None:
            return listed_top_k(index, lists, q, doc_level, k, first) if lists is not None else None

        return impacts.around_maxscore(listed, lambda: maxscore.additive_top_k(k, bounds, post, q.ids, partial))

    return top_k


def listed_top_k(index: Index, found: impacts.ImpactLists, q: Query, doc_level: bool, k: int,
                 first: bool) -> tuple[np.ndarray, np.ndarray, bool] | None:
    """The top k from the lists of ``tfisf.v1`` (:data:`LISTS`) when the query has one listed term f: the
    sentences its other terms reach and the first entries of f's list, keyed by c(f,s). A sentence past them holds
    f alone of the query's terms, so it scores log(c(f,q)+1)·log(c(f,s)+1)·w_f, at most the same at the last entry
    read; most sentences hold f once, so ties are the rule, and the list's order (count descending, ties by id)
    says that a sentence past it tied with the entries read has a larger id: a k-th best equal to that bound settles
    the top k (each entry read scores at least its part: the other terms' parts are not negative). None for several
    listed terms (a sentence holding two of them is found only by reading their postings: MaxScore's case), and
    unless :func:`~sentret_core.models.arrays.impacts.goes_first` is ``first``."""
    lists = found.of(LISTS, {})
    rows = [found.row(int(t)) for t in q.ids]
    listed = [i for i, row in enumerate(rows) if row is not None]
    if lists is None or len(listed) != 1:
        return None
    post, f = postings(index), listed[0]
    unlisted = [int(t) for t, row in zip(q.ids, rows) if row is None]
    if impacts.goes_first([post.size(t) for t in unlisted], lists.shape[2]) != first:
        return None
    term, entries = int(q.ids[f]), lists[rows[f], 0]
    weight, qf = isf(index, doc_level)[term], q.qtf[f]

    def part(depth: int, less: int = 0) -> float:  # f's part at the count of the last entry read (minus ``less``)
        count = post.lookup(term, entries[depth - 1 : depth].astype(np.int64))[1] - less
        return float(term_score(qf, weight, count)[0])

    def scores_at(cand: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
        return tfisf_scores(index, q, doc_level=doc_level, cand=cand)

    base = union([np.asarray(post.raw(t)[0], dtype=np.int32) for t in unlisted])
    # ties settle where one count less gives a lower part (log1p rounds no two counts together in practice)
    return impacts.listed_top_k(k, base, [entries], scores_at, part, lambda depth: part(depth, 1) < part(depth))


def largest_count(index: Index, term: int) -> float:
    """max_s c(t,s) over the term's postings (0 for a term without any): stored with the impact lists for a
    frequent term (:mod:`~sentret_core.models.arrays.maxima`), else read from its counts."""

    def build() -> float:
        kept = maxima.stored(index, term)
        counts = kept[0] if kept is not None else postings(index).raw(term)[1]
        return float(counts.max(initial=0))

    return index.cache.get_lru("models.tfisf.largest_count", term, build, maxscore.TERMS_KEPT)
