"""The local models' counts c(t, l(s)) from sentence postings (models.arrays.local) against the corpus-wide
matrices they replace, written out sentence by sentence (tests/models/matrices.py)."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest
import scipy.sparse as sp

from sentret_core import Index
from sentret_core.models import score
from sentret_core.models.arrays.local import document_counts, document_sentences, local_counts, window_counts
from sentret_core.models.arrays.postings import postings
from sentret_core.models.lm import scoring
from tests.conftest import build_from_texts
from tests.models.matrices import sentence_doc_matrix, window_matrix
from tests.models.test_bm25f_fields import random_docs


@pytest.fixture(scope="module")
def indexes(small_index: Index, tmp_path_factory: pytest.TempPathFactory) -> list[Index]:
    built = build_from_texts(Path(tmp_path_factory.mktemp("local")), random_docs(11, 40))
    return [small_index, built]


def local_matrix(index: Index, context: str, window: int) -> sp.csc_matrix:
    """N×V: c(t, l(s)), the document's counts (Sᵀ·S·X) or the window's, s included ((W + I)·X)."""
    if context == "document":
        S = sentence_doc_matrix(index)
        M = S.T @ (S @ index.X)
    else:
        M = (window_matrix(index, window) + sp.identity(index.N, format="csr")) @ index.X
    return sp.csc_matrix(M, dtype=np.float64)


@pytest.mark.parametrize(("context", "window"), [("document", 1), ("window", 1), ("window", 2), ("window", 3)])
def test_local_counts_equal_the_matrix_product_at_every_sentence(indexes: list[Index], context: str,
                                                                 window: int) -> None:
    for index in indexes:
        M = local_matrix(index, context, window)
        every = np.arange(index.N)
        # any order, repeats and runs of one document's sentences split apart: runs are of consecutive ids only
        scattered = np.random.default_rng(3).integers(0, index.N, 3 * index.N)
        for t in range(index.V):
            want = M[:, [t]].toarray().ravel()
            assert np.array_equal(local_counts(index, postings(index), t, context, window, every), want)
            assert np.array_equal(local_counts(index, postings(index), t, context, window, scattered), want[scattered])


@pytest.mark.parametrize("window", [1, 2, 3])
def test_window_counts_are_the_nonzero_column_of_the_window_product(indexes: list[Index], window: int) -> None:
    for index in indexes:
        M = local_matrix(index, "window", window)
        for t in range(index.V):
            want = M[:, [t]].toarray().ravel()
            rows, counts = window_counts(index, postings(index), t, window)
            assert rows.dtype == np.int32 and np.array_equal(rows, np.flatnonzero(want))
            assert np.array_equal(counts, want[rows])


def test_document_counts_and_sentences(indexes: list[Index]) -> None:
    for index in indexes:
        Xd = (sentence_doc_matrix(index) @ index.X).tocsc()
        for t in range(index.V):
            want = Xd[:, [t]].toarray().ravel()
            docs, counts = document_counts(index, *postings(index)(t))
            assert np.array_equal(docs, np.flatnonzero(want)) and np.array_equal(counts, want[docs])
            in_docs = np.isin(np.asarray(index.sent_doc), docs)
            assert np.array_equal(document_sentences(index, docs), np.flatnonzero(in_docs))


def reference_log_pds(index: Index) -> np.ndarray:
    """Σ_{t∈s} c(t,s)·(log p(t|d) − log p(t)), sentence by sentence."""
    Xd = (sentence_doc_matrix(index) @ index.X).tocsr()
    doc_len = np.asarray(Xd.sum(axis=1)).ravel()
    p_t = np.asarray(index.cf, dtype=np.float64) / index.total_terms
    out = np.zeros(index.N)
    for s in range(index.N):
        d = int(index.sent_doc[s])
        lo, hi = index.X.indptr[s], index.X.indptr[s + 1]
        for t, c in zip(index.X.indices[lo:hi], index.X.data[lo:hi]):
            out[s] += c * (np.log(Xd[d, t] / doc_len[d]) - np.log(p_t[t]))
    return out


@pytest.mark.parametrize("chunk", [1, 3, 2**20])
def test_log_pds_in_chunks_of_documents(indexes: list[Index], chunk: int, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(scoring, "LOG_PDS_CHUNK", chunk)
    for index in indexes:
        index.cache.drop("models.lm.log_pds")
        got = scoring.log_pds(index)
        np.testing.assert_allclose(got, reference_log_pds(index), rtol=1e-12, atol=1e-12)
        index.cache.drop("models.lm.log_pds")
        monkeypatch.setattr(scoring, "LOG_PDS_CHUNK", 2**20)
        assert np.array_equal(got, scoring.log_pds(index))  # the chunks never change a bit
        index.cache.drop("models.lm.log_pds")
        monkeypatch.setattr(scoring, "LOG_PDS_CHUNK", chunk)


def test_no_language_model_keeps_anything_of_size_n_per_setting(indexes: list[Index]) -> None:
    index = indexes[1]
    """Before, each setting kept N×3 coefficients (8 settings), and the windows and documents N×V counts."""
    for lam in np.linspace(0.1, 0.9, 12):
        score(index, "river bridge", "lm-2si.v1", lam=float(lam), context="window", window=2)
        score(index, "river bridge", "lm-3mm.v1", lam=float(lam) / 2, gamma=0.3)
    held = [str(key) for key in index.cache.held()]
    assert not [key for key in held if key.startswith(("models.context/", "models.doc/", "models.lm.inv"))]
    assert index.cache.held("models.lm.coefficients") == []
    longest = int(np.max(index.sent_len))
    for key in index.cache.held("models.lm.by_length"):  # what is kept per setting: a table over |s|
        assert all(column.shape == (longest + 1,) for column in index.cache.get_lru("models.lm.by_length", key, list))
