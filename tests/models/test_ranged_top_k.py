"""BM25F's exhaustive top k taken range by range of documents (:mod:`sentret_core.models.arrays.ranges`), as it is
for a query with a term in millions of sentences: the same Scores as top_k(score(...)) bit for bit, and a
frequent term's fields never built for all its sentences at once."""

from __future__ import annotations

import itertools
from pathlib import Path
from unittest import mock

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from sentret_core import Index
from sentret_core.models import score, search, top_k
from sentret_core.models.arrays import postings as postings_module
from sentret_core.models.arrays import ranges
from sentret_core.models.arrays.layout import layout
from sentret_core.models.arrays.postings import term_fields
from tests.conftest import build_from_texts, examples
from tests.models.test_lm_pruning import TERMS as LM_TERMS
from tests.models.test_lm_pruning import model_and_params
from tests.models.test_pruning import BM25F_PARAMS, TERMS, same, zipf_docs


@pytest.fixture(scope="module")
def corpora(tmp_path_factory: pytest.TempPathFactory) -> list[Index]:
    root = Path(tmp_path_factory.mktemp("ranged"))
    return [build_from_texts(root, zipf_docs(seed, n), f"r{seed}") for seed, n in ((4, 40), (5, 90), (6, 12))]


@settings(derandomize=True, max_examples=examples(300), deadline=None)
@given(which=st.integers(0, 2), terms=TERMS, k=st.integers(0, 60), params=BM25F_PARAMS, size=st.integers(1, 40),
       frequent=st.sampled_from([-1, 3, 8, 20]))
def test_ranged_top_k_is_top_k_of_score(
    corpora: list[Index], which: int, terms: list[str], k: int, params: dict[str, object], size: int, frequent: int
) -> None:
    """A query with a term in more than ``frequent`` sentences goes range by range (ranges of ``size`` sentences
    cut at documents): such a term's fields are built per range, the others' sliced from their whole fields."""
    index = corpora[which]
    with mock.patch.object(ranges, "RANGE", size), mock.patch.object(ranges, "RANGE_FROM", frequent):
        got = search(index, terms, "bm25f.v1", k, **params)
    same(got, top_k(score(index, terms, "bm25f.v1", **params), k))


@settings(derandomize=True, max_examples=examples(300), deadline=None)
@given(which=st.integers(0, 2), terms=LM_TERMS, k=st.integers(0, 60), chosen=model_and_params(),
       size=st.integers(1, 40), frequent=st.sampled_from([-1, 8]))
def test_a_language_models_ranged_top_k_is_top_k_of_score(
    corpora: list[Index], which: int, terms: list[str], k: int, chosen: tuple[str, dict[str, object]], size: int,
    frequent: int,
) -> None:
    """Every LM (window or document context, with or without log p(d|s)) where MaxScore declines: its candidates
    (a frequent term's documents' sentences) scored range by range."""
    model, params = chosen
    index = corpora[which]
    with mock.patch.object(ranges, "RANGE", size), mock.patch.object(ranges, "RANGE_FROM", frequent):
        got = search(index, terms, model, k, **params)
    same(got, top_k(score(index, terms, model, **params), k))


def test_document_ranges_cover_every_sentence_and_cut_at_documents(corpora: list[Index]) -> None:
    for index in corpora:
        starts = set(layout(index).doc_first.tolist())
        for size in (1, 3, 7, index.N, 10 * index.N):
            with mock.patch.object(ranges, "RANGE", size):
                spans = ranges.document_ranges(index)
            assert spans[0][0] == 0 and spans[-1][1] == index.N
            assert all(hi == lo for (_, hi), (lo, _) in itertools.pairwise(spans))
            assert all(lo < hi and lo in starts for lo, hi in spans)
            if size == 1:  # every document is a range of its own
                assert len(spans) == index.D


@pytest.mark.parametrize("window", [1, 2, 3])
@pytest.mark.parametrize("dense_share", [0, 16, 10**9])  # never, a frequent term's, every term's built densely
def test_a_terms_fields_over_ranges_are_its_fields(corpora: list[Index], window: int, dense_share: int) -> None:
    index = corpora[1]
    with mock.patch.object(ranges, "RANGE", 5):
        spans = ranges.document_ranges(index)
    for term in range(len(index.vocab)):
        rows, counts = term_fields(index, window, term)
        with mock.patch.object(postings_module, "DENSE_SHARE", dense_share):
            parts = [term_fields(index, window, term, span) for span in spans]
        assert np.concatenate([r for r, _ in parts]).tobytes() == rows.tobytes()
        assert np.concatenate([c for _, c in parts]).tobytes() == counts.tobytes()


def test_a_frequent_term_is_never_built_whole(corpora: list[Index]) -> None:
    """With "river" above the threshold, its fields are built once per range and never for the whole index."""
    index = Index.load(corpora[1].path)  # nothing cached
    river = index.term_index["river"]
    whole: list[int] = []
    built = postings_module.term_fields

    def recording(i: Index, w: int, t: int, span: ranges.Span | None = None) -> tuple[np.ndarray, np.ndarray]:
        if span is None:
            whole.append(t)
        return built(i, w, t, span)

    threshold = int(index.sf[index.term_index["castle"]])
    with mock.patch.object(ranges, "RANGE", 10), mock.patch.object(ranges, "RANGE_FROM", threshold), \
            mock.patch.object(postings_module, "term_fields", recording):
        got = search(index, ["river", "castle"], "bm25f.v1", 50)
    assert river not in whole and index.term_index["castle"] in whole
    same(got, top_k(score(corpora[1], ["river", "castle"], "bm25f.v1"), 50))


def test_best_k_keeps_the_k_best_ties_by_position() -> None:
    scores = np.array([1.0, 3.0, 2.0, 3.0, 2.0, 2.0, 0.5])
    assert ranges.best_k(scores, 3).nonzero()[0].tolist() == [1, 2, 3]
    assert ranges.best_k(scores, 4).nonzero()[0].tolist() == [1, 2, 3, 4]
    assert ranges.best_k(scores, 0).nonzero()[0].tolist() == []
    assert ranges.best_k(scores, 9).all()
