"""The per-sentence tables of models/arrays/layout.py, built a chunk of sentences at a time or from runs of
documents, against a loop over the sentences: the same numbers, bit for bit."""

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
    index = Index.load(small_index.path)
    assert layout(index).first.dtype == np.int32 and len(layout(index).end) == index.N
    for window in range(4):
        context, documents, titles = by_loop(index, window)
        assert np.array_equal(context_len(index, window), context), window
        assert np.array_equal(doc_len(index), documents) and np.array_equal(title_len(index), titles)
