"""``sentret eval``: evaluate sentence scorers on a public benchmark (WikiQA, SQuAD support, TrecQA).

Wired into ``cli/main.py`` through :func:`register`; heavy imports happen inside :func:`run` only. The benchmarks,
their help and their defaults come from :mod:`sentret_core.evaluation.benchmarks.registry`.
"""

from __future__ import annotations

import argparse
import json
import sys
from typing import Any

from sentret_core.cli.common import command, param_pairs
from sentret_core.cli.outputs import Files, declare, output
from sentret_core.defaults import DEFAULT_K, DEFAULT_METRICS, DEFAULT_RANKER, DEFAULT_WINDOW


def register(sub: Any) -> None:
    """Add the ``eval`` command to the ``sentret`` sub-parsers ``sub``."""
    from sentret_core.evaluation.benchmarks import benchmark_names, list_benchmarks

    names, specs = benchmark_names(), list_benchmarks()
    support = ", ".join(spec.name for spec in specs if spec.kind == "support")  # the options for entity support
    loading = ", ".join(spec.name for spec in specs if spec.options)  # the options of the loader
    on_random = ", ".join(spec.name for spec in specs if spec.baseline == "random")
    what = "Evaluate sentence scorers on a benchmark, beside the doc-order and random baselines."
    p = command(sub, "eval", what, run)
    p.add_argument("benchmark", choices=names, metavar="BENCHMARK", help=f"one of {', '.join(names)}")
    p.add_argument(
        "--data",
        required=True,
        metavar="PATH",
        help=f"the benchmark file: {', '.join(spec.data for spec in specs if spec.data)}",
    )
    p.add_argument(
        "--models",
        default=None,
        help=f"models, comma-separated (default: every registered scorer; {support} adds "
        "position (eq. 8) and sum-*); the baselines doc-order and random are always added",
    )
    p.add_argument(
        "--param",
        action="append",
        default=[],
        metavar="MODEL.NAME=VALUE",
        help="a parameter of a model (or of the ranker), e.g. bm25f.v1.k1=0.9; repeatable",
    )
    p.add_argument(
        "--baseline",
        default=None,
        help="the model significance is tested against (default doc-order"
        + (f"; random on {on_random})" if on_random else ")"),
    )
    p.add_argument(
        "--metrics",
        default=",".join(DEFAULT_METRICS),
        help="comma-separated: map, mrr, r-prec, p@K, ndcg@K, ndcg (default %(default)s)",
    )
    tuning = p.add_mutually_exclusive_group()
    tuning.add_argument(
        "--tune-on",
        default=None,
        metavar="PATH",
        help="tune on this file (e.g. WikiQA-train.tsv), report on --data",
    )
    tuning.add_argument(
        "--folds",
        type=int,
        default=None,
        metavar="K",
        help="tune by K-fold cross-validation over topics; report test folds",
    )
    p.add_argument("--tune-metric", default="map", help="the metric tuning maximises (default map)")
    p.add_argument("--seed", type=int, default=0, help="seed of the cross-validation folds (default 0)")
    p.add_argument(
        "--max-rounds",
        type=int,
        default=100,
        help="coordinate-ascent rounds at most (default 100: until no gain)",
    )
    p.add_argument(
        "--distractors",
        choices=["demo"],
        default=None,
        help=f"{loading}: add the demo corpus's documents to the collection",
    )
    p.add_argument(
        "--min-candidates",
        type=int,
        default=1,
        metavar="N",
        help=f"{loading}: keep topics whose entity is mentioned in >= N sentences",
    )
    p.add_argument(
        "--k",
        type=int,
        default=DEFAULT_K,
        help=f"{support}: |S_q|, the top-k the candidates come from (default {DEFAULT_K})",
    )
    p.add_argument(
        "--ranker",
        default=DEFAULT_RANKER,
        help=f"{support}: the scorer whose top-k gives S_qe for position and Ŝ_qe for sum-* and the "
        f"baselines (default {DEFAULT_RANKER})",
    )
    p.add_argument(
        "--window",
        type=int,
        default=DEFAULT_WINDOW,
        help=f"{support}: context window of Ŝ_q (default {DEFAULT_WINDOW})",
    )
    p.add_argument(
        "--cache",
        default=None,
        metavar="DIR",
        help="where benchmark indexes are cached (default data/indexes/benchmarks)",
    )
    p.add_argument("--n-process", type=int, default=1, help="spaCy processes when indexing (default 1)")
    p.add_argument(
        "--run-out",
        default=None,
        metavar="FILE",
        help="write each model's TREC run to FILE with the model inserted: runs.trec -> runs.bm25.v1.trec",
    )
    p.add_argument("--qrels-out", default=None, metavar="FILE", help="write the benchmark's TREC qrels")
    p.add_argument("--correction", choices=("none", "holm"), default="none",
                   help="holm: adjust the p-values for testing several models against the baseline "
                        "(Holm-Bonferroni); default none")
    p.add_argument("--force", action="store_true",
                   help="replace run and qrels files of an earlier run (never a file of another kind)")
    p.add_argument("--json", action="store_true", help="print one JSON object")
    declare(p, _files)


