"""Finite query-likelihood scores on a closed candidate set: every sentence, a query term in
it or not, has the smoothed likelihood of the papers' models (Fernández et al., Inf. Retr. 2011, eq. 2, 3,
11; Doko et al., IP&M 2015, eq. 7-8), never -inf; ``score``/``search`` keep scoring only the sentences that match."""

from __future__ import annotations

import math
from pathlib import Path

import numpy as np
import pytest

from sentret_core.errors import SentretError
from sentret_core.index.reader import Index
from sentret_core.models import explain, get_model, prepare, score
from tests.conftest import build_from_texts, train_default_artefacts

# d1: s0 "river flows sea", s1 empty (only stop words), s2 "salmon swim river", s3 "otters sleep";
# d2: s4 "sheep graze green hills", s5 "hills steep green". |C| = 3+0+3+2+4+3 = 15 terms;
# cf(river) = 2, cf(salmon) = 1, so p(river) = 2/15 and p(salmon) = 1/15.
DOCS = [
    {"id": "d1", "title": "Rivers",
     "text": "The river flows to the sea. And so it was. Salmon swim up the river. Otters sleep."},
    {"id": "d2", "title": "Hills", "text": "Sheep graze on green hills. The hills are steep and green."},
]
QUERY = "river river salmon"  # c(river, q) = 2, c(salmon, q) = 1
LENGTHS = [3, 0, 3, 2, 4, 3]
P_RIVER, P_SALMON = 2 / 15, 1 / 15
LMS = ("lm-jm.v1", "lm-dir.v1", "lm-3mm.v1", "lm-2s.v1", "lm-2si.v1", "lm-3mmpds.v1")


@pytest.fixture(scope="module")
def tiny(tmp_path_factory: pytest.TempPathFactory) -> Index:
    return build_from_texts(Path(tmp_path_factory.mktemp("finite")), DOCS)


def closed_set(index: Index, model: str, query: str = QUERY, **params: object) -> np.ndarray:
    """The model's scores of every sentence of the index taken as one closed candidate set."""
    spec = get_model(model)
    return spec.score_at(index, prepare(index, query), spec.resolve(params), np.arange(index.N))


def test_the_tiny_index_is_as_counted_by_hand(tiny: Index) -> None:
    assert tiny.N == 6 and tiny.sent_len.tolist() == LENGTHS
    river, salmon = tiny.term_ids(["river", "salmon"])
    assert tiny.X[:, river].sum() == 2 and tiny.X[:, salmon].sum() == 1 and tiny.X.sum() == 15


@pytest.mark.parametrize("lam", [0.5, 0.3])
def test_jm_no_match_is_the_collection_mass_alone(tiny: Index, lam: float) -> None:
    # p(t|θ_s) = (1-λ)·c(t,s)/|s| + λ·p(t): without the term, λ·p(t). score() returns only s0 and s2.
    assert score(tiny, QUERY, "lm-jm.v1", lam=lam).ids.tolist() == [0, 2]
    values = closed_set(tiny, "lm-jm.v1", lam=lam)
    by_hand = 2 * math.log(lam * P_RIVER) + 1 * math.log(lam * P_SALMON)
    for s in (3, 4, 5):
        assert values[s] == pytest.approx(by_hand, rel=1e-13)
    # the empty s1: its ML model is p(t) (the Dirichlet limit), so p(t|θ) = (1-λ)·p(t) + λ·p(t) = p(t)
    assert values[1] == pytest.approx(2 * math.log(P_RIVER) + math.log(P_SALMON), rel=1e-13)
    assert np.isfinite(values).all()


@pytest.mark.parametrize("mu", [100.0, 10.0])
def test_dirichlet_no_match_is_mu_p_over_length_plus_mu(tiny: Index, mu: float) -> None:
    # p(t|θ_s) = (c(t,s) + μ·p(t)) / (|s| + μ): without the term, μ·p(t)/(|s|+μ), which depends on |s|
    values = closed_set(tiny, "lm-dir.v1", mu=mu)
    for s in (1, 3, 4, 5):
        n = LENGTHS[s]
        by_hand = 2 * math.log(mu * P_RIVER / (n + mu)) + math.log(mu * P_SALMON / (n + mu))
        assert values[s] == pytest.approx(by_hand, rel=1e-13)
    assert values[3] > values[5] > values[4]  # shorter sentences keep more smoothing mass


