"""A term's largest counts, which the language models' MaxScore bounds (:mod:`~sentret_core.models.lm.pruning`)
and TF-ISF's (:mod:`~sentret_core.models.tfisf.pruning`) are made of: per sentence length n the largest c(t,s)
over the term's sentences of length n, and the largest c(t,d)/|d| over its documents.

They are read from the term's postings, a pass over every row: for the most frequent term of a 75M-sentence index
that took 3.9 s, paid by the first query to need it. Where the index's impact lists were built
(``sentret train impacts``), the maxima of every term of more than :data:`STORED_FROM` postings are stored with
them (:func:`stored`), parameter-free, so they serve every model and parameter.

How the exact top k fits together, with a worked example: docs/topk.md.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

import numpy as np

from sentret_core.models.arrays import impacts, maxscore
from sentret_core.models.arrays.layout import doc_len, layout
from sentret_core.models.arrays.local import document_counts
from sentret_core.models.arrays.postings import postings

if TYPE_CHECKING:
    from sentret_core.index.reader import Index

STORED_FROM = 2**18  # postings from which a term's maxima are stored with the impact lists (reading them: > 10 ms)


def stored(index: Index, term: int) -> tuple[np.ndarray, float] | None:
    """``term``'s (largest count by length, largest c(t,d)/|d|) as stored with the index's impact lists, None
    where they hold none for it (no lists, lists built without maxima, a term of few postings)."""
    lists = impacts.impact_lists(index)
    found = lists.maxima if lists is not None else None
    row = found.row(term) if found is not None else None
    if found is None or row is None:
        return None
    return found.by_length[row].astype(np.int64), float(found.document[row])


def largest_by_length(index: Index, term: int) -> np.ndarray:
    """Per sentence length n (0 … the longest), the largest c(t,s) over the sentences of length n holding
    ``term``, 0 where none does (int64)."""

    def build() -> np.ndarray:
        kept = stored(index, term)
        return kept[0] if kept is not None else by_length_of(index, term)

    return index.cache.get_lru("models.maxima.by_length", term, build, maxscore.TERMS_KEPT)


def largest_document_ratio(index: Index, term: int) -> float:
    """The largest c(t,d)/|d| over the documents holding ``term`` (0 for a term without postings)."""

    def build() -> float:
        kept = stored(index, term)
        return kept[1] if kept is not None else document_ratio_of(index, term)

    return index.cache.get_lru("models.maxima.document", term, build, maxscore.TERMS_KEPT)


def by_length_of(index: Index, term: int) -> np.ndarray:
    """:func:`largest_by_length` read from the term's postings."""
    rows, counts = postings(index).raw(term)
    n = layout(index).sent_len.take(rows).astype(np.int64)
    c = np.asarray(counts, dtype=np.int64)
    top = int(c.max(initial=0))
    # which (length, count) pairs occur: a bincount, not a per-element maximum (np.maximum.at is slow)
    seen = np.bincount(n * (top + 1) + c, minlength=lengths(index) * (top + 1)) > 0
    seen = seen.reshape(-1, top + 1)
    return np.where(seen.any(axis=1), top - np.argmax(seen[:, ::-1], axis=1), 0).astype(np.int64)


def document_ratio_of(index: Index, term: int) -> float:
    """:func:`largest_document_ratio` read from the term's postings."""
    docs, per_doc = document_counts(index, *postings(index).raw(term))
    return float((per_doc / doc_len(index).take(docs)).max(initial=0.0))


def lengths(index: Index) -> int:
    """1 + the largest |s|: the sentence lengths the maxima (and the language models' tables) run over."""
    return index.cache.get("models.maxima.lengths", lambda: int(layout(index).sent_len.max(initial=0)) + 1)
