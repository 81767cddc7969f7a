"""A sentence's local text — its document, or the ±window sentences around it, itself included — and a
term's counts there, c(t, l(s)), from the term's sentence postings alone.

A local text is a range of sentence ids ``[lo, hi)`` (documents are contiguous runs of sentences, and a
window never leaves its document: docs/spec.md, notation), so c(t, l(s)) is the sum of the term's postings
inside that range: no corpus-wide context or document matrix is ever built, and the memory a query needs
grows with its terms' postings, not with the index. Counts are integers, so the sums are exact in float64
and equal the matrix products ``(W + I)·X`` and ``Sᵀ·S·X`` entry for entry.
"""

from __future__ import annotations

from dataclasses import dataclass
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


@dataclass(frozen=True)
class Runs:
    """The local texts of some sentences as runs: consecutive sentences with the same ``[lo, hi)`` (a document's,
    with ``context="document"``) share one entry, so a term's postings are searched once a run. ``documents``: the
    run's document, for a document context."""

    lo: np.ndarray  # int64, one per run
    hi: np.ndarray
    sizes: np.ndarray  # sentences per run
    documents: np.ndarray | None = None

    def spread(self, values: np.ndarray) -> np.ndarray:
        """One value per run -> one per sentence."""
        return np.repeat(values, self.sizes)


def local_runs(index: Index, context: str, window: int, ids: np.ndarray) -> Runs:
    """:func:`local_ranges` as :class:`Runs`; for a document context, the documents' bounds are read once a run,
    not once a sentence."""
    if context != DOCUMENT:
        return runs_of(*local_ranges(index, context, window, ids))
    lay = layout(index)
    docs = lay.sent_doc.take(np.asarray(ids, dtype=np.int64))
    firsts = run_starts(docs)
    documents = docs.take(firsts)
    lo = lay.doc_first.take(documents).astype(np.int64)
    return Runs(lo, lo + lay.doc_nsent.take(documents), np.diff(np.append(firsts, len(docs))), documents)


def runs_of(lo: np.ndarray, hi: np.ndarray) -> Runs:
    """The runs of equal ranges ``[lo[i], hi[i])``."""
    changes = np.empty(len(lo), dtype=bool)
    changes[:1] = True
    np.logical_or(lo[1:] != lo[:-1], hi[1:] != hi[:-1], out=changes[1:])
    firsts = np.flatnonzero(changes)
    return Runs(lo.take(firsts), hi.take(firsts), np.diff(np.append(firsts, len(lo))))


def run_counts(post: Postings, term: int, runs: Runs) -> np.ndarray:
    """Σ c(t,s) over each run's range, spread over its sentences (float64, exact): the postings inside each range,
    found by two binary searches and summed, so the cost grows with the ranges, not with the term's postings."""
    rows, vals = post.raw(term)
    sums = np.zeros(len(runs.lo))
    if len(rows) and len(sums):
        start, stop = find_sorted(rows, runs.lo), find_sorted(rows, runs.hi)
        some = stop > start
        if some.any():
            start, stop = start[some], stop[some]
            inside = vals.take(expand_ranges(start, stop)).astype(np.float64)
            sums[some] = np.add.reduceat(inside, np.concatenate([[0], np.cumsum(stop - start)[:-1]]))
    return runs.spread(sums)


def local_counts(index: Index, post: Postings, term: int, context: str, window: int, ids: np.ndarray) -> np.ndarray:
    """c(t, l(s)) at each of ``ids``."""
    return run_counts(post, term, local_runs(index, context, window, ids))


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
