"""The sum TF-ISF adds up, written once for its exhaustive scorers and its MaxScore path
(:mod:`~sentret_core.models.tfisf.pruning`): every caller adds the same numbers in the same order."""

from __future__ import annotations

from collections.abc import Iterable
from typing import TYPE_CHECKING

import numpy as np

from sentret_core.models.arrays.local import local_counts
from sentret_core.models.arrays.postings import postings
from sentret_core.models.arrays.vectors import EMPTY_IDS, EMPTY_SCORES, union_sum
from sentret_core.models.tfisf.formulas import isf, mixed_count, term_score

if TYPE_CHECKING:
    from sentret_core.index.reader import Index
    from sentret_core.models.core.query import Query


def tfisf_scores(
    index: Index, q: Query, alpha: float | None = None, doc_level: bool = False,
    positions: Iterable[int] | None = None, cand: np.ndarray | None = None,
) -> tuple[np.ndarray, np.ndarray]:
    """R(s|q) over the sentences containing a query term (tfmix when ``alpha`` is given); summed over the query
    terms at ``positions`` only, and over the sentences ``cand`` (sorted) only, when given (MaxScore's partial
    sums, :mod:`~sentret_core.models.tfisf.pruning`: the same numbers added in the same order)."""
    post = postings(index)
    weights = isf(index, doc_level)
    rows, vals = [], []
    for i in range(len(q.ids)) if positions is None else positions:
        t, qf = q.ids[i], q.qtf[i]
        r, c = post(t) if cand is None else post.lookup(int(t), cand)
        if len(r) == 0:
            continue
        if alpha is not None:  # c(t, prev+s+next)
            c = mixed_count(alpha, c, local_counts(index, post, t, "window", 1, r))
        rows.append(r)
        vals.append(term_score(qf, weights[t], c))
    if not rows:
        return EMPTY_IDS, EMPTY_SCORES
    return union_sum(rows, vals)
