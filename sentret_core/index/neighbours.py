"""±window neighbourhoods inside a document: the one copy every layer uses.

prev(s) and next(s) never cross a document boundary (docs/spec.md, notation).
"""

from __future__ import annotations

from typing import Protocol

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
