"""Per-sentence structure the scorers use: document bounds, lengths, ±w windows, p(t).

Little of size N is built here and kept: the per-sentence columns are the index's own memory-mapped
arrays (``sent_doc``, ``sent_len``, ``seq_indptr``), and what derives from them — a sentence's document
bounds, its title's length — is computed for the sentences asked for (``PerSentence``), from arrays
of size D at most; only the context lengths are kept, as int32, for the last :data:`CONTEXTS_KEPT` windows.
At 75M sentences each int64 column held for all N would be 600 MB.
"""

from __future__ import annotations

from functools import cached_property
from typing import TYPE_CHECKING

import numpy as np

from sentret_core.index.neighbours import PerSentence
from sentret_core.models.arrays.vectors import compiled, gather

if TYPE_CHECKING:
    from sentret_core.index.reader import Index

CHUNK = 2**22  # sentences per step of numpy's pass over all of them: its memory, not the index's
CONTEXTS_KEPT = 2  # windows whose context lengths are kept (N int32 each)


class Layout:
    """Sentences, documents and their bounds: the index's arrays, each read at its first use (a scorer that
    needs only the lengths never reads the documents), and the bounds computed at given sentences."""

    def __init__(self, index: Index) -> None:
        self.index, self.N, self.D = index, index.N, index.D

    @cached_property
    def sent_doc(self) -> np.ndarray:  # int32, the index's
        return self.index.sent_doc

    @cached_property
    def sent_len(self) -> np.ndarray:  # |s|, the index's (integers)
        return self.index.sent_len

    @cached_property
    def seq_indptr(self) -> np.ndarray:  # Σ |s'| over the sentences before s: the prefix sums of sent_len (N+1)
        return self.index.seq_indptr

    @cached_property
    def doc_first(self) -> np.ndarray:  # int32 (int64 when N needs it), the index's
        return self.index.doc_first

    @cached_property
    def doc_nsent(self) -> np.ndarray:  # likewise
        return self.index.doc_nsent

    @property
    def first(self) -> PerSentence:
        """The first sentence of each sentence's document, at the sentences asked for (the index's own)."""
        return self.index.sent_doc_first

    @property
    def end(self) -> PerSentence:
        """One past the last sentence of each sentence's document, at the sentences asked for."""
        return self.index.sent_doc_end


def layout(index: Index) -> Layout:
    return index.cache.get("models.layout", lambda: Layout(index))


def context_len(index: Index, window: int, ids: np.ndarray) -> np.ndarray:
    """|ctx_w(s)| at ``ids``: terms in the ±window sentences around each (s excluded), float64."""
    return context_lengths(index, window).take(np.asarray(ids, dtype=np.int64)).astype(np.float64)


def context_lengths(index: Index, window: int) -> np.ndarray:
    """|ctx_w(s)| of every sentence, int32, kept for the last :data:`CONTEXTS_KEPT` windows (4 bytes a sentence:
    BM25F reads them at every candidate of every query term)."""

    def build() -> np.ndarray:
        lay = layout(index)
        out = np.empty(index.N, dtype=np.int32)
        passes = compiled()  # one pass in sentence order, reading each document's bounds once (_sorted.c)
        if passes is not None and passes.contexts(lay.seq_indptr, lay.doc_first, lay.doc_nsent, window, out):
            return out
        for start in range(0, index.N, CHUNK):
            chunk = np.arange(start, min(start + CHUNK, index.N))
            out[start : start + len(chunk)] = _context_len(lay, window, chunk)
        return out

    lengths: np.ndarray = index.cache.get_lru("models.context_len", window, build, CONTEXTS_KEPT)
    return lengths


def _context_len(lay: Layout, window: int, ids: np.ndarray) -> np.ndarray:
    lo = np.maximum(ids - window, lay.first.take(ids))
    hi = np.minimum(ids + (window + 1), lay.end.take(ids))
    return lay.seq_indptr.take(hi) - lay.seq_indptr.take(lo) - lay.sent_len.take(ids)


def title_len(index: Index, ids: np.ndarray) -> np.ndarray:
    """|title(d(s))| at ``ids`` (float64)."""
    return title_lengths(index).take(layout(index).sent_doc.take(ids))


