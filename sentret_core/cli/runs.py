"""``sentret run``: a topics file through a model into a TREC run; ``sentret eval-run``: any run against
any qrels, tie-aware and as trec_eval scores it."""

from __future__ import annotations

import argparse
import json
import logging
from typing import Any

from sentret_core.cli.common import PROGRESS_S, command, every, param_pairs, write_output
from sentret_core.cli.outputs import Files, declare, output
from sentret_core.index.docnos import docno  # noqa: F401  (sentret_core.cli.runs.docno, as before)

log = logging.getLogger(__name__)
RUN_TAG = "sentret"
TIES = "ties-docorder"  # the default tag says how tied scores are ordered in the file (docs/evaluation.md says it too)


def register(sub: Any) -> None:
    from sentret_core.defaults import DEFAULT_K, DEFAULT_METRICS, DEFAULT_RANKER, TREC_EVAL_LEVEL

    p = command(sub, "run", "Run a topics file through a model into a TREC run file (sentence ids as "
                "<document id>-<position>; with an entity column, that entity's support sentences).",
                _run_run)
    p.add_argument("index", help="an index folder")
    p.add_argument("--topics", required=True, metavar="FILE",
                   help="TSV 'qid<TAB>query[<TAB>entity]' or a TREC topic file (<top><num><title>)")
    p.add_argument("--model", default=DEFAULT_RANKER, help=f"a registered model (default {DEFAULT_RANKER})")
    p.add_argument("--param", action="append", default=[], metavar="NAME=VALUE", help="a model parameter")
    p.add_argument("--k", type=int, default=DEFAULT_K, help="sentences per topic (default %(default)s)")
    p.add_argument("--out", required=True, metavar="FILE", help="the run file to write")
    p.add_argument("--tag", default=None, help="the run tag (default sentret.MODEL)")
    p.add_argument("--force", action="store_true", help="replace an existing run file (never a file of another kind)")
    p.add_argument("--json", action="store_true", help="print a summary as one JSON object")
    declare(p, lambda args: Files([args.index, args.topics], output("--out", args.out, "run"), args.force))

    p = command(sub, "eval-run", "Evaluate a TREC run file against a qrels file: sentret's tie-aware means "
                "beside the numbers trec_eval gives on exactly that file.", _run_eval_run)
    p.add_argument("--qrels", required=True, metavar="FILE", help="TREC qrels: topic 0 docid grade")
    p.add_argument("--run", required=True, dest="run_file", metavar="FILE",
                   help="TREC run: topic Q0 docid rank score tag")
    p.add_argument("--metrics", default=",".join(DEFAULT_METRICS),
                   help="comma-separated: map, mrr, r-prec, p@K, ndcg@K, ndcg (default: %(default)s)")
    p.add_argument("--level", type=int, default=TREC_EVAL_LEVEL,
                   help=f"relevant iff grade >= LEVEL, as trec_eval -l (default {TREC_EVAL_LEVEL})")
    p.add_argument("--json", action="store_true", help="print one JSON object")


