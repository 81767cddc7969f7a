"""BM25F's per-term fields (models.postings.term_fields) against the corpus-wide matrices they replace."""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path

import numpy as np
import pytest
import scipy.sparse as sp

from sentret_core import Index
from sentret_core.models import score
from sentret_core.models.arrays import postings as postings_module
from sentret_core.models.arrays import ranges, vectors
from sentret_core.models.arrays.postings import Postings, field_postings, postings
from sentret_core.models.bm25 import sums as bm25  # where the BM25F scorer reads its fields
from tests.conftest import build_from_texts
from tests.models.matrices import chunked_mean, sentence_doc_matrix, window_matrix

WORDS = ["river", "bridge", "city", "market", "harbour", "castle", "garden", "forest", "meadow", "valley", "tower"]


def random_docs(seed: int, n_docs: int) -> list[dict[str, str]]:
    """Documents of 1-7 sentences over WORDS (skewed), titles over WORDS too, some words repeated."""
    rng = np.random.default_rng(seed)
    p = 1.0 / np.arange(1, len(WORDS) + 1)
    p /= p.sum()
    docs = []
    for d in range(n_docs):
        sentences = []
        for _ in range(rng.integers(1, 8)):
            words = rng.choice(WORDS, size=rng.integers(1, 6), p=p)
            sentences.append("The " + " and ".join(words) + ".")
        title = " ".join(rng.choice(WORDS, size=rng.integers(1, 3)).tolist()).title()
        docs.append({"id": f"d{d}", "title": title, "text": " ".join(sentences)})
    docs.append({"id": "lone", "title": "Lighthouse", "text": "The river."})  # a title-only term
    return docs


@pytest.fixture(scope="module")
def indexes(small_index: Index, tmp_path_factory: pytest.TempPathFactory) -> list[Index]:
    built = build_from_texts(Path(tmp_path_factory.mktemp("fields")), random_docs(7, 40))
    return [small_index, built]


def reference(index: Index, window: int) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """The corpus-wide construction: X, W·X and Sᵀ·T (sentence_doc.T @ title_X) on one CSC pattern."""
    title = sentence_doc_matrix(index).T @ index.title_X
    parts = []
    for matrix in (index.X, window_matrix(index, window) @ index.X, title):
        csc = sp.csc_matrix(matrix, dtype=np.float64)
        csc.sum_duplicates()
        csc.eliminate_zeros()
        csc.sort_indices()
        parts.append(csc)
    pattern = sp.csc_matrix(abs(parts[0]) + abs(parts[1]) + abs(parts[2]))
    pattern.sum_duplicates()
    pattern.sort_indices()
    values = np.zeros((pattern.nnz, 3), dtype=np.float32)
    for t in range(pattern.shape[1]):
        lo, hi = pattern.indptr[t], pattern.indptr[t + 1]
        rows = pattern.indices[lo:hi]
        for f, part in enumerate(parts):
            column = part[:, t].toarray().ravel()
            values[lo:hi, f] = column[rows]
    return np.asarray(pattern.indptr), np.asarray(pattern.indices, dtype=np.int32), values


class Reference:
    """The old FieldPostings: one slice of the corpus-wide arrays per term."""

    def __init__(self, index: Index, window: int) -> None:
        self.indptr, self.rows, self.counts = reference(index, window)

    def __call__(self, term: int) -> tuple[np.ndarray, np.ndarray]:
        lo, hi = self.indptr[term], self.indptr[term + 1]
        return self.rows[lo:hi], self.counts[lo:hi]

    def weighted(self, term: int, key: object, weigh: Callable[[np.ndarray, np.ndarray], np.ndarray],
                 ) -> tuple[np.ndarray, np.ndarray]:
        rows, counts = self(term)
        return rows, weigh(rows, counts)


