"""The evaluation driver: score a benchmark's topics under each model, evaluate, compare, tune.

**Models.** Any registered sentence scorer (``bm25f.v1`` …), two baselines that are always
reported, and — on entity-support benchmarks — the support engine's own scorers:

* ``position``: earlier sentence in its document first (score = -position). On TrecQA every
  candidate is its own document, so it ties everything and equals ``random``.
* ``random``: every candidate tied; tie-aware metrics make it the exact expectation of a
  random ordering.
* ``position-eq8``: seed 002 eq. 8 (``|s| - max(pos_q, pos_e)``; the support engine calls it
  ``position``, renamed here so it cannot be confused with the baseline), and
  ``sum-<score>`` / ``avg-<score>`` (eq. 7) — squad-support only.

**Candidates.** Plain sentence retrieval (WikiQA, TrecQA): a topic's candidates are the
question's own sentences. A model scores the whole collection (collection statistics are the
split's), the scores are restricted to the candidates, and a candidate the model does not
return (it matches no query term in any field the model uses) gets ``-inf``: all such
candidates tie at the bottom, and tie-aware metrics average over their orderings exactly, so
no model gains from an arbitrary order among sentences it cannot tell apart.
Entity support (squad-support): as in the support engine (:class:`~sentret_core.support.QueryContext`),
a sentence scorer F ranks S_qe, the sentences of *its own* top-k that mention e (eq. 5/6);
``position-eq8`` ranks the ranker's S_qe; ``sum-*``/``avg-*`` and both baselines rank Ŝ_qe, the
ranker's top-k with ±``window`` context that mention e. A relevant sentence outside the candidates is not retrieved.

**Evaluation.** Tie-aware metrics (``evaluate.evaluate``), plus MAP with ties broken against
(``map-pessimistic``) and for (``map-optimistic``) the relevant sentences to show the effect of
ties; paired Wilcoxon and t-tests against a baseline (``evaluate.compare``).

**Tuning.** Greedy coordinate ascent (``evaluate.coordinate_ascent``) over each parameter's
declared grid (the default is added to the grid when it is not on it, and is the start),
maximising the mean of one metric over the *training* topics only; either k-fold
cross-validation by topic (``evaluate.cross_validate``, seeded) or train on another file of
the same benchmark (``--tune-on``). Reported numbers are test-fold numbers; every fold records
its training and test topics and the parameters it chose. Models without a grid (TF-ISF,
baselines, entity models) are evaluated as they are.
"""

from __future__ import annotations

import math
import os
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import numpy as np
import pandas as pd

from sentret_core.errors import SentretError
from sentret_core.evaluation.benchmarks.common import Benchmark, Topic
from sentret_core.evaluation.metrics import (
    DEFAULT_METRICS,
    CrossValidationResult,
    Metric,
    Mode,
    Run,
    TuningResult,
    average_precision,
    compare,
    coordinate_ascent,
    coverage_curve,
    cross_validate,
    evaluate,
    parse_metric,
    precision_at_k,
    r_precision,
    reciprocal_rank,
    train_test,
    write_qrels,
    write_run,
)
from sentret_core.models import get_model, list_models, score, top_k
from sentret_core.models.data import normalise

POSITION = "position"
RANDOM = "random"
BASELINES: tuple[str, ...] = (POSITION, RANDOM)
EQ8 = "position-eq8"
DEFAULT_RANKER = "bm25.v1"  # seed 002 re-ranks BM25's top-k
DEFAULT_K = 1000
DEFAULT_WINDOW = 2
PESSIMISTIC = "map-pessimistic"
OPTIMISTIC = "map-optimistic"
ALPHA = 0.05

Scored = tuple[Topic, np.ndarray, np.ndarray]  # a topic, its candidate ids, their scores


def _entity_models() -> tuple[str, ...]:
    from sentret_core.support.engine import ENTITY_MODELS

    return tuple(ENTITY_MODELS)


def support_models() -> tuple[str, ...]:
    """The entity-support-only models: eq. 8 and the eq. 7 aggregations."""
    return (EQ8, *_entity_models())


def kind_of(benchmark: str) -> str:
    """``"support"`` for entity-support benchmarks, ``"sentences"`` for plain sentence retrieval."""
    return "support" if benchmark == "squad-support" else "sentences"


