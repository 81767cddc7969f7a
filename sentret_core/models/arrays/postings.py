"""Posting lists of every term as plain arrays: c(t,s) and BM25F's fields (local counts: :mod:`local`).

One slice per query term gives a scorer its candidates and counts (their formulas: docs/spec.md).
Sentence postings are read straight from the index's memory-mapped ``XT``, and BM25F's fields
are built per query term (kept for the last few terms), so no query needs a corpus-wide matrix.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

import numpy as np
import scipy.sparse as sp

from sentret_core.index.neighbours import expand_ranges
from sentret_core.models.arrays import ranges
from sentret_core.models.arrays.layout import Targets, layout
from sentret_core.models.arrays.ranges import Span
from sentret_core.models.arrays.vectors import between, compiled, locate, run_starts

if TYPE_CHECKING:
    from sentret_core.index.reader import Index
    from sentret_core.index.sliced import Slices

FIELD_BYTES = 256 * 2**20  # BM25F fields kept per index, the most recently used terms first
FIELDS_PER_TARGET = 4  # a term in fewer sentences than 4 × the sentences asked for has its whole fields built
# ... if it is in at most this many (its fields, ~40 bytes a posting, a sixth of FIELD_BYTES): a larger one's are
# looked up, at 75M sentences 0.25-0.37 s at 2-3M sentences against 0.64-1.6 s to build them, which the cache
# would hardly keep
FIELDS_WHOLE_UP_TO = 2**20
# a term in more than 1/6 of a span's sentences has its fields there built densely, not sorted (at 10M sentences
# both cost the same at 16%: the dense build ~0.2 s whatever the term, the sort ~12 ms per 1% of the sentences)
DENSE_SHARE = 6


class Postings:
    """A CSC matrix (rows × terms) as plain arrays: ``rows[indptr[t]:indptr[t+1]]`` are sorted."""

    def __init__(self, indptr: np.ndarray, rows: np.ndarray, vals: np.ndarray) -> None:
        self.indptr = indptr  # int64
        self._rows, self._vals = rows, vals  # int32, float64

    @property
    def rows(self) -> np.ndarray:
        return self._rows

    @property
    def vals(self) -> np.ndarray:
        return self._vals

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

    def raw(self, term: int) -> tuple[np.ndarray, np.ndarray]:
        """The term's rows (sorted, distinct) and values, in their stored dtypes."""
        lo, hi = int(self.indptr[term]), int(self.indptr[term + 1])
        return self._rows[lo:hi], self._vals[lo:hi]

    def __call__(self, term: int) -> tuple[np.ndarray, np.ndarray]:
        rows, vals = self.raw(term)
        return np.asarray(rows, dtype=np.int32), np.asarray(vals, dtype=np.float64)

    def size(self, term: int) -> int:
        return int(self.indptr[term + 1] - self.indptr[term])

    def prepare(self, terms: Iterable[int]) -> None:
        """Ready the postings of ``terms`` for reading: nothing to do for arrays in memory (:class:`MappedPostings`
        checks their blocks)."""

    def arrays(self, terms: np.ndarray) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
        """(indptr, rows, vals) whole, for a compiled kernel that reads the slices of ``terms`` alone: every
        value of those slices is checked first (:class:`MappedPostings`), not the rest."""
        return self.indptr, self._rows, self._vals

    def lookup(self, term: int, targets: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
        """The ``targets`` (sorted) the term occurs in, and its values there (float64)."""
        hit, vals = self.found(term, targets)
        return targets[hit], np.asarray(vals, dtype=np.float64)

    def found(self, term: int, targets: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
        """Which of ``targets`` (sorted, repeats allowed) the term occurs in (a mask), and its values at those."""
        rows, vals = self.raw(term)
        hit, pos = locate(rows, targets)
        return hit, vals.take(pos)


class MappedPostings(Postings):
    """``XT``'s own (memory-mapped) arrays: only a query term's slice is read and converted.

    A slice is read through :meth:`Index.slices <sentret_core.index.reader.Index.slices>`, so the blocks
    of ``XT.indices`` and ``XT.data`` it spans are checked at its first read, not the whole files; ``rows``
    and ``vals``, read whole, are checked whole first. A slice is checked once to be sorted and distinct,
    as the index builder writes it; one that is not is put in that form (as :meth:`Postings.of` would)
    each time it is read.
    """

    def __init__(self, index: Index) -> None:
        super().__init__(index.array("XT.indptr"), np.zeros(0, dtype=np.int32), np.zeros(0))
        self.index = index
        self.row_slices, self.val_slices = index.slices("XT.indices"), index.slices("XT.data")
        self.checked: set[int] = set()  # terms whose slice is sorted and distinct
        self.sliced: set[int] = set()  # terms whose slices' blocks are checked

    @property
    def rows(self) -> np.ndarray:
        return self.index.array("XT.indices")

    @property
    def vals(self) -> np.ndarray:
        return self.index.array("XT.data")

    def arrays(self, terms: np.ndarray) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
        self.prepare(terms.tolist())
        return self.indptr, self.row_slices.array, self.val_slices.array

    def prepare(self, terms: Iterable[int]) -> None:
        """Check the blocks the slices of ``terms`` read and no read has checked yet: those of ``XT.data`` on a
        thread of their own while this one checks those of ``XT.indices`` (hashlib and numpy let go of the GIL). A
        query's first reads of its postings hash their blocks, 8 MiB each, ~4 ms a block on one core. A damaged
        block raises here, as a read would. Each term's slices are checked once (a set lookup: this runs per
        query)."""
        todo = [t for t in dict.fromkeys(int(t) for t in terms) if t not in self.sliced]
        spans = [(int(self.indptr[t]), int(self.indptr[t + 1])) for t in todo]

        def check(slices: Slices) -> None:
            for lo, hi in spans:
                slices(lo, hi)

        if spans:
            with ThreadPoolExecutor(1) as pool:
                values = pool.submit(check, self.val_slices)
                check(self.row_slices)
                values.result()
            self.sliced.update(todo)

    def raw(self, term: int) -> tuple[np.ndarray, np.ndarray]:
        lo, hi = int(self.indptr[term]), int(self.indptr[term + 1])
        rows, vals = self.row_slices(lo, hi), self.val_slices(lo, hi)
        if term not in self.checked:
            if len(rows) > 1 and not bool(np.all(rows[1:] > rows[:-1])):
                return _canonical(rows, vals)
            self.checked.add(term)
        return rows, vals


def _canonical(rows: np.ndarray, vals: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """``rows`` sorted with duplicates summed."""
    order = np.argsort(rows, kind="stable")
    r = rows.take(order)
    starts = run_starts(r)
    return r.take(starts), np.add.reduceat(np.asarray(vals, dtype=np.float64).take(order), starts)


def postings(index: Index) -> Postings:
    """c(t,s): the sentence postings of every term (slices of ``XT``'s arrays, no copy of them)."""
    return index.cache.get("models.postings", lambda: MappedPostings(index))


@dataclass(frozen=True)
class FieldPostings:
    """BM25F's sentence, context and title counts of a term, aligned on one posting list.

    ``fields(term)`` gives the sentences where the term occurs in any of the three fields
    (sorted, int32) and an (n, 3) float32 array of its counts there (sentence, context, title;
    float32 is exact for counts). Built per term on first use; the most recently used terms are
    kept, up to :data:`FIELD_BYTES` in all (a frequent term's fields are large, a rare one's small).
    """

    index: Index
    window: int

    def __call__(self, term: int) -> tuple[np.ndarray, np.ndarray]:
        key = (self.window, int(term))
        return self.index.cache.get_sized("models.fields", key, lambda: term_fields(self.index, *key), FIELD_BYTES,
                                          _nbytes)

    def at(self, term: int, targets: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
        """The term's fields at ``targets`` (sorted sentence ids): those of them where it is, and its counts there
        (:meth:`found_at`)."""
        at = Targets(self.index, targets)
        found, counts = self.found_at(term, at)
        return at.rows(found), counts

    def found_at(self, term: int, targets: Targets) -> tuple[np.ndarray, np.ndarray]:
        """The positions in ``targets`` where the term is in a field, and its counts there: the rows of its whole
        fields when they are kept or cheap beside the targets (a term in fewer than :data:`FIELDS_PER_TARGET` × as
        many sentences, and at most :data:`FIELDS_WHOLE_UP_TO`), else looked up in its postings without building
        them (:func:`field_counts_at`: a frequent term's fields are large)."""
        size = postings(self.index).size(term)
        cheap = size <= FIELDS_WHOLE_UP_TO and size < FIELDS_PER_TARGET * len(targets.ids)
        if not cheap and (self.window, term) not in self.index.cache.held("models.fields"):
            return field_counts_at(self.index, self.window, term, targets)
        rows, counts = self(term)
        hit, pos = locate(rows, targets.ids32)
        return np.flatnonzero(hit), counts.take(pos, axis=0)

    def weighted(self, term: int, key: tuple[object, ...],
                 weigh: Callable[[np.ndarray, np.ndarray], np.ndarray]) -> tuple[np.ndarray, np.ndarray]:
        """The term's whole fields' rows and ``weigh(rows, counts)`` there (BM25F's x̃, which ``key`` names: what it
        depends on besides the term), kept like the fields, up to :data:`FIELD_BYTES` in all: a frequent term's
        x̃ over millions of sentences reads their lengths scattered over arrays of N."""

        def build() -> tuple[np.ndarray, np.ndarray]:
            rows, counts = self(term)
            x = weigh(rows, counts)
            x.setflags(write=False)  # kept: a caller that wrote to it would change later queries' scores
            return rows, x

        return self.index.cache.get_sized("models.fields.weighted", (self.window, int(term), key), build,
                                          FIELD_BYTES, _nbytes)

    def within(self, term: int, span: Span) -> tuple[np.ndarray, np.ndarray]:
        """The term's fields at the sentences of ``span`` (whole documents) alone: a slice of its whole fields
        (kept) for a term in fewer than :data:`~sentret_core.models.arrays.ranges.RANGE_FROM` sentences, built
        for the span alone for a more frequent one."""
        if postings(self.index).size(term) > ranges.RANGE_FROM:
            return term_fields(self.index, self.window, term, span)
        return between(*self(term), *span)


def _nbytes(fields: tuple[np.ndarray, np.ndarray]) -> int:
    return int(fields[0].nbytes + fields[1].nbytes)


def field_postings(index: Index, window: int) -> FieldPostings:
    """BM25F's three fields (sentence, ±window context, title) on one posting list per term."""
    return FieldPostings(index, window)


def title_postings(index: Index) -> Postings:
    """c(t, title(d)): title postings (rows are document ids), from ``title_X`` (D×V, small)."""
    return index.cache.get("models.title_postings", lambda: Postings.of(_nonzero(index.title_X)))


def _nonzero(matrix: Any) -> sp.csc_matrix:
    csc = sp.csc_matrix(matrix, dtype=np.float64)
    csc.sum_duplicates()
    csc.eliminate_zeros()
    return csc


def term_fields(index: Index, window: int, term: int, span: Span | None = None) -> tuple[np.ndarray, np.ndarray]:
    """One term's BM25F fields: the sentences holding it in the sentence, ±window context or
    title field, and its counts in each (what the matrices X, W·X and Sᵀ·T hold in column t);
    with ``span`` (whole documents), at the sentences of that range only.

    Every field's rows are sorted runs (the postings, each shifted by one offset, the title
    documents' sentences): one stable sort merges them, a bincount sums them per row and field. A term in
    more than 1/:data:`DENSE_SHARE` of the sentences is built a range of documents at a time, from arrays
    over the range (:func:`_dense_fields`), which is faster than the sort.
    """
    r, c = postings(index)(term)
    if span is None and len(r) * DENSE_SHARE > index.N:
        parts = [_fields(index, window, term, (r, c), part) for part in ranges.document_ranges(index)]
        return np.concatenate([rows for rows, _ in parts]), np.concatenate([counts for _, counts in parts])
    return _fields(index, window, term, (r, c), span)


def _fields(index: Index, window: int, term: int, sentences: tuple[np.ndarray, np.ndarray],
            span: Span | None) -> tuple[np.ndarray, np.ndarray]:
    """:func:`term_fields` from the term's sentence postings (``sentences``), over ``span`` or every sentence."""
    lay = layout(index)
    r, c = sentences
    docs, tc = title_postings(index)(term)
    if span is not None:  # a sentence's fields read its own document only: the span's postings give them all
        r, c = between(r, c, *span)
        docs, tc = between(docs, tc, int(lay.sent_doc[span[0]]), int(lay.sent_doc[span[1] - 1]) + 1)
        if len(r) * DENSE_SHARE > span[1] - span[0]:
            return _dense_fields(index, window, span, (r, c), (docs, tc))
    keep = c != 0
    r, c = r[keep].astype(np.int64), c[keep]
    first, end = lay.first.take(r), lay.end.take(r)
    lo = lay.doc_first.take(docs).astype(np.int64)
    n = lay.doc_nsent.take(docs).astype(np.int64)
    found = _one_pass(window, (r, c, first, end), (lo, n, tc))
    if found is not None:
        return found
    rows, vals, fields = [r], [c], [np.zeros(len(r), dtype=np.int64)]
    for offset in (*range(-window, 0), *range(1, window + 1)):  # s gets c(t,s') for s' = s ∓ offset
        s = r + offset
        same = (s >= first) & (s < end)
        rows.append(s[same])
        vals.append(c[same])
        fields.append(np.ones(len(rows[-1]), dtype=np.int64))
    rows.append(expand_ranges(lo, lo + n))
    vals.append(np.repeat(tc, n))
    fields.append(np.full(len(rows[-1]), 2, dtype=np.int64))
    every = np.concatenate(rows)
    order = np.argsort(every, kind="stable")
    every = every.take(order)
    new = np.empty(len(every), dtype=bool)
    new[:1] = True
    np.not_equal(every[1:], every[:-1], out=new[1:])
    slot = (np.cumsum(new) - 1) * 3 + np.concatenate(fields).take(order)
    distinct = every[new]
    sums = np.bincount(slot, weights=np.concatenate(vals).take(order), minlength=3 * len(distinct))
    return distinct.astype(np.int32), sums.reshape(len(distinct), 3).astype(np.float32)


def _one_pass(window: int, sentences: tuple[np.ndarray, ...], titles: tuple[np.ndarray, ...],
              ) -> tuple[np.ndarray, np.ndarray] | None:
    """:func:`_fields` by the compiled pass (``_sorted.c``: ``fields``) over the postings ``sentences`` (rows, counts
    none 0, their documents' first and end) and the title documents ``titles`` (first sentence, sentences, counts):
    no sort of their shifted copies (at 75M, a term in 144k sentences 20 -> 8.5 ms). None where it is not built."""
    kernel = compiled()
    if kernel is None:
        return None
    (r, c, first, end), (lo, n, tc) = sentences, titles
    cap = len(r) * (2 * window + 1) + int(n.sum())
    rows, counts = np.empty(cap, dtype=np.int64), np.empty(3 * cap)
    found = kernel.fields(r, np.asarray(c, dtype=np.float64), first.astype(np.int64), end.astype(np.int64), window,
                          lo, n, np.asarray(tc, dtype=np.float64), rows, counts)
    if found < 0:
        return None
    return rows[:found].astype(np.int32), counts[: 3 * found].reshape(found, 3).astype(np.float32)


def _dense_fields(index: Index, window: int, span: Span, sentences: tuple[np.ndarray, np.ndarray],
                  titles: tuple[np.ndarray, np.ndarray]) -> tuple[np.ndarray, np.ndarray]:
    """:func:`term_fields` over ``span`` from the term's sentence and title postings there, by arrays of the
    span's length rather than a sort: the faster way for a term in a good share of the span's sentences.
    Counts are integers, so their sums are the same whichever order they are added in."""
    (lo, hi), (r, c), (docs, tc) = span, sentences, titles
    doc_of = np.asarray(layout(index).sent_doc[lo:hi])  # a slice: sentences of a document are a run
    sentence = np.zeros(hi - lo)
    sentence[r - lo] = c
    context = np.zeros(hi - lo)
    for offset in range(1, min(window, hi - lo - 1) + 1):  # s gets c(t,s±offset) inside its document
        same = doc_of[offset:] == doc_of[:-offset]
        np.add(context[:-offset], sentence[offset:], out=context[:-offset], where=same)
        np.add(context[offset:], sentence[:-offset], out=context[offset:], where=same)
    title = np.zeros(int(doc_of[-1]) + 1 - int(doc_of[0]))
    title[docs - doc_of[0]] = tc
    title = title.take(doc_of - doc_of[0])
    found = np.flatnonzero((sentence != 0) | (context != 0) | (title != 0))
    counts = np.empty((len(found), 3), dtype=np.float32)
    for field, column in enumerate((sentence, context, title)):
        counts[:, field] = column.take(found)
    return (found + lo).astype(np.int32), counts


def field_counts_at(index: Index, window: int, term: int, targets: Targets) -> tuple[np.ndarray, np.ndarray]:
    """The positions in ``targets`` where ``term`` is in any of BM25F's fields, and its counts there, (n, 3)
    float32: the rows :func:`term_fields` gives for those sentences, looked up in the sentence and title postings
    without building the term's fields whole (a frequent term's are large)."""
    ids = targets.ids
    counts = np.zeros((len(ids), 3))
    post = postings(index)
    first, end = targets.first, targets.end
    if not _around(post, term, ids, first, end, window, counts):
        counts[:, 0] = _counts_at(post, term, ids)
        for offset in (*range(-window, 0), *range(1, window + 1)):
            around = ids + offset
            inside = (around >= first) & (around < end)
            counts[inside, 1] += _counts_at(post, term, around[inside])
    counts[:, 2] = _counts_at(title_postings(index), term, targets.documents)
    found = np.flatnonzero(np.any(counts > 0, axis=1))
    return found, counts.take(found, axis=0).astype(np.float32)


def _around(post: Postings, term: int, targets: np.ndarray, first: np.ndarray, end: np.ndarray, window: int,
            counts: np.ndarray) -> bool:
    """The term's counts in ``targets`` and in their ±window contexts into ``counts``' first two columns by the
    compiled pass (``_sorted.c``: ``around``: one pass over its postings, not a search per offset; at 75M, 1.2M
    targets in 1.6M postings ~3× faster); False where it is not built or declines (counts untouched)."""
    kernel = compiled()
    if kernel is None:
        return False
    rows, vals = post.raw(term)
    out = np.empty(2 * len(targets))
    if not kernel.around(rows, vals, targets, first, end, window, out):
        return False
    counts[:, :2] = out.reshape(len(targets), 2)
    return True


def _counts_at(post: Postings, term: int, rows: np.ndarray) -> np.ndarray:
    """c(t, row) for each of ``rows`` (sorted, repeats allowed), 0 where the term is not."""
    out = np.zeros(len(rows))
    hit, vals = post.found(term, rows)
    out[hit] = vals
    return out
