"""Bridging the vocabulary gap (Momtazi & Klakow, IP&M 2015) on WikiQA dev: the class-based LM and the trained
trigger LM against the word unigram (DIR) and BM25F.

    .venv/bin/python benchmarks/vocab_gap.py [--data-root ../shared/data] [--out benchmarks/out]
        [--folds 2] [--seed 0] [--max-rounds 3] [--no-demo-timing]

1. Loads WikiQA dev and train with :func:`sentret_core.evaluation.benchmarks.load_benchmark` (cached indexes).
2. Times class training on the demo index (K = 100, min_count 3, ≤ 20 exchange passes, seed 0),
   trained afresh (nothing read from or written to the cache).
3. Word classes for the dev collection, as named artefacts of its index: (a) ``vg-classes-dev``
   from its own bigrams, and (b) ``vg-classes-big`` from the bigrams of dev + WikiQA train + the
   demo corpus (``train_classes(sources=…)``) — the paper trained on a corpus far larger than its
   test collection (AQUAINT, 450 M words).
4. Trigger tables for the dev collection (artefact ``vg-triggers-big``): inside/across-sentence
   counted on dev + WikiQA train + demo, QA-pair and named-entity tables from WikiQA *train*
   question/answer pairs (Label 1); a second set (``vg-triggers-dev``) with the inside/across
   tables of the dev sentences alone. Variants name the artefact they read (``classes=``,
   ``tables=``), so nothing depends on what was trained before.
5. Evaluates every variant with tie-aware MAP / MRR / P@1 on the dev topics (questions with a
   correct sentence; candidates = the question's own sentences), tuned by 2-fold
   cross-validation over the dev topics (seeded; greedy coordinate ascent on MAP over the
   declared grids, the parameters named "fixed" held; test-fold values only). Dev, not WikiQA
   train, is tuned on because the QA/NE tables are counted on the train questions: tuning their
   weights on those same questions would reward memorised pairs.
6. Compares every variant with DIR (paired Wilcoxon and t-test, two-tailed) and writes
   ``vocab_gap.md`` and ``vocab_gap.json``.
"""

from __future__ import annotations

import argparse
import json
import math
import sys
import time
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import numpy as np
import pandas as pd

from sentret_core import Index
from sentret_core.evaluation.benchmarks import load_benchmark
from sentret_core.evaluation.benchmarks.base import Benchmark
from sentret_core.evaluation.crossval import cross_validate
from sentret_core.evaluation.driver import evaluate_benchmark
from sentret_core.evaluation.runs import Evaluator
from sentret_core.evaluation.significance import compare
from sentret_core.evaluation.tuning import grid_search
from sentret_core.models.core.query import normalise
from sentret_core.models.training.classes import fit_classes, train_classes
from sentret_core.models.training.triggers import train_triggers

ROOT = Path(__file__).resolve().parents[1]
DATA = ROOT.parent / "shared" / "data"
DEMO = ROOT / "data" / "indexes" / "demo"
METRICS = ("map", "mrr", "p@1")
NO_TRIGGERS = {"lam_self": 0.0, "lam_inside": 0.0, "lam_across": 0.0, "lam_qa": 0.0, "lam_ne": 0.0}
LAMS = [round(0.1 * i, 1) for i in range(10)]  # 0 .. 0.9
CLASSES = {"dev": "vg-classes-dev", "big": "vg-classes-big"}  # artefact names on the dev index
TABLES = {"dev": "vg-triggers-dev", "big": "vg-triggers-big"}
MUS = [1.0, 5.0, 10.0, 25.0, 50.0, 100.0, 250.0, 500.0, 1000.0, 2500.0, 5000.0, 10000.0]


def triggers(mus: list[float] = MUS, **grids: list[float]) -> tuple[dict[str, Any], dict[str, list[Any]]]:
    """Fixed weights (every triggering not named: 0) and the grid of the named ones and μ."""
    fixed = {k: v for k, v in NO_TRIGGERS.items() if k not in grids}
    return fixed, {**grids, "mu": mus}


@dataclass(frozen=True)
class Variant:
    label: str
    model: str
    fixed: dict[str, Any]
    space: dict[str, list[Any]] | None  # full grid searched per fold; None: runs' coordinate ascent
    tables: str | None  # trigger tables: "big" (dev + train + demo sentences) or "dev"
    what: str


