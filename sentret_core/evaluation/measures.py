"""Metric names, relevance scales and gains, and the evaluation of a whole run (Blanco & Zaragoza, SIGIR 2010, §4).

Metric names: ``"map"`` (AP), ``"mrr"`` (RR), ``"r-prec"``, ``"p@k"``, ``"ndcg@k"`` and
``"ndcg"`` (the whole ranking); per topic as in :mod:`sentret_core.evaluation.metrics`, then
averaged over topics. An item is *relevant* iff its grade >= the relevance threshold; an
unjudged retrieved item has grade 0, so it is never relevant and has gain 0.

**Scales and gains.** ``scale="graded"`` (judgments 1-4, as in the entity-support
collections): relevant iff grade >= 3, gain ``2**(g-1) - 1`` i.e. (0, 1, 3, 7) for grades
(1, 2, 3, 4). ``scale="binary"`` (labels 0/1: WikiQA, TrecQA): relevant iff grade >= 1, gain
``2**g - 1`` i.e. 1 for label 1 (and the usual TREC exponential gain for larger labels).
``scale="auto"`` (the default) picks binary iff no grade in the qrels exceeds 1. Grades <= 0
always have gain 0. Both the threshold and the gains can be given explicitly.

**Topics.** A topic of the qrels with no relevant item is skipped from the results (as the
WikiQA protocol evaluates only questions with at least one correct sentence), unless
``empty_topics="zero"``, which scores it 0 on every metric. A topic with relevant items but
absent from the run scores 0. Run topics absent from the qrels are ignored (as in trec_eval).
"""

from __future__ import annotations

import math
import re
from collections.abc import Callable, Iterable, Mapping, Sequence
from typing import Literal, NamedTuple

import numpy as np
import numpy.typing as npt
import pandas as pd

from sentret_core.defaults import DEFAULT_METRICS, RELEVANT_GRADE
from sentret_core.errors import SentretError
from sentret_core.evaluation.metrics import (
    Mode,
    average_precision,
    check_mode,
    gain_values,
    ndcg_at_k,
    precision_at_k,
    r_precision,
    reciprocal_rank,
)

Scale = Literal["auto", "graded", "binary"]
GainSpec = Mapping[int, float] | Callable[[int], float]

SCALES: tuple[str, ...] = ("auto", "graded", "binary")
METRIC_FORMS: tuple[str, ...] = ("map", "mrr", "r-prec", "p@<k>", "ndcg@<k>", "ndcg")
BINARY_THRESHOLD = 1
_ALIASES = {"ap": "map", "rr": "mrr", "rprec": "r-prec", "r-precision": "r-prec"}


class Metric(NamedTuple):
    """A parsed metric name: ``kind`` in map/mrr/r-prec/p/ndcg, cutoff ``k``, canonical ``name``."""

    kind: str
    k: int | None
    name: str


def parse_metric(name: str) -> Metric:
    """Parse ``"map"``, ``"mrr"``, ``"r-prec"``, ``"p@<k>"``, ``"ndcg@<k>"`` or ``"ndcg"``.

    Case-insensitive; aliases ``ap``, ``rr``, ``rprec``. Unknown names raise
    :class:`SentretError` listing the allowed forms.
    """
    text = str(name).strip().lower()
    text = _ALIASES.get(text, text)
    if text in ("map", "mrr", "r-prec", "ndcg"):
        return Metric(text, None, text)
    match = re.fullmatch(r"(p|ndcg)@(\d+)", text)
    if match and int(match.group(2)) >= 1:
        k = int(match.group(2))
        return Metric(match.group(1), k, f"{match.group(1)}@{k}")
    raise SentretError(f"unknown metric {name!r}; allowed: {', '.join(METRIC_FORMS)} (k >= 1)")


def graded_gain(grade: int) -> float:
    """Gain of a grade on the 1-4 scale: ``2**(g-1) - 1`` = (0, 1, 3, 7); 0 for g <= 0."""
    return float(2 ** (grade - 1) - 1) if grade >= 1 else 0.0


def binary_gain(grade: int) -> float:
    """Gain of a 0/1 label: ``2**g - 1`` (label 1 -> 1); 0 for g <= 0."""
    return float(2**grade - 1) if grade >= 1 else 0.0


def resolve_scale(qrels: Mapping[str, Mapping[str, int]], scale: Scale = "auto") -> str:
    """``"binary"`` or ``"graded"``; ``"auto"`` is binary iff no grade in ``qrels`` exceeds 1."""
    if scale not in SCALES:
        raise SentretError(f"unknown scale {scale!r}; choose one of {', '.join(SCALES)}")
    if scale != "auto":
        return scale
    top = max((g for judged in qrels.values() for g in judged.values()), default=0)
    return "binary" if top <= 1 else "graded"


def _gain_function(gains: GainSpec | None, scale: str) -> Callable[[int], float]:
    if gains is None:
        return binary_gain if scale == "binary" else graded_gain
    if callable(gains):
        function: Callable[[int], float] = gains
        return lambda g: float(function(g)) if g >= 1 else 0.0
    table = dict(gains)

    def lookup(grade: int) -> float:
        if grade <= 0:
            return 0.0
        if grade not in table:
            raise SentretError(f"no gain given for grade {grade}; the gain map has {sorted(table)}")
        return float(table[grade])

    return lookup


