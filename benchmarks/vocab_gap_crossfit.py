"""The vocabulary-gap models of Momtazi & Klakow (IP&M 2015) on WikiQA: do the class and trigger
LMs beat DIR? If not, why? Tuned on WikiQA train, the trigger LMs cross-fitted on its halves (where
``benchmarks/vocab_gap.py`` cross-validates over dev), then read by group of dev topics.

    .venv/bin/python benchmarks/vocab_gap_crossfit.py [--data-root ../shared/data]
        [--work /tmp/sentret-vocab-gap-crossfit] [--out benchmarks/out] [--max-rounds 100] [--skip-self-fit]

Protocol (dev is never trained or tuned on):

1. WikiQA dev and train indexes (cached). Train is split by question (seeded) into halves A and B,
   written as WikiQA TSVs under ``--work`` (derived data: never inside the project).
2. Artefacts, each under one name on every index that needs it:
   * ``xf-classes``: K = 100 word classes from the bigrams of dev + train (unsupervised: no label);
   * ``xf-triggers`` on dev: inside/across counted on dev + train sentences, QA/NE (and their
     question-word rows) from the *train* question/answer pairs;
   * ``xf-triggers`` on train-B: inside/across on B + A sentences, QA/NE from the *A* pairs, so
     the weights are tuned on questions the QA/NE tables never saw (cross-fitting);
   * ``xf-selffit`` on train: QA/NE from all train pairs, to show what tuning on the tables' own
     questions does (skipped with ``--skip-self-fit``); on dev, the same tables as ``xf-triggers``.
3. Runs (:func:`evaluate_benchmark`, as ``sentret eval``; tie-aware MAP/MRR; Wilcoxon and t-test
   against DIR): DIR and the class LMs (v1 at λ = 0, the paper's; v2) tuned on train; DIR, the
   trigger LMs and two smoothing-only controls (JM, two-stage) tuned on train-B; every model at
   its defaults; and v2 with its markers switched off (v1 at v2's tuned parameters).
4. Why: MAP per group of dev topics (question type = the question's marker; whether train has a
   question on the same Wikipedia document; the vocabulary-gap topics), the answer-type evidence
   (how often a correct vs a wrong candidate holds an entity of the asked type), and the coverage
   of the trigger tables on the dev questions.
Writes ``vocab_gap_crossfit.json`` to ``--out`` (and prints it).
"""

from __future__ import annotations

import argparse
import json
import random
import sys
import time
from collections.abc import Sequence
from pathlib import Path
from typing import Any

import numpy as np
import pandas as pd

from sentret_core.evaluation.benchmarks import load_benchmark
from sentret_core.evaluation.benchmarks.base import Benchmark
from sentret_core.evaluation.driver import evaluate_benchmark
from sentret_core.evaluation.report import Report
from sentret_core.evaluation.significance import compare
from sentret_core.models.core.query import ANSWER_TYPES, prepare
from sentret_core.models.training.classes import train_classes
from sentret_core.models.training.triggers import load_triggers, sentence_labels, train_triggers

ROOT = Path(__file__).resolve().parents[1]
DATA = ROOT.parent / "shared" / "data"
DIR = "lm-dir.v1"
CLASSES, TABLES, SELF_FIT = "xf-classes", "xf-triggers", "xf-selffit"
SMOOTHING = ("lm-jm.v1", "lm-2s.v1")  # controls: more smoothing, no trigger knowledge
METRICS = ("map", "mrr")


def _log(message: str) -> None:
    print(f"[vocab_gap_crossfit] {message}", file=sys.stderr, flush=True)


