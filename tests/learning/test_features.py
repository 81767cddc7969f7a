"""Learning-to-rank features against hand computations on a tiny index."""

from __future__ import annotations

import math
from pathlib import Path

import numpy as np
import pytest

from sentret_core.index.reader import Index
from sentret_core.learning.features import ENTITY, FIXED, feature_matrix, feature_names
from sentret_core.models import prepare, score
from sentret_core.models.core.query import expected_labels, normalise, question_markers
from tests.conftest import build_from_texts

DOCS = [
    {"id": "paris", "title": "Paris",
     "text": "Paris is the capital of France. The city was founded in 1889. Paris has many museums."},
    {"id": "berlin", "title": "Berlin",
     "text": "Berlin is the capital of Germany. Trains run from Berlin to Paris every day."},
]


@pytest.fixture(scope="module")
def tiny(tmp_path_factory: pytest.TempPathFactory) -> Index:
    return build_from_texts(tmp_path_factory.mktemp("ltr"), DOCS)


def test_question_words_become_markers_and_never_terms(tiny: Index) -> None:
    assert question_markers("When was it founded? Who, whom and how much") == ["?when", "?who", "?how-many"]
    assert question_markers("What year did it open") == ["?when"]
    assert question_markers("What county is it in? Which states border it?") == ["?where"]
    assert question_markers("How old is he and how long did he live") == ["?how-old", "?how-long"]
    assert question_markers("what is the state of it, how often") == []  # "state" after "the": no question
    assert expected_labels(("?how-long",)) == {"DATE", "TIME", "QUANTITY"}
    terms = normalise(tiny, "When was Paris founded?")
    assert terms == ("paris", "founded", "?when") and terms.text == "When was Paris founded?"
    q = prepare(tiny, terms)
    assert q.terms == ("paris", "founded") and q.asks == ("?when",) and q.oov == ()
    assert expected_labels(q.asks) == {"DATE", "TIME"}
    assert prepare(tiny, "who?").reason is not None  # a question word alone has no terms to match


def test_fixed_features_equal_a_hand_computation(tiny: Index) -> None:
    # sentences: 0 "Paris is the capital of France." 1 "The city was founded in 1889." 2 "Paris has many
    # museums." 3 "Berlin is the capital of Germany." 4 "Trains run from Berlin to Paris every day."
    assert tiny.N == 5
    q = prepare(tiny, "When was Paris founded?")
    ids = np.arange(5)
    X = feature_matrix(tiny, q, ids, [])
    assert feature_names([]) == (*FIXED, *ENTITY)
    col = {name: X[:, j] for j, name in enumerate(FIXED)}
    assert col["position"].tolist() == [0, 1, 2, 0, 1]
    assert col["inv_position"].tolist() == [1, 1 / 2, 1 / 3, 1, 1 / 2]
    assert col["first"].tolist() == [1, 0, 0, 1, 0]
    assert np.allclose(col["length"], np.log1p(tiny.sent_len))
    # paris is in sentences 0, 2, 4 (sf 3), founded in 1 (sf 1): idf = log(5/3), log(5/1)
    idf_paris, idf_founded = math.log(5 / 3), math.log(5)
    assert col["coverage"].tolist() == [0.5, 0.5, 0.5, 0.0, 0.5]
    share = [idf_paris, idf_founded, idf_paris, 0.0, idf_paris]
    assert np.allclose(col["idf_overlap"], np.array(share) / (idf_paris + idf_founded))
    assert col["title_match"].tolist() == [0.5, 0.5, 0.5, 0.0, 0.0]  # "Paris" is the first title
    # "when" asks for a DATE: only sentence 1 ("in 1889") mentions one
    assert col["answer_type"].tolist() == [0, 1, 0, 0, 0]
    assert np.array_equal(col["entities"], np.diff(tiny.G.indptr).astype(float))
    assert (col["top_entities"] <= col["entities"]).all()
    assert X[:, len(FIXED):].sum() == 0  # no entity given: the entity features are 0


def test_entity_features_equal_a_hand_computation(tiny: Index) -> None:
    # terms (stop words removed; |s| counts them): 0 [paris capital france] 2 [paris museums]
    # 3 [berlin capital germany]; entities: 0 Paris (in 0, 2, 4), 1 France, 2 1889, 3 Berlin, 4 Germany
    q = prepare(tiny, "Paris capital")
    ids = np.array([0, 2, 3])
    X = feature_matrix(tiny, q, ids, [], entity=0)
    col = {name: X[:, j] for j, name in enumerate(feature_names([]))}
    # eq. 8, |s| - max(pos_q, pos_e): s0 3 - max(2 "capital", 1 "paris") = 1; s2 2 - max(1, 1) = 1;
    # s3 does not mention Paris: 0
    assert col["e:position"].tolist() == [1, 1, 0]
    # C's entities are Paris, France, Berlin, Germany: all four among its 10 best; besides Paris,
    # s0 mentions France, s2 nothing, s3 Berlin and Germany
    assert col["e:other_top"].tolist() == [1, 0, 2]
    # with C as S_q: |S_qe| = 2 of 3, P(e|θ_S) = 3/5
    assert col["e:frequency"].tolist() == [2, 2, 2]
    assert np.allclose(col["e:kld"], 2 / 3 * math.log((2 / 3) / (3 / 5)))
    assert np.allclose(col["e:rarity"], math.log(5 / 3))
    # an entity outside C (1889, only in sentence 1): frequency and KLD 0, rarity log(5/1)
    Y = feature_matrix(tiny, q, ids, [], entity=2)
    other = {name: Y[:, j] for j, name in enumerate(feature_names([]))}
    assert other["e:position"].tolist() == [0, 0, 0] and other["e:other_top"].tolist() == [2, 1, 2]
    assert other["e:frequency"].tolist() == [0, 0, 0] and other["e:kld"].tolist() == [0, 0, 0]
    assert np.allclose(other["e:rarity"], math.log(5))


def test_scorer_features_are_min_max_and_inverse_ranks_over_the_set(tiny: Index) -> None:
    q = prepare(tiny, "Paris capital")
    found = score(tiny, "Paris capital", "bm25.v1")
    ids = np.arange(5)
    X = feature_matrix(tiny, q, ids, ["bm25.v1"])
    values = dict(zip(found.ids.tolist(), found.scores.tolist()))
    matched = [values[s] for s in sorted(values)]
    low, high = min(matched), max(matched)
    for s in range(5):
        if s not in values:  # no query term: 0 in all three
            assert X[s, :3].tolist() == [0, 0, 0]
            continue
        v = values[s]
        better = sum(other > v for other in values.values())
        same_doc_better = sum(o > v for t, o in values.items() if tiny.sent_doc[t] == tiny.sent_doc[s])
        assert X[s, 0] == pytest.approx((v - low) / (high - low))
        assert X[s, 1] == pytest.approx(1 / (1 + better))
        assert X[s, 2] == pytest.approx(1 / (1 + same_doc_better))


def test_features_of_an_empty_set_and_a_termless_query(tiny: Index, tmp_path: Path) -> None:
    q = prepare(tiny, "Paris")
    empty = feature_matrix(tiny, q, np.zeros(0, dtype=np.int64), ["bm25.v1"])
    assert empty.shape == (0, len(feature_names(["bm25.v1"])))
    none = prepare(tiny, "the of")
    X = feature_matrix(tiny, none, np.arange(5), ["bm25.v1"])
    assert np.isfinite(X).all() and X[:, :3].sum() == 0
