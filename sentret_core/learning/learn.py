"""Learn a ranker and store it: ``sentret learn``, and the Evaluate page's Learn button.

* With a development set (``dev``), LambdaMART stops early on its MAP@10, and the artefact records
  the ranker's tie-aware MAP and MRR on it.
* With ``folds``, k-fold cross-validation by topic (:func:`~sentret_core.evaluation.crossval.cross_validate`):
  each fold's ranker is fitted on the other folds only (LambdaMART stopping early on a fifth of
  those topics, never on the test fold) and scored on its fold; the stored ranker is then fitted
  on every topic with the folds' median number of trees, and the CV scores are recorded.
* With neither, it is fitted once (LambdaMART: 200 trees) and no score is recorded.
* With ``folds`` and ``choose``, the learner's regularisation is chosen among
  :func:`~sentret_core.learning.learners.grid` by the same cross-validation over the training
  topics (never on development topics): the most regularised setting within one standard error of
  the best CV MAP; each setting's CV MAP, its standard error and the gain share of its ranker's top
  feature are recorded (``meta["grid"]``).

Topics without a relevant sentence are left out and counted, too few teaching topics are refused
(:mod:`~sentret_core.learning.enough`), a ranker that scores every training sentence alike is refused, and
a scored ranker is compared with each single model and doc-order on the same topics
(:mod:`~sentret_core.learning.comparison`).
"""

from __future__ import annotations

import math
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field, replace
from typing import Any

import numpy as np
import pandas as pd

from sentret_core.defaults import DEFAULT_K, DEFAULT_RANKER, LTR_DEPTH, LTR_SCORERS, SEMANTIC_STAGE
from sentret_core.errors import SentretError
from sentret_core.evaluation.crossval import cross_validate
from sentret_core.evaluation.metrics import average_precision, reciprocal_rank
from sentret_core.index.reader import Index
from sentret_core.learning.comparison import Comparison, compare_with_baselines
from sentret_core.learning.enough import Usable, check_enough, usable_topics
from sentret_core.learning.examples import Examples, LearningTopic
from sentret_core.learning.feature_cache import CACHE_ENV, cached_examples
from sentret_core.learning.features import GROUPS, POSITION
from sentret_core.learning.learners import Ranker, check_learner, fit, grid
from sentret_core.learning.store import MAX_DEPTH, Learned, save
from sentret_core.models.core.registry import get_model

INNER_SHARE = 0.2  # of a fold's training topics, held out for early stopping

Progress = Callable[[str, float], None]


@dataclass(frozen=True)
class Data:
    """Topics to learn from or to score on, on their index, and what they are (for the record)."""

    index: Index
    topics: Sequence[LearningTopic]
    description: dict[str, Any] = field(default_factory=dict)
    unjudged_non_relevant: bool = True  # a benchmark's protocol; a session's unjudged sentences are unknown

    def usable(self) -> Usable:
        return usable_topics(self.topics, self.unjudged_non_relevant)


@dataclass(frozen=True)
class LearnResult:
    learned: Learned
    metrics: dict[str, dict[str, float]]  # "dev" or "cv" → map, mrr, topics
    folds: list[dict[str, Any]]
    per_topic: pd.DataFrame  # dev or test-fold values per topic (empty without either)
    comparison: Comparison | None = None  # beside the single models and doc-order (with dev or folds)
    usable: dict[str, int] = field(default_factory=dict)  # topics kept, teaching, left out


def topic_values(ranker: Ranker, examples: Examples) -> pd.DataFrame:
    """Tie-aware AP and RR of each topic, ranked as ``ltr.v1`` ranks it (candidates outside C tied last;
    rows that only teach left out)."""
    examples = examples.scored()
    scores = ranker.predict(examples.X)
    starts = np.r_[0, np.cumsum(examples.groups)]
    rows = []
    for i, topic in enumerate(examples.topics):
        inside = scores[starts[i] : starts[i + 1]]
        relevant = examples.y[starts[i] : starts[i + 1]] > 0
        out, out_relevant = int(examples.outside[i]), int(examples.outside_relevant[i])
        values = np.r_[inside, np.full(out, -math.inf)]
        hits = np.r_[relevant, np.arange(out) < out_relevant]
        total = int(examples.relevant[i])
        rows.append((topic, average_precision(values, hits, total), reciprocal_rank(values, hits) if total else 0.0))
    return pd.DataFrame(rows, columns=["topic", "map", "mrr"]).set_index("topic")


def _summary(frame: pd.DataFrame) -> dict[str, float]:
    return {"map": float(frame["map"].mean()), "mrr": float(frame["mrr"].mean()), "topics": float(len(frame))}


def _as_set(examples: Examples) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """Features, labels and group sizes (topics with no row in C dropped: they teach nothing)."""
    return examples.X, examples.y, examples.groups[examples.groups > 0]


def dropped_features(groups: Sequence[str]) -> set[str]:
    """The features of the named groups; an unknown group is one message naming the known ones."""
    unknown = [g for g in groups if g not in GROUPS]
    if unknown:
        raise SentretError(f"no feature group {unknown[0]!r}; the groups: {', '.join(GROUPS)}")
    return {name for g in groups for name in GROUPS[g]}


