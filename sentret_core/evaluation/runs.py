"""Runs of a benchmark's topics under any evaluable model, their metrics, tuning and coverage.

**Candidates.** Plain sentence retrieval (WikiQA, TrecQA): a topic's candidates are the
question's own sentences. A model scores every candidate (collection statistics are the
split's) with :meth:`~sentret_core.models.core.spec.ModelSpec.score_at`: a candidate its scorer does
not return (it matches no query term in any field the model uses) gets the model's own score
for it, the smoothed likelihood of a language model (finite: the collection model is never 0)
or TF-ISF's and BM25's 0. Only under a model with no such score (none registered) is it
unscored, ``-inf``: all such candidates tie at the bottom, tie-aware metrics average over their
orderings exactly, and exported run files leave them out.
Entity support (squad-support): as in the support engine
(:class:`~sentret_core.support.context.QueryContext`), a sentence scorer F ranks S_qe, the
sentences of *its own* top-k that mention e (Blanco & Zaragoza, SIGIR 2010, eq. 5/6; a scorer that takes the entity,
``ltr.v1``, is given it); ``position`` (eq. 8) ranks the
ranker's S_qe; ``sum-*``/``avg-*`` (eq. 7) and both baselines rank Ŝ_qe, the ranker's top-k
with ±``window`` context that mention e. A relevant sentence outside the candidates is not
retrieved.

**Metrics.** Tie-aware (:func:`~sentret_core.evaluation.measures.evaluate`), plus MAP with
ties broken against (``map-pessimistic``) and for (``map-optimistic``) the relevant sentences.

**Tuning.** Greedy coordinate ascent over each parameter's declared grid (the default is added
to the grid when it is not on it, and is the start), maximising the mean of one metric over
the given (training) topics only.
"""

from __future__ import annotations

import math
from collections.abc import Callable, Mapping, Sequence
from typing import Any

import numpy as np
import pandas as pd

from sentret_core.defaults import DEFAULT_K, DEFAULT_RANKER, DEFAULT_WINDOW, MAX_K, MAX_WINDOW
from sentret_core.errors import SentretError
from sentret_core.evaluation.benchmarks.base import Benchmark, Topic
from sentret_core.evaluation.coverage import coverage_curve
from sentret_core.evaluation.evaluable import BASELINES, RANDOM, check_model, is_scorer, resolve_params, tuning_space
from sentret_core.evaluation.measures import DEFAULT_METRICS, Metric, evaluate, parse_metric
from sentret_core.evaluation.metrics import Mode, average_precision, precision_at_k, r_precision, reciprocal_rank
from sentret_core.evaluation.trec_io import Qrels, Run
from sentret_core.evaluation.tuning import TuningResult, coordinate_ascent
from sentret_core.models import get_model, score, search
from sentret_core.models.core.query import Terms, normalise, prepare
from sentret_core.models.core.spec import ENTITY_PARAM
from sentret_core.support.context import QueryContext
from sentret_core.support.entity_stats import entity_sentences
from sentret_core.support.sets import first_hits, ranking_of

PESSIMISTIC = "map-pessimistic"
OPTIMISTIC = "map-optimistic"

Scored = tuple[Topic, np.ndarray, np.ndarray]  # a topic, its candidate ids, their scores
Request = tuple[str, Mapping[str, Any] | None]  # a model and its parameter overrides


