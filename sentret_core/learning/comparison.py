"""A learned ranker beside what it must beat, on the very same topics and candidates.

Each single model among the ranker's features, and doc-order, ranks the same set C of every scored topic
(development topics, or each topic in the fold that tested it), candidates outside C tied last as for the
ranker; their tie-aware MAP and MRR are paired with the ranker's per topic. The best single model (by MAP
on these topics, which favours the baseline) is tested against the ranker with the paired t-test, and the
verdict says in words whether the ranker's gain is shown at p < 0.05.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

import numpy as np
import pandas as pd

from sentret_core.defaults import ALPHA
from sentret_core.evaluation.evaluable import DOC_ORDER
from sentret_core.evaluation.significance import paired_t_test

if TYPE_CHECKING:
    from sentret_core.learning.examples import Examples

_SCORE = ":score"


class _Column:
    """A stand-in ranker whose score is one feature column (or minus it: doc-order ranks position 0 first)."""

    def __init__(self, column: int, sign: float = 1.0) -> None:
        self.column, self.sign = column, sign

    def predict(self, X: np.ndarray) -> np.ndarray:
        return self.sign * X[:, self.column]


@dataclass(frozen=True)
class Comparison:
    """Mean MAP and MRR of the ranker and of each baseline on the same topics, and the verdict."""

    topics: int
    ranker: dict[str, float]
    baselines: dict[str, dict[str, float]]  # model name (and doc-order) → map, mrr
    best: str  # the best single model by MAP
    p_value: float  # paired t-test on MAP, ranker vs ``best``
    verdict: str

    def to_dict(self) -> dict[str, Any]:
        return {"topics": self.topics, "ranker": self.ranker, "baselines": self.baselines, "best": self.best,
                "p_value": self.p_value, "verdict": self.verdict}


def compare_with_baselines(
    ranker_per_topic: pd.DataFrame,
    examples: Examples,
    topic_values: Callable[[Any, Examples], pd.DataFrame],
) -> Comparison:
    """Compare the ranker's per-topic values with each single model's and doc-order's on the same topics."""
    topics = list(ranker_per_topic.index)
    chosen = examples.select(topics)
    stand_ins = {name[: -len(_SCORE)]: _Column(i) for i, name in enumerate(examples.features) if name.endswith(_SCORE)}
    if "position" in examples.features:
        stand_ins[DOC_ORDER] = _Column(examples.features.index("position"), -1.0)
    per_topic = {name: topic_values(stand_in, chosen).loc[topics] for name, stand_in in stand_ins.items()}
    baselines = {name: {"map": float(v["map"].mean()), "mrr": float(v["mrr"].mean())} for name, v in per_topic.items()}
    singles = [name for name in baselines if name != DOC_ORDER] or list(baselines)
    best = max(singles, key=lambda name: (baselines[name]["map"], name))
    p = paired_t_test(ranker_per_topic["map"].to_numpy(float), per_topic[best]["map"].to_numpy(float))
    mine = {"map": float(ranker_per_topic["map"].mean()), "mrr": float(ranker_per_topic["mrr"].mean())}
    return Comparison(len(topics), mine, baselines, best, p, verdict(mine["map"], baselines[best]["map"], p, best,
                                                                      len(topics)))


def verdict(mine: float, theirs: float, p: float, best: str, topics: int) -> str:
    """One plain sentence: is the ranker better than ``best`` on these ``topics``?"""
    shown = p < ALPHA
    numbers = f"MAP {mine:.4f} vs {theirs:.4f}, paired t-test p = {p:.3g}"
    if mine > theirs:
        return f"better than {best}: {'shown' if shown else 'not shown'} on {topics} topics ({numbers})"
    if mine < theirs:
        return f"{'significantly worse' if shown else 'not better'} than {best} on {topics} topics ({numbers})"
    return f"no different from {best} on {topics} topics (MAP {mine:.4f} for both)"