def test_two_stage_inverted_no_match_with_and_without_importance(tiny: Index) -> None:
    # 2S-I, document context: d1 holds "river", so all of d1 (s0-s3) are candidates; d2 (s4, s5) is not.
    # Without t in s or d: p(t|θ_s) = β·p(t), β = μ/(|s|+μ), μ = 100.
    assert score(tiny, QUERY, "lm-2si.v1").ids.tolist() == [0, 1, 2, 3]
    plain = closed_set(tiny, "lm-2si.v1")
    for s in (4, 5):
        beta = 100 / (LENGTHS[s] + 100)
        assert plain[s] == pytest.approx(2 * math.log(beta * P_RIVER) + math.log(beta * P_SALMON), rel=1e-13)
    # log p(d|s) = Σ_{t∈s} c(t,s)·(log p(t|d) − log p(t)); |d2| = 7, cf = c(t,d2) for each of d2's terms
    # (hills 2, green 2, sheep 1, graze 1, steep 1), so every term adds log((c/7)/(c/15)) = log(15/7):
    # s4 has 4 terms, s5 has 3.
    weighted = closed_set(tiny, "lm-2si.v1", importance=True)
    assert weighted[4] == pytest.approx(plain[4] + 4 * math.log(15 / 7), rel=1e-13)
    assert weighted[5] == pytest.approx(plain[5] + 3 * math.log(15 / 7), rel=1e-13)
    window = closed_set(tiny, "lm-2si.v1", context="window", lam=0.4, mu=50.0)
    beta = 50 / (4 + 50)  # s4's window (s3 to s5 at most) holds neither term
    assert window[4] == pytest.approx(2 * math.log(beta * P_RIVER) + math.log(beta * P_SALMON), rel=1e-13)


PARAMS = [
    {},
    {"importance": True},
    {"context": "window"},
    {"context": "window", "window": 2, "importance": True},
    {"gamma": 0.0},
    {"lam": 1.0},
    {"mu": 0.0},
]


@pytest.mark.parametrize("model", LMS)
@pytest.mark.parametrize("query", [QUERY, "green river", "salmon", "sleep hills hills unknownword"])
def test_closed_set_scores_of_candidates_are_scores_bit_for_bit(tiny: Index, model: str, query: str) -> None:
    spec = get_model(model)
    names = set(spec.params.names())
    for overrides in PARAMS:
        if not set(overrides) <= names:
            continue
        try:
            params = spec.resolve(overrides)
        except SentretError:  # a setting this model refuses (λ = 1 in JM, μ = 0 in DIR)
            continue
        found = score(tiny, query, model, **overrides)
        values = spec.score_at(tiny, prepare(tiny, query), params, np.arange(tiny.N))
        assert np.array_equal(values[found.ids], found.scores), (model, overrides)
        assert np.isfinite(values).all(), (model, overrides)
        # the closed form itself, applied to the candidates, is the scorer's arithmetic too
        assert spec.closed is not None
        assert np.array_equal(spec.closed(tiny, prepare(tiny, query), params, found.ids), found.scores)


@pytest.mark.parametrize("model", LMS)
def test_explain_of_a_non_candidate_is_its_closed_form(tiny: Index, model: str) -> None:
    values = closed_set(tiny, model)
    found = score(tiny, QUERY, model)
    for s in sorted(set(range(tiny.N)) - set(found.ids.tolist())):
        e = explain(tiny, QUERY, s, model)
        assert not e.candidate and e.total == pytest.approx(values[s], rel=1e-12)
    e = explain(tiny, QUERY, 4, "lm-dir.v1")  # written out: Σ c(t,q)·log(μ·p(t)/(|s|+μ)), |s4| = 4
    assert e.total == pytest.approx(2 * math.log(100 * P_RIVER / 104) + math.log(100 * P_SALMON / 104), rel=1e-13)


def test_search_keeps_its_fast_path_over_matching_sentences(tiny: Index) -> None:
    assert score(tiny, QUERY, "lm-dir.v1").ids.tolist() == [0, 2]
    assert score(tiny, QUERY, "lm-3mm.v1", context="window").ids.tolist() == [0, 1, 2, 3]  # windows in d1


# --- the class and trigger LMs (Momtazi & Klakow, IP&M 2015): trained artefacts of the tiny index ------------

