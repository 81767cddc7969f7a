"""A sentence's local text — its document, or the ±window sentences around it, itself included — and a
term's counts there, c(t, l(s)), from the term's sentence postings alone.

A local text is a range of sentence ids ``[lo, hi)`` (documents are contiguous runs of sentences, and a
window never leaves its document: docs/spec.md, notation), so c(t, l(s)) is the sum of the term's postings
inside that range: no corpus-wide context or document matrix is ever built, and the memory a query needs
grows with its terms' postings, not with the index. Counts are integers, so the sums are exact in float64
and equal the matrix products ``(W + I)·X`` and ``Sᵀ·S·X`` entry for entry.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

import numpy as np

from sentret_core.index.neighbours import expand_ranges, neighbourhood
from sentret_core.models.arrays.layout import layout
from sentret_core.models.arrays.ranges import Span
from sentret_core.models.arrays.vectors import between, find_sorted, run_starts

if TYPE_CHECKING:
    from sentret_core.index.reader import Index
    from sentret_core.models.arrays.postings import Postings

DOCUMENT = "document"


def local_ranges(index: Index, context: str, window: int, ids: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """``[lo, hi)`` of every sentence's local text: its document (``context="document"``) or its ±window."""
    lay = layout(index)
    ids = np.asarray(ids, dtype=np.int64)
    first, end = lay.first.take(ids).astype(np.int64), lay.end.take(ids).astype(np.int64)
    if context == DOCUMENT:
        return first, end
    return np.maximum(ids - window, first), np.minimum(ids + (window + 1), end)


def range_counts(post: Postings, term: int, lo: np.ndarray, hi: np.ndarray) -> np.ndarray:
    """Σ c(t,s) over s in ``[lo[i], hi[i])`` for every i (float64, exact): the postings inside each range,
    found by two binary searches and summed, so the cost grows with the ranges, not with the term's postings.
    A run of equal ranges (the sentences of one document, in order) is searched once."""
    rows, vals = post.raw(term)
    if len(rows) == 0 or len(lo) == 0:
        return np.zeros(len(lo))
    changes = np.empty(len(lo), dtype=bool)
    changes[0] = True
    np.logical_or(lo[1:] != lo[:-1], hi[1:] != hi[:-1], out=changes[1:])
    firsts = np.flatnonzero(changes)
    start, stop = find_sorted(rows, lo.take(firsts)), find_sorted(rows, hi.take(firsts))
    sums = np.zeros(len(firsts))
    some = stop > start
    if some.any():
        start, stop = start[some], stop[some]
        inside = vals.take(expand_ranges(start, stop)).astype(np.float64)
        sums[some] = np.add.reduceat(inside, np.concatenate([[0], np.cumsum(stop - start)[:-1]]))
    return np.repeat(sums, np.diff(np.append(firsts, len(lo))))


def local_counts(index: Index, post: Postings, term: int, context: str, window: int, ids: np.ndarray) -> np.ndarray:
    """c(t, l(s)) at each of ``ids``."""
    return range_counts(post, term, *local_ranges(index, context, window, ids))


def document_counts(index: Index, rows: np.ndarray, vals: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """c(t,d) from a term's sentence postings ``rows`` (sorted), ``vals``: its documents (sorted) and counts."""
    docs = layout(index).sent_doc.take(rows)
    starts = run_starts(docs)  # rows are sorted, so their documents are too
    if len(starts) == 0:
        return docs, np.zeros(0)
    return docs.take(starts), np.add.reduceat(np.asarray(vals, dtype=np.float64), starts)


def documents_of(index: Index, rows: np.ndarray) -> np.ndarray:
    """The distinct documents (sorted) of the sentences ``rows`` (sorted)."""
    docs = layout(index).sent_doc.take(rows)
    return docs.take(run_starts(docs))


def document_sentences(index: Index, docs: np.ndarray) -> np.ndarray:
    """Every sentence of ``docs`` (sorted and distinct), in order."""
    lay = layout(index)
    first = lay.doc_first.take(docs)
    return expand_ranges(first, first + lay.doc_nsent.take(docs)).astype(np.int32)


def window_counts(index: Index, post: Postings, term: int, window: int,
                  span: Span | None = None) -> tuple[np.ndarray, np.ndarray]:
    """c(t, ctx_w(s) ∪ s) wherever it is not 0: the ±window neighbourhoods of the term's sentences, and the counts;
    with ``span`` (whole documents), at the sentences of that range only."""
    lay = layout(index)
    held = post.raw(term)[0]
    if span is not None:
        held = between(held, held, *span)[0]
    rows = neighbourhood(lay.first, lay.end, held, window)
    return rows.astype(np.int32), local_counts(index, post, term, "window", window, rows)