def _variants() -> list[Variant]:
    out = [
        Variant("DIR", "lm-dir.v1", {}, None, None, "word unigram, Dirichlet (μ over its grid)"),
        Variant("BM25F", "bm25f.v1", {}, None, None, "BM25F, context and title fields (coordinate ascent)"),
        Variant("class (dev bigrams)", "lm-class.v1", {"classes": CLASSES["dev"], "lam": 0.0}, {"mu": MUS}, None,
                "the paper's class LM; K=100 trained on the 2.7k dev sentences alone"),
        Variant("class (big bigrams)", "lm-class.v1", {"classes": CLASSES["big"], "lam": 0.0}, {"mu": MUS},
                None, "the paper's class LM; K=100 trained on dev + WikiQA train + demo"),
        Variant("class+word (big)", "lm-class.v1", {"classes": CLASSES["big"]},
                {"lam": LAMS, "mu": [50.0, 250.0, 1000.0], "mu_word": [25.0, 100.0, 500.0]}, None,
                "class LM (big) interpolated with the word DIR model"),
    ]
    singles = [
        ("self+DIR", "lam_self", "big", "self triggering (= the ML sentence model)"),
        ("inside+DIR", "lam_inside", "big", "inside-sentence triggering, dev + train + demo sentences"),
        ("inside(dev)+DIR", "lam_inside", "dev", "inside-sentence triggering, dev sentences only"),
        ("across+DIR", "lam_across", "big", "across-sentence triggering, dev + train + demo sentences"),
        ("QA+DIR", "lam_qa", "big", "QA-pair triggering, WikiQA train pairs (Label 1)"),
        ("NE+DIR", "lam_ne", "big", "question term → answer NER label, WikiQA train pairs"),
    ]
    for label, lam, tables, what in singles:
        fixed, space = triggers(**{lam: LAMS})
        out.append(Variant(label, "lm-trigger.v1", {**fixed, "tables": TABLES[tables]}, space, tables, what))
    pairs = [
        ("inside+NE+DIR", "lam_inside", "lam_ne", "the paper's best pair"),
        ("inside+QA+DIR", "lam_inside", "lam_qa", "unsupervised + supervised"),
        ("across+QA+DIR", "lam_across", "lam_qa", "unsupervised + supervised"),
        ("QA+NE+DIR", "lam_qa", "lam_ne", "both supervised tables"),
    ]
    for label, a, b, what in pairs:
        fixed, space = triggers([25.0, 100.0, 500.0], **{a: LAMS, b: LAMS})
        out.append(Variant(label, "lm-trigger.v1", {**fixed, "tables": TABLES["big"]}, space, "big", what))
    fixed, space = triggers(
        [25.0, 100.0, 500.0],
        lam_inside=[0.0, 0.1, 0.3, 0.5],
        lam_across=[0.0, 0.1, 0.3],
        lam_qa=[0.0, 0.1, 0.3, 0.5, 0.7],
        lam_ne=[0.0, 0.1, 0.3, 0.5],
    )
    out.append(Variant("best combination+DIR", "lm-trigger.v1", {**fixed, "tables": TABLES["big"]}, space, "big",
                       "weights of inside, across, QA, NE chosen jointly per fold (nested: any subset)"))
    return out


VARIANTS = _variants()


