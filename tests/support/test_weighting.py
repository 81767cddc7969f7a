"""Weighted entity statistics (sentret_core.support.weighting) on a corpus small enough to weigh by hand."""

from __future__ import annotations

import math

import numpy as np
import pytest
from hypothesis import given
from hypothesis import strategies as st

from sentret_core import Index
from sentret_core.errors import ArgumentTypeError, SentretError
from sentret_core.support.context import QueryContext
from sentret_core.support.engine import support
from sentret_core.support.entity_stats import entity_stats
from sentret_core.support.weighting import ENTITY_WEIGHTINGS, sentence_weights, weighted_entity_stats
from tests.conftest import build_from_texts

DOCS = [
    {"id": "spain", "title": "Spain", "text": "Franco won the civil war in Spain. Franco ruled Spain until 1975."},
    {
        "id": "usa",
        "title": "United States",
        "text": "Lincoln led the Union during the war. Lincoln was born in Kentucky. Lincoln read law in Illinois.",
    },
    {"id": "europe", "title": "Europe", "text": "Paris hosted a peace conference. Berlin was divided after the war."},
]
FRANCO, SPAIN, YEAR, LINCOLN, KENTUCKY, ILLINOIS, PARIS, BERLIN = range(8)
N = 7
Q = "civil war"
# TF-ISF (Fernández et al., Inf. Retr. 2011, §3.5): log(c(t,q)+1)·log(c(t,s)+1)·log((N+1)/(0.5+sf(t)));
# "civil" sf 1, "war" sf 3
L2 = math.log(2) ** 2
F_CIVIL, F_WAR = L2 * math.log(8 / 1.5), L2 * math.log(8 / 3.5)
# S_q in rank order: s0 (civil, war), then s2 and s6 (war only) tied, by ascending id
TOP, SCORES = [0, 2, 6], [F_CIVIL + F_WAR, F_WAR, F_WAR]


@pytest.fixture(scope="module")
def index(tmp_path_factory: pytest.TempPathFactory) -> Index:
    built = build_from_texts(tmp_path_factory.mktemp("weighting"), DOCS)
    # Preconditions, read off the sentences (en_core_web_sm 3.8.0's NER: "Union" is missed, Berlin a PERSON)
    assert list(zip(built.entities.text, built.entities.sf)) == [
        ("Franco", 2), ("Spain", 2), ("1975", 1), ("Lincoln", 3), ("Kentucky", 1), ("Illinois", 1),
        ("Paris", 1), ("Berlin", 1),
    ]
    assert [built.G[s].indices.tolist() for s in TOP] == [[FRANCO, SPAIN], [LINCOLN], [BERLIN]]
    return built


def kld(p: float, sf: int) -> float:
    return p * math.log(p / (sf / N)) if p > 0 else 0.0


def test_the_weights_by_hand(index: Index) -> None:
    ctx = QueryContext.of(index, Q, ranker="tfisf.v1", k=3, entity_weighting="rank")
    assert ctx.top.tolist() == TOP
    assert ctx.weights is not None and ctx.weights.tolist() == pytest.approx([1, 1 / math.log2(3), 1 / 2])
    # score: min-max over S_q, (F_i - F_3) / (F_1 - F_3): s0 → 1, s2 and s6 → 0
    score = QueryContext.of(index, Q, ranker="tfisf.v1", k=3, entity_weighting="score")
    assert score.weights is not None and score.weights.tolist() == pytest.approx([1, 0, 0])
    assert QueryContext.of(index, Q, ranker="tfisf.v1", k=3).weights is None  # none: Blanco & Zaragoza's, no weights
    assert sentence_weights(np.array([-3.0, -3.0]), "score").tolist() == [1.0, 1.0]  # all tied: all count
    assert sentence_weights(np.array(SCORES), "none").tolist() == [1.0, 1.0, 1.0]
    assert sentence_weights(np.array([np.inf, 4.0, 2.0, -np.inf]), "score").tolist() == [1.0, 1.0, 0.0, 0.0]


def test_unweighted_drifts_and_rank_weighting_does_not(index: Index) -> None:
    # Unweighted (Blanco & Zaragoza, SIGIR 2010, §3.1): every entity is in one of 3 sentences,
    # P(e|θ_q) = 1/3; Berlin, rare in the corpus and in S_q only through "war", wins:
    # (1/3)·log((1/3)/(1/7)) > Franco's (1/3)·log((1/3)/(2/7))
    plain = support(index, Q, ranker="tfisf.v1", k=3, models=("tfisf.v1",))
    assert plain.entity_weighting == "none"
    assert [e.entity.text for e in plain.entities] == ["Berlin", "Franco", "Spain", "Lincoln"]
    assert plain.entities[0].entity.score == pytest.approx(kld(1 / 3, 1))
    # rank: w = (1, 1/log2 3, 1/2), W_q = 2.13093; W_Franco = W_Spain = 1, W_Lincoln = 0.63093, W_Berlin = 0.5
    w_q = 1 + 1 / math.log2(3) + 1 / 2
    ranked = support(index, Q, ranker="tfisf.v1", k=3, models=("tfisf.v1",), entity_weighting="rank")
    assert ranked.entity_weighting == "rank"
    by_text = {e.entity.text: e.entity for e in ranked.entities}
    assert [e.entity.text for e in ranked.entities] == ["Franco", "Spain", "Berlin", "Lincoln"]
    assert by_text["Franco"].kld == pytest.approx(kld(1 / w_q, 2))  # 0.46928 · log(0.46928 · 7/2) = 0.23286
    assert by_text["Berlin"].kld == pytest.approx(kld(0.5 / w_q, 1))  # 0.23464 · log(0.23464 · 7) = 0.11643
    assert by_text["Lincoln"].kld == pytest.approx(kld((1 / math.log2(3)) / w_q, 3))  # < 0
    # |S_qe| stays the count; the weighted count and the combination W_qe · log(N / sf) come with it
    assert by_text["Berlin"].frequency == 1 and by_text["Berlin"].weighted_frequency == pytest.approx(0.5)
    assert by_text["Lincoln"].combination == pytest.approx(math.log2(3) ** -1 * math.log(7 / 3))
    assert by_text["Franco"].rarity == pytest.approx(math.log(7 / 2))  # query-independent, as unweighted


