"""``sentret eval-run``: evaluate any TREC run against any qrels, tie-aware and as trec_eval scores it."""

from __future__ import annotations

import argparse
import json
from typing import Any

from sentret_core.cli.common import command


def register(sub: Any) -> None:
    from sentret_core.evaluation.as_exported import TREC_EVAL_LEVEL
    from sentret_core.evaluation.measures import DEFAULT_METRICS

    p = command(sub, "eval-run", "Evaluate a TREC run file against a qrels file: sentret's tie-aware means "
                "beside the numbers trec_eval gives on exactly that file.", _run_eval_run)  # fmt: skip
    p.add_argument("--qrels", required=True, metavar="FILE", help="TREC qrels: topic 0 docid grade")
    p.add_argument("--run", required=True, dest="run_file", metavar="FILE",
                   help="TREC run: topic Q0 docid rank score tag")  # fmt: skip
    p.add_argument("--metrics", default=",".join(DEFAULT_METRICS),
                   help="comma-separated: map, mrr, r-prec, p@K, ndcg@K, ndcg (default: %(default)s)")
    p.add_argument("--level", type=int, default=TREC_EVAL_LEVEL,
                   help=f"relevant iff grade >= LEVEL, as trec_eval -l (default {TREC_EVAL_LEVEL})")  # fmt: skip
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
    aware, exported = tie_aware(qrels, run, metrics, level=level), as_exported(qrels, run, metrics, level=level)
    means = {"tie-aware": aware.mean().to_dict(), "as exported (trec_eval)": exported.mean().to_dict()}
    skipped = list(aware.attrs.get("skipped_topics", ()))
    if args.json:
        print(json.dumps({"qrels": args.qrels, "run": args.run_file, "level": level, "topics": len(aware),
                          "skipped_topics": skipped, "means": means}, indent=2))  # fmt: skip
        return 0
    print(f"{args.run_file} against {args.qrels}: {len(aware)} topics with a document graded >= {level}"
          + (f" ({len(skipped)} without one left out)" if skipped else ""))
    width = max(len(m) for m in metrics) + 2
    print("".ljust(24) + "".join(m.rjust(width + 6) for m in metrics))
    for kind, values in means.items():
        print(kind.ljust(24) + "".join(f"{values[m]:.4f}".rjust(width + 6) for m in metrics))
    print("tie-aware: the expectation over every order of tied scores; as exported: trec_eval's order "
          "(score, then document id descending)")
    return 0
