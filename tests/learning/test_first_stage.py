"""ltr.v1's first stage is not only lexical, closed sets score every candidate, and feature sets."""

from __future__ import annotations

import numpy as np
import pytest

from sentret_core.errors import SentretError
from sentret_core.index import artefacts
from sentret_core.index.reader import Index
from sentret_core.learning.examples import LearningTopic, build_examples
from sentret_core.learning.features import feature_matrix, feature_names
from sentret_core.learning.learners import Ranker
from sentret_core.learning.store import load, save
from sentret_core.models import prepare, score
from sentret_core.models.core.registry import get_model
from tests.conftest import build_from_texts

DOCS = [
    {"id": "clinic", "title": "Clinic",
     "text": "The physician treated the patients. A doctor wrote a letter. The doctor parked the car."},
    {"id": "market", "title": "Market",
     "text": "The stock market fell sharply on Monday. The doctor bought shares."},
]
PHYSICIAN = 0  # "The physician treated the patients.": shares no word with the query "doctor"
SCORERS = ("bm25.v1", "embed.v1")


@pytest.fixture(scope="module")
def tiny(tmp_path_factory: pytest.TempPathFactory) -> Index:
    return build_from_texts(tmp_path_factory.mktemp("ltr-first"), DOCS)


def by_feature(feature: str, scorers: tuple[str, ...] = SCORERS, version: int = 2) -> Ranker:
    """A linear ranker whose only weight is on ``feature``."""
    names = feature_names(scorers, version)
    coef = np.array([1.0 if n == feature else 0.0 for n in names])
    return Ranker("linear", names, {"mean": np.zeros(len(names)), "scale": np.ones(len(names)), "coef": coef,
                                    "intercept": np.zeros(1)})


def test_a_sentence_sharing_no_word_is_reached_only_through_the_semantic_stage(tiny: Index) -> None:
    assert tiny.texts[PHYSICIAN] == "The physician treated the patients."
    lexical = score(tiny, "doctor", "bm25.v1")
    assert PHYSICIAN not in lexical.ids.tolist()  # no depth of a lexical first stage reaches it
    save("lexical-only", by_feature("embed.v1:score"), first_stage="bm25.v1", depth=100, scorers=SCORERS, meta={})
    before = score(tiny, "doctor", "ltr.v1", model="lexical-only")
    assert sorted(before.ids.tolist()) == sorted(lexical.ids.tolist())  # C = the lexical stage's: 1, 2, 4
    save("with-embed", by_feature("embed.v1:score"), first_stage="bm25.v1", depth=100, scorers=SCORERS, meta={},
         semantic_stage="embed.v1")
    after = score(tiny, "doctor", "ltr.v1", model="with-embed")
    assert sorted(after.ids.tolist()) == list(range(tiny.N))  # C = lexical ∪ semantic: every sentence
    assert load(tiny, "with-embed").semantic_stage == "embed.v1"
    assert load(tiny, "lexical-only").semantic_stage is None


def test_learning_examples_reach_it_too(tiny: Index) -> None:
    topic = LearningTopic("t", ("doctor",), {PHYSICIAN: 1})
    lexical = build_examples(tiny, [topic], SCORERS, "bm25.v1", depth=100)
    assert not (lexical.y > 0).any()  # unreachable: nothing to learn from
    both = build_examples(tiny, [topic], SCORERS, "bm25.v1", depth=100, semantic_stage="embed.v1")
    assert both.groups.tolist() == [tiny.N] and both.y.tolist() == [1, 0, 0, 0, 0]


