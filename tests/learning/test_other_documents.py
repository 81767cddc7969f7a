"""A closed set of one document can learn from other documents' sentences, which teach but are never
scored (sentret_core.learning.examples, ``other_documents``)."""

from __future__ import annotations

import numpy as np
import pytest

from sentret_core.errors import SentretError
from sentret_core.index.reader import Index
from sentret_core.learning.examples import Examples, LearningTopic, best_others, build_examples
from sentret_core.learning.features import feature_names
from sentret_core.learning.learn import Data, learn, topic_values
from sentret_core.learning.learners import Ranker
from sentret_core.models import score
from tests.conftest import build_from_texts
from tests.learning.conftest import TOWNS, town_topic

DOCS = [
    {"id": "clinic", "title": "Clinic",
     "text": "The physician treated the patients. A doctor wrote a letter. The doctor parked the car."},
    {"id": "market", "title": "Market",
     "text": "The stock market fell sharply on Monday. The doctor bought shares."},
    {"id": "ward", "title": "Ward",
     "text": "The doctor asked a doctor and a doctor. Nurses helped. The rooms were clean. Visitors came at noon."},
]
CLINIC = np.array([0, 1, 2])  # the topic's own document: its closed set of candidates
SHARES, ASKED = 4, 5  # other documents' sentences with "doctor"
SCORERS = ("bm25.v1",)


@pytest.fixture(scope="module")
def tiny(tmp_path_factory: pytest.TempPathFactory) -> Index:
    return build_from_texts(tmp_path_factory.mktemp("other-docs"), DOCS)


def closed_topic() -> LearningTopic:
    return LearningTopic("t", ("doctor",), {1: 1}, candidates=CLINIC, outside_ties=True)


def examples(index: Index, n: int, topic: LearningTopic | None = None) -> Examples:
    return build_examples(index, [topic or closed_topic()], SCORERS, "bm25.v1", depth=100, other_documents=n)


def by_score() -> Ranker:
    names = feature_names(SCORERS)
    coef = np.array([1.0 if n == "bm25.v1:score" else 0.0 for n in names])
    return Ranker("linear", names, {"mean": np.zeros(len(names)), "scale": np.ones(len(names)), "coef": coef,
                                    "intercept": np.zeros(1)})


def test_the_first_stage_ranks_the_other_documents_sentences(tiny: Index) -> None:
    found = score(tiny, "doctor", "bm25.v1")
    values = dict(zip(found.ids.tolist(), found.scores.tolist()))
    assert sorted(values) == [1, 2, SHARES, ASKED]  # C at depth 100: every sentence with "doctor"
    assert values[ASKED] > values[SHARES]  # three "doctor"s in a sentence as short


def test_the_best_other_sentence_teaches_as_not_relevant(tiny: Index) -> None:
    plain, one, every = examples(tiny, 0), examples(tiny, 1), examples(tiny, 100)
    assert plain.groups.tolist() == [3] and not plain.taught_only.any()  # 1 and 2 in C, 0 outside it
    # one more row: the best other sentence (ASKED), not relevant, taught only; with 100, both others
    assert one.groups.tolist() == [4] and one.y.tolist() == [1, 0, 0, 0]
    assert one.taught_only.tolist() == [False, False, True, False]  # C ascending (1, 2, ASKED), then 0
    assert every.groups.tolist() == [5] and every.taught_only.tolist() == [False, False, True, True, False]
    assert every.y.tolist() == [1, 0, 0, 0, 0]


def test_without_the_taught_rows_the_examples_are_exactly_the_plain_ones(tiny: Index) -> None:
    plain = examples(tiny, 0)
    for n in (1, 100):
        scored = examples(tiny, n).scored()
        assert np.array_equal(scored.X, plain.X) and np.array_equal(scored.y, plain.y)
        assert scored.groups.tolist() == plain.groups.tolist()
        assert scored.select(["t"]).X.shape == plain.X.shape


def test_a_ranker_is_scored_on_the_topics_own_sentences_only(tiny: Index) -> None:
    # by bm25's score alone ASKED would be first, above the relevant sentence 1; scored on the closed set
    # it is not there, so the AP is the plain examples' (the same ranker, the same rows)
    plain, taught = examples(tiny, 0), examples(tiny, 100)
    assert topic_values(by_score(), taught).equals(topic_values(by_score(), plain))


def test_an_open_set_is_unchanged(tiny: Index) -> None:
    # an entity's mentions (outside_ties False): a sentence outside its candidates is not retrieved, and
    # other documents' sentences are not taught
    topic = LearningTopic("e", ("doctor",), {1: 1}, candidates=np.array([1, SHARES]))
    plain, asked = examples(tiny, 0, topic), examples(tiny, 10, topic)
    assert np.array_equal(plain.X, asked.X) and not asked.taught_only.any()


def test_best_others_by_hand() -> None:
    chosen = np.array([3, 5, 8, 9])
    own = np.array([False, True, False, False])
    first = (np.array([3, 5, 9]), np.array([1.0, 4.0, 1.0]))  # 8 unmatched; 3 and 9 tie
    assert best_others(chosen, own, first, 1).tolist() == [True, False, False, False]  # the tie by id
    assert best_others(chosen, own, first, 2).tolist() == [True, False, False, True]
    assert best_others(chosen, own, first, 3).tolist() == [True, False, True, True]  # unmatched last
    assert not best_others(chosen, own, (np.zeros(0, np.int64), np.zeros(0)), 0).any()


def town_topics(index: Index, towns: range) -> list[LearningTopic]:
    return [town_topic(index, d) for d in towns]


def test_learning_with_other_documents_is_scored_on_the_closed_sets(towns: Index) -> None:
    train, dev = Data(towns, town_topics(towns, range(8))), Data(towns, town_topics(towns, range(8, TOWNS)))
    result = learn("other-docs", train, dev=dev, learner="linear", depth=30, other_documents=30)
    assert result.learned.meta["other_documents"] == 30
    # the dev score is the ranker's on the dev topics' own sentences, as `sentret eval` ranks them
    plain = build_examples(towns, dev.topics, result.learned.scorers, result.learned.first_stage, depth=30,
                           semantic_stage=result.learned.semantic_stage)
    assert result.metrics["dev"]["map"] == pytest.approx(topic_values(result.learned.ranker, plain)["map"].mean())
    # and it learned from more rows than the closed sets hold: the other towns' sentences
    taught = build_examples(towns, train.topics, result.learned.scorers, result.learned.first_stage, depth=30,
                            semantic_stage=result.learned.semantic_stage, other_documents=30)
    assert taught.taught_only.sum() > 0 and taught.y[taught.taught_only].sum() == 0


@pytest.mark.parametrize("bad", [-1, 1.5, True, "3"])
def test_an_absurd_number_of_other_documents_is_one_message(towns: Index, bad: object) -> None:
    with pytest.raises(SentretError, match="other_documents is how many"):
        learn("x", Data(towns, town_topics(towns, range(8))), learner="linear", depth=30,
              other_documents=bad)  # type: ignore[arg-type]
