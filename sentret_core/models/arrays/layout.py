"""Per-sentence structure the scorers use: document bounds, lengths, ±w windows, p(t).

Built once per index from its arrays and kept in ``index.cache`` (plain arrays, no memory maps
on the query path).
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import TYPE_CHECKING

import numpy as np

from sentret_core.models.arrays.vectors import gather

if TYPE_CHECKING:
    from sentret_core.index.reader import Index


@dataclass(frozen=True)
class Layout:
    """Sentences, documents and their bounds as plain arrays."""

    N: int
    D: int
    sent_doc: np.ndarray  # int32
    sent_len: np.ndarray  # float64 |s|
    first: np.ndarray  # int32: first sentence of the sentence's document (Index.sent_doc_first)
    end: np.ndarray  # int32: one past its document's last sentence (Index.sent_doc_end)
    doc_first: np.ndarray  # int32
    doc_nsent: np.ndarray  # int32


def layout(index: Index) -> Layout:
    def build() -> Layout:
        return Layout(
            index.N,
            index.D,
            np.asarray(index.sent_doc, dtype=np.int32),
            np.asarray(index.sent_len, dtype=np.float64),
            np.asarray(index.sent_doc_first, dtype=np.int32),
            np.asarray(index.sent_doc_end, dtype=np.int32),
            np.asarray(index.doc_first, dtype=np.int32),
            np.asarray(index.doc_nsent, dtype=np.int32),
        )

    return index.cache.get("models.layout", build)


def context_len(index: Index, window: int) -> np.ndarray:
    """|ctx_w(s)|: terms in the ±window sentences around s (s excluded)."""

    def build() -> np.ndarray:  # prefix sums over the ±window range clipped to the document: no N×N matrix
        lay = layout(index)
        src = np.arange(lay.N, dtype=np.int64)
        lo = np.maximum(src - window, lay.first)
        hi = np.minimum(src + (window + 1), lay.end)
        before = np.concatenate([[0], np.cumsum(lay.sent_len, dtype=np.int64)])
        return (before[hi] - before[lo] - lay.sent_len).astype(np.float64)

    return index.cache.get(f"models.context_len/{window}", build)


def doc_len(index: Index) -> np.ndarray:
    """|d| of every document."""

    def build() -> np.ndarray:
        lay = layout(index)
        return np.bincount(lay.sent_doc, weights=lay.sent_len, minlength=lay.D).astype(np.float64)

    return index.cache.get("models.doc_len", build)


def title_len(index: Index) -> np.ndarray:
    """|title(d(s))| of every sentence."""

    def build() -> np.ndarray:
        per_doc = np.asarray(index.title_X.sum(axis=1)).ravel().astype(np.float64)
        return per_doc[layout(index).sent_doc] if index.N else np.zeros(0)

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
