"""What every entity of one query shares (Blanco & Zaragoza, SIGIR 2010, §3): S_q, Ŝ_q, entity
statistics, each model's top-k.

Support models: any registered sentence scorer (eq. 5/6, over the sentences of its own top-k that
mention e; a scorer that takes the entity, like ``ltr.v1``, is run once per entity) and those of
:mod:`sentret_core.support.registry`: ``position`` (eq. 8, over S_qe of the ranker) and
``sum-<score>`` / ``avg-<score>`` (eq. 7, over Ŝ_qe of the ranker).
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass
from typing import Any

import numpy as np

from sentret_core.checks import check_int, check_labels, check_model_name, check_params, check_query
from sentret_core.defaults import DEFAULT_ENTITY_WEIGHTING, DEFAULT_K, DEFAULT_RANKER, DEFAULT_WINDOW, MAX_K, MAX_WINDOW
from sentret_core.errors import SentretError
from sentret_core.index.loaded import check_index
from sentret_core.index.reader import Index
from sentret_core.models import Scores, get_model
from sentret_core.models.core.api import run_search
from sentret_core.models.core.query import Terms, normalise, written_text
from sentret_core.models.core.spec import ENTITY_PARAM
from sentret_core.support.entities import label_mask, resolve_labels
from sentret_core.support.entity_stats import EntityStats, entity_sentences, entity_stats
from sentret_core.support.registry import OVER_TOP, support_model, support_model_names
from sentret_core.support.sets import in_sorted
from sentret_core.support.weighting import NONE, check_weighting, sentence_weights, weighted_entity_stats


@dataclass(frozen=True)
class ContextArgs:
    """A query context's arguments once checked (:meth:`checked`); the query is cleaned, labels a tuple."""

    index: Index
    query: str | Sequence[str]
    ranker: str
    k: int
    window: int
    params: dict[str, dict[str, Any]]
    labels: tuple[str, ...] | None
    weighting: str

    @classmethod
    def checked(
        cls,
        index: Index,
        query: str | Sequence[str],
        *,
        ranker: str = DEFAULT_RANKER,
        k: int = DEFAULT_K,
        window: int = DEFAULT_WINDOW,
        params: Mapping[str, Mapping[str, Any]] | None = None,
        entity_labels: Iterable[str] | None = None,
        entity_weighting: str = DEFAULT_ENTITY_WEIGHTING,
    ) -> ContextArgs:
        """Each argument checked once (:mod:`sentret_core.checks`), before any work."""
        index, query = check_index(index), check_query(query)
        weighting = check_weighting(entity_weighting)
        k, window = check_int("k", k, 1, MAX_K), check_int("window", window, 0, MAX_WINDOW)
        ranker, labels = check_model_name(ranker, "ranker"), check_labels(entity_labels)
        models = {get_model(name).name: dict(values) for name, values in check_params(params).items()}
        return cls(index, query, get_model(ranker).name, k, window, models, labels, weighting)


class QueryContext:
    """What every entity of one query shares: S_q, Ŝ_q, entity statistics and each model's top-k.

    ``QueryContext.of(index, query, ...)`` checks its arguments; ``QueryContext(args)`` takes them checked
    already (by :meth:`ContextArgs.checked`, as :func:`~sentret_core.support.engine.support` does), so no
    argument is checked twice, and its models' top-k run without checking again either.
    """

    @classmethod
    def of(cls, index: Index, query: str | Sequence[str], **options: Any) -> QueryContext:
        """The context of ``query``, its arguments (``ranker``, ``k``, ``window``, ``params``, ``entity_labels``,
        ``entity_weighting``: those of :meth:`ContextArgs.checked`) checked first."""
        return cls(ContextArgs.checked(index, query, **options))

    def __init__(self, args: ContextArgs) -> None:
        index, query, window = args.index, args.query, args.window
        self.index, self.k, self.window, self.weighting = index, args.k, window, args.weighting
        self.params = args.params
        self.terms = normalise(index, query) if isinstance(query, str) else Terms(query, written_text(query))
        self.query = self.terms.text
        ids = index.term_ids(list(self.terms))
        self.term_ids = np.unique(ids[ids >= 0])  # the query's in-vocabulary term ids
        self.term_id_set = set(self.term_ids.tolist())
        self.ranker = args.ranker
        self.labels = resolve_labels(index, args.labels)
        self.allowed = label_mask(index, self.labels)
        self._tops: dict[str, tuple[np.ndarray, np.ndarray]] = {}
        ranked = self._ranked(self.ranker)
        self._keep_top(self.ranker, ranked)  # the ranker's top-k is its top-k as a support model too
        self.reason = ranked.reason
        self.top = np.asarray(ranked.ids, dtype=np.int64)  # S_q in rank order
        self.top_sorted = np.sort(self.top)
        self.context = index.neighbourhood(self.top, window)  # Ŝ_q, ascending
        # w_i per sentence of S_q (:mod:`sentret_core.support.weighting`); None: Blanco & Zaragoza's unweighted counts
        self.weights = None if self.weighting == NONE else sentence_weights(ranked.scores, self.weighting)
        self.stats: EntityStats = weighted_entity_stats(index, self.top, self.weights)
        # |S_qe| as a count, aligned with stats.ids (the weighted frequency is stats.frequency)
        self.counts = self.stats.frequency if self.weights is None else entity_stats(index, self.top).frequency

    def _ranked(self, model: str, extra: Mapping[str, Any] | None = None) -> Scores:
        spec = get_model(model)
        resolved = spec.resolve({**self.params.get(model, {}), **(extra or {})})
        return run_search(self.index, self.terms, spec, resolved, self.k)

    def model_top(self, model: str, entity: int | None = None) -> tuple[np.ndarray, np.ndarray]:
        """A model's top-k as (ids ascending, scores); for a model that takes the entity
        (:attr:`~sentret_core.models.core.spec.ModelSpec.takes_entity`), its top-k for ``entity``."""
        key = model if entity is None else f"{model}@{entity}"
        if key not in self._tops:
            extra = {} if entity is None else {ENTITY_PARAM: entity}
            self._keep_top(key, self._ranked(model, extra))
        return self._tops[key]

    def _keep_top(self, key: str, ranked: Scores) -> None:
        order = np.argsort(ranked.ids, kind="stable")
        self._tops[key] = (np.asarray(ranked.ids)[order], np.asarray(ranked.scores)[order])

    def candidates(self, entity: int, model: str) -> tuple[np.ndarray, np.ndarray]:
        """Every candidate support sentence of ``entity`` under ``model`` and its H_qe(s)."""
        mentions = entity_sentences(self.index, entity)
        found = support_model(model)
        if found is not None:
            ids = mentions[in_sorted(mentions, self.top_sorted if found.over == OVER_TOP else self.context)]
            return ids, found.score(self, entity, ids)
        spec = get_model(model)
        ids, scores = self.model_top(spec.name, entity if spec.takes_entity else None)
        keep = in_sorted(ids, mentions)
        return ids[keep], scores[keep]

    def ranked_candidates(self, entity: int, model: str) -> tuple[np.ndarray, np.ndarray]:
        """``candidates`` in rank order: score descending, ties by sentence id."""
        ids, scores = self.candidates(entity, model)
        order = np.lexsort((ids, -scores))
        return ids[order], scores[order]


def check_support_model(name: str) -> str:
    """The canonical name of a support model, or a clear error listing the choices."""
    if support_model(name) is not None:
        return name
    try:
        return get_model(name).name
    except SentretError as err:
        others = ", ".join(support_model_names())
        raise SentretError(f"{err}; support models also include {others}") from None