@pytest.mark.parametrize("compiled", [True, False])
@pytest.mark.parametrize("window", [1, 2, 3])
@pytest.mark.parametrize(("dense_share", "range_size"), [(0, 2**21), (16, 2**21), (10**9, 3), (10**9, 1)])
def test_every_term_matches_the_full_matrices(
    indexes: list[Index], window: int, dense_share: int, range_size: int, compiled: bool,
    monkeypatch: pytest.MonkeyPatch
) -> None:
    """Built by the compiled pass or a sort (dense_share 0), or, for a term in more than 1/dense_share of the
    sentences, from arrays over ranges of documents of about range_size sentences."""
    monkeypatch.setattr(postings_module, "DENSE_SHARE", dense_share)
    monkeypatch.setattr(ranges, "RANGE", range_size)
    if not compiled:
        monkeypatch.setattr(vectors, "_sorted", None)
    for index in indexes:
        ref = Reference(index, window)
        for t in range(index.V):
            rows, counts = postings_module.term_fields(index, window, t)
            want_rows, want_counts = ref(t)
            assert rows.dtype == np.int32 and counts.dtype == np.float32 and counts.shape == (len(rows), 3)
            assert np.array_equal(rows, want_rows), (index.vocab[t], window)
            assert np.array_equal(counts, want_counts), (index.vocab[t], window)


def test_a_title_only_term_has_title_postings(indexes: list[Index]) -> None:
    index = indexes[1]
    title_only = [t for t in range(index.V) if index.sf[t] == 0]
    assert title_only, "the small corpus has a title-only term"
    rows, counts = field_postings(index, 2)(title_only[0])
    assert len(rows) and np.all(counts[:, :2] == 0) and np.all(counts[:, 2] > 0)


@pytest.mark.parametrize(
    "params",
    [{}, {"window": 1}, {"w_context": 0.0}, {"w_title": 0.0}, {"k1": 1.2, "b": 0.75, "k3": 5.0, "idf": "lucene"}],
)
def test_bm25f_scores_are_unchanged(indexes: list[Index], params: dict[str, object], monkeypatch) -> None:  # type: ignore[no-untyped-def]
    for index in indexes:
        queries = [index.vocab[t] for t in range(index.V)] + [" ".join(index.vocab[: min(6, index.V)])]
        new = [score(index, [q] if " " not in q else q.split(), "bm25f.v1", **params) for q in queries]
        window = int(params.get("window", 2))  # type: ignore[call-overload]
        ref = Reference(index, window)
        monkeypatch.setattr(bm25, "field_postings", lambda _index, _window, ref=ref: ref)
        for q, got in zip(queries, new):
            want = score(index, [q] if " " not in q else q.split(), "bm25f.v1", **params)
            assert np.array_equal(got.ids, want.ids) and np.array_equal(got.scores, want.scores), q
        monkeypatch.undo()


def test_sentence_postings_slice_xt_as_the_old_copy_did(indexes: list[Index]) -> None:
    for index in indexes:
        old = Postings.of(index.XT)
        new = postings(index)
        for t in range(index.V):
            (r, v), (wr, wv) = new(t), old(t)
            assert r.dtype == wr.dtype and v.dtype == wv.dtype
            assert np.array_equal(r, wr) and np.array_equal(v, wv)
            targets = np.arange(0, index.N, 2, dtype=np.int32)
            hit, val = new.lookup(t, targets)
            keep = np.isin(wr, targets)
            assert np.array_equal(hit, wr[keep]) and np.array_equal(val, wv[keep])


def test_the_kept_fields_stay_within_their_byte_budget(indexes: list[Index], monkeypatch: pytest.MonkeyPatch) -> None:
    from sentret_core.models.arrays import postings as module

    index = indexes[1]
    monkeypatch.setattr(module, "FIELD_BYTES", 2000)
    index.cache.drop("models.fields")
    ref = Reference(index, 2)
    fits = 0
    for t in [*range(index.V), *range(index.V)]:
        rows, counts = field_postings(index, 2)(t)
        want_rows, want_counts = ref(t)
        assert np.array_equal(rows, want_rows) and np.array_equal(counts, want_counts)
        kept = index.cache.held("models.fields")
        alone = want_rows.nbytes + want_counts.nbytes
        assert (kept[-1:] == [(2, t)]) == (alone <= 2000)  # the term just asked for is the newest, if it fits
        size = sum(r.nbytes + c.nbytes for r, c in (ref(term) for _, term in kept))  # recomputed by the reference
        assert size == index.cache.bytes_kept("models.fields") and size <= 2000
        fits += alone <= 2000
    assert 0 < fits < 2 * index.V  # some terms' fields fit the budget, some do not
    index.cache.drop("models.fields")


