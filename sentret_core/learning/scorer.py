"""``ltr.v1``: a learned ranker re-ranks the first stages' top sentences.

The first stage (the scorer the ranker was learned on, recorded in its artefact) scores the
query; its ``depth`` best sentences, united with the ``depth`` best of the semantic stage
(``embed.v1``, which reaches sentences that share no word with the query: the vocabulary gap of
Momtazi & Klakow, IP&M 2015; rankers learned before it re-rank the first stage's only), are the set
C; their features (:mod:`~sentret_core.learning.features`) are computed over C, and the ranker
scores them. So a query costs both stages plus a few milliseconds, and in a search only the
sentences of C are candidates.
The explanation of a sentence is each feature's additive part of its score. Given an ``entity``
(the support engine and squad-support pass the entity whose support sentences are ranked), only
the sentences of C that mention it are scored and the entity features describe it; without one
they are 0.

On a closed candidate set (a benchmark question's sentences), a candidate outside C is scored too
(:func:`_closed`): its features are computed over C plus the candidates outside it, exactly as
learning computes them (:func:`~sentret_core.learning.examples.build_examples`), so no candidate
is unreachable.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import TYPE_CHECKING

import numpy as np

from sentret_core.errors import SentretError
from sentret_core.learning.features import (
    QueryFeatures,
    Scored,
    entity_features,
    feature_columns,
    feature_matrix,
    first_stage_set,
    query_features,
)
from sentret_core.learning.store import MAX_DEPTH, Learned, load
from sentret_core.models.core.papers import VOSKARIDES
from sentret_core.models.core.params import Params, param
from sentret_core.models.core.registry import register
from sentret_core.models.core.spec import Explained
from sentret_core.support.entity_stats import entity_sentences

if TYPE_CHECKING:
    from sentret_core.index.reader import Index
    from sentret_core.models.core.query import Query

DEFAULT_RANKER_NAME = "ltr"
QUERIES_KEPT = 4  # queries whose features of C are memoised per index


@dataclass(frozen=True)
class LtrParams(Params):
    model: str = param(DEFAULT_RANKER_NAME, "the learned ranker (made by `sentret learn`)", artefact="ranker")
    depth: int | None = param(None, "how many of the first stage's best sentences are re-ranked "
                              "(None: as many as when it was learned)", min=1, max=MAX_DEPTH, step=1,
                              nullable=True)
    entity: int | None = param(
        None,
        "the entity whose support sentences are ranked (its id): only the "
        "sentences of C that mention it are scored, with its entity features; "
        "None for plain sentence retrieval",
        min=0,
        nullable=True,
        contextual=True,
    )


def candidates(index: Index, q: Query, p: LtrParams) -> tuple[Learned, np.ndarray, dict[str, Scored]]:
    """The ranker, the set C it re-ranks (ids ascending) and the first stages' scores."""
    learned, chosen, first, _ = _prepared(index, q, p)
    return learned, chosen, first


def _prepared(index: Index, q: Query, p: LtrParams) -> tuple[Learned, np.ndarray, dict[str, Scored], QueryFeatures]:
    """:func:`candidates` and the features of C that do not depend on the entity, memoised per
    query: the support engine asks once per entity (20 entities × 1,000 sentences at k = 1,000)."""
    if p.entity is not None and p.entity >= index.E:
        raise SentretError(f"unknown entity id {p.entity}; this index has {index.E:,} entities")
    learned = load(index, p.model)
    depth = p.depth or learned.depth

    def build() -> tuple[np.ndarray, dict[str, Scored], QueryFeatures]:
        chosen, found = first_stage_set(index, q, learned.first_stage, depth, learned.semantic_stage)
        return chosen, found, query_features(index, q, chosen, learned.scorers, found)

    key = (learned.reference, learned.first_stage, learned.semantic_stage, q.terms, q.asks, depth)
    chosen, first, base = index.cache.get_lru("ltr/query", key, build, size=QUERIES_KEPT)
    return learned, chosen, first, base


def _explain(index: Index, q: Query, sentence: int, p: LtrParams) -> Explained:
    learned, chosen, first = candidates(index, q, p)
    ids = np.union1d(chosen, [sentence])  # a sentence outside C is explained as if it were in it
    X = feature_matrix(index, q, ids, learned.scorers, first, p.entity, learned.ranker.features)
    row = int(np.searchsorted(ids, sentence))
    parts, rest = learned.ranker.contributions(X[row : row + 1])
    rows = [
        {"feature": name, "value": float(X[row, j]), "contribution": float(parts[0, j])}
        for j, name in enumerate(learned.ranker.features)
    ]
    base = "intercept" if learned.ranker.learner == "linear" else "expected value"
    notes = {"in C": float(sentence in set(chosen.tolist())), "|C|": float(len(chosen))}
    return Explained(("feature", "value", "contribution"), rows, {base: float(rest[0])}, notes)


@register(
    "ltr.v1",
    display_name="Learned ranker",
    family="ltr",
    params=LtrParams,
    explainer=_explain,
    closed=lambda index, q, p, ids: _closed(index, q, p, ids),
    formula=r"F(s) = f_\theta\big(\phi(q, s; C)\big),\quad s \in C = \mathrm{top}_k(F_1) \cup \mathrm{top}_k(F_{\cos})",
    paper=VOSKARIDES,
    description="A ranker learned from judgments (LambdaMART or a linear model) over the other models' "
    "scores, position, overlap, entity and answer-type features (and, for an entity's support sentences, "
    "that entity's); it re-ranks the union of the lexical and the semantic (embed.v1) stages' top sentences.",
)
def score_ltr(index: Index, q: Query, p: LtrParams) -> tuple[np.ndarray, np.ndarray]:
    learned, chosen, _, base = _prepared(index, q, p)
    rows = slice(None) if p.entity is None else np.isin(chosen, entity_sentences(index, p.entity), assume_unique=True)
    ids = chosen[rows]
    X = np.hstack([base.X[rows], entity_features(index, q, ids, base.stats, p.entity)])
    return ids, learned.ranker.predict(X[:, feature_columns(learned.ranker.features, learned.scorers)])


def _closed(index: Index, q: Query, p: LtrParams, ids: np.ndarray) -> np.ndarray:
    """The scores of candidates ``ids`` outside C (a closed candidate set): features over C ∪ ``ids``."""
    learned, chosen, found, _ = _prepared(index, q, p)
    ids = np.asarray(ids, dtype=np.int64)
    if len(ids) == 0:
        return np.zeros(0)
    both = np.union1d(chosen, ids)
    X = feature_matrix(index, q, both, learned.scorers, found, p.entity, learned.ranker.features)
    return learned.ranker.predict(X[np.searchsorted(both, ids)])
