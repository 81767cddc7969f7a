"""Posting lists of every term as plain arrays: c(t,s), c(t,ctx_w(s)), c(t,d) and BM25F's fields.

One slice per query term gives a scorer its candidates and counts (SPEC "Sentence scorers").
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

import numpy as np
import scipy.sparse as sp

from sentret_core.models.cache import cached
from sentret_core.models.layout import sentence_doc_matrix, window_matrix

if TYPE_CHECKING:
    from sentret_core.index.reader import Index


@dataclass(frozen=True)
class Postings:
    """A CSC matrix (rows × terms) as plain arrays: ``rows[indptr[t]:indptr[t+1]]`` are sorted."""

    indptr: np.ndarray  # int64
    rows: np.ndarray  # int32
    vals: np.ndarray  # float64

    @classmethod
    def of(cls, matrix: Any) -> Postings:
        csc = sp.csc_matrix(matrix)
        csc.sum_duplicates()
        csc.sort_indices()
        return cls(
            np.asarray(csc.indptr, dtype=np.int64),
            np.asarray(csc.indices, dtype=np.int32),
            np.asarray(csc.data, dtype=np.float64),
        )

    def __call__(self, term: int) -> tuple[np.ndarray, np.ndarray]:
        lo, hi = self.indptr[term], self.indptr[term + 1]
        return self.rows[lo:hi], self.vals[lo:hi]


def postings(index: Index) -> Postings:
    """c(t,s): the sentence postings of every term."""
    return cached(index, "models.postings", lambda: Postings.of(index.XT))


def context_postings(index: Index, window: int, include_self: bool = False) -> Postings:
    """c(t, ctx_w(s)): counts of t in the ±window sentences around s in its document.

    s itself is excluded (BM25F's context field) unless ``include_self`` (the window model
    p(t|c_s) of the LMs and tfmix's prev+s+next).
    """

    def build() -> Postings:
        W = window_matrix(index, window)
        if include_self:
            W = W + sp.identity(index.N, format="csr")
        return Postings.of(W @ index.X)

    return cached(index, f"models.context/{window}/{'self' if include_self else 'around'}", build)


def doc_postings(index: Index) -> Postings:
    """c(t,d): document postings (rows are document ids)."""
    return cached(index, "models.doc", lambda: Postings.of(sentence_doc_matrix(index) @ index.X))


@dataclass(frozen=True)
class FieldPostings:
    """The sentence, context and title counts of every term aligned on one posting list.

    ``rows[indptr[t]:indptr[t+1]]`` are the sentences where t occurs in any of the three
    fields (sorted); ``counts[…]`` has one column per field (float32: exact for counts). One
    slice per term gives BM25F everything it needs.
    """

    indptr: np.ndarray  # int64
    rows: np.ndarray  # int32
    counts: np.ndarray  # (nnz, 3) float32: sentence, context, title

    def __call__(self, term: int) -> tuple[np.ndarray, np.ndarray]:
        lo, hi = self.indptr[term], self.indptr[term + 1]
        return self.rows[lo:hi], self.counts[lo:hi]


def _aligned(pattern: sp.csc_matrix, matrix: sp.csc_matrix) -> np.ndarray:
    """``matrix``'s values at ``pattern``'s non-zeros (a superset of its own), as float32."""
    n = np.int64(pattern.shape[0])
    cols_p = np.repeat(np.arange(pattern.shape[1], dtype=np.int64), np.diff(pattern.indptr))
    cols_m = np.repeat(np.arange(matrix.shape[1], dtype=np.int64), np.diff(matrix.indptr))
    keys_p = cols_p * n + pattern.indices
    keys_m = cols_m * n + matrix.indices
    out = np.zeros(pattern.nnz, dtype=np.float32)
    out[np.searchsorted(keys_p, keys_m)] = matrix.data
    return out


def field_postings(index: Index, window: int) -> FieldPostings:
    """BM25F's three fields (sentence, ±window context, title) on one posting list per term."""

    def build() -> FieldPostings:
        parts = []
        title = sentence_doc_matrix(index).T @ index.title_X
        for matrix in (index.X, window_matrix(index, window) @ index.X, title):
            csc = sp.csc_matrix(matrix, dtype=np.float64)
            csc.sum_duplicates()
            csc.eliminate_zeros()
            csc.sort_indices()
            parts.append(csc)
        pattern = abs(parts[0]) + abs(parts[1]) + abs(parts[2])
        pattern = sp.csc_matrix(pattern)
        pattern.sum_duplicates()
        pattern.sort_indices()
        return FieldPostings(
            np.asarray(pattern.indptr, dtype=np.int64),
            np.asarray(pattern.indices, dtype=np.int32),
            np.stack([_aligned(pattern, part) for part in parts], axis=1),
        )

    return cached(index, f"models.fields/{window}", build)
