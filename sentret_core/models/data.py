"""Query preparation and the query-independent data the scorers derive from an index.

Everything here is computed on first use and kept in ``index.cache`` under a key that names
the parameters it depends on (``"models.context/2/around"`` for the ±2 context-window
counts); data that depends on continuous parameters (per-sentence BM25 normalisations per
k1, b…) is kept for the last few settings only (:func:`cached_lru`).
Scorers only slice postings (CSC columns) of the query terms and work over the candidate
sentences: never a Python loop per sentence, never an array of all N per query.

Sentence ids are int32 inside the scorers (the index stores them so) and int64 in results.
"""

from __future__ import annotations

import threading
from collections import OrderedDict
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from functools import lru_cache
from typing import TYPE_CHECKING, Any, TypeVar

import numpy as np
import scipy.sparse as sp

if TYPE_CHECKING:
    from sentret_core.index.reader import Index
    from sentret_core.ingest.nlp import TermRules

T = TypeVar("T")

NO_TERMS = "the query has no terms after removing stop words and punctuation"
NO_MATCH = "no sentence contains any query term"


def cached(index: Index, key: str, build: Callable[[], T]) -> T:
    """``index.cache[key]``, built by ``build()`` on first use."""
    try:
        value: T = index.cache[key]
    except KeyError:
        value = build()
        index.cache[key] = value
    return value


_LRU_LOCK = threading.Lock()
LRU_SIZE = 8


def cached_lru(index: Index, group: str, key: Any, build: Callable[[], T], size: int = LRU_SIZE) -> T:
    """Like :func:`cached` for data that depends on parameters (per-sentence arrays per k1, b…):
    the last ``size`` parameter settings of ``group`` are kept, so tuning over a grid does not
    grow the cache without bound."""
    with _LRU_LOCK:
        store = index.cache.setdefault(group, OrderedDict())
        if key in store:
            store.move_to_end(key)
            value: T = store[key]
            return value
    value = build()
    with _LRU_LOCK:
        store[key] = value
        while len(store) > size:
            store.popitem(last=False)
    return value


# --- the query ---------------------------------------------------------------------------


@lru_cache(maxsize=4)
def _pipeline(model: str) -> tuple[Any, TermRules]:
    from sentret_core.ingest.nlp import TermRules, load_pipeline

    nlp = load_pipeline(model)
    return nlp, TermRules(nlp)


def normalise(index: Index, text: str) -> list[str]:
    """The terms of ``text`` by the index's own rules (its spaCy model's tokenizer)."""
    from sentret_core.ingest.nlp import DEFAULT_MODEL, query_terms

    nlp, rules = _pipeline(str(index.manifest.get("model", DEFAULT_MODEL)))
    return query_terms(text, nlp, rules)


@dataclass(frozen=True)
class Query:
    """A normalised query: its terms, and the distinct in-vocabulary ones with ``c(t,q)``."""

    terms: tuple[str, ...]  # every normalised term, in order, with repeats
    unique: tuple[str, ...]  # distinct in-vocabulary terms, in order of first occurrence
    ids: np.ndarray  # their term ids (int64)
    qtf: np.ndarray  # c(t,q) of each (float64)
    oov: tuple[str, ...]  # distinct terms the index has never seen

    @property
    def reason(self) -> str | None:
        """Why nothing can match, when that is already clear before scoring."""
        if not self.terms:
            return NO_TERMS
        if not self.unique:
            return no_match(self)
        return None


def no_match(query: Query) -> str:
    if query.oov:
        return f"{NO_MATCH} (not in the index: {', '.join(query.oov)})"
    return NO_MATCH


def prepare(index: Index, query: str | Sequence[str]) -> Query:
    """Normalise a query string, or take a list of already normalised terms as they are."""
    terms = normalise(index, query) if isinstance(query, str) else [str(t) for t in query]
    counts: dict[str, int] = {}
    for term in terms:
        counts[term] = counts.get(term, 0) + 1
    lookup = index.term_index
    unique, ids, qtf, oov = [], [], [], []
    for term, count in counts.items():
        tid = lookup.get(term, -1)
        if tid < 0:
            oov.append(term)
        else:
            unique.append(term)
            ids.append(tid)
            qtf.append(count)
    return Query(
        tuple(terms),
        tuple(unique),
        np.array(ids, dtype=np.int64),
        np.array(qtf, dtype=np.float64),
        tuple(oov),
    )


# --- postings ----------------------------------------------------------------------------


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


@dataclass(frozen=True)
class Layout:
    """Per-sentence structure as plain arrays (no memory maps on the query path)."""

    N: int
    D: int
    sent_doc: np.ndarray  # int32
    sent_len: np.ndarray  # float64 |s|
    first: np.ndarray  # int32: first sentence of the sentence's document
    end: np.ndarray  # int32: one past the last sentence of the sentence's document
    doc_first: np.ndarray  # int32
    doc_nsent: np.ndarray  # int32


def layout(index: Index) -> Layout:
    def build() -> Layout:
        sent_doc = np.asarray(index.sent_doc, dtype=np.int32)
        doc_first = np.asarray(index.doc_first, dtype=np.int32)
        doc_nsent = np.asarray(index.doc_nsent, dtype=np.int32)
        first = doc_first[sent_doc] if index.N else np.zeros(0, np.int32)
        end = (doc_first + doc_nsent)[sent_doc] if index.N else np.zeros(0, np.int32)
        return Layout(
            index.N,
            index.D,
            sent_doc,
            np.asarray(index.sent_len, dtype=np.float64),
            first.astype(np.int32),
            end.astype(np.int32),
            doc_first,
            doc_nsent,
        )

    return cached(index, "models.layout", build)


