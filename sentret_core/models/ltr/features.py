"""Features of (query, sentence) pairs for a learned ranker (issue 12; Voskarides et al., ACL 2015).

A ranker re-ranks a candidate set C (the first stage's top-k), so a feature that needs a
comparison (a normalised score, a rank) is relative to C; everything is computed for all of C at
once from the index's arrays (no loop per sentence). The features, by group:

* per sentence scorer m: ``m:score`` its score min-max normalised over C (0 where m does not
  match), ``m:rank`` 1/(1+rank in C), ``m:doc_rank`` 1/(1+rank among the sentences of C in the
  same document) — both 0 where m does not match;
* position: ``position`` (0 = first sentence of its document), ``inv_position`` 1/(1+position),
  ``first``; ``length`` log(1+|s|);
* query overlap: ``coverage`` the share of the query's distinct terms in s, ``idf_overlap`` the
  same weighted by log(N/sf(t)), ``title_match`` the share in the document's title;
* entities (seed 002's statistics over C as S_q, :mod:`sentret_core.index.entity_stats`):
  ``entities`` how many s mentions, ``top_entities`` how many of them are among C's 10 best by
  KLD, ``entity_kld`` the best KLD among them;
* ``answer_type``: 1 when s mentions an entity whose label answers the question word
  (who → PERSON/ORG/NORP, when → DATE/TIME, …; :data:`~sentret_core.models.query.ANSWER_TYPES`);
* the chosen entity e, when the ranker ranks e's support sentences (all 0 without one):
  ``e:position`` seed 002's eq. 8, |s| - max(pos_q(s), pos_e(s)), for the sentences mentioning e;
  ``e:other_top`` how many of C's 10 best entities by KLD s mentions besides e; e's own
  ``e:kld``, ``e:frequency`` and ``e:rarity`` with C as S_q (the same for every sentence of a topic,
  so they inform a pointwise model across topics, not LambdaMART within one).
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING

import numpy as np

from sentret_core.index.entity_position import position_scores
from sentret_core.index.entity_stats import EntityStats, entity_stats, rarity
from sentret_core.models.query import expected_labels
from sentret_core.models.registry import get_model

if TYPE_CHECKING:
    from sentret_core.index.reader import Index
    from sentret_core.models.query import Query

DEFAULT_SCORERS: tuple[str, ...] = ("bm25.v1", "bm25f.v1", "lm-dir.v1", "tfisf.v1")
PER_SCORER = ("score", "rank", "doc_rank")
FIXED = ("position", "inv_position", "first", "length", "coverage", "idf_overlap", "title_match",
         "entities", "top_entities", "entity_kld", "answer_type")  # fmt: skip
ENTITY = ("e:position", "e:other_top", "e:kld", "e:frequency", "e:rarity")
TOP_ENTITIES = 10

Scored = tuple[np.ndarray, np.ndarray]  # a scorer's (ids ascending, scores)


def feature_names(scorers: Sequence[str]) -> tuple[str, ...]:
    """The names of the columns :func:`feature_matrix` returns for ``scorers``, in order."""
    return (*(f"{m}:{part}" for m in scorers for part in PER_SCORER), *FIXED, *ENTITY)


def scored(index: Index, q: Query, model: str) -> Scored:
    """``model``'s scores (default parameters) of every sentence it matches."""
    spec = get_model(model)
    if q.reason is not None:
        return np.zeros(0, dtype=np.int64), np.zeros(0)
    ids, values = spec.scorer(index, q, spec.resolve({}))
    return np.asarray(ids, dtype=np.int64), np.asarray(values, dtype=np.float64)


def top_set(first: Scored, depth: int) -> np.ndarray:
    """C: the ``depth`` best of the first stage's sentences (ties by id, as ``top_k``), ids ascending."""
    ids, values = first
    return np.sort(ids[np.lexsort((ids, -values))[:depth]])


def feature_matrix(
    index: Index,
    q: Query,
    ids: np.ndarray,
    scorers: Sequence[str],
    known: Mapping[str, Scored] | None = None,
    entity: int | None = None,
) -> np.ndarray:
    """The features of sentences ``ids`` (the set C, ascending) for query ``q`` and, when given, the
    chosen ``entity``: ``len(ids)`` rows, columns as :func:`feature_names`. ``known`` holds scores
    already computed (the first stage's)."""
    ids = np.asarray(ids, dtype=np.int64)
    base = query_features(index, q, ids, scorers, known)
    return np.hstack([base.X, entity_features(index, q, ids, base.stats, entity)])


@dataclass(frozen=True)
class QueryFeatures:
    """Every feature of C but the chosen entity's, and C's entity statistics (what those need)."""

    X: np.ndarray
    stats: EntityStats


def query_features(
    index: Index, q: Query, ids: np.ndarray, scorers: Sequence[str], known: Mapping[str, Scored] | None = None
) -> QueryFeatures:
    """The columns of :func:`feature_matrix` before :data:`ENTITY`: the same for every entity."""
    docs = index.sent_doc[ids]
    columns: list[np.ndarray] = []
    for model in scorers:
        found = (known or {}).get(model) or scored(index, q, model)
        values, hit = _lookup(found, ids)
        columns += [_min_max(values, hit), _inverse_rank(values, hit), _inverse_rank(values, hit, docs)]
    position = index.sent_pos[ids].astype(np.float64)
    columns += [position, 1.0 / (1.0 + position), (position == 0).astype(np.float64)]
    columns.append(np.log1p(index.sent_len[ids].astype(np.float64)))
    columns += _overlap(index, q, ids, docs)
    stats = entity_stats(index, ids)
    columns += _entity_features(index, q, ids, stats)
    return QueryFeatures(np.column_stack(columns) if len(ids) else np.zeros((0, len(columns))), stats)