def _map_gains(grades: Iterable[int], gain: Callable[[int], float]) -> npt.NDArray[np.float64]:
    array = np.fromiter(grades, dtype=np.int64)
    if array.shape[0] == 0:
        return np.zeros(0)
    unique, inverse = np.unique(array, return_inverse=True)
    values = np.array([gain(int(g)) for g in unique], dtype=np.float64)
    return gain_values(values[inverse.reshape(-1)], None)


def _topic_metrics(
    judged: Mapping[str, int],
    ranked: Mapping[str, float],
    metrics: Sequence[Metric],
    mode: Mode,
    threshold: int,
    gain: Callable[[int], float],
) -> list[float]:
    docids = list(ranked)
    scores = np.fromiter((ranked[d] for d in docids), dtype=np.float64, count=len(docids))
    grades = [judged.get(d, 0) for d in docids]
    relevant = np.array([g >= threshold for g in grades], dtype=bool)
    total = sum(1 for g in judged.values() if g >= threshold)
    gains = _map_gains(grades, gain)
    ideal = _map_gains(judged.values(), gain)
    values = []
    for metric in metrics:
        if metric.kind == "map":
            values.append(average_precision(scores, relevant, total, mode=mode))
        elif metric.kind == "mrr":
            values.append(reciprocal_rank(scores, relevant, mode=mode))
        elif metric.kind == "r-prec":
            values.append(r_precision(scores, relevant, total, mode=mode))
        elif metric.kind == "p":
            assert metric.k is not None
            values.append(precision_at_k(scores, relevant, metric.k, mode=mode))
        else:
            values.append(ndcg_at_k(scores, gains, metric.k, ideal, mode=mode))
    return values


def _check_run(run: Mapping[str, Mapping[str, float]]) -> None:
    for topic, ranked in run.items():
        for docid, score in ranked.items():
            try:
                value = float(score)
            except (TypeError, ValueError):
                value = math.nan
            if math.isnan(value):
                raise SentretError(
                    f"run score {score!r} of topic {topic!r}, document {docid!r} is not a number"
                )


def evaluate(
    qrels: Mapping[str, Mapping[str, int]],
    run: Mapping[str, Mapping[str, float]],
    metrics: Sequence[str] | str = DEFAULT_METRICS,
    *,
    mode: Mode = "tie-aware",
    scale: Scale = "auto",
    relevance_threshold: int | None = None,
    gains: GainSpec | None = None,
    empty_topics: Literal["skip", "zero"] = "skip",
) -> pd.DataFrame:
    """Per-topic metric values: rows = qrels topics (index ``topic``), columns = metric names.

    ``relevance_threshold`` defaults to 3 on a graded scale and 1 on a binary one; ``gains``
    (a grade -> gain mapping or function, used only for grades >= 1) defaults to the scale's
    gain (see the module docstring). Topics with no relevant judged item are skipped
    (``empty_topics="skip"``, listed in ``result.attrs["skipped_topics"]``) or score 0
    (``"zero"``). The mean over topics is ``result.mean()``. Pass ``scale`` explicitly when
    evaluating a subset of a graded collection, so the detection cannot flip.
    """
    check_mode(mode)
    if empty_topics not in ("skip", "zero"):
        raise SentretError(f"empty_topics must be 'skip' or 'zero', got {empty_topics!r}")
    if not qrels:
        raise SentretError("the qrels are empty: there is nothing to evaluate")
    names = [metrics] if isinstance(metrics, str) else list(metrics)
    if not names:
        raise SentretError(f"no metrics asked for; allowed: {', '.join(METRIC_FORMS)}")
    parsed = list({m.name: m for m in map(parse_metric, names)}.values())
    resolved = resolve_scale(qrels, scale)
    threshold = relevance_threshold
    if threshold is None:
        threshold = BINARY_THRESHOLD if resolved == "binary" else RELEVANT_GRADE
    if isinstance(threshold, bool) or not isinstance(threshold, (int, np.integer)) or threshold < 1:
        raise SentretError(f"relevance_threshold must be an integer >= 1, got {threshold!r}")
    gain = _gain_function(gains, resolved)
    _check_run(run)
    rows: dict[str, list[float]] = {}
    skipped = []
    for topic, judged in qrels.items():
        if not any(g >= threshold for g in judged.values()):
            if empty_topics == "skip":
                skipped.append(topic)
            else:
                rows[topic] = [0.0] * len(parsed)
            continue
        rows[topic] = _topic_metrics(judged, run.get(topic, {}), parsed, mode, threshold, gain)
    frame = pd.DataFrame.from_dict(rows, orient="index", columns=[m.name for m in parsed])
    frame = frame.astype(np.float64)
    frame.index.name = "topic"
    frame.attrs["skipped_topics"] = tuple(skipped)
    return frame
