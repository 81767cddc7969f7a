"""Entity support sentences (seed 002 §3): S_q, Ŝ_q, entity ranking and H_qe(s) per model.

For a query q the *ranker* (any registered sentence scorer) gives S_q, its top-k sentences;
Ŝ_q adds each one's ±``window`` neighbours inside its document. Entities mentioned in S_q are
ranked by frequency, rarity, combination or KLD (:mod:`sentret_core.entities`). For each
entity e, every support model ranks its candidate sentences:

* a registered sentence scorer F (eq. 5; eq. 6 when F uses context, e.g. BM25F): the
  sentences of *its own* top-k that mention e, S_qe, scored by F — this is how BM25F, an LM
  and TF-ISF are compared side by side;
* ``sum-<score>`` / ``avg-<score>`` (eq. 7): Σ or mean of E(q,e') over the entities of s,
  over Ŝ_qe of the ranker;
* ``position`` (eq. 8): ``|s| - max(pos_q(s), pos_e(s))`` over S_qe of the ranker. Positions
  count terms, the unit of |s|: pos_q is the 1-based index of the last query-term occurrence
  (0 if none), pos_e the number of terms up to the end of the entity's last mention. The paper
  does not say which set it re-ranks; over Ŝ_qe the context sentences (pos_q = 0) are ranked by
  the entity's position alone, and on squad-support that fell below random (MRR 0.450 against
  0.488; over S_qe 0.563), so the feature keeps to sentences the ranker retrieved.
"""

from __future__ import annotations

import json
import time
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import asdict, dataclass, field
from typing import Any

import numpy as np
import pandas as pd

from sentret_core.errors import SentretError
from sentret_core.index.reader import Index
from sentret_core.models import get_model, score, top_k
from sentret_core.models.data import normalise
from sentret_core.support.entities import (
    AGGREGATORS,
    ENTITY_SCORES,
    EntityStats,
    aggregate,
    check_entity_score,
    entity_stats,
    label_mask,
    rarity,
    resolve_labels,
)

DEFAULT_MODELS = ("bm25f.v1", "lm-2si.v1", "tfisf.v1")
POSITION = "position"
ENTITY_MODELS = tuple(f"{how}-{name}" for how in AGGREGATORS for name in ENTITY_SCORES)
MAX_K = 1_000_000


# --- records -------------------------------------------------------------------------------


@dataclass(frozen=True)
class ContextSentence:
    sentence: int
    offset: int  # position relative to the support sentence: -2, -1, 1, 2
    text: str


@dataclass(frozen=True)
class SupportSentence:
    sentence: int
    rank: int
    score: float
    document: int
    title: str
    text: str
    term_spans: tuple[tuple[int, int], ...]  # character spans of query terms in ``text``
    entity_spans: tuple[tuple[int, int], ...]  # character spans of the entity's mentions
    context: tuple[ContextSentence, ...]


@dataclass(frozen=True)
class RankedEntity:
    entity: int
    text: str
    label: str
    rank: int
    score: float  # the chosen entity score
    frequency: int  # |S_qe|
    context_frequency: int  # |Ŝ_qe|
    rarity: float
    combination: float
    kld: float


@dataclass(frozen=True)
class EntitySupport:
    entity: RankedEntity
    sentences: dict[str, tuple[SupportSentence, ...]]  # model → its top support sentences
    candidates: dict[str, int]  # model → number of candidate sentences

    def agreement(self) -> dict[int, list[str]]:
        """Top sentence → the models that rank it first, for sentences at least two models agree on."""
        firsts: dict[int, list[str]] = {}
        for model, sentences in self.sentences.items():
            if sentences:
                firsts.setdefault(sentences[0].sentence, []).append(model)
        return {s: models for s, models in firsts.items() if len(models) > 1}


