"""Entity support sentences (Blanco & Zaragoza, SIGIR 2010, §3): S_q, Ŝ_q, entity ranking and H_qe(s) per model.

For a query q the *ranker* (any registered sentence scorer) gives S_q, its top-k sentences;
Ŝ_q adds each one's ±``window`` neighbours inside its document. Entities mentioned in S_q are
ranked by frequency, rarity, combination or KLD (:mod:`sentret_core.support.entity_stats`). For each
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

import time
from collections.abc import Iterable, Mapping, Sequence
from typing import Any

import numpy as np

from sentret_core.checks import (
    ONLY_CONTROL,
    check_entity_ids,
    check_int,
    check_str,
    check_strings,
    query_emptied,
)
from sentret_core.defaults import (
    DEFAULT_ENTITY_SCORE,
    DEFAULT_ENTITY_WEIGHTING,
    DEFAULT_K,
    DEFAULT_PER_ENTITY,
    DEFAULT_RANKER,
    DEFAULT_SUPPORT_ENTITIES,
    DEFAULT_SUPPORT_MODELS,
    DEFAULT_WINDOW,
)
from sentret_core.errors import ArgumentValueError, SentretError
from sentret_core.index.reader import Index
from sentret_core.models.core.query import retrieval_terms
from sentret_core.models.core.registry import get_model
from sentret_core.support.context import ContextArgs, QueryContext, check_support_model
from sentret_core.support.entity_stats import ENTITY_SCORES, check_entity_score, rarity
from sentret_core.support.records import ContextSentence, EntitySupport, RankedEntity, SupportResult, SupportSentence
from sentret_core.support.registry import support_model


def support(
    index: Index,
    query: str | Sequence[str],
    *,
    ranker: str = DEFAULT_RANKER,
    k: int = DEFAULT_K,
    entity_score: str = DEFAULT_ENTITY_SCORE,
    entity_labels: Iterable[str] | None = None,
    top_entities: int = DEFAULT_SUPPORT_ENTITIES,
    models: Sequence[str] = DEFAULT_SUPPORT_MODELS,
    per_entity: int = DEFAULT_PER_ENTITY,
    params: Mapping[str, Mapping[str, Any]] | None = None,
    window: int = DEFAULT_WINDOW,
    entities: Sequence[int] | None = None,
    entity_weighting: str = DEFAULT_ENTITY_WEIGHTING,
) -> SupportResult:
    """The entities of ``query`` ranked by ``entity_score``, each with its top support sentences per model.

    ``entities`` (entity ids) skips the ranking and explains exactly those entities.
    ``params`` maps a model name to its parameters, e.g. ``{"bm25f.v1": {"k1": 0.9}}``.
    ``window`` is the context of Ŝ_q, 0 to 10 sentences either side; ``window=0`` is Blanco & Zaragoza's
    "no context" (Ŝ_q = S_q, Fig. 2), so ``sum-*`` then aggregate over S_qe.
    ``entity_weighting`` is how each sentence of S_q counts in the entity scores (and so in eq. 7's
    ``sum-*``/``avg-*``): ``none`` (Blanco & Zaragoza), ``rank`` or ``score`` (:mod:`sentret_core.support.weighting`).

    Every argument is checked before any work (:mod:`sentret_core.checks`):
    :class:`~sentret_core.errors.ArgumentTypeError` (a ``TypeError``) for a wrong type — integers
    must be ``int`` or numpy integers, never bool, float or str; ``models`` and ``entity_labels``
    lists of strings; ``params`` a mapping of mappings — and :class:`~sentret_core.errors.SentretError`
    (a ``ValueError``) for a value out of range: ``1 ≤ k ≤ 1,000,000``, ``0 ≤ window ≤ 10``,
    ``1 ≤ top_entities ≤ 1000``, ``1 ≤ per_entity ≤ 100``, entity ids in ``[0, index.E)``, known
    models, labels and entity scores. Query text is cleaned as in :func:`~sentret_core.models.score`.
    """
    timings: dict[str, float] = {}
    clock = time.perf_counter()
    args = ContextArgs.checked(index, query, ranker=ranker, k=k, window=window, params=params,
                               entity_labels=entity_labels, entity_weighting=entity_weighting)
    check_entity_score(check_str("entity_score", entity_score))
    top_entities = check_int("top_entities", top_entities, 1, 1000)
    per_entity = check_int("per_entity", per_entity, 1, 100)
    entities = check_entity_ids(args.index, entities)
    models = tuple(check_support_model(m) for m in check_strings("models", models))
    if not models:
        raise ArgumentValueError("models is empty: choose at least one support model")
    ctx = QueryContext(args)
    if ctx.reason is not None and query_emptied(query):
        ctx.reason = ONLY_CONTROL
    timings["S_q"] = time.perf_counter() - clock

    clock = time.perf_counter()
    chosen = rank_entities(ctx, entity_score, top_entities, entities)
    timings["entities"] = time.perf_counter() - clock

    clock = time.perf_counter()
    for model in models:  # each model's top-k once, before the per-entity loop
        if support_model(model) is None and not get_model(model).takes_entity:
            ctx.model_top(model)
    timings["models"] = time.perf_counter() - clock

    clock = time.perf_counter()
    ranked = [{model: ctx.ranked_candidates(entity.entity, model) for model in models} for entity in chosen]
    _read_ahead(ctx, [ids[:per_entity] for by_model in ranked for ids, _ in by_model.values()])
    results = tuple(_entity_support(ctx, entity, by_model, per_entity) for entity, by_model in zip(chosen, ranked))
    timings["support"] = time.perf_counter() - clock
    return SupportResult(
        query=ctx.query,
        terms=retrieval_terms(ctx.terms),
        ranker=ctx.ranker,
        k=ctx.k,
        entity_score=entity_score,
        entity_weighting=ctx.weighting,
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
        positions = entity_order(ctx, entity_score)[:top_entities]
        wanted, found = stats.ids[positions], np.ones(len(positions), dtype=bool)
    columns = {name: stats.score(name) for name in ENTITY_SCORES}
    counts = np.asarray(ctx.counts, dtype=np.float64)
    hat_counts = _context_counts(ctx, wanted)
    ranked = []
    for rank, (entity, pos, ok, hat) in enumerate(zip(wanted, positions, found, hat_counts), start=1):
        # an entity outside S_q: frequency, combination and KLD are 0; rarity is query-independent
        scores = {name: float(columns[name][pos]) if ok else 0.0 for name in ENTITY_SCORES}
        scores["rarity"] = float(rarity(index, np.array([entity]))[0])
        count = int(counts[pos]) if ok else 0
        ranked.append(
            RankedEntity(
                entity=int(entity),
                text=index.entity_texts[int(entity)],
                label=index.entity_labels[int(entity)],
                rank=rank,
                score=scores[entity_score],
                frequency=count,
                context_frequency=int(hat),
                rarity=scores["rarity"],
                combination=scores["combination"],
                kld=scores["kld"],
                weighted_frequency=scores["frequency"],
            )
        )
    return ranked


def entity_order(ctx: QueryContext, entity_score: str) -> np.ndarray:
    """Positions in ``ctx.stats`` of the entities of the allowed labels, best ``entity_score`` first;
    ties by (weighted) frequency, then by entity id for a stable order."""
    stats = ctx.stats
    keep = np.flatnonzero(ctx.allowed[stats.ids])
    chosen = stats.score(entity_score)[keep]
    order: np.ndarray = keep[np.lexsort((stats.ids[keep], -stats.frequency[keep], -chosen))]
    return order


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
    ctx: QueryContext, entity: RankedEntity, ranked: dict[str, tuple[np.ndarray, np.ndarray]], per: int
) -> EntitySupport:
    sentences, counts = {}, {}
    for model, (ids, scores) in ranked.items():
        counts[model] = len(ids)
        sentences[model] = tuple(
            _support_sentence(ctx, entity.entity, int(s), rank, float(v))
            for rank, (s, v) in enumerate(zip(ids[:per], scores[:per]), start=1)
        )
    return EntitySupport(entity, sentences, counts)


def _read_ahead(ctx: QueryContext, shown: list[np.ndarray]) -> None:
    """Read the texts of the sentences to be shown, with their context, and their documents' titles, several row
    groups at once (:meth:`~sentret_core.index.texts.ColumnRows.read_ahead`): a support request shows sentences from
    ~100 row groups, 20 ms read one by one at 75M sentences."""
    index = ctx.index
    sentences = np.unique(np.concatenate([np.zeros(0, dtype=np.int64), *(np.asarray(ids) for ids in shown)]))
    if len(sentences):
        index.texts.read_ahead(index.neighbourhood(sentences, ctx.window))
        index.titles.read_ahead(index.sent_doc.take(sentences))


def _support_sentence(
    ctx: QueryContext, entity: int, sentence: int, rank: int, value: float
) -> SupportSentence:
    index = ctx.index
    doc = int(index.sent_doc[sentence])
    # a handful of terms per sentence: plain Python beats numpy's per-call overhead here
    wanted = ctx.term_id_set
    spans = zip(*(index.occurrences(name, sentence).tolist() for name in ("seq_terms", "seq_char_start",
                                                                          "seq_char_end")))
    term_spans = tuple((a, b) for t, a, b in spans if t in wanted)
    entity_spans = tuple((a, b) for _, a, b in index.mention_spans(sentence, entity))
    around = index.neighbours(sentence, ctx.window).tolist()
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
