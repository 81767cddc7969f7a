"""Learners, stored rankers, ltr.v1 and the learn driver."""

from __future__ import annotations

import json
import os
from pathlib import Path

import numpy as np
import pytest

from sentret_core.errors import SentretError
from sentret_core.index import artefacts
from sentret_core.index.reader import Index
from sentret_core.learning.examples import Examples, LearningTopic, build_examples
from sentret_core.learning.features import feature_matrix, feature_names
from sentret_core.learning.learn import Data, learn, topic_values
from sentret_core.learning.learners import Ranker, fit
from sentret_core.learning.store import load, save
from sentret_core.models import explain, prepare, score
from sentret_core.support.engine import support
from tests.conftest import build_from_texts
from tests.learning.test_features import DOCS


def synthetic(seed: int, topics: int = 60, rows: int = 8, decisive: int = 2) -> tuple[np.ndarray, ...]:
    """Groups of random rows where the row with the largest feature ``decisive`` is the one relevant."""
    rng = np.random.default_rng(seed)
    X = rng.normal(size=(topics * rows, 5))
    y = np.zeros(topics * rows, dtype=np.int64)
    for t in range(topics):
        block = slice(t * rows, (t + 1) * rows)
        y[block][np.argmax(X[block, decisive])] = 1
    return X, y, np.full(topics, rows)


@pytest.mark.parametrize("learner", ["lambdamart", "linear"])
def test_a_learner_recovers_the_feature_that_decides_relevance(learner: str) -> None:
    names = tuple(f"f{j}" for j in range(5))
    ranker, _ = fit(learner, names, synthetic(0, topics=400), synthetic(1))
    importance = ranker.importance()
    assert max(importance, key=importance.__getitem__) == "f2"
    X, y, groups = synthetic(2)
    scores = ranker.predict(X).reshape(len(groups), -1)
    best = scores.argmax(axis=1) == y.reshape(len(groups), -1).argmax(axis=1)
    assert best.mean() > 0.9  # held-out groups: the decisive row comes first
    if learner == "linear":
        weights = ranker.weights()
        assert max(weights, key=lambda n: abs(weights[n])) == "f2" and weights["f2"] > 0
    parts, rest = ranker.contributions(X[:5])
    assert np.allclose(parts.sum(axis=1) + rest, ranker.predict(X[:5]))  # contributions add up to the score


def test_nothing_relevant_is_a_clear_error() -> None:
    X, y, groups = synthetic(0)
    with pytest.raises(SentretError, match="nothing to learn"):
        fit("linear", tuple(f"f{j}" for j in range(5)), (X, np.zeros_like(y), groups))
    with pytest.raises(SentretError, match="unknown learner"):
        fit("forest", ("a",), (X, y, groups))


@pytest.fixture(scope="module")
def tiny(tmp_path_factory: pytest.TempPathFactory) -> Index:
    return build_from_texts(tmp_path_factory.mktemp("ltr-learn"), DOCS)


def one_feature_ranker(feature: str, scorers: tuple[str, ...] = ("bm25.v1",)) -> Ranker:
    """A linear ranker whose only weight is on ``feature``: it must rank exactly as that feature."""
    names = feature_names(scorers)
    coef = np.array([1.0 if n == feature else 0.0 for n in names])
    arrays = {"mean": np.zeros(len(names)), "scale": np.ones(len(names)), "coef": coef, "intercept": np.zeros(1)}
    return Ranker("linear", names, arrays)