@dataclass(frozen=True)
class SupportResult:
    query: str
    terms: tuple[str, ...]
    ranker: str
    k: int
    entity_score: str
    labels: tuple[str, ...]
    models: tuple[str, ...]
    n_top: int  # |S_q|
    n_context: int  # |Ŝ_q|
    entities: tuple[EntitySupport, ...]
    reason: str | None = None
    timings: dict[str, float] = field(default_factory=dict)

    def to_dict(self) -> dict[str, Any]:
        return asdict(self)

    def to_json(self, **kwargs: Any) -> str:
        return json.dumps(self.to_dict(), ensure_ascii=False, **kwargs)

    def to_frame(self) -> pd.DataFrame:
        """One row per (entity, model, support sentence)."""
        rows = [
            {
                "entity_rank": es.entity.rank,
                "entity": es.entity.text,
                "label": es.entity.label,
                "entity_score": es.entity.score,
                "model": model,
                "rank": s.rank,
                "sentence": s.sentence,
                "score": s.score,
                "title": s.title,
                "text": s.text,
            }
            for es in self.entities
            for model, sentences in es.sentences.items()
            for s in sentences
        ]
        columns = ["entity_rank", "entity", "label", "entity_score", "model", "rank", "sentence", "score"]
        return pd.DataFrame(rows, columns=[*columns, "title", "text"])


# --- the query's sets ------------------------------------------------------------------------


class QueryContext:
    """What every entity of one query shares: S_q, Ŝ_q, entity statistics and each model's top-k."""

    def __init__(
        self,
        index: Index,
        query: str | Sequence[str],
        *,
        ranker: str = "bm25f.v1",
        k: int = 1000,
        window: int = 2,
        params: Mapping[str, Mapping[str, Any]] | None = None,
        entity_labels: Iterable[str] | None = None,
    ) -> None:
        if not 1 <= k <= MAX_K:
            raise SentretError(f"k must be between 1 and {MAX_K:,} (got {k})")
        if not 0 <= window <= 10:
            raise SentretError(f"the context window must be between 0 and 10 sentences (got {window})")
        self.index, self.k, self.window = index, k, window
        self.params = {get_model(name).name: dict(values) for name, values in (params or {}).items()}
        self.query = query if isinstance(query, str) else " ".join(query)
        self.terms = tuple(normalise(index, query) if isinstance(query, str) else query)
        ids = index.term_ids(list(self.terms))
        self.term_ids = np.unique(ids[ids >= 0])  # the query's in-vocabulary term ids
        self.term_id_set = set(self.term_ids.tolist())
        self.ranker = get_model(ranker).name
        self.labels = resolve_labels(index, entity_labels)
        self.allowed = label_mask(index, self.labels)
        self._tops: dict[str, tuple[np.ndarray, np.ndarray]] = {}
        ranked = self._ranked(self.ranker)
        self.reason = ranked.reason
        self.top = np.asarray(ranked.ids, dtype=np.int64)  # S_q in rank order
        self.top_sorted = np.sort(self.top)
        self.context = np.unique(neighbourhood(index, self.top, window))  # Ŝ_q, ascending
        self.stats: EntityStats = entity_stats(index, self.top)

    def _ranked(self, model: str) -> Any:
        scores = score(self.index, list(self.terms), model, **self.params.get(model, {}))
        return top_k(scores, self.k)

    def model_top(self, model: str) -> tuple[np.ndarray, np.ndarray]:
        """A model's top-k as (ids ascending, scores)."""
        if model not in self._tops:
            ranked = self._ranked(model)
            order = np.argsort(ranked.ids, kind="stable")
            self._tops[model] = (np.asarray(ranked.ids)[order], np.asarray(ranked.scores)[order])
        return self._tops[model]

    def candidates(self, entity: int, model: str) -> tuple[np.ndarray, np.ndarray]:
        """Every candidate support sentence of ``entity`` under ``model`` and its H_qe(s)."""
        mentions = entity_sentences(self.index, entity)
        if model == POSITION:
            ids = mentions[in_sorted(mentions, self.top_sorted)]
            return ids, position_scores(self.index, ids, self.terms, entity)
        if model in ENTITY_MODELS:
            ids = mentions[in_sorted(mentions, self.context)]
            how, name = model.split("-", 1)
            return ids, aggregate(self.index, ids, self.stats, name, how, self.allowed)
        ids, scores = self.model_top(get_model(model).name)
        keep = in_sorted(ids, mentions)
        return ids[keep], scores[keep]

    def ranked_candidates(self, entity: int, model: str) -> tuple[np.ndarray, np.ndarray]:
        """``candidates`` in rank order: score descending, ties by sentence id."""
        ids, scores = self.candidates(entity, model)
        order = np.lexsort((ids, -scores))
        return ids[order], scores[order]


