"""Vector helpers of the query path: merging sorted posting lists, moving values between id sets.

Scorers work over the candidate sentences only — never a Python loop per sentence, never an
array of all N per query. Sentence ids are int32 inside the scorers (the index stores them so)
and int64 in results.
"""

from __future__ import annotations

import importlib
from types import ModuleType

import numpy as np

_sorted: ModuleType | None
try:
    _sorted = importlib.import_module("sentret_core.models.arrays._sorted")
except ImportError:  # installed without a C compiler: numpy's searchsorted
    _sorted = None

# ids from which a galloping pass is tried, and the fewest ids per row, 1/GALLOP_SHARE: numpy's searchsorted starts
# each sorted id's search at the last one's place too, and is the faster for few ids in long rows (16k ids in 3M rows:
# 1.0 against 2.2 ms; 3.7M ids in 3M rows: 61 against 33 ms; 5M ids in 100k rows: 44 against 12 ms)
GALLOP_FROM = 64
GALLOP_SHARE = 32
EMPTY_IDS = np.zeros(0, dtype=np.int32)
EMPTY_SCORES = np.zeros(0, dtype=np.float64)


def union_sum(rows: list[np.ndarray], vals: list[np.ndarray]) -> tuple[np.ndarray, np.ndarray]:
    """Sorted distinct ids of ``rows`` and the sum of ``vals`` per id (all arrays paired).

    Each term's postings are sorted already, so a stable sort of their concatenation merges
    runs (timsort) rather than sorting from scratch.
    """
    if len(rows) == 1:
        return rows[0], vals[0]
    if not rows:
        return EMPTY_IDS, EMPTY_SCORES
    r = np.concatenate(rows)
    order = r.argsort(kind="stable")
    r = r.take(order)
    starts = run_starts(r)
    return r.take(starts), np.add.reduceat(np.concatenate(vals).take(order), starts)


def union(rows: list[np.ndarray]) -> np.ndarray:
    """Sorted distinct ids of ``rows``."""
    if len(rows) == 1:
        return rows[0]
    if not rows:
        return EMPTY_IDS
    r = np.concatenate(rows)
    r.sort(kind="stable")
    return r.take(run_starts(r))


def run_starts(sorted_ids: np.ndarray) -> np.ndarray:
    """Positions where a new value starts in ``sorted_ids``."""
    new = np.empty(len(sorted_ids), dtype=bool)
    if len(new):
        new[0] = True
        np.not_equal(sorted_ids[1:], sorted_ids[:-1], out=new[1:])
    return np.flatnonzero(new)


def compiled() -> ModuleType | None:
    """The compiled extension of sorted-array passes (``_sorted.c``), None where it is not built."""
    return _sorted


def find_sorted(rows: np.ndarray, ids: np.ndarray) -> np.ndarray:
    """``np.searchsorted(rows, ids)`` for sentence ids: the ids are cast to the rows' dtype first, since numpy
    would otherwise cast the rows to the ids' (copying a whole memory-mapped posting list per call). Many ids
    that ascend are found by one galloping pass (``_sorted.c``) rather than a binary search each."""
    ids = np.asarray(ids, dtype=rows.dtype)
    found = _galloped(rows, ids)
    return found if found is not None else np.searchsorted(rows, ids)


def _galloped(rows: np.ndarray, ids: np.ndarray) -> np.ndarray | None:
    """``np.searchsorted(rows, ids)`` by one galloping pass when the extension is built, ``ids`` (of the rows'
    dtype) are many and ascend; None otherwise."""
    if _sorted is None or len(ids) < GALLOP_FROM or len(ids) * GALLOP_SHARE < len(rows):
        return None
    out = np.empty(len(ids), dtype=np.intp)
    return out if _sorted.insertion(rows, ids, out) else None


def between(rows: np.ndarray, vals: np.ndarray, lo: int, hi: int) -> tuple[np.ndarray, np.ndarray]:
    """The part of a posting list (``rows`` sorted, ``vals`` paired) with lo ≤ row < hi."""
    start, stop = find_sorted(rows, np.array([lo, hi]))
    return rows[start:stop], vals[start:stop]


DENSE_FROM = 4096  # ids from which a lookup may go through an array over their span
DENSE_SPAN = 4  # ... when the span is at most this many times their number (its memory: a few bytes an id)


def dense_span(ids: np.ndarray) -> tuple[int, int] | None:
    """(lowest id, number of ids from it to the highest) when ``ids`` are many and close together: then arrays
    over that span, indexed directly, find them faster than binary searches (one pass, no log factor), for at
    most :data:`DENSE_SPAN` entries an id. None otherwise."""
    if len(ids) < DENSE_FROM:
        return None
    lo, hi = int(ids.min()), int(ids.max())
    return (lo, hi + 1 - lo) if hi - lo < DENSE_SPAN * len(ids) else None


def locate(rows: np.ndarray, targets: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """Which of ``targets`` (any order, repeats allowed) ``rows`` (sorted, distinct) holds, a mask, and their
    positions in ``rows``: through an array over their span when they are dense, else by :func:`find_sorted`."""
    if len(rows) == 0 or len(targets) == 0:
        return np.zeros(len(targets), dtype=bool), np.zeros(0, dtype=np.int64)
    span = dense_span(targets)
    if span is not None:  # many targets close together: an array over their span, no search at all
        lo, size = span
        start, stop = find_sorted(rows, np.array([lo, lo + size]))
        position = np.full(size, -1, dtype=np.int64)
        position[rows[start:stop] - lo] = np.arange(start, stop)
        found = position.take(targets - lo)
        hit = found >= 0
        return hit, found[hit]
    pos = find_sorted(rows, targets)
    np.minimum(pos, len(rows) - 1, out=pos)
    hit = rows.take(pos) == targets
    return hit, pos[hit]


def gather(rows: np.ndarray, vals: np.ndarray, targets: np.ndarray) -> np.ndarray:
    """``vals`` at ``targets`` where ``rows`` (sorted) holds them, 0 elsewhere."""
    if len(rows) == 0:
        return np.zeros(len(targets))
    hit, pos = locate(rows, targets)
    out = np.zeros(len(targets), dtype=np.result_type(vals.dtype, 0.0))  # 0.0 is a weak float: float32 stays
    out[hit] = vals.take(pos)
    return out


def scatter(cand: np.ndarray, rows: np.ndarray, vals: np.ndarray) -> np.ndarray:
    """A vector over ``cand`` (sorted) holding ``vals`` at ``rows`` (a subset of ``cand``); when ``cand`` is dense,
    through an array over its span that gives each candidate's position (no search)."""
    out = np.zeros(len(cand))
    span = dense_span(cand)
    if span is None:
        out[find_sorted(cand, rows)] = vals
        return out
    lo, size = span
    position = np.empty(size, dtype=np.int64 if len(cand) > 2**31 - 1 else np.int32)
    position[cand - lo] = np.arange(len(cand), dtype=position.dtype)
    out[position.take(rows - lo)] = vals
    return out