def test_ltr_with_one_selected_feature_ranks_exactly_like_it(tiny: Index) -> None:
    save("by-position", one_feature_ranker("inv_position"), first_stage="bm25.v1", depth=100,
         scorers=("bm25.v1",), meta={})
    found = score(tiny, "Paris capital", "ltr.v1", model="by-position")
    first = score(tiny, "Paris capital", "bm25.v1")
    assert found.ids.tolist() == first.ids.tolist()  # depth 100 keeps every match
    assert found.scores.tolist() == (1.0 / (1.0 + tiny.sent_pos[found.ids])).tolist()
    again = score(tiny, "Paris capital", "ltr.v1", model="by-position")
    assert again.scores.tolist() == found.scores.tolist()  # deterministic
    shallow = score(tiny, "Paris capital", "ltr.v1", model="by-position", depth=1)
    assert shallow.ids.tolist() == [int(first.ids[np.argmax(first.scores)])]  # only the first stage's best
    why = explain(tiny, "Paris capital", int(found.ids[0]), "ltr.v1", model="by-position")
    assert why.total == pytest.approx(found.scores[0])
    assert [r["feature"] for r in why.rows if r["contribution"]] == ["inv_position"]


def test_a_stored_ranker_round_trips_and_damage_is_an_error(tiny: Index) -> None:
    X, y, groups = synthetic(0)
    names = feature_names(("bm25.v1",))
    X = np.hstack([X, np.random.default_rng(3).normal(size=(len(X), len(names) - 5))])
    ranker, _ = fit("lambdamart", names, (X, y, groups))
    stored = save("round", ranker, first_stage="bm25.v1", depth=50, scorers=("bm25.v1",), meta={"note": 1})
    loaded = load(tiny, "round")
    assert loaded.reference == stored.reference and loaded.depth == 50 and loaded.first_stage == "bm25.v1"
    assert np.array_equal(loaded.ranker.predict(X), ranker.predict(X))
    folder = artefacts.store_root() / "round"
    record = json.loads((folder / artefacts.META).read_text())
    assert record["kind"] == "ranker" and record["index"] is None and record["note"] == 1
    (folder / artefacts.ARRAYS).write_bytes(b"not a zip")
    os.utime(folder / artefacts.META)  # a new stamp: the memo must not hide the damage
    with pytest.raises(SentretError, match="damaged"):
        load(tiny, "round")
    with pytest.raises(SentretError, match="sentret learn"):
        score(tiny, "Paris", "ltr.v1", model="never-learned")


def test_examples_of_a_closed_set_rank_every_candidate(tiny: Index) -> None:
    # the candidates are sentences 0-2 (the Paris document); 4 mentions Paris too but is not a candidate
    topic = LearningTopic("t", tuple(["paris", "founded"]), {1: 1, 0: 0}, np.array([0, 1, 2]), outside_ties=True)
    ex = build_examples(tiny, [topic], ("bm25.v1",), "bm25.v1", depth=2)
    q = prepare(tiny, ["paris", "founded"])
    first = score(tiny, q.terms, "bm25.v1")
    top2 = np.sort(first.ids[np.lexsort((first.ids, -first.scores))[:2]])
    kept = top2[np.isin(top2, [0, 1, 2])]
    left = np.setdiff1d([0, 1, 2], kept)
    assert len(left) > 0  # the test needs a candidate outside C
    # a closed set ranks all its candidates: those in C with features over C, the rest over C ∪ them
    assert ex.groups.tolist() == [3]
    assert np.allclose(ex.X[: len(kept)], feature_matrix(tiny, q, top2, ("bm25.v1",))[np.isin(top2, [0, 1, 2])])
    both = np.union1d(top2, left)
    assert np.allclose(ex.X[len(kept) :], feature_matrix(tiny, q, both, ("bm25.v1",))[np.searchsorted(both, left)])
    assert ex.outside.tolist() == [0]
    assert ex.relevant.tolist() == [1]


