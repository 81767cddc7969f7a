"""S_q, Ŝ_q and the rank at which a sentence enters them (Blanco & Zaragoza, SIGIR 2010, §3, Fig. 1-2).

One copy of "the smallest k that puts s in S_q / Ŝ_q", shared by the teaching view, benchmark
coverage and judged evaluation.
"""

from __future__ import annotations

import math
from collections.abc import Iterable, Sequence

import numpy as np

from sentret_core.defaults import DEFAULT_WINDOW
from sentret_core.index.neighbours import expand_ranges
from sentret_core.index.reader import Index


def ranking_of(ids: Sequence[int] | np.ndarray, scores: Sequence[float] | np.ndarray) -> np.ndarray:
    """Sentence ids by descending score, ties broken by ascending id (the order ``top_k`` uses)."""
    ids = np.asarray(ids, dtype=np.int64)
    return ids[np.lexsort((ids, -np.asarray(scores, dtype=np.float64)))]


def entry_ranks(
    index: Index,
    ranking: Sequence[int] | np.ndarray,
    sentences: Sequence[int] | np.ndarray,
    window: int = DEFAULT_WINDOW,
) -> tuple[np.ndarray, np.ndarray]:
    """For each of ``sentences``: the smallest k that puts it in S_q, and the smallest that puts it in Ŝ_q.

    A sentence is in S_q(k) when its rank is at most k; it is in Ŝ_q(k) when some sentence
    within ±``window`` of it in its own document (itself included) has rank at most k. A
    sentence the ranking never reaches gets ``inf``.
    """
    ranking = np.asarray(ranking, dtype=np.int64)
    sentences = np.asarray(sentences, dtype=np.int64)
    rank = np.full(index.N, np.inf)
    rank[ranking[::-1]] = np.arange(len(ranking), 0, -1, dtype=np.float64)  # first occurrence wins
    if len(sentences) == 0:
        return np.zeros(0), np.zeros(0)
    lo = np.maximum(sentences - max(window, 0), index.sent_doc_first.take(sentences))
    hi = np.minimum(sentences + max(window, 0) + 1, index.sent_doc_end.take(sentences))
    spans = expand_ranges(lo, hi)  # every sentence's neighbourhood, one run after another
    starts = np.concatenate(([0], np.cumsum(hi - lo)[:-1]))
    return rank[sentences], np.minimum.reduceat(rank[spans], starts)


def first_hits(
    index: Index,
    ranking: Sequence[int] | np.ndarray,
    relevant: Iterable[int],
    window: int = DEFAULT_WINDOW,
) -> tuple[float | None, float | None]:
    """The k at which the first of ``relevant`` enters S_q, and Ŝ_q (None: never).

    With the sentences judged relevant for a (query, entity) topic, one pair per topic is what
    the coverage curve of Blanco & Zaragoza, SIGIR 2010, Fig. 2, needs.
    """
    wanted = np.unique(np.fromiter((int(s) for s in relevant), dtype=np.int64))
    if len(wanted) == 0:
        return None, None
    plain, with_context = entry_ranks(index, ranking, wanted, window)
    first = float(plain.min()), float(with_context.min())
    return tuple(None if math.isinf(v) else v for v in first)  # type: ignore[return-value]


def in_sorted(values: np.ndarray, sorted_array: np.ndarray) -> np.ndarray:
    """``np.isin(values, sorted_array)`` for an ascending ``sorted_array``, without its per-call sort."""
    if len(sorted_array) == 0:
        return np.zeros(len(values), dtype=bool)
    where = np.minimum(np.searchsorted(sorted_array, values), len(sorted_array) - 1)
    return np.asarray(sorted_array[where] == values)


