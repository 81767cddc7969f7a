"""Training examples for a ranker: the features of each topic's set C, exactly as ``ltr.v1`` computes
them at query time, with the topic's grades as labels.

C is the union of the first stage's and the semantic stage's ``depth`` best
(:func:`~sentret_core.learning.features.first_stage_set`). A topic ranks C restricted to its own
``candidates`` when it has them (a WikiQA question's sentences, an entity's mentions). A *closed*
set (``outside_ties``: plain sentence benchmarks, whose runs score every candidate) also ranks its
candidates outside C, with features over C plus them, as ``ltr.v1`` scores them; for an entity's
mentions a candidate outside C is not retrieved.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field

import numpy as np

from sentret_core.index.artefacts import content_hash
from sentret_core.index.reader import Index
from sentret_core.learning.features import feature_matrix, feature_names, first_stage_set
from sentret_core.models.core.query import prepare


@dataclass(frozen=True)
class LearningTopic:
    """One topic to learn from: its normalised query terms (question markers included) and grades."""

    id: str
    terms: tuple[str, ...]
    grades: Mapping[int, int]  # judged sentence id → grade (0 = not relevant)
    candidates: np.ndarray | None = field(default=None, compare=False)  # the only sentences it ranks
    outside_ties: bool = False  # a closed set: every candidate is ranked, those outside C too
    entity: int | None = None  # the entity whose support sentences it ranks (the entity features)


@dataclass(frozen=True)
class Examples:
    """Feature rows grouped by topic (groups in ``topics`` order), and per topic the relevant
    sentences and candidates left outside C (for the metrics)."""

    features: tuple[str, ...]
    X: np.ndarray
    y: np.ndarray
    groups: np.ndarray  # rows per topic
    topics: tuple[str, ...]
    relevant: np.ndarray  # relevant sentences per topic, in C or not
    outside: np.ndarray  # candidates outside C that are ranked, tied last (0 when not retrieved)
    outside_relevant: np.ndarray  # of which relevant

    def select(self, topics: Sequence[str]) -> Examples:
        """The examples of ``topics`` only, in that order."""
        where = {t: i for i, t in enumerate(self.topics)}
        picked = [where[t] for t in topics]
        starts = np.r_[0, np.cumsum(self.groups)]
        rows = np.concatenate([np.arange(starts[i], starts[i + 1]) for i in picked]) if picked else np.zeros(0, int)
        return Examples(self.features, self.X[rows], self.y[rows], self.groups[picked], tuple(topics),
                        self.relevant[picked], self.outside[picked], self.outside_relevant[picked])

    def fingerprint(self) -> str:
        return content_hash({"X": self.X, "y": self.y, "groups": self.groups})[:16]


def build_examples(
    index: Index,
    topics: Sequence[LearningTopic],
    scorers: Sequence[str],
    first_stage: str,
    depth: int,
    progress: Callable[[float], None] | None = None,
    semantic_stage: str | None = None,
) -> Examples:
    """The examples of ``topics`` on ``index``: C is the ``depth`` best under ``first_stage`` and,
    when given, ``semantic_stage``."""
    names = feature_names(scorers)
    blocks, labels, sizes = [], [], []
    relevant, outside, outside_relevant = [], [], []
    for n, topic in enumerate(topics):
        q = prepare(index, list(topic.terms))
        chosen, found = first_stage_set(index, q, first_stage, depth, semantic_stage)
        rows = np.flatnonzero(np.isin(chosen, topic.candidates)) if topic.candidates is not None else None
        X = feature_matrix(index, q, chosen, scorers, found, topic.entity)
        kept = chosen if rows is None else chosen[rows]
        X = X if rows is None else X[rows]
        left = np.zeros(0, dtype=np.int64)
        if topic.outside_ties and topic.candidates is not None:
            left = np.setdiff1d(topic.candidates, kept)
            if len(left):  # as ltr.v1 scores a closed set's candidates outside C
                both = np.union1d(chosen, left)
                outer = feature_matrix(index, q, both, scorers, found, topic.entity)[np.searchsorted(both, left)]
                X = np.vstack([X, outer])
                kept, left = np.r_[kept, left], left[:0]
        blocks.append(X)
        labels.append(np.array([topic.grades.get(int(s), 0) for s in kept], dtype=np.int64))
        sizes.append(len(kept))
        good = {s for s, g in topic.grades.items() if g > 0}
        relevant.append(len(good))
        outside.append(len(left))
        outside_relevant.append(sum(int(s) in good for s in left))
        if progress is not None:
            progress((n + 1) / len(topics))
    X = np.vstack(blocks) if blocks else np.zeros((0, len(names)))
    y = np.concatenate(labels) if labels else np.zeros(0, dtype=np.int64)
    return Examples(names, X, y, np.array(sizes, dtype=np.int64), tuple(t.id for t in topics),
                    np.array(relevant), np.array(outside), np.array(outside_relevant))
