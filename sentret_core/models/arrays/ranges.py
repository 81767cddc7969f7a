"""An exact top k computed over ranges of whole documents, one range at a time, so that a query whose terms
reach most sentences never holds its per-candidate arrays for all of them at once.

Besides the collection's statistics, a sentence's score reads only its own document (BM25F's context and
title, an LM's window or document model), so a range of whole documents is scored exactly as the whole index
would score it; the range's own k best (score descending, ties by id) hold every one of the overall k best it
has. Memory is bounded by one range, not by the index: at 75M sentences a term in most of them had BM25F's
fields and weights, or an LM's coefficients over its documents' sentences, built for 70M rows at once.

How the exact top k fits together, with a worked example: docs/topk.md.
"""

from __future__ import annotations

import itertools
from collections.abc import Callable
from typing import TYPE_CHECKING, Protocol

import numpy as np

from sentret_core.models.arrays.layout import layout
from sentret_core.models.arrays.vectors import EMPTY_IDS, EMPTY_SCORES

if TYPE_CHECKING:
    from sentret_core.index.reader import Index

Span = tuple[int, int]  # sentences [lo, hi) starting and ending at document bounds
RANGE = 2**21  # sentences per range (a document longer than that is one range): ~200 MB of BM25F temporaries
RANGE_FROM = 2**22  # postings in a query's longest list from which its exhaustive top k goes range by range


def document_ranges(index: Index) -> list[Span]:
    """[0, N) cut into ranges of about :data:`RANGE` sentences, each cut at the first sentence of a document."""
    lay = layout(index)
    cuts = [0]
    for start in range(RANGE, index.N, RANGE):
        first = int(lay.first.take(np.array([start]))[0])  # the first sentence of the document holding it
        if first > cuts[-1]:
            cuts.append(first)
    cuts.append(index.N)
    return [(lo, hi) for lo, hi in itertools.pairwise(cuts) if hi > lo]


def ranged_top_k(
    k: int, spans: list[Span], score_range: Callable[[Span], tuple[np.ndarray, np.ndarray]]
) -> tuple[np.ndarray, np.ndarray, bool]:
    """The candidates of every span's own k best (ids ascending, their exact scores) and whether any span had
    a candidate; ``score_range(span)`` scores every candidate of a span (ids ascending)."""
    ids, scores, any_candidate = [EMPTY_IDS], [EMPTY_SCORES], False
    for span in spans:
        found, values = score_range(span)
        any_candidate = any_candidate or len(found) > 0
        keep = best_k(values, k)
        ids.append(found[keep])
        scores.append(values[keep])
    return np.concatenate(ids), np.concatenate(scores), any_candidate


class ListSizes(Protocol):
    def size(self, term: int) -> int: ...  # a term's number of postings (Postings has it)


def by_range(
    index: Index, post: ListSizes, terms: np.ndarray, k: int,
    score_range: Callable[[Span], tuple[np.ndarray, np.ndarray]],
) -> tuple[np.ndarray, np.ndarray, bool] | None:
    """:func:`ranged_top_k` over :func:`document_ranges` for a query of ``terms`` one of which is in more than
    :data:`RANGE_FROM` sentences (``post`` gives their sizes); None for any other (or ``k`` = 0): score every
    candidate at once."""
    if k <= 0 or max((post.size(int(t)) for t in terms), default=0) <= RANGE_FROM:
        return None
    return ranged_top_k(k, document_ranges(index), score_range)


def best_k(scores: np.ndarray, k: int) -> np.ndarray:
    """A mask of the ``k`` best of ``scores`` (candidates in id order): score descending, ties by position."""
    if len(scores) <= k or k <= 0 or bool(np.isnan(scores).any()):  # a NaN: keep all, the final ranking decides
        return np.full(len(scores), k > 0)
    kth = np.partition(scores, len(scores) - k)[len(scores) - k]
    keep = scores > kth
    ties = np.flatnonzero(scores == kth)[: k - int(np.count_nonzero(keep))]
    keep[ties] = True
    return keep
