"""Per-sentence structure the scorers use: document bounds, lengths, ±w windows, p(t).

Built once per index from its arrays and kept in ``index.cache`` (plain arrays, no memory maps
on the query path).
"""

from __future__ import annotations

from functools import cached_property
from typing import TYPE_CHECKING

import numpy as np

from sentret_core.models.arrays.vectors import gather

if TYPE_CHECKING:
    from sentret_core.index.reader import Index


class Layout:
    """Sentences, documents and their bounds as plain arrays, each built at its first use (a scorer that
    needs only the lengths never builds the document bounds)."""

    def __init__(self, index: Index) -> None:
        self.index, self.N, self.D = index, index.N, index.D

    @cached_property
    def sent_doc(self) -> np.ndarray:  # int32
        return np.asarray(self.index.sent_doc, dtype=np.int32)

    @cached_property
    def sent_len(self) -> np.ndarray:  # float64 |s|
        return np.asarray(self.index.sent_len, dtype=np.float64)

    @cached_property
    def first(self) -> np.ndarray:  # int32: first sentence of the sentence's document (Index.sent_doc_first)
        return np.asarray(self.index.sent_doc_first, dtype=np.int32)

    @cached_property
    def end(self) -> np.ndarray:  # int32: one past its document's last sentence (Index.sent_doc_end)
        return np.asarray(self.index.sent_doc_end, dtype=np.int32)

    @cached_property
    def doc_first(self) -> np.ndarray:  # int32
        return np.asarray(self.index.doc_first, dtype=np.int32)

    @cached_property
    def doc_nsent(self) -> np.ndarray:  # int32
        return np.asarray(self.index.doc_nsent, dtype=np.int32)


def layout(index: Index) -> Layout:
    return index.cache.get("models.layout", lambda: Layout(index))


CHUNK = 2**20  # sentences per step of a whole-index table: its temporaries stay small and are reused


def context_len(index: Index, window: int) -> np.ndarray:
    """|ctx_w(s)|: terms in the ±window sentences around s (s excluded)."""

    def build() -> np.ndarray:  # prefix sums over the ±window range clipped to the document: no N×N matrix
        lay = layout(index)
        out = np.empty(lay.N)
        # a chunk at a time: the only whole-index array is the result (fresh memory is slow to touch);
        # the sums of integer lengths are exact in float64, so local prefix sums give the same numbers
        for a in range(0, lay.N, CHUNK):
            b = min(a + CHUNK, lay.N)
            start = max(a - window, 0)
            before = np.zeros(min(b + window, lay.N) - start + 1)
            np.cumsum(lay.sent_len[start : start + len(before) - 1], out=before[1:])
            ids = np.arange(a, b)
            hi = np.minimum(ids + (window + 1), lay.end[a:b]) - start
            lo = np.maximum(ids - window, lay.first[a:b]) - start
            out[a:b] = before.take(hi) - before.take(lo) - lay.sent_len[a:b]
        return out

    return index.cache.get(f"models.context_len/{window}", build)


def doc_len(index: Index) -> np.ndarray:
    """|d| of every document."""

    def build() -> np.ndarray:  # documents are runs of sentences: a sum per run (exact: integer lengths)
        lay = layout(index)
        if lay.N == 0:
            return np.zeros(lay.D)
        sums = np.add.reduceat(lay.sent_len, np.minimum(lay.doc_first, lay.N - 1))
        sums[lay.doc_nsent == 0] = 0.0
        return sums

    return index.cache.get("models.doc_len", build)


def title_len(index: Index) -> np.ndarray:
    """|title(d(s))| of every sentence."""

    def build() -> np.ndarray:
        per_doc = np.asarray(index.title_X.sum(axis=1)).ravel().astype(np.float64)
        return np.repeat(per_doc, layout(index).doc_nsent)  # documents are runs of sentences

    return index.cache.get("models.title_len", build)


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
