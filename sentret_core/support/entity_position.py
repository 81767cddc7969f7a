"""Eq. 8 of Blanco & Zaragoza, SIGIR 2010: the position feature ``|s| - max(pos_q(s), pos_e(s))``.

Positions count terms, the unit of |s|: pos_q is the 1-based index of the last query-term
occurrence in s (0 if none), pos_e the number of terms up to the end of the entity's last mention.
"""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np

from sentret_core.index.reader import Index


def _ranges(starts: np.ndarray, lengths: np.ndarray) -> np.ndarray:
    """The concatenated ranges starts[i] : starts[i] + lengths[i]."""
    return np.repeat(starts - np.cumsum(lengths) + lengths, lengths) + np.arange(lengths.sum())


def position_scores(index: Index, sentences: np.ndarray, terms: Sequence[str], entity: int) -> np.ndarray:
    """Eq. 8 for each of ``sentences``: |s| - max(pos_q(s), pos_e(s)), positions in terms."""
    sentences = np.asarray(sentences, dtype=np.int64)
    if len(sentences) == 0:
        return np.zeros(0)
    indptr = np.asarray(index.seq_indptr, dtype=np.int64)
    starts, lengths = indptr[sentences], indptr[sentences + 1] - indptr[sentences]
    owner = np.repeat(np.arange(len(sentences)), lengths)
    flat = _ranges(starts, lengths)
    position = flat - starts[owner] + 1
    query_ids = index.term_ids(list(terms))
    match = np.isin(np.asarray(index.seq_terms[flat]), query_ids[query_ids >= 0])
    # (sentence's place in ``sentences``, token) of each term occurrence: sorted, as tokens rise within a sentence
    keys = (owner.astype(np.int64) << 32) + np.asarray(index.seq_tokens[flat], dtype=np.int64)
    pos_q = np.zeros(len(sentences), dtype=np.int64)
    np.maximum.at(pos_q, owner[match], position[match])

    # the mentions of ``entity`` among those of the given sentences (mentions are stored by sentence)
    mention_lo, mention_hi = index.mention_rows(sentences)
    counts = mention_hi - mention_lo
    rows = _ranges(mention_lo, counts)
    where = np.repeat(np.arange(len(sentences)), counts)
    mentions = index.mention_columns
    keep = mentions["entity"][rows] == entity
    rows, where = rows[keep], where[keep]
    token_end = np.asarray(mentions["token_end"][rows], dtype=np.int64)
    before = np.concatenate([[0], np.cumsum(lengths)[:-1]])  # where each sentence's occurrences start in keys
    terms_before_end = np.searchsorted(keys, (where.astype(np.int64) << 32) + token_end) - before[where]
    pos_e = np.zeros(len(sentences), dtype=np.int64)
    np.maximum.at(pos_e, where, terms_before_end)
    return (lengths - np.maximum(pos_q, pos_e)).astype(np.float64)