def test_a_closed_set_scores_a_candidate_outside_c_over_c_and_it(tiny: Index) -> None:
    # depth 1: C = {bm25's best} ∪ {embed's best}; the closed set is every sentence of the index
    save("narrow", by_feature("embed.v1:rank"), first_stage="bm25.v1", depth=1, scorers=SCORERS, meta={},
         semantic_stage="embed.v1")
    q = prepare(tiny, "doctor")
    spec = get_model("ltr.v1")
    params = spec.resolve({"model": "narrow"})
    inside = score(tiny, "doctor", "ltr.v1", model="narrow")
    assert 1 <= len(inside.ids) <= 2
    everyone = np.arange(tiny.N)
    values = spec.score_at(tiny, q, params, everyone)
    assert np.isfinite(values).all()  # no candidate is left unscored
    outside = np.setdiff1d(everyone, inside.ids)
    # hand computation: the features of the candidates outside C are computed over C ∪ them (= all 5),
    # and this ranker's score is embed.v1:rank = 1/(1 + embed's rank among those 5)
    X = feature_matrix(tiny, q, everyone, SCORERS)
    expected = X[outside, feature_names(SCORERS).index("embed.v1:rank")]
    assert values[outside] == pytest.approx(expected)
    embed = score(tiny, "doctor", "embed.v1")
    rank = {int(s): int((embed.scores > v).sum()) for s, v in zip(embed.ids, embed.scores)}
    assert values[outside].tolist() == pytest.approx([1 / (1 + rank[int(s)]) for s in outside])


def test_a_ranker_of_the_older_feature_set_still_loads_and_scores(tiny: Index) -> None:
    old = feature_names(("bm25.v1",), 1)
    assert "relative_position" not in old and len(feature_names(("bm25.v1",))) == len(old) + 2
    save("old-set", by_feature("inv_position", ("bm25.v1",), 1), first_stage="bm25.v1", depth=100,
         scorers=("bm25.v1",), meta={})
    found = score(tiny, "doctor", "ltr.v1", model="old-set")
    # sentences 1, 2 (positions 1, 2 of the clinic) and 4 (position 1 of the market): 1/(1+position)
    assert dict(zip(found.ids.tolist(), found.scores.tolist())) == pytest.approx({1: 1 / 2, 2: 1 / 3, 4: 1 / 2})
    assert load(tiny, "old-set").meta["feature_set"] == 1


def test_a_ranker_of_an_unknown_feature_set_is_refused_with_what_to_do(tiny: Index) -> None:
    names = (*feature_names(("bm25.v1",), 1)[:-1], "gone_feature")
    arrays = {"mean": np.zeros(len(names)), "scale": np.ones(len(names)), "coef": np.ones(len(names)),
              "intercept": np.zeros(1)}
    record = {"learner": "linear", "features": list(names), "first_stage": "bm25.v1", "depth": 100,
              "scorers": ["bm25.v1"]}
    artefacts.write(None, "ranker", "stale", arrays, record)
    with pytest.raises(SentretError, match=r"older feature set.*learn it again"):
        load(tiny, "stale")
    with pytest.raises(SentretError, match=r"older feature set.*learn it again"):
        feature_matrix(tiny, prepare(tiny, "doctor"), np.arange(3), ("bm25.v1",), names=names)


def test_relative_position_and_last_equal_a_hand_computation(tiny: Index) -> None:
    # clinic: 3 sentences (positions 0, 1, 2 → pos/(n-1) = 0, 0.5, 1); market: 2 (0, 1 → 0, 1)
    X = feature_matrix(tiny, prepare(tiny, "doctor"), np.arange(tiny.N), ("bm25.v1",))
    names = feature_names(("bm25.v1",))
    assert X[:, names.index("relative_position")].tolist() == [0.0, 0.5, 1.0, 0.0, 1.0]
    assert X[:, names.index("last")].tolist() == [0.0, 0.0, 1.0, 0.0, 1.0]
    assert X[:, names.index("first")].tolist() == [1.0, 0.0, 0.0, 1.0, 0.0]


def test_a_language_models_finite_score_is_a_feature_of_every_sentence_of_c(tiny: Index) -> None:
    scorers = ("bm25.v1", "lm-dir.v1")
    names = feature_names(scorers)
    assert "lm-dir.v1:finite" in names and "bm25.v1:finite" not in names  # only language models have one
    q = prepare(tiny, "doctor")
    everyone = np.arange(tiny.N)
    X = feature_matrix(tiny, q, everyone, scorers)
    spec = get_model("lm-dir.v1")
    likelihood = spec.score_at(tiny, q, spec.resolve({}), everyone)  # sentences 0 and 3 lack "doctor"
    assert np.isfinite(likelihood).all()
    low, high = likelihood.min(), likelihood.max()
    assert X[:, names.index("lm-dir.v1:finite")] == pytest.approx((likelihood - low) / (high - low))
    assert X[[0, 3], names.index("lm-dir.v1:score")].tolist() == [0.0, 0.0]  # the matched-only score: 0