def test_score_weighting_by_hand(index: Index) -> None:
    # w = (1, 0, 0): W_q = 1; Franco and Spain P = 1, KLD = log(7/2); Lincoln and Berlin weigh 0: KLD 0
    # (0·log 0 = 0), their ties broken by weighted frequency (0 both) then entity id
    result = support(index, Q, ranker="tfisf.v1", k=3, models=("tfisf.v1",), entity_weighting="score")
    assert [(e.entity.text, e.entity.score) for e in result.entities] == [
        ("Franco", pytest.approx(math.log(7 / 2))), ("Spain", pytest.approx(math.log(7 / 2))),
        ("Lincoln", 0.0), ("Berlin", 0.0),
    ]
    assert [e.entity.frequency for e in result.entities] == [1, 1, 1, 1]
    frequency = support(index, Q, ranker="tfisf.v1", k=3, models=("tfisf.v1",), entity_score="frequency",
                        entity_weighting="score")
    assert [e.entity.score for e in frequency.entities] == [1.0, 1.0, 0.0, 0.0]


def test_eq7_aggregates_the_weighted_scores(index: Index) -> None:
    ctx = QueryContext.of(index, Q, ranker="tfisf.v1", k=3, entity_weighting="rank")
    w_q = 1 + 1 / math.log2(3) + 1 / 2
    franco = spain = kld(1 / w_q, 2)
    ids, summed = ctx.candidates(FRANCO, "sum-kld")  # Ŝ_qe: s0 and its neighbour s1 (1975 is outside S_q: 0)
    assert ids.tolist() == [0, 1] and summed.tolist() == pytest.approx([franco + spain, franco + spain])


def test_eq7_average_of_an_entity_outside_the_context_is_empty(index: Index) -> None:
    # S_q = [s0], Ŝ_q = {s0, s1}: Kentucky (s3) has no candidate; the average once failed on numpy's
    # int64 bincount of nothing ("Cannot cast ufunc 'divide' output"), crashing `sentret eval` on avg-*
    for weighting in ("none", "rank"):
        ctx = QueryContext.of(index, Q, ranker="tfisf.v1", k=1, entity_weighting=weighting)
        for model in ("avg-kld", "sum-kld"):
            ids, values = ctx.candidates(KENTUCKY, model)
            assert ids.tolist() == [] and values.tolist() == [], model


def test_bad_weighting_is_one_clear_error(index: Index) -> None:
    with pytest.raises(SentretError, match="unknown entity weighting 'bm25'; choose one of none, rank, score"):
        support(index, Q, entity_weighting="bm25")
    with pytest.raises(ArgumentTypeError, match=r"^entity_weighting must be a string \(got None\)$"):
        QueryContext.of(index, Q, entity_weighting=None)  # type: ignore[arg-type]


def test_the_cli_option(index: Index, capsys: pytest.CaptureFixture[str]) -> None:
    from sentret_core.cli.main import main

    argv = ["support", str(index.path), Q, "--ranker", "tfisf.v1", "--k", "3", "--models", "tfisf.v1"]
    assert main([*argv, "--entity-weighting", "rank", "--top-entities", "1"]) == 0
    assert "1. Franco (PERSON)  kld 0.2329" in capsys.readouterr().out
    assert main([*argv, "--top-entities", "1"]) == 0
    assert "1. Berlin (PERSON)  kld 0.2824" in capsys.readouterr().out  # (1/3)·log(7/3)
    for weighting in ENTITY_WEIGHTINGS:  # the command offers every weighting the library has
        assert main([*argv, "--entity-weighting", weighting, "--top-entities", "1"]) == 0
    with pytest.raises(SystemExit) as exited:  # argparse's own check of the choices
        main([*argv, "--entity-weighting", "idf"])
    assert exited.value.code == 2
    assert "invalid choice: 'idf'" in capsys.readouterr().err


@given(
    top=st.lists(st.integers(0, N - 1), min_size=1, max_size=N, unique=True),
    weight=st.floats(0.01, 100, allow_nan=False),
)
def test_equal_weights_are_the_unweighted_statistics(index: Index, top: list[int], weight: float) -> None:
    # weights count relative to the largest, so any constant weight is Blanco & Zaragoza's statistics bit for bit
    plain = entity_stats(index, np.array(top))
    for weights in (np.ones(len(top)), np.full(len(top), weight)):
        same = weighted_entity_stats(index, np.array(top), weights)
        for name in ("ids", "frequency", "rarity", "combination", "kld"):
            assert getattr(same, name).tolist() == getattr(plain, name).tolist(), name
    tied = QueryContext.of(index, ["war"], ranker="tfisf.v1", k=len(top), entity_weighting="score")
    assert tied.weights is not None and set(tied.weights.tolist()) == {1.0}  # "war" alone: every score ties
    assert tied.stats.kld.tolist() == entity_stats(index, tied.top).kld.tolist()
