"""The per-sentence columns of models/arrays/layout.py, built a chunk of sentences at a time, from runs of
documents or at the sentences asked for, against a loop over the sentences: the same numbers, bit for bit."""

from __future__ import annotations

import numpy as np
import pytest

from sentret_core import Index
from sentret_core.models.arrays import layout as layout_module
from sentret_core.models.arrays.layout import context_len, doc_len, layout, title_len


def by_loop(index: Index, window: int) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """|ctx_w(s)|, |d| and |title(d(s))| sentence by sentence."""
    lengths = np.asarray(index.sent_len, dtype=np.int64)
    docs = np.asarray(index.sent_doc)
    context = np.zeros(index.N)
    for s in range(index.N):
        around = [n for n in range(s - window, s + window + 1) if n != s and 0 <= n < index.N and docs[n] == docs[s]]
        context[s] = float(sum(int(lengths[n]) for n in around))
    documents = np.array([float(lengths[docs == d].sum()) for d in range(index.D)])
    titles = np.asarray(index.title_X.sum(axis=1)).ravel().astype(np.float64)[docs]
    return context, documents, titles


@pytest.mark.parametrize("chunk", [1, 3, 2**20])
def test_context_document_and_title_lengths_in_chunks(small_index: Index, chunk: int,
                                                      monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(layout_module, "CHUNK", chunk)
    monkeypatch.setattr(layout_module, "compiled", lambda: None)  # numpy's pass, a chunk at a time (the compiled
    # one: tests/models/test_bm25f_fields.py)
    index = Index.load(small_index.path)
    every = np.arange(index.N)
    assert layout(index).first.take(every).dtype == np.int32 and len(layout(index).end.take(every)) == index.N
    for window in range(4):
        context, documents, titles = by_loop(index, window)
        assert np.array_equal(context_len(index, window, every), context), window
        assert np.array_equal(doc_len(index), documents) and np.array_equal(title_len(index, every), titles)


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