def learn(
    name: str,
    train: Data,
    *,
    dev: Data | None = None,
    folds: int | None = None,
    learner: str = "lambdamart",
    scorers: Sequence[str] = LTR_SCORERS,
    first_stage: str = DEFAULT_RANKER,
    depth: int | None = None,
    seed: int = 0,
    progress: Progress | None = None,
    semantic_stage: str | None = SEMANTIC_STAGE,
    choose: bool = False,
    without: Sequence[str] = (),
    other_documents: int = 0,
) -> LearnResult:
    """Fit ``learner`` on ``train`` (early stopping on ``dev``, or CV over ``folds``) and store it as ``name``.

    ``depth`` (how many of the first stage's best sentences are re-ranked) defaults to
    :data:`LTR_DEPTH`, or for an entity's support sentences to k = :data:`DEFAULT_K`: there every
    other model ranks its own top k, and a ranker that re-ranks fewer loses the relevant sentences
    beyond (squad-support, linear: MRR 0.932 at depth 100, 0.956 at 1,000). The ``depth`` best of
    ``semantic_stage`` join C (``None``: the first stage's only); its features are always read.
    ``without`` names feature groups (:data:`~sentret_core.learning.features.GROUPS`) the ranker is
    learned without, e.g. ``("position",)`` for a ranker meant for collections whose position prior
    differs from the training set's. ``other_documents`` = n: a closed set's topics also learn from the
    n best sentences of other documents in C, as non-relevant rows that are never scored
    (:mod:`~sentret_core.learning.examples`), for a ranker meant for candidates from many documents.
    """
    check_learner(learner)
    if dev is not None and folds is not None:
        raise SentretError("choose either a development set or cross-validation folds, not both")
    if choose and folds is None:
        raise SentretError("choosing the regularisation needs cross-validation folds over the training topics "
                           "(it is never chosen on a development set)")
    semantic = [] if semantic_stage is None else [semantic_stage]
    scorers = tuple(dict.fromkeys(get_model(m).name for m in [first_stage, *scorers, *semantic]))
    first_stage = scorers[0]
    semantic_stage = None if semantic_stage is None else get_model(semantic_stage).name
    if depth is None:
        depth = DEFAULT_K if any(t.entity is not None for t in train.topics) else LTR_DEPTH
    if not 1 <= depth <= MAX_DEPTH:
        raise SentretError(f"the depth must be from 1 to {MAX_DEPTH:,} sentences (got {depth})")
    if isinstance(other_documents, bool) or not isinstance(other_documents, int) or other_documents < 0:
        raise SentretError(f"other_documents is how many other documents' sentences a topic learns from: "
                           f"a whole number ≥ 0 (got {other_documents!r})")
    tell = progress or (lambda _text, _share: None)
    usable = train.usable()
    check_enough(usable, folds=folds)
    train = replace(train, topics=usable.topics)
    if dev is not None:
        dev_usable = dev.usable()
        check_enough(dev_usable, what="development")
        dev = replace(dev, topics=dev_usable.topics)

    dropped = dropped_features(without)

    def examples(data: Data, what: str) -> Examples:
        stage = f"computing the features of {len(data.topics):,} {what} topics"
        tell(stage, 0.0)
        found, cached = cached_examples(data.index, data.topics, scorers, first_stage, depth,
                                        lambda share: tell(stage, share), semantic_stage, other_documents)
        if cached:
            tell(f"read the features of {len(data.topics):,} {what} topics from the cache ({CACHE_ENV})", 1.0)
        keep = [j for j, name in enumerate(found.features) if name not in dropped]
        return replace(found, features=tuple(found.features[j] for j in keep), X=found.X[:, keep])

    train_ex = examples(train, "training")
    metrics: dict[str, dict[str, float]] = {}
    fold_records: list[dict[str, Any]] = []
    per_topic = pd.DataFrame(columns=["map", "mrr"])
    comparison = None
    if dev is not None:
        dev_ex = examples(dev, "development")
        tell(f"fitting {learner} (early stopping on the development topics)", 0.5)
        ranker, chosen = fit(learner, train_ex.features, _as_set(train_ex), _as_set(dev_ex.scored()), seed=seed)
        per_topic = topic_values(ranker, dev_ex)
        metrics["dev"] = _summary(per_topic)
        comparison = compare_with_baselines(per_topic, dev_ex, topic_values)
    elif folds is not None:
        tried: list[dict[str, Any]] = []
        runs = []
        for setting in grid(learner) if choose else (None,):
            runs.append(_cross_validated(learner, train_ex, folds, seed, tell, setting))
            frame = runs[-1][2]
            error = float(frame["map"].std(ddof=1) / math.sqrt(len(frame))) if len(frame) > 1 else 0.0
            tried.append({"setting": setting, **_summary(frame), "se": error, "top_share": top_share(runs[-1][0]),
                          "position_share": position_share(runs[-1][0])})
        ranker, chosen, per_topic, fold_records = runs[one_standard_error(tried)]
        metrics["cv"] = _summary(per_topic)
        comparison = compare_with_baselines(per_topic, train_ex, topic_values)
    else:
        tell(f"fitting {learner}", 0.5)
        ranker, chosen = fit(learner, train_ex.features, _as_set(train_ex), seed=seed)
    _check_not_constant(ranker, train_ex)
    meta = {
        "settings": chosen,
        "seed": seed,
        "train": {**train.description, "topics": len(train.topics), "examples": train_ex.fingerprint()},
        "dev": {**dev.description, "topics": len(dev.topics)} if dev is not None else None,
        "folds": folds,
        "metrics": metrics,
        "topics": usable.describe(),
        "comparison": comparison.to_dict() if comparison is not None else None,
        "importance": ranker.importance(),
        "grid": tried if folds is not None and choose else None,
        "without": sorted(set(without)),
        "other_documents": other_documents,
    }
    tell(f"storing the ranker {name!r}", 1.0)
    learned = save(name, ranker, first_stage=first_stage, depth=depth, scorers=scorers, meta=meta,
                   semantic_stage=semantic_stage)
    return LearnResult(learned, metrics, fold_records, per_topic, comparison, usable.describe())


