"""Every model evaluated against a session's own judgments (tie-aware metrics, significance, coverage)."""

from __future__ import annotations

import math
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

import numpy as np
import pandas as pd

from sentret_core.annotation.agreement_summary import finite_or_none
from sentret_core.annotation.records import Judgment
from sentret_core.annotation.session_setup import check_models
from sentret_core.annotation.topics import EVAL_METRICS, find_entity
from sentret_core.defaults import (
    DEFAULT_K,
    DEFAULT_RANKER,
    DEFAULT_SUPPORT_MODELS,
    DEFAULT_WINDOW,
    RELEVANT_GRADE,
    TREC_RELEVANT_GRADE,
)
from sentret_core.errors import SentretError
from sentret_core.evaluation.coverage import coverage_curve
from sentret_core.evaluation.measures import evaluate, parse_metric
from sentret_core.evaluation.significance import compare
from sentret_core.evaluation.trec_io import Qrels, Run, parse_qrels, split_topic_id
from sentret_core.index.docnos import sentence_ids

if TYPE_CHECKING:
    from sentret_core.annotation.admin import Admin
    from sentret_core.index.reader import Index
    from sentret_core.support.context import QueryContext


@dataclass
class Evaluation:
    """Every model's tie-aware metrics on the judged topics, compared with a baseline."""

    models: tuple[str, ...]
    baseline: str
    metrics: tuple[str, ...]
    per_topic: dict[str, pd.DataFrame]  # model → topics × metrics
    comparison: pd.DataFrame  # evaluate.compare: model, metric, mean, diff, p_ttest, p_wilcoxon, significant
    coverage: pd.DataFrame  # index k; columns S_qe, Ŝ_qe
    runs: dict[str, Run]
    skipped_topics: tuple[str, ...] = ()  # judged topics without a relevant sentence
    settings: dict[str, Any] = field(default_factory=dict)

    @property
    def topics(self) -> list[str]:
        return [str(t) for t in self.per_topic[self.baseline].index]

    def means(self) -> pd.DataFrame:
        """Models × metrics: the mean over topics."""
        return pd.DataFrame({m: self.per_topic[m].mean() for m in self.models}).T.loc[list(self.models)]

    def differences(self, metric: str) -> pd.DataFrame:
        """Topics × models (baseline excluded): the model's value minus the baseline's on ``metric``."""
        name = parse_metric(metric).name
        base = self.per_topic[self.baseline][name]
        return pd.DataFrame(
            {m: self.per_topic[m][name] - base for m in self.models if m != self.baseline},
            index=base.index,
        )

    def to_dict(self) -> dict[str, Any]:
        means = self.means()
        rows = self.comparison.to_dict(orient="records")
        return {
            "models": list(self.models),
            "baseline": self.baseline,
            "metrics": list(self.metrics),
            "topics": len(self.topics),
            "skipped_topics": list(self.skipped_topics),
            "settings": self.settings,
            "means": {m: {c: finite_or_none(float(v)) for c, v in means.loc[m].items()} for m in self.models},
            "comparison": [{k: _plain(v) for k, v in row.items()} for row in rows],
            "coverage": {
                str(col): {
                    str(k): float(v)
                    for k, v in zip(self.coverage.index.tolist(), self.coverage[col].tolist())
                }
                for col in self.coverage.columns
            },
        }


def _plain(value: Any) -> Any:
    if isinstance(value, (bool, np.bool_)):
        return bool(value)
    if isinstance(value, (float, np.floating)):
        return finite_or_none(float(value))
    return value


def by_internal_id(index: Index, qrels: Mapping[str, Mapping[str, int]]) -> dict[str, dict[str, int]]:
    """``qrels`` with every sentence named by its internal id: a docno (``<document id>-<position>``, what
    sessions export) is looked up in ``index``, a whole number kept (what they exported before)."""
    docnos = sorted({d for judged in qrels.values() for d in judged if not (d.isascii() and d.isdigit())})
    ids = dict(zip(docnos, sentence_ids(index, docnos))) if docnos else {}
    return {tid: {str(ids.get(d, d)): grade for d, grade in judged.items()} for tid, judged in qrels.items()}


def _topic_targets(index: Index, qrels: Mapping[str, Mapping[str, int]]) -> dict[str, tuple[str, int]]:
    """topic id → (query, entity id), with sentence ids checked against the index."""
    targets: dict[str, tuple[str, int]] = {}
    for tid, judged in qrels.items():
        query, key = split_topic_id(tid)
        for docid in judged:
            sid = int(docid)
            if not 0 <= sid < index.N:
                raise SentretError(
                    f"topic {tid!r}: sentence {sid} is not in this index ({index.N:,} sentences)"
                )
        targets[tid] = (query, find_entity(index, key))
    return targets