def split_train(train: Path, work: Path, seed: int) -> tuple[Path, Path]:
    """Halves A and B of the train questions (all rows of a question stay together)."""
    lines = train.read_text(encoding="utf-8").splitlines()
    header, rows = lines[0], lines[1:]
    questions = sorted({r.split("\t", 1)[0] for r in rows}, key=lambda q: int(q[1:]))
    random.Random(seed).shuffle(questions)
    half = set(questions[: len(questions) // 2])
    work.mkdir(parents=True, exist_ok=True)
    out = []
    for name, keep in (("A", True), ("B", False)):
        path = work / f"WikiQA-train-{name}.tsv"
        text = "\n".join([header, *(r for r in rows if (r.split("\t", 1)[0] in half) == keep)]) + "\n"
        if not path.exists() or path.read_text(encoding="utf-8") != text:
            path.write_text(text, encoding="utf-8")
        out.append(path)
    return out[0], out[1]


def rows_of(report: Report, label: str = "") -> list[dict[str, Any]]:
    """One row per model: means, significance against the report's baseline, parameters."""
    out = []
    sig = report.comparison
    for name, result in report.results.items():
        row: dict[str, Any] = {"model": name + label}
        for metric in METRICS:
            row[metric] = float(result.per_topic[metric].mean())
            found = sig[(sig["model"] == name) & (sig["metric"] == metric)]
            if name != report.baseline and len(found):
                row[f"d_{metric}"] = float(found.iloc[0]["diff"])
                row[f"p_{metric}"] = (float(found.iloc[0]["p_wilcoxon"]), float(found.iloc[0]["p_ttest"]))
        params = result.params if result.params is not None else (result.folds[0]["params"] if result.folds else {})
        row["params"] = {k: v for k, v in (params or {}).items() if k not in ("max_candidates",)}
        out.append(row)
    return out


def question_type(index: Any, text: str) -> str:
    asks = prepare(index, text).asks
    return asks[0] if asks else "none"


def answer_type_evidence(bench: Benchmark) -> dict[str, dict[str, float]]:
    """Per marker: share of correct / wrong candidates holding an entity of an answering label."""
    index = bench.index
    labels = sorted({str(x) for x in index.entities["label"]})
    Y = sentence_labels(index, labels).tocsc()
    out: dict[str, dict[str, float]] = {}
    for topic in bench.topics:
        asks = prepare(index, topic.query).asks
        if not asks:
            continue
        wanted = [labels.index(L) for L in ANSWER_TYPES[asks[0]] if L in labels]
        has = np.asarray(Y[:, wanted].sum(axis=1)).ravel() > 0
        rel = set(topic.relevant)
        cands = [int(s) for s in (topic.candidates if topic.candidates is not None else [])]
        entry = out.setdefault(asks[0], {"topics": 0, "correct": 0, "correct_typed": 0, "wrong": 0, "wrong_typed": 0})
        entry["topics"] += 1
        for s in cands:
            kind = "correct" if s in rel else "wrong"
            entry[kind] += 1
            entry[kind + "_typed"] += int(has[s])
    return out


def coverage(bench: Benchmark, name: str) -> dict[str, float]:
    """How much of the dev questions the trigger tables know."""
    index = bench.index
    tables = load_triggers(index, name)
    qa_rows = np.diff(tables.tables["qa"].indptr) > 0
    ne_rows = np.diff(tables.tables["ne"].indptr) > 0
    terms = known_qa = known_ne = gap = relevant = 0
    for topic in bench.topics:
        q = prepare(index, topic.query)
        terms += len(q.ids)
        known_qa += int(qa_rows[q.ids].sum())
        known_ne += int(ne_rows[q.ids].sum())
        ids = set(q.ids.tolist())
        for s in topic.relevant:
            relevant += 1
            gap += int(not ids & set(index.sequence(s).tolist()))
    return {"query_terms": terms, "with_qa_row": known_qa / max(terms, 1), "with_ne_row": known_ne / max(terms, 1),
            "relevant": relevant, "relevant_without_query_term": gap,
            "pairs": {k: int(m.nnz) for k, m in tables.tables.items()},
            "questions_asking": dict(zip(ANSWER_TYPES, tables.asked.astype(int).tolist()))}


def groups(bench: Benchmark, train_path: Path) -> dict[str, list[str]]:
    """Dev topics by question type, by whether train has a question on the same document, and the
    gap topics (no correct sentence shares a term with the question)."""
    index = bench.index
    out: dict[str, list[str]] = {kind: [] for kind in [*ANSWER_TYPES, "none"]}
    for t in bench.topics:
        out[question_type(index, t.query)].append(t.id)
    train_docs = {r.split("\t")[2] for r in train_path.read_text(encoding="utf-8").splitlines()[1:]}
    dev_doc = {r.split("\t")[0]: r.split("\t")[2] for r in bench.data.read_text(encoding="utf-8").splitlines()[1:]}
    out["document also in train"] = [t.id for t in bench.topics if dev_doc[t.id] in train_docs]
    out["document not in train"] = [t.id for t in bench.topics if dev_doc[t.id] not in train_docs]
    out["gap (no correct sentence shares a term)"] = [
        t.id for t in bench.topics
        if not any(set(prepare(index, t.query).ids.tolist()) & set(index.sequence(s).tolist()) for s in t.relevant)
    ]
    return out


def by_group(found: dict[str, list[str]], frames: dict[str, pd.DataFrame], base: str) -> list[dict[str, Any]]:
    out = []
    for kind, ids in found.items():
        if not ids:
            continue
        row: dict[str, Any] = {"group": kind, "topics": len(ids)}
        for name, frame in frames.items():
            row[name] = float(frame.loc[ids, "map"].mean())
        sub = compare({n: f.loc[ids] for n, f in frames.items()}, base)
        row["p"] = {n: float(sub[(sub["model"] == n) & (sub["metric"] == "map")].iloc[0]["p_wilcoxon"])
                    for n in frames if n != base}
        out.append(row)
    return out


def main(argv: Sequence[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--data-root", type=Path, default=DATA)
    parser.add_argument("--work", type=Path, default=Path("/tmp/sentret-vocab-gap-crossfit"))
    parser.add_argument("--out", type=Path, default=ROOT / "benchmarks" / "out")
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument("--max-rounds", type=int, default=100)
    parser.add_argument("--skip-self-fit", action="store_true")
    args = parser.parse_args(argv)
    dev_path = args.data_root / "wikiqa" / "WikiQA-dev.tsv"
    train_path = args.data_root / "wikiqa" / "WikiQA-train.tsv"
    if not dev_path.is_file() or not train_path.is_file():
        print(f"{args.data_root}: the WikiQA dev and train files are missing", file=sys.stderr)
        return 2
    started = time.perf_counter()
    a_path, b_path = split_train(train_path, args.work, args.seed)
    dev, train = load_benchmark("wikiqa", dev_path, log=_log), load_benchmark("wikiqa", train_path, log=_log)
    half_a, half_b = load_benchmark("wikiqa", a_path, log=_log), load_benchmark("wikiqa", b_path, log=_log)
    _log("artefacts")
    for bench, other in ((dev, train), (train, dev)):
        train_classes(bench.index, name=CLASSES, sources=[other.index], classes=100, min_count=3, seed=0)
    train_triggers(dev.index, train_path, name=TABLES, sources=[train.index])
    train_triggers(half_b.index, a_path, name=TABLES, sources=[half_a.index])
    if not args.skip_self_fit:  # on dev the same tables as xf-triggers: only the tuning side differs
        train_triggers(train.index, train_path, name=SELF_FIT, sources=[dev.index])
        train_triggers(dev.index, train_path, name=SELF_FIT, sources=[train.index])
    cls = {"lm-class.v1": {"classes": CLASSES}, "lm-class.v2": {"classes": CLASSES}}
    trig = {"lm-trigger.v1": {"tables": TABLES}, "lm-trigger.v2": {"tables": TABLES}}
    common = dict(baseline=DIR, metrics=METRICS, max_rounds=args.max_rounds, progress=_log)
    reports: dict[str, Report] = {}
    args.out.mkdir(parents=True, exist_ok=True)

    def run(name: str, models: list[str], **kwargs: Any) -> Report:
        reports[name] = report = evaluate_benchmark(dev, models, **common, **kwargs)
        rows = rows_of(report)
        text = json.dumps(rows, indent=2, default=str)
        (args.out / f"vocab_gap_crossfit.{name}.json").write_text(text, encoding="utf-8")
        for row in rows:
            _log(f"{name}: {row['model']} MAP {row['map']:.4f} MRR {row['mrr']:.4f} {row['params']}")
        return report

    _log("class LMs tuned on train")
    paper = {"lm-class.v1": {**cls["lm-class.v1"], "lam": 0.0}, "lm-class.v2": cls["lm-class.v2"]}
    run("class", [DIR, *cls], tune_on=train, params=paper)
    _log("trigger LMs tuned on train-B (QA/NE tables from train-A)")
    tuned = run("trigger", [DIR, *trig, *SMOOTHING], tune_on=half_b, params=trig)
    _log("defaults")
    run("defaults", [DIR, *cls, *trig], params={**cls, **trig})
    tuned_v2 = dict(tuned.results["lm-trigger.v2"].folds[0]["params"])
    run("no-markers", [DIR, "lm-trigger.v1"], params={"lm-trigger.v1": tuned_v2})
    if not args.skip_self_fit:
        _log("self-fit: trigger v2 tuned on the train questions its QA/NE tables were counted on")
        run("self-fit", [DIR, "lm-trigger.v2"], tune_on=train, params={"lm-trigger.v2": {"tables": SELF_FIT}})
    # dev tables are the ones every dev run read; the self-fit run reads xf-selffit on train only
    frames = {
        "doc-order": reports["class"].results["doc-order"].per_topic,
        DIR: reports["class"].results[DIR].per_topic,
        "lm-class.v1 (λ=0)": reports["class"].results["lm-class.v1"].per_topic,
        "lm-class.v2": reports["class"].results["lm-class.v2"].per_topic,
        "lm-trigger.v1": reports["trigger"].results["lm-trigger.v1"].per_topic,
        "lm-trigger.v2": reports["trigger"].results["lm-trigger.v2"].per_topic,
        "v2 without markers": reports["no-markers"].results["lm-trigger.v1"].per_topic,
    }
    kinds = [*ANSWER_TYPES, "none"]
    payload = {
        "runs": {name: rows_of(r) for name, r in reports.items()},
        "by_group": by_group(groups(dev, train_path), frames, DIR),
        "answer_type_evidence": answer_type_evidence(dev),
        "coverage": coverage(dev, TABLES),
        "question_types_train": {k: sum(question_type(train.index, t.query) == k for t in train.topics) for k in kinds},
        "topics": {"dev": len(dev.topics), "train": len(train.topics), "train-A": len(half_a.topics),
                   "train-B": len(half_b.topics)},
        "seconds": round(time.perf_counter() - started, 1),
    }
    (args.out / "vocab_gap_crossfit.json").write_text(json.dumps(payload, indent=2, default=str), encoding="utf-8")
    print(json.dumps(payload, indent=2, default=str))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
