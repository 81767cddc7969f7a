"""The evaluation driver: score a benchmark's topics under each model, evaluate, compare, tune.

Every model is reported beside both baselines; significance is tested against one baseline
(paired Wilcoxon and t-tests, :func:`~sentret_core.evaluation.significance.compare`). With
tuning, greedy coordinate ascent picks parameters on training topics only — either k-fold
cross-validation by topic (seeded) or another file of the same benchmark (``tune_on``) — and
the reported numbers are test-fold numbers; every fold records its training and test topics
and the parameters it chose. Models without a grid (TF-ISF, baselines, entity models) are
evaluated as they are.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from typing import Any

import pandas as pd

from sentret_core.checks import (
    check_callable,
    check_instance,
    check_int,
    check_model_name,
    check_optional_int,
    check_params,
    check_str,
    check_strings,
)
from sentret_core.defaults import DEFAULT_K, DEFAULT_RANKER, DEFAULT_WINDOW, MAX_K, MAX_WINDOW
from sentret_core.errors import SentretError
from sentret_core.evaluation.benchmarks.base import Benchmark
from sentret_core.evaluation.crossval import CrossValidationResult, cross_validate, train_test
from sentret_core.evaluation.evaluable import is_scorer, resolve_params, tuning_space
from sentret_core.evaluation.measures import DEFAULT_METRICS
from sentret_core.evaluation.plan import plan
from sentret_core.evaluation.report import ModelResult, Report
from sentret_core.evaluation.runs import Evaluator
from sentret_core.evaluation.significance import CORRECTIONS, compare
from sentret_core.evaluation.trec_io import Run
from sentret_core.evaluation.tuning import TuningResult
from sentret_core.models.training import needed, train_missing_defaults, used


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
    correction: str = "none",
) -> Report:
    """Evaluate ``models`` (default: every registered one) and both baselines on ``bench``.

    ``params`` maps a model to parameter overrides (also the ranker's, for Ŝ_qe). With
    ``folds`` (k-fold CV by topic) or ``tune_on`` (another file of the same benchmark), models
    with declared grids are tuned on training topics and reported on test topics; parameters
    given in ``params`` stay fixed while the others are tuned. ``correction="holm"`` adjusts the
    p-values for testing several models against one baseline (Holm-Bonferroni).
    ``baseline`` defaults to ``doc-order`` (``random`` on TrecQA, where doc-order ties everything).

    Every argument is checked before any scoring (:func:`check_settings`, :mod:`sentret_core.checks`):
    :class:`~sentret_core.errors.ArgumentTypeError` (a ``TypeError``) for a wrong type — ``bench``
    and ``tune_on`` must be Benchmarks, ``models`` and ``metrics`` lists of strings, ``params`` a
    mapping of mappings, integers ``int`` or numpy integers — and
    :class:`~sentret_core.errors.SentretError` (a ``ValueError``) for a value out of range or an
    unknown name. Each message names the argument.
    """
    check_instance("bench", bench, Benchmark, "a Benchmark (from load_benchmark)")
    if tune_on is not None:
        check_instance("tune_on", tune_on, Benchmark, "a Benchmark (from load_benchmark) or None")
    k, window, folds, seed, max_rounds = check_settings(
        k=k, window=window, folds=folds, seed=seed, max_rounds=max_rounds, topics=len(bench.topics)
    )
    models = None if models is None else check_strings("models", models)
    params = check_params(params)
    baseline = None if baseline is None else check_model_name(baseline, "baseline")
    metrics = check_strings("metrics", metrics)
    ranker = check_model_name(ranker, "ranker")
    tune_metric = check_str("tune_metric", tune_metric)
    check_callable("progress", progress)
    if correction not in CORRECTIONS:
        raise SentretError(f"correction must be one of {', '.join(CORRECTIONS)} (got {correction!r})")
    if folds is not None and tune_on is not None:
        raise SentretError("choose either folds (cross-validation) or tune_on (another file), not both")
    if tune_on is not None and tune_on.name != bench.name:
        raise SentretError(f"tune_on={tune_on.name}: must hold the same benchmark ({bench.name})",
                           arguments=("tune_on",))
    note = progress or (lambda _: None)
    request = plan(bench.name, models, params=params, baseline=baseline, metrics=metrics, ranker=ranker,
                   tune_metric=tune_metric)
    names, given, base, ranker_name = request.models, request.params, request.baseline, request.ranker
    metrics, tune_metric = request.metrics, request.tune_metric

    def make(source: Benchmark) -> Evaluator:
        ranker_params = given.get(ranker_name)
        return Evaluator(source, metrics=metrics, k=k, ranker=ranker_name, ranker_params=ranker_params,
                         window=window)

    scorers = [(m, given.get(m)) for m in dict.fromkeys([*names, ranker_name]) if is_scorer(m)]
    for source in (bench, tune_on):
        if source is not None:  # an explicit step: scorers never train (artefacts the benchmark index lacks)
            train_missing_defaults(source.index, scorers, note)
    evaluator = make(bench)
    trainer = make(tune_on) if tune_on is not None else None
    tuning = None
    if folds is not None:
        tuning = {"method": "cross-validation", "folds": folds, "seed": seed, "metric": tune_metric}
    elif tune_on is not None:
        tuning = {"method": "train-test", "train_data": str(tune_on.data),
                  "train_topics": len(tune_on.topics), "metric": tune_metric}

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
    artefacts = {m: used(bench.index, m, p) for m, p in scorers if needed(m, p)}
    if artefacts:  # which trained artefact each model read, as name@hash
        settings["artefacts"] = artefacts
    if bench.kind == "support":  # candidate sets exist only for entity support
        settings.update(k=k, ranker=ranker_name, window=window, ranker_params=evaluator.ranker_params)
    return Report(bench, evaluator.metrics, base, results, comparison, settings, tuning, correction)


def check_settings(
    *,
    k: Any = DEFAULT_K,
    window: Any = DEFAULT_WINDOW,
    folds: Any = None,
    seed: Any = 0,
    max_rounds: Any = 100,
    topics: int | None = None,
    option: bool = False,
) -> tuple[int, int, int | None, int, int]:
    """The integer settings of an evaluation, checked: ``1 ≤ k ≤ 1,000,000``, ``0 ≤ window ≤ 10``,
    ``folds`` None or ``2 ≤ folds ≤ topics``, ``seed ≥ 0`` (numpy's generators refuse negative
    seeds), ``max_rounds ≥ 1``. ``option`` names them as command-line options (``--max-rounds``),
    for ``sentret eval`` to check them before it loads (and indexes) a benchmark."""

    def name(text: str) -> str:
        return "--" + text.replace("_", "-") if option else text

    return (
        check_int(name("k"), k, 1, MAX_K),
        check_int(name("window"), window, 0, MAX_WINDOW),
        check_optional_int(name("folds"), folds, 2, topics if topics is None else max(topics, 2)),
        check_int(name("seed"), seed, 0),
        check_int(name("max_rounds"), max_rounds, 1),
    )


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
                            allow_overlap=True)
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