def _lookup(found: Scored, ids: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """The scores of ``ids`` in a scorer's result, and which of them it matched at all."""
    all_ids, all_values = found
    if len(all_ids) == 0:
        return np.zeros(len(ids)), np.zeros(len(ids), dtype=bool)
    where = np.minimum(np.searchsorted(all_ids, ids), len(all_ids) - 1)
    hit = all_ids[where] == ids
    return np.where(hit, all_values[where], 0.0), hit


def _min_max(values: np.ndarray, hit: np.ndarray) -> np.ndarray:
    if not hit.any():
        return np.zeros(len(values))
    low, high = values[hit].min(), values[hit].max()
    scaled = (values - low) / (high - low) if high > low else np.ones(len(values))
    return np.where(hit, scaled, 0.0)


def _inverse_rank(values: np.ndarray, hit: np.ndarray, groups: np.ndarray | None = None) -> np.ndarray:
    """1/(1+r): r = how many matched sentences (of the same group) score strictly higher."""
    groups = np.zeros(len(values), dtype=np.int64) if groups is None else groups
    keyed = np.where(hit, values, -np.inf)
    order = np.lexsort((-keyed, groups))
    sorted_groups, sorted_values = groups[order], keyed[order]
    n = len(order)
    starts_group = np.r_[True, sorted_groups[1:] != sorted_groups[:-1]] if n else np.zeros(0, dtype=bool)
    starts_tie = starts_group | np.r_[True, sorted_values[1:] != sorted_values[:-1]] if n else starts_group
    at = np.arange(n)
    group_start = np.maximum.accumulate(np.where(starts_group, at, 0))
    tie_start = np.maximum.accumulate(np.where(starts_tie, at, 0))
    rank = np.empty(n)
    rank[order] = tie_start - group_start
    return np.where(hit, 1.0 / (1.0 + rank), 0.0)


def _overlap(index: Index, q: Query, ids: np.ndarray, docs: np.ndarray) -> list[np.ndarray]:
    """coverage, idf_overlap and title_match of each sentence."""
    n = len(ids)
    if len(q.ids) == 0:
        return [np.zeros(n)] * 3
    present = (index.X[ids][:, q.ids] > 0).toarray().astype(np.float64)
    idf = np.log(index.N / np.maximum(index.sf[q.ids].astype(np.float64), 1.0))
    in_title = (index.title_X[docs][:, q.ids] > 0).toarray().astype(np.float64)
    terms = len(q.ids)
    weight = idf.sum()
    return [
        present.sum(axis=1) / terms,
        present @ idf / weight if weight > 0 else np.zeros(n),
        in_title.sum(axis=1) / terms,
    ]


def _mentions(index: Index, ids: np.ndarray) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """Per sentence of ``ids`` how many entities it mentions, and per mention its row and entity."""
    rows = index.G[ids]
    counts = np.diff(rows.indptr)
    return counts, np.repeat(np.arange(len(ids)), counts), np.asarray(rows.indices, dtype=np.int64)


def _top_entities(index: Index, stats: EntityStats) -> np.ndarray:
    """A mask over all entities: the :data:`TOP_ENTITIES` best of C by KLD."""
    top = np.zeros(index.E, dtype=bool)
    top[stats.ids[np.argsort(-stats.kld, kind="stable")[:TOP_ENTITIES]]] = True
    return top


def _entity_features(index: Index, q: Query, ids: np.ndarray, stats: EntityStats) -> list[np.ndarray]:
    """entities, top_entities, entity_kld and answer_type of each sentence."""
    counts, owners, mentioned = _mentions(index, ids)
    kld = np.zeros(index.E)
    kld[stats.ids] = stats.kld
    top = _top_entities(index, stats)
    best = np.zeros(len(ids))
    np.maximum.at(best, owners, kld[mentioned])
    wanted = expected_labels(q.asks)
    fits = np.isin(_labels(index), sorted(wanted)) if wanted else np.zeros(index.E, dtype=bool)
    answer = np.bincount(owners, weights=fits[mentioned].astype(np.float64), minlength=len(ids)) > 0
    return [
        counts.astype(np.float64),
        np.bincount(owners, weights=top[mentioned].astype(np.float64), minlength=len(ids)),
        best,
        answer.astype(np.float64),
    ]


def entity_features(index: Index, q: Query, ids: np.ndarray, stats: EntityStats, entity: int | None) -> np.ndarray:
    """The :data:`ENTITY` columns of sentences ``ids`` (C or part of it; ``stats`` are C's): 0 without an entity."""
    n = len(ids)
    if entity is None:
        return np.zeros((n, len(ENTITY)))
    _, owners, mentioned = _mentions(index, ids)
    here = mentioned == entity
    has = np.zeros(n, dtype=bool)
    has[owners[here]] = True
    position = np.zeros(n)
    position[has] = position_scores(index, ids[has], q.terms, entity)
    others = _top_entities(index, stats)[mentioned] & ~here
    other_top = np.bincount(owners, weights=others.astype(np.float64), minlength=n)
    where = int(np.searchsorted(stats.ids, entity))
    found = where < len(stats) and stats.ids[where] == entity
    kld, frequency = (float(stats.kld[where]), float(stats.frequency[where])) if found else (0.0, 0.0)
    rare = float(rarity(index, np.array([entity]))[0])
    return np.column_stack([position, other_top, np.full(n, kld), np.full(n, frequency), np.full(n, rare)])


def _labels(index: Index) -> np.ndarray:
    if "ltr/labels" not in index.cache:
        index.cache["ltr/labels"] = index.entities["label"].to_numpy()
    labels: np.ndarray = index.cache["ltr/labels"]
    return labels