def check_support_model(name: str) -> str:
    """The canonical name of a support model, or a clear error listing the choices."""
    if name == POSITION or name in ENTITY_MODELS:
        return name
    try:
        return get_model(name).name
    except SentretError as err:
        others = ", ".join((POSITION, *ENTITY_MODELS))
        raise SentretError(f"{err}; support models also include {others}") from None


def in_sorted(values: np.ndarray, sorted_array: np.ndarray) -> np.ndarray:
    """``np.isin(values, sorted_array)`` for an ascending ``sorted_array``, without its per-call sort."""
    if len(sorted_array) == 0:
        return np.zeros(len(values), dtype=bool)
    where = np.minimum(np.searchsorted(sorted_array, values), len(sorted_array) - 1)
    return np.asarray(sorted_array[where] == values)


def neighbourhood(index: Index, sentences: np.ndarray, window: int) -> np.ndarray:
    """``sentences`` with their ±``window`` neighbours inside the same document (with repeats)."""
    sentences = np.asarray(sentences, dtype=np.int64)
    if window == 0 or len(sentences) == 0:
        return sentences
    offsets = np.arange(-window, window + 1)
    around = (sentences[:, None] + offsets[None, :]).ravel()
    origin = np.repeat(sentences, len(offsets))
    inside = (around >= 0) & (around < index.N)
    around, origin = around[inside], origin[inside]
    same_doc = np.asarray(index.sent_doc)[around] == np.asarray(index.sent_doc)[origin]
    return around[same_doc]


def entity_sentences(index: Index, entity: int) -> np.ndarray:
    """The sentences mentioning ``entity``, ascending (a column of G)."""
    GT = index.GT
    return np.asarray(GT.indices[GT.indptr[entity] : GT.indptr[entity + 1]], dtype=np.int64)


def _seq_keys(index: Index) -> np.ndarray:
    """A sorted key per term occurrence: sentence · 2³² + token position (cached)."""
    if "seq_keys" not in index.cache:
        owners = np.repeat(np.arange(index.N, dtype=np.int64), np.diff(np.asarray(index.seq_indptr)))
        index.cache["seq_keys"] = (owners << 32) + np.asarray(index.seq_tokens, dtype=np.int64)
    keys: np.ndarray = index.cache["seq_keys"]
    return keys