def default_models(kind: str) -> list[str]:
    """Every registered scorer (and, for entity support, eq. 8 and the sum aggregations)."""
    names = [spec.name for spec in list_models()]
    if kind == "support":
        names += [EQ8, *(m for m in _entity_models() if m.startswith("sum-"))]
    return names


def check_model(kind: str, name: str) -> str:
    """The canonical name of an evaluable model, or one clear error listing the choices."""
    name = name.strip()
    if name in BASELINES:
        return name
    if name in support_models():
        if kind != "support":
            raise SentretError(
                f"model {name!r} ranks entity support sentences: it applies to squad-support only"
            )
        return name
    try:
        return get_model(name).name
    except SentretError as err:
        extra = f", {', '.join(support_models())}" if kind == "support" else ""
        raise SentretError(f"{err}; baselines: {', '.join(BASELINES)}{extra}") from None


def is_scorer(name: str) -> bool:
    return name not in BASELINES and name not in support_models()


def resolve_params(model: str, given: Mapping[str, Any] | None) -> dict[str, Any]:
    """A scorer's full parameters (defaults updated with ``given``), validated; {} for others."""
    if not is_scorer(model):
        if given:
            raise SentretError(f"{model} has no parameters (got {', '.join(given)})")
        return {}
    return dict(get_model(model).resolve(dict(given or {})).to_dict())


def tuning_space(model: str) -> dict[str, list[Any]]:
    """Each parameter with a declared grid → its grid, with the default inserted when absent."""
    if not is_scorer(model):
        return {}
    space: dict[str, list[Any]] = {}
    for spec in get_model(model).param_specs():
        if not spec.grid:
            continue
        values = list(spec.grid)
        if spec.default not in values:
            if spec.default is None:
                values.insert(0, None)
            else:
                values = sorted([*values, spec.default])
        space[spec.name] = values
    return space


