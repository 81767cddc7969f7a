"""Cross-validation by topic, and train-on-one-set / test-on-another.

Parameters are chosen on training topics only; the reported per-topic values are those of the
held-out (test) topics, each tested once.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable, Mapping, Sequence
from dataclasses import dataclass

import numpy as np
import pandas as pd

from sentret_core.errors import SentretError
from sentret_core.evaluation.tuning import Params

PerTopicValues = pd.DataFrame | pd.Series | Mapping[str, float]


@dataclass(frozen=True)
class Fold:
    """One fold: the topics tuned on, the topics tested on, and the parameters chosen."""

    index: int
    train: tuple[str, ...]
    test: tuple[str, ...]
    params: Params


@dataclass(frozen=True)
class CrossValidationResult:
    """Test-fold per-topic values (rows = topics, each tested once) and the folds."""

    per_topic: pd.DataFrame
    folds: tuple[Fold, ...]


def _as_frame(values: PerTopicValues) -> pd.DataFrame:
    if isinstance(values, pd.DataFrame):
        return values.copy()
    if isinstance(values, pd.Series):
        return values.to_frame(values.name if values.name is not None else "value")
    return pd.Series(dict(values), dtype=np.float64).to_frame("value")


def _run_fold(
    index: int,
    train: Sequence[str],
    test: Sequence[str],
    tune: Callable[[list[str]], Params],
    evaluate: Callable[[list[str], Params], PerTopicValues],
) -> tuple[Fold, pd.DataFrame]:
    params = dict(tune(list(train)))
    frame = _as_frame(evaluate(list(test), dict(params)))
    allowed = set(test)
    stray = [t for t in frame.index if t not in allowed]
    if stray:
        raise SentretError(f"fold {index}: evaluate returned non-test topics {stray[:5]}")
    return Fold(index, tuple(train), tuple(test), params), frame


def _combine(folds: list[tuple[Fold, pd.DataFrame]]) -> CrossValidationResult:
    frames = [frame for _, frame in folds]
    per_topic = pd.concat(frames) if frames else pd.DataFrame()
    per_topic.index.name = "topic"
    return CrossValidationResult(per_topic, tuple(fold for fold, _ in folds))


def cross_validate(
    topics: Iterable[str],
    k: int,
    seed: int,
    tune: Callable[[list[str]], Params],
    evaluate: Callable[[list[str], Params], PerTopicValues],
) -> CrossValidationResult:
    """k-fold cross-validation by topic: tune on k-1 folds, evaluate on the held-out one.

    The distinct topics are sorted, shuffled with ``numpy.random.default_rng(seed)`` and split
    into k near-equal folds, so the folds depend only on the topic set and the seed. ``tune``
    sees only training topics; ``evaluate(test_topics, params)`` returns per-topic values (a
    DataFrame, Series or mapping) for test topics only. Report ``per_topic`` (test folds only).
    """
    ordered = sorted(set(topics))
    if isinstance(k, bool) or not isinstance(k, int) or not 2 <= k <= len(ordered):
        raise SentretError(f"k must be an integer from 2 to the number of topics ({len(ordered)}), got {k!r}")
    permutation = np.random.default_rng(seed).permutation(len(ordered))
    chunks = [sorted(chunk.tolist()) for chunk in np.array_split(permutation, k)]
    results = []
    for index, chunk in enumerate(chunks):
        held = set(chunk)
        test = [ordered[i] for i in chunk]
        train = [t for i, t in enumerate(ordered) if i not in held]
        results.append(_run_fold(index, train, test, tune, evaluate))
    return _combine(results)


def train_test(
    train_topics: Iterable[str],
    test_topics: Iterable[str],
    tune: Callable[[list[str]], Params],
    evaluate: Callable[[list[str], Params], PerTopicValues],
    *,
    allow_overlap: bool = False,
) -> CrossValidationResult:
    """Tune on one topic set, evaluate on another (e.g. train on one collection, test on another).

    Shared topic ids raise :class:`SentretError` unless ``allow_overlap`` (for two collections
    whose ids merely coincide).
    """
    train = list(dict.fromkeys(train_topics))
    test = list(dict.fromkeys(test_topics))
    if not train or not test:
        raise SentretError("train_test needs at least one training and one test topic")
    shared = set(train) & set(test)
    if shared and not allow_overlap:
        raise SentretError(
            f"{len(shared)} topics are in both the training and the test set, e.g. {sorted(shared)[0]!r}"
        )
    return _combine([_run_fold(0, train, test, tune, evaluate)])