class Evaluator:
    """Scores and evaluates one benchmark's topics under any model and parameters."""

    def __init__(
        self,
        bench: Benchmark,
        *,
        metrics: Sequence[str] = DEFAULT_METRICS,
        k: int = DEFAULT_K,
        ranker: str = DEFAULT_RANKER,
        ranker_params: Mapping[str, Any] | None = None,
        window: int = DEFAULT_WINDOW,
    ) -> None:
        if isinstance(k, bool) or not isinstance(k, int) or not 1 <= k <= MAX_K:
            raise SentretError(f"k must be an integer from 1 to {MAX_K:,} (got {k!r})")
        if isinstance(window, bool) or not isinstance(window, int) or not 0 <= window <= MAX_WINDOW:
            raise SentretError(f"the context window must be an integer from 0 to {MAX_WINDOW} (got {window!r})")
        self.bench = bench
        self.index = bench.index
        self.metrics = list(dict.fromkeys(parse_metric(m).name for m in metrics))
        if not self.metrics:
            raise SentretError("choose at least one metric")
        self.k = k
        self.window = window
        self.ranker = get_model(ranker).name
        self.ranker_params = resolve_params(self.ranker, ranker_params)
        self._terms: dict[str, Terms] = {}

    # --- helpers
    def topics(self, ids: Sequence[str] | None = None) -> list[Topic]:
        if ids is None:
            return list(self.bench.topics)
        table = self.bench.topic_map
        return [table[t] for t in ids]

    def terms(self, topic: Topic) -> Terms:
        terms = self._terms.get(topic.question)
        if terms is None:
            terms = normalise(self.index, topic.query)
            self._terms[topic.question] = terms
        return terms

    def _as_run(self, scored: Sequence[Scored]) -> Run:
        """Per topic, candidates in document (sentence id) order, so an exported run's ties are too."""
        docids = self.bench.docids
        run: Run = {}
        for topic, ids, values in scored:
            order = np.argsort(ids, kind="stable")
            run[topic.id] = {docids[int(s)]: float(v) for s, v in zip(ids[order].tolist(), values[order].tolist())}
        return run

    # --- runs
    def run(self, model: str, params: Mapping[str, Any] | None = None, topics: Sequence[str] | None = None) -> Run:
        """The run of ``model`` with ``params`` over ``topics`` (default: all)."""
        return self.runs([(model, params)], topics)[0]

    def runs(self, models: Sequence[Request], topics: Sequence[str] | None = None) -> list[Run]:
        """Runs of several (model, params) at once; models that re-rank Ŝ_qe share one query context."""
        return [self._as_run(scored) for scored in self.scored(models, topics)]

    def scored(self, models: Sequence[Request], topics: Sequence[str] | None = None) -> list[list[Scored]]:
        """Per (model, params), per topic: the candidate sentence ids and their scores."""
        chosen = self.topics(topics)
        names = [check_model(self.bench.kind, m) for m, _ in models]
        params = [resolve_params(m, p) for m, (_, p) in zip(names, models)]
        out: list[list[Scored]] = [[] for _ in names]
        if self.bench.kind == "sentences":
            for i, (name, p) in enumerate(zip(names, params)):
                out[i] = [(topic, *self._candidate_scores(topic, name, p)) for topic in chosen]
            return out
        by_question: dict[str, list[Topic]] = {}
        for topic in chosen:
            by_question.setdefault(topic.question, []).append(topic)
        contextual = [i for i, name in enumerate(names) if not is_scorer(name)]
        for group in by_question.values():
            terms = self.terms(group[0])
            if contextual:
                ctx = QueryContext.of(self.index, terms, ranker=self.ranker, k=self.k, window=self.window,
                                   params={self.ranker: self.ranker_params})
                for i in contextual:
                    out[i] += [(topic, *self._support_scores(ctx, topic, names[i])) for topic in group]
            for i, (name, p) in enumerate(zip(names, params)):
                if i in contextual:
                    continue
                shared = None if get_model(name).takes_entity else self._top(terms, name, p)
                for topic in group:
                    assert topic.entity is not None
                    ids, values = shared or self._top(terms, name, {**p, ENTITY_PARAM: topic.entity})
                    keep = np.isin(ids, entity_sentences(self.index, topic.entity), assume_unique=True)
                    out[i].append((topic, ids[keep], values[keep]))
        return out

    def _top(self, terms: Terms, model: str, params: Mapping[str, Any]) -> tuple[np.ndarray, np.ndarray]:
        """``model``'s top-k for ``terms``, as (ids ascending, scores)."""
        ranked = search(self.index, terms, model, self.k, **params)
        order = np.argsort(ranked.ids, kind="stable")
        return np.asarray(ranked.ids)[order], np.asarray(ranked.scores)[order]

    def _baseline_scores(self, model: str, ids: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
        if model == RANDOM:
            return ids, np.zeros(len(ids))
        return ids, -np.asarray(self.index.sent_pos)[ids].astype(np.float64)  # doc-order

    def _candidate_scores(self, topic: Topic, model: str, params: Mapping[str, Any]) -> tuple[np.ndarray, np.ndarray]:
        assert topic.candidates is not None
        ids = topic.candidates
        if model in BASELINES:
            return self._baseline_scores(model, ids)
        spec = get_model(model)
        values = spec.score_at(self.index, prepare(self.index, self.terms(topic)), spec.resolve(params), ids)
        return ids, values

    def _support_scores(self, ctx: QueryContext, topic: Topic, model: str) -> tuple[np.ndarray, np.ndarray]:
        assert topic.entity is not None
        if model in BASELINES:
            mentions = entity_sentences(self.index, topic.entity)
            return self._baseline_scores(model, mentions[np.isin(mentions, ctx.context, assume_unique=True)])
        ids, values = ctx.candidates(topic.entity, model)
        return np.asarray(ids, dtype=np.int64), np.asarray(values, dtype=np.float64)

    # --- evaluation
    def qrels(self, topics: Sequence[str] | None = None) -> Qrels:
        return {t.id: self.bench.qrels[t.id] for t in self.topics(topics)}

    def per_topic(self, run: Run, topics: Sequence[str] | None = None) -> pd.DataFrame:
        """Tie-aware per-topic values of every metric, plus pessimistic and optimistic MAP."""
        qrels = self.qrels(topics)
        frame = evaluate(qrels, run, self.metrics, scale=self.bench.scale)
        modes: tuple[tuple[Mode, str], ...] = (("pessimistic", PESSIMISTIC), ("optimistic", OPTIMISTIC))
        for mode, column in modes:
            frame[column] = evaluate(qrels, run, ["map"], mode=mode, scale=self.bench.scale)["map"]
        return frame

    def objective(self, model: str, topics: Sequence[str], metric: str) -> Callable[[dict[str, Any]], float]:
        """Mean ``metric`` of ``model`` over ``topics`` as a function of its parameters.

        The same tie-aware values as :meth:`per_topic` (a test checks it), computed on the score
        arrays directly for MAP, MRR, P@k and R-Prec (no run dictionaries): tuning calls it often.
        """
        parsed = parse_metric(metric)
        qrels = self.qrels(topics)

        def value(params: dict[str, Any]) -> float:
            try:
                resolve_params(model, params)
            except SentretError:  # a combination the model's constraints forbid (a damaged index is no such thing)
                return -math.inf
            (scored,) = self.scored([(model, params)], topics)
            if parsed.kind.startswith("ndcg"):
                frame = evaluate(qrels, self._as_run(scored), [parsed.name], scale=self.bench.scale)
                return float(frame[parsed.name].mean())
            return float(np.mean([_metric(parsed, topic, ids, values) for topic, ids, values in scored]))

        return value

    def tune(
        self,
        model: str,
        topics: Sequence[str],
        metric: str,
        *,
        fixed: Mapping[str, Any] | None = None,
        max_rounds: int = 100,
    ) -> TuningResult:
        """Coordinate ascent over ``model``'s declared grids on ``topics`` only; parameters in
        ``fixed`` keep their values. Starts from the defaults."""
        base = resolve_params(model, fixed)
        space = {name: grid for name, grid in tuning_space(model).items() if name not in (fixed or {})}
        if not space:
            return TuningResult(base, math.nan, ())
        objective = self.objective(model, topics, metric)
        start = {name: base[name] for name in space}
        found = coordinate_ascent(lambda p: objective(dict(base, **p)), space, start, max_rounds=max_rounds)
        return TuningResult(dict(base, **found.params), found.score, found.evaluations)

    # --- coverage (Blanco & Zaragoza, SIGIR 2010, Fig. 2)
    def first_hits(self, topics: Sequence[str] | None = None) -> dict[str, dict[str, float | None]]:
        """Per topic, the smallest k at which a relevant sentence enters S_qe (its rank under the
        ranker among all its candidates) and Ŝ_qe (the best rank over the sentence and its
        ±window neighbours); None if it never does."""
        if self.bench.kind != "support":
            raise SentretError("the coverage curve applies to squad-support only")
        plain: dict[str, float | None] = {}
        context: dict[str, float | None] = {}
        question, ranking = None, np.zeros(0, dtype=np.int64)
        for topic in self.topics(topics):
            if topic.question != question:  # topics of a question are adjacent
                found = score(self.index, self.terms(topic), self.ranker, **self.ranker_params)
                question, ranking = topic.question, ranking_of(found.ids, found.scores)
            plain[topic.id], context[topic.id] = first_hits(self.index, ranking, topic.relevant, self.window)
        return {"S_qe": plain, "Ŝ_qe": context}

    def coverage(self, ks: Sequence[float] | None = None) -> pd.DataFrame:
        grid = ks if ks is not None else np.unique(np.round(np.logspace(0, 4, 41)))
        return coverage_curve(self.first_hits(), grid)


def _metric(metric: Metric, topic: Topic, ids: np.ndarray, values: np.ndarray) -> float:
    """One tie-aware metric of one topic from its score array (binary relevance: ``topic.relevant``)."""
    relevant = np.isin(ids, np.asarray(topic.relevant, dtype=np.int64))
    total = len(topic.relevant)
    if metric.kind == "map":
        return average_precision(values, relevant, total)
    if metric.kind == "mrr":
        return reciprocal_rank(values, relevant)
    if metric.kind == "r-prec":
        return r_precision(values, relevant, total)
    assert metric.kind == "p" and metric.k is not None
    return precision_at_k(values, relevant, metric.k)