# --------------------------------------------------------------------------------------------
# Runs
# --------------------------------------------------------------------------------------------


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
        if isinstance(k, bool) or not isinstance(k, int) or not 1 <= k <= 1_000_000:
            raise SentretError(f"k must be an integer from 1 to 1,000,000 (got {k!r})")
        if isinstance(window, bool) or not isinstance(window, int) or not 0 <= window <= 10:
            raise SentretError(f"the context window must be an integer from 0 to 10 (got {window!r})")
        self.bench = bench
        self.index = bench.index
        self.metrics = list(dict.fromkeys(parse_metric(m).name for m in metrics))
        if not self.metrics:
            raise SentretError("choose at least one metric")
        self.k = k
        self.window = window
        self.ranker = get_model(ranker).name
        self.ranker_params = resolve_params(self.ranker, ranker_params)
        self._terms: dict[str, list[str]] = {}

    # --- helpers
    def topics(self, ids: Sequence[str] | None = None) -> list[Topic]:
        if ids is None:
            return list(self.bench.topics)
        table = self.bench.topic_map
        return [table[t] for t in ids]

    def terms(self, topic: Topic) -> list[str]:
        terms = self._terms.get(topic.question)
        if terms is None:
            terms = normalise(self.index, topic.query)
            self._terms[topic.question] = terms
        return terms

    def _as_run(self, topic: Topic, ids: np.ndarray, values: np.ndarray, into: Run) -> None:
        docids = self.bench.docids
        into[topic.id] = {docids[int(s)]: float(v) for s, v in zip(ids.tolist(), values.tolist())}

    # --- runs
    def run(
        self, model: str, params: Mapping[str, Any] | None = None, topics: Sequence[str] | None = None
    ) -> Run:
        """The run of ``model`` with ``params`` over ``topics`` (default: all)."""
        return self.runs([(model, params)], topics)[0]

    def runs(
        self, models: Sequence[tuple[str, Mapping[str, Any] | None]], topics: Sequence[str] | None = None
    ) -> list[Run]:
        """Runs of several (model, params) at once; models that re-rank Ŝ_qe share one query context."""
        out: list[Run] = []
        for scored in self.scored(models, topics):
            run: Run = {}
            for topic, ids, values in scored:
                self._as_run(topic, ids, values, run)
            out.append(run)
        return out

    def scored(
        self, models: Sequence[tuple[str, Mapping[str, Any] | None]], topics: Sequence[str] | None = None
    ) -> list[list[Scored]]:
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
                ctx = self._context(terms)
                for i in contextual:
                    out[i] += [(topic, *self._support_context(ctx, topic, names[i])) for topic in group]
            for i, (name, p) in enumerate(zip(names, params)):
                if i in contextual:
                    continue
                ranked = top_k(score(self.index, terms, name, **p), self.k)
                order = np.argsort(ranked.ids, kind="stable")
                ids, values = np.asarray(ranked.ids)[order], np.asarray(ranked.scores)[order]
                for topic in group:
                    assert topic.entity is not None
                    keep = np.isin(ids, _entity_sentences(self.index, topic.entity), assume_unique=True)
                    out[i].append((topic, ids[keep], values[keep]))
        return out

    def _candidate_scores(
        self, topic: Topic, model: str, params: Mapping[str, Any]
    ) -> tuple[np.ndarray, np.ndarray]:
        assert topic.candidates is not None
        ids = topic.candidates
        if model == RANDOM:
            return ids, np.zeros(len(ids))
        if model == POSITION:
            return ids, -np.asarray(self.index.sent_pos)[ids].astype(np.float64)
        found = score(self.index, self.terms(topic), model, **params)
        values = np.full(len(ids), -math.inf)
        where = np.searchsorted(found.ids, ids)
        inside = where < len(found.ids)
        hit = np.zeros(len(ids), dtype=bool)
        hit[inside] = found.ids[where[inside]] == ids[inside]
        values[hit] = found.scores[where[hit]]
        return ids, values

    def _context(self, terms: list[str]) -> Any:
        from sentret_core.support.engine import QueryContext

        return QueryContext(
            self.index, terms, ranker=self.ranker, k=self.k, window=self.window,
            params={self.ranker: self.ranker_params},
        )  # fmt: skip

    def _support_context(self, ctx: Any, topic: Topic, model: str) -> tuple[np.ndarray, np.ndarray]:
        assert topic.entity is not None
        if model in BASELINES:
            mentions = _entity_sentences(self.index, topic.entity)
            ids = mentions[np.isin(mentions, ctx.context, assume_unique=True)]
            if model == RANDOM:
                return ids, np.zeros(len(ids))
            return ids, -np.asarray(self.index.sent_pos)[ids].astype(np.float64)
        ids, values = ctx.candidates(topic.entity, "position" if model == EQ8 else model)
        return np.asarray(ids, dtype=np.int64), np.asarray(values, dtype=np.float64)

    # --- evaluation
    def qrels(self, topics: Sequence[str] | None = None) -> dict[str, dict[str, int]]:
        ids = [t.id for t in self.topics(topics)]
        return {t: self.bench.qrels[t] for t in ids}

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
                (scored,) = self.scored([(model, params)], topics)
            except SentretError:  # a combination the model's constraints forbid
                return -math.inf
            if parsed.kind.startswith("ndcg"):
                run: Run = {}
                for topic, ids, values in scored:
                    self._as_run(topic, ids, values, run)
                return float(evaluate(qrels, run, [parsed.name], scale=self.bench.scale)[parsed.name].mean())
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

    # --- coverage (seed 002 Fig. 2)
    def first_hits(self, topics: Sequence[str] | None = None) -> dict[str, dict[str, float | None]]:
        """Per topic, the smallest k at which a relevant sentence enters S_qe (its rank under the
        ranker among all its candidates) and Ŝ_qe (the best rank over the sentence and its
        ±window neighbours); None if it never does."""
        if self.bench.kind != "support":
            raise SentretError("the coverage curve applies to squad-support only")
        plain: dict[str, float | None] = {}
        context: dict[str, float | None] = {}
        cache: dict[str, np.ndarray] = {}
        for topic in self.topics(topics):
            ranks = cache.get(topic.question)
            if ranks is None:
                found = score(self.index, self.terms(topic), self.ranker, **self.ranker_params)
                ranks = np.full(self.index.N, np.inf)
                order = np.lexsort((found.ids, -found.scores))
                ranks[np.asarray(found.ids)[order]] = np.arange(1, len(order) + 1)
                cache = {topic.question: ranks}  # topics of a question are adjacent
            best = min(float(ranks[s]) for s in topic.relevant)
            around = min(
                float(ranks[n]) for s in topic.relevant for n in self.index.neighbours(s, self.window)
            )
            plain[topic.id] = best if math.isfinite(best) else None
            context[topic.id] = around if math.isfinite(around) else None
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