def test_topic_values_rank_outside_candidates_tied_last() -> None:
    ranker = Ranker("linear", ("a",), {"mean": np.zeros(1), "scale": np.ones(1), "coef": np.ones(1),
                                       "intercept": np.zeros(1)})
    # one topic: two rows in C (scores 2 and 1, the second relevant), two candidates outside, one relevant
    ex = Examples(("a",), np.array([[2.0], [1.0]]), np.array([0, 1]), np.array([2]), ("t",), np.array([2]),
                  np.array([2]), np.array([1]))
    frame = topic_values(ranker, ex)
    # ranks: 1 (no), 2 (yes), then {3, 4} tied with one relevant: AP = (1/2 + E[P@rank of the other]) / 2
    tied = 0.5 * (2 / 3) + 0.5 * (2 / 4)
    assert frame.loc["t", "map"] == pytest.approx((1 / 2 + tied) / 2)
    assert frame.loc["t", "mrr"] == pytest.approx(1 / 2)


def test_cross_validation_never_tests_on_a_training_topic(tiny: Index, tmp_path: Path) -> None:
    docs = [{"id": f"d{i}", "title": f"Town {i}",
             "text": f"Town {i} lies on the river. Town {i} was founded in {1800 + i}. It has a market."}
            for i in range(12)]
    index = build_from_texts(tmp_path, docs, "towns")
    topics = []
    for d in range(12):
        first = int(index.doc_first[d])
        terms = tuple(normalise_terms(index, f"When was Town {d} founded?"))
        topics.append(LearningTopic(f"q{d}", terms, {first + 1: 1}, np.arange(first, first + 3), outside_ties=True))
    result = learn("towns", Data(index, topics), folds=3, learner="linear", depth=30)
    seen: set[str] = set()
    for fold in result.folds:
        assert not set(fold["train_topics"]) & set(fold["test_topics"])
        assert seen.isdisjoint(fold["test_topics"])
        seen |= set(fold["test_topics"])
    assert seen == {t.id for t in topics}
    assert result.metrics["cv"]["topics"] == 12
    # "when" → DATE: the founding sentence is found in every held-out fold
    assert result.metrics["cv"]["map"] > 0.9
    assert result.learned.meta["folds"] == 3 and "examples" in result.learned.meta["train"]
    with pytest.raises(SentretError, match="not both"):
        learn("x", Data(index, topics), folds=3, dev=Data(index, topics))


def normalise_terms(index: Index, text: str) -> list[str]:
    from sentret_core.models.core.query import normalise

    return list(normalise(index, text))


def test_support_gives_a_learned_ranker_each_entity(tiny: Index) -> None:
    save("by-other-top", one_feature_ranker("e:other_top"), first_stage="bm25.v1", depth=100,
         scorers=("bm25.v1",), meta={})
    result = support(tiny, "Paris capital", models=["ltr.v1"], params={"ltr.v1": {"model": "by-other-top"}},
                     per_entity=5)
    q = prepare(tiny, "Paris capital")
    C = np.sort(score(tiny, "Paris capital", "bm25.v1").ids)  # depth 100 keeps every match
    column = feature_names(("bm25.v1",)).index("e:other_top")
    seen = 0
    for found in result.entities:
        expected = feature_matrix(tiny, q, C, ("bm25.v1",), entity=found.entity.entity)[:, column]
        for sentence in found.sentences["ltr.v1"]:
            assert sentence.score == expected[np.searchsorted(C, sentence.sentence)]
            seen += sentence.score > 0
    assert seen  # the entity features are not all 0: each entity was given to the ranker


def test_examples_of_an_entity_topic_carry_its_entity_features(tiny: Index) -> None:
    topic = LearningTopic("t", ("paris", "capital"), {0: 1}, np.array([0, 2, 4]), entity=0)
    ex = build_examples(tiny, [topic], ("bm25.v1",), "bm25.v1", depth=100)
    q = prepare(tiny, ["paris", "capital"])
    C = np.sort(score(tiny, q.terms, "bm25.v1").ids)
    expected = feature_matrix(tiny, q, C, ("bm25.v1",), entity=0)[np.isin(C, [0, 2, 4])]
    assert np.array_equal(ex.X, expected)
    assert ex.X[:, feature_names(("bm25.v1",)).index("e:frequency")].tolist() == [3, 3, 3]
