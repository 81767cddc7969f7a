"""The entity support engine on a corpus small enough to compute every set and score by hand."""

from __future__ import annotations

import json
import math

import numpy as np
import pytest

from sentret_core import Index
from sentret_core.errors import SentretError
from sentret_core.support.context import QueryContext
from sentret_core.support.engine import support
from sentret_core.support.entity_position import position_scores
from sentret_core.support.entity_stats import entity_stats
from tests.conftest import build_from_texts

DOCS = [
    {
        "id": "a",
        "title": "Alpha",
        "text": "Paris is the capital of France. The river Seine flows through Paris. "
        "Tourists love the museums. Napoleon was crowned in Paris in 1804.",
    },
    {
        "id": "b",
        "title": "Beta",
        "text": "Berlin is the capital of Germany. Paris and Berlin signed a treaty.",
    },
]
PARIS, FRANCE, NAPOLEON, YEAR, BERLIN, GERMANY = range(6)
N = 6


@pytest.fixture(scope="module")
def index(tmp_path_factory: pytest.TempPathFactory) -> Index:
    built = build_from_texts(tmp_path_factory.mktemp("support"), DOCS)
    # Preconditions, read off the sentences (en_core_web_sm 3.8.0's NER; "Seine" is missed).
    assert list(zip(built.entities.text, built.entities.label, built.entities.sf)) == [
        ("Paris", "GPE", 4), ("France", "GPE", 1), ("Napoleon", "PERSON", 1),
        ("1804", "DATE", 1), ("Berlin", "GPE", 2), ("Germany", "GPE", 1),
    ]
    return built


def test_sets_by_hand(index: Index) -> None:
    ctx = QueryContext.of(index, "capital museums", ranker="tfisf.v1", k=1000)
    # "capital" is in s0 and s4, "museums" in s2
    assert sorted(ctx.top) == [0, 2, 4]
    # ±2 neighbours inside each document: s0 → 0,1,2; s2 → 0..3; s4 → 4,5 (s5 is in another document than s3)
    assert list(ctx.context) == [0, 1, 2, 3, 4, 5]
    assert sorted(QueryContext.of(index, "capital museums", ranker="tfisf.v1", k=2).top.tolist()) != [0, 2, 4]
    assert len(QueryContext.of(index, "capital museums", ranker="tfisf.v1", k=2).top) == 2


def test_entity_scores_against_the_formulas(index: Index) -> None:
    stats = entity_stats(index, np.array([0, 2, 4]))
    assert list(stats.ids) == [PARIS, FRANCE, BERLIN, GERMANY]
    assert list(stats.frequency) == [1, 1, 1, 1]
    sf = {PARIS: 4, FRANCE: 1, BERLIN: 2, GERMANY: 1}
    for e, rarity, comb, kld in zip(stats.ids, stats.rarity, stats.combination, stats.kld):
        assert rarity == pytest.approx(math.log(N / sf[e]))  # eq. 10
        assert comb == pytest.approx(1 * math.log(N / sf[e]))  # eq. 11
        assert kld == pytest.approx((1 / 3) * math.log((1 / 3) / (sf[e] / N)))  # eqs. 12-13
    # Paris is more common in the corpus than in S_q: negative KLD; Berlin exactly as common: 0
    assert stats.kld[0] == pytest.approx((1 / 3) * math.log(0.5)) and stats.kld[2] == pytest.approx(0.0)


def test_entity_ranking_and_context_frequency(index: Index) -> None:
    result = support(index, "capital museums", ranker="tfisf.v1", models=("tfisf.v1",), entity_score="kld")
    ranked = [(e.entity.text, e.entity.rank) for e in result.entities]
    # France and Germany tie at (1/3)·log 2, broken by frequency (equal) then entity id
    assert ranked == [("France", 1), ("Germany", 2), ("Berlin", 3), ("Paris", 4)]
    paris = result.entities[3].entity
    assert paris.frequency == 1 and paris.context_frequency == 4  # Ŝ_qe = {s0, s1, s3, s5}
    assert paris.score == pytest.approx((1 / 3) * math.log(0.5))
    assert result.n_top == 3 and result.n_context == 6
    by_frequency = support(index, "capital museums", ranker="tfisf.v1", models=("tfisf.v1",),
                           entity_score="rarity")
    assert [e.entity.text for e in by_frequency.entities][-1] == "Paris"  # log(6/4) is the smallest rarity


def test_eq5_support_is_the_model_score_over_its_own_top_k(index: Index) -> None:
    result = support(index, "capital museums", ranker="tfisf.v1", models=("tfisf.v1",), entities=[PARIS])
    (paris,) = result.entities
    (only,) = paris.sentences["tfisf.v1"]
    assert only.sentence == 0 and paris.candidates["tfisf.v1"] == 1  # S_qe = S_q ∩ {0, 1, 3, 5}
    # TF-ISF: log(c(t,q)+1)·log(c(t,s)+1)·log((N+1)/(0.5+sf(t))), "capital" with sf = 2
    assert only.score == pytest.approx(math.log(2) * math.log(2) * math.log(7 / 2.5))
    assert only.title == "Alpha" and only.text == "Paris is the capital of France."
    assert only.term_spans == ((13, 20),) and only.entity_spans == ((0, 5),)
    assert [(c.sentence, c.offset) for c in only.context] == [(1, 1), (2, 2)]