def _entity_sentences(index: Any, entity: int) -> np.ndarray:
    from sentret_core.support.engine import entity_sentences

    return entity_sentences(index, entity)


# --------------------------------------------------------------------------------------------
# Whole evaluations and their reports
# --------------------------------------------------------------------------------------------


@dataclass
class ModelResult:
    """One model's test-topic values, run, parameters (or per-fold parameters) and folds."""

    name: str
    per_topic: pd.DataFrame
    run: Run
    params: dict[str, Any] | None
    folds: list[dict[str, Any]] = field(default_factory=list)

    def means(self) -> dict[str, float]:
        return {str(c): float(v) for c, v in self.per_topic.mean().items()}


@dataclass
class Report:
    """Everything one evaluation produced; ``to_dict`` is the CLI's ``--json`` object."""

    bench: Benchmark
    metrics: list[str]
    baseline: str
    results: dict[str, ModelResult]
    comparison: pd.DataFrame
    settings: dict[str, Any]
    tuning: dict[str, Any] | None = None

    def p_values(self, model: str, metric: str) -> tuple[float, float]:
        rows = self.comparison[(self.comparison["model"] == model) & (self.comparison["metric"] == metric)]
        if rows.empty:
            return math.nan, math.nan
        return float(rows["p_wilcoxon"].iloc[0]), float(rows["p_ttest"].iloc[0])

    def significant(self, model: str, metric: str) -> bool:
        """Wilcoxon p < 0.05 against the baseline (Table 2's ``*``)."""
        return model != self.baseline and self.p_values(model, metric)[0] < ALPHA

    def to_dict(self) -> dict[str, Any]:
        models = {}
        for name, result in self.results.items():
            significance = {}
            if name != self.baseline:
                for metric in [*self.metrics, PESSIMISTIC, OPTIMISTIC]:
                    rows = self.comparison[
                        (self.comparison["model"] == name) & (self.comparison["metric"] == metric)
                    ]
                    if not rows.empty:
                        row = rows.iloc[0]
                        significance[metric] = {
                            "diff": _number(row["diff"]),
                            "p_wilcoxon": _number(row["p_wilcoxon"]),
                            "p_ttest": _number(row["p_ttest"]),
                            "significant": bool(row["p_wilcoxon"] < ALPHA),
                        }
            entry: dict[str, Any] = {
                "mean": {k: _number(v) for k, v in result.means().items()},
                "params": _plain(result.params),
                "significance": significance,
            }
            if result.folds:
                entry["folds"] = _plain(result.folds)
            models[name] = entry
        return {
            **_plain(self.bench.describe()),
            "metrics": self.metrics,
            "baseline": self.baseline,
            "significance_test": "Wilcoxon signed-rank (and paired t-test), two-tailed, vs the baseline; "
            "'significant' = Wilcoxon p < 0.05",
            "tie_handling": "tie-aware (expectation over tied orderings); "
            "map-pessimistic/optimistic break ties "
            "against/for the relevant sentences",
            "settings": _plain(self.settings),
            "tuning": _plain(self.tuning),
            "models": models,
        }

    # --- tables
    def _columns(self) -> list[str]:
        return [*self.metrics, PESSIMISTIC, OPTIMISTIC]

    def table_rows(self) -> list[tuple[str, list[str]]]:
        rows = []
        for name, result in self.results.items():
            means = result.means()
            cells = []
            for metric in self._columns():
                mark = "*" if self.significant(name, metric) else ""
                cells.append(f"{means.get(metric, math.nan):.4f}{mark}")
            rows.append((name, cells))
        return rows

    def p_rows(self) -> list[tuple[str, list[str]]]:
        rows = []
        for name in self.results:
            if name == self.baseline:
                continue
            cells = []
            for metric in self.metrics:
                p_w, p_t = self.p_values(name, metric)
                cells.append(f"{_p(p_w)} / {_p(p_t)}")
            rows.append((name, cells))
        return rows

    def header(self) -> str:
        b = self.bench
        text = (
            f"{b.name}: {b.data} — {len(b.topics):,} topics; collection {b.index.D:,} documents, "
            f"{b.index.N:,} sentences"
        )
        options = {k: v for k, v in b.options.items() if v not in (None, 1)}
        if options:
            text += " (" + ", ".join(f"{k}={v}" for k, v in options.items()) + ")"
        return text

    def notes(self) -> list[str]:
        notes = [
            f"tie-aware means over topics; * = Wilcoxon signed-rank p < {ALPHA} against {self.baseline}; "
            f"{PESSIMISTIC}/{OPTIMISTIC} = MAP with ties broken against/for the relevant sentences",
        ]
        if self.bench.kind == "support":
            notes.append(
                f"candidates: scorers rank S_qe of their own top-{self.settings['k']}; position-eq8 the "
                f"S_qe of {self.settings['ranker']}; sum-*/avg-* and the baselines rank Ŝ_qe of "
                f"{self.settings['ranker']} (±{self.settings['window']} context)"
            )
        if self.tuning:
            notes.append(_tuning_note(self.tuning))
        return notes

    def to_text(self) -> str:
        labels = [_label(c) for c in self._columns()]
        width = max(len(n) for n in [*self.results, "model"]) + 2
        cell = max(10, *(len(x) + 1 for x in labels))
        lines = [self.header(), *self.notes(), ""]
        lines.append("model".ljust(width) + "".join(x.rjust(cell) for x in labels))
        for name, cells in self.table_rows():
            lines.append(name.ljust(width) + "".join(c.rjust(cell) for c in cells))
        p_rows = self.p_rows()
        if p_rows:
            lines += ["", f"p-values against {self.baseline} (Wilcoxon / paired t-test):"]
            p_cell = max(19, *(len(x) + 2 for x in labels[: len(self.metrics)]))
            lines.append("model".ljust(width) + "".join(_label(m).rjust(p_cell) for m in self.metrics))
            for name, cells in p_rows:
                lines.append(name.ljust(width) + "".join(c.rjust(p_cell) for c in cells))
        lines += self._params_lines()
        return "\n".join(lines)

    def _params_lines(self) -> list[str]:
        lines = []
        for name, result in self.results.items():
            if result.folds:
                for fold in result.folds:
                    lines.append(f"  {name} fold {fold['fold']}: {_params_text(fold['params'])} "
                                 f"(train {fold['tune_metric']} {fold['train_score']:.4f})")  # fmt: skip
            elif result.params:
                lines.append(f"  {name}: {_params_text(result.params)}")
        return ["", "parameters:", *lines] if lines else []

    def to_markdown(self) -> str:
        labels = [_label(c) for c in self._columns()]
        lines = [f"| model | {' | '.join(labels)} |", "|---|" + "---:|" * len(labels)]
        for name, cells in self.table_rows():
            lines.append(f"| {name} | {' | '.join(cells)} |")
        p_rows = self.p_rows()
        if p_rows:
            lines += ["", f"p-values against {self.baseline} (Wilcoxon / paired t-test):", ""]
            lines.append(f"| model | {' | '.join(_label(m) for m in self.metrics)} |")
            lines.append("|---|" + "---:|" * len(self.metrics))
            lines += [f"| {name} | {' | '.join(cells)} |" for name, cells in p_rows]
        return "\n".join(lines)

    # --- files
    def write_runs(self, path: str | os.PathLike[str]) -> list[Path]:
        """One TREC run file per model: ``<stem>.<model><suffix>`` beside ``path`` (tag = model)."""
        target = Path(path)
        written = []
        for name, result in self.results.items():
            out = target.with_name(f"{target.stem}.{name}{target.suffix}")
            write_run(result.run, out, tag=name)
            written.append(out)
        return written

    def write_qrels(self, path: str | os.PathLike[str]) -> None:
        write_qrels({t.id: self.bench.qrels[t.id] for t in self.bench.topics}, path)


