"""BM25's exhaustive sum and its top k in one compiled call (``_saturated.c``), the numpy path's numbers bit for bit.

A typical query's numpy path is a few dozen calls on arrays of a few thousand postings, so its time is their
fixed overhead, not arithmetic; the extension does the same work in one call. The numpy path
(:func:`~sentret_core.models.bm25.sums.saturated_sum`, then :func:`~sentret_core.models.core.api.best_of`) stays
the reference, and runs wherever the extension is absent (not built), declines an input (another dtype, an
unsorted posting slice, a NaN to rank), or does not add as this numpy does (checked once, at import).

How the exact top k fits together, with a worked example: docs/topk.md.
"""

from __future__ import annotations

import importlib
import sys
from types import ModuleType
from typing import TYPE_CHECKING, NamedTuple

import numpy as np

from sentret_core.models.arrays.postings import Postings
from sentret_core.models.bm25.formulas import length_norm
from sentret_core.models.bm25.sums import saturated_sum
from sentret_core.models.core.spec import RankedTopK

if TYPE_CHECKING:
    from collections.abc import Callable

    from sentret_core.index.neighbours import Column
    from sentret_core.index.reader import Index
    from sentret_core.models.bm25.formulas import BM25Params
    from sentret_core.models.core.query import Query

_kernel: ModuleType | None
try:
    _kernel = importlib.import_module("sentret_core.models.bm25._saturated")
except ImportError:  # installed without a C compiler: the numpy path
    _kernel = None


class Tables(NamedTuple):
    """What a query's kernel call reads besides the postings, built once per index and setting of k1, b, idf."""

    codes: np.ndarray | None  # |s| of every sentence (uint8 or uint16); None: K holds K(s) of every sentence
    K: np.ndarray  # K(s) = k1·B(s) by length |s| (0, 1, … the longest)
    k_min: float  # the smallest K(s)
    idf: np.ndarray  # of every term


def compiled_sum(post: Postings, tables: Tables, q: Query, p: BM25Params) -> tuple[np.ndarray, np.ndarray] | None:
    """:func:`~sentret_core.models.bm25.sums.saturated_sum` over every term of ``q``, with the weights of
    :func:`~sentret_core.models.bm25.scorer.term_weights`: ids ascending (int32) and scores; or None."""
    found = _call(post, tables, q, p, -1, -1)
    if not isinstance(found, tuple):
        return None
    return np.frombuffer(found[0], dtype=np.int32), np.frombuffer(found[1], dtype=np.float64)


def compiled_top_k(post: Postings, tables: Tables, q: Query, p: BM25Params, k: int, longest: int = -1
                   ) -> RankedTopK | None:
    """The k best of :func:`compiled_sum` in rank order (score descending, ties by id ascending); or None, also
    when a term has more than ``longest`` postings (≥ 0; MaxScore is then worth trying first)."""
    found = _call(post, tables, q, p, min(k, sys.maxsize), longest)
    if not isinstance(found, tuple):
        return None
    return RankedTopK(np.frombuffer(found[0], dtype=np.int64), np.frombuffer(found[1], dtype=np.float64), found[2])


def _call(post: Postings, tables: Tables, q: Query, p: BM25Params, k: int, longest: int
          ) -> tuple[bytearray, bytearray, bool] | bool | None:
    if _saturated is None:
        return None
    indptr, rows, vals = post.arrays(q.ids)
    found: tuple[bytearray, bytearray, bool] | bool | None = _saturated(
        indptr, rows, vals, q.ids, q.qtf, tables.idf, p.k3, tables.codes, tables.K, tables.k_min, p.k1, k, longest
    )
    return found


def length_codes(index: Index) -> tuple[np.ndarray, int, int] | None:
    """|s| of every sentence as uint8 or uint16, and the shortest and longest (None when a length is not such an
    integer): K(s) is then read from a table over the lengths, a byte or two per sentence to fetch at random
    rather than :func:`~sentret_core.models.bm25.scorer.sentence_k`'s eight."""

    def build() -> tuple[np.ndarray, int, int] | None:
        lengths = np.asarray(index.sent_len)
        if len(lengths) == 0 or not (lengths.min() >= 0 and lengths.max() < 2**16):
            return None
        codes = lengths.astype(np.uint8 if lengths.max() < 2**8 else np.uint16)
        return (codes, int(codes.min()), int(codes.max())) if np.array_equal(codes, lengths) else None

    return index.cache.get("models.bm25.length_codes", build)


def tables_of(index: Index, k1: float, b: float, idf: np.ndarray, sentence_k: Callable[[], Column]) -> Tables:
    """:class:`Tables`: K(s) = k1·B(s) by the same operations on the same numbers as ``sentence_k()`` (K of every
    sentence, which is built only when the lengths have no codes); B grows with |s|, so K_min is the shortest's."""
    found = length_codes(index)
    if found is None:
        K = sentence_k().take(np.arange(index.N))
        return Tables(None, K, float(K.min()) if len(K) else 0.0, idf)
    codes, shortest, longest = found
    table = k1 * length_norm(np.arange(longest + 1, dtype=np.float64), index.avsl, b)
    return Tables(codes, table, float(table[shortest]), idf)


def _agrees_with_numpy(kernel: Callable[..., tuple[bytearray, bytearray, bool] | bool | None]) -> bool:
    """Whether the kernel sums as this numpy does: one sentence in 1 to 140 terms (runs of add.reduceat longer
    than its pairwise blocks), and zero counts under negative weights (-0.0 contributions); every candidate,
    and the k best of a few terms."""
    for n_terms, k1, count, sign in ((140, 1.2, 3.0, 1.0), (20, 1.2, 2.0, -1.0), (4, 0.0, 0.0, -1.0),
                                     (3, 1.2, 0.0, -1.0)):
        rng = np.random.default_rng(n_terms)
        post = Postings(np.arange(n_terms + 1, dtype=np.int64), np.zeros(n_terms, dtype=np.int32),
                        np.full(n_terms, count))
        K = np.array([0.7])  # one sentence, of length 0: K(0) = 0.7
        terms = np.arange(n_terms, dtype=np.int64)
        weights = sign * rng.uniform(0.0, 9.0, n_terms) * 10.0 ** rng.integers(-8, 8, n_terms)
        for n in (n for n in (*range(1, 11), 16, 17, 24, 25, 128, 129, 130, 131, 140) if n <= n_terms):
            want = saturated_sum(post, K, k1, terms[:n], weights[:n], range(n))[1].tobytes()
            for k in (-1, 1):
                got = kernel(post.indptr, post.rows, post.vals, terms[:n], np.ones(n), weights, 0.0,
                             np.zeros(1, np.uint8), K, 0.7, k1, k, -1)
                if not isinstance(got, tuple) or got[1] != want or got[0] != (b"\0" * (4 if k < 0 else 8)):
                    return False
    return True


_saturated = _kernel.saturated if _kernel is not None and _agrees_with_numpy(_kernel.saturated) else None


def available() -> bool:
    """Whether the compiled kernel is built, imported and sums as this numpy does."""
    return _saturated is not None
