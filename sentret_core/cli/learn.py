"""``sentret learn BENCHMARK|judgments …``: learn a ranker (``ltr.v1``'s ``model``) from a benchmark's
training file or a session's judgments, and ``sentret rankers``: list the stored ones."""

from __future__ import annotations

import argparse
import json
import sys
from typing import Any

from sentret_core.cli.common import command
from sentret_core.cli.judgments import add_token_option
from sentret_core.cli.judgments_access import admin_of, open_store
from sentret_core.cli.outputs import Files, declare, output


def register(sub: Any) -> None:
    from sentret_core.evaluation.benchmarks import list_benchmarks

    learn = command(sub, "learn", "Learn a ranker (ltr.v1) from a benchmark or a session's judgments.", _no_source)
    sources = learn.add_subparsers(title="what to learn from", metavar="SOURCE")
    for spec in list_benchmarks():  # in registration order
        if not spec.learnable:
            continue
        bench = command(sources, spec.name, spec.learn_help, _run_benchmark)
        bench.set_defaults(benchmark=spec.name)
        bench.add_argument("--data", required=True, metavar="PATH", help="the training file")
        choice = bench.add_mutually_exclusive_group()
        choice.add_argument("--dev", metavar="PATH", help="a development file: early stopping and the scores")
        choice.add_argument("--folds", type=int, metavar="K", help="K-fold cross-validation over the topics")
        if "distractors" in spec.options:
            bench.add_argument("--distractors", choices=("demo",), help="add the demo corpus's documents")
        if "min_candidates" in spec.options:
            bench.add_argument("--min-candidates", type=int, default=1, metavar="N",
                               help="keep topics whose entity has at least N candidate sentences "
                                    f"(as `sentret eval {spec.name}` does; default 1)")
        bench.add_argument("--cache", metavar="DIR", help="where benchmark indexes are cached")
        bench.add_argument("--n-process", type=int, default=1, help="spaCy processes when indexing (default 1)")
        _common(bench)
        declare(bench, lambda args: Files([args.data, args.dev], [*_ranker(args), *output("--cache", args.cache,
                                                                                             "cache")], args.force))
    judged = command(sources, "judgments", "Learn from an annotation session's adjudicated grades.", _run_judgments)
    judged.add_argument("db", metavar="DB", help="the judgments database")
    judged.add_argument("--session", required=True, help="the session")
    judged.add_argument("--index", required=True, metavar="DIR", help="the session's index")
    judged.add_argument("--rule", choices=("majority", "mean"), default="majority", help="how grades are combined")
    judged.add_argument("--folds", type=int, metavar="K", help="K-fold cross-validation over the topics")
    add_token_option(judged)
    _common(judged)
    declare(judged, lambda args: Files([args.db, args.index], _ranker(args), args.force, databases=[args.db]))
    listing = command(sub, "rankers", "List the learned rankers (data/rankers or $SENTRET_RANKERS).", _run_list)
    listing.add_argument("--json", action="store_true", help="print the records as JSON")


def _common(parser: argparse.ArgumentParser) -> None:
    from sentret_core.defaults import DEFAULT_K, DEFAULT_RANKER, LTR_DEPTH, LTR_SCORERS, SEMANTIC_STAGE

    parser.add_argument("--out", required=True, metavar="NAME", help="the ranker's name (ltr.v1.model=NAME)")
    parser.add_argument("--learner", choices=("lambdamart", "linear"), default="lambdamart",
                        help="LambdaMART (LightGBM) or logistic regression (default lambdamart)")
    parser.add_argument("--first-stage", default=DEFAULT_RANKER,
                        help=f"the ranker whose top sentences are re-ranked (default {DEFAULT_RANKER})")
    parser.add_argument("--depth", type=int, default=None,
                        help=f"how many of its best sentences are re-ranked (default {LTR_DEPTH}; "
                             f"{DEFAULT_K} for entity support, where the other models rank their top k)")
    parser.add_argument("--semantic-stage", default=SEMANTIC_STAGE, metavar="MODEL",
                        help=f"a model whose top sentences join the first stage's (default {SEMANTIC_STAGE}; "
                             "minilm.v1 reads a nearest-neighbour graph on a large index; 'none': the first "
                             "stage's only); it must be among --scorers")
    parser.add_argument("--scorers", default=",".join(LTR_SCORERS),
                        help="models whose scores are features, comma-separated (default the cheap ones)")
    parser.add_argument("--seed", type=int, default=0, help="seed of the folds and the learner (default 0)")
    parser.add_argument("--choose", action="store_true",
                        help="with --folds: choose the regularisation by CV on the training topics")
    parser.add_argument("--without", action="append", default=[], metavar="GROUP", choices=("position",),
                        help="learn without a feature group: position (a sentence's place in its document)")
    parser.add_argument("--other-documents", type=int, default=0, metavar="N",
                        help="a benchmark's closed sets (one document's sentences per question) also learn from "
                             "the N sentences of other documents the first stage ranks best, as not relevant: "
                             "for a ranker meant for candidates from many documents (default 0)")
    parser.add_argument("--force", action="store_true", help="replace a stored ranker of that name")
    parser.add_argument("--json", action="store_true", help="print the record as JSON")


