"""±window neighbourhoods inside a document: the one copy every layer uses, and the per-sentence columns
they read (a sentence's document bounds), computed for the sentences asked for rather than held for all N.

prev(s) and next(s) never cross a document boundary (docs/spec.md, notation).
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any, Protocol

import numpy as np

EMPTY = np.zeros(0, dtype=np.int64)


def expand_ranges(lo: np.ndarray, hi: np.ndarray) -> np.ndarray:
    """The integers of every range ``[lo[i], hi[i])``, range after range (int64)."""
    counts = np.maximum(np.asarray(hi, dtype=np.int64) - lo, 0)
    ends = counts.cumsum()
    if len(ends) == 0 or ends[-1] == 0:
        return EMPTY
    return np.repeat(np.asarray(lo, dtype=np.int64) - ends + counts, counts) + np.arange(ends[-1], dtype=np.int64)


class Column(Protocol):
    """A per-sentence column: an array, or one computed for the sentences asked for."""

    def take(self, ids: np.ndarray) -> np.ndarray: ...


class PerSentence:
    """A per-sentence column computed for the sentences asked for — ``column.take(ids)``, ``column[s]`` — from
    arrays of one value per document, so that nothing of size N is held (at 75M sentences an int64 column is
    600 MB); ``np.asarray(column)`` computes all of it, for a caller that reads every sentence."""

    def __init__(self, n: int, at: Callable[[np.ndarray], np.ndarray]) -> None:
        self._n, self._at = n, at

    def take(self, ids: Any) -> np.ndarray:
        return self._at(np.asarray(ids))

    def __getitem__(self, sentence: int) -> Any:
        if not -self._n <= int(sentence) < self._n:
            raise IndexError(f"sentence {sentence} is not in 0..{self._n - 1}")
        return self._at(np.array([int(sentence) % self._n]))[0]

    def __len__(self) -> int:
        return self._n

    def __array__(self, dtype: Any = None, copy: Any = None) -> np.ndarray:
        whole = self._at(np.arange(self._n))
        return whole if dtype is None else whole.astype(dtype)


def document_bounds(n: int, sent_doc: np.ndarray, doc_first: np.ndarray,
                    doc_nsent: np.ndarray) -> tuple[PerSentence, PerSentence]:
    """The first sentence of each sentence's document and one past its last, as :class:`PerSentence` columns
    (documents are runs of sentences: ``sent_doc`` says whose, ``doc_first``/``doc_nsent`` where they are)."""
    doc_end = doc_first + doc_nsent
    return (PerSentence(n, lambda ids: doc_first.take(sent_doc.take(ids))),
            PerSentence(n, lambda ids: doc_end.take(sent_doc.take(ids))))


def neighbourhood(first: Column, end: Column, ids: np.ndarray, window: int) -> np.ndarray:
    """The sorted distinct sentences within ±``window`` of ``ids`` inside their documents.

    ``first.take(ids)`` / ``end.take(ids)`` are the first sentence of each one's document and one past its last
    (arrays, or columns computed at the ids), so a neighbourhood never crosses a document boundary. ``ids``
    themselves are included.
    """
    ids = np.asarray(ids, dtype=np.int64)
    if len(ids) == 0:
        return EMPTY
    if window <= 0:
        return np.unique(ids)
    lo = np.maximum(ids - window, first.take(ids))
    hi = np.minimum(ids + (window + 1), end.take(ids))
    spans = expand_ranges(lo, hi)
    spans.sort(kind="stable")  # overlapping runs, nearly sorted: a merge, far faster than np.unique
    distinct = np.empty(len(spans), dtype=bool)
    distinct[:1] = True
    np.not_equal(spans[1:], spans[:-1], out=distinct[1:])
    return spans[distinct]
