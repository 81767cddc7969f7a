"""Training examples for a ranker: the features of each topic's set C, exactly as ``ltr.v1`` computes
them at query time, with the topic's grades as labels.

C is the union of the first stage's and the semantic stage's ``depth`` best
(:func:`~sentret_core.learning.features.first_stage_set`). A topic ranks C restricted to its own
``candidates`` when it has them (a WikiQA question's sentences, an entity's mentions). A *closed*
set (``outside_ties``: plain sentence benchmarks, whose runs score every candidate) also ranks its
candidates outside C, with features over C plus them, as ``ltr.v1`` scores them; for an entity's
mentions a candidate outside C is not retrieved.

With ``other_documents`` = n, a closed set's topic also learns from the n sentences of C that the
first stage ranks best among those that are not its candidates (other documents' sentences), as
non-relevant rows that teach but are never scored (``taught_only``). A closed set of one document
(WikiQA: one Wikipedia page per question) otherwise never shows a ranker a sentence of another
document, so it cannot learn what tells documents apart, and what it learns ("an early sentence
wins") ranks the first sentences of every document on top when the candidates come from many (an
entity's mentions in a collection).
"""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field, replace

import numpy as np

from sentret_core.index.artefacts import content_hash
from sentret_core.index.reader import Index
from sentret_core.learning.features import feature_matrix, feature_names, first_stage_set, lookup
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
    taught_only: np.ndarray | None = None  # rows that teach but are never scored (other documents' sentences)

    def select(self, topics: Sequence[str]) -> Examples:
        """The examples of ``topics`` only, in that order."""
        where = {t: i for i, t in enumerate(self.topics)}
        picked = [where[t] for t in topics]
        starts = np.r_[0, np.cumsum(self.groups)]
        rows = np.concatenate([np.arange(starts[i], starts[i + 1]) for i in picked]) if picked else np.zeros(0, int)
        taught_only = None if self.taught_only is None else self.taught_only[rows]
        return Examples(self.features, self.X[rows], self.y[rows], self.groups[picked], tuple(topics),
                        self.relevant[picked], self.outside[picked], self.outside_relevant[picked], taught_only)

    def scored(self) -> Examples:
        """The rows a ranker is scored on: without the ``taught_only`` ones."""
        if self.taught_only is None or not self.taught_only.any():
            return self
        keep = ~self.taught_only
        topic_of_row = np.repeat(np.arange(len(self.groups)), self.groups)
        groups = np.bincount(topic_of_row, weights=keep, minlength=len(self.groups)).astype(np.int64)
        return replace(self, X=self.X[keep], y=self.y[keep], groups=groups, taught_only=None)

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
    other_documents: int = 0,
) -> Examples:
    """The examples of ``topics`` on ``index``: C is the ``depth`` best under ``first_stage`` and,
    when given, ``semantic_stage``; closed sets learn from C's ``other_documents`` best other sentences too."""
    names = feature_names(scorers)
    blocks, labels, sizes, taught = [], [], [], []
    relevant, outside, outside_relevant = [], [], []
    for n, topic in enumerate(topics):
        q = prepare(index, list(topic.terms))
        chosen, found = first_stage_set(index, q, first_stage, depth, semantic_stage)
        own = np.isin(chosen, topic.candidates) if topic.candidates is not None else np.ones(len(chosen), bool)
        learned = own
        if other_documents and topic.outside_ties and topic.candidates is not None:
            learned = own | best_others(chosen, own, found[first_stage], other_documents)
        rows = None if topic.candidates is None else np.flatnonzero(learned)
        X = feature_matrix(index, q, chosen, scorers, found, topic.entity)
        kept = chosen if rows is None else chosen[rows]
        X = X if rows is None else X[rows]
        taught_only = ~own if rows is None else ~own[rows]
        left = np.zeros(0, dtype=np.int64)
        if topic.outside_ties and topic.candidates is not None:
            left = np.setdiff1d(topic.candidates, kept)
            if len(left):  # as ltr.v1 scores a closed set's candidates outside C
                both = np.union1d(chosen, left)
                outer = feature_matrix(index, q, both, scorers, found, topic.entity)[np.searchsorted(both, left)]
                X = np.vstack([X, outer])
                kept, left = np.r_[kept, left], left[:0]
                taught_only = np.r_[taught_only, np.zeros(len(outer), bool)]
        blocks.append(X)
        taught.append(taught_only)
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
                    np.array(relevant), np.array(outside), np.array(outside_relevant),
                    np.concatenate(taught) if taught else np.zeros(0, bool))


def best_others(chosen: np.ndarray, own: np.ndarray, first: tuple[np.ndarray, np.ndarray], n: int) -> np.ndarray:
    """A mask over ``chosen`` (C, ascending): the ``n`` sentences that are not the topic's own that the
    first stage (``first``: its ids ascending, scores) ranks best, ties by id; one it did not match last."""
    values, matched = lookup(first, chosen)
    score = np.where(matched, values, -np.inf)
    others = np.flatnonzero(~own)
    picked = others[np.lexsort((chosen[others], -score[others]))[:n]]
    mask = np.zeros(len(chosen), bool)
    mask[picked] = True
    return mask