def _label(metric: str) -> str:
    special = {"map": "MAP", "mrr": "MRR", "r-prec": "R-Prec", PESSIMISTIC: "MAP-pess", OPTIMISTIC: "MAP-opt"}
    if metric in special:
        return special[metric]
    return metric.upper().replace("NDCG", "NDCG")


def _p(value: float) -> str:
    if math.isnan(value):
        return "n/a"
    return "<0.0001" if value < 0.0001 else f"{value:.4f}"


def _params_text(params: Mapping[str, Any]) -> str:
    return ", ".join(f"{k}={_short(v)}" for k, v in params.items()) or "no parameters"


def _short(value: Any) -> str:
    return f"{value:g}" if isinstance(value, float) else str(value)


def _tuning_note(tuning: Mapping[str, Any]) -> str:
    if tuning["method"] == "cross-validation":
        return (
            f"tuned: {tuning['folds']}-fold cross-validation by topic (seed {tuning['seed']}), "
            "coordinate ascent "
            f"on {tuning['metric']} over the declared grids; test-fold values"
        )
    return (
        f"tuned on {tuning['train_data']} ({tuning['train_topics']} topics), "
        f"coordinate ascent on {tuning['metric']}"
    )


def _number(value: Any) -> float | None:
    number = float(value)
    return None if math.isnan(number) else number