def _request(args: argparse.Namespace) -> Any:
    """The checked plan: models, parameters, baseline, metrics (no index is read)."""
    from sentret_core.errors import SentretError
    from sentret_core.evaluation.plan import plan

    models = _split(args.models)
    if models is not None and not models:
        raise SentretError("--models is empty; name at least one model")
    return plan(args.benchmark, models, params=param_pairs(args.param, qualified=True), baseline=args.baseline,
                metrics=_split(args.metrics) or [], ranker=args.ranker, tune_metric=args.tune_metric)


def _files(args: argparse.Namespace) -> Files:
    """The benchmark files read; the qrels, one run per model (names derived from --run-out) and the cache written."""
    from sentret_core.evaluation.report import run_paths

    runs = [] if args.run_out is None else [
        made for path in run_paths(args.run_out, _request(args).models).values()
        for made in output("--run-out", args.run_out, "run", path)]
    return Files([args.data, args.tune_on], [*output("--qrels-out", args.qrels_out, "qrels"), *runs,
                                             *output("--cache", args.cache, "cache")], args.force)


def _split(text: str | None) -> list[str] | None:
    if text is None:
        return None
    items = [item.strip() for item in text.split(",") if item.strip()]
    return items


def run(args: argparse.Namespace) -> int:
    from sentret_core.checks import check_int
    from sentret_core.errors import SentretError
    from sentret_core.evaluation.benchmarks import load_benchmark
    from sentret_core.evaluation.driver import check_settings, evaluate_benchmark

    def log(message: str) -> None:
        print(f"sentret eval: {message}", file=sys.stderr, flush=True)

    if args.folds is not None and args.folds < 2:
        raise SentretError(f"--folds must be at least 2 (got {args.folds})")
    if args.max_rounds < 1:
        raise SentretError(f"--max-rounds must be at least 1 (got {args.max_rounds})")
    # every number checked before a benchmark is loaded (and perhaps indexed)
    check_settings(k=args.k, window=args.window, folds=args.folds, seed=args.seed, max_rounds=args.max_rounds,
                   option=True)
    check_int("--min-candidates", args.min_candidates, 1)
    check_int("--n-process", args.n_process, 1)
    options: dict[str, Any] = {
        "distractors": args.distractors,
        "min_candidates": args.min_candidates,
        "cache": args.cache,
        "n_process": args.n_process,
        "log": log,
    }
    request = _request(args)  # every name and value checked before any index is built
    bench = load_benchmark(args.benchmark, args.data, **options)
    tune_on = load_benchmark(args.benchmark, args.tune_on, **options) if args.tune_on else None
    report = evaluate_benchmark(
        bench,
        request.models,
        params=request.params,
        baseline=request.baseline,
        metrics=request.metrics,
        k=args.k,
        ranker=request.ranker,
        window=args.window,
        folds=args.folds,
        seed=args.seed,
        tune_on=tune_on,
        tune_metric=request.tune_metric,
        max_rounds=args.max_rounds,
        progress=log,  # what it scores, tunes and trains on the way
        correction=args.correction,
    )
    if args.qrels_out:
        report.write_qrels(args.qrels_out)
    if args.run_out:
        report.write_runs(args.run_out)
    if args.json:
        print(json.dumps(report.to_dict(), indent=2, ensure_ascii=False))
    else:
        print(report.to_text())
    return 0
