"""Regularised learners, chosen by cross-validation on the training topics only."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest

from sentret_core.errors import SentretError
from sentret_core.learning.examples import LearningTopic
from sentret_core.learning.learn import Data, learn, one_standard_error, position_share, top_share
from sentret_core.learning.learners import LAMBDAMART, LAMBDAMART_GRID, LINEAR_GRID, MIN_CHILD_SHARE, fit
from sentret_core.models.core.query import normalise
from tests.conftest import build_from_texts
from tests.learning.test_learners import synthetic


def towns(tmp_path: Path) -> Data:
    docs = [{"id": f"d{i}", "title": f"Town {i}",
             "text": f"Town {i} lies on the river. Town {i} was founded in {1800 + i}. It has a market."}
            for i in range(12)]
    index = build_from_texts(tmp_path, docs, "towns")
    topics = []
    for d in range(12):
        first = int(index.doc_first[d])
        terms = tuple(normalise(index, f"When was Town {d} founded?"))
        topics.append(LearningTopic(f"q{d}", terms, {first + 1: 1}, np.arange(first, first + 3), outside_ties=True))
    return Data(index, topics)


def test_the_default_trees_are_smaller_and_shrunk_than_issue_12s() -> None:
    issue_12 = LAMBDAMART_GRID[0]
    assert LAMBDAMART["num_leaves"] < issue_12["num_leaves"]
    assert LAMBDAMART["min_child_samples"] > issue_12["min_child_samples"]
    assert LAMBDAMART["colsample_bytree"] < issue_12["colsample_bytree"]
    assert LAMBDAMART["reg_lambda"] > issue_12["reg_lambda"]


def test_a_leaf_never_needs_more_than_a_twentieth_of_the_rows() -> None:
    names = tuple(f"f{j}" for j in range(5))
    X, y, groups = synthetic(0, topics=25)  # 25 topics × 8 rows = 200 rows: 200 // 20 = 10 < 100
    _, chosen = fit("lambdamart", names, (X, y, groups), setting=LAMBDAMART_GRID[2], trees=20)
    assert chosen["min_child_samples"] == min(100, 200 // MIN_CHILD_SHARE) == 10
    X, y, groups = synthetic(0, topics=400)  # 3,200 rows: 3200 // 20 = 160 ≥ 100, the setting's 100 stays
    _, chosen = fit("lambdamart", names, (X, y, groups), setting=LAMBDAMART_GRID[2], trees=20)
    assert chosen["min_child_samples"] == 100 and chosen["num_leaves"] == 4


@pytest.mark.parametrize("learner", ["lambdamart", "linear"])
def test_choose_keeps_the_setting_of_best_cv_map(learner: str, tmp_path: Path) -> None:
    result = learn(f"towns-{learner}", towns(tmp_path), folds=3, learner=learner, depth=30, choose=True)
    tried = result.learned.meta["grid"]
    grid = LAMBDAMART_GRID if learner == "lambdamart" else LINEAR_GRID
    assert [t["setting"] for t in tried] == [dict(g) for g in grid]
    best = max(range(len(tried)), key=lambda i: (tried[i]["map"], -i))  # the first of equal CV MAPs
    within = [i for i, t in enumerate(tried) if t["map"] >= tried[best]["map"] - tried[best]["se"]]
    best = within[-1]  # the most regularised of those within one standard error of the best
    assert result.metrics["cv"]["map"] == pytest.approx(tried[best]["map"])
    for key, value in grid[best].items():
        if key != "min_child_samples":  # capped by the rows (tested above)
            assert result.learned.meta["settings"][key] == value
    feature, share = top_share(result.learned.ranker)
    importance = result.learned.ranker.importance()
    assert share == pytest.approx(importance[feature] / sum(importance.values())) and 0 < share <= 1
    assert feature == max(importance, key=importance.__getitem__)
    positional = sum(importance[n] for n in ("position", "inv_position", "first", "relative_position", "last"))
    assert position_share(result.learned.ranker) == pytest.approx(positional / sum(importance.values()))


def test_the_most_regularised_setting_within_one_standard_error_is_chosen() -> None:
    # best: setting 0 (MAP 0.71, SE 0.01) → floor 0.70: settings 1 (0.705) and 2 (0.70) are within it, 3 is not
    tried = [{"map": 0.71, "se": 0.01}, {"map": 0.705, "se": 0.01}, {"map": 0.70, "se": 0.02}, {"map": 0.69, "se": 0.0}]
    assert one_standard_error(tried) == 2
    assert one_standard_error([{"map": 0.5, "se": 0.0}, {"map": 0.6, "se": 0.0}]) == 1
    assert one_standard_error([{"map": 0.6, "se": 0.0}, {"map": 0.5, "se": 0.05}]) == 0  # the best's SE counts


def test_choosing_needs_folds_never_a_development_set(tmp_path: Path) -> None:
    data = towns(tmp_path)
    with pytest.raises(SentretError, match="never chosen on a development set"):
        learn("towns", data, dev=data, choose=True)


def test_a_ranker_learned_without_the_position_group_never_reads_position(tmp_path: Path) -> None:
    from sentret_core.learning.features import POSITION, feature_names
    from sentret_core.learning.store import load
    from sentret_core.models import score

    data = towns(tmp_path)
    result = learn("towns-nopos", data, folds=3, learner="linear", depth=30, without=("position",))
    features = result.learned.ranker.features
    assert not set(features) & set(POSITION) and result.learned.meta["without"] == ["position"]
    full = feature_names(result.learned.scorers)
    assert list(features) == [f for f in full if f not in POSITION]  # the others, in their order
    stored = load(data.index, "towns-nopos")
    assert stored.ranker.features == features
    found = score(data.index, "When was Town 3 founded?", "ltr.v1", model="towns-nopos")
    assert len(found.ids) > 0 and np.all(np.isfinite(found.scores))
    with pytest.raises(SentretError, match="no feature group 'title'; the groups: position"):
        learn("towns-x", data, folds=3, learner="linear", depth=30, without=("title",))