def position_scores(index: Index, sentences: np.ndarray, terms: Sequence[str], entity: int) -> np.ndarray:
    """Eq. 8 for each of ``sentences``: |s| - max(pos_q(s), pos_e(s)), positions in terms."""
    sentences = np.asarray(sentences, dtype=np.int64)
    if len(sentences) == 0:
        return np.zeros(0)
    indptr = np.asarray(index.seq_indptr, dtype=np.int64)
    starts, lengths = indptr[sentences], indptr[sentences + 1] - indptr[sentences]
    owner = np.repeat(np.arange(len(sentences)), lengths)
    flat = np.repeat(starts - np.cumsum(lengths) + lengths, lengths) + np.arange(lengths.sum())
    position = flat - starts[owner] + 1
    query_ids = index.term_ids(list(terms))
    match = np.isin(np.asarray(index.seq_terms[flat]), query_ids[query_ids >= 0])
    pos_q = np.zeros(len(sentences), dtype=np.int64)
    np.maximum.at(pos_q, owner[match], position[match])

    mentions = index.mention_columns
    rows = np.flatnonzero(mentions["entity"] == entity)
    m_sent = mentions["sentence"][rows]
    where = np.searchsorted(sentences, m_sent)
    inside = (where < len(sentences)) & (sentences[np.minimum(where, len(sentences) - 1)] == m_sent)
    m_sent, where = m_sent[inside], where[inside]
    token_end = mentions["token_end"][rows][inside]
    terms_before_end = np.searchsorted(_seq_keys(index), (m_sent << 32) + token_end) - indptr[m_sent]
    pos_e = np.zeros(len(sentences), dtype=np.int64)
    np.maximum.at(pos_e, where, terms_before_end)
    return (lengths - np.maximum(pos_q, pos_e)).astype(np.float64)


# --- the request -----------------------------------------------------------------------------


def support(
    index: Index,
    query: str | Sequence[str],
    *,
    ranker: str = "bm25f.v1",
    k: int = 1000,
    entity_score: str = "kld",
    entity_labels: Iterable[str] | None = None,
    top_entities: int = 20,
    models: Sequence[str] = DEFAULT_MODELS,
    per_entity: int = 3,
    params: Mapping[str, Mapping[str, Any]] | None = None,
    window: int = 2,
    entities: Sequence[int] | None = None,
) -> SupportResult:
    """The entities of ``query`` ranked by ``entity_score``, each with its top support sentences per model.

    ``entities`` (entity ids) skips the ranking and explains exactly those entities.
    ``params`` maps a model name to its parameters, e.g. ``{"bm25f.v1": {"k1": 0.9}}``.
    """
    timings: dict[str, float] = {}
    clock = time.perf_counter()
    check_entity_score(entity_score)
    if not 1 <= top_entities <= 1000 or not 1 <= per_entity <= 100:
        raise SentretError("top_entities must be 1-1000 and per_entity 1-100")
    models = tuple(check_support_model(m) for m in models)
    if not models:
        raise SentretError("choose at least one support model")
    ctx = QueryContext(
        index, query, ranker=ranker, k=k, window=window, params=params, entity_labels=entity_labels
    )
    timings["S_q"] = time.perf_counter() - clock

    clock = time.perf_counter()
    chosen = rank_entities(ctx, entity_score, top_entities, entities)
    timings["entities"] = time.perf_counter() - clock

    clock = time.perf_counter()
    for model in models:  # each model's top-k once, before the per-entity loop
        if model != POSITION and model not in ENTITY_MODELS:
            ctx.model_top(model)
    timings["models"] = time.perf_counter() - clock

    clock = time.perf_counter()
    results = tuple(_entity_support(ctx, entity, models, per_entity) for entity in chosen)
    timings["support"] = time.perf_counter() - clock
    return SupportResult(
        query=ctx.query,
        terms=ctx.terms,
        ranker=ctx.ranker,
        k=k,
        entity_score=entity_score,
        labels=tuple(sorted(ctx.labels)),
        models=models,
        n_top=len(ctx.top),
        n_context=len(ctx.context),
        entities=results,
        reason=ctx.reason or (None if results else "no entity of the chosen labels in the top sentences"),
        timings=timings,
    )