def _ranker(args: argparse.Namespace) -> list[Any]:
    """Where the ranker named --out is stored (``data/rankers/NAME`` or ``$SENTRET_RANKERS/NAME``)."""
    from sentret_core.index.artefacts import check_name, store_root

    return output("--out", args.out, "ranker", store_root() / check_name(args.out))


def _no_source(args: argparse.Namespace) -> int:
    from sentret_core.errors import SentretError
    from sentret_core.evaluation.benchmarks import benchmark_names

    first, *others = benchmark_names(learnable=True)
    raise SentretError(f"say what to learn from: `sentret learn {first} --data FILE --out NAME` (or "
                       f"{', '.join([*others, 'judgments'])})")


class _Progress:
    """Each stage once on its own line; on a terminal, its share done updated in place."""

    def __init__(self) -> None:
        self.stage, self.live = "", sys.stderr.isatty()

    def __call__(self, text: str, share: float) -> None:
        if text != self.stage:
            print(("\n" if self.stage and self.live else "") + text, end="" if self.live else "\n",
                  file=sys.stderr, flush=True)
            self.stage = text
        if self.live:
            print(f"\r{text} {share:4.0%}", end="", file=sys.stderr, flush=True)


def _run_benchmark(args: argparse.Namespace) -> int:
    from sentret_core.checks import check_int
    from sentret_core.evaluation.benchmarks import load_benchmark
    from sentret_core.index.format import sha256_of
    from sentret_core.learning.learn import Data
    from sentret_core.learning.topics import benchmark_topics

    benchmark = args.benchmark
    options = {"distractors": getattr(args, "distractors", None), "cache": args.cache, "n_process": args.n_process,
               "min_candidates": check_int("--min-candidates", getattr(args, "min_candidates", 1), 1)}

    def data(path: str) -> Data:
        bench = load_benchmark(benchmark, path, log=lambda text: print(text, file=sys.stderr), **options)
        return Data(bench.index, benchmark_topics(bench), {"benchmark": benchmark, "data": path,
                                                           "sha256": sha256_of(bench.data)})

    return _learn(args, data(args.data), data(args.dev) if args.dev else None)


def _run_judgments(args: argparse.Namespace) -> int:
    from sentret_core.index.reader import Index
    from sentret_core.learning.learn import Data
    from sentret_core.learning.topics import session_topics

    index = Index.load(args.index)
    admin = admin_of(open_store(args.db), args)
    topics = session_topics(admin, args.session, index, args.rule)
    description = {"session": args.session, "database": args.db, "rule": args.rule}
    return _learn(args, Data(index, topics, description, unjudged_non_relevant=False))


def _learn(args: argparse.Namespace, train: Any, dev: Any = None) -> int:
    from sentret_core.index.artefacts import check_name
    from sentret_core.learning.learn import learn

    check_name(args.out)
    result = learn(args.out, train, dev=dev, folds=args.folds, learner=args.learner,
                   scorers=[s for s in args.scorers.split(",") if s.strip()], first_stage=args.first_stage,
                   depth=args.depth, seed=args.seed, choose=args.choose, without=args.without,
                   other_documents=args.other_documents, progress=_Progress(),
                   semantic_stage=None if args.semantic_stage == "none" else args.semantic_stage)
    record = result.learned.meta
    if args.json:
        print(json.dumps({"name": args.out, "reference": result.learned.reference, **record}, default=str))
        return 0
    print(f"ranker {result.learned.reference} ({args.learner}) re-ranks the top {result.learned.depth} "
          f"of {args.first_stage}")
    left_out = result.usable.get("without_relevant", 0)
    for split, values in result.metrics.items():
        print(f"  {split}: MAP {values['map']:.4f}  MRR {values['mrr']:.4f}  over {values['topics']:.0f} topics"
              + (f" ({left_out} training topics without a relevant sentence left out)" if left_out else ""))
    if result.comparison is not None:
        others = sorted(result.comparison.baselines.items(), key=lambda kv: -kv[1]["map"])
        print("  on the same topics: " + ", ".join(f"{m} MAP {v['map']:.4f}" for m, v in others))
        print(f"  verdict: {result.comparison.verdict}")
    top = sorted(result.learned.ranker.importance().items(), key=lambda kv: -kv[1])[:8]
    print("  features that mattered most: " + ", ".join(f"{n} {v:.3g}" for n, v in top))
    print(f"  use it: --models ltr.v1 --param ltr.v1.model={args.out}")
    return 0


def _run_list(args: argparse.Namespace) -> int:
    from sentret_core.index import artefacts

    records = artefacts.available(None, "ranker")
    if args.json:
        print(json.dumps(records, default=str))
        return 0
    if not records:
        print(f"no learned ranker in {artefacts.store_root()} (`sentret learn` makes one)")
    for r in records:
        scores = "; ".join(f"{k} MAP {v['map']:.4f}" for k, v in (r.get("metrics") or {}).items())
        print(f"{r['name']}@{str(r['sha256'])[:12]}  {r.get('learner')} over {r.get('first_stage')} "
              f"top {r.get('depth')}  {scores}")
    return 0
