"""Learned rankers against the generalisation targets below, beside BM25F, the LMs, embed.v1 and position.

    .venv/bin/python benchmarks/learned.py [--data ../shared/data] [--only wikiqa,trecqa,squad-support,transfer]
                                            [--depth N] [--squad-depth N] [--distractors demo|none] [--json]

* WikiQA: learned on WikiQA-train (5-fold CV over its topics: early stopping on a fifth of each fold's
  training topics, and the regularisation chosen by the CV), evaluated on WikiQA-dev (target MAP ≥ 0.75);
* TrecQA: learned on TRAIN the same way, evaluated on DEV (target MAP ≥ 0.80);
* SQuAD-support (even articles, demo distractors unless ``--distractors none``): 2-fold CV by topic, each
  fold's ranker fitted on the other fold only, default regularisation (target MRR ≥ 0.96, significantly
  above BM25F);
* transfer: the WikiQA-trained rankers on TrecQA DEV and on SQuAD-support (target: not below BM25F),
  beside a second pair learned on WikiQA-train with the other pages' sentences of C as non-relevant rows
  (``learn(..., other_documents=...)``, ``sentret learn --other-documents N``).

The development / test topics are never seen while learning or choosing the regularisation. Reported:
MAP and MRR (tie-aware), paired Wilcoxon / t-test p-values of MAP against BM25F, the honest CV MAP on
the training topics, and the share of the LambdaMART gain taken by the top feature for the trees of the
first learned rankers (15 leaves of ≥ 20 samples) and for the chosen ones. Single models are tuned on the
training file (at their defaults for SQuAD). Rankers go to a temporary store.

``--json`` prints the tables to stderr and, at the end, every number of them to stdout as one JSON object
(``{table: {"models": {model: {"map", "mrr", "p_map", "p_mrr", "p_map_t", "p_mrr_t"}}, "cv_map": {ranker:
CV MAP}, "seconds"}}``), which ``docs/tables.toml`` reads (``sentret reproduce``).
"""

from __future__ import annotations

import argparse
import contextlib
import json
import math
import os
import subprocess
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

import pandas as pd

from sentret_core.defaults import DEFAULT_K, LTR_DEPTH, LTR_SCORERS
from sentret_core.evaluation.benchmarks import load_benchmark
from sentret_core.evaluation.benchmarks.base import Benchmark
from sentret_core.evaluation.driver import evaluate_benchmark
from sentret_core.evaluation.runs import Evaluator
from sentret_core.evaluation.significance import compare
from sentret_core.learning.learn import Data, LearnResult, learn
from sentret_core.learning.topics import benchmark_topics

METRICS = ["map", "mrr"]
LEARNERS = ("lambdamart", "linear")
BASELINE = "bm25f.v1"
ALL_OF_C = 1_000  # other documents' sentences a WikiQA topic learns from: all of C (≤ 2 × depth)
SINGLES = ("bm25f.v1", "bm25.v1", "tfisf.v1", "lm-jm.v1", "lm-dir.v1", "embed.v1", "align.v1", "minilm.v1")
REPORT: dict[str, dict[str, Any]] = {}  # table -> its numbers, for --json


def load(name: str, path: Path, distractors: str | None = None) -> Benchmark:
    if name == "squad-support":
        return load_benchmark(name, path, distractors=distractors)
    return load_benchmark(name, path)


def singles(test: Benchmark, train: Benchmark | None, position: str) -> dict[str, pd.DataFrame]:
    """Each single model (tuned on ``train`` when given) and the position baseline on ``test``."""
    report = evaluate_benchmark(test, [*SINGLES, position], tune_on=train, metrics=METRICS)
    return {m: report.results[m].per_topic[METRICS] for m in (*SINGLES, position)}


def ranker_frames(
    test: Benchmark, names: dict[str, str], params: dict[str, Any] | None = None
) -> dict[str, pd.DataFrame]:
    """``ltr.v1`` with each stored ranker of ``names`` (label → ranker) on ``test``."""
    evaluator = Evaluator(test, metrics=METRICS)
    return {label: evaluator.per_topic(evaluator.run("ltr.v1", {"model": ranker, **(params or {})}))[METRICS]
            for label, ranker in names.items()}