def postings(index: Index) -> Postings:
    """c(t,s): the sentence postings of every term."""
    return cached(index, "models.postings", lambda: Postings.of(index.XT))


def window_matrix(index: Index, window: int) -> sp.csr_matrix:
    """N×N: 1 where s' is within ±window of s in the same document and s' ≠ s."""

    def build() -> sp.csr_matrix:
        lay = layout(index)
        src = np.arange(lay.N, dtype=np.int64)
        rows, cols = [], []
        for offset in range(-window, window + 1):
            if offset == 0:
                continue
            tgt = src + offset
            ok = (tgt >= lay.first) & (tgt < lay.end)
            rows.append(src[ok])
            cols.append(tgt[ok])
        r = np.concatenate(rows) if rows else np.zeros(0, np.int64)
        c = np.concatenate(cols) if cols else np.zeros(0, np.int64)
        return sp.csr_matrix((np.ones(len(r)), (r, c)), shape=(lay.N, lay.N))

    return cached(index, f"models.window/{window}", build)


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


def context_len(index: Index, window: int) -> np.ndarray:
    """|ctx_w(s)|: terms in the ±window sentences around s (s excluded)."""
    return cached(
        index,
        f"models.context_len/{window}",
        lambda: np.asarray(window_matrix(index, window) @ layout(index).sent_len, dtype=np.float64),
    )


def sentence_doc_matrix(index: Index) -> sp.csr_matrix:
    """D×N: document d contains sentence s."""
    lay = layout(index)
    return sp.csr_matrix(
        (np.ones(lay.N), (lay.sent_doc.astype(np.int64), np.arange(lay.N))), shape=(lay.D, lay.N)
    )


def doc_postings(index: Index) -> Postings:
    """c(t,d): document postings (rows are document ids)."""
    return cached(index, "models.doc", lambda: Postings.of(sentence_doc_matrix(index) @ index.X))


def doc_len(index: Index) -> np.ndarray:
    """|d| of every document."""

    def build() -> np.ndarray:
        lay = layout(index)
        return np.bincount(lay.sent_doc, weights=lay.sent_len, minlength=lay.D).astype(np.float64)

    return cached(index, "models.doc_len", build)


def title_len(index: Index) -> np.ndarray:
    """|title(d(s))| of every sentence."""

    def build() -> np.ndarray:
        per_doc = np.asarray(index.title_X.sum(axis=1)).ravel().astype(np.float64)
        return per_doc[layout(index).sent_doc] if index.N else np.zeros(0)

    return cached(index, "models.title_len", build)


def collection_model(index: Index) -> np.ndarray:
    """p(t) = c(t,C)/|C| over the vocabulary."""
    return cached(
        index,
        "models.p_collection",
        lambda: np.asarray(index.cf, dtype=np.float64) / max(index.total_terms, 1),
    )


# --- vector helpers ----------------------------------------------------------------------

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


def gather(rows: np.ndarray, vals: np.ndarray, targets: np.ndarray) -> np.ndarray:
    """``vals`` at ``targets`` where ``rows`` (sorted) holds them, 0 elsewhere."""
    if len(rows) == 0:
        return np.zeros(len(targets))
    pos = np.searchsorted(rows, targets)
    np.minimum(pos, len(rows) - 1, out=pos)
    return np.where(rows.take(pos) == targets, vals.take(pos), 0.0)


def scatter(cand: np.ndarray, rows: np.ndarray, vals: np.ndarray) -> np.ndarray:
    """A vector over ``cand`` (sorted) holding ``vals`` at ``rows`` (a subset of ``cand``)."""
    out = np.zeros(len(cand))
    out[np.searchsorted(cand, rows)] = vals
    return out


def expand_ranges(lo: np.ndarray, hi: np.ndarray) -> np.ndarray:
    """The integers of every range ``[lo[i], hi[i])``, range after range (int32)."""
    counts = hi - lo
    ends = counts.cumsum()
    if len(ends) == 0:
        return EMPTY_IDS
    return np.repeat(lo - ends + counts, counts).astype(np.int32) + np.arange(ends[-1], dtype=np.int32)


def neighbourhood(lay: Layout, ids: np.ndarray, radius: int) -> np.ndarray:
    """Sorted distinct sentences within ±radius of the sorted ``ids`` inside their documents."""
    if radius <= 0 or len(ids) == 0:
        return ids
    lo = np.maximum(ids - radius, lay.first.take(ids))
    hi = np.minimum(ids + (radius + 1), lay.end.take(ids))
    spans = expand_ranges(lo, hi)
    spans.sort(kind="stable")  # overlapping runs, nearly sorted
    return spans.take(run_starts(spans))


def sentence_row(index: Index, sentence: int) -> tuple[np.ndarray, np.ndarray]:
    """The term ids of ``sentence`` and their counts c(t, s) (float64), from its row of X."""
    lo, hi = int(index.X.indptr[sentence]), int(index.X.indptr[sentence + 1])
    cols = np.asarray(index.X.indices[lo:hi], dtype=np.int64)
    return cols, np.asarray(index.X.data[lo:hi], dtype=np.float64)