def test_eq7_sum_and_average_aggregation(index: Index) -> None:
    ctx = QueryContext.of(index, "capital museums", ranker="tfisf.v1", k=1000)
    third = (1 / 3) * math.log(0.5)  # KLD of Paris; France +(1/3)·log 2; Berlin 0; others outside S_q: 0
    ids, summed = ctx.candidates(PARIS, "sum-kld")
    assert list(ids) == [0, 1, 3, 5]
    assert summed == pytest.approx([third + (1 / 3) * math.log(2), third, third, third + 0.0])
    _, averaged = ctx.candidates(PARIS, "avg-kld")
    assert averaged == pytest.approx([0.0 / 2, third / 1, third / 3, third / 2])
    _, rarity = ctx.candidates(PARIS, "sum-rarity")  # query-independent: every entity counts
    assert rarity[2] == pytest.approx(math.log(6 / 4) + math.log(6) + math.log(6))  # Paris, Napoleon, 1804
    _, freq = ctx.candidates(PARIS, "sum-frequency")
    assert list(freq) == [2, 1, 1, 2]  # Paris, France | Paris | Paris (+ 0, 0) | Paris, Berlin


def test_eq8_position_scorer(index: Index) -> None:
    # s0 [paris capital france]: pos_q = 2 ("capital"), pos_e = 1 → 3 - 2 = 1
    # s1 [river seine flows paris]: pos_q = 0, pos_e = 4 → 0
    # s3 [napoleon crowned paris 1804]: pos_q = 0, pos_e = 3 → 1
    # s5 [paris berlin signed treaty]: pos_q = 0, pos_e = 1 → 3
    scores = position_scores(index, np.array([0, 1, 3, 5]), ["capital", "museums"], PARIS)
    assert list(scores) == [1, 0, 1, 3]
    # "crowned" is term 2 of s3; Paris ends after term 3: 4 - max(2, 3) = 1
    assert list(position_scores(index, np.array([3]), ["crowned"], PARIS)) == [1]
    ctx = QueryContext.of(index, "capital museums", ranker="tfisf.v1", k=1000)
    ids, ranked = ctx.ranked_candidates(PARIS, "position")
    assert list(ids) == [0] and list(ranked) == [1]  # over S_qe = S_q ∩ {0, 1, 3, 5}
    ctx = QueryContext.of(index, "paris", ranker="tfisf.v1", k=1000)  # S_q = every Paris sentence
    ids, ranked = ctx.ranked_candidates(PARIS, "position")
    # pos_q = pos_e for each: s0 3-1, s1 4-4, s3 4-3, s5 4-1; ties by id
    assert list(ids) == [5, 0, 3, 1] and list(ranked) == [3, 2, 1, 0]


def test_context_never_crosses_documents(index: Index) -> None:
    # brute force: s' is a neighbour of s iff |s - s'| <= 2 and both are in the same document
    doc = np.asarray(index.sent_doc)
    for i in range(N):
        expected = [j for j in range(N) if abs(i - j) <= 2 and doc[j] == doc[i]]
        assert index.neighbours(i, 2).tolist() == expected
    every = np.unique(np.concatenate([index.neighbours(i, 2) for i in range(N)]))
    assert index.neighbourhood(np.arange(N), 2).tolist() == every.tolist()
    result = support(index, "capital", ranker="tfisf.v1", models=("tfisf.v1",), entity_labels=["GPE"])
    for es in result.entities:
        for s in es.sentences["tfisf.v1"]:
            assert all(index.sent_doc[c.sentence] == s.document for c in s.context)


def test_entity_without_candidates_gets_an_empty_list(index: Index) -> None:
    result = support(index, "capital museums", ranker="tfisf.v1", models=("tfisf.v1", "position", "sum-kld"),
                     entities=[NAPOLEON])
    (napoleon,) = result.entities
    assert napoleon.sentences["tfisf.v1"] == ()  # s3 is not in S_q
    assert napoleon.sentences["position"] == ()
    assert [s.sentence for s in napoleon.sentences["sum-kld"]] == [3]  # but it is in Ŝ_q
    assert napoleon.entity.frequency == 0 and napoleon.entity.context_frequency == 1


def test_label_filter_and_clear_errors(index: Index) -> None:
    result = support(
        index, "capital museums", ranker="tfisf.v1", models=("tfisf.v1",), entity_labels=["PERSON"]
    )
    assert result.entities == () and result.reason
    with pytest.raises(SentretError, match="unknown entity label"):
        support(index, "capital", entity_labels=["PLANET"])
    with pytest.raises(SentretError, match="no-such-model"):
        support(index, "capital", models=("no-such-model",))
    with pytest.raises(SentretError, match="unknown entity score"):
        support(index, "capital", entity_score="fame")
    with pytest.raises(SentretError, match="k must be"):
        support(index, "capital", k=0)


def test_empty_query_gives_a_reason_not_an_error(index: Index) -> None:
    result = support(index, "the of and", models=("tfisf.v1",))
    assert result.entities == () and "stop words" in (result.reason or "")


def test_result_serialises(index: Index) -> None:
    result = support(index, "capital museums", ranker="tfisf.v1", models=("tfisf.v1", "bm25f.v1", "sum-kld"))
    data = json.loads(result.to_json())
    assert data["entities"][0]["entity"]["text"] == "France"
    frame = result.to_frame()
    assert set(frame["model"]) <= {"tfisf.v1", "bm25f.v1", "sum-kld"} and len(frame) > 0
    assert {"entity", "label", "model", "rank", "sentence", "score", "text"} <= set(frame.columns)


def test_default_request_on_the_small_corpus(small_index: Index) -> None:
    result = support(small_index, "Spanish Civil War")
    assert result.models == ("bm25f.v1", "lm-2si.v1", "tfisf.v1")
    names = [e.entity.text for e in result.entities]
    assert "Francisco Franco" in names
    assert all(e.entity.label not in {"CARDINAL", "ORDINAL"} for e in result.entities)
