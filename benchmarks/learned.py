"""Learned rankers against position and the best single model (issue 12's quality bar).

    .venv/bin/python benchmarks/learned.py [--data ../shared/data] [--only wikiqa,trecqa,squad-support]
                                            [--depth N] [--squad-depth N]

* WikiQA: learned on train (5-fold CV over its topics for early stopping), evaluated on dev;
* TrecQA: learned on TRAIN the same way, evaluated on DEV;
* SQuAD-support (even articles, demo distractors): 2-fold CV by topic, each fold's ranker fitted on
  the other fold only.

The development / test topics are never seen while learning. Reported: MAP and MRR (tie-aware) of
the position baseline, the best single model (each cheap scorer tuned on the training file, or at
its defaults for SQuAD), and both learners, with Wilcoxon / t-test p-values against position, and
the LightGBM gain importance of the features. Rankers go to a temporary store.
"""

from __future__ import annotations

import argparse
import os
import tempfile
from pathlib import Path

import pandas as pd

from sentret_core.defaults import DEFAULT_K
from sentret_core.evaluation.benchmarks import load_benchmark
from sentret_core.evaluation.driver import evaluate_benchmark
from sentret_core.evaluation.runs import Evaluator
from sentret_core.evaluation.significance import compare
from sentret_core.learning.learn import DEFAULT_DEPTH, Data, learn
from sentret_core.learning.topics import benchmark_topics
from sentret_core.models.ltr.features import DEFAULT_SCORERS

METRICS = ["map", "mrr"]
LEARNERS = ("lambdamart", "linear")


def held_out(name: str, train_file: Path, test_file: Path, baseline: str, depth: int) -> None:
    train, test = load_benchmark(name, train_file), load_benchmark(name, test_file)
    report = evaluate_benchmark(test, [*DEFAULT_SCORERS, baseline], tune_on=train, metrics=METRICS)
    singles = {m: r.per_topic[METRICS] for m, r in report.results.items() if m in DEFAULT_SCORERS}
    best = max(singles, key=lambda m: singles[m]["map"].mean())
    frames = {baseline: report.results[baseline].per_topic[METRICS], f"best single ({best}, tuned)": singles[best]}
    evaluator = Evaluator(test, metrics=METRICS)
    for learner in LEARNERS:
        result = learn(f"{name}-{learner}", Data(train.index, benchmark_topics(train)), folds=5, learner=learner,
                       depth=depth)
        run = evaluator.run("ltr.v1", {"model": f"{name}-{learner}"})
        frames[f"ltr {learner}"] = evaluator.per_topic(run)[METRICS]
        if learner == "lambdamart":
            importance = result.learned.ranker.importance()
    table(f"{name}: learned on {train_file.name} (5-fold CV for early stopping), tested on {test_file.name}",
          frames, baseline, importance)  # fmt: skip


def squad(data: Path, depth: int) -> None:
    bench = load_benchmark("squad-support", data / "squad" / "dev-v1.1-even.json", distractors="demo")
    report = evaluate_benchmark(bench, [*DEFAULT_SCORERS, "position"], metrics=METRICS)
    frames = {m: r.per_topic[METRICS] for m, r in report.results.items() if m in ("position", *DEFAULT_SCORERS)}
    best = max(DEFAULT_SCORERS, key=lambda m: frames[m]["map"].mean())
    frames = {"position": frames["position"], f"best single ({best})": frames[best]}
    for learner in LEARNERS:
        result = learn(f"squad-{learner}", Data(bench.index, benchmark_topics(bench)), folds=2, learner=learner,
                       depth=depth)
        frames[f"ltr {learner} (2-fold CV)"] = result.per_topic.loc[frames["position"].index]
        if learner == "lambdamart":
            importance = result.learned.ranker.importance()
    table("squad-support (even articles, demo distractors): 2-fold CV by topic", frames, "position", importance)


def table(title: str, frames: dict[str, pd.DataFrame], baseline: str, importance: dict[str, float]) -> None:
    comparison = compare(frames, baseline)
    print(f"\n## {title}\n")
    print("| model | MAP | MRR | p (MAP, Wilcoxon / t) vs " + baseline + " |")
    print("|---|---|---|---|")
    for model in frames:
        rows = comparison[comparison["model"] == model].set_index("metric")
        p = "" if model == baseline else f"{rows.loc['map', 'p_wilcoxon']:.4f} / {rows.loc['map', 'p_ttest']:.4f}"
        print(f"| {model} | {rows.loc['map', 'mean']:.4f} | {rows.loc['mrr', 'mean']:.4f} | {p} |")
    top = sorted(importance.items(), key=lambda kv: -kv[1])[:8]
    total = sum(importance.values()) or 1.0
    print("\nLambdaMART gain importance: " + ", ".join(f"{n} {v / total:.0%}" for n, v in top))


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--data", type=Path, default=Path(__file__).resolve().parents[2] / "shared" / "data")
    parser.add_argument("--only", default="wikiqa,trecqa,squad-support")
    parser.add_argument("--depth", type=int, default=DEFAULT_DEPTH, help="sentences re-ranked on WikiQA and TrecQA")
    parser.add_argument("--squad-depth", type=int, default=DEFAULT_K,
                        help="sentences re-ranked on squad-support (its single models rank their top k=1000)")
    args = parser.parse_args()
    os.environ.setdefault("SENTRET_RANKERS", tempfile.mkdtemp(prefix="sentret-rankers-"))
    chosen = args.only.split(",")
    if "wikiqa" in chosen:
        held_out("wikiqa", args.data / "wikiqa" / "WikiQA-train.tsv", args.data / "wikiqa" / "WikiQA-dev.tsv",
                 "doc-order", args.depth)  # fmt: skip
    if "trecqa" in chosen:
        held_out("trecqa", args.data / "trecqa" / "TRAIN.xml", args.data / "trecqa" / "DEV.xml", "random", args.depth)
    if "squad-support" in chosen:
        squad(args.data, args.squad_depth)


if __name__ == "__main__":
    main()