def _run_eval_run(args: argparse.Namespace) -> int:
    from sentret_core.checks import check_int
    from sentret_core.errors import SentretError
    from sentret_core.evaluation.as_exported import as_exported, tie_aware
    from sentret_core.evaluation.trec_io import read_qrels, read_run

    level = check_int("--level", args.level, 1, 1_000)
    metrics = [m.strip() for m in args.metrics.split(",") if m.strip()]
    if not metrics:
        raise SentretError("--metrics is empty; name at least one metric")
    qrels, run = read_qrels(args.qrels), read_run(args.run_file)
    matched = _matched(qrels, run)
    if not matched["run documents judged"]:
        log.warning("no document of %s appears in %s: every topic scores 0. Do both name sentences the same way "
                    "(sentret's runs and exports: <document id>-<position>)?", args.run_file, args.qrels)
    aware, exported = tie_aware(qrels, run, metrics, level=level), as_exported(qrels, run, metrics, level=level)
    means = {"tie-aware": aware.mean().to_dict(), EXPORTED: exported.mean().to_dict()}
    skipped = list(aware.attrs.get("skipped_topics", ()))
    if args.json:
        print(json.dumps({"qrels": args.qrels, "run": args.run_file, "level": level, "topics": len(aware),
                          "skipped_topics": skipped, "matched": matched, "means": means}, indent=2))
        return 0
    print(f"{args.run_file} against {args.qrels}: {len(aware)} topics with a document graded >= {level}"
          + (f" ({len(skipped)} without one left out)" if skipped else ""))
    print(", ".join(f"{what} {count:,}" for what, count in matched.items()))
    width = max(len(m) for m in metrics) + 2
    print("".ljust(24) + "".join(m.rjust(width + 6) for m in metrics))
    for kind, values in means.items():
        print(kind.ljust(24) + "".join(f"{values[m]:.4f}".rjust(width + 6) for m in metrics))
    print("tie-aware: the expectation over every order of tied scores; as exported: trec_eval's order "
          f"(score, then document id descending), averaged as `trec_eval -c -l {level}` averages: over every "
          f"topic of the qrels with a document graded >= {level}, those the run lacks counting 0"
          + (f"; {len(skipped)} topics without one left out" if skipped else ""))
    return 0


EXPORTED = "as exported (trec_eval -c)"


def _matched(qrels: dict[str, dict[str, int]], run: dict[str, dict[str, float]]) -> dict[str, int]:
    """How much of the run the qrels judge: its topics and documents found there."""
    topics = [t for t in run if t in qrels]
    return {"run topics": len(run), "in the qrels": len(topics),
            "run documents": sum(len(r) for r in run.values()),
            "run documents judged": sum(1 for t in topics for d in run[t] if d in qrels[t])}


def _run_run(args: argparse.Namespace) -> int:
    import math

    from sentret_core.checks import check_int
    from sentret_core.defaults import MAX_K
    from sentret_core.evaluation.topics_file import read_topics
    from sentret_core.evaluation.trec_io import format_run
    from sentret_core.index.docnos import sentence_docnos
    from sentret_core.index.reader import Index
    from sentret_core.integrations.frames import rank_topic
    from sentret_core.models import get_model

    k = check_int("--k", args.k, 1, MAX_K)
    spec = get_model(args.model)
    params = param_pairs(args.param, qualified=False)
    spec.resolve(params)  # a bad parameter is refused before any topic is run
    tag = args.tag or f"{RUN_TAG}.{spec.name}.{TIES}"
    index = Index.load(args.index)
    docids = sentence_docnos(index)
    run: dict[str, dict[str, float]] = {}
    empty = []
    topics = read_topics(args.topics)
    progress = every(PROGRESS_S, "run", "ran", "topics", quiet_when_quick=True)
    for done, topic in enumerate(topics, start=1):
        progress(done - 1, len(topics))
        found = rank_topic(index, spec.name, params, topic.query, topic.entity, k)
        ranked = {docids[int(s)]: float(v) for s, v in zip(found.ids, found.scores) if math.isfinite(float(v))}
        run[topic.id] = ranked
        if not ranked:
            empty.append(topic.id)
    progress(len(topics), len(topics))
    text = format_run({t: r for t, r in run.items() if r}, tag=tag)
    write_output(args.out, text)
    summary = {"run": args.out, "model": spec.name, "tag": tag, "topics": len(run), "lines": text.count("\n"),
               "topics_without_results": empty}
    if args.json:
        print(json.dumps(summary, indent=2))
    else:
        print(f"wrote {summary['lines']:,} lines for {len(run) - len(empty)} of {len(run)} topics to {args.out} "
              f"(tag {tag}; tied scores in document order)")
        if empty:
            log.info("no sentence matched %d topic(s): %s", len(empty), ", ".join(empty[:5]))  # -q hides it
    return 0