def held_out(name: str, train_file: Path, test_file: Path, depth: int,
             scorers: tuple[str, ...] = LTR_SCORERS) -> dict[str, str]:
    """Learn on ``train_file`` (CV on its topics only), report on ``test_file``; the stored rankers' names."""
    started = time.time()
    train, test = load(name, train_file), load(name, test_file)
    frames = singles(test, train, "doc-order" if name == "wikiqa" else "random")
    stored: dict[str, str] = {}
    notes, cv = [], {}
    # WikiQA's closed sets are one page each: a second pair of rankers also learns from the other pages'
    # sentences in C (learn(..., other_documents=...)), for candidates from many documents (the transfer)
    for others in (0, ALL_OF_C) if name == "wikiqa" else (0,):
        for learner in LEARNERS:
            kind = learner + ("-other-documents" if others else "")
            label, ranker = f"ltr-{kind}", f"{name}-{kind}"
            result = learn(ranker, Data(train.index, benchmark_topics(train)), folds=5, learner=learner,
                           depth=depth, choose=True, other_documents=others, scorers=scorers)
            stored[label] = ranker
            notes.append(grid_note(label, result))
            cv[label] = result.metrics.get("cv", {}).get("map", math.nan)
    frames.update(ranker_frames(test, stored))
    title = f"learned on {train_file.name} (5-fold CV on it only; single models tuned on it), tested on"
    table(name, f"{title} {test_file.name}", frames, notes, started, cv)
    return stored


def squad(data: Path, depth: int, distractors: str | None) -> Benchmark:
    started = time.time()
    bench = load("squad-support", data / "squad" / "dev-v1.1-even.json", distractors)
    frames = singles(bench, None, "position")
    notes = []
    for learner in LEARNERS:
        result = learn(f"squad-{learner}", Data(bench.index, benchmark_topics(bench)), folds=2, learner=learner,
                       depth=depth)
        frames[f"ltr-{learner}"] = result.per_topic.loc[frames[BASELINE].index]
        notes.append(grid_note(learner, result))
    where = "demo distractors" if distractors else "no distractors"
    table("squad-support", f"even articles, {where}: 2-fold CV by topic", frames, notes, started)
    return bench


def transfer(data: Path, wikiqa: dict[str, str], squad_bench: Benchmark | None, squad_depth: int) -> None:
    """The WikiQA-trained rankers on TrecQA DEV and on SQuAD-support, beside BM25F."""
    started = time.time()
    trec = load("trecqa", data / "trecqa" / "DEV.xml")
    frames = {BASELINE: singles(trec, None, "random")[BASELINE], **ranker_frames(trec, wikiqa)}
    table("transfer-trecqa", "the WikiQA-trained rankers on TrecQA DEV (BM25F at its defaults)", frames, [], started)
    if squad_bench is not None:
        started = time.time()
        frames = singles(squad_bench, None, "position")
        frames = {m: frames[m] for m in (BASELINE, "align.v1", "embed.v1", "minilm.v1", "position")}
        for depth in (None, squad_depth):  # the depth it was learned with (WikiQA's), and squad's k
            at = {"depth": depth} if depth else {}
            where = f"-depth-{depth}" if depth else ""  # none: at its learned depth
            frames.update(ranker_frames(squad_bench, {label + where: r for label, r in wikiqa.items()}, at))
        table("transfer-squad-support", "the WikiQA-trained rankers on squad-support (ltr-*: at their learned "
              f"depth; ltr-*-depth-{squad_depth}: re-ranking {squad_depth:,})", frames, [], started)


def grid_note(learner: str, result: LearnResult) -> str:
    """The regularisation settings tried by CV on the training topics, their CV MAP and top feature."""
    tried = result.learned.meta.get("grid") or []
    parts = []
    for t in tried:
        setting = ", ".join(f"{k}={v}" for k, v in (t["setting"] or {}).items()) or "default"
        feature, share = t["top_share"]
        parts.append(f"[{setting}] CV MAP {t['map']:.4f} ± {t['se']:.4f}, top feature {feature} {share:.0%}, "
                     f"all position features {t['position_share']:.0%}")
    chosen = result.learned.meta["settings"]
    cv = result.metrics.get("cv", {})
    head = f"{learner}: honest CV MAP on the training topics {cv.get('map', float('nan')):.4f}"
    return (
        head
        + (f"; chose (most regularised within 1 SE of the best) {chosen}" if parts else "")
        + ("\n  - " + "\n  - ".join(parts) if parts else "")
    )


