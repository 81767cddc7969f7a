"""Learning that tells the truth: a minimum of teaching topics, exactly at its boundary; topics
with nothing relevant left out and counted; a constant ranker refused; the ranker beside the single models
and doc-order on the same topics, with a verdict in words."""

from __future__ import annotations

import numpy as np
import pandas as pd
import pytest

from sentret_core.errors import SentretError
from sentret_core.index.reader import Index
from sentret_core.learning.comparison import compare_with_baselines, verdict
from sentret_core.learning.enough import MIN_PER_FOLD, MIN_TOPICS, check_enough, usable_topics
from sentret_core.learning.examples import Examples
from sentret_core.learning.features import feature_names
from sentret_core.learning.learn import Data, _check_not_constant, learn, topic_values
from sentret_core.learning.learners import Ranker
from tests.learning.conftest import TOWNS
from tests.learning.conftest import town_topic as topic


def test_the_minimum_is_exact_at_its_boundary(towns: Index) -> None:
    assert MIN_TOPICS == 8 and MIN_PER_FOLD == 2
    seven = [topic(towns, d) for d in range(MIN_TOPICS - 1)]
    with pytest.raises(SentretError, match=r"at least 8 training topics .* there are 7\. Judge 1 more such topic\."):
        learn("x", Data(towns, seven), learner="linear", depth=30)
    result = learn("eight", Data(towns, [*seven, topic(towns, 7)]), learner="linear", depth=30)
    assert result.usable == {"topics": 8, "teaching": 8, "without_relevant": 0}
    # with 5 folds, 2 per fold: 10 are needed, 9 are refused
    nine = [topic(towns, d) for d in range(9)]
    with pytest.raises(SentretError, match=r"at least 10 .*\(5 folds need 2 each\), and there are 9\. Judge 1 more"):
        learn("x", Data(towns, nine), folds=5, learner="linear", depth=30)
    learn("ten", Data(towns, [*nine, topic(towns, 9)]), folds=5, learner="linear", depth=30)


def test_topics_without_a_relevant_sentence_are_left_out_and_counted(towns: Index) -> None:
    topics = [topic(towns, d) for d in range(10)] + [topic(towns, d, {0: 0, 1: 0}) for d in (10, 11)]
    result = learn("some-empty", Data(towns, topics), folds=2, learner="linear", depth=30)
    assert result.usable == {"topics": 10, "teaching": 10, "without_relevant": 2}
    assert result.metrics["cv"]["topics"] == 10  # comparable with the Evaluate table, which leaves them out too
    assert result.learned.meta["topics"]["without_relevant"] == 2


def test_a_sessions_unjudged_sentences_do_not_teach(towns: Index) -> None:
    """Only relevant grades: a benchmark's other candidates are non-relevant by its protocol, a session's unknown."""
    only_relevant = [topic(towns, d, {1: 1}) for d in range(TOWNS)]
    assert usable_topics(only_relevant, unjudged_non_relevant=True).teaching == TOWNS
    session = usable_topics(only_relevant, unjudged_non_relevant=False)
    assert session.teaching == 0 and len(session.topics) == TOWNS
    with pytest.raises(SentretError, match=r"there are 0\. Judge 8 more"):
        check_enough(session)
    judged = [topic(towns, d, {0: 0, 1: 1}) for d in range(TOWNS)]
    assert usable_topics(judged, unjudged_non_relevant=False).teaching == TOWNS


def test_a_ranker_that_scores_everything_alike_is_refused() -> None:
    names = feature_names(("bm25.v1",))
    zero = {"mean": np.zeros(len(names)), "scale": np.ones(len(names)), "coef": np.zeros(len(names)),
            "intercept": np.ones(1)}
    X = np.random.default_rng(0).random((6, len(names)))
    examples = Examples(names, X, np.array([1, 0, 0, 1, 0, 0]), np.array([3, 3]), ("a", "b"), np.array([1, 1]),
                        np.zeros(2, int), np.zeros(2, int))
    with pytest.raises(SentretError, match="scores all 6 training sentences alike"):
        _check_not_constant(Ranker("linear", names, zero), examples)


def test_the_comparison_ranks_the_same_candidates_with_each_single_model() -> None:
    """Two topics of three candidates; features (bm25.v1:score, position). Hand computation:
    topic a: relevant is row 1; bm25 scores (0.2, 0.9, 0.5) put it first: AP 1; doc-order (positions 0,1,2)
    puts it second: AP 1/2. Topic b: relevant is row 0; bm25 (0.1, 0.3, 0.2) puts it third: AP 1/3;
    doc-order puts it first: AP 1. MAP: bm25.v1 (1 + 1/3)/2 = 2/3, doc-order (1/2 + 1)/2 = 3/4."""
    X = np.array([[0.2, 0], [0.9, 1], [0.5, 2], [0.1, 0], [0.3, 1], [0.2, 2]], dtype=float)
    examples = Examples(("bm25.v1:score", "position"), X, np.array([0, 1, 0, 1, 0, 0]), np.array([3, 3]),
                        ("a", "b"), np.array([1, 1]), np.zeros(2, int), np.zeros(2, int))
    ranker = pd.DataFrame({"map": [1.0, 1.0], "mrr": [1.0, 1.0]}, index=pd.Index(["a", "b"], name="topic"))
    found = compare_with_baselines(ranker, examples, topic_values)
    assert found.baselines["bm25.v1"]["map"] == pytest.approx(2 / 3)
    assert found.baselines["doc-order"]["map"] == pytest.approx(3 / 4)
    assert found.best == "bm25.v1" and found.topics == 2  # the best *single model*; doc-order is shown beside
    assert found.verdict.startswith("better than bm25.v1: not shown on 2 topics")


def test_the_verdict_in_words() -> None:
    assert verdict(0.80, 0.70, 0.01, "bm25f.v1", 40) == (
        "better than bm25f.v1: shown on 40 topics (MAP 0.8000 vs 0.7000, paired t-test p = 0.01)")
    assert verdict(0.71, 0.70, 0.4, "bm25f.v1", 9).startswith("better than bm25f.v1: not shown on 9 topics")
    assert verdict(0.58, 0.75, 0.2, "bm25f.v1", 3).startswith("not better than bm25f.v1 on 3 topics")
    assert verdict(0.50, 0.75, 0.001, "bm25f.v1", 30).startswith("significantly worse than bm25f.v1")
