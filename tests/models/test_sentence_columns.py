"""models/arrays/layout.py: the per-sentence columns computed at the sentences asked for, against the arrays
they replace (built here over all N, as sentret built them before), and the chunked mean."""

from __future__ import annotations

from unittest import mock

import numpy as np

from sentret_core import Index
from sentret_core.models.arrays import layout as layout_module
from sentret_core.models.arrays.layout import context_len, layout, mean_over_sentences, title_len


def test_document_bounds_at_any_sentences(small_index: Index) -> None:
    lay = layout(small_index)
    doc = np.asarray(small_index.sent_doc)
    first = np.asarray(small_index.doc_first)[doc]
    end = first + np.asarray(small_index.doc_nsent)[doc]
    picked = np.array([small_index.N - 1, 0, 5, 5, 2])
    assert np.array_equal(lay.first.take(np.arange(small_index.N)), first)
    assert np.array_equal(lay.end.take(picked), end[picked])
    assert lay.first.take(picked).dtype == np.int32


def test_title_lengths_at_any_sentences(small_index: Index) -> None:
    per_doc = np.asarray(small_index.title_X.sum(axis=1)).ravel().astype(np.float64)
    whole = per_doc[np.asarray(small_index.sent_doc)]
    picked = np.array([3, 0, small_index.N - 1])
    assert np.array_equal(title_len(small_index, np.arange(small_index.N)), whole)
    assert np.array_equal(title_len(small_index, picked), whole[picked])


def test_the_mean_is_numpys_up_to_a_chunk_and_close_beyond(small_index: Index) -> None:
    whole = context_len(small_index, 2, np.arange(small_index.N))
    assert mean_over_sentences(small_index, lambda ids: context_len(small_index, 2, ids), "test/a") == whole.mean()
    with mock.patch.object(layout_module, "CHUNK", 7):  # many chunks: each chunk's pairwise sum, then their sum
        chunked = mean_over_sentences(small_index, lambda ids: context_len(small_index, 2, ids), "test/b")
    assert abs(chunked - whole.mean()) <= 1e-12 * whole.mean()
    assert mean_over_sentences(small_index, lambda ids: context_len(small_index, 2, ids), "test/a") == whole.mean()