def table(name: str, title: str, frames: dict[str, pd.DataFrame], notes: list[str], started: float,
          cv: dict[str, float] | None = None) -> None:
    comparison = compare(frames, BASELINE)
    print(f"\n## {name}: {title}\n")
    print(f"| model | MAP | MRR | p (MAP, Wilcoxon / t) vs {BASELINE} | p (MRR, Wilcoxon / t) |")
    print("|---|---|---|---|---|")
    numbers: dict[str, dict[str, float]] = {}
    for model in frames:
        values: dict[tuple[str, str], float] = {
            (str(r["metric"]), key): float(r[key])
            for r in comparison[comparison["model"] == model].to_dict("records")
            for key in ("mean", "diff", "p_wilcoxon", "p_ttest")
        }

        def p(metric: str, values: dict[tuple[str, str], float] = values, model: str = model) -> str:
            if model == BASELINE:
                return ""
            sign = "+" if values[metric, "diff"] > 0 else "-"
            return f"{sign} {values[metric, 'p_wilcoxon']:.4f} / {values[metric, 'p_ttest']:.4f}"

        print(f"| {model} | {values['map', 'mean']:.4f} | {values['mrr', 'mean']:.4f} | {p('map')} | {p('mrr')} |")
        numbers[model] = {m: values[m, "mean"] for m in METRICS}
        if model != BASELINE:
            numbers[model].update({f"p_{m}{t}": values[m, key] for m in METRICS
                                   for t, key in (("", "p_wilcoxon"), ("_t", "p_ttest"))})
    for note in notes:
        print(f"\n{note}")
    load_avg = subprocess.run(["uptime"], capture_output=True, text=True).stdout.strip()
    print(f"\n({time.time() - started:.0f} s; {load_avg})", flush=True)
    REPORT[name] = {"models": numbers, "cv_map": cv or {}, "seconds": round(time.time() - started)}


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--data", type=Path, default=Path(__file__).resolve().parents[2] / "shared" / "data")
    parser.add_argument("--only", default="wikiqa,trecqa,squad-support,transfer")
    parser.add_argument("--depth", type=int, default=LTR_DEPTH, help="sentences re-ranked on WikiQA and TrecQA")
    parser.add_argument(
        "--squad-depth",
        type=int,
        default=DEFAULT_K,
        help="sentences re-ranked on squad-support (its single models rank their top k=1000)",
    )
    parser.add_argument("--distractors", default="demo", help="squad-support's distractors: demo or none")
    parser.add_argument("--scorers", default=",".join(LTR_SCORERS),
                        help=f"the rankers' per-scorer features (default {','.join(LTR_SCORERS)})")
    parser.add_argument("--json", action="store_true",
                        help="the tables to stderr, and every number of them to stdout as JSON")
    args = parser.parse_args()
    if not args.json:
        measure(args)
        return
    with contextlib.redirect_stdout(sys.stderr):
        measure(args)
    json.dump(REPORT, sys.stdout, indent=1)
    print()


def measure(args: argparse.Namespace) -> None:
    """The chosen tables, printed as Markdown; their numbers kept in REPORT."""
    scorers = tuple(m.strip() for m in args.scorers.split(",") if m.strip())
    os.environ.setdefault("SENTRET_RANKERS", tempfile.mkdtemp(prefix="sentret-rankers-"))
    chosen = args.only.split(",")
    distractors = None if args.distractors == "none" else args.distractors
    wikiqa: dict[str, str] = {}
    if "wikiqa" in chosen or "transfer" in chosen:
        wikiqa = held_out("wikiqa", args.data / "wikiqa" / "WikiQA-train.tsv", args.data / "wikiqa" / "WikiQA-dev.tsv",
                          args.depth, scorers)
    if "trecqa" in chosen:
        held_out("trecqa", args.data / "trecqa" / "TRAIN.xml", args.data / "trecqa" / "DEV.xml", args.depth, scorers)
    squad_bench = None
    if "squad-support" in chosen:
        squad_bench = squad(args.data, args.squad_depth, distractors)
    if "transfer" in chosen:
        if squad_bench is None and "squad" in args.only:
            squad_bench = load("squad-support", args.data / "squad" / "dev-v1.1-even.json", distractors)
        transfer(args.data, wikiqa, squad_bench, args.squad_depth)


if __name__ == "__main__":
    main()