def _plain(value: Any) -> Any:
    """JSON-ready: numpy scalars to Python, NaN to None, tuples to lists, paths to text."""
    if isinstance(value, Mapping):
        return {str(k): _plain(v) for k, v in value.items()}
    if isinstance(value, (list, tuple)):
        return [_plain(v) for v in value]
    if isinstance(value, (np.integer,)):
        return int(value)
    if isinstance(value, (float, np.floating)):
        return _number(value)
    if isinstance(value, np.bool_):
        return bool(value)
    if isinstance(value, Path):
        return str(value)
    return value


@dataclass(frozen=True)
class Plan:
    """A validated evaluation request: canonical model names (baselines first), parameter
    overrides per model, the baseline, metrics, ranker and tuning metric."""

    models: list[str]
    params: dict[str, dict[str, Any]]
    baseline: str
    metrics: list[str]
    ranker: str
    tune_metric: str


def plan(
    benchmark: str,
    models: Sequence[str] | None = None,
    *,
    params: Mapping[str, Mapping[str, Any]] | None = None,
    baseline: str | None = None,
    metrics: Sequence[str] = DEFAULT_METRICS,
    ranker: str = DEFAULT_RANKER,
    tune_metric: str = "map",
) -> Plan:
    """Check every name and parameter of a request before any data is loaded."""
    kind = kind_of(benchmark)
    names = list(
        dict.fromkeys([*BASELINES, *(check_model(kind, m) for m in (models or default_models(kind)))])
    )
    base = check_model(kind, baseline) if baseline else (RANDOM if benchmark == "trecqa" else POSITION)
    if base not in names:
        names.append(base)
    ranker_name = get_model(ranker).name
    given: dict[str, dict[str, Any]] = {}
    for model, values in (params or {}).items():
        name = check_model(kind, model)
        if name not in names and name != ranker_name:
            raise SentretError(
                f"--param names {name}, which is neither evaluated nor the ranker ({ranker_name})"
            )
        resolve_params(name, values)  # raises on an unknown parameter or a bad value
        given[name] = dict(values)
    parsed = list(dict.fromkeys(parse_metric(m).name for m in metrics))
    if not parsed:
        raise SentretError("choose at least one metric")
    return Plan(names, given, base, parsed, ranker_name, parse_metric(tune_metric).name)