def evaluate_judgments(
    index: Index,
    qrels: Mapping[str, Mapping[str, int]],
    *,
    models: Sequence[str] = DEFAULT_SUPPORT_MODELS,
    baseline: str | None = None,
    metrics: Sequence[str] = EVAL_METRICS,
    ranker: str = DEFAULT_RANKER,
    k: int = DEFAULT_K,
    window: int = DEFAULT_WINDOW,
    ks: Sequence[float] | None = None,
    params: Mapping[str, Mapping[str, Any]] | None = None,
) -> Evaluation:
    """Evaluate ``models`` on graded (query, entity) qrels (topic ids ``query:text|LABEL``, docids =
    docnos or internal sentence ids); ``baseline`` defaults to the first model; ``params`` maps a model to its
    parameters (``{"ltr.v1": {"model": "team-linear"}}`` scores the stored ranker ``team-linear``)."""
    from sentret_core.models import get_model
    from sentret_core.support.context import QueryContext

    names = check_models(models)
    base = check_models([baseline])[0] if baseline else names[0]
    if base not in names:
        names = (*names, base)
    metric_names = tuple(dict.fromkeys(parse_metric(m).name for m in metrics))
    if not metric_names:
        raise SentretError("choose at least one metric")
    ranker = get_model(ranker).name
    if not qrels:
        raise SentretError("there are no judgments to evaluate")
    qrels = by_internal_id(index, qrels)
    targets = _topic_targets(index, qrels)
    runs: dict[str, Run] = {m: {} for m in names}
    contexts: dict[str, QueryContext] = {}
    for tid, (query, entity) in targets.items():
        ctx = contexts.get(query)
        if ctx is None:
            ctx = contexts[query] = QueryContext.of(index, query, ranker=ranker, k=k, window=window, params=params)
        for model in names:
            ids, scores = ctx.candidates(entity, model)
            runs[model][tid] = {str(int(s)): float(v) for s, v in zip(ids.tolist(), scores.tolist())}
    per_topic = {
        m: evaluate(qrels, runs[m], list(metric_names), scale="graded") for m in names
    }
    skipped = tuple(per_topic[base].attrs.get("skipped_topics", ()))
    if per_topic[base].empty:
        raise SentretError(
            f"no topic has a relevant judgment (grade ≥ {RELEVANT_GRADE} on the 1-4 scale, ≥ {TREC_RELEVANT_GRADE} "
            "on the trec scale): there is nothing to evaluate"
        )
    comparison = compare(per_topic, base)
    grid = ks if ks is not None else np.unique(np.round(np.logspace(0, 4, 41)))
    coverage = coverage_curve(_first_hits(index, qrels, targets, contexts, ranker, window), grid)
    settings = {"ranker": ranker, "k": k, "window": window, "scale": "graded",
                "relevant": f"grade >= {RELEVANT_GRADE}", "ties": "tie-aware",
                "params": {m: dict(v) for m, v in next(iter(contexts.values())).params.items()}}
    return Evaluation(names, base, metric_names, per_topic, comparison, coverage, runs, skipped, settings)


def _first_hits(
    index: Index,
    qrels: Mapping[str, Mapping[str, int]],
    targets: Mapping[str, tuple[str, int]],
    contexts: Mapping[str, QueryContext],
    ranker: str,
    window: int,
) -> dict[str, dict[str, float | None]]:
    """Per topic with a relevant sentence: the smallest k whose S_qe (the ranker's top-k that
    mention e) / Ŝ_qe (with ±window context) holds a relevant sentence; None if no k does."""
    from sentret_core.models import score

    ranks_by_query: dict[str, np.ndarray] = {}
    plain: dict[str, float | None] = {}
    context: dict[str, float | None] = {}
    for tid, (query, _) in targets.items():
        relevant = [int(d) for d, g in qrels[tid].items() if g >= RELEVANT_GRADE]
        if not relevant:
            continue
        ranks = ranks_by_query.get(query)
        if ranks is None:
            found = score(index, list(contexts[query].terms), ranker, **contexts[query].params.get(ranker, {}))
            ranks = np.full(index.N, np.inf)
            order = np.lexsort((found.ids, -found.scores))
            ranks[np.asarray(found.ids)[order]] = np.arange(1, len(order) + 1)
            ranks_by_query[query] = ranks
        best = min(float(ranks[s]) for s in relevant)
        around = min(float(ranks[n]) for s in relevant for n in index.neighbours(s, window))
        plain[tid] = best if math.isfinite(best) else None
        context[tid] = around if math.isfinite(around) else None
    return {"S_qe": plain, "Ŝ_qe": context}


def session_qrels(admin: Admin, name: str, rule: str = "majority", annotator: str | None = None) -> Qrels:
    """A session's adjudicated judgments as qrels, grades 1-4 (see :meth:`Admin.export_qrels`): an item's
    adjudicated grade, when it has one, wins over the majority or mean of its grades (:mod:`.adjudication`)."""
    text = admin.export_qrels(name, rule=rule, annotator=annotator, scale="1-4", ids="internal")
    if not text:
        raise SentretError(f"session {name!r} has no judgments yet")
    return parse_qrels(text, source=f"session {name}")


def check_snapshots(index: Index, judgments: Iterable[Judgment]) -> None:
    """Raise if ``index`` is not the index the judged sentences were pooled from."""
    for j in judgments:
        sid = j.sentence_id
        if not 0 <= sid < index.N or (j.text and index.texts[sid] != j.text):
            raise SentretError(
                f"the index {index.path} does not hold the sentences session {j.session!r} was pooled "
                f"from (sentence {sid} differs); open the session's own index"
            )


def evaluate_session(
    admin: Admin,
    name: str,
    index: Index,
    *,
    rule: str = "majority",
    annotator: str | None = None,
    **options: Any,
) -> Evaluation:
    """:func:`evaluate_judgments` on session ``name``'s adjudicated grades (``rule``: majority,
    mean or annotator) after checking that ``index`` is the session's own."""
    check_snapshots(index, admin.all_judgments(name))
    return evaluate_judgments(index, session_qrels(admin, name, rule, annotator), **options)