@pytest.mark.parametrize("compiled", [True, False])
@pytest.mark.parametrize("window", [0, 1, 2, 4])
def test_context_lengths_equal_the_window_matrix_product(
    indexes: list[Index], window: int, compiled: bool, monkeypatch: pytest.MonkeyPatch
) -> None:
    """|ctx_w(s)| by the compiled pass and by numpy's gathers equal the window matrix times the lengths; their
    mean, summed as integers, is numpy's mean and the float sum a chunk at a time (as before) bit for bit."""
    from sentret_core.models.arrays import layout as module

    if compiled and vectors.compiled() is None:
        pytest.skip("the extension is not built (no C compiler)")
    if not compiled:
        monkeypatch.setattr(module, "compiled", lambda: None)
    for index in indexes:
        index.cache.drop("models.context_len")
        index.cache.drop(f"models.bm25.mean_len/context/{window}")
        reference = np.asarray(window_matrix(index, window) @ module.layout(index).sent_len, dtype=np.float64)
        assert np.array_equal(module.context_len(index, window, np.arange(index.N)), reference)
        picked = np.array([index.N - 1, 0, 3, 3])  # any order, repeats
        assert np.array_equal(module.context_len(index, window, picked), reference[picked])
        means = {chunked_mean(reference, chunk) for chunk in (1, 7, 2**22)} | {reference.mean()}
        assert means == {module.mean_context_len(index, window)}


def test_title_lengths_and_their_mean_equal_scipys_row_sums_and_the_chunked_mean(indexes: list[Index]) -> None:
    """|title(d)| from prefix sums equals scipy's row sums; its mean over sentences, summed over documents as
    integers, equals numpy's mean over sentences and the float sum a chunk at a time (as before) bit for bit."""
    from sentret_core.models.arrays import layout as module

    for index in indexes:
        index.cache.drop("models.title_len")
        index.cache.drop("models.bm25.mean_len/title")
        by_scipy = np.asarray(index.title_X.sum(axis=1)).ravel().astype(np.float64)
        assert np.array_equal(module.title_lengths(index), by_scipy)
        of_sentence = by_scipy[module.layout(index).sent_doc]
        means = {chunked_mean(of_sentence, chunk) for chunk in (1, 7, 2**22)} | {of_sentence.mean()}
        assert means == {module.mean_title_len(index)}


def test_a_terms_kept_pseudo_frequency_is_its_own_and_stays_within_the_budget(
    indexes: list[Index], monkeypatch: pytest.MonkeyPatch
) -> None:
    """x̃ over a term's whole fields is kept per term and per setting (its key): two settings in turn, each term
    asked for twice, always give the x̃ computed afresh from the reference fields; what is kept fits the budget."""
    from sentret_core.models.arrays import postings as module
    from sentret_core.models.bm25.formulas import BM25FParams
    from sentret_core.models.bm25.scorer import pseudo_frequency

    index = indexes[1]
    monkeypatch.setattr(module, "FIELD_BYTES", 1000)
    index.cache.drop("models.fields.weighted")
    ref = Reference(index, 2)
    settings = [pseudo_frequency(index, BM25FParams()), pseudo_frequency(index, BM25FParams(b=0.75, w_title=0.5))]
    assert settings[0].key != settings[1].key
    fits = 0
    for x_of in [*settings, *settings]:
        for t in range(index.V):
            rows, x = field_postings(index, 2).weighted(t, x_of.key, x_of)
            want_rows, want_counts = ref(t)
            assert np.array_equal(rows, want_rows) and np.array_equal(x, x_of(want_rows, want_counts))
            kept = index.cache.held("models.fields.weighted")
            assert (kept[-1:] == [(2, t, x_of.key)]) == (want_rows.nbytes + x.nbytes <= 1000)  # the newest, if it fits
            assert index.cache.bytes_kept("models.fields.weighted") <= 1000
            fits += kept[-1:] == [(2, t, x_of.key)]
    assert 0 < fits < 4 * index.V