TRAINED = ("lm-class.v1", "lm-class.v2", "lm-trigger.v1", "lm-trigger.v2")


@pytest.fixture(scope="module")
def trained(tmp_path_factory: pytest.TempPathFactory) -> Index:
    index = build_from_texts(Path(tmp_path_factory.mktemp("finite-trained")), DOCS)
    train_default_artefacts(index)
    return index


@pytest.mark.parametrize("model", TRAINED)
@pytest.mark.parametrize("query", [QUERY, "green river", "sleep hills hills unknownword"])
def test_trained_lms_closed_set_scores_of_candidates_are_scores_bit_for_bit(
    trained: Index, model: str, query: str
) -> None:
    spec = get_model(model)
    for overrides in ({}, {"max_candidates": 1}):
        found = score(trained, query, model, **overrides)
        values = closed_set(trained, model, query, **overrides)
        assert np.array_equal(values[found.ids], found.scores) and np.isfinite(values).all(), overrides
        # capped away (max_candidates = 1) or never a candidate, a sentence gets its full score all the same
        assert np.array_equal(values, closed_set(trained, model, query)), overrides
        assert spec.closed is not None
        uncapped = score(trained, query, model)
        closed = spec.closed(trained, prepare(trained, query), spec.resolve({}), uncapped.ids)
        assert np.allclose(closed, uncapped.scores, rtol=1e-13, atol=0)


@pytest.mark.parametrize(("model", "lam", "mu", "mu_word"), [("lm-class.v1", 0.0, 100.0, 100.0),
                                                               ("lm-class.v2", 0.4, 50.0, 100.0)])
def test_class_lm_no_match_by_hand(trained: Index, model: str, lam: float, mu: float, mu_word: float) -> None:
    # p(t|θ_s) = λ·(c(t,s) + μ_w·p(t))/(|s| + μ_w) + (1−λ)·p(t|C_t)·(c(C_t,s) + μ·p(C_t))/(|s| + μ), and
    # p(t|C)·p(C) = cf(t)/cf(C) · cf(C)/|C| = p(t): without t's class in s,
    # p(t|θ_s) = λ·μ_w·p(t)/(|s|+μ_w) + (1−λ)·μ·p(t)/(|s|+μ)
    assert get_model(model).resolve({}) == get_model(model).resolve({"lam": lam, "mu": mu, "mu_word": mu_word})
    values = closed_set(trained, model)
    reached = set(score(trained, QUERY, model).ids.tolist())
    assert len(reached) < trained.N
    for s in set(range(trained.N)) - reached:
        n = LENGTHS[s]

        def p(pt: float, n: int = n) -> float:
            return lam * mu_word * pt / (n + mu_word) + (1 - lam) * mu * pt / (n + mu)

        assert values[s] == pytest.approx(2 * math.log(p(P_RIVER)) + math.log(p(P_SALMON)), rel=1e-13)


def test_trigger_lm_no_match_by_hand(trained: Index) -> None:
    # only self triggering (λ_self = 0.3) and the Dirichlet unigram (0.7, μ = 100): without the term,
    # p(q|θ_s) = 0.3·p_self(q|s) + 0.7·μ·p(q)/(|s|+μ), where p_self is c(q,s)/|s| = 0 (p(q) for the empty s1)
    params = {"lam_self": 0.3, "lam_inside": 0.0}
    values = closed_set(trained, "lm-trigger.v1", **params)
    assert score(trained, QUERY, "lm-trigger.v1", **params).ids.tolist() == [0, 2]
    for s in (3, 4, 5):
        n = LENGTHS[s]
        by_hand = 2 * math.log(0.7 * 100 * P_RIVER / (n + 100)) + math.log(0.7 * 100 * P_SALMON / (n + 100))
        assert values[s] == pytest.approx(by_hand, rel=1e-13)
    assert values[1] == pytest.approx(2 * math.log(P_RIVER) + math.log(P_SALMON), rel=1e-13)  # 0.3·p + 0.7·p


@pytest.mark.parametrize("model", TRAINED)
def test_trained_lms_explain_of_a_non_candidate_is_its_closed_form(trained: Index, model: str) -> None:
    values = closed_set(trained, model)
    found = set(score(trained, QUERY, model).ids.tolist())
    for s in set(range(trained.N)) - found:
        e = explain(trained, QUERY, s, model)
        assert not e.candidate and e.total == pytest.approx(values[s], rel=1e-12)
