"""Features of (query, sentence) pairs for a learned ranker (Voskarides et al., ACL 2015).

A ranker re-ranks a candidate set C (the first stage's top-k), so a feature that needs a
comparison (a normalised score, a rank) is relative to C; everything is computed for all of C at
once from the index's arrays (no loop per sentence). The features, by group:

* per sentence scorer m: ``m:score`` its score min-max normalised over C (0 where m does not
  match), ``m:rank`` 1/(1+rank in C), ``m:doc_rank`` 1/(1+rank among the sentences of C in the
  same document) — both 0 where m does not match; for a language model also ``m:finite``, its
  smoothed likelihood of *every* sentence of C (finite without a query term too), min-max normalised;
* position: ``position`` (0 = first sentence of its document), ``inv_position`` 1/(1+position),
  ``first``; ``length`` log(1+|s|); and, relative to the document's n sentences (so that they mean
  the same in a 5-sentence answer passage and a 200-sentence article), ``relative_position``
  pos/(n-1) (0 for a one-sentence document) and ``last`` (the index has no paragraphs: a document is
  the only unit);
* query overlap: ``coverage`` the share of the query's distinct terms in s, ``idf_overlap`` the
  same weighted by log(N/sf(t)), ``title_match`` the share in the document's title;
* entities (the statistics of Blanco & Zaragoza, SIGIR 2010, §3.1, over C as S_q,
  :mod:`sentret_core.support.entity_stats`):
  ``entities`` how many s mentions, ``top_entities`` how many of them are among C's 10 best by
  KLD, ``entity_kld`` the best KLD among them;
* ``answer_type``: 1 when s mentions an entity whose label answers the question word
  (who → PERSON/ORG/NORP, when → DATE/TIME, …; :data:`~sentret_core.models.core.query.ANSWER_TYPES`);
* the chosen entity e, when the ranker ranks e's support sentences (all 0 without one):
  ``e:position`` Blanco & Zaragoza's eq. 8, |s| - max(pos_q(s), pos_e(s)), for the sentences mentioning e;
  ``e:other_top`` how many of C's 10 best entities by KLD s mentions besides e; e's own
  ``e:kld``, ``e:frequency`` and ``e:rarity`` with C as S_q (the same for every sentence of a topic,
  so they inform a pointwise model across topics, not LambdaMART within one).
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING

import numpy as np

from sentret_core.errors import SentretError
from sentret_core.models.core.query import expected_labels
from sentret_core.models.core.registry import get_model
from sentret_core.support.entity_position import position_scores
from sentret_core.support.entity_stats import EntityStats, entity_stats, rarity

if TYPE_CHECKING:
    from sentret_core.index.reader import Index
    from sentret_core.models.core.query import Query

PER_SCORER = ("score", "rank", "doc_rank")
FIXED_V1 = ("position", "inv_position", "first", "length", "coverage", "idf_overlap", "title_match",
            "entities", "top_entities", "entity_kld", "answer_type")
RELATIVE = ("relative_position", "last")
FIXED = (*FIXED_V1, *RELATIVE)
POSITION = ("position", "inv_position", "first", *RELATIVE)  # the position prior, in all its forms
ENTITY = ("e:position", "e:other_top", "e:kld", "e:frequency", "e:rarity")
TOP_ENTITIES = 10
FEATURE_SET = 2  # 1: the first features; 2: adds the position relative to the document, LMs' finite scores
FINITE = "finite"  # the part only language models have (feature set 2)
FEATURE_SETS = (1, 2)

Scored = tuple[np.ndarray, np.ndarray]  # a scorer's (ids ascending, scores)


def feature_names(scorers: Sequence[str], version: int = FEATURE_SET) -> tuple[str, ...]:
    """The names of the columns :func:`feature_matrix` returns for ``scorers`` (feature set ``version``)."""
    fixed = FIXED_V1 if version == 1 else FIXED
    return (*(f"{m}:{part}" for m in scorers for part in _parts(m, version)), *fixed, *ENTITY)


def _parts(model: str, version: int = FEATURE_SET) -> tuple[str, ...]:
    return (*PER_SCORER, FINITE) if version >= 2 and get_model(model).family == "lm" else PER_SCORER


# feature groups a ranker may be learned without (``learn(..., without=("position",))``)
GROUPS = {"position": POSITION}


def feature_set(features: Sequence[str], scorers: Sequence[str]) -> int | None:
    """Which feature set ``features`` is for ``scorers``: all of its columns, or some of them in their
    order (a ranker learned without a group). None: none this sentret computes."""

    def within(names: tuple[str, ...]) -> bool:
        rest = iter(names)
        return all(name in rest for name in features)  # an ordered subsequence

    return next((v for v in FEATURE_SETS if within(feature_names(scorers, v))), None)


def scored(index: Index, q: Query, model: str, among: np.ndarray | None = None) -> Scored:
    """``model``'s scores (default parameters) of every sentence it matches (of ``among`` only, when the
    model can score a set without scanning every sentence: the same values)."""
    spec = get_model(model)
    if spec.reason(q) is not None:  # an open vocabulary (embed.v1) scores unseen words too
        return np.zeros(0, dtype=np.int64), np.zeros(0)
    if among is not None and spec.subset is not None:
        ids, values = spec.subset(index, q, spec.resolve({}), among)
    else:
        ids, values = spec.scorer(index, q, spec.resolve({}))
    return np.asarray(ids, dtype=np.int64), np.asarray(values, dtype=np.float64)


def top_set(first: Scored, depth: int, *more: Scored) -> np.ndarray:
    """C: the ``depth`` best of the first stage's sentences (ties by id, as ``top_k``), united with the
    ``depth`` best of each of ``more`` (the semantic stage), ids ascending."""
    chosen = np.zeros(0, dtype=np.int64)
    for ids, values in (first, *more):
        chosen = np.union1d(chosen, ids[np.lexsort((ids, -values))[:depth]])
    return chosen.astype(np.int64)


def first_stage_set(
    index: Index, q: Query, lexical: str, depth: int, semantic: str | None
) -> tuple[np.ndarray, dict[str, Scored]]:
    """C (the union of the lexical and, when given, the semantic stage's ``depth`` best) and the
    stages' scores (features reuse them)."""
    found = {lexical: scored(index, q, lexical)}
    if semantic is not None and semantic != lexical:
        found[semantic] = scored(index, q, semantic)
    return top_set(found[lexical], depth, *(v for m, v in found.items() if m != lexical)), found


def feature_matrix(
    index: Index,
    q: Query,
    ids: np.ndarray,
    scorers: Sequence[str],
    known: Mapping[str, Scored] | None = None,
    entity: int | None = None,
    names: Sequence[str] | None = None,
) -> np.ndarray:
    """The features of sentences ``ids`` (the set C, ascending) for query ``q`` and, when given, the
    chosen ``entity``: ``len(ids)`` rows, columns as :func:`feature_names` or, given ``names`` (a
    stored ranker's, of any feature set), those columns. ``known`` holds scores already computed (the
    first stage's)."""
    ids = np.asarray(ids, dtype=np.int64)
    base = query_features(index, q, ids, scorers, known)
    X = np.hstack([base.X, entity_features(index, q, ids, base.stats, entity)])
    return X if names is None else X[:, feature_columns(names, scorers)]


def feature_columns(names: Sequence[str], scorers: Sequence[str]) -> np.ndarray:
    """Where each of ``names`` is among the current feature set's columns for ``scorers``."""
    where = {name: j for j, name in enumerate(feature_names(scorers))}
    missing = [n for n in names if n not in where]
    if missing:
        raise SentretError(f"the ranker was learned with an older feature set ({missing[0]!r} is not computed "
                           "any more); learn it again")
    return np.array([where[n] for n in names], dtype=np.int64)


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
        found = (known or {}).get(model) or scored(index, q, model, among=ids)
        values, hit = lookup(found, ids)
        columns += [_min_max(values, hit), _inverse_rank(values, hit), _inverse_rank(values, hit, docs)]
        if FINITE in _parts(model):
            columns.append(_finite(index, q, model, values, hit, ids))
    position = index.sent_pos[ids].astype(np.float64)
    columns += [position, 1.0 / (1.0 + position), (position == 0).astype(np.float64)]
    columns.append(np.log1p(index.sent_len[ids].astype(np.float64)))
    columns += _overlap(index, q, ids, docs)
    stats = entity_stats(index, ids)
    columns += _entity_features(index, q, ids, stats)
    last = np.asarray(index.doc_nsent, dtype=np.float64)[docs] - 1.0
    relative = np.divide(position, last, out=np.zeros(len(ids)), where=last > 0)
    columns += [relative, (position == last).astype(np.float64)]
    return QueryFeatures(np.column_stack(columns) if len(ids) else np.zeros((0, len(columns))), stats)


def lookup(found: Scored, ids: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """The scores of ``ids`` in a scorer's result, and which of them it matched at all."""
    all_ids, all_values = found
    if len(all_ids) == 0:
        return np.zeros(len(ids)), np.zeros(len(ids), dtype=bool)
    where = np.minimum(np.searchsorted(all_ids, ids), len(all_ids) - 1)
    hit = all_ids[where] == ids
    return np.where(hit, all_values[where], 0.0), hit


def _finite(index: Index, q: Query, model: str, values: np.ndarray, hit: np.ndarray, ids: np.ndarray) -> np.ndarray:
    """``model``'s score of every sentence of C, those it does not match by its closed form (a language
    model's smoothed likelihood), min-max normalised over C."""
    spec = get_model(model)
    missed = ~hit
    if spec.closed is not None and missed.any() and spec.reason(q) is None:
        values = values.copy()
        values[missed] = spec.closed(index, q, spec.resolve({}), ids[missed])
        hit = np.isfinite(values)
    return _min_max(np.where(hit, values, 0.0), hit)


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
    fits = index.entity_labels.mask(sorted(wanted)) if wanted else np.zeros(index.E, dtype=bool)
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