def main(argv: Sequence[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--data-root", type=Path, default=DATA)
    parser.add_argument("--out", type=Path, default=ROOT / "benchmarks" / "out")
    parser.add_argument("--folds", type=int, default=2)
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument("--max-rounds", type=int, default=3)
    parser.add_argument("--repeats", type=int, default=5, help="repeated CV: seeds seed .. seed+repeats-1")
    parser.add_argument("--no-demo-timing", action="store_true", help="skip timing class training on demo")
    parser.add_argument("--variants", default=None, help="comma-separated labels (default: all)")
    args = parser.parse_args(argv)
    dev_path = args.data_root / "wikiqa" / "WikiQA-dev.tsv"
    train_path = args.data_root / "wikiqa" / "WikiQA-train.tsv"
    if not dev_path.is_file() or not train_path.is_file():
        print(f"{args.data_root}: the WikiQA dev and train files are missing", file=sys.stderr)
        return 2
    args.out.mkdir(parents=True, exist_ok=True)
    started = time.perf_counter()
    facts: dict[str, Any] = {}

    dev = load_benchmark("wikiqa", dev_path, log=_log)
    train = load_benchmark("wikiqa", train_path, log=_log)
    demo = Index.load(DEMO)
    facts["dev"] = {"topics": len(dev.topics), "sentences": dev.index.N, "terms": dev.index.total_terms}
    facts["sources"] = {
        "wikiqa-train": {"sentences": train.index.N, "terms": train.index.total_terms},
        "demo": {"sentences": demo.N, "terms": demo.total_terms},
    }

    if not args.no_demo_timing:
        _log("timing class training on the demo index (K=100, min_count=3, ≤20 passes)")
        facts["demo_training"] = time_training(demo)
        _log(f"demo: {facts['demo_training']}")

    _log("class maps for the dev collection")
    clock = time.perf_counter()
    own = train_classes(dev.index, name=CLASSES["dev"], classes=100, min_count=3, iterations=20, seed=0)
    facts["classes_dev"] = {"train_seconds": round(time.perf_counter() - clock, 2), **own.stats}
    clock = time.perf_counter()
    big = train_classes(dev.index, name=CLASSES["big"], sources=[train.index, demo], classes=100, min_count=3,
                        iterations=20, seed=0)
    facts["classes_big"] = {"train_seconds": round(time.perf_counter() - clock, 2), **big.stats}
    facts["class_examples"] = class_examples(dev.index, big)

    _log("trigger tables for the dev collection")
    clock = time.perf_counter()
    tables = {
        "dev": train_triggers(dev.index, qa_pairs=train_path, name=TABLES["dev"]),
        "big": train_triggers(dev.index, qa_pairs=train_path, sources=[train.index, demo], name=TABLES["big"]),
    }
    facts["triggers"] = {
        name: {
            "seconds": t.meta["stats"]["seconds"],
            "pairs": t.meta["stats"]["pairs"],
            "qa_pairs_read": t.meta["stats"].get("qa_pairs_read"),
            "labels": list(t.labels),
        }
        for name, t in tables.items()
    }
    facts["triggers"]["train_seconds"] = round(time.perf_counter() - clock, 2)
    facts["gap"] = gap_statistics(dev)

    chosen = VARIANTS
    if args.variants:
        wanted = {v.strip() for v in args.variants.split(",")}
        chosen = [v for v in VARIANTS if v.label in wanted or v.label == "DIR"]
    per_topic: dict[str, pd.DataFrame] = {}
    folds: dict[str, list[dict[str, Any]]] = {}
    baselines: dict[str, pd.DataFrame] = {}
    evaluator = Evaluator(dev)
    for v in chosen:
        clock = time.perf_counter()
        repeats: list[pd.DataFrame] = []
        folds[v.label] = []
        for seed in range(args.seed, args.seed + args.repeats):
            if v.space is None:
                report = evaluate_benchmark(dev, [v.model], params={v.model: v.fixed}, folds=args.folds,
                                            seed=seed, max_rounds=args.max_rounds, tune_metric="map")
                result = report.results[v.model]
                frame = result.per_topic
                chosen_folds = [{"fold": f["fold"], "params": f["params"], "train_map": f["train_score"]}
                                for f in result.folds]
                for name in ("doc-order", "random"):
                    baselines.setdefault(name, report.results[name].per_topic)
            else:
                frame, chosen_folds = grid_cv(evaluator, v, args.folds, seed)
            repeats.append(frame)
            folds[v.label] += [{"seed": seed, **f} for f in chosen_folds]
        # every topic's test values averaged over the repetitions (each tested once per repetition)
        per_topic[v.label] = sum(repeats[1:], repeats[0]) / len(repeats)
        how = "coordinate ascent" if v.space is None else "full grid"
        _log(f"{v.label}: MAP {per_topic[v.label]['map'].mean():.4f} "
             f"({how}, {args.repeats}× {args.folds}-fold CV, {time.perf_counter() - clock:.0f} s)")
    frames = {**baselines, **per_topic}
    comparison = compare(frames, "DIR")
    gap_topics = facts["gap"]["gap_topics"]
    total = time.perf_counter() - started
    facts["seconds"] = round(total, 1)
    text = markdown(frames, comparison, folds, facts, gap_topics, args)
    (args.out / "vocab_gap.md").write_text(text, encoding="utf-8")
    payload = {
        "facts": facts,
        "variants": {
            v.label: {"model": v.model, "fixed": v.fixed, "grid": v.space, "tables": v.tables, "what": v.what}
            for v in chosen
        },
        "means": {label: {k: float(v) for k, v in frame.mean().items()} for label, frame in frames.items()},
        "comparison_vs_DIR": comparison.to_dict(orient="records"),
        "folds": folds,
    }
    (args.out / "vocab_gap.json").write_text(json.dumps(payload, indent=2, default=_plain), encoding="utf-8")
    print(text)
    print(f"wrote {args.out / 'vocab_gap.md'} and vocab_gap.json in {total:.0f} s")
    return 0


def grid_cv(evaluator: Evaluator, v: Variant, k: int, seed: int) -> tuple[pd.DataFrame, list[dict[str, Any]]]:
    """k-fold CV by topic (the same folds as ``driver.evaluate_benchmark``): a full grid search on
    the training topics, the best point evaluated on the held-out ones."""
    assert v.space is not None
    found: list[Any] = []

    def tune(train: list[str]) -> dict[str, Any]:
        objective = evaluator.objective(v.model, train, "map")
        best = grid_search(lambda p: objective({**v.fixed, **p}), v.space or {})
        found.append(best)
        return {**v.fixed, **best.params}

    def test(topics: list[str], params: dict[str, Any]) -> pd.DataFrame:
        return evaluator.per_topic(evaluator.run(v.model, params, topics), topics)

    result = cross_validate([t.id for t in evaluator.bench.topics], k, seed, tune, test)
    frame = result.per_topic.loc[[t.id for t in evaluator.bench.topics]]
    records = [{"fold": f.index, "params": dict(f.params), "train_map": best.score}
               for f, best in zip(result.folds, found)]
    return frame, records


def time_training(demo: Index) -> dict[str, Any]:
    fresh = Index.load(demo.path)  # cache=False: trained now, nothing read from or written to a cache
    wall, cpu = time.perf_counter(), time.process_time()
    cmap = fit_classes(fresh, classes=100, min_count=3, iterations=20, seed=0)
    return {
        "wall_seconds": round(time.perf_counter() - wall, 1),
        "cpu_seconds": round(time.process_time() - cpu, 1),
        "trained_words": cmap.stats["trained_words"],
        "passes": cmap.stats["passes"],
        "moves": cmap.stats["moves"],
    }


def class_examples(index: Index, cmap: Any) -> dict[str, list[str]]:
    out = {}
    for word in ("born", "tall", "feet", "president", "river", "1990", "france", "songs", "invented"):
        tid = index.term_index.get(word)
        if tid is not None:
            out[word] = cmap.members(index, int(cmap.classes[tid]), 10)
    return out


def gap_statistics(bench: Benchmark) -> dict[str, Any]:
    """How many correct sentences share no term with their question (the vocabulary gap)."""
    index = bench.index
    relevant = no_overlap = 0
    gap_topics: list[str] = []
    for topic in bench.topics:
        terms = set(index.term_ids(normalise(index, topic.query)).tolist()) - {-1}
        misses = 0
        for s in topic.relevant:
            relevant += 1
            if not terms & set(index.sequence(s).tolist()):
                misses += 1
        no_overlap += misses
        if misses == len(topic.relevant):
            gap_topics.append(topic.id)
    return {
        "relevant_sentences": relevant,
        "relevant_without_query_term": no_overlap,
        "topics": len(bench.topics),
        "gap_topics": gap_topics,
    }


def _p(value: float) -> str:
    if not math.isfinite(value):
        return "–"
    return f"{value:.3f}" if value >= 0.001 else f"{value:.0e}"


def markdown(
    frames: dict[str, pd.DataFrame],
    comparison: pd.DataFrame,
    folds: dict[str, list[dict[str, Any]]],
    facts: dict[str, Any],
    gap_topics: list[str],
    args: argparse.Namespace,
) -> str:
    what = {v.label: v.what for v in VARIANTS}
    lines = [
        "# Vocabulary gap (Momtazi & Klakow, IP&M 2015) on WikiQA dev",
        "",
        f"Generated by `benchmarks/vocab_gap.py` in {facts['seconds']:.0f} s. "
        f"{facts['dev']['topics']} topics (dev questions with a correct sentence), candidates = the "
        f"question's own sentences; collection = the {facts['dev']['sentences']:,} dev sentences. "
        f"Tie-aware means. Every model is tuned by {args.folds}-fold cross-validation over the dev topics, "
        f"repeated with {args.repeats} fold seeds ({args.seed}..{args.seed + args.repeats - 1}); a topic's "
        "value is the mean of its test-fold values over the repetitions. Tuning maximises MAP on the "
        "training fold: a full grid search for the vocabulary-gap models (grids below), coordinate ascent "
        f"over the declared grids (≤ {args.max_rounds} rounds) for DIR (μ only: a full grid) and BM25F. "
        "p = paired two-tailed Wilcoxon / t-test against DIR; `*` = both < 0.05.",
        "",
        "| model | MAP | MRR | P@1 | ΔMAP vs DIR | p MAP (W / t) | p MRR (W / t) | gap-topic MAP | what |",
        "|---|---:|---:|---:|---:|---:|---:|---:|---|",
    ]
    for label, frame in frames.items():
        cells = []
        for metric in METRICS:
            row = comparison[(comparison["model"] == label) & (comparison["metric"] == metric)].iloc[0]
            mark = "*" if label != "DIR" and bool(row["significant"]) else ""
            cells.append(f"{row['mean']:.4f}{mark}")
        ps = []
        for metric in ("map", "mrr"):
            row = comparison[(comparison["model"] == label) & (comparison["metric"] == metric)].iloc[0]
            ps.append("–" if label == "DIR" else f"{_p(row['p_wilcoxon'])} / {_p(row['p_ttest'])}")
        diff = comparison[(comparison["model"] == label) & (comparison["metric"] == "map")].iloc[0]["diff"]
        gap = frame.loc[gap_topics, "map"].mean() if gap_topics else math.nan
        lines.append(
            f"| {label} | {' | '.join(cells)} | {diff:+.4f} | {ps[0]} | {ps[1]} | {gap:.4f} | "
            f"{what.get(label, 'baseline')} |"
        )
    gap = facts["gap"]
    lines += [
        "",
        f"Vocabulary gap: {gap['relevant_without_query_term']} of {gap['relevant_sentences']} correct "
        f"sentences share no term with their question; in {len(gap_topics)} of {gap['topics']} topics "
        'no correct sentence does ("gap topics"; DIR and BM25F can only tie those sentences at the bottom).',
        "",
        "## Training",
        "",
    ]
    if "demo_training" in facts:
        d = facts["demo_training"]
        lines.append(
            f"- class training on the demo index ({facts['sources']['demo']['terms']:,} term occurrences; "
            f"K=100, min_count 3, ≤ 20 passes): {d['wall_seconds']} s wall, {d['cpu_seconds']} s CPU, "
            f"{d['trained_words']:,} words clustered, {d['passes']} passes, moves per pass {d['moves']}"
        )
    for key, name in (("classes_dev", "dev bigrams"), ("classes_big", "dev + WikiQA train + demo bigrams")):
        c = facts[key]
        lines.append(
            f"- classes from {name}: {c['seconds']} s when trained ({c['trained_words']:,} words "
            f"clustered of {c['words']:,}, {c['bigram_tokens']:,.0f} bigrams, {c['passes']} passes)"
        )
    for name, t in facts["triggers"].items():
        if isinstance(t, dict):
            lines.append(f"- trigger tables ({name}): {t['seconds']} s when counted; pairs {t['pairs']}")
    lines += ["", "Some classes (big bigrams):", ""]
    lines += [f"- {w}: {', '.join(m)}" for w, m in facts["class_examples"].items()]
    lines += ["", "## Grids and the parameters chosen per fold", ""]
    spaces = {v.label: v for v in VARIANTS}
    for label, entries in folds.items():
        v = spaces[label]
        keys = list(v.space) if v.space is not None else None
        if v.space is not None:
            grid = "; ".join(f"{k} ∈ {{{', '.join(f'{x:g}' for x in xs)}}}" for k, xs in v.space.items())
            lines.append(f"- **{label}** (fixed {v.fixed or 'nothing'}; grid {grid}):")
        else:
            lines.append(f"- **{label}** (coordinate ascent over the declared grids):")
        picks = []
        for f in entries:
            shown = {k: x for k, x in f["params"].items() if (keys is None or k in keys) and x is not None}
            text = ", ".join(f"{k}={x:g}" if isinstance(x, float) else f"{k}={x}" for k, x in shown.items())
            picks.append(f"s{f['seed']}f{f['fold']}: {text} (train {f['train_map']:.3f})")
        lines.append("  " + "; ".join(picks))
    return "\n".join(lines) + "\n"


def _plain(value: Any) -> Any:
    if isinstance(value, (np.integer,)):
        return int(value)
    if isinstance(value, (np.floating,)):
        return float(value)
    if isinstance(value, np.ndarray):
        return value.tolist()
    return str(value)


def _log(message: str) -> None:
    print(f"[vocab_gap] {message}", file=sys.stderr, flush=True)


if __name__ == "__main__":
    raise SystemExit(main())