def evaluate_benchmark(
    bench: Benchmark,
    models: Sequence[str] | None = None,
    *,
    params: Mapping[str, Mapping[str, Any]] | None = None,
    baseline: str | None = None,
    metrics: Sequence[str] = DEFAULT_METRICS,
    k: int = DEFAULT_K,
    ranker: str = DEFAULT_RANKER,
    window: int = DEFAULT_WINDOW,
    folds: int | None = None,
    seed: int = 0,
    tune_on: Benchmark | None = None,
    tune_metric: str = "map",
    max_rounds: int = 100,
    progress: Callable[[str], None] | None = None,
) -> Report:
    """Evaluate ``models`` (default: every registered one) and both baselines on ``bench``.

    ``params`` maps a model to parameter overrides (also the ranker's, for Ŝ_qe). With
    ``folds`` (k-fold CV by topic) or ``tune_on`` (another file of the same benchmark), models
    with declared grids are tuned on training topics and reported on test topics; parameters
    given in ``params`` stay fixed while the others are tuned.
    ``baseline`` defaults to ``position`` (``random`` on TrecQA, where position ties everything).
    """
    if folds is not None and tune_on is not None:
        raise SentretError("choose either folds (cross-validation) or tune_on (another file), not both")
    if tune_on is not None and tune_on.name != bench.name:
        raise SentretError(f"--tune-on must hold the same benchmark ({bench.name}), not {tune_on.name}")
    note = progress or (lambda _: None)
    request = plan(bench.name, models, params=params, baseline=baseline, metrics=metrics, ranker=ranker,
                   tune_metric=tune_metric)  # fmt: skip
    names, given, base, ranker_name = request.models, request.params, request.baseline, request.ranker
    metrics, tune_metric = request.metrics, request.tune_metric

    def make(source: Benchmark) -> Evaluator:
        ranker_params = given.get(ranker_name)
        return Evaluator(source, metrics=metrics, k=k, ranker=ranker_name, ranker_params=ranker_params,
                         window=window)  # fmt: skip

    evaluator = make(bench)
    trainer = make(tune_on) if tune_on is not None else None
    tuning = None
    if folds is not None:
        tuning = {"method": "cross-validation", "folds": folds, "seed": seed, "metric": tune_metric}
    elif tune_on is not None:
        tuning = {"method": "train-test", "train_data": str(tune_on.data),
                  "train_topics": len(tune_on.topics), "metric": tune_metric}  # fmt: skip

    results: dict[str, ModelResult] = {}
    fixed = [m for m in names if tuning is None or not set(tuning_space(m)) - set(given.get(m, {}))]
    if fixed:
        note(f"scoring {', '.join(fixed)}")
        runs = evaluator.runs([(m, given.get(m)) for m in fixed])
        for name, run in zip(fixed, runs):
            results[name] = ModelResult(
                name, evaluator.per_topic(run), run, resolve_params(name, given.get(name))
            )
    for name in names:
        if name in results:
            continue
        note(f"tuning {name}")
        results[name] = _tuned(
            evaluator, trainer, name, given.get(name), folds, seed, tune_metric, max_rounds
        )
    results = {name: results[name] for name in names}
    per_topic = {name: r.per_topic for name, r in results.items()}
    comparison = compare(per_topic, base)
    settings: dict[str, Any] = {"max_rounds": max_rounds} if tuning else {}
    if bench.kind == "support":  # candidate sets exist only for entity support
        settings.update(k=k, ranker=ranker_name, window=window, ranker_params=evaluator.ranker_params)
    return Report(bench, evaluator.metrics, base, results, comparison, settings, tuning)


def _tuned(
    evaluator: Evaluator,
    trainer: Evaluator | None,
    model: str,
    fixed: Mapping[str, Any] | None,
    folds: int | None,
    seed: int,
    metric: str,
    max_rounds: int,
) -> ModelResult:
    chosen: dict[int, TuningResult] = {}

    def tune_on(source: Evaluator) -> Callable[[list[str]], dict[str, Any]]:
        def tune(train: list[str]) -> dict[str, Any]:
            found = source.tune(model, train, metric, fixed=fixed, max_rounds=max_rounds)
            chosen[len(chosen)] = found
            return dict(found.params)

        return tune

    runs: Run = {}

    def test(topics: list[str], params: dict[str, Any]) -> pd.DataFrame:
        run = evaluator.run(model, params, topics)
        runs.update(run)
        return evaluator.per_topic(run, topics)

    topic_ids = [t.id for t in evaluator.bench.topics]
    result: CrossValidationResult
    if trainer is not None:
        result = train_test([t.id for t in trainer.bench.topics], topic_ids, tune_on(trainer), test,
                            allow_overlap=True)  # fmt: skip
    else:
        assert folds is not None
        result = cross_validate(topic_ids, folds, seed, tune_on(evaluator), test)
    records = []
    for fold in result.folds:
        found = chosen[fold.index]
        records.append(
            {
                "fold": fold.index,
                "params": dict(fold.params),
                "tune_metric": metric,
                "train_score": found.score,
                "evaluations": len(found.evaluations),
                "train_topics": list(fold.train),
                "test_topics": list(fold.test),
            }
        )
    per_topic = result.per_topic.loc[topic_ids]
    return ModelResult(model, per_topic, runs, None, records)