def rank_entities(
    ctx: QueryContext, entity_score: str, top_entities: int, explicit: Sequence[int] | None
) -> list[RankedEntity]:
    stats, index = ctx.stats, ctx.index
    if explicit is not None:
        bad = [e for e in explicit if not 0 <= e < index.E]
        if bad:
            raise SentretError(f"unknown entity id(s) {bad}; this index has {index.E} entities")
        wanted = np.asarray(explicit, dtype=np.int64)
        positions = np.minimum(np.searchsorted(stats.ids, wanted), max(len(stats) - 1, 0))
        found = stats.ids[positions] == wanted if len(stats) else np.zeros(len(wanted), dtype=bool)
    else:
        keep = np.flatnonzero(ctx.allowed[stats.ids])
        chosen = stats.score(entity_score)[keep]
        # best first; ties by frequency, then by entity id for a stable order
        positions = keep[np.lexsort((stats.ids[keep], -stats.frequency[keep], -chosen))][:top_entities]
        wanted, found = stats.ids[positions], np.ones(len(positions), dtype=bool)
    columns = {name: stats.score(name) for name in ENTITY_SCORES}
    hat_counts = _context_counts(ctx, wanted)
    ranked = []
    for rank, (entity, pos, ok, hat) in enumerate(zip(wanted, positions, found, hat_counts), start=1):
        # an entity outside S_q: frequency, combination and KLD are 0; rarity is query-independent
        scores = {name: float(columns[name][pos]) if ok else 0.0 for name in ENTITY_SCORES}
        scores["rarity"] = float(rarity(index, np.array([entity]))[0])
        ranked.append(
            RankedEntity(
                entity=int(entity),
                text=index.entity_texts[int(entity)],
                label=index.entity_labels[int(entity)],
                rank=rank,
                score=scores[entity_score],
                frequency=int(scores["frequency"]),
                context_frequency=int(hat),
                rarity=scores["rarity"],
                combination=scores["combination"],
                kld=scores["kld"],
            )
        )
    return ranked


def _context_counts(ctx: QueryContext, entities: np.ndarray) -> np.ndarray:
    """|Ŝ_qe| for each of ``entities``."""
    ids, counts = np.unique(np.asarray(ctx.index.G[ctx.context].indices), return_counts=True)
    where = np.minimum(np.searchsorted(ids, entities), max(len(ids) - 1, 0))
    return (
        np.where((len(ids) > 0) & (ids[where] == entities), counts[where], 0)
        if len(ids)
        else np.zeros(len(entities), dtype=np.int64)
    )


def _entity_support(
    ctx: QueryContext, entity: RankedEntity, models: Sequence[str], per: int
) -> EntitySupport:
    sentences, counts = {}, {}
    for model in models:
        ids, scores = ctx.ranked_candidates(entity.entity, model)
        counts[model] = len(ids)
        sentences[model] = tuple(
            _support_sentence(ctx, entity.entity, int(s), rank, float(v))
            for rank, (s, v) in enumerate(zip(ids[:per], scores[:per]), start=1)
        )
    return EntitySupport(entity, sentences, counts)


def _support_sentence(
    ctx: QueryContext, entity: int, sentence: int, rank: int, value: float
) -> SupportSentence:
    index = ctx.index
    doc = int(index.sent_doc[sentence])
    lo, hi = int(index.seq_indptr[sentence]), int(index.seq_indptr[sentence + 1])
    # a handful of terms per sentence: plain Python beats numpy's per-call overhead here
    wanted = ctx.term_id_set
    spans = zip(
        index.seq_terms[lo:hi].tolist(),
        index.seq_char_start[lo:hi].tolist(),
        index.seq_char_end[lo:hi].tolist(),
    )
    term_spans = tuple((a, b) for t, a, b in spans if t in wanted)
    entity_spans = tuple((a, b) for _, a, b in index.mention_spans(sentence, entity))
    first, count = int(index.doc_first[doc]), int(index.doc_nsent[doc])
    around = range(max(first, sentence - ctx.window), min(first + count, sentence + ctx.window + 1))
    context = tuple(ContextSentence(n, n - sentence, index.texts[n]) for n in around if n != sentence)
    return SupportSentence(
        sentence,
        rank,
        value,
        doc,
        index.titles[doc],
        index.texts[sentence],
        term_spans,
        entity_spans,
        context,
    )