def title_lengths(index: Index) -> np.ndarray:
    """|title(d)| of every document (float64): differences of the prefix sums of the title counts, integers (a
    tenth of scipy's row sums' time)."""

    def build() -> np.ndarray:
        titles = index.title_X
        sums = np.zeros(len(titles.data) + 1, dtype=np.int64)
        np.cumsum(titles.data, out=sums[1:])
        return np.diff(sums[titles.indptr]).astype(np.float64)

    lengths: np.ndarray = index.cache.get("models.title_len", build)
    return lengths


def mean_context_len(index: Index, window: int) -> float:
    """avglen of BM25F's context field: the mean of |ctx_w(s)| over all sentences, summed as integers (exact: any
    float sum of them is too, its partial sums being integers below 2**53, so it equals numpy's mean bit for bit)."""

    def build() -> float:
        return float(context_lengths(index, window).sum(dtype=np.int64)) / index.N if index.N else 0.0

    mean: float = index.cache.get(f"models.bm25.mean_len/context/{window}", build)
    return mean


def mean_title_len(index: Index) -> float:
    """avglen of BM25F's title field: the mean over all sentences of their document's title length, summed over
    documents as integers, Σ_d |d|·|title(d)| (exact, so numpy's mean over the sentences bit for bit)."""

    def build() -> float:
        lay = layout(index)
        total = np.dot(lay.doc_nsent.astype(np.int64), title_lengths(index).astype(np.int64))
        return float(total) / index.N if index.N else 0.0

    mean: float = index.cache.get("models.bm25.mean_len/title", build)
    return mean


def doc_len(index: Index) -> np.ndarray:
    """|d| of every document."""

    def build() -> np.ndarray:  # documents tile the sentences in order: differences of the length prefix sums
        lay = layout(index)
        bounds = np.append(np.asarray(lay.doc_first, dtype=np.int64), lay.N)
        return np.diff(lay.seq_indptr[bounds]).astype(np.float64)

    return index.cache.get("models.doc_len", build)


def collection_model(index: Index) -> np.ndarray:
    """p(t) = c(t,C)/|C| over the vocabulary."""
    return index.cache.get(
        "models.p_collection", lambda: np.asarray(index.cf, dtype=np.float64) / max(index.total_terms, 1)
    )


def sentence_row(index: Index, sentence: int) -> tuple[np.ndarray, np.ndarray]:
    """The term ids of ``sentence`` and their counts c(t, s) (float64), from its row of X."""
    lo, hi = int(index.X.indptr[sentence]), int(index.X.indptr[sentence + 1])
    cols = np.asarray(index.X.indices[lo:hi], dtype=np.int64)
    return cols, np.asarray(index.X.data[lo:hi], dtype=np.float64)


def sentence_counts(index: Index, sentence: int, term_ids: np.ndarray) -> np.ndarray:
    """c(t,s) of ``sentence`` for each of ``term_ids`` (0 where absent), from its row of X."""
    return gather(*sentence_row(index, sentence), np.asarray(term_ids, dtype=np.int64))


class Targets:
    """Sorted sentence ids at which several terms are looked up (BM25F's fields:
    :meth:`~sentret_core.models.arrays.postings.FieldPostings.found_at`), with what each lookup reads of them
    (their documents and the documents' bounds) gathered once, not once a term."""

    def __init__(self, index: Index, ids: np.ndarray) -> None:
        self.ids = np.asarray(ids, dtype=np.int64)
        self._layout = layout(index)

    @cached_property
    def ids32(self) -> np.ndarray:
        return self.ids.astype(np.int32)

    @cached_property
    def documents(self) -> np.ndarray:
        return self._layout.sent_doc.take(self.ids).astype(np.int64)

    @cached_property
    def first(self) -> np.ndarray:  # the documents' first sentences (what ``layout.first`` gives, its dtype)
        return self._layout.doc_first.take(self.documents)

    @cached_property
    def end(self) -> np.ndarray:  # one past their last
        return self.first + self._layout.doc_nsent.take(self.documents)

    def rows(self, positions: np.ndarray) -> np.ndarray:
        """The ids at ``positions`` (int32, as fields' rows are)."""
        return self.ids32.take(positions)
