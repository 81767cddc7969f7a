"""The corpus-wide matrices the per-term paths replace, written out sentence by sentence (references for tests)."""

from __future__ import annotations

import numpy as np
import scipy.sparse as sp

from sentret_core import Index


def window_matrix(index: Index, window: int) -> sp.csr_matrix:
    """N×N: 1 where s' ≠ s is within ±window of s in the same document."""
    doc = np.asarray(index.sent_doc)
    rows, cols = [], []
    for s in range(index.N):
        for other in range(max(s - window, 0), min(s + window + 1, index.N)):
            if other != s and doc[other] == doc[s]:
                rows.append(s)
                cols.append(other)
    return sp.csr_matrix((np.ones(len(rows)), (rows, cols)), shape=(index.N, index.N))


def sentence_doc_matrix(index: Index) -> sp.csr_matrix:
    """D×N: 1 where document d contains sentence s."""
    doc = np.asarray(index.sent_doc, dtype=np.int64)
    return sp.csr_matrix((np.ones(index.N), (doc, np.arange(index.N))), shape=(index.D, index.N))


def chunked_mean(values: np.ndarray, chunk: int) -> float:
    """The mean as a float sum a chunk at a time (numpy's pairwise within a chunk, then the chunks' sums in order)."""
    total = 0.0
    for start in range(0, len(values), chunk):
        total += float(np.add.reduce(np.asarray(values[start : start + chunk], dtype=np.float64)))
    return total / len(values) if len(values) else 0.0