def _check_not_constant(ranker: Ranker, examples: Examples) -> None:
    """Refuse a ranker that gives every training sentence the same score: its rankings are arbitrary ties."""
    scores = ranker.predict(examples.X)
    if len(scores) and float(np.ptp(scores)) <= 1e-12 * max(1.0, float(np.abs(scores).max())):
        raise SentretError(
            f"the learned ranker scores all {len(scores):,} training sentences alike, so its rankings would be "
            "arbitrary ties; nothing was stored. Judge more topics (with relevant and non-relevant sentences) "
            "or try --learner linear."
        )


def one_standard_error(tried: Sequence[dict[str, Any]]) -> int:
    """The most regularised setting (the last: grids go from least to most) whose CV MAP is within one
    standard error of the best's (Hastie, Tibshirani & Friedman, *Elements of Statistical Learning*, 7.10)."""
    best = max(range(len(tried)), key=lambda i: (tried[i]["map"], -i))
    floor = tried[best]["map"] - tried[best]["se"]
    return max(i for i, t in enumerate(tried) if t["map"] >= floor)


def position_share(ranker: Ranker) -> float:
    """The share of the importance taken by the position features together (the position prior)."""
    importance = ranker.importance()
    total = sum(importance.values())
    return sum(v for k, v in importance.items() if k in POSITION) / total if total > 0 else 0.0


def top_share(ranker: Ranker) -> tuple[str, float]:
    """The feature of largest importance (gain, or |weight|) and its share of the total."""
    importance = ranker.importance()
    total = sum(importance.values())
    best = max(importance, key=importance.__getitem__)
    return best, importance[best] / total if total > 0 else 0.0


def _cross_validated(
    learner: str, examples: Examples, folds: int, seed: int, tell: Progress, setting: dict[str, Any] | None = None
) -> tuple[Ranker, dict[str, Any], pd.DataFrame, list[dict[str, Any]]]:
    fitted: dict[int, Ranker] = {}

    def train_on(topics: list[str]) -> dict[str, Any]:
        tell(f"fold {len(fitted) + 1} of {folds}: fitting on {len(topics):,} topics", len(fitted) / (folds + 1))
        inner = _inner_split(topics, seed) if learner == "lambdamart" else set()  # held out for early stopping
        fit_on = examples.select([t for t in topics if t not in inner])
        stop_on = _as_set(examples.select(sorted(inner)).scored()) if inner else None
        ranker, chosen = fit(learner, examples.features, _as_set(fit_on), stop_on, seed=seed, setting=setting)
        fitted[len(fitted)] = ranker
        return chosen

    def test_on(topics: list[str], _chosen: dict[str, Any]) -> pd.DataFrame:
        return topic_values(fitted[len(fitted) - 1], examples.select(topics))

    result = cross_validate(examples.topics, folds, seed, train_on, test_on)
    records = [{"fold": f.index, "settings": dict(f.params), "train_topics": list(f.train),
                "test_topics": list(f.test)} for f in result.folds]
    tell(f"fitting {learner} on every topic", folds / (folds + 1))
    trees = [int(f.params["trees"]) for f in result.folds if "trees" in f.params]
    every = _as_set(examples)
    if trees:
        ranker, chosen = fit(learner, examples.features, every, seed=seed, trees=int(np.median(trees)), setting=setting)
    else:
        ranker, chosen = fit(learner, examples.features, every, seed=seed, setting=setting)
    return ranker, chosen, result.per_topic.loc[list(examples.topics)], records


def _inner_split(topics: list[str], seed: int) -> set[str]:
    """A seeded fifth of ``topics`` (at least one when there are 5 or more) for early stopping."""
    if len(topics) < 5:
        return set()
    ordered = sorted(topics)
    picked = np.random.default_rng(seed).permutation(len(ordered))[: max(1, int(len(ordered) * INNER_SHARE))]
    return {ordered[i] for i in picked}
